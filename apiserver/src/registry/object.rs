//! Reading and writing `metadata` of objects held as JSON values.
//!
//! Objects stay `serde_json::Value` inside the registry: every kind goes
//! through the same code, and bytes go to storage without a typed detour
//! (the typed round-trip happens once, in [`super::resource::ResourceInfo::normalize`]).

use serde_json::{Map, Value};

/// `metadata` of `obj`, created if missing. `None` if `obj` is not an object.
pub fn meta_mut(obj: &mut Value) -> Option<&mut Map<String, Value>> {
    let map = obj.as_object_mut()?;
    let meta = map
        .entry("metadata")
        .or_insert_with(|| Value::Object(Map::new()));
    if !meta.is_object() {
        *meta = Value::Object(Map::new());
    }
    meta.as_object_mut()
}

/// A string field of `metadata`.
pub fn meta_str<'a>(obj: &'a Value, field: &str) -> Option<&'a str> {
    obj.get("metadata")?.get(field)?.as_str()
}

/// Sets (or with `None`, removes) a `metadata` field.
pub fn set_meta(obj: &mut Value, field: &str, value: Option<Value>) {
    if let Some(meta) = meta_mut(obj) {
        match value {
            Some(v) => {
                meta.insert(field.to_string(), v);
            }
            None => {
                meta.remove(field);
            }
        }
    }
}

/// Whether `a` and `b` are equal but for `metadata.resourceVersion`,
/// compared in place (the no-op update check runs on every update; it
/// copies neither object).
pub fn same_but_resource_version(a: &Value, b: &Value) -> bool {
    let (Some(a), Some(b)) = (a.as_object(), b.as_object()) else {
        return a == b;
    };
    a.len() == b.len()
        && a.iter().all(|(k, av)| {
            let Some(bv) = b.get(k) else {
                return false;
            };
            match (k.as_str(), av.as_object(), bv.as_object()) {
                ("metadata", Some(am), Some(bm)) => {
                    let fields = |m: &Map<String, Value>| {
                        m.len() - usize::from(m.contains_key("resourceVersion"))
                    };
                    fields(am) == fields(bm)
                        && am
                            .iter()
                            .filter(|(f, _)| f.as_str() != "resourceVersion")
                            .all(|(f, v)| bm.get(f) == Some(v))
                }
                _ => av == bv,
            }
        })
}

/// `metadata.name` ("" if absent).
pub fn name(obj: &Value) -> &str {
    meta_str(obj, "name").unwrap_or("")
}

/// `metadata.namespace` ("" if absent).
pub fn namespace(obj: &Value) -> &str {
    meta_str(obj, "namespace").unwrap_or("")
}

/// `metadata.uid` ("" if absent).
pub fn uid(obj: &Value) -> &str {
    meta_str(obj, "uid").unwrap_or("")
}

/// `metadata.finalizers`.
pub fn finalizers(obj: &Value) -> Vec<String> {
    obj.get("metadata")
        .and_then(|m| m.get("finalizers"))
        .and_then(Value::as_array)
        .map(|a| {
            a.iter()
                .filter_map(|v| v.as_str().map(str::to_string))
                .collect()
        })
        .unwrap_or_default()
}

/// Replaces `metadata.finalizers` (removed when empty).
pub fn set_finalizers(obj: &mut Value, finalizers: &[String]) {
    let value = (!finalizers.is_empty()).then(|| {
        Value::Array(
            finalizers
                .iter()
                .map(|f| Value::String(f.clone()))
                .collect(),
        )
    });
    set_meta(obj, "finalizers", value);
}

/// Whether `obj` has a `status.conditions` entry of `type_` whose status
/// is `"True"`.
pub fn condition_true(obj: &Value, type_: &str) -> bool {
    obj.pointer("/status/conditions")
        .and_then(Value::as_array)
        .is_some_and(|cs| {
            cs.iter().any(|c| {
                c.get("type").and_then(Value::as_str) == Some(type_)
                    && c.get("status").and_then(Value::as_str) == Some("True")
            })
        })
}

/// Whether `metadata.deletionTimestamp` is set.
pub fn is_deleting(obj: &Value) -> bool {
    meta_str(obj, "deletionTimestamp").is_some()
}

