//! The syncer's shared state: what each federated object wants on each
//! cluster (its [`Plan`], written by the propagator) and how each member
//! copy is doing (its [`CopyState`], written by the cluster syncers), read
//! by the recorder. In memory only: after a restart it is rebuilt from the
//! federation's objects and the members' copies.

use std::collections::{BTreeMap, HashMap};
use std::sync::{Arc, Mutex, MutexGuard, RwLock};

use serde_json::Value;

use super::cluster::ClusterSyncer;
use super::plan::Policy;
use crate::config::MemberConfig;
use crate::scheduler::ClusterSnapshot;
use skein_apiserver::controllers::informer::{Informer, ObjectKey};
use skein_apiserver::controllers::queue::WorkQueue;
use skein_apiserver::registry::{Registry, ResourceInfo};

/// A federated object: its resource (index into [`Shared::kinds`]) and its
/// key.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ObjId {
    /// Index into [`Shared::kinds`].
    pub kind: usize,
    /// Namespace and name.
    pub key: ObjectKey,
}

/// One propagated resource and its informer on the federation.
#[derive(Clone)]
pub struct Kind {
    /// The resource (storage version).
    pub res: Arc<ResourceInfo>,
    /// Its objects on the federation.
    pub informer: Informer,
}

/// The propagated resources: those of [`super::kinds::PROPAGATED`] first,
/// then users' custom resources as their CRDs become established.
///
/// Contract: append-only, so an index ([`ObjId::kind`]) names the same
/// group/resource for the life of the process; only a custom resource's
/// version (and the informer reading it) may change, when its CRD is
/// created again with another storage version ([`Kinds::replace`]).
/// Readers get clones (a resource's `Arc` and an informer handle), never
/// a lock held across an await.
#[derive(Default)]
pub struct Kinds(RwLock<Vec<Kind>>);

impl Kinds {
    /// Kinds holding `kinds`, in that order.
    pub fn new(kinds: Vec<Kind>) -> Kinds {
        Kinds(RwLock::new(kinds))
    }

    fn read(&self) -> std::sync::RwLockReadGuard<'_, Vec<Kind>> {
        self.0
            .read()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// The kind at `index`.
    pub fn get(&self, index: usize) -> Option<Kind> {
        self.read().get(index).cloned()
    }

    /// How many kinds there are (every index below is valid).
    pub fn len(&self) -> usize {
        self.read().len()
    }

    /// Whether there is none.
    pub fn is_empty(&self) -> bool {
        self.read().is_empty()
    }

    /// Every kind, by index.
    pub fn all(&self) -> Vec<Kind> {
        self.read().clone()
    }

    /// The index of the resource `group`/`plural`.
    pub fn position(&self, group: &str, plural: &str) -> Option<usize> {
        self.read()
            .iter()
            .position(|k| k.res.group == group && k.res.plural == plural)
    }

    /// Adds the kind `make` builds unless `group`/`plural` is there
    /// already; its index, or `None` when it was there.
    pub fn add(&self, group: &str, plural: &str, make: impl FnOnce() -> Kind) -> Option<usize> {
        let mut kinds = self
            .0
            .write()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if kinds
            .iter()
            .any(|k| k.res.group == group && k.res.plural == plural)
        {
            return None;
        }
        kinds.push(make());
        Some(kinds.len() - 1)
    }

    /// Puts `kind` at `index` when it is the same group/resource as the
    /// kind there (another version of it); whether it did.
    pub fn replace(&self, index: usize, kind: Kind) -> bool {
        let mut kinds = self
            .0
            .write()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        match kinds.get_mut(index) {
            Some(k) if k.res.group == kind.res.group && k.res.plural == kind.res.plural => {
                *k = kind;
                true
            }
            _ => false,
        }
    }
}

/// A copy's planned generation and when it was planned.
pub type Since = (i64, std::time::Instant);

/// What the federation wants on one cluster.
#[derive(Clone, Debug)]
pub enum Desired {
    /// This rendered copy.
    Copy(Arc<Value>),
    /// This copy could not be rendered (a bad override): the message.
    Unrenderable(String),
    /// No copy.
    Absent,
    /// No copy; the member's copy stays, without markers.
    Orphaned,
}

