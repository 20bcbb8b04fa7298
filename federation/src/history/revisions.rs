//! A federated StatefulSet's or DaemonSet's revision history: the
//! ControllerRevisions the federation keeps for it, as
//! kube-controller-manager's StatefulSet controller
//! (`history.NewControllerRevision`, `truncateHistory`) and DaemonSet
//! controller (`constructHistory`, `snapshot`, `cleanupHistory`) keep
//! them, without Pods.
//!
//! Contract of [`plan`]:
//! - one ControllerRevision `<owner>-<hash>` per distinct Pod template,
//!   controlled by the owner, annotated with the owner's annotations,
//!   labelled with the template's labels plus the hash, whose `data` is
//!   `{"spec":{"template":{…,"$patch":"replace"}}}` (what `kubectl rollout
//!   undo` applies as a strategic merge patch). StatefulSets: the hash is
//!   upstream's `HashControllerRevision` over the data, label
//!   `controller.kubernetes.io/hash` (the simulator's [`history::hash`]);
//!   DaemonSets: the Pod-template hash (`ComputeHash`, label
//!   `controller-revision-hash`), as upstream's DaemonSet controller;
//! - the template's revision is the highest: a new template gets max+1, a
//!   known template that is not the newest is renumbered max+1;
//! - revisions beyond `spec.revisionHistoryLimit` (default 10), lowest
//!   numbers first, are deleted, never the current template's nor the one
//!   `status.currentRevision` names;
//! - the owner's status is not touched (the status aggregator owns it).
//!
//! Pure: no I/O.

use serde_json::{Value, json};

use skein_apiserver::registry::object;
use skein_workloads::controller_history as history;
use skein_workloads::deployment::revision;
use skein_workloads::template;

/// The label on a DaemonSet's revisions holding the template hash.
pub const DAEMONSET_HASH_LABEL: &str = "controller-revision-hash";

/// How many hash collisions [`plan`] steps over before giving up.
const MAX_COLLISIONS: i64 = 10;

/// The kinds whose history is ControllerRevisions.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// apps/v1 StatefulSet.
    StatefulSet,
    /// apps/v1 DaemonSet.
    DaemonSet,
}

impl Kind {
    /// The kind's name (`StatefulSet`, `DaemonSet`).
    pub fn name(self) -> &'static str {
        match self {
            Kind::StatefulSet => "StatefulSet",
            Kind::DaemonSet => "DaemonSet",
        }
    }

    /// The kind named `kind` (of apps/v1), if it keeps ControllerRevisions.
    pub fn of(kind: &str) -> Option<Kind> {
        match kind {
            "StatefulSet" => Some(Kind::StatefulSet),
            "DaemonSet" => Some(Kind::DaemonSet),
            _ => None,
        }
    }
}

/// What to do for one owner.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Plan {
    /// The ControllerRevision of the current template, to create.
    pub create: Option<Value>,
    /// An existing revision of the current template to renumber:
    /// `(name, uid, revision)`.
    pub renumber: Option<(String, String, i64)>,
    /// Revisions to delete: `(name, uid)`.
    pub deletes: Vec<(String, String)>,
}

impl Plan {
    /// Whether there is nothing to do.
    pub fn is_empty(&self) -> bool {
        self.create.is_none() && self.renumber.is_none() && self.deletes.is_empty()
    }
}

