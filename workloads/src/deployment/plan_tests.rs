//! Tables from upstream's `rolling_test.go`, `sync_test.go` and
//! `deployment_util_test.go`, and properties of a simulated rollout.

use proptest::prelude::{prop_assert, prop_assert_eq, proptest};
use serde_json::json;

use super::*;

fn rolling(replicas: i32, surge: IntOrPercent, unavailable: IntOrPercent) -> DeploySpec {
    DeploySpec {
        name: "foo".into(),
        replicas,
        strategy: Strategy::RollingUpdate {
            max_surge: surge,
            max_unavailable: unavailable,
        },
        min_ready_seconds: 0,
        revision_history_limit: Some(10),
        progress_deadline_seconds: Some(600),
        paused: false,
        generation: 1,
    }
}

fn rs(name: &str, replicas: i32, created: &str) -> RsView {
    RsView {
        name: name.into(),
        created: created.into(),
        replicas,
        ..RsView::default()
    }
}

use IntOrPercent::{Int, Percent};

#[test]
fn fenceposts_round_surge_up_and_unavailability_down() {
    // deployment_util_test.go TestResolveFenceposts.
    let cases = [
        (Int(0), Int(0), 0, (0, 1)),
        (Int(39), Int(39), 10, (39, 39)),
        (Percent(25), Percent(25), 10, (3, 2)),
        (Percent(0), Percent(25), 10, (0, 2)),
        (Percent(25), Percent(0), 10, (3, 0)),
        (Percent(0), Percent(0), 10, (0, 1)),
        (Percent(1), Percent(1), 10, (1, 0)),
        (Percent(50), Percent(50), 5, (3, 2)),
        (Percent(100), Percent(100), 1, (1, 1)),
    ];
    for (surge, unavailable, desired, want) in cases {
        assert_eq!(
            resolve_fenceposts(surge, unavailable, desired),
            want,
            "{surge:?} {unavailable:?} of {desired}"
        );
    }
}

#[test]
fn huge_counts_are_clamped_so_sums_never_overflow() {
    let d = DeploySpec::of(&json!({"spec": {"replicas": i32::MAX, "strategy": {
        "rollingUpdate": {"maxSurge": i32::MAX, "maxUnavailable": "1000000000%"}}}}));
    assert_eq!(d.replicas, MAX_COUNT);
    assert_eq!(d.max_surge(), MAX_COUNT);
    assert_eq!(d.max_unavailable(), MAX_COUNT);
    let big = rs("big", MAX_COUNT, "1");
    assert_eq!(
        new_rs_new_replicas(&d, &[&big, &big], 0),
        0,
        "no room above replicas + surge"
    );
    assert!(scale(&d, None, &[&big, &big], i32::MAX).len() <= 2);
    assert_eq!(
        DeploySpec::of(&json!({"spec": {"progressDeadlineSeconds": i32::MAX}})).progress_deadline(),
        None,
        "the no-deadline value is read exactly"
    );
}

#[test]
fn int_or_percent_reads_numbers_and_percentages() {
    assert_eq!(IntOrPercent::parse(Some(&json!(3))), Int(3));
    assert_eq!(IntOrPercent::parse(Some(&json!("30%"))), Percent(30));
    assert_eq!(IntOrPercent::parse(Some(&json!("4"))), Int(4));
    assert_eq!(IntOrPercent::parse(None), Int(0));
}

#[test]
fn max_unavailable_is_capped_at_replicas_and_zero_for_recreate() {
    // deployment_util_test.go TestMaxUnavailable.
    assert_eq!(rolling(10, Int(0), Int(20)).max_unavailable(), 10);
    assert_eq!(rolling(10, Int(0), Int(10)).max_unavailable(), 10);
    assert_eq!(rolling(10, Int(0), Int(5)).max_unavailable(), 5);
    assert_eq!(rolling(10, Int(0), Percent(50)).max_unavailable(), 5);
    assert_eq!(rolling(0, Int(0), Int(1)).max_unavailable(), 0);
    let mut recreate = rolling(10, Int(0), Int(5));
    recreate.strategy = Strategy::Recreate;
    assert_eq!(recreate.max_unavailable(), 0);
    assert_eq!(recreate.max_surge(), 0);
}

