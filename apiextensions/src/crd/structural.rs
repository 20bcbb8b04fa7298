//! Structural schema rules (upstream `pkg/apiserver/schema`: `NewStructural`'s
//! conversion errors in `convert.go`, `ValidateStructural`'s invariants in
//! `validation.go` and completeness in `complete.go`), read straight from
//! the `openAPIV3Schema` JSON.
//!
//! The structural part of a schema is what `properties`, `items` and
//! `additionalProperties` reach; `allOf`/`anyOf`/`oneOf`/`not` are value
//! validations that may only restate it.

use serde_json::{Map, Value, json};
use skein_admission::Cause;

use super::json::{arr, bool_of, map, non_empty, obj, opt_bool, present, str_of};
use super::path::{child, index, key};

/// Deepest schema nesting walked; deeper schemas are refused.
pub(crate) const MAX_DEPTH: usize = 128;

#[derive(Clone, Copy, PartialEq, Eq)]
enum Level {
    Root,
    Item,
    Field,
}

/// `NewStructural`'s error for `schema`, if any: the first unsupported
/// field found in upstream's walk order.
pub(crate) fn conversion_error(schema: &Value) -> Option<String> {
    convert(schema, 0)
}

fn convert(s: &Value, depth: usize) -> Option<String> {
    if depth > MAX_DEPTH {
        return Some(format!(
            "OpenAPIV3Schema must not be nested more than {MAX_DEPTH} levels deep"
        ));
    }
    if let Some(e) = unsupported(s) {
        return Some(e.to_owned());
    }
    // newValueValidation: not, allOf, anyOf, oneOf.
    for junctor in junctors(s) {
        if let Some(e) = convert_nested(junctor, depth + 1) {
            return Some(e);
        }
    }
    if opt_bool(s, "x-kubernetes-preserve-unknown-fields") == Some(false) {
        return Some(
            "internal error: 'x-kubernetes-preserve-unknown-fields' must be true or undefined"
                .into(),
        );
    }
    convert_children(s, depth, convert)
}

fn convert_nested(s: &Value, depth: usize) -> Option<String> {
    if depth > MAX_DEPTH {
        return Some(format!(
            "OpenAPIV3Schema must not be nested more than {MAX_DEPTH} levels deep"
        ));
    }
    if let Some(e) = unsupported(s) {
        return Some(e.to_owned());
    }
    for junctor in junctors(s) {
        if let Some(e) = convert_nested(junctor, depth + 1) {
            return Some(e);
        }
    }
    if opt_bool(s, "x-kubernetes-preserve-unknown-fields") == Some(false) {
        return Some(
            "internal error: 'x-kubernetes-preserve-unknown-fields' must be true or undefined"
                .into(),
        );
    }
    convert_children(s, depth, convert_nested)
}

fn convert_children(
    s: &Value,
    depth: usize,
    f: fn(&Value, usize) -> Option<String>,
) -> Option<String> {
    match s.get("items") {
        Some(Value::Array(a)) if !a.is_empty() => {
            return Some("OpenAPIV3Schema 'items' must be a schema, but is an array".into());
        }
        Some(items @ Value::Object(_)) => {
            if let Some(e) = f(items, depth + 1) {
                return Some(e);
            }
        }
        _ => {}
    }
    for prop in map(s, "properties").into_iter().flat_map(Map::values) {
        if let Some(e) = f(prop, depth + 1) {
            return Some(e);
        }
    }
    obj(s, "additionalProperties").and_then(|a| f(a, depth + 1))
}

/// Upstream `validateUnsupportedFields`.
fn unsupported(s: &Value) -> Option<&'static str> {
    if non_empty(s, "id") {
        Some("OpenAPIV3Schema 'id' is not supported")
    } else if non_empty(s, "$schema") {
        Some("OpenAPIV3Schema 'schema' is not supported")
    } else if non_empty(s, "$ref") {
        Some("OpenAPIV3Schema '$ref' is not supported")
    } else if non_empty(s, "patternProperties") {
        Some("OpenAPIV3Schema 'patternProperties' is not supported")
    } else if non_empty(s, "dependencies") {
        Some("OpenAPIV3Schema 'dependencies' is not supported")
    } else if present(s, "additionalItems") {
        Some("OpenAPIV3Schema 'additionalItems' is not supported")
    } else if non_empty(s, "definitions") {
        Some("OpenAPIV3Schema 'definitions' is not supported")
    } else {
        None
    }
}

