//! WATCH: initial events, then changes from storage, filtered by the
//! selectors, with bookmarks and watch-list's `initial-events-end`.
//!
//! With selectors, a change is classified as upstream's cacher does: an
//! object that starts matching is ADDED, one that stops matching is
//! DELETED, one that matches before and after is MODIFIED.

use std::collections::VecDeque;
use std::sync::Arc;

use bytes::Bytes;
use futures::stream::BoxStream;
use futures::{StreamExt, stream};
use serde_json::Value;
use skein_storage::{Error as StoreError, EventKind, WatchMessage, WatchStream};

use super::cache::{Burst, CacheMessage, CacheWatch, CachedEvent};
use super::filter::Attrs;
use super::object::Header;
use super::{Filter, Registry, ResourceInfo, key, list::ListQuery, store_error};
use crate::status::{ApiError, Cause};

/// What a WATCH asked for.
#[derive(Clone, Debug, Default)]
pub struct WatchQuery {
    /// Selectors.
    pub filter: Filter,
    /// `resourceVersion` ("" / "0" / N).
    pub resource_version: Option<String>,
    /// `resourceVersionMatch`.
    pub resource_version_match: Option<String>,
    /// `sendInitialEvents` (watch-list).
    pub send_initial_events: Option<bool>,
    /// `allowWatchBookmarks`.
    pub allow_bookmarks: bool,
}

/// One item of a watch.
#[derive(Clone, Debug)]
pub enum WatchItem {
    /// ADDED.
    Added(Value),
    /// MODIFIED.
    Modified(Value),
    /// DELETED (the last state).
    Deleted(Value),
    /// BOOKMARK at a revision; `initial_events_end` marks the end of
    /// watch-list's initial events.
    Bookmark {
        /// The revision.
        revision: i64,
        /// Whether this is the `k8s.io/initial-events-end` bookmark.
        initial_events_end: bool,
    },
    /// ERROR (the watch ends after it).
    Error(ApiError),
}

/// One item of a watch as a response sends it: an item still to encode,
/// or its JSON line (`{"type":…,"object":…}` and a newline) already
/// encoded, shared with every other watcher of the same change.
#[derive(Clone, Debug)]
pub enum WatchLine {
    /// To encode.
    Item(WatchItem),
    /// Encoded as upstream encodes a JSON watch event.
    Encoded(Bytes),
}

fn too_old(requested: i64, compacted: i64) -> ApiError {
    ApiError::expired(format!(
        "too old resource version: {requested} ({compacted})"
    ))
}

