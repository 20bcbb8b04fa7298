//! Deployment, ReplicaSet, StatefulSet and DaemonSet: the members' counts
//! summed, `observedGeneration` by [`super::observed_generation`],
//! conditions merged worst-wins ([`super::conditions`]). Pure.
//!
//! Why this tells the truth to the readers of the federated object:
//! - `kubectl rollout status` (`polymorphichelpers/rollout_status.go`)
//!   waits until `generation <= observedGeneration`, then fails on a
//!   `Progressing` condition with reason `ProgressDeadlineExceeded`, then
//!   compares `updatedReplicas`, `replicas` and `availableReplicas` with
//!   `spec.replicas` (Deployment); `updatedNumberScheduled` and
//!   `numberAvailable` with `desiredNumberScheduled` (DaemonSet);
//!   `readyReplicas` with `spec.replicas`, then `updateRevision` with
//!   `currentRevision` (StatefulSet). A Divided object's shares add up to
//!   its `spec.replicas`, so the sums compare with the federated spec.
//! - kstatus (`kstatus/status/core.go`) additionally needs a
//!   `Progressing` True with reason `NewReplicaSetAvailable` and an
//!   `Available` True (Deployment), `fullyLabeledReplicas` (ReplicaSet),
//!   `currentReplicas` (StatefulSet): hence the Progressing rank below
//!   puts an in-progress True above a finished one.
//! - Helm 3 (`pkg/kube/ready.go`) needs `observedGeneration ==
//!   generation` and, for DaemonSets, `numberReady` against
//!   `desiredNumberScheduled`.

use serde_json::{Map, Value, json};

use super::conditions::{self, true_is_bad, true_is_good};
use super::{MemberCopy, Presence, observed_generation, sum_into};

/// Upstream's `TimedOutReason`.
pub const PROGRESS_DEADLINE_EXCEEDED: &str = "ProgressDeadlineExceeded";
/// Upstream's `NewRSAvailableReason`: a finished rollout.
pub const NEW_REPLICA_SET_AVAILABLE: &str = "NewReplicaSetAvailable";

/// A Deployment's condition rank: `Progressing` False with
/// `ProgressDeadlineExceeded` (30) beats other False (20) beats Unknown
/// (10, e.g. `DeploymentPaused`) beats a True still rolling (5) beats
/// True `NewReplicaSetAvailable` (0); `ReplicaFailure` True is worst;
/// other types (`Available`) False beats Unknown beats True.
pub fn deployment_rank(type_: &str, cond: &Value) -> u32 {
    match type_ {
        "Progressing" => {
            let base = true_is_good(cond);
            let reason = conditions::reason_of(cond);
            match base {
                20 if reason == PROGRESS_DEADLINE_EXCEEDED => 30,
                0 if reason != NEW_REPLICA_SET_AVAILABLE => 5,
                b => b,
            }
        }
        "ReplicaFailure" => true_is_bad(cond),
        _ => true_is_good(cond),
    }
}

/// A ReplicaSet's (and any workload's) condition rank: `ReplicaFailure`
/// True is worst, other types False is worst.
pub fn replica_failure_rank(type_: &str, cond: &Value) -> u32 {
    match type_ {
        "ReplicaFailure" => true_is_bad(cond),
        _ => true_is_good(cond),
    }
}

