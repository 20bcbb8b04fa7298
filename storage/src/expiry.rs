//! Keys that expire: one key prefix whose keys are deleted a fixed time
//! after their last write, as etcd deletes keys attached to a lease
//! (kube-apiserver writes every Event with a lease of `--event-ttl`).
//!
//! A backend given an [`Expiry`] (in [`crate::embedded::EmbeddedOptions`]
//! or [`crate::etcd::EtcdOptions`]) keeps this contract:
//! - a key under [`Expiry::prefix`] is deleted no earlier than
//!   [`Expiry::ttl`] after its last write (create or update), and, while the
//!   store runs, about that long after it (etcd: at most `ttl` plus the
//!   lease reuse window of [`crate::etcd`]'s lease manager, and etcd's own
//!   expiry tick; embedded: plus the [`Sweeper`]'s lag);
//! - the deletion is an ordinary delete: one revision, and a
//!   [`crate::EventKind::Delete`] event to every watcher of the key;
//! - a write to the key before that deletion starts its time again;
//! - no key outside the prefix ever expires.
//!
//! Time is counted while a store runs: the embedded store counts a key
//! present when it opens as written then, as etcd renews every lease to its
//! full TTL when a new leader takes over.

use std::collections::{BTreeSet, HashMap};
use std::sync::{Arc, Weak};
use std::time::Duration;

use futures::StreamExt;
use tokio::task::JoinHandle;
use tokio::time::Instant;

use crate::{Error, EventKind, ListOptions, Revision, Store, WatchMessage};

/// Keys under `prefix` expire `ttl` after their last write (see the
/// module's contract).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Expiry {
    /// The key prefix whose keys expire (include the trailing `/` of a
    /// directory-like prefix, so that siblings sharing its first letters
    /// are not matched).
    pub prefix: String,
    /// How long a key lives after its last write. etcd counts leases in
    /// whole seconds: a fraction of a second is rounded up there.
    pub ttl: Duration,
}

impl Expiry {
    /// Whether `key` expires.
    pub fn covers(&self, key: &str) -> bool {
        key.starts_with(&self.prefix)
    }
}

/// How long the sweeper waits before it tries again after a store error.
const RETRY: Duration = Duration::from_secs(1);

/// How many expired keys the sweeper deletes at once.
const CONCURRENT_DELETES: usize = 32;

/// The embedded store's expiry: a task that lists the prefix, then watches
/// it, notes when it saw each key's latest write, and deletes each key
/// `ttl` after that with a compare-and-swap on the revision it saw (so a
/// write it has not yet seen is never lost: the delete fails with
/// [`Error::Conflict`] and the watch brings the new write). Deleting
/// through [`Store::delete`] is what gives watchers their Delete event.
///
/// Generic over the store so that it needs nothing of a backend beyond the
/// [`Store`] contract.
pub struct Sweeper;

impl Sweeper {
    /// Starts the sweeper of `store`. It stops by itself once the store is
    /// dropped; the owner aborts it through the handle on close.
    pub fn spawn<S: Store>(store: Weak<S>, expiry: Expiry) -> JoinHandle<()> {
        tokio::spawn(async move {
            let mut deadlines = Deadlines::new(expiry.ttl);
            loop {
                match sweep(&store, &expiry, &mut deadlines).await {
                    Stop::StoreGone => return,
                    Stop::Failed(Error::Compacted { .. }) => {
                        tracing::debug!(prefix = %expiry.prefix, "expiry: watch compacted, listing again");
                    }
                    Stop::Failed(e) => {
                        tracing::warn!(prefix = %expiry.prefix, error = %e, "expiry: store error, retrying");
                        tokio::time::sleep(RETRY).await;
                    }
                }
            }
        })
    }
}

/// Why one list-and-watch round of the sweeper ended.
enum Stop {
    /// The store was dropped.
    StoreGone,
    /// A list, watch or delete failed; the sweeper lists again.
    Failed(Error),
}

