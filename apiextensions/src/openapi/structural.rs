//! A CRD version's `openAPIV3Schema` as upstream publishes it: read into a
//! structural schema (`pkg/apiserver/schema/convert.go: NewStructural`),
//! checked (`SchemaHasInvalidTypes`, the main `ValidateStructural`
//! invariants), unfolded (`unfold.go`) and written back out
//! (`kubeopenapi.go: ToKubeOpenAPI`).
//!
//! # Contracts
//! - [`published`] returns `None` when upstream would publish no schema for
//!   the version (invalid types, unsupported keywords such as `$ref` or
//!   `patternProperties`, a non-structural schema, or nesting deeper than
//!   [`MAX_DEPTH`]); callers then publish `{"type":"object"}`.
//! - Only what a structural schema holds comes out: `example`,
//!   `externalDocs`, zero values (`nullable: false`, empty `required`, ...)
//!   and unknown keys are dropped; every `x-kubernetes-*` extension a
//!   structural schema carries is kept.
//! - Walks are structural: a property *named* `type` or `default` is a name
//!   in `properties`, never a keyword.
//!
//! Upstream's completeness rule (every field named inside `allOf`/`anyOf`/
//! `oneOf`/`not` also declared outside) and the detailed `metadata` rules
//! are not checked here: the CRD validation rejects such schemas before
//! they are stored.

use serde_json::{Map, Value, json};

/// Deepest schema nesting walked (serde_json parses at most 128 JSON
/// levels, i.e. about 64 schema levels).
pub const MAX_DEPTH: usize = 100;

/// Keywords a structural schema may not carry (`validateUnsupportedFields`).
const UNSUPPORTED: [&str; 7] = [
    "id",
    "$schema",
    "$ref",
    "patternProperties",
    "dependencies",
    "additionalItems",
    "definitions",
];

/// The OpenAPI types a CRD schema may name (`SchemaHasInvalidTypes`).
const TYPES: [&str; 6] = ["array", "boolean", "integer", "number", "object", "string"];

/// Where a node sits, for the structural rules that depend on it.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Level {
    Root,
    Item,
    Field,
}

/// The published form of `schema` (see the module contracts).
pub fn published(schema: &Value) -> Option<Value> {
    structural(schema, Level::Root, 0).map(Value::Object)
}

/// `m[k]`, with JSON `null` read as absent (Go decodes it to a nil pointer).
fn get<'a>(m: &'a Map<String, Value>, k: &str) -> Option<&'a Value> {
    m.get(k).filter(|v| !v.is_null())
}

fn is_true(m: &Map<String, Value>, k: &str) -> bool {
    get(m, k).and_then(Value::as_bool) == Some(true)
}

fn type_of(m: &Map<String, Value>) -> &str {
    get(m, "type").and_then(Value::as_str).unwrap_or("")
}

/// One structural node: convert, then check the invariants of its level.
fn structural(node: &Value, level: Level, depth: usize) -> Option<Map<String, Value>> {
    if depth > MAX_DEPTH {
        return None;
    }
    let m = node.as_object()?;
    if UNSUPPORTED.iter().any(|k| get(m, k).is_some()) {
        return None;
    }
    let mut out = Map::new();
    if let Some(items) = get(m, "items") {
        // An array of schemas is not structural.
        if !items.is_object() {
            return None;
        }
        out.insert(
            "items".to_owned(),
            Value::Object(structural(items, Level::Item, depth + 1)?),
        );
    }
    if let Some(props) = get(m, "properties") {
        let props = props.as_object()?;
        if !props.is_empty() {
            let mut converted = Map::new();
            for (name, p) in props {
                converted.insert(
                    name.clone(),
                    Value::Object(structural(p, Level::Field, depth + 1)?),
                );
            }
            out.insert("properties".to_owned(), Value::Object(converted));
        }
    }
    match get(m, "additionalProperties") {
        None => {}
        Some(Value::Bool(b)) => {
            out.insert("additionalProperties".to_owned(), Value::Bool(*b));
        }
        Some(s @ Value::Object(_)) => {
            out.insert(
                "additionalProperties".to_owned(),
                Value::Object(structural(s, Level::Field, depth + 1)?),
            );
        }
        Some(_) => return None,
    }
    generics(m, &mut out)?;
    extensions(m, &mut out)?;
    value_validation(m, &mut out, depth)?;
    validation_rules(m, &mut out)?;
    check(&out, level)?;
    unfold(&mut out);
    Some(out)
}

