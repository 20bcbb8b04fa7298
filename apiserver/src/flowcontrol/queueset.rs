//! One priority level's seats and queues.
//!
//! Contract:
//! - A request takes one seat (upstream's work estimator gives LISTs and
//!   mutating requests with many watchers more; Skein counts every
//!   request as one seat) from [`Level::begin`] until its [`Seat`] drops.
//! - An `Exempt` level never waits or rejects; it only counts.
//! - A `Limited` level admits at once while fewer than its current limit
//!   of seats are taken and nobody waits. Otherwise a `Reject` level
//!   rejects (`concurrency-limit`); a `Queue` level deals the request's
//!   flow a hand of `handSize` of its `queues` ([`deal`], shuffle
//!   sharding) and puts it at the back of the hand's shortest queue
//!   (waiting plus executing), or rejects it (`queue-full`) when that
//!   queue holds `queueLengthLimit`.
//! - A freed seat goes to the head of the next non-empty queue in round
//!   robin (upstream's fair queuing picks the queue whose head would
//!   finish first in virtual time; with one seat per request, round
//!   robin over queues serves flows alike).
//! - A waiting [`Ticket`] that times out or is dropped (the client went
//!   away) leaves its queue; a seat granted to it in the same instant is
//!   given back, so no seat is ever lost.
//! - Lock order: one level's state lock at a time; nothing awaits under
//!   it.

use std::collections::VecDeque;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::{Duration, Instant};

use axum::http::HeaderValue;
use tokio::sync::oneshot;

use crate::metrics::flowcontrol::{LevelMetrics, RejectReason, SchemaMetrics};

/// The largest hand upstream allows (validation: `handSize` ≤ 120, and
/// its entropy check bounds practical hands far lower).
const MAX_HAND: usize = 128;

/// Deals a hand of `hand` distinct queues of `deck` from `hash`
/// (shuffle sharding): each draw takes the remainder of the hash by the
/// cards left, as upstream's dealer, so flows that differ in their hash
/// rarely share a whole hand. `hand` is clamped to `1..=deck`.
pub fn deal(hash: u64, deck: usize, hand: usize, mut pick: impl FnMut(usize)) {
    if deck == 0 {
        return;
    }
    let hand = hand.clamp(1, deck.min(MAX_HAND));
    // The cards dealt so far, ascending.
    let mut taken = [0usize; MAX_HAND];
    let mut h = hash;
    for i in 0..hand {
        let left = (deck - i) as u64;
        let mut r = (h % left) as usize;
        h /= left;
        // The r-th card not dealt yet.
        let mut at = 0;
        while at < i && taken[at] <= r {
            r += 1;
            at += 1;
        }
        taken.copy_within(at..i, at + 1);
        taken[at] = r;
        pick(r);
    }
}

/// How a `Queue` level queues.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Queuing {
    /// `queues`.
    pub queues: usize,
    /// `handSize`.
    pub hand: usize,
    /// `queueLengthLimit`.
    pub length_limit: usize,
}

/// A level's compiled spec.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// `Exempt`: never limited.
    Exempt,
    /// `Limited` with `Reject` (`None`) or `Queue`.
    Limited(Option<Queuing>),
}

struct Waiter {
    grant: oneshot::Sender<Option<usize>>,
    metrics: Arc<SchemaMetrics>,
}

#[derive(Default)]
struct Queue {
    waiting: VecDeque<Waiter>,
    executing: usize,
}

struct State {
    kind: Kind,
    /// The current concurrency limit in seats.
    limit: usize,
    executing: usize,
    queues: Vec<Queue>,
    waiting: usize,
    /// The next queue round robin looks at.
    cursor: usize,
    /// The most seats wanted (executing plus waiting) since the last
    /// [`Level::take_demand`].
    peak: usize,
}

