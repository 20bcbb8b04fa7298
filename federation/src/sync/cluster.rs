//! One member's syncer: its own work queue of federated objects, a bounded
//! number of writes in flight ([`crate::config::MemberConfig::sync_concurrency`]),
//! exponential backoff per object, and watches of the copies Skein manages
//! there (label selector on [`super::MANAGED_BY`]) kept in a local cache,
//! for drift, status and strays.
//!
//! Contract:
//! - A dead or slow member delays only its own queue: nothing here is
//!   shared with other clusters but [`Shared`].
//! - Each sync reads the object's [`Plan`], the member's copy (the cache,
//!   or a GET when the cache has none, so a foreign object of that name is
//!   seen), asks the pure [`super::plan::plan`], acts, and records a
//!   [`CopyState`]. Failures retry with backoff.
//! - A copy whose federated object is gone (a stray, after a crash) is
//!   deleted once the federation's informers have synced.

use skein_apiserver::status::ErrorKind;
use std::collections::HashSet;
use std::sync::{Arc, Mutex, RwLock};
use std::time::Duration;

use futures::StreamExt;
use serde_json::{Value, json};
use tokio::task::JoinHandle;

use super::held::{Dictionaries, HeldCopy};
use super::member::{CallError, MemberApi, MemberEvent};
use super::plan::{self, Action, Desired as PlanDesired};
use super::shared::{CopyState, Desired, ObjId, Shared, State, lock};
use skein_apiserver::controllers::informer::ObjectKey;
use skein_apiserver::controllers::queue::WorkQueue;
use skein_apiserver::registry::object;

/// How a member watch event's object differs from the cached copy.
enum Change {
    /// The very version cached (the answer to this syncer's own write).
    Same,
    /// Only its status: recorded, not synced.
    Status,
    /// Anything else: synced and recorded.
    Other,
}

/// What the watch saw of an object while a sync of it ran.
#[derive(Default)]
struct Pass {
    /// The `resourceVersion` the sync's own last write answered with.
    wrote: Option<String>,
    /// The watch told of a change (cached, not queued).
    missed: bool,
}

/// Which kinds' copies the cache holds, and the syncs that wait for them.
///
/// An object is not synced before the member's copies of its kind have
/// been listed into the cache: planned from an empty cache, every copy the
/// member already holds would be written again (a create-only apply
/// refused, then a read, then a plan), which after a federation restart is
/// one write per copy in the fleet. Such a sync is deferred, and queued
/// again once the list lands.
#[derive(Default)]
struct Listing {
    /// Indexes of [`Shared::kinds`] listed at least once.
    listed: HashSet<usize>,
    /// Per kind not listed yet, the objects whose sync waits for it.
    deferred: std::collections::HashMap<usize, HashSet<ObjId>>,
}

/// One member's syncer. See the module documentation.
pub struct ClusterSyncer {
    /// The Cluster's name.
    pub name: String,
    /// The Cluster's uid and generation and its kubeconfig: a change
    /// restarts the syncer.
    pub fingerprint: String,
    api: MemberApi,
    /// The member's copies as last seen, encoded ([`HeldCopy`]).
    cache: RwLock<std::collections::HashMap<ObjId, HeldCopy>>,
    /// What the cached copies are compressed against, per kind.
    dictionaries: Dictionaries,
    queue: WorkQueue<ObjId>,
    namespaces: Mutex<HashSet<String>>,
    /// The objects being synced now. A watch event of one is only cached:
    /// most are the answer to the sync's own write, arriving before its
    /// response; the sync's end looks whether it missed anything else.
    syncing: Mutex<std::collections::HashMap<ObjId, Pass>>,
    /// Per object, the copy this syncer last applied and the
    /// `resourceVersion` the member answered with: while the member holds
    /// that very version and the plan still wants that copy, a sync has
    /// nothing to do and need not compare them field by field.
    written: Mutex<std::collections::HashMap<ObjId, (Arc<Value>, String)>>,
    tasks: Mutex<Vec<JoinHandle<()>>>,
    /// How many resources' copies have been listed at least once.
    listed: std::sync::atomic::AtomicUsize,
    /// Which resources' copies have been listed, and the objects whose
    /// sync waits for that: see [`Listing`].
    listing: Mutex<Listing>,
    /// Whether the Cluster is Ready (its probes reach the member): while
    /// it is not, workers and watch loops wait instead of retrying, so a
    /// member that stays unreachable costs nothing beyond its probes.
    reachable: tokio::sync::watch::Sender<bool>,
    /// Plans older than this ([`Plan::seq`]) are stale here: the Cluster
    /// changed since (see [`ClusterSyncer::replan_from`]).
    replan_from: std::sync::atomic::AtomicU64,
    /// How many resources the syncer watches: one watch loop for each
    /// index of [`Shared::kinds`] below it.
    watched: Mutex<usize>,
}