impl Registry {
    /// Starts a watch of `res` in `ns` (`None` = all namespaces); objects
    /// come in `res`'s version.
    pub async fn watch(
        &self,
        res: &Arc<ResourceInfo>,
        ns: Option<&str>,
        q: WatchQuery,
    ) -> Result<BoxStream<'static, WatchItem>, ApiError> {
        if let Some(custom) = res.custom.clone() {
            let api_version = res.api_version;
            return Ok(self
                .watch_items(res, ns, q)
                .await?
                .then(move |item| {
                    let custom = custom.clone();
                    async move {
                        let present = |o: Value| custom.present_one(api_version, o);
                        let out = match item {
                            WatchItem::Added(o) => present(o).await.map(WatchItem::Added),
                            WatchItem::Modified(o) => present(o).await.map(WatchItem::Modified),
                            WatchItem::Deleted(o) => present(o).await.map(WatchItem::Deleted),
                            other => Ok(other),
                        };
                        out.unwrap_or_else(WatchItem::Error)
                    }
                })
                .boxed());
        }
        let Some((stored, c)) = super::converted(res)? else {
            return self.watch_items(res, ns, q).await;
        };
        let convert = c.from_storage;
        Ok(self
            .watch_items(&stored, ns, q)
            .await?
            .map(move |item| match item {
                WatchItem::Added(o) => WatchItem::Added(convert(o)),
                WatchItem::Modified(o) => WatchItem::Modified(convert(o)),
                WatchItem::Deleted(o) => WatchItem::Deleted(convert(o)),
                other => other,
            })
            .boxed())
    }

    /// As [`Registry::watch`], with changes already encoded as JSON lines
    /// where no per-watcher work is left (a resource served in its storage
    /// version, not a custom resource): each change is then decoded and
    /// encoded once for all its watchers.
    pub async fn watch_lines(
        &self,
        res: &Arc<ResourceInfo>,
        ns: Option<&str>,
        q: WatchQuery,
    ) -> Result<BoxStream<'static, WatchLine>, ApiError> {
        if res.custom.is_some() || super::converted(res)?.is_some() {
            return Ok(self.watch(res, ns, q).await?.map(WatchLine::Item).boxed());
        }
        self.watch_stored(res, ns, q, Some(res.api_version)).await
    }

    /// The stored resource's watch, as items.
    async fn watch_items(
        &self,
        res: &Arc<ResourceInfo>,
        ns: Option<&str>,
        q: WatchQuery,
    ) -> Result<BoxStream<'static, WatchItem>, ApiError> {
        Ok(self
            .watch_stored(res, ns, q, None)
            .await?
            .filter_map(|line| {
                futures::future::ready(match line {
                    WatchLine::Item(item) => Some(item),
                    // Not asked for (`encode` is `None`).
                    WatchLine::Encoded(_) => None,
                })
            })
            .boxed())
    }

    /// The stored resource's watch; changes encoded for `encode` (an API
    /// version) when given, else as items.
    async fn watch_stored(
        &self,
        res: &Arc<ResourceInfo>,
        ns: Option<&str>,
        q: WatchQuery,
        encode: Option<&'static str>,
    ) -> Result<BoxStream<'static, WatchLine>, ApiError> {
        let rv = q.resource_version.clone().unwrap_or_default();
        if let Some(send) = q.send_initial_events {
            let mut causes = Vec::new();
            if q.resource_version_match.as_deref() != Some("NotOlderThan") {
                causes.push(Cause::forbidden(
                    "resourceVersionMatch",
                    "sendInitialEvents requires setting resourceVersionMatch to NotOlderThan",
                ));
            }
            if send && !q.allow_bookmarks {
                causes.push(Cause::forbidden(
                    "allowWatchBookmarks",
                    "sendInitialEvents requires setting allowWatchBookmarks to true",
                ));
            }
            if !causes.is_empty() {
                return Err(ApiError::invalid("meta.k8s.io", "ListOptions", "", causes));
            }
        }
        let initial = match q.send_initial_events {
            Some(send) => send,
            None => rv.is_empty() || rv == "0",
        };
        let mut queue = VecDeque::new();
        let after = if initial {
            let list = ListQuery {
                filter: q.filter.clone(),
                ..ListQuery::default()
            };
            let page = self.list(res, ns, &list).await?;
            queue.extend(page.items.into_iter().map(WatchItem::Added));
            if q.send_initial_events == Some(true) {
                queue.push_back(WatchItem::Bookmark {
                    revision: page.revision,
                    initial_events_end: true,
                });
            }
            page.revision
        } else if rv.is_empty() || rv == "0" {
            self.store.current_revision().await.map_err(store_error)?
        } else {
            rv.parse::<i64>()
                .map_err(|_| ApiError::bad_request(format!("invalid resource version: {rv}")))?
        };
        let prefix = key::prefix(res, ns);
        let events = self.events(res, &prefix, after).await?;
        let state = State {
            res: res.clone(),
            filter: q.filter,
            bookmarks: q.allow_bookmarks,
            encode,
            queue,
            events,
            burst: None,
            done: false,
        };
        Ok(stream::unfold(state, |mut s| async move {
            let item = s.next().await?;
            Some((item, s))
        })
        .boxed())
    }
}

impl Registry {
    /// The changes under `prefix` (of `res`) after `after`: from the watch
    /// cache when it is on and its window holds `after` (410 when the
    /// window slid past it, as upstream), else from the store (410 when
    /// the store compacted that history).
    async fn events(
        &self,
        res: &ResourceInfo,
        prefix: &str,
        after: i64,
    ) -> Result<Source, ApiError> {
        let from_store = async || match self.store.watch(prefix, after).await {
            Ok(s) => Ok(s),
            Err(StoreError::Compacted { compacted, .. }) => Err(too_old(after, compacted)),
            Err(e) => Err(store_error(e)),
        };
        let Some(cacher) = &self.cache else {
            return from_store().await.map(Source::Store);
        };
        let cache = cacher.cache(&key::prefix(res, None));
        cache.wait_for(1).await;
        // A watch from the past is 410 when the store compacted that
        // history, even if the cache's window still holds it (one cheap
        // read of the store).
        if after < cache.revision() {
            match self.store.check_history(after).await {
                Ok(()) => {}
                Err(StoreError::Compacted { compacted, .. }) => {
                    return Err(too_old(after, compacted));
                }
                Err(e) => return Err(store_error(e)),
            }
        }
        match cache.watch(prefix, after) {
            CacheWatch::Stream(s) => Ok(Source::Cache(s)),
            CacheWatch::TooOld { requested, oldest } => Err(too_old(requested, oldest)),
            CacheWatch::CatchUp { listed_at } => {
                let store = from_store().await?;
                // The hand-over waits for an event or progress past the
                // cache's list; ask for progress so an idle prefix hands
                // over at once where the store can answer.
                self.store.request_progress();
                Ok(Source::CatchUp {
                    store,
                    cache,
                    prefix: prefix.to_string(),
                    listed_at,
                })
            }
            CacheWatch::Delegate => from_store().await.map(Source::Store),
        }
    }
}

