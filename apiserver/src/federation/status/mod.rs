//! Status aggregation (DESIGN §4): per-kind folds of the member copies'
//! statuses into the federated object's native status, so `kubectl
//! rollout status` and Helm's `--wait` read the truth about every member.
//! Pure: no I/O, no clock.

use serde_json::Value;

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

/// The federated object's new `status`, folded from its copies; `None`
/// when its kind has no aggregator (its status is left alone).
pub fn aggregate(federated: &Value, copies: &[MemberCopy<'_>]) -> Option<Value> {
    let _ = (federated, copies);
    None
}

/// Whether a member's copy reports ready (the Placement's `Ready` state):
/// kstatus' "Current" for the kinds it knows, else "exists".
pub fn is_ready(member_object: &Value) -> bool {
    let _ = member_object;
    true
}
