//! A work queue with client-go's invariants (`util/workqueue`), for
//! controllers that reconcile one key at a time.
//!
//! Contract:
//! - Stingy: a key added while it waits is queued once; a key added while
//!   it is being processed is processed again after, never concurrently.
//! - Fair: keys come out in the order they were (first) added.
//! - Delays: [`WorkQueue::add_after`] keeps the earliest requested time per
//!   key; adding the key now supersedes a pending delay.
//! - Backoff: [`Item::retry`] requeues with a per-key exponential delay
//!   (5 ms doubling, capped at [`MAX_BACKOFF`]); an item dropped without
//!   `retry` forgets the key's failures. Dropping an [`Item`] marks the
//!   key done, so a caller cannot forget to.

use std::collections::{BTreeMap, HashMap, HashSet, VecDeque};
use std::hash::Hash;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use tokio::sync::Notify;
use tokio::time::Instant;

/// The longest delay [`Item::retry`] waits.
pub const MAX_BACKOFF: Duration = Duration::from_secs(30);

struct State<K> {
    queue: VecDeque<K>,
    dirty: HashSet<K>,
    processing: HashSet<K>,
    /// Each delayed key's entry in `due`, so it is found without a scan.
    delayed: HashMap<K, (Instant, u64)>,
    due: BTreeMap<(Instant, u64), K>,
    seq: u64,
    failures: HashMap<K, u32>,
}

/// See the module documentation. Cheap to clone (shared state).
pub struct WorkQueue<K> {
    state: Arc<Mutex<State<K>>>,
    notify: Arc<Notify>,
}

impl<K> Clone for WorkQueue<K> {
    fn clone(&self) -> Self {
        WorkQueue {
            state: self.state.clone(),
            notify: self.notify.clone(),
        }
    }
}

impl<K: Clone + Eq + Hash> Default for WorkQueue<K> {
    fn default() -> Self {
        WorkQueue::new()
    }
}

impl<K: Clone + Eq + Hash> WorkQueue<K> {
    /// An empty queue.
    pub fn new() -> WorkQueue<K> {
        WorkQueue {
            state: Arc::new(Mutex::new(State {
                queue: VecDeque::new(),
                dirty: HashSet::new(),
                processing: HashSet::new(),
                delayed: HashMap::new(),
                due: BTreeMap::new(),
                seq: 0,
                failures: HashMap::new(),
            })),
            notify: Arc::new(Notify::new()),
        }
    }

    fn lock(&self) -> MutexGuard<'_, State<K>> {
        self.state
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Queues `key` now.
    pub fn add(&self, key: K) {
        let mut s = self.lock();
        Self::add_locked(&mut s, key);
        drop(s);
        self.notify.notify_one();
    }

    fn add_locked(s: &mut State<K>, key: K) {
        if let Some(entry) = s.delayed.remove(&key) {
            s.due.remove(&entry);
        }
        if s.dirty.contains(&key) {
            return;
        }
        s.dirty.insert(key.clone());
        if !s.processing.contains(&key) {
            s.queue.push_back(key);
        }
    }

    /// Queues `key` after `delay` (now when zero); an earlier pending time
    /// for the key wins.
    pub fn add_after(&self, key: K, delay: Duration) {
        if delay.is_zero() {
            return self.add(key);
        }
        let at = Instant::now() + delay;
        let mut s = self.lock();
        if s.dirty.contains(&key) {
            return;
        }
        match s.delayed.get(&key) {
            Some((current, _)) if *current <= at => return,
            Some(&entry) => {
                s.due.remove(&entry);
            }
            None => {}
        }
        s.seq += 1;
        let seq = s.seq;
        s.delayed.insert(key.clone(), (at, seq));
        s.due.insert((at, seq), key);
        drop(s);
        self.notify.notify_one();
    }

    /// How many keys wait to be processed now.
    pub fn len(&self) -> usize {
        self.lock().queue.len()
    }

    /// Whether no key waits to be processed now.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The next key to process, waiting as long as it takes.
    pub async fn next(&self) -> Item<K> {
        loop {
            let notified = self.notify.notified();
            tokio::pin!(notified);
            notified.as_mut().enable();
            let wake = {
                let mut s = self.lock();
                let now = Instant::now();
                while let Some(entry) = s.due.first_entry() {
                    if entry.key().0 > now {
                        break;
                    }
                    let key = entry.remove();
                    s.delayed.remove(&key);
                    Self::add_locked(&mut s, key);
                }
                if let Some(key) = s.queue.pop_front() {
                    s.dirty.remove(&key);
                    s.processing.insert(key.clone());
                    return Item {
                        key,
                        queue: self.clone(),
                        failed: false,
                    };
                }
                s.due.first_key_value().map(|((t, _), _)| *t)
            };
            match wake {
                Some(at) => {
                    tokio::select! {
                        () = &mut notified => {}
                        () = tokio::time::sleep_until(at) => {}
                    }
                }
                None => notified.await,
            }
        }
    }

    fn done(&self, key: &K, failed: bool) {
        let mut s = self.lock();
        s.processing.remove(key);
        if !failed {
            s.failures.remove(key);
        }
        if s.dirty.contains(key) {
            s.queue.push_back(key.clone());
            drop(s);
            self.notify.notify_one();
        }
    }
}

/// A key being processed; dropping it marks the key done.
pub struct Item<K: Clone + Eq + Hash> {
    key: K,
    queue: WorkQueue<K>,
    failed: bool,
}

