//! Conditions and status as upstream's `progress_test.go` and
//! `deployment_util_test.go` check them.

use serde_json::json;

use super::super::plan::{DeploySpec, IntOrPercent, RsView, Strategy};
use super::*;

fn d(replicas: i32, deadline: Option<i32>) -> DeploySpec {
    DeploySpec {
        name: "web".into(),
        replicas,
        strategy: Strategy::RollingUpdate {
            max_surge: IntOrPercent::Percent(25),
            max_unavailable: IntOrPercent::Percent(25),
        },
        min_ready_seconds: 0,
        revision_history_limit: Some(10),
        progress_deadline_seconds: deadline,
        paused: false,
        generation: 2,
    }
}

fn rs(name: &str, replicas: i32, available: i32) -> RsView {
    RsView {
        name: name.into(),
        replicas,
        status_replicas: replicas,
        ready: available,
        available,
        ..RsView::default()
    }
}

fn at(s: &str) -> OffsetDateTime {
    OffsetDateTime::parse(s, &time::format_description::well_known::Rfc3339)
        .unwrap_or(OffsetDateTime::UNIX_EPOCH)
}

const T0: &str = "2026-01-01T00:00:00Z";

#[test]
fn status_counts_come_from_the_replica_sets() {
    let new = rs("web-new", 3, 1);
    let old = rs("web-old", 2, 2);
    let s = calculate(
        &d(4, Some(600)),
        &[&new, &old],
        Some(&new),
        &Status::default(),
        T0,
    );
    assert_eq!(
        (
            s.observed_generation,
            s.replicas,
            s.updated,
            s.ready,
            s.available,
            s.unavailable
        ),
        (2, 5, 3, 3, 3, 2)
    );
    // 3 available >= 4 - 1 (25% of 4 rounded down).
    let a = s.condition(AVAILABLE).cloned().unwrap_or_default();
    assert_eq!(
        (a.status.as_str(), a.reason.as_str()),
        ("True", "MinimumReplicasAvailable")
    );
    assert_eq!(a.message, "Deployment has minimum availability.");
    let low = rs("web-new", 4, 2);
    let s = calculate(
        &d(4, Some(600)),
        &[&low],
        Some(&low),
        &Status::default(),
        T0,
    );
    let a = s.condition(AVAILABLE).cloned().unwrap_or_default();
    assert_eq!(
        (a.status.as_str(), a.reason.as_str()),
        ("False", "MinimumReplicasUnavailable")
    );
    assert_eq!(a.message, "Deployment does not have minimum availability.");
}

#[test]
fn set_condition_keeps_transition_time_and_moves_to_the_end() {
    let mut s = Status::default();
    s.set_condition(Condition::new(
        PROGRESSING,
        "True",
        NEW_RS_CREATED,
        "a".into(),
        T0,
    ));
    s.set_condition(Condition::new(
        AVAILABLE,
        "True",
        "MinimumReplicasAvailable",
        "b".into(),
        T0,
    ));
    s.set_condition(Condition::new(
        PROGRESSING,
        "True",
        NEW_RS_AVAILABLE,
        "c".into(),
        "2026-01-01T00:01:00Z",
    ));
    let types: Vec<&str> = s.conditions.iter().map(|c| c.type_.as_str()).collect();
    assert_eq!(types, ["Available", "Progressing"]);
    let p = s.condition(PROGRESSING).cloned().unwrap_or_default();
    assert_eq!(
        p.last_transition, T0,
        "same status keeps the transition time"
    );
    assert_eq!(p.last_update, "2026-01-01T00:01:00Z");
    // Same status and reason: nothing changes.
    let before = s.clone();
    s.set_condition(Condition::new(
        PROGRESSING,
        "True",
        NEW_RS_AVAILABLE,
        "other".into(),
        "2026-01-02T00:00:00Z",
    ));
    assert_eq!(s, before);
}