#[test]
fn defaults_are_read_from_the_spec() {
    let d = DeploySpec::of(&json!({
        "metadata": {"name": "web", "generation": 3},
        "spec": {"replicas": 4, "strategy": {"type": "RollingUpdate",
                 "rollingUpdate": {"maxSurge": "25%", "maxUnavailable": 1}},
                 "revisionHistoryLimit": 2, "progressDeadlineSeconds": 30, "paused": true}
    }));
    assert_eq!(d.replicas, 4);
    assert_eq!(d.max_surge(), 1);
    assert_eq!(d.max_unavailable(), 1);
    assert_eq!(d.revision_history_limit, Some(2));
    assert_eq!(d.progress_deadline(), Some(30));
    assert!(d.paused);
    assert_eq!(d.generation, 3);
    let none = DeploySpec::of(&json!({"spec": {"progressDeadlineSeconds": i32::MAX}}));
    assert_eq!(none.progress_deadline(), None);
    assert_eq!(none.replicas, 1);
}

#[test]
fn reconcile_new_replica_set_table() {
    // rolling_test.go TestDeploymentController_reconcileNewReplicaSet:
    // (replicas, maxSurge, old, new, expected new size or None).
    let cases = [
        (10, 0, 10, 0, None),
        (10, 2, 10, 0, Some(2)),
        (10, 2, 5, 0, Some(7)),
        (10, 2, 10, 2, None),
        (10, 2, 2, 11, Some(10)),
    ];
    for (replicas, surge, old, new, want) in cases {
        let d = rolling(replicas, Int(surge), Int(0));
        let (n, o) = (rs("foo-v2", new, ""), rs("foo-v1", old, ""));
        let got = reconcile_new(&d, &[&n, &o], &n).map(|s| s.replicas);
        assert_eq!(got, want, "{replicas} {surge} {old} {new}");
    }
}

#[test]
fn reconcile_old_replica_sets_table() {
    // rolling_test.go TestDeploymentController_reconcileOldReplicaSets:
    // (replicas, maxUnavailable, old, new, readyOld, readyNew, expected old).
    let cases = [
        (10, 0, 10, 0, 10, 0, Some(9)),
        (10, 2, 10, 0, 10, 0, Some(8)),
        (10, 2, 10, 0, 8, 0, Some(8)),
        (10, 2, 10, 0, 9, 0, Some(8)),
        (10, 2, 8, 2, 8, 0, None),
    ];
    for (replicas, unavailable, old, new, ready_old, ready_new, want) in cases {
        let d = rolling(replicas, Int(0), Int(unavailable));
        let mut n = rs("foo-new", new, "2");
        n.available = ready_new;
        let mut o = rs("foo-old", old, "1");
        o.available = ready_old;
        let got = reconcile_old(&d, &[&o], Some(&n));
        let size = got.iter().find(|s| s.name == "foo-old").map(|s| s.replicas);
        assert_eq!(
            size, want,
            "{replicas} {unavailable} {old} {new} {ready_old}"
        );
    }
}

#[test]
fn cleanup_unhealthy_replicas_table() {
    // rolling_test.go TestDeploymentController_cleanupUnhealthyReplicas:
    // (old, ready, max cleanup, expected cleaned).
    for (old, ready, max, want) in [(10, 8, 1, 1), (10, 8, 3, 2), (10, 8, 0, 0), (10, 10, 3, 0)] {
        let mut o = rs("foo-v2", old, "1");
        o.available = ready;
        let mut olds = vec![o];
        let scales = cleanup_unhealthy(&mut olds, max);
        let cleaned = old - scales.first().map_or(old, |s| s.replicas);
        assert_eq!(cleaned, want, "{old} {ready} {max}");
    }
}

#[test]
fn scale_down_old_for_rolling_update_table() {
    // rolling_test.go TestDeploymentController_scaleDownOldReplicaSetsForRollingUpdate:
    // (replicas, maxUnavailable, ready, old, expected).
    let cases = [
        (10, 0, 10, 10, Some(9)),
        (10, 2, 10, 10, Some(8)),
        (10, 2, 8, 10, None),
        (10, 2, 10, 0, None),
        (10, 2, 1, 10, None),
    ];
    for (replicas, unavailable, ready, old, want) in cases {
        let d = rolling(replicas, Int(0), Int(unavailable));
        let mut o = rs("foo-v2", old, "1");
        o.available = ready;
        let mut olds = vec![o];
        let got = scale_down_old(&d, &mut olds, 0).first().map(|s| s.replicas);
        assert_eq!(got, want, "{replicas} {unavailable} {ready} {old}");
    }
}

