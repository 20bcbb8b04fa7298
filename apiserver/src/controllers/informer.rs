//! A shared informer: a local copy of one resource's objects, kept up to
//! date from a registry watch, that tells subscribers which objects changed.
//!
//! Contract:
//! - [`Informer::start`] returns the process's one informer of a resource
//!   over a store (started on first use, shared by every controller), which
//!   lists the resource, then watches from the list's revision; any watch error or end (a 410 included) relists and goes
//!   on, after a short pause. Objects are held as they are read (the
//!   resource's own version), without `metadata.managedFields` (as
//!   upstream controllers' informers that strip them: no controller here
//!   reads them, and an Update without them keeps the stored ones).
//! - Memory: Secrets and ConfigMaps, the bulk of most clusters' objects
//!   and the ones carrying data, and the federation's Placements (one per
//!   federated object), are not held decoded ([`Held`]): the
//!   informer keeps the watch cache's entry of the very version it was
//!   told of (shared bytes, no copy), or the object's JSON when the cache
//!   is off or has moved on, and decodes on each read. Other resources are
//!   held decoded. A decoded object costs several times its bytes (every
//!   small map is a tree node), so a control plane's informers cost little
//!   beyond the watch cache they read from.
//! - [`Informer::synced`] completes once the first list is in the cache.
//! - Every change (and every object again after a relist) is announced to
//!   every [`Informer::subscribe`]r as a [`Notice`]. A subscriber that falls
//!   behind the bounded channel receives [`Notice::Resync`] and must treat
//!   every object as changed; writers and other subscribers never wait for
//!   it.
//! - Reads ([`Informer::get`], [`Informer::list`]) never block on the watch
//!   and hand out `Arc<Value>`s (shared, or decoded for the caller when
//!   the resource is held encoded); [`Informer::keys`] and
//!   [`Informer::keys_in`] read no object. The cache is indexed by controller
//!   ([`Informer::controlled_by`], [`Informer::orphans`]), so a controller
//!   finds its dependents without walking the namespace.
//! - Read-your-writes: a writer that wants its own writes in later reads
//!   calls [`Informer::expect`] with what each write returned, and a reader
//!   that needs them awaits [`Informer::caught_up`], which returns once the
//!   cache has applied every change up to the highest expected revision
//!   (upstream controllers get the same from their "expectations"). It
//!   gives up after [`CATCH_UP_LIMIT`] and reports that, so a reader never
//!   hangs on a watch that is relisting.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::sync::atomic::{AtomicI64, AtomicU64, Ordering};
use std::sync::{Arc, RwLock};
use std::time::Duration;

use futures::StreamExt;
use serde_json::Value;
use tokio::sync::{broadcast, watch};

use crate::registry::cache::index::Entry;
use crate::registry::list::ListQuery;
use crate::registry::object;
use crate::registry::watch::{WatchItem, WatchQuery};
use crate::registry::{Registry, ResourceInfo};
use crate::status::ApiError;

/// An object's place: namespace ("" when cluster-scoped) and name.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct ObjectKey {
    /// The namespace, "" for cluster-scoped objects.
    pub namespace: String,
    /// The name.
    pub name: String,
}

impl ObjectKey {
    /// The key of `namespace`/`name`.
    pub fn new(namespace: impl Into<String>, name: impl Into<String>) -> ObjectKey {
        ObjectKey {
            namespace: namespace.into(),
            name: name.into(),
        }
    }

    /// The key of an object (from its metadata).
    pub fn of(obj: &Value) -> ObjectKey {
        ObjectKey::new(object::namespace(obj), object::name(obj))
    }
}

impl std::fmt::Display for ObjectKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.namespace.is_empty() {
            f.write_str(&self.name)
        } else {
            write!(f, "{}/{}", self.namespace, self.name)
        }
    }
}

/// What a subscriber is told.
#[derive(Clone, Debug)]
pub enum Notice {
    /// The object was added or changed; its new state.
    Applied(Arc<Value>),
    /// The object was deleted; its last state.
    Deleted(Arc<Value>),
    /// The subscriber missed notices: treat every object as changed.
    Resync,
}

