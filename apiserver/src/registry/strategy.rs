//! What differs between kinds when objects are created and updated: the
//! status/spec split, `metadata.generation`, name rules, and initial status.
//! Mirrors the `PrepareForCreate`/`PrepareForUpdate` hooks of upstream's
//! `pkg/registry/<group>/<kind>/strategy.go`.

use serde_json::{Value, json};

use super::object::{set_meta, without_meta_and_status};
use super::resource::ResourceInfo;
use super::validation::NameRule;

/// The name rule of a kind.
pub fn name_rule(res: &ResourceInfo) -> NameRule {
    match (res.group, res.plural) {
        ("", "namespaces") => NameRule::Label,
        ("", "services") => NameRule::Dns1035,
        ("rbac.authorization.k8s.io", _) => NameRule::PathSegment,
        _ => NameRule::Subdomain,
    }
}

/// Whether the kind's strategy maintains `metadata.generation`.
pub fn tracks_generation(res: &ResourceInfo) -> bool {
    matches!(
        (res.group, res.plural),
        ("", "replicationcontrollers")
            | (
                "apps",
                "deployments" | "replicasets" | "statefulsets" | "daemonsets"
            )
            | ("batch", "jobs" | "cronjobs")
            | ("autoscaling", "horizontalpodautoscalers")
            | ("policy", "poddisruptionbudgets")
            | ("networking.k8s.io", "ingresses" | "networkpolicies")
            | ("apiextensions.k8s.io", "customresourcedefinitions")
            | ("flowcontrol.apiserver.k8s.io", _)
            | (
                "admissionregistration.k8s.io",
                "validatingadmissionpolicies"
            )
    )
}

/// Create: status is reset (it belongs to controllers), generation starts at 1,
/// Namespaces start Active with the `kubernetes` finalizer, Pods Pending.
pub fn prepare_for_create(res: &ResourceInfo, obj: &mut Value) {
    let Some(map) = obj.as_object_mut() else {
        return;
    };
    if res.status {
        map.remove("status");
    }
    match (res.group, res.plural) {
        ("", "namespaces") => {
            map.insert("status".into(), json!({"phase": "Active"}));
            let spec = map.entry("spec").or_insert_with(|| json!({}));
            if let Some(spec) = spec.as_object_mut() {
                spec.entry("finalizers")
                    .or_insert_with(|| json!(["kubernetes"]));
            }
        }
        ("", "pods") => {
            map.insert("status".into(), json!({"phase": "Pending"}));
        }
        ("", "secrets") => {
            let empty = map
                .get("type")
                .and_then(Value::as_str)
                .is_none_or(str::is_empty);
            if empty {
                map.insert("type".into(), json!("Opaque"));
            }
        }
        _ => {}
    }
    if tracks_generation(res) {
        set_meta(obj, "generation", Some(json!(1)));
    } else {
        set_meta(obj, "generation", None);
    }
}

/// Update of the main resource: status is kept from `old`; generation is
/// bumped when anything outside metadata and status changed.
pub fn prepare_for_update(res: &ResourceInfo, new: &mut Value, old: &Value) {
    if res.status
        && let Some(map) = new.as_object_mut()
    {
        match old.get("status") {
            Some(status) => {
                map.insert("status".into(), status.clone());
            }
            None => {
                map.remove("status");
            }
        }
    }
    carry_generation(res, new, old);
}

/// Update of `/status`: only status changes; everything else is `old`'s.
pub fn prepare_for_status_update(new: &Value, old: &Value) -> Value {
    let mut out = old.clone();
    if let Some(map) = out.as_object_mut() {
        match new.get("status") {
            Some(status) => {
                map.insert("status".into(), status.clone());
            }
            None => {
                map.remove("status");
            }
        }
    }
    // Labels, annotations, finalizers and owner references may change
    // through /status in upstream only via metadata of the request; keep
    // the old metadata except resourceVersion (checked by the caller).
    out
}

fn carry_generation(res: &ResourceInfo, new: &mut Value, old: &Value) {
    if !tracks_generation(res) {
        set_meta(new, "generation", None);
        return;
    }
    let old_gen = old
        .get("metadata")
        .and_then(|m| m.get("generation"))
        .and_then(Value::as_i64)
        .unwrap_or(1);
    let changed = without_meta_and_status(new) != without_meta_and_status(old);
    let generation = if changed { old_gen + 1 } else { old_gen };
    set_meta(new, "generation", Some(json!(generation)));
}
