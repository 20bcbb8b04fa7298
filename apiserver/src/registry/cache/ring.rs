//! The ring of recent events: the cache's watch window.
//!
//! Pure. The ring holds every event under the cached prefix with a revision
//! in `(start, end]`, where `start` is the revision the cache listed at (or
//! the revision of the newest event evicted since) and `end` is the newest
//! event's revision. A watch from `after >= start` is served from the ring;
//! one from `after < start` is not.

use std::collections::VecDeque;
use std::sync::Arc;

use skein_storage::Revision;

use super::event::CachedEvent;

/// The default number of events a cache keeps.
pub const DEFAULT_CAPACITY: usize = 4096;

/// Why the ring cannot serve a watch from a revision.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Miss {
    /// Events after the revision were evicted: the window no longer holds
    /// it (upstream's 410 "too old resource version"). `oldest` is the
    /// oldest revision a watch may start after.
    Evicted {
        /// The revision asked for.
        requested: Revision,
        /// The ring's `start`.
        oldest: Revision,
    },
    /// The revision predates the cache's list: the cache never held those
    /// events, the store may.
    BeforeList,
}

/// A bounded window of recent events.
#[derive(Debug)]
pub struct Ring {
    events: VecDeque<Arc<CachedEvent>>,
    capacity: usize,
    start: Revision,
    listed_at: Revision,
}

impl Ring {
    /// An empty ring for a cache that listed at `revision`, keeping at most
    /// `capacity` events (at least 1).
    pub fn new(revision: Revision, capacity: usize) -> Ring {
        Ring {
            events: VecDeque::new(),
            capacity: capacity.max(1),
            start: revision,
            listed_at: revision,
        }
    }

    /// Appends an event (revisions must increase); evicts the oldest one
    /// when full.
    pub fn push(&mut self, event: Arc<CachedEvent>) {
        if self.events.len() == self.capacity
            && let Some(old) = self.events.pop_front()
        {
            self.start = old.revision();
        }
        self.events.push_back(event);
    }

    /// The revision of the list the ring started from.
    pub fn listed_at(&self) -> Revision {
        self.listed_at
    }

    /// The oldest revision a watch may start after.
    pub fn start(&self) -> Revision {
        self.start
    }

    /// How many events the ring holds.
    pub fn len(&self) -> usize {
        self.events.len()
    }

    /// Whether the ring holds no event.
    pub fn is_empty(&self) -> bool {
        self.events.is_empty()
    }

    /// The events after `after` whose key starts with `prefix`, in order;
    /// or why the ring cannot tell.
    pub fn since(&self, after: Revision, prefix: &str) -> Result<Vec<Arc<CachedEvent>>, Miss> {
        if after < self.start {
            return Err(if self.start > self.listed_at {
                Miss::Evicted {
                    requested: after,
                    oldest: self.start,
                }
            } else {
                Miss::BeforeList
            });
        }
        let first = self.events.partition_point(|e| e.revision() <= after);
        Ok(self
            .events
            .range(first..)
            .filter(|e| e.event.kv.key.starts_with(prefix))
            .cloned()
            .collect())
    }
}

#[cfg(test)]
mod tests {
    use bytes::Bytes;
    use skein_storage::{EventKind, KeyValue, WatchEvent};

    use super::*;

    fn put(key: &str, rev: Revision) -> Arc<CachedEvent> {
        Arc::new(CachedEvent::new(WatchEvent {
            kind: EventKind::Put,
            kv: KeyValue {
                key: key.into(),
                value: Bytes::new(),
                create_revision: rev,
                mod_revision: rev,
                version: 1,
            },
            prev: None,
        }))
    }

    fn revs(r: Result<Vec<Arc<CachedEvent>>, Miss>) -> Result<Vec<Revision>, Miss> {
        r.map(|v| v.iter().map(|e| e.revision()).collect())
    }

    #[test]
    fn window_slides_and_reports_misses() {
        let mut ring = Ring::new(10, 2);
        assert_eq!(revs(ring.since(9, "/")), Err(Miss::BeforeList));
        assert_eq!(revs(ring.since(10, "/")), Ok(vec![]));
        ring.push(put("/a", 11));
        ring.push(put("/b", 12));
        assert_eq!(ring.since(10, "/a").map(|v| v.len()), Ok(1));
        ring.push(put("/a", 13));
        assert_eq!(ring.start(), 11);
        assert_eq!(
            revs(ring.since(10, "/")),
            Err(Miss::Evicted {
                requested: 10,
                oldest: 11
            })
        );
        assert_eq!(revs(ring.since(11, "/")), Ok(vec![12, 13]));
        assert_eq!(revs(ring.since(20, "/")), Ok(vec![]));
    }
}
