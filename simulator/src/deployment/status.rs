//! A Deployment's status and conditions, as upstream's `sync.go`
//! (`calculateStatus`), `progress.go` (`syncRolloutStatus`,
//! `requeueStuckDeployment`) and `util/deployment_util.go` (conditions,
//! `DeploymentComplete`, `DeploymentProgressing`, `DeploymentTimedOut`),
//! with upstream's reasons and messages.
//!
//! Pure: the ReplicaSet views, the current status and `now` in; the new
//! status (and when to look again) out.

use serde_json::{Map, Value, json};
use time::OffsetDateTime;

use super::plan::{DeploySpec, RsView};

/// The `Progressing` condition type.
pub const PROGRESSING: &str = "Progressing";
/// The `Available` condition type.
pub const AVAILABLE: &str = "Available";
/// The `ReplicaFailure` condition type.
pub const REPLICA_FAILURE: &str = "ReplicaFailure";

/// Progressing: a new ReplicaSet was created.
pub const NEW_RS_CREATED: &str = "NewReplicaSetCreated";
/// Progressing: an existing ReplicaSet matches the template.
pub const FOUND_NEW_RS: &str = "FoundNewReplicaSet";
/// Progressing: the rollout moved.
pub const RS_UPDATED: &str = "ReplicaSetUpdated";
/// Progressing: the rollout is complete.
pub const NEW_RS_AVAILABLE: &str = "NewReplicaSetAvailable";
/// Progressing False: no progress within the deadline.
pub const TIMED_OUT: &str = "ProgressDeadlineExceeded";
/// Progressing False: the new ReplicaSet could not be created.
pub const FAILED_RS_CREATE: &str = "ReplicaSetCreateError";
/// Progressing Unknown: paused.
pub const PAUSED: &str = "DeploymentPaused";
/// Progressing Unknown: resumed.
pub const RESUMED: &str = "DeploymentResumed";

/// One `DeploymentCondition` (times as RFC 3339 text).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Condition {
    /// `type`.
    pub type_: String,
    /// `True`, `False` or `Unknown`.
    pub status: String,
    /// `lastUpdateTime`.
    pub last_update: String,
    /// `lastTransitionTime`.
    pub last_transition: String,
    /// `reason`.
    pub reason: String,
    /// `message`.
    pub message: String,
}

impl Condition {
    /// Upstream's `NewDeploymentCondition` at `now`.
    pub fn new(type_: &str, status: &str, reason: &str, message: String, now: &str) -> Condition {
        Condition {
            type_: type_.to_owned(),
            status: status.to_owned(),
            last_update: now.to_owned(),
            last_transition: now.to_owned(),
            reason: reason.to_owned(),
            message,
        }
    }

    fn of(v: &Value) -> Condition {
        let s = |k: &str| {
            v.get(k)
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_owned()
        };
        Condition {
            type_: s("type"),
            status: s("status"),
            last_update: s("lastUpdateTime"),
            last_transition: s("lastTransitionTime"),
            reason: s("reason"),
            message: s("message"),
        }
    }

    fn to_json(&self) -> Value {
        let mut m = Map::new();
        m.insert("type".into(), json!(self.type_));
        m.insert("status".into(), json!(self.status));
        for (k, v) in [
            ("lastUpdateTime", &self.last_update),
            ("lastTransitionTime", &self.last_transition),
            ("reason", &self.reason),
            ("message", &self.message),
        ] {
            if !v.is_empty() {
                m.insert(k.into(), json!(v));
            }
        }
        Value::Object(m)
    }
}

/// A `DeploymentStatus`.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Status {
    /// `observedGeneration`.
    pub observed_generation: i64,
    /// `replicas`.
    pub replicas: i32,
    /// `updatedReplicas`.
    pub updated: i32,
    /// `readyReplicas`.
    pub ready: i32,
    /// `availableReplicas`.
    pub available: i32,
    /// `unavailableReplicas`.
    pub unavailable: i32,
    /// `collisionCount`.
    pub collision_count: Option<i32>,
    /// `conditions`, in order.
    pub conditions: Vec<Condition>,
}

fn num(v: Option<&Value>) -> i32 {
    super::plan::clamp(v.and_then(Value::as_i64).unwrap_or(0))
}

impl Status {
    /// The status of a stored Deployment.
    pub fn of(d: &Value) -> Status {
        let s = d.get("status");
        let at = |k: &str| s.and_then(|s| s.get(k));
        Status {
            observed_generation: at("observedGeneration")
                .and_then(Value::as_i64)
                .unwrap_or(0),
            replicas: num(at("replicas")),
            updated: num(at("updatedReplicas")),
            ready: num(at("readyReplicas")),
            available: num(at("availableReplicas")),
            unavailable: num(at("unavailableReplicas")),
            collision_count: at("collisionCount")
                .and_then(Value::as_i64)
                .map(super::plan::clamp),
            conditions: at("conditions")
                .and_then(Value::as_array)
                .map(|cs| cs.iter().map(Condition::of).collect())
                .unwrap_or_default(),
        }
    }