/// `type`, `nullable`, `description`, `title`, `default` (zero values
/// dropped, as Go's `omitempty`).
fn generics(m: &Map<String, Value>, out: &mut Map<String, Value>) -> Option<()> {
    for k in ["type", "description", "title"] {
        if let Some(v) = get(m, k) {
            let s = v.as_str()?;
            if !s.is_empty() {
                out.insert(k.to_owned(), v.clone());
            }
        }
    }
    if let Some(t) = get(m, "type").and_then(Value::as_str)
        && !t.is_empty()
        && !TYPES.contains(&t)
    {
        return None;
    }
    if let Some(v) = get(m, "nullable")
        && v.as_bool()?
    {
        out.insert("nullable".to_owned(), Value::Bool(true));
    }
    if let Some(d) = get(m, "default") {
        out.insert("default".to_owned(), d.clone());
    }
    Some(())
}

/// The structural `x-kubernetes-*` extensions.
fn extensions(m: &Map<String, Value>, out: &mut Map<String, Value>) -> Option<()> {
    for k in [
        "x-kubernetes-preserve-unknown-fields",
        "x-kubernetes-embedded-resource",
        "x-kubernetes-int-or-string",
    ] {
        if let Some(v) = get(m, k)
            && v.as_bool()?
        {
            out.insert(k.to_owned(), Value::Bool(true));
        }
    }
    if let Some(v) = get(m, "x-kubernetes-list-map-keys") {
        let keys = v.as_array()?;
        if keys.iter().any(|k| !k.is_string()) {
            return None;
        }
        if !keys.is_empty() {
            out.insert("x-kubernetes-list-map-keys".to_owned(), v.clone());
        }
    }
    for k in ["x-kubernetes-list-type", "x-kubernetes-map-type"] {
        if let Some(v) = get(m, k) {
            v.as_str()?;
            out.insert(k.to_owned(), v.clone());
        }
    }
    Some(())
}

/// `x-kubernetes-validations` (kept as written when non-empty).
fn validation_rules(m: &Map<String, Value>, out: &mut Map<String, Value>) -> Option<()> {
    if let Some(v) = get(m, "x-kubernetes-validations")
        && !v.as_array()?.is_empty()
    {
        out.insert("x-kubernetes-validations".to_owned(), v.clone());
    }
    Some(())
}

/// The value validations, junctors included (`ValueValidation`).
fn value_validation(
    m: &Map<String, Value>,
    out: &mut Map<String, Value>,
    depth: usize,
) -> Option<()> {
    for k in ["format", "pattern"] {
        if let Some(v) = get(m, k)
            && !v.as_str()?.is_empty()
        {
            out.insert(k.to_owned(), v.clone());
        }
    }
    for k in ["maximum", "minimum", "multipleOf"] {
        if let Some(v) = get(m, k) {
            if !v.is_number() {
                return None;
            }
            out.insert(k.to_owned(), v.clone());
        }
    }
    for k in [
        "maxLength",
        "minLength",
        "maxItems",
        "minItems",
        "maxProperties",
        "minProperties",
    ] {
        if let Some(v) = get(m, k) {
            v.as_i64()?;
            out.insert(k.to_owned(), v.clone());
        }
    }
    for k in ["exclusiveMaximum", "exclusiveMinimum", "uniqueItems"] {
        if let Some(v) = get(m, k)
            && v.as_bool()?
        {
            out.insert(k.to_owned(), Value::Bool(true));
        }
    }
    if let Some(v) = get(m, "enum")
        && !v.as_array()?.is_empty()
    {
        out.insert("enum".to_owned(), v.clone());
    }
    if let Some(v) = get(m, "required") {
        let names = v.as_array()?;
        if names.iter().any(|n| !n.is_string()) {
            return None;
        }
        if !names.is_empty() {
            out.insert("required".to_owned(), v.clone());
        }
    }
    for k in ["allOf", "anyOf", "oneOf"] {
        if let Some(v) = get(m, k) {
            let list = v
                .as_array()?
                .iter()
                .map(|s| nested(s, depth + 1).map(Value::Object))
                .collect::<Option<Vec<_>>>()?;
            if !list.is_empty() {
                out.insert(k.to_owned(), Value::Array(list));
            }
        }
    }
    if let Some(v) = get(m, "not") {
        out.insert("not".to_owned(), Value::Object(nested(v, depth + 1)?));
    }
    Some(())
}

