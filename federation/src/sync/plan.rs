//! The sync planner: what to do for one (object, cluster) pair, from the
//! desired copy and the member's object. Pure: no I/O.
//!
//! Contract ([`plan`]):
//! - a copy is desired and the member has none: [`Action::Create`];
//! - the member's object is not Skein's ([`is_ours`] is `None`): the
//!   conflict policy decides (Abort: [`Action::Conflict`] naming its
//!   managers; Adopt: a forced apply; Overwrite: [`Action::Replace`]);
//!   nothing else ever touches it;
//! - it is Skein's copy of an older object of that name: a forced apply;
//! - it is this object's copy: [`Action::Nothing`] when it [`contained`]s
//!   the desired copy and Skein's own apply owns nothing the desired copy
//!   lacks; else, when a field that differs is owned by another manager
//!   ([`field_owner`]), the drift policy decides (Enforce: a forced apply;
//!   Report: [`Action::Drifted`]; Ignore: nothing); else an unforced apply
//!   (Skein's older apply, a defaulted field);
//! - no copy is desired: Skein's copy is deleted ([`Action::Delete`]) or
//!   orphaned ([`Action::Orphan`]); another's object is left alone.
//!
//! Drift Report and Ignore hold back the whole copy (an unforced apply
//! would conflict on the drifted field); [`without_drift`] gives the copy
//! minus the drifted fields, which plans to an unforced apply (or nothing)
//! and brings the rest of a template change to the member.

mod owners;
mod path;

use serde_json::Value;
use skein_admission::placement::{ConflictResolution, Drift};

pub use owners::{field_owner, skein_owns_more};
pub use path::{FieldPath, Step, differences};

use super::{MANAGED_BY, ORIGIN_UID};

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

/// How many differing paths are examined for an owner.
const MAX_DIFFERENCES: usize = 64;

/// Decides the action. `origin_uid` is the federated object's uid;
/// `observed` is the member's object of that name, if any.
pub fn plan(
    desired: Desired<'_>,
    observed: Option<&Value>,
    origin_uid: &str,
    policy: Policy,
) -> Action {
    let ours = observed.and_then(is_ours).is_some();
    match (desired, observed) {
        (Desired::Copy(_), None) => Action::Create,
        (Desired::Copy(d), Some(o)) => match is_ours(o) {
            None => match policy.conflict {
                ConflictResolution::Abort => Action::Conflict {
                    message: conflict_message(d, o),
                },
                ConflictResolution::Adopt => Action::Apply { force: true },
                ConflictResolution::Overwrite => Action::Replace,
            },
            Some(uid) if uid != origin_uid => Action::Apply { force: true },
            Some(_) => update(d, o, policy.drift),
        },
        (Desired::Absent, _) if ours => Action::Delete,
        (Desired::Orphaned, _) if ours => Action::Orphan,
        (Desired::Absent | Desired::Orphaned, _) => Action::Nothing,
    }
}

/// Our copy of this object: as desired, drifted, or behind.
fn update(d: &Value, o: &Value, drift: Drift) -> Action {
    let diffs = differences(d, o, MAX_DIFFERENCES);
    if diffs.is_empty() {
        return if skein_owns_more(d, o) {
            Action::Apply { force: false }
        } else {
            Action::Nothing
        };
    }
    let Some(managed) = owners::managed(o) else {
        return Action::Apply { force: false };
    };
    for p in &diffs {
        if let Some(manager) = owners::owner_in(&managed, o, p) {
            return match drift {
                Drift::Enforce => Action::Apply { force: true },
                Drift::Report => Action::Drifted {
                    path: p.to_string(),
                    manager,
                },
                Drift::Ignore => Action::Nothing,
            };
        }
    }
    Action::Apply { force: false }
}

/// `copy` without the fields where `observed` differs and another manager
/// owns the value (the drifted fields; an atomic list or map is left out
/// whole), never the ownership markers. Applying it (unforced) brings
/// every other change of the template to the member while leaving the
/// drift alone: the syncer's way to honour drift Ignore or Report without
/// holding back the rest of the copy.
pub fn without_drift(copy: &Value, observed: &Value) -> Value {
    let mut out = copy.clone();
    let Some(managed) = owners::managed(observed) else {
        return out;
    };
    let mut cuts: Vec<Vec<Step>> = differences(copy, observed, MAX_CUTS)
        .into_iter()
        .filter_map(|p| {
            let (_, depth) = owners::owned_at(&managed, observed, &p)?;
            let cut: Vec<Step> = p.0.into_iter().take(depth).collect();
            (!is_marker(&cut)).then_some(cut)
        })
        .collect();
    // Deepest and last items first, so indexes stay valid.
    cuts.sort_by(|a, b| sort_key(b).cmp(&sort_key(a)));
    cuts.dedup();
    for cut in &cuts {
        remove(&mut out, cut);
    }
    out
}

/// How many differing paths [`without_drift`] examines.
const MAX_CUTS: usize = 1024;

