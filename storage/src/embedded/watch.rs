//! Watch streams of the embedded store.
//!
//! A watcher is a small state machine, advanced by [`Watcher::step`]:
//! - `Replay`: read the next chunk of the revision log (from `next`), up to
//!   the revision committed when the chunk was read;
//! - `Live`: take committed batches from the broadcast.
//!
//! The broadcast receiver is created *before* the first log read. A commit
//! is written to redb before it is broadcast, so every revision is either in
//! the log read or still ahead in the receiver; `next` drops duplicates.
//! When the receiver lags (the broadcast ring overwrote batches it had not
//! taken), the watcher goes back to `Replay` from `next`: a slow consumer
//! costs log reads, never writer time or unbounded memory. If its history
//! was compacted meanwhile, it ends with [`Error::Compacted`].

use std::collections::VecDeque;
use std::sync::Arc;
use std::sync::atomic::Ordering;

use futures::StreamExt;
use redb::ReadableDatabase;
use tokio::sync::broadcast;
use tokio::sync::broadcast::error::RecvError;

use super::{LOG, META, Shared, codec, db_err, logged_value};
use crate::{Error, Result, Revision, WatchEvent, WatchMessage, WatchStream};

/// Log entries read per replay step.
const REPLAY_CHUNK: usize = 1024;

#[derive(Clone, Copy, PartialEq, Eq)]
enum Phase {
    Replay,
    Live,
    Done,
}

struct Watcher {
    shared: Arc<Shared>,
    prefix: String,
    /// The next revision this watcher has not yet seen.
    next: Revision,
    rx: broadcast::Receiver<Arc<Vec<WatchEvent>>>,
    buffer: VecDeque<WatchEvent>,
    phase: Phase,
    /// [`crate::Store::request_progress`] calls.
    progress_requests: tokio::sync::watch::Receiver<u64>,
    /// A progress request not answered yet.
    progress_wanted: bool,
}

/// Starts a watch of `prefix` after `after_revision`.
pub(crate) fn start(shared: Arc<Shared>, prefix: String, after: Revision) -> Result<WatchStream> {
    let compacted = shared.compacted.load(Ordering::Acquire);
    let next = after.saturating_add(1).max(1);
    if next < compacted {
        return Err(Error::Compacted {
            requested: next,
            compacted,
        });
    }
    let rx = shared.events.subscribe();
    let mut progress_requests = shared.progress_requests.subscribe();
    progress_requests.mark_unchanged();
    let watcher = Watcher {
        progress_requests,
        progress_wanted: false,
        shared,
        prefix,
        next,
        rx,
        buffer: VecDeque::new(),
        phase: Phase::Replay,
    };
    Ok(futures::stream::unfold(watcher, |mut w| async move {
        let item = w.step().await?;
        Some((item, w))
    })
    .boxed())
}

impl Watcher {
    /// The next message, or `None` when the stream is over.
    async fn step(&mut self) -> Option<Result<WatchMessage>> {
        loop {
            if let Some(event) = self.buffer.pop_front() {
                return Some(Ok(WatchMessage::Event(event)));
            }
            match self.phase {
                Phase::Done => return None,
                Phase::Replay => {
                    if let Err(e) = self.replay_chunk() {
                        self.phase = Phase::Done;
                        return Some(Err(e));
                    }
                }
                Phase::Live => {
                    if self.progress_wanted && self.rx.is_empty() {
                        self.progress_wanted = false;
                        return Some(Ok(WatchMessage::Progress(self.next - 1)));
                    }
                    let received = tokio::select! {
                        biased;
                        r = tokio::time::timeout(self.shared.progress_interval, self.rx.recv()) => r,
                        changed = self.progress_requests.changed() => {
                            // A closed sender is a closed store: the
                            // broadcast ends the stream.
                            if changed.is_ok() {
                                self.progress_wanted = true;
                            }
                            continue;
                        }
                    };
                    match received {
                        Err(_idle) => {
                            if self.rx.is_empty() {
                                return Some(Ok(WatchMessage::Progress(self.next - 1)));
                            }
                        }
                        Ok(Ok(batch)) => self.take_batch(&batch),
                        Ok(Err(RecvError::Lagged(_))) => {
                            self.rx = self.rx.resubscribe();
                            self.phase = Phase::Replay;
                        }
                        // The store closed: end the stream cleanly.
                        Ok(Err(RecvError::Closed)) => self.phase = Phase::Done,
                    }
                }
            }
        }
    }

    fn take_batch(&mut self, batch: &[WatchEvent]) {
        for event in batch {
            let rev = event.revision();
            if rev < self.next {
                continue;
            }
            if rev > self.next {
                // A gap: something was missed; the log has it.
                self.phase = Phase::Replay;
                return;
            }
            self.next = rev + 1;
            if event.kv.key.starts_with(&self.prefix) {
                self.buffer.push_back(event.clone());
            }
        }
    }

    /// Reads up to [`REPLAY_CHUNK`] log entries from `next`; switches to
    /// `Live` once it has read everything committed.
    fn replay_chunk(&mut self) -> Result<()> {
        let txn = self.shared.db.begin_read().map_err(db_err)?;
        let meta = txn.open_table(META).map_err(db_err)?;
        let current = meta.get("rev").map_err(db_err)?.map_or(1, |g| g.value());
        let compacted = meta
            .get("compacted")
            .map_err(db_err)?
            .map_or(0, |g| g.value());
        if self.next < compacted {
            return Err(Error::Compacted {
                requested: self.next,
                compacted,
            });
        }
        if self.next > current {
            self.phase = Phase::Live;
            return Ok(());
        }
        let log = txn.open_table(LOG).map_err(db_err)?;
        let range = (self.next as u64)..=(current as u64);
        let mut read = 0;
        for entry in log.range(range).map_err(db_err)? {
            let (rev, bytes) = entry.map_err(db_err)?;
            let rev = rev.value() as Revision;
            let bytes = bytes.value();
            if codec::event_key(bytes)?.starts_with(self.prefix.as_bytes()) {
                let record = codec::decode_record(rev, bytes)?;
                let event = record.event(|prev| logged_value(&log, record.key, prev))?;
                self.buffer.push_back(event);
            }
            self.next = rev + 1;
            read += 1;
            if read == REPLAY_CHUNK {
                break;
            }
        }
        if read < REPLAY_CHUNK {
            // Everything up to `current` has been read (revision 1, the
            // empty store, has no log entry).
            self.next = self.next.max(current + 1);
            self.phase = Phase::Live;
        }
        Ok(())
    }
}
