//! Custom resource data as CEL values, typed by the schema as upstream's
//! `UnstructuredToVal` types it: `integer` → `int`, `number` → `double`,
//! strings with format `duration`/`date`/`date-time`/`byte` → `duration`/
//! `timestamp`/`bytes`, objects with properties → objects whose fields
//! are the escaped property names, `additionalProperties` → maps,
//! untyped data as it comes. Strings are borrowed from the JSON, not
//! copied. Data that does not fit its schema is converted as untyped.

use std::collections::HashMap;

use cel::common::types::{
    CelBool, CelBytes, CelDouble, CelDuration, CelInt, CelList, CelMap, CelMapKey, CelNull,
    CelString, CelTimestamp,
};
use cel::common::value::Val;
use serde_json::Value;

use super::node::{Kind, MAX_DEPTH, Node, StringFormat};

/// The CEL value of `json` under `node`. `depth` counts the levels
/// converted so far; past [`MAX_DEPTH`] plus JSON's own nesting limit a
/// value becomes `null` (never reached by data serde_json parsed).
pub(crate) fn to_val<'v>(json: &'v Value, node: &Node, depth: usize) -> Box<dyn Val + 'v> {
    if depth > 2 * MAX_DEPTH + 128 {
        return Box::new(CelNull);
    }
    match (node.kind, json) {
        (_, Value::Null) => Box::new(CelNull),
        (Kind::IntOrString, Value::Number(n)) => match n.as_i64() {
            Some(i) => Box::new(CelInt::from(i)),
            None => untyped(json, depth),
        },
        (Kind::Integer, Value::Number(n)) => match n.as_i64() {
            Some(i) => Box::new(CelInt::from(i)),
            None => untyped(json, depth),
        },
        (Kind::Number, Value::Number(n)) => match n.as_f64() {
            Some(f) => Box::new(CelDouble::from(f)),
            None => untyped(json, depth),
        },
        (Kind::String(format), Value::String(s)) => string(s, format),
        (Kind::Object, Value::Object(map)) => object(map, node, depth),
        (Kind::Array, Value::Array(items)) => {
            let Some(item) = node.items.as_deref() else {
                return untyped(json, depth);
            };
            let list: Vec<Box<dyn Val + 'v>> =
                items.iter().map(|v| to_val(v, item, depth + 1)).collect();
            Box::new(CelList::from(list))
        }
        _ => untyped(json, depth),
    }
}

/// A string under `format`; unparseable text stays a string.
fn string<'v>(s: &'v str, format: StringFormat) -> Box<dyn Val + 'v> {
    match format {
        StringFormat::Plain => {}
        StringFormat::Duration => {
            if let Some(d) = super::library::duration::parse_go(s) {
                return Box::new(CelDuration::from(d));
            }
        }
        StringFormat::DateTime => {
            if let Ok(t) = chrono::DateTime::parse_from_rfc3339(s) {
                return Box::new(CelTimestamp::from(t));
            }
        }
        StringFormat::Date => {
            if let Ok(d) = chrono::NaiveDate::parse_from_str(s, "%Y-%m-%d")
                && let Some(t) = d.and_hms_opt(0, 0, 0)
            {
                return Box::new(CelTimestamp::from(t.and_utc().fixed_offset()));
            }
        }
        StringFormat::Byte => {
            if let Some(bytes) = super::library::format::base64_decode(s) {
                return Box::new(CelBytes::from(bytes));
            }
        }
    }
    Box::new(CelString::from(s))
}

/// An object: its declared properties under their CEL names (the root and
/// embedded resources also `apiVersion`, `kind` and `metadata.name` /
/// `generateName`), or a map by `additionalProperties`, or untyped.
fn object<'v>(
    map: &'v serde_json::Map<String, Value>,
    node: &Node,
    depth: usize,
) -> Box<dyn Val + 'v> {
    if node.properties.is_empty() && !node.resource {
        if let Some(additional) = node.additional.as_deref() {
            let mut out: HashMap<CelMapKey<'v>, Box<dyn Val + 'v>> =
                HashMap::with_capacity(map.len());
            for (k, v) in map {
                out.insert(
                    CelMapKey::from(k.as_str()),
                    to_val(v, additional, depth + 1),
                );
            }
            return Box::new(CelMap::from(out));
        }
        return untyped_object(map, depth);
    }
    let mut out: HashMap<CelMapKey<'v>, Box<dyn Val + 'v>> = HashMap::with_capacity(map.len());
    for (k, v) in map {
        if node.resource && matches!(k.as_str(), "apiVersion" | "kind" | "metadata") {
            match k.as_str() {
                "apiVersion" | "kind" => {
                    if let Value::String(s) = v {
                        out.insert(
                            CelMapKey::from(k.as_str()),
                            Box::new(CelString::from(s.as_str())),
                        );
                    }
                }
                "metadata" => {
                    if let Value::Object(meta) = v {
                        let mut m: HashMap<CelMapKey<'v>, Box<dyn Val + 'v>> = HashMap::new();
                        for key in ["name", "generateName"] {
                            if let Some(Value::String(s)) = meta.get(key) {
                                m.insert(
                                    CelMapKey::from(key),
                                    Box::new(CelString::from(s.as_str())),
                                );
                            }
                        }
                        out.insert(CelMapKey::from("metadata"), Box::new(CelMap::from(m)));
                    }
                }
                _ => {}
            }
            continue;
        }
        // A field set to null is absent for CEL (`has()` is false).
        if v.is_null() {
            continue;
        }
        let Some(prop) = node.properties.get(k) else {
            continue;
        };
        let Some(name) = prop.cel_name.as_deref() else {
            continue;
        };
        let key = if name == k {
            CelMapKey::from(k.as_str())
        } else {
            CelMapKey::from(name.to_owned())
        };
        out.insert(key, to_val(v, &prop.node, depth + 1));
    }
    Box::new(CelMap::from(out))
}

/// JSON as CEL values with no schema: numbers as `int` when whole and in
/// range, else `double`.
pub(crate) fn untyped<'v>(json: &'v Value, depth: usize) -> Box<dyn Val + 'v> {
    if depth > 2 * MAX_DEPTH + 128 {
        return Box::new(CelNull);
    }
    match json {
        Value::Null => Box::new(CelNull),
        Value::Bool(b) => Box::new(CelBool::from(*b)),
        Value::Number(n) => match n.as_i64() {
            Some(i) => Box::new(CelInt::from(i)),
            None => Box::new(CelDouble::from(n.as_f64().unwrap_or(f64::NAN))),
        },
        Value::String(s) => Box::new(CelString::from(s.as_str())),
        Value::Array(items) => {
            let list: Vec<Box<dyn Val + 'v>> =
                items.iter().map(|v| untyped(v, depth + 1)).collect();
            Box::new(CelList::from(list))
        }
        Value::Object(map) => untyped_object(map, depth),
    }
}

fn untyped_object<'v>(map: &'v serde_json::Map<String, Value>, depth: usize) -> Box<dyn Val + 'v> {
    let mut out: HashMap<CelMapKey<'v>, Box<dyn Val + 'v>> = HashMap::with_capacity(map.len());
    for (k, v) in map {
        out.insert(CelMapKey::from(k.as_str()), untyped(v, depth + 1));
    }
    Box::new(CelMap::from(out))
}
