//! [`schedule`] end to end over snapshots read from Cluster objects.

use std::collections::{BTreeMap, BTreeSet};

use serde_json::{Map, Value, json};
use skein_admission::placement::{self, ReplicaScheduling};
use skein_admission::selector::label::Selector;

use super::*;
use crate::scheduler::snapshot::Readiness;

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

/// A snapshot of `name` with its readiness set directly.
fn with_readiness(name: &str, readiness: Readiness) -> ClusterSnapshot {
    let mut c = ClusterSnapshot::from_cluster(&cluster(name, name, true));
    c.ready = readiness == Readiness::Ready;
    c.within_grace = readiness == Readiness::Unready;
    c
}

fn replicas_of(d: &Decision) -> BTreeMap<String, i64> {
    d.assignments
        .iter()
        .filter_map(|(k, a)| match a {
            Assignment::Replicas(n) => Some((k.clone(), *n)),
            Assignment::Whole => None,
        })
        .collect()
}

#[test]
fn grace_period_rules() {
    let gvr = Gvr::new("apps", "v1", "deployments");
    let placement = Placement::default();
    let current = BTreeMap::from([("eu".to_owned(), 3_i64), ("us".to_owned(), 3)]);
    let previous: BTreeSet<String> = current.keys().cloned().collect();
    let empty = BTreeMap::new();
    let run = |us: Readiness, placement: &Placement, previous: &BTreeSet<String>| {
        let clusters = vec![
            with_readiness("eu", Readiness::Ready),
            with_readiness("us", us),
            with_readiness("ap", Readiness::Ready),
        ];
        schedule(&ScheduleInput {
            gvr: &gvr,
            object_key: "default/web",
            placement,
            replicas: Some(6),
            clusters: &clusters,
            current: &current,
            previous,
            capacity: &empty,
        })
    };
    // Within grace and in the previous decision: nothing moves.
    let d = run(Readiness::Unready, &placement, &previous);
    assert_eq!(d.assignments["us"], Assignment::Replicas(3));
    assert!(!d.excluded.contains_key("us"));
    assert_eq!(replicas_of(&d).values().sum::<i64>(), 6);
    assert_eq!(d.assignments["eu"], Assignment::Replicas(3));
    assert_eq!(d.assignments["ap"], Assignment::Replicas(0));
    // Within grace but new to the object: excluded.
    let d = run(Readiness::Unready, &placement, &BTreeSet::new());
    assert_eq!(d.excluded["us"], Exclusion::NotReady);
    // Offline, Divided: excluded, its replicas re-planned onto Ready ones.
    let d = run(Readiness::Offline, &placement, &previous);
    assert_eq!(d.excluded["us"], Exclusion::NotReady);
    assert_eq!(replicas_of(&d).values().sum::<i64>(), 6);
    assert_eq!(d.unplaced, 0);
    // Offline, Duplicated: the copy stays where it is.
    let dup = Placement {
        replica_scheduling: Some(ReplicaScheduling::Duplicated),
        ..Placement::default()
    };
    let d = run(Readiness::Offline, &dup, &previous);
    assert_eq!(d.assignments["us"], Assignment::Whole);
    assert!(!d.excluded.contains_key("us"));
    let d = run(Readiness::Offline, &dup, &BTreeSet::new());
    assert_eq!(d.excluded["us"], Exclusion::NotReady);
    // A kept cluster still has to be selected.
    let eu_ap = annotations(json!({"skein.io/clusters": "eu,ap"}));
    let d = run(Readiness::Unready, &eu_ap, &previous);
    assert_eq!(d.excluded["us"], Exclusion::NotSelected);
    assert_eq!(replicas_of(&d).values().sum::<i64>(), 6);
}

