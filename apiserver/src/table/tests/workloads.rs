//! apps and batch: `TestPrintDeployment`, `TestPrintReplicaSet`,
//! `TestPrintStatefulSet`, `TestPrintDaemonSet`, `TestPrintJob`,
//! `TestPrintJobList`, `TestPrintCronJob`.

use serde_json::{Value, json};
use time::Duration;

use super::{ago, check, just_now};

fn template() -> Value {
    json!({"spec": {"containers": [
        {"name": "fake-container1", "image": "fake-image1"},
        {"name": "fake-container2", "image": "fake-image2"},
    ]}})
}

#[test]
fn deployment() {
    let d = json!({
        "metadata": {"name": "test1", "creationTimestamp": just_now()},
        "spec": {"replicas": 5, "template": template(), "selector": {"matchLabels": {"foo": "bar"}}},
        "status": {"replicas": 10, "updatedReplicas": 2, "availableReplicas": 1, "unavailableReplicas": 4},
    });
    check(
        "apps",
        "Deployment",
        d,
        json!([
            "test1",
            "0/5",
            2,
            1,
            "0s",
            "fake-container1,fake-container2",
            "fake-image1,fake-image2",
            "foo=bar"
        ]),
    );
    // Omitted replicas is 0; no selector prints empty; a bad one <invalid>.
    check(
        "apps",
        "Deployment",
        json!({"metadata": {"name": "d"}}),
        json!(["d", "0/0", 0, 0, "<unknown>", "", "", ""]),
    );
    let bad = json!({"metadata": {"name": "d"}, "spec": {"selector": {"matchExpressions": [{"key": "a", "operator": "Bad"}]}}});
    check(
        "apps",
        "Deployment",
        bad,
        json!(["d", "0/0", 0, 0, "<unknown>", "", "", "<invalid>"]),
    );
}

#[test]
fn replica_set() {
    let rs = json!({
        "metadata": {"name": "test1", "creationTimestamp": just_now()},
        "spec": {"replicas": 5, "template": template(), "selector": {"matchLabels": {"foo": "bar"}}},
        "status": {"replicas": 5, "readyReplicas": 2},
    });
    check(
        "apps",
        "ReplicaSet",
        rs,
        json!([
            "test1",
            5,
            5,
            2,
            "0s",
            "fake-container1,fake-container2",
            "fake-image1,fake-image2",
            "foo=bar"
        ]),
    );
    let rs2 = json!({"metadata": {"name": "replicaset2", "creationTimestamp": just_now()},
                     "spec": {"replicas": 4, "template": {}}, "status": {"replicas": 3, "readyReplicas": 1}});
    check(
        "apps",
        "ReplicaSet",
        rs2,
        json!(["replicaset2", 4, 3, 1, "0s", "", "", "<none>"]),
    );
}

#[test]
fn stateful_set() {
    let ss = json!({
        "metadata": {"name": "test1", "creationTimestamp": just_now()},
        "spec": {"replicas": 5, "template": template()},
        "status": {"replicas": 5, "readyReplicas": 2},
    });
    check(
        "apps",
        "StatefulSet",
        ss,
        json!([
            "test1",
            "2/5",
            "0s",
            "fake-container1,fake-container2",
            "fake-image1,fake-image2"
        ]),
    );
}

#[test]
fn daemon_set() {
    let ds = json!({
        "metadata": {"name": "test1", "creationTimestamp": just_now()},
        "spec": {"template": template(), "selector": {"matchLabels": {"foo": "bar"}}},
        "status": {"currentNumberScheduled": 2, "desiredNumberScheduled": 3, "numberReady": 1,
                   "updatedNumberScheduled": 2, "numberAvailable": 0},
    });
    check(
        "apps",
        "DaemonSet",
        ds,
        json!([
            "test1",
            3,
            2,
            1,
            2,
            0,
            "<none>",
            "0s",
            "fake-container1,fake-container2",
            "fake-image1,fake-image2",
            "foo=bar"
        ]),
    );
    let selected = json!({"metadata": {"name": "ds"}, "spec": {"template": {"spec": {
        "nodeSelector": {"kubernetes.io/os": "linux", "disk": "ssd"}}}}});
    check(
        "apps",
        "DaemonSet",
        selected,
        json!(["ds", 0, 0, 0, 0, 0, "disk=ssd,kubernetes.io/os=linux"]),
    );
}

fn job(name: &str, spec: Value, status: Value) -> Value {
    json!({"metadata": {"name": name, "creationTimestamp": just_now()}, "spec": spec, "status": status})
}

