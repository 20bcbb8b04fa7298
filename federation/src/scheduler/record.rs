//! A decision written down: the `status.decision` of a Placement or
//! ClusterPlacement (`apiserver/crds/federation.skein.io/placements.yaml`),
//! the compact `federation.skein.io/decision` annotation of a dry run, and
//! the previous decision read back from a stored `status.decision`. Pure:
//! no I/O; the time is passed in.

use std::collections::{BTreeMap, BTreeSet};

use serde_json::{Value, json};
use skein_admission::placement::{Placement, ReplicaScheduling};

use super::{Assignment, Decision};

/// `"Divided"` when the object's replicas are split (a divisible kind,
/// `replicas` known, and `skein.io/replica-scheduling` not `Duplicated`),
/// else `"Duplicated"`: the `scheduling` of the record.
pub fn scheduling_of(placement: &Placement, replicas: Option<i64>) -> &'static str {
    match (placement.replica_scheduling, replicas) {
        (Some(ReplicaScheduling::Duplicated), _) | (_, None) => "Duplicated",
        _ => "Divided",
    }
}

/// The `status.decision` object: `scheduling`, `clusters` (sorted by
/// name; `replicas` only when Divided), `excluded` (sorted by name, with
/// the CamelCase `reason` and a `message`), and `time` (`now`, RFC 3339).
pub fn decision_status(decision: &Decision, scheduling: &str, now: &str) -> Value {
    let divided = scheduling == "Divided";
    let clusters: Vec<Value> = decision
        .assignments
        .iter()
        .map(|(name, a)| match a {
            Assignment::Replicas(n) if divided => json!({"name": name, "replicas": n}),
            _ => json!({"name": name}),
        })
        .collect();
    let excluded: Vec<Value> = decision
        .excluded
        .iter()
        .map(|(name, e)| json!({"name": name, "reason": e.reason(), "message": e.message()}))
        .collect();
    json!({
        "scheduling": scheduling,
        "clusters": clusters,
        "excluded": excluded,
        "time": now,
    })
}

/// Compact JSON for people and scripts:
/// `{"scheduling":"Divided","clusters":{"eu":4,"us":2,"ap":0},"excluded":{"x":"UnknownCluster"},"unplaced":0}`
/// (clusters sorted by name). When Duplicated, `clusters` is a list of
/// names and `unplaced` is left out.
pub fn decision_annotation(decision: &Decision, scheduling: &str) -> String {
    // Written by hand: the keys keep this order whatever serde_json's map
    // does.
    let text = |s: &str| Value::String(s.to_owned()).to_string();
    let divided = scheduling == "Divided";
    let clusters: Vec<String> = decision
        .assignments
        .iter()
        .map(|(name, a)| match (divided, a) {
            (true, Assignment::Replicas(n)) => format!("{}:{n}", text(name)),
            (true, Assignment::Whole) => format!("{}:0", text(name)),
            (false, _) => text(name),
        })
        .collect();
    let clusters = if divided {
        format!("{{{}}}", clusters.join(","))
    } else {
        format!("[{}]", clusters.join(","))
    };
    let excluded: Vec<String> = decision
        .excluded
        .iter()
        .map(|(name, e)| format!("{}:{}", text(name), text(e.reason())))
        .collect();
    let mut out = format!(
        "{{\"scheduling\":{},\"clusters\":{clusters},\"excluded\":{{{}}}",
        text(scheduling),
        excluded.join(",")
    );
    if divided {
        out.push_str(&format!(",\"unplaced\":{}", decision.unplaced));
    }
    out.push('}');
    out
}

/// What a stored decision says for the next one: its clusters
/// ([`super::ScheduleInput::previous`]) and the replicas of each
/// (`current`; clusters without `replicas` are absent).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Previous {
    /// Every chosen cluster.
    pub clusters: BTreeSet<String>,
    /// Replicas by cluster (Divided).
    pub replicas: BTreeMap<String, i64>,
}

