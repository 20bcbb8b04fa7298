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
    /// Changes applied together, in revision order (see [`Burst`]).
    Events(Burst),
    /// Every change up to this revision has been sent.
    Progress(Revision),
}

/// A watcher's share of one burst: the burst's events from `start` on
/// whose keys are under `prefix` (all of them when `None`). The events are
/// lent, not cloned: a thousand watchers of one burst touch its reference
/// count once each, not once per event (that shared count was most of a
/// large fan-out's cost).
#[derive(Clone, Debug)]
pub struct Burst {
    events: Arc<[Arc<CachedEvent>]>,
    start: usize,
    prefix: Option<Arc<str>>,
}

impl Burst {
    /// The first of this watcher's events at index `from` or later, with
    /// its index (pass `index + 1` to get the next).
    pub fn next_from(&self, from: usize) -> Option<(usize, &Arc<CachedEvent>)> {
        let from = from.max(self.start);
        self.events
            .get(from..)?
            .iter()
            .enumerate()
            .find_map(|(i, e)| {
                self.prefix
                    .as_deref()
                    .is_none_or(|p| e.event.kv.key.starts_with(p))
                    .then_some((from + i, e))
            })
    }

    /// This watcher's events, in order.
    pub fn iter(&self) -> impl Iterator<Item = &Arc<CachedEvent>> {
        let mut at = 0;
        std::iter::from_fn(move || {
            let (i, e) = self.next_from(at)?;
            at = i + 1;
            Some(e)
        })
    }
}

/// What a watcher's channel carries.
#[derive(Clone, Debug)]
pub enum Delivery {
    /// One message for this watcher.
    Message(CacheMessage),
    /// Events applied together, in revision order, shared by every
    /// watcher: the receiver keeps those under its prefix after its
    /// revision ([`Live`]).
    Events(Arc<[Arc<CachedEvent>]>),
}

/// A watcher's live stream: its deliveries, each burst's events after
/// the revision it started from and under its prefix handed out as one
/// [`Burst`], in order. Polled directly (no per-delivery iterator or
/// future).
pub struct Live {
    rx: mpsc::Receiver<Delivery>,
    /// `None` when the watcher takes every key of the cache.
    prefix: Option<Arc<str>>,
    after: Revision,
}

impl Live {
    /// The stream of `rx` for the watcher of `prefix` (`None`: the cache's
    /// whole prefix) that has seen every revision up to `after`.
    pub fn new(rx: mpsc::Receiver<Delivery>, prefix: Option<&str>, after: Revision) -> Live {
        Live {
            rx,
            prefix: prefix.map(Arc::from),
            after,
        }
    }
}

impl futures::Stream for Live {
    type Item = CacheMessage;

    fn poll_next(
        self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<Option<CacheMessage>> {
        use std::task::Poll;
        let this = self.get_mut();
        loop {
            match std::task::ready!(this.rx.poll_recv(cx)) {
                None => return Poll::Ready(None),
                Some(Delivery::Message(m)) => return Poll::Ready(Some(m)),
                Some(Delivery::Events(events)) => {
                    // Revisions increase within a burst: skip those seen.
                    let start = events.partition_point(|e| e.revision() <= this.after);
                    let burst = Burst {
                        events,
                        start,
                        prefix: this.prefix.clone(),
                    };
                    if burst.next_from(start).is_some() {
                        return Poll::Ready(Some(CacheMessage::Events(burst)));
                    }
                }
            }
        }
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