fn annotated(mut r: RsView, desired: i32, max: i32) -> RsView {
    r.desired_annotation = Some(desired);
    r.max_annotation = Some(max);
    r
}

#[test]
fn proportional_scaling_table() {
    // sync_test.go TestScale: (name, new replicas, old surge, new surge,
    // newRS, oldRSs newest first, expected new, expected olds).
    const NEW: &str = "2016-05-20T02:00:00Z";
    const OLD: &str = "2016-05-20T01:00:00Z";
    const OLDER: &str = "2016-05-20T00:00:00Z";
    struct Case {
        name: &'static str,
        from: i32,
        to: i32,
        surge: (i32, i32),
        new: Option<i32>,
        old: Vec<i32>,
        want_new: Option<i32>,
        want_old: Vec<i32>,
    }
    let cases = [
        Case {
            name: "10 -> 12",
            from: 10,
            to: 12,
            surge: (0, 0),
            new: Some(10),
            old: vec![],
            want_new: Some(12),
            want_old: vec![],
        },
        Case {
            name: "10 -> 5",
            from: 10,
            to: 5,
            surge: (0, 0),
            new: Some(10),
            old: vec![],
            want_new: Some(5),
            want_old: vec![],
        },
        Case {
            name: "5 -> 10",
            from: 5,
            to: 10,
            surge: (0, 0),
            new: Some(2),
            old: vec![3],
            want_new: Some(4),
            want_old: vec![6],
        },
        Case {
            name: "5 -> 3",
            from: 5,
            to: 3,
            surge: (0, 0),
            new: Some(2),
            old: vec![3],
            want_new: Some(1),
            want_old: vec![2],
        },
        Case {
            name: "9 -> 4",
            from: 9,
            to: 4,
            surge: (0, 0),
            new: Some(8),
            old: vec![1],
            want_new: Some(4),
            want_old: vec![0],
        },
        Case {
            name: "7 -> 10",
            from: 7,
            to: 10,
            surge: (0, 0),
            new: Some(2),
            old: vec![3, 2],
            want_new: Some(3),
            want_old: vec![4, 3],
        },
        Case {
            name: "13 -> 8",
            from: 13,
            to: 8,
            surge: (0, 0),
            new: Some(2),
            old: vec![8, 3],
            want_new: Some(1),
            want_old: vec![5, 2],
        },
        Case {
            name: "leftover 3 -> 4",
            from: 3,
            to: 4,
            surge: (0, 0),
            new: Some(1),
            old: vec![1, 1],
            want_new: Some(2),
            want_old: vec![1, 1],
        },
        Case {
            name: "leftover 3 -> 2",
            from: 3,
            to: 2,
            surge: (0, 0),
            new: Some(1),
            old: vec![1, 1],
            want_new: Some(1),
            want_old: vec![1, 0],
        },
        Case {
            name: "no new rs 4 -> 5",
            from: 4,
            to: 5,
            surge: (0, 0),
            new: None,
            old: vec![2, 2],
            want_new: None,
            want_old: vec![3, 2],
        },
        Case {
            name: "6 -> 0",
            from: 6,
            to: 0,
            surge: (0, 0),
            new: Some(3),
            old: vec![2, 1],
            want_new: Some(0),
            want_old: vec![0, 0],
        },
        Case {
            name: "surge pods",
            from: 10,
            to: 20,
            surge: (2, 2),
            new: Some(6),
            old: vec![6],
            want_new: Some(11),
            want_old: vec![11],
        },
        Case {
            name: "both surge and size",
            from: 10,
            to: 50,
            surge: (3, 6),
            new: Some(5),
            old: vec![8],
            want_new: Some(22),
            want_old: vec![34],
        },
    ];
    for c in cases {
        let before = rolling(c.from, Int(c.surge.0), Int(0));
        let d = rolling(c.to, Int(c.surge.1), Int(0));
        let ann = |r: RsView| annotated(r, c.from, c.from + before.max_surge());
        let new = c.new.map(|n| ann(rs("foo-new", n, NEW)));
        let olds: Vec<RsView> = c
            .old
            .iter()
            .zip([OLD, OLDER])
            .enumerate()
            .map(|(i, (n, t))| ann(rs(&format!("foo-old{i}"), *n, t)))
            .collect();
        let old_refs: Vec<&RsView> = olds.iter().collect();
        let scales = scale(&d, new.as_ref(), &old_refs, 0);
        let size = |r: &RsView| {
            scales
                .iter()
                .find(|s| s.name == r.name)
                .map_or(r.replicas, |s| s.replicas)
        };
        assert_eq!(new.as_ref().map(size), c.want_new, "{}: new", c.name);
        let got: Vec<i32> = olds.iter().map(size).collect();
        assert_eq!(got, c.want_old, "{}: old", c.name);
    }
}