/// How many notices a subscriber may be behind before it gets a
/// [`Notice::Resync`].
const NOTICE_BUFFER: usize = 4096;

/// The longest [`Informer::caught_up`] waits.
pub const CATCH_UP_LIMIT: Duration = Duration::from_secs(5);

/// See the module documentation. Cheap to clone (shared state).
#[derive(Clone)]
pub struct Informer {
    res: Arc<ResourceInfo>,
    /// Where held cache entries come from.
    registry: Registry,
    objects: Arc<RwLock<Cache>>,
    notices: broadcast::Sender<Notice>,
    synced: watch::Receiver<bool>,
    /// The store revision the cache reflects: the last list's, then each
    /// applied event's.
    seen: Arc<watch::Sender<i64>>,
    /// The highest revision a writer asked to see ([`Informer::expect`]).
    expected: Arc<AtomicI64>,
    /// See [`Informer::generation`].
    generation: Arc<AtomicU64>,
}

impl Informer {
    /// The informer of `res` (all namespaces) in `registry`'s server
    /// instance: the one already running for that resource, or a new one
    /// (as upstream's shared informer factory: every controller of the
    /// server shares one copy of each resource's objects and one watch).
    /// Runs until the runtime shuts down.
    pub fn start(registry: &Registry, res: Arc<ResourceInfo>) -> Informer {
        let key = format!("informer/{}/{}/{}", res.group, res.version, res.plural);
        registry.instance().shared(
            &key,
            // Its task is gone (its runtime ended: the `synced` sender it
            // owned is dropped), or it reads another store.
            |kept: &Informer| {
                kept.synced.has_changed().is_err()
                    || !Arc::ptr_eq(kept.registry.store(), registry.store())
            },
            || Informer::start_own(registry, res.clone()),
        )
    }

    /// Starts a new informer of `res`, shared with no one.
    fn start_own(registry: &Registry, res: Arc<ResourceInfo>) -> Informer {
        let (notices, _) = broadcast::channel(NOTICE_BUFFER);
        let (synced_tx, synced) = watch::channel(false);
        let informer = Informer {
            objects: Arc::new(RwLock::new(Cache::new(&res))),
            res,
            registry: registry.clone(),
            notices,
            synced,
            seen: Arc::new(watch::channel(0).0),
            expected: Arc::default(),
            generation: Arc::default(),
        };
        let runner = informer.clone();
        let registry = registry.clone();
        tokio::spawn(async move {
            loop {
                if let Err(e) = runner.run_once(&registry, &synced_tx).await {
                    tracing::debug!(resource = runner.res.plural, error = %e, "informer relisting");
                }
                tokio::time::sleep(Duration::from_millis(200)).await;
            }
        });
        informer
    }

    /// Whether `other` is a handle of this very informer.
    pub fn is(&self, other: &Informer) -> bool {
        Arc::ptr_eq(&self.objects, &other.objects)
    }

    /// The registry this informer reads through.
    pub fn registry(&self) -> &Registry {
        &self.registry
    }

    /// The resource this informer follows.
    pub fn resource(&self) -> &Arc<ResourceInfo> {
        &self.res
    }

    /// A new subscription to changes from now on.
    pub fn subscribe(&self) -> broadcast::Receiver<Notice> {
        self.notices.subscribe()
    }

    /// Completes once the first list is in the cache.
    pub async fn synced(&self) {
        let mut synced = self.synced.clone();
        // An error means the runner is gone (runtime shutting down).
        let _ = synced.wait_for(|s| *s).await;
    }

    /// Whether the first list is in the cache.
    pub fn is_synced(&self) -> bool {
        *self.synced.borrow()
    }

    /// Asks later [`Informer::caught_up`] calls to wait until the cache
    /// holds `written` (an object of this resource as a write returned it)
    /// or a later state. An object without a numeric resourceVersion is
    /// ignored.
    pub fn expect(&self, written: &Value) {
        if let Some(rv) = revision_of(written) {
            self.expected.fetch_max(rv, Ordering::AcqRel);
        }
    }

