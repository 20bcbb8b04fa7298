//! The federation scheduler core (issue 12, DESIGN §3–§4): which clusters
//! get an object and, for Divided kinds, how many replicas each. Pure: no
//! I/O, clock or randomness (the time enters through
//! [`ClusterSnapshot::from_cluster_at`]).
//!
//! [`schedule`] runs the stages in order: [`filter()`] (selection,
//! readiness, API, taints), the grace period
//! ([`filter::kept_while_not_ready`]), then, by the scheduling mode, whole
//! copies (Duplicated) or [`divide()`] (Federation V1's planner) with
//! static or capacity weights ([`capacity::capacity_weights`]).
//! [`effective::effective`] layers an object's placement over its
//! Namespace's; [`ClusterSnapshot::from_cluster_at`] reads a Cluster
//! object; [`capacity::capacity_map`] is V1's capacity estimate;
//! [`record`] writes a decision down (a Placement's `status.decision`, the
//! dry-run annotation) and reads it back.

pub mod capacity;
pub mod divide;
pub mod effective;
pub mod filter;
pub mod record;
pub mod snapshot;

use std::collections::{BTreeMap, BTreeSet};

use serde_json::Value;
use skein_admission::placement::{Placement, ReplicaWeighting};

pub use capacity::capacity_map;
pub use divide::{Division, divide};
pub use effective::{defaults_namespace, effective};
pub use filter::{Exclusion, Gvr, filter};
pub use record::{decision_annotation, decision_status, scheduling_of};
pub use snapshot::{ClusterSnapshot, Readiness, Taint};

/// The key that seeds an object's tie-break: `namespace/name`, or `name`
/// for a cluster-scoped object. Known before the object is stored, so a
/// dry run and the real scheduling of the same object agree.
pub fn object_key(object: &Value) -> String {
    let meta = |f: &str| {
        object
            .pointer(&format!("/metadata/{f}"))
            .and_then(Value::as_str)
            .unwrap_or_default()
    };
    match meta("namespace") {
        "" => meta("name").to_owned(),
        ns => format!("{ns}/{}", meta("name")),
    }
}

/// Everything a scheduling decision depends on.
#[derive(Debug, Clone, Copy)]
pub struct ScheduleInput<'a> {
    /// The object's group/version/resource.
    pub gvr: &'a Gvr,
    /// Seeds the tie-break (`namespace/name` or the UID); stable for the
    /// object's life.
    pub object_key: &'a str,
    /// The effective placement (the object's annotations over its
    /// Namespace's).
    pub placement: &'a Placement,
    /// The desired replica count of a divisible kind (Deployment,
    /// ReplicaSet, StatefulSet, a Job's parallelism); `None` for kinds
    /// that are always copied whole.
    pub replicas: Option<i64>,
    /// Every known Cluster.
    pub clusters: &'a [ClusterSnapshot],
    /// Replicas per cluster in the previous decision (read for
    /// `rebalance: false`, and for the share a not-Ready cluster keeps
    /// within the grace period).
    pub current: &'a BTreeMap<String, i64>,
    /// The clusters of the previous decision (every assigned cluster,
    /// Divided or Duplicated; empty for a new object). A not-Ready cluster
    /// in it keeps what it holds (see [`schedule`]).
    pub previous: &'a BTreeSet<String>,
    /// Estimated replicas each cluster can still hold; a missing name is
    /// unbounded.
    pub capacity: &'a BTreeMap<String, i64>,
}

/// What one chosen cluster gets.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Assignment {
    /// The whole object (Duplicated, or a kind without replicas).
    Whole,
    /// The object with this many replicas (Divided; 0 allowed: the object
    /// still exists there).
    Replicas(i64),
}

/// The scheduler's answer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Decision {
    /// Every eligible cluster, sorted by name. Empty means unschedulable:
    /// `excluded` says why.
    pub assignments: BTreeMap<String, Assignment>,
    /// Every other known or named cluster, with the reason.
    pub excluded: BTreeMap<String, Exclusion>,
    /// Replicas no eligible cluster could take (caps and capacity
    /// reached, no eligible cluster, or no cluster with a weight).
    pub unplaced: i64,
}

impl Decision {
    /// Whether no cluster gets the object.
    pub fn is_unschedulable(&self) -> bool {
        self.assignments.is_empty()
    }
}

/// Decides where the object goes. Divided is the default for a kind with
/// replicas; `skein.io/replica-scheduling: Duplicated` (or a kind without
/// replicas) copies the object whole to every eligible cluster.
///
/// Readiness and the grace period (`--cluster-grace-period`):
/// - a Ready cluster that passes the filter is eligible;
/// - a cluster not Ready for less than the grace period
///   ([`Readiness::Unready`]) that is in the previous decision (and still
///   passes every other check) keeps what it has: nothing moves, its
///   Divided share (`current`, as far as the new total allows) stays and
///   the rest is divided over the Ready clusters;
/// - a not-Ready cluster that is not in the previous decision is excluded
///   `NotReady`;
/// - past the grace period ([`Readiness::Offline`]) a Divided object's
///   cluster is excluded `NotReady` and its replicas are re-planned onto
///   the Ready clusters, while a Duplicated copy stays where it is.
///
/// Weights: `skein.io/replica-weighting: Static` (default) takes them from
/// the preferences; `Capacity` from each cluster's capacity
/// ([`capacity::capacity_weights`]). In both, `capacity` caps every
/// cluster and what a full cluster cannot take goes to clusters with room.
pub fn schedule(input: &ScheduleInput<'_>) -> Decision {
    let (eligible, mut excluded) = filter(input.gvr, input.placement, input.clusters);
    let divided = scheduling_of(input.placement, input.replicas) == "Divided";
    let kept = filter::kept_while_not_ready(
        input.gvr,
        input.placement,
        input.clusters,
        input.previous,
        !divided,
    );
    for k in &kept {
        excluded.remove(k);
    }
    match input.replicas.filter(|_| divided) {
        Some(total) => {
            let mut left = total.max(0);
            let mut assignments = BTreeMap::new();
            for k in kept {
                let n = input.current.get(&k).copied().unwrap_or(0).clamp(0, left);
                left -= n;
                assignments.insert(k, Assignment::Replicas(n));
            }
            let preferences = input.placement.effective_replica_preferences();
            let preferences = match input.placement.effective_replica_weighting() {
                ReplicaWeighting::Static => preferences,
                ReplicaWeighting::Capacity => {
                    capacity::capacity_weights(&preferences, &eligible, input.capacity)
                }
            };
            let d = divide(
                left,
                &preferences,
                &eligible,
                input.current,
                input.capacity,
                input.object_key,
            );
            assignments.extend(
                d.replicas
                    .into_iter()
                    .map(|(k, n)| (k, Assignment::Replicas(n))),
            );
            Decision {
                assignments,
                excluded,
                unplaced: d.unplaced,
            }
        }
        None => Decision {
            assignments: eligible
                .into_iter()
                .chain(kept)
                .map(|k| (k, Assignment::Whole))
                .collect(),
            excluded,
            unplaced: 0,
        },
    }
}

#[cfg(test)]
mod tests;