/// The plan for `owner` (a `kind`) given the ControllerRevisions of its
/// namespace (any order; those it does not control are ignored). See the
/// module documentation.
pub fn plan(kind: Kind, owner: &Value, revisions: &[&Value]) -> Plan {
    let mut out = Plan::default();
    if object::is_deleting(owner) || object::uid(owner).is_empty() {
        return out;
    }
    let uid = object::uid(owner);
    let mut owned: Vec<&Value> = revisions
        .iter()
        .copied()
        .filter(|r| template::is_controlled_by(r, uid) && !object::is_deleting(r))
        .collect();
    owned.sort_by(|a, b| {
        history::number(a)
            .cmp(&history::number(b))
            .then_with(|| object::name(a).cmp(object::name(b)))
    });
    let data = history::patch(owner);
    let max = owned.last().map_or(0, |r| history::number(r));
    let update_name = match owned.iter().rposition(|r| r.get("data") == Some(&data)) {
        Some(i) => {
            let r = owned[i];
            if history::number(r) < max || (i + 1 < owned.len()) {
                out.renumber = Some((
                    object::name(r).to_owned(),
                    object::uid(r).to_owned(),
                    max.saturating_add(1),
                ));
            }
            object::name(r).to_owned()
        }
        None => match new_revision(kind, owner, &data, max.saturating_add(1), &owned) {
            Some(rev) => {
                let name = object::name(&rev).to_owned();
                out.create = Some(rev);
                name
            }
            None => return out,
        },
    };
    let current_name = owner
        .pointer("/status/currentRevision")
        .and_then(Value::as_str)
        .unwrap_or_default();
    let limit = owner
        .pointer("/spec/revisionHistoryLimit")
        .and_then(Value::as_i64)
        .unwrap_or(10)
        .max(0);
    let limit = usize::try_from(limit).unwrap_or(usize::MAX);
    let old: Vec<&Value> = owned
        .iter()
        .copied()
        .filter(|r| object::name(r) != update_name && object::name(r) != current_name)
        .collect();
    let excess = old.len().saturating_sub(limit);
    out.deletes = old
        .into_iter()
        .take(excess)
        .map(|r| (object::name(r).to_owned(), object::uid(r).to_owned()))
        .collect();
    out
}

/// A new revision of `owner` numbered `number`, named with the first
/// collision count (from `status.collisionCount`) whose name no owned
/// revision holds; `None` after [`MAX_COLLISIONS`] tries.
fn new_revision(
    kind: Kind,
    owner: &Value,
    data: &Value,
    number: i64,
    owned: &[&Value],
) -> Option<Value> {
    let first = owner
        .pointer("/status/collisionCount")
        .and_then(Value::as_i64)
        .unwrap_or(0)
        .max(0);
    (first..=first.saturating_add(MAX_COLLISIONS))
        .map(|count| build(kind, owner, data, number, count))
        .find(|rev| !owned.iter().any(|r| object::name(r) == object::name(rev)))
}

/// The ControllerRevision of `owner` with `data`, `number` and collision
/// count `count`.
fn build(kind: Kind, owner: &Value, data: &Value, number: i64, count: i64) -> Value {
    let mut rev = history::new_revision(owner, "apps/v1", kind.name(), data, number, count);
    if kind == Kind::DaemonSet {
        let template = owner.pointer("/spec/template").unwrap_or(&Value::Null);
        // Upstream hashes an unset collision count as no bytes at all.
        let collision = (count > 0 || owner.pointer("/status/collisionCount").is_some())
            .then(|| i32::try_from(count).unwrap_or(i32::MAX));
        let hash = revision::compute_hash(template, collision);
        rev["metadata"]["name"] = json!(format!("{}-{hash}", object::name(owner)));
        if let Some(labels) = rev
            .pointer_mut("/metadata/labels")
            .and_then(Value::as_object_mut)
        {
            labels.remove(history::HASH_LABEL);
            labels.insert(DAEMONSET_HASH_LABEL.into(), json!(hash));
        }
    }
    rev
}