/// Where a watch's changes come from.
enum Source {
    /// The store's own watch.
    Store(WatchStream),
    /// The watch cache (changes shared with its other watchers).
    Cache(BoxStream<'static, CacheMessage>),
    /// A watch from before the cache's list: the store's watch up to the
    /// revision the cache listed at, then the cache's. The store watch is
    /// dropped at the hand-over, so a late watcher costs the store a watch
    /// only while it catches up.
    CatchUp {
        store: WatchStream,
        cache: Arc<super::cache::WatchCache>,
        prefix: String,
        listed_at: i64,
    },
}

impl Source {
    async fn next(&mut self) -> Option<Result<CacheMessage, StoreError>> {
        loop {
            let (cache, prefix, listed_at) = match self {
                Source::Store(s) => {
                    return Some(s.next().await?.map(|m| match m {
                        WatchMessage::Event(e) => {
                            CacheMessage::Event(Arc::new(CachedEvent::new(e)))
                        }
                        WatchMessage::Progress(r) => CacheMessage::Progress(r),
                    }));
                }
                Source::Cache(s) => return s.next().await.map(Ok),
                Source::CatchUp {
                    store,
                    cache,
                    prefix,
                    listed_at,
                } => match store.next().await? {
                    Err(e) => return Some(Err(e)),
                    Ok(WatchMessage::Event(e)) if e.revision() <= *listed_at => {
                        return Some(Ok(CacheMessage::Event(Arc::new(CachedEvent::new(e)))));
                    }
                    Ok(WatchMessage::Progress(r)) if r < *listed_at => {
                        return Some(Ok(CacheMessage::Progress(r)));
                    }
                    // Every change up to the cache's list has been sent:
                    // the cache has the rest (this message included).
                    Ok(_) => (cache.clone(), prefix.clone(), *listed_at),
                },
            };
            *self = match cache.watch(&prefix, listed_at) {
                CacheWatch::Stream(s) => Source::Cache(s),
                CacheWatch::TooOld { requested, oldest } => {
                    return Some(Err(StoreError::Compacted {
                        requested,
                        compacted: oldest,
                    }));
                }
                // The cache relisted meanwhile: end the watch, as the
                // cache ends its own watchers' then; the client re-watches.
                CacheWatch::CatchUp { .. } | CacheWatch::Delegate => return None,
            };
        }
    }
}

struct State {
    res: std::sync::Arc<ResourceInfo>,
    filter: Filter,
    bookmarks: bool,
    /// Encode changes for this API version (see [`WatchLine::Encoded`]).
    encode: Option<&'static str>,
    queue: VecDeque<WatchItem>,
    events: Source,
    /// The burst being read, and the index to go on from.
    burst: Option<(Burst, usize)>,
    done: bool,
}

impl State {
    async fn next(&mut self) -> Option<WatchLine> {
        loop {
            if let Some(item) = self.queue.pop_front() {
                return Some(WatchLine::Item(item));
            }
            if let Some((burst, mut at)) = self.burst.take() {
                while let Some((i, event)) = burst.next_from(at) {
                    at = i + 1;
                    if let Some(line) = self.classify(event) {
                        self.burst = Some((burst, at));
                        return Some(line);
                    }
                }
            }
            if self.done {
                return None;
            }
            let item = match self.events.next().await {
                None => return None,
                Some(Err(StoreError::Compacted {
                    requested,
                    compacted,
                })) => {
                    self.done = true;
                    WatchItem::Error(too_old(requested, compacted))
                }
                Some(Err(e)) => {
                    self.done = true;
                    WatchItem::Error(store_error(e))
                }
                Some(Ok(CacheMessage::Progress(revision))) => {
                    if !self.bookmarks {
                        continue;
                    }
                    WatchItem::Bookmark {
                        revision,
                        initial_events_end: false,
                    }
                }
                Some(Ok(CacheMessage::Event(event))) => match self.classify(&event) {
                    Some(line) => return Some(line),
                    None => continue,
                },
                Some(Ok(CacheMessage::Events(burst))) => {
                    self.burst = Some((burst, 0));
                    continue;
                }
            };
            return Some(WatchLine::Item(item));
        }
    }

