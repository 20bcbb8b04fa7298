//! Values that cross the [`crate::Store`] boundary.

use std::pin::Pin;

use bytes::Bytes;
use futures::Stream;

/// A store revision (etcd's `int64` revision). Revision 0 means "latest"
/// where a revision is optional, and "no revision" elsewhere.
pub type Revision = i64;

/// The largest value the store accepts: etcd's default request limit of
/// 1.5 MiB. Bigger values fail with [`crate::Error::TooLarge`].
pub const MAX_VALUE_BYTES: usize = 1536 * 1024;

/// One key with its value and etcd's per-key revision counters.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct KeyValue {
    /// The key.
    pub key: String,
    /// The value bytes.
    pub value: Bytes,
    /// Revision of the write that created this generation of the key.
    pub create_revision: Revision,
    /// Revision of the last write to the key.
    pub mod_revision: Revision,
    /// Number of writes since the key was (re)created, starting at 1.
    pub version: i64,
}

/// How to read a range of keys. See [`crate::Store::list`].
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ListOptions {
    /// Read at this revision; 0 reads the latest state.
    pub at_revision: Revision,
    /// At most this many items; 0 means no limit.
    pub limit: usize,
    /// Only keys strictly greater than this one.
    pub start_after: Option<String>,
}

/// A page of keys. See [`crate::Store::list`].
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ListResult {
    /// The keys, in ascending key order.
    pub items: Vec<KeyValue>,
    /// The revision the page was read at.
    pub revision: Revision,
    /// Whether keys beyond this page exist (only possible with a limit).
    pub more: bool,
}

/// Whether a watch event is a write or a deletion.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EventKind {
    /// The key was created or updated.
    Put,
    /// The key was deleted.
    Delete,
}

/// One change to one key.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct WatchEvent {
    /// Put or Delete.
    pub kind: EventKind,
    /// For a Put, the new key-value pair. For a Delete, the key with an empty
    /// value, `mod_revision` set to the deletion's revision, and zero
    /// `create_revision` and `version` (as etcd reports it).
    pub kv: KeyValue,
    /// The pair before the change, if the key existed.
    pub prev: Option<KeyValue>,
}

impl WatchEvent {
    /// The revision of this change.
    pub fn revision(&self) -> Revision {
        self.kv.mod_revision
    }
}

/// What a watch stream yields.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum WatchMessage {
    /// A change under the watched prefix.
    Event(WatchEvent),
    /// Every change up to and including this revision has been delivered.
    Progress(Revision),
}

/// A watch: changes in revision order, or an error that ends it.
pub type WatchStream = Pin<Box<dyn Stream<Item = crate::Result<WatchMessage>> + Send>>;

/// The smallest key greater than every key starting with `prefix`, or `None`
/// if there is none (an empty or all-0xFF prefix). Same rule as etcd's
/// `clientv3.GetPrefixRangeEnd`.
pub fn prefix_end(prefix: &str) -> Option<Vec<u8>> {
    let mut end = prefix.as_bytes().to_vec();
    while let Some(last) = end.pop() {
        if last < 0xff {
            end.push(last + 1);
            return Some(end);
        }
    }
    None
}