/// `not`, then `allOf`, `anyOf`, `oneOf` entries (the conversion's order).
fn junctors(s: &Value) -> impl Iterator<Item = &Value> {
    obj(s, "not").into_iter().chain(
        ["allOf", "anyOf", "oneOf"]
            .into_iter()
            .flat_map(move |k| arr(s, k).into_iter().flatten())
            .filter(|v| v.is_object()),
    )
}

fn entries<'a>(s: &'a Value, k: &str) -> impl Iterator<Item = (usize, &'a Value)> {
    arr(s, k)
        .into_iter()
        .flatten()
        .enumerate()
        .filter(|(_, v)| v.is_object())
}

fn properties(s: &Value) -> impl Iterator<Item = (&String, &Value)> {
    map(s, "properties")
        .into_iter()
        .flatten()
        .filter(|(_, v)| v.is_object())
}

/// `ValidateStructural` for a schema `NewStructural` accepts, under `path`
/// (`…openAPIV3Schema`); sorted by message text, as upstream.
pub(crate) fn validate_structural(schema: &Value, path: &str) -> Vec<Cause> {
    let mut out = Vec::new();
    invariants(schema, Level::Root, path, 0, &mut out);
    value_completeness(schema, Some(schema), path, path, 0, &mut out);
    out.sort_by_key(ToString::to_string);
    out
}

fn preserve(s: &Value) -> bool {
    opt_bool(s, "x-kubernetes-preserve-unknown-fields") == Some(true)
}

fn invariants(s: &Value, lvl: Level, path: &str, depth: usize, out: &mut Vec<Cause>) {
    if depth > MAX_DEPTH {
        out.push(Cause::forbidden(
            path,
            format!("must not be nested more than {MAX_DEPTH} levels deep"),
        ));
        return;
    }
    let ty = str_of(s, "type");
    let items = obj(s, "items");
    if ty == "array" && items.is_none() {
        out.push(Cause::required(child(path, "items"), "must be specified"));
    }
    if let Some(items) = items {
        invariants(items, Level::Item, &child(path, "items"), depth + 1, out);
    }
    let props_path = child(path, "properties");
    for (k, v) in properties(s) {
        invariants(v, Level::Field, &key(&props_path, k), depth + 1, out);
    }
    if present(s, "additionalProperties") {
        if lvl == Level::Root {
            out.push(Cause::forbidden(
                child(path, "additionalProperties"),
                "must not be used at the root",
            ));
        }
        if let Some(a) = obj(s, "additionalProperties") {
            invariants(
                a,
                Level::Field,
                &child(path, "additionalProperties"),
                depth + 1,
                out,
            );
        }
    }
    let int_or_string = bool_of(s, "x-kubernetes-int-or-string");
    let embedded = bool_of(s, "x-kubernetes-embedded-resource");
    if int_or_string && preserve(s) {
        out.push(Cause::invalid(
            child(path, "x-kubernetes-preserve-unknown-fields"),
            &json!(true),
            "must be false if x-kubernetes-int-or-string is true",
        ));
    }
    if int_or_string && embedded {
        out.push(Cause::invalid(
            child(path, "x-kubernetes-embedded-resource"),
            &json!(true),
            "must be false if x-kubernetes-int-or-string is true",
        ));
    }
    let skip_any_of = int_or_string_any_of(s);
    let skip_first_all_of_any_of = arr(s, "allOf")
        .and_then(|a| a.first())
        .is_some_and(int_or_string_any_of);
    value_validation(
        s,
        skip_any_of,
        skip_first_all_of_any_of,
        lvl,
        path,
        depth,
        out,
    );

    let check_metadata = lvl == Level::Root || embedded;
    if embedded && ty != "object" {
        let detail = "must be object if x-kubernetes-embedded-resource is true";
        if ty.is_empty() {
            out.push(Cause::required(child(path, "type"), detail));
        } else {
            out.push(Cause::invalid(child(path, "type"), &json!(ty), detail));
        }
    } else if ty.is_empty() && !int_or_string && !preserve(s) {
        let detail = match lvl {
            Level::Root => "must not be empty at the root",
            Level::Item => "must not be empty for specified array items",
            Level::Field => "must not be empty for specified object fields",
        };
        out.push(Cause::required(child(path, "type"), detail));
    }
    if embedded && present(s, "additionalProperties") {
        out.push(Cause::forbidden(
            child(path, "additionalProperties"),
            "must not be used if x-kubernetes-embedded-resource is set",
        ));
    }
    if lvl == Level::Root && !ty.is_empty() && ty != "object" {
        out.push(Cause::invalid(
            child(path, "type"),
            &json!(ty),
            "must be object at the root",
        ));
    }
    let props = map(s, "properties");
    if check_metadata {
        for field in ["kind", "apiVersion"] {
            if let Some(p) = props.and_then(|p| p.get(field)) {
                let t = str_of(p, "type");
                if t != "string" {
                    out.push(Cause::invalid(
                        child(&key(&props_path, field), "type"),
                        &json!(t),
                        "must be string",
                    ));
                }
            }
        }
    }
    if let Some(metadata) = props.and_then(|p| p.get("metadata")) {
        metadata_invariants(
            metadata,
            check_metadata,
            lvl,
            &key(&props_path, "metadata"),
            out,
        );
    }
    if embedded && !preserve(s) && !non_empty(s, "properties") {
        out.push(Cause::required(
            child(path, "properties"),
            "must not be empty if x-kubernetes-embedded-resource is true without x-kubernetes-preserve-unknown-fields",
        ));
    }
}