impl Drop for ClusterSyncer {
    fn drop(&mut self) {
        self.stop();
    }
}

fn selector() -> String {
    format!("{}={}", super::MANAGED_BY, super::FEDERATION_NAME)
}

impl ClusterSyncer {
    /// Starts the syncer of `name` reaching the member through `client`:
    /// its watches and its workers.
    pub fn start(
        shared: &Arc<Shared>,
        name: &str,
        fingerprint: String,
        client: kube::Client,
    ) -> Arc<ClusterSyncer> {
        let reachable = shared
            .clusters
            .get(&ObjectKey::new("", name))
            .is_some_and(|c| crate::scheduler::snapshot::cluster_ready(&c));
        let syncer = Arc::new(ClusterSyncer {
            name: name.to_owned(),
            fingerprint,
            api: MemberApi::new(client).observed(shared.metrics.clone(), name),
            cache: RwLock::default(),
            queue: WorkQueue::new(),
            namespaces: Mutex::default(),
            syncing: Mutex::default(),
            written: Mutex::default(),
            dictionaries: Dictionaries::default(),
            tasks: Mutex::default(),
            listed: std::sync::atomic::AtomicUsize::new(0),
            listing: Mutex::default(),
            reachable: tokio::sync::watch::Sender::new(reachable),
            replan_from: std::sync::atomic::AtomicU64::new(0),
            watched: Mutex::new(0),
        });
        let mut tasks = Vec::new();
        for _ in 0..shared.config.sync_concurrency.max(1) {
            let (s, sh) = (Arc::downgrade(&syncer), shared.clone());
            tasks.push(tokio::spawn(async move { work_loop(s, sh).await }));
        }
        *syncer
            .tasks
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner) = tasks;
        syncer.follow_kinds(shared);
        syncer
    }

    /// Tells the syncer whether its Cluster is Ready (see
    /// [`ClusterSyncer::start`]'s `reachable`); called on every Cluster
    /// change.
    pub fn set_reachable(&self, ready: bool) {
        self.reachable.send_if_modified(|r| {
            let changed = *r != ready;
            *r = ready;
            changed
        });
    }

    /// Tells the syncer that its Cluster changed in a way that re-plans
    /// every object: plans started before `seq` ([`Plan::seq`]) are not
    /// carried out here (their objects are planned again, and the newer
    /// plan is queued). So a member back from an outage is sent only what
    /// is planned for it now, not what was planned while it was away.
    pub fn replan_from(&self, seq: u64) {
        self.replan_from
            .fetch_max(seq, std::sync::atomic::Ordering::SeqCst);
    }

    /// How many objects wait in this syncer's queue.
    pub fn queue_len(&self) -> usize {
        self.queue.len()
    }

    /// Starts watching the member's copies of every kind of
    /// [`Shared::kinds`] not watched yet (a custom resource whose CRD was
    /// just established). Idempotent.
    pub fn follow_kinds(self: &Arc<Self>, shared: &Arc<Shared>) {
        let mut watched = self
            .watched
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let now = shared.kinds.len();
        let mut tasks = self
            .tasks
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        for kind in *watched..now {
            let (s, sh) = (Arc::downgrade(self), shared.clone());
            tasks.push(tokio::spawn(async move { watch_loop(s, sh, kind).await }));
        }
        *watched = now.max(*watched);
    }

    /// Aborts the syncer's tasks.
    pub fn stop(&self) {
        for t in self
            .tasks
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .drain(..)
        {
            t.abort();
        }
    }

    /// Whether the member holds no copy any more, as far as every
    /// resource's list and watch tell (an unjoined cluster is released).
    pub fn settled(&self) -> bool {
        self.listed.load(std::sync::atomic::Ordering::Acquire)
            >= *self
                .watched
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner)
            && self
                .cache
                .read()
                .unwrap_or_else(std::sync::PoisonError::into_inner)
                .is_empty()
    }

    /// Queues `id` for a sync.
    pub fn enqueue(&self, id: ObjId) {
        self.queue.add(id);
    }

    /// The member's copy of `id`, as last seen (decoded for the caller).
    pub fn copy_of(&self, id: &ObjId) -> Option<Arc<Value>> {
        self.cache
            .read()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .get(id)
            .and_then(HeldCopy::decode)
            .map(Arc::new)
    }

    /// Whether the member holds a copy of `id`, as last seen.
    pub fn holds(&self, id: &ObjId) -> bool {
        self.cache
            .read()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .contains_key(id)
    }

    /// The `resourceVersion` of the member's copy of `id`, as last seen.
    fn seen_version(&self, id: &ObjId) -> Option<String> {
        self.cache
            .read()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .get(id)
            .map(|c| c.resource_version().to_owned())
            .filter(|rv| !rv.is_empty())
    }

    /// Every cached copy of objects of `kind`.
    pub fn copies_of_kind(&self, kind: usize) -> Vec<ObjId> {
        self.cache
            .read()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .keys()
            .filter(|i| i.kind == kind)
            .cloned()
            .collect()
    }

    /// How a member's version `obj` of `id` differs from the cached copy:
    /// the very version (same uid and `resourceVersion`), only its status
    /// ([`super::plan::status_only_change`]), or otherwise.
    fn change(&self, id: &ObjId, obj: &Value) -> Change {
        let cache = self
            .cache
            .read()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let Some(seen) = cache.get(id).filter(|seen| seen.uid() == object::uid(obj)) else {
            return Change::Other;
        };
        let rv = seen.resource_version();
        if !rv.is_empty() && Some(rv) == object::meta_str(obj, "resourceVersion") {
            return Change::Same;
        }
        let seen = seen.decode();
        drop(cache);
        if seen.is_some_and(|seen| super::plan::status_only_change(&seen, obj)) {
            Change::Status
        } else {
            Change::Other
        }
    }

    fn remember(&self, id: &ObjId, obj: Option<Value>) {
        let mut cache = self
            .cache
            .write()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        match obj {
            Some(o) if super::plan::is_ours(&o).is_some() => {
                // A write's response can arrive after the watch told of a
                // later version (a CRD's Established status): keep that.
                if cache.get(id).is_some_and(|seen| seen.newer_than(&o)) {
                    return;
                }
                cache.insert(id.clone(), self.dictionaries.hold(id.kind, &o));
            }
            _ => {
                cache.remove(id);
                drop(cache);
                lock(&self.written).remove(id);
            }
        }
    }

    /// Whether the member holds the version this syncer's last write of
    /// `desired` left (then the copy is as desired). Keeps `desired` for
    /// the next time (a re-plan renders an equal copy anew).
    fn holds_own_write(&self, id: &ObjId, desired: &Arc<Value>, observed: &Value) -> bool {
        let mut written = lock(&self.written);
        let Some((copy, rv)) = written.get_mut(id) else {
            return false;
        };
        let same = object::meta_str(observed, "resourceVersion") == Some(rv.as_str())
            && (Arc::ptr_eq(copy, desired) || **copy == **desired);
        if same {
            *copy = desired.clone();
        }
        same
    }
}

