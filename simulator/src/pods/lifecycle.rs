//! A bound Pod's simulated life, as a pure state machine over its stored
//! status: [`step`] says what the kubelet would write next at `now`, or how
//! long until something is due.
//!
//! The paths (t0 = when the Pod started Running):
//! - plain: Running at once (containers running, not ready), Ready at
//!   t0 + ready delay;
//! - never-ready: Running, never Ready;
//! - fail, Job-owned or `restartPolicy: Never`: Failed at t0 + ready delay
//!   (containers terminated, exit code 1, reason `Error`);
//! - fail, otherwise: from t0 + ready delay the containers crash and wait
//!   in `CrashLoopBackOff`, restarting after kubelet's back-off (10 s
//!   doubling, at most 5 minutes), `restartCount` growing;
//! - Job-owned without fail: Ready at t0 + ready delay (when that is before
//!   the end), Succeeded at t0 + job duration (exit code 0, `Completed`).
//!
//! A Pod being deleted is deleted once no finalizer holds it; while one
//! does, its containers are killed (exit code 137) and it is Failed, as the
//! kubelet gives deleted Pods a terminal phase. A finished Pod (Succeeded,
//! Failed) never changes again.

use std::time::Duration;

use serde_json::{Map, Value, json};
use time::OffsetDateTime;

use super::set_condition;
use crate::nodes::timestamp;
use skein_apiserver::registry::object;
use skein_workloads::template;

/// The longest crash-loop back-off (kubelet's `MaxContainerBackOff`).
pub const MAX_BACKOFF: Duration = Duration::from_secs(300);

/// The first crash-loop back-off (kubelet's initial back-off).
pub const FIRST_BACKOFF: Duration = Duration::from_secs(10);

/// What the kubelet knows about one Pod besides the Pod itself.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Facts {
    /// The Node's InternalIP.
    pub host_ip: String,
    /// The Pod's IP (from the Node's Pod CIDR).
    pub pod_ip: String,
    /// The never-ready annotation is on the Pod or its controller.
    pub never_ready: bool,
    /// The fail annotation is on the Pod or its controller.
    pub fail: bool,
    /// The Pod's controller is a Job.
    pub job: bool,
    /// When the Pod started Running, if it did (precise when known,
    /// else its `status.startTime`).
    pub started: Option<OffsetDateTime>,
    /// `--sim-pod-ready-delay`.
    pub ready_delay: Duration,
    /// `--sim-job-duration`.
    pub job_duration: Duration,
}

/// The kubelet's next move for a Pod.
#[derive(Clone, Debug, PartialEq)]
pub enum Step {
    /// Nothing will happen (finished, never-ready, held by finalizers).
    Idle,
    /// Delete the Pod (grace period 0): it is being deleted and nothing
    /// holds it.
    Delete,
    /// Write this status.
    Write(Value),
    /// Look again after this long.
    Wait(Duration),
}

/// The kubelet's crash-loop back-off before restart number `restarts + 1`.
pub fn backoff(restarts: u64) -> Duration {
    let exp = u32::try_from(restarts.saturating_sub(1).min(16)).unwrap_or(16);
    FIRST_BACKOFF
        .saturating_mul(2u32.saturating_pow(exp))
        .min(MAX_BACKOFF)
}

/// Parses an RFC 3339 timestamp.
pub fn parse_time(s: &str) -> Option<OffsetDateTime> {
    OffsetDateTime::parse(s, &time::format_description::well_known::Rfc3339).ok()
}

/// `pod`'s `status.startTime`.
pub fn start_time(pod: &Value) -> Option<OffsetDateTime> {
    pod.pointer("/status/startTime")
        .and_then(Value::as_str)
        .and_then(parse_time)
}

fn restart_policy(pod: &Value) -> &str {
    pod.pointer("/spec/restartPolicy")
        .and_then(Value::as_str)
        .unwrap_or("Always")
}

fn containers(pod: &Value, field: &str) -> Vec<Value> {
    pod.pointer(&format!("/spec/{field}"))
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default()
}

fn str_of<'a>(v: &'a Value, field: &str) -> &'a str {
    v.get(field).and_then(Value::as_str).unwrap_or_default()
}