/// What one federated object wants, cluster by cluster.
#[derive(Clone, Debug)]
pub struct Plan {
    /// The federated object's uid.
    pub uid: String,
    /// The [`Shared::plan_seq`] this plan was started at: a syncer skips
    /// a plan older than its Cluster's last scheduling change
    /// ([`super::cluster::ClusterSyncer::replan_from`]), as the re-plan
    /// that change queued will send it a newer one.
    pub seq: u64,
    /// The version of the federated object this plan was made from
    /// (`None` once it is gone): a later version that differs only in its
    /// status plans the same ([`super::plan::status_only_change`]).
    pub source: Option<Arc<Value>>,
    /// Its `metadata.generation`.
    pub generation: i64,
    /// Conflict and drift policies.
    pub policy: Policy,
    /// Every cluster that should hold a copy or lose one.
    pub copies: BTreeMap<String, Desired>,
    /// The scheduler's decision for the Placement's `status.decision`;
    /// `None` when the object is not scheduled (being deleted, or
    /// control-plane-only).
    pub decision: Option<Planned>,
    /// The decision's clusters with their replicas (`None`: a whole copy).
    pub assigned: BTreeMap<String, Option<i64>>,
    /// The object is being deleted (or was, or stays on the federation):
    /// its finalizer goes once no copy is left.
    pub releasing: bool,
}

/// A decision as planned, kept typed (a plan is held per object; its
/// `status.decision` JSON is made when a record writes it).
#[derive(Clone, Debug)]
pub struct Planned {
    /// The scheduler's answer.
    pub decision: crate::scheduler::Decision,
    /// `Divided` or `Duplicated`.
    pub scheduling: &'static str,
    /// When it was planned (RFC 3339).
    pub time: String,
}

impl Planned {
    /// The Placement's `status.decision`.
    pub fn status(&self) -> Value {
        crate::scheduler::record::decision_status(&self.decision, self.scheduling, &self.time)
    }
}

/// The per-cluster states of the Placement.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum State {
    /// Not applied yet.
    Pending,
    /// The member accepted the current generation.
    Applied,
    /// The member's copy reports ready.
    Ready,
    /// The member refused it or cannot be reached.
    Failed,
    /// An object of that name that Skein does not own is there.
    Conflict,
    /// Someone else changed a field Skein manages.
    Drifted,
    /// The copy is being removed.
    Deleting,
}

impl State {
    /// The name in `status.clusters[].state`.
    pub fn as_str(self) -> &'static str {
        match self {
            State::Pending => "Pending",
            State::Applied => "Applied",
            State::Ready => "Ready",
            State::Failed => "Failed",
            State::Conflict => "Conflict",
            State::Drifted => "Drifted",
            State::Deleting => "Deleting",
        }
    }
}

/// How one member copy is doing, as its cluster syncer last saw it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CopyState {
    /// The state (Ready is decided by the recorder from the member object).
    pub state: State,
    /// Details for people.
    pub message: String,
    /// The federated generation last applied (or found in sync).
    pub applied_generation: Option<i64>,
    /// The federated uid the state is about.
    pub uid: String,
}

/// See the module documentation.
pub struct Shared {
    /// The federation's registry.
    pub registry: Registry,
    /// Flags.
    pub config: MemberConfig,
    /// The propagated resources (see [`Kinds`]).
    pub kinds: Kinds,
    /// Clusters on the federation.
    pub clusters: Informer,
    /// Plans by object.
    pub plans: Mutex<HashMap<ObjId, Arc<Plan>>>,
    /// Copy states by object, then cluster (so forgetting an object
    /// touches only its own).
    pub copies: Mutex<HashMap<ObjId, BTreeMap<String, CopyState>>>,
    /// The running cluster syncers, by Cluster name.
    pub syncers: RwLock<BTreeMap<String, Arc<ClusterSyncer>>>,
    /// Placements and ClusterPlacements on the federation.
    pub placements: [Informer; 2],
    /// Objects to (re)schedule.
    pub objects: WorkQueue<ObjId>,
    /// Objects whose Placement, status, Events and finalizer to write;
    /// fed through [`Shared::record`].
    pub records: WorkQueue<ObjId>,
    /// What each Cluster reads as for the scheduler, by name, with the
    /// `resourceVersion` it was read at (see [`Shared::cluster_snapshots`]).
    pub snapshots: Mutex<HashMap<String, (String, ClusterSnapshot)>>,
    /// The federation's metrics.
    pub metrics: Arc<crate::metrics::FederationMetrics>,
    /// Per object and cluster, the generation of a copy planned and not
    /// accepted yet, and since when: the start of its submit-to-applied
    /// time ([`Shared::planned`], [`Shared::set_copy_state`]).
    pub pending: Mutex<HashMap<ObjId, BTreeMap<String, Since>>>,
    /// Counts plan starts and Cluster changes (see [`Plan::seq`]); only
    /// ever grows.
    pub plan_seq: std::sync::atomic::AtomicU64,
}