/// `revision` renumbered to `number`, or `None` when it already is (or
/// is higher).
pub fn renumbered(revision: &Value, number: i64) -> Option<Value> {
    if history::number(revision) >= number {
        return None;
    }
    let mut next = revision.clone();
    next["revision"] = json!(number);
    Some(next)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn owner(kind: Kind, image: &str) -> Value {
        json!({
            "apiVersion": "apps/v1", "kind": kind.name(),
            "metadata": {"name": "db", "namespace": "ns", "uid": "o-uid",
                         "annotations": {"team": "a"}},
            "spec": {"revisionHistoryLimit": 10,
                     "selector": {"matchLabels": {"app": "db"}},
                     "template": {"metadata": {"labels": {"app": "db"}},
                                  "spec": {"containers": [{"name": "c", "image": image}]}}},
        })
    }

    fn converge(kind: Kind, o: &Value, revs: &mut Vec<Value>) {
        for round in 0..4 {
            let refs: Vec<&Value> = revs.iter().collect();
            let p = plan(kind, o, &refs);
            if p.is_empty() {
                return;
            }
            if let Some(r) = p.create {
                let mut r = r;
                r["metadata"]["uid"] = json!(format!("r-{}", revs.len()));
                revs.push(r);
            }
            if let Some((name, _, n)) = &p.renumber {
                let slot = revs
                    .iter_mut()
                    .find(|r| object::name(r) == name)
                    .expect("exists");
                if let Some(next) = renumbered(slot, *n) {
                    *slot = next;
                }
            }
            revs.retain(|r| !p.deletes.iter().any(|(n, _)| n == object::name(r)));
            assert!(round < 3, "no convergence");
        }
    }

    fn numbers(revs: &[Value]) -> Vec<i64> {
        let mut n: Vec<i64> = revs.iter().map(history::number).collect();
        n.sort_unstable();
        n
    }

    #[test]
    fn statefulset_revisions_are_upstreams() {
        let o = owner(Kind::StatefulSet, "v1");
        let p = plan(Kind::StatefulSet, &o, &[]);
        let rev = p.create.expect("created");
        let data = history::patch(&o);
        let hash = history::hash(&data, 0);
        assert_eq!(rev["metadata"]["name"], format!("db-{hash}"));
        assert_eq!(
            rev["metadata"]["labels"],
            json!({"app": "db", history::HASH_LABEL: hash})
        );
        assert_eq!(rev["metadata"]["annotations"]["team"], "a");
        assert_eq!(rev["metadata"]["ownerReferences"][0]["uid"], "o-uid");
        assert_eq!(rev["metadata"]["ownerReferences"][0]["controller"], true);
        assert_eq!(rev["data"]["spec"]["template"]["$patch"], "replace");
        assert_eq!(rev["revision"], 1);
    }

    #[test]
    fn daemonset_revisions_are_named_by_the_template_hash() {
        let o = owner(Kind::DaemonSet, "v1");
        let rev = plan(Kind::DaemonSet, &o, &[]).create.expect("created");
        let hash = revision::compute_hash(&o["spec"]["template"], None);
        assert_eq!(rev["metadata"]["name"], format!("db-{hash}"));
        assert_eq!(
            rev["metadata"]["labels"],
            json!({"app": "db", DAEMONSET_HASH_LABEL: hash})
        );
        assert_eq!(rev["metadata"]["ownerReferences"][0]["kind"], "DaemonSet");
    }

    #[test]
    fn changes_add_revisions_and_going_back_renumbers() {
        for kind in [Kind::StatefulSet, Kind::DaemonSet] {
            let mut revs = Vec::new();
            converge(kind, &owner(kind, "v1"), &mut revs);
            converge(kind, &owner(kind, "v2"), &mut revs);
            assert_eq!(numbers(&revs), [1, 2]);
            converge(kind, &owner(kind, "v1"), &mut revs);
            assert_eq!(numbers(&revs), [2, 3], "{kind:?}");
            let v1 = history::patch(&owner(kind, "v1"));
            let current = revs.iter().find(|r| r["data"] == v1).expect("v1 kept");
            assert_eq!(history::number(current), 3);
            let refs: Vec<&Value> = revs.iter().collect();
            assert!(
                plan(kind, &owner(kind, "v1"), &refs).is_empty(),
                "idempotent"
            );
        }
    }

    #[test]
    fn the_history_limit_keeps_the_newest_and_the_current_revision() {
        let kind = Kind::StatefulSet;
        let mut revs = Vec::new();
        let with_limit = |image: &str, limit: i64| {
            let mut o = owner(kind, image);
            o["spec"]["revisionHistoryLimit"] = json!(limit);
            o
        };
        for i in 0..5 {
            converge(kind, &with_limit(&format!("v{i}"), 2), &mut revs);
        }
        assert_eq!(numbers(&revs), [3, 4, 5]);
        let mut o = with_limit("v5", 0);
        let current = revs
            .iter()
            .find(|r| history::number(r) == 3)
            .map(|r| object::name(r).to_owned())
            .expect("revision 3");
        o["status"] = json!({"currentRevision": current});
        converge(kind, &o, &mut revs);
        assert_eq!(numbers(&revs), [3, 6]);
    }

    #[test]
    fn foreign_and_deleting_objects_are_left_alone() {
        let o = owner(Kind::StatefulSet, "v1");
        let mut foreign =
            history::new_revision(&o, "apps/v1", "StatefulSet", &history::patch(&o), 7, 0);
        foreign["metadata"]["ownerReferences"][0]["uid"] = json!("other");
        let p = plan(Kind::StatefulSet, &o, &[&foreign]);
        assert_eq!(p.create.map(|r| r["revision"].clone()), Some(json!(1)));
        assert!(p.deletes.is_empty());
        let mut deleting = o.clone();
        deleting["metadata"]["deletionTimestamp"] = json!("2026-01-01T00:00:00Z");
        assert!(plan(Kind::StatefulSet, &deleting, &[]).is_empty());
    }

    #[test]
    fn a_name_collision_takes_the_next_count() {
        let o = owner(Kind::StatefulSet, "v1");
        let other = owner(Kind::StatefulSet, "other");
        let mut squatter = history::new_revision(
            &other,
            "apps/v1",
            "StatefulSet",
            &history::patch(&other),
            1,
            0,
        );
        squatter["metadata"]["name"] =
            json!(format!("db-{}", history::hash(&history::patch(&o), 0)));
        let p = plan(Kind::StatefulSet, &o, &[&squatter]);
        let created = p.create.expect("created");
        assert_eq!(
            created["metadata"]["name"],
            format!("db-{}", history::hash(&history::patch(&o), 1))
        );
        assert_eq!(created["revision"], 2);

        let o = owner(Kind::DaemonSet, "v1");
        let hash = revision::compute_hash(&o["spec"]["template"], None);
        squatter["metadata"]["name"] = json!(format!("db-{hash}"));
        let created = plan(Kind::DaemonSet, &o, &[&squatter])
            .create
            .expect("created");
        assert_eq!(
            created["metadata"]["name"],
            format!(
                "db-{}",
                revision::compute_hash(&o["spec"]["template"], Some(1))
            )
        );
    }

    proptest::proptest! {
        /// Whatever the edits, a converged history has the owner's
        /// template at the highest revision, distinct revisions, at most
        /// `limit` others, and nothing left to do.
        #[test]
        fn converged_histories_hold_their_invariants(
            daemonset in proptest::bool::ANY,
            edits in proptest::collection::vec((0u8..4, 0u8..3), 1..25),
        ) {
            let kind = if daemonset { Kind::DaemonSet } else { Kind::StatefulSet };
            let mut revs = Vec::new();
            for (image, limit) in edits {
                let mut o = owner(kind, &format!("v{image}"));
                o["spec"]["revisionHistoryLimit"] = json!(limit);
                converge(kind, &o, &mut revs);
                let refs: Vec<&Value> = revs.iter().collect();
                proptest::prop_assert!(plan(kind, &o, &refs).is_empty());
                let n = numbers(&revs);
                let mut distinct = n.clone();
                distinct.dedup();
                proptest::prop_assert_eq!(&distinct, &n);
                let data = history::patch(&o);
                let current = revs.iter().find(|r| r["data"] == data).expect("current");
                proptest::prop_assert_eq!(Some(&history::number(current)), n.last());
                proptest::prop_assert!(n.len() <= usize::from(limit) + 1);
            }
        }
    }
}
