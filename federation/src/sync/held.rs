//! A member copy as a cluster syncer caches it: encoded and compressed.
//!
//! A decoded object costs several times its bytes (every small map, down
//! to each level of `managedFields`' `fieldsV1`, is a tree node of about
//! 600 bytes), and a fleet's syncers cache one copy per object per
//! cluster: 100,000 at 100 members. So the cache keeps each copy's JSON
//! and decodes it on each read (a sync reads its copy once); the uid and
//! `resourceVersion`, which every watch event is compared against, are
//! kept beside it and read without decoding.
//!
//! The JSON is LZ4-compressed against a dictionary: the first copy of the
//! same kind the syncer held ([`Dictionaries`]). Copies of one kind on one
//! member share most of their bytes (keys, annotations, `managedFields`,
//! namespace), so a copy costs about a third of its JSON; compressing and
//! decompressing a copy takes microseconds.
//!
//! Contract: [`HeldCopy::decode`] gives back the object
//! [`Dictionaries::hold`] was given, key for key.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use serde_json::Value;
use skein_apiserver::registry::object;

/// One cached member copy. See the module documentation.
pub struct HeldCopy {
    uid: Box<str>,
    resource_version: Box<str>,
    /// The JSON, compressed against `dictionary`.
    compressed: Box<[u8]>,
    /// The JSON's length.
    len: usize,
    dictionary: Arc<[u8]>,
}

/// The most of a first copy kept as a dictionary (a larger one costs
/// more per compression and matches no better for small copies).
const DICTIONARY_MAX: usize = 16 << 10;

/// Per kind (an index of the syncers' kinds), the dictionary one syncer's
/// copies are compressed against: the JSON of the first copy of that kind
/// it held. Kept for the syncer's life (one copy per kind).
#[derive(Default)]
pub struct Dictionaries(Mutex<HashMap<usize, Arc<[u8]>>>);

impl Dictionaries {
    /// `obj`, a copy of kind `kind`, encoded and compressed.
    pub fn hold(&self, kind: usize, obj: &Value) -> HeldCopy {
        // Encoding a `Value` cannot fail (its keys are strings); an empty
        // encoding would only read back as no copy.
        let json = serde_json::to_vec(obj).unwrap_or_default();
        let dictionary = self
            .0
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .entry(kind)
            .or_insert_with(|| json[..json.len().min(DICTIONARY_MAX)].into())
            .clone();
        HeldCopy {
            uid: object::uid(obj).into(),
            resource_version: object::meta_str(obj, "resourceVersion")
                .unwrap_or_default()
                .into(),
            compressed: lz4_flex::block::compress_with_dict(&json, &dictionary).into(),
            len: json.len(),
            dictionary,
        }
    }
}

impl HeldCopy {
    /// The copy, decoded (`None` only if it could not be encoded).
    pub fn decode(&self) -> Option<Value> {
        let json =
            lz4_flex::block::decompress_with_dict(&self.compressed, self.len, &self.dictionary)
                .ok()?;
        serde_json::from_slice(&json).ok()
    }

    /// Its `metadata.uid` ("" when it has none).
    pub fn uid(&self) -> &str {
        &self.uid
    }

    /// Its `metadata.resourceVersion` ("" when it has none).
    pub fn resource_version(&self) -> &str {
        &self.resource_version
    }

    /// Whether it is the same object as `other` at a later version: the
    /// same uid and a higher `resourceVersion` (member resource versions
    /// are opaque to clients, but every Kubernetes API server's are etcd
    /// revisions; when either does not parse, `false`).
    pub fn newer_than(&self, other: &Value) -> bool {
        let rv = |r: &str| r.parse::<u64>().ok();
        self.uid() == object::uid(other)
            && matches!(
                (rv(self.resource_version()), object::meta_str(other, "resourceVersion").and_then(rv)),
                (Some(a), Some(b)) if a > b
            )
    }

    /// The compressed bytes held (for sizing; the dictionary is shared).
    pub fn encoded_len(&self) -> usize {
        self.compressed.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn copy(uid: &str, rv: &str) -> Value {
        json!({"apiVersion": "v1", "kind": "ConfigMap",
               "metadata": {"name": "a", "namespace": "n", "uid": uid, "resourceVersion": rv,
                            "managedFields": [{"manager": "skein", "fieldsV1": {"f:data": {"f:k": {}}}}]},
               "data": {"k": "v"}})
    }

    #[test]
    fn decodes_what_it_was_given() {
        let o = copy("u1", "7");
        let h = Dictionaries::default().hold(0, &o);
        assert_eq!(h.decode(), Some(o));
        assert_eq!(h.uid(), "u1");
        assert_eq!(h.resource_version(), "7");
        assert!(h.encoded_len() > 0);
    }

    #[test]
    fn newer_compares_uid_and_numeric_versions() {
        let h = Dictionaries::default().hold(0, &copy("u1", "10"));
        assert!(h.newer_than(&copy("u1", "9")));
        assert!(!h.newer_than(&copy("u1", "10")));
        assert!(!h.newer_than(&copy("u1", "11")));
        assert!(!h.newer_than(&copy("u2", "9")));
        assert!(!h.newer_than(&copy("u1", "x")));
    }

    #[test]
    fn an_object_without_metadata_is_held() {
        let o = json!({"kind": "ConfigMap"});
        let h = Dictionaries::default().hold(0, &o);
        assert_eq!((h.uid(), h.resource_version()), ("", ""));
        assert_eq!(h.decode(), Some(o));
    }

    #[test]
    fn copies_of_a_kind_compress_against_the_first() {
        let dicts = Dictionaries::default();
        let first = dicts.hold(3, &copy("u0", "1"));
        let copies: Vec<(Value, HeldCopy)> = (1..50)
            .map(|i| {
                let mut o = copy(
                    &format!("uid-{i:04}-4f0e-4d7a-9b5e"),
                    &(1000 + i).to_string(),
                );
                o["metadata"]["name"] = json!(format!("config-{i}"));
                o["data"]["k"] = json!(format!("value {i}"));
                let h = dicts.hold(3, &o);
                (o, h)
            })
            .collect();
        assert_eq!(first.decode(), Some(copy("u0", "1")));
        for (o, h) in &copies {
            assert_eq!(h.decode().as_ref(), Some(o));
            let json = serde_json::to_vec(o).expect("encodes");
            assert!(
                h.encoded_len() * 2 < json.len(),
                "{} compressed bytes for {} of JSON",
                h.encoded_len(),
                json.len()
            );
        }
        // Another kind gets its own dictionary; it still decodes.
        let other = json!({"kind": "Secret", "metadata": {"name": "s"}, "data": {"a": "Yg=="}});
        assert_eq!(dicts.hold(4, &other).decode(), Some(other));
    }
}
