//! A list item's encoding that shares most of its bytes with the object's
//! stored bytes.
//!
//! A stored object and its list item differ in a few places near the start
//! (the item has no `kind`/`apiVersion` and gains `resourceVersion`; the
//! stored bytes end with a newline), so the watch cache keeps each item as
//! the stored bytes' common prefix and suffix (shared `Bytes` slices, no
//! copy) around the differing middle: a cached object costs its stored
//! bytes plus a few hundred, not twice its size.
//!
//! Pure: no I/O, no panics on any input.

use bytes::Bytes;

/// An encoding as `head`, `middle`, `tail`: `head` and `tail` are slices of
/// another value's bytes, `middle` is owned.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Item {
    head: Bytes,
    middle: Bytes,
    tail: Bytes,
}

impl Item {
    /// `encoded`, sharing with `base` its longest common prefix and its
    /// longest common suffix (never overlapping); a newline ending `base`
    /// but not `encoded` (stored bytes end as `json.Encoder` output does,
    /// list items do not) is left out first. The result's bytes are
    /// exactly `encoded`.
    pub fn sharing(base: &Bytes, encoded: &[u8]) -> Item {
        let base = match base.strip_suffix(b"\n") {
            Some(_) if !encoded.ends_with(b"\n") => base.slice(..base.len() - 1),
            _ => base.clone(),
        };
        let prefix = base.iter().zip(encoded).take_while(|(a, b)| a == b).count();
        let room = base.len().min(encoded.len()) - prefix;
        let suffix = base
            .iter()
            .rev()
            .zip(encoded.iter().rev())
            .take(room)
            .take_while(|(a, b)| a == b)
            .count();
        Item {
            head: base.slice(..prefix),
            middle: Bytes::copy_from_slice(&encoded[prefix..encoded.len() - suffix]),
            tail: base.slice(base.len() - suffix..),
        }
    }

    /// `encoded` as one owned part.
    pub fn owned(encoded: Vec<u8>) -> Item {
        Item {
            middle: Bytes::from(encoded),
            ..Item::default()
        }
    }

    /// The encoding's length.
    pub fn len(&self) -> usize {
        self.head.len() + self.middle.len() + self.tail.len()
    }

    /// Whether the encoding is empty.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Appends the encoding to `out`.
    pub fn write_to(&self, out: &mut Vec<u8>) {
        out.extend_from_slice(&self.head);
        out.extend_from_slice(&self.middle);
        out.extend_from_slice(&self.tail);
    }

    /// The encoding as one vector.
    pub fn to_vec(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(self.len());
        self.write_to(&mut out);
        out
    }

    /// Bytes this item owns beyond what it shares (its middle).
    pub fn owned_len(&self) -> usize {
        self.middle.len()
    }
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
        assert!(shared.owned_len() < 80, "{shared:?}");
    }

    proptest! {
        #[test]
        fn the_bytes_are_always_the_encoding(base in proptest::collection::vec(0u8..4, 0..40),
                                             encoded in proptest::collection::vec(0u8..4, 0..40)) {
            let base = Bytes::from(base);
            let item = Item::sharing(&base, &encoded);
            prop_assert_eq!(item.to_vec(), encoded.clone());
            prop_assert_eq!(item.len(), encoded.len());
            prop_assert_eq!(Item::owned(encoded.clone()).to_vec(), encoded);
        }
    }
}