/// `metadata.labels` as string pairs.
pub fn labels(obj: &Value) -> std::collections::BTreeMap<String, String> {
    obj.get("metadata")
        .and_then(|m| m.get("labels"))
        .and_then(Value::as_object)
        .map(|m| {
            m.iter()
                .filter_map(|(k, v)| v.as_str().map(|v| (k.clone(), v.to_string())))
                .collect()
        })
        .unwrap_or_default()
}

/// The owners' UIDs from `metadata.ownerReferences`.
pub fn owner_uids(obj: &Value) -> Vec<String> {
    owner_refs(obj)
        .iter()
        .filter_map(|r| r.get("uid").and_then(Value::as_str).map(str::to_string))
        .collect()
}

/// `metadata.ownerReferences` entries.
pub fn owner_refs(obj: &Value) -> Vec<Value> {
    obj.get("metadata")
        .and_then(|m| m.get("ownerReferences"))
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default()
}

/// The current time as Kubernetes writes timestamps (RFC3339, seconds, UTC).
pub fn now_rfc3339() -> String {
    rfc3339(time::OffsetDateTime::now_utc())
}

/// `t` as Kubernetes writes `metav1.Time` (Go's `t.UTC().Format(time.RFC3339)`:
/// UTC, whole seconds).
pub fn rfc3339(t: time::OffsetDateTime) -> String {
    let t = t.to_offset(time::UtcOffset::UTC);
    format!(
        "{:04}-{:02}-{:02}T{:02}:{:02}:{:02}Z",
        t.year(),
        u8::from(t.month()),
        t.day(),
        t.hour(),
        t.minute(),
        t.second()
    )
}

/// A MicroTime as Kubernetes writes it (`2026-01-02T03:04:05.123456Z`).
pub fn micro_timestamp(t: time::OffsetDateTime) -> String {
    let t = t.to_offset(time::UtcOffset::UTC);
    format!(
        "{}.{:06}Z",
        rfc3339(t).trim_end_matches('Z'),
        t.microsecond()
    )
}

/// Everything but `metadata` and `status`: what a spec change compares.
pub fn without_meta_and_status(obj: &Value) -> Value {
    match obj {
        Value::Object(m) => Value::Object(
            m.iter()
                .filter(|(k, _)| {
                    !matches!(k.as_str(), "metadata" | "status" | "apiVersion" | "kind")
                })
                .map(|(k, v)| (k.clone(), v.clone()))
                .collect(),
        ),
        other => other.clone(),
    }
}

/// What the controllers that watch every object read of one: identity,
/// owners and deletion state. Decoded from stored bytes without building
/// the rest of the object, as upstream's controllers use metadata-only
/// informers.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Header {
    /// `metadata.uid` ("" if absent).
    pub uid: String,
    /// `metadata.namespace` ("" if absent).
    pub namespace: String,
    /// `metadata.name` ("" if absent).
    pub name: String,
    /// The `uid` of each `metadata.ownerReferences` entry that has one.
    pub owners: Vec<String>,
    /// Whether `metadata.deletionTimestamp` is set.
    pub deleting: bool,
    /// `metadata.finalizers`.
    pub finalizers: Vec<String>,
}

impl Header {
    /// The header of an object held as a value.
    pub fn of(obj: &Value) -> Header {
        Header {
            uid: uid(obj).to_owned(),
            namespace: namespace(obj).to_owned(),
            name: name(obj).to_owned(),
            owners: owner_uids(obj),
            deleting: is_deleting(obj),
            finalizers: finalizers(obj),
        }
    }

    /// The header of a stored object's JSON. Reads only `metadata` (the
    /// rest is skipped unparsed); a document whose metadata does not have
    /// the shapes validation guarantees is read through [`Header::of`], so
    /// the two always agree. `None` if the bytes are not a JSON object.
    pub fn decode(bytes: &[u8]) -> Option<Header> {
        match serde_json::from_slice::<wire::Object<'_>>(bytes) {
            Ok(o) => Some(o.metadata.into_header()),
            Err(_) => serde_json::from_slice::<Value>(bytes)
                .ok()
                .filter(Value::is_object)
                .map(|v| Header::of(&v)),
        }
    }
}

/// Borrowing serde shapes of the fields [`Header::decode`] reads.
mod wire {
    use std::borrow::Cow;

    use serde::Deserialize;

