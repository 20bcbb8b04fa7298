//! What the workload controllers share: owner references, Pods made from
//! templates, Pod state as the controllers read it, and the simulation
//! annotations. Pure functions over JSON objects.

use serde_json::{Map, Value, json};

/// On a workload (or its Pod template): its Pods run but never become
/// Ready.
pub const NEVER_READY: &str = "sim.skein.io/never-ready";

/// On a workload (or its Pod template): its Pods fail (a Job's Pods end
/// `Failed`; other Pods' containers crash and restart, never Ready).
pub const FAIL: &str = "sim.skein.io/fail";

/// Whether `obj` carries the simulation annotation `key` (any value but
/// `"false"`).
pub fn has_flag(obj: &Value, key: &str) -> bool {
    obj.pointer("/metadata/annotations")
        .and_then(|a| a.get(key))
        .and_then(Value::as_str)
        .is_some_and(|v| v != "false")
}

/// A controller ownerReference to `owner` (`controller` and
/// `blockOwnerDeletion` true, as upstream's controllers set).
pub fn controller_ref(owner: &Value, api_version: &str, kind: &str) -> Value {
    json!({
        "apiVersion": api_version,
        "kind": kind,
        "name": owner.pointer("/metadata/name").and_then(Value::as_str).unwrap_or_default(),
        "uid": owner.pointer("/metadata/uid").and_then(Value::as_str).unwrap_or_default(),
        "controller": true,
        "blockOwnerDeletion": true,
    })
}

/// The uid of `obj`'s controller ownerReference, if any.
pub fn controller_uid(obj: &Value) -> Option<&str> {
    obj.pointer("/metadata/ownerReferences")
        .and_then(Value::as_array)?
        .iter()
        .find(|r| r.get("controller").and_then(Value::as_bool) == Some(true))
        .and_then(|r| r.get("uid"))
        .and_then(Value::as_str)
}

/// Whether `obj` is controlled by the object whose uid is `owner_uid`.
pub fn is_controlled_by(obj: &Value, owner_uid: &str) -> bool {
    controller_uid(obj) == Some(owner_uid)
}

/// How a new Pod is named.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum PodName {
    /// `metadata.generateName` (the server adds a random suffix).
    Generate(String),
    /// A fixed name (StatefulSet ordinals).
    Fixed(String),
}

/// A Pod from a workload's `spec.template`, in `namespace`, controlled by
/// `owner_ref`, with `extra_labels` added to the template's labels (e.g.
/// `pod-template-hash`). The template's labels, annotations and finalizers
/// are copied as upstream's `GetPodFromTemplate` does.
pub fn pod_from_template(
    template: &Value,
    namespace: &str,
    name: &PodName,
    owner_ref: Value,
    extra_labels: &[(&str, &str)],
) -> Value {
    let mut meta = Map::new();
    match name {
        PodName::Generate(prefix) => meta.insert("generateName".into(), json!(prefix)),
        PodName::Fixed(n) => meta.insert("name".into(), json!(n)),
    };
    meta.insert("namespace".into(), json!(namespace));
    let mut labels = template
        .pointer("/metadata/labels")
        .and_then(Value::as_object)
        .cloned()
        .unwrap_or_default();
    for (k, v) in extra_labels {
        labels.insert((*k).to_owned(), json!(v));
    }
    if !labels.is_empty() {
        meta.insert("labels".into(), Value::Object(labels));
    }
    for field in ["annotations", "finalizers"] {
        if let Some(v) = template.pointer(&format!("/metadata/{field}")) {
            meta.insert(field.into(), v.clone());
        }
    }
    meta.insert("ownerReferences".into(), json!([owner_ref]));
    json!({
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": meta,
        "spec": template.get("spec").cloned().unwrap_or_else(|| json!({})),
    })
}

/// A Pod's `status.phase` ("" when unset).
pub fn phase(pod: &Value) -> &str {
    pod.pointer("/status/phase")
        .and_then(Value::as_str)
        .unwrap_or_default()
}

