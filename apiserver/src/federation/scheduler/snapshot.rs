//! What the scheduler knows of one member cluster, read from its
//! `clusters.federation.skein.io` object. Pure: no I/O.

use std::collections::{BTreeMap, BTreeSet};

use serde_json::Value;
use skein_admission::quantity::Quantity;

/// A taint on a Cluster (`spec.taints[]`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Taint {
    /// `key`.
    pub key: String,
    /// `value` (empty when absent).
    pub value: String,
    /// `NoSchedule`, `PreferNoSchedule` or `NoExecute`.
    pub effect: String,
}

impl Taint {
    /// Whether the taint keeps objects off the cluster: `NoSchedule` and
    /// `NoExecute` do; `PreferNoSchedule` only ranks the cluster lower.
    pub fn repels(&self) -> bool {
        matches!(self.effect.as_str(), "NoSchedule" | "NoExecute")
    }
}

/// One Cluster as the scheduler sees it.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ClusterSnapshot {
    /// `metadata.name`.
    pub name: String,
    /// `metadata.labels`.
    pub labels: BTreeMap<String, String>,
    /// The `Ready` condition is `True`.
    pub ready: bool,
    /// `spec.taints`.
    pub taints: Vec<Taint>,
    /// `status.servedResources`: resource names by group/version
    /// (`v1`, `apps/v1`); `None` until the inventory has been read.
    pub served: Option<BTreeMap<String, BTreeSet<String>>>,
    /// `status.available.cpu` in millicores, rounded down; `None` when
    /// not reported or unparsable.
    pub available_cpu_millis: Option<i64>,
    /// `status.available.memory` in bytes, rounded down; `None` when not
    /// reported or unparsable.
    pub available_memory_bytes: Option<i64>,
}

impl ClusterSnapshot {
    /// Reads a Cluster object. Missing or malformed fields read as
    /// "unknown" (not ready, nothing served, no capacity figure), never as
    /// an error: the scheduler then excludes the cluster with a reason.
    pub fn from_cluster(cluster: &Value) -> ClusterSnapshot {
        let str_of = |v: &Value| v.as_str().unwrap_or_default().to_owned();
        let labels = cluster
            .pointer("/metadata/labels")
            .and_then(Value::as_object)
            .map(|m| m.iter().map(|(k, v)| (k.clone(), str_of(v))).collect())
            .unwrap_or_default();
        let ready = cluster
            .pointer("/status/conditions")
            .and_then(Value::as_array)
            .is_some_and(|cs| {
                cs.iter().any(|c| {
                    c.get("type").and_then(Value::as_str) == Some("Ready")
                        && c.get("status").and_then(Value::as_str) == Some("True")
                })
            });
        let taints = cluster
            .pointer("/spec/taints")
            .and_then(Value::as_array)
            .map(|ts| {
                ts.iter()
                    .map(|t| Taint {
                        key: t.get("key").map(str_of).unwrap_or_default(),
                        value: t.get("value").map(str_of).unwrap_or_default(),
                        effect: t.get("effect").map(str_of).unwrap_or_default(),
                    })
                    .collect()
            })
            .unwrap_or_default();
        let served = cluster
            .pointer("/status/servedResources")
            .and_then(Value::as_array)
            .map(|groups| {
                let mut out: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
                for g in groups {
                    let Some(gv) = g.get("groupVersion").and_then(Value::as_str) else {
                        continue;
                    };
                    let resources = g
                        .get("resources")
                        .and_then(Value::as_array)
                        .map(|rs| rs.iter().filter_map(Value::as_str).map(str::to_owned))
                        .into_iter()
                        .flatten();
                    out.entry(gv.to_owned()).or_default().extend(resources);
                }
                out
            });
        let available = |key: &str, per_unit_nanos: i128| {
            cluster
                .pointer(&format!("/status/available/{key}"))
                .and_then(quantity)
                .and_then(|q| i64::try_from(q.nanos().div_euclid(per_unit_nanos)).ok())
        };
        ClusterSnapshot {
            name: cluster
                .pointer("/metadata/name")
                .map(str_of)
                .unwrap_or_default(),
            labels,
            ready,
            taints,
            served,
            available_cpu_millis: available("cpu", 1_000_000),
            available_memory_bytes: available("memory", 1_000_000_000),
        }
    }

    /// Whether the cluster serves `resource` in `group`/`version` (core
    /// group: `group` empty). `false` while the inventory is unknown.
    pub fn serves(&self, group: &str, version: &str, resource: &str) -> bool {
        let gv = if group.is_empty() {
            version.to_owned()
        } else {
            format!("{group}/{version}")
        };
        self.served
            .as_ref()
            .and_then(|s| s.get(&gv))
            .is_some_and(|rs| rs.contains(resource))
    }
}

/// A quantity written as a string (`"3500m"`) or a number (`4`).
fn quantity(v: &Value) -> Option<Quantity> {
    match v {
        Value::String(s) => Quantity::parse(s),
        Value::Number(n) => Quantity::parse(&n.to_string()),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn reads_a_full_cluster() {
        let c = ClusterSnapshot::from_cluster(&json!({
            "metadata": {"name": "eu-1", "labels": {"region": "eu"}},
            "spec": {"taints": [{"key": "maintenance", "effect": "NoSchedule"},
                                {"key": "spot", "value": "yes", "effect": "PreferNoSchedule"}]},
            "status": {
                "conditions": [{"type": "Ready", "status": "True"}],
                "servedResources": [
                    {"groupVersion": "v1", "resources": ["configmaps", "pods"]},
                    {"groupVersion": "apps/v1", "resources": ["deployments", "deployments/scale"]}
                ],
                "available": {"cpu": "3500m", "memory": "2Gi"}
            }
        }));
        assert_eq!(c.name, "eu-1");
        assert_eq!(c.labels["region"], "eu");
        assert!(c.ready);
        assert_eq!(c.taints.len(), 2);
        assert!(c.taints[0].repels());
        assert!(!c.taints[1].repels());
        assert_eq!(c.taints[1].value, "yes");
        assert!(c.serves("apps", "v1", "deployments"));
        assert!(c.serves("", "v1", "configmaps"));
        assert!(!c.serves("apps", "v1", "statefulsets"));
        assert!(!c.serves("batch", "v1", "jobs"));
        assert_eq!(c.available_cpu_millis, Some(3500));
        assert_eq!(c.available_memory_bytes, Some(2 * 1024 * 1024 * 1024));
    }

    #[test]
    fn missing_or_malformed_fields_read_as_unknown() {
        let c = ClusterSnapshot::from_cluster(&json!({
            "metadata": {"name": "x"},
            "status": {
                "conditions": [{"type": "Ready", "status": "Unknown"}],
                "available": {"cpu": "lots", "memory": 1000}
            }
        }));
        assert!(!c.ready);
        assert_eq!(c.served, None);
        assert!(!c.serves("", "v1", "pods"));
        assert_eq!(c.available_cpu_millis, None);
        assert_eq!(c.available_memory_bytes, Some(1000));
        assert_eq!(ClusterSnapshot::from_cluster(&json!(null)).name, "");
    }

    #[test]
    fn ready_false_is_not_ready() {
        let c = ClusterSnapshot::from_cluster(&json!({
            "metadata": {"name": "x"},
            "status": {"conditions": [{"type": "Ready", "status": "False"}]}
        }));
        assert!(!c.ready);
    }
}