/// The federated Deployment's status: `replicas`, `updatedReplicas`,
/// `readyReplicas`, `availableReplicas`, `unavailableReplicas` summed
/// (`terminatingReplicas` when a member reports it), conditions merged
/// by [`deployment_rank`], `collisionCount` kept from the federated
/// object (it belongs to the federation's own ReplicaSet history).
pub fn deployment(federated: &Value, copies: &[&MemberCopy<'_>]) -> Value {
    let mut out = start(federated, copies);
    sum_into(
        &mut out,
        copies,
        &[
            ("replicas", Presence::NonZero),
            ("updatedReplicas", Presence::NonZero),
            ("readyReplicas", Presence::NonZero),
            ("availableReplicas", Presence::NonZero),
            ("unavailableReplicas", Presence::NonZero),
            ("terminatingReplicas", Presence::Carried),
        ],
    );
    finish(out, federated, copies, deployment_rank)
}

/// The federated ReplicaSet's status: `replicas`, `fullyLabeledReplicas`,
/// `readyReplicas`, `availableReplicas` (and `terminatingReplicas`)
/// summed; `ReplicaFailure` merged True-is-worst.
pub fn replica_set(federated: &Value, copies: &[&MemberCopy<'_>]) -> Value {
    let mut out = start(federated, copies);
    sum_into(
        &mut out,
        copies,
        &[
            ("replicas", Presence::Always),
            ("fullyLabeledReplicas", Presence::NonZero),
            ("readyReplicas", Presence::NonZero),
            ("availableReplicas", Presence::NonZero),
            ("terminatingReplicas", Presence::Carried),
        ],
    );
    finish(out, federated, copies, replica_failure_rank)
}

/// The federated StatefulSet's status: `replicas`, `readyReplicas`,
/// `currentReplicas`, `updatedReplicas`, `availableReplicas` summed; the
/// revisions by [`revisions`]; `collisionCount` kept from the federated
/// object.
pub fn stateful_set(federated: &Value, copies: &[&MemberCopy<'_>]) -> Value {
    let mut out = start(federated, copies);
    sum_into(
        &mut out,
        copies,
        &[
            ("replicas", Presence::Always),
            ("readyReplicas", Presence::NonZero),
            ("currentReplicas", Presence::NonZero),
            ("updatedReplicas", Presence::NonZero),
            ("availableReplicas", Presence::Always),
        ],
    );
    let (current, update) = revisions(copies);
    if let Some(c) = current {
        out.insert("currentRevision".into(), Value::String(c));
    }
    if let Some(u) = update {
        out.insert("updateRevision".into(), Value::String(u));
    }
    finish(out, federated, copies, replica_failure_rank)
}

/// The federated DaemonSet's status: `currentNumberScheduled`,
/// `numberMisscheduled`, `desiredNumberScheduled`, `numberReady`,
/// `updatedNumberScheduled`, `numberAvailable`, `numberUnavailable`
/// summed; `collisionCount` kept from the federated object.
pub fn daemon_set(federated: &Value, copies: &[&MemberCopy<'_>]) -> Value {
    let mut out = start(federated, copies);
    sum_into(
        &mut out,
        copies,
        &[
            ("currentNumberScheduled", Presence::Always),
            ("numberMisscheduled", Presence::Always),
            ("desiredNumberScheduled", Presence::Always),
            ("numberReady", Presence::Always),
            ("updatedNumberScheduled", Presence::NonZero),
            ("numberAvailable", Presence::NonZero),
            ("numberUnavailable", Presence::NonZero),
        ],
    );
    finish(out, federated, copies, replica_failure_rank)
}

/// A StatefulSet's `(currentRevision, updateRevision)` across members.
///
/// Members name revisions by their own template hash, so copies with
/// different overrides name them differently. The rule (deterministic):
/// - `updateRevision`: the members' value when they all agree, else the
///   smallest (by byte order) of their values;
/// - `currentRevision`: when every member with a status has finished
///   (its own `currentRevision == updateRevision`, non-empty), the
///   federated `updateRevision` (so `rollout status` completes exactly
///   when every member did); otherwise the members' common
///   `currentRevision` if they agree on one that differs from the
///   federated `updateRevision`, else absent (so `rollout status` and
///   kstatus, which compare the two, keep waiting).
///
/// Both are absent when no member reports a status.
pub fn revisions(copies: &[&MemberCopy<'_>]) -> (Option<String>, Option<String>) {
    let statuses: Vec<&Value> = copies.iter().filter_map(|c| c.status()).collect();
    let field = |s: &Value, k: &str| {
        s.get(k)
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_owned()
    };
    let updates: Vec<String> = statuses
        .iter()
        .map(|s| field(s, "updateRevision"))
        .collect();
    let currents: Vec<String> = statuses
        .iter()
        .map(|s| field(s, "currentRevision"))
        .collect();
    let Some(update) = updates.iter().min().cloned() else {
        return (None, None);
    };
    let done = updates
        .iter()
        .zip(&currents)
        .all(|(u, c)| !u.is_empty() && u == c);
    let update = (!update.is_empty()).then_some(update);
    let current = if done {
        update.clone()
    } else {
        unanimous(&currents).filter(|c| !c.is_empty() && Some(c) != update.as_ref())
    };
    (current, update)
}

fn unanimous(values: &[String]) -> Option<String> {
    let first = values.first()?;
    values.iter().all(|v| v == first).then(|| first.clone())
}

/// The status map with `observedGeneration` set by the rule.
fn start(federated: &Value, copies: &[&MemberCopy<'_>]) -> Map<String, Value> {
    let mut out = Map::new();
    if let Some(g) = observed_generation(federated, copies) {
        out.insert("observedGeneration".into(), Value::from(g));
    }
    out
}

/// Adds the merged conditions and the federated `collisionCount`.
fn finish(
    mut out: Map<String, Value>,
    federated: &Value,
    copies: &[&MemberCopy<'_>],
    rank: conditions::Rank,
) -> Value {
    let merged = conditions::merge(copies, rank);
    if !merged.is_empty() {
        out.insert("conditions".into(), Value::Array(merged));
    }
    if let Some(c) = federated.pointer("/status/collisionCount") {
        out.insert("collisionCount".into(), c.clone());
    }
    Value::Object(out)
}

/// One of a Deployment's history ReplicaSets on the federation, as
/// [`history_replica_sets`] reads it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HistoryReplicaSet {
    /// Its `deployment.kubernetes.io/revision`.
    pub revision: i64,
    /// Its `metadata.generation`.
    pub generation: i64,
}

/// The statuses of a Deployment's history ReplicaSets on the federation,
/// from the Deployment's aggregated status `agg` (the members' sums), in
/// the order of `sets`, as a cluster's own ReplicaSets would show them:
/// the one of revision `current` holds the updated replicas (ready and
/// available at most that many); the newest older one holds the rest
/// (a rollout in progress); every other one holds none, so `kubectl get
/// rs` tells the truth and the history controller can retire them. Pure.
pub fn history_replica_sets(agg: &Value, current: i64, sets: &[HistoryReplicaSet]) -> Vec<Value> {
    let count = |f: &str| agg.get(f).and_then(Value::as_i64).unwrap_or(0).max(0);
    let (total, updated) = (count("replicas"), count("updatedReplicas"));
    let new_ready = count("readyReplicas").min(updated);
    let new_available = count("availableReplicas").min(updated);
    let old = total.saturating_sub(updated).max(0);
    let old_ready = (count("readyReplicas") - new_ready).clamp(0, old);
    let old_available = (count("availableReplicas") - new_available).clamp(0, old);
    let previous = sets
        .iter()
        .map(|s| s.revision)
        .filter(|r| *r < current)
        .max();
    sets.iter()
        .map(|s| {
            let (replicas, ready, available) = if s.revision == current {
                (updated, new_ready, new_available)
            } else if Some(s.revision) == previous {
                (old, old_ready, old_available)
            } else {
                (0, 0, 0)
            };
            json!({
                "replicas": replicas,
                "fullyLabeledReplicas": replicas,
                "readyReplicas": ready,
                "availableReplicas": available,
                "observedGeneration": s.generation,
            })
        })
        .collect()
}