/// One round: list the prefix (keeping the deadlines of keys that did not
/// change since the last round), then follow the watch and delete keys as
/// they come due, until something fails.
async fn sweep<S: Store>(store: &Weak<S>, expiry: &Expiry, deadlines: &mut Deadlines) -> Stop {
    let mut watch = {
        let Some(s) = store.upgrade() else {
            return Stop::StoreGone;
        };
        let listed = match s.list(&expiry.prefix, ListOptions::default()).await {
            Ok(listed) => listed,
            Err(e) => return Stop::Failed(e),
        };
        deadlines.relisted(
            listed
                .items
                .iter()
                .map(|kv| (kv.key.as_str(), kv.mod_revision)),
            Instant::now(),
        );
        match s.watch(&expiry.prefix, listed.revision).await {
            Ok(watch) => watch,
            Err(e) => return Stop::Failed(e),
        }
    };
    loop {
        let next = deadlines.next();
        tokio::select! {
            message = watch.next() => match message {
                Some(Ok(WatchMessage::Event(event))) => match event.kind {
                    EventKind::Put => {
                        deadlines.written(&event.kv.key, event.kv.mod_revision, Instant::now());
                    }
                    EventKind::Delete => deadlines.deleted(&event.kv.key),
                },
                Some(Ok(WatchMessage::Progress(_))) => {}
                Some(Err(e)) => return Stop::Failed(e),
                None => return Stop::Failed(Error::Unavailable("the expiry watch ended".into())),
            },
            () = tokio::time::sleep_until(next.unwrap_or_else(Instant::now)), if next.is_some() => {
                let due = deadlines.take_due(Instant::now());
                let Some(s) = store.upgrade() else {
                    return Stop::StoreGone;
                };
                let results: Vec<_> = futures::stream::iter(due)
                    .map(|(key, rev)| {
                        let s = &s;
                        async move {
                            let result = s.delete(&key, Some(rev)).await;
                            (key, rev, result)
                        }
                    })
                    .buffer_unordered(CONCURRENT_DELETES)
                    .collect()
                    .await;
                let mut failure = None;
                for (key, rev, result) in results {
                    match result {
                        Ok(_) | Err(Error::NotFound { .. }) => deadlines.deleted(&key),
                        // Written again since: the watch brings that write.
                        Err(Error::Conflict { .. }) => {}
                        Err(e) => {
                            deadlines.retry(key, rev, Instant::now() + RETRY);
                            failure = Some(e);
                        }
                    }
                }
                if let Some(e) = failure {
                    tracing::warn!(prefix = %expiry.prefix, error = %e, "expiry: deleting an expired key failed, retrying");
                }
            }
        }
    }
}

/// The sweeper's bookkeeping: each live key's last seen revision, and the
/// instants at which keys come due. Pure, so that it is tested without a
/// store or a clock.
#[derive(Debug)]
struct Deadlines {
    ttl: Duration,
    /// Key → the revision of its last write seen.
    live: HashMap<Arc<str>, Revision>,
    /// (due, key, revision). Entries whose revision is no longer the key's
    /// live one are stale: skipped when due, and dropped when they
    /// outnumber the live keys.
    due: BTreeSet<(Instant, Arc<str>, Revision)>,
}

impl Deadlines {
    fn new(ttl: Duration) -> Deadlines {
        Deadlines {
            ttl,
            live: HashMap::new(),
            due: BTreeSet::new(),
        }
    }

    /// A write of `key` at `rev` was seen at `now`.
    fn written(&mut self, key: &str, rev: Revision, now: Instant) {
        let key: Arc<str> = match self.live.get_key_value(key) {
            Some((k, _)) => k.clone(),
            None => Arc::from(key),
        };
        self.live.insert(key.clone(), rev);
        self.due.insert((now + self.ttl, key, rev));
        self.trim();
    }

    /// `key` is gone.
    fn deleted(&mut self, key: &str) {
        self.live.remove(key);
        self.trim();
    }

