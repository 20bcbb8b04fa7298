//! What the scheduler knows of one member cluster, read from its
//! `clusters.federation.skein.io` object. Pure: no I/O; the time is passed
//! in ([`ClusterSnapshot::from_cluster_at`]).

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;
use std::time::Duration;

use serde_json::Value;
use skein_admission::quantity::Quantity;
use time::OffsetDateTime;

/// A cluster's readiness as the scheduler weighs it
/// ([`ClusterSnapshot::readiness`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Readiness {
    /// The `Ready` condition is `True`: the cluster is eligible.
    Ready,
    /// Not Ready for less than the grace period (`--cluster-grace-period`):
    /// what it already holds stays (its Divided share too); it gets
    /// nothing new.
    Unready,
    /// Not Ready for the grace period or longer, or since a time not known:
    /// its Divided replicas are re-planned onto Ready clusters; Duplicated
    /// copies it holds stay.
    Offline,
}

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
    /// Shared, so a snapshot is cheap to copy.
    pub served: Option<Arc<BTreeMap<String, BTreeSet<String>>>>,
    /// `status.available.cpu` in millicores, rounded down; `None` when
    /// not reported or unparsable.
    pub available_cpu_millis: Option<i64>,
    /// `status.available.memory` in bytes, rounded down; `None` when not
    /// reported or unparsable.
    pub available_memory_bytes: Option<i64>,
    /// When a not-Ready cluster stopped being Ready: the `lastTransitionTime`
    /// of its `False` or `Unknown` Ready condition; `None` when Ready or not
    /// recorded.
    pub not_ready_since: Option<OffsetDateTime>,
    /// Not Ready, but for less than the grace period (set by
    /// [`ClusterSnapshot::from_cluster_at`]; `false` from
    /// [`ClusterSnapshot::from_cluster`], which knows no clock).
    pub within_grace: bool,
}

impl ClusterSnapshot {
    /// Reads a Cluster object as [`ClusterSnapshot::from_cluster`] does and
    /// classifies its readiness at `now`: a cluster not Ready since less
    /// than `grace` ago is [`Readiness::Unready`]; one not Ready for longer,
    /// or since a time not recorded, is [`Readiness::Offline`].
    pub fn from_cluster_at(
        cluster: &Value,
        now: OffsetDateTime,
        grace: Duration,
    ) -> ClusterSnapshot {
        ClusterSnapshot::from_cluster(cluster).at(now, grace)
    }

    /// The snapshot with its readiness classified at `now` (see
    /// [`ClusterSnapshot::from_cluster_at`]), so one read of a Cluster
    /// serves many plans.
    pub fn at(mut self, now: OffsetDateTime, grace: Duration) -> ClusterSnapshot {
        self.within_grace = !self.ready && self.grace_ends(grace).is_some_and(|end| now < end);
        self
    }

    /// When the grace period of a not-Ready cluster ends (when its Divided
    /// replicas move, so a worker knows when to schedule again); `None` when
    /// it is Ready or the time is not known.
    pub fn grace_ends(&self, grace: Duration) -> Option<OffsetDateTime> {
        if self.ready {
            return None;
        }
        let grace = time::Duration::try_from(grace).unwrap_or(time::Duration::MAX);
        self.not_ready_since.map(|t| t.saturating_add(grace))
    }

    /// Ready, not Ready within the grace period, or Offline.
    pub fn readiness(&self) -> Readiness {
        if self.ready {
            Readiness::Ready
        } else if self.within_grace {
            Readiness::Unready
        } else {
            Readiness::Offline
        }
    }

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
        let condition = cluster
            .pointer("/status/conditions")
            .and_then(Value::as_array)
            .and_then(|cs| {
                cs.iter()
                    .find(|c| c.get("type").and_then(Value::as_str) == Some("Ready"))
            });
        let ready =
            condition.is_some_and(|c| c.get("status").and_then(Value::as_str) == Some("True"));
        let not_ready_since = condition
            .filter(|_| !ready)
            .and_then(|c| c.get("lastTransitionTime"))
            .and_then(Value::as_str)
            .and_then(|t| {
                OffsetDateTime::parse(t, &time::format_description::well_known::Rfc3339).ok()
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
                Arc::new(out)
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
            not_ready_since,
            within_grace: false,
        }
    }

