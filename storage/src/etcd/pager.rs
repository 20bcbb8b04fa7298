//! Reading a key range in pages, all at one revision.
//!
//! One etcd range response holds every key-value pair it returns, and gRPC
//! caps the size of a response ([`super::EtcdOptions::max_response_bytes`]),
//! so a large namespace cannot come back in one response. [`RangeRead`]
//! reads a range as a sequence of limited `Range` calls:
//!
//! - the first page fixes the revision (the caller's `at_revision`, or the
//!   revision etcd served the first page at); every later page is read at
//!   that revision, so the pages join into one consistent snapshot;
//! - it stops at the caller's limit, and reports `more` as etcd does;
//! - page sizes follow the bytes seen so far ([`PageSize`]): about
//!   [`PAGE_BYTES`] per page, at most [`MAX_PAGE_KEYS`] keys, and a page
//!   etcd answers with a response over the receive limit is read again
//!   with half as many keys. One value is at most 1.5 MiB, so a page of one
//!   key always fits: there is no size at which a read starts failing;
//! - if the pinned revision is compacted between pages, the read fails with
//!   [`Error::Compacted`] carrying that revision.

use bytes::Bytes;
use etcd_client::GetOptions;

use super::{EtcdStore, Failure, Retry};
use crate::{Error, KeyValue, ListOptions, ListResult, MAX_VALUE_BYTES, Result, Revision, Store};

/// How many bytes of keys and values one page aims at.
pub const PAGE_BYTES: usize = 8 << 20;

/// The most keys one page asks for (kube-apiserver's own page cap).
pub const MAX_PAGE_KEYS: usize = 10_000;

/// Keys asked for by the first page, before any size is known. Lowered
/// when the receive limit could not hold that many values of
/// [`MAX_VALUE_BYTES`].
pub const FIRST_PAGE_KEYS: usize = 500;

/// Bytes a key-value pair costs on the wire beyond its key and value
/// (revisions, version, lease, protobuf framing), rounded up.
const KV_OVERHEAD: usize = 64;

/// A generous bound on a key's length, for the first page's size.
const KEY_ALLOWANCE: usize = 4096;

/// The number of keys the next page asks for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PageSize {
    keys: usize,
    page_bytes: usize,
}

impl PageSize {
    /// The first page's size under a receive limit of `max_response_bytes`:
    /// [`FIRST_PAGE_KEYS`], or fewer if that many values of the largest
    /// allowed size would not fit.
    pub fn new(max_response_bytes: usize) -> PageSize {
        let worst = MAX_VALUE_BYTES + KEY_ALLOWANCE + KV_OVERHEAD;
        PageSize {
            keys: (max_response_bytes / worst).clamp(1, FIRST_PAGE_KEYS),
            page_bytes: PAGE_BYTES.min(max_response_bytes / 4).max(1),
        }
    }

    /// Keys to ask for, given how many the caller still wants (`None`: all).
    pub fn keys(&self, remaining: Option<usize>) -> usize {
        remaining.map_or(self.keys, |r| r.min(self.keys)).max(1)
    }

    /// Sizes the next page after one of `keys` pairs and `bytes` of keys
    /// and values: [`PAGE_BYTES`] worth at the observed average size.
    pub fn observe(&mut self, keys: usize, bytes: usize) {
        if keys == 0 {
            return;
        }
        let average = bytes / keys + KV_OVERHEAD;
        self.keys = (self.page_bytes / average).clamp(1, MAX_PAGE_KEYS);
    }

    /// Halves the page after a response over the receive limit; `false` if
    /// the page is already one key.
    pub fn shrink(&mut self) -> bool {
        if self.keys <= 1 {
            return false;
        }
        self.keys /= 2;
        true
    }
}

/// One range read in progress. See the module documentation.
pub struct RangeRead {
    /// The next key to read (inclusive), with the store's prefix.
    start: Vec<u8>,
    /// The end of the range (exclusive), with the store's prefix.
    end: Vec<u8>,
    /// The revision every page is read at; 0 until the first page.
    revision: Revision,
    /// Keys the caller still wants; `None` for no limit.
    remaining: Option<usize>,
    size: PageSize,
    items: Vec<KeyValue>,
    more: bool,
    done: bool,
}

impl RangeRead {
    /// A read of `opts` under `prefix` (both without the store's prefix).
    pub fn new(store: &EtcdStore, prefix: &str, opts: &ListOptions) -> RangeRead {
        let full_prefix = store.full(prefix);
        let mut start = full_prefix.clone().into_bytes();
        if let Some(after) = &opts.start_after {
            let mut after = store.full(after).into_bytes();
            after.push(0);
            if after > start {
                start = after;
            }
        }
        // The empty full prefix means "every key": etcd spells that "\0".
        let end = crate::prefix_end(&full_prefix).unwrap_or_else(|| vec![0]);
        RangeRead {
            start,
            end,
            revision: opts.at_revision,
            remaining: (opts.limit > 0).then_some(opts.limit),
            size: PageSize::new(store.opts.max_response_bytes),
            items: Vec::new(),
            more: false,
            done: false,
        }
    }

    /// The revision the pages are pinned to (0 before the first page of a
    /// read at the latest revision).
    pub fn revision(&self) -> Revision {
        self.revision
    }

    /// Reads every page and returns the result.
    pub async fn run(mut self, store: &EtcdStore) -> Result<ListResult> {
        while self.next_page(store).await? {}
        Ok(self.finish())
    }

