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
    let now = time::OffsetDateTime::now_utc();
    format!(
        "{:04}-{:02}-{:02}T{:02}:{:02}:{:02}Z",
        now.year(),
        u8::from(now.month()),
        now.day(),
        now.hour(),
        now.minute(),
        now.second()
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
