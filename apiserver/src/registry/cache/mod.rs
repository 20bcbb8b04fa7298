//! The watch cache: lists and watches of a resource served from memory, with
//! one store watch per resource prefix (kube-apiserver's `cacher`).
//!
//! # Contract
//! - [`Cacher`] holds one [`WatchCache`] per resource prefix
//!   (`/registry/<group>/<resource>/`), started on first use. Namespaced
//!   reads use the resource's cache and a narrower key prefix.
//! - A cache's [`reflector`] lists the prefix, then watches the
//!   store from the list's revision: the store holds ONE watch per cached
//!   resource, whatever the number of clients. When that watch fails it
//!   re-watches from the cache's revision; when the store says the history
//!   is compacted it relists, and every watcher of the cache is closed (its
//!   client re-watches and gets a continuous stream or a 410, never a gap).
//! - The [`index`] maps each live key to an [`index::Entry`]: its
//!   stored pair (`Arc`, bytes shared as `bytes::Bytes`) and, once a list
//!   asked for them, its JSON list-item encoding, which later lists splice
//!   (`Registry::list_encoded`), and its selector attributes (labels and
//!   selectable fields, `registry::filter::Attrs`), which later selector
//!   lists read instead of decoding the object. Both are computed outside
//!   the cache's lock.
//! - The [`ring`] holds the last [`CacheConfig::capacity`] events, each an
//!   `Arc<`[`CachedEvent`]`>` (revision, previous pair, new pair) shared by
//!   every watcher it concerns, with a memo of its selector attributes and
//!   of its encoded response lines: a change is decoded and encoded once,
//!   whatever the number of watchers (`Registry::watch_lines`).
//! - [`WatchCache::revision`] is the revision the cache reflects: every
//!   change up to it is in the index. It advances on events and on the
//!   store's progress messages; [`WatchCache::wait_fresh`] asks the store
//!   for progress ([`skein_storage::Store::request_progress`]) so that an
//!   idle prefix catches up with the store's current revision at once
//!   (consistent reads from cache). A store that cannot answer such
//!   requests in order with its events (etcd before 3.4.31/3.5.13) is never
//!   asked: consistent reads then go to the store, as upstream's.
//! - The store must deliver events in revision order and never report
//!   progress past an event it has not delivered. An event at or below the
//!   cache's revision breaks that promise: the cache warns, closes its
//!   watchers and relists rather than keep a wrong index.
//! - A watcher never blocks the reflector: see [`watchers`].
//! - A watch from the past that the cache's window holds is still 410
//!   when the store has compacted that history
//!   ([`skein_storage::Store::check_history`], asked by the registry), so
//!   both stores and the cache answer alike.
//! - Each cache records upstream's `apiserver_watch_cache_*` series for its
//!   group and resource (parsed from the prefix) in [`crate::metrics`].
//! - No lock is held across an `.await`; every lock is a short, synchronous
//!   critical section (the state mutex).
//!
//! What reads the cache serves, and which go to the store, is the
//! registry's decision (`registry/list.rs`, `registry/watch.rs`).

pub mod event;
pub mod index;
pub mod reflector;
pub mod ring;
pub mod watchers;

#[cfg(test)]
mod tests;

use std::collections::HashMap;
use std::sync::{Arc, Mutex, MutexGuard, RwLock, RwLockReadGuard, RwLockWriteGuard};
use std::time::Duration;

use futures::StreamExt;
use futures::stream::BoxStream;
use skein_storage::{Revision, Store};
use tokio::sync::watch;

pub use event::CachedEvent;
pub use watchers::{Burst, CacheMessage};

use index::Index;
use ring::{Miss, Ring};
use watchers::Watchers;

/// How long a read waits for the cache to reach a revision when the store
/// cannot be asked for progress (etcd before 3.4.31/3.5.13): long enough for
/// events already sent, short enough that a revision of another resource
/// costs little before the store is read.
const UNASSISTED_WAIT: Duration = Duration::from_millis(100);

