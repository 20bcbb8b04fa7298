//! Status aggregation (DESIGN §4): per-kind folds of the member copies'
//! statuses into the federated object's native status, so `kubectl
//! rollout status` and Helm's `--wait` read the truth about every member.
//! Pure: no I/O, no clock.
//!
//! Contract of every fold:
//! - deterministic and independent of the order of `copies` (they are
//!   sorted by cluster name first; times come from the members' own
//!   conditions, never from a clock);
//! - `status.observedGeneration` reaches the federated
//!   `metadata.generation` only when every chosen copy is current and
//!   observed ([`observed_generation`]); it never exceeds it;
//! - kinds without a meaningful status (ConfigMap, Secret, RBAC,
//!   Namespace, ...) get `None`: their status is left alone.
//!
//! Submodules: [`conditions`] (merge, worst wins, clusters named),
//! [`workload`] (Deployment, ReplicaSet, StatefulSet, DaemonSet),
//! [`job`], [`service`] (Service and Ingress load balancers),
//! [`autoscaler`] (HorizontalPodAutoscaler), [`other`] (PVC and the
//! single-copy rule), [`ready`] (kstatus readiness of one member copy).

pub mod autoscaler;
pub mod conditions;
pub mod job;
pub mod other;
pub mod ready;
pub mod service;
pub mod workload;

use std::cmp::Ordering;

use serde_json::{Map, Value};

pub use ready::{Assessment, Readiness, assess};

/// One member's copy of a federated object, as its member reports it.
#[derive(Debug, Clone, Copy)]
pub struct MemberCopy<'a> {
    /// The Cluster's name.
    pub cluster: &'a str,
    /// The member's object (metadata, spec and status as the member holds
    /// them); `None` when the member has no copy (yet).
    pub object: Option<&'a Value>,
    /// Whether the syncer applied the federated object's current
    /// `metadata.generation` to this member.
    pub current: bool,
}

impl MemberCopy<'_> {
    /// The member object's `status`, when it has one.
    pub fn status(&self) -> Option<&Value> {
        self.object.and_then(|o| o.get("status"))
    }
}

