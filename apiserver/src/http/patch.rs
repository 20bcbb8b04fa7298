//! PATCH: the four patch types, `PatchOptions` validation, and server-side
//! apply (which may create).
//!
//! Content types (upstream `handlers/patch.go`; anything else is 415 listing
//! these):
//! - `application/json-patch+json` (RFC 6902, at most 10,000 operations);
//! - `application/merge-patch+json` (RFC 7386);
//! - `application/strategic-merge-patch+json` (driven by the schemas'
//!   patch strategies and merge keys, [`crate::patch::strategic`]);
//! - `application/apply-patch+yaml` (server-side apply, [`crate::apply`]).
//!
//! A `metadata.resourceVersion` in the patched result is a precondition
//! (the registry checks it against the stored object).

use axum::http::StatusCode;
use axum::response::Response;
use serde_json::Value;

use super::AppState;
use super::api::{Call, object_response, write_options};
use super::body;
use super::status::{ApiError, Cause};
use crate::registry::{ResourceInfo, Target};
use crate::schema::Schema;

/// The patch types served, in upstream's order.
pub const PATCH_TYPES: &[&str] = &[
    "application/json-patch+json",
    "application/merge-patch+json",
    "application/strategic-merge-patch+json",
    "application/apply-patch+yaml",
];

/// The patch types `res` accepts: custom resources take every type but
/// strategic merge patch, as upstream's CRD handler.
pub fn patch_types(res: &ResourceInfo) -> &'static [&'static str] {
    const CUSTOM: &[&str] = &[
        "application/json-patch+json",
        "application/merge-patch+json",
        "application/apply-patch+yaml",
    ];
    if res.is_custom() { CUSTOM } else { PATCH_TYPES }
}

/// One of the four patch formats.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PatchType {
    /// RFC 6902.
    Json,
    /// RFC 7386.
    Merge,
    /// Kubernetes strategic merge patch.
    Strategic,
    /// Server-side apply.
    Apply,
}

impl PatchType {
    /// The patch type of a `Content-Type` (parameters already stripped).
    pub fn from_content_type(ct: &str) -> Option<Self> {
        match ct {
            "application/json-patch+json" => Some(PatchType::Json),
            "application/merge-patch+json" => Some(PatchType::Merge),
            "application/strategic-merge-patch+json" => Some(PatchType::Strategic),
            "application/apply-patch+yaml" => Some(PatchType::Apply),
            _ => None,
        }
    }
}

/// The schema of a resource's kind ([`ResourceInfo::schema`]).
pub fn schema_of(res: &ResourceInfo) -> Option<Schema<'_>> {
    res.schema()
}

/// `PatchOptions` checks (upstream `ValidatePatchOptions`): `force` only on
/// apply, `fieldManager` required on apply.
fn validate_options(call: &Call, patch_type: PatchType) -> Result<Option<bool>, ApiError> {
    let force = match call.query.get("force") {
        None => None,
        Some("" | "true" | "1") => Some(true),
        Some("false" | "0") => Some(false),
        Some(other) => {
            return Err(ApiError::bad_request(format!(
                "invalid value for force: strconv.ParseBool: parsing {other:?}: invalid syntax"
            )));
        }
    };
    let mut causes = Vec::new();
    if patch_type == PatchType::Apply {
        if call.query.get("fieldManager").is_none_or(|m| m.is_empty()) {
            causes.push(Cause::required(
                "fieldManager",
                "is required for apply patch",
            ));
        }
    } else if force.is_some() {
        causes.push(Cause::forbidden(
            "force",
            "may not be specified for non-apply patch",
        ));
    }
    if !causes.is_empty() {
        return Err(ApiError::invalid("meta.k8s.io", "PatchOptions", "", causes));
    }
    Ok(force)
}