/// `anyOf: [{type: integer}, {type: string}]` and nothing else in either entry.
fn int_or_string_any_of(s: &Value) -> bool {
    match arr(s, "anyOf").map(Vec::as_slice) {
        Some([a, b]) => only_type(a, "integer") && only_type(b, "string"),
        _ => false,
    }
}

/// `s` converts to a nested value validation with just `type: ty`.
fn only_type(s: &Value, ty: &str) -> bool {
    let Some(m) = s.as_object() else {
        return false;
    };
    str_of(s, "type") == ty
        && m.iter().all(|(k, v)| match k.as_str() {
            "type" | "externalDocs" | "example" => true,
            "enum" | "allOf" | "anyOf" | "oneOf" => v.as_array().is_none_or(Vec::is_empty),
            "additionalProperties" => matches!(v, Value::Null | Value::Bool(false)),
            _ => matches!(v, Value::Null | Value::Bool(false)) || v.as_str() == Some(""),
        })
}

/// Root metadata may only restrict `name` and `generateName`.
fn metadata_invariants(
    s: &Value,
    check_metadata: bool,
    lvl: Level,
    path: &str,
    out: &mut Vec<Cause>,
) {
    let ty = str_of(s, "type");
    if check_metadata && ty != "object" {
        out.push(Cause::invalid(
            child(path, "type"),
            &json!(ty),
            "must be object",
        ));
    }
    if lvl != Level::Root {
        return;
    }
    let Some(m) = s.as_object() else {
        return;
    };
    let only_names = map(s, "properties")
        .is_none_or(|p| p.is_empty() || p.keys().all(|k| k == "name" || k == "generateName"));
    let anything_else = m.iter().any(|(k, v)| match k.as_str() {
        // Cleared by upstream before comparing, or not kept by NewStructural.
        "type" | "default" | "externalDocs" | "example" => false,
        "properties" => !only_names,
        "enum" | "allOf" | "anyOf" | "oneOf" => v.as_array().is_some_and(|a| !a.is_empty()),
        "additionalProperties"
        | "items"
        | "not"
        | "required"
        | "x-kubernetes-list-map-keys"
        | "x-kubernetes-list-type"
        | "x-kubernetes-map-type"
        | "x-kubernetes-validations" => !v.is_null(),
        _ => !(matches!(v, Value::Null | Value::Bool(false)) || v.as_str() == Some("")),
    });
    if anything_else {
        out.push(Cause::forbidden(
            path,
            "must not specify anything other than name and generateName, but metadata is implicitly specified",
        ));
    }
}

