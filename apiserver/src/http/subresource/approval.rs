//! `certificatesigningrequests/{name}/approval` (upstream
//! `csrApprovalStrategy`): GET the CertificateSigningRequest; PUT or PATCH
//! one and only `status.conditions` is taken (what `kubectl certificate
//! approve|deny` sends), with missing condition timestamps set to now.
//!
//! Validation (upstream `validateConditions`): a condition type is
//! required, its status must be `True`, `False` or `Unknown`, a type may
//! appear once, and `Approved` and `Denied` exclude each other.
//!
//! A CSR for `kubernetes.io/kube-apiserver-client` that this update leaves
//! approved (and not yet issued, denied or failed) is signed at once by
//! [`crate::csr_signer`], in the same write: `status.certificate`, or the
//! `Failed` condition when the signer refuses it. (Upstream's signer is a
//! controller that does the same shortly after the approval.)

use axum::http::{Method, StatusCode};
use axum::response::Response;
use serde_json::{Value, json};

use super::super::AppState;
use super::super::api::{Call, object_response, write_options};
use super::super::body;
use super::super::patch::{PATCH_TYPES, PatchType, apply_document, schema_of};
use super::super::status::{ApiError, Cause};
use super::allow;
use crate::csr_signer::{ClientSigner, SIGNER_NAME, SignError};
use crate::registry::ResourceInfo;
use crate::registry::object::{self, now_rfc3339};

/// Field errors of the conditions of a CSR.
fn condition_errors(csr: &Value) -> Vec<Cause> {
    let list = csr
        .pointer("/status/conditions")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    let mut out = Vec::new();
    let mut seen: Vec<String> = Vec::new();
    for (i, c) in list.iter().enumerate() {
        let kind = c.get("type").and_then(Value::as_str).unwrap_or("");
        let status = c.get("status").and_then(Value::as_str).unwrap_or("");
        if kind.is_empty() {
            out.push(Cause::required(format!("status.conditions[{i}].type"), ""));
        }
        if !matches!(status, "True" | "False" | "Unknown") {
            out.push(Cause {
                reason: "FieldValueNotSupported",
                field: format!("status.conditions[{i}].status"),
                value: Some(format!("{status:?}")),
                detail: "supported values: \"False\", \"True\", \"Unknown\"".into(),
            });
        }
        if seen.iter().any(|s| s == kind) {
            out.push(Cause {
                reason: "FieldValueDuplicate",
                field: format!("status.conditions[{i}].type"),
                value: Some(format!("{kind:?}")),
                detail: String::new(),
            });
        }
        seen.push(kind.to_string());
    }
    if seen.iter().any(|s| s == "Approved") && seen.iter().any(|s| s == "Denied") {
        out.push(Cause::invalid(
            "status.conditions",
            "",
            "Approved and Denied conditions are mutually exclusive",
        ));
    }
    out
}

/// The stored CSR with the sent conditions (timestamps filled in).
fn take_conditions(stored: &Value, sent: &Value) -> Value {
    let mut next = stored.clone();
    let now = now_rfc3339();
    let mut conditions = sent
        .pointer("/status/conditions")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    for c in &mut conditions {
        for field in ["lastUpdateTime", "lastTransitionTime"] {
            if c.get(field).is_none_or(Value::is_null) {
                c[field] = json!(now);
            }
        }
    }
    if let Some(map) = next.as_object_mut() {
        let status = map.entry("status").or_insert_with(|| json!({}));
        if let Some(s) = status.as_object_mut() {
            if conditions.is_empty() {
                s.remove("conditions");
            } else {
                s.insert("conditions".into(), Value::Array(conditions));
            }
        }
    }
    // Metadata (labels, annotations) may change through approval.
    if let Some(meta) = sent.get("metadata") {
        for key in ["labels", "annotations"] {
            object::set_meta(&mut next, key, meta.get(key).cloned());
        }
    }
    next
}

