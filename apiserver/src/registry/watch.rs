//! WATCH: initial events, then changes from storage, filtered by the
//! selectors, with bookmarks and watch-list's `initial-events-end`.
//!
//! With selectors, a change is classified as upstream's cacher does: an
//! object that starts matching is ADDED, one that stops matching is
//! DELETED, one that matches before and after is MODIFIED.

use std::collections::VecDeque;
use std::sync::Arc;

use futures::stream::BoxStream;
use futures::{StreamExt, stream};
use serde_json::Value;
use skein_storage::{Error as StoreError, EventKind, WatchMessage, WatchStream};

use super::cache::CacheWatch;
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
                .watch_stored(res, ns, q)
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
            return self.watch_stored(res, ns, q).await;
        };
        let convert = c.from_storage;
        Ok(self
            .watch_stored(&stored, ns, q)
            .await?
            .map(move |item| match item {
                WatchItem::Added(o) => WatchItem::Added(convert(o)),
                WatchItem::Modified(o) => WatchItem::Modified(convert(o)),
                WatchItem::Deleted(o) => WatchItem::Deleted(convert(o)),
                other => other,
            })
            .boxed())
    }

    async fn watch_stored(
        &self,
        res: &Arc<ResourceInfo>,
        ns: Option<&str>,
        q: WatchQuery,
    ) -> Result<BoxStream<'static, WatchItem>, ApiError> {
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
            queue,
            events,
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
    ) -> Result<WatchStream, ApiError> {
        let from_store = async || match self.store.watch(prefix, after).await {
            Ok(s) => Ok(s),
            Err(StoreError::Compacted { compacted, .. }) => Err(too_old(after, compacted)),
            Err(e) => Err(store_error(e)),
        };
        let Some(cacher) = &self.cache else {
            return from_store().await;
        };
        let cache = cacher.cache(&key::prefix(res, None));
        cache.wait_for(1).await;
        // A watch from the past is 410 when the store compacted that
        // history, even if the cache's window still holds it: the store
        // is asked (a watch start is cheap and fails at once), and its
        // stream serves the watch if the cache cannot.
        let probe = if after < cache.revision() {
            Some(from_store().await?)
        } else {
            None
        };
        match cache.watch(prefix, after) {
            CacheWatch::Stream(s) => Ok(s),
            CacheWatch::TooOld { requested, oldest } => Err(too_old(requested, oldest)),
            CacheWatch::Delegate => match probe {
                Some(s) => Ok(s),
                None => from_store().await,
            },
        }
    }
}

struct State {
    res: std::sync::Arc<ResourceInfo>,
    filter: Filter,
    bookmarks: bool,
    queue: VecDeque<WatchItem>,
    events: WatchStream,
    done: bool,
}

impl State {
    async fn next(&mut self) -> Option<WatchItem> {
        loop {
            if let Some(item) = self.queue.pop_front() {
                return Some(item);
            }
            if self.done {
                return None;
            }
            match self.events.next().await {
                None => return None,
                Some(Err(StoreError::Compacted {
                    requested,
                    compacted,
                })) => {
                    self.done = true;
                    return Some(WatchItem::Error(too_old(requested, compacted)));
                }
                Some(Err(e)) => {
                    self.done = true;
                    return Some(WatchItem::Error(store_error(e)));
                }
                Some(Ok(WatchMessage::Progress(revision))) => {
                    if self.bookmarks {
                        return Some(WatchItem::Bookmark {
                            revision,
                            initial_events_end: false,
                        });
                    }
                }
                Some(Ok(WatchMessage::Event(event))) => {
                    if let Some(item) = self.classify(event) {
                        return Some(item);
                    }
                }
            }
        }
    }

    fn classify(&self, event: skein_storage::WatchEvent) -> Option<WatchItem> {
        let decode = |kv: &skein_storage::KeyValue| Registry::decode(kv).ok();
        let prev = event.prev.as_ref().and_then(decode);
        let prev_matches = prev
            .as_ref()
            .is_some_and(|p| self.filter.matches(&self.res, p));
        match event.kind {
            EventKind::Put => {
                let obj = decode(&event.kv)?;
                let matches = self.filter.matches(&self.res, &obj);
                match (prev_matches, matches) {
                    (false, true) => Some(WatchItem::Added(obj)),
                    (true, true) => Some(WatchItem::Modified(obj)),
                    (true, false) => Some(WatchItem::Deleted(obj)),
                    (false, false) => None,
                }
            }
            EventKind::Delete => {
                let mut last = prev?;
                if !prev_matches {
                    return None;
                }
                // The deleted object carries the deletion's revision.
                super::object::set_meta(
                    &mut last,
                    "resourceVersion",
                    Some(Value::String(event.kv.mod_revision.to_string())),
                );
                Some(WatchItem::Deleted(last))
            }
        }
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
fn resource_of_key(key: &str) -> Option<std::sync::Arc<ResourceInfo>> {
    let rest = key.strip_prefix(super::key::ALL)?;
    let mut parts = rest.splitn(3, '/');
    let group = parts.next()?;
    let plural = parts.next()?;
    let group = if group == "core" { "" } else { group };
    super::resource::stored()
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

    /// The header of every object of every resource, read at one revision.
    pub async fn list_all(
        &self,
    ) -> Result<(Vec<(std::sync::Arc<ResourceInfo>, Header)>, i64), ApiError> {
        let revision = self.store.current_revision().await.map_err(store_error)?;
        let mut out = Vec::new();
        for res in super::resource::stored() {
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
                let header = Header::decode(&kv.value).ok_or_else(|| {
                    ApiError::internal(format!("stored object {} is corrupt", kv.key))
                })?;
                out.push((res.clone(), header));
            }
        }
        Ok((out, revision))
    }

    /// Every change to any object after `after`. Errors end the stream
    /// (`Err` items); the caller relists.
    pub async fn watch_all(
        &self,
        after: i64,
    ) -> Result<BoxStream<'static, Result<Change, ApiError>>, ApiError> {
        let events = match self.store.watch(key::ALL, after).await {
            Ok(s) => s,
            Err(StoreError::Compacted { compacted, .. }) => return Err(too_old(after, compacted)),
            Err(e) => return Err(store_error(e)),
        };
        Ok(events
            .filter_map(|m| async move {
                match m {
                    Err(e) => Some(Err(store_error(e))),
                    Ok(WatchMessage::Progress(_)) => None,
                    Ok(WatchMessage::Event(event)) => {
                        let res = resource_of_key(&event.kv.key)?;
                        let previous = event.prev.as_ref().and_then(|kv| Header::decode(&kv.value));
                        let object = match event.kind {
                            EventKind::Put => Header::decode(&event.kv.value),
                            EventKind::Delete => None,
                        };
                        Some(Ok(Change {
                            res,
                            object,
                            previous,
                        }))
                    }
                }
            })
            .boxed())
    }
}
