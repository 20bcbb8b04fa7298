//! [`ApiError`]: the one request-time error of the API server, a
//! `metav1.Status` model. The registry, the controllers and the HTTP layer all
//! speak it; this module sits below the registry and knows nothing of HTTP
//! serving (`http::status` renders it as a response). The only place that
//! picks HTTP status codes for errors.

use axum::http::StatusCode;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{ListMeta, Status, StatusDetails};
use serde::Serialize;

/// What a failed API call means to a caller that decides on it (a
/// controller, the federation, the simulator), as apimachinery's
/// `errors.IsNotFound`, `IsAlreadyExists`, `IsConflict`…: the Status reason
/// when it is a known one, else the HTTP code. The same classification
/// serves registry errors ([`ApiError::kind`]) and a member's answers.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ErrorKind {
    /// 400 `BadRequest`.
    BadRequest,
    /// 401 `Unauthorized`.
    Unauthorized,
    /// 403 `Forbidden`.
    Forbidden,
    /// 404 `NotFound`.
    NotFound,
    /// 405 `MethodNotAllowed`.
    MethodNotAllowed,
    /// 406 `NotAcceptable`.
    NotAcceptable,
    /// 409 `AlreadyExists`: a create found the name taken.
    AlreadyExists,
    /// 409 `Conflict`: a stale resourceVersion, or another 409.
    Conflict,
    /// 410 `Gone` or `Expired`: the resourceVersion is compacted away.
    Gone,
    /// 413 `RequestEntityTooLarge`.
    TooLarge,
    /// 415 `UnsupportedMediaType`.
    UnsupportedMediaType,
    /// 422 `Invalid`.
    Invalid,
    /// 429 `TooManyRequests`.
    TooManyRequests,
    /// 500 `InternalError`.
    Internal,
    /// 503 `ServiceUnavailable`.
    Unavailable,
    /// 504 `Timeout` (or reason `Timeout`/`ServerTimeout`).
    Timeout,
    /// Anything else.
    Other,
}

impl ErrorKind {
    /// The kind of an answer with HTTP `code` and Status `reason`.
    pub fn of(code: u16, reason: &str) -> ErrorKind {
        match reason {
            "BadRequest" => ErrorKind::BadRequest,
            "Unauthorized" => ErrorKind::Unauthorized,
            "Forbidden" => ErrorKind::Forbidden,
            "NotFound" => ErrorKind::NotFound,
            "MethodNotAllowed" => ErrorKind::MethodNotAllowed,
            "NotAcceptable" => ErrorKind::NotAcceptable,
            "AlreadyExists" => ErrorKind::AlreadyExists,
            "Conflict" => ErrorKind::Conflict,
            "Gone" | "Expired" => ErrorKind::Gone,
            "RequestEntityTooLarge" => ErrorKind::TooLarge,
            "UnsupportedMediaType" => ErrorKind::UnsupportedMediaType,
            "Invalid" => ErrorKind::Invalid,
            "TooManyRequests" => ErrorKind::TooManyRequests,
            "InternalError" => ErrorKind::Internal,
            "ServiceUnavailable" => ErrorKind::Unavailable,
            "Timeout" | "ServerTimeout" => ErrorKind::Timeout,
            _ => match code {
                400 => ErrorKind::BadRequest,
                401 => ErrorKind::Unauthorized,
                403 => ErrorKind::Forbidden,
                404 => ErrorKind::NotFound,
                405 => ErrorKind::MethodNotAllowed,
                406 => ErrorKind::NotAcceptable,
                409 => ErrorKind::Conflict,
                410 => ErrorKind::Gone,
                413 => ErrorKind::TooLarge,
                415 => ErrorKind::UnsupportedMediaType,
                422 => ErrorKind::Invalid,
                429 => ErrorKind::TooManyRequests,
                500 => ErrorKind::Internal,
                503 => ErrorKind::Unavailable,
                504 => ErrorKind::Timeout,
                _ => ErrorKind::Other,
            },
        }
    }
}

