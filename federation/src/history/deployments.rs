//! A federated Deployment's revision history: which ReplicaSets the
//! federation keeps for it, as kube-controller-manager's Deployment
//! controller keeps them (`sync.go` `getAllReplicaSetsAndSyncRevision`,
//! `scaleReplicaSet`, `cleanupDeployment`), without Pods or rollouts.
//!
//! Contract of [`plan`]:
//! - one ReplicaSet `<deployment>-<pod-template-hash>` per distinct
//!   template (the simulator's [`revision::compute_hash`], the same hash a
//!   cluster computes, so the names match the members'), controlled by
//!   the Deployment; the one whose template is the Deployment's is the
//!   current one ([`revision::find_new`]);
//! - a new template gets revision max+1 over the old ReplicaSets; an old
//!   template that becomes current again is renumbered max+1 and its old
//!   number appended to `deployment.kubernetes.io/revision-history`
//!   ([`revision::set_new_rs_annotations`]);
//! - the current ReplicaSet has the Deployment's `spec.replicas`, older
//!   ones 0; a size change also writes the desired/max-replicas
//!   annotations (upstream's `scaleReplicaSet`);
//! - old ReplicaSets beyond `spec.revisionHistoryLimit` (lowest revisions
//!   first) are deleted once scaled to 0 with no replicas reported;
//! - the Deployment's own `deployment.kubernetes.io/revision` follows the
//!   current ReplicaSet's;
//! - a paused Deployment gets no new ReplicaSet and its old ones keep
//!   their sizes (as upstream); a Deployment being deleted gets nothing
//!   (the garbage collector removes its ReplicaSets);
//! - ReplicaSets the Deployment does not control are never touched (no
//!   adoption: on the federation a user's ReplicaSet is a propagated
//!   object of its own).
//!
//! Pure: no I/O. Applying the plan twice changes nothing the second time
//! ([`apply_update`] is idempotent).

use serde_json::{Map, Value, json};

use skein_apiserver::registry::object;
use skein_workloads::deployment::plan::{DeploySpec, MAX_REPLICAS, REVISION, RsView};
use skein_workloads::deployment::revision;
use skein_workloads::template;

/// How many hash collisions [`plan`] steps over before giving up.
const MAX_COLLISIONS: i32 = 10;

/// A change to one existing ReplicaSet.
#[derive(Debug, Clone, PartialEq)]
pub struct RsUpdate {
    /// The ReplicaSet's name.
    pub name: String,
    /// Its uid (the change applies to this object only).
    pub uid: String,
    /// Make it the current revision: raise its revision to this number
    /// (recording the old one) and copy the Deployment's annotations.
    pub revision: Option<(i64, Map<String, Value>)>,
    /// Resize it: `(replicas, desired, max)`, the latter two being the
    /// replica annotations.
    pub scale: Option<(i32, i32, i32)>,
}

/// What to do for one Deployment.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Plan {
    /// The new current ReplicaSet to create.
    pub create: Option<Value>,
    /// Changes to existing ReplicaSets.
    pub updates: Vec<RsUpdate>,
    /// Old ReplicaSets to delete: `(name, uid)`.
    pub deletes: Vec<(String, String)>,
    /// The Deployment's new `deployment.kubernetes.io/revision`, when it
    /// changes.
    pub revision: Option<String>,
}

impl Plan {
    /// Whether there is nothing to do.
    pub fn is_empty(&self) -> bool {
        self.create.is_none()
            && self.updates.is_empty()
            && self.deletes.is_empty()
            && self.revision.is_none()
    }
}

