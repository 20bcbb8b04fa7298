//! The Job controller, as kube-controller-manager v1.33's
//! (pkg/controller/job), simplified: Pods are counted from their phases
//! (no tracking finalizers; `uncountedTerminatedPods` stays empty).
//!
//! - Runs up to `parallelism` Pods at a time until `completions` Pods
//!   succeeded (NonIndexed), or each index `0..completions` has a succeeded
//!   Pod (Indexed: index annotation and label, `JOB_COMPLETION_INDEX`,
//!   hostname `<job>-<index>`, `status.completedIndexes`). Without
//!   `completions`, the Job is done once a Pod succeeded and none runs.
//! - Failed Pods are replaced after upstream's backoff (10 s doubling, at
//!   most 6 min); more failures than `backoffLimit` fail the Job
//!   (`BackoffLimitExceeded`), as does running longer than
//!   `activeDeadlineSeconds` (`DeadlineExceeded`): conditions
//!   `FailureTarget` then `Failed`, active Pods deleted.
//! - Success sets `SuccessCriteriaMet` then `Complete` (reason
//!   `CompletionsReached`) and `completionTime`, as v1.33 does.
//! - `suspend` deletes active Pods and sets `Suspended`; resuming resets
//!   `startTime` (so the deadline counts from the resume).
//! - Jobs with another `spec.managedBy` are left alone; a finished Job with
//!   `ttlSecondsAfterFinished` is deleted (Foreground) once it expires, as
//!   the TTL-after-finished controller does.

use std::collections::BTreeSet;
use std::time::Duration;

use serde_json::{Map, Value, json};
use time::OffsetDateTime;

use super::Sim;
use super::owner_loop::{self, int, parse_time, rfc3339};
use super::template::{self, PodName};
use skein_apiserver::controllers::informer::ObjectKey;
use skein_apiserver::registry::object;
use skein_apiserver::status::ApiError;

const MANAGER: &str = "job-controller";

/// The Pod annotation and label holding an Indexed Job Pod's index.
pub const COMPLETION_INDEX: &str = "batch.kubernetes.io/job-completion-index";

/// Upstream's first Pod-failure backoff (`DefaultJobPodFailureBackOff`).
const BACKOFF_BASE: Duration = Duration::from_secs(10);
/// Upstream's longest Pod-failure backoff (`MaxJobPodFailureBackOff`).
const BACKOFF_MAX: Duration = Duration::from_secs(360);

/// What one sync of a Job does.
#[derive(Debug, Default)]
pub struct JobPlan {
    /// Pods to create.
    pub create: Vec<Value>,
    /// Names of Pods to delete.
    pub delete: Vec<String>,
    /// The Job's new status.
    pub status: Value,
    /// Look at the Job again after this long (a deadline, a backoff or
    /// the TTL after it finished).
    pub requeue: Option<Duration>,
    /// Delete the Job itself (Foreground): it finished more than
    /// `ttlSecondsAfterFinished` ago (the TTL-after-finished controller).
    pub expired: bool,
}

/// The `spec.managedBy` value of Jobs this controller manages (unset means
/// the same); Jobs managed by another controller are left alone.
pub const MANAGED_BY: &str = "kubernetes.io/job-controller";

/// Whether this controller manages `job` (`spec.managedBy` unset or
/// [`MANAGED_BY`]).
pub fn is_managed(job: &Value) -> bool {
    job.pointer("/spec/managedBy")
        .and_then(Value::as_str)
        .is_none_or(|m| m == MANAGED_BY)
}

/// When a finished Job finished: its `Complete` or `Failed` condition's
/// transition time.
fn finish_time(job: &Value) -> Option<OffsetDateTime> {
    job.pointer("/status/conditions")
        .and_then(Value::as_array)?
        .iter()
        .filter(|c| {
            matches!(
                c.get("type").and_then(Value::as_str),
                Some("Complete" | "Failed")
            ) && c.get("status").and_then(Value::as_str) == Some("True")
        })
        .filter_map(|c| c.get("lastTransitionTime").and_then(Value::as_str))
        .find_map(parse_time)
}