/// Applies a JSON, merge or strategic patch document to `current`.
/// `schema` drives the strategic merge; `None` means "no type information".
pub fn apply_document(
    patch_type: PatchType,
    body: &[u8],
    current: &Value,
    schema: Option<Schema<'_>>,
) -> Result<Value, ApiError> {
    match patch_type {
        PatchType::Merge => {
            let doc: Value = serde_json::from_slice(body)
                .map_err(|e| ApiError::bad_request(format!("error decoding patch: {e}")))?;
            let mut out = current.clone();
            json_patch::merge(&mut out, &doc);
            Ok(out)
        }
        PatchType::Json => {
            let doc: json_patch::Patch = serde_json::from_slice(body)
                .map_err(|e| ApiError::bad_request(format!("error decoding patch: {e}")))?;
            if doc.0.len() > 10000 {
                return Err(ApiError::too_large(format!(
                    "The allowed maximum operations in a JSON patch is 10000, got {}",
                    doc.0.len()
                )));
            }
            let mut out = current.clone();
            json_patch::patch(&mut out, &doc).map_err(|e| {
                ApiError::new(
                    StatusCode::UNPROCESSABLE_ENTITY,
                    "Invalid",
                    format!("the server rejected our request due to an error in our request: {e}"),
                )
            })?;
            Ok(out)
        }
        PatchType::Strategic => {
            let doc: Value = serde_json::from_slice(body)
                .map_err(|e| ApiError::bad_request(format!("error decoding patch: {e}")))?;
            strategic(current, &doc, schema)
        }
        PatchType::Apply => Err(ApiError::unsupported_media_type(PATCH_TYPES)),
    }
}

/// Strategic merge patch. Errors keep upstream's text; the two that
/// upstream answers with 422 (`interpretStrategicMergePatchError`) are 422
/// Invalid, every other malformed patch is 400 BadRequest. (Upstream lets
/// some of them, e.g. an unknown `$patch` value, surface as a bare 500; a
/// patch document is client input, so Skein never answers it with a 5xx.)
fn strategic(current: &Value, doc: &Value, schema: Option<Schema<'_>>) -> Result<Value, ApiError> {
    crate::patch::strategic::apply(current, doc, schema).map_err(|e| {
        let message = e.to_string();
        match e.status_code() {
            422 => ApiError::new(StatusCode::UNPROCESSABLE_ENTITY, "Invalid", message),
            _ => ApiError::bad_request(message),
        }
    })
}

/// Parses an apply body: YAML (JSON is YAML) into a JSON object.
pub fn parse_apply_body(body: &[u8]) -> Result<Value, ApiError> {
    let text = std::str::from_utf8(body)
        .map_err(|e| ApiError::bad_request(format!("error decoding YAML: {e}")))?;
    let trimmed = text.trim_start();
    let value: Value = if trimmed.starts_with('{') {
        serde_json::from_str(text).map_err(|e| ApiError::bad_request(e.to_string()))?
    } else {
        serde_saphyr::from_str(text).map_err(|e| ApiError::bad_request(e.to_string()))?
    };
    if !value.is_object() {
        return Err(ApiError::bad_request(
            "error decoding YAML: the apply patch must be an object",
        ));
    }
    Ok(value)
}

/// Entry point for `PATCH` on an object or its `/status`.
pub(super) async fn handle(
    state: &AppState,
    res: &ResourceInfo,
    ns: &str,
    name: &str,
    target: Target,
    call: &Call,
) -> Result<Response, ApiError> {
    let content_type = body::content_type(&call.headers);
    let Some(patch_type) = PatchType::from_content_type(&content_type) else {
        return Err(ApiError::unsupported_media_type(patch_types(res)));
    };
    if patch_type == PatchType::Strategic && res.is_custom() {
        // Custom resources have no Go struct tags to drive it.
        return Err(ApiError::unsupported_media_type(patch_types(res)));
    }
    let force = validate_options(call, patch_type)?;
    let validation = call.query.field_validation("PatchOptions")?;
    let opts = write_options(call, "PatchOptions")?;
    if patch_type == PatchType::Apply {
        return apply(state, res, ns, name, target, call, force.unwrap_or(false)).await;
    }
    let schema = schema_of(res);
    let mut warnings = Vec::new();
    let patched = state
        .registry
        .update_with(res, ns, name, target, &opts, |current| {
            let patched = apply_document(patch_type, &call.body, current, schema)?;
            let decoded = body::Decoded {
                raw: patched,
                duplicates: Vec::new(),
            };
            let (obj, w) =
                body::admit_object(state.registry.resources(), res, decoded, validation)?;
            warnings = w;
            Ok(obj)
        })
        .await?;
    Ok(object_response(StatusCode::OK, &patched, &warnings))
}