fn value_validation(
    s: &Value,
    skip_any_of: bool,
    skip_first_all_of_any_of: bool,
    lvl: Level,
    path: &str,
    depth: usize,
    out: &mut Vec<Cause>,
) {
    if depth > MAX_DEPTH {
        return;
    }
    if !skip_any_of {
        for (i, v) in entries(s, "anyOf") {
            nested(
                v,
                false,
                false,
                lvl,
                &index(&child(path, "anyOf"), i),
                depth + 1,
                out,
            );
        }
    }
    for (i, v) in entries(s, "allOf") {
        let skip = skip_first_all_of_any_of && i == 0;
        nested(
            v,
            skip,
            false,
            lvl,
            &index(&child(path, "allOf"), i),
            depth + 1,
            out,
        );
    }
    for (i, v) in entries(s, "oneOf") {
        nested(
            v,
            false,
            false,
            lvl,
            &index(&child(path, "oneOf"), i),
            depth + 1,
            out,
        );
    }
    if let Some(not) = obj(s, "not") {
        nested(not, false, false, lvl, &child(path, "not"), depth + 1, out);
    }
    let pattern = str_of(s, "pattern");
    if let Some(err) = Some(pattern)
        .filter(|p| !p.is_empty())
        .and_then(super::pattern::compile_error)
    {
        out.push(Cause::invalid(
            child(path, "pattern"),
            &json!(pattern),
            format!("must be a valid regular expression, but isn't: {err}"),
        ));
    }
}

fn nested(
    v: &Value,
    skip_any_of: bool,
    skip_all_of_any_of: bool,
    lvl: Level,
    path: &str,
    depth: usize,
    out: &mut Vec<Cause>,
) {
    if depth > MAX_DEPTH {
        out.push(Cause::forbidden(
            path,
            format!("must not be nested more than {MAX_DEPTH} levels deep"),
        ));
        return;
    }
    value_validation(v, skip_any_of, skip_all_of_any_of, lvl, path, depth, out);
    if let Some(items) = obj(v, "items") {
        nested(
            items,
            false,
            false,
            lvl,
            &child(path, "items"),
            depth + 1,
            out,
        );
    }
    let props_path = child(path, "properties");
    for (k, p) in properties(v) {
        nested(
            p,
            false,
            false,
            Level::Field,
            &key(&props_path, k),
            depth + 1,
            out,
        );
    }
    let forbid = |out: &mut Vec<Cause>, field: &str, detail: &str| {
        out.push(Cause::forbidden(child(path, field), detail));
    };
    if !str_of(v, "type").is_empty() {
        forbid(out, "type", "must be empty to be structural");
    }
    // `additionalProperties: false` converts to nothing here.
    if matches!(
        v.get("additionalProperties"),
        Some(Value::Object(_) | Value::Bool(true))
    ) {
        forbid(
            out,
            "additionalProperties",
            "must be undefined to be structural",
        );
    }
    if present(v, "default") {
        forbid(out, "default", "must be undefined to be structural");
    }
    if !str_of(v, "title").is_empty() {
        forbid(out, "title", "must be empty to be structural");
    }
    if !str_of(v, "description").is_empty() {
        forbid(out, "description", "must be empty to be structural");
    }
    if bool_of(v, "nullable") {
        forbid(out, "nullable", "must be false to be structural");
    }
    if preserve(v) {
        forbid(
            out,
            "x-kubernetes-preserve-unknown-fields",
            "must be false to be structural",
        );
    }
    if bool_of(v, "x-kubernetes-embedded-resource") {
        forbid(
            out,
            "x-kubernetes-embedded-resource",
            "must be false to be structural",
        );
    }
    if bool_of(v, "x-kubernetes-int-or-string") {
        forbid(
            out,
            "x-kubernetes-int-or-string",
            "must be false to be structural",
        );
    }
    if non_empty(v, "x-kubernetes-list-map-keys") {
        forbid(
            out,
            "x-kubernetes-list-map-keys",
            "must be empty to be structural",
        );
    }
    if present(v, "x-kubernetes-list-type") {
        forbid(
            out,
            "x-kubernetes-list-type",
            "must be undefined to be structural",
        );
    }
    if present(v, "x-kubernetes-map-type") {
        forbid(
            out,
            "x-kubernetes-map-type",
            "must be undefined to be structural",
        );
    }
    if non_empty(v, "x-kubernetes-validations") {
        forbid(
            out,
            "x-kubernetes-validations",
            "must be empty to be structural",
        );
    }
    if map(v, "properties").is_some_and(|p| p.contains_key("metadata")) {
        out.push(Cause::forbidden(
            key(&props_path, "metadata"),
            "must not be specified in a nested context",
        ));
    }
}

