//! Automatic compaction: keep about `retain` of history, as kube-apiserver
//! does with `--etcd-compaction-interval` (5 minutes by default).
//!
//! Every `retain / 10` the compactor samples the current revision. It then
//! compacts to the newest sampled revision that is at least `retain` old, so
//! history is kept for between `retain` and `1.1 × retain`.

use std::collections::VecDeque;
use std::sync::Weak;
use std::time::Duration;

use tokio::task::JoinHandle;
use tokio::time::Instant;

use crate::{Error, Revision, Store};

/// How much history to keep. Five minutes, as kube-apiserver.
pub const DEFAULT_RETAIN: Duration = Duration::from_secs(300);

/// Starts the compactor for `store`. It stops by itself once the store is
/// dropped, and can be aborted through the handle.
pub fn spawn<S: Store>(store: Weak<S>, retain: Duration) -> JoinHandle<()> {
    let tick = (retain / 10).max(Duration::from_millis(10));
    tokio::spawn(async move {
        let mut samples: VecDeque<(Instant, Revision)> = VecDeque::new();
        let mut interval = tokio::time::interval(tick);
        interval.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        loop {
            interval.tick().await;
            let Some(store) = store.upgrade() else { return };
            let now = Instant::now();
            match store.current_revision().await {
                Ok(rev) => samples.push_back((now, rev)),
                Err(Error::Unavailable(_)) => return,
                Err(e) => tracing::warn!(error = %e, "compactor: reading the revision failed"),
            }
            if let Some(target) = due(&mut samples, now, retain) {
                match store.compact(target).await {
                    Ok(()) => tracing::debug!(revision = target, "compacted"),
                    // Someone (another Skein on the same etcd) got there first.
                    Err(Error::Compacted { .. }) => {}
                    Err(e) => tracing::warn!(error = %e, "compaction failed"),
                }
            }
        }
    })
}

/// Drops samples older than `retain` and returns the newest of them: the
/// revision to compact to, if any.
fn due(
    samples: &mut VecDeque<(Instant, Revision)>,
    now: Instant,
    retain: Duration,
) -> Option<Revision> {
    let mut target = None;
    while let Some(&(at, rev)) = samples.front() {
        if now.duration_since(at) < retain {
            break;
        }
        target = Some(rev);
        samples.pop_front();
    }
    target
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn picks_newest_sample_older_than_retain() {
        let t0 = Instant::now();
        let s = |secs: u64, rev| (t0 + Duration::from_secs(secs), rev);
        let mut samples: VecDeque<_> = [s(0, 10), s(30, 20), s(60, 30)].into();
        let retain = Duration::from_secs(300);
        assert_eq!(
            due(&mut samples, t0 + Duration::from_secs(299), retain),
            None
        );
        assert_eq!(
            due(&mut samples, t0 + Duration::from_secs(331), retain),
            Some(20)
        );
        assert_eq!(samples.len(), 1);
        assert_eq!(
            due(&mut samples, t0 + Duration::from_secs(400), retain),
            Some(30)
        );
        assert!(samples.is_empty());
    }
}