    #[derive(Deserialize)]
    pub struct Object<'a> {
        #[serde(borrow, default)]
        pub metadata: Metadata<'a>,
    }

    #[derive(Deserialize, Default)]
    #[serde(rename_all = "camelCase")]
    pub struct Metadata<'a> {
        #[serde(borrow, default)]
        uid: Option<Cow<'a, str>>,
        #[serde(borrow, default)]
        namespace: Option<Cow<'a, str>>,
        #[serde(borrow, default)]
        name: Option<Cow<'a, str>>,
        #[serde(borrow, default)]
        owner_references: Option<Vec<OwnerReference<'a>>>,
        #[serde(borrow, default)]
        deletion_timestamp: Option<Cow<'a, str>>,
        #[serde(borrow, default)]
        finalizers: Option<Vec<Cow<'a, str>>>,
    }

    #[derive(Deserialize)]
    struct OwnerReference<'a> {
        #[serde(borrow, default)]
        uid: Option<Cow<'a, str>>,
    }

    impl Metadata<'_> {
        pub fn into_header(self) -> super::Header {
            let s = |v: Option<Cow<'_, str>>| v.map(Cow::into_owned).unwrap_or_default();
            super::Header {
                uid: s(self.uid),
                namespace: s(self.namespace),
                name: s(self.name),
                owners: self
                    .owner_references
                    .unwrap_or_default()
                    .into_iter()
                    .filter_map(|r| r.uid.map(Cow::into_owned))
                    .collect(),
                deleting: self.deletion_timestamp.is_some(),
                finalizers: self
                    .finalizers
                    .unwrap_or_default()
                    .into_iter()
                    .map(Cow::into_owned)
                    .collect(),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    #[test]
    fn same_but_resource_version_ignores_only_the_resource_version() {
        use super::same_but_resource_version as same;
        let a = json!({"metadata": {"name": "a", "resourceVersion": "1"}, "spec": {"x": 1}});
        let b = json!({"metadata": {"name": "a", "resourceVersion": "2"}, "spec": {"x": 1}});
        let unset = json!({"metadata": {"name": "a"}, "spec": {"x": 1}});
        assert!(same(&a, &b));
        assert!(same(&a, &unset) && same(&unset, &a));
        let spec = json!({"metadata": {"name": "a", "resourceVersion": "1"}, "spec": {"x": 2}});
        let label = json!({"metadata": {"name": "a", "resourceVersion": "1", "labels": {}}, "spec": {"x": 1}});
        let status = json!({"metadata": {"name": "a", "resourceVersion": "1"}, "spec": {"x": 1}, "status": {}});
        let renamed = json!({"metadata": {"name": "b", "resourceVersion": "1"}, "spec": {"x": 1}});
        for other in [&spec, &label, &status, &renamed] {
            assert!(!same(&a, other) && !same(other, &a), "{other}");
        }
        // Swapping a field for resourceVersion is a change.
        let swapped = json!({"metadata": {"name": "a", "uid": "u"}, "spec": {"x": 1}});
        assert!(!same(&a, &swapped) && !same(&swapped, &a));
    }

    use super::Header;

    /// `Header::decode` agrees with `Header::of` on well-formed objects,
    /// on odd shapes (nulls, wrong types, missing metadata) and never
    /// panics.
    #[test]
    fn header_decode_agrees_with_the_value_reading() {
        let cases = [
            json!({"kind": "Secret", "data": {"a": "QUJD"}, "metadata": {"name": "s", "namespace": "n", "uid": "u1"}}),
            json!({"metadata": {"name": "rs", "uid": "u2", "ownerReferences": [{"uid": "o1", "kind": "Deployment"}, {"kind": "x"}, {"uid": "o2"}], "deletionTimestamp": "2026-01-01T00:00:00Z", "finalizers": ["foregroundDeletion", "x/y"]}}),
            json!({"metadata": {"name": "n", "deletionTimestamp": null, "finalizers": null, "ownerReferences": null}}),
            json!({"metadata": {"name": 5, "finalizers": ["a", 1], "ownerReferences": [{"uid": 3}]}}),
            json!({"metadata": null}),
            json!({"spec": {"metadata": {"name": "inner"}}}),
            json!({}),
        ];
        for case in cases {
            let bytes = serde_json::to_vec(&case).unwrap();
            assert_eq!(Header::decode(&bytes), Some(Header::of(&case)), "{case}");
        }
        assert_eq!(Header::decode(b"[1]"), None);
        assert_eq!(Header::decode(b"{not json"), None);
    }
}
