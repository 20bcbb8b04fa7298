//! Controller expectations (upstream's `ControllerExpectations`): the
//! writes a controller made for an owner that its informer's cache does
//! not show yet. The controller acts for that owner again only once the
//! cache shows them all, so a lagging cache never makes it create or
//! delete twice; after a timeout it acts anyway (a missed event must not
//! stall the owner forever).
//!
//! Pure and generic: the owner key `K` and the write `W` are the caller's,
//! what "shown" means is a closure, and time is passed in. The one tracker
//! of the simulator's ReplicaSet controller (Pods by name) and the
//! federation's history worker (ControllerRevisions and ReplicaSets by
//! resourceVersion).

use std::collections::HashMap;
use std::hash::Hash;
use std::time::{Duration, Instant};

/// The writes awaited per owner. See the module documentation.
#[derive(Debug)]
pub struct Expectations<K, W> {
    pending: HashMap<K, Pending<W>>,
    timeout: Duration,
}

#[derive(Debug)]
struct Pending<W> {
    /// When the oldest write still awaited was recorded.
    since: Instant,
    writes: Vec<W>,
}

impl<K: Eq + Hash + Clone, W> Expectations<K, W> {
    /// No expectations; an owner's writes are waited for `timeout` at most.
    pub fn new(timeout: Duration) -> Self {
        Expectations {
            pending: HashMap::new(),
            timeout,
        }
    }

    /// Adds one write of `owner` at `now` (the timeout counts from the
    /// owner's oldest write still awaited).
    pub fn add(&mut self, owner: &K, write: W, now: Instant) {
        self.pending
            .entry(owner.clone())
            .or_insert_with(|| Pending {
                since: now,
                writes: Vec::new(),
            })
            .writes
            .push(write);
    }

    /// Replaces what `owner` awaits with `writes` at `now` (none: forgets
    /// the owner).
    pub fn replace(&mut self, owner: K, writes: Vec<W>, now: Instant) {
        if writes.is_empty() {
            self.pending.remove(&owner);
        } else {
            self.pending.insert(owner, Pending { since: now, writes });
        }
    }

    /// Stops waiting for the writes of `owner` that `drop` selects (one
    /// that failed, say).
    pub fn drop_where(&mut self, owner: &K, drop: impl Fn(&W) -> bool) {
        if let Some(p) = self.pending.get_mut(owner) {
            p.writes.retain(|w| !drop(w));
        }
    }

    /// Forgets `owner` (it is gone).
    pub fn forget(&mut self, owner: &K) {
        self.pending.remove(owner);
    }

    /// Whether the controller may act for `owner` at `now`: every write is
    /// `shown`, or the oldest is older than the timeout. Shown writes are
    /// dropped; a satisfied or timed-out owner is forgotten.
    pub fn satisfied(&mut self, owner: &K, now: Instant, shown: impl Fn(&W) -> bool) -> bool {
        let Some(p) = self.pending.get_mut(owner) else {
            return true;
        };
        p.writes.retain(|w| !shown(w));
        if p.writes.is_empty() || now.saturating_duration_since(p.since) >= self.timeout {
            self.pending.remove(owner);
            return true;
        }
        false
    }

    /// How many owners await writes.
    pub fn len(&self) -> usize {
        self.pending.len()
    }

    /// Whether no owner awaits a write.
    pub fn is_empty(&self) -> bool {
        self.pending.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tracker() -> Expectations<&'static str, &'static str> {
        Expectations::new(Duration::from_secs(5))
    }

    #[test]
    fn an_owner_waits_until_every_write_is_shown() {
        let mut e = tracker();
        let t0 = Instant::now();
        assert!(e.satisfied(&"rs", t0, |_| false), "nothing expected");
        e.add(&"rs", "a", t0);
        e.add(&"rs", "b", t0);
        assert!(!e.satisfied(&"rs", t0, |w| *w == "a"), "b is not shown");
        // "a" was dropped once shown: it need not stay shown.
        assert!(e.satisfied(&"rs", t0, |w| *w == "b"));
        assert!(e.is_empty(), "a satisfied owner is forgotten");
    }

    #[test]
    fn dropped_and_forgotten_writes_are_not_waited_for() {
        let mut e = tracker();
        let t0 = Instant::now();
        e.add(&"rs", "a", t0);
        e.add(&"rs", "b", t0);
        e.drop_where(&"rs", |w| *w == "b");
        assert!(e.satisfied(&"rs", t0, |w| *w == "a"));
        e.replace("rs", vec!["c"], t0);
        e.forget(&"rs");
        assert!(e.satisfied(&"rs", t0, |_| false));
        e.replace("rs", vec!["d"], t0);
        e.replace("rs", Vec::new(), t0);
        assert!(e.is_empty(), "replacing with nothing forgets");
    }

    #[test]
    fn expectations_time_out_from_the_oldest_write() {
        let mut e = tracker();
        let t0 = Instant::now();
        e.add(&"rs", "a", t0);
        e.add(&"rs", "b", t0 + Duration::from_secs(4));
        assert!(!e.satisfied(&"rs", t0 + Duration::from_secs(4), |_| false));
        assert!(e.satisfied(&"rs", t0 + Duration::from_secs(5), |_| false));
        assert_eq!(e.len(), 0);
    }
}