    /// Waits until the cache has applied every change up to the highest
    /// [`Informer::expect`]ed revision; `false` if that took longer than
    /// [`CATCH_UP_LIMIT`] (the cache may then miss the caller's writes).
    pub async fn caught_up(&self) -> bool {
        let want = self.expected.load(Ordering::Acquire);
        if *self.seen.borrow() >= want {
            return true;
        }
        let mut seen = self.seen.subscribe();
        matches!(
            tokio::time::timeout(CATCH_UP_LIMIT, seen.wait_for(|s| *s >= want)).await,
            Ok(Ok(_))
        )
    }

    /// The cached object at `key`.
    pub fn get(&self, key: &ObjectKey) -> Option<Arc<Value>> {
        let held = self.read().objects.get(key).cloned()?;
        held.value(&self.res)
    }

    /// Every cached object for which `keep` holds, in key order.
    pub fn list(&self, keep: impl Fn(&Value) -> bool) -> Vec<Arc<Value>> {
        self.values(|c| c.objects.values().cloned().collect())
            .into_iter()
            .filter(|o| keep(o))
            .collect()
    }

    /// Whether an object is cached at `key` (nothing decoded).
    pub fn contains(&self, key: &ObjectKey) -> bool {
        self.read().objects.contains_key(key)
    }

    /// Whether no object is cached.
    pub fn is_empty(&self) -> bool {
        self.read().objects.is_empty()
    }

    /// The keys of every cached object, in key order.
    pub fn keys(&self) -> Vec<ObjectKey> {
        self.read().objects.keys().cloned().collect()
    }

    /// The keys of every cached object of `namespace`, in name order.
    pub fn keys_in(&self, namespace: &str) -> Vec<ObjectKey> {
        let from = ObjectKey::new(namespace, "");
        self.read()
            .objects
            .range(from..)
            .take_while(|(k, _)| k.namespace == namespace)
            .map(|(k, _)| k.clone())
            .collect()
    }

    /// Every cached object of `namespace`, in name order.
    pub fn list_namespace(&self, namespace: &str) -> Vec<Arc<Value>> {
        let from = ObjectKey::new(namespace, "");
        self.values(|c| {
            c.objects
                .range(from..)
                .take_while(|(k, _)| k.namespace == namespace)
                .map(|(_, v)| v.clone())
                .collect()
        })
    }

    /// The cached objects whose controller ownerReference has `uid`, in
    /// key order.
    pub fn controlled_by(&self, uid: &str) -> Vec<Arc<Value>> {
        self.values(|c| {
            c.controlled
                .get(uid)
                .into_iter()
                .flatten()
                .filter_map(|k| c.objects.get(k).cloned())
                .collect()
        })
    }

    /// The cached objects of `namespace` without a controller
    /// ownerReference, in name order.
    pub fn orphans(&self, namespace: &str) -> Vec<Arc<Value>> {
        self.values(|c| c.orphans_in(namespace))
    }

    /// The objects `pick` takes from the cache, decoded (when held
    /// encoded) after the lock is released.
    fn values(&self, pick: impl FnOnce(&Cache) -> Vec<Held>) -> Vec<Arc<Value>> {
        let held = pick(&self.read());
        held.into_iter()
            .filter_map(|h| h.value(&self.res))
            .collect()
    }

    fn read(&self) -> std::sync::RwLockReadGuard<'_, Cache> {
        // A poisoned lock only means a panicking writer; the map is intact.
        self.objects
            .read()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    fn write(&self) -> std::sync::RwLockWriteGuard<'_, Cache> {
        self.objects
            .write()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    fn apply(&self, mut obj: Value) {
        strip_managed_fields(&mut obj);
        let obj = Arc::new(obj);
        let key = ObjectKey::of(&obj);
        let held = self.hold(&key, &obj);
        self.write().insert(key, held);
        self.changed();
        // After the write: a reader woken by the revision finds the object.
        self.saw(&obj);
        let _ = self.notices.send(Notice::Applied(obj));
    }