/// An error answered to a client as a `metav1.Status`.
#[derive(Clone, Debug, PartialEq)]
pub struct ApiError {
    /// Boxed: errors travel in `Result`s on every request path and should
    /// keep them small.
    status: Box<Status>,
}

impl ApiError {
    /// A failure with an HTTP `code`, a machine-readable `reason` (a
    /// `metav1.StatusReason` such as `NotFound`) and a human `message`.
    pub fn new(code: StatusCode, reason: &str, message: impl Into<String>) -> Self {
        ApiError {
            status: Box::new(Status {
                code: Some(i32::from(code.as_u16())),
                details: None,
                message: Some(message.into()),
                metadata: ListMeta::default(),
                // An empty reason is upstream's StatusReasonUnknown, omitted.
                reason: (!reason.is_empty()).then(|| reason.to_string()),
                status: Some("Failure".to_string()),
            }),
        }
    }

    /// 429 `TooManyRequests` asking the client to retry after `seconds`
    /// (apimachinery's `NewTooManyRequests`).
    pub fn too_many_requests(message: impl Into<String>, seconds: i32) -> Self {
        ApiError::new(StatusCode::TOO_MANY_REQUESTS, "TooManyRequests", message).with_details(
            StatusDetails {
                retry_after_seconds: Some(seconds),
                ..StatusDetails::default()
            },
        )
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

    /// 405 for a verb a resource refuses now (upstream
    /// `NewMethodNotSupported` with its message replaced).
    pub fn method_not_supported(group: &str, resource: &str, message: impl Into<String>) -> Self {
        let mut e = ApiError::new(StatusCode::METHOD_NOT_ALLOWED, "MethodNotAllowed", message);
        e.status.details = Some(StatusDetails {
            group: (!group.is_empty()).then(|| group.to_string()),
            kind: Some(resource.to_string()),
            ..StatusDetails::default()
        });
        e
    }

    /// 500 with `message`.
    pub fn internal(message: impl Into<String>) -> Self {
        ApiError::new(StatusCode::INTERNAL_SERVER_ERROR, "InternalError", message)
    }

    /// 500 with no reason (upstream's `StatusReasonUnknown`): what
    /// kube-apiserver answers for an error that is not a `metav1.Status`,
    /// such as a failed custom resource conversion.
    pub fn unknown(message: impl Into<String>) -> Self {
        ApiError::new(StatusCode::INTERNAL_SERVER_ERROR, "", message)
    }

    /// Adds `details` (name, group, kind = the plural resource, causes).
    pub fn with_details(mut self, details: StatusDetails) -> Self {
        self.status.details = Some(details);
        self
    }

    fn for_object(
        code: StatusCode,
        reason: &str,
        message: String,
        group: &str,
        plural: &str,
        name: &str,
    ) -> Self {
        ApiError::new(code, reason, message).with_details(StatusDetails {
            name: (!name.is_empty()).then(|| name.to_string()),
            group: (!group.is_empty()).then(|| group.to_string()),
            kind: Some(plural.to_string()),
            ..StatusDetails::default()
        })
    }

    /// Appends a cause to `details.causes`.
    pub fn with_cause(mut self, reason: &str, message: &str, field: &str) -> Self {
        let details = self
            .status
            .details
            .get_or_insert_with(StatusDetails::default);
        details.causes.get_or_insert_with(Vec::new).push(
            k8s_openapi::apimachinery::pkg::apis::meta::v1::StatusCause {
                reason: Some(reason.to_string()),
                message: Some(message.to_string()),
                field: (!field.is_empty()).then(|| field.to_string()),
            },
        );
        self
    }

    /// 404 `deployments.apps "x" not found`.
    pub fn not_found(group: &str, plural: &str, name: &str) -> Self {
        let qualified = qualified(group, plural);
        ApiError::for_object(
            StatusCode::NOT_FOUND,
            "NotFound",
            format!("{qualified} \"{name}\" not found"),
            group,
            plural,
            name,
        )
    }

    /// 409 `deployments.apps "x" already exists`.
    pub fn already_exists(group: &str, plural: &str, name: &str) -> Self {
        let qualified = qualified(group, plural);
        ApiError::for_object(
            StatusCode::CONFLICT,
            "AlreadyExists",
            format!("{qualified} \"{name}\" already exists"),
            group,
            plural,
            name,
        )
    }

    /// 409 `Operation cannot be fulfilled on deployments.apps "x": <why>`.
    pub fn conflict(group: &str, plural: &str, name: &str, why: &str) -> Self {
        let qualified = qualified(group, plural);
        ApiError::for_object(
            StatusCode::CONFLICT,
            "Conflict",
            format!("Operation cannot be fulfilled on {qualified} \"{name}\": {why}"),
            group,
            plural,
            name,
        )
    }

    /// The upstream text for a stale resourceVersion.
    pub const MODIFIED: &'static str = "the object has been modified; please apply your changes to the latest version and try again";

    /// 422 `Deployment.apps "x" is invalid: <causes>`; `kind` is the Kind
    /// (details.kind is the Kind for Invalid, as upstream).
    pub fn invalid(group: &str, kind: &str, name: &str, causes: Vec<Cause>) -> Self {
        let qualified = qualified(group, kind);
        let list: Vec<String> = causes.iter().map(Cause::text).collect();
        let joined = if list.len() == 1 {
            list[0].clone()
        } else {
            format!("[{}]", list.join(", "))
        };
        let message = format!("{qualified} \"{name}\" is invalid: {joined}");
        ApiError::new(StatusCode::UNPROCESSABLE_ENTITY, "Invalid", message).with_details(
            StatusDetails {
                name: (!name.is_empty()).then(|| name.to_string()),
                group: (!group.is_empty()).then(|| group.to_string()),
                kind: Some(kind.to_string()),
                causes: Some(causes.into_iter().map(Cause::into_status_cause).collect()),
                ..StatusDetails::default()
            },
        )
    }

    /// 400 with a free-text message.
    pub fn bad_request(message: impl Into<String>) -> Self {
        ApiError::new(StatusCode::BAD_REQUEST, "BadRequest", message)
    }

    /// 403 `<what> is forbidden: <why>`.
    pub fn forbidden(group: &str, plural: &str, name: &str, why: &str) -> Self {
        let qualified = qualified(group, plural);
        let subject = if name.is_empty() {
            qualified
        } else {
            format!("{qualified} \"{name}\"")
        };
        ApiError::for_object(
            StatusCode::FORBIDDEN,
            "Forbidden",
            format!("{subject} is forbidden: {why}"),
            group,
            plural,
            name,
        )
    }

    /// 410 Expired (a compacted resourceVersion or continue token).
    pub fn expired(message: impl Into<String>) -> Self {
        ApiError::new(StatusCode::GONE, "Expired", message)
    }

    /// 405 for a verb the resource does not support.
    pub fn verb_not_supported(verb: &str, kind: &str) -> Self {
        ApiError::new(
            StatusCode::METHOD_NOT_ALLOWED,
            "MethodNotAllowed",
            format!("{verb} is not supported on resources of kind \"{kind}\""),
        )
    }

    /// 415 for a body content type the server does not take.
    pub fn unsupported_media_type(supported: &[&str]) -> Self {
        ApiError::new(
            StatusCode::UNSUPPORTED_MEDIA_TYPE,
            "UnsupportedMediaType",
            format!(
                "the body of the request was in an unknown format - accepted media types include: {}",
                supported.join(", ")
            ),
        )
    }

    /// 406 when no acceptable representation exists.
    pub fn not_acceptable(supported: &[&str]) -> Self {
        ApiError::new(
            StatusCode::NOT_ACCEPTABLE,
            "NotAcceptable",
            format!(
                "only the following media types are accepted: {}",
                supported.join(", ")
            ),
        )
    }

    /// 504 Timeout for a resourceVersion newer than the store's
    /// (cause `ResourceVersionTooLarge`).
    pub fn resource_version_too_large(requested: i64, current: i64) -> Self {
        ApiError::new(
            StatusCode::GATEWAY_TIMEOUT,
            "Timeout",
            format!("Too large resource version: {requested}, current: {current}"),
        )
        .with_details(StatusDetails {
            causes: Some(vec![
                k8s_openapi::apimachinery::pkg::apis::meta::v1::StatusCause {
                    reason: Some("ResourceVersionTooLarge".into()),
                    message: Some("Too large resource version".into()),
                    field: None,
                },
            ]),
            retry_after_seconds: Some(1),
            ..StatusDetails::default()
        })
    }

    /// 413 `Request entity too large: <message>` (upstream's
    /// `NewRequestEntityTooLargeError`).
    pub fn too_large(message: impl Into<String>) -> Self {
        ApiError::new(
            StatusCode::PAYLOAD_TOO_LARGE,
            "RequestEntityTooLarge",
            format!("Request entity too large: {}", message.into()),
        )
    }

    /// 413 for a request body over kube-apiserver's 3 MiB limit.
    pub fn body_too_large(limit: usize) -> Self {
        ApiError::too_large(format!("limit is {limit}"))
    }

    /// 503 when storage is unavailable.
    pub fn unavailable(message: impl Into<String>) -> Self {
        ApiError::new(
            StatusCode::SERVICE_UNAVAILABLE,
            "ServiceUnavailable",
            message,
        )
    }

    /// The human message.
    pub fn message(&self) -> &str {
        self.status.message.as_deref().unwrap_or("")
    }

    /// The reason (`NotFound`, …).
    pub fn reason(&self) -> &str {
        self.status.reason.as_deref().unwrap_or("")
    }

    /// What this error means to a controller ([`ErrorKind`]): match on it,
    /// never on [`ApiError::code`] or [`ApiError::reason`].
    pub fn kind(&self) -> ErrorKind {
        ErrorKind::of(self.code().as_u16(), self.reason())
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

    /// The JSON document (without the response's trailing newline), as
    /// kube-apiserver prints it: Go struct order (kind, apiVersion,
    /// metadata, status, message, reason, details, code; details as name,
    /// group, kind, uid, causes, retryAfterSeconds) and Go's escaping, via
    /// [`crate::wire`].
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
        // A Status of strings and integers always converts.
        let value = serde_json::to_value(&wire).unwrap_or_default();
        let mut out = crate::wire::to_vec(&value);
        out.pop();
        out
    }
}

/// `deployments.apps` / `pods`.
fn qualified(group: &str, what: &str) -> String {
    if group.is_empty() {
        what.to_string()
    } else {
        format!("{what}.{group}")
    }
}

/// One field error of an Invalid (422) response, as upstream's
/// `field.Error`: `spec.replicas: Invalid value: -1: must be >= 0`.
#[derive(Clone, Debug, PartialEq)]
pub struct Cause {
    /// `FieldValueInvalid`, `FieldValueRequired`, `FieldValueTooLong`, …
    pub reason: &'static str,
    /// The field path (`metadata.name`).
    pub field: String,
    /// The value shown after `Invalid value:` (already rendered), if any.
    pub value: Option<String>,
    /// The detail.
    pub detail: String,
}

impl Cause {
    /// `FieldValueInvalid`.
    pub fn invalid(
        field: impl Into<String>,
        value: impl Into<String>,
        detail: impl Into<String>,
    ) -> Self {
        Cause {
            reason: "FieldValueInvalid",
            field: field.into(),
            value: Some(value.into()),
            detail: detail.into(),
        }
    }

