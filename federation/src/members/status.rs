//! A Cluster's `status` from what one probe observed. Pure (no I/O, time
//! passed in).
//!
//! Contract of [`next_status`]:
//! - The `Ready` condition is replaced (other conditions are kept, in
//!   place); its `lastProbeTime` and `status.lastProbeTime` are `now`
//!   when a probe ran.
//! - Inventory fields are written only when this probe observed them
//!   (`Some`); otherwise the last observed values stay, so an unreachable
//!   member still shows what it last had.
//! - `observedGeneration` is the Cluster's generation the probe ran with.
//! - Quantities are written in upstream's canonical text.

use serde_json::{Map, Value, json};

use super::health::Health;
use super::inventory::{Inventory, Resources, Served};

/// What one probe observed.
#[derive(Clone, Copy, Debug)]
pub struct Observation<'a> {
    /// The Ready condition after the probe.
    pub health: &'a Health,
    /// The probe's time (RFC 3339).
    pub now: &'a str,
    /// Whether a probe ran: `false` for the `Unknown` status written
    /// before the first one (no `lastProbeTime` then).
    pub probed: bool,
    /// The Cluster's `metadata.generation` the probe ran with.
    pub generation: i64,
    /// Node and Pod inventory, when the lists were read.
    pub inventory: Option<&'a Inventory>,
    /// `/version`'s `gitVersion`, when it was read.
    pub version: Option<&'a str>,
    /// Discovery, when it was read.
    pub served: Option<&'a [Served]>,
}

/// The Ready condition of `status`, if any.
pub fn ready_condition(status: Option<&Value>) -> Option<&Value> {
    status?
        .get("conditions")?
        .as_array()?
        .iter()
        .find(|c| c.get("type").and_then(Value::as_str) == Some("Ready"))
}

/// The status after `obs`, from the `current` one (see the module
/// documentation).
pub fn next_status(current: Option<&Value>, obs: &Observation<'_>) -> Value {
    let mut status: Map<String, Value> = match current {
        Some(Value::Object(m)) => m.clone(),
        _ => Map::new(),
    };
    let h = obs.health;
    let mut ready = Map::new();
    ready.insert("type".into(), json!("Ready"));
    ready.insert("status".into(), json!(h.status.as_str()));
    ready.insert("observedGeneration".into(), json!(obs.generation));
    if obs.probed {
        ready.insert("lastProbeTime".into(), json!(obs.now));
    }
    if let Some(t) = &h.last_transition {
        ready.insert("lastTransitionTime".into(), json!(t));
    }
    ready.insert("reason".into(), json!(h.reason));
    ready.insert("message".into(), json!(h.message));
    let ready = Value::Object(ready);
    let mut conditions: Vec<Value> = status
        .get("conditions")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    match conditions
        .iter_mut()
        .find(|c| c.get("type").and_then(Value::as_str) == Some("Ready"))
    {
        Some(c) => *c = ready,
        None => conditions.push(ready),
    }
    status.insert("conditions".into(), Value::Array(conditions));
    status.insert("observedGeneration".into(), json!(obs.generation));
    if obs.probed {
        status.insert("lastProbeTime".into(), json!(obs.now));
    }
    if let Some(v) = obs.version {
        status.insert("kubernetesVersion".into(), json!(v));
    }
    if let Some(inv) = obs.inventory {
        match &inv.region {
            Some(r) => status.insert("region".into(), json!(r)),
            None => status.remove("region"),
        };
        if inv.zones.is_empty() {
            status.remove("zones");
        } else {
            status.insert("zones".into(), json!(inv.zones));
        }
        status.insert("nodes".into(), json!(inv.nodes));
        status.insert("allocatable".into(), resources(&inv.allocatable));
        status.insert("available".into(), resources(&inv.available));
    }
    if let Some(served) = obs.served {
        let list: Vec<Value> = served
            .iter()
            .map(|s| json!({"groupVersion": s.group_version, "resources": s.resources}))
            .collect();
        status.insert("servedResources".into(), Value::Array(list));
    }
    Value::Object(status)
}

