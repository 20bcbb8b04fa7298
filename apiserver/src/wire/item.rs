//! A list item's encoding that shares most of its bytes with the object's
//! stored bytes.
//!
//! A stored object and its list item differ in two places near the start
//! (the item has no `kind`/`apiVersion`, and gains `resourceVersion` after
//! the uid; the stored bytes end with a newline), so the watch cache keeps
//! each item as slices of the stored bytes (shared, no copy) around at most
//! two small owned inserts: a cached object costs its stored bytes plus a
//! few dozen, not twice its size.
//!
//! Pure: no I/O, no panics on any input.

use bytes::Bytes;

/// Differing middles longer than this (on either side) are kept whole as
/// one insert: finding the shared run inside them costs their product.
const MAX_SEARCH: usize = 256;

/// An encoding as `base[..head] + owned[..split] + base[body] +
/// owned[split..] + base[tail..]`: `base` is another value's bytes
/// (shared), `owned` the bytes that differ.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Item {
    base: Bytes,
    owned: Bytes,
    head: u32,
    split: u32,
    body: (u32, u32),
    tail: u32,
}

impl Item {
    /// `encoded`, sharing with `base` its longest common prefix and suffix
    /// (never overlapping) and, between them, the longest run the two
    /// middles have in common; a newline ending `base` but not `encoded`
    /// (stored bytes end as `json.Encoder` output does, list items do not)
    /// is left out first. The result's bytes are exactly `encoded`.
    pub fn sharing(base: &Bytes, encoded: &[u8]) -> Item {
        let base = match base.strip_suffix(b"\n") {
            Some(_) if !encoded.ends_with(b"\n") => base.slice(..base.len() - 1),
            _ => base.clone(),
        };
        if u32::try_from(base.len().max(encoded.len())).is_err() {
            return Item::owned(encoded.to_vec());
        }
        let prefix = base.iter().zip(encoded).take_while(|(a, b)| a == b).count();
        let room = base.len().min(encoded.len()) - prefix;
        let suffix = base
            .iter()
            .rev()
            .zip(encoded.iter().rev())
            .take(room)
            .take_while(|(a, b)| a == b)
            .count();
        let (b_end, e_end) = (base.len() - suffix, encoded.len() - suffix);
        let (b_mid, e_mid) = (&base[prefix..b_end], &encoded[prefix..e_end]);
        // (start in base, start in encoded, length) of the shared run.
        let (bs, es, len) = match longest_common_run(b_mid, e_mid) {
            // Sharing fewer bytes than a second insert's bookkeeping is
            // not worth it.
            Some((bs, es, len)) if len >= 16 => (prefix + bs, prefix + es, len),
            _ => (b_end, e_end, 0),
        };
        let mut owned = Vec::with_capacity(e_mid.len() - len);
        owned.extend_from_slice(&encoded[prefix..es]);
        owned.extend_from_slice(&encoded[es + len..e_end]);
        // Every offset is at most `base.len()` or `encoded.len()`, checked
        // to fit in u32 above.
        let at = |n: usize| n as u32;
        Item {
            head: at(prefix),
            split: at(es - prefix),
            body: (at(bs), at(bs + len)),
            tail: at(b_end),
            owned: Bytes::from(owned),
            base,
        }
    }

    /// `encoded` as one owned part.
    pub fn owned(encoded: Vec<u8>) -> Item {
        let split = u32::try_from(encoded.len()).unwrap_or(u32::MAX);
        Item {
            split,
            owned: Bytes::from(encoded),
            ..Item::default()
        }
    }

    fn parts(&self) -> [&[u8]; 5] {
        let (split, owned) = (self.split as usize, &self.owned[..]);
        let split = split.min(owned.len());
        [
            &self.base[..self.head as usize],
            &owned[..split],
            &self.base[self.body.0 as usize..self.body.1 as usize],
            &owned[split..],
            &self.base[self.tail as usize..],
        ]
    }

    /// The encoding's length.
    pub fn len(&self) -> usize {
        self.parts().iter().map(|p| p.len()).sum()
    }

    /// Whether the encoding is empty.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Appends the encoding to `out`.
    pub fn write_to(&self, out: &mut Vec<u8>) {
        for part in self.parts() {
            out.extend_from_slice(part);
        }
    }

    /// The encoding as one vector.
    pub fn to_vec(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(self.len());
        self.write_to(&mut out);
        out
    }

    /// Bytes this item owns beyond what it shares.
    pub fn owned_len(&self) -> usize {
        self.owned.len()
    }
}