    /// `FieldValueRequired`.
    pub fn required(field: impl Into<String>, detail: impl Into<String>) -> Self {
        Cause {
            reason: "FieldValueRequired",
            field: field.into(),
            value: None,
            detail: detail.into(),
        }
    }

    /// `FieldValueTooLong`.
    pub fn too_long(field: impl Into<String>, detail: impl Into<String>) -> Self {
        Cause {
            reason: "FieldValueTooLong",
            field: field.into(),
            value: Some("\"\"".into()),
            detail: detail.into(),
        }
    }

    /// `FieldValueForbidden`.
    pub fn forbidden(field: impl Into<String>, detail: impl Into<String>) -> Self {
        Cause {
            reason: "FieldValueForbidden",
            field: field.into(),
            value: None,
            detail: detail.into(),
        }
    }

    /// The type word upstream prints after the field (`Invalid value`).
    fn type_word(&self) -> &'static str {
        match self.reason {
            "FieldValueRequired" => "Required value",
            "FieldValueForbidden" => "Forbidden",
            "FieldValueTooLong" => "Too long",
            "FieldValueDuplicate" => "Duplicate value",
            "FieldValueNotSupported" => "Unsupported value",
            _ => "Invalid value",
        }
    }

    /// The cause message as inside `details.causes` (without the field).
    /// As upstream's `field.Error.ErrorBody`: the value is shown for every
    /// type but Required, Forbidden and TooLong.
    fn body(&self) -> String {
        let head = match (&self.value, self.reason) {
            (_, "FieldValueRequired" | "FieldValueForbidden" | "FieldValueTooLong") | (None, _) => {
                self.type_word().to_string()
            }
            (Some(v), _) => format!("{}: {v}", self.type_word()),
        };
        if self.detail.is_empty() {
            head
        } else {
            format!("{head}: {}", self.detail)
        }
    }