/// Whether a Pod counts for its controller: not being deleted and not
/// finished (upstream's `IsPodActive`).
pub fn is_active(pod: &Value) -> bool {
    pod.pointer("/metadata/deletionTimestamp").is_none()
        && !matches!(phase(pod), "Succeeded" | "Failed")
}

/// A Pod's condition of `type_`, if any.
pub fn condition<'a>(pod: &'a Value, type_: &str) -> Option<&'a Value> {
    pod.pointer("/status/conditions")
        .and_then(Value::as_array)?
        .iter()
        .find(|c| c.get("type").and_then(Value::as_str) == Some(type_))
}

/// Whether a Pod's `Ready` condition is True.
pub fn is_ready(pod: &Value) -> bool {
    condition(pod, "Ready")
        .and_then(|c| c.get("status"))
        .and_then(Value::as_str)
        == Some("True")
}

/// Whether a Pod has been Ready for `min_ready_seconds` at `now`
/// (upstream's `IsPodAvailable`; `now` and the transition time are RFC 3339).
pub fn is_available(pod: &Value, min_ready_seconds: i64, now: time::OffsetDateTime) -> bool {
    if !is_ready(pod) {
        return false;
    }
    if min_ready_seconds <= 0 {
        return true;
    }
    let since = condition(pod, "Ready")
        .and_then(|c| c.get("lastTransitionTime"))
        .and_then(Value::as_str)
        .and_then(|t| {
            time::OffsetDateTime::parse(t, &time::format_description::well_known::Rfc3339).ok()
        });
    since.is_some_and(|t| t + time::Duration::seconds(min_ready_seconds) <= now)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pods_copy_the_template_and_point_at_their_owner() {
        let template = json!({
            "metadata": {"labels": {"app": "web"}, "annotations": {"a": "b"}},
            "spec": {"containers": [{"name": "c", "image": "nginx"}]},
        });
        let owner = json!({"metadata": {"name": "web-5d4f", "uid": "u1"}});
        let pod = pod_from_template(
            &template,
            "ns",
            &PodName::Generate("web-5d4f-".into()),
            controller_ref(&owner, "apps/v1", "ReplicaSet"),
            &[("pod-template-hash", "5d4f")],
        );
        assert_eq!(pod["metadata"]["generateName"], "web-5d4f-");
        assert_eq!(
            pod["metadata"]["labels"],
            json!({"app": "web", "pod-template-hash": "5d4f"})
        );
        assert_eq!(pod["metadata"]["annotations"], json!({"a": "b"}));
        assert!(is_controlled_by(&pod, "u1"));
        assert_eq!(pod["spec"]["containers"][0]["image"], "nginx");
    }

    #[test]
    fn availability_waits_for_min_ready_seconds() {
        let pod = json!({"status": {"phase": "Running", "conditions": [
            {"type": "Ready", "status": "True", "lastTransitionTime": "2026-01-01T00:00:00Z"}
        ]}});
        let t = |s: &str| {
            time::OffsetDateTime::parse(s, &time::format_description::well_known::Rfc3339)
                .expect("time")
        };
        assert!(is_available(&pod, 0, t("2026-01-01T00:00:00Z")));
        assert!(!is_available(&pod, 10, t("2026-01-01T00:00:09Z")));
        assert!(is_available(&pod, 10, t("2026-01-01T00:00:10Z")));
        assert!(is_active(&pod));
        assert!(!is_active(&json!({"status": {"phase": "Succeeded"}})));
    }

    #[test]
    fn flags_are_annotations_but_false() {
        let on = json!({"metadata": {"annotations": {NEVER_READY: "true"}}});
        let off = json!({"metadata": {"annotations": {NEVER_READY: "false"}}});
        assert!(has_flag(&on, NEVER_READY));
        assert!(!has_flag(&off, NEVER_READY));
        assert!(!has_flag(&json!({}), FAIL));
    }
}
