//! Pod: `TestPrintPod`, `TestPrintPodWithRestartableInitContainer`,
//! `TestPrintPodwide`, `TestPrintPodConditions`,
//! `TestPrintNonTerminatedPod`, plus status reasons upstream's tests skip.

use serde_json::{Value, json};
use time::Duration;

use super::{ago, check, now};
use crate::table::printer;

fn pod(name: &str, containers: usize, status: Value) -> Value {
    json!({"metadata": {"name": name}, "spec": {"containers": vec![json!({}); containers]}, "status": status})
}

fn with_inits(mut pod: Value, inits: Value) -> Value {
    pod["spec"]["initContainers"] = inits;
    pod
}

fn running(ready: bool, restarts: i64) -> Value {
    json!({"ready": ready, "restartCount": restarts, "state": {"running": {}}})
}

fn restarted(mut status: Value, d: Duration) -> Value {
    status["lastState"] = json!({"terminated": {"finishedAt": ago(d)}});
    status
}

fn check_pod(pod: Value, expected: Value) {
    check("", "Pod", pod, expected);
}

fn secs(n: i64) -> Duration {
    Duration::seconds(n)
}

fn days(n: i64) -> Duration {
    Duration::days(n)
}

#[test]
fn container_states_and_restarts() {
    // test1: name, container counts, restarts, ready status.
    check_pod(
        pod(
            "test1",
            2,
            json!({"phase": "podPhase", "containerStatuses": [running(true, 3), {"restartCount": 3}]}),
        ),
        json!(["test1", "1/2", "podPhase", "6", "<unknown>"]),
    );
    // test2: a waiting container's reason overrides the phase.
    check_pod(
        pod(
            "test2",
            2,
            json!({"phase": "podPhase", "containerStatuses": [
            running(true, 3),
            {"restartCount": 3, "state": {"waiting": {"reason": "ContainerWaitingReason"}}}]}),
        ),
        json!(["test2", "1/2", "ContainerWaitingReason", "6", "<unknown>"]),
    );
    // test3: containers are scanned last to first; the first one wins.
    check_pod(
        pod(
            "test3",
            2,
            json!({"phase": "podPhase", "containerStatuses": [
            {"restartCount": 3, "state": {"waiting": {"reason": "ContainerWaitingReason"}}},
            {"restartCount": 3, "state": {"terminated": {"reason": "ContainerTerminatedReason"}}}]}),
        ),
        json!(["test3", "0/2", "ContainerWaitingReason", "6", "<unknown>"]),
    );
    // test4: ready is not enough for reporting running.
    check_pod(
        pod(
            "test4",
            2,
            json!({"phase": "podPhase", "containerStatuses": [
            running(true, 3), {"ready": true, "restartCount": 3}]}),
        ),
        json!(["test4", "1/2", "podPhase", "6", "<unknown>"]),
    );
    // test5: status.reason wins over the phase.
    check_pod(
        pod(
            "test5",
            2,
            json!({"reason": "podReason", "phase": "podPhase", "containerStatuses": [
            running(true, 3), {"ready": true, "restartCount": 3}]}),
        ),
        json!(["test5", "1/2", "podReason", "6", "<unknown>"]),
    );
}

#[test]
fn completed_container_next_to_a_running_one() {
    let statuses = json!([
        {"ready": true, "restartCount": 3, "state": {"terminated": {"reason": "Completed", "exitCode": 0}}},
        running(true, 3),
    ]);
    // Without a Ready condition: NotReady.
    check_pod(
        pod(
            "test6",
            2,
            json!({"phase": "Running", "reason": "", "containerStatuses": statuses}),
        ),
        json!(["test6", "1/2", "NotReady", "6", "<unknown>"]),
    );
    // With one: Running.
    check_pod(
        pod(
            "test6",
            2,
            json!({"phase": "Running", "containerStatuses": statuses,
            "conditions": [{"type": "Ready", "status": "True"}]}),
        ),
        json!(["test6", "1/2", "Running", "6", "<unknown>"]),
    );
}

