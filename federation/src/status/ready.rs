//! Readiness of one member copy: kstatus' computation
//! (`sigs.k8s.io/cli-utils/pkg/kstatus/status`, `generic.go` and
//! `core.go`), which Helm 4's `--wait` uses, with Helm 3's stricter
//! Service rule (`pkg/kube/ready.go`: a `LoadBalancer` waits for an
//! ingress). Pure: no clock (kstatus' 15 s grace for unschedulable Pods
//! is not applied: such a Pod is simply in progress).

use serde_json::Value;

use super::conditions::{reason_of, status_of};
use super::group_kind;

/// kstatus' verdict on an object.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Readiness {
    /// Reconciled and ready ("Current").
    Current,
    /// Still converging.
    InProgress,
    /// Failed and needs a human (a Deployment past its progress
    /// deadline, a failed Job, a `Stalled` condition).
    Failed,
    /// Being deleted.
    Terminating,
}

/// A verdict and the reason for it, worded as kstatus words it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Assessment {
    /// The verdict.
    pub readiness: Readiness,
    /// Why (`Replicas: 2/3`, `Progress deadline exceeded`, ...).
    pub message: String,
}

fn verdict(readiness: Readiness, message: impl Into<String>) -> Assessment {
    Assessment {
        readiness,
        message: message.into(),
    }
}

fn in_progress(message: impl Into<String>) -> Assessment {
    verdict(Readiness::InProgress, message)
}

fn current(message: impl Into<String>) -> Assessment {
    verdict(Readiness::Current, message)
}

fn int(obj: &Value, path: &str, default: i64) -> i64 {
    obj.pointer(path).and_then(Value::as_i64).unwrap_or(default)
}

fn text<'a>(obj: &'a Value, path: &str) -> &'a str {
    obj.pointer(path)
        .and_then(Value::as_str)
        .unwrap_or_default()
}

fn conditions(obj: &Value) -> &[Value] {
    obj.pointer("/status/conditions")
        .and_then(Value::as_array)
        .map(Vec::as_slice)
        .unwrap_or_default()
}

fn condition<'a>(obj: &'a Value, type_: &str) -> Option<&'a Value> {
    conditions(obj)
        .iter()
        .find(|c| c.get("type").and_then(Value::as_str) == Some(type_))
}

fn is_true(obj: &Value, type_: &str) -> bool {
    condition(obj, type_).is_some_and(|c| status_of(c) == "True")
}

/// kstatus' verdict on a member's object: generic rules first (deletion,
/// `observedGeneration` behind `generation`, `Reconciling`/`Stalled`
/// conditions), then the kind's own rules; kinds kstatus does not know
/// are Current.
pub fn assess(obj: &Value) -> Assessment {
    if !text(obj, "/metadata/deletionTimestamp").is_empty() {
        return verdict(Readiness::Terminating, "Resource scheduled for deletion");
    }
    let kind = obj
        .get("kind")
        .and_then(Value::as_str)
        .unwrap_or("Resource");
    if let (Some(g), Some(o)) = (
        obj.pointer("/metadata/generation").and_then(Value::as_i64),
        obj.pointer("/status/observedGeneration")
            .and_then(Value::as_i64),
    ) && o != g
    {
        return in_progress(format!(
            "{kind} generation is {g}, but latest observed generation is {o}"
        ));
    }
    for c in conditions(obj) {
        let t = c.get("type").and_then(Value::as_str).unwrap_or_default();
        let message = c.get("message").and_then(Value::as_str).unwrap_or_default();
        if status_of(c) == "True" && t == "Reconciling" {
            return in_progress(message);
        }
        if status_of(c) == "True" && t == "Stalled" {
            return verdict(Readiness::Failed, message);
        }
    }
    match group_kind(obj).unwrap_or_default() {
        ("apps", "Deployment") => deployment(obj),
        ("apps", "StatefulSet") => stateful_set(obj),
        ("apps", "DaemonSet") => daemon_set(obj),
        ("apps", "ReplicaSet") => replica_set(obj),
        ("batch", "Job") => job(obj),
        ("", "Service") => service(obj),
        ("", "PersistentVolumeClaim") => claim(obj),
        ("", "Pod") => pod(obj),
        ("apiextensions.k8s.io", "CustomResourceDefinition") => crd(obj),
        _ => current("Resource is current"),
    }
}

