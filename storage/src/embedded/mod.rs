//! The embedded backend: redb on local disk, the single-node default.
//!
//! - **Writes** go to one writer thread ([`writer`]). It drains every queued
//!   request into one redb transaction and commits it with
//!   `Durability::Immediate` (group commit): many concurrent writes share
//!   one fsync, and each is acknowledged only after that commit.
//! - **History** is a revision log table (`log`, one entry per revision,
//!   holding the change and the previous value). It serves watch replay and
//!   reads at past revisions; [`crate::compactor`] trims it to about five
//!   minutes.
//! - **Watches** ([`watch`]) replay from the log, then follow a broadcast of
//!   committed batches. A watcher that falls behind the broadcast goes back
//!   to the log, so it never blocks writers or holds memory; if its history
//!   was compacted meanwhile it is cut off with [`Error::Compacted`].
//!
//! Reads run on the caller's task: redb reads are short and never wait for
//! the writer (MVCC snapshots).

mod codec;
mod watch;
mod writer;

use std::collections::BTreeMap;
use std::ops::Bound;
use std::path::Path;
use std::sync::atomic::{AtomicBool, AtomicI64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use async_trait::async_trait;
use redb::{ReadableDatabase, ReadableTable, TableDefinition};
use tokio::sync::{broadcast, mpsc, oneshot};

use crate::{
    Error, KeyValue, ListOptions, ListResult, Result, Revision, Store, WatchStream, prefix_end,
};
use writer::{WriteOk, WriteOp};

/// Live keys: key → encoded [`KeyValue`] meta + value.
pub(crate) const KV: TableDefinition<&[u8], &[u8]> = TableDefinition::new("kv");
/// Revision log: revision → encoded change.
pub(crate) const LOG: TableDefinition<u64, &[u8]> = TableDefinition::new("log");
/// `rev` (current revision) and `compacted` (compaction point).
pub(crate) const META: TableDefinition<&str, i64> = TableDefinition::new("meta");

/// Revision of an empty store, as for a new etcd.
const INITIAL_REVISION: Revision = 1;

/// Tuning for [`EmbeddedStore`].
#[derive(Clone, Debug)]
pub struct EmbeddedOptions {
    /// Keep about this much history; `None` disables automatic compaction.
    pub retain_history: Option<Duration>,
    /// An idle watcher gets a progress message this often.
    pub progress_interval: Duration,
    /// Committed batches a watcher may lag behind before it falls back to
    /// reading the log.
    pub watch_buffer: usize,
    /// Most writes in one group commit.
    pub max_batch: usize,
}

impl Default for EmbeddedOptions {
    fn default() -> Self {
        EmbeddedOptions {
            retain_history: Some(crate::compactor::DEFAULT_RETAIN),
            progress_interval: Duration::from_secs(5),
            watch_buffer: 1024,
            max_batch: 4096,
        }
    }
}

/// State shared by the store handle, the writer thread and the watchers.
pub(crate) struct Shared {
    pub(crate) db: redb::Database,
    /// Revision of the newest committed write.
    pub(crate) revision: AtomicI64,
    /// Current compaction point.
    pub(crate) compacted: AtomicI64,
    /// Committed batches, sent after each commit.
    pub(crate) events: broadcast::Sender<Arc<Vec<crate::WatchEvent>>>,
    pub(crate) progress_interval: Duration,
}

/// The embedded store. Open it with [`EmbeddedStore::open`].
pub struct EmbeddedStore {
    shared: Arc<Shared>,
    /// `None` once closed. Lock order: taken alone, never held across `.await`.
    requests: Mutex<Option<mpsc::Sender<writer::Request>>>,
    writer: Mutex<Option<std::thread::JoinHandle<()>>>,
    compactor: Mutex<Option<tokio::task::JoinHandle<()>>>,
    closed: AtomicBool,
}

fn db_err(e: impl Into<redb::Error>) -> Error {
    Error::Unavailable(format!("embedded store: {}", e.into()))
}

impl EmbeddedStore {
    /// Opens (or creates) the store in the file `path`.
    ///
    /// Must be called inside a Tokio runtime (it starts the compactor).
    /// Errors with [`Error::Unavailable`] if the file is locked by another
    /// process or unreadable.
    pub async fn open(path: &Path, opts: EmbeddedOptions) -> Result<Arc<EmbeddedStore>> {
        let path = path.to_owned();
        let db = tokio::task::spawn_blocking(move || redb::Database::create(&path))
            .await
            .map_err(|e| Error::Unavailable(format!("embedded store: open: {e}")))?
            .map_err(db_err)?;
        // Create the tables and read the persisted counters.
        let txn = db.begin_write().map_err(db_err)?;
        let (revision, compacted) = {
            txn.open_table(KV).map_err(db_err)?;
            txn.open_table(LOG).map_err(db_err)?;
            let mut meta = txn.open_table(META).map_err(db_err)?;
            let rev = meta.get("rev").map_err(db_err)?.map(|g| g.value());
            let rev = match rev {
                Some(rev) => rev,
                None => {
                    meta.insert("rev", INITIAL_REVISION).map_err(db_err)?;
                    INITIAL_REVISION
                }
            };
            let compacted = meta
                .get("compacted")
                .map_err(db_err)?
                .map_or(0, |g| g.value());
            (rev, compacted)
        };
        txn.commit().map_err(db_err)?;

        let (events, _) = broadcast::channel(opts.watch_buffer.max(1));
        let shared = Arc::new(Shared {
            db,
            revision: AtomicI64::new(revision),
            compacted: AtomicI64::new(compacted),
            events,
            progress_interval: opts.progress_interval,
        });
        let (tx, rx) = mpsc::channel(opts.max_batch.max(1));
        let writer = writer::spawn(shared.clone(), rx, opts.max_batch.max(1))
            .map_err(|e| Error::Unavailable(format!("embedded store: writer thread: {e}")))?;
        let store = Arc::new(EmbeddedStore {
            shared,
            requests: Mutex::new(Some(tx)),
            writer: Mutex::new(Some(writer)),
            compactor: Mutex::new(None),
            closed: AtomicBool::new(false),
        });
        if let Some(retain) = opts.retain_history {
            let handle = crate::compactor::spawn(Arc::downgrade(&store), retain);
            if let Ok(mut slot) = store.compactor.lock() {
                *slot = Some(handle);
            }
        }
        Ok(store)
    }

    async fn write(&self, op: WriteOp) -> Result<WriteOk> {
        let sender = self
            .requests
            .lock()
            .ok()
            .and_then(|guard| guard.clone())
            .ok_or_else(closed)?;
        let (reply, rx) = oneshot::channel();
        sender
            .send(writer::Request { op, reply })
            .await
            .map_err(|_| closed())?;
        rx.await.map_err(|_| closed())?
    }

    fn check_open(&self) -> Result<()> {
        if self.closed.load(Ordering::Acquire) {
            return Err(closed());
        }
        Ok(())
    }
}

fn closed() -> Error {
    Error::Unavailable("embedded store is closed".into())
}

fn unexpected(what: &str) -> Error {
    Error::Unavailable(format!("embedded store: unexpected writer reply to {what}"))
}

#[async_trait]
impl Store for EmbeddedStore {
    async fn get(&self, key: &str) -> Result<KeyValue> {
        self.check_open()?;
        let txn = self.shared.db.begin_read().map_err(db_err)?;
        let table = txn.open_table(KV).map_err(db_err)?;
        let value = table.get(key.as_bytes()).map_err(db_err)?;
        match value {
            Some(v) => codec::decode_kv(key.as_bytes(), v.value()),
            None => Err(Error::NotFound { key: key.into() }),
        }
    }

    async fn list(&self, prefix: &str, opts: ListOptions) -> Result<ListResult> {
        self.check_open()?;
        list(&self.shared.db, prefix, &opts)
    }

    async fn create(&self, key: &str, value: &[u8]) -> Result<KeyValue> {
        self.check_open()?;
        crate::error::check_size(value)?;
        let op = WriteOp::Create {
            key: key.into(),
            value: value.to_vec().into(),
        };
        match self.write(op).await? {
            WriteOk::Kv(kv) => Ok(kv),
            _ => Err(unexpected("create")),
        }
    }

    async fn update(&self, key: &str, value: &[u8], expected: Revision) -> Result<KeyValue> {
        self.check_open()?;
        crate::error::check_size(value)?;
        let op = WriteOp::Update {
            key: key.into(),
            value: value.to_vec().into(),
            expected,
        };
        match self.write(op).await? {
            WriteOk::Kv(kv) => Ok(kv),
            _ => Err(unexpected("update")),
        }
    }

    async fn delete(&self, key: &str, expected: Option<Revision>) -> Result<(KeyValue, Revision)> {
        self.check_open()?;
        match self
            .write(WriteOp::Delete {
                key: key.into(),
                expected,
            })
            .await?
        {
            WriteOk::Deleted(kv, rev) => Ok((kv, rev)),
            _ => Err(unexpected("delete")),
        }
    }

    async fn watch(&self, prefix: &str, after_revision: Revision) -> Result<WatchStream> {
        self.check_open()?;
        watch::start(self.shared.clone(), prefix.to_owned(), after_revision)
    }

    async fn compact(&self, revision: Revision) -> Result<()> {
        self.check_open()?;
        match self.write(WriteOp::Compact(revision)).await? {
            WriteOk::Compacted => Ok(()),
            _ => Err(unexpected("compact")),
        }
    }

    async fn current_revision(&self) -> Result<Revision> {
        self.check_open()?;
        Ok(self.shared.revision.load(Ordering::Acquire))
    }

    async fn close(&self) {
        if self.closed.swap(true, Ordering::AcqRel) {
            return;
        }
        if let Some(handle) = self.compactor.lock().ok().and_then(|mut c| c.take()) {
            handle.abort();
        }
        // Dropping the sender lets the writer drain what is queued and exit.
        if let Ok(mut requests) = self.requests.lock() {
            requests.take();
        }
        let writer = self.writer.lock().ok().and_then(|mut w| w.take());
        if let Some(writer) = writer {
            let _ = tokio::task::spawn_blocking(move || writer.join()).await;
        }
    }
}

impl Drop for EmbeddedStore {
    fn drop(&mut self) {
        if let Some(handle) = self.compactor.get_mut().ok().and_then(|c| c.take()) {
            handle.abort();
        }
    }
}

/// Reads a page of `prefix` at `opts.at_revision` from one snapshot.
///
/// A past revision is served from the live table plus an overlay built from
/// the log: for each key changed after `at`, its value at `at` is the `prev`
/// of the first logged change after `at`.
fn list(db: &redb::Database, prefix: &str, opts: &ListOptions) -> Result<ListResult> {
    let txn = db.begin_read().map_err(db_err)?;
    let meta = txn.open_table(META).map_err(db_err)?;
    let current = meta
        .get("rev")
        .map_err(db_err)?
        .map_or(INITIAL_REVISION, |g| g.value());
    let compacted = meta
        .get("compacted")
        .map_err(db_err)?
        .map_or(0, |g| g.value());
    let at = if opts.at_revision == 0 {
        current
    } else {
        opts.at_revision
    };
    if at > current {
        return Err(Error::FutureRevision {
            requested: at,
            current,
        });
    }
    if at < compacted {
        return Err(Error::Compacted {
            requested: at,
            compacted,
        });
    }

    let mut start = prefix.as_bytes().to_vec();
    if let Some(after) = &opts.start_after {
        let mut after = after.as_bytes().to_vec();
        after.push(0);
        if after > start {
            start = after;
        }
    }
    let end = prefix_end(prefix);
    let in_range = |k: &[u8]| k >= start.as_slice() && end.as_deref().is_none_or(|e| k < e);

    // Keys changed after `at`, with their value at `at` (None = absent).
    let mut overlay: BTreeMap<Vec<u8>, Option<KeyValue>> = BTreeMap::new();
    if at < current {
        let log = txn.open_table(LOG).map_err(db_err)?;
        let first = u64::try_from(at + 1).unwrap_or(0);
        for entry in log.range(first..).map_err(db_err)? {
            let (rev, bytes) = entry.map_err(db_err)?;
            let bytes = bytes.value();
            let key = codec::event_key(bytes)?;
            if !in_range(key) || overlay.contains_key(key) {
                continue;
            }
            let event = codec::decode_event(rev.value() as Revision, bytes)?;
            overlay.insert(key.to_vec(), event.prev);
        }
    }

    let kv = txn.open_table(KV).map_err(db_err)?;
    let upper = match &end {
        Some(e) => Bound::Excluded(e.as_slice()),
        None => Bound::Unbounded,
    };
    let live = kv
        .range::<&[u8]>((Bound::Included(start.as_slice()), upper))
        .map_err(db_err)?;
    let want = if opts.limit == 0 {
        usize::MAX
    } else {
        opts.limit.saturating_add(1)
    };
    let mut items = Vec::new();
    let mut changed = overlay.iter().peekable();
    let mut live = live.peekable();
    while items.len() < want {
        // Next live key that the overlay does not replace.
        let next_live = loop {
            match live.peek() {
                None => break None,
                Some(Ok((k, _))) if overlay.contains_key(k.value()) => {
                    live.next();
                }
                Some(Ok((k, _))) => break Some(k.value().to_vec()),
                Some(Err(_)) => match live.next() {
                    Some(Err(e)) => return Err(db_err(e)),
                    _ => continue,
                },
            }
        };
        let take_overlay = match (&next_live, changed.peek()) {
            (None, None) => break,
            (Some(_), None) => false,
            (None, Some(_)) => true,
            (Some(l), Some((o, _))) => o.as_slice() < l.as_slice(),
        };
        if take_overlay {
            if let Some((_, Some(old))) = changed.next() {
                items.push(old.clone());
            }
        } else if let Some(Ok((k, v))) = live.next() {
            items.push(codec::decode_kv(k.value(), v.value())?);
        }
    }
    let more = opts.limit > 0 && items.len() > opts.limit;
    if more {
        items.truncate(opts.limit);
    }
    Ok(ListResult {
        items,
        revision: at,
        more,
    })
}