    /// What this watcher sends for `change`, if anything. Selector
    /// attributes and the encoded line come from the change's shared memo:
    /// computed once for every watcher of the change.
    fn classify(&self, change: &CachedEvent) -> Option<WatchLine> {
        let event = &change.event;
        let res = &self.res;
        let attrs_of =
            |kv: &skein_storage::KeyValue| Registry::decode(kv).ok().map(|o| Attrs::of(res, &o));
        let prev_matches = match &event.prev {
            None => false,
            Some(prev) => self.passes(prev, || change.previous_attrs(|| attrs_of(prev))),
        };
        let (event_type, source) = match event.kind {
            EventKind::Put => {
                let matches = self.passes(&event.kv, || change.attrs(|| attrs_of(&event.kv)));
                let event_type = match (prev_matches, matches) {
                    (false, true) => "ADDED",
                    (true, true) => "MODIFIED",
                    (true, false) => "DELETED",
                    (false, false) => return None,
                };
                (event_type, &event.kv)
            }
            EventKind::Delete if prev_matches => ("DELETED", event.prev.as_ref()?),
            EventKind::Delete => return None,
        };
        let object = || {
            let mut object = Registry::decode(source).ok()?;
            if event.kind == EventKind::Delete {
                // The deleted object carries the deletion's revision.
                super::object::set_meta(
                    &mut object,
                    "resourceVersion",
                    Some(Value::String(event.kv.mod_revision.to_string())),
                );
            }
            Some(object)
        };
        match self.encode {
            Some(api_version) => change
                .line(event_type, api_version, || {
                    object().map(|o| crate::wire::event(event_type, &o))
                })
                .map(WatchLine::Encoded),
            None => {
                let object = object()?;
                Some(WatchLine::Item(match event_type {
                    "ADDED" => WatchItem::Added(object),
                    "MODIFIED" => WatchItem::Modified(object),
                    _ => WatchItem::Deleted(object),
                }))
            }
        }
    }

    /// Whether the object stored as `kv` passes the filter, from its
    /// shared attributes (`attrs`) when they answer, else decoded. An
    /// object that cannot be decoded passes no selector.
    fn passes<'a>(
        &self,
        kv: &skein_storage::KeyValue,
        attrs: impl FnOnce() -> Option<&'a Attrs>,
    ) -> bool {
        if self.filter.is_empty() {
            return true;
        }
        if let Some(pass) = attrs().and_then(|a| self.filter.matches_attrs(a)) {
            return pass;
        }
        Registry::decode(kv).is_ok_and(|o| self.filter.matches(&self.res, &o))
    }
}

/// A change to any object, for controllers that watch everything.
#[derive(Clone, Debug)]
pub struct Change {
    /// The object's resource.
    pub res: std::sync::Arc<ResourceInfo>,
    /// The object after the change; `None` when it was deleted.
    pub object: Option<Header>,
    /// The object before the change, if it existed.
    pub previous: Option<Header>,
}

/// The resource that owns a storage key.
fn resource_of_key(
    resources: &super::resource::Resources,
    key: &str,
) -> Option<std::sync::Arc<ResourceInfo>> {
    let rest = key.strip_prefix(super::key::ALL)?;
    let mut parts = rest.splitn(3, '/');
    let group = parts.next()?;
    let plural = parts.next()?;
    let group = if group == "core" { "" } else { group };
    resources
        .stored()
        .into_iter()
        .find(|r| r.group == group && r.plural == plural)
}

impl Registry {
    /// Every stored object of `res`, in every namespace, read at one
    /// revision (startup scans, e.g. seeding the Service allocator).
    pub async fn all_of(&self, res: &ResourceInfo) -> Result<Vec<Value>, ApiError> {
        let page = self
            .store
            .list(
                &key::prefix(res, None),
                skein_storage::ListOptions::default(),
            )
            .await
            .map_err(store_error)?;
        page.items.iter().map(Registry::decode).collect()
    }

