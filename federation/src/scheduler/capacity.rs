//! V1's capacity estimate: how many more replicas of a pod template a
//! cluster can hold, from its available CPU and memory, and the weights of
//! `skein.io/replica-weighting: Capacity`. Pure: no I/O.
//!
//! Capacity weighting: each eligible cluster's weight is the number of
//! replicas of the object's pod template its available CPU and memory can
//! still hold ([`replicas_fitting`]: the scarcer of the two decides), so a
//! cluster with room for 30 replicas gets three times the share of one
//! with room for 10. The preferences still say which clusters take part
//! (a weight of 0 stays 0) and their `minReplicas`/`maxReplicas`; the
//! capacity still caps every cluster. A cluster that reports no figure
//! weighs as the roomiest cluster that does (at least 1); when no eligible cluster has a
//! figure (a template without requests), the static weights stay.

use std::collections::BTreeMap;

use serde_json::Value;
use skein_admission::placement::{ClusterPreferences, ReplicaPreferences};

use super::snapshot::ClusterSnapshot;
use crate::members::inventory::pod_requests;

/// How many more replicas of `object`'s pod template (`spec.template`,
/// requests as upstream's Pod request rules: containers, init containers
/// and sidecars, overhead) each cluster's available CPU and memory can
/// hold. A cluster whose capacity is not bounded (the template requests
/// neither, or the cluster reports no figure) is absent, and so is every
/// cluster for an object without a pod template.
pub fn capacity_map(object: &Value, clusters: &[ClusterSnapshot]) -> BTreeMap<String, i64> {
    let Some(template) = object.pointer("/spec/template") else {
        return BTreeMap::new();
    };
    let requests = pod_requests(template);
    let per_replica = |name: &str, per_unit: i128| {
        requests
            .get(name)
            .map(|q| {
                let n = q.nanos().max(0);
                i64::try_from((n + per_unit - 1) / per_unit).unwrap_or(i64::MAX)
            })
            .unwrap_or(0)
    };
    let cpu = per_replica("cpu", 1_000_000);
    let memory = per_replica("memory", 1_000_000_000);
    let mut out = BTreeMap::new();
    for c in clusters {
        if let Some(n) = replicas_fitting(c, cpu, memory) {
            out.entry(c.name.clone()).or_insert(n);
        }
    }
    out
}

/// `preferences` with the weights of `skein.io/replica-weighting:
/// Capacity` (see the module documentation): one entry per eligible
/// cluster whose weight is its capacity, minimum and maximum kept.
pub fn capacity_weights(
    preferences: &ReplicaPreferences,
    eligible: &[String],
    capacity: &BTreeMap<String, i64>,
) -> ReplicaPreferences {
    let Some(roomiest) = eligible
        .iter()
        .filter_map(|n| capacity.get(n).copied())
        .max()
    else {
        return preferences.clone();
    };
    let none = ClusterPreferences {
        weight: 0,
        min_replicas: 0,
        max_replicas: None,
    };
    let clusters = eligible
        .iter()
        .map(|name| {
            let p = preferences
                .clusters
                .get(name.as_str())
                .or_else(|| preferences.clusters.get("*"))
                .copied()
                .unwrap_or(none);
            let weight = if p.weight > 0 {
                capacity
                    .get(name)
                    .copied()
                    .unwrap_or(roomiest.max(1))
                    .max(0)
            } else {
                0
            };
            (name.clone(), ClusterPreferences { weight, ..p })
        })
        .collect();
    ReplicaPreferences {
        rebalance: preferences.rebalance,
        clusters,
    }
}

