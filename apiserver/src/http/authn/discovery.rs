//! ServiceAccount issuer discovery, as kube-apiserver serves it:
//! `GET /.well-known/openid-configuration` (`application/json`) and
//! `GET /openid/v1/jwks` (`application/jwk-set+json`), both with
//! `Cache-Control: public, max-age=3600`. Like every path other than the
//! health and version endpoints, they need an authenticated user (upstream
//! grants them to `system:serviceaccounts` through the
//! `system:service-account-issuer-discovery` role).

use std::sync::Arc;

use axum::extract::Request;
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};

use super::Authenticator;

fn document(req: &Request, jwks: bool) -> Response {
    let Some((sa, _)) = req
        .extensions()
        .get::<Arc<Authenticator>>()
        .and_then(|a| a.service_accounts.as_ref())
    else {
        return super::super::not_found::page_not_found();
    };
    let (body, ct) = if jwks {
        (sa.jwks(), "application/jwk-set+json")
    } else {
        (sa.openid_configuration(), "application/json")
    };
    let mut resp = (StatusCode::OK, body.to_string()).into_response();
    let h = resp.headers_mut();
    h.insert(header::CONTENT_TYPE, HeaderValue::from_static(ct));
    h.insert(
        header::CACHE_CONTROL,
        HeaderValue::from_static("public, max-age=3600"),
    );
    resp
}

/// `GET /.well-known/openid-configuration`.
pub async fn openid_configuration(req: Request) -> Response {
    document(&req, false)
}

/// `GET /openid/v1/jwks`.
pub async fn jwks(req: Request) -> Response {
    document(&req, true)
}