/// Server-side apply: merge the applied configuration into the live object
/// (or create it), with ownership tracked in `managedFields`.
async fn apply(
    state: &AppState,
    res: &ResourceInfo,
    ns: &str,
    name: &str,
    target: Target,
    call: &Call,
    force: bool,
) -> Result<Response, ApiError> {
    let opts = write_options(call, "PatchOptions")?;
    let config = parse_apply_body(&call.body)?;
    check_apply_identity(res, ns, name, &config)?;
    let manager = opts.field_manager.clone();
    let subresource = (target == Target::Status).then_some("status");
    let (obj, created) = state
        .registry
        .apply_with(res, ns, name, target, &opts, |live| {
            let merged = ssa(res, &manager, subresource, live, &config, force)?;
            // Canonicalize through the kind's type, as any write is.
            let decoded = body::Decoded {
                raw: merged,
                duplicates: Vec::new(),
            };
            let (obj, _) = body::admit_object(
                state.registry.resources(),
                res,
                decoded,
                super::query::FieldValidation::Ignore,
            )?;
            Ok(obj)
        })
        .await?;
    let code = if created {
        StatusCode::CREATED
    } else {
        StatusCode::OK
    };
    Ok(object_response(code, &obj, &[]))
}

/// The apply configuration must name this kind, version and object.
fn check_apply_identity(
    res: &ResourceInfo,
    ns: &str,
    name: &str,
    config: &Value,
) -> Result<(), ApiError> {
    let api_version = config
        .get("apiVersion")
        .and_then(Value::as_str)
        .unwrap_or("");
    if api_version != res.api_version {
        return Err(ApiError::bad_request(format!(
            "Incorrect version specified in apply patch. Specified patch version: {api_version}, expected: {}",
            res.api_version
        )));
    }
    let kind = config.get("kind").and_then(Value::as_str).unwrap_or("");
    if kind != res.kind {
        return Err(ApiError::bad_request(format!(
            "Incorrect kind specified in apply patch. Specified patch kind: {kind}, expected: {}",
            res.kind
        )));
    }
    let meta = config.get("metadata");
    let obj_name = meta
        .and_then(|m| m.get("name"))
        .and_then(Value::as_str)
        .unwrap_or("");
    if obj_name != name {
        return Err(ApiError::bad_request(format!(
            "the name of the object ({obj_name}) does not match the name on the URL ({name})"
        )));
    }
    if res.namespaced
        && let Some(obj_ns) = meta
            .and_then(|m| m.get("namespace"))
            .and_then(Value::as_str)
        && !obj_ns.is_empty()
        && obj_ns != ns
    {
        return Err(ApiError::bad_request(format!(
            "the namespace of the object ({obj_ns}) does not match the namespace on the URL ({ns})"
        )));
    }
    Ok(())
}

/// Runs the apply engine; maps its errors to upstream's statuses.
fn ssa(
    res: &ResourceInfo,
    manager: &str,
    subresource: Option<&str>,
    live: Option<&Value>,
    config: &Value,
    force: bool,
) -> Result<Value, ApiError> {
    let now = crate::registry::object::now_rfc3339();
    let req = crate::registry::managed::request(res, manager, subresource, &now);
    crate::apply::apply(&req, live, config, force).map_err(|e| match e {
        crate::apply::Error::Conflicts(conflicts) => {
            let mut err = ApiError::new(
                StatusCode::CONFLICT,
                "Conflict",
                crate::apply::conflict_message(&conflicts),
            );
            for c in &conflicts {
                err = err.with_cause("FieldManagerConflict", &c.cause_message(), &c.field);
            }
            err
        }
        crate::apply::Error::BadRequest(m) => ApiError::bad_request(m),
        crate::apply::Error::Invalid { field, message } => ApiError::new(
            StatusCode::UNPROCESSABLE_ENTITY,
            "Invalid",
            format!("PatchOptions.meta.k8s.io \"\" is invalid: {field}: {message}"),
        ),
        // Upstream answers a configuration that does not fit the schema
        // ("failed to create typed patch object (…): .spec.foo: field not
        // declared in schema") with a bare 500; it is client input, so
        // Skein says 400 with the same text. Anything else is ours: 500.
        crate::apply::Error::Internal(m)
            if m.starts_with("failed to create typed patch object") =>
        {
            ApiError::bad_request(m)
        }
        crate::apply::Error::Internal(m) => ApiError::internal(m),
    })
}
