//! What the history worker wrote and has not yet seen in its informers'
//! caches (upstream's controller expectations, by resourceVersion): an
//! owner is synced again only once the cache holds every history object
//! at least as new as the worker's own write (or no longer holds one it
//! deleted), so a stale cache never renumbers revisions or creates twice.
//! An expectation older than [`EXPECTATION_TIMEOUT`] is dropped (a missed
//! event must not stall the owner forever).
//!
//! Pure: time is passed in.

use std::time::{Duration, Instant};

use skein_apiserver::controllers::informer::ObjectKey;
use skein_workloads::expectations::Expectations as Tracker;

/// How long an expectation holds an owner back at most.
pub const EXPECTATION_TIMEOUT: Duration = Duration::from_secs(5);

/// One write: the object's name and the resourceVersion written (`None`:
/// deleted; the cached object must be gone or have another uid).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Expect {
    /// The history object's name.
    pub name: String,
    /// The written resourceVersion, or `None` for a delete (with the
    /// deleted object's uid in `uid`).
    pub resource_version: Option<i64>,
    /// The uid of the object written or deleted.
    pub uid: String,
}

/// Expectations per owner: the shared tracker
/// ([`skein_workloads::expectations`]) with writes checked by uid and
/// resourceVersion.
#[derive(Debug)]
pub struct Expectations(Tracker<ObjectKey, Expect>);

impl Default for Expectations {
    fn default() -> Self {
        Expectations(Tracker::new(EXPECTATION_TIMEOUT))
    }
}

impl Expectations {
    /// Records `writes` for `owner` at `now` (replacing older ones).
    pub fn expect(&mut self, owner: ObjectKey, writes: Vec<Expect>, now: Instant) {
        self.0.replace(owner, writes, now);
    }

    /// Forgets `owner` (it is gone).
    pub fn forget(&mut self, owner: &ObjectKey) {
        self.0.forget(owner);
    }

    /// Whether `owner` may be synced at `now`: every write is visible
    /// through `cached` (name → the cached object's uid and
    /// resourceVersion), or the expectations timed out. Satisfied or
    /// timed-out expectations are dropped.
    pub fn satisfied(
        &mut self,
        owner: &ObjectKey,
        now: Instant,
        cached: impl Fn(&str) -> Option<(String, i64)>,
    ) -> bool {
        self.0.satisfied(owner, now, |w| {
            match (w.resource_version, cached(&w.name)) {
                (Some(rv), Some((uid, cached_rv))) => uid != w.uid || cached_rv >= rv,
                (Some(_), None) => false,
                (None, Some((uid, _))) => uid != w.uid,
                (None, None) => true,
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key() -> ObjectKey {
        ObjectKey::new("ns", "web")
    }

    #[test]
    fn writes_hold_the_owner_until_the_cache_shows_them() {
        let mut e = Expectations::default();
        let t0 = Instant::now();
        assert!(e.satisfied(&key(), t0, |_| None), "nothing expected");
        e.expect(
            key(),
            vec![
                Expect {
                    name: "a".into(),
                    resource_version: Some(10),
                    uid: "ua".into(),
                },
                Expect {
                    name: "b".into(),
                    resource_version: None,
                    uid: "ub".into(),
                },
            ],
            t0,
        );
        let stale = |n: &str| match n {
            "a" => Some(("ua".to_owned(), 9)),
            _ => Some(("ub".to_owned(), 3)),
        };
        assert!(!e.satisfied(&key(), t0, stale));
        let half = |n: &str| match n {
            "a" => Some(("ua".to_owned(), 10)),
            _ => Some(("ub".to_owned(), 3)),
        };
        assert!(!e.satisfied(&key(), t0, half), "the delete is not seen yet");
        let fresh = |n: &str| (n == "a").then(|| ("ua".to_owned(), 12));
        assert!(e.satisfied(&key(), t0, fresh));
        assert!(
            e.satisfied(&key(), t0, stale),
            "satisfied expectations are dropped"
        );
    }

    #[test]
    fn expectations_time_out() {
        let mut e = Expectations::default();
        let t0 = Instant::now();
        e.expect(
            key(),
            vec![Expect {
                name: "a".into(),
                resource_version: Some(10),
                uid: "ua".into(),
            }],
            t0,
        );
        assert!(!e.satisfied(&key(), t0 + Duration::from_secs(1), |_| None));
        assert!(e.satisfied(&key(), t0 + EXPECTATION_TIMEOUT, |_| None));
        e.expect(
            key(),
            vec![Expect {
                name: "a".into(),
                resource_version: Some(1),
                uid: "u".into(),
            }],
            t0,
        );
        e.forget(&key());
        assert!(e.satisfied(&key(), t0, |_| None));
    }
}