    fn delete(&self, mut obj: Value) {
        strip_managed_fields(&mut obj);
        let obj = Arc::new(obj);
        self.write().remove(&ObjectKey::of(&obj));
        self.changed();
        // A deleted object carries the deletion's revision.
        self.saw(&obj);
        let _ = self.notices.send(Notice::Deleted(obj));
    }

    /// How `obj` (at `key`) is held: see [`Held`].
    fn hold(&self, key: &ObjectKey, obj: &Arc<Value>) -> Held {
        if !holds_encoded(&self.res) {
            return Held::Decoded(obj.clone());
        }
        let controller = controller_uid(obj).map(Arc::from);
        if let Some(entry) = self
            .registry
            .cached_entry(&self.res, &key.namespace, &key.name)
            && Some(entry.kv.mod_revision) == revision_of(obj)
        {
            return Held::Cached { entry, controller };
        }
        match serde_json::to_vec(&**obj) {
            Ok(json) => Held::Encoded {
                json: json.into(),
                controller,
            },
            // A Value always encodes; held decoded should it not.
            Err(_) => Held::Decoded(obj.clone()),
        }
    }

    fn changed(&self) {
        self.generation.fetch_add(1, Ordering::AcqRel);
    }

    /// A counter that moves after every change to the cache (never before
    /// the change is readable): what was derived from the cache at one
    /// generation still holds while the generation is the same.
    pub fn generation(&self) -> u64 {
        self.generation.load(Ordering::Acquire)
    }

    /// Records that the cache reflects the store at `obj`'s revision.
    fn saw(&self, obj: &Value) {
        if let Some(rv) = revision_of(obj) {
            self.seen.send_if_modified(|s| raise(s, rv));
        }
    }

    async fn run_once(
        &self,
        registry: &Registry,
        synced: &watch::Sender<bool>,
    ) -> Result<(), ApiError> {
        let page = registry
            .list(&self.res, None, &ListQuery::default())
            .await?;
        let fresh: BTreeMap<ObjectKey, Arc<Value>> = page
            .items
            .into_iter()
            .map(|mut o| {
                strip_managed_fields(&mut o);
                (ObjectKey::of(&o), Arc::new(o))
            })
            .collect();
        let gone: Vec<Held> = {
            let mut cache = self.write();
            let gone = cache
                .objects
                .iter()
                .filter(|(k, _)| !fresh.contains_key(k))
                .map(|(_, v)| v.clone())
                .collect();
            *cache = Cache::new(&self.res);
            for (key, obj) in &fresh {
                cache.insert(key.clone(), self.hold(key, obj));
            }
            gone
        };
        self.changed();
        for obj in gone.iter().filter_map(|h| h.value(&self.res)) {
            let _ = self.notices.send(Notice::Deleted(obj));
        }
        for obj in fresh.into_values() {
            let _ = self.notices.send(Notice::Applied(obj));
        }
        self.seen.send_if_modified(|s| raise(s, page.revision));
        synced.send_replace(true);
        let query = WatchQuery {
            resource_version: Some(page.revision.to_string()),
            ..WatchQuery::default()
        };
        let mut events = registry.watch(&self.res, None, query).await?;
        while let Some(item) = events.next().await {
            match item {
                WatchItem::Added(o) | WatchItem::Modified(o) => self.apply(o),
                WatchItem::Deleted(o) => self.delete(o),
                WatchItem::Bookmark { revision, .. } => {
                    self.seen.send_if_modified(|s| raise(s, revision));
                }
                WatchItem::Error(e) => return Err(e),
            }
        }
        Ok(())
    }
}

