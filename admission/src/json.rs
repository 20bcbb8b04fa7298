//! Small helpers over `serde_json::Value` objects (the only representation
//! plugins see).

use serde_json::{Map, Value};

/// `true` when `key` is absent or `null` (what Go's nil pointer / zero
/// value looks like after JSON normalization).
pub(crate) fn unset(map: &Map<String, Value>, key: &str) -> bool {
    matches!(map.get(key), None | Some(Value::Null))
}

/// `true` when `key` is absent, `null` or the empty string.
pub(crate) fn empty_str(map: &Map<String, Value>, key: &str) -> bool {
    match map.get(key) {
        None | Some(Value::Null) => true,
        Some(Value::String(s)) => s.is_empty(),
        _ => false,
    }
}

/// Sets `key` to `value` when it is [`unset`].
pub(crate) fn default(map: &mut Map<String, Value>, key: &str, value: Value) {
    if unset(map, key) {
        map.insert(key.to_owned(), value);
    }
}

/// Sets `key` to the string `value` when it is absent, `null` or `""`.
pub(crate) fn default_str(map: &mut Map<String, Value>, key: &str, value: &str) {
    if empty_str(map, key) {
        map.insert(key.to_owned(), Value::String(value.to_owned()));
    }
}

/// The object at `key`, created as `{}` when unset. `None` when `key` holds
/// something that is not an object (left for validation to report).
pub(crate) fn ensure_obj<'a>(
    map: &'a mut Map<String, Value>,
    key: &str,
) -> Option<&'a mut Map<String, Value>> {
    if unset(map, key) {
        map.insert(key.to_owned(), Value::Object(Map::new()));
    }
    map.get_mut(key).and_then(Value::as_object_mut)
}

/// The object at `key` if it is one.
pub(crate) fn obj_mut<'a>(
    map: &'a mut Map<String, Value>,
    key: &str,
) -> Option<&'a mut Map<String, Value>> {
    map.get_mut(key).and_then(Value::as_object_mut)
}

/// Calls `f` on every object in the array at `key`.
pub(crate) fn each_obj_mut(
    map: &mut Map<String, Value>,
    key: &str,
    mut f: impl FnMut(&mut Map<String, Value>),
) {
    if let Some(items) = map.get_mut(key).and_then(Value::as_array_mut) {
        for item in items.iter_mut().filter_map(Value::as_object_mut) {
            f(item);
        }
    }
}

/// The string at `key`, or `""`.
pub(crate) fn str_of<'a>(map: &'a Map<String, Value>, key: &str) -> &'a str {
    map.get(key).and_then(Value::as_str).unwrap_or_default()
}

/// The string at a JSON pointer, or `""`.
pub(crate) fn str_at<'a>(v: &'a Value, pointer: &str) -> &'a str {
    v.pointer(pointer)
        .and_then(Value::as_str)
        .unwrap_or_default()
}

/// The array at `key` (empty when absent or not an array).
pub(crate) fn arr<'a>(map: &'a Map<String, Value>, key: &str) -> &'a [Value] {
    map.get(key)
        .and_then(Value::as_array)
        .map(Vec::as_slice)
        .unwrap_or_default()
}

/// An empty object, for defaults like `securityContext: {}`.
pub(crate) fn empty_obj() -> Value {
    Value::Object(Map::new())
}

/// The object's name for messages: `metadata.name`, else the request name.
pub(crate) fn object_name(obj: &Value, fallback: &str) -> String {
    let name = str_at(obj, "/metadata/name");
    if name.is_empty() {
        fallback.to_owned()
    } else {
        name.to_owned()
    }
}
