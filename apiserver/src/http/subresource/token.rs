//! `POST serviceaccounts/{name}/token` (TokenRequest). Issuing service
//! account tokens belongs to Skein's security work (a token signer and its
//! authenticator); until then the subresource is served, listed by
//! discovery, and answers a missing ServiceAccount with upstream's 404 and
//! an existing one with 501 `NotImplemented` saying so — never a 404 that
//! reads like a missing account.

use axum::http::{Method, StatusCode};
use axum::response::Response;

use super::super::AppState;
use super::super::api::Call;
use super::super::status::ApiError;
use super::allow;
use crate::registry::ResourceInfo;

/// The answer for an existing ServiceAccount.
pub fn not_implemented(ns: &str, name: &str) -> ApiError {
    ApiError::new(
        StatusCode::NOT_IMPLEMENTED,
        "NotImplemented",
        format!(
            "serviceaccounts/token is not implemented yet: Skein does not issue service account tokens (TokenRequest for serviceaccount {ns}/{name})"
        ),
    )
}

/// `POST serviceaccounts/{name}/token`.
pub(in crate::http) async fn create(
    state: &AppState,
    call: &Call,
    res: &ResourceInfo,
    ns: &str,
    name: &str,
) -> Result<Response, ApiError> {
    allow(call, &[Method::POST])?;
    state.registry.get(res, ns, name).await?;
    Err(not_implemented(ns, name))
}