/// Tunables of the watch caches.
#[derive(Clone, Debug)]
pub struct CacheConfig {
    /// Events each cache keeps (its watch window).
    pub capacity: usize,
    /// Messages a watcher may have unread before it is closed.
    pub watcher_buffer: usize,
    /// How long a read waits for the cache to catch up before it is served
    /// by the store instead (upstream waits 3 s).
    pub fresh_timeout: Duration,
    /// Progress messages (bookmarks) are forwarded to watchers at most this
    /// often.
    pub progress_every: Duration,
}

impl Default for CacheConfig {
    fn default() -> Self {
        CacheConfig {
            capacity: ring::DEFAULT_CAPACITY,
            watcher_buffer: 1024,
            fresh_timeout: Duration::from_secs(3),
            progress_every: Duration::from_secs(4),
        }
    }
}

/// The watch caches of one store, one per resource prefix.
pub struct Cacher {
    store: Arc<dyn Store>,
    config: CacheConfig,
    /// The server instance's metrics, which every cache records into.
    metrics: Arc<crate::metrics::Metrics>,
    caches: Mutex<HashMap<String, Arc<WatchCache>>>,
}

impl std::fmt::Debug for Cacher {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Cacher")
            .field("config", &self.config)
            .finish_non_exhaustive()
    }
}

impl Cacher {
    /// Caches in front of `store`, recording into metrics of their own.
    pub fn new(store: Arc<dyn Store>, config: CacheConfig) -> Arc<Cacher> {
        Cacher::recording(store, config, Arc::new(crate::metrics::Metrics::new()))
    }

    /// Caches in front of `store`, recording into `metrics` (the server
    /// instance's).
    pub fn recording(
        store: Arc<dyn Store>,
        config: CacheConfig,
        metrics: Arc<crate::metrics::Metrics>,
    ) -> Arc<Cacher> {
        Arc::new(Cacher {
            store,
            config,
            metrics,
            caches: Mutex::new(HashMap::new()),
        })
    }

    /// The cache of `prefix` (a resource's key prefix), starting its
    /// reflector on first use. Must be called within a Tokio runtime.
    pub fn cache(&self, prefix: &str) -> Arc<WatchCache> {
        let mut caches = lock(&self.caches);
        if let Some(c) = caches.get(prefix) {
            return c.clone();
        }
        let cache = Arc::new(WatchCache::new(
            prefix,
            self.store.clone(),
            self.config.clone(),
            &self.metrics,
        ));
        reflector::spawn(&cache);
        caches.insert(prefix.to_string(), cache.clone());
        cache
    }

    /// Every cache started so far.
    pub fn caches(&self) -> Vec<Arc<WatchCache>> {
        lock(&self.caches).values().cloned().collect()
    }

    /// The store behind the caches.
    pub fn store(&self) -> &Arc<dyn Store> {
        &self.store
    }
}

/// The group (empty for the core group) and resource of a cache prefix
/// `/registry/<group>/<resource>/`; empty strings for other prefixes.
fn group_resource(prefix: &str) -> (&str, &str) {
    let mut parts = prefix
        .strip_prefix("/registry/")
        .unwrap_or_default()
        .split('/');
    let group = parts.next().unwrap_or_default();
    let resource = parts.next().unwrap_or_default();
    (if group == "core" { "" } else { group }, resource)
}

/// Locks `m`, recovering from poisoning (the state stays consistent: every
/// critical section is a handful of infallible map and queue operations).
fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

/// A cache's state for reading: lists and gets share it.
fn read<T>(m: &RwLock<T>) -> RwLockReadGuard<'_, T> {
    m.read().unwrap_or_else(|p| p.into_inner())
}

/// A cache's state for changing (the reflector, a new watcher). Waiting
/// writers go before new readers, so lists never starve the reflector.
fn write<T>(m: &RwLock<T>) -> RwLockWriteGuard<'_, T> {
    m.write().unwrap_or_else(|p| p.into_inner())
}

/// The mutable state of one cache.
#[derive(Debug)]
struct State {
    index: Index,
    ring: Ring,
    /// The revision the index reflects (0: never listed).
    revision: Revision,
    watchers: Watchers,
    /// Events applied (in the index and the ring) but not yet offered to
    /// the watchers: the reflector offers each burst from the store as one
    /// delivery, before it waits for more.
    pending: Vec<Arc<CachedEvent>>,
    /// When pending events were last offered (see `reflector::gather`).
    last_offer: Option<std::time::Instant>,
}