/// `(group/version, plural)` of each served version of a CRD.
pub(crate) fn served_versions(crd: &Value) -> Vec<(String, String)> {
    let (Some(group), Some(plural)) = (
        crd.pointer("/spec/group").and_then(Value::as_str),
        crd.pointer("/spec/names/plural").and_then(Value::as_str),
    ) else {
        return Vec::new();
    };
    crd.pointer("/spec/versions")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter(|v| v.get("served").and_then(Value::as_bool) == Some(true))
        .filter_map(|v| v.get("name").and_then(Value::as_str))
        .map(|v| (format!("{group}/{v}"), plural.to_owned()))
        .collect()
}

/// When `obj` is a member's copy of a CRD (`kind` is the CRDs'), the
/// index of the custom resource it defines, if propagated: its objects are
/// to be planned again once the copy is remembered (the member may serve
/// them now, or no more).
fn custom_kind_of_copy(shared: &Shared, kind: usize, obj: &Value) -> Option<usize> {
    if Some(kind) != shared.kind_of("apiextensions.k8s.io", "customresourcedefinitions") {
        return None;
    }
    let group = obj.pointer("/spec/group").and_then(Value::as_str)?;
    let plural = obj.pointer("/spec/names/plural").and_then(Value::as_str)?;
    shared.kind_of(group, plural)
}

/// Plans every object of the custom resource `custom` again.
fn replan_kind(shared: &Shared, custom: Option<usize>) {
    let Some((kind, k)) = custom.and_then(|c| Some((c, shared.kinds.get(c)?))) else {
        return;
    };
    for key in k.informer.keys() {
        shared.objects.add(ObjId { kind, key });
    }
}

/// Lists then watches the managed copies of one resource on the member,
/// keeping the cache and queueing every object that changed.
/// `plural.group` (`deployments.apps`), or `plural` for the core group.
fn resource_name(res: &skein_apiserver::registry::ResourceInfo) -> String {
    if res.group.is_empty() {
        res.plural.to_owned()
    } else {
        format!("{}.{}", res.plural, res.group)
    }
}