    /// `field: body`, as joined into the Invalid message.
    pub fn text(&self) -> String {
        format!("{}: {}", self.field, self.body())
    }

    fn into_status_cause(self) -> k8s_openapi::apimachinery::pkg::apis::meta::v1::StatusCause {
        k8s_openapi::apimachinery::pkg::apis::meta::v1::StatusCause {
            reason: Some(self.reason.to_string()),
            message: Some(self.body()),
            field: Some(self.field),
        }
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

    #[test]
    fn kinds_follow_the_reason_then_the_code() {
        let nf = ApiError::new(StatusCode::NOT_FOUND, "NotFound", "x");
        assert_eq!(nf.kind(), ErrorKind::NotFound);
        let exists = ApiError::new(StatusCode::CONFLICT, "AlreadyExists", "x");
        assert_eq!(exists.kind(), ErrorKind::AlreadyExists);
        let stale = ApiError::new(StatusCode::CONFLICT, "Conflict", "x");
        assert_eq!(stale.kind(), ErrorKind::Conflict);
        assert_eq!(ErrorKind::of(409, ""), ErrorKind::Conflict);
        assert_eq!(ErrorKind::of(410, "Expired"), ErrorKind::Gone);
        assert_eq!(ErrorKind::of(500, "Timeout"), ErrorKind::Timeout);
        assert_eq!(ErrorKind::of(422, ""), ErrorKind::Invalid);
        assert_eq!(ErrorKind::of(418, ""), ErrorKind::Other);
    }

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
    fn unsupported_values_are_quoted_as_upstream() {
        let c = Cause {
            reason: "FieldValueNotSupported",
            field: "propagationPolicy".into(),
            value: Some("\"Sideways\"".into()),
            detail: "supported values: \"Foreground\"".into(),
        };
        assert_eq!(
            c.text(),
            "propagationPolicy: Unsupported value: \"Sideways\": supported values: \"Foreground\""
        );
        assert_eq!(
            Cause::too_long("metadata.annotations", "may not be more than 5 bytes").text(),
            "metadata.annotations: Too long: may not be more than 5 bytes"
        );
        assert_eq!(
            Cause::required("metadata.name", "").text(),
            "metadata.name: Required value"
        );
    }
}