/// The plan for Deployment `d` given the ReplicaSets of its namespace
/// (`rss`, any order; those `d` does not control are ignored). See the
/// module documentation.
pub fn plan(d: &Value, rss: &[&Value]) -> Plan {
    let mut out = Plan::default();
    if object::is_deleting(d) || object::uid(d).is_empty() {
        return out;
    }
    let uid = object::uid(d);
    let owned: Vec<&Value> = rss
        .iter()
        .copied()
        .filter(|rs| template::is_controlled_by(rs, uid) && !object::is_deleting(rs))
        .collect();
    let spec = DeploySpec::of(d);
    let d_template = d.pointer("/spec/template").cloned().unwrap_or(Value::Null);
    let d_annotations = d
        .pointer("/metadata/annotations")
        .and_then(Value::as_object)
        .cloned()
        .unwrap_or_default();
    let desired = spec.replicas;
    let max = desired.saturating_add(spec.max_surge());
    let current = revision::find_new(&d_template, &owned);
    let olds: Vec<&Value> = owned
        .iter()
        .copied()
        .filter(|rs| Some(object::name(rs)) != current.map(object::name))
        .collect();
    let next_revision = olds
        .iter()
        .map(|rs| RsView::of(rs).revision)
        .max()
        .unwrap_or(0)
        .saturating_add(1);
    let current_revision = match current {
        Some(rs) => {
            let upd = RsUpdate {
                name: object::name(rs).to_owned(),
                uid: object::uid(rs).to_owned(),
                revision: Some((next_revision, d_annotations.clone())),
                scale: (!spec.paused).then_some((desired, desired, max)),
            };
            let after = apply_update(rs, &upd);
            let rev = after.as_ref().map_or_else(|| revision_of(rs), revision_of);
            if let Some(after) = &after {
                out.updates.push(RsUpdate {
                    revision: upd.revision.filter(|_| annotations_differ(rs, after)),
                    scale: upd.scale.filter(|_| size_of(after) != size_of(rs)),
                    ..upd
                });
            }
            Some(rev)
        }
        None if spec.paused => None,
        None => {
            let mut annotations = Map::new();
            revision::set_new_rs_annotations(
                &d_annotations,
                &mut annotations,
                next_revision,
                false,
                desired,
                max,
            );
            let collision = d
                .pointer("/status/collisionCount")
                .and_then(Value::as_i64)
                .and_then(|c| i32::try_from(c).ok());
            free_hash(d, &d_template, &owned, collision).map(|hash| {
                out.create = Some(revision::new_replica_set(d, &hash, desired, annotations));
                next_revision.to_string()
            })
        }
    };
    if !spec.paused {
        for rs in &olds {
            if RsView::of(rs).replicas != 0 {
                out.updates.push(RsUpdate {
                    name: object::name(rs).to_owned(),
                    uid: object::uid(rs).to_owned(),
                    revision: None,
                    scale: Some((0, desired, max)),
                });
            }
        }
    }
    out.deletes = history_to_delete(&spec, &olds, spec.paused);
    out.updates
        .retain(|u| !out.deletes.iter().any(|(name, _)| *name == u.name));
    let d_revision = d_annotations.get(REVISION).and_then(Value::as_str);
    if let Some(rev) = current_revision.filter(|r| !r.is_empty())
        && d_revision != Some(rev.as_str())
    {
        out.revision = Some(rev);
    }
    out
}

/// A hash for `template` whose name `<d>-<hash>` no other owned
/// ReplicaSet (with a different template) holds, from the collision count
/// `collision` on; `None` after [`MAX_COLLISIONS`] tries.
fn free_hash(
    d: &Value,
    template: &Value,
    owned: &[&Value],
    collision: Option<i32>,
) -> Option<String> {
    let mut count = collision;
    for _ in 0..=MAX_COLLISIONS {
        let hash = revision::compute_hash(template, count);
        let name = format!("{}-{hash}", object::name(d));
        if !owned.iter().any(|rs| object::name(rs) == name) {
            return Some(hash);
        }
        count = Some(count.unwrap_or(0).saturating_add(1));
    }
    None
}