#[test]
fn init_containers() {
    let one_init_one_main = |name: &str, inits: usize, status: Value| {
        let mut p = pod(name, 1, status);
        p["spec"]["initContainers"] = json!(vec![json!({}); inits]);
        p
    };
    let waiting = json!({"ready": false, "state": {"waiting": {}}});
    // test7: one init container restarting.
    check_pod(
        one_init_one_main(
            "test7",
            1,
            json!({"phase": "podPhase",
            "initContainerStatuses": [restarted(running(false, 3), secs(10))],
            "containerStatuses": [waiting]}),
        ),
        json!(["test7", "0/1", "Init:0/1", "3 (10s ago)", "<unknown>"]),
    );
    // test8: two init containers, the first restarting.
    check_pod(
        one_init_one_main(
            "test8",
            2,
            json!({"phase": "podPhase",
            "initContainerStatuses": [restarted(running(false, 3), secs(10)), waiting],
            "containerStatuses": [waiting]}),
        ),
        json!(["test8", "0/1", "Init:0/2", "3 (10s ago)", "<unknown>"]),
    );
    // test9: the first completed, the second restarting.
    check_pod(
        one_init_one_main(
            "test9",
            2,
            json!({"phase": "podPhase",
            "initContainerStatuses": [{"ready": false, "state": {"terminated": {}}},
                                      restarted(running(false, 3), secs(10))],
            "containerStatuses": [waiting]}),
        ),
        json!(["test9", "0/1", "Init:1/2", "3 (10s ago)", "<unknown>"]),
    );
    // test10: restarts of a completed init container count while initializing.
    check_pod(
        one_init_one_main(
            "test10",
            2,
            json!({"phase": "podPhase",
            "initContainerStatuses": [
                restarted(json!({"restartCount": 2, "state": {"terminated": {}}}), Duration::minutes(2)),
                restarted(running(false, 3), secs(10))],
            "containerStatuses": [waiting]}),
        ),
        json!(["test10", "0/1", "Init:1/2", "5 (10s ago)", "<unknown>"]),
    );
    // test11: once initialized only the containers' restarts count.
    check_pod(
        one_init_one_main(
            "test11",
            1,
            json!({"phase": "Running",
            "initContainerStatuses": [
                restarted(json!({"restartCount": 2, "state": {"terminated": {}}}), Duration::minutes(2))],
            "containerStatuses": [restarted(running(false, 4), secs(20))]}),
        ),
        json!(["test11", "0/1", "Running", "4 (20s ago)", "<unknown>"]),
    );
}

#[test]
fn restart_ages() {
    // test12..test14: the latest restart across containers.
    check_pod(
        pod(
            "test12",
            1,
            json!({"phase": "Running", "containerStatuses": [restarted(running(true, 3), days(5))]}),
        ),
        json!(["test12", "1/1", "Running", "3 (5d ago)", "<unknown>"]),
    );
    check_pod(
        pod(
            "test13",
            2,
            json!({"phase": "Running", "containerStatuses": [
            running(true, 0), restarted(running(true, 3), days(10))]}),
        ),
        json!(["test13", "2/2", "Running", "3 (10d ago)", "<unknown>"]),
    );
    check_pod(
        pod(
            "test14",
            2,
            json!({"phase": "Running", "containerStatuses": [
            restarted(running(true, 6), days(5)), restarted(running(true, 3), days(20))]}),
        ),
        json!(["test14", "2/2", "Running", "9 (5d ago)", "<unknown>"]),
    );
}

#[test]
fn gated_finished_and_terminating() {
    // test15: SchedulingGated.
    check_pod(
        pod(
            "test15",
            2,
            json!({"phase": "podPhase", "conditions": [
            {"type": "PodScheduled", "status": "False", "reason": "SchedulingGated"}]}),
        ),
        json!(["test15", "0/2", "SchedulingGated", "0", "<unknown>"]),
    );
    let completed = json!([{"ready": false, "restartCount": 0,
        "state": {"terminated": {"reason": "Completed", "exitCode": 0}}}]);
    // test16 / test17: succeeded and failed pods.
    check_pod(
        pod(
            "test16",
            1,
            json!({"phase": "Succeeded", "containerStatuses": completed}),
        ),
        json!(["test16", "0/1", "Completed", "0", "<unknown>"]),
    );
    check_pod(
        pod(
            "test17",
            1,
            json!({"phase": "Failed", "containerStatuses": [{"ready": false,
            "state": {"terminated": {"reason": "Error", "exitCode": 1}}}]}),
        ),
        json!(["test17", "0/1", "Error", "0", "<unknown>"]),
    );
    let deleting = |mut p: Value| {
        p["metadata"]["deletionTimestamp"] = json!(ago(secs(10)));
        p
    };
    // test18: a finished pod being deleted keeps its status.
    check_pod(
        deleting(pod(
            "test18",
            1,
            json!({"phase": "Succeeded", "containerStatuses": completed}),
        )),
        json!(["test18", "0/1", "Completed", "0", "<unknown>"]),
    );
    // test19 / test20: running or pending pods being deleted are Terminating.
    check_pod(
        deleting(pod(
            "test19",
            1,
            json!({"phase": "Running", "containerStatuses": [running(false, 0)]}),
        )),
        json!(["test19", "0/1", "Terminating", "0", "<unknown>"]),
    );
    check_pod(
        deleting(pod("test20", 1, json!({"phase": "Pending"}))),
        json!(["test20", "0/1", "Terminating", "0", "<unknown>"]),
    );
    // A deleted pod on a lost node is Unknown.
    check_pod(
        deleting(pod(
            "lost",
            1,
            json!({"phase": "Running", "reason": "NodeLost"}),
        )),
        json!(["lost", "0/1", "Unknown", "0", "<unknown>"]),
    );
}