/// A list read from the cache.
#[derive(Clone, Debug)]
pub struct Snapshot {
    /// Entries under the asked prefix, in key order.
    pub items: Vec<Arc<index::Entry>>,
    /// The revision they reflect.
    pub revision: Revision,
    /// Whether a key under the prefix follows the last item, skipped or
    /// beyond `max` (false with no items).
    pub more: bool,
}

/// How a watch from the cache starts.
pub enum CacheWatch {
    /// Served by the cache: the ring's events after the revision, then live
    /// ones. The stream ends (without error) when the watcher falls behind
    /// its buffer or the cache relists.
    Stream(BoxStream<'static, CacheMessage>),
    /// The window no longer holds the revision: upstream's 410.
    TooOld {
        /// The revision asked for.
        requested: Revision,
        /// The oldest revision the window starts after.
        oldest: Revision,
    },
    /// The revision predates the cache's list: the store holds the events
    /// up to `listed_at`, the cache those after it (see
    /// `Registry::events`, which reads the first from the store and then
    /// hands over to the cache).
    CatchUp {
        /// The revision the cache listed at.
        listed_at: Revision,
    },
    /// The cache has not listed yet: ask the store.
    Delegate,
}

/// The cache of one resource prefix.
pub struct WatchCache {
    prefix: String,
    store: Arc<dyn Store>,
    config: CacheConfig,
    state: RwLock<State>,
    revision: watch::Sender<Revision>,
    metrics: crate::metrics::WatchCacheMetrics,
}

impl std::fmt::Debug for WatchCache {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("WatchCache")
            .field("prefix", &self.prefix)
            .field("revision", &self.revision())
            .finish_non_exhaustive()
    }
}

impl WatchCache {
    fn new(
        prefix: &str,
        store: Arc<dyn Store>,
        config: CacheConfig,
        metrics: &crate::metrics::Metrics,
    ) -> WatchCache {
        let (group, resource) = group_resource(prefix);
        let metrics = metrics.watch_cache(group, resource);
        metrics
            .capacity
            .set(i64::try_from(config.capacity).unwrap_or(i64::MAX));
        WatchCache {
            metrics,
            prefix: prefix.to_string(),
            store,
            state: RwLock::new(State {
                index: Index::default(),
                ring: Ring::new(0, config.capacity),
                revision: 0,
                watchers: Watchers::new(config.progress_every),
                pending: Vec::new(),
                last_offer: None,
            }),
            config,
            revision: watch::Sender::new(0),
        }
    }

    /// The cached prefix.
    pub fn prefix(&self) -> &str {
        &self.prefix
    }

    /// The revision the cache reflects; 0 until its first list.
    pub fn revision(&self) -> Revision {
        *self.revision.borrow()
    }

    /// Waits until the cache reflects `revision` (or a later one), at most
    /// `timeout`. Returns whether it does.
    pub async fn wait_until(&self, revision: Revision, timeout: Duration) -> bool {
        let mut rx = self.revision.subscribe();
        matches!(
            tokio::time::timeout(timeout, rx.wait_for(|r| *r >= revision.max(1))).await,
            Ok(Ok(_))
        )
    }

    /// Waits until the cache reflects the store's current revision (a
    /// consistent read), asking the store for progress while it waits, at
    /// most [`CacheConfig::fresh_timeout`]. Returns whether it does; on
    /// `false` the caller reads the store.
    ///
    /// Errors: the store's, reading its current revision.
    pub async fn wait_fresh(&self) -> skein_storage::Result<bool> {
        let current = self.store.current_revision().await?;
        if self.revision() < current && !self.store.request_progress() {
            // No ordered progress to wait for: an idle prefix would never
            // catch up. Read the store, as upstream does on such an etcd.
            return Ok(false);
        }
        self.wait_for(current).await;
        Ok(self.revision() >= current)
    }

    /// Waits until the cache reflects `revision`, asking the store for
    /// progress, at most [`CacheConfig::fresh_timeout`]. Returns whether it
    /// does.
    pub async fn wait_for(&self, revision: Revision) -> bool {
        let started = tokio::time::Instant::now();
        let fresh = self.wait_for_inner(revision).await;
        self.metrics
            .read_wait
            .observe(started.elapsed().as_secs_f64());
        fresh
    }