/// A schema inside `allOf`/`anyOf`/`oneOf`/`not` (`NestedValueValidation`).
///
/// Only value validations may appear there; the generics and extensions
/// upstream calls "forbidden" are kept in the output (upstream prints
/// them) and the node is marked by [`FORBIDDEN`] for [`check`].
fn nested(node: &Value, depth: usize) -> Option<Map<String, Value>> {
    if depth > MAX_DEPTH {
        return None;
    }
    let m = node.as_object()?;
    if UNSUPPORTED.iter().any(|k| get(m, k).is_some()) {
        return None;
    }
    let mut out = Map::new();
    value_validation(m, &mut out, depth)?;
    validation_rules(m, &mut out)?;
    if let Some(items) = get(m, "items") {
        if !items.is_object() {
            return None;
        }
        out.insert("items".to_owned(), Value::Object(nested(items, depth + 1)?));
    }
    if let Some(props) = get(m, "properties") {
        let props = props.as_object()?;
        if !props.is_empty() {
            let mut converted = Map::new();
            for (name, p) in props {
                converted.insert(name.clone(), Value::Object(nested(p, depth + 1)?));
            }
            out.insert("properties".to_owned(), Value::Object(converted));
        }
    }
    let mut forbidden = Map::new();
    generics(m, &mut forbidden)?;
    extensions(m, &mut forbidden)?;
    let has_forbidden = !forbidden.is_empty()
        || get(m, "additionalProperties").is_some()
        || out.contains_key("x-kubernetes-validations");
    out.extend(forbidden);
    if has_forbidden {
        out.insert(FORBIDDEN.to_owned(), Value::Bool(true));
    }
    Some(out)
}

/// Marker on nested value validations that carry what only a structural
/// node may (removed by [`check`] after the node's rules ran).
const FORBIDDEN: &str = "\u{0}forbidden";

/// `[{"type":"integer"},{"type":"string"}]`, upstream's `intOrStringAnyOf`.
fn int_or_string_any_of() -> Value {
    json!([{"type": "integer"}, {"type": "string"}])
}

/// `isIntOrStringAnyOfPattern` / `isIntOrStringAllOfPattern`.
fn int_or_string_patterns(out: &Map<String, Value>) -> (bool, bool) {
    let pattern = int_or_string_any_of();
    let matches = |v: Option<&Value>| {
        v.is_some_and(|v| {
            let mut v = v.clone();
            clear_markers(&mut v, 0);
            if let Value::Array(a) = &mut v {
                a.iter_mut().for_each(|c| clear_markers(c, 0));
            }
            v == pattern
        })
    };
    let any_of = matches(out.get("anyOf"));
    let all_of = matches(
        out.get("allOf")
            .and_then(Value::as_array)
            .and_then(|a| a.first())
            .and_then(|first| first.get("anyOf")),
    );
    (any_of, all_of)
}

/// The `ValidateStructural` invariants this module checks (see the module
/// docs); clears the [`FORBIDDEN`] markers of the node's junctors.
fn check(out: &Map<String, Value>, level: Level) -> Option<()> {
    let ty = type_of(out);
    if ty == "array" && !out.contains_key("items") {
        return None;
    }
    if level == Level::Root && out.contains_key("additionalProperties") {
        return None;
    }
    let embedded = is_true(out, "x-kubernetes-embedded-resource");
    let preserve = is_true(out, "x-kubernetes-preserve-unknown-fields");
    let int_or_string = is_true(out, "x-kubernetes-int-or-string");
    if embedded {
        if ty != "object" || out.contains_key("additionalProperties") {
            return None;
        }
        if !preserve && !out.contains_key("properties") {
            return None;
        }
    } else if ty.is_empty() && !int_or_string && !preserve {
        return None;
    }
    if level == Level::Root && !ty.is_empty() && ty != "object" {
        return None;
    }
    if level == Level::Root || embedded {
        for name in ["kind", "apiVersion"] {
            if let Some(p) = out.get("properties").and_then(|p| p.get(name))
                && p.get("type").and_then(Value::as_str) != Some("string")
            {
                return None;
            }
        }
        if let Some(p) = out.get("properties").and_then(|p| p.get("metadata"))
            && p.get("type").and_then(Value::as_str) != Some("object")
        {
            return None;
        }
    }
    let (skip_any_of, skip_first_all_of) = int_or_string_patterns(out);
    for k in ["allOf", "anyOf", "oneOf", "not"] {
        let Some(v) = out.get(k) else { continue };
        let list: Vec<&Value> = match v {
            Value::Array(a) => a.iter().collect(),
            other => vec![other],
        };
        for (i, n) in list.into_iter().enumerate() {
            let exempt =
                (k == "anyOf" && skip_any_of) || (k == "allOf" && i == 0 && skip_first_all_of);
            if !exempt && nested_forbidden(n, 0) {
                return None;
            }
        }
    }
    Some(())
}