async fn watch_loop(syncer: std::sync::Weak<ClusterSyncer>, shared: Arc<Shared>, kind: usize) {
    let mut failures = 0u32;
    let mut counted = false;
    // Whether a watch was opened before (the next one is a restart).
    let mut opened = false;
    let Some(cluster) = syncer.upgrade().map(|s| s.name.clone()) else {
        return;
    };
    loop {
        // Read at every relist: a custom resource's version may change.
        let Some(res) = shared.kinds.get(kind).map(|k| k.res.clone()) else {
            return;
        };
        let Some(s) = syncer.upgrade() else { return };
        let api = s.api.clone();
        let mut reachable = s.reachable.subscribe();
        drop(s);
        let _ = reachable.wait_for(|r| *r).await;
        let listed = api.list(&res, &selector()).await;
        let (items, mut rv) = match listed {
            Ok(x) => x,
            Err(e) => {
                // A member without the API holds no copy of it.
                if e.kind() == Some(ErrorKind::NotFound)
                    && !counted
                    && let Some(s) = syncer.upgrade()
                {
                    counted = true;
                    s.listed.fetch_add(1, std::sync::atomic::Ordering::AcqRel);
                    s.listed_kind(kind);
                }
                // A list that fails (a member answering errors) must not
                // hold its objects' syncs back: they run without the cache
                // (create-only applies, refusals read) and report what the
                // member answers.
                if let Some(s) = syncer.upgrade() {
                    s.listed_kind(kind);
                }
                // A member without the API (or unreachable): try again later.
                failures = failures.saturating_add(1);
                tracing::info!(%cluster, resource = res.plural, error = %e, "member list failed");
                tokio::time::sleep(
                    skein_apiserver::controllers::queue::backoff(failures)
                        .clamp(Duration::from_secs(1), Duration::from_secs(5)),
                )
                .await;
                continue;
            }
        };
        failures = 0;
        let none_held = items.is_empty();
        {
            let Some(s) = syncer.upgrade() else { return };
            if !counted {
                counted = true;
                s.listed.fetch_add(1, std::sync::atomic::Ordering::AcqRel);
            }
            let mut customs: Vec<Option<usize>> = Vec::new();
            let fresh: std::collections::HashMap<ObjId, HeldCopy> = items
                .into_iter()
                .map(|o| {
                    customs.push(custom_kind_of_copy(&shared, kind, &o));
                    (
                        ObjId {
                            kind,
                            key: ObjectKey::of(&o),
                        },
                        s.dictionaries.hold(kind, &o),
                    )
                })
                .collect();
            let mut changed: Vec<ObjId> = Vec::new();
            {
                let mut cache = s
                    .cache
                    .write()
                    .unwrap_or_else(std::sync::PoisonError::into_inner);
                cache.retain(|id, _| {
                    let keep = id.kind != kind || fresh.contains_key(id);
                    if !keep {
                        changed.push(id.clone());
                    }
                    keep
                });
                for (id, o) in fresh {
                    cache.insert(id.clone(), o);
                    changed.push(id);
                }
            }
            for custom in customs {
                replan_kind(&shared, custom);
            }
            s.listed_kind(kind);
            for id in changed {
                s.queue.add(id.clone());
                shared.record(&id);
            }
        }
        // A kind of which the federation has no object and the member no
        // copy is not watched: a fleet uses a few of the propagated kinds,
        // and a watch per kind per member is a connection each (and a
        // buffer on both ends). Its first object wakes this loop, which
        // lists again and watches; until the list lands, that object's
        // copies are made from what the earlier list showed (none).
        if none_held && let Some(k) = shared.kinds.get(kind) {
            // Subscribed before looking: an object added between is told.
            let mut notices = k.informer.subscription();
            k.informer.synced().await;
            if k.informer.is_empty() {
                if notices.next().await.is_none() {
                    return;
                }
                continue;
            }
        }
        let mut rewatch = false;
        loop {
            let Some(s) = syncer.upgrade() else { return };
            let api = s.api.clone();
            let mut reachable = s.reachable.subscribe();
            drop(s);
            let _ = reachable.wait_for(|r| *r).await;
            // Watching again (not straight after a list): a member whose
            // store was replaced while away (wiped, restored) may accept
            // a watch from a version it never had and show nothing. Its
            // list's version behind ours says so: list again.
            if rewatch && api.behind(&res, &selector(), &rv).await {
                break;
            }
            rewatch = true;
            if shared
                .kinds
                .get(kind)
                .is_none_or(|k| k.res.version != res.version)
            {
                break;
            }
            if opened {
                shared
                    .metrics
                    .watch_restarted(&cluster, resource_name(&res));
            }
            opened = true;
            let mut events = match api.watch(&res, &selector(), &rv).await {
                Ok(e) => e,
                Err(_) => break,
            };
            let mut gone = false;
            while let Some(ev) = events.next().await {
                let Some(s) = syncer.upgrade() else { return };
                match ev {
                    Ok(MemberEvent::Applied(o)) => {
                        rv = object::meta_str(&o, "resourceVersion")
                            .unwrap_or_default()
                            .to_owned();
                        let id = ObjId {
                            kind,
                            key: ObjectKey::of(&o),
                        };
                        let custom = custom_kind_of_copy(&shared, kind, &o);
                        // The very version a write of this syncer answered
                        // with (and recorded): nothing new to sync. A
                        // status write on the member: nothing to sync
                        // either, only its status to record.
                        let change = s.change(&id, &o);
                        s.remember(&id, Some(o));
                        replan_kind(&shared, custom);
                        match change {
                            Change::Same => {}
                            Change::Status => shared.record_status(&id),
                            Change::Other if s.missed_by_sync(&id) => {}
                            Change::Other => {
                                s.queue.add(id.clone());
                                shared.record(&id);
                            }
                        }
                    }
                    Ok(MemberEvent::Deleted(o)) => {
                        rv = object::meta_str(&o, "resourceVersion")
                            .unwrap_or_default()
                            .to_owned();
                        let id = ObjId {
                            kind,
                            key: ObjectKey::of(&o),
                        };
                        s.remember(&id, None);
                        replan_kind(&shared, custom_kind_of_copy(&shared, kind, &o));
                        s.queue.add(id.clone());
                        shared.record(&id);
                    }
                    Ok(MemberEvent::Progress(r)) => rv = r,
                    Err(e) => {
                        // 410 Gone: relist; anything else: rewatch.
                        gone = e.kind() == Some(ErrorKind::Gone);
                        break;
                    }
                }
            }
            if gone {
                break;
            }
            tokio::time::sleep(Duration::from_millis(200)).await;
        }
    }
}