    async fn wait_for_inner(&self, revision: Revision) -> bool {
        let started = tokio::time::Instant::now();
        let deadline = started + self.config.fresh_timeout;
        let mut step = Duration::from_millis(5);
        loop {
            if self.revision() >= revision.max(1) {
                return true;
            }
            let now = tokio::time::Instant::now();
            if now >= deadline {
                return false;
            }
            let deadline = if self.store.request_progress() || self.revision() == 0 {
                // (Before its first list the cache waits for that list.)
                deadline
            } else {
                // Only events can move the cache: wait briefly for those
                // already on their way, then let the caller read the store.
                deadline.min(started + UNASSISTED_WAIT)
            };
            if now >= deadline {
                return false;
            }
            if self.wait_until(revision, step.min(deadline - now)).await {
                return true;
            }
            step = (step * 2).min(Duration::from_millis(200));
        }
    }

    /// The pairs under `prefix` (which must start with the cache's prefix)
    /// after `start_after`, at the cache's revision; `None` before the
    /// first list.
    pub fn snapshot(&self, prefix: &str, start_after: Option<&str>) -> Option<Snapshot> {
        self.snapshot_where(prefix, start_after, |_| false, usize::MAX)
    }

    /// [`WatchCache::snapshot`] without the entries `skip` rejects, judged
    /// under the cache's read lock (so a selective list copies pointers to
    /// what it keeps only), and at most the first `max` of the others (a
    /// page copies pointers to its own items, not the collection's).
    /// `skip` must be cheap and must not block: the reflector waits while
    /// it runs.
    pub fn snapshot_where(
        &self,
        prefix: &str,
        start_after: Option<&str>,
        skip: impl Fn(&index::Entry) -> bool,
        max: usize,
    ) -> Option<Snapshot> {
        let state = read(&self.state);
        (state.revision > 0).then(|| {
            let items = state.index.range_where(prefix, start_after, skip, max);
            let more = match items.last() {
                Some(last) => state.index.follows(prefix, &last.kv.key),
                None => false,
            };
            Snapshot {
                items,
                revision: state.revision,
                more,
            }
        })
    }

    /// The pair at `key` and the cache's revision; `None` before the first
    /// list.
    pub fn get(&self, key: &str) -> Option<(Option<Arc<index::Entry>>, Revision)> {
        let state = read(&self.state);
        (state.revision > 0).then(|| (state.index.get(key), state.revision))
    }

    /// The oldest revision a watch from the cache may start after (the
    /// start of its window).
    pub fn oldest(&self) -> Revision {
        read(&self.state).ring.start()
    }

    /// How many objects and events the cache holds, and its watchers.
    pub fn sizes(&self) -> (usize, usize, usize) {
        let state = read(&self.state);
        (state.index.len(), state.ring.len(), state.watchers.len())
    }

    /// Starts a watch of `prefix` (the cache's prefix or a narrower one)
    /// for changes after `after`. See [`CacheWatch`].
    pub fn watch(&self, prefix: &str, after: Revision) -> CacheWatch {
        let mut state = write(&self.state);
        if state.revision == 0 {
            return CacheWatch::Delegate;
        }
        let backlog = match state.ring.since(after, prefix) {
            Ok(events) => events,
            Err(Miss::Evicted { requested, oldest }) => {
                return CacheWatch::TooOld { requested, oldest };
            }
            Err(Miss::BeforeList) => {
                return CacheWatch::CatchUp {
                    listed_at: state.ring.listed_at(),
                };
            }
        };
        // Registered under the same lock the backlog was read under: the
        // watcher sees each event after `after` exactly once.
        let from = backlog.last().map_or(after, |e| e.revision()).max(after);
        let rx = state.watchers.add(prefix, from, self.config.watcher_buffer);
        drop(state);
        // A watcher of the cache's whole prefix needs no key check.
        let own = (prefix != self.prefix.as_str()).then_some(prefix);
        let live = watchers::Live::new(rx, own, from);
        CacheWatch::Stream(
            futures::stream::iter(backlog.into_iter().map(CacheMessage::Event))
                .chain(live)
                .boxed(),
        )
    }
}