    /// Reads the next page. `Ok(false)` once the read is complete.
    pub async fn next_page(&mut self, store: &EtcdStore) -> Result<bool> {
        if self.done {
            return Ok(false);
        }
        let keys = self.size.keys(self.remaining);
        let mut get = GetOptions::new()
            .with_range(self.end.clone())
            .with_limit(keys as i64);
        if self.revision > 0 {
            get = get.with_revision(self.revision);
        }
        let read = |mut kv: etcd_client::KvClient| {
            let (start, get) = (self.start.clone(), get.clone());
            async move { kv.get(start, Some(get)).await }
        };
        let mut resp = match store.kv_try(Retry::Read, read).await {
            Ok(resp) => resp,
            Err(Failure::Etcd(e)) if response_too_large(&e) => {
                if self.size.shrink() {
                    tracing::debug!(keys, "etcd: range page over the receive limit; halving it");
                    return Ok(true);
                }
                return Err(Error::Unavailable(format!(
                    "etcd: one key-value pair exceeds the receive limit of {} bytes: {e}",
                    store.opts.max_response_bytes
                )));
            }
            Err(failure) => return Err(self.explain(store, failure.into_error()).await),
        };
        if self.revision == 0 {
            self.revision = super::header_revision(resp.header())?;
        }
        self.more = resp.more();
        let kvs = resp.take_kvs();
        let bytes = kvs.iter().map(|kv| kv.key().len() + kv.value().len()).sum();
        self.size.observe(kvs.len(), bytes);
        let got = kvs.len();
        let mut last = None;
        for kv in kvs {
            let (create_revision, mod_revision, version) =
                (kv.create_revision(), kv.mod_revision(), kv.version());
            let (key, value) = kv.into_key_value();
            self.items.push(KeyValue {
                key: store.strip(&key)?.to_owned(),
                value: Bytes::from(value),
                create_revision,
                mod_revision,
                version,
            });
            last = Some(key);
        }
        if let Some(remaining) = &mut self.remaining {
            *remaining = remaining.saturating_sub(got);
        }
        match last {
            Some(mut key) if self.more && self.remaining != Some(0) => {
                key.push(0);
                self.start = key;
            }
            // Done: no more keys, the caller's limit is reached, or an empty
            // page (which etcd never sends while `more` holds).
            _ => self.done = true,
        }
        Ok(!self.done)
    }

    /// The pages read so far, as one result.
    pub fn finish(self) -> ListResult {
        ListResult {
            items: self.items,
            revision: self.revision,
            more: self.more && self.remaining == Some(0),
        }
    }

    /// Completes a compaction or future-revision error with the revisions
    /// involved.
    async fn explain(&self, store: &EtcdStore, e: Error) -> Error {
        match e {
            Error::Compacted { .. } => Error::Compacted {
                requested: self.revision,
                compacted: store.compacted_revision().await.unwrap_or(0),
            },
            Error::FutureRevision { .. } => Error::FutureRevision {
                requested: self.revision,
                current: store.current_revision().await.unwrap_or(0),
            },
            e => e,
        }
    }
}

/// Whether the client refused a response over its receive limit (tonic's
/// "decoded message length too large").
fn response_too_large(e: &etcd_client::Error) -> bool {
    matches!(e, etcd_client::Error::GRpcStatus(s)
        if s.code() == tonic::Code::OutOfRange && s.message().contains("message length too large"))
}

#[cfg(test)]
mod tests {
    use super::*;

    const MIB: usize = 1 << 20;

    #[test]
    fn first_page_fits_the_receive_limit_at_the_largest_value() {
        let upstream = i32::MAX as usize;
        assert_eq!(PageSize::new(upstream).keys(None), FIRST_PAGE_KEYS);
        // 4 MiB (gRPC's default) holds two values of 1.5 MiB.
        assert_eq!(PageSize::new(4 * MIB).keys(None), 2);
        assert_eq!(PageSize::new(MIB).keys(None), 1);
        assert_eq!(PageSize::new(0).keys(None), 1);
    }

    #[test]
    fn keys_respect_the_callers_remaining_limit() {
        let size = PageSize::new(i32::MAX as usize);
        assert_eq!(size.keys(Some(7)), 7);
        assert_eq!(size.keys(Some(100_000)), FIRST_PAGE_KEYS);
        assert_eq!(size.keys(Some(0)), 1);
    }

    #[test]
    fn later_pages_aim_at_page_bytes() {
        let mut size = PageSize::new(i32::MAX as usize);
        // 1 MB values: 8 per page.
        size.observe(10, 10_000_000);
        assert_eq!(size.keys(None), PAGE_BYTES / (1_000_000 + KV_OVERHEAD));
        // Tiny values: capped.
        size.observe(100, 100);
        assert_eq!(size.keys(None), MAX_PAGE_KEYS);
        // An empty page changes nothing.
        size.observe(0, 0);
        assert_eq!(size.keys(None), MAX_PAGE_KEYS);
        // Values bigger than a page: one at a time.
        size.observe(1, 2 * PAGE_BYTES);
        assert_eq!(size.keys(None), 1);
    }

    #[test]
    fn a_small_receive_limit_shrinks_the_page_target() {
        let mut size = PageSize::new(4 * MIB);
        size.observe(2, 2_000_000);
        assert_eq!(
            size.keys(None),
            1,
            "a quarter of 4 MiB holds one 1 MB value"
        );
    }

    #[test]
    fn shrinking_halves_down_to_one_key() {
        let mut size = PageSize::new(i32::MAX as usize);
        size.observe(100, 100);
        let mut seen = vec![size.keys(None)];
        while size.shrink() {
            seen.push(size.keys(None));
        }
        assert_eq!(seen.first(), Some(&MAX_PAGE_KEYS));
        assert_eq!(seen.last(), Some(&1));
        assert!(seen.windows(2).all(|w| w[1] == w[0] / 2));
        assert!(!size.shrink());
    }
}