async fn work_loop(syncer: std::sync::Weak<ClusterSyncer>, shared: Arc<Shared>) {
    loop {
        let queue = match syncer.upgrade() {
            Some(s) => s.queue.clone(),
            None => return,
        };
        let item = queue.next().await;
        let Some(s) = syncer.upgrade() else { return };
        // An unreachable member's objects wait here (the item held, so it
        // is neither lost nor retried) until its Cluster is Ready again.
        let mut reachable = s.reachable.subscribe();
        drop(s);
        let _ = reachable.wait_for(|r| *r).await;
        let Some(s) = syncer.upgrade() else { return };
        match s.sync(&shared, item.key()).await {
            Ok(()) => drop(item),
            Err(Retry::Soon(reason)) => {
                shared.metrics.retried(&s.name, reason);
                item.retry();
            }
            Err(Retry::After(d, reason)) => {
                shared.metrics.retried(&s.name, reason);
                item.requeue_after(d);
            }
            Err(Retry::Look) => item.retry(),
        }
    }
}

/// How a failed sync is retried.
enum Retry {
    /// With the queue's exponential backoff; why ([`retry_reason`]).
    Soon(&'static str),
    /// After this delay (a refusal that will not change soon); why.
    After(Duration, &'static str),
    /// The member refused a create-only apply: it holds an object of that
    /// name the syncer did not see; sync again after reading it. Never
    /// leaves [`ClusterSyncer::sync`].
    Look,
}

/// Why a call failed, for `skein_federation_sync_retries_total`: the
/// member's Status reason, or `Unreachable` when it did not answer.
fn retry_reason(e: &CallError) -> &'static str {
    match e.kind() {
        None => "Unreachable",
        Some(k) => match k {
            ErrorKind::BadRequest => "BadRequest",
            ErrorKind::Unauthorized => "Unauthorized",
            ErrorKind::Forbidden => "Forbidden",
            ErrorKind::NotFound => "NotFound",
            ErrorKind::MethodNotAllowed => "MethodNotAllowed",
            ErrorKind::NotAcceptable => "NotAcceptable",
            ErrorKind::AlreadyExists => "AlreadyExists",
            ErrorKind::Conflict => "Conflict",
            ErrorKind::Gone => "Gone",
            ErrorKind::TooLarge => "RequestEntityTooLarge",
            ErrorKind::UnsupportedMediaType => "UnsupportedMediaType",
            ErrorKind::Invalid => "Invalid",
            ErrorKind::TooManyRequests => "TooManyRequests",
            ErrorKind::Internal => "InternalError",
            ErrorKind::Unavailable => "ServiceUnavailable",
            ErrorKind::Timeout => "Timeout",
            ErrorKind::Other => "Other",
        },
    }
}

impl ClusterSyncer {
    fn desired(&self, shared: &Shared, id: &ObjId) -> Option<(Desired, String, i64, plan::Policy)> {
        match shared.plan(id) {
            Some(p) => {
                let d = match p.copies.get(&self.name) {
                    Some(d) => d.clone(),
                    // A Namespace copy is made by the syncer when an object
                    // needs it, before the Namespace's plan knows: plan again.
                    None if Some(id.kind) == shared.kind_of("", "namespaces") => {
                        shared.objects.add(id.clone());
                        return None;
                    }
                    None => Desired::Absent,
                };
                Some((d, p.uid.clone(), p.generation, p.policy))
            }
            None => {
                // Not planned: a stray when the federation has no such object.
                let kind = shared.kinds.get(id.kind)?;
                if !kind.informer.is_synced() {
                    return None;
                }
                if shared.object(id).is_some() {
                    // Not planned yet, or forgotten as an object that stays
                    // on the federation with no copy anywhere: a copy seen
                    // now is the propagator's to plan (and remove).
                    if self.holds(id) {
                        shared.objects.add(id.clone());
                    }
                    return None;
                }
                Some((
                    Desired::Absent,
                    String::new(),
                    0,
                    plan::Policy {
                        conflict: skein_admission::placement::ConflictResolution::Abort,
                        drift: skein_admission::placement::Drift::Enforce,
                    },
                ))
            }
        }
    }