/// The old ReplicaSets beyond the history limit, lowest revisions first,
/// that are scaled to 0 (or will be by this plan, unless `paused`) and
/// report no replicas.
fn history_to_delete(spec: &DeploySpec, olds: &[&Value], paused: bool) -> Vec<(String, String)> {
    let Some(limit) = spec.revision_history_limit else {
        return Vec::new();
    };
    let limit = usize::try_from(limit.max(0)).unwrap_or(0);
    let mut sorted: Vec<(&Value, RsView)> = olds.iter().map(|rs| (*rs, RsView::of(rs))).collect();
    let excess = sorted.len().saturating_sub(limit);
    sorted.sort_by(|(_, a), (_, b)| {
        a.revision
            .cmp(&b.revision)
            .then_with(|| a.created.cmp(&b.created))
            .then_with(|| a.name.cmp(&b.name))
    });
    sorted
        .into_iter()
        .take(excess)
        .filter(|(_, v)| v.status_replicas == 0 && (v.replicas == 0 || !paused))
        .map(|(rs, v)| (v.name, object::uid(rs).to_owned()))
        .collect()
}

/// `rs` with `upd` applied, or `None` when it changes nothing. The
/// revision is only ever raised ([`revision::set_new_rs_annotations`]).
pub fn apply_update(rs: &Value, upd: &RsUpdate) -> Option<Value> {
    let mut annotations = rs
        .pointer("/metadata/annotations")
        .and_then(Value::as_object)
        .cloned()
        .unwrap_or_default();
    let mut changed = false;
    if let Some((rev, d_annotations)) = &upd.revision {
        changed |=
            revision::set_new_rs_annotations(d_annotations, &mut annotations, *rev, true, 0, 0);
    }
    let mut next = rs.clone();
    if let Some((replicas, desired, max)) = upd.scale
        && size_of(rs) != replicas
    {
        if let Some(spec) = next.get_mut("spec").and_then(Value::as_object_mut) {
            spec.insert("replicas".into(), json!(replicas));
        }
        revision::set_replicas_annotations(&mut annotations, desired, max);
        changed = true;
    }
    if !changed {
        return None;
    }
    object::set_meta(&mut next, "annotations", Some(Value::Object(annotations)));
    Some(next)
}

/// `d` with its revision annotation set to `revision`, or `None` when it
/// already is. Only that annotation changes.
pub fn with_revision(d: &Value, revision: &str) -> Option<Value> {
    let mut next = d.clone();
    let meta = next.get_mut("metadata")?.as_object_mut()?;
    let ann = meta.entry("annotations").or_insert_with(|| json!({}));
    if !ann.is_object() {
        *ann = json!({});
    }
    let ann = ann.as_object_mut()?;
    if ann.get(REVISION).and_then(Value::as_str) == Some(revision) {
        return None;
    }
    ann.insert(REVISION.into(), json!(revision));
    Some(next)
}

fn revision_of(rs: &Value) -> String {
    rs.pointer("/metadata/annotations")
        .and_then(|a| a.get(REVISION))
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_owned()
}

fn size_of(rs: &Value) -> i32 {
    RsView::of(rs).replicas
}

fn annotations_differ(a: &Value, b: &Value) -> bool {
    let ann = |v: &Value| v.pointer("/metadata/annotations").cloned();
    let strip = |v: Option<Value>| {
        v.map(|mut v| {
            if let Some(m) = v.as_object_mut() {
                m.remove(MAX_REPLICAS);
                m.remove(skein_workloads::deployment::plan::DESIRED_REPLICAS);
            }
            v
        })
    };
    strip(ann(a)) != strip(ann(b))
}

#[cfg(test)]
mod tests {
    use super::*;
    use skein_workloads::deployment::plan::{
        DESIRED_REPLICAS, POD_TEMPLATE_HASH, REVISION_HISTORY,
    };

    fn deployment(image: &str, replicas: i64) -> Value {
        json!({
            "apiVersion": "apps/v1", "kind": "Deployment",
            "metadata": {"name": "web", "namespace": "ns", "uid": "d-uid",
                         "annotations": {"team": "a"}},
            "spec": {"replicas": replicas, "revisionHistoryLimit": 10,
                     "selector": {"matchLabels": {"app": "web"}},
                     "template": {"metadata": {"labels": {"app": "web"}},
                                  "spec": {"containers": [{"name": "c", "image": image}]}}},
        })
    }

