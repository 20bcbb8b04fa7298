//! `POST pods/{name}/binding` and the legacy `POST namespaces/{ns}/bindings`
//! (upstream `BindingREST` / `LegacyBindingREST`): a scheduler assigns a
//! pod to a node.
//!
//! The Binding's name must be the URL's; `target.name` is required and
//! `target.kind` empty or `Node` (422 `Binding "p" is invalid: …`; upstream
//! answers its aggregate of these field errors as a 500, Skein as the
//! Invalid it describes). The Binding's `uid` and `resourceVersion` are
//! preconditions on the pod. A pod being deleted, already assigned, or
//! gated is 409 on `pods/binding` with upstream's text; otherwise
//! `spec.nodeName` is set, the Binding's annotations are merged into the
//! pod's, `PodScheduled` becomes `True`, and the answer is the `Success`
//! Status (201).

use axum::http::Method;
use axum::response::Response;
use serde_json::{Value, json};

use super::super::AppState;
use super::super::api::{Call, write_options};
use super::super::body;
use super::super::status::{ApiError, Cause};
use super::{allow, body_name, check_body_namespace, created_success, pod};
use crate::registry::{ResourceInfo, object, resource};

/// 409 `Operation cannot be fulfilled on pods/binding "p": <why>`.
fn conflict(name: &str, why: &str) -> ApiError {
    ApiError::conflict("", "pods/binding", name, why)
}

/// Upstream `ValidatePodBinding`.
fn validate(binding: &Value, name: &str) -> Result<(), ApiError> {
    let mut causes = Vec::new();
    let kind = binding
        .pointer("/target/kind")
        .and_then(Value::as_str)
        .unwrap_or("");
    if !kind.is_empty() && kind != "Node" {
        causes.push(Cause {
            reason: "FieldValueNotSupported",
            field: "target.kind".into(),
            value: Some(format!("{kind:?}")),
            detail: "supported values: \"Node\", \"<empty>\"".into(),
        });
    }
    let target = binding
        .pointer("/target/name")
        .and_then(Value::as_str)
        .unwrap_or("");
    if target.is_empty() {
        causes.push(Cause::required("target.name", ""));
    }
    if causes.is_empty() {
        Ok(())
    } else {
        Err(ApiError::invalid("", "Binding", name, causes))
    }
}

/// Decodes a Binding body (`v1`, kind `Binding` or unset).
fn decode(call: &Call) -> Result<Value, ApiError> {
    let raw = body::decode(&body::content_type(&call.headers), &call.body)?.raw;
    if !raw.is_object() {
        return Err(ApiError::bad_request("the object must be a JSON object"));
    }
    let kind = raw.get("kind").and_then(Value::as_str).unwrap_or("Binding");
    let version = raw
        .get("apiVersion")
        .and_then(Value::as_str)
        .unwrap_or("v1");
    if kind != "Binding" || version != "v1" {
        return Err(ApiError::bad_request(format!(
            "{kind} in version {version:?} cannot be handled as a Binding: no kind {kind:?} is registered for version {version:?}"
        )));
    }
    Ok(raw)
}

/// Binds pod `name` as the Binding asks.
async fn bind(
    state: &AppState,
    call: &Call,
    ns: &str,
    name: &str,
    binding: &Value,
) -> Result<Response, ApiError> {
    if body_name(binding) != name {
        return Err(ApiError::bad_request(
            "name in URL does not match name in Binding object",
        ));
    }
    check_body_namespace(binding, ns)?;
    validate(binding, name)?;
    let pods = resource::builtin("", "v1", "pods").ok_or_else(ApiError::path_not_found)?;
    let node = binding
        .pointer("/target/name")
        .and_then(Value::as_str)
        .unwrap_or("")
        .to_string();
    let annotations = binding
        .pointer("/metadata/annotations")
        .and_then(Value::as_object)
        .cloned()
        .unwrap_or_default();
    let want_uid = object::uid(binding).to_string();
    let want_rv = object::meta_str(binding, "resourceVersion")
        .unwrap_or("")
        .to_string();
    let mut opts = write_options(call, "CreateOptions")?;
    opts.subresource = Some("binding");
    let result = state
        .registry
        .update_subresource(&pods, ns, name, "binding", &opts, |p| {
            if !want_uid.is_empty() && want_uid != object::uid(p) {
                return Err(conflict(
                    name,
                    &format!(
                        "Precondition failed: UID in precondition: {want_uid}, UID in object meta: {}",
                        object::uid(p)
                    ),
                ));
            }
            if object::is_deleting(p) {
                return Err(conflict(
                    name,
                    &format!("pod {name} is being deleted, cannot be assigned to a host"),
                ));
            }
            let assigned = pod::node_name(p);
            if !assigned.is_empty() {
                return Err(conflict(
                    name,
                    &format!("pod {name} is already assigned to node {assigned:?}"),
                ));
            }
            if p.pointer("/spec/schedulingGates")
                .and_then(Value::as_array)
                .is_some_and(|g| !g.is_empty())
            {
                return Err(conflict(
                    name,
                    &format!("pod {name} has non-empty .spec.schedulingGates"),
                ));
            }
            let mut next = p.clone();
            next["spec"]["nodeName"] = json!(node);
            if !annotations.is_empty() {
                let mut merged = next
                    .pointer("/metadata/annotations")
                    .and_then(Value::as_object)
                    .cloned()
                    .unwrap_or_default();
                merged.extend(annotations.clone());
                object::set_meta(&mut next, "annotations", Some(Value::Object(merged)));
            }
            pod::set_condition(&mut next, "PodScheduled", "True", "", "");
            object::set_meta(
                &mut next,
                "resourceVersion",
                (!want_rv.is_empty()).then(|| json!(want_rv)),
            );
            Ok(next)
        })
        .await;
    result.map(|_| created_success())
}

/// `POST pods/{name}/binding`.
pub(in crate::http) async fn pod(
    state: &AppState,
    call: &Call,
    _res: &ResourceInfo,
    ns: &str,
    name: &str,
) -> Result<Response, ApiError> {
    allow(call, &[Method::POST])?;
    let binding = decode(call)?;
    bind(state, call, ns, name, &binding).await
}

/// `POST namespaces/{ns}/bindings`: the Binding names the pod.
pub(in crate::http) async fn legacy(
    state: &AppState,
    call: &Call,
    ns: Option<&str>,
) -> Result<Response, ApiError> {
    if call.method != Method::POST {
        return Err(ApiError::method_not_allowed());
    }
    let Some(ns) = ns else {
        return Err(ApiError::path_not_found());
    };
    let binding = decode(call)?;
    let name = body_name(&binding).to_string();
    bind(state, call, ns, &name, &binding).await
}
