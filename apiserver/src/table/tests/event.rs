//! Event (core/v1 and events.k8s.io/v1): `TestPrintEvent`.

use serde_json::{Value, json};
use time::Duration;

use super::{ago, check};

fn event(extra: Value) -> Value {
    let mut e = json!({
        "metadata": {"name": "event2"},
        "source": {"component": "kubelet", "host": "Node1"},
        "involvedObject": {"kind": "Deployment", "name": "Deployment Name", "fieldPath": "spec.containers{foo}"},
        "reason": "Event Reason",
        "message": "Message Data",
        "type": "Warning",
    });
    if let (Some(e), Some(extra)) = (e.as_object_mut(), extra.as_object()) {
        e.extend(extra.clone());
    }
    e
}

#[test]
fn events() {
    let d = |n: i64| ago(Duration::days(n));
    let micro = |n: i64| format!("{}.000000Z", &ago(Duration::days(n))[..19]);
    let expect = |last: &str, first: &str, count: i64| {
        json!([
            last,
            "Warning",
            "Event Reason",
            "deployment/Deployment Name",
            "spec.containers{foo}",
            "kubelet, Node1",
            "Message Data",
            first,
            count,
            "event2"
        ])
    };
    check(
        "",
        "Event",
        event(json!({"firstTimestamp": d(3), "lastTimestamp": d(2), "count": 6})),
        expect("2d", "3d", 6),
    );
    // Without firstTimestamp: eventTime.
    check(
        "",
        "Event",
        event(json!({"eventTime": micro(3), "lastTimestamp": d(3), "count": 1})),
        expect("3d", "3d", 1),
    );
    // Without lastTimestamp: first seen.
    check(
        "",
        "Event",
        event(json!({"eventTime": micro(3), "firstTimestamp": d(3), "count": 1})),
        expect("3d", "3d", 1),
    );
    check(
        "",
        "Event",
        event(json!({"eventTime": micro(3), "count": 1})),
        expect("3d", "3d", 1),
    );
    // A series: last observed time and series count.
    check(
        "",
        "Event",
        event(json!({"eventTime": micro(3), "series": {"count": 2, "lastObservedTime": micro(2)}})),
        expect("2d", "3d", 2),
    );
    // A singleton event of the new API has no count: printed as 1.
    check(
        "",
        "Event",
        event(json!({"eventTime": micro(3)})),
        expect("3d", "3d", 1),
    );
    // Empty source: reporting controller and instance.
    let mut e = event(
        json!({"reportingController": "kubelet", "reportingInstance": "test",
                             "firstTimestamp": d(3), "lastTimestamp": d(2), "count": 6}),
    );
    e["source"] = json!({});
    check(
        "",
        "Event",
        e,
        json!([
            "2d",
            "Warning",
            "Event Reason",
            "deployment/Deployment Name",
            "spec.containers{foo}",
            "kubelet, test",
            "Message Data",
            "3d",
            6,
            "event2"
        ]),
    );
    // Basic pod event, no host, message trimmed, kind lower-cased.
    let pod_event = json!({
        "metadata": {"name": "event1"}, "source": {"component": "kubelet"},
        "involvedObject": {"kind": "Pod", "name": "Pod Name", "fieldPath": "spec.containers{foo}"},
        "reason": "Event Reason", "message": "  Message Data\n", "type": "Normal",
        "firstTimestamp": d(3), "lastTimestamp": d(2), "count": 6,
    });
    check(
        "",
        "Event",
        pod_event,
        json!([
            "2d",
            "Normal",
            "Event Reason",
            "pod/Pod Name",
            "spec.containers{foo}",
            "kubelet",
            "Message Data"
        ]),
    );
    // Involved object without a name.
    check(
        "",
        "Event",
        event(json!({"involvedObject": {"kind": "Node"}})),
        json!(["<unknown>", "Warning", "Event Reason", "node", ""]),
    );
}

#[test]
fn events_k8s_io_events() {
    let e = json!({
        "metadata": {"name": "ev"},
        "eventTime": format!("{}.000000Z", &ago(Duration::minutes(7))[..19]),
        "series": {"count": 4, "lastObservedTime": format!("{}.000000Z", &ago(Duration::minutes(1))[..19])},
        "reportingController": "default-scheduler", "reportingInstance": "sched-1",
        "regarding": {"kind": "Pod", "name": "web-0"},
        "reason": "Scheduled", "note": "Successfully assigned", "type": "Normal",
    });
    check(
        "events.k8s.io",
        "Event",
        e,
        json!([
            "60s",
            "Normal",
            "Scheduled",
            "pod/web-0",
            "",
            "default-scheduler, sched-1",
            "Successfully assigned",
            "7m",
            4,
            "ev"
        ]),
    );
    let deprecated = json!({
        "metadata": {"name": "old"}, "regarding": {"kind": "Node", "name": "n1"},
        "deprecatedSource": {"component": "kubelet", "host": "n1"},
        "deprecatedFirstTimestamp": ago(Duration::hours(2)), "deprecatedLastTimestamp": ago(Duration::hours(1)),
        "deprecatedCount": 3, "note": "x", "type": "Normal", "reason": "R",
    });
    check(
        "events.k8s.io",
        "Event",
        deprecated,
        json!([
            "60m",
            "Normal",
            "R",
            "node/n1",
            "",
            "kubelet, n1",
            "x",
            "120m",
            3
        ]),
    );
}