    /// Stores a planned ReplicaSet as the registry would (uid, timestamp).
    fn stored(rs: &Value, n: u32) -> Value {
        let mut rs = rs.clone();
        rs["metadata"]["uid"] = json!(format!("rs-{n}"));
        rs["metadata"]["creationTimestamp"] = json!(format!("2026-01-01T00:00:{n:02}Z"));
        rs
    }

    /// Runs plans against an in-memory history until nothing is left to do.
    fn converge(d: &mut Value, rss: &mut Vec<Value>) {
        for round in 0..5 {
            let refs: Vec<&Value> = rss.iter().collect();
            let p = plan(d, &refs);
            if p.is_empty() {
                return;
            }
            if let Some(rs) = &p.create {
                rss.push(stored(rs, u32::try_from(rss.len()).unwrap_or(0)));
            }
            for u in &p.updates {
                let slot = rss
                    .iter_mut()
                    .find(|r| object::name(r) == u.name)
                    .expect("exists");
                if let Some(next) = apply_update(slot, u) {
                    *slot = next;
                }
            }
            rss.retain(|r| !p.deletes.iter().any(|(n, _)| n == object::name(r)));
            if let Some(rev) = &p.revision
                && let Some(next) = with_revision(d, rev)
            {
                *d = next;
            }
            assert!(round < 4, "no convergence: {p:?}");
        }
    }

    fn rev(rs: &Value) -> &str {
        rs["metadata"]["annotations"][REVISION]
            .as_str()
            .unwrap_or_default()
    }

    #[test]
    fn a_new_deployment_gets_revision_one() {
        let mut d = deployment("v1", 3);
        let p = plan(&d, &[]);
        let rs = p.create.clone().expect("a ReplicaSet");
        let hash = revision::compute_hash(&d["spec"]["template"], None);
        assert_eq!(rs["metadata"]["name"], format!("web-{hash}"));
        assert_eq!(rs["metadata"]["labels"][POD_TEMPLATE_HASH], hash);
        assert_eq!(rs["spec"]["replicas"], 3);
        assert_eq!(rs["metadata"]["annotations"][REVISION], "1");
        assert_eq!(rs["metadata"]["annotations"][DESIRED_REPLICAS], "3");
        assert_eq!(rs["metadata"]["annotations"][MAX_REPLICAS], "4");
        assert_eq!(rs["metadata"]["annotations"]["team"], "a");
        assert_eq!(rs["metadata"]["ownerReferences"][0]["uid"], "d-uid");
        assert_eq!(
            rs["metadata"]["ownerReferences"][0]["blockOwnerDeletion"],
            true
        );
        assert_eq!(p.revision.as_deref(), Some("1"));
        let mut rss = Vec::new();
        converge(&mut d, &mut rss);
        assert_eq!(d["metadata"]["annotations"][REVISION], "1");
        assert_eq!(rss.len(), 1);
        let refs: Vec<&Value> = rss.iter().collect();
        assert!(plan(&d, &refs).is_empty(), "idempotent");
    }

    #[test]
    fn a_template_change_adds_a_revision_and_scales_the_old_one_to_zero() {
        let mut d = deployment("v1", 3);
        let mut rss = Vec::new();
        converge(&mut d, &mut rss);
        d["spec"]["template"]["spec"]["containers"][0]["image"] = json!("v2");
        converge(&mut d, &mut rss);
        assert_eq!(rss.len(), 2);
        assert_eq!(d["metadata"]["annotations"][REVISION], "2");
        let v1 = &rss[0];
        let v2 = &rss[1];
        assert_eq!((rev(v1), v1["spec"]["replicas"].as_i64()), ("1", Some(0)));
        assert_eq!((rev(v2), v2["spec"]["replicas"].as_i64()), ("2", Some(3)));
    }