/// The longest run of bytes `a` and `b` share: (start in `a`, start in
/// `b`, length); `None` if either is empty or longer than [`MAX_SEARCH`].
fn longest_common_run(a: &[u8], b: &[u8]) -> Option<(usize, usize, usize)> {
    if a.is_empty() || b.is_empty() || a.len() > MAX_SEARCH || b.len() > MAX_SEARCH {
        return None;
    }
    // Dynamic programming over one row: run[j] is the length of the common
    // run ending at a[i-1] and b[j-1].
    let mut run = vec![0u16; b.len() + 1];
    let mut best = (0, 0, 0);
    for i in 1..=a.len() {
        for j in (1..=b.len()).rev() {
            run[j] = if a[i - 1] == b[j - 1] {
                run[j - 1] + 1
            } else {
                0
            };
            let len = usize::from(run[j]);
            if len > best.2 {
                best = (i - len, j - len, len);
            }
        }
    }
    (best.2 > 0).then_some(best)
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;

    #[test]
    fn a_list_item_shares_all_but_its_first_fields_with_the_stored_bytes() {
        let stored = Bytes::from_static(
            b"{\"kind\":\"ConfigMap\",\"apiVersion\":\"v1\",\"metadata\":{\"name\":\"a\",\"uid\":\"u\",\"creationTimestamp\":\"t\"},\"data\":{\"payload\":\"QUJDQUJDQUJDQUJDQUJDQUJD\"}}\n",
        );
        let item = b"{\"metadata\":{\"name\":\"a\",\"uid\":\"u\",\"resourceVersion\":\"7\",\"creationTimestamp\":\"t\"},\"data\":{\"payload\":\"QUJDQUJDQUJDQUJDQUJDQUJD\"}}";
        let shared = Item::sharing(&stored, item);
        assert_eq!(shared.to_vec(), item);
        assert_eq!(shared.len(), item.len());
        // What differs: the first fields (`metadata":{"name":"a"` is shared
        // only once, so the item owns it) and `"resourceVersion":"7",`.
        assert!(shared.owned_len() <= 30, "{shared:?}");
    }

    #[test]
    fn a_real_stored_secret_and_its_item_share_all_but_a_few_dozen_bytes() {
        let pad = "QUJD".repeat(200);
        let stored = format!(
            "{{\"kind\":\"Secret\",\"apiVersion\":\"v1\",\"metadata\":{{\"name\":\"o-00001\",\"namespace\":\"bench-secrets\",\"uid\":\"0f8fad5b-d9cb-469f-a165-70867728950e\",\"creationTimestamp\":\"2026-12-04T18:00:00Z\"}},\"data\":{{\"payload\":\"{pad}\"}},\"type\":\"Opaque\"}}\n"
        );
        let item = format!(
            "{{\"metadata\":{{\"name\":\"o-00001\",\"namespace\":\"bench-secrets\",\"uid\":\"0f8fad5b-d9cb-469f-a165-70867728950e\",\"resourceVersion\":\"123456\",\"creationTimestamp\":\"2026-12-04T18:00:00Z\"}},\"data\":{{\"payload\":\"{pad}\"}},\"type\":\"Opaque\"}}"
        );
        let shared = Item::sharing(&Bytes::from(stored), item.as_bytes());
        assert_eq!(shared.to_vec(), item.as_bytes());
        assert!(shared.owned_len() <= 30, "{shared:?}");
        // Middles too long to search are one insert, still exact.
        let long = format!("{{\"x\":\"{}\"}}", "y".repeat(2 * MAX_SEARCH));
        let other = format!("{{\"z\":\"{}\"}}", "y".repeat(2 * MAX_SEARCH));
        let whole = Item::sharing(&Bytes::from(long), other.as_bytes());
        assert_eq!(whole.to_vec(), other.as_bytes());
    }

    #[test]
    fn the_longest_common_run_is_found() {
        assert_eq!(longest_common_run(b"xxabcdyy", b"zabcdz"), Some((2, 1, 4)));
        assert_eq!(longest_common_run(b"abc", b"xyz"), None);
        assert_eq!(longest_common_run(b"", b"xyz"), None);
    }

    proptest! {
        #[test]
        fn the_bytes_are_always_the_encoding(base in proptest::collection::vec(0u8..4, 0..600),
                                             encoded in proptest::collection::vec(0u8..4, 0..600)) {
            let base = Bytes::from(base);
            let item = Item::sharing(&base, &encoded);
            prop_assert_eq!(item.to_vec(), encoded.clone());
            prop_assert_eq!(item.len(), encoded.len());
            prop_assert_eq!(Item::owned(encoded.clone()).to_vec(), encoded);
        }

        /// The item is the base with a cut and an insert (as a list item
        /// is its stored object without kind/apiVersion, with
        /// resourceVersion): exact bytes, and only the insert owned.
        #[test]
        fn an_edited_base_is_shared_but_for_the_insert(
            base in proptest::collection::vec(0u8..8, 40..300),
            cut in 0usize..20, cut_len in 0usize..20,
            at in 0usize..200,
            insert in proptest::collection::vec(100u8..104, 1..12),
        ) {
            let cut = cut.min(base.len());
            let cut_end = (cut + cut_len).min(base.len());
            let mut encoded = base[..cut].to_vec();
            encoded.extend_from_slice(&base[cut_end..]);
            let at = at.min(encoded.len());
            encoded.splice(at..at, insert.iter().copied());
            let item = Item::sharing(&Bytes::from(base), &encoded);
            prop_assert_eq!(item.to_vec(), encoded.clone());
            prop_assert_eq!(item.len(), encoded.len());
        }
    }
}