/// Replicas that fit in `cluster`'s available CPU and memory when each
/// replica requests `cpu_millis` and `memory_bytes` (0 = not requested).
/// `None` (unbounded) when nothing is requested or the cluster reports no
/// figure for a requested resource; never negative.
pub fn replicas_fitting(
    cluster: &ClusterSnapshot,
    cpu_millis: i64,
    memory_bytes: i64,
) -> Option<i64> {
    let by = |available: Option<i64>, per_replica: i64| {
        (per_replica > 0)
            .then_some(available)
            .flatten()
            .map(|a| a.max(0) / per_replica)
    };
    match (
        by(cluster.available_cpu_millis, cpu_millis),
        by(cluster.available_memory_bytes, memory_bytes),
    ) {
        (Some(c), Some(m)) => Some(c.min(m)),
        (one, other) => one.or(other),
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn roomy(name: &str, cpu: Option<i64>, memory: Option<i64>) -> ClusterSnapshot {
        ClusterSnapshot {
            name: name.to_owned(),
            available_cpu_millis: cpu,
            available_memory_bytes: memory,
            ..ClusterSnapshot::default()
        }
    }

    fn deployment(containers: Value, init: Value) -> Value {
        json!({"spec": {"template": {"spec": {"containers": containers, "initContainers": init}}}})
    }

    #[test]
    fn capacity_of_a_pod_template() {
        let clusters = [
            roomy("a", Some(4000), Some(8 << 30)),
            roomy("b", Some(1000), Some(8 << 30)),
            roomy("c", None, None),
            roomy("d", Some(4000), Some(1 << 30)),
        ];
        let d = deployment(
            json!([{"name": "x", "resources": {"requests": {"cpu": "250m", "memory": "256Mi"}}},
                   {"name": "y", "resources": {"requests": {"cpu": "250m"}}}]),
            json!([]),
        );
        let m = capacity_map(&d, &clusters);
        assert_eq!(
            m,
            BTreeMap::from([("a".into(), 8), ("b".into(), 2), ("d".into(), 4)])
        );
        // An init container asking more than the containers sets the request.
        let d = deployment(
            json!([{"name": "x", "resources": {"requests": {"cpu": "100m"}}}]),
            json!([{"name": "i", "resources": {"requests": {"cpu": "2"}}}]),
        );
        assert_eq!(capacity_map(&d, &clusters)["a"], 2);
        // Without requests, or without a template, nothing is bounded.
        let d = deployment(json!([{"name": "x"}]), json!([]));
        assert!(capacity_map(&d, &clusters).is_empty());
        assert!(capacity_map(&json!({"data": {}}), &clusters).is_empty());
        // A fraction of a millicore still counts a whole one.
        let d = deployment(
            json!([{"name": "x", "resources": {"requests": {"cpu": "0.0001"}}}]),
            json!([]),
        );
        assert_eq!(capacity_map(&d, &clusters)["b"], 1000);
    }

    #[test]
    fn capacity_weights_follow_room() {
        let prefs = ReplicaPreferences::default();
        let eligible = vec!["a".to_owned(), "b".to_owned(), "c".to_owned()];
        let cap = BTreeMap::from([("a".to_owned(), 30), ("b".to_owned(), 10)]);
        let w = capacity_weights(&prefs, &eligible, &cap);
        assert_eq!(w.clusters["a"].weight, 30);
        assert_eq!(w.clusters["b"].weight, 10);
        assert_eq!(w.clusters["c"].weight, 30, "unknown weighs as the roomiest");
        let full = BTreeMap::from([("a".to_owned(), 0)]);
        let w = capacity_weights(&ReplicaPreferences::default(), &eligible, &full);
        assert_eq!(w.clusters["a"].weight, 0);
        assert_eq!(w.clusters["b"].weight, 1, "unknown still takes replicas");
        // A weight of 0 stays 0; minimum and maximum stay.
        let prefs = skein_admission::placement::parse(
            &serde_json::from_value(json!({"skein.io/replica-preferences":
                r#"{"clusters":{"a":{"weight":0},"*":{"weight":5,"minReplicas":1,"maxReplicas":4}}}"#}))
            .expect("map"),
            "Deployment",
        )
        .expect("valid")
        .effective_replica_preferences();
        let w = capacity_weights(&prefs, &eligible, &cap);
        assert_eq!(w.clusters["a"].weight, 0);
        assert_eq!(w.clusters["b"].weight, 10);
        assert_eq!(w.clusters["b"].min_replicas, 1);
        assert_eq!(w.clusters["b"].max_replicas, Some(4));
        // No figure at all: the static weights stay.
        assert_eq!(capacity_weights(&prefs, &eligible, &BTreeMap::new()), prefs);
    }

    #[test]
    fn the_scarcer_resource_bounds() {
        let c = ClusterSnapshot {
            available_cpu_millis: Some(3500),
            available_memory_bytes: Some(1 << 30),
            ..ClusterSnapshot::default()
        };
        assert_eq!(replicas_fitting(&c, 500, 0), Some(7));
        assert_eq!(replicas_fitting(&c, 500, 256 << 20), Some(4));
        assert_eq!(replicas_fitting(&c, 0, 0), None);
        let unknown = ClusterSnapshot::default();
        assert_eq!(replicas_fitting(&unknown, 500, 1), None);
        let negative = ClusterSnapshot {
            available_cpu_millis: Some(-10),
            ..ClusterSnapshot::default()
        };
        assert_eq!(replicas_fitting(&negative, 100, 0), Some(0));
    }
}
