//! The federation scheduler core (issue 12, DESIGN §3–§4): which clusters
//! get an object and, for Divided kinds, how many replicas each. Pure: no
//! I/O, clock or randomness; not wired to any worker yet.
//!
//! [`schedule`] runs the stages in order: [`filter()`] (selection,
//! readiness, API, taints) then, by the scheduling mode,
//! whole copies (Duplicated) or [`divide()`] (Federation V1's planner).
//! [`ClusterSnapshot::from_cluster`] reads a Cluster object;
//! [`capacity::replicas_fitting`] is V1's capacity estimate.

pub mod capacity;
pub mod divide;
pub mod filter;
pub mod snapshot;

use std::collections::BTreeMap;

use skein_admission::placement::{Placement, ReplicaScheduling};

pub use divide::{Division, divide};
pub use filter::{Exclusion, Gvr, filter};
pub use snapshot::{ClusterSnapshot, Taint};

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
    /// `rebalance: false`).
    pub current: &'a BTreeMap<String, i64>,
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
pub fn schedule(input: &ScheduleInput<'_>) -> Decision {
    let (eligible, excluded) = filter(input.gvr, input.placement, input.clusters);
    let mode = input
        .placement
        .replica_scheduling
        .unwrap_or(ReplicaScheduling::Divided);
    match (mode, input.replicas) {
        (ReplicaScheduling::Divided, Some(total)) => {
            let d = divide(
                total,
                &input.placement.effective_replica_preferences(),
                &eligible,
                input.current,
                input.capacity,
                input.object_key,
            );
            Decision {
                assignments: d
                    .replicas
                    .into_iter()
                    .map(|(k, n)| (k, Assignment::Replicas(n)))
                    .collect(),
                excluded,
                unplaced: d.unplaced,
            }
        }
        _ => Decision {
            assignments: eligible
                .into_iter()
                .map(|k| (k, Assignment::Whole))
                .collect(),
            excluded,
            unplaced: 0,
        },
    }
}

#[cfg(test)]
mod tests;
