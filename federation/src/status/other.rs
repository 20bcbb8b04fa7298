//! PersistentVolumeClaims, the single-copy rule, and the kinds whose
//! status is never aggregated. Pure.

use serde_json::{Map, Value};

use super::{MemberCopy, observed_generation};

/// Kinds without a meaningful status, or whose status belongs to the
/// federation's own API server (Namespace phase, CRD conditions,
/// ResourceQuota usage) or to Skein itself: their status is left alone.
pub fn has_no_status(group: &str, kind: &str) -> bool {
    match group {
        "" => matches!(
            kind,
            "ConfigMap"
                | "Secret"
                | "ServiceAccount"
                | "Namespace"
                | "Endpoints"
                | "LimitRange"
                | "ResourceQuota"
                | "Event"
                | "PodTemplate"
        ),
        "apps" => kind == "ControllerRevision",
        "networking.k8s.io" => matches!(kind, "IngressClass" | "NetworkPolicy"),
        "storage.k8s.io" => kind == "StorageClass",
        "rbac.authorization.k8s.io"
        | "apiextensions.k8s.io"
        | "apiregistration.k8s.io"
        | "admissionregistration.k8s.io"
        | "coordination.k8s.io"
        | "events.k8s.io"
        | "discovery.k8s.io"
        | "scheduling.k8s.io"
        | "federation.skein.io" => true,
        _ => false,
    }
}

/// PodDisruptionBudgets, CronJobs, custom resources and other kinds: with
/// exactly one copy, its member's status (with `observedGeneration`
/// re-expressed in the federation's generations by
/// [`super::observed_generation`], since the member's generation counts
/// differently); with none or several, `None` (left alone: adding up
/// disruption budgets or custom statuses has no general meaning).
pub fn single(federated: &Value, copies: &[&MemberCopy<'_>]) -> Option<Value> {
    let [only] = copies else { return None };
    let mut status = only.status()?.as_object()?.clone();
    if status.is_empty() {
        return None;
    }
    if status.contains_key("observedGeneration") {
        match observed_generation(federated, copies) {
            Some(g) => status.insert("observedGeneration".into(), Value::from(g)),
            None => status.remove("observedGeneration"),
        };
    }
    Some(Value::Object(status))
}

/// A PersistentVolumeClaim copied to several members: `phase` is `Lost`
/// if any copy is Lost, `Bound` when every chosen copy exists and is
/// Bound (Helm 3's `volumeReady` and kstatus' `pvcConditions` wait for
/// Bound), else `Pending`; `accessModes` and `capacity` when every
/// member that reports them agrees.
pub fn claim(copies: &[&MemberCopy<'_>]) -> Value {
    let phases: Vec<&str> = copies
        .iter()
        .map(|c| {
            c.status()
                .and_then(|s| s.get("phase"))
                .and_then(Value::as_str)
                .unwrap_or_default()
        })
        .collect();
    let phase = if phases.contains(&"Lost") {
        "Lost"
    } else if !phases.is_empty() && phases.iter().all(|p| *p == "Bound") {
        "Bound"
    } else {
        "Pending"
    };
    let mut out = Map::new();
    out.insert("phase".into(), Value::from(phase));
    for field in ["accessModes", "capacity"] {
        let values: Vec<&Value> = copies
            .iter()
            .filter_map(|c| c.status()?.get(field))
            .collect();
        if let Some(first) = values.first()
            && values.iter().all(|v| v == first)
        {
            out.insert(field.into(), (*first).clone());
        }
    }
    Value::Object(out)
}