#[test]
fn a_finished_rollout_reports_new_replica_set_available() {
    let new = rs("web-5d4f", 3, 3);
    let mut stored = Status::default();
    stored.set_condition(Condition::new(
        PROGRESSING,
        "True",
        NEW_RS_CREATED,
        "Created new replica set \"web-5d4f\"".into(),
        T0,
    ));
    let s = rollout(
        &d(3, Some(600)),
        &[&new],
        Some(&new),
        &stored,
        at("2026-01-01T00:00:05Z"),
    );
    let p = s.condition(PROGRESSING).cloned().unwrap_or_default();
    assert_eq!(p.reason, NEW_RS_AVAILABLE);
    assert_eq!(
        p.message,
        "ReplicaSet \"web-5d4f\" has successfully progressed."
    );
    assert_eq!(p.last_transition, T0);
    assert_eq!(
        s.conditions
            .iter()
            .map(|c| c.type_.as_str())
            .collect::<Vec<_>>(),
        ["Available", "Progressing"]
    );
    assert!(is_complete(&d(3, Some(600)), &s));
    assert_eq!(recheck_after(&d(3, Some(600)), &stored, &s, at(T0)), None);
}

#[test]
fn progress_refreshes_the_update_time_and_keeps_the_transition_time() {
    let new = rs("web-5d4f", 3, 1);
    let mut stored = Status::default();
    stored.set_condition(Condition::new(
        PROGRESSING,
        "True",
        NEW_RS_CREATED,
        "x".into(),
        T0,
    ));
    let later = at("2026-01-01T00:00:30Z");
    let s = rollout(&d(3, Some(600)), &[&new], Some(&new), &stored, later);
    let p = s.condition(PROGRESSING).cloned().unwrap_or_default();
    assert_eq!(p.reason, RS_UPDATED);
    assert_eq!(p.message, "ReplicaSet \"web-5d4f\" is progressing.");
    assert_eq!(p.last_transition, T0);
    assert_eq!(p.last_update, "2026-01-01T00:00:30Z");
}

#[test]
fn no_progress_past_the_deadline_times_out() {
    let new = rs("web-5d4f", 3, 0);
    let mut stored = Status {
        observed_generation: 2,
        replicas: 3,
        updated: 3,
        ..Status::default()
    };
    stored.set_condition(Condition::new(
        PROGRESSING,
        "True",
        RS_UPDATED,
        "x".into(),
        T0,
    ));
    let spec = d(3, Some(10));
    // Before the deadline: unchanged, and a recheck is due when it passes.
    let s = rollout(
        &spec,
        &[&new],
        Some(&new),
        &stored,
        at("2026-01-01T00:00:04Z"),
    );
    assert_eq!(
        s.condition(PROGRESSING).map(|c| c.reason.as_str()),
        Some(RS_UPDATED)
    );
    assert_eq!(
        recheck_after(&spec, &stored, &s, at("2026-01-01T00:00:04Z")),
        Some(std::time::Duration::from_secs(6))
    );
    let s = rollout(
        &spec,
        &[&new],
        Some(&new),
        &stored,
        at("2026-01-01T00:00:11Z"),
    );
    let p = s.condition(PROGRESSING).cloned().unwrap_or_default();
    assert_eq!((p.status.as_str(), p.reason.as_str()), ("False", TIMED_OUT));
    assert_eq!(
        p.message,
        "ReplicaSet \"web-5d4f\" has timed out progressing."
    );
    assert!(is_timed_out(&spec, &s, at("2026-01-01T00:00:11Z")));
}

#[test]
fn without_a_deadline_there_is_no_progressing_condition() {
    let new = rs("web-5d4f", 1, 1);
    let mut stored = Status::default();
    stored.set_condition(Condition::new(
        PROGRESSING,
        "True",
        NEW_RS_CREATED,
        "x".into(),
        T0,
    ));
    let s = rollout(&d(1, Some(i32::MAX)), &[&new], Some(&new), &stored, at(T0));
    assert!(s.condition(PROGRESSING).is_none());
    assert!(s.condition(AVAILABLE).is_some());
}

