//! Coalesced reads of etcd's current revision.
//!
//! Every consistent LIST served by a watch cache first reads the store's
//! current revision (as kube-apiserver does): one linearizable etcd read
//! each. Under concurrent lists most of those reads are redundant. A
//! caller here waits for a read that *started after it arrived* (so the
//! revision covers every write acknowledged before its call, the contract
//! of [`crate::Store::current_revision`]); every caller waiting when a read
//! starts shares it. At most one read is in flight, so N concurrent
//! callers cost about two reads, not N.

use std::future::Future;
use std::sync::Mutex;

use tokio::sync::watch;

use crate::{Error, Result, Revision};

#[derive(Debug, Default)]
struct State {
    /// Generation of the last read started.
    started: u64,
    /// Generation of the last read finished, and its result.
    finished: u64,
    result: Option<Result<Revision>>,
    /// Whether a read is in flight.
    reading: bool,
}

/// See the module documentation.
#[derive(Debug)]
pub struct RevisionReads {
    state: Mutex<State>,
    /// Bumped whenever a read finishes or is abandoned.
    changed: watch::Sender<u64>,
}

impl Default for RevisionReads {
    fn default() -> Self {
        RevisionReads {
            state: Mutex::default(),
            changed: watch::Sender::new(0),
        }
    }
}

/// Ends the leader's read: publishes its result, or (if its caller went
/// away before the read ended) frees the slot for another leader.
struct Leader<'a> {
    reads: &'a RevisionReads,
    generation: u64,
    result: Option<Result<Revision>>,
}

impl Drop for Leader<'_> {
    fn drop(&mut self) {
        let mut s = self.reads.lock();
        s.reading = false;
        if let Some(result) = self.result.take() {
            s.finished = self.generation;
            s.result = Some(result);
        }
        drop(s);
        self.reads.changed.send_modify(|n| *n = n.wrapping_add(1));
    }
}

impl RevisionReads {
    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// The store's current revision, read by `read` (which must be a
    /// linearizable read) or taken from a read that started after this
    /// call did.
    pub async fn current<F, Fut>(&self, read: F) -> Result<Revision>
    where
        F: FnOnce() -> Fut,
        Fut: Future<Output = Result<Revision>>,
    {
        let mut changes = self.changed.subscribe();
        let need = self.lock().started + 1;
        // Wait for a shared result, or for the slot to lead a read.
        let generation = loop {
            {
                let mut s = self.lock();
                if s.finished >= need
                    && let Some(result) = &s.result
                {
                    return result.clone();
                }
                if !s.reading {
                    s.reading = true;
                    s.started += 1;
                    break s.started;
                }
            }
            if changes.changed().await.is_err() {
                return Err(Error::Unavailable("etcd: revision reads closed".into()));
            }
        };
        let mut leader = Leader {
            reads: self,
            generation,
            result: None,
        };
        let result = read().await;
        leader.result = Some(result.clone());
        result
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;
    use std::sync::atomic::{AtomicI64, AtomicUsize, Ordering};
    use std::time::Duration;

    use super::*;

    /// Callers that arrive while a read is in flight share the next one;
    /// every caller gets a revision read after it arrived.
    #[tokio::test]
    async fn concurrent_callers_share_reads_that_started_after_them() {
        let reads = Arc::new(RevisionReads::default());
        let revision = Arc::new(AtomicI64::new(10));
        let calls = Arc::new(AtomicUsize::new(0));
        let mut tasks = Vec::new();
        for i in 0..32 {
            let (reads, revision, calls) = (reads.clone(), revision.clone(), calls.clone());
            tasks.push(tokio::spawn(async move {
                // What this caller must see at least: writes done before it.
                let floor = revision.fetch_add(1, Ordering::SeqCst) + 1;
                let got = reads
                    .current(|| async {
                        calls.fetch_add(1, Ordering::SeqCst);
                        let at = revision.load(Ordering::SeqCst);
                        tokio::time::sleep(Duration::from_millis(20)).await;
                        Ok(at)
                    })
                    .await
                    .expect("read");
                assert!(got >= floor, "caller {i}: {got} < {floor}");
            }));
        }
        for t in tasks {
            t.await.expect("task");
        }
        let n = calls.load(Ordering::SeqCst);
        assert!(n < 32, "{n} reads for 32 callers");
    }

    /// A leader whose caller goes away frees the slot; the others go on.
    #[tokio::test]
    async fn an_abandoned_read_does_not_block_the_others() {
        let reads = Arc::new(RevisionReads::default());
        let leader = {
            let reads = reads.clone();
            tokio::spawn(async move {
                reads
                    .current(|| async {
                        tokio::time::sleep(Duration::from_secs(3600)).await;
                        Ok(1)
                    })
                    .await
            })
        };
        tokio::time::sleep(Duration::from_millis(20)).await;
        let follower = {
            let reads = reads.clone();
            tokio::spawn(async move { reads.current(|| async { Ok(7) }).await })
        };
        tokio::time::sleep(Duration::from_millis(20)).await;
        leader.abort();
        let got = tokio::time::timeout(Duration::from_secs(5), follower)
            .await
            .expect("the follower finishes")
            .expect("task");
        assert_eq!(got, Ok(7));
        // Errors are shared too, and the next caller reads again.
        let err = reads
            .current(|| async { Err(Error::Unavailable("down".into())) })
            .await;
        assert!(err.is_err());
        assert_eq!(reads.current(|| async { Ok(9) }).await, Ok(9));
    }
}
