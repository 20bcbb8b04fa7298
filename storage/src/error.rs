//! The storage error type: a closed set, translated once at the registry.

use crate::Revision;

/// Everything a [`crate::Store`] operation can fail with.
///
/// `NotFound`, `AlreadyExists`, `Conflict`, `Compacted`, `FutureRevision` and
/// `TooLarge` describe the request and are final. `Unavailable` means the
/// backend could not answer; the operation may or may not have happened only
/// if the error says so (a write whose outcome is unknown).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Error {
    /// The key does not exist.
    #[error("key not found: {key}")]
    NotFound {
        /// The key.
        key: String,
    },
    /// `create` found the key already present.
    #[error("key already exists: {key}")]
    AlreadyExists {
        /// The key.
        key: String,
    },
    /// A compare-and-swap saw another `mod_revision`.
    #[error("conflict on {key}: expected mod_revision {expected}, current {current}")]
    Conflict {
        /// The key.
        key: String,
        /// The revision the caller expected.
        expected: Revision,
        /// The key's current `mod_revision`.
        current: Revision,
    },
    /// The requested revision is older than the compaction point.
    #[error("required revision {requested} has been compacted (compacted to {compacted})")]
    Compacted {
        /// The revision asked for.
        requested: Revision,
        /// The oldest revision still available.
        compacted: Revision,
    },
    /// The requested revision is newer than the store's current revision.
    #[error("required revision {requested} is a future revision (current {current})")]
    FutureRevision {
        /// The revision asked for.
        requested: Revision,
        /// The current revision.
        current: Revision,
    },
    /// The value exceeds [`crate::MAX_VALUE_BYTES`].
    #[error("value of {size} bytes exceeds the limit of {limit} bytes")]
    TooLarge {
        /// The value's size.
        size: usize,
        /// The limit.
        limit: usize,
    },
    /// The backend is unreachable, closed or failed.
    #[error("storage unavailable: {0}")]
    Unavailable(String),
}

/// `Result` with [`Error`] as the default error.
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// Rejects values over [`crate::MAX_VALUE_BYTES`].
pub(crate) fn check_size(value: &[u8]) -> Result<()> {
    if value.len() > crate::MAX_VALUE_BYTES {
        return Err(Error::TooLarge {
            size: value.len(),
            limit: crate::MAX_VALUE_BYTES,
        });
    }
    Ok(())
}