/// The image as the container runtime reports it (`nginx` →
/// `docker.io/library/nginx:latest`).
pub fn normalized_image(image: &str) -> String {
    let (name, tagged) = match image.rsplit_once('@') {
        Some((n, _)) => (n, true),
        None => (image, false),
    };
    let first = name.split('/').next().unwrap_or_default();
    let has_host =
        name.contains('/') && (first.contains('.') || first.contains(':') || first == "localhost");
    let mut full = if has_host {
        name.to_owned()
    } else if name.contains('/') {
        format!("docker.io/{name}")
    } else {
        format!("docker.io/library/{name}")
    };
    let last = full.rsplit('/').next().unwrap_or_default();
    if !tagged && !last.contains(':') {
        full.push_str(":latest");
    }
    if tagged {
        return image.to_owned();
    }
    full
}

fn hex_digest(text: &str) -> String {
    skein_apiserver::registry::sha256(text.as_bytes())
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// The image's digest reference, as `imageID` shows it.
pub fn image_id(image: &str) -> String {
    let normalized = normalized_image(image);
    let repo = normalized
        .split('@')
        .next()
        .map(|n| match n.rsplit_once(':') {
            Some((r, tag)) if !tag.contains('/') => r.to_owned(),
            _ => n.to_owned(),
        })
        .unwrap_or_default();
    format!("{repo}@sha256:{}", hex_digest(&normalized))
}

/// The container's runtime ID for its `restarts`-th run.
fn container_id(pod: &Value, name: &str, restarts: u64) -> String {
    format!(
        "containerd://{}",
        hex_digest(&format!("{}/{name}/{restarts}", object::uid(pod)))
    )
}

/// One container's status in `state`.
fn container_status(
    pod: &Value,
    c: &Value,
    state: Value,
    last_state: Value,
    ready: bool,
    started: Option<bool>,
    restarts: u64,
) -> Value {
    let name = str_of(c, "name");
    let image = str_of(c, "image");
    let mut s = json!({
        "name": name,
        "state": state,
        "lastState": last_state,
        "ready": ready,
        "restartCount": restarts,
        "image": normalized_image(image),
        "imageID": image_id(image),
        "containerID": container_id(pod, name, restarts),
    });
    if let Some(started) = started {
        s["started"] = json!(started);
    }
    s
}

fn terminated(exit_code: i32, reason: &str, started: &str, finished: &str, id: &str) -> Value {
    json!({"terminated": {
        "exitCode": exit_code,
        "reason": reason,
        "startedAt": started,
        "finishedAt": finished,
        "containerID": id,
    }})
}

/// Init containers ran and completed (a sidecar keeps running).
fn init_statuses(pod: &Value, at: &str) -> Vec<Value> {
    containers(pod, "initContainers")
        .iter()
        .map(|c| {
            let id = container_id(pod, str_of(c, "name"), 0);
            if str_of(c, "restartPolicy") == "Always" {
                container_status(
                    pod,
                    c,
                    json!({"running": {"startedAt": at}}),
                    json!({}),
                    true,
                    Some(true),
                    0,
                )
            } else {
                container_status(
                    pod,
                    c,
                    terminated(0, "Completed", at, at, &id),
                    json!({}),
                    false,
                    Some(false),
                    0,
                )
            }
        })
        .collect()
}

fn names(pod: &Value) -> String {
    containers(pod, "containers")
        .iter()
        .map(|c| str_of(c, "name").to_owned())
        .collect::<Vec<_>>()
        .join(" ")
}

/// Why the Pod's readiness gates hold it back (kubelet's message for the
/// first gate whose condition is missing or not True), if they do.
pub fn unready_gate(pod: &Value) -> Option<String> {
    let gates = pod
        .pointer("/spec/readinessGates")
        .and_then(Value::as_array)?;
    gates.iter().find_map(|g| {
        let t = g.get("conditionType").and_then(Value::as_str)?;
        match template::condition(pod, t) {
            None => Some(format!(
                "corresponding condition of pod readiness gate {t:?} does not exist."
            )),
            Some(c) => {
                let status = c.get("status").and_then(Value::as_str).unwrap_or_default();
                (status != "True").then(|| {
                    format!("the status of pod readiness gate {t:?} is not \"True\", but {status}")
                })
            }
        }
    })
}

/// How long a Pod may stay bound to a Node that does not exist before it
/// is deleted (upstream PodGC's quarantine).
pub const ORPHAN_QUARANTINE: Duration = Duration::from_secs(40);

/// What happens to a Pod whose Node has been missing for `missing_for`:
/// deleted after [`ORPHAN_QUARANTINE`], as upstream's PodGC does.
pub fn orphaned(missing_for: Duration) -> Step {
    match ORPHAN_QUARANTINE.checked_sub(missing_for) {
        Some(left) if !left.is_zero() => Step::Wait(left),
        _ => Step::Delete,
    }
}

/// Sets the kubelet's conditions on `status` (in the kubelet's order,
/// after any it does not own), keeping transition times of unchanged ones.
fn conditions(pod: &mut Value, sandbox: bool, ready: bool, completed: bool, now: OffsetDateTime) {
    let not_ready = format!("containers with unready status: [{}]", names(pod));
    let (reason, message) = if completed {
        (Some("PodCompleted"), None)
    } else if ready {
        (None, None)
    } else {
        (Some("ContainersNotReady"), Some(not_ready.as_str()))
    };
    let flag = |b: bool| if b { "True" } else { "False" };
    set_condition(
        pod,
        "PodReadyToStartContainers",
        flag(sandbox),
        None,
        None,
        now,
    );
    set_condition(
        pod,
        "Initialized",
        "True",
        completed.then_some("PodCompleted"),
        None,
        now,
    );
    set_condition(pod, "ContainersReady", flag(ready), reason, message, now);
    match (ready, unready_gate(pod)) {
        (true, Some(why)) => set_condition(
            pod,
            "Ready",
            "False",
            Some("ReadinessGatesNotReady"),
            Some(&why),
            now,
        ),
        _ => set_condition(pod, "Ready", flag(ready), reason, message, now),
    }
    set_condition(pod, "PodScheduled", "True", None, None, now);
    // The kubelet's order: PodReadyToStartContainers, Initialized, Ready,
    // ContainersReady, PodScheduled; others (readiness gates) first.
    let order = [
        "PodReadyToStartContainers",
        "Initialized",
        "Ready",
        "ContainersReady",
        "PodScheduled",
    ];
    if let Some(list) = pod
        .pointer_mut("/status/conditions")
        .and_then(Value::as_array_mut)
    {
        list.sort_by_key(|c| {
            order
                .iter()
                .position(|t| c.get("type").and_then(Value::as_str) == Some(*t))
                .map_or(0, |i| i + 1)
        });
    }
}

/// Sets `status.<field>` (making `status` an object if it is not).
fn set_status(pod: &mut Value, field: &str, value: Value) {
    if !pod.get("status").is_some_and(Value::is_object) {
        pod["status"] = json!({});
    }
    if let Some(m) = pod.get_mut("status").and_then(Value::as_object_mut) {
        m.insert(field.into(), value);
    }
}

/// `pod` as just started at `now`: Running, containers running and not
/// ready, IPs assigned.
pub fn running(pod: &Value, facts: &Facts, now: OffsetDateTime) -> Value {
    let at = timestamp(now);
    let mut next = pod.clone();
    let init = init_statuses(pod, &at);
    let statuses: Vec<Value> = containers(pod, "containers")
        .iter()
        .map(|c| {
            container_status(
                pod,
                c,
                json!({"running": {"startedAt": at}}),
                json!({}),
                false,
                Some(true),
                0,
            )
        })
        .collect();
    set_status(&mut next, "phase", json!("Running"));
    set_status(&mut next, "hostIP", json!(facts.host_ip));
    set_status(&mut next, "hostIPs", json!([{"ip": facts.host_ip}]));
    set_status(&mut next, "podIP", json!(facts.pod_ip));
    set_status(&mut next, "podIPs", json!([{"ip": facts.pod_ip}]));
    set_status(&mut next, "startTime", json!(at));
    if !init.is_empty() {
        set_status(&mut next, "initContainerStatuses", json!(init));
    }
    set_status(&mut next, "containerStatuses", json!(statuses));
    conditions(&mut next, true, false, false, now);
    next
}

/// Applies `f` to every container status of `pod`.
fn each_container(pod: &mut Value, mut f: impl FnMut(&mut Map<String, Value>)) {
    if let Some(list) = pod
        .pointer_mut("/status/containerStatuses")
        .and_then(Value::as_array_mut)
    {
        for c in list.iter_mut().filter_map(Value::as_object_mut) {
            f(c);
        }
    }
}

/// `pod` with its containers ready, and Ready.
pub fn ready(pod: &Value, now: OffsetDateTime) -> Value {
    let mut next = pod.clone();
    each_container(&mut next, |c| {
        c.insert("ready".into(), json!(true));
    });
    conditions(&mut next, true, true, false, now);
    next
}

/// `pod` finished at `now`: Succeeded (exit code 0, `Completed`) or Failed
/// (exit code 1, `Error`).
pub fn finished(pod: &Value, succeeded: bool, now: OffsetDateTime) -> Value {
    let exit = if succeeded {
        (0, "Completed")
    } else {
        (1, "Error")
    };
    terminal(pod, exit, now)
}

/// `pod` killed at `now` because it is being deleted: its containers end
/// with exit code 137 and the Pod is Failed (the kubelet gives a deleted
/// Pod a terminal phase).
pub fn killed(pod: &Value, now: OffsetDateTime) -> Value {
    terminal(pod, (137, "Error"), now)
}

/// `pod` with every container terminated with `exit` (code, reason) at
/// `now`, Succeeded when the code is 0, else Failed.
fn terminal(pod: &Value, exit: (i32, &str), now: OffsetDateTime) -> Value {
    let at = timestamp(now);
    let mut next = pod.clone();
    let (code, reason) = exit;
    let succeeded = code == 0;
    each_container(&mut next, |c| {
        let id = c
            .get("containerID")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_owned();
        let started = c
            .get("state")
            .and_then(|s| s.pointer("/running/startedAt"))
            .and_then(Value::as_str)
            .unwrap_or(&at)
            .to_owned();
        c.insert("state".into(), terminated(code, reason, &started, &at, &id));
        c.insert("ready".into(), json!(false));
        c.insert("started".into(), json!(false));
    });
    set_status(
        &mut next,
        "phase",
        json!(if succeeded { "Succeeded" } else { "Failed" }),
    );
    conditions(&mut next, false, false, succeeded, now);
    next
}

/// How many times the Pod's containers restarted.
fn restarts(pod: &Value) -> u64 {
    pod.pointer("/status/containerStatuses/0/restartCount")
        .and_then(Value::as_u64)
        .unwrap_or(0)
}

/// When the Pod's containers last crashed.
fn last_crash(pod: &Value) -> Option<OffsetDateTime> {
    pod.pointer("/status/containerStatuses/0/lastState/terminated/finishedAt")
        .and_then(Value::as_str)
        .and_then(parse_time)
}

/// `pod`'s containers crashed (again) at `now` and wait in
/// `CrashLoopBackOff`.
pub fn crashed(pod: &Value, now: OffsetDateTime) -> Value {
    let at = timestamp(now);
    let count = restarts(pod) + 1;
    let wait = backoff(count).as_secs();
    let pod_ref = format!(
        "{}_{}({})",
        object::name(pod),
        object::namespace(pod),
        object::uid(pod)
    );
    let started = pod
        .pointer("/status/startTime")
        .and_then(Value::as_str)
        .unwrap_or(&at)
        .to_owned();
    let mut next = pod.clone();
    each_container(&mut next, |c| {
        let name = c
            .get("name")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_owned();
        let id = c
            .get("containerID")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_owned();
        c.insert(
            "state".into(),
            json!({"waiting": {
                "reason": "CrashLoopBackOff",
                "message": format!("back-off {wait}s restarting failed container={name} pod={pod_ref}"),
            }}),
        );
        c.insert(
            "lastState".into(),
            terminated(1, "Error", &started, &at, &id),
        );
        c.insert("ready".into(), json!(false));
        c.insert("started".into(), json!(false));
        c.insert("restartCount".into(), json!(count));
    });
    conditions(&mut next, true, false, false, now);
    next
}

/// What the kubelet does next with bound `pod` at `now`.
pub fn step(pod: &Value, facts: &Facts, now: OffsetDateTime) -> Step {
    if object::is_deleting(pod) {
        return if object::finalizers(pod).is_empty() {
            Step::Delete
        } else if start_time(pod).is_some()
            && !matches!(template::phase(pod), "Succeeded" | "Failed")
        {
            Step::Write(killed(pod, now))
        } else {
            Step::Idle
        };
    }
    if matches!(template::phase(pod), "Succeeded" | "Failed") {
        return Step::Idle;
    }
    let Some(t0) = facts.started.filter(|_| start_time(pod).is_some()) else {
        return Step::Write(running(pod, facts, now));
    };
    let elapsed = now - t0;
    let due = |d: Duration| -> Option<Duration> {
        let d = time::Duration::try_from(d).unwrap_or(time::Duration::MAX);
        if elapsed >= d {
            None
        } else {
            Some(Duration::try_from(d - elapsed).unwrap_or_default())
        }
    };
    let is_ready = template::is_ready(pod);
    if facts.fail {
        if facts.job || restart_policy(pod) == "Never" {
            return match due(facts.ready_delay) {
                None => Step::Write(finished(pod, false, now)),
                Some(w) => Step::Wait(w),
            };
        }
        let crash_at = match last_crash(pod) {
            None => t0 + time::Duration::try_from(facts.ready_delay).unwrap_or_default(),
            Some(last) => {
                last + time::Duration::try_from(backoff(restarts(pod))).unwrap_or_default()
            }
        };
        return if now >= crash_at {
            Step::Write(crashed(pod, now))
        } else {
            Step::Wait(Duration::try_from(crash_at - now).unwrap_or_default())
        };
    }
    let job_due = if facts.job {
        match due(facts.job_duration) {
            None => return Step::Write(finished(pod, true, now)),
            Some(w) => Some(w),
        }
    } else {
        None
    };
    let ready_due = if facts.never_ready || is_ready {
        None
    } else {
        match due(facts.ready_delay) {
            None => {
                // Readiness gates may still hold it back: then nothing
                // changes until a gate's condition does.
                let next = ready(pod, now);
                if next != *pod {
                    return Step::Write(next);
                }
                None
            }
            Some(w) => Some(w),
        }
    };
    match (ready_due, job_due) {
        (Some(a), Some(b)) => Step::Wait(a.min(b)),
        (Some(w), None) | (None, Some(w)) => Step::Wait(w),
        (None, None) => Step::Idle,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(secs: i64) -> OffsetDateTime {
        OffsetDateTime::UNIX_EPOCH + time::Duration::seconds(1_800_000_000 + secs)
    }

    fn facts() -> Facts {
        Facts {
            host_ip: "10.89.0.2".into(),
            pod_ip: "10.244.0.5".into(),
            never_ready: false,
            fail: false,
            job: false,
            started: None,
            ready_delay: Duration::from_secs(1),
            job_duration: Duration::from_secs(5),
        }
    }

    fn pod() -> Value {
        json!({
            "metadata": {"name": "p", "namespace": "ns", "uid": "u-1"},
            "spec": {"nodeName": "sim-node-0", "containers": [{"name": "c", "image": "nginx"}]},
            "status": {"phase": "Pending", "qosClass": "BestEffort", "conditions": [
                {"type": "PodScheduled", "status": "True", "lastProbeTime": null, "lastTransitionTime": "2027-01-15T08:00:00Z"}
            ]},
        })
    }

    /// Runs the machine from `pod` at `start` until it idles or `until`,
    /// returning the pods written.
    fn run(mut pod: Value, mut f: Facts, start: i64, until: i64) -> Vec<(i64, Value)> {
        let mut now = start;
        let mut out = Vec::new();
        while now <= until {
            match step(&pod, &f, at(now)) {
                Step::Write(next) => {
                    if f.started.is_none() {
                        f.started = Some(at(now));
                    }
                    pod = next;
                    out.push((now, pod.clone()));
                }
                Step::Wait(d) => now += i64::try_from(d.as_secs().max(1)).unwrap_or(1),
                Step::Idle | Step::Delete => break,
            }
        }
        out
    }

    #[test]
    fn a_plain_pod_runs_then_becomes_ready() {
        let out = run(pod(), facts(), 0, 100);
        assert_eq!(out.len(), 2);
        let (t, running) = &out[0];
        assert_eq!(*t, 0);
        assert_eq!(running["status"]["phase"], "Running");
        assert_eq!(running["status"]["podIP"], "10.244.0.5");
        assert_eq!(running["status"]["hostIP"], "10.89.0.2");
        assert_eq!(running["status"]["qosClass"], "BestEffort");
        assert_eq!(running["status"]["containerStatuses"][0]["ready"], false);
        assert_eq!(
            running["status"]["containerStatuses"][0]["image"],
            "docker.io/library/nginx:latest"
        );
        assert!(!template::is_ready(running));
        let (t, ready) = &out[1];
        assert_eq!(*t, 1);
        assert!(template::is_ready(ready));
        assert_eq!(ready["status"]["containerStatuses"][0]["ready"], true);
        let types: Vec<&str> = ready["status"]["conditions"]
            .as_array()
            .expect("conditions")
            .iter()
            .filter_map(|c| c["type"].as_str())
            .collect();
        assert_eq!(
            types,
            [
                "PodReadyToStartContainers",
                "Initialized",
                "Ready",
                "ContainersReady",
                "PodScheduled"
            ]
        );
        let scheduled = template::condition(ready, "PodScheduled").expect("scheduled");
        assert_eq!(scheduled["lastTransitionTime"], "2027-01-15T08:00:00Z");
    }

    #[test]
    fn never_ready_pods_run_forever_unready() {
        let f = Facts {
            never_ready: true,
            ..facts()
        };
        let out = run(pod(), f, 0, 1000);
        assert_eq!(out.len(), 1);
        assert_eq!(out[0].1["status"]["phase"], "Running");
        assert!(!template::is_ready(&out[0].1));
    }

    #[test]
    fn failing_job_pods_fail() {
        let f = Facts {
            fail: true,
            job: true,
            ..facts()
        };
        let out = run(pod(), f, 0, 1000);
        let last = &out.last().expect("written").1;
        assert_eq!(last["status"]["phase"], "Failed");
        let t = &last["status"]["containerStatuses"][0]["state"]["terminated"];
        assert_eq!(t["exitCode"], 1);
        assert_eq!(t["reason"], "Error");
    }

    #[test]
    fn failing_pods_crash_loop_with_growing_back_off() {
        let f = Facts {
            fail: true,
            ..facts()
        };
        let out = run(pod(), f, 0, 100);
        let times: Vec<i64> = out.iter().map(|(t, _)| *t).collect();
        // Running at 0, crash at 1, then restarts after 10 s, 20 s, 40 s.
        assert_eq!(times, [0, 1, 11, 31, 71]);
        let last = &out.last().expect("written").1;
        assert_eq!(last["status"]["phase"], "Running");
        let c = &last["status"]["containerStatuses"][0];
        assert_eq!(c["restartCount"], 4);
        assert_eq!(c["state"]["waiting"]["reason"], "CrashLoopBackOff");
        assert_eq!(c["lastState"]["terminated"]["exitCode"], 1);
        assert!(!template::is_ready(last));
    }

    #[test]
    fn job_pods_succeed_after_the_job_duration() {
        let f = Facts {
            job: true,
            ..facts()
        };
        let out = run(pod(), f, 0, 100);
        let times: Vec<i64> = out.iter().map(|(t, _)| *t).collect();
        assert_eq!(times, [0, 1, 5]);
        let last = &out[2].1;
        assert_eq!(last["status"]["phase"], "Succeeded");
        let t = &last["status"]["containerStatuses"][0]["state"]["terminated"];
        assert_eq!(t["exitCode"], 0);
        assert_eq!(t["reason"], "Completed");
        let r = template::condition(last, "Ready").expect("ready");
        assert_eq!(r["status"], "False");
        assert_eq!(r["reason"], "PodCompleted");
        assert_eq!(
            step(
                last,
                &Facts {
                    job: true,
                    started: Some(at(0)),
                    ..facts()
                },
                at(500)
            ),
            Step::Idle
        );
    }

    #[test]
    fn readiness_gates_hold_ready_back() {
        let mut p = pod();
        p["spec"]["readinessGates"] = json!([{"conditionType": "example.com/lb"}]);
        let out = run(p, facts(), 0, 100);
        let last = &out.last().expect("written").1;
        let r = template::condition(last, "Ready").expect("ready");
        assert_eq!(r["status"], "False");
        assert_eq!(r["reason"], "ReadinessGatesNotReady");
        assert_eq!(
            r["message"],
            "corresponding condition of pod readiness gate \"example.com/lb\" does not exist."
        );
        let cr = template::condition(last, "ContainersReady").expect("containers ready");
        assert_eq!(cr["status"], "True");
        let mut gated = last.clone();
        set_condition(&mut gated, "example.com/lb", "True", None, None, at(3));
        let f = Facts {
            started: Some(at(0)),
            ..facts()
        };
        let Step::Write(next) = step(&gated, &f, at(4)) else {
            panic!("the gate opening makes the Pod Ready");
        };
        assert!(template::is_ready(&next));
    }

    #[test]
    fn orphans_go_after_the_quarantine() {
        assert_eq!(
            orphaned(Duration::from_secs(10)),
            Step::Wait(Duration::from_secs(30))
        );
        assert_eq!(orphaned(Duration::from_secs(40)), Step::Delete);
        assert_eq!(orphaned(Duration::from_secs(400)), Step::Delete);
    }

    #[test]
    fn deleting_pods_go_unless_held() {
        let mut p = pod();
        p["metadata"]["deletionTimestamp"] = json!("2027-01-15T08:00:00Z");
        assert_eq!(step(&p, &facts(), at(0)), Step::Delete);
        p["metadata"]["finalizers"] = json!(["example.com/hold"]);
        assert_eq!(step(&p, &facts(), at(0)), Step::Idle, "never started");
        // A running Pod held by a finalizer is killed: Failed, exit 137.
        let mut running = run(pod(), facts(), 0, 10).last().expect("ran").1.clone();
        running["metadata"]["deletionTimestamp"] = json!("2027-01-15T08:00:00Z");
        running["metadata"]["finalizers"] = json!(["example.com/hold"]);
        let f = Facts {
            started: Some(at(0)),
            ..facts()
        };
        let Step::Write(dead) = step(&running, &f, at(20)) else {
            panic!("a deleted running Pod is killed");
        };
        assert_eq!(dead["status"]["phase"], "Failed");
        assert_eq!(
            dead["status"]["containerStatuses"][0]["state"]["terminated"]["exitCode"],
            137
        );
        assert_eq!(step(&dead, &f, at(21)), Step::Idle);
    }

    #[test]
    fn images_are_normalized() {
        assert_eq!(normalized_image("nginx"), "docker.io/library/nginx:latest");
        assert_eq!(
            normalized_image("nginx:1.27"),
            "docker.io/library/nginx:1.27"
        );
        assert_eq!(
            normalized_image("bitnami/redis"),
            "docker.io/bitnami/redis:latest"
        );
        assert_eq!(
            normalized_image("registry.k8s.io/pause:3.10"),
            "registry.k8s.io/pause:3.10"
        );
        assert_eq!(
            normalized_image("localhost:5000/app"),
            "localhost:5000/app:latest"
        );
        assert!(image_id("nginx:1.27").starts_with("docker.io/library/nginx@sha256:"));
        assert_eq!(backoff(1), Duration::from_secs(10));
        assert_eq!(backoff(100), MAX_BACKOFF);
    }

    proptest::proptest! {
        /// Whatever the flags and delays, the machine ends (idles) and a
        /// Pod is Ready only on the plain or Job paths.
        #[test]
        fn the_machine_terminates(never_ready: bool, fail: bool, job: bool, delay in 0u64..20, duration in 0u64..20) {
            let f = Facts {
                never_ready, fail, job,
                ready_delay: Duration::from_secs(delay),
                job_duration: Duration::from_secs(duration),
                ..facts()
            };
            let out = run(pod(), f, 0, 10_000);
            proptest::prop_assert!(!out.is_empty());
            let ever_ready = out.iter().any(|(_, p)| template::is_ready(p));
            if ever_ready {
                proptest::prop_assert!(!never_ready && !fail);
            }
            if job {
                let phase = out.last().map(|(_, p)| template::phase(p).to_owned());
                let want = if fail { "Failed" } else { "Succeeded" };
                proptest::prop_assert_eq!(phase.as_deref(), Some(want));
            }
        }
    }
}