/// The federated object's new `status`, folded from its copies; `None`
/// when its kind has no aggregator (its status is left alone).
pub fn aggregate(federated: &Value, copies: &[MemberCopy<'_>]) -> Option<Value> {
    let sorted = sorted(copies);
    let (group, kind) = group_kind(federated)
        .or_else(|| sorted.iter().find_map(|c| c.object.and_then(group_kind)))?;
    match (group, kind) {
        ("apps", "Deployment") => Some(workload::deployment(federated, &sorted)),
        ("apps", "ReplicaSet") => Some(workload::replica_set(federated, &sorted)),
        ("apps", "StatefulSet") => Some(workload::stateful_set(federated, &sorted)),
        ("apps", "DaemonSet") => Some(workload::daemon_set(federated, &sorted)),
        ("batch", "Job") => Some(job::job(&sorted)),
        ("", "Service") | ("networking.k8s.io", "Ingress") => Some(service::load_balancer(&sorted)),
        ("autoscaling", "HorizontalPodAutoscaler") => Some(autoscaler::hpa(federated, &sorted)),
        ("", "PersistentVolumeClaim") => Some(other::claim(&sorted)),
        _ if other::has_no_status(group, kind) => None,
        _ => other::single(federated, &sorted),
    }
}

/// Whether a member's copy reports ready (the Placement's `Ready` state):
/// kstatus' "Current" for the kinds it knows, else "exists". See
/// [`ready::assess`] for the rules and the message.
pub fn is_ready(member_object: &Value) -> bool {
    assess(member_object).readiness == Readiness::Current
}

/// The Placement summary's ready count: the copies that exist, carry the
/// federated object's current generation and are [`is_ready`].
pub fn ready_count(copies: &[MemberCopy<'_>]) -> usize {
    copies
        .iter()
        .filter(|c| c.current && c.object.is_some_and(is_ready))
        .count()
}

/// The federated `status.observedGeneration`: the federated
/// `metadata.generation` when there is at least one copy and EVERY copy is
/// present, current, and its member's `status.observedGeneration >=` the
/// member object's `metadata.generation`; otherwise the federated object's
/// previous `status.observedGeneration` (capped at its generation), or
/// `None` when it had none.
///
/// This is what makes `kubectl rollout status` wait: it reads nothing
/// else until `metadata.generation <= status.observedGeneration`
/// (`rollout_status.go`), and kstatus reports `InProgress` while they
/// differ (`generic.go`, `checkGeneration`). While none has ever been
/// observed the field is absent; the summed counts (below `spec.replicas`
/// until members report) keep both waiting then.
pub fn observed_generation(federated: &Value, copies: &[&MemberCopy<'_>]) -> Option<i64> {
    let generation = federated
        .pointer("/metadata/generation")
        .and_then(Value::as_i64);
    let previous = federated
        .pointer("/status/observedGeneration")
        .and_then(Value::as_i64);
    let all = !copies.is_empty()
        && copies
            .iter()
            .all(|c| c.current && c.object.is_some_and(member_observed));
    match (all, generation) {
        (true, Some(g)) => Some(g),
        _ => previous.map(|p| generation.map_or(p, |g| p.min(g))),
    }
}

/// Whether a member's own controller observed the member object's
/// generation (`status.observedGeneration >= metadata.generation`; a
/// missing generation counts as 0, a missing observedGeneration as never).
pub fn member_observed(member_object: &Value) -> bool {
    let generation = member_object
        .pointer("/metadata/generation")
        .and_then(Value::as_i64)
        .unwrap_or(0);
    member_object
        .pointer("/status/observedGeneration")
        .and_then(Value::as_i64)
        .is_some_and(|o| o >= generation)
}

/// `(group, kind)` of an object from its `apiVersion` and `kind`.
pub fn group_kind(obj: &Value) -> Option<(&str, &str)> {
    let kind = obj.get("kind").and_then(Value::as_str)?;
    let api_version = obj.get("apiVersion").and_then(Value::as_str)?;
    let group = api_version.rsplit_once('/').map_or("", |(g, _)| g);
    Some((group, kind))
}

/// The copies sorted by cluster name (ties by their JSON), so every fold
/// is independent of the order the caller passes them in.
fn sorted<'a, 'b>(copies: &'b [MemberCopy<'a>]) -> Vec<&'b MemberCopy<'a>> {
    let mut v: Vec<&MemberCopy<'a>> = copies.iter().collect();
    v.sort_by(|a, b| a.cluster.cmp(b.cluster).then_with(|| tie(a, b)));
    v
}

fn tie(a: &MemberCopy<'_>, b: &MemberCopy<'_>) -> Ordering {
    let key = |c: &MemberCopy<'_>| (c.current, c.object.map(Value::to_string));
    key(a).cmp(&key(b))
}

/// An integer field of a member's status (0 when absent or negative).
pub(crate) fn count(status: Option<&Value>, field: &str) -> i64 {
    status
        .and_then(|s| s.get(field))
        .and_then(Value::as_i64)
        .unwrap_or(0)
        .max(0)
}

/// Sums `fields` over the copies' statuses into `out`. A field is written
/// when its sum is non-zero, when `always` (upstream serializes it even
/// at 0), or when any copy carries it (optional pointer fields such as
/// `terminatingReplicas`, `ready`).
pub(crate) fn sum_into(
    out: &mut Map<String, Value>,
    copies: &[&MemberCopy<'_>],
    fields: &[(&str, Presence)],
) {
    for &(field, presence) in fields {
        let sum: i64 = copies
            .iter()
            .map(|c| count(c.status(), field))
            .fold(0i64, i64::saturating_add);
        let carried = copies
            .iter()
            .any(|c| c.status().and_then(|s| s.get(field)).is_some());
        let write = match presence {
            Presence::Always => true,
            Presence::NonZero => sum != 0,
            Presence::Carried => carried,
        };
        if write {
            out.insert(field.to_owned(), Value::from(sum));
        }
    }
}

/// When a summed field is written (upstream's Go serialization).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Presence {
    /// Always (no `omitempty`).
    Always,
    /// When non-zero (`omitempty` on an int).
    NonZero,
    /// When some copy carries it (`omitempty` on a pointer).
    Carried,
}

#[cfg(test)]
pub(crate) mod fixtures;
#[cfg(test)]
mod tests;