/// kstatus `deploymentConditions`: Failed past the progress deadline;
/// in progress until `replicas`, `updatedReplicas`, `availableReplicas`
/// and `readyReplicas` reach `spec.replicas` with no old replica left,
/// `Progressing` says `NewReplicaSetAvailable` (unless no deadline is
/// set) and `Available` is True.
fn deployment(obj: &Value) -> Assessment {
    let mut progressing = obj.pointer("/spec/progressDeadlineSeconds").is_none()
        || int(obj, "/spec/progressDeadlineSeconds", 0) == i64::from(i32::MAX);
    let mut available = false;
    for c in conditions(obj) {
        match c.get("type").and_then(Value::as_str) {
            Some("Progressing") => {
                if reason_of(c) == "ProgressDeadlineExceeded" {
                    return verdict(Readiness::Failed, "Progress deadline exceeded");
                }
                if status_of(c) == "True" && reason_of(c) == "NewReplicaSetAvailable" {
                    progressing = true;
                }
            }
            Some("Available") if status_of(c) == "True" => available = true,
            _ => {}
        }
    }
    let spec = int(obj, "/spec/replicas", 1);
    let replicas = int(obj, "/status/replicas", 0);
    let updated = int(obj, "/status/updatedReplicas", 0);
    let ready = int(obj, "/status/readyReplicas", 0);
    let avail = int(obj, "/status/availableReplicas", 0);
    if spec > replicas {
        return in_progress(format!("Replicas: {replicas}/{spec}"));
    }
    if spec > updated {
        return in_progress(format!("Updated: {updated}/{spec}"));
    }
    if replicas > spec {
        return in_progress(format!("Pending termination: {}", replicas - spec));
    }
    if updated > avail {
        return in_progress(format!("Available: {avail}/{updated}"));
    }
    if spec > ready {
        return in_progress(format!("Ready: {ready}/{spec}"));
    }
    if !progressing {
        return in_progress("ReplicaSet not Available");
    }
    if !available {
        return in_progress("Deployment not Available");
    }
    current(format!("Deployment is available. Replicas: {replicas}"))
}

/// kstatus `stsConditions`: `OnDelete` is Current; else replicas, ready,
/// no extra Pods, the partition's updated Pods, current Pods, and
/// `currentRevision == updateRevision`.
fn stateful_set(obj: &Value) -> Assessment {
    if text(obj, "/spec/updateStrategy/type") == "OnDelete" {
        return current("StatefulSet is using the ondelete update strategy");
    }
    let spec = int(obj, "/spec/replicas", 1);
    let ready = int(obj, "/status/readyReplicas", 0);
    let cur = int(obj, "/status/currentReplicas", 0);
    let updated = int(obj, "/status/updatedReplicas", 0);
    let replicas = int(obj, "/status/replicas", 0);
    let partition = int(obj, "/spec/updateStrategy/rollingUpdate/partition", -1);
    if spec > replicas {
        return in_progress(format!("Replicas: {replicas}/{spec}"));
    }
    if spec > ready {
        return in_progress(format!("Ready: {ready}/{spec}"));
    }
    if replicas > spec {
        return in_progress(format!("Pending termination: {}", replicas - spec));
    }
    if partition != -1 {
        if updated < spec - partition {
            return in_progress(format!("updated: {updated}/{}", spec - partition));
        }
        return current(format!("Partition rollout complete. updated: {updated}"));
    }
    if spec > cur {
        return in_progress(format!("current: {cur}/{spec}"));
    }
    if text(obj, "/status/currentRevision") != text(obj, "/status/updateRevision") {
        return in_progress("Waiting for updated revision to match current");
    }
    current(format!(
        "All replicas scheduled as expected. Replicas: {replicas}"
    ))
}

/// kstatus `daemonsetConditions`: `observedGeneration` must be set, then
/// current, updated, available and ready Pods reach
/// `desiredNumberScheduled`.
fn daemon_set(obj: &Value) -> Assessment {
    if obj.pointer("/status/observedGeneration").is_none() {
        return in_progress("DaemonSet status.observedGeneration not found");
    }
    let Some(desired) = obj
        .pointer("/status/desiredNumberScheduled")
        .and_then(Value::as_i64)
    else {
        return in_progress("Missing .status.desiredNumberScheduled");
    };
    for (field, label) in [
        ("currentNumberScheduled", "Current"),
        ("updatedNumberScheduled", "Updated"),
        ("numberAvailable", "Available"),
        ("numberReady", "Ready"),
    ] {
        let n = int(obj, &format!("/status/{field}"), 0);
        if desired > n {
            return in_progress(format!("{label}: {n}/{desired}"));
        }
    }
    current(format!(
        "All replicas scheduled as expected. Replicas: {desired}"
    ))
}

