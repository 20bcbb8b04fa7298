//! Fan-out of a cache's events to its watchers.
//!
//! Each watcher has a bounded buffer. The reflector offers it what it
//! applied together (a [`Delivery`]: the events of one burst from the
//! store, shared by every watcher, which takes those of its prefix after
//! its revision; or a progress message) with `try_send`, never waiting, so
//! a burst costs one send and one wake-up per watcher, not one per event: a watcher whose buffer is full is dropped
//! at once (its stream ends, as upstream's cacher closes a watcher that is
//! "too slow"), so a slow reader never delays the reflector, writers or
//! other watchers. Its client re-watches from the last revision it saw, and
//! gets the rest of the window or a 410 and relists.

use std::sync::Arc;
use std::time::{Duration, Instant};

use skein_storage::Revision;
use tokio::sync::mpsc;

use super::event::CachedEvent;

/// One message of a watch served by a cache.
#[derive(Clone, Debug)]
pub enum CacheMessage {
    /// A change (shared with the cache's other watchers).
    Event(Arc<CachedEvent>),
    /// Every change up to this revision has been sent.
    Progress(Revision),
}

/// What a watcher's channel carries.
#[derive(Clone, Debug)]
pub enum Delivery {
    /// One message for this watcher.
    Message(CacheMessage),
    /// Events applied together, in revision order, shared by every
    /// watcher: the receiver keeps those under its prefix after its
    /// revision ([`Delivery::for_watcher`]).
    Events(Arc<[Arc<CachedEvent>]>),
}

impl Delivery {
    /// The messages of this delivery for the watcher of `prefix` that has
    /// seen every revision up to `after`, in order.
    pub fn for_watcher(
        self,
        prefix: Arc<str>,
        after: Revision,
    ) -> impl Iterator<Item = CacheMessage> {
        let (one, batch) = match self {
            Delivery::Message(m) => (Some(m), None),
            Delivery::Events(b) => (None, Some(b)),
        };
        let events = batch.into_iter().flat_map(move |b| {
            let prefix = prefix.clone();
            (0..b.len()).filter_map(move |i| {
                let e = &b[i];
                (e.revision() > after && e.event.kv.key.starts_with(&*prefix))
                    .then(|| CacheMessage::Event(e.clone()))
            })
        });
        one.into_iter().chain(events)
    }
}

/// One registered watcher.
#[derive(Debug)]
struct Watcher {
    /// Only keys under this prefix (the resource, or one namespace).
    prefix: String,
    /// Only revisions after this one.
    after: Revision,
    tx: mpsc::Sender<Delivery>,
}

/// The watchers of one cache.
#[derive(Debug)]
pub struct Watchers {
    list: Vec<Watcher>,
    /// Progress is forwarded at most this often.
    progress_every: Duration,
    last_progress: Option<Instant>,
    /// Watchers closed because their buffer was full (for metrics/logs).
    pub closed_slow: u64,
}

impl Watchers {
    /// No watchers; progress forwarded at most every `progress_every`.
    pub fn new(progress_every: Duration) -> Watchers {
        Watchers {
            list: Vec::new(),
            progress_every,
            last_progress: None,
            closed_slow: 0,
        }
    }

    /// Registers a watcher of `prefix` after `after`, with a buffer of
    /// `buffer` messages; returns its receiving end.
    pub fn add(
        &mut self,
        prefix: &str,
        after: Revision,
        buffer: usize,
    ) -> mpsc::Receiver<Delivery> {
        let (tx, rx) = mpsc::channel(buffer.max(1));
        self.list.push(Watcher {
            prefix: prefix.to_string(),
            after,
            tx,
        });
        rx
    }

    /// How many watchers are registered.
    pub fn len(&self) -> usize {
        self.list.len()
    }

    /// Whether no watcher is registered.
    pub fn is_empty(&self) -> bool {
        self.list.is_empty()
    }

    /// Ends every watcher's stream (the cache relisted: they may have
    /// missed events).
    pub fn close_all(&mut self) {
        self.list.clear();
    }

    /// Offers `events` (applied together, in revision order) to every
    /// watcher one of them concerns, as one delivery.
    pub fn events(&mut self, events: &Arc<[Arc<CachedEvent>]>) {
        let mut slow = 0;
        self.list.retain(|w| {
            let concerns = events
                .iter()
                .any(|e| e.revision() > w.after && e.event.kv.key.starts_with(&w.prefix));
            if !concerns {
                return !w.tx.is_closed();
            }
            match w.tx.try_send(Delivery::Events(events.clone())) {
                Ok(()) => true,
                Err(mpsc::error::TrySendError::Full(_)) => {
                    slow += 1;
                    false
                }
                Err(mpsc::error::TrySendError::Closed(_)) => false,
            }
        });
        if slow > 0 {
            tracing::debug!(slow, "watch cache closed watchers that fell behind");
        }
        self.closed_slow += slow;
    }

    /// Offers a progress message at `revision` (at most every
    /// `progress_every`, `now` being the current time). A watcher with a
    /// full buffer skips it: it has events to read.
    pub fn progress(&mut self, revision: Revision, now: Instant) {
        if self
            .last_progress
            .is_some_and(|t| now.duration_since(t) < self.progress_every)
        {
            return;
        }
        self.last_progress = Some(now);
        self.list.retain(|w| {
            if revision >= w.after {
                !matches!(
                    w.tx.try_send(Delivery::Message(CacheMessage::Progress(revision))),
                    Err(mpsc::error::TrySendError::Closed(_))
                )
            } else {
                !w.tx.is_closed()
            }
        });
    }
}