#[test]
fn grace_share_shrinks_only_when_the_total_does() {
    let gvr = Gvr::new("apps", "v1", "deployments");
    let current = BTreeMap::from([("us".to_owned(), 5_i64), ("eu".to_owned(), 1)]);
    let previous: BTreeSet<String> = current.keys().cloned().collect();
    let clusters = vec![
        with_readiness("eu", Readiness::Ready),
        with_readiness("us", Readiness::Unready),
    ];
    let empty = BTreeMap::new();
    let placement = Placement::default();
    let d = schedule(&ScheduleInput {
        gvr: &gvr,
        object_key: "default/web",
        placement: &placement,
        replicas: Some(2),
        clusters: &clusters,
        current: &current,
        previous: &previous,
        capacity: &empty,
    });
    assert_eq!(d.assignments["us"], Assignment::Replicas(2));
    assert_eq!(d.assignments["eu"], Assignment::Replicas(0));
}

#[test]
fn capacity_weighting_follows_room_and_static_overflows() {
    let gvr = Gvr::new("apps", "v1", "deployments");
    let clusters = snapshots();
    let capacity = BTreeMap::from([
        ("eu".to_owned(), 30_i64),
        ("us".to_owned(), 10),
        ("ap".to_owned(), 2),
    ]);
    let run = |placement: &Placement, total: i64| {
        schedule(&ScheduleInput {
            gvr: &gvr,
            object_key: "default/web",
            placement,
            replicas: Some(total),
            clusters: &clusters,
            current: &BTreeMap::new(),
            previous: &NO_PREVIOUS,
            capacity: &capacity,
        })
    };
    let by_capacity = annotations(json!({"skein.io/replica-weighting": "Capacity"}));
    let d = replicas_of(&run(&by_capacity, 21));
    assert_eq!(d["eu"] + d["us"] + d["ap"], 21);
    assert!((15..=16).contains(&d["eu"]), "{d:?}");
    assert!((5..=6).contains(&d["us"]), "{d:?}");
    assert!(d["ap"] <= 2, "{d:?}");
    // Static: equal weights, but ap holds only 2; the overflow goes on.
    let d = replicas_of(&run(&Placement::default(), 21));
    assert_eq!(d["ap"], 2);
    assert_eq!(d["eu"] + d["us"], 19);
    // More than fits anywhere: the rest is unplaced.
    let d = run(&by_capacity, 50);
    assert_eq!(d.unplaced, 8);
}

