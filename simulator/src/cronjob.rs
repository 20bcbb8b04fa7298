//! The CronJob controller, as kube-controller-manager v1.33's
//! (pkg/controller/cronjob, the v2 controller):
//! - Keeps in `status.active` the Jobs it created that still run; a Job
//!   leaving it successfully sets `status.lastSuccessfulTime`. Jobs it did
//!   not create are not adopted (as upstream).
//! - At each activation of `spec.schedule` ([`schedule`], in
//!   `spec.timeZone` or a `CRON_TZ=` prefix, else UTC) creates the Job
//!   `<cronjob>-<minutes since the epoch>` from `spec.jobTemplate`,
//!   annotated `batch.kubernetes.io/cronjob-scheduled-timestamp`, unless
//!   suspended, later than `startingDeadlineSeconds`, or `Forbid` with a
//!   Job still running (`Replace` deletes the running ones first);
//!   `status.lastScheduleTime` records the activation.
//! - Deletes finished Jobs beyond `successfulJobsHistoryLimit` /
//!   `failedJobsHistoryLimit`, oldest first.
//! - Looks again at the next activation.

pub mod schedule;

use std::time::Duration;

use chrono::{DateTime, Utc};
use chrono_tz::Tz;
use serde_json::{Value, json};

use self::schedule::Schedule;
use super::Sim;
use super::job;
use super::owner_loop::{self, int, parse_time};
use super::template;
use skein_apiserver::controllers::informer::ObjectKey;
use skein_apiserver::registry::{Propagation, object};
use skein_apiserver::status::ApiError;

const MANAGER: &str = "cronjob-controller";

/// The annotation on a Job with the activation it was created for.
pub const SCHEDULED_TIMESTAMP: &str = "batch.kubernetes.io/cronjob-scheduled-timestamp";

/// What one sync of a CronJob does.
#[derive(Debug, Default)]
pub struct CronPlan {
    /// A Job to create (at most one a sync, as upstream).
    pub create: Option<Value>,
    /// Jobs to delete (Background propagation): replaced or beyond the
    /// history limits.
    pub delete: Vec<String>,
    /// The new status.
    pub status: Value,
    /// When to look again (the next activation).
    pub requeue: Option<Duration>,
}

fn to_chrono(t: time::OffsetDateTime) -> DateTime<Utc> {
    DateTime::from_timestamp(t.unix_timestamp(), t.nanosecond()).unwrap_or_default()
}

fn rfc3339(t: DateTime<Utc>) -> String {
    t.to_rfc3339_opts(chrono::SecondsFormat::Secs, true)
}

fn time_at(v: &Value, pointer: &str) -> Option<DateTime<Utc>> {
    v.pointer(pointer)
        .and_then(Value::as_str)
        .and_then(parse_time)
        .map(to_chrono)
}

/// The zone of `spec.timeZone` (UTC when unset); `None` when unknown.
pub fn zone_of(cj: &Value) -> Option<Tz> {
    match cj.pointer("/spec/timeZone").and_then(Value::as_str) {
        None | Some("") => Some(Tz::UTC),
        Some(name) => name.parse().ok(),
    }
}

/// The Job name for an activation: `<cronjob>-<minutes since the epoch>`.
pub fn job_name(cj: &Value, scheduled: DateTime<Utc>) -> String {
    format!("{}-{}", object::name(cj), scheduled.timestamp() / 60)
}

/// The Job of `cj` for the activation `scheduled` (upstream's
/// `getJobFromTemplate2`).
pub fn new_job(cj: &Value, scheduled: DateTime<Utc>, zone: Tz) -> Value {
    let template = cj
        .pointer("/spec/jobTemplate")
        .cloned()
        .unwrap_or_else(|| json!({}));
    let mut annotations = template
        .pointer("/metadata/annotations")
        .and_then(Value::as_object)
        .cloned()
        .unwrap_or_default();
    let local = scheduled
        .with_timezone(&zone)
        .to_rfc3339_opts(chrono::SecondsFormat::Secs, true);
    annotations.insert(SCHEDULED_TIMESTAMP.into(), json!(local));
    let mut meta = json!({
        "name": job_name(cj, scheduled),
        "namespace": object::namespace(cj),
        "annotations": annotations,
        "ownerReferences": [template::controller_ref(cj, "batch/v1", "CronJob")],
    });
    if let Some(l) = template.pointer("/metadata/labels") {
        meta["labels"] = l.clone();
    }
    json!({
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": meta,
        "spec": template.get("spec").cloned().unwrap_or_else(|| json!({})),
    })
}