    /// The JSON form (zero fields omitted, as Go's omitempty).
    pub fn to_json(&self) -> Value {
        let mut m = Map::new();
        for (k, v) in [
            ("observedGeneration", self.observed_generation),
            ("replicas", i64::from(self.replicas)),
            ("updatedReplicas", i64::from(self.updated)),
            ("readyReplicas", i64::from(self.ready)),
            ("availableReplicas", i64::from(self.available)),
            ("unavailableReplicas", i64::from(self.unavailable)),
        ] {
            if v != 0 {
                m.insert(k.into(), json!(v));
            }
        }
        if !self.conditions.is_empty() {
            m.insert(
                "conditions".into(),
                Value::Array(self.conditions.iter().map(Condition::to_json).collect()),
            );
        }
        if let Some(c) = self.collision_count {
            m.insert("collisionCount".into(), json!(c));
        }
        Value::Object(m)
    }

    /// The condition of `type_`.
    pub fn condition(&self, type_: &str) -> Option<&Condition> {
        self.conditions.iter().find(|c| c.type_ == type_)
    }

    /// Upstream's `SetDeploymentCondition`: same status and reason is a
    /// no-op; same status keeps the transition time; the condition moves
    /// to the end.
    pub fn set_condition(&mut self, mut c: Condition) {
        if let Some(cur) = self.condition(&c.type_) {
            if cur.status == c.status && cur.reason == c.reason {
                return;
            }
            if cur.status == c.status {
                c.last_transition.clone_from(&cur.last_transition);
            }
        }
        self.remove_condition(&c.type_.clone());
        self.conditions.push(c);
    }

    /// Upstream's `RemoveDeploymentCondition`.
    pub fn remove_condition(&mut self, type_: &str) {
        self.conditions.retain(|c| c.type_ != type_);
    }
}

/// RFC 3339 at second precision, as `metav1.Time` is written.
pub fn rfc3339(t: OffsetDateTime) -> String {
    skein_apiserver::registry::object::rfc3339(t)
}

fn parse_time(s: &str) -> Option<OffsetDateTime> {
    OffsetDateTime::parse(s, &time::format_description::well_known::Rfc3339).ok()
}

/// Upstream's `calculateStatus`: counts from the ReplicaSets, conditions
/// carried over, and `Available` from the minimum availability.
pub fn calculate(
    d: &DeploySpec,
    all: &[&RsView],
    new: Option<&RsView>,
    current: &Status,
    now: &str,
) -> Status {
    let available: i32 = all.iter().map(|r| r.available).sum();
    let total: i32 = all.iter().map(|r| r.replicas).sum();
    let mut status = Status {
        observed_generation: d.generation,
        replicas: all.iter().map(|r| r.status_replicas).sum(),
        updated: new.map_or(0, |n| n.status_replicas),
        ready: all.iter().map(|r| r.ready).sum(),
        available,
        unavailable: (total - available).max(0),
        collision_count: current.collision_count,
        conditions: current.conditions.clone(),
    };
    if available >= d.replicas - d.max_unavailable() {
        status.set_condition(Condition::new(
            AVAILABLE,
            "True",
            "MinimumReplicasAvailable",
            "Deployment has minimum availability.".into(),
            now,
        ));
    } else {
        status.set_condition(Condition::new(
            AVAILABLE,
            "False",
            "MinimumReplicasUnavailable",
            "Deployment does not have minimum availability.".into(),
            now,
        ));
    }
    status
}

/// Upstream's `DeploymentComplete`.
pub fn is_complete(d: &DeploySpec, s: &Status) -> bool {
    s.updated == d.replicas
        && s.replicas == d.replicas
        && s.available == d.replicas
        && s.observed_generation >= d.generation
}

/// Upstream's `DeploymentProgressing`: more updated, fewer old, more
/// ready or more available Pods than before.
pub fn is_progressing(old: &Status, new: &Status) -> bool {
    let old_old = old.replicas - old.updated;
    let new_old = new.replicas - new.updated;
    new.updated > old.updated
        || new_old < old_old
        || new.ready > old.ready
        || new.available > old.available
}

