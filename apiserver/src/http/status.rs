//! Renders [`ApiError`] (the `metav1.Status` model in `crate::status`) as an
//! HTTP response: its code, JSON body and kube-apiserver's headers.

use axum::http::{HeaderValue, header};
use axum::response::{IntoResponse, Response};

pub use crate::status::{ApiError, Cause};

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let mut response = (self.code(), self.to_json()).into_response();
        let headers = response.headers_mut();
        headers.insert(
            header::CONTENT_TYPE,
            HeaderValue::from_static("application/json"),
        );
        headers.insert(
            header::CACHE_CONTROL,
            HeaderValue::from_static("no-cache, private"),
        );
        response
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use axum::http::StatusCode;

    #[test]
    fn response_has_code_and_json_type() {
        let r = ApiError::unauthorized().into_response();
        assert_eq!(r.status(), StatusCode::UNAUTHORIZED);
        assert_eq!(r.headers()[header::CONTENT_TYPE], "application/json");
    }
}