/// A Job's condition `type_`, if True.
pub fn has_condition(obj: &Value, type_: &str) -> bool {
    skein_apiserver::registry::object::condition_true(obj, type_)
}

/// Whether a Job has finished (`Complete` or `Failed` True).
pub fn is_finished(job: &Value) -> bool {
    has_condition(job, "Complete") || has_condition(job, "Failed")
}

/// The index of an Indexed Job's Pod (annotation, then label).
fn pod_index(pod: &Value) -> Option<i64> {
    ["annotations", "labels"].iter().find_map(|f| {
        pod.pointer(&format!("/metadata/{f}"))
            .and_then(|m| m.get(COMPLETION_INDEX))
            .and_then(Value::as_str)
            .and_then(|s| s.parse().ok())
    })
}

/// Upstream's interval text of a set of indexes: `1,3-5,7`.
pub fn format_indexes(indexes: &BTreeSet<i64>) -> String {
    let mut parts: Vec<String> = Vec::new();
    let mut iter = indexes.iter().copied().peekable();
    while let Some(first) = iter.next() {
        let mut last = first;
        while iter.peek() == Some(&(last + 1)) {
            last += 1;
            iter.next();
        }
        parts.push(if first == last {
            first.to_string()
        } else {
            format!("{first}-{last}")
        });
    }
    parts.join(",")
}

/// Sets condition `type_` to `status` in `conds`, keeping the transition
/// time when the status is unchanged (as upstream's `updateConditions`).
fn set_condition(
    conds: &mut Vec<Value>,
    type_: &str,
    status: &str,
    reason: &str,
    message: &str,
    now: &str,
) {
    if let Some(c) = conds
        .iter_mut()
        .find(|c| c.get("type").and_then(Value::as_str) == Some(type_))
    {
        if c.get("status").and_then(Value::as_str) != Some(status) {
            *c = json!({"type": type_, "status": status, "reason": reason, "message": message,
                "lastProbeTime": now, "lastTransitionTime": now});
        }
        return;
    }
    conds.push(
        json!({"type": type_, "status": status, "reason": reason, "message": message,
        "lastProbeTime": now, "lastTransitionTime": now}),
    );
}

/// The Pod-failure backoff after `failures` failures (upstream: 10 s
/// doubling, capped at 6 min; none before the first failure).
pub fn failure_backoff(failures: i64) -> Duration {
    if failures <= 0 {
        return Duration::ZERO;
    }
    let exp = u32::try_from((failures - 1).min(10)).unwrap_or(10);
    BACKOFF_BASE.saturating_mul(1 << exp).min(BACKOFF_MAX)
}

/// When a failed Pod finished: its latest condition transition, else its
/// creation.
fn finished_at(pod: &Value) -> Option<OffsetDateTime> {
    let conds = pod
        .pointer("/status/conditions")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(|c| c.get("lastTransitionTime").and_then(Value::as_str))
        .filter_map(parse_time)
        .max();
    conds.or_else(|| {
        pod.pointer("/metadata/creationTimestamp")
            .and_then(Value::as_str)
            .and_then(parse_time)
    })
}

/// A new Pod for `job` (the index for Indexed Jobs).
pub fn new_pod(job: &Value, index: Option<i64>) -> Value {
    let name = object::name(job);
    let empty = json!({});
    let template = job.pointer("/spec/template").unwrap_or(&empty);
    let owner = template::controller_ref(job, "batch/v1", "Job");
    let Some(i) = index else {
        return template::pod_from_template(
            template,
            object::namespace(job),
            &PodName::Generate(format!("{name}-")),
            owner,
            &[],
        );
    };
    let idx = i.to_string();
    let mut pod = template::pod_from_template(
        template,
        object::namespace(job),
        &PodName::Generate(format!("{name}-{idx}-")),
        owner,
        &[(COMPLETION_INDEX, &idx)],
    );
    if let Some(meta) = pod.get_mut("metadata").and_then(Value::as_object_mut) {
        let ann = meta.entry("annotations").or_insert_with(|| json!({}));
        if let Some(a) = ann.as_object_mut() {
            a.insert(COMPLETION_INDEX.into(), json!(idx));
        }
    }
    if let Some(spec) = pod.get_mut("spec").and_then(Value::as_object_mut) {
        if !spec.contains_key("hostname") {
            spec.insert("hostname".into(), json!(format!("{name}-{idx}")));
        }
        for list in ["containers", "initContainers"] {
            for c in spec
                .get_mut(list)
                .and_then(Value::as_array_mut)
                .into_iter()
                .flatten()
            {
                add_index_env(c);
            }
        }
    }
    pod
}