/// Upstream's `DeploymentTimedOut` at `now`.
pub fn is_timed_out(d: &DeploySpec, s: &Status, now: OffsetDateTime) -> bool {
    let Some(deadline) = d.progress_deadline() else {
        return false;
    };
    let Some(c) = s.condition(PROGRESSING) else {
        return false;
    };
    match c.reason.as_str() {
        NEW_RS_AVAILABLE => false,
        TIMED_OUT => true,
        _ => parse_time(&c.last_update)
            .and_then(|from| from.checked_add(time::Duration::seconds(deadline.into())))
            .is_some_and(|end| end < now),
    }
}

/// Upstream's `syncRolloutStatus` (without the ReplicaFailure step, which
/// needs the ReplicaSets' conditions: see [`replica_failure`]). `current`
/// is the stored status; returns the status to store.
pub fn rollout(
    d: &DeploySpec,
    all: &[&RsView],
    new: Option<&RsView>,
    current: &Status,
    now: OffsetDateTime,
) -> Status {
    let now_text = rfc3339(now);
    let mut status = calculate(d, all, new, current, &now_text);
    if d.progress_deadline().is_none() {
        status.remove_condition(PROGRESSING);
    }
    let cur = current.condition(PROGRESSING);
    let complete_before =
        status.replicas == status.updated && cur.is_some_and(|c| c.reason == NEW_RS_AVAILABLE);
    if d.progress_deadline().is_some() && !complete_before {
        let what = |verb: &str| match new {
            Some(rs) => format!("ReplicaSet \"{}\" {verb}.", rs.name),
            None => format!("Deployment \"{}\" {verb}.", d.name),
        };
        if is_complete(d, &status) {
            status.set_condition(Condition::new(
                PROGRESSING,
                "True",
                NEW_RS_AVAILABLE,
                what("has successfully progressed"),
                &now_text,
            ));
        } else if is_progressing(current, &status) {
            let mut c = Condition::new(
                PROGRESSING,
                "True",
                RS_UPDATED,
                what("is progressing"),
                &now_text,
            );
            if let Some(cur) = cur {
                if cur.status == "True" {
                    c.last_transition.clone_from(&cur.last_transition);
                }
                status.remove_condition(PROGRESSING);
            }
            status.set_condition(c);
        } else if is_timed_out(d, &status, now) {
            status.set_condition(Condition::new(
                PROGRESSING,
                "False",
                TIMED_OUT,
                what("has timed out progressing"),
                &now_text,
            ));
        }
    }
    status
}

/// The Deployment's `ReplicaFailure` condition from its ReplicaSets'
/// (upstream `getReplicaFailures`: the new ReplicaSet's first, else any
/// one's), given each ReplicaSet's stored object with the new one first.
pub fn replica_failure(rss: &[&Value]) -> Option<Condition> {
    rss.iter().find_map(|rs| {
        rs.pointer("/status/conditions")
            .and_then(Value::as_array)?
            .iter()
            .find(|c| c.get("type").and_then(Value::as_str) == Some(REPLICA_FAILURE))
            .map(|c| {
                let mut c = Condition::of(c);
                // A ReplicaSet condition has no lastUpdateTime.
                c.last_update.clone_from(&c.last_transition);
                c
            })
    })
}

/// Upstream's `requeueStuckDeployment`: how long until the progress
/// deadline should be checked again, when a rollout is under way.
pub fn recheck_after(
    d: &DeploySpec,
    stored: &Status,
    new: &Status,
    now: OffsetDateTime,
) -> Option<std::time::Duration> {
    let deadline = d.progress_deadline()?;
    let c = stored.condition(PROGRESSING)?;
    if is_complete(d, new) || c.reason == TIMED_OUT {
        return None;
    }
    let from = parse_time(&c.last_update)?;
    let after = from.checked_add(time::Duration::seconds(deadline.into()))? - now;
    if after < time::Duration::SECOND {
        return Some(std::time::Duration::from_secs(1));
    }
    std::time::Duration::try_from(after).ok()
}

/// Upstream's `checkPausedConditions`: the Progressing condition a pause
/// or resume sets, if any.
pub fn paused_condition(d: &DeploySpec, s: &Status, now: &str) -> Option<Condition> {
    d.progress_deadline()?;
    let paused_before = s.condition(PROGRESSING).is_some_and(|c| c.reason == PAUSED);
    if d.paused && !paused_before {
        Some(Condition::new(
            PROGRESSING,
            "Unknown",
            PAUSED,
            "Deployment is paused".into(),
            now,
        ))
    } else if !d.paused && paused_before {
        Some(Condition::new(
            PROGRESSING,
            "Unknown",
            RESUMED,
            "Deployment is resumed".into(),
            now,
        ))
    } else {
        None
    }
}

#[cfg(test)]
#[path = "status_tests.rs"]
mod tests;