/// One cached object as the informer holds it: decoded, or (for the
/// resources [`holds_encoded`] names) as the watch cache's entry of that
/// version or its own JSON bytes, with its controller's uid kept aside for
/// the index.
#[derive(Clone)]
enum Held {
    /// Shared with every reader.
    Decoded(Arc<Value>),
    /// The watch cache's entry of the version the informer was told of
    /// (shared, not copied); each read decodes it.
    Cached {
        entry: Arc<Entry>,
        controller: Option<Arc<str>>,
    },
    /// The object's JSON; each read decodes it.
    Encoded {
        json: Arc<[u8]>,
        controller: Option<Arc<str>>,
    },
}

impl Held {
    /// The object (`None` only if bytes that decoded before do not decode
    /// now, which would be a bug: logged).
    fn value(&self, res: &ResourceInfo) -> Option<Arc<Value>> {
        let decoded = match self {
            Held::Decoded(v) => return Some(v.clone()),
            Held::Cached { entry, .. } => Registry::decode(&entry.kv).map_err(|e| e.to_string()),
            Held::Encoded { json, .. } => serde_json::from_slice(json).map_err(|e| e.to_string()),
        };
        match decoded {
            Ok(mut v) => {
                // A custom resource's entry is as stored: served with its
                // version's apiVersion and read-time defaults.
                if let (Held::Cached { .. }, Some(c)) = (self, &res.custom) {
                    c.present(res.api_version, &mut v);
                }
                strip_managed_fields(&mut v);
                Some(Arc::new(v))
            }
            Err(e) => {
                tracing::error!(resource = res.plural, error = %e, "informer: held bytes do not decode");
                None
            }
        }
    }

    /// The uid of the object's controller ownerReference, if any.
    fn controller(&self) -> Option<&str> {
        match self {
            Held::Decoded(v) => controller_uid(v),
            Held::Cached { controller, .. } | Held::Encoded { controller, .. } => {
                controller.as_deref()
            }
        }
    }
}

/// Whether `res`'s objects are held as JSON bytes: Secrets and
/// ConfigMaps, and the federation's Placements and ClusterPlacements (one
/// per federated object, each with a line per cluster: the bulk of a
/// fleet's control-plane objects, read one at a time).
fn holds_encoded(res: &ResourceInfo) -> bool {
    (res.group.is_empty() && matches!(res.plural, "secrets" | "configmaps"))
        || (res.group == crate::controllers::crd::FEDERATION_GROUP
            && matches!(res.plural, "placements" | "clusterplacements"))
}

/// Drops `metadata.managedFields` (see the module documentation).
fn strip_managed_fields(obj: &mut Value) {
    if let Some(meta) = obj.get_mut("metadata").and_then(Value::as_object_mut) {
        meta.remove("managedFields");
    }
}

/// The cached objects and their controller index.
struct Cache {
    objects: BTreeMap<ObjectKey, Held>,
    /// Controller uid → keys of the objects it controls.
    controlled: HashMap<String, BTreeSet<ObjectKey>>,
    /// Keys of the objects without a controller; `None` for the resources
    /// held encoded (Secrets and ConfigMaps: nearly all are orphans, no
    /// controller asks for them, and a second copy of every key would cost
    /// more than a scan), whose [`Informer::orphans`] scans the namespace.
    orphans: Option<BTreeSet<ObjectKey>>,
}

impl Cache {
    fn new(res: &ResourceInfo) -> Cache {
        Cache {
            objects: BTreeMap::new(),
            controlled: HashMap::new(),
            orphans: (!holds_encoded(res)).then(BTreeSet::new),
        }
    }

    fn insert(&mut self, key: ObjectKey, obj: Held) {
        self.unindex(&key);
        match obj.controller() {
            Some(uid) => {
                self.controlled
                    .entry(uid.to_owned())
                    .or_default()
                    .insert(key.clone());
            }
            None => {
                if let Some(orphans) = &mut self.orphans {
                    orphans.insert(key.clone());
                }
            }
        }
        self.objects.insert(key, obj);
    }