fn add_index_env(container: &mut Value) {
    let Some(c) = container.as_object_mut() else {
        return;
    };
    let env = c.entry("env").or_insert_with(|| json!([]));
    let Some(env) = env.as_array_mut() else {
        return;
    };
    if env
        .iter()
        .any(|e| e.get("name").and_then(Value::as_str) == Some("JOB_COMPLETION_INDEX"))
    {
        return;
    }
    env.push(
        json!({"name": "JOB_COMPLETION_INDEX", "valueFrom": {"fieldRef": {
            "apiVersion": "v1",
            "fieldPath": format!("metadata.annotations['{COMPLETION_INDEX}']"),
        }}}),
    );
}

/// One sync of `job` with its Pods `pods` at `now`: the pure heart of the
/// controller.
pub fn plan(job: &Value, pods: &[Value], now: OffsetDateTime) -> JobPlan {
    let now_s = rfc3339(now);
    let mut status = job
        .get("status")
        .and_then(Value::as_object)
        .cloned()
        .unwrap_or_default();
    let mut conds: Vec<Value> = status
        .get("conditions")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    let active: Vec<&Value> = pods.iter().filter(|p| template::is_active(p)).collect();
    let mut out = JobPlan::default();
    if is_finished(job) {
        out.delete = active.iter().map(|p| object::name(p).to_owned()).collect();
        out.status = Value::Object(status);
        if let (Some(ttl), Some(done)) = (
            job.pointer("/spec/ttlSecondsAfterFinished")
                .and_then(Value::as_i64),
            finish_time(job),
        ) {
            let expires = done + time::Duration::seconds(ttl);
            if expires <= now {
                out.expired = true;
            } else {
                out.requeue = Some(to_std(expires - now));
            }
        }
        return out;
    }
    let succeeded_pods: Vec<&Value> = pods
        .iter()
        .filter(|p| template::phase(p) == "Succeeded")
        .collect();
    let failed_pods: Vec<&Value> = pods
        .iter()
        .filter(|p| template::phase(p) == "Failed")
        .collect();
    let prev = |k: &str| status.get(k).and_then(Value::as_i64).unwrap_or(0);
    let succeeded = prev("succeeded").max(count(succeeded_pods.len()));
    let failed = prev("failed").max(count(failed_pods.len()));
    let terminating = pods
        .iter()
        .filter(|p| object::is_deleting(p) && !matches!(template::phase(p), "Succeeded" | "Failed"))
        .count();
    let parallelism = int(job, "/spec/parallelism", 1).max(0);
    let completions = job.pointer("/spec/completions").and_then(Value::as_i64);
    let indexed = job.pointer("/spec/completionMode").and_then(Value::as_str) == Some("Indexed");
    let backoff_limit = int(job, "/spec/backoffLimit", 6);
    let suspended = job.pointer("/spec/suspend").and_then(Value::as_bool) == Some(true);
    let completed_indexes: BTreeSet<i64> = if indexed {
        succeeded_pods
            .iter()
            .filter_map(|p| pod_index(p))
            .filter(|i| completions.is_none_or(|c| *i >= 0 && *i < c))
            .collect()
    } else {
        BTreeSet::new()
    };

    status.insert("uncountedTerminatedPods".into(), json!({}));
    put_count(&mut status, "succeeded", succeeded);
    put_count(&mut status, "failed", failed);
    status.insert("terminating".into(), json!(terminating));
    if indexed {
        let text = format_indexes(&completed_indexes);
        if text.is_empty() {
            status.remove("completedIndexes");
        } else {
            status.insert("completedIndexes".into(), json!(text));
        }
    }

    let was_suspended = has_condition(job, "Suspended");
    if suspended {
        if !was_suspended {
            set_condition(
                &mut conds,
                "Suspended",
                "True",
                "JobSuspended",
                "Job suspended",
                &now_s,
            );
        }
        status.remove("startTime");
        out.delete = active.iter().map(|p| object::name(p).to_owned()).collect();
        return finish(out, status, conds, 0, 0);
    }
    if was_suspended {
        set_condition(
            &mut conds,
            "Suspended",
            "False",
            "JobResumed",
            "Job resumed",
            &now_s,
        );
        status.insert("startTime".into(), json!(now_s));
    }
    if !status.contains_key("startTime") {
        status.insert("startTime".into(), json!(now_s));
    }
    let start = status
        .get("startTime")
        .and_then(Value::as_str)
        .and_then(parse_time)
        .unwrap_or(now);

    // Failure: too many failed Pods, or past the deadline.
    let deadline = job
        .pointer("/spec/activeDeadlineSeconds")
        .and_then(Value::as_i64)
        .map(|s| start + time::Duration::seconds(s));
    let failure = if failed > backoff_limit {
        Some((
            "BackoffLimitExceeded",
            "Job has reached the specified backoff limit",
        ))
    } else if deadline.is_some_and(|d| d <= now) {
        Some((
            "DeadlineExceeded",
            "Job was active longer than specified deadline",
        ))
    } else {
        None
    };
    if let Some((reason, message)) = failure {
        set_condition(&mut conds, "FailureTarget", "True", reason, message, &now_s);
        set_condition(&mut conds, "Failed", "True", reason, message, &now_s);
        out.delete = active.iter().map(|p| object::name(p).to_owned()).collect();
        return finish(out, status, conds, 0, 0);
    }

    // Success.
    let active_n = count(active.len());
    let complete = match (completions, indexed) {
        (Some(c), true) => count(completed_indexes.len()) >= c,
        (Some(c), false) => succeeded >= c,
        (None, _) => succeeded > 0 && active_n == 0,
    };
    if complete {
        let msg = "Reached expected number of succeeded pods";
        set_condition(
            &mut conds,
            "SuccessCriteriaMet",
            "True",
            "CompletionsReached",
            msg,
            &now_s,
        );
        set_condition(
            &mut conds,
            "Complete",
            "True",
            "CompletionsReached",
            msg,
            &now_s,
        );
        status.insert("completionTime".into(), json!(now_s));
        out.delete = active.iter().map(|p| object::name(p).to_owned()).collect();
        return finish(out, status, conds, 0, 0);
    }

    // Pods: how many should run.
    let want = match completions {
        None if succeeded > 0 => 0,
        None => parallelism,
        Some(c) if indexed => (c - count(completed_indexes.len())).clamp(0, parallelism),
        Some(c) => (c - succeeded).clamp(0, parallelism),
    };
    // Backoff after failures, from the last failure.
    let last_failure = failed_pods.iter().filter_map(|p| finished_at(p)).max();
    let backoff_until = last_failure.map(|t| t + failure_backoff(failed));
    let in_backoff = backoff_until.is_some_and(|t| t > now);
    let mut keep: Vec<&Value> = Vec::new();
    let mut held: BTreeSet<i64> = BTreeSet::new();
    for p in &active {
        if indexed {
            match pod_index(p) {
                Some(i)
                    if completions.is_some_and(|c| i >= 0 && i < c)
                        && !completed_indexes.contains(&i)
                        && !held.contains(&i) =>
                {
                    held.insert(i);
                    keep.push(p);
                }
                _ => out.delete.push(object::name(p).to_owned()),
            }
        } else {
            keep.push(p);
        }
    }
    let kept = count(keep.len());
    if kept > want {
        // Delete the newest first.
        let mut extra: Vec<&Value> = keep.clone();
        extra.sort_by_key(|p| {
            std::cmp::Reverse(
                p.pointer("/metadata/creationTimestamp")
                    .and_then(Value::as_str)
                    .unwrap_or_default()
                    .to_owned(),
            )
        });
        let n = usize::try_from(kept - want).unwrap_or(0);
        for p in extra.into_iter().take(n) {
            out.delete.push(object::name(p).to_owned());
        }
    } else if kept < want && !in_backoff {
        let n = usize::try_from(want - kept).unwrap_or(0);
        if indexed {
            let c = completions.unwrap_or(0);
            let pending = (0..c).filter(|i| !completed_indexes.contains(i) && !held.contains(i));
            out.create = pending.take(n).map(|i| new_pod(job, Some(i))).collect();
        } else {
            out.create = (0..n).map(|_| new_pod(job, None)).collect();
        }
    }
    if kept < want && in_backoff {
        out.requeue = backoff_until.map(|t| to_std(t - now));
    }
    if let Some(d) = deadline {
        let left = to_std(d - now);
        out.requeue = Some(out.requeue.map_or(left, |r| r.min(left)));
    }
    let ready = keep.iter().filter(|p| template::is_ready(p)).count();
    let running = count(keep.len()).min(want.max(0)) + count(out.create.len());
    finish(out, status, conds, running, count(ready))
}

