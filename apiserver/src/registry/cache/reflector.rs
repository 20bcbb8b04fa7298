//! The reflector: the one task per cache that keeps it in step with the
//! store.
//!
//! Loop: list the prefix (at the store's current revision), then watch from
//! the list's revision, applying each event to the index and the ring and
//! offering it to the watchers, and each progress message to the cache's
//! revision. When the watch ends or fails, re-watch from the cache's
//! revision; when the store says that history is compacted, relist (closing
//! every watcher: they may have missed events). Other failures are retried
//! with a capped backoff. The task ends when the cache is dropped.

use std::sync::{Arc, Weak};
use std::time::{Duration, Instant};

use futures::StreamExt;
use skein_storage::{Error as StoreError, ListOptions, Store, WatchMessage};

use super::index::Index;
use super::ring::Ring;
use super::{WatchCache, lock};

/// Backoff bounds after a store failure.
const BACKOFF_MIN: Duration = Duration::from_millis(100);
const BACKOFF_MAX: Duration = Duration::from_secs(2);

/// Starts `cache`'s reflector on the current Tokio runtime.
pub(super) fn spawn(cache: &Arc<WatchCache>) {
    let weak = Arc::downgrade(cache);
    let store = cache.store.clone();
    let prefix = cache.prefix.clone();
    tokio::spawn(async move { run(weak, store, prefix).await });
}

async fn run(cache: Weak<WatchCache>, store: Arc<dyn Store>, prefix: String) {
    let mut backoff = BACKOFF_MIN;
    let mut need_list = true;
    loop {
        if need_list {
            match store.list(&prefix, ListOptions::default()).await {
                Ok(list) => {
                    let Some(c) = cache.upgrade() else { return };
                    c.reset(list.items, list.revision);
                    need_list = false;
                }
                Err(StoreError::Unavailable(m)) if m.contains("closed") => return,
                Err(e) => {
                    tracing::warn!(%prefix, error = %e, "watch cache: list failed; retrying");
                    tokio::time::sleep(backoff).await;
                    backoff = (backoff * 2).min(BACKOFF_MAX);
                    continue;
                }
            }
        }
        let after = match cache.upgrade() {
            Some(c) => c.revision(),
            None => return,
        };
        let mut stream = match store.watch(&prefix, after).await {
            Ok(s) => s,
            Err(StoreError::Compacted { .. }) => {
                need_list = true;
                continue;
            }
            Err(e) => {
                tracing::warn!(%prefix, error = %e, "watch cache: watch failed; retrying");
                tokio::time::sleep(backoff).await;
                backoff = (backoff * 2).min(BACKOFF_MAX);
                continue;
            }
        };
        backoff = BACKOFF_MIN;
        loop {
            let msg = stream.next().await;
            let Some(c) = cache.upgrade() else { return };
            match msg {
                Some(Ok(m)) => c.apply(m),
                Some(Err(StoreError::Compacted { .. })) => {
                    need_list = true;
                    break;
                }
                Some(Err(e)) => {
                    tracing::warn!(%prefix, error = %e, "watch cache: store watch ended; re-watching");
                    tokio::time::sleep(backoff).await;
                    break;
                }
                None => break,
            }
        }
    }
}

impl WatchCache {
    /// Replaces the cache's contents with a fresh list at `revision`.
    fn reset(&self, items: Vec<skein_storage::KeyValue>, revision: skein_storage::Revision) {
        let index = Index::from_items(items);
        let mut state = lock(&self.state);
        state.index = index;
        state.ring = Ring::new(revision, self.config.capacity);
        state.revision = revision;
        state.watchers.close_all();
        drop(state);
        self.metrics.initializations.inc();
        self.record_revision(revision);
        self.revision.send_replace(revision);
    }

    /// Applies one message of the store watch.
    fn apply(&self, msg: WatchMessage) {
        let mut state = lock(&self.state);
        let revision = match msg {
            WatchMessage::Event(mut event) => {
                let rev = event.revision();
                if rev <= state.revision {
                    return;
                }
                let before = state.index.apply(&event);
                if event.prev.is_none() {
                    event.prev = before.map(|e| e.kv.clone());
                }
                self.metrics.events_received.inc();
                let slow = state.watchers.closed_slow;
                state.watchers.event(&event);
                self.metrics.events_dispatched.inc();
                let closed = state.watchers.closed_slow - slow;
                if closed > 0 {
                    self.metrics.terminated_watchers.inc_by(closed);
                }
                state.ring.push(event);
                rev
            }
            WatchMessage::Progress(rev) => {
                // Forwarded even when the cache already reflects `rev`:
                // it is what lets an idle watcher's client bookmark.
                let rev = rev.max(state.revision);
                state.watchers.progress(rev, Instant::now());
                if rev == state.revision {
                    return;
                }
                rev
            }
        };
        state.revision = revision;
        drop(state);
        self.record_revision(revision);
        self.revision.send_replace(revision);
    }

    /// Sets `apiserver_watch_cache_resource_version` (the 15 least
    /// significant digits, as upstream).
    fn record_revision(&self, revision: skein_storage::Revision) {
        self.metrics
            .resource_version
            .set(revision.rem_euclid(1_000_000_000_000_000));
    }
}
