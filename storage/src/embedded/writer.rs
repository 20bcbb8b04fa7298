//! The single writer thread: group commit.
//!
//! The thread blocks for one request, then drains up to `max_batch` more
//! that are already queued, applies them in order in one redb write
//! transaction and commits it durably. Only then does it publish the new
//! revision, broadcast the batch's events to watchers and answer the
//! callers. A request that fails its own check (AlreadyExists, Conflict, …)
//! changes nothing; a failed commit fails every request of the batch.

use std::sync::Arc;
use std::sync::atomic::Ordering;

use bytes::Bytes;
use redb::{ReadableTable, Table};
use tokio::sync::{mpsc, oneshot};

use super::{KV, LOG, META, Shared, codec, db_err};
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
            while let Some(first) = rx.blocking_recv() {
                batch.push(first);
                while batch.len() < max_batch {
                    match rx.try_recv() {
                        Ok(req) => batch.push(req),
                        Err(_) => break,
                    }
                }
                commit(&shared, &mut batch);
            }
        })
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
                _ => match change(&kv, op, rev + 1)? {
                    Err(e) => Err(e),
                    Ok((event, ok)) => {
                        rev += 1;
                        match event.kind {
                            EventKind::Put => {
                                let record = codec::encode_kv(&event.kv);
                                kv.insert(event.kv.key.as_bytes(), record.as_slice())
                                    .map_err(db_err)?;
                            }
                            EventKind::Delete => {
                                kv.remove(event.kv.key.as_bytes()).map_err(db_err)?;
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
        Some(v) => Some(codec::decode_kv(key.as_bytes(), v.value())?),
        None => None,
    };
    let answer = match (op, current) {
        (WriteOp::Create { .. }, Some(_)) => Err(Error::AlreadyExists { key: key.clone() }),
        (WriteOp::Create { value, .. }, None) => {
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
        (WriteOp::Update { .. } | WriteOp::Delete { .. }, None) => {
            Err(Error::NotFound { key: key.clone() })
        }
        (
            WriteOp::Update {
                value, expected, ..
            },
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
        (WriteOp::Delete { expected, .. }, Some(old)) => match expected {
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
        (WriteOp::Compact(_), _) => Err(Error::Unavailable("compact is not a change".into())),
    };
    Ok(answer)
}

/// Drops log entries below `target`. Same checks as etcd.
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
    log.retain_in(..(target as u64), |_, _| false)
        .map_err(db_err)?;
    Ok(Ok(WriteOk::Compacted))
}
