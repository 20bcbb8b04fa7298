//! The single writer thread: group commit.
//!
//! The thread blocks for one request, then drains up to `max_batch` more
//! that are already queued, applies them in order in one redb write
//! transaction and commits it durably. Only then does it publish the new
//! revision, broadcast the batch's events to watchers and answer the
//! callers. A request that fails its own check (AlreadyExists, Conflict, …)
//! changes nothing; a failed commit fails every request of the batch.
//!
//! **Gathering.** Callers that write in a loop come back right after their
//! answer. Draining only what is queued when a commit ends would split them
//! into two cohorts that alternate commits (each commit holding half of
//! them, each caller waiting for two fsyncs). So the thread remembers how
//! many callers the last commit answered plus how many queued meanwhile,
//! and before the next commit waits briefly ([`Gather`]) for that many
//! requests: a fraction of the last commit's time, and never longer than
//! [`GATHER_GAP`] without a new arrival, so that a lone caller never waits.
//! While it waits the thread is parked (callers unpark it after queueing),
//! so gathering costs no CPU that the callers need.

use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use bytes::Bytes;
use redb::{ReadableTable, Table};
use tokio::sync::{mpsc, oneshot};

use super::codec::Meta;
use super::{KV, LOG, META, Shared, codec, db_err, logged_value};
use crate::{Error, EventKind, KeyValue, Result, Revision, WatchEvent};

/// A write the thread performs.
pub(crate) enum WriteOp {
    Create {
        key: String,
        value: Bytes,
    },
    Update {
        key: String,
        value: Bytes,
        expected: Revision,
    },
    Delete {
        key: String,
        expected: Option<Revision>,
    },
    Compact(Revision),
}

/// What a successful write returns.
pub(crate) enum WriteOk {
    Kv(KeyValue),
    Deleted(KeyValue, Revision),
    Compacted,
}

/// A queued write and where to send its answer.
pub(crate) struct Request {
    pub(crate) op: WriteOp,
    pub(crate) reply: oneshot::Sender<Result<WriteOk>>,
}

/// Starts the writer thread. It exits when every sender is dropped, after
/// committing what was queued.
pub(crate) fn spawn(
    shared: Arc<Shared>,
    mut rx: mpsc::Receiver<Request>,
    max_batch: usize,
) -> std::io::Result<std::thread::JoinHandle<()>> {
    std::thread::Builder::new()
        .name("skein-store-writer".into())
        .spawn(move || {
            let mut batch = Vec::with_capacity(max_batch);
            let mut gather = Gather::default();
            while let Some(first) = rx.blocking_recv() {
                batch.push(first);
                drain(&mut rx, &mut batch, max_batch);
                gather.wait(&mut rx, &mut batch, max_batch);
                let started = Instant::now();
                let answered = batch.len();
                commit(&shared, &mut batch);
                gather.committed(answered, rx.len(), started.elapsed());
            }
        })
}

/// Longest pause between two arrivals while gathering a batch.
const GATHER_GAP: Duration = Duration::from_micros(50);
/// Longest gathering wait, whatever the commits cost.
const GATHER_MAX: Duration = Duration::from_millis(1);

/// How many requests to wait for before the next commit, and how long.
#[derive(Default)]
struct Gather {
    /// Callers expected back: those the last commit answered plus those
    /// that queued during it.
    expected: usize,
    /// Time budget: a quarter of the last commit's duration, so that waiting
    /// costs at most that fraction of throughput when nobody comes.
    budget: Duration,
}

impl Gather {
    fn committed(&mut self, answered: usize, queued: usize, took: Duration) {
        self.expected = answered.saturating_add(queued);
        self.budget = (took / 4).min(GATHER_MAX);
    }

    /// Adds requests to `batch` until it holds the expected number (or
    /// `max_batch`), the budget is spent, or none arrived for
    /// [`GATHER_GAP`].
    fn wait(&self, rx: &mut mpsc::Receiver<Request>, batch: &mut Vec<Request>, max_batch: usize) {
        let want = self.expected.min(max_batch);
        if batch.len() >= want {
            return;
        }
        let start = Instant::now();
        let mut last_arrival = start;
        while batch.len() < want {
            match rx.try_recv() {
                Ok(req) => {
                    batch.push(req);
                    last_arrival = Instant::now();
                }
                Err(mpsc::error::TryRecvError::Empty) => {
                    let now = Instant::now();
                    if now - start >= self.budget || now - last_arrival >= GATHER_GAP {
                        return;
                    }
                    // Sleep until a caller queues a request (it unparks
                    // this thread) or the wait is over.
                    let left = (self.budget.saturating_sub(now - start))
                        .min(GATHER_GAP.saturating_sub(now - last_arrival));
                    std::thread::park_timeout(left);
                }
                Err(mpsc::error::TryRecvError::Disconnected) => return,
            }
        }
    }
}