fn value_completeness(
    v: &Value,
    s: Option<&Value>,
    s_path: &str,
    v_path: &str,
    depth: usize,
    out: &mut Vec<Cause>,
) {
    if depth > MAX_DEPTH {
        return;
    }
    let Some(s) = s else {
        out.push(Cause::required(
            s_path,
            format!("because it is defined in {v_path}"),
        ));
        return;
    };
    if let Some(not) = obj(v, "not") {
        nested_completeness(not, Some(s), s_path, &child(v_path, "not"), depth + 1, out);
    }
    for k in ["allOf", "anyOf", "oneOf"] {
        for (i, n) in entries(v, k) {
            nested_completeness(
                n,
                Some(s),
                s_path,
                &index(&child(v_path, k), i),
                depth + 1,
                out,
            );
        }
    }
}

fn nested_completeness(
    v: &Value,
    s: Option<&Value>,
    s_path: &str,
    v_path: &str,
    depth: usize,
    out: &mut Vec<Cause>,
) {
    if depth > MAX_DEPTH {
        return;
    }
    let Some(s) = s else {
        out.push(Cause::required(
            s_path,
            format!("because it is defined in {v_path}"),
        ));
        return;
    };
    value_completeness(v, Some(s), s_path, v_path, depth + 1, out);
    if let Some(items) = obj(v, "items") {
        nested_completeness(
            items,
            obj(s, "items"),
            &child(s_path, "items"),
            &child(v_path, "items"),
            depth + 1,
            out,
        );
    }
    let s_props = child(s_path, "properties");
    let v_props = child(v_path, "properties");
    for (k, vf) in properties(v) {
        let sp = key(&s_props, k);
        let vp = key(&v_props, k);
        match map(s, "properties").and_then(|p| p.get(k)) {
            Some(sf) => nested_completeness(vf, Some(sf), &sp, &vp, depth + 1, out),
            None => out.push(Cause::required(
                sp,
                format!("because it is defined in {vp}"),
            )),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(schema: Value) -> Vec<String> {
        validate_structural(&schema, "spec.validation.openAPIV3Schema")
            .iter()
            .map(ToString::to_string)
            .collect()
    }

    #[test]
    fn structural_schema_passes() {
        assert!(check(json!({"type": "object", "properties": {
            "metadata": {"type": "object", "properties": {"name": {"type": "string", "maxLength": 10}}},
            "spec": {"type": "object", "properties": {
                "port": {"x-kubernetes-int-or-string": true, "anyOf": [{"type": "integer"}, {"type": "string"}]},
                "raw": {"type": "object", "x-kubernetes-embedded-resource": true, "x-kubernetes-preserve-unknown-fields": true},
                "list": {"type": "array", "items": {"type": "string"}},
                "one": {"type": "object", "properties": {"a": {"type": "string"}}, "oneOf": [{"required": ["a"]}]},
            }}}})).is_empty());
    }

    #[test]
    fn missing_types() {
        assert_eq!(
            check(
                json!({"properties": {"spec": {"properties": {"foo": {}}}, "l": {"type": "array", "items": {}}}})
            ),
            [
                "spec.validation.openAPIV3Schema.properties[l].items.type: Required value: must not be empty for specified array items",
                "spec.validation.openAPIV3Schema.properties[spec].properties[foo].type: Required value: must not be empty for specified object fields",
                "spec.validation.openAPIV3Schema.properties[spec].type: Required value: must not be empty for specified object fields",
                "spec.validation.openAPIV3Schema.type: Required value: must not be empty at the root",
            ]
        );
    }

    // Upstream validation_test.go / schema validation_test.go facts.
    #[test]
    fn upstream_invariants() {
        assert_eq!(
            check(
                json!({"type": "object", "additionalProperties": {"type": "string"},
                "properties": {"a": {"type": "array"}}})
            ),
            [
                "spec.validation.openAPIV3Schema.additionalProperties: Forbidden: must not be used at the root",
                "spec.validation.openAPIV3Schema.properties[a].items: Required value: must be specified",
            ]
        );
        assert_eq!(
            check(json!({"type": "string"})),
            [
                r#"spec.validation.openAPIV3Schema.type: Invalid value: "string": must be object at the root"#
            ]
        );
        assert_eq!(
            check(
                json!({"type": "object", "properties": {"e": {"x-kubernetes-embedded-resource": true}}})
            ),
            [
                "spec.validation.openAPIV3Schema.properties[e].properties: Required value: must not be empty if x-kubernetes-embedded-resource is true without x-kubernetes-preserve-unknown-fields",
                "spec.validation.openAPIV3Schema.properties[e].type: Required value: must be object if x-kubernetes-embedded-resource is true",
            ]
        );
        assert_eq!(
            check(
                json!({"type": "object", "properties": {"metadata": {"type": "object", "properties": {"labels": {"type": "object"}}},
                "kind": {"type": "integer"}}})
            ),
            [
                r#"spec.validation.openAPIV3Schema.properties[kind].type: Invalid value: "integer": must be string"#,
                "spec.validation.openAPIV3Schema.properties[metadata]: Forbidden: must not specify anything other than name and generateName, but metadata is implicitly specified",
            ]
        );
        assert_eq!(
            check(
                json!({"type": "object", "properties": {"x": {"x-kubernetes-int-or-string": true,
                "x-kubernetes-preserve-unknown-fields": true}}})
            ),
            [
                "spec.validation.openAPIV3Schema.properties[x].x-kubernetes-preserve-unknown-fields: Invalid value: true: must be false if x-kubernetes-int-or-string is true"
            ]
        );
    }

    #[test]
    fn value_validations_stay_value_validations() {
        assert_eq!(
            check(
                json!({"type": "object", "properties": {"a": {"type": "object", "anyOf": [
                {"type": "string", "description": "d", "properties": {"b": {}, "metadata": {}}, "nullable": true}]}}})
            ),
            [
                "spec.validation.openAPIV3Schema.properties[a].anyOf[0].description: Forbidden: must be empty to be structural",
                "spec.validation.openAPIV3Schema.properties[a].anyOf[0].nullable: Forbidden: must be false to be structural",
                "spec.validation.openAPIV3Schema.properties[a].anyOf[0].properties[metadata]: Forbidden: must not be specified in a nested context",
                "spec.validation.openAPIV3Schema.properties[a].anyOf[0].type: Forbidden: must be empty to be structural",
            ]
        );
        // Completeness is checked from the root's value validations only.
        assert_eq!(
            check(
                json!({"type": "object", "properties": {"a": {"type": "object"}},
                "allOf": [{"properties": {"a": {"properties": {"b": {}}}, "c": {"items": {}}}}]})
            ),
            [
                "spec.validation.openAPIV3Schema.properties[a].properties[b]: Required value: because it is defined in spec.validation.openAPIV3Schema.allOf[0].properties[a].properties[b]",
                "spec.validation.openAPIV3Schema.properties[c]: Required value: because it is defined in spec.validation.openAPIV3Schema.allOf[0].properties[c]",
            ]
        );
    }

    #[test]
    fn patterns_must_compile() {
        assert_eq!(
            check(
                json!({"type": "object", "properties": {"a": {"type": "string", "pattern": "(a"},
                "b": {"type": "string", "pattern": "^[a-z]+$"}}})
            ),
            [
                "spec.validation.openAPIV3Schema.properties[a].pattern: Invalid value: \"(a\": must be a valid regular expression, but isn't: error parsing regexp: missing closing ): `(a`"
            ]
        );
    }

    #[test]
    fn conversion_errors() {
        assert_eq!(conversion_error(&json!({"type": "object"})), None);
        assert_eq!(
            conversion_error(&json!({"properties": {"a": {"$schema": "x"}}})).as_deref(),
            Some("OpenAPIV3Schema 'schema' is not supported")
        );
        assert_eq!(
            conversion_error(&json!({"items": [{}]})).as_deref(),
            Some("OpenAPIV3Schema 'items' must be a schema, but is an array")
        );
    }

    #[test]
    fn deep_schema_is_refused_not_overflowed() {
        let mut s = json!({"type": "string"});
        for _ in 0..400 {
            s = json!({"type": "array", "items": s});
        }
        assert!(conversion_error(&s).is_some());
        let errs = validate_structural(&s, "x");
        assert!(errs.iter().any(|e| e.message.contains("nested")));
    }
}
