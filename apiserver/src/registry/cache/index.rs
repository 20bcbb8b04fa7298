//! The cache's index: every live key under the cached prefix, with its
//! stored bytes, as of the cache's revision.
//!
//! Pure: applying an event is a map insert or remove, no I/O.

use std::borrow::Borrow;
use std::cmp::Ordering;
use std::collections::BTreeSet;
use std::sync::{Arc, OnceLock};

use skein_storage::{EventKind, KeyValue, WatchEvent};

use crate::registry::filter::Attrs;
use crate::wire::Item;

/// One cached object: its stored pair and, once a list asked for it, its
/// encoding as a list item (so later lists splice bytes instead of
/// re-encoding), which shares all but its first fields with the stored
/// bytes ([`Item`]). A new version of the object is a new entry, so the
/// encoding never goes stale.
#[derive(Debug)]
pub struct Entry {
    /// The stored pair (the value is shared `bytes::Bytes`).
    pub kv: KeyValue,
    /// The list-item encoding and the API version it was made for.
    encoded: OnceLock<(&'static str, Item)>,
    /// What selectors read, once a selector asked (`None`: undecodable).
    attrs: OnceLock<Option<Attrs>>,
}

impl Entry {
    /// An entry for `kv`, not encoded yet.
    pub fn new(kv: KeyValue) -> Entry {
        Entry {
            kv,
            encoded: OnceLock::new(),
            attrs: OnceLock::new(),
        }
    }

    /// The object's selector attributes: computed by `parse` the first
    /// time, then kept (`None` if `parse` could not).
    pub fn attrs(&self, parse: impl FnOnce() -> Option<Attrs>) -> Option<&Attrs> {
        self.attrs.get_or_init(parse).as_ref()
    }

    /// The object's selector attributes if they were computed already
    /// (`Some(None)`: computed, and the object could not be parsed).
    pub fn attrs_known(&self) -> Option<Option<&Attrs>> {
        self.attrs.get().map(Option::as_ref)
    }

    /// The object's list-item encoding for `api_version`: the one made
    /// before, or `encode`'s (kept if it is the first).
    pub fn encoded<E>(
        &self,
        api_version: &'static str,
        encode: impl FnOnce() -> Result<Vec<u8>, E>,
    ) -> Result<Item, E> {
        if let Some((v, item)) = self.encoded.get()
            && *v == api_version
        {
            return Ok(item.clone());
        }
        let item = Item::sharing(&self.kv.value, &encode()?);
        let _ = self.encoded.set((api_version, item.clone()));
        Ok(item)
    }
}

/// An entry ordered, compared and looked up by its key, so the index holds
/// each key once (in the entry), not a second copy as a map key.
#[derive(Clone, Debug)]
struct ByKey(Arc<Entry>);

impl Borrow<str> for ByKey {
    fn borrow(&self) -> &str {
        &self.0.kv.key
    }
}

impl PartialEq for ByKey {
    fn eq(&self, other: &Self) -> bool {
        self.0.kv.key == other.0.kv.key
    }
}

impl Eq for ByKey {}

impl PartialOrd for ByKey {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for ByKey {
    fn cmp(&self, other: &Self) -> Ordering {
        self.0.kv.key.cmp(&other.0.kv.key)
    }
}

/// Live keys in key order. Entries are shared (`Arc`): a list snapshot
/// copies pointers, never bytes.
#[derive(Debug, Default)]
pub struct Index {
    items: BTreeSet<ByKey>,
}

impl Index {
    /// An index holding `items` (one store list).
    pub fn from_items(items: Vec<KeyValue>) -> Index {
        Index {
            items: items
                .into_iter()
                .map(|kv| ByKey(Arc::new(Entry::new(kv))))
                .collect(),
        }
    }

    /// Applies one change: a put stores the new pair, a delete removes the
    /// key. Returns the pair the key held before, if any.
    pub fn apply(&mut self, event: &WatchEvent) -> Option<Arc<Entry>> {
        match event.kind {
            EventKind::Put => self
                .items
                .replace(ByKey(Arc::new(Entry::new(event.kv.clone())))),
            EventKind::Delete => self.items.take(event.kv.key.as_str()),
        }
        .map(|e| e.0)
    }