fn resources(r: &Resources) -> Value {
    Value::Object(
        r.iter()
            .map(|(k, q)| (k.clone(), json!(q.canonical())))
            .collect(),
    )
}

#[cfg(test)]
mod tests {
    use super::super::health::{Failure, Outcome, observe};
    use super::super::inventory::{Overrides, inventory};
    use super::*;

    #[test]
    fn a_first_probe_fills_everything() {
        let h = observe(
            &Health::unknown(),
            &Outcome::Ready,
            "2026-01-01T00:00:00Z",
            3,
        );
        let nodes = [json!({
            "metadata": {"labels": {"topology.kubernetes.io/region": "eu"}},
            "status": {"allocatable": {"cpu": "4", "memory": "8Gi"}},
        })];
        let inv = inventory(&Overrides::default(), &nodes, &[]);
        let served = [Served {
            group_version: "v1".into(),
            resources: vec!["pods".into()],
        }];
        let s = next_status(
            None,
            &Observation {
                health: &h,
                now: "2026-01-01T00:00:00Z",
                probed: true,
                generation: 2,
                inventory: Some(&inv),
                version: Some("v1.33.0"),
                served: Some(&served),
            },
        );
        assert_eq!(
            s,
            json!({
                "conditions": [{
                    "type": "Ready", "status": "True", "observedGeneration": 2,
                    "lastProbeTime": "2026-01-01T00:00:00Z",
                    "lastTransitionTime": "2026-01-01T00:00:00Z",
                    "reason": "ClusterReady", "message": "the member's /readyz answered ok",
                }],
                "observedGeneration": 2,
                "lastProbeTime": "2026-01-01T00:00:00Z",
                "kubernetesVersion": "v1.33.0",
                "region": "eu",
                "nodes": 1,
                "allocatable": {"cpu": "4", "memory": "8Gi"},
                "available": {"cpu": "4", "memory": "8Gi"},
                "servedResources": [{"groupVersion": "v1", "resources": ["pods"]}],
            })
        );
    }

    #[test]
    fn a_failed_probe_keeps_the_inventory_and_other_conditions() {
        let current = json!({
            "conditions": [{"type": "Other", "status": "True"},
                           {"type": "Ready", "status": "True", "lastTransitionTime": "t0"}],
            "kubernetesVersion": "v1.33.0",
            "nodes": 3,
        });
        let prev = Health::from_condition(&current["conditions"][1]);
        let h = observe(
            &prev,
            &Outcome::Failed {
                failure: Failure::Unreachable,
                message: "connection refused".into(),
            },
            "t9",
            1,
        );
        let s = next_status(
            Some(&current),
            &Observation {
                health: &h,
                now: "t9",
                probed: true,
                generation: 1,
                inventory: None,
                version: None,
                served: None,
            },
        );
        assert_eq!(s["nodes"], 3);
        assert_eq!(s["kubernetesVersion"], "v1.33.0");
        assert_eq!(s["lastProbeTime"], "t9");
        assert_eq!(s["conditions"][0]["type"], "Other");
        let ready = &s["conditions"][1];
        assert_eq!(ready["status"], "False");
        assert_eq!(ready["reason"], "Unreachable");
        assert_eq!(ready["message"], "connection refused");
        assert_eq!(ready["lastTransitionTime"], "t9");
        assert_eq!(
            ready_condition(Some(&s)).and_then(|c| c.get("reason")),
            Some(&json!("Unreachable"))
        );
    }

    #[test]
    fn before_the_first_probe_ready_is_unknown() {
        let h = Health {
            last_transition: Some("t0".into()),
            ..Health::unknown()
        };
        let s = next_status(
            None,
            &Observation {
                health: &h,
                now: "t0",
                probed: false,
                generation: 1,
                inventory: None,
                version: None,
                served: None,
            },
        );
        assert_eq!(
            s,
            json!({
                "conditions": [{"type": "Ready", "status": "Unknown", "observedGeneration": 1,
                    "lastTransitionTime": "t0", "reason": "Pending",
                    "message": "the member has not been probed yet"}],
                "observedGeneration": 1,
            })
        );
    }
}
