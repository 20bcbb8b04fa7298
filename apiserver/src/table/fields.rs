//! Total accessors over object JSON.
//!
//! Contract: every accessor answers for any `Value` — a missing field, a
//! `null`, or a value of the wrong JSON type reads as the Go zero value of
//! the field (`""`, `0`, `false`, empty list, absent pointer). Printers
//! built on these never panic and print what upstream prints for a
//! zero-valued field.

use serde_json::Value;
use time::OffsetDateTime;

use super::{age, timestamp};

/// The value at `path` (object keys only); `None` if any step is missing or
/// the value there is `null`.
pub(crate) fn at<'a>(v: &'a Value, path: &[&str]) -> Option<&'a Value> {
    let mut cur = v;
    for key in path {
        cur = cur.as_object()?.get(*key)?;
    }
    (!cur.is_null()).then_some(cur)
}

/// `null`, for [`child`] to hand out.
static NULL: Value = Value::Null;

/// The value at `path`, or `null` (which every accessor reads as zero).
pub(crate) fn child<'a>(v: &'a Value, path: &[&str]) -> &'a Value {
    at(v, path).unwrap_or(&NULL)
}

/// Whether `path` holds a non-null value (a Go pointer that is set).
pub(crate) fn is_set(v: &Value, path: &[&str]) -> bool {
    at(v, path).is_some()
}

/// The string at `path`, `""` when absent or not a string.
pub(crate) fn str_at<'a>(v: &'a Value, path: &[&str]) -> &'a str {
    opt_str_at(v, path).unwrap_or("")
}

/// The string at `path` if it is one (a Go `*string` that is set).
pub(crate) fn opt_str_at<'a>(v: &'a Value, path: &[&str]) -> Option<&'a str> {
    at(v, path).and_then(Value::as_str)
}

/// The integer at `path`, 0 when absent or not an integer.
pub(crate) fn int_at(v: &Value, path: &[&str]) -> i64 {
    opt_int_at(v, path).unwrap_or(0)
}

/// The integer at `path` if it is one (a Go `*int32` that is set).
pub(crate) fn opt_int_at(v: &Value, path: &[&str]) -> Option<i64> {
    at(v, path).and_then(as_int)
}

/// A JSON number as an integer: integers, and floats with no fraction.
pub(crate) fn as_int(v: &Value) -> Option<i64> {
    if let Some(i) = v.as_i64() {
        return Some(i);
    }
    let f = v.as_f64()?;
    let in_range = f.fract() == 0.0 && f >= i64::MIN as f64 && f <= i64::MAX as f64;
    in_range.then_some(f as i64)
}

/// The boolean at `path`, `false` when absent or not a boolean.
pub(crate) fn bool_at(v: &Value, path: &[&str]) -> bool {
    opt_bool_at(v, path).unwrap_or(false)
}

/// The boolean at `path` if it is one (a Go `*bool` that is set).
pub(crate) fn opt_bool_at(v: &Value, path: &[&str]) -> Option<bool> {
    at(v, path).and_then(Value::as_bool)
}

/// The array at `path`, empty when absent or not an array.
pub(crate) fn items_at<'a>(v: &'a Value, path: &[&str]) -> &'a [Value] {
    at(v, path)
        .and_then(Value::as_array)
        .map_or(&[], Vec::as_slice)
}

/// `len()` of the list or map at `path` (0 for anything else).
pub(crate) fn len_at(v: &Value, path: &[&str]) -> usize {
    match at(v, path) {
        Some(Value::Array(a)) => a.len(),
        Some(Value::Object(m)) => m.len(),
        _ => 0,
    }
}

/// The timestamp at `path`; `None` for absent, null, zero or malformed.
pub(crate) fn time_at(v: &Value, path: &[&str]) -> Option<OffsetDateTime> {
    opt_str_at(v, path).and_then(timestamp::parse)
}

/// `metadata.name`.
pub(crate) fn name(obj: &Value) -> &str {
    str_at(obj, &["metadata", "name"])
}

/// The age of the object (`translateTimestampSince(CreationTimestamp)`).
pub(crate) fn age(obj: &Value, now: OffsetDateTime) -> String {
    age::since(time_at(obj, &["metadata", "creationTimestamp"]), now)
}

/// Whether `metadata.deletionTimestamp` is set (Go: `!= nil`).
pub(crate) fn is_deleting(obj: &Value) -> bool {
    is_set(obj, &["metadata", "deletionTimestamp"])
}

/// The string value of label/annotation `key` in the map at `path`, if the
/// key is present (Go: `v, found := m[key]`).
pub(crate) fn map_entry<'a>(v: &'a Value, path: &[&str], key: &str) -> Option<&'a str> {
    let entry = at(v, path)?.as_object()?.get(key)?;
    Some(entry.as_str().unwrap_or(""))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn missing_null_and_mistyped_read_as_zero() {
        let v = json!({"a": {"s": "x", "n": 3, "f": 2.0, "b": true, "null": null, "wrong": [1]}});
        assert_eq!(str_at(&v, &["a", "s"]), "x");
        assert_eq!(str_at(&v, &["a", "n"]), "");
        assert_eq!(str_at(&v, &["a", "s", "deeper"]), "");
        assert_eq!(int_at(&v, &["a", "n"]), 3);
        assert_eq!(int_at(&v, &["a", "f"]), 2);
        assert_eq!(int_at(&v, &["a", "wrong"]), 0);
        assert!(bool_at(&v, &["a", "b"]));
        assert!(!is_set(&v, &["a", "null"]));
        assert!(is_set(&v, &["a", "wrong"]));
        assert_eq!(items_at(&v, &["a", "wrong"]).len(), 1);
        assert!(items_at(&v, &["a", "s"]).is_empty());
        assert_eq!(len_at(&v, &["a"]), 6);
        assert_eq!(int_at(&json!("not an object"), &["a"]), 0);
    }
}
