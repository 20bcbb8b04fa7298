//! What differs between kinds when objects are created and updated: the
//! status/spec split, `metadata.generation`, name rules, and initial status
//! (Pods `Pending` with their QoS class; PersistentVolumes and claims
//! `Pending`, as upstream's defaulting on every read gives them).
//! Mirrors the `PrepareForCreate`/`PrepareForUpdate` hooks of upstream's
//! `pkg/registry/<group>/<kind>/strategy.go`.

use serde_json::{Value, json};

use super::object::{set_meta, without_meta_and_status};
use super::resource::ResourceInfo;
use super::validation::NameRule;
use skein_admission::UserInfo;

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
    // Custom resources always do (upstream's customresource strategy).
    res.is_custom()
        || matches!(
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
pub fn prepare_for_create(res: &ResourceInfo, obj: &mut Value, requester: Option<&UserInfo>) {
    let Some(map) = obj.as_object_mut() else {
        return;
    };
    // A Node keeps the status it is created with (kubelets register with
    // their addresses and capacity), as upstream's node strategy.
    if res.status && !(res.group.is_empty() && res.plural == "nodes") {
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
            let qos = pod_qos_class(map.get("spec"));
            map.insert(
                "status".into(),
                json!({"phase": "Pending", "qosClass": qos}),
            );
        }
        ("", "persistentvolumes" | "persistentvolumeclaims") => {
            map.insert("status".into(), json!({"phase": "Pending"}));
        }
        ("certificates.k8s.io", "certificatesigningrequests") => {
            // Upstream records who asked and ignores what the client said.
            if let Some(spec) = map.get_mut("spec").and_then(Value::as_object_mut) {
                let who = requester.cloned().unwrap_or_default();
                spec.insert("username".into(), json!(who.name));
                match who.uid.as_deref().filter(|u| !u.is_empty()) {
                    Some(uid) => spec.insert("uid".into(), json!(uid)),
                    None => spec.remove("uid"),
                };
                if who.groups.is_empty() {
                    spec.remove("groups");
                } else {
                    spec.insert("groups".into(), json!(who.groups));
                }
                spec.remove("extra");
            }
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
    if super::admit::is_crd(res) {
        skein_apiextensions::crd::prepare_for_create(obj);
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
    if super::admit::is_crd(res) {
        skein_apiextensions::crd::prepare_for_update(new, old);
    }
}

/// Update of `/status`: only status changes; everything else is `old`'s.
/// A PersistentVolume's or claim's empty phase reads as `Pending`
/// (upstream's defaulting).
pub fn prepare_for_status_update(new: &Value, old: &Value) -> Value {
    let mut out = old.clone();
    let pending_default = matches!(
        (
            old.get("apiVersion").and_then(Value::as_str),
            old.get("kind").and_then(Value::as_str)
        ),
        (
            Some("v1"),
            Some("PersistentVolume" | "PersistentVolumeClaim")
        )
    );
    if let Some(map) = out.as_object_mut() {
        match new.get("status") {
            Some(status) => {
                map.insert("status".into(), status.clone());
            }
            None => {
                map.remove("status");
            }
        }
        if pending_default {
            let status = map.entry("status").or_insert_with(|| json!({}));
            if let Some(status) = status.as_object_mut()
                && status
                    .get("phase")
                    .and_then(Value::as_str)
                    .is_none_or(str::is_empty)
            {
                status.insert("phase".into(), json!("Pending"));
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
    // Compared as Go compares structs: absent and zero are the same (stored
    // objects carry Go's zero values, request bodies need not).
    let changed = crate::wire::to_vec(&without_meta_and_status(new))
        != crate::wire::to_vec(&without_meta_and_status(old));
    let generation = if changed { old_gen + 1 } else { old_gen };
    set_meta(new, "generation", Some(json!(generation)));
}

/// Upstream's `ComputePodQOS` (pod-level resources are alpha and off in
/// v1.33): only cpu and memory above zero count, summed over containers
/// and init containers. No requests or limits: `BestEffort`; every
/// container limiting both cpu and memory, and the summed requests equal to
/// the summed limits: `Guaranteed`; otherwise `Burstable`.
pub fn pod_qos_class(spec: Option<&Value>) -> &'static str {
    use std::collections::BTreeMap;
    let mut requests: BTreeMap<&str, i128> = BTreeMap::new();
    let mut limits: BTreeMap<&str, i128> = BTreeMap::new();
    let mut guaranteed = true;
    let containers = ["containers", "initContainers"]
        .into_iter()
        .filter_map(|k| spec?.get(k)?.as_array())
        .flatten();
    for c in containers {
        let resources = c.get("resources");
        let positive = |what: &str| {
            resources
                .and_then(|r| r.get(what))
                .and_then(Value::as_object)
                .into_iter()
                .flatten()
                .filter(|(name, _)| matches!(name.as_str(), "cpu" | "memory"))
                .filter_map(|(name, q)| Some((name.as_str(), quantity_nanos(q)?)))
                .filter(|(_, q)| *q > 0)
                .collect::<Vec<_>>()
        };
        for (name, q) in positive("requests") {
            *requests.entry(name).or_default() += q;
        }
        let found = positive("limits");
        for (name, q) in &found {
            *limits.entry(name).or_default() += q;
        }
        let has = |n: &str| found.iter().any(|(name, _)| *name == n);
        if !(has("cpu") && has("memory")) {
            guaranteed = false;
        }
    }
    if requests.is_empty() && limits.is_empty() {
        return "BestEffort";
    }
    if guaranteed
        && requests.len() == limits.len()
        && requests.iter().all(|(n, q)| limits.get(n) == Some(q))
    {
        return "Guaranteed";
    }
    "Burstable"
}

/// A `resource.Quantity` in units of 10⁻⁹ (`None` if it does not parse),
/// through the admission crate's parser, the one home of quantities.
fn quantity_nanos(v: &Value) -> Option<i128> {
    let text = match v {
        Value::String(s) => s.clone(),
        Value::Number(n) => n.to_string(),
        _ => return None,
    };
    skein_admission::quantity::Quantity::parse(&text).map(|q| q.nanos())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn qos(spec: Value) -> &'static str {
        pod_qos_class(Some(&spec))
    }

    #[test]
    fn pod_qos_as_upstream() {
        let c = |r: Value| json!({"name": "c", "resources": r});
        assert_eq!(qos(json!({"containers": [c(json!({}))]})), "BestEffort");
        // Only non-cpu/memory resources, or zero quantities: BestEffort.
        assert_eq!(
            qos(json!({"containers": [c(json!({"limits": {"nvidia.com/gpu": "1", "cpu": "0"}}))]})),
            "BestEffort"
        );
        assert_eq!(
            qos(json!({"containers": [c(json!({"requests": {"cpu": "100m"}}))]})),
            "Burstable"
        );
        let both = json!({"requests": {"cpu": "1", "memory": "1Gi"}, "limits": {"cpu": "1000m", "memory": "1024Mi"}});
        assert_eq!(qos(json!({"containers": [c(both.clone())]})), "Guaranteed");
        // An init container without limits makes it Burstable.
        assert_eq!(
            qos(
                json!({"containers": [c(both.clone())], "initContainers": [c(json!({"requests": {"cpu": "1"}}))]})
            ),
            "Burstable"
        );
        // Limits without requests (defaulting copies them; summed equal).
        assert_eq!(
            qos(
                json!({"containers": [c(json!({"limits": {"cpu": "2", "memory": "1G"}, "requests": {"cpu": "2", "memory": "1000M"}}))]})
            ),
            "Guaranteed"
        );
        assert_eq!(
            qos(
                json!({"containers": [c(json!({"limits": {"cpu": "2", "memory": "1G"}, "requests": {"cpu": "1", "memory": "1G"}}))]})
            ),
            "Burstable"
        );
    }

    #[test]
    fn quantities_in_nanos() {
        assert_eq!(quantity_nanos(&json!("100m")), Some(100_000_000));
        assert_eq!(quantity_nanos(&json!("1Ki")), Some(1024 * 1_000_000_000));
        assert_eq!(quantity_nanos(&json!("1e3")), Some(1000 * 1_000_000_000));
        assert_eq!(quantity_nanos(&json!(2)), Some(2_000_000_000));
        assert_eq!(quantity_nanos(&json!("x")), None);
    }
}