fn to_std(d: time::Duration) -> Duration {
    Duration::try_from(d).unwrap_or(Duration::ZERO) + Duration::from_millis(50)
}

fn count(n: usize) -> i64 {
    i64::try_from(n).unwrap_or(i64::MAX)
}

/// Upstream omits zero counters (`omitempty`).
fn put_count(status: &mut Map<String, Value>, key: &str, n: i64) {
    if n == 0 {
        status.remove(key);
    } else {
        status.insert(key.into(), json!(n));
    }
}

fn finish(
    mut out: JobPlan,
    mut status: Map<String, Value>,
    conds: Vec<Value>,
    active: i64,
    ready: i64,
) -> JobPlan {
    put_count(&mut status, "active", active);
    status.insert("ready".into(), json!(ready));
    if conds.is_empty() {
        status.remove("conditions");
    } else {
        status.insert("conditions".into(), Value::Array(conds));
    }
    out.status = Value::Object(status);
    out
}

/// Runs the Job controller until the runtime shuts down.
pub async fn run(sim: Sim) {
    let Some((jobs, pods)) = sim.informer_pair(
        ("batch", "v1", "jobs"),
        ("", "v1", "pods"),
        "job controller cannot start",
    ) else {
        return;
    };
    let related = vec![(pods, owner_loop::controller_of("Job"))];
    owner_loop::drive("job", jobs, related, Duration::from_secs(10), |key| {
        let sim = sim.clone();
        async move { sync(&sim, &key).await }
    })
    .await;
}