#[test]
fn a_saturated_new_replica_set_scales_old_ones_to_zero_and_a_broken_one_does_not() {
    let d = rolling(2, Int(1), Int(1));
    let mut new = annotated(rs("foo-v2", 2, "2"), 2, 3);
    let old = annotated(rs("foo-v1", 1, "1"), 2, 3);
    // sync_test.go: saturated but broken new replica set does not affect old pods.
    assert!(
        scale(&d, Some(&new), &[&old], 0)
            .iter()
            .all(|s| s.name != "foo-v1" || s.replicas == 1)
    );
    new.available = 2;
    assert_eq!(
        scale(&d, Some(&new), &[&old], 0),
        vec![Scale {
            name: "foo-v1".into(),
            replicas: 0
        }]
    );
}

#[test]
fn scaling_events_are_desired_annotation_mismatches() {
    let d = rolling(5, Int(1), Int(0));
    let a = annotated(rs("a", 3, "1"), 3, 4);
    let idle = annotated(rs("b", 0, "2"), 3, 4);
    assert!(is_scaling_event(&d, &[&a]));
    assert!(
        !is_scaling_event(&d, &[&idle]),
        "inactive ReplicaSets do not count"
    );
    let a5 = annotated(rs("a", 3, "1"), 5, 6);
    assert!(!is_scaling_event(&d, &[&a5]));
}

#[test]
fn cleanup_deployment_table() {
    // sync_test.go TestDeploymentController_cleanupDeployment:
    // (old (spec, status) pairs, limit, expected deletions).
    type Case<'a> = (&'a [(i32, i32)], Option<i32>, usize);
    let cases: [Case; 5] = [
        (&[(0, 0), (0, 0), (0, 0)], Some(1), 2),
        (&[(0, 0), (0, 1), (1, 0), (1, 1)], Some(0), 1),
        (&[(0, 0), (0, 0)], Some(0), 2),
        (&[(1, 1), (1, 1)], Some(0), 0),
        (&[(0, 0), (0, 0), (0, 0)], None, 0),
    ];
    for (olds, limit, want) in cases {
        let views: Vec<RsView> = olds
            .iter()
            .enumerate()
            .map(|(i, (spec, status))| RsView {
                name: format!("foo-{i}"),
                replicas: *spec,
                status_replicas: *status,
                revision: i64::try_from(i).unwrap_or(0) + 1,
                ..RsView::default()
            })
            .collect();
        let mut d = rolling(1, Int(0), Int(1));
        d.revision_history_limit = limit;
        let refs: Vec<&RsView> = views.iter().collect();
        assert_eq!(
            history_to_delete(&d, &refs).len(),
            want,
            "{olds:?} {limit:?}"
        );
    }
    let mut deleting = RsView {
        name: "gone".into(),
        replicas: 0,
        ..RsView::default()
    };
    deleting.deleting = true;
    let mut d = rolling(1, Int(0), Int(1));
    d.revision_history_limit = Some(0);
    assert!(history_to_delete(&d, &[&deleting]).is_empty());
}

#[test]
fn history_cleanup_deletes_the_lowest_revisions() {
    let views: Vec<RsView> = [5, 2, 9]
        .iter()
        .map(|r| RsView {
            name: format!("r{r}"),
            revision: *r,
            ..RsView::default()
        })
        .map(|mut v| {
            v.replicas = 0;
            v
        })
        .collect();
    let mut d = rolling(1, Int(0), Int(1));
    d.revision_history_limit = Some(1);
    let refs: Vec<&RsView> = views.iter().collect();
    assert_eq!(history_to_delete(&d, &refs), vec!["r2", "r5"]);
    assert_eq!(next_revision(&refs), 10);
}