/// One priority level. Shared (`Arc`): the configuration, every [`Seat`]
/// and [`Ticket`] of it.
pub struct Level {
    /// `metadata.name`.
    pub name: String,
    /// `metadata.uid` as the `X-Kubernetes-PF-PriorityLevel-UID` value.
    pub uid: Option<HeaderValue>,
    /// Its series.
    pub metrics: LevelMetrics,
    /// Whether it is `Exempt` (fixed: validation allows that type only
    /// for the level named `exempt`, and no other type for it). An exempt
    /// level counts in `exempt_executing` and never takes `state`'s lock.
    exempt: bool,
    exempt_executing: AtomicUsize,
    state: Mutex<State>,
}

/// What [`Level::begin`] decided.
pub enum Begin {
    /// Run now.
    Run(Seat),
    /// Wait for a seat.
    Wait(Ticket),
    /// Rejected.
    Reject(RejectReason),
}

impl Level {
    /// A level of `kind` with `limit` seats.
    pub fn new(
        name: &str,
        uid: Option<HeaderValue>,
        kind: Kind,
        limit: usize,
        metrics: LevelMetrics,
    ) -> Level {
        let queues = match kind {
            Kind::Limited(Some(q)) => q.queues,
            _ => 0,
        };
        Level {
            name: name.to_owned(),
            uid,
            metrics,
            exempt: kind == Kind::Exempt,
            exempt_executing: AtomicUsize::new(0),
            state: Mutex::new(State {
                kind,
                limit,
                executing: 0,
                queues: (0..queues).map(|_| Queue::default()).collect(),
                waiting: 0,
                cursor: 0,
                peak: 0,
            }),
        }
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Changes the spec (a changed `queues` re-deals the waiting requests
    /// over the new queues, in their order) and the limit, then hands out
    /// what seats that frees.
    pub fn reconfigure(&self, kind: Kind) {
        let mut s = self.lock();
        let queues = match kind {
            Kind::Limited(Some(q)) => q.queues,
            _ => 0,
        };
        s.kind = kind;
        if s.queues.len() != queues {
            let old: Vec<Queue> = std::mem::take(&mut s.queues);
            s.queues = (0..queues.max(1)).map(|_| Queue::default()).collect();
            for (i, w) in old.into_iter().flat_map(|q| q.waiting).enumerate() {
                let n = s.queues.len();
                s.queues[i % n].waiting.push_back(w);
            }
            if queues == 0 && s.waiting == 0 {
                s.queues.clear();
            }
            s.cursor = 0;
        }
        dispatch(&mut s);
    }

    /// Sets the current limit in seats and hands out what seats that
    /// frees.
    pub fn set_limit(&self, limit: usize) {
        let mut s = self.lock();
        s.limit = limit;
        self.metrics.current_limit.set(limit as i64);
        dispatch(&mut s);
    }

    /// The peak seat demand since the last call (executing plus waiting),
    /// restarted at the current demand.
    pub fn take_demand(&self) -> usize {
        let mut s = self.lock();
        let peak = s.peak.max(s.executing + s.waiting);
        s.peak = s.executing + s.waiting;
        peak
    }

    /// Admits, queues or rejects one request of a flow hashing to `hash`
    /// under FlowSchema series `metrics`.
    pub fn begin(self: &Arc<Self>, hash: u64, metrics: &Arc<SchemaMetrics>) -> Begin {
        if self.exempt {
            self.exempt_executing.fetch_add(1, Ordering::Relaxed);
            return Begin::Run(Seat::granted(self.clone(), None, metrics.clone()));
        }
        let mut s = self.lock();
        let queuing = match s.kind {
            Kind::Exempt => None,
            Kind::Limited(q) => q,
        };
        if s.executing < s.limit && s.waiting == 0 {
            s.executing += 1;
            s.peak = s.peak.max(s.executing);
            drop(s);
            return Begin::Run(Seat::granted(self.clone(), None, metrics.clone()));
        }
        let Some(q) = queuing.filter(|_| !s.queues.is_empty()) else {
            return Begin::Reject(RejectReason::ConcurrencyLimit);
        };
        let mut best: Option<(usize, usize)> = None;
        let queues = &s.queues;
        deal(hash, queues.len(), q.hand, |i| {
            let load = queues[i].waiting.len() + queues[i].executing;
            if best.is_none_or(|(_, l)| load < l) {
                best = Some((i, load));
            }
        });
        let Some((i, _)) = best else {
            return Begin::Reject(RejectReason::QueueFull);
        };
        if s.queues[i].waiting.len() >= q.length_limit {
            return Begin::Reject(RejectReason::QueueFull);
        }
        let (tx, rx) = oneshot::channel();
        s.queues[i].waiting.push_back(Waiter {
            grant: tx,
            metrics: metrics.clone(),
        });
        s.waiting += 1;
        s.peak = s.peak.max(s.executing + s.waiting);
        metrics.inqueue.inc();
        dispatch(&mut s);
        drop(s);
        Begin::Wait(Ticket {
            level: self.clone(),
            rx: Some(rx),
            queue: i,
            metrics: metrics.clone(),
            since: Instant::now(),
        })
    }

    /// Frees one seat (of queue `queue`, when it came from one) and hands
    /// it out.
    fn release(&self, queue: Option<usize>) {
        if self.exempt {
            self.exempt_executing.fetch_sub(1, Ordering::Relaxed);
            return;
        }
        let mut s = self.lock();
        s.executing = s.executing.saturating_sub(1);
        if let Some(q) = queue.and_then(|q| s.queues.get_mut(q)) {
            q.executing = q.executing.saturating_sub(1);
        }
        dispatch(&mut s);
    }

    /// Drops the waiters of `queue` whose ticket is gone.
    fn prune(&self, queue: usize) {
        let mut s = self.lock();
        let Some(q) = s.queues.get_mut(queue) else {
            return;
        };
        let before = q.waiting.len();
        q.waiting.retain(|w| {
            let alive = !w.grant.is_closed();
            if !alive {
                w.metrics.inqueue.dec();
            }
            alive
        });
        let gone = before - q.waiting.len();
        s.waiting -= gone;
    }

    /// Seats taken and requests waiting (for tests and the allocator).
    pub fn load(&self) -> (usize, usize) {
        if self.exempt {
            return (self.exempt_executing.load(Ordering::Relaxed), 0);
        }
        let s = self.lock();
        (s.executing, s.waiting)
    }
}

/// Hands free seats to waiting requests, round robin over the queues.
fn dispatch(s: &mut State) {
    let n = s.queues.len();
    while (s.executing < s.limit || s.kind == Kind::Exempt) && s.waiting > 0 && n > 0 {
        let Some(i) = (0..n)
            .map(|k| (s.cursor + k) % n)
            .find(|&i| !s.queues[i].waiting.is_empty())
        else {
            break;
        };
        s.cursor = (i + 1) % n;
        let Some(w) = s.queues[i].waiting.pop_front() else {
            break;
        };
        s.waiting -= 1;
        w.metrics.inqueue.dec();
        if w.grant.send(Some(i)).is_ok() {
            s.executing += 1;
            s.queues[i].executing += 1;
        }
    }
}

/// A request waiting for a seat.
pub struct Ticket {
    level: Arc<Level>,
    rx: Option<oneshot::Receiver<Option<usize>>>,
    queue: usize,
    metrics: Arc<SchemaMetrics>,
    since: Instant,
}

impl Ticket {
    /// Waits at most `limit` for a seat (then `time-out`).
    pub async fn wait(mut self, limit: Duration) -> Result<Seat, RejectReason> {
        let Some(mut rx) = self.rx.take() else {
            return Err(RejectReason::Cancelled);
        };
        let granted = match tokio::time::timeout(limit, &mut rx).await {
            Ok(Ok(queue)) => Some(queue),
            Ok(Err(_)) => None,
            Err(_) => {
                // A grant sent in the same instant is still ours.
                rx.close();
                rx.try_recv().ok()
            }
        };
        let waited = self.since.elapsed().as_secs_f64();
        match granted {
            Some(queue) => {
                self.metrics.waited_executed.observe(waited);
                Ok(Seat::granted(
                    self.level.clone(),
                    queue,
                    self.metrics.clone(),
                ))
            }
            None => {
                self.metrics.waited_rejected.observe(waited);
                self.level.prune(self.queue);
                Err(RejectReason::TimeOut)
            }
        }
    }
}

impl Drop for Ticket {
    fn drop(&mut self) {
        if let Some(mut rx) = self.rx.take() {
            // Dropped while waiting: the client went away.
            rx.close();
            match rx.try_recv() {
                Ok(queue) => self.level.release(queue),
                Err(_) => self.level.prune(self.queue),
            }
            self.metrics.rejected(RejectReason::Cancelled).inc();
        }
    }
}

/// One seat of a level, held while the request executes; dropping it
/// frees the seat.
pub struct Seat {
    level: Arc<Level>,
    queue: Option<usize>,
    metrics: Arc<SchemaMetrics>,
}

impl Seat {
    fn granted(level: Arc<Level>, queue: Option<usize>, metrics: Arc<SchemaMetrics>) -> Seat {
        metrics.dispatched.inc();
        metrics.executing.inc();
        metrics.executing_seats.inc();
        Seat {
            level,
            queue,
            metrics,
        }
    }

    /// The level this seat belongs to.
    pub fn level(&self) -> &Arc<Level> {
        &self.level
    }
}

impl Drop for Seat {
    fn drop(&mut self) {
        self.metrics.executing.dec();
        self.metrics.executing_seats.dec();
        self.level.release(self.queue);
    }
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;
    use crate::metrics::flowcontrol::FlowMetrics;

    fn level(kind: Kind, limit: usize) -> (Arc<Level>, Arc<SchemaMetrics>) {
        let m = FlowMetrics::new();
        (
            Arc::new(Level::new("l", None, kind, limit, m.level("l"))),
            Arc::new(m.schema("s", "l")),
        )
    }

    fn queuing(queues: usize, hand: usize, length_limit: usize) -> Kind {
        Kind::Limited(Some(Queuing {
            queues,
            hand,
            length_limit,
        }))
    }

    proptest! {
        #[test]
        fn a_hand_is_distinct_queues_of_the_deck(hash: u64, deck in 1usize..200, hand in 1usize..20) {
            let mut cards = Vec::new();
            deal(hash, deck, hand, |c| cards.push(c));
            prop_assert_eq!(cards.len(), hand.min(deck));
            let mut sorted = cards.clone();
            sorted.sort_unstable();
            sorted.dedup();
            prop_assert_eq!(sorted.len(), cards.len());
            prop_assert!(cards.iter().all(|&c| c < deck));
            let mut again = Vec::new();
            deal(hash, deck, hand, |c| again.push(c));
            prop_assert_eq!(again, cards);
        }
    }

    #[test]
    fn reject_level_rejects_beyond_its_seats() {
        let (l, m) = level(Kind::Limited(None), 2);
        let a = match l.begin(1, &m) {
            Begin::Run(s) => s,
            _ => panic!("first runs"),
        };
        let _b = match l.begin(2, &m) {
            Begin::Run(s) => s,
            _ => panic!("second runs"),
        };
        assert!(matches!(
            l.begin(3, &m),
            Begin::Reject(RejectReason::ConcurrencyLimit)
        ));
        drop(a);
        assert!(matches!(l.begin(3, &m), Begin::Run(_)));
        assert_eq!(m.dispatched.get(), 3);
    }

    #[test]
    fn exempt_never_waits() {
        let (l, m) = level(Kind::Exempt, 0);
        let seats: Vec<_> = (0..100).map(|i| l.begin(i, &m)).collect();
        assert!(seats.iter().all(|b| matches!(b, Begin::Run(_))));
        assert_eq!(l.load(), (100, 0));
        drop(seats);
        assert_eq!(l.load(), (0, 0));
    }

    #[tokio::test]
    async fn queued_requests_get_freed_seats_and_full_queues_reject() {
        let (l, m) = level(queuing(1, 1, 2), 1);
        let Begin::Run(first) = l.begin(7, &m) else {
            panic!("runs")
        };
        let Begin::Wait(t1) = l.begin(7, &m) else {
            panic!("waits")
        };
        let Begin::Wait(_t2) = l.begin(7, &m) else {
            panic!("waits")
        };
        assert!(matches!(
            l.begin(7, &m),
            Begin::Reject(RejectReason::QueueFull)
        ));
        assert_eq!(l.load(), (1, 2));
        assert_eq!(m.inqueue.get(), 2);
        drop(first);
        let seat = t1.wait(Duration::from_secs(1)).await.expect("granted");
        assert_eq!(l.load(), (1, 1));
        drop(seat);
        assert_eq!(l.load(), (1, 0), "the second waiter got the seat");
    }

    #[tokio::test(start_paused = true)]
    async fn timed_out_and_dropped_tickets_leave_no_trace() {
        let (l, m) = level(queuing(4, 2, 10), 1);
        let Begin::Run(first) = l.begin(1, &m) else {
            panic!("runs")
        };
        let Begin::Wait(t1) = l.begin(2, &m) else {
            panic!("waits")
        };
        let Begin::Wait(t2) = l.begin(3, &m) else {
            panic!("waits")
        };
        assert!(matches!(
            t1.wait(Duration::from_secs(15)).await,
            Err(RejectReason::TimeOut)
        ));
        assert_eq!(l.load(), (1, 1));
        drop(t2);
        assert_eq!(l.load(), (1, 0));
        assert_eq!(m.inqueue.get(), 0);
        drop(first);
        assert_eq!(l.load(), (0, 0));
    }

    #[tokio::test]
    async fn a_grant_to_a_dropped_ticket_is_given_back() {
        let (l, m) = level(queuing(1, 1, 10), 1);
        let Begin::Run(first) = l.begin(1, &m) else {
            panic!("runs")
        };
        let Begin::Wait(t) = l.begin(1, &m) else {
            panic!("waits")
        };
        drop(first); // grants the seat to `t`
        assert_eq!(l.load(), (1, 0));
        drop(t);
        assert_eq!(l.load(), (0, 0));
    }

    #[tokio::test]
    async fn round_robin_serves_flows_alike() {
        // 8 queues, hand 1: a heavy flow and a light flow in separate
        // queues; the light one is served next, not after the heavy
        // backlog.
        let (l, m) = level(queuing(8, 1, 100), 1);
        let heavy = (0u64..)
            .find(|h| {
                let mut c = 0;
                deal(*h, 8, 1, |x| c = x);
                c == 0
            })
            .expect("hash");
        let light = (0u64..)
            .find(|h| {
                let mut c = 0;
                deal(*h, 8, 1, |x| c = x);
                c == 5
            })
            .expect("hash");
        let Begin::Run(first) = l.begin(heavy, &m) else {
            panic!("runs")
        };
        let mut heavies = Vec::new();
        for _ in 0..10 {
            let Begin::Wait(t) = l.begin(heavy, &m) else {
                panic!("waits")
            };
            heavies.push(t);
        }
        let Begin::Wait(polite) = l.begin(light, &m) else {
            panic!("waits")
        };
        drop(first); // the cursor is at queue 0: one heavy goes
        let h1 = heavies
            .remove(0)
            .wait(Duration::from_secs(1))
            .await
            .expect("granted");
        drop(h1); // next non-empty after queue 0 is the light queue
        let seat = polite
            .wait(Duration::from_secs(1))
            .await
            .expect("the light flow is next");
        drop(seat);
    }
}
