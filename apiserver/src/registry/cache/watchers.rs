//! Fan-out of a cache's events to its watchers.
//!
//! Each watcher has a bounded buffer. The reflector offers it each message
//! with `try_send`, never waiting: a watcher whose buffer is full is dropped
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

/// One registered watcher.
#[derive(Debug)]
struct Watcher {
    /// Only keys under this prefix (the resource, or one namespace).
    prefix: String,
    /// Only revisions after this one.
    after: Revision,
    tx: mpsc::Sender<CacheMessage>,
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
    ) -> mpsc::Receiver<CacheMessage> {
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

    /// Offers `event` to every watcher it concerns.
    pub fn event(&mut self, event: &Arc<CachedEvent>) {
        let rev = event.revision();
        let mut slow = 0;
        self.list.retain(|w| {
            if rev <= w.after || !event.event.kv.key.starts_with(&w.prefix) {
                return !w.tx.is_closed();
            }
            match w.tx.try_send(CacheMessage::Event(event.clone())) {
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
                    w.tx.try_send(CacheMessage::Progress(revision)),
                    Err(mpsc::error::TrySendError::Closed(_))
                )
            } else {
                !w.tx.is_closed()
            }
        });
    }
}
