//! `x-kubernetes-list-type: set` and `map` uniqueness
//! (`pkg/apiserver/schema/listtype/validation.go`): each repeated element
//! (a set) or repeated key (a map) is a `Duplicate value` at its second
//! occurrence; a non-object element of a map list is invalid. Recursion
//! follows the schema.

use std::collections::HashMap;

use serde_json::{Map, Value};
use skein_admission::Cause;

use super::gofmt;
use super::node::Node;
use super::path::{Path, Style};

/// `ValidateListSetsAndMaps(nil, s, obj)`.
pub(crate) fn validate(s: &Node, obj: &Map<String, Value>, path: &Path<'_>, out: &mut Vec<Cause>) {
    if let Some(extra) = s.additional_schema() {
        for (k, v) in obj {
            value(extra, v, &Path::Extra(path, k), out);
        }
    }
    if !s.properties.is_empty() {
        for (k, v) in obj {
            if let Some(sub) = s.properties.get(k) {
                value(sub, v, &Path::Prop(path, k), out);
            }
        }
    }
}

fn value(s: &Node, v: &Value, path: &Path<'_>, out: &mut Vec<Cause>) {
    match v {
        Value::Array(items) => array(s, items, path, out),
        Value::Object(map) => validate(s, map, path, out),
        _ => {}
    }
}

fn array(s: &Node, items: &[Value], path: &Path<'_>, out: &mut Vec<Cause>) {
    match s.list_type.as_deref() {
        Some("set") if items.len() > 1 => {
            for i in repeated(items.iter().map(identity)) {
                out.push(duplicate(&Path::Index(path, i), &items[i]));
            }
        }
        Some("map") => map_list(s, items, path, out),
        _ => {}
    }
    if let Some(item) = s.items.as_deref() {
        for (i, v) in items.iter().enumerate() {
            value(item, v, &Path::Index(path, i), out);
        }
    }
}

/// How Go tells values apart here: scalars by type and value (`int64(1)`
/// and `float64(1)` differ), lists and maps by their JSON.
fn identity(v: &Value) -> String {
    match v {
        Value::Number(n) => match gofmt::GoNumber::of(n) {
            gofmt::GoNumber::Int(i) => format!("i{i}"),
            gofmt::GoNumber::Float(f) => format!("f{f}"),
        },
        Value::String(s) => format!("s{s}"),
        Value::Bool(b) => format!("b{b}"),
        Value::Null => "n".to_owned(),
        other => format!("j{}", gofmt::json(other)),
    }
}

/// Indices of the second occurrence of each repeated identity.
fn repeated(ids: impl Iterator<Item = String>) -> Vec<usize> {
    let mut seen: HashMap<String, usize> = HashMap::new();
    let mut out = Vec::new();
    for (i, id) in ids.enumerate() {
        let times = seen.entry(id).or_insert(0);
        *times += 1;
        if *times == 2 {
            out.push(i);
        }
    }
    out
}

fn duplicate(path: &Path<'_>, v: &Value) -> Cause {
    Cause::duplicate_rendered(path.render(Style::Field), &gofmt::error_value(Some(v)))
}

/// `validateListMap`.
fn map_list(s: &Node, items: &[Value], path: &Path<'_>, out: &mut Vec<Cause>) {
    for (i, x) in items.iter().enumerate() {
        if !x.is_null() && !x.is_object() {
            out.push(Cause::invalid_rendered(
                Path::Index(path, i).render(Style::Field),
                &gofmt::error_value(Some(x)),
                "must be an object for an array of list-type map",
            ));
            return;
        }
    }
    if items.len() <= 1 {
        return;
    }
    let keys: Vec<Map<String, Value>> = items
        .iter()
        .map(|x| {
            let mut key = Map::new();
            if let Value::Object(x) = x {
                for k in &s.list_map_keys {
                    if let Some(v) = x.get(k) {
                        key.insert(k.clone(), v.clone());
                    }
                }
            }
            key
        })
        .collect();
    let ids = keys.iter().map(|k| {
        if s.list_map_keys.len() == 1 {
            // One key: compared as the bare value (or "unspecified").
            k.values().next().map_or_else(|| "u".to_owned(), identity)
        } else {
            identity(&Value::Object(k.clone()))
        }
    });
    for i in repeated(ids) {
        out.push(duplicate(
            &Path::Index(path, i),
            &Value::Object(keys[i].clone()),
        ));
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn run(schema: Value, obj: Value) -> Vec<String> {
        let s = Node::parse(&schema, "s", 0).unwrap();
        let mut out = Vec::new();
        validate(&s, obj.as_object().unwrap(), &Path::Root, &mut out);
        out.iter().map(ToString::to_string).collect()
    }

    /// Cases from upstream's listtype `TestValidateListSetsAndMaps`.
    #[test]
    fn sets_and_maps() {
        let set = json!({"type": "object", "properties": {"s": {"type": "array",
            "x-kubernetes-list-type": "set", "items": {"type": "string"}}}});
        assert_eq!(
            run(set.clone(), json!({"s": ["a", "b", "a", "a"]})),
            [r#"s[2]: Duplicate value: "a""#]
        );
        assert!(run(set, json!({"s": ["a", "b"]})).is_empty());
        let numbers = json!({"type": "object", "properties": {"s": {"type": "array",
            "x-kubernetes-list-type": "set", "items": {"type": "number"}}}});
        assert!(run(numbers, json!({"s": [1, 1.5]})).is_empty());
        let map = json!({"type": "object", "properties": {"m": {"type": "array",
            "x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["k"],
            "items": {"type": "object", "properties": {"k": {"type": "string"}, "v": {"type": "integer"}}}}}});
        assert_eq!(
            run(
                map.clone(),
                json!({"m": [{"k": "a", "v": 1}, {"k": "a", "v": 2}, {"v": 3}, {"v": 4}]})
            ),
            [
                r#"m[1]: Duplicate value: map[string]interface {}{"k":"a"}"#,
                r#"m[3]: Duplicate value: map[string]interface {}{}"#
            ]
        );
        assert_eq!(
            run(map, json!({"m": [1, {"k": "a"}]})),
            ["m[0]: Invalid value: 1: must be an object for an array of list-type map"]
        );
        let two = json!({"type": "object", "properties": {"m": {"type": "array",
            "x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["a", "b"],
            "items": {"type": "object"}}}});
        assert_eq!(
            run(
                two,
                json!({"m": [{"a": 1, "b": "x"}, {"a": 1, "b": "y"}, {"b": "x", "a": 1}]})
            ),
            [r#"m[2]: Duplicate value: map[string]interface {}{"a":1, "b":"x"}"#]
        );
    }
}