/// Moves what is queued into `batch`, up to `max_batch` requests.
fn drain(rx: &mut mpsc::Receiver<Request>, batch: &mut Vec<Request>, max_batch: usize) {
    while batch.len() < max_batch {
        match rx.try_recv() {
            Ok(req) => batch.push(req),
            Err(_) => break,
        }
    }
}

/// Applies and commits one batch, then answers every request in it.
fn commit(shared: &Shared, batch: &mut Vec<Request>) {
    let ops: Vec<&WriteOp> = batch.iter().map(|r| &r.op).collect();
    match apply(shared, &ops) {
        Ok((results, events, compacted)) => {
            if let Some(last) = events.last() {
                shared.revision.store(last.revision(), Ordering::Release);
            }
            if let Some(c) = compacted {
                shared.compacted.store(c, Ordering::Release);
            }
            if !events.is_empty() {
                // No receivers is fine: nobody is watching.
                let _ = shared.events.send(Arc::new(events));
            }
            for (req, result) in batch.drain(..).zip(results) {
                let _ = req.reply.send(result);
            }
        }
        Err(e) => {
            tracing::error!(error = %e, "embedded store: group commit failed");
            for req in batch.drain(..) {
                let _ = req.reply.send(Err(e.clone()));
            }
        }
    }
}

type Applied = (Vec<Result<WriteOk>>, Vec<WatchEvent>, Option<Revision>);

fn apply(shared: &Shared, ops: &[&WriteOp]) -> Result<Applied> {
    let mut txn = shared.db.begin_write().map_err(db_err)?;
    txn.set_durability(redb::Durability::Immediate)
        .map_err(db_err)?;
    let mut results = Vec::with_capacity(ops.len());
    let mut events = Vec::new();
    let mut new_compacted = None;
    {
        let mut kv = txn.open_table(KV).map_err(db_err)?;
        let mut log = txn.open_table(LOG).map_err(db_err)?;
        let mut meta = txn.open_table(META).map_err(db_err)?;
        let mut rev = meta.get("rev").map_err(db_err)?.map_or(1, |g| g.value());
        let mut compacted = meta
            .get("compacted")
            .map_err(db_err)?
            .map_or(0, |g| g.value());
        for op in ops {
            let outcome = match op {
                WriteOp::Compact(target) => {
                    let r = compact(&mut log, *target, rev, compacted)?;
                    if r.is_ok() {
                        compacted = *target;
                        new_compacted = Some(*target);
                    }
                    r
                }
                _ => match change(&kv, &log, op, rev + 1)? {
                    Err(e) => Err(e),
                    Ok((event, ok)) => {
                        rev += 1;
                        let key = event.kv.key.as_bytes();
                        match event.kind {
                            EventKind::Put => {
                                let meta = codec::encode_meta(&Meta {
                                    create_revision: event.kv.create_revision,
                                    mod_revision: event.kv.mod_revision,
                                    version: event.kv.version,
                                });
                                kv.insert(key, meta.as_slice()).map_err(db_err)?;
                            }
                            EventKind::Delete => {
                                kv.remove(key).map_err(db_err)?;
                            }
                        }
                        let entry = codec::encode_event(&event);
                        log.insert(rev as u64, entry.as_slice()).map_err(db_err)?;
                        events.push(event);
                        Ok(ok)
                    }
                },
            };
            results.push(outcome);
        }
        meta.insert("rev", rev).map_err(db_err)?;
        meta.insert("compacted", compacted).map_err(db_err)?;
    }
    txn.commit().map_err(db_err)?;
    Ok((results, events, new_compacted))
}