#[test]
fn object_keys() {
    assert_eq!(
        object_key(&json!({"metadata": {"namespace": "a", "name": "b"}})),
        "a/b"
    );
    assert_eq!(object_key(&json!({"metadata": {"name": "b"}})), "b");
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

    fn any_readiness() -> impl Strategy<Value = Readiness> {
        proptest::sample::select(vec![
            Readiness::Ready,
            Readiness::Unready,
            Readiness::Offline,
        ])
    }

    /// One cluster: readiness, previous share, capacity.
    type Spec = (Readiness, Option<i64>, Option<i64>);

    /// Five clusters with a readiness, a previous share and a capacity.
    fn any_world() -> impl Strategy<Value = (Vec<Spec>, i64)> {
        (
            proptest::collection::vec(
                (
                    any_readiness(),
                    proptest::option::of(0..8_i64),
                    proptest::option::of(0..20_i64),
                ),
                5,
            ),
            0..40_i64,
        )
    }

    const NAMES: [&str; 5] = ["a", "b", "c", "d", "e"];

    struct World {
        clusters: Vec<ClusterSnapshot>,
        current: BTreeMap<String, i64>,
        previous: BTreeSet<String>,
        capacity: BTreeMap<String, i64>,
    }

    fn world(spec: &[Spec]) -> World {
        let mut w = World {
            clusters: Vec::new(),
            current: BTreeMap::new(),
            previous: BTreeSet::new(),
            capacity: BTreeMap::new(),
        };
        for (name, (readiness, share, cap)) in NAMES.iter().zip(spec) {
            w.clusters.push(with_readiness(name, *readiness));
            if let Some(n) = share {
                w.current.insert((*name).to_owned(), *n);
                w.previous.insert((*name).to_owned());
            }
            if let Some(c) = cap {
                w.capacity.insert((*name).to_owned(), *c);
            }
        }
        w
    }

    fn run(w: &World, placement: &Placement, total: i64, clusters: &[ClusterSnapshot]) -> Decision {
        schedule(&ScheduleInput {
            gvr: &Gvr::new("apps", "v1", "deployments"),
            object_key: "ns/obj",
            placement,
            replicas: Some(total),
            clusters,
            current: &w.current,
            previous: &w.previous,
            capacity: &w.capacity,
        })
    }

    fn any_placement() -> impl Strategy<Value = Placement> {
        (any::<bool>(), any::<bool>(), any::<bool>()).prop_map(|(dup, cap, rebalance)| {
            let mut a = serde_json::Map::new();
            if dup {
                a.insert("skein.io/replica-scheduling".into(), json!("Duplicated"));
            }
            if cap {
                a.insert("skein.io/replica-weighting".into(), json!("Capacity"));
            }
            if rebalance {
                a.insert(
                    "skein.io/replica-preferences".into(),
                    json!(r#"{"rebalance":true,"clusters":{"*":{"weight":1}}}"#),
                );
            }
            annotations(Value::Object(a))
        })
    }

    proptest! {
        #[test]
        fn grace_rules_hold_whatever_the_world(
            (spec, total) in any_world(),
            placement in any_placement(),
            rotate in 0..5_usize,
        ) {
            let w = world(&spec);
            let d = run(&w, &placement, total, &w.clusters);
            let duplicated = placement.replica_scheduling == Some(ReplicaScheduling::Duplicated);
            for c in &w.clusters {
                let was = w.previous.contains(&c.name);
                let chosen = d.assignments.contains_key(&c.name);
                let expected = match c.readiness() {
                    Readiness::Ready => true,
                    Readiness::Unready => was,
                    Readiness::Offline => was && duplicated,
                };
                prop_assert_eq!(chosen, expected, "{} {:?}", &c.name, c.readiness());
                prop_assert_eq!(d.excluded.contains_key(&c.name), !expected);
                if !expected {
                    prop_assert_eq!(&d.excluded[&c.name], &Exclusion::NotReady);
                }
            }
            if !duplicated {
                // The replica sum is preserved.
                let placed: i64 = replicas_of(&d).values().sum();
                prop_assert_eq!(placed + d.unplaced, total);
                // Capacity caps every Ready cluster.
                for c in w.clusters.iter().filter(|c| c.ready) {
                    if let Some(cap) = w.capacity.get(&c.name) {
                        prop_assert!(replicas_of(&d)[&c.name] <= *cap);
                    }
                }
                // A kept cluster never gains.
                for c in w.clusters.iter().filter(|c| c.readiness() == Readiness::Unready) {
                    if let Some(n) = replicas_of(&d).get(&c.name) {
                        prop_assert!(*n <= w.current[&c.name]);
                    }
                }
                // Unplaced only when every Ready cluster is full.
                if d.unplaced > 0 {
                    for c in w.clusters.iter().filter(|c| c.ready) {
                        let cap = w.capacity.get(&c.name).copied();
                        prop_assert_eq!(Some(replicas_of(&d)[&c.name]), cap, "{} has room", &c.name);
                    }
                }
            }
            // Deterministic and independent of the snapshot order.
            let mut rotated = w.clusters.clone();
            rotated.rotate_left(rotate);
            prop_assert_eq!(run(&w, &placement, total, &rotated), d);
        }

        #[test]
        fn without_rebalance_a_valid_previous_assignment_is_kept_exactly(
            shares in proptest::collection::vec(0..10_i64, 1..5),
            caps in proptest::collection::vec(proptest::option::of(0..12_i64), 5),
            by_capacity in any::<bool>(),
        ) {
            let mut w = world(&[]);
            for (i, share) in shares.iter().enumerate() {
                let name = NAMES[i];
                w.clusters.push(with_readiness(name, Readiness::Ready));
                w.current.insert(name.to_owned(), *share);
                w.previous.insert(name.to_owned());
                // The previous share is within the cluster's capacity.
                if let Some(c) = caps[i] {
                    w.capacity.insert(name.to_owned(), c.max(*share));
                }
            }
            let placement = if by_capacity {
                annotations(json!({"skein.io/replica-weighting": "Capacity"}))
            } else {
                Placement::default()
            };
            let total: i64 = shares.iter().sum();
            let d = run(&w, &placement, total, &w.clusters);
            prop_assert_eq!(replicas_of(&d), w.current.clone());
        }
    }
}
