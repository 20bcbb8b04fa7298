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
use skein_storage::{Error as StoreError, EventKind, ListOptions, Revision, Store, WatchMessage};

use super::index::Index;
use super::ring::Ring;
use super::{WatchCache, read, write};

/// The most events offered to the watchers as one delivery.
const MAX_BURST: usize = 256;

/// Under a steady stream of writes, deliveries are spaced by [`gather`]:
/// events that arrive sooner after the last delivery wait to go out with
/// the next ones; at low rates nothing waits. Each delivery costs every
/// watcher a wake-up and, over HTTP, a write (a few µs each), so the
/// spacing grows with the watchers: [`GATHER_PER_WATCHER`] each keeps the
/// fan-out's own work to a fraction of one CPU whatever their number, from
/// [`GATHER_MIN`] up to [`GATHER_MAX`] (reached at 1,000 watchers).
pub(super) const GATHER_PER_WATCHER: Duration = Duration::from_micros(20);
/// The shortest spacing of deliveries (few watchers).
pub(super) const GATHER_MIN: Duration = Duration::from_millis(1);
/// The longest spacing of deliveries: the most an event waits for company.
pub(super) const GATHER_MAX: Duration = Duration::from_millis(20);

/// The spacing of deliveries to `watchers` open watchers.
pub(super) fn gather(watchers: usize) -> Duration {
    let n = u32::try_from(watchers).unwrap_or(u32::MAX);
    GATHER_PER_WATCHER
        .saturating_mul(n)
        .clamp(GATHER_MIN, GATHER_MAX)
}

/// Backoff bounds after a store failure.
const BACKOFF_MIN: Duration = Duration::from_millis(100);
const BACKOFF_MAX: Duration = Duration::from_secs(2);

/// An event the store delivered after reporting progress past it.
#[derive(Debug)]
pub(super) struct LateEvent {
    /// The event's revision.
    event: Revision,
    /// The revision the cache had reached.
    cache: Revision,
}

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
            // What the store has ready is applied as one burst; the
            // watchers are offered it before the reflector waits.
            let msg = match futures::FutureExt::now_or_never(stream.next()) {
                Some(m) => m,
                None => {
                    // (No strong reference is held across an await: the
                    // task ends once the cache is dropped.)
                    let Some(wait) = cache.upgrade().map(|c| c.gather_for(Instant::now())) else {
                        return;
                    };
                    let gathered = match wait {
                        Some(wait) => tokio::time::timeout(wait, stream.next()).await.ok(),
                        None => None,
                    };
                    if let Some(m) = gathered {
                        m
                    } else {
                        let Some(c) = cache.upgrade() else { return };
                        c.flush();
                        drop(c);
                        stream.next().await
                    }
                }
            };
            let Some(c) = cache.upgrade() else { return };
            match msg {
                Some(Ok(m)) => {
                    if let Err(late) = c.apply(m) {
                        tracing::warn!(
                            %prefix,
                            event_revision = late.event,
                            cache_revision = late.cache,
                            "watch cache: the store delivered an event older than \
                             progress it had reported; relisting"
                        );
                        need_list = true;
                        break;
                    }
                }
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
        match cache.upgrade() {
            Some(c) => c.flush(),
            None => return,
        }
    }
}

impl WatchCache {
    /// Replaces the cache's contents with a fresh list at `revision`.
    fn reset(&self, items: Vec<skein_storage::KeyValue>, revision: skein_storage::Revision) {
        let index = Index::from_items(items);
        let mut state = write(&self.state);
        state.index = index;
        state.ring = Ring::new(revision, self.config.capacity);
        state.revision = revision;
        state.pending.clear();
        state.watchers.close_all();
        drop(state);
        self.metrics.initializations.inc();
        self.record_revision(revision);
        self.revision.send_replace(revision);
    }

    /// Applies one message of the store watch.
    ///
    /// Errors: an event at or below the revision the cache already
    /// reflects (the store reported progress past it, or replayed it): the
    /// index may miss it, so the caller must relist.
    fn apply(&self, msg: WatchMessage) -> Result<(), LateEvent> {
        let mut state = write(&self.state);
        let revision = match msg {
            WatchMessage::Event(mut event) => {
                let rev = event.revision();
                if rev <= state.revision {
                    let held = state.index.get(&event.kv.key);
                    let known = match event.kind {
                        EventKind::Put => held.is_some_and(|e| e.kv.mod_revision >= rev),
                        EventKind::Delete => held.is_none_or(|e| e.kv.mod_revision > rev),
                    };
                    if known || rev <= state.ring.listed_at() {
                        // A replay of what the index already holds (or of
                        // history before the list): nothing to do.
                        return Ok(());
                    }
                    return Err(LateEvent {
                        event: rev,
                        cache: state.revision,
                    });
                }
                let before = state.index.apply(&event);
                if event.prev.is_none() {
                    event.prev = before.map(|e| e.kv.clone());
                }
                self.metrics.events_received.inc();
                let event = std::sync::Arc::new(super::event::CachedEvent::new(event));
                state.pending.push(event.clone());
                state.ring.push(event);
                if state.pending.len() >= MAX_BURST {
                    self.offer_pending(&mut state);
                }
                rev
            }
            WatchMessage::Progress(rev) => {
                // Forwarded even when the cache already reflects `rev`:
                // it is what lets an idle watcher's client bookmark.
                let rev = rev.max(state.revision);
                // After the events it covers.
                self.offer_pending(&mut state);
                state.watchers.progress(rev, Instant::now());
                if rev == state.revision {
                    return Ok(());
                }
                rev
            }
        };
        state.revision = revision;
        drop(state);
        self.record_revision(revision);
        self.revision.send_replace(revision);
        Ok(())
    }

    /// How long the reflector may wait for more events before it offers
    /// the pending ones: until [`gather`] after the last delivery; `None`
    /// when nothing is pending or that time has passed (offer now).
    pub(super) fn gather_for(&self, now: Instant) -> Option<Duration> {
        let state = read(&self.state);
        if state.pending.is_empty() {
            return None;
        }
        let due = state.last_offer? + gather(state.watchers.len());
        due.checked_duration_since(now).filter(|d| !d.is_zero())
    }

    /// Offers the events applied since the last offer to the watchers,
    /// as one delivery.
    pub(super) fn flush(&self) {
        let mut state = write(&self.state);
        self.offer_pending(&mut state);
    }

    fn offer_pending(&self, state: &mut super::State) {
        if state.pending.is_empty() {
            return;
        }
        let events: Arc<[Arc<super::event::CachedEvent>]> =
            std::mem::take(&mut state.pending).into();
        state.last_offer = Some(Instant::now());
        let slow = state.watchers.closed_slow;
        state.watchers.events(&events);
        self.metrics.events_dispatched.inc_by(events.len() as u64);
        let closed = state.watchers.closed_slow - slow;
        if closed > 0 {
            self.metrics.terminated_watchers.inc_by(closed);
        }
    }

    /// Sets `apiserver_watch_cache_resource_version` (the 15 least
    /// significant digits, as upstream).
    fn record_revision(&self, revision: skein_storage::Revision) {
        self.metrics
            .resource_version
            .set(revision.rem_euclid(1_000_000_000_000_000));
    }
}