/// Checks one key write against the current state. The outer `Result` is a
/// storage failure (aborts the batch); the inner one is this request's
/// answer.
fn change(
    kv: &Table<&[u8], &[u8]>,
    log: &Table<u64, &[u8]>,
    op: &WriteOp,
    rev: Revision,
) -> Result<Result<(WatchEvent, WriteOk)>> {
    let key = match op {
        WriteOp::Create { key, .. } | WriteOp::Update { key, .. } | WriteOp::Delete { key, .. } => {
            key
        }
        WriteOp::Compact(_) => {
            return Ok(Err(Error::Unavailable("compact is not a change".into())));
        }
    };
    let current = match kv.get(key.as_bytes()).map_err(db_err)? {
        Some(v) => Some(codec::decode_meta(v.value())?),
        None => None,
    };
    // The previous pair with its value, for the event and the answer; a
    // create needs neither.
    let old = match (op, current) {
        (WriteOp::Update { .. } | WriteOp::Delete { .. }, Some(meta)) => {
            let value = logged_value(log, key.as_bytes(), meta.mod_revision)?;
            Some(meta.with_value(key.clone(), value))
        }
        _ => None,
    };
    let answer = match (op, current, old) {
        (WriteOp::Create { .. }, Some(_), _) => Err(Error::AlreadyExists { key: key.clone() }),
        (WriteOp::Create { value, .. }, None, _) => {
            let new = KeyValue {
                key: key.clone(),
                value: value.clone(),
                create_revision: rev,
                mod_revision: rev,
                version: 1,
            };
            Ok((
                WatchEvent {
                    kind: EventKind::Put,
                    kv: new.clone(),
                    prev: None,
                },
                WriteOk::Kv(new),
            ))
        }
        (WriteOp::Update { .. } | WriteOp::Delete { .. }, _, None) => {
            Err(Error::NotFound { key: key.clone() })
        }
        (
            WriteOp::Update {
                value, expected, ..
            },
            _,
            Some(old),
        ) => {
            if old.mod_revision != *expected {
                Err(Error::Conflict {
                    key: key.clone(),
                    expected: *expected,
                    current: old.mod_revision,
                })
            } else {
                let new = KeyValue {
                    key: key.clone(),
                    value: value.clone(),
                    create_revision: old.create_revision,
                    mod_revision: rev,
                    version: old.version + 1,
                };
                let event = WatchEvent {
                    kind: EventKind::Put,
                    kv: new.clone(),
                    prev: Some(old),
                };
                Ok((event, WriteOk::Kv(new)))
            }
        }
        (WriteOp::Delete { expected, .. }, _, Some(old)) => match expected {
            Some(e) if *e != old.mod_revision => Err(Error::Conflict {
                key: key.clone(),
                expected: *e,
                current: old.mod_revision,
            }),
            _ => {
                let tombstone = KeyValue {
                    key: key.clone(),
                    value: Bytes::new(),
                    create_revision: 0,
                    mod_revision: rev,
                    version: 0,
                };
                let event = WatchEvent {
                    kind: EventKind::Delete,
                    kv: tombstone,
                    prev: Some(old.clone()),
                };
                Ok((event, WriteOk::Deleted(old, rev)))
            }
        },
        (WriteOp::Compact(_), _, _) => Err(Error::Unavailable("compact is not a change".into())),
    };
    Ok(answer)
}

/// Compacts history to `target`, with etcd's checks: afterwards no
/// revision below `target` can be read or watched.
///
/// A log record below `target` is dropped once nothing at or after
/// `target` can need it: a delete record always; a put record once a later
/// change of its key below `target` superseded it (that change names it as
/// its previous pair). A put that is still its key's latest value below
/// `target` stays: it holds the value of the live key, or the previous
/// value of the key's first change at or after `target`. Records below the
/// previous compaction point were all checked by earlier compactions, so
/// only `[compacted, target)` is scanned.
fn compact(
    log: &mut Table<u64, &[u8]>,
    target: Revision,
    current: Revision,
    compacted: Revision,
) -> Result<Result<WriteOk>> {
    if target <= compacted {
        return Ok(Err(Error::Compacted {
            requested: target,
            compacted,
        }));
    }
    if target > current {
        return Ok(Err(Error::FutureRevision {
            requested: target,
            current,
        }));
    }
    let mut dead = Vec::new();
    let from = u64::try_from(compacted).unwrap_or(0);
    for entry in log.range(from..(target as u64)).map_err(db_err)? {
        let (rev, bytes) = entry.map_err(db_err)?;
        let rev = rev.value();
        let record = codec::decode_record(rev as Revision, bytes.value())?;
        if let Some(prev) = record.prev {
            dead.push(prev.mod_revision as u64);
        }
        if record.kind == EventKind::Delete {
            dead.push(rev);
        }
    }
    for rev in dead {
        log.remove(rev).map_err(db_err)?;
    }
    Ok(Ok(WriteOk::Compacted))
}