/// Whether a nested value validation (or anything under it) carries a
/// [`FORBIDDEN`] marker. An int-or-string pattern node (`{"type":
/// "integer"}`) inside an exempt junctor never reaches here.
fn nested_forbidden(n: &Value, depth: usize) -> bool {
    if depth > MAX_DEPTH {
        return true;
    }
    let Some(m) = n.as_object() else {
        return false;
    };
    if m.contains_key(FORBIDDEN) {
        return true;
    }
    let children = m
        .get("items")
        .into_iter()
        .chain(
            m.get("properties")
                .and_then(Value::as_object)
                .into_iter()
                .flat_map(|p| p.values()),
        )
        .chain(m.get("not"));
    let junctors = ["allOf", "anyOf", "oneOf"]
        .into_iter()
        .filter_map(|k| m.get(k).and_then(Value::as_array))
        .flatten();
    children
        .chain(junctors)
        .any(|c| nested_forbidden(c, depth + 1))
}

/// Removes the [`FORBIDDEN`] markers under a node's junctors.
fn clear_markers(v: &mut Value, depth: usize) {
    if depth > MAX_DEPTH {
        return;
    }
    let Some(m) = v.as_object_mut() else { return };
    m.remove(FORBIDDEN);
    for k in ["items", "not"] {
        if let Some(c) = m.get_mut(k) {
            clear_markers(c, depth + 1);
        }
    }
    if let Some(p) = m.get_mut("properties").and_then(Value::as_object_mut) {
        p.values_mut().for_each(|c| clear_markers(c, depth + 1));
    }
    for k in ["allOf", "anyOf", "oneOf"] {
        if let Some(a) = m.get_mut(k).and_then(Value::as_array_mut) {
            a.iter_mut().for_each(|c| clear_markers(c, depth + 1));
        }
    }
}