    #[test]
    fn going_back_renumbers_the_old_replica_set_and_records_its_history() {
        let mut d = deployment("v1", 2);
        let mut rss = Vec::new();
        converge(&mut d, &mut rss);
        d["spec"]["template"]["spec"]["containers"][0]["image"] = json!("v2");
        converge(&mut d, &mut rss);
        d["spec"]["template"]["spec"]["containers"][0]["image"] = json!("v1");
        converge(&mut d, &mut rss);
        assert_eq!(rss.len(), 2, "no new ReplicaSet for a known template");
        assert_eq!(rev(&rss[0]), "3");
        assert_eq!(rss[0]["metadata"]["annotations"][REVISION_HISTORY], "1");
        assert_eq!(rss[0]["spec"]["replicas"], 2);
        assert_eq!(rss[1]["spec"]["replicas"], 0);
        assert_eq!(d["metadata"]["annotations"][REVISION], "3");
    }

    #[test]
    fn history_beyond_the_limit_goes_oldest_first() {
        let mut d = deployment("v0", 1);
        d["spec"]["revisionHistoryLimit"] = json!(2);
        let mut rss = Vec::new();
        for i in 0..6 {
            d["spec"]["template"]["spec"]["containers"][0]["image"] = json!(format!("v{i}"));
            converge(&mut d, &mut rss);
        }
        let mut revs: Vec<&str> = rss.iter().map(rev).collect();
        revs.sort_unstable();
        assert_eq!(revs, ["4", "5", "6"]);
        // Zero keeps only the current one.
        d["spec"]["revisionHistoryLimit"] = json!(0);
        converge(&mut d, &mut rss);
        assert_eq!(rss.iter().map(rev).collect::<Vec<_>>(), ["6"]);
    }

    #[test]
    fn old_replica_sets_reporting_replicas_are_kept() {
        let mut d = deployment("v0", 1);
        d["spec"]["revisionHistoryLimit"] = json!(0);
        let mut rss = Vec::new();
        converge(&mut d, &mut rss);
        rss[0]["status"] = json!({"replicas": 1});
        d["spec"]["template"]["spec"]["containers"][0]["image"] = json!("v1");
        converge(&mut d, &mut rss);
        assert_eq!(rss.len(), 2);
        rss[0]["status"] = json!({"replicas": 0});
        converge(&mut d, &mut rss);
        assert_eq!(rss.iter().map(rev).collect::<Vec<_>>(), ["2"]);
    }

    #[test]
    fn scaling_resizes_the_current_replica_set_with_its_annotations() {
        let mut d = deployment("v1", 2);
        let mut rss = Vec::new();
        converge(&mut d, &mut rss);
        d["spec"]["replicas"] = json!(8);
        let refs: Vec<&Value> = rss.iter().collect();
        let p = plan(&d, &refs);
        assert_eq!(p.updates.len(), 1);
        assert_eq!(p.updates[0].scale, Some((8, 8, 10)));
        assert!(p.updates[0].revision.is_none());
        converge(&mut d, &mut rss);
        assert_eq!(rss[0]["spec"]["replicas"], 8);
        assert_eq!(rss[0]["metadata"]["annotations"][DESIRED_REPLICAS], "8");
        assert_eq!(rss[0]["metadata"]["annotations"][REVISION], "1");
    }

    #[test]
    fn paused_deployments_get_no_new_replica_set() {
        let mut d = deployment("v1", 2);
        let mut rss = Vec::new();
        converge(&mut d, &mut rss);
        d["spec"]["paused"] = json!(true);
        d["spec"]["template"]["spec"]["containers"][0]["image"] = json!("v2");
        let refs: Vec<&Value> = rss.iter().collect();
        assert!(plan(&d, &refs).is_empty());
    }

    #[test]
    fn foreign_and_deleting_objects_are_left_alone() {
        let d = deployment("v1", 1);
        let mut foreign = revision::new_replica_set(&d, "abc", 1, Map::new());
        foreign["metadata"]["ownerReferences"][0]["uid"] = json!("other");
        let p = plan(&d, &[&foreign]);
        assert!(p.create.is_some());
        assert!(p.updates.is_empty() && p.deletes.is_empty());
        let mut deleting = d.clone();
        deleting["metadata"]["deletionTimestamp"] = json!("2026-01-01T00:00:00Z");
        assert!(plan(&deleting, &[]).is_empty());
    }