    /// Syncs one object's copy on this cluster.
    ///
    /// A copy the member watch has not shown is created without reading
    /// the member first: a create-only apply (see [`MemberApi::apply_new`]).
    /// When the member refuses it, it holds an object of that name (a
    /// foreign one, or a copy the watch has not delivered yet), so the
    /// object is read and the sync planned again from what it is, as
    /// `Abort`, `Adopt` and `Overwrite` need.
    ///
    /// A change the watch told of meanwhile is synced again afterwards,
    /// unless it is the version the sync's own write left.
    async fn sync(&self, shared: &Shared, id: &ObjId) -> Result<(), Retry> {
        if !self.cache_holds_kind_of(id) {
            return Ok(());
        }
        let from = self.replan_from.load(std::sync::atomic::Ordering::SeqCst);
        if shared.plan(id).is_some_and(|p| p.seq < from) {
            // Stale: the re-plan queued with the Cluster's change brings
            // the current plan.
            return Ok(());
        }
        lock(&self.syncing).insert(id.clone(), Pass::default());
        let result = match self.sync_pass(shared, id, false).await {
            Err(Retry::Look) => self.sync_pass(shared, id, true).await,
            other => other,
        };
        let pass = lock(&self.syncing).remove(id).unwrap_or_default();
        if pass.missed {
            let now = self.seen_version(id);
            if pass.wrote.is_none() || now != pass.wrote {
                self.queue.add(id.clone());
                shared.record(id);
            }
        }
        result
    }

    /// Whether the member's copies of `id`'s kind have been listed into
    /// the cache; if not, `id` waits for that ([`Listing`]).
    fn cache_holds_kind_of(&self, id: &ObjId) -> bool {
        let mut listing = lock(&self.listing);
        if listing.listed.contains(&id.kind) {
            return true;
        }
        listing
            .deferred
            .entry(id.kind)
            .or_default()
            .insert(id.clone());
        false
    }

    /// Records that `kind`'s copies are in the cache, and queues the
    /// objects whose sync waited for that.
    fn listed_kind(&self, kind: usize) {
        let waiting = {
            let mut listing = lock(&self.listing);
            listing.listed.insert(kind);
            listing.deferred.remove(&kind).unwrap_or_default()
        };
        for id in waiting {
            self.queue.add(id);
        }
    }

    /// Whether a sync of `id` runs now; if so, it is told the watch saw a
    /// change.
    fn missed_by_sync(&self, id: &ObjId) -> bool {
        match lock(&self.syncing).get_mut(id) {
            Some(pass) => {
                pass.missed = true;
                true
            }
            None => false,
        }
    }

