//! Revisioned key-value storage with etcd's semantics.
//!
//! **API Boundary.** This crate knows nothing about Kubernetes: keys are
//! strings, values are bytes, and every change gets the next value of one
//! global, strictly increasing revision (etcd's `mod_revision`).
//!
//! Two backends implement [`Store`]:
//! - [`embedded::EmbeddedStore`]: redb on local disk, one writer task with
//!   group commit, and a revision log that serves watches and historic reads;
//! - [`etcd::EtcdStore`] (feature `etcd`): a real etcd through etcd-client.
//!
//! Either backend can make the keys of one prefix expire a fixed time
//! after their last write ([`expiry::Expiry`]; etcd's leases).
//!
//! [`model::Model`] is a pure reference model of the same semantics, used by
//! the property tests to check both backends.
//!
//! # Invariants
//! - Revisions strictly increase; one successful write is one revision.
//! - A write is acknowledged only after it is durable.
//! - A change is readable before its watch event is delivered.
//! - `watch(prefix, r)` delivers every change with revision > r under the
//!   prefix, in order, exactly once, or fails with [`Error::Compacted`].
//! - A failed operation changes nothing.

pub mod compactor;
pub mod embedded;
mod error;
#[cfg(feature = "etcd")]
pub mod etcd;
pub mod expiry;
mod kv;
pub mod model;

pub use error::{Error, Result};
pub use expiry::Expiry;
pub use kv::{
    EventKind, KeyValue, ListOptions, ListResult, MAX_VALUE_BYTES, Revision, WatchEvent,
    WatchMessage, WatchStream, prefix_end,
};

use async_trait::async_trait;

/// A key prefix that holds nothing, read by [`Store::check_history`].
const HISTORY_PROBE: &str = "\u{0}history-probe/";

/// A revisioned key-value store with etcd's semantics.
///
/// Every method is atomic: it either fully happens or returns an error and
/// changes nothing.
#[async_trait]
pub trait Store: Send + Sync + 'static {
    /// Reads the latest value of `key`.
    ///
    /// Errors: [`Error::NotFound`] if the key does not exist.
    async fn get(&self, key: &str) -> Result<KeyValue>;

    /// Lists keys that start with `prefix`, in key order.
    ///
    /// `opts.at_revision` pins the read to a past revision (0 = latest);
    /// `opts.start_after` resumes after a key; `opts.limit` (0 = no limit)
    /// bounds the page. The result's `revision` is the revision the read was
    /// served at: pass it back as `at_revision` for the next page so that all
    /// pages come from one consistent snapshot.
    ///
    /// Errors: [`Error::Compacted`] if `at_revision` is older than the
    /// compacted revision, [`Error::FutureRevision`] if it is newer than the
    /// current one.
    async fn list(&self, prefix: &str, opts: ListOptions) -> Result<ListResult>;

    /// Creates `key`; fails with [`Error::AlreadyExists`] if it exists.
    async fn create(&self, key: &str, value: &[u8]) -> Result<KeyValue>;

    /// Replaces `key` if its `mod_revision` equals `expected_mod_revision`
    /// (compare-and-swap).
    ///
    /// Errors: [`Error::NotFound`] if the key does not exist,
    /// [`Error::Conflict`] (carrying the current `mod_revision`) if it
    /// changed.
    async fn update(
        &self,
        key: &str,
        value: &[u8],
        expected_mod_revision: Revision,
    ) -> Result<KeyValue>;

    /// Deletes `key`, if `expected_mod_revision` is `None` or equals its
    /// current `mod_revision`. Returns the deleted key-value pair and the
    /// revision of the deletion itself.
    ///
    /// Errors: [`Error::NotFound`], [`Error::Conflict`].
    async fn delete(
        &self,
        key: &str,
        expected_mod_revision: Option<Revision>,
    ) -> Result<(KeyValue, Revision)>;

    /// Watches every key under `prefix` for changes with a revision greater
    /// than `after_revision`.
    ///
    /// The stream first replays history after `after_revision`, then
    /// follows live changes. It yields [`WatchMessage::Progress`] from time
    /// to time so that idle watchers learn the current revision.
    ///
    /// Errors: [`Error::Compacted`], either at once or in the stream, when
    /// the history the watcher needs is gone (including a watcher that fell
    /// so far behind that its history was compacted).
    async fn watch(&self, prefix: &str, after_revision: Revision) -> Result<WatchStream>;

    /// Succeeds when the history after `after` is still held, so that
    /// `watch(_, after)` and reads at `after + 1` would not fail with
    /// [`Error::Compacted`]. A cache that holds events the store has
    /// compacted asks this before serving a watch from the past, so that
    /// clients get the 410 the store would give. One cheap read of a key
    /// range that holds nothing (the default asks `list` for it, which
    /// every backend checks against its compaction point, including
    /// compactions by other clients of a shared etcd).
    ///
    /// Errors: [`Error::Compacted`], [`Error::FutureRevision`] if `after`
    /// is newer than the current revision.
    async fn check_history(&self, after: Revision) -> Result<()> {
        let opts = ListOptions {
            at_revision: after.saturating_add(1).max(1),
            limit: 1,
            ..ListOptions::default()
        };
        self.list(HISTORY_PROBE, opts).await.map(|_| ())
    }

    /// Discards history older than `revision`. Reads and watches from
    /// revisions below it then fail with [`Error::Compacted`].
    ///
    /// Compacting to a revision at or below the current compaction point is
    /// a no-op; a revision above the current one is [`Error::FutureRevision`].
    async fn compact(&self, revision: Revision) -> Result<()>;

    /// The store's current revision (the revision of the newest change).
    async fn current_revision(&self) -> Result<Revision>;

    /// Asks every live watch to report its progress soon
    /// ([`WatchMessage::Progress`] with the revision it has delivered up
    /// to), as etcd's `RequestProgress`. A watch of an idle prefix then
    /// learns the store's revision without waiting for its periodic
    /// progress message: a watch cache waiting for a consistent read calls
    /// this. A hint only: it never fails, a watch that is replaying or has
    /// undelivered events may answer later.
    ///
    /// Returns whether the backend answers such requests, each answer
    /// ordered after the events it covers. `false` (the default) means no
    /// answer will come beyond the periodic messages: a reader that needs
    /// the current revision must read the store.
    fn request_progress(&self) -> bool {
        false
    }

    /// Whether the value stored at `key` with `mod_revision` would be
    /// stored differently if written again now, though it reads the same
    /// (a decorator that transforms values changed its write transformer:
    /// a new encryption key). Callers that skip writes which change
    /// nothing write such values anyway. Backends store bytes as given
    /// and answer `false` (the default); decorators answer for their own
    /// transformation and otherwise ask the store they wrap.
    async fn needs_rewrite(&self, key: &str, mod_revision: Revision) -> Result<bool> {
        let _ = (key, mod_revision);
        Ok(false)
    }

    /// Flushes and stops background work. Later calls fail with
    /// [`Error::Unavailable`]. Idempotent.
    async fn close(&self);
}