    #[test]
    fn a_hash_collision_with_an_owned_replica_set_takes_the_next_count() {
        let d = deployment("v1", 1);
        let hash = revision::compute_hash(&d["spec"]["template"], None);
        let mut other = deployment("other", 1);
        other["spec"]["template"]["metadata"]["labels"]["x"] = json!("y");
        let squatter = stored(&revision::new_replica_set(&other, &hash, 0, Map::new()), 1);
        let mut squatter = squatter;
        squatter["metadata"]["ownerReferences"][0]["uid"] = json!("d-uid");
        let p = plan(&d, &[&squatter]);
        let created = p.create.expect("created");
        assert_eq!(
            created["metadata"]["name"],
            format!(
                "web-{}",
                revision::compute_hash(&d["spec"]["template"], Some(1))
            )
        );
        assert_eq!(created["metadata"]["annotations"][REVISION], "1");
    }

    #[test]
    fn the_deployment_revision_write_touches_one_annotation() {
        let d = deployment("v1", 1);
        let next = with_revision(&d, "4").expect("changed");
        assert_eq!(
            next["metadata"]["annotations"],
            json!({"team": "a", REVISION: "4"})
        );
        assert_eq!(next["spec"], d["spec"]);
        assert!(with_revision(&next, "4").is_none());
    }

    #[derive(Debug, Clone)]
    enum Op {
        Image(u8),
        Scale(u8),
        Limit(u8),
        Pause(bool),
    }

    fn op() -> impl proptest::strategy::Strategy<Value = Op> {
        use proptest::prelude::*;
        prop_oneof![
            3 => (0u8..4).prop_map(Op::Image),
            1 => (0u8..5).prop_map(Op::Scale),
            1 => (0u8..3).prop_map(Op::Limit),
            1 => any::<bool>().prop_map(Op::Pause),
        ]
    }

    proptest::proptest! {
        /// Whatever the edits, a converged history has one ReplicaSet per
        /// kept template: the Deployment's at the highest revision (also
        /// the Deployment's annotation) with its replicas, the others at 0,
        /// distinct revisions, no more old ones than the limit (unpaused),
        /// and nothing left to do.
        #[test]
        fn converged_histories_hold_their_invariants(ops in proptest::collection::vec(op(), 1..25)) {
            let mut d = deployment("v0", 1);
            let mut rss = Vec::new();
            for op in ops {
                match op {
                    Op::Image(i) => {
                        d["spec"]["template"]["spec"]["containers"][0]["image"] = json!(format!("v{i}"));
                    }
                    Op::Scale(n) => d["spec"]["replicas"] = json!(n),
                    Op::Limit(n) => d["spec"]["revisionHistoryLimit"] = json!(n),
                    Op::Pause(p) => d["spec"]["paused"] = json!(p),
                }
                converge(&mut d, &mut rss);
                let refs: Vec<&Value> = rss.iter().collect();
                proptest::prop_assert!(plan(&d, &refs).is_empty());
                let mut revs: Vec<i64> = rss.iter().map(|r| RsView::of(r).revision).collect();
                revs.sort_unstable();
                let len = revs.len();
                revs.dedup();
                proptest::prop_assert_eq!(revs.len(), len, "distinct revisions");
                if d["spec"]["paused"] == json!(true) {
                    continue;
                }
                let current = revision::find_new(&d["spec"]["template"], &refs).expect("current");
                let top = revs.last().copied().unwrap_or_default();
                proptest::prop_assert_eq!(RsView::of(current).revision, top);
                proptest::prop_assert_eq!(
                    &d["metadata"]["annotations"][REVISION],
                    &json!(top.to_string())
                );
                proptest::prop_assert_eq!(&current["spec"]["replicas"], &d["spec"]["replicas"]);
                for rs in rss.iter().filter(|r| object::name(r) != object::name(current)) {
                    proptest::prop_assert_eq!(RsView::of(rs).replicas, 0);
                }
                let limit = d["spec"]["revisionHistoryLimit"].as_u64().unwrap_or(10);
                proptest::prop_assert!(len as u64 <= limit + 1, "{} > {} + 1", len, limit);
            }
        }
    }
}