fn reference(job: &Value) -> Value {
    json!({
        "apiVersion": "batch/v1",
        "kind": "Job",
        "name": object::name(job),
        "namespace": object::namespace(job),
        "uid": object::uid(job),
        "resourceVersion": job.pointer("/metadata/resourceVersion").cloned().unwrap_or(json!("")),
    })
}

/// What [`next_schedule`] decides.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct NextSchedule {
    /// The activation to start a Job for now: the latest one after `last`
    /// and at or before `now`, unless missed by more than
    /// `startingDeadlineSeconds`.
    pub due: Option<DateTime<Utc>>,
    /// The first activation after `now` (when to look again).
    pub wake: Option<DateTime<Utc>>,
}

/// The schedule decision of the CronJob spec in `cj` (its `schedule`,
/// `timeZone` and `startingDeadlineSeconds`) after the last activation
/// `last` (or its creation), at `now`.
///
/// # Errors
///
/// An unknown time zone or a malformed schedule (the reason as upstream
/// words it).
pub fn next_schedule(
    cj: &Value,
    last: DateTime<Utc>,
    now: DateTime<Utc>,
) -> Result<NextSchedule, String> {
    let zone = zone_of(cj).ok_or_else(|| {
        let tz = cj
            .pointer("/spec/timeZone")
            .and_then(Value::as_str)
            .unwrap_or_default();
        format!("invalid timeZone: {tz:?}")
    })?;
    let text = cj
        .pointer("/spec/schedule")
        .and_then(Value::as_str)
        .unwrap_or_default();
    let sched =
        Schedule::parse(text).map_err(|e| format!("unparseable schedule: {text:?} : {e}"))?;
    let deadline = cj
        .pointer("/spec/startingDeadlineSeconds")
        .and_then(Value::as_i64);
    let (recent, _missed) = schedule::most_recent(&sched, zone, last, now, deadline);
    let due = recent.filter(|s| deadline.is_none_or(|d| *s + chrono::Duration::seconds(d) >= now));
    Ok(NextSchedule {
        due,
        wake: sched.next(now, zone),
    })
}