    /// The objects of `namespace` without a controller, in name order.
    fn orphans_in(&self, namespace: &str) -> Vec<Held> {
        let from = ObjectKey::new(namespace, "");
        match &self.orphans {
            Some(orphans) => orphans
                .range(from..)
                .take_while(|k| k.namespace == namespace)
                .filter_map(|k| self.objects.get(k).cloned())
                .collect(),
            None => self
                .objects
                .range(from..)
                .take_while(|(k, _)| k.namespace == namespace)
                .filter(|(_, held)| held.controller().is_none())
                .map(|(_, held)| held.clone())
                .collect(),
        }
    }

    fn remove(&mut self, key: &ObjectKey) {
        self.unindex(key);
        self.objects.remove(key);
    }

    fn unindex(&mut self, key: &ObjectKey) {
        let Some(old) = self.objects.get(key) else {
            return;
        };
        match old.controller() {
            Some(uid) => {
                if let Some(keys) = self.controlled.get_mut(uid) {
                    keys.remove(key);
                    if keys.is_empty() {
                        self.controlled.remove(uid);
                    }
                }
            }
            None => {
                if let Some(orphans) = &mut self.orphans {
                    orphans.remove(key);
                }
            }
        }
    }
}

/// The uid of `obj`'s controller ownerReference, if any.
fn controller_uid(obj: &Value) -> Option<&str> {
    obj.get("metadata")?
        .get("ownerReferences")?
        .as_array()?
        .iter()
        .find(|r| r.get("controller").and_then(Value::as_bool) == Some(true))
        .and_then(|r| r.get("uid"))
        .and_then(Value::as_str)
}

/// An object's resourceVersion as a store revision.
fn revision_of(obj: &Value) -> Option<i64> {
    obj.pointer("/metadata/resourceVersion")
        .and_then(Value::as_str)
        .and_then(|rv| rv.parse().ok())
}

/// Raises `seen` to `rv`; whether it changed (so waiters wake only then).
fn raise(seen: &mut i64, rv: i64) -> bool {
    if rv > *seen {
        *seen = rv;
        true
    } else {
        false
    }
}

/// A subscriber's end: [`Subscription::next`] maps a lag to
/// [`Notice::Resync`].
pub struct Subscription(broadcast::Receiver<Notice>);

impl Subscription {
    /// The next notice; `None` once the informer is gone.
    pub async fn next(&mut self) -> Option<Notice> {
        match self.0.recv().await {
            Ok(n) => Some(n),
            Err(broadcast::error::RecvError::Lagged(_)) => Some(Notice::Resync),
            Err(broadcast::error::RecvError::Closed) => None,
        }
    }
}

impl Informer {
    /// Like [`Informer::subscribe`], with lag mapped to a resync.
    pub fn subscription(&self) -> Subscription {
        Subscription(self.subscribe())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::registry::resource;

    fn held(controller: Option<&str>) -> Held {
        Held::Encoded {
            json: Arc::from(&b"{}"[..]),
            controller: controller.map(Arc::from),
        }
    }

    /// The orphans of a namespace are the same whether the cache indexes
    /// them (Pods) or scans for them (Secrets).
    #[test]
    fn orphans_are_found_with_and_without_their_index() {
        for plural in ["pods", "secrets"] {
            let res = resource::builtin("", "v1", plural).expect("served");
            let mut cache = Cache::new(&res);
            assert_eq!(cache.orphans.is_some(), plural == "pods");
            cache.insert(ObjectKey::new("a", "x"), held(None));
            cache.insert(ObjectKey::new("a", "y"), held(Some("owner")));
            cache.insert(ObjectKey::new("a", "z"), held(None));
            cache.insert(ObjectKey::new("b", "w"), held(None));
            // z gains a controller, x goes.
            cache.insert(ObjectKey::new("a", "z"), held(Some("owner")));
            cache.remove(&ObjectKey::new("a", "x"));
            cache.insert(ObjectKey::new("a", "v"), held(None));
            let found = cache.orphans_in("a");
            assert_eq!(found.len(), 1, "{plural}");
            assert!(found[0].controller().is_none());
            assert_eq!(cache.orphans_in("b").len(), 1);
            assert_eq!(cache.controlled.get("owner").map(BTreeSet::len), Some(2));
        }
    }
}
