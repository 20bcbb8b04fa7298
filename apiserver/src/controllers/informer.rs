//! A shared informer: a local copy of one resource's objects, kept up to
//! date from a registry watch, that tells subscribers which objects changed.
//!
//! Contract:
//! - [`Informer::start`] lists the resource, then watches from the list's
//!   revision; any watch error or end (a 410 included) relists and goes
//!   on, after a short pause. Objects are held as they are read (the
//!   resource's own version).
//! - [`Informer::synced`] completes once the first list is in the cache.
//! - Every change (and every object again after a relist) is announced to
//!   every [`Informer::subscribe`]r as a [`Notice`]. A subscriber that falls
//!   behind the bounded channel receives [`Notice::Resync`] and must treat
//!   every object as changed; writers and other subscribers never wait for
//!   it.
//! - Reads ([`Informer::get`], [`Informer::list`]) never block on the watch
//!   and hand out shared `Arc<Value>`s.

use std::collections::BTreeMap;
use std::sync::{Arc, RwLock};
use std::time::Duration;

use futures::StreamExt;
use serde_json::Value;
use tokio::sync::{broadcast, watch};

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

/// See the module documentation. Cheap to clone (shared state).
#[derive(Clone)]
pub struct Informer {
    res: Arc<ResourceInfo>,
    objects: Arc<RwLock<BTreeMap<ObjectKey, Arc<Value>>>>,
    notices: broadcast::Sender<Notice>,
    synced: watch::Receiver<bool>,
}

impl Informer {
    /// Starts listing and watching `res` (all namespaces) in a background
    /// task that runs until the runtime shuts down.
    pub fn start(registry: &Registry, res: Arc<ResourceInfo>) -> Informer {
        let (notices, _) = broadcast::channel(NOTICE_BUFFER);
        let (synced_tx, synced) = watch::channel(false);
        let informer = Informer {
            res,
            objects: Arc::default(),
            notices,
            synced,
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

    /// The cached object at `key`.
    pub fn get(&self, key: &ObjectKey) -> Option<Arc<Value>> {
        self.read().get(key).cloned()
    }

    /// Every cached object for which `keep` holds, in key order.
    pub fn list(&self, keep: impl Fn(&Value) -> bool) -> Vec<Arc<Value>> {
        self.read().values().filter(|o| keep(o)).cloned().collect()
    }

    /// Every cached object of `namespace`, in name order.
    pub fn list_namespace(&self, namespace: &str) -> Vec<Arc<Value>> {
        let from = ObjectKey::new(namespace, "");
        self.read()
            .range(from..)
            .take_while(|(k, _)| k.namespace == namespace)
            .map(|(_, v)| v.clone())
            .collect()
    }

    fn read(&self) -> std::sync::RwLockReadGuard<'_, BTreeMap<ObjectKey, Arc<Value>>> {
        // A poisoned lock only means a panicking writer; the map is intact.
        self.objects
            .read()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    fn write(&self) -> std::sync::RwLockWriteGuard<'_, BTreeMap<ObjectKey, Arc<Value>>> {
        self.objects
            .write()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    fn apply(&self, obj: Value) {
        let obj = Arc::new(obj);
        self.write().insert(ObjectKey::of(&obj), obj.clone());
        let _ = self.notices.send(Notice::Applied(obj));
    }

    fn delete(&self, obj: Value) {
        let obj = Arc::new(obj);
        self.write().remove(&ObjectKey::of(&obj));
        let _ = self.notices.send(Notice::Deleted(obj));
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
            .map(|o| (ObjectKey::of(&o), Arc::new(o)))
            .collect();
        let gone: Vec<Arc<Value>> = {
            let mut objects = self.write();
            let gone = objects
                .iter()
                .filter(|(k, _)| !fresh.contains_key(k))
                .map(|(_, v)| v.clone())
                .collect();
            *objects = fresh.clone();
            gone
        };
        for obj in gone {
            let _ = self.notices.send(Notice::Deleted(obj));
        }
        for obj in fresh.into_values() {
            let _ = self.notices.send(Notice::Applied(obj));
        }
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
                WatchItem::Bookmark { .. } => {}
                WatchItem::Error(e) => return Err(e),
            }
        }
        Ok(())
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