/// How long a change waits before it is recorded, so that the changes of
/// one object on every cluster (its copies are applied, then become ready,
/// at about the same time) make one Placement and status write instead of
/// one each. It bounds the delay a change adds to what users read.
pub const RECORD_DELAY: std::time::Duration = std::time::Duration::from_millis(100);

/// How long a member status change waits before it is recorded (see
/// [`Shared::record_status`]); like [`RECORD_DELAY`], it bounds the delay
/// a status change adds to what users read.
pub const STATUS_RECORD_DELAY: std::time::Duration = std::time::Duration::from_millis(500);

pub(crate) fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

impl Shared {
    /// Queues `id` for recording within [`RECORD_DELAY`]; changes in that
    /// window are recorded together.
    pub fn record(&self, id: &ObjId) {
        self.records.add_after(id.clone(), RECORD_DELAY);
    }

    /// The scheduler's view of every Cluster not being deleted, classified
    /// at `now`. A Cluster is read again only when its `resourceVersion`
    /// changed, not for every plan.
    pub fn cluster_snapshots(
        &self,
        now: time::OffsetDateTime,
        grace: std::time::Duration,
    ) -> Vec<ClusterSnapshot> {
        let clusters = self
            .clusters
            .list(|c| !skein_apiserver::registry::object::is_deleting(c));
        let mut cache = lock(&self.snapshots);
        // Once per plan: a set, not a scan of every Cluster per cached
        // name (with 100 Clusters and 10,000 objects, that scan was most of
        // a re-plan's CPU).
        if cache.len() > clusters.len()
            || clusters
                .iter()
                .any(|c| !cache.contains_key(skein_apiserver::registry::object::name(c)))
        {
            let names: std::collections::HashSet<&str> = clusters
                .iter()
                .map(|c| skein_apiserver::registry::object::name(c))
                .collect();
            cache.retain(|name, _| names.contains(name.as_str()));
        }
        clusters
            .iter()
            .map(|c| {
                let rv = skein_apiserver::registry::object::meta_str(c, "resourceVersion")
                    .unwrap_or_default();
                let name = skein_apiserver::registry::object::name(c);
                let snapshot = match cache.get(name) {
                    Some((seen, s)) if seen == rv => s.clone(),
                    _ => {
                        let s = ClusterSnapshot::from_cluster(c);
                        cache.insert(name.to_owned(), (rv.to_owned(), s.clone()));
                        s
                    }
                };
                snapshot.at(now, grace)
            })
            .collect()
    }

    /// Queues `id` for recording within [`STATUS_RECORD_DELAY`]: a member
    /// copy's status changed. Copies become ready one by one, on every
    /// cluster, so a longer window folds more of them into one write.
    pub fn record_status(&self, id: &ObjId) {
        self.records.add_after(id.clone(), STATUS_RECORD_DELAY);
    }

    /// The plan of `id`, if it was planned.
    pub fn plan(&self, id: &ObjId) -> Option<Arc<Plan>> {
        lock(&self.plans).get(id).cloned()
    }

    /// Replaces the plan of `id`.
    pub fn set_plan(&self, id: &ObjId, plan: Plan) {
        lock(&self.plans).insert(id.clone(), Arc::new(plan));
    }

    /// Forgets `id` (it is gone and has no copies, or the federation has
    /// no Cluster).
    pub fn forget(&self, id: &ObjId) {
        lock(&self.plans).remove(id);
        lock(&self.copies).remove(id);
        lock(&self.pending).remove(id);
    }

    /// Forgets every copy state and pending copy on `cluster` (its Cluster
    /// is gone: what it holds is no longer the federation's to track), and
    /// queues the objects it had for recording.
    pub fn forget_cluster(&self, cluster: &str) {
        let mut touched = Vec::new();
        {
            let mut copies = lock(&self.copies);
            copies.retain(|id, states| {
                if states.remove(cluster).is_some() {
                    touched.push(id.clone());
                }
                !states.is_empty()
            });
        }
        lock(&self.pending).retain(|_, entry| {
            entry.remove(cluster);
            !entry.is_empty()
        });
        for id in touched {
            self.record(&id);
        }
    }