fn sidecars(name: &str, phase: &str, inits: Value, mains: Value, initialized: bool) -> Value {
    let p = pod(
        name,
        1,
        json!({
            "phase": phase,
            "initContainerStatuses": inits,
            "containerStatuses": mains,
            "conditions": [{"type": "Initialized", "status": if initialized { "True" } else { "False" }}],
        }),
    );
    with_inits(
        p,
        json!([
            {"name": "restartable-init-1", "restartPolicy": "Always"},
            {"name": "restartable-init-2", "restartPolicy": "Always"},
        ]),
    )
}

#[test]
fn restartable_init_containers() {
    let waiting_main = json!([{"ready": false, "restartCount": 0, "state": {"waiting": {}}}]);
    let init1 = |started: bool| {
        let mut s = restarted(running(false, 3), secs(10));
        s["name"] = json!("restartable-init-1");
        s["started"] = json!(started);
        s
    };
    // The first sidecar running but not started.
    check_pod(
        sidecars(
            "test1",
            "Pending",
            json!([init1(false),
            {"name": "restartable-init-2", "ready": false, "state": {"waiting": {}}, "started": false}]),
            waiting_main.clone(),
            false,
        ),
        json!(["test1", "0/3", "Init:0/2", "3 (10s ago)", "<unknown>"]),
    );
    // The first started, the second running but not started.
    check_pod(
        sidecars(
            "test1",
            "Pending",
            json!([init1(true),
            {"name": "restartable-init-2", "ready": false, "state": {"running": {}}, "started": false}]),
            waiting_main,
            false,
        ),
        json!(["test1", "0/3", "Init:1/2", "3 (10s ago)", "<unknown>"]),
    );
    // Both started and the main container running.
    check_pod(
        sidecars(
            "test2",
            "Running",
            json!([init1(true),
            {"name": "restartable-init-2", "ready": false, "state": {"running": {}}, "started": true}]),
            json!([restarted(running(true, 4), secs(20))]),
            true,
        ),
        json!(["test2", "1/3", "Running", "7 (10s ago)", "<unknown>"]),
    );
    // Sidecars that exited non-zero after the main container completed.
    let p = sidecars(
        "test3",
        "Succeeded",
        json!([
            {"name": "restartable-init-1", "ready": false, "restartCount": 3, "started": false,
             "state": {"terminated": {"reason": "Error", "exitCode": 137}},
             "lastState": {"terminated": {"finishedAt": ago(secs(10))}}},
            {"name": "restartable-init-2", "ready": false, "started": false,
             "state": {"terminated": {"reason": "Error", "exitCode": 137}}}]),
        json!([restarted(
            json!({"ready": false, "restartCount": 4,
            "state": {"terminated": {"reason": "Completed", "exitCode": 0}}}),
            secs(20)
        )]),
        true,
    );
    check_pod(
        p.clone(),
        json!(["test3", "0/3", "Completed", "7 (10s ago)", "<unknown>"]),
    );
    assert_eq!(printer("", "Pod").conditions(&p)[0]["reason"], "Succeeded");
    // Ready sidecars count towards READY.
    check_pod(
        sidecars(
            "ready",
            "Running",
            json!([
            {"name": "restartable-init-1", "ready": true, "started": true, "state": {"running": {}}},
            {"name": "restartable-init-2", "ready": false, "started": true, "state": {"running": {}}}]),
            json!([running(true, 0)]),
            true,
        ),
        json!(["ready", "2/3", "Running", "0", "<unknown>"]),
    );
    // test4: statuses for containers the spec does not have.
    let p = pod(
        "test4",
        1,
        json!({"phase": "Running",
        "initContainerStatuses": [{"name": "initinvalid"}, {"name": "init1"}, {"name": "sidecar1"}],
        "containerStatuses": [{"name": "containerinvalid"}, {"name": "container1"}]}),
    );
    let p = with_inits(
        p,
        json!([{"name": "init1", "image": "initimage"},
        {"name": "sidecar1", "image": "sidecarimage", "restartPolicy": "Always"}]),
    );
    check_pod(p, json!(["test4", "0/2", "Init:0/2", "0", "<unknown>"]));
}