    /// The header of every object of every stored resource, and every
    /// change after it (for controllers that watch everything, such as
    /// the garbage collector). Errors end the stream (`Err` items); the
    /// caller starts again.
    ///
    /// With the watch cache on, each resource is read from its cache and
    /// watched through it (each at its cache's revision): the store holds
    /// no watch for this beyond the caches' own. Without it, one store
    /// list per resource at one revision and one store watch of every key.
    pub async fn observe_all(
        &self,
    ) -> Result<(Vec<(Arc<ResourceInfo>, Header)>, Changes), ApiError> {
        match &self.cache {
            Some(cacher) => observe_cached(self.resources(), cacher).await,
            None => {
                let (objects, revision) = self.list_all().await?;
                Ok((objects, self.watch_all(revision).await?))
            }
        }
    }

    async fn list_all(&self) -> Result<(Vec<(Arc<ResourceInfo>, Header)>, i64), ApiError> {
        let revision = self.store.current_revision().await.map_err(store_error)?;
        let mut out = Vec::new();
        for res in self.resources().stored() {
            let opts = skein_storage::ListOptions {
                at_revision: revision,
                ..Default::default()
            };
            let page = self
                .store
                .list(&key::prefix(&res, None), opts)
                .await
                .map_err(store_error)?;
            for kv in &page.items {
                out.push((res.clone(), header_of(kv)?));
            }
        }
        Ok((out, revision))
    }

    async fn watch_all(&self, after: i64) -> Result<Changes, ApiError> {
        let events = match self.store.watch(key::ALL, after).await {
            Ok(s) => s,
            Err(StoreError::Compacted { compacted, .. }) => return Err(too_old(after, compacted)),
            Err(e) => return Err(store_error(e)),
        };
        let resources = self.resources().clone();
        Ok(events
            .filter_map(move |m| {
                let resources = resources.clone();
                async move {
                    match m {
                        Err(e) => Some(Err(store_error(e))),
                        Ok(WatchMessage::Progress(_)) => None,
                        Ok(WatchMessage::Event(event)) => {
                            let res = resource_of_key(&resources, &event.kv.key)?;
                            Some(Ok(change_of(res, &event)))
                        }
                    }
                }
            })
            .boxed())
    }
}

/// The changes of [`Registry::observe_all`].
pub type Changes = BoxStream<'static, Result<Change, ApiError>>;

fn header_of(kv: &skein_storage::KeyValue) -> Result<Header, ApiError> {
    Header::decode(&kv.value)
        .ok_or_else(|| ApiError::internal(format!("stored object {} is corrupt", kv.key)))
}

fn change_of(res: Arc<ResourceInfo>, event: &skein_storage::WatchEvent) -> Change {
    let previous = event.prev.as_ref().and_then(|kv| Header::decode(&kv.value));
    let object = match event.kind {
        EventKind::Put => Header::decode(&event.kv.value),
        EventKind::Delete => None,
    };
    Change {
        res,
        object,
        previous,
    }
}

/// [`Registry::observe_all`] through the watch caches.
async fn observe_cached(
    resources: &super::resource::Resources,
    cacher: &super::cache::Cacher,
) -> Result<(Vec<(Arc<ResourceInfo>, Header)>, Changes), ApiError> {
    let mut objects = Vec::new();
    let mut streams = Vec::new();
    for res in resources.stored() {
        let prefix = key::prefix(&res, None);
        let cache = cacher.cache(&prefix);
        let snapshot = match cache.wait_for(1).await {
            true => cache.snapshot(&prefix, None),
            false => None,
        };
        let Some(snapshot) = snapshot else {
            return Err(ApiError::unavailable(format!(
                "the watch cache of {} has not listed yet",
                res.qualified()
            )));
        };
        for entry in &snapshot.items {
            objects.push((res.clone(), header_of(&entry.kv)?));
        }
        let CacheWatch::Stream(events) = cache.watch(&prefix, snapshot.revision) else {
            return Err(ApiError::unavailable(format!(
                "the watch cache of {} moved past its own snapshot",
                res.qualified()
            )));
        };
        let name = res.qualified();
        let ended = stream::once(async move {
            Err(ApiError::unavailable(format!(
                "the watch cache of {name} closed the watch"
            )))
        });
        streams.push(
            events
                .flat_map(move |m| {
                    let changes: Vec<_> = match m {
                        CacheMessage::Event(e) => vec![Ok(change_of(res.clone(), &e.event))],
                        CacheMessage::Events(burst) => burst
                            .iter()
                            .map(|e| Ok(change_of(res.clone(), &e.event)))
                            .collect(),
                        CacheMessage::Progress(_) => Vec::new(),
                    };
                    stream::iter(changes)
                })
                .chain(ended)
                .boxed(),
        );
    }
    Ok((objects, stream::select_all(streams).boxed()))
}