    /// The pair stored at `key`.
    pub fn get(&self, key: &str) -> Option<Arc<Entry>> {
        self.items.get(key).map(|e| e.0.clone())
    }

    /// Every pair whose key starts with `prefix` and is greater than
    /// `start_after` (if given), in key order.
    pub fn range(&self, prefix: &str, start_after: Option<&str>) -> Vec<Arc<Entry>> {
        self.range_where(prefix, start_after, |_| false, usize::MAX)
    }

    /// [`Index::range`] without the entries `skip` rejects, and at most
    /// the first `max` of the others (a page needs no more).
    pub fn range_where(
        &self,
        prefix: &str,
        start_after: Option<&str>,
        skip: impl Fn(&Entry) -> bool,
        max: usize,
    ) -> Vec<Arc<Entry>> {
        use std::ops::Bound;
        let lower = match start_after {
            Some(k) if k >= prefix => Bound::Excluded(k),
            _ => Bound::Included(prefix),
        };
        self.items
            .range::<str, _>((lower, Bound::Unbounded))
            .take_while(|e| e.0.kv.key.starts_with(prefix))
            .filter(|e| !skip(&e.0))
            .take(max)
            .map(|e| e.0.clone())
            .collect()
    }

    /// Whether a key under `prefix` follows `after` (kept by a filter or
    /// not): upstream's "more" of a page, which says a page filled to its
    /// limit has a continuation when any key follows its last item.
    pub fn follows(&self, prefix: &str, after: &str) -> bool {
        use std::ops::Bound;
        self.items
            .range::<str, _>((Bound::Excluded(after), Bound::Unbounded))
            .next()
            .is_some_and(|e| e.0.kv.key.starts_with(prefix))
    }

    /// How many keys the index holds.
    pub fn len(&self) -> usize {
        self.items.len()
    }

    /// Whether the index is empty.
    pub fn is_empty(&self) -> bool {
        self.items.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use bytes::Bytes;

    use super::*;

    fn kv(key: &str, rev: i64) -> KeyValue {
        KeyValue {
            key: key.into(),
            value: Bytes::from_static(b"{}"),
            create_revision: rev,
            mod_revision: rev,
            version: 1,
        }
    }

    #[test]
    fn ranges_respect_prefix_and_start_after() {
        let mut idx = Index::from_items(vec![kv("/a/ns1/x", 2), kv("/a/ns2/y", 3), kv("/b/z", 4)]);
        let keys = |v: Vec<Arc<Entry>>| v.iter().map(|e| e.kv.key.clone()).collect::<Vec<_>>();
        assert_eq!(keys(idx.range("/a/", None)), ["/a/ns1/x", "/a/ns2/y"]);
        assert_eq!(keys(idx.range("/a/", Some("/a/ns1/x"))), ["/a/ns2/y"]);
        assert_eq!(keys(idx.range("/a/ns1/", None)), ["/a/ns1/x"]);
        // A page takes the first `max` kept entries only.
        assert_eq!(
            keys(idx.range_where("/a/", None, |_| false, 1)),
            ["/a/ns1/x"]
        );
        assert_eq!(
            keys(idx.range_where("/a/", None, |e| e.kv.key.ends_with('x'), 1)),
            ["/a/ns2/y"]
        );
        assert!(idx.range_where("/a/", None, |_| false, 0).is_empty());
        assert!(idx.follows("/a/", "/a/ns1/x"));
        assert!(!idx.follows("/a/", "/a/ns2/y"), "/b/z is not under /a/");
        let del = WatchEvent {
            kind: EventKind::Delete,
            kv: kv("/a/ns1/x", 5),
            prev: None,
        };
        assert!(idx.apply(&del).is_some());
        assert_eq!(keys(idx.range("/a/", None)), ["/a/ns2/y"]);
        assert_eq!(idx.len(), 2);
    }
}