    /// Adds `resource` of `group_version` (`example.com/v1`) to what the
    /// cluster serves, once its inventory has been read (a cluster whose
    /// inventory is unknown stays unknown).
    pub fn also_serves(&mut self, group_version: &str, resource: &str) {
        if let Some(served) = self.served.as_mut() {
            Arc::make_mut(served)
                .entry(group_version.to_owned())
                .or_default()
                .insert(resource.to_owned());
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

/// Whether a Cluster object's `Ready` condition is `True` (the probes
/// reach its member), without reading anything else of it.
pub fn cluster_ready(cluster: &Value) -> bool {
    cluster
        .pointer("/status/conditions")
        .and_then(Value::as_array)
        .is_some_and(|cs| {
            cs.iter().any(|c| {
                c.get("type").and_then(Value::as_str) == Some("Ready")
                    && c.get("status").and_then(Value::as_str) == Some("True")
            })
        })
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn readiness_is_the_ready_condition() {
        assert!(cluster_ready(&json!({"status": {"conditions": [
            {"type": "Ready", "status": "True"}]}})));
        assert!(!cluster_ready(&json!({"status": {"conditions": [
            {"type": "Ready", "status": "False"}]}})));
        assert!(!cluster_ready(&json!({})));
    }

    #[test]
    fn what_a_cluster_also_serves_counts_once_its_inventory_is_known() {
        let mut unknown = ClusterSnapshot::default();
        unknown.also_serves("example.com/v1", "widgets");
        assert!(!unknown.serves("example.com", "v1", "widgets"));
        let mut known = ClusterSnapshot {
            served: Some(Arc::new(BTreeMap::from([(
                "v1".to_owned(),
                BTreeSet::from(["pods".to_owned()]),
            )]))),
            ..ClusterSnapshot::default()
        };
        let shared = known.clone();
        assert!(!known.serves("example.com", "v1", "widgets"));
        known.also_serves("example.com/v1", "widgets");
        assert!(known.serves("example.com", "v1", "widgets"));
        // The copy it was cloned from (a cached snapshot) is unchanged.
        assert!(!shared.serves("example.com", "v1", "widgets"));
        assert!(known.serves("", "v1", "pods"));
    }

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

    fn at(t: &str) -> OffsetDateTime {
        OffsetDateTime::parse(t, &time::format_description::well_known::Rfc3339).expect("time")
    }

    fn with_ready(status: &str, since: Option<&str>) -> Value {
        let mut cond = json!({"type": "Ready", "status": status});
        if let Some(t) = since {
            cond["lastTransitionTime"] = json!(t);
        }
        json!({"metadata": {"name": "x"}, "status": {"conditions": [cond]}})
    }

    #[test]
    fn readiness_by_grace_period() {
        let grace = Duration::from_secs(60);
        let now = at("2026-01-01T00:01:00Z");
        let ready = ClusterSnapshot::from_cluster_at(
            &with_ready("True", Some("2026-01-01T00:00:30Z")),
            now,
            grace,
        );
        assert_eq!(ready.readiness(), Readiness::Ready);
        assert_eq!(ready.not_ready_since, None);
        assert_eq!(ready.grace_ends(grace), None);
        for status in ["False", "Unknown"] {
            let fresh = ClusterSnapshot::from_cluster_at(
                &with_ready(status, Some("2026-01-01T00:00:30Z")),
                now,
                grace,
            );
            assert_eq!(fresh.readiness(), Readiness::Unready, "{status}");
            assert_eq!(fresh.grace_ends(grace), Some(at("2026-01-01T00:01:30Z")));
            // The grace period ends exactly at since + grace.
            let old = ClusterSnapshot::from_cluster_at(
                &with_ready(status, Some("2026-01-01T00:00:00Z")),
                now,
                grace,
            );
            assert_eq!(old.readiness(), Readiness::Offline, "{status}");
        }
        let unknown_since =
            ClusterSnapshot::from_cluster_at(&with_ready("False", None), now, grace);
        assert_eq!(unknown_since.readiness(), Readiness::Offline);
        let garbled =
            ClusterSnapshot::from_cluster_at(&with_ready("False", Some("yesterday")), now, grace);
        assert_eq!(garbled.readiness(), Readiness::Offline);
        // Without a clock, not Ready is Offline.
        let no_clock =
            ClusterSnapshot::from_cluster(&with_ready("False", Some("2026-01-01T00:00:30Z")));
        assert_eq!(no_clock.readiness(), Readiness::Offline);
        assert_eq!(no_clock.not_ready_since, Some(at("2026-01-01T00:00:30Z")));
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