fn is_marker(path: &[Step]) -> bool {
    let names: Vec<Option<&str>> = path
        .iter()
        .map(|s| match s {
            Step::Field(n) => Some(n.as_str()),
            Step::Item { .. } => None,
        })
        .collect();
    matches!(
        names.as_slice(),
        [Some("metadata")] | [Some("metadata"), Some("labels" | "annotations")]
    ) || names == [Some("metadata"), Some("labels"), Some(MANAGED_BY)]
        || names == [Some("metadata"), Some("annotations"), Some(ORIGIN_UID)]
}

fn sort_key(path: &[Step]) -> Vec<(&str, usize)> {
    path.iter()
        .map(|s| match s {
            Step::Field(n) => (n.as_str(), 0),
            Step::Item { index, .. } => ("", *index),
        })
        .collect()
}

/// Removes the value at `path` (nothing when it is not there).
fn remove(v: &mut Value, path: &[Step]) {
    match path {
        [] => {}
        [Step::Field(n)] => {
            if let Value::Object(m) = v {
                m.remove(n);
            }
        }
        [Step::Item { index, .. }] => {
            if let Value::Array(a) = v
                && *index < a.len()
            {
                a.remove(*index);
            }
        }
        [step, rest @ ..] => {
            let next = match step {
                Step::Field(n) => v.get_mut(n.as_str()),
                Step::Item { index, .. } => v.get_mut(*index),
            };
            if let Some(next) = next {
                remove(next, rest);
            }
        }
    }
}

/// The origin uid when `observed` carries both of Skein's markers (the
/// [`MANAGED_BY`] label and the [`ORIGIN_UID`] annotation).
pub fn is_ours(observed: &Value) -> Option<&str> {
    observed
        .pointer("/metadata/labels")
        .and_then(|l| l.get(MANAGED_BY))
        .and_then(Value::as_str)?;
    observed
        .pointer("/metadata/annotations")
        .and_then(|a| a.get(ORIGIN_UID))
        .and_then(Value::as_str)
}

/// Whether a member's newer version `new` of the copy `seen` differs from
/// it only in `status` (and the `resourceVersion` and `managedFields` that
/// a status write changes): no plan can change, since planning reads no
/// status, so only what is recorded from the status needs a look.
pub fn status_only_change(seen: &Value, new: &Value) -> bool {
    let (Some(a), Some(b)) = (seen.as_object(), new.as_object()) else {
        return false;
    };
    same_but(a, b, &["status"], |key, x, y| {
        match (x.as_object(), y.as_object()) {
            (Some(ma), Some(mb)) if key == "metadata" => {
                same_but(ma, mb, &["resourceVersion", "managedFields"], |_, x, y| {
                    x == y
                })
            }
            _ => x == y,
        }
    })
}

/// Whether maps `a` and `b` have the same keys outside `ignored`, with
/// values that `eq` (given the key) finds equal.
fn same_but(
    a: &serde_json::Map<String, Value>,
    b: &serde_json::Map<String, Value>,
    ignored: &[&str],
    eq: impl Fn(&str, &Value, &Value) -> bool,
) -> bool {
    let kept = |m: &serde_json::Map<String, Value>| {
        m.keys().filter(|k| !ignored.contains(&k.as_str())).count()
    };
    kept(a) == kept(b)
        && a.iter()
            .filter(|(k, _)| !ignored.contains(&k.as_str()))
            .all(|(k, x)| b.get(k).is_some_and(|y| eq(k, x, y)))
}

/// `Ok` when `observed` contains `desired` (see [`differences`]); else
/// the first differing path, printed (`spec.template.spec.containers[name=web].image`).
///
/// # Errors
///
/// The first path where `observed` does not contain `desired`.
pub fn contained(desired: &Value, observed: &Value) -> Result<(), String> {
    match differences(desired, observed, 1).first() {
        Some(p) => Err(p.to_string()),
        None => Ok(()),
    }
}

/// `a ConfigMap "x" that Skein does not manage exists in namespace "ns"
/// (managed by kubectl-client-side-apply)`.
fn conflict_message(desired: &Value, observed: &Value) -> String {
    let s = |v: &Value, p: &str| v.pointer(p).and_then(Value::as_str).map(str::to_owned);
    let kind = s(desired, "/kind")
        .or_else(|| s(observed, "/kind"))
        .unwrap_or_else(|| "object".to_owned());
    let name = s(observed, "/metadata/name")
        .or_else(|| s(desired, "/metadata/name"))
        .unwrap_or_default();
    let article = if kind.starts_with(['A', 'E', 'I', 'O', 'U']) {
        "an"
    } else {
        "a"
    };
    let mut out = format!("{article} {kind} {name:?} that Skein does not manage exists");
    if let Some(ns) = s(observed, "/metadata/namespace").filter(|n| !n.is_empty()) {
        out.push_str(&format!(" in namespace {ns:?}"));
    }
    let mut managers: Vec<&str> = Vec::new();
    for m in observed
        .pointer("/metadata/managedFields")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(|e| e.get("manager").and_then(Value::as_str))
    {
        if !managers.contains(&m) {
            managers.push(m);
        }
    }
    if !managers.is_empty() {
        out.push_str(&format!(" (managed by {})", managers.join(", ")));
    }
    out
}

#[cfg(test)]
mod tests;