    /// One pass of [`ClusterSyncer::sync`]; `look`: read the member's
    /// object when the watch has not shown it (else create only).
    async fn sync_pass(&self, shared: &Shared, id: &ObjId, look: bool) -> Result<(), Retry> {
        let Some(res) = shared.kinds.get(id.kind).map(|k| k.res.clone()) else {
            return Ok(());
        };
        let Some((desired, uid, generation, policy)) = self.desired(shared, id) else {
            return Ok(());
        };
        let state = |state: State, message: String, applied: Option<i64>| CopyState {
            state,
            message,
            applied_generation: applied,
            uid: uid.clone(),
        };
        let mut observed: Option<Arc<Value>> = self.copy_of(id);
        if look && observed.is_none() && matches!(desired, Desired::Copy(_)) {
            match self.api.get(&res, &id.key.namespace, &id.key.name).await {
                Ok(o) => observed = o.map(Arc::new),
                Err(e) => {
                    shared.set_copy_state(
                        id,
                        &self.name,
                        state(State::Failed, e.to_string(), None),
                    );
                    return Err(Retry::Soon(retry_reason(&e)));
                }
            }
        }
        if let (Desired::Copy(copy), Some(o)) = (&desired, observed.as_deref())
            && self.holds_own_write(id, copy, o)
        {
            shared.set_copy_state(
                id,
                &self.name,
                state(State::Applied, String::new(), Some(generation)),
            );
            return Ok(());
        }
        let plan_desired = match &desired {
            Desired::Copy(v) => PlanDesired::Copy(v),
            Desired::Absent | Desired::Unrenderable(_) => PlanDesired::Absent,
            Desired::Orphaned => PlanDesired::Orphaned,
        };
        let action = plan::plan(plan_desired, observed.as_deref(), &uid, policy);
        if !matches!(action, Action::Nothing | Action::Conflict { .. }) {
            tracing::debug!(
                cluster = self.name,
                object = %id.key,
                resource = res.plural,
                ?action,
                observed = observed
                    .as_deref()
                    .and_then(|o| object::meta_str(o, "resourceVersion")),
                differs = match (&desired, observed.as_deref()) {
                    (Desired::Copy(d), Some(o)) => plan::differences(d, o, 3)
                        .iter()
                        .map(ToString::to_string)
                        .collect::<Vec<_>>()
                        .join(" "),
                    _ => String::new(),
                },
                "syncer writes"
            );
        }
        if let Desired::Unrenderable(msg) = &desired {
            shared.set_copy_state(id, &self.name, state(State::Failed, msg.clone(), None));
            if !matches!(action, Action::Delete) {
                return Ok(());
            }
        }
        let result = match action {
            Action::Create | Action::Apply { .. } => {
                let force = matches!(action, Action::Apply { force: true });
                let Desired::Copy(body) = &desired else {
                    return Ok(());
                };
                if res.namespaced
                    && let Err(e) = self.ensure_namespace(shared, &id.key.namespace).await
                {
                    shared.set_copy_state(
                        id,
                        &self.name,
                        state(State::Failed, e.to_string(), None),
                    );
                    return Err(Retry::Soon(retry_reason(&e)));
                }
                match action {
                    Action::Create if !look && !uid.is_empty() => {
                        match self.api.apply_new(&res, body, &uid).await {
                            Err(e)
                                if matches!(
                                    e.kind(),
                                    Some(
                                        ErrorKind::AlreadyExists
                                            | ErrorKind::Conflict
                                            | ErrorKind::Invalid
                                    )
                                ) =>
                            {
                                return Err(Retry::Look);
                            }
                            other => other.map(Some),
                        }
                    }
                    _ => self.api.apply(&res, body, force).await.map(Some),
                }
            }
            Action::Replace => {
                let Desired::Copy(body) = &desired else {
                    return Ok(());
                };
                let mut body = (**body).clone();
                if let (Some(m), Some(o)) = (
                    body.get_mut("metadata").and_then(Value::as_object_mut),
                    observed.as_deref(),
                ) {
                    m.insert(
                        "resourceVersion".into(),
                        json!(object::meta_str(o, "resourceVersion").unwrap_or_default()),
                    );
                }
                self.api.replace(&res, &body).await.map(Some)
            }
            Action::Nothing => {
                if let Desired::Copy(copy) = &desired {
                    // Drift left alone (Ignore) must not hold back the
                    // rest of the copy.
                    if let Err(e) = self
                        .apply_around_drift(&res, copy, observed.as_deref())
                        .await
                    {
                        shared.set_copy_state(
                            id,
                            &self.name,
                            state(State::Failed, e.to_string(), None),
                        );
                        return Err(Retry::Soon(retry_reason(&e)));
                    }
                    shared.set_copy_state(
                        id,
                        &self.name,
                        state(State::Applied, String::new(), Some(generation)),
                    );
                } else if observed.is_none() {
                    shared.clear_copy_state(id, &self.name);
                }
                return Ok(());
            }
            Action::Delete => {
                shared.set_copy_state(id, &self.name, state(State::Deleting, String::new(), None));
                match self.api.delete(&res, &id.key.namespace, &id.key.name).await {
                    Ok(()) => {
                        self.remember(id, None);
                        shared.clear_copy_state(id, &self.name);
                        return Ok(());
                    }
                    Err(e) => Err(e),
                }
            }
            Action::Orphan => {
                let patch = json!({"metadata": {
                    "labels": {(super::MANAGED_BY): null},
                    "annotations": {(super::ORIGIN_UID): null},
                }});
                match self
                    .api
                    .merge_patch(&res, &id.key.namespace, &id.key.name, &patch)
                    .await
                {
                    Ok(_) => {
                        self.remember(id, None);
                        shared.clear_copy_state(id, &self.name);
                        if let Some(obj) = shared.object(id) {
                            let message = format!(
                                "left the copy on cluster {} without Skein's markers",
                                self.name
                            );
                            super::record::emit(
                                &shared.registry,
                                &res,
                                &obj,
                                "Orphaned",
                                "Normal",
                                &message,
                            )
                            .await;
                        }
                        return Ok(());
                    }
                    Err(e) => Err(e),
                }
            }
            Action::Conflict { message } => {
                shared.set_copy_state(id, &self.name, state(State::Conflict, message, None));
                return Ok(());
            }
            Action::Drifted { path, manager } => {
                if let Desired::Copy(copy) = &desired
                    && let Err(e) = self
                        .apply_around_drift(&res, copy, observed.as_deref())
                        .await
                {
                    tracing::debug!(cluster = self.name, error = %e, "applying around drift failed");
                }
                shared.set_copy_state(
                    id,
                    &self.name,
                    state(
                        State::Drifted,
                        format!("{path} is changed by field manager {manager:?}"),
                        None,
                    ),
                );
                return Ok(());
            }
        };
        match result {
            Ok(Some(obj)) => {
                let rv = object::meta_str(&obj, "resourceVersion").map(str::to_owned);
                if let Some(pass) = lock(&self.syncing).get_mut(id) {
                    pass.wrote = rv.clone();
                }
                match (&desired, rv) {
                    (Desired::Copy(copy), Some(rv))
                        if matches!(action, Action::Create | Action::Apply { .. }) =>
                    {
                        lock(&self.written).insert(id.clone(), (copy.clone(), rv));
                    }
                    _ => {
                        lock(&self.written).remove(id);
                    }
                }
                self.remember(id, Some(obj));
                shared.set_copy_state(
                    id,
                    &self.name,
                    state(State::Applied, String::new(), Some(generation)),
                );
                Ok(())
            }
            Ok(None) => Ok(()),
            Err(e) => {
                if res.namespaced
                    && matches!(e.kind(), Some(ErrorKind::Forbidden | ErrorKind::NotFound))
                {
                    // The namespace may be gone or terminating: check it again.
                    self.namespaces
                        .lock()
                        .unwrap_or_else(std::sync::PoisonError::into_inner)
                        .remove(&id.key.namespace);
                }
                let retry = match e.kind() {
                    // Refusals: the member will say the same until the object changes.
                    Some(ErrorKind::BadRequest | ErrorKind::Invalid) => {
                        Retry::After(Duration::from_secs(30), retry_reason(&e))
                    }
                    _ => Retry::Soon(retry_reason(&e)),
                };
                shared.set_copy_state(id, &self.name, state(State::Failed, e.to_string(), None));
                Err(retry)
            }
        }
    }

