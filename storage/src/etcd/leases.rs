//! Leases for the keys of an [`crate::Expiry`] on etcd, as kube-apiserver's
//! lease manager (k8s.io/apiserver `storage/etcd3/lease_manager.go`): a
//! lease is granted for the TTL plus a reuse window (5 % of the TTL, at most
//! 60 s, in whole seconds) and attached to the writes of that window, at
//! most 1,000 of them, so a busy prefix costs etcd about one lease a minute
//! rather than one per write. Every key attached to a lease lives at least
//! the TTL after its write and at most the TTL plus the window.

use std::time::Duration;

use tokio::sync::Mutex;
use tokio::time::Instant;

/// Upstream's `LeaseReuseDurationSeconds`.
const MAX_REUSE_SECS: i64 = 60;
/// Upstream's `leaseReuseDurationPercent`, as a divisor (5 %).
const REUSE_DIVISOR: i64 = 20;
/// Upstream's `LeaseMaxObjectCount`.
const MAX_ATTACHED: u32 = 1000;

/// The lease manager of one TTL. One per store; it holds no process-wide
/// state.
pub(crate) struct Leases {
    /// The TTL in whole seconds (rounded up, at least 1).
    ttl_secs: i64,
    /// The reuse window in seconds.
    reuse_secs: i64,
    current: Mutex<Option<Granted>>,
}

/// The lease handed out last.
#[derive(Clone, Copy, Debug)]
struct Granted {
    id: i64,
    /// When etcd will let it expire (as seen from here: counted from
    /// before the grant was asked).
    expires: Instant,
    /// Writes it was handed to.
    attached: u32,
}

impl Leases {
    pub(crate) fn new(ttl: Duration) -> Leases {
        let secs = i64::try_from(ttl.as_secs()).unwrap_or(i64::MAX / 2);
        let ttl_secs = if ttl.subsec_nanos() > 0 {
            secs + 1
        } else {
            secs
        }
        .max(1);
        Leases {
            ttl_secs,
            reuse_secs: (ttl_secs / REUSE_DIVISOR).min(MAX_REUSE_SECS),
            current: Mutex::new(None),
        }
    }

    /// The lease to attach to a write made now: the current one if it
    /// outlives the TTL from now by no more than the reuse window and has
    /// room, else a new one from `grant(ttl_secs)` (which returns the
    /// lease id). Grants are serialized, so concurrent writes share one.
    pub(crate) async fn lease<F, Fut>(&self, grant: F) -> crate::Result<i64>
    where
        F: FnOnce(i64) -> Fut,
        Fut: std::future::Future<Output = crate::Result<i64>>,
    {
        self.lease_at(Instant::now(), grant).await
    }

    /// [`Leases::lease`] for a write made at `now`.
    async fn lease_at<F, Fut>(&self, now: Instant, grant: F) -> crate::Result<i64>
    where
        F: FnOnce(i64) -> Fut,
        Fut: std::future::Future<Output = crate::Result<i64>>,
    {
        let mut current = self.current.lock().await;
        if let Some(granted) = current.as_mut()
            && reusable(granted, now, self.ttl_secs, self.reuse_secs)
        {
            granted.attached += 1;
            return Ok(granted.id);
        }
        let ttl = self.ttl_secs + self.reuse_secs;
        let id = grant(ttl).await?;
        *current = Some(Granted {
            id,
            expires: now + secs(ttl),
            attached: 1,
        });
        Ok(id)
    }
}

fn secs(n: i64) -> Duration {
    Duration::from_secs(u64::try_from(n).unwrap_or(0))
}

/// Upstream's `valid && sufficient && count <= max`.
fn reusable(granted: &Granted, now: Instant, ttl_secs: i64, reuse_secs: i64) -> bool {
    let valid = now + secs(ttl_secs) < granted.expires;
    let sufficient = now + secs(ttl_secs + reuse_secs) > granted.expires;
    valid && sufficient && granted.attached < MAX_ATTACHED
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn windows_follow_upstream() {
        let l = Leases::new(Duration::from_secs(3600));
        assert_eq!((l.ttl_secs, l.reuse_secs), (3600, 60));
        let l = Leases::new(Duration::from_secs(600));
        assert_eq!((l.ttl_secs, l.reuse_secs), (600, 30));
        let l = Leases::new(Duration::from_secs(3));
        assert_eq!((l.ttl_secs, l.reuse_secs), (3, 0));
        let l = Leases::new(Duration::from_millis(1500));
        assert_eq!(l.ttl_secs, 2);
    }

    #[tokio::test]
    async fn a_lease_is_reused_within_its_window_only() {
        let l = Leases::new(Duration::from_secs(3600));
        let t0 = Instant::now();
        let grant = |id: i64| {
            move |ttl: i64| async move {
                assert_eq!(ttl, 3660);
                Ok(id)
            }
        };
        assert_eq!(l.lease_at(t0, grant(1)).await.ok(), Some(1));
        let t = t0 + Duration::from_secs(59);
        assert_eq!(l.lease_at(t, grant(2)).await.ok(), Some(1));
        // 60 s on, the lease would outlive a new write by exactly the TTL:
        // no longer valid.
        let t = t0 + Duration::from_secs(60);
        assert_eq!(l.lease_at(t, grant(3)).await.ok(), Some(3));
    }

    #[tokio::test]
    async fn a_lease_holds_at_most_1000_keys() {
        let l = Leases::new(Duration::from_secs(3600));
        let t0 = Instant::now();
        for _ in 0..MAX_ATTACHED {
            assert_eq!(l.lease_at(t0, |_| async { Ok(7) }).await.ok(), Some(7));
        }
        assert_eq!(l.lease_at(t0, |_| async { Ok(8) }).await.ok(), Some(8));
    }

    #[tokio::test]
    async fn short_ttls_get_a_lease_per_write() {
        let l = Leases::new(Duration::from_secs(3));
        let t0 = Instant::now();
        assert_eq!(l.lease_at(t0, |_| async { Ok(1) }).await.ok(), Some(1));
        assert_eq!(l.lease_at(t0, |_| async { Ok(2) }).await.ok(), Some(2));
    }
}