/// Reads a `status.decision` back ([`decision_status`]'s shape); anything
/// malformed reads as absent.
pub fn previous(decision_status: Option<&Value>) -> Previous {
    let mut out = Previous::default();
    let items = decision_status
        .and_then(|d| d.get("clusters"))
        .and_then(Value::as_array);
    for item in items.into_iter().flatten() {
        let Some(name) = item.get("name").and_then(Value::as_str) else {
            continue;
        };
        out.clusters.insert(name.to_owned());
        if let Some(n) = item.get("replicas").and_then(Value::as_i64) {
            out.replicas.insert(name.to_owned(), n);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::super::Exclusion;
    use super::*;

    fn divided() -> Decision {
        Decision {
            assignments: BTreeMap::from([
                ("eu".to_owned(), Assignment::Replicas(4)),
                ("us".to_owned(), Assignment::Replicas(2)),
                ("ap".to_owned(), Assignment::Replicas(0)),
            ]),
            excluded: BTreeMap::from([
                ("x".to_owned(), Exclusion::UnknownCluster),
                (
                    "t".to_owned(),
                    Exclusion::Tainted("gpu:NoSchedule".to_owned()),
                ),
            ]),
            unplaced: 0,
        }
    }

    #[test]
    fn the_annotation_is_compact_json() {
        assert_eq!(
            decision_annotation(&divided(), "Divided"),
            r#"{"scheduling":"Divided","clusters":{"ap":0,"eu":4,"us":2},"excluded":{"t":"Tainted","x":"UnknownCluster"},"unplaced":0}"#
        );
        let dup = Decision {
            assignments: BTreeMap::from([
                ("eu".to_owned(), Assignment::Whole),
                ("us".to_owned(), Assignment::Whole),
            ]),
            excluded: BTreeMap::from([("ap".to_owned(), Exclusion::NotSelected)]),
            unplaced: 0,
        };
        assert_eq!(
            decision_annotation(&dup, "Duplicated"),
            r#"{"scheduling":"Duplicated","clusters":["eu","us"],"excluded":{"ap":"NotSelected"}}"#
        );
    }

    #[test]
    fn the_status_follows_the_crd() {
        let s = decision_status(&divided(), "Divided", "2026-01-01T00:00:00Z");
        assert_eq!(
            s,
            json!({
                "scheduling": "Divided",
                "clusters": [
                    {"name": "ap", "replicas": 0},
                    {"name": "eu", "replicas": 4},
                    {"name": "us", "replicas": 2}
                ],
                "excluded": [
                    {"name": "t", "reason": "Tainted", "message": "the cluster has the taint gpu:NoSchedule"},
                    {"name": "x", "reason": "UnknownCluster", "message": "no Cluster has this name"}
                ],
                "time": "2026-01-01T00:00:00Z"
            })
        );
        let p = previous(Some(&s));
        assert_eq!(p.clusters.len(), 3);
        assert_eq!(p.replicas["eu"], 4);
        assert_eq!(p.replicas["ap"], 0);
        let whole = Decision {
            assignments: BTreeMap::from([("eu".to_owned(), Assignment::Whole)]),
            excluded: BTreeMap::new(),
            unplaced: 0,
        };
        let s = decision_status(&whole, "Duplicated", "t");
        assert_eq!(s["clusters"], json!([{"name": "eu"}]));
        let p = previous(Some(&s));
        assert!(p.clusters.contains("eu") && p.replicas.is_empty());
        assert_eq!(previous(None), Previous::default());
        assert_eq!(
            previous(Some(&json!({"clusters": [7, {"x": 1}]}))),
            Previous::default()
        );
    }

    #[test]
    fn every_reason_is_the_crd_camel_case() {
        let all = [
            Exclusion::NotSelected,
            Exclusion::NotReady,
            Exclusion::MissingApi,
            Exclusion::Tainted("k:NoSchedule".into()),
            Exclusion::UnknownCluster,
        ];
        let reasons: Vec<&str> = all.iter().map(Exclusion::reason).collect();
        assert_eq!(
            reasons,
            [
                "NotSelected",
                "NotReady",
                "MissingAPI",
                "Tainted",
                "UnknownCluster"
            ]
        );
    }

    #[test]
    fn scheduling_follows_kind_and_annotation() {
        let p = Placement::default();
        assert_eq!(scheduling_of(&p, Some(3)), "Divided");
        assert_eq!(scheduling_of(&p, None), "Duplicated");
        let dup = Placement {
            replica_scheduling: Some(ReplicaScheduling::Duplicated),
            ..Placement::default()
        };
        assert_eq!(scheduling_of(&dup, Some(3)), "Duplicated");
    }
}
