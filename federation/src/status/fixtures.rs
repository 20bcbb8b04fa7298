//! Member objects as kube-controller-manager 1.33 (and Skein's simulator)
//! writes them, for the aggregators' tests.

use serde_json::{Value, json};

use super::MemberCopy;

/// A time the members' conditions carry.
pub const T0: &str = "2026-12-03T10:00:00Z";
/// A later time.
pub const T1: &str = "2026-12-03T10:05:00Z";

/// A federated Deployment `web` of `replicas` at `generation`, with a
/// previous `observedGeneration` when `Some`.
pub fn federated_deployment(replicas: i64, generation: i64, observed: Option<i64>) -> Value {
    let mut d = json!({
        "apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": {"name": "web", "namespace": "default", "generation": generation},
        "spec": {"replicas": replicas, "progressDeadlineSeconds": 600,
                 "selector": {"matchLabels": {"app": "web"}}},
    });
    if let Some(o) = observed {
        d["status"] = json!({"observedGeneration": o});
    }
    d
}

/// A member's Deployment `web` with `replicas` of which `ready` are
/// ready and available, at member `generation` observed `observed`.
pub fn member_deployment(replicas: i64, ready: i64, generation: i64, observed: i64) -> Value {
    let mut status = json!({"observedGeneration": observed});
    for (k, v) in [
        ("replicas", replicas),
        ("updatedReplicas", replicas),
        ("readyReplicas", ready),
        ("availableReplicas", ready),
        ("unavailableReplicas", replicas - ready),
    ] {
        if v != 0 {
            status[k] = json!(v);
        }
    }
    let complete = ready == replicas;
    status["conditions"] = json!([
        {"type": "Available",
         "status": if complete { "True" } else { "False" },
         "lastUpdateTime": T0, "lastTransitionTime": T0,
         "reason": if complete { "MinimumReplicasAvailable" } else { "MinimumReplicasUnavailable" },
         "message": if complete { "Deployment has minimum availability." } else { "Deployment does not have minimum availability." }},
        {"type": "Progressing", "status": "True",
         "lastUpdateTime": T0, "lastTransitionTime": T0,
         "reason": if complete { "NewReplicaSetAvailable" } else { "ReplicaSetUpdated" },
         "message": if complete { "ReplicaSet \"web-5d4b8c7f9\" has successfully progressed." } else { "ReplicaSet \"web-5d4b8c7f9\" is progressing." }},
    ]);
    json!({
        "apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": {"name": "web", "namespace": "default", "generation": generation},
        "spec": {"replicas": replicas, "progressDeadlineSeconds": 600},
        "status": status,
    })
}

/// `member` with its Progressing condition timed out at [`T1`].
pub fn timed_out(mut member: Value) -> Value {
    if let Some(cs) = member
        .pointer_mut("/status/conditions")
        .and_then(Value::as_array_mut)
    {
        for c in cs.iter_mut() {
            if c["type"] == "Progressing" {
                *c = json!({"type": "Progressing", "status": "False",
                    "lastUpdateTime": T1, "lastTransitionTime": T1,
                    "reason": "ProgressDeadlineExceeded",
                    "message": "Deployment \"web\" has timed out progressing."});
            }
        }
    }
    member
}

/// A copy of `object` on `cluster`.
pub fn copy<'a>(cluster: &'a str, object: &'a Value, current: bool) -> MemberCopy<'a> {
    MemberCopy {
        cluster,
        object: Some(object),
        current,
    }
}

/// A member's Job part: `succeeded` of `completions`, `active` running,
/// finished (SuccessCriteriaMet then Complete, as v1.33) when
/// `succeeded == completions`, started at `start`, completed at `end`.
pub fn member_job(completions: i64, succeeded: i64, active: i64, start: &str, end: &str) -> Value {
    let mut status = json!({"startTime": start, "ready": active, "terminating": 0});
    if active > 0 {
        status["active"] = json!(active);
    }
    if succeeded > 0 {
        status["succeeded"] = json!(succeeded);
    }
    if succeeded == completions {
        status["completionTime"] = json!(end);
        status["conditions"] = json!([
            {"type": "SuccessCriteriaMet", "status": "True", "reason": "CompletionsReached",
             "message": "Reached expected number of succeeded pods",
             "lastProbeTime": end, "lastTransitionTime": end},
            {"type": "Complete", "status": "True", "reason": "CompletionsReached",
             "message": "Reached expected number of succeeded pods",
             "lastProbeTime": end, "lastTransitionTime": end},
        ]);
    }
    json!({
        "apiVersion": "batch/v1", "kind": "Job",
        "metadata": {"name": "pi", "namespace": "default", "generation": 1},
        "spec": {"completions": completions, "parallelism": completions, "backoffLimit": 6},
        "status": status,
    })
}

/// A member's failed Job part (FailureTarget then Failed, as v1.33).
pub fn failed_job(start: &str, at: &str) -> Value {
    json!({
        "apiVersion": "batch/v1", "kind": "Job",
        "metadata": {"name": "pi", "namespace": "default", "generation": 1},
        "spec": {"completions": 2, "parallelism": 2, "backoffLimit": 1},
        "status": {"startTime": start, "failed": 2, "ready": 0, "terminating": 0,
            "conditions": [
                {"type": "FailureTarget", "status": "True", "reason": "BackoffLimitExceeded",
                 "message": "Job has reached the specified backoff limit",
                 "lastProbeTime": at, "lastTransitionTime": at},
                {"type": "Failed", "status": "True", "reason": "BackoffLimitExceeded",
                 "message": "Job has reached the specified backoff limit",
                 "lastProbeTime": at, "lastTransitionTime": at},
            ]},
    })
}

/// kubectl's `DeploymentStatusViewer.Status` (rollout_status.go), for
/// asserting what `kubectl rollout status` concludes from a federated
/// Deployment: `Ok(true)` done, `Ok(false)` waiting, `Err` failed.
pub fn rollout_status(d: &Value) -> Result<bool, String> {
    let int = |p: &str| d.pointer(p).and_then(Value::as_i64).unwrap_or(0);
    if int("/metadata/generation") > int("/status/observedGeneration") {
        return Ok(false);
    }
    let timed_out = d
        .pointer("/status/conditions")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .any(|c| c["type"] == "Progressing" && c["reason"] == "ProgressDeadlineExceeded");
    if timed_out {
        return Err("deployment \"web\" exceeded its progress deadline".into());
    }
    let spec = d.pointer("/spec/replicas").and_then(Value::as_i64);
    let updated = int("/status/updatedReplicas");
    if spec.is_some_and(|s| updated < s) {
        return Ok(false);
    }
    if int("/status/replicas") > updated {
        return Ok(false);
    }
    Ok(int("/status/availableReplicas") >= updated)
}

/// `federated` with `status` set.
pub fn with_status(federated: &Value, status: Option<Value>) -> Value {
    let mut f = federated.clone();
    if let Some(s) = status {
        f["status"] = s;
    }
    f
}