#[test]
fn failure_reasons_upstream_tests_do_not_cover() {
    let init = |state: Value| {
        with_inits(
            pod(
                "p",
                1,
                json!({"phase": "Pending", "initContainerStatuses": [{"state": state}]}),
            ),
            json!([{"name": "init"}]),
        )
    };
    check_pod(
        init(json!({"waiting": {"reason": "CrashLoopBackOff"}})),
        json!(["p", "0/1", "Init:CrashLoopBackOff"]),
    );
    check_pod(
        init(json!({"waiting": {"reason": "PodInitializing"}})),
        json!(["p", "0/1", "Init:0/1"]),
    );
    check_pod(
        init(json!({"terminated": {"reason": "Error", "exitCode": 1}})),
        json!(["p", "0/1", "Init:Error"]),
    );
    check_pod(
        init(json!({"terminated": {"exitCode": 2}})),
        json!(["p", "0/1", "Init:ExitCode:2"]),
    );
    check_pod(
        init(json!({"terminated": {"exitCode": 2, "signal": 9}})),
        json!(["p", "0/1", "Init:Signal:9"]),
    );

    let main = |state: Value| {
        pod(
            "p",
            1,
            json!({"phase": "Running", "containerStatuses": [{"restartCount": 4, "state": state}]}),
        )
    };
    check_pod(
        main(json!({"waiting": {"reason": "CrashLoopBackOff"}})),
        json!(["p", "0/1", "CrashLoopBackOff", "4"]),
    );
    check_pod(
        main(json!({"waiting": {"reason": "ImagePullBackOff"}})),
        json!(["p", "0/1", "ImagePullBackOff"]),
    );
    check_pod(
        main(json!({"terminated": {"exitCode": 137}})),
        json!(["p", "0/1", "ExitCode:137"]),
    );
    check_pod(
        main(json!({"terminated": {"exitCode": 0, "signal": 15}})),
        json!(["p", "0/1", "Signal:15"]),
    );
    check_pod(
        main(json!({"terminated": {"reason": "OOMKilled", "exitCode": 137}})),
        json!(["p", "0/1", "OOMKilled"]),
    );
    // A restart count without a recorded termination has no "ago".
    check_pod(
        main(json!({"running": {}})),
        json!(["p", "0/1", "Running", "4"]),
    );
}

#[test]
fn wide_columns() {
    let gates = json!([{"conditionType": "condition1"}, {"conditionType": "condition2"},
                       {"conditionType": "condition3"}]);
    let status = |ips: Value| {
        json!({
            "phase": "podPhase", "podIPs": ips, "nominatedNodeName": "node1",
            "conditions": [{"type": "condition1", "status": "False"}, {"type": "condition2", "status": "True"}],
            "containerStatuses": [running(true, 3), {"restartCount": 3}],
        })
    };
    for ips in [
        json!([{"ip": "1.1.1.1"}]),
        json!([{"ip": "1.1.1.1"}, {"ip": "2001:db8::"}]),
    ] {
        let mut p = pod("test1", 2, status(ips));
        p["spec"]["nodeName"] = json!("test1");
        p["spec"]["readinessGates"] = gates.clone();
        check_pod(
            p,
            json!([
                "test1",
                "1/2",
                "podPhase",
                "6",
                "<unknown>",
                "1.1.1.1",
                "test1",
                "node1",
                "1/3"
            ]),
        );
    }
    check_pod(
        pod(
            "test2",
            2,
            json!({"phase": "podPhase", "containerStatuses": [running(true, 3),
            {"restartCount": 3, "state": {"waiting": {"reason": "ContainerWaitingReason"}}}]}),
        ),
        json!([
            "test2",
            "1/2",
            "ContainerWaitingReason",
            "6",
            "<unknown>",
            "<none>",
            "<none>",
            "<none>",
            "<none>"
        ]),
    );
    // status.podIP is authoritative over podIPs.
    let p = pod(
        "ip",
        0,
        json!({"podIP": "10.1.1.1", "podIPs": [{"ip": "10.2.2.2"}]}),
    );
    assert_eq!(super::cells("", "Pod", &p)[5], "10.1.1.1");
}

#[test]
fn phases_and_row_conditions() {
    let statuses = json!([running(true, 3), {"restartCount": 3}]);
    for (phase, condition) in [
        ("Running", None),
        ("Pending", None),
        ("Unknown", None),
        ("Succeeded", Some("Succeeded")),
        ("Failed", Some("Failed")),
    ] {
        let p = pod(
            "test",
            2,
            json!({"phase": phase, "containerStatuses": statuses}),
        );
        check_pod(p.clone(), json!(["test", "1/2", phase, "6", "<unknown>"]));
        let conditions = printer("", "Pod").conditions(&p);
        assert_eq!(
            conditions.first().map(|c| c["reason"].clone()),
            condition.map(Value::from)
        );
    }
    let aged = json!({"metadata": {"name": "a", "creationTimestamp": ago(Duration::hours(49))}});
    assert_eq!(printer("", "Pod").row(&aged, now())[4], "2d1h");
}