/// `certificatesigningrequests/{name}/approval`.
pub(in crate::http) async fn handle(
    state: &AppState,
    call: &Call,
    res: &ResourceInfo,
    name: &str,
) -> Result<Response, ApiError> {
    allow(call, &[Method::GET, Method::PUT, Method::PATCH])?;
    if call.method == Method::GET {
        let csr = state.registry.get(res, "", name).await?;
        return Ok(object_response(StatusCode::OK, &csr, &[]));
    }
    let (options, sent, patch_type) = if call.method == Method::PUT {
        let (obj, _) = call.admitted_body(state.registry.resources(), res, "UpdateOptions")?;
        ("UpdateOptions", Some(obj), None)
    } else {
        let ct = body::content_type(&call.headers);
        let Some(t) = PatchType::from_content_type(&ct).filter(|t| *t != PatchType::Apply) else {
            return Err(ApiError::unsupported_media_type(PATCH_TYPES));
        };
        ("PatchOptions", None, Some(t))
    };
    let mut opts = write_options(call, options)?;
    opts.subresource = Some("approval");
    let updated = state
        .registry
        .update_subresource(res, "", name, "approval", &opts, |stored| {
            let wanted = match (&sent, patch_type) {
                (Some(obj), _) => obj.clone(),
                (None, Some(t)) => apply_document(t, &call.body, stored, schema_of(res))?,
                (None, None) => stored.clone(),
            };
            let mut next = take_conditions(stored, &wanted);
            let causes = condition_errors(&next);
            if !causes.is_empty() {
                return Err(ApiError::invalid(res.group, res.kind, name, causes));
            }
            if let Some(signer) = &call.signer {
                issue(&mut next, signer)?;
            }
            let rv = object::meta_str(&wanted, "resourceVersion")
                .filter(|_| sent.is_some())
                .map(|rv| json!(rv));
            object::set_meta(&mut next, "resourceVersion", rv);
            Ok(next)
        })
        .await?;
    Ok(object_response(StatusCode::OK, &updated, &[]))
}

fn has_condition(csr: &Value, kind: &str) -> bool {
    crate::registry::object::condition_true(csr, kind)
}

/// Signs `csr` when it is for the client signer, approved, and neither
/// issued, denied nor failed.
fn issue(csr: &mut Value, signer: &ClientSigner) -> Result<(), ApiError> {
    let signer_name = csr.pointer("/spec/signerName").and_then(Value::as_str);
    let issued = csr
        .pointer("/status/certificate")
        .and_then(Value::as_str)
        .is_some_and(|c| !c.is_empty());
    if signer_name != Some(SIGNER_NAME)
        || issued
        || !has_condition(csr, "Approved")
        || has_condition(csr, "Denied")
        || has_condition(csr, "Failed")
    {
        return Ok(());
    }
    let result = signer.sign(csr, time::OffsetDateTime::now_utc());
    let Some(status) = csr.get_mut("status").and_then(Value::as_object_mut) else {
        return Ok(());
    };
    match result {
        Ok(pem) => {
            use base64::Engine;
            let b64 = base64::engine::general_purpose::STANDARD.encode(pem);
            status.insert("certificate".into(), json!(b64));
        }
        Err(SignError::Failed(message)) => {
            let now = now_rfc3339();
            if let Some(list) = status.get_mut("conditions").and_then(Value::as_array_mut) {
                list.push(json!({
                    "type": "Failed", "status": "True", "reason": "SignerValidationFailure",
                    "message": message, "lastUpdateTime": now, "lastTransitionTime": now,
                }));
            }
        }
        Err(SignError::Internal(e)) => {
            return Err(ApiError::internal(format!(
                "signing the certificate failed: {e}"
            )));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn approved_and_denied_exclude_each_other() {
        let csr = json!({"status": {"conditions": [
            {"type": "Approved", "status": "True"}, {"type": "Denied", "status": "True"}]}});
        let e = condition_errors(&csr);
        assert_eq!(e.len(), 1);
        assert!(
            e[0].text()
                .ends_with("Approved and Denied conditions are mutually exclusive")
        );
        let next = take_conditions(&json!({"spec": {"request": "x"}}), &csr);
        assert!(next["status"]["conditions"][0]["lastUpdateTime"].is_string());
        assert_eq!(next["spec"]["request"], "x");
    }
}