/// kstatus `replicasetConditions`: no `ReplicaFailure`, then labelled,
/// available and ready Pods reach `spec.replicas`, no extra Pods.
fn replica_set(obj: &Value) -> Assessment {
    if is_true(obj, "ReplicaFailure") {
        return in_progress("Replica Failure condition. Check Pods");
    }
    let spec = int(obj, "/spec/replicas", 1);
    let replicas = int(obj, "/status/replicas", 0);
    for (field, label) in [
        ("fullyLabeledReplicas", "Labelled"),
        ("availableReplicas", "Available"),
        ("readyReplicas", "Ready"),
    ] {
        let n = int(obj, &format!("/status/{field}"), 0);
        if spec > n {
            return in_progress(format!("{label}: {n}/{spec}"));
        }
    }
    if replicas > spec {
        return in_progress(format!("Pending termination: {}", replicas - spec));
    }
    current(format!("ReplicaSet is available. Replicas: {replicas}"))
}

/// kstatus `jobConditions`: Complete or Suspended is Current, Failed is
/// Failed, a started Job is Current (running), an unstarted one in
/// progress.
fn job(obj: &Value) -> Assessment {
    let succeeded = int(obj, "/status/succeeded", 0);
    let failed = int(obj, "/status/failed", 0);
    let active = int(obj, "/status/active", 0);
    let parallelism = int(obj, "/spec/parallelism", 1);
    let completions = int(obj, "/spec/completions", parallelism);
    if is_true(obj, "Complete") {
        return current(format!(
            "Job Completed. succeeded: {succeeded}/{completions}"
        ));
    }
    if is_true(obj, "Failed") {
        return verdict(
            Readiness::Failed,
            format!("Job Failed. failed: {failed}/{completions}"),
        );
    }
    if is_true(obj, "Suspended") {
        return current("Job is suspended");
    }
    if text(obj, "/status/startTime").is_empty() {
        return in_progress("Job not started");
    }
    current(format!(
        "Job in progress. success:{succeeded}, active: {active}, failed: {failed}"
    ))
}

/// A `LoadBalancer` Service needs a cluster IP (kstatus) and, unless it
/// has `externalIPs`, a load-balancer ingress (Helm 3's
/// `serviceReady`); other Services are Current.
fn service(obj: &Value) -> Assessment {
    if text(obj, "/spec/type") != "LoadBalancer" {
        return current("Service is ready");
    }
    if text(obj, "/spec/clusterIP").is_empty() {
        return in_progress("ClusterIP not set. Service type: LoadBalancer");
    }
    let has = |p: &str| {
        obj.pointer(p)
            .and_then(Value::as_array)
            .is_some_and(|a| !a.is_empty())
    };
    if has("/spec/externalIPs") || has("/status/loadBalancer/ingress") {
        return current("Service is ready");
    }
    in_progress("Service does not have load balancer ingress IP address")
}

/// kstatus `pvcConditions`: Bound.
fn claim(obj: &Value) -> Assessment {
    match text(obj, "/status/phase") {
        "Bound" => current("PVC is Bound"),
        "" => in_progress("PVC is not Bound. phase: unknown"),
        p => in_progress(format!("PVC is not Bound. phase: {p}")),
    }
}

/// kstatus `podConditions`, without its clock.
fn pod(obj: &Value) -> Assessment {
    match text(obj, "/status/phase") {
        "Succeeded" => current("Pod has completed successfully"),
        "Failed" => current("Pod has completed, but not successfully"),
        "Running" => {
            if is_true(obj, "Ready") {
                return current("Pod is Ready");
            }
            let crashing: Vec<&str> = obj
                .pointer("/status/containerStatuses")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
                .filter(|cs| text(cs, "/state/waiting/reason") == "CrashLoopBackOff")
                .map(|cs| text(cs, "/name"))
                .collect();
            if crashing.is_empty() {
                in_progress("Pod is running but is not Ready")
            } else {
                verdict(
                    Readiness::Failed,
                    format!("Containers in CrashLoop state: {}", crashing.join(",")),
                )
            }
        }
        "Pending" => in_progress("Pod is in the Pending phase"),
        _ => in_progress("Pod phase not available"),
    }
}

/// kstatus `crdConditions`.
fn crd(obj: &Value) -> Assessment {
    for c in conditions(obj) {
        let t = c.get("type").and_then(Value::as_str).unwrap_or_default();
        let message = c.get("message").and_then(Value::as_str).unwrap_or_default();
        if t == "NamesAccepted" && status_of(c) == "False" {
            return verdict(Readiness::Failed, message);
        }
        if t == "Established" {
            if status_of(c) == "False" && reason_of(c) != "Installing" {
                return verdict(Readiness::Failed, message);
            }
            if status_of(c) == "True" {
                return current("CRD is established");
            }
        }
    }
    in_progress("Install in progress")
}
