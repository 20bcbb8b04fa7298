//! The sync planner: what to do for one (object, cluster) pair, from the
//! desired copy and the member's object. Pure: no I/O.
//!
//! STUB (lead): the signature is the contract; a helper fills it in.

use serde_json::Value;
use skein_admission::placement::{ConflictResolution, Drift};

/// The policies that decide conflicts and drift (`skein.io/conflict-resolution`, `skein.io/drift`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Policy {
    /// For a member object of that name without Skein's markers.
    pub conflict: ConflictResolution,
    /// For a field another manager changed.
    pub drift: Drift,
}

/// What the syncer does.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Action {
    /// The member has no such object: create it (server-side apply).
    Create,
    /// Server-side apply the desired copy; `force` takes fields from other
    /// managers (drift Enforce, Adopt).
    Apply {
        /// Force conflicts.
        force: bool,
    },
    /// Replace the member's object whole (conflict Overwrite): PUT at the
    /// observed resourceVersion.
    Replace,
    /// The member's copy is as desired.
    Nothing,
    /// Delete the member's copy (ours, no longer desired).
    Delete,
    /// Leave the member's copy and strip Skein's markers (orphan deletion).
    Orphan,
    /// An object of that name that Skein does not own is there; left alone.
    Conflict {
        /// For people: whose object it is.
        message: String,
    },
    /// Another manager changed a field Skein manages (drift Report).
    Drifted {
        /// The field path (`spec.replicas`, `spec.template.spec.containers[name=web].image`).
        path: String,
        /// The manager that owns it now.
        manager: String,
    },
}

/// What the federation wants on the member.
#[derive(Debug, Clone, Copy)]
pub enum Desired<'a> {
    /// This copy (rendered).
    Copy(&'a Value),
    /// No copy (the object or the cluster left the placement).
    Absent,
    /// No copy, and the member's copy is left there without markers.
    Orphaned,
}

/// Decides the action. `origin_uid` is the federated object's uid;
/// `observed` is the member's object of that name, if any.
pub fn plan(
    desired: Desired<'_>,
    observed: Option<&Value>,
    origin_uid: &str,
    policy: Policy,
) -> Action {
    let _ = (origin_uid, policy);
    match (desired, observed) {
        (Desired::Copy(_), None) => Action::Create,
        (Desired::Copy(_), Some(_)) => Action::Apply { force: true },
        (Desired::Absent, Some(_)) => Action::Delete,
        (Desired::Orphaned, Some(_)) => Action::Orphan,
        (_, None) => Action::Nothing,
    }
}

/// The origin uid of a member object that carries Skein's markers (the
/// ownership label and annotation), else `None`.
pub fn is_ours(observed: &Value) -> Option<&str> {
    observed
        .pointer("/metadata/labels")
        .and_then(|l| l.get(super::MANAGED_BY))?;
    observed
        .pointer("/metadata/annotations")
        .and_then(|a| a.get(super::ORIGIN_UID))
        .and_then(Value::as_str)
}
