//! The embedded backend: redb on local disk, the single-node default.
//!
//! - **Writes** go to one writer thread ([`writer`]). It drains every queued
//!   request into one redb transaction and commits it with
//!   `Durability::Immediate` (group commit): many concurrent writes share
//!   one fsync, and each is acknowledged only after that commit.
//! - **Data** is a revision log table (`log`, one entry per revision,
//!   holding the change) and a key index (`kv`, live key → its revision
//!   counters). Each value is stored once, in the log record of the revision
//!   that wrote it ([`codec`]), so a write adds one value to the file, not
//!   two. The log serves reads, watch replay and reads at past revisions;
//!   [`crate::compactor`] trims its history to about five minutes, keeping
//!   the records that still hold a live value.
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

/// Live keys: key → encoded [`codec::Meta`]; the value is in `log`.
pub(crate) const KV: TableDefinition<&[u8], &[u8]> = TableDefinition::new("kv");
/// Revision log: revision → encoded change (with the value of a put).
pub(crate) const LOG: TableDefinition<u64, &[u8]> = TableDefinition::new("log");
/// `rev` (current revision), `compacted` (compaction point) and `format`
/// ([`codec::FORMAT`]).
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
    /// Bytes of redb's own page cache (reads and the write buffer). Pages
    /// beyond it are read from the file again (the OS page cache serves
    /// them); a server with a watch cache in front reads the store
    /// rarely, so it needs little of it.
    pub page_cache_bytes: usize,
    /// Keys that expire after their last write, deleted by a
    /// [`crate::expiry::Sweeper`] (see [`crate::expiry`] for the contract).
    pub expiry: Option<crate::Expiry>,
}

/// redb's default page cache, [`EmbeddedOptions::default`]'s.
pub const DEFAULT_PAGE_CACHE_BYTES: usize = 1 << 30;