/// `Unfold`: an int-or-string node without the `anyOf` pattern gets it
/// (as `anyOf`, or as the first `allOf` member when it has another
/// `anyOf`). Also clears the junctors' markers.
fn unfold(out: &mut Map<String, Value>) {
    for k in ["allOf", "anyOf", "oneOf", "not"] {
        if let Some(v) = out.get_mut(k) {
            match v {
                Value::Array(a) => a.iter_mut().for_each(|c| clear_markers(c, 0)),
                other => clear_markers(other, 0),
            }
        }
    }
    if !is_true(out, "x-kubernetes-int-or-string") {
        return;
    }
    let (any_of, all_of) = int_or_string_patterns(out);
    if any_of || all_of {
        return;
    }
    if !out.contains_key("anyOf") {
        out.insert("anyOf".to_owned(), int_or_string_any_of());
    } else {
        let mut all = vec![json!({ "anyOf": int_or_string_any_of() })];
        if let Some(Value::Array(rest)) = out.remove("allOf") {
            all.extend(rest);
        }
        out.insert("allOf".to_owned(), Value::Array(all));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(s: &str) -> Option<Value> {
        published(&serde_json::from_str(s).unwrap_or(Value::Null))
    }

    fn v(s: &str) -> Value {
        serde_json::from_str(s).unwrap_or(Value::Null)
    }

    #[test]
    fn structural_schemas_round_trip() {
        let s = r#"{"type":"object","properties":{"spec":{"type":"object","properties":{
            "replicas":{"type":"integer","minimum":0,"default":1,"description":"d"},
            "tags":{"type":"array","items":{"type":"string"},"x-kubernetes-list-type":"set"},
            "labels":{"type":"object","additionalProperties":{"type":"string"},"x-kubernetes-map-type":"atomic"}},
            "x-kubernetes-validations":[{"rule":"self.replicas < 10"}]}}}"#;
        assert_eq!(p(s), Some(v(s)));
    }

    #[test]
    fn zero_values_and_non_structural_keywords_are_dropped() {
        let got = p(
            r#"{"type":"object","nullable":false,"required":[],"description":"",
            "example":{"a":1},"externalDocs":{"url":"x"},"properties":{},
            "x-kubernetes-preserve-unknown-fields":false,"enum":[]}"#,
        );
        assert_eq!(got, Some(v(r#"{"type":"object"}"#)));
    }

    #[test]
    fn invalid_types_and_unsupported_keywords_publish_nothing() {
        // builder_test.go: "with invalid-typed properties", "with non-structural schema"
        assert_eq!(
            p(r#"{"type":"object","properties":{"spec":{"type":"bug"}}}"#),
            None
        );
        assert_eq!(
            p(r#"{"type":"object","properties":{"foo":{"type":"array"}}}"#),
            None
        );
        assert_eq!(
            p(r##"{"type":"object","properties":{"foo":{"$ref":"#/x"}}}"##),
            None
        );
        assert_eq!(
            p(r#"{"type":"object","properties":{"foo":{"description":"x"}}}"#),
            None
        );
        assert_eq!(p(r#"{"type":"string"}"#), None);
        assert_eq!(
            p(r#"{"type":"object","additionalProperties":{"type":"string"}}"#),
            None
        );
        assert_eq!(
            p(
                r#"{"type":"object","properties":{"a":{"type":"string","anyOf":[{"type":"string"}]}}}"#
            ),
            None
        );
        assert_eq!(
            p(
                r#"{"type":"object","properties":{"e":{"type":"object","x-kubernetes-embedded-resource":true}}}"#
            ),
            None
        );
    }

    #[test]
    fn int_or_string_unfolds_as_upstream() {
        // builder_test.go "with extensions" (the v3 side of it).
        let got = p(r#"{"type":"object","properties":{
            "a":{"x-kubernetes-int-or-string":true,"anyOf":[{"type":"integer"},{"type":"string"}]},
            "b":{"x-kubernetes-int-or-string":true,"allOf":[{"anyOf":[{"type":"integer"},{"type":"string"}]},{"anyOf":[{"minimum":42.0}]}]},
            "d":{"x-kubernetes-int-or-string":true,"anyOf":[{"minimum":42.0}]},
            "f":{"x-kubernetes-int-or-string":true},
            "g":{"x-kubernetes-preserve-unknown-fields":true},
            "h":{"x-kubernetes-embedded-resource":true,"x-kubernetes-preserve-unknown-fields":true,"type":"object"}}}"#);
        let want = v(r#"{"type":"object","properties":{
            "a":{"x-kubernetes-int-or-string":true,"anyOf":[{"type":"integer"},{"type":"string"}]},
            "b":{"x-kubernetes-int-or-string":true,"allOf":[{"anyOf":[{"type":"integer"},{"type":"string"}]},{"anyOf":[{"minimum":42.0}]}]},
            "d":{"x-kubernetes-int-or-string":true,"anyOf":[{"minimum":42.0}],"allOf":[{"anyOf":[{"type":"integer"},{"type":"string"}]}]},
            "f":{"x-kubernetes-int-or-string":true,"anyOf":[{"type":"integer"},{"type":"string"}]},
            "g":{"x-kubernetes-preserve-unknown-fields":true},
            "h":{"x-kubernetes-embedded-resource":true,"x-kubernetes-preserve-unknown-fields":true,"type":"object"}}}"#);
        assert_eq!(got, Some(want));
    }

    #[test]
    fn too_deep_is_not_published() {
        let mut s = json!({"type": "string"});
        for _ in 0..(MAX_DEPTH + 5) {
            s = json!({"type": "object", "properties": {"a": s}});
        }
        assert_eq!(published(&s), None);
    }
}
