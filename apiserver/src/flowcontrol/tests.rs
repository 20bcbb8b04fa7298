//! [`FlowControl`] over compiled configurations: classification to
//! levels, nominal seats, and rejection at a tiny level.

use std::sync::Arc;
use std::time::Duration;

use axum::http::Method;
use serde_json::{Value, json};

use super::*;
use crate::metrics::flowcontrol::RejectReason;

fn user(name: &str, groups: &[&str]) -> UserInfo {
    UserInfo {
        name: name.into(),
        groups: groups.iter().map(|g| (*g).to_string()).collect(),
        ..UserInfo::default()
    }
}

fn stored(mut objs: Vec<Value>) -> Vec<Arc<Value>> {
    for (i, o) in objs.iter_mut().enumerate() {
        o["metadata"]["uid"] = json!(format!(
            "uid-{}-{i}",
            o["metadata"]["name"].as_str().unwrap_or("")
        ));
    }
    objs.into_iter().map(Arc::new).collect()
}

/// The defaults plus a level `tiny` (1 share, 1 queue of length 1) and a
/// schema sending `flooder` to it.
fn with_tiny() -> FlowControl {
    let fc = FlowControl::new(Arc::new(Metrics::new()));
    let mut levels: Vec<Value> = defaults::all("prioritylevelconfigurations")
        .into_iter()
        .map(|(o, _)| o)
        .collect();
    levels.push(json!({"metadata": {"name": "tiny"}, "spec": {"type": "Limited", "limited": {
        "nominalConcurrencyShares": 1, "lendablePercent": 0, "borrowingLimitPercent": 0,
        "limitResponse": {"type": "Queue", "queuing": {"queues": 1, "handSize": 1, "queueLengthLimit": 1}}}}}));
    let mut schemas: Vec<Value> = defaults::all("flowschemas")
        .into_iter()
        .map(|(o, _)| o)
        .collect();
    schemas.push(json!({"metadata": {"name": "flood"}, "spec": {
        "priorityLevelConfiguration": {"name": "tiny"}, "matchingPrecedence": 50,
        "distinguisherMethod": {"type": "ByUser"},
        "rules": [{"subjects": [{"kind": "User", "user": {"name": "flooder"}}],
                   "resourceRules": [{"verbs": ["*"], "apiGroups": ["*"], "resources": ["*"], "namespaces": ["*"], "clusterScope": true}]}]}}));
    fc.configure(&stored(schemas), &stored(levels));
    fc
}

#[tokio::test(start_paused = true)]
async fn a_flood_at_a_tiny_level_is_rejected_and_others_are_not() {
    let fc = with_tiny();
    let t = Target::parse(&Method::POST, "/api/v1/namespaces/a/configmaps", None);
    let flooder = user("flooder", &["system:authenticated"]);
    // 600 seats × 1 / 246 shares: 3 seats, then one waits, then 429s.
    let mut seats = Vec::new();
    for _ in 0..3 {
        let d = fc.begin(&t, &flooder).expect("classified");
        assert!(
            d.flow_schema_uid
                .as_ref()
                .is_some_and(|u| u.to_str().is_ok_and(|u| u.starts_with("uid-flood")))
        );
        seats.push(d.admit(QUEUE_WAIT).await.expect("runs"));
    }
    let waiting = fc.begin(&t, &flooder).expect("classified");
    let rejected = fc.begin(&t, &flooder).expect("classified");
    assert_eq!(
        rejected.admit(QUEUE_WAIT).await.err(),
        Some(RejectReason::QueueFull)
    );
    assert_eq!(fc.load("tiny"), Some((3, 1)));
    // Another user is untouched; system:masters is exempt.
    let polite = user("polite", &["system:authenticated"]);
    let d = fc.begin(&t, &polite).expect("classified");
    assert!(d.admit(Duration::ZERO).await.is_ok());
    let admin = user("admin", &["system:masters"]);
    let d = fc.begin(&t, &admin).expect("classified");
    assert!(
        d.flow_schema_uid
            .as_ref()
            .is_some_and(|u| u.to_str().is_ok_and(|u| u.starts_with("uid-exempt")))
    );
    // The waiter times out after the queue wait.
    assert_eq!(
        waiting.admit(Duration::from_secs(1)).await.err(),
        Some(RejectReason::TimeOut)
    );
    drop(seats);
    assert_eq!(fc.load("tiny"), Some((0, 0)));
    let rendered = fc.metrics.render();
    assert!(rendered.contains(
        "apiserver_flowcontrol_rejected_requests_total{flow_schema=\"flood\",priority_level=\"tiny\",reason=\"queue-full\"} 1"
    ), "{rendered}");
    assert!(
        rendered.contains("apiserver_flowcontrol_nominal_limit_seats{priority_level=\"tiny\"} 3")
    );
}

#[test]
fn defaults_are_in_effect_before_anything_is_stored() {
    let fc = FlowControl::new(Arc::new(Metrics::new()));
    let t = Target::parse(&Method::GET, "/api/v1/pods", None);
    let d = fc
        .begin(&t, &user("u", &["system:authenticated"]))
        .expect("global-default");
    assert!(
        d.flow_schema_uid.is_none(),
        "built-in stand-ins have no uid"
    );
    assert!(fc.load("global-default").is_some());
    fc.set_enabled(false);
    assert!(fc.begin(&t, &user("u", &[])).is_none());
}

#[test]
fn the_total_sets_nominal_seats() {
    let fc = FlowControl::new(Arc::new(Metrics::new()));
    fc.set_total(1200);
    let rendered = fc.metrics.render();
    assert!(
        rendered.contains(
            "apiserver_flowcontrol_nominal_limit_seats{priority_level=\"global-default\"} 98"
        ),
        "{rendered}"
    );
}
