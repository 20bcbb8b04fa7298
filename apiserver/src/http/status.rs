//! [`ApiError`]: the one error type of the HTTP layer, always rendered as a
//! `metav1.Status`. The only place that picks HTTP status codes for errors.

use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{ListMeta, Status, StatusDetails};
use serde::Serialize;

/// An error answered to a client as a `metav1.Status`.
#[derive(Clone, Debug, PartialEq)]
pub struct ApiError {
    status: Status,
}

impl ApiError {
    /// A failure with an HTTP `code`, a machine-readable `reason` (a
    /// `metav1.StatusReason` such as `NotFound`) and a human `message`.
    pub fn new(code: StatusCode, reason: &str, message: impl Into<String>) -> Self {
        ApiError {
            status: Status {
                code: Some(i32::from(code.as_u16())),
                details: None,
                message: Some(message.into()),
                metadata: ListMeta::default(),
                reason: Some(reason.to_string()),
                status: Some("Failure".to_string()),
            },
        }
    }

    /// 401: the request carried no valid credentials.
    pub fn unauthorized() -> Self {
        ApiError::new(StatusCode::UNAUTHORIZED, "Unauthorized", "Unauthorized")
    }

    /// 404 for a path the server does not serve at all (kube's generic
    /// not-found: empty `details`).
    pub fn path_not_found() -> Self {
        let mut e = ApiError::new(
            StatusCode::NOT_FOUND,
            "NotFound",
            "the server could not find the requested resource",
        );
        e.status.details = Some(StatusDetails::default());
        e
    }

    /// 405 for a known path with a method it does not support.
    pub fn method_not_allowed() -> Self {
        let mut e = ApiError::new(
            StatusCode::METHOD_NOT_ALLOWED,
            "MethodNotAllowed",
            "the server does not allow this method on the requested resource",
        );
        e.status.details = Some(StatusDetails::default());
        e
    }

    /// 500 with `message`.
    pub fn internal(message: impl Into<String>) -> Self {
        ApiError::new(StatusCode::INTERNAL_SERVER_ERROR, "InternalError", message)
    }

    /// The `metav1.Status` this error renders as.
    pub fn status(&self) -> &Status {
        &self.status
    }

    /// The HTTP status code.
    pub fn code(&self) -> StatusCode {
        self.status
            .code
            .and_then(|c| u16::try_from(c).ok())
            .and_then(|c| StatusCode::from_u16(c).ok())
            .unwrap_or(StatusCode::INTERNAL_SERVER_ERROR)
    }

    /// The JSON body, with fields in kube-apiserver's order (Go struct
    /// order: kind, apiVersion, metadata, status, message, reason, details,
    /// code), so responses match kube byte for byte.
    pub fn to_json(&self) -> Vec<u8> {
        let s = &self.status;
        let wire = Wire {
            kind: "Status",
            api_version: "v1",
            metadata: &s.metadata,
            status: s.status.as_deref(),
            message: s.message.as_deref(),
            reason: s.reason.as_deref(),
            details: s.details.as_ref(),
            code: s.code,
        };
        serde_json::to_vec(&wire).expect("a Status of strings and integers always serializes")
    }
}

/// `metav1.Status` on the wire, in Go's field order.
#[derive(Serialize)]
struct Wire<'a> {
    kind: &'static str,
    #[serde(rename = "apiVersion")]
    api_version: &'static str,
    metadata: &'a ListMeta,
    #[serde(skip_serializing_if = "Option::is_none")]
    status: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    message: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    reason: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    details: Option<&'a StatusDetails>,
    #[serde(skip_serializing_if = "Option::is_none")]
    code: Option<i32>,
}

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

impl std::fmt::Display for ApiError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{} {}",
            self.code().as_u16(),
            self.status.message.as_deref().unwrap_or("")
        )
    }
}

impl std::error::Error for ApiError {}

#[cfg(test)]
mod tests {
    use super::*;

    fn body(e: &ApiError) -> String {
        String::from_utf8(e.to_json()).expect("utf8")
    }

    #[test]
    fn unauthorized_matches_kube_byte_for_byte() {
        assert_eq!(
            body(&ApiError::unauthorized()),
            r#"{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"Unauthorized","reason":"Unauthorized","code":401}"#
        );
    }

    #[test]
    fn path_not_found_matches_kube_byte_for_byte() {
        assert_eq!(
            body(&ApiError::path_not_found()),
            r#"{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"the server could not find the requested resource","reason":"NotFound","details":{},"code":404}"#
        );
    }

    #[test]
    fn body_parses_as_k8s_openapi_status() {
        let e = ApiError::internal("boom");
        let parsed: Status = serde_json::from_slice(&e.to_json()).expect("status json");
        assert_eq!(&parsed, e.status());
        assert_eq!(e.code(), StatusCode::INTERNAL_SERVER_ERROR);
    }

    #[test]
    fn response_has_code_and_json_type() {
        let r = ApiError::unauthorized().into_response();
        assert_eq!(r.status(), StatusCode::UNAUTHORIZED);
        assert_eq!(r.headers()[header::CONTENT_TYPE], "application/json");
    }
}
