//! A member copy as a cluster syncer caches it: encoded.
//!
//! A decoded object costs several times its bytes (every small map, down
//! to each level of `managedFields`' `fieldsV1`, is a tree node of about
//! 600 bytes), and a fleet's syncers cache one copy per object per
//! cluster: 100,000 at 100 members. So the cache keeps each copy's JSON
//! and decodes it on each read (a sync reads its copy once); the uid and
//! `resourceVersion`, which every watch event is compared against, are
//! kept beside it and read without decoding.
//!
//! Contract: [`HeldCopy::decode`] gives back the object [`HeldCopy::of`]
//! was given, key for key.

use serde_json::Value;
use skein_apiserver::registry::object;

/// One cached member copy. See the module documentation.
pub struct HeldCopy {
    uid: Box<str>,
    resource_version: Box<str>,
    json: Box<[u8]>,
}

impl HeldCopy {
    /// `obj`, encoded.
    pub fn of(obj: &Value) -> HeldCopy {
        HeldCopy {
            uid: object::uid(obj).into(),
            resource_version: object::meta_str(obj, "resourceVersion")
                .unwrap_or_default()
                .into(),
            // Encoding a `Value` cannot fail (its keys are strings); an
            // empty encoding would only read back as no copy.
            json: serde_json::to_vec(obj).unwrap_or_default().into(),
        }
    }

    /// The copy, decoded (`None` only if it could not be encoded).
    pub fn decode(&self) -> Option<Value> {
        serde_json::from_slice(&self.json).ok()
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

    /// The bytes held (for sizing).
    pub fn encoded_len(&self) -> usize {
        self.json.len()
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
        let h = HeldCopy::of(&o);
        assert_eq!(h.decode(), Some(o));
        assert_eq!(h.uid(), "u1");
        assert_eq!(h.resource_version(), "7");
        assert!(h.encoded_len() > 0);
    }

    #[test]
    fn newer_compares_uid_and_numeric_versions() {
        let h = HeldCopy::of(&copy("u1", "10"));
        assert!(h.newer_than(&copy("u1", "9")));
        assert!(!h.newer_than(&copy("u1", "10")));
        assert!(!h.newer_than(&copy("u1", "11")));
        assert!(!h.newer_than(&copy("u2", "9")));
        assert!(!h.newer_than(&copy("u1", "x")));
    }

    #[test]
    fn an_object_without_metadata_is_held() {
        let o = json!({"kind": "ConfigMap"});
        let h = HeldCopy::of(&o);
        assert_eq!((h.uid(), h.resource_version()), ("", ""));
        assert_eq!(h.decode(), Some(o));
    }
}
