//! Lenient typed reads of a CRD held as JSON. A wrong JSON type reads as
//! absent: the HTTP layer already refused bodies that do not decode into
//! the typed CRD, and validation must never panic on what is left.

use serde_json::{Map, Value};

/// The string at `key`, or `""` when absent or not a string (Go's zero value).
pub(crate) fn str_of<'a>(v: &'a Value, key: &str) -> &'a str {
    v.get(key).and_then(Value::as_str).unwrap_or_default()
}

/// The string at `key` when present as a string (a Go `*string`).
pub(crate) fn opt_str<'a>(v: &'a Value, key: &str) -> Option<&'a str> {
    v.get(key).and_then(Value::as_str)
}

/// The bool at `key`, `false` when absent.
pub(crate) fn bool_of(v: &Value, key: &str) -> bool {
    v.get(key).and_then(Value::as_bool).unwrap_or(false)
}

/// The bool at `key` when present (a Go `*bool`).
pub(crate) fn opt_bool(v: &Value, key: &str) -> Option<bool> {
    v.get(key).and_then(Value::as_bool)
}

/// The object at `key` when present and an object (a non-nil Go pointer to a struct).
pub(crate) fn obj<'a>(v: &'a Value, key: &str) -> Option<&'a Value> {
    v.get(key).filter(|x| x.is_object())
}

/// The map at `key`, when present and an object.
pub(crate) fn map<'a>(v: &'a Value, key: &str) -> Option<&'a Map<String, Value>> {
    v.get(key).and_then(Value::as_object)
}

/// The array at `key`, when present and an array (a non-nil Go slice).
pub(crate) fn arr<'a>(v: &'a Value, key: &str) -> Option<&'a Vec<Value>> {
    v.get(key).and_then(Value::as_array)
}

/// The items of the array at `key`; empty when absent.
pub(crate) fn items<'a>(v: &'a Value, key: &str) -> &'a [Value] {
    arr(v, key).map(Vec::as_slice).unwrap_or_default()
}

/// The strings of the array at `key` (non-strings read as `""`).
pub(crate) fn strings<'a>(v: &'a Value, key: &str) -> Vec<&'a str> {
    items(v, key)
        .iter()
        .map(|s| s.as_str().unwrap_or_default())
        .collect()
}

/// `true` when `key` is present with a non-null value (a non-nil Go pointer,
/// slice or map).
pub(crate) fn present(v: &Value, key: &str) -> bool {
    v.get(key).is_some_and(|x| !x.is_null())
}

/// `true` when the value at `key` is not Go's zero value: present and not
/// `null`, `false` or `""` (numbers are pointers in the Go types, so any
/// number counts; empty lists and maps are non-nil, so they count too).
pub(crate) fn non_zero(v: &Value, key: &str) -> bool {
    match v.get(key) {
        None | Some(Value::Null) | Some(Value::Bool(false)) => false,
        Some(Value::String(s)) => !s.is_empty(),
        Some(_) => true,
    }
}

/// `true` when the list or map at `key` has at least one entry (Go `len(x) > 0`).
pub(crate) fn non_empty(v: &Value, key: &str) -> bool {
    match v.get(key) {
        Some(Value::Array(a)) => !a.is_empty(),
        Some(Value::Object(m)) => !m.is_empty(),
        Some(Value::String(s)) => !s.is_empty(),
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn zero_values() {
        let v = json!({"a": "", "b": false, "c": null, "d": 0, "e": [], "f": "x"});
        for k in ["a", "b", "c", "missing"] {
            assert!(!non_zero(&v, k), "{k}");
        }
        for k in ["d", "e", "f"] {
            assert!(non_zero(&v, k), "{k}");
        }
        assert!(!non_empty(&v, "e"));
        assert_eq!(str_of(&v, "d"), "");
        assert_eq!(strings(&json!({"l": ["a", 1]}), "l"), vec!["a", ""]);
    }
}