    /// Notes that `plan` wants a copy of `id` on each of `clusters`: a
    /// copy not yet accepted at the plan's generation starts its
    /// submit-to-applied clock (kept when it already runs for that
    /// generation).
    pub fn planned(&self, id: &ObjId, plan: &Plan) {
        let wanted: Vec<&String> = plan
            .copies
            .iter()
            .filter(|(_, d)| matches!(d, Desired::Copy(_)))
            .map(|(c, _)| c)
            .collect();
        let accepted: Vec<bool> = {
            let copies = lock(&self.copies);
            let states = copies.get(id);
            wanted
                .iter()
                .map(|c| {
                    states.and_then(|s| s.get(*c)).is_some_and(|s| {
                        matches!(s.state, State::Applied | State::Ready)
                            && s.applied_generation == Some(plan.generation)
                            && s.uid == plan.uid
                    })
                })
                .collect()
        };
        let now = std::time::Instant::now();
        let mut pending = lock(&self.pending);
        let entry = pending.entry(id.clone()).or_default();
        entry.retain(|c, _| wanted.contains(&c));
        for (c, done) in wanted.into_iter().zip(accepted) {
            if done {
                entry.remove(c);
            } else if entry.get(c).is_none_or(|(g, _)| *g != plan.generation) {
                entry.insert(c.clone(), (plan.generation, now));
            }
        }
        if entry.is_empty() {
            pending.remove(id);
        }
    }

    /// The copy state of `id` on `cluster`.
    pub fn copy_state(&self, id: &ObjId, cluster: &str) -> Option<CopyState> {
        lock(&self.copies).get(id)?.get(cluster).cloned()
    }

    /// Sets the copy state of `id` on `cluster`; tells the recorder when it
    /// changed.
    pub fn set_copy_state(&self, id: &ObjId, cluster: &str, state: CopyState) {
        if let (State::Applied | State::Ready, Some(g)) = (state.state, state.applied_generation) {
            let mut pending = lock(&self.pending);
            if let Some(entry) = pending.get_mut(id)
                && let Some((want, since)) = entry.get(cluster).copied()
                && want <= g
            {
                entry.remove(cluster);
                if entry.is_empty() {
                    pending.remove(id);
                }
                drop(pending);
                self.metrics.propagated(cluster, since.elapsed());
            }
        }
        let changed = {
            let mut copies = lock(&self.copies);
            let states = copies.entry(id.clone()).or_default();
            let changed = states.get(cluster) != Some(&state);
            states.insert(cluster.to_owned(), state);
            changed
        };
        if changed {
            self.record(id);
        }
    }

    /// Drops the copy state of `id` on `cluster` (the copy is gone).
    pub fn clear_copy_state(&self, id: &ObjId, cluster: &str) {
        let removed = {
            let mut copies = lock(&self.copies);
            let removed = copies
                .get_mut(id)
                .is_some_and(|states| states.remove(cluster).is_some());
            if copies.get(id).is_some_and(BTreeMap::is_empty) {
                copies.remove(id);
            }
            removed
        };
        {
            let mut pending = lock(&self.pending);
            if let Some(entry) = pending.get_mut(id) {
                entry.remove(cluster);
                if entry.is_empty() {
                    pending.remove(id);
                }
            }
        }
        if removed {
            self.record(id);
        }
    }

    /// The running syncer of `cluster`.
    pub fn syncer(&self, cluster: &str) -> Option<Arc<ClusterSyncer>> {
        self.syncers
            .read()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .get(cluster)
            .cloned()
    }

    /// Every running syncer.
    pub fn all_syncers(&self) -> Vec<Arc<ClusterSyncer>> {
        self.syncers
            .read()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .values()
            .cloned()
            .collect()
    }

    /// The federated object of `id`, from its informer.
    pub fn object(&self, id: &ObjId) -> Option<Arc<Value>> {
        self.kinds.get(id.kind)?.informer.get(&id.key)
    }

    /// The informer holding `id`'s Placement (or ClusterPlacement), and
    /// its key there (`None`: `id`'s kind is not propagated).
    pub fn placement_key(&self, id: &ObjId) -> Option<(&Informer, ObjectKey)> {
        let kind = self.kinds.get(id.kind)?;
        Some((
            &self.placements[usize::from(!kind.res.namespaced)],
            ObjectKey::new(
                id.key.namespace.clone(),
                super::record::placement_name(kind.res.kind, &id.key.name),
            ),
        ))
    }

    /// `id`'s Placement (or ClusterPlacement), as the informer holds it.
    pub fn placement(&self, id: &ObjId) -> Option<Arc<Value>> {
        let (informer, key) = self.placement_key(id)?;
        informer.get(&key)
    }

    /// The index of `res` in [`Shared::kinds`].
    pub fn kind_of(&self, group: &str, plural: &str) -> Option<usize> {
        self.kinds.position(group, plural)
    }
}