impl<K: Clone + Eq + Hash> Item<K> {
    /// The key.
    pub fn key(&self) -> &K {
        &self.key
    }

    /// Processing failed: queue the key again after its next backoff.
    pub fn retry(mut self) {
        self.failed = true;
        let delay = {
            let mut s = self.queue.lock();
            let n = s.failures.entry(self.key.clone()).or_insert(0);
            *n = n.saturating_add(1);
            backoff(*n)
        };
        self.queue.add_after(self.key.clone(), delay);
    }

    /// Processing succeeded; look at the key again after `delay`.
    pub fn requeue_after(self, delay: Duration) {
        self.queue.add_after(self.key.clone(), delay);
    }
}

impl<K: Clone + Eq + Hash> Drop for Item<K> {
    fn drop(&mut self) {
        self.queue.done(&self.key, self.failed);
    }
}

/// The delay after `failures` consecutive failures: 5 ms doubling, capped.
pub fn backoff(failures: u32) -> Duration {
    let exp = failures.saturating_sub(1).min(20);
    Duration::from_millis(5u64 << exp).min(MAX_BACKOFF)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test(start_paused = true)]
    async fn repeated_adds_collapse() {
        let q = WorkQueue::new();
        q.add("a");
        q.add("a");
        q.add("b");
        assert_eq!(q.len(), 2);
        let a = q.next().await;
        assert_eq!(*a.key(), "a");
        drop(a);
        let b = q.next().await;
        assert_eq!(*b.key(), "b");
        drop(b);
        assert!(q.is_empty());
    }

    #[tokio::test(start_paused = true)]
    async fn a_key_added_while_processing_is_processed_again_after() {
        let q = WorkQueue::new();
        q.add("a");
        let a = q.next().await;
        q.add("a");
        assert!(q.is_empty(), "never handed out twice at once");
        drop(a);
        assert_eq!(q.len(), 1);
        assert_eq!(*q.next().await.key(), "a");
    }

    #[tokio::test(start_paused = true)]
    async fn the_earliest_delay_wins() {
        let q = WorkQueue::new();
        let start = Instant::now();
        q.add_after("a", Duration::from_secs(10));
        q.add_after("a", Duration::from_secs(1));
        q.add_after("a", Duration::from_secs(5));
        let a = q.next().await;
        assert_eq!(*a.key(), "a");
        assert_eq!(start.elapsed(), Duration::from_secs(1));
        drop(a);
        assert!(q.is_empty());
        assert!(
            tokio::time::timeout(Duration::from_secs(60), q.next())
                .await
                .is_err(),
            "superseded delays do not fire"
        );
    }

    #[tokio::test(start_paused = true)]
    async fn a_key_queued_now_leaves_the_others_delays_alone() {
        let q = WorkQueue::new();
        let start = Instant::now();
        for (k, s) in [("a", 5), ("b", 5), ("c", 2), ("d", 9)] {
            q.add_after(k, Duration::from_secs(s));
        }
        // Moved earlier, and queued now: only their own entries go.
        q.add_after("d", Duration::from_secs(3));
        q.add("a");
        let mut seen = Vec::new();
        for _ in 0..4 {
            let item = q.next().await;
            seen.push((*item.key(), start.elapsed().as_secs()));
        }
        assert_eq!(seen, [("a", 0), ("c", 2), ("d", 3), ("b", 5)]);
        assert!(
            tokio::time::timeout(Duration::from_secs(60), q.next())
                .await
                .is_err(),
            "no key comes twice"
        );
    }

    #[tokio::test(start_paused = true)]
    async fn retries_back_off_and_success_forgets() {
        let q = WorkQueue::new();
        q.add("a");
        let start = Instant::now();
        q.next().await.retry();
        q.next().await.retry();
        let third = q.next().await;
        assert_eq!(start.elapsed(), backoff(1) + backoff(2));
        drop(third);
        q.add("a");
        let start = Instant::now();
        q.next().await.retry();
        let _ = q.next().await;
        assert_eq!(start.elapsed(), backoff(1), "a success reset the failures");
    }

    #[test]
    fn backoff_is_capped() {
        assert_eq!(backoff(1), Duration::from_millis(5));
        assert_eq!(backoff(2), Duration::from_millis(10));
        assert_eq!(backoff(40), MAX_BACKOFF);
    }

    proptest::proptest! {
        /// Random adds and completions: a key is never handed out while it
        /// is processed, and every added key is eventually handed out.
        #[test]
        fn stingy_and_complete(ops in proptest::collection::vec((0u8..4, proptest::bool::ANY), 1..64)) {
            let rt = tokio::runtime::Builder::new_current_thread().enable_time().start_paused(true).build();
            let Ok(rt) = rt else { return Ok(()) };
            rt.block_on(async {
                let q = WorkQueue::new();
                let mut held: Vec<Item<u8>> = Vec::new();
                let mut wanted: HashSet<u8> = HashSet::new();
                for (key, take) in ops {
                    q.add(key);
                    wanted.insert(key);
                    if take && !q.is_empty() {
                        let item = q.next().await;
                        assert!(held.iter().all(|h| h.key() != item.key()), "handed out twice");
                        wanted.remove(item.key());
                        held.push(item);
                    } else if !take && !held.is_empty() {
                        drop(held.remove(0));
                    }
                }
                held.clear();
                while !q.is_empty() {
                    let item = q.next().await;
                    wanted.remove(item.key());
                }
                assert!(wanted.is_empty(), "keys never handed out: {wanted:?}");
            });
        }
    }
}