/// One sync of `cj` with its Jobs `jobs` at `now`. Pure.
pub fn plan(cj: &Value, jobs: &[Value], now: DateTime<Utc>) -> CronPlan {
    let mut out = CronPlan::default();
    let mut status = cj
        .get("status")
        .and_then(Value::as_object)
        .cloned()
        .unwrap_or_default();
    // The active list keeps the Jobs it lists that still run; those that
    // finished leave it, a success setting lastSuccessfulTime. Jobs it never
    // listed (e.g. `kubectl create job --from=cronjob/…`) are not adopted,
    // as upstream.
    let listed: Vec<&str> = cj
        .pointer("/status/active")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(|r| r.get("uid").and_then(Value::as_str))
        .collect();
    let ours: Vec<&Value> = jobs
        .iter()
        .filter(|j| listed.contains(&object::uid(j)))
        .collect();
    let mut active: Vec<&Value> = ours
        .iter()
        .copied()
        .filter(|j| !job::is_finished(j))
        .collect();
    active.sort_by_key(|j| object::name(j).to_owned());
    let mut last_success = time_at(cj, "/status/lastSuccessfulTime");
    for j in ours.iter().filter(|j| job::has_condition(j, "Complete")) {
        if let Some(done) = time_at(j, "/status/completionTime")
            && last_success.is_none_or(|l| done > l)
        {
            last_success = Some(done);
        }
    }
    if let Some(l) = last_success {
        status.insert("lastSuccessfulTime".into(), json!(rfc3339(l)));
    }
    // History limits.
    let limit = |p: &str, d: i64| usize::try_from(int(cj, p, d).max(0)).unwrap_or(0);
    for (cond, max) in [
        ("Complete", limit("/spec/successfulJobsHistoryLimit", 3)),
        ("Failed", limit("/spec/failedJobsHistoryLimit", 1)),
    ] {
        let mut done: Vec<&Value> = jobs
            .iter()
            .filter(|j| job::has_condition(j, cond))
            .collect();
        done.sort_by_key(|j| {
            (
                j.pointer("/status/startTime")
                    .and_then(Value::as_str)
                    .unwrap_or_default()
                    .to_owned(),
                object::name(j).to_owned(),
            )
        });
        let excess = done.len().saturating_sub(max);
        out.delete
            .extend(done.iter().take(excess).map(|j| object::name(j).to_owned()));
    }

    let finish = |mut out: CronPlan, status: serde_json::Map<String, Value>, active: &[&Value]| {
        let mut status = status;
        if active.is_empty() {
            status.remove("active");
        } else {
            status.insert(
                "active".into(),
                active.iter().map(|j| reference(j)).collect(),
            );
        }
        out.status = Value::Object(status);
        out
    };
    if cj.pointer("/spec/suspend").and_then(Value::as_bool) == Some(true) {
        return finish(out, status, &active);
    }
    let last = time_at(cj, "/status/lastScheduleTime")
        .or_else(|| time_at(cj, "/metadata/creationTimestamp"))
        .unwrap_or(now);
    let Ok(next) = next_schedule(cj, last, now) else {
        // Unknown zone or bad schedule: nothing to do until the spec changes.
        return finish(out, status, &active);
    };
    out.requeue = next
        .wake
        .map(|n| (n - now).to_std().unwrap_or_default() + Duration::from_millis(100));
    let Some(scheduled) = next.due else {
        return finish(out, status, &active);
    };
    let name = job_name(cj, scheduled);
    if jobs.iter().any(|j| object::name(j) == name) {
        // Already created (the status write was lost): just record it.
        status.insert("lastScheduleTime".into(), json!(rfc3339(scheduled)));
        return finish(out, status, &active);
    }
    match cj
        .pointer("/spec/concurrencyPolicy")
        .and_then(Value::as_str)
    {
        Some("Forbid") if !active.is_empty() => return finish(out, status, &active),
        Some("Replace") => {
            out.delete
                .extend(active.iter().map(|j| object::name(j).to_owned()));
            active.clear();
        }
        _ => {}
    }
    let created = new_job(cj, scheduled, zone_of(cj).unwrap_or(Tz::UTC));
    status.insert("lastScheduleTime".into(), json!(rfc3339(scheduled)));
    out.create = Some(created);
    finish(out, status, &active)
}

/// Runs the CronJob controller until the runtime shuts down.
pub async fn run(sim: Sim) {
    let Some((cronjobs, jobs)) = sim.informer_pair(
        ("batch", "v1", "cronjobs"),
        ("batch", "v1", "jobs"),
        "cronjob controller cannot start",
    ) else {
        return;
    };
    let related = vec![(jobs, owner_loop::controller_of("CronJob"))];
    owner_loop::drive(
        "cronjob",
        cronjobs,
        related,
        Duration::from_secs(10),
        |key| {
            let sim = sim.clone();
            async move { sync(&sim, &key).await }
        },
    )
    .await;
}

