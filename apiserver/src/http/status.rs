//! Renders [`ApiError`] (the `metav1.Status` model in `crate::status`) as an
//! HTTP response: its code, JSON body (Go's field order and escaping, with
//! `json.Encoder`'s trailing newline) and kube-apiserver's headers; and
//! re-renders JSON documents indented for `?pretty` requests.

use axum::body::Body;
use axum::http::{HeaderValue, header};
use axum::response::{IntoResponse, Response};

pub use crate::status::{ApiError, Cause};

/// Marks a response whose body is one JSON document (an object, a list or
/// a Status), which upstream indents for pretty requests; watch streams
/// and other bodies are never marked.
#[derive(Clone, Copy, Debug)]
pub struct JsonDocument;

/// The response with its body indented as `json.MarshalIndent` prints it,
/// if it is a [`JsonDocument`]; otherwise unchanged.
pub async fn pretty(response: Response) -> Response {
    if response.extensions().get::<JsonDocument>().is_none() {
        return response;
    }
    let (mut parts, body) = response.into_parts();
    parts.headers.remove(header::CONTENT_LENGTH);
    match axum::body::to_bytes(body, usize::MAX).await {
        Ok(bytes) => Response::from_parts(parts, Body::from(crate::wire::indent(&bytes))),
        Err(_) => Response::from_parts(parts, Body::empty()),
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let mut body = self.to_json();
        body.push(b'\n');
        let mut response = (self.code(), body).into_response();
        response.extensions_mut().insert(JsonDocument);
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

    #[tokio::test]
    async fn body_ends_with_newline_and_pretty_indents_it() {
        let r = ApiError::not_found("", "pods", "p").into_response();
        let bytes = axum::body::to_bytes(r.into_body(), usize::MAX)
            .await
            .unwrap();
        assert_eq!(
            std::str::from_utf8(&bytes).unwrap(),
            "{\"kind\":\"Status\",\"apiVersion\":\"v1\",\"metadata\":{},\"status\":\"Failure\",\"message\":\"pods \\\"p\\\" not found\",\"reason\":\"NotFound\",\"details\":{\"name\":\"p\",\"kind\":\"pods\"},\"code\":404}\n"
        );
        let r = pretty(ApiError::not_found("apps", "deployments", "d").into_response()).await;
        let bytes = axum::body::to_bytes(r.into_body(), usize::MAX)
            .await
            .unwrap();
        assert_eq!(
            std::str::from_utf8(&bytes).unwrap(),
            "{\n  \"kind\": \"Status\",\n  \"apiVersion\": \"v1\",\n  \"metadata\": {},\n  \"status\": \"Failure\",\n  \"message\": \"deployments.apps \\\"d\\\" not found\",\n  \"reason\": \"NotFound\",\n  \"details\": {\n    \"name\": \"d\",\n    \"group\": \"apps\",\n    \"kind\": \"deployments\"\n  },\n  \"code\": 404\n}"
        );
    }
}