async fn sync(sim: &Sim, key: &ObjectKey) -> Result<Option<Duration>, ApiError> {
    let jobs = Sim::resource("batch", "v1", "jobs")?;
    let pods_res = Sim::resource("", "v1", "pods")?;
    let Some(job) = owner_loop::fresh(sim, &jobs, key).await? else {
        return Ok(None);
    };
    if object::is_deleting(&job) || !is_managed(&job) {
        return Ok(None);
    }
    let pods = owner_loop::owned(sim, &pods_res, &key.namespace, object::uid(&job)).await?;
    let plan = plan(&job, &pods, owner_loop::now());
    if plan.expired {
        let propagation = Some(skein_apiserver::registry::Propagation::Foreground);
        owner_loop::delete(sim, &jobs, &key.namespace, &key.name, propagation).await?;
        return Ok(None);
    }
    let ev = |type_: &str, reason: &str, message: &str| {
        owner_loop::event(
            &job,
            "batch/v1",
            "Job",
            type_,
            reason,
            message,
            MANAGER,
            owner_loop::now(),
        )
    };
    let mut events = Vec::new();
    let mut result = Ok(());
    for name in &plan.delete {
        result = owner_loop::delete(sim, &pods_res, &key.namespace, name, None).await;
        if result.is_err() {
            break;
        }
        events.push(ev(
            "Normal",
            "SuccessfulDelete",
            &format!("Deleted pod: {name}"),
        ));
    }
    if result.is_ok() {
        for pod in plan.create {
            match owner_loop::create(sim, &pods_res, &key.namespace, pod, MANAGER).await {
                Ok(Some(p)) => events.push(ev(
                    "Normal",
                    "SuccessfulCreate",
                    &format!("Created pod: {}", object::name(&p)),
                )),
                Ok(None) => {}
                Err(e) => {
                    result = Err(e);
                    break;
                }
            }
        }
    }
    if result.is_ok() {
        let after = json!({"status": plan.status});
        let newly = |t: &str| has_condition(&after, t) && !has_condition(&job, t);
        if newly("Complete") {
            events.push(ev("Normal", "Completed", "Job completed"));
        }
        if newly("Failed") {
            let cond = after["status"]["conditions"]
                .as_array()
                .and_then(|cs| cs.iter().find(|c| c["type"] == "Failed"))
                .cloned()
                .unwrap_or_default();
            let reason = cond["reason"].as_str().unwrap_or_default();
            let message = cond["message"].as_str().unwrap_or_default();
            events.push(ev("Warning", reason, message));
        }
        if newly("Suspended") {
            events.push(ev("Normal", "Suspended", "Job suspended"));
        }
        let resumed = has_condition(&job, "Suspended") && !has_condition(&after, "Suspended");
        if resumed {
            events.push(ev("Normal", "Resumed", "Job resumed"));
        }
        result = owner_loop::write_status(sim, &jobs, &job, after["status"].clone(), MANAGER).await;
    }
    owner_loop::record(sim, events).await;
    result.map(|()| plan.requeue)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn t(s: &str) -> OffsetDateTime {
        parse_time(s).expect("time")
    }

    fn job(spec: Value) -> Value {
        json!({"metadata": {"name": "pi", "namespace": "ns", "uid": "j1"},
            "spec": merge(json!({"parallelism": 1, "backoffLimit": 6, "template": {
                "metadata": {"labels": {"batch.kubernetes.io/job-name": "pi"}},
                "spec": {"restartPolicy": "Never", "containers": [{"name": "c", "image": "busybox"}]}
            }}), spec)})
    }

    fn merge(mut a: Value, b: Value) -> Value {
        if let (Some(a), Value::Object(b)) = (a.as_object_mut(), b) {
            a.extend(b);
        }
        a
    }

    fn pod(name: &str, phase: &str, index: Option<i64>) -> Value {
        let mut p = json!({"metadata": {"name": name, "creationTimestamp": "2026-01-01T00:00:00Z",
            "ownerReferences": [{"uid": "j1", "controller": true, "kind": "Job", "name": "pi"}]},
            "status": {"phase": phase}});
        if let Some(i) = index {
            p["metadata"]["annotations"] = json!({COMPLETION_INDEX: i.to_string()});
        }
        p
    }

    const NOW: &str = "2026-01-01T00:01:00Z";

    #[test]
    fn starts_parallelism_pods_bounded_by_completions() {
        let j = job(json!({"completions": 4, "parallelism": 2}));
        let p = plan(&j, &[], t(NOW));
        assert_eq!(p.create.len(), 2);
        assert_eq!(p.status["active"], 2);
        assert_eq!(p.status["startTime"], NOW);
        assert_eq!(p.create[0]["metadata"]["generateName"], "pi-");
        assert!(template::is_controlled_by(&p.create[0], "j1"));
        // Three succeeded, one running: nothing more to start.
        let pods = [
            pod("a", "Succeeded", None),
            pod("b", "Succeeded", None),
            pod("c", "Succeeded", None),
            pod("d", "Running", None),
        ];
        let p = plan(&j, &pods, t(NOW));
        assert!(p.create.is_empty() && p.delete.is_empty());
        assert_eq!(p.status["succeeded"], 3);
        assert_eq!(p.status["active"], 1);
    }

    #[test]
    fn completes_with_success_criteria_met_then_complete() {
        let j = job(json!({"completions": 2, "parallelism": 2}));
        let pods = [pod("a", "Succeeded", None), pod("b", "Succeeded", None)];
        let p = plan(&j, &pods, t(NOW));
        let types: Vec<&str> = p.status["conditions"]
            .as_array()
            .expect("conditions")
            .iter()
            .map(|c| c["type"].as_str().unwrap_or_default())
            .collect();
        assert_eq!(types, ["SuccessCriteriaMet", "Complete"]);
        assert_eq!(p.status["conditions"][1]["reason"], "CompletionsReached");
        assert_eq!(p.status["completionTime"], NOW);
        assert_eq!(p.status["succeeded"], 2);
        assert!(p.status.get("active").is_none());
        // Finished: nothing more happens.
        let mut done = j.clone();
        done["status"] = p.status.clone();
        let again = plan(&done, &pods, t("2026-01-01T00:05:00Z"));
        assert_eq!(again.status, p.status);
        assert!(again.create.is_empty());
    }

    #[test]
    fn failures_back_off_then_exceed_the_limit() {
        let j = job(json!({"backoffLimit": 1}));
        let failed = pod("a", "Failed", None);
        // One failure: replaced only after 10 s.
        let p = plan(&j, std::slice::from_ref(&failed), t("2026-01-01T00:00:05Z"));
        assert!(p.create.is_empty());
        assert_eq!(p.requeue.map(|d| d.as_secs()), Some(5));
        let p = plan(&j, std::slice::from_ref(&failed), t("2026-01-01T00:00:10Z"));
        assert_eq!(p.create.len(), 1);
        assert_eq!(p.status["failed"], 1);
        // Two failures > backoffLimit 1: FailureTarget, then Failed.
        let pods = [failed, pod("b", "Failed", None)];
        let p = plan(&j, &pods, t(NOW));
        let conds = p.status["conditions"].as_array().expect("conditions");
        assert_eq!(conds[0]["type"], "FailureTarget");
        assert_eq!(conds[1]["type"], "Failed");
        assert_eq!(conds[1]["reason"], "BackoffLimitExceeded");
        assert_eq!(
            conds[1]["message"],
            "Job has reached the specified backoff limit"
        );
        assert!(p.status.get("completionTime").is_none());
        assert!(is_finished(&json!({"status": p.status})));
    }

    #[test]
    fn deadline_fails_and_deletes_active_pods() {
        let mut j = job(json!({"activeDeadlineSeconds": 30}));
        j["status"] = json!({"startTime": "2026-01-01T00:00:00Z"});
        let running = [pod("a", "Running", None)];
        let p = plan(&j, &running, t("2026-01-01T00:00:20Z"));
        assert!(p.delete.is_empty());
        assert_eq!(p.requeue.map(|d| d.as_secs()), Some(10));
        let p = plan(&j, &running, t("2026-01-01T00:00:30Z"));
        assert_eq!(p.delete, ["a"]);
        assert_eq!(p.status["conditions"][1]["reason"], "DeadlineExceeded");
    }

    #[test]
    fn indexed_jobs_fill_the_lowest_pending_indexes() {
        let j = job(json!({"completions": 5, "parallelism": 3, "completionMode": "Indexed"}));
        let pods = [
            pod("a", "Succeeded", Some(0)),
            pod("b", "Running", Some(2)),
            pod("c", "Succeeded", Some(3)),
        ];
        let p = plan(&j, &pods, t(NOW));
        assert_eq!(p.status["completedIndexes"], "0,3");
        let idx: Vec<&str> = p
            .create
            .iter()
            .map(|c| {
                c["metadata"]["annotations"][COMPLETION_INDEX]
                    .as_str()
                    .unwrap_or_default()
            })
            .collect();
        assert_eq!(idx, ["1", "4"]);
        let c = &p.create[0];
        assert_eq!(c["metadata"]["generateName"], "pi-1-");
        assert_eq!(c["metadata"]["labels"][COMPLETION_INDEX], "1");
        assert_eq!(c["spec"]["hostname"], "pi-1");
        assert_eq!(
            c["spec"]["containers"][0]["env"][0]["name"],
            "JOB_COMPLETION_INDEX"
        );
    }

    #[test]
    fn suspend_deletes_active_pods_and_resume_restarts_the_clock() {
        let j = job(json!({"suspend": true}));
        let p = plan(&j, &[pod("a", "Running", None)], t(NOW));
        assert_eq!(p.delete, ["a"]);
        assert_eq!(p.status["conditions"][0]["type"], "Suspended");
        assert!(p.status.get("startTime").is_none());
        let mut resumed = job(json!({"suspend": false}));
        resumed["status"] = p.status;
        let p = plan(&resumed, &[], t("2026-01-01T00:02:00Z"));
        assert_eq!(p.status["conditions"][0]["status"], "False");
        assert_eq!(p.status["conditions"][0]["reason"], "JobResumed");
        assert_eq!(p.status["startTime"], "2026-01-01T00:02:00Z");
        assert_eq!(p.create.len(), 1);
    }

    #[test]
    fn work_queue_jobs_finish_after_a_success_and_no_active_pods() {
        let j = job(json!({"parallelism": 2}));
        let p = plan(
            &j,
            &[pod("a", "Succeeded", None), pod("b", "Running", None)],
            t(NOW),
        );
        assert!(p.create.is_empty());
        assert!(!is_finished(&json!({"status": p.status})));
        let p = plan(
            &j,
            &[pod("a", "Succeeded", None), pod("b", "Succeeded", None)],
            t(NOW),
        );
        assert!(has_condition(&json!({"status": p.status}), "Complete"));
    }

    #[test]
    fn finished_jobs_expire_after_their_ttl() {
        let mut j = job(json!({"ttlSecondsAfterFinished": 30}));
        j["status"] = json!({"conditions": [{"type": "Complete", "status": "True",
            "lastTransitionTime": "2026-01-01T00:00:00Z"}]});
        let p = plan(&j, &[], t("2026-01-01T00:00:20Z"));
        assert!(!p.expired);
        assert_eq!(p.requeue.map(|d| d.as_secs()), Some(10));
        assert!(plan(&j, &[], t("2026-01-01T00:00:30Z")).expired);
        assert!(!plan(&job(json!({})), &[], t(NOW)).expired);
        assert!(is_managed(&job(json!({}))));
        assert!(is_managed(&job(json!({"managedBy": MANAGED_BY}))));
        assert!(!is_managed(&job(
            json!({"managedBy": "kueue.x-k8s.io/multikueue"})
        )));
    }

    #[test]
    fn index_ranges_format_as_upstream() {
        let s: BTreeSet<i64> = [0, 1, 2, 4, 6, 7].into_iter().collect();
        assert_eq!(format_indexes(&s), "0-2,4,6-7");
        assert_eq!(format_indexes(&BTreeSet::new()), "");
        assert_eq!(failure_backoff(1), Duration::from_secs(10));
        assert_eq!(failure_backoff(3), Duration::from_secs(40));
        assert_eq!(failure_backoff(30), Duration::from_secs(360));
    }

    proptest::proptest! {
        /// Whatever its Pods, a sync never leaves more than `parallelism`
        /// Pods running, nor more than the completions still needed.
        #[test]
        fn never_more_than_parallelism(
            completions in 1i64..8,
            parallelism in 0i64..5,
            phases in proptest::collection::vec(0u8..4, 0..10),
            indexed in proptest::bool::ANY,
        ) {
            let mode = if indexed { "Indexed" } else { "NonIndexed" };
            let j = job(json!({"completions": completions, "parallelism": parallelism,
                "completionMode": mode, "backoffLimit": 100}));
            let pods: Vec<Value> = phases
                .iter()
                .enumerate()
                .map(|(n, ph)| {
                    let phase = ["Pending", "Running", "Succeeded", "Failed"][usize::from(*ph)];
                    let idx = i64::try_from(n).unwrap_or(0) % completions;
                    pod(&format!("p{n}"), phase, indexed.then_some(idx))
                })
                .collect();
            let p = plan(&j, &pods, t(NOW));
            let active_after = pods
                .iter()
                .filter(|x| template::is_active(x))
                .filter(|x| !p.delete.iter().any(|d| d == object::name(x)))
                .count()
                + p.create.len();
            let succeeded: Vec<&Value> =
                pods.iter().filter(|x| template::phase(x) == "Succeeded").collect();
            let left = if indexed {
                let done: BTreeSet<i64> = succeeded.iter().filter_map(|x| pod_index(x)).collect();
                completions - count(done.len())
            } else {
                completions - count(succeeded.len())
            };
            proptest::prop_assert!(count(active_after) <= parallelism.min(left.max(0)));
            let reported = p.status.get("active").and_then(Value::as_i64).unwrap_or(0);
            proptest::prop_assert_eq!(reported, count(active_after));
        }
    }
}