#[test]
fn active_or_latest_picks_the_only_active_or_the_newest() {
    let a = rs("a", 0, "1");
    let b = rs("b", 0, "2");
    assert_eq!(
        active_or_latest(None, &[&a, &b]).map(|r| r.name.as_str()),
        Some("b")
    );
    let c = rs("c", 3, "0");
    assert_eq!(
        active_or_latest(Some(&a), &[&c, &b]).map(|r| r.name.as_str()),
        Some("c")
    );
    let d = rs("d", 1, "3");
    assert!(active_or_latest(Some(&d), &[&c]).is_none());
}

/// One step of a simulated rollout: the controller's rolling-update
/// decisions (`reconcile_new` then `reconcile_old`, as `rolloutRolling`),
/// then Pods catch up: every ReplicaSet's Pods match its size, and up to
/// `ready_now` of the new ReplicaSet's unavailable Pods become available.
fn step(d: &DeploySpec, new: &mut RsView, old: &mut RsView, ready_now: i32) {
    let all = [&*new, &*old];
    if let Some(s) = reconcile_new(d, &all, new) {
        new.replicas = s.replicas;
    } else {
        for s in reconcile_old(d, &active([&*old]), Some(new)) {
            old.replicas = s.replicas;
        }
    }
    // Old Pods go away at once (deleting an available Pod); new Pods
    // become available gradually.
    old.available = old.available.min(old.replicas);
    new.available = (new.available + ready_now).min(new.replicas);
}

proptest! {
    /// During a rolling update, the Pods asked for never exceed
    /// replicas + maxSurge, available Pods never drop below
    /// replicas - maxUnavailable, and the rollout finishes.
    #[test]
    fn rolling_updates_respect_surge_and_unavailability(
        replicas in 1i32..30,
        surge in 0i32..120,
        unavailable in 0i32..120,
        percent in proptest::bool::ANY,
        readiness in proptest::collection::vec(0i32..4, 1..200),
    ) {
        let (s, u) = if percent { (Percent(surge), Percent(unavailable)) } else { (Int(surge % 10), Int(unavailable % 10)) };
        let d = rolling(replicas, s, u);
        let mut old = annotated(rs("old", replicas, "1"), replicas, replicas + d.max_surge());
        old.available = replicas;
        let mut new = rs("new", 0, "2");
        let ceiling = replicas + d.max_surge();
        let floor = replicas - d.max_unavailable();
        let mut i = 0;
        while !(new.replicas == replicas && new.available == replicas && old.replicas == 0) {
            let ready = readiness.get(i % readiness.len()).copied().unwrap_or(1).max(if i > 400 { 1 } else { 0 });
            step(&d, &mut new, &mut old, ready);
            prop_assert!(new.replicas + old.replicas <= ceiling,
                "asked for {} Pods, ceiling {}", new.replicas + old.replicas, ceiling);
            prop_assert!(new.available + old.available >= floor,
                "{} available, floor {}", new.available + old.available, floor);
            i += 1;
            prop_assert!(i < 2000, "the rollout never finished: {new:?} {old:?}");
        }
    }

    /// Proportional scaling of a settled Deployment (its ReplicaSets add up
    /// to replicas + maxSurge) keeps the active ReplicaSets' total at the
    /// new replicas + maxSurge (or zero), never making a size negative.
    #[test]
    fn proportional_scaling_hits_the_allowed_total(
        to in 0i32..40,
        sizes in proptest::collection::vec(1i32..15, 2..5),
        surge in 0i32..5,
    ) {
        let from = sizes.iter().sum::<i32>() - surge;
        proptest::prop_assume!(from >= 1);
        let before = rolling(from, Int(surge), Int(0));
        let d = rolling(to, Int(surge), Int(0));
        let views: Vec<RsView> = sizes.iter().enumerate()
            .map(|(i, n)| annotated(rs(&format!("r{i}"), *n, &format!("{i:02}")), from, from + before.max_surge()))
            .collect();
        let Some((new, old)) = views.split_last() else { return Ok(()) };
        let old: Vec<&RsView> = old.iter().collect();
        let scales = scale(&d, Some(new), &old, 0);
        let total: i32 = views.iter().map(|r| scales.iter().find(|s| s.name == r.name).map_or(r.replicas, |s| s.replicas)).sum();
        prop_assert!(scales.iter().all(|s| s.replicas >= 0));
        let allowed = if to > 0 { to + d.max_surge() } else { 0 };
        prop_assert_eq!(total, allowed);
    }
}