    /// A list found exactly `items` (key, revision): keys whose revision is
    /// the one already known keep their deadline, the others are due `ttl`
    /// after `now`, and keys not listed are forgotten.
    fn relisted<'k>(&mut self, items: impl Iterator<Item = (&'k str, Revision)>, now: Instant) {
        let old = std::mem::take(&mut self.live);
        for (key, rev) in items {
            match old.get_key_value(key) {
                Some((k, &known)) if known == rev => {
                    self.live.insert(k.clone(), rev);
                }
                _ => {
                    let key: Arc<str> = Arc::from(key);
                    self.live.insert(key.clone(), rev);
                    self.due.insert((now + self.ttl, key, rev));
                }
            }
        }
        let live = &self.live;
        self.due
            .retain(|(_, key, rev)| live.get(key.as_ref()) == Some(rev));
    }

    /// The earliest instant something may come due.
    fn next(&self) -> Option<Instant> {
        self.due.first().map(|(at, _, _)| *at)
    }

    /// Removes and returns the keys due at `now` (with the revision to
    /// delete), skipping stale entries.
    fn take_due(&mut self, now: Instant) -> Vec<(Arc<str>, Revision)> {
        let mut out = Vec::new();
        while let Some((at, _, _)) = self.due.first() {
            if *at > now {
                break;
            }
            let Some((_, key, rev)) = self.due.pop_first() else {
                break;
            };
            if self.live.get(key.as_ref()) == Some(&rev) {
                out.push((key, rev));
            }
        }
        out
    }

    /// A due key's delete failed: try again at `at`, unless it changed.
    fn retry(&mut self, key: Arc<str>, rev: Revision, at: Instant) {
        if self.live.get(key.as_ref()) == Some(&rev) {
            self.due.insert((at, key, rev));
        }
    }

    /// Drops stale entries once they outnumber the live keys, so memory
    /// stays proportional to the keys, not to the writes of a TTL.
    fn trim(&mut self) {
        if self.due.len() > 2 * self.live.len() + 64 {
            let live = &self.live;
            self.due
                .retain(|(_, key, rev)| live.get(key.as_ref()) == Some(rev));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn keys(due: Vec<(Arc<str>, Revision)>) -> Vec<(String, Revision)> {
        due.into_iter().map(|(k, r)| (k.to_string(), r)).collect()
    }

    #[test]
    fn a_key_comes_due_ttl_after_its_last_write() {
        let t0 = Instant::now();
        let s = |n: u64| t0 + Duration::from_secs(n);
        let mut d = Deadlines::new(Duration::from_secs(10));
        d.written("/e/a", 2, s(0));
        d.written("/e/b", 3, s(1));
        d.written("/e/a", 4, s(5));
        assert_eq!(keys(d.take_due(s(9))), vec![]);
        // a's first write is stale: only b is due at 11.
        assert_eq!(keys(d.take_due(s(11))), vec![("/e/b".into(), 3)]);
        assert_eq!(keys(d.take_due(s(14))), vec![]);
        assert_eq!(keys(d.take_due(s(15))), vec![("/e/a".into(), 4)]);
        assert_eq!(d.next(), None);
    }

    #[test]
    fn deleted_keys_never_come_due_and_failed_deletes_retry() {
        let t0 = Instant::now();
        let s = |n: u64| t0 + Duration::from_secs(n);
        let mut d = Deadlines::new(Duration::from_secs(10));
        d.written("/e/a", 2, s(0));
        d.written("/e/b", 3, s(0));
        d.deleted("/e/a");
        let due = d.take_due(s(10));
        assert_eq!(keys(due.clone()), vec![("/e/b".into(), 3)]);
        let (key, rev) = due.into_iter().next().expect("b is due");
        d.retry(key, rev, s(11));
        assert_eq!(d.next(), Some(s(11)));
        assert_eq!(keys(d.take_due(s(11))), vec![("/e/b".into(), 3)]);
    }

    #[test]
    fn a_relist_keeps_deadlines_of_unchanged_keys() {
        let t0 = Instant::now();
        let s = |n: u64| t0 + Duration::from_secs(n);
        let mut d = Deadlines::new(Duration::from_secs(10));
        d.written("/e/a", 2, s(0));
        d.written("/e/b", 3, s(0));
        d.written("/e/gone", 4, s(0));
        // b changed while the watch was down, gone was deleted, c is new.
        d.relisted([("/e/a", 2), ("/e/b", 7), ("/e/c", 8)].into_iter(), s(4));
        assert_eq!(keys(d.take_due(s(10))), vec![("/e/a".into(), 2)]);
        let mut later = keys(d.take_due(s(14)));
        later.sort();
        assert_eq!(later, vec![("/e/b".into(), 7), ("/e/c".into(), 8)]);
    }

    #[test]
    fn stale_entries_are_trimmed() {
        let t0 = Instant::now();
        let mut d = Deadlines::new(Duration::from_secs(10));
        for rev in 0..1000 {
            d.written("/e/a", rev, t0 + Duration::from_millis(rev.unsigned_abs()));
        }
        assert!(d.due.len() <= 2 * d.live.len() + 65, "{}", d.due.len());
        assert_eq!(
            keys(d.take_due(t0 + Duration::from_secs(20))),
            vec![("/e/a".into(), 999)]
        );
    }

    #[test]
    fn covers_only_its_prefix() {
        let e = Expiry {
            prefix: "/registry/core/events/".into(),
            ttl: Duration::from_secs(1),
        };
        assert!(e.covers("/registry/core/events/ns/x"));
        assert!(!e.covers("/registry/core/eventsx/ns/x"));
        assert!(!e.covers("/registry/core/configmaps/ns/x"));
    }
}