#[test]
fn jobs() {
    let spec = json!({
        "completions": 2,
        "template": {"spec": {"containers": [
            {"name": "fake-job-container1", "image": "fake-job-image1"},
            {"name": "fake-job-container2", "image": "fake-job-image2"}]}},
        "selector": {"matchLabels": {"job-label": "job-label-value"}},
    });
    check(
        "batch",
        "Job",
        job("job1", spec.clone(), json!({"succeeded": 1})),
        json!([
            "job1",
            "Running",
            "1/2",
            "",
            "0s",
            "fake-job-container1,fake-job-container2",
            "fake-job-image1,fake-job-image2",
            "job-label=job-label-value"
        ]),
    );
    let ten_years = ago(Duration::days(10 * 365));
    let mut old = job("job2", json!({}), json!({"succeeded": 0}));
    old["metadata"]["creationTimestamp"] = json!(ten_years);
    check(
        "batch",
        "Job",
        old.clone(),
        json!(["job2", "Running", "0/1", "", "10y"]),
    );
    // Duration: completion - start.
    let mut finished = old.clone();
    finished["status"] = json!({"startTime": ago(Duration::minutes(-1)), "completionTime": ago(Duration::minutes(-31))});
    check(
        "batch",
        "Job",
        finished,
        json!(["job2", "Running", "0/1", "30m", "10y"]),
    );
    // Duration: now - start while running.
    let mut running = old;
    running["status"] = json!({"startTime": ago(Duration::minutes(20))});
    check(
        "batch",
        "Job",
        running,
        json!(["job2", "Running", "0/1", "20m", "10y"]),
    );
    for (condition, status) in [
        ("Complete", "Complete"),
        ("Failed", "Failed"),
        ("Suspended", "Suspended"),
        ("FailureTarget", "FailureTarget"),
    ] {
        let j = job(
            "job5",
            json!({}),
            json!({"conditions": [{"type": condition, "status": "True"}]}),
        );
        check("batch", "Job", j, json!(["job5", status, "0/1", "", "0s"]));
    }
    let mut deleting = job("job9", json!({}), json!({}));
    deleting["metadata"]["deletionTimestamp"] = json!(just_now());
    check(
        "batch",
        "Job",
        deleting,
        json!(["job9", "Terminating", "0/1", "", "0s"]),
    );
    // A false Complete condition is ignored; Complete outranks Terminating.
    let mut done = job(
        "j",
        json!({}),
        json!({"conditions": [{"type": "Complete", "status": "True"}]}),
    );
    done["metadata"]["deletionTimestamp"] = json!(just_now());
    check("batch", "Job", done, json!(["j", "Complete"]));
    check(
        "batch",
        "Job",
        job(
            "j",
            json!({}),
            json!({"conditions": [{"type": "Complete", "status": "False"}]}),
        ),
        json!(["j", "Running"]),
    );
    // Parallel jobs without completions.
    check(
        "batch",
        "Job",
        job("j", json!({"parallelism": 3}), json!({"succeeded": 1})),
        json!(["j", "Running", "1/1 of 3"]),
    );
    check(
        "batch",
        "Job",
        job("j", json!({"parallelism": 1}), json!({})),
        json!(["j", "Running", "0/1"]),
    );
    // TestPrintJobList's second job.
    let j2 = job(
        "job2",
        spec,
        json!({"succeeded": 2, "startTime": ago(Duration::minutes(20))}),
    );
    check(
        "batch",
        "Job",
        j2,
        json!(["job2", "Running", "2/2", "20m", "0s"]),
    );
}

fn cron_job(name: &str, extra_spec: Value, status: Value) -> Value {
    let mut spec = json!({
        "schedule": "0/5 * * * ?",
        "suspend": false,
        "jobTemplate": {"spec": {
            "completions": 2,
            "template": {"spec": {"containers": [
                {"name": "fake-job-container1", "image": "fake-job-image1"},
                {"name": "fake-job-container2", "image": "fake-job-image2"}]}},
            "selector": {"matchLabels": {"a": "b"}},
        }},
    });
    if let (Some(spec), Some(extra)) = (spec.as_object_mut(), extra_spec.as_object()) {
        spec.extend(extra.clone());
    }
    json!({"metadata": {"name": name, "creationTimestamp": just_now()}, "spec": spec, "status": status})
}

#[test]
fn cron_jobs() {
    let scheduled = json!({"lastScheduleTime": just_now()});
    check(
        "batch",
        "CronJob",
        cron_job("cronjob1", json!({}), scheduled.clone()),
        json!([
            "cronjob1",
            "0/5 * * * ?",
            "<none>",
            "False",
            0,
            "0s",
            "0s",
            "fake-job-container1,fake-job-container2",
            "fake-job-image1,fake-job-image2",
            "a=b"
        ]),
    );
    check(
        "batch",
        "CronJob",
        cron_job("cronjob1", json!({"timeZone": "LOCAL"}), scheduled),
        json!(["cronjob1", "0/5 * * * ?", "LOCAL", "False", 0, "0s", "0s"]),
    );
    let mut aged = cron_job(
        "cronjob2",
        json!({}),
        json!({"lastScheduleTime": ago(Duration::seconds(30))}),
    );
    aged["metadata"]["creationTimestamp"] = json!(ago(Duration::minutes(5)));
    check(
        "batch",
        "CronJob",
        aged.clone(),
        json!(["cronjob2", "0/5 * * * ?", "<none>", "False", 0, "30s", "5m"]),
    );
    aged["status"] = json!({});
    check(
        "batch",
        "CronJob",
        aged,
        json!([
            "cronjob2",
            "0/5 * * * ?",
            "<none>",
            "False",
            0,
            "<none>",
            "5m"
        ]),
    );
    // Suspend unset, active jobs counted.
    let cj = json!({"metadata": {"name": "c"}, "spec": {"schedule": "@hourly"},
                    "status": {"active": [{"name": "j1"}, {"name": "j2"}]}});
    check(
        "batch",
        "CronJob",
        cj,
        json!([
            "c",
            "@hourly",
            "<none>",
            "<unset>",
            2,
            "<none>",
            "<unknown>",
            "",
            "",
            "<none>"
        ]),
    );
}
