//! [`schedule`] end to end over snapshots read from Cluster objects.

use std::collections::{BTreeMap, BTreeSet};

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
        previous: &NO_PREVIOUS,
        capacity: empty,
    }
}

static NO_PREVIOUS: BTreeSet<String> = BTreeSet::new();

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
    assert_eq!(d.excluded["ghost"].reason(), "UnknownCluster");
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

mod properties {
    use proptest::prelude::*;

    use super::*;

    fn any_cluster() -> impl Strategy<Value = ClusterSnapshot> {
        (
            proptest::sample::select(vec!["a", "b", "c", "d", "e"]),
            proptest::sample::select(vec!["eu", "us"]),
            any::<bool>(),
            any::<bool>(),
            any::<bool>(),
        )
            .prop_map(|(name, region, ready, serves, tainted)| {
                let mut v = cluster(name, region, ready);
                if !serves {
                    v["status"]["servedResources"] = json!([]);
                }
                if tainted {
                    v["spec"] = json!({"taints": [{"key": "k", "effect": "NoSchedule"}]});
                }
                ClusterSnapshot::from_cluster(&v)
            })
    }

    proptest! {
        #[test]
        fn only_eligible_clusters_are_chosen_whatever_the_order(
            clusters in proptest::collection::vec(any_cluster(), 0..8),
            replicas in proptest::option::of(0..50_i64),
            eu_only in any::<bool>(),
        ) {
            let gvr = Gvr::new("apps", "v1", "deployments");
            let placement = if eu_only {
                annotations(json!({"skein.io/cluster-selector": "region=eu"}))
            } else {
                Placement::default()
            };
            let empty = BTreeMap::new();
            let d = schedule(&input(&gvr, &placement, replicas, &clusters, &empty));
            let mut seen = std::collections::BTreeSet::new();
            for c in &clusters {
                if !seen.insert(c.name.clone()) {
                    continue; // the first snapshot of a name counts
                }
                let fits = c.ready
                    && c.serves("apps", "v1", "deployments")
                    && c.taints.is_empty()
                    && (!eu_only || c.labels["region"] == "eu");
                prop_assert_eq!(d.assignments.contains_key(&c.name), fits, "{}", c.name);
                prop_assert_eq!(d.excluded.contains_key(&c.name), !fits, "{}", c.name);
            }
            prop_assert_eq!(d.assignments.len() + d.excluded.len(), seen.len());
            if let Some(n) = replicas {
                let placed: i64 = d.assignments.values().map(|a| match a {
                    Assignment::Replicas(r) => *r,
                    Assignment::Whole => 0,
                }).sum();
                prop_assert_eq!(placed + d.unplaced, n);
                prop_assert_eq!(d.unplaced > 0, d.assignments.is_empty() && n > 0);
            }
            let mut deduped: Vec<ClusterSnapshot> = Vec::new();
            for c in &clusters {
                if !deduped.iter().any(|x| x.name == c.name) {
                    deduped.push(c.clone());
                }
            }
            deduped.reverse();
            prop_assert_eq!(schedule(&input(&gvr, &placement, replicas, &deduped, &empty)), d);
        }
    }
}
