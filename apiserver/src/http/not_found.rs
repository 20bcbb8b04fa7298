//! Upstream's plain-text 404 for paths no API group serves.
//!
//! kube-apiserver answers a path that no installed group/version handles
//! (an unknown group, an unserved version, anything outside `/api` and
//! `/apis`) with Go's `http.NotFound`, not a `metav1.Status`; a known
//! group/version with an unknown resource gets the `NotFound` Status
//! instead. Clients tell these apart (kubectl turns the plain one into
//! "the server could not find the requested resource").

use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};

/// `404 page not found\n`, `text/plain; charset=utf-8`, `nosniff`.
pub fn page_not_found() -> Response {
    let mut r = (StatusCode::NOT_FOUND, "404 page not found\n").into_response();
    let h = r.headers_mut();
    h.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("text/plain; charset=utf-8"),
    );
    h.insert(
        header::X_CONTENT_TYPE_OPTIONS,
        HeaderValue::from_static("nosniff"),
    );
    r
}
