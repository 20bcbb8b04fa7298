//! [`schedule`] end to end over snapshots read from Cluster objects.

use std::collections::BTreeMap;

use serde_json::{Map, Value, json};
use skein_admission::placement::{self, ReplicaScheduling};
use skein_admission::selector::label::Selector;

use super::*;

fn cluster(name: &str, region: &str, ready: bool) -> Value {
    json!({
        "metadata": {"name": name, "labels": {"region": region}},
        "status": {
            "conditions": [{"type": "Ready", "status": if ready { "True" } else { "False" }}],
            "servedResources": [
                {"groupVersion": "v1", "resources": ["configmaps"]},
                {"groupVersion": "apps/v1", "resources": ["deployments"]}
            ]
        }
    })
}

fn snapshots() -> Vec<ClusterSnapshot> {
    [
        cluster("eu", "eu", true),
        cluster("us", "us", true),
        cluster("ap", "ap", true),
        cluster("down", "eu", false),
    ]
    .iter()
    .map(ClusterSnapshot::from_cluster)
    .collect()
}

fn input<'a>(
    gvr: &'a Gvr,
    placement: &'a Placement,
    replicas: Option<i64>,
    clusters: &'a [ClusterSnapshot],
    empty: &'a BTreeMap<String, i64>,
) -> ScheduleInput<'a> {
    ScheduleInput {
        gvr,
        object_key: "default/web",
        placement,
        replicas,
        clusters,
        current: empty,
        capacity: empty,
    }
}

fn annotations(v: Value) -> Placement {
    let map: Map<String, Value> = v.as_object().cloned().unwrap_or_default();
    placement::parse(&map, "Deployment").expect("valid placement annotations")
}

#[test]
fn divided_by_weight_with_reasons() {
    let gvr = Gvr::new("apps", "v1", "deployments");
    let placement = Placement {
        ..annotations(json!({
            "skein.io/replica-preferences": r#"{"clusters":{"eu":{"weight":2},"us":{"weight":1},"ap":{"weight":0}}}"#,
            "skein.io/clusters": "eu,us,ap,down,ghost",
        }))
    };
    let clusters = snapshots();
    let empty = BTreeMap::new();
    let d = schedule(&input(&gvr, &placement, Some(6), &clusters, &empty));
    assert_eq!(
        d.assignments,
        BTreeMap::from([
            ("ap".to_owned(), Assignment::Replicas(0)),
            ("eu".to_owned(), Assignment::Replicas(4)),
            ("us".to_owned(), Assignment::Replicas(2)),
        ])
    );
    assert_eq!(d.excluded["down"], Exclusion::NotReady);
    assert_eq!(d.excluded["ghost"], Exclusion::UnknownCluster);
    assert_eq!(d.unplaced, 0);
    assert!(!d.is_unschedulable());
}

#[test]
fn default_weights_are_one_each() {
    let gvr = Gvr::new("apps", "v1", "deployments");
    let placement = Placement::default();
    let clusters = snapshots();
    let empty = BTreeMap::new();
    let d = schedule(&input(&gvr, &placement, Some(9), &clusters, &empty));
    assert!(
        d.assignments
            .values()
            .all(|a| *a == Assignment::Replicas(3)),
        "{d:?}"
    );
}

#[test]
fn duplicated_and_replica_less_kinds_go_whole() {
    let gvr = Gvr::new("apps", "v1", "deployments");
    let placement = Placement {
        replica_scheduling: Some(ReplicaScheduling::Duplicated),
        cluster_selector: Some(Selector::parse("region in (eu,us)").expect("selector")),
        ..Placement::default()
    };
    let clusters = snapshots();
    let empty = BTreeMap::new();
    let d = schedule(&input(&gvr, &placement, Some(6), &clusters, &empty));
    assert_eq!(
        d.assignments,
        BTreeMap::from([
            ("eu".to_owned(), Assignment::Whole),
            ("us".to_owned(), Assignment::Whole),
        ])
    );
    assert_eq!(d.excluded["ap"], Exclusion::NotSelected);
    assert_eq!(d.excluded["down"], Exclusion::NotReady);

    let cm = Gvr::new("", "v1", "configmaps");
    let d = schedule(&input(&cm, &Placement::default(), None, &clusters, &empty));
    assert_eq!(d.assignments.len(), 3);
    assert!(d.assignments.values().all(|a| *a == Assignment::Whole));
}

#[test]
fn unschedulable_when_no_cluster_serves_the_api() {
    let gvr = Gvr::new("example.com", "v1", "widgets");
    let clusters = snapshots();
    let empty = BTreeMap::new();
    let d = schedule(&input(
        &gvr,
        &Placement::default(),
        Some(3),
        &clusters,
        &empty,
    ));
    assert!(d.is_unschedulable());
    assert_eq!(d.unplaced, 3);
    assert_eq!(d.excluded["eu"].reason(), "MissingAPI");
    assert_eq!(d.excluded["down"].reason(), "NotReady");
}