    /// Applies the copy without the fields others changed (drift Report or
    /// Ignore), when the rest of it is not in place yet.
    async fn apply_around_drift(
        &self,
        res: &skein_apiserver::registry::ResourceInfo,
        copy: &Value,
        observed: Option<&Value>,
    ) -> Result<(), CallError> {
        let Some(observed) = observed else {
            return Ok(());
        };
        let rest = plan::without_drift(copy, observed);
        if plan::contained(&rest, observed).is_ok() && !plan::skein_owns_more(&rest, observed) {
            return Ok(());
        }
        tracing::debug!(
            cluster = self.name,
            object = object::name(copy),
            resource = res.plural,
            "syncer applies around drift"
        );
        self.api.apply(res, &rest, false).await.map(|_| ())
    }

    /// Creates `ns` on the member when it has none (from the federation's
    /// Namespace, with Skein's markers).
    async fn ensure_namespace(&self, shared: &Shared, ns: &str) -> Result<(), CallError> {
        if self
            .namespaces
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .contains(ns)
        {
            return Ok(());
        }
        let Some(kind) = shared.kind_of("", "namespaces") else {
            return Ok(());
        };
        let Some(res) = shared.kinds.get(kind).map(|k| k.res) else {
            return Ok(());
        };
        if self.api.get(&res, "", ns).await?.is_none() {
            let id = ObjId {
                kind,
                key: ObjectKey::new("", ns),
            };
            let body = shared
                .object(&id)
                .and_then(|fed| {
                    super::render::render(&super::render::RenderInput {
                        template: &fed,
                        cluster: &self.name,
                        replicas: None,
                        completions: None,
                        retain_replicas: false,
                        override_: None,
                        federation: super::FEDERATION_NAME,
                    })
                    .ok()
                })
                .unwrap_or_else(|| {
                    json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns,
                        "labels": {(super::MANAGED_BY): super::FEDERATION_NAME}}})
                });
            let created = self.api.apply(&res, &body, true).await?;
            self.remember(&id, Some(created));
        }
        self.namespaces
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .insert(ns.to_owned());
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn a_crd_serves_its_served_versions() {
        let crd = json!({"spec": {
            "group": "example.com",
            "names": {"plural": "widgets"},
            "versions": [
                {"name": "v1", "served": true},
                {"name": "v2", "served": false},
                {"name": "v3", "served": true},
            ],
        }});
        assert_eq!(
            served_versions(&crd),
            [
                ("example.com/v1".to_owned(), "widgets".to_owned()),
                ("example.com/v3".to_owned(), "widgets".to_owned()),
            ]
        );
        assert!(served_versions(&json!({"spec": {}})).is_empty());
    }
}