async fn sync(sim: &Sim, key: &ObjectKey) -> Result<Option<Duration>, ApiError> {
    let cronjobs = Sim::resource("batch", "v1", "cronjobs")?;
    let jobs_res = Sim::resource("batch", "v1", "jobs")?;
    let Some(cj) = owner_loop::fresh(sim, &cronjobs, key).await? else {
        return Ok(None);
    };
    if object::is_deleting(&cj) {
        return Ok(None);
    }
    let jobs = owner_loop::owned(sim, &jobs_res, &key.namespace, object::uid(&cj)).await?;
    let mut plan = plan(&cj, &jobs, to_chrono(owner_loop::now()));
    let ev = |type_: &str, reason: &str, message: String| {
        owner_loop::event(
            &cj,
            "batch/v1",
            "CronJob",
            type_,
            reason,
            &message,
            MANAGER,
            owner_loop::now(),
        )
    };
    let mut events = Vec::new();
    // Jobs leaving the active list.
    let still: Vec<&str> = plan.status["active"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|r| r["uid"].as_str())
        .collect();
    for j in &jobs {
        let was = cj
            .pointer("/status/active")
            .and_then(Value::as_array)
            .is_some_and(|a| a.iter().any(|r| r["uid"].as_str() == Some(object::uid(j))));
        if was && !still.contains(&object::uid(j)) && job::is_finished(j) {
            let cond = if job::has_condition(j, "Complete") {
                "Complete"
            } else {
                "Failed"
            };
            events.push(ev(
                "Normal",
                "SawCompletedJob",
                format!("Saw completed job: {}, condition: {cond}", object::name(j)),
            ));
        }
    }
    let mut result = Ok(());
    for name in &plan.delete {
        let background = Some(Propagation::Background);
        result = owner_loop::delete(sim, &jobs_res, &key.namespace, name, background).await;
        if result.is_err() {
            break;
        }
        events.push(ev(
            "Normal",
            "SuccessfulDelete",
            format!("Deleted job {name}"),
        ));
    }
    if result.is_ok()
        && let Some(new) = plan.create.take()
    {
        match owner_loop::create(sim, &jobs_res, &key.namespace, new, MANAGER).await {
            Ok(Some(created)) => {
                let mut list = plan.status["active"]
                    .as_array()
                    .cloned()
                    .unwrap_or_default();
                list.push(reference(&created));
                plan.status["active"] = Value::Array(list);
                events.push(ev(
                    "Normal",
                    "SuccessfulCreate",
                    format!("Created job {}", object::name(&created)),
                ));
            }
            Ok(None) => {}
            Err(e) => result = Err(e),
        }
    }
    owner_loop::record(sim, events).await;
    result?;
    owner_loop::write_status(sim, &cronjobs, &cj, plan.status, MANAGER).await?;
    Ok(plan.requeue)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn t(s: &str) -> DateTime<Utc> {
        DateTime::parse_from_rfc3339(s)
            .expect("time")
            .with_timezone(&Utc)
    }

    fn cj(spec: Value) -> Value {
        let mut c = json!({"metadata": {"name": "hello", "namespace": "ns", "uid": "c1",
                "creationTimestamp": "2026-01-01T10:00:00Z"},
            "spec": {"schedule": "*/1 * * * *", "concurrencyPolicy": "Allow",
                "jobTemplate": {"metadata": {"labels": {"team": "a"}},
                    "spec": {"template": {"spec": {"restartPolicy": "OnFailure",
                        "containers": [{"name": "c", "image": "busybox"}]}}}}}});
        if let (Some(a), Value::Object(b)) = (c["spec"].as_object_mut(), spec) {
            a.extend(b);
        }
        c
    }

    fn job(name: &str, cond: Option<&str>, start: &str) -> Value {
        let mut j = json!({"metadata": {"name": name, "namespace": "ns", "uid": format!("u-{name}")},
            "status": {"startTime": start}});
        if let Some(c) = cond {
            j["status"]["conditions"] = json!([{"type": c, "status": "True"}]);
            j["status"]["completionTime"] = json!(start);
        }
        j
    }

    #[test]
    fn creates_the_job_of_the_latest_activation() {
        let c = cj(json!({}));
        let p = plan(&c, &[], t("2026-01-01T10:01:30Z"));
        let created = p.create.expect("a job");
        let minutes = t("2026-01-01T10:01:00Z").timestamp() / 60;
        assert_eq!(created["metadata"]["name"], format!("hello-{minutes}"));
        assert_eq!(
            created["metadata"]["annotations"][SCHEDULED_TIMESTAMP],
            "2026-01-01T10:01:00Z"
        );
        assert_eq!(created["metadata"]["labels"]["team"], "a");
        assert!(template::is_controlled_by(&created, "c1"));
        assert_eq!(p.status["lastScheduleTime"], "2026-01-01T10:01:00Z");
        assert_eq!(p.requeue.map(|d| d.as_secs()), Some(30));
        // Before the first activation: nothing, wake at it.
        let p = plan(&c, &[], t("2026-01-01T10:00:20Z"));
        assert!(p.create.is_none());
        assert_eq!(p.requeue.map(|d| d.as_secs()), Some(40));
    }

    #[test]
    fn the_scheduled_timestamp_is_in_the_time_zone() {
        let c = cj(json!({"schedule": "0 9 * * *", "timeZone": "Asia/Tokyo"}));
        let p = plan(&c, &[], t("2026-01-02T00:00:10Z"));
        let created = p.create.expect("a job");
        assert_eq!(
            created["metadata"]["annotations"][SCHEDULED_TIMESTAMP],
            "2026-01-02T09:00:00+09:00"
        );
        let bad = cj(json!({"timeZone": "Mars/Olympus"}));
        assert!(plan(&bad, &[], t("2026-01-01T10:05:00Z")).create.is_none());
    }

    #[test]
    fn next_schedule_decides_from_the_spec() {
        let c = cj(json!({"schedule": "0 * * * *", "startingDeadlineSeconds": 300}));
        let last = t("2026-01-01T10:00:00Z");
        let n = next_schedule(&c, last, t("2026-01-01T11:04:00Z")).expect("valid");
        assert_eq!(n.due, Some(t("2026-01-01T11:00:00Z")));
        assert_eq!(n.wake, Some(t("2026-01-01T12:00:00Z")));
        let late = next_schedule(&c, last, t("2026-01-01T11:06:00Z")).expect("valid");
        assert_eq!(late.due, None);
        let early = next_schedule(&c, last, t("2026-01-01T10:30:00Z")).expect("valid");
        assert_eq!(early.due, None);
        let bad = cj(json!({"schedule": "61 * * * *"}));
        assert!(next_schedule(&bad, last, last).is_err());
    }

    #[test]
    fn concurrency_policies() {
        let running = [job("hello-1", None, "2026-01-01T10:00:00Z")];
        let now = t("2026-01-01T10:01:30Z");
        let listed = |spec: Value| {
            let mut c = cj(spec);
            c["status"] = json!({"active": [{"name": "hello-1", "uid": "u-hello-1"}]});
            c
        };
        // A Job the CronJob did not create does not count.
        let manual = plan(&cj(json!({"concurrencyPolicy": "Forbid"})), &running, now);
        assert!(manual.create.is_some());
        let forbid = plan(
            &listed(json!({"concurrencyPolicy": "Forbid"})),
            &running,
            now,
        );
        assert!(forbid.create.is_none());
        assert_eq!(forbid.status["active"][0]["name"], "hello-1");
        let replace = plan(
            &listed(json!({"concurrencyPolicy": "Replace"})),
            &running,
            now,
        );
        assert!(replace.create.is_some());
        assert_eq!(replace.delete, ["hello-1"]);
        let allow = plan(&listed(json!({})), &running, now);
        assert!(allow.create.is_some() && allow.delete.is_empty());
    }

    #[test]
    fn suspend_and_starting_deadline_skip() {
        let now = t("2026-01-01T10:01:30Z");
        assert!(
            plan(&cj(json!({"suspend": true})), &[], now)
                .create
                .is_none()
        );
        // The activation at 10:01 is 30 s old: too late for a 10 s deadline.
        assert!(
            plan(&cj(json!({"startingDeadlineSeconds": 10})), &[], now)
                .create
                .is_none()
        );
        assert!(
            plan(&cj(json!({"startingDeadlineSeconds": 60})), &[], now)
                .create
                .is_some()
        );
    }

    #[test]
    fn history_limits_delete_the_oldest_finished_jobs() {
        let jobs = [
            job("a", Some("Complete"), "2026-01-01T10:01:00Z"),
            job("b", Some("Complete"), "2026-01-01T10:02:00Z"),
            job("c", Some("Failed"), "2026-01-01T10:03:00Z"),
            job("d", Some("Failed"), "2026-01-01T10:04:00Z"),
        ];
        let mut c = cj(json!({"successfulJobsHistoryLimit": 1, "failedJobsHistoryLimit": 1}));
        c["status"] = json!({"active": [{"uid": "u-a"}, {"uid": "u-b"}]});
        let p = plan(&c, &jobs, t("2026-01-01T10:04:30Z"));
        assert_eq!(p.delete, ["a", "c"]);
        assert_eq!(p.status["lastSuccessfulTime"], "2026-01-01T10:02:00Z");
        assert!(p.status.get("active").is_none());
    }

    #[test]
    fn an_existing_job_for_the_activation_is_not_created_again() {
        let minutes = t("2026-01-01T10:01:00Z").timestamp() / 60;
        let jobs = [job(
            &format!("hello-{minutes}"),
            None,
            "2026-01-01T10:01:00Z",
        )];
        let p = plan(&cj(json!({})), &jobs, t("2026-01-01T10:01:30Z"));
        assert!(p.create.is_none());
        assert_eq!(p.status["lastScheduleTime"], "2026-01-01T10:01:00Z");
    }
}
