//! `metadata.managedFields` for Update operations.
//!
//! Each manager that writes with create/update/patch gets one
//! `operation: Update` entry per subresource, holding the set of fields
//! (FieldsV1) it has set. This version treats every list as atomic; the
//! server-side apply engine refines list semantics from the schemas.

use serde_json::{Map, Value, json};

use super::object::{now_rfc3339, set_meta};
use super::resource::ResourceInfo;

/// Metadata fields that are never owned.
const SYSTEM_META: &[&str] = &[
    "name",
    "namespace",
    "uid",
    "resourceVersion",
    "generation",
    "creationTimestamp",
    "deletionTimestamp",
    "deletionGracePeriodSeconds",
    "managedFields",
    "selfLink",
    "generateName",
];

/// The FieldsV1 set of `obj`: every leaf path, lists atomic.
pub fn field_set(obj: &Value, top: bool) -> Value {
    let mut out = Map::new();
    if let Value::Object(map) = obj {
        for (k, v) in map {
            if top && matches!(k.as_str(), "apiVersion" | "kind") {
                continue;
            }
            if top && k == "metadata" {
                let meta = metadata_set(v);
                if meta.as_object().is_some_and(|m| !m.is_empty()) {
                    out.insert("f:metadata".into(), meta);
                }
                continue;
            }
            let child = match v {
                Value::Object(m) if !m.is_empty() => field_set(v, false),
                _ => json!({}),
            };
            out.insert(format!("f:{k}"), child);
        }
    }
    Value::Object(out)
}

fn metadata_set(meta: &Value) -> Value {
    let mut out = Map::new();
    if let Value::Object(map) = meta {
        for (k, v) in map {
            if SYSTEM_META.contains(&k.as_str()) {
                continue;
            }
            let child = match (k.as_str(), v) {
                ("finalizers", Value::Array(items)) => {
                    let mut set = Map::new();
                    for f in items {
                        set.insert(format!("v:{f}"), json!({}));
                    }
                    Value::Object(set)
                }
                ("ownerReferences", Value::Array(items)) => {
                    let mut set = Map::new();
                    for r in items {
                        if let Some(uid) = r.get("uid").and_then(Value::as_str) {
                            set.insert(format!("k:{{\"uid\":\"{uid}\"}}"), json!({}));
                        }
                    }
                    Value::Object(set)
                }
                (_, Value::Object(m)) if !m.is_empty() => field_set(v, false),
                _ => json!({}),
            };
            out.insert(format!("f:{k}"), child);
        }
    }
    Value::Object(out)
}

/// Records an Update by `manager` on `obj` (`old` = the object before, for
/// updates). The manager's entry for this subresource is replaced by one
/// owning every field of the new object that it set or changed; other
/// managers keep theirs.
pub fn record_update(
    obj: &mut Value,
    old: Option<&Value>,
    res: &ResourceInfo,
    manager: &str,
    subresource: Option<&str>,
) {
    let mut entries: Vec<Value> = old
        .and_then(|o| o.get("metadata"))
        .and_then(|m| m.get("managedFields"))
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    // Without an old object, the client's own managedFields are ignored
    // (upstream resets them on create unless they are valid); keep simple.
    if old.is_none() {
        entries.clear();
    }
    let scoped = match subresource {
        Some("status") => obj
            .get("status")
            .map(|s| json!({ "status": s }))
            .unwrap_or(json!({})),
        _ => {
            let mut o = obj.clone();
            if res.status
                && let Some(m) = o.as_object_mut()
            {
                m.remove("status");
            }
            o
        }
    };
    let fields = field_set(&scoped, true);
    let unchanged = old.is_some_and(|o| {
        let mut a = o.clone();
        let mut b = obj.clone();
        for x in [&mut a, &mut b] {
            set_meta(x, "managedFields", None);
            set_meta(x, "resourceVersion", None);
        }
        a == b
    });
    if unchanged {
        set_meta(
            obj,
            "managedFields",
            old.and_then(|o| o.get("metadata")?.get("managedFields").cloned()),
        );
        return;
    }
    let same = |e: &Value| {
        e.get("manager").and_then(Value::as_str) == Some(manager)
            && e.get("operation").and_then(Value::as_str) == Some("Update")
            && e.get("subresource").and_then(Value::as_str) == subresource
    };
    entries.retain(|e| !same(e));
    if fields.as_object().is_some_and(|m| !m.is_empty()) {
        let mut entry = json!({
            "manager": manager,
            "operation": "Update",
            "apiVersion": res.api_version,
            "time": now_rfc3339(),
            "fieldsType": "FieldsV1",
            "fieldsV1": fields,
        });
        if let (Some(sub), Some(m)) = (subresource, entry.as_object_mut()) {
            m.insert("subresource".into(), json!(sub));
        }
        entries.push(entry);
    }
    let value = (!entries.is_empty()).then_some(Value::Array(entries));
    set_meta(obj, "managedFields", value);
}