impl Default for EmbeddedOptions {
    fn default() -> Self {
        EmbeddedOptions {
            retain_history: Some(crate::compactor::DEFAULT_RETAIN),
            progress_interval: Duration::from_secs(5),
            watch_buffer: 1024,
            max_batch: 4096,
            page_cache_bytes: DEFAULT_PAGE_CACHE_BYTES,
            expiry: None,
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
    /// Bumped by [`Store::request_progress`]: live watchers answer with a
    /// progress message.
    pub(crate) progress_requests: tokio::sync::watch::Sender<u64>,
}

/// The embedded store. Open it with [`EmbeddedStore::open`].
pub struct EmbeddedStore {
    shared: Arc<Shared>,
    /// `None` once closed. Lock order: taken alone, never held across `.await`.
    requests: Mutex<Option<mpsc::Sender<writer::Request>>>,
    writer: Mutex<Option<std::thread::JoinHandle<()>>>,
    /// The writer thread, woken after each request is queued: while it
    /// gathers a batch it parks instead of spinning.
    writer_thread: std::thread::Thread,
    compactor: Mutex<Option<tokio::task::JoinHandle<()>>>,
    /// The sweeper of [`EmbeddedOptions::expiry`], aborted on close.
    sweeper: Mutex<Option<tokio::task::JoinHandle<()>>>,
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
    /// process, unreadable, or written in another on-disk format.
    pub async fn open(path: &Path, opts: EmbeddedOptions) -> Result<Arc<EmbeddedStore>> {
        let path_display = path.display().to_string();
        let path = path.to_owned();
        let cache = opts.page_cache_bytes;
        let db = tokio::task::spawn_blocking(move || {
            redb::Builder::new().set_cache_size(cache).create(&path)
        })
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
            let format = meta.get("format").map_err(db_err)?.map(|g| g.value());
            let rev = match (rev, format) {
                (Some(rev), Some(codec::FORMAT)) => rev,
                (None, None) => {
                    meta.insert("rev", INITIAL_REVISION).map_err(db_err)?;
                    meta.insert("format", codec::FORMAT).map_err(db_err)?;
                    INITIAL_REVISION
                }
                (_, found) => {
                    return Err(Error::Unavailable(format!(
                        "embedded store: {} holds data in on-disk format {}, this build reads \
                         format {}; move it away to start empty",
                        path_display,
                        found.unwrap_or(1),
                        codec::FORMAT
                    )));
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
            progress_requests: tokio::sync::watch::Sender::new(0),
        });
        let (tx, rx) = mpsc::channel(opts.max_batch.max(1));
        let writer = writer::spawn(shared.clone(), rx, opts.max_batch.max(1))
            .map_err(|e| Error::Unavailable(format!("embedded store: writer thread: {e}")))?;
        let writer_thread = writer.thread().clone();
        let store = Arc::new(EmbeddedStore {
            shared,
            requests: Mutex::new(Some(tx)),
            writer: Mutex::new(Some(writer)),
            writer_thread,
            compactor: Mutex::new(None),
            sweeper: Mutex::new(None),
            closed: AtomicBool::new(false),
        });
        if let Some(retain) = opts.retain_history {
            let handle = crate::compactor::spawn(Arc::downgrade(&store), retain);
            if let Ok(mut slot) = store.compactor.lock() {
                *slot = Some(handle);
            }
        }
        if let Some(expiry) = opts.expiry {
            let handle = crate::expiry::Sweeper::spawn(Arc::downgrade(&store), expiry);
            if let Ok(mut slot) = store.sweeper.lock() {
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
        self.writer_thread.unpark();
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
        let meta = match table.get(key.as_bytes()).map_err(db_err)? {
            Some(v) => codec::decode_meta(v.value())?,
            None => return Err(Error::NotFound { key: key.into() }),
        };
        let log = txn.open_table(LOG).map_err(db_err)?;
        let value = logged_value(&log, key.as_bytes(), meta.mod_revision)?;
        Ok(meta.with_value(key.to_owned(), value))
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

    fn request_progress(&self) -> bool {
        self.shared
            .progress_requests
            .send_modify(|n| *n = n.wrapping_add(1));
        true
    }

    async fn close(&self) {
        if self.closed.swap(true, Ordering::AcqRel) {
            return;
        }
        for task in [&self.compactor, &self.sweeper] {
            if let Some(handle) = task.lock().ok().and_then(|mut c| c.take()) {
                handle.abort();
            }
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
        for task in [&mut self.compactor, &mut self.sweeper] {
            if let Some(handle) = task.get_mut().ok().and_then(|c| c.take()) {
                handle.abort();
            }
        }
    }
}

/// The value `key` was written with at `revision`: the value of its put
/// record in `log`.
///
/// Errors with [`Error::Unavailable`] if the record is missing or is not a
/// put of `key` (a corrupt store).
pub(crate) fn logged_value(
    log: &impl ReadableTable<u64, &'static [u8]>,
    key: &[u8],
    revision: Revision,
) -> Result<bytes::Bytes> {
    let rev = u64::try_from(revision).map_err(|_| codec::corrupt("negative revision"))?;
    match log.get(rev).map_err(db_err)? {
        Some(record) => Ok(bytes::Bytes::copy_from_slice(codec::put_value(
            key,
            record.value(),
        )?)),
        None => Err(codec::corrupt(&format!(
            "no log record at revision {revision} for a value of {}",
            String::from_utf8_lossy(key)
        ))),
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
    let log = txn.open_table(LOG).map_err(db_err)?;
    let mut overlay: BTreeMap<Vec<u8>, Option<KeyValue>> = BTreeMap::new();
    if at < current {
        let first = u64::try_from(at + 1).unwrap_or(0);
        for entry in log.range(first..).map_err(db_err)? {
            let (rev, bytes) = entry.map_err(db_err)?;
            let bytes = bytes.value();
            let key = codec::event_key(bytes)?;
            if !in_range(key) || overlay.contains_key(key) {
                continue;
            }
            let record = codec::decode_record(rev.value() as Revision, bytes)?;
            let old = match record.prev {
                None => None,
                Some(prev) => {
                    let value = logged_value(&log, key, prev.mod_revision)?;
                    Some(prev.with_value(codec::key_string(key)?, value))
                }
            };
            overlay.insert(key.to_vec(), old);
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
            let meta = codec::decode_meta(v.value())?;
            let value = logged_value(&log, k.value(), meta.mod_revision)?;
            items.push(meta.with_value(codec::key_string(k.value())?, value));
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

#[cfg(test)]
mod tests {
    use futures::StreamExt;

    use super::*;
    use crate::{EventKind, WatchMessage};

    fn options() -> EmbeddedOptions {
        EmbeddedOptions {
            retain_history: None,
            progress_interval: Duration::from_millis(100),
            ..Default::default()
        }
    }

    fn log_revisions(store: &EmbeddedStore) -> Vec<u64> {
        let txn = store.shared.db.begin_read().unwrap();
        let log = txn.open_table(LOG).unwrap();
        log.iter().unwrap().map(|e| e.unwrap().0.value()).collect()
    }

    /// `request_progress` makes a live watcher of an idle prefix report the
    /// store's revision at once, not after its periodic interval.
    #[tokio::test]
    async fn requested_progress_reaches_idle_watchers_at_once() {
        use futures::StreamExt;
        let dir = tempfile::tempdir().unwrap();
        let opts = EmbeddedOptions {
            retain_history: None,
            progress_interval: Duration::from_secs(3600),
            ..Default::default()
        };
        let store = EmbeddedStore::open(&dir.path().join("db"), opts)
            .await
            .unwrap();
        let start = store.current_revision().await.unwrap();
        let mut watch = store.watch("/idle/", start).await.unwrap();
        let busy = store.create("/busy/x", b"x").await.unwrap();
        let deadline = tokio::time::Instant::now() + Duration::from_secs(5);
        loop {
            store.request_progress();
            let next = tokio::time::timeout(Duration::from_millis(50), watch.next()).await;
            match next {
                Ok(Some(Ok(WatchMessage::Progress(r)))) if r >= busy.mod_revision => break,
                Ok(Some(Ok(WatchMessage::Progress(_)))) | Err(_) => {}
                other => panic!("unexpected {other:?}"),
            }
            assert!(tokio::time::Instant::now() < deadline, "no progress");
        }
    }

    /// Compaction drops superseded values and tombstones but keeps every
    /// record that still holds a live value or the previous value of a
    /// change after the compaction point.
    #[tokio::test]
    async fn compaction_keeps_live_values_and_drops_superseded_ones() {
        let dir = tempfile::tempdir().unwrap();
        let store = EmbeddedStore::open(&dir.path().join("db"), options())
            .await
            .unwrap();
        let a1 = store.create("/a", b"a1").await.unwrap(); // 2
        let b1 = store.create("/b", b"b1").await.unwrap(); // 3
        let a2 = store.update("/a", b"a2", a1.mod_revision).await.unwrap(); // 4
        let c1 = store.create("/c", b"c1").await.unwrap(); // 5
        let (_, c_del) = store.delete("/c", None).await.unwrap(); // 6
        let b2 = store.update("/b", b"b2", b1.mod_revision).await.unwrap(); // 7
        let a3 = store.update("/a", b"a3", a2.mod_revision).await.unwrap(); // 8
        assert_eq!(log_revisions(&store), vec![2, 3, 4, 5, 6, 7, 8]);

        store.compact(b2.mod_revision).await.unwrap();
        // a1 and c1 were superseded before 7, the delete at 6 is not needed;
        // a2 (previous value of the change at 8) and b1 (previous value of
        // the change at 7) stay, as does everything from 7 on.
        assert_eq!(log_revisions(&store), vec![3, 4, 7, 8]);
        assert_eq!(store.get("/a").await.unwrap(), a3);
        assert_eq!(store.get("/b").await.unwrap(), b2);
        let at = ListOptions {
            at_revision: b2.mod_revision,
            ..Default::default()
        };
        let page = store.list("/", at).await.unwrap();
        assert_eq!(page.items, vec![a2.clone(), b2.clone()]);

        let mut watch = store.watch("/", b2.mod_revision - 1).await.unwrap();
        let mut events = Vec::new();
        while events.len() < 2 {
            match watch.next().await.unwrap().unwrap() {
                WatchMessage::Event(e) => events.push(e),
                WatchMessage::Progress(_) => {}
            }
        }
        assert_eq!(events[0].kind, EventKind::Put);
        assert_eq!(events[0].kv, b2);
        assert_eq!(events[0].prev, Some(b1));
        assert_eq!(events[1].kv, a3);
        assert_eq!(events[1].prev, Some(a2));

        // At the newest revision, the change at 8 still needs a2 (its
        // previous value, for a watch from 7); b1 is superseded by 7.
        store.compact(a3.mod_revision).await.unwrap();
        assert_eq!(log_revisions(&store), vec![4, 7, 8]);
        assert_eq!(c_del, c1.mod_revision + 1);
        store.close().await;
        drop(watch);
        drop(store);

        // And they survive a reopen.
        let store = EmbeddedStore::open(&dir.path().join("db"), options())
            .await
            .unwrap();
        let all = store.list("/", ListOptions::default()).await.unwrap();
        assert_eq!(all.items, vec![a3, b2]);
        store.close().await;
    }

    /// A store written in another on-disk format is refused, not misread.
    #[tokio::test]
    async fn other_formats_are_refused() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("db");
        let store = EmbeddedStore::open(&path, options()).await.unwrap();
        store.create("/a", b"x").await.unwrap();
        store.close().await;
        drop(store);

        for format in [None, Some(1), Some(codec::FORMAT + 1)] {
            {
                let db = redb::Database::create(&path).unwrap();
                let txn = db.begin_write().unwrap();
                {
                    let mut meta = txn.open_table(META).unwrap();
                    match format {
                        None => drop(meta.remove("format").unwrap()),
                        Some(f) => drop(meta.insert("format", f).unwrap()),
                    }
                }
                txn.commit().unwrap();
            }
            match EmbeddedStore::open(&path, options()).await {
                Err(Error::Unavailable(msg)) => assert!(msg.contains("format"), "{msg}"),
                Err(e) => panic!("format {format:?}: unexpected error {e}"),
                Ok(_) => panic!("format {format:?}: opened"),
            }
        }
    }
}