#[test]
fn progressing_compares_with_the_previous_status() {
    // deployment_util_test.go TestDeploymentProgressing.
    let st = |replicas, updated, ready, available| Status {
        replicas,
        updated,
        ready,
        available,
        ..Status::default()
    };
    assert!(
        is_progressing(&st(10, 2, 2, 2), &st(10, 3, 2, 2)),
        "more updated"
    );
    assert!(
        is_progressing(&st(12, 4, 4, 4), &st(11, 4, 4, 4)),
        "fewer old"
    );
    assert!(
        is_progressing(&st(10, 5, 5, 5), &st(10, 5, 6, 5)),
        "more ready"
    );
    assert!(
        is_progressing(&st(10, 5, 5, 5), &st(10, 5, 5, 6)),
        "more available"
    );
    assert!(!is_progressing(&st(10, 5, 5, 5), &st(10, 5, 5, 5)));
    assert!(
        !is_progressing(&st(10, 5, 5, 5), &st(10, 5, 4, 4)),
        "fewer ready"
    );
}

#[test]
fn complete_needs_every_count_and_the_generation() {
    // deployment_util_test.go TestDeploymentComplete.
    let spec = d(5, Some(600));
    let st = |updated, replicas, available, og| Status {
        updated,
        replicas,
        available,
        observed_generation: og,
        ..Status::default()
    };
    assert!(is_complete(&spec, &st(5, 5, 5, 2)));
    assert!(!is_complete(&spec, &st(5, 5, 5, 1)), "not observed");
    assert!(!is_complete(&spec, &st(5, 6, 5, 2)), "old pods left");
    assert!(!is_complete(&spec, &st(5, 5, 4, 2)), "not available");
    assert!(!is_complete(&spec, &st(4, 5, 5, 2)), "not updated");
}

#[test]
fn pausing_and_resuming_set_unknown_progress() {
    let mut spec = d(1, Some(600));
    spec.paused = true;
    let c = paused_condition(&spec, &Status::default(), T0).unwrap_or_default();
    assert_eq!(
        (c.status.as_str(), c.reason.as_str(), c.message.as_str()),
        ("Unknown", PAUSED, "Deployment is paused")
    );
    let mut s = Status::default();
    s.set_condition(c);
    assert!(paused_condition(&spec, &s, T0).is_none());
    spec.paused = false;
    let c = paused_condition(&spec, &s, T0).unwrap_or_default();
    assert_eq!(
        (c.reason.as_str(), c.message.as_str()),
        (RESUMED, "Deployment is resumed")
    );
}

#[test]
fn replica_failures_prefer_the_new_replica_set() {
    let failed = json!({"status": {"conditions": [{"type": "ReplicaFailure", "status": "True",
        "reason": "FailedCreate", "message": "quota", "lastTransitionTime": T0}]}});
    let fine = json!({"status": {}});
    let c = replica_failure(&[&fine, &failed]).unwrap_or_default();
    assert_eq!(
        (c.type_.as_str(), c.reason.as_str(), c.message.as_str()),
        (REPLICA_FAILURE, "FailedCreate", "quota")
    );
    assert!(replica_failure(&[&fine]).is_none());
}

#[test]
fn status_round_trips_through_json() {
    let mut s = Status {
        observed_generation: 3,
        replicas: 2,
        updated: 2,
        ready: 1,
        available: 1,
        unavailable: 1,
        collision_count: Some(1),
        conditions: vec![],
    };
    s.set_condition(Condition::new(
        AVAILABLE,
        "True",
        "MinimumReplicasAvailable",
        "m".into(),
        T0,
    ));
    let obj = json!({"status": s.to_json()});
    assert_eq!(Status::of(&obj), s);
    assert_eq!(Status::default().to_json(), json!({}));
}
