//! The OpenAPI v3 schema rules of a CRD (upstream
//! `ValidateCustomResourceDefinitionOpenAPISchema`, the v3
//! `specStandardValidator` and `validateMapListKeysMapSet`): unsupported
//! keywords, `type`, `default` placement, `x-kubernetes-*` combinations and
//! the static checks of `x-kubernetes-validations` entries (CEL compilation
//! itself is `crate::cel`'s).

use serde_json::{Value, json};
use skein_admission::Cause;

use super::field_path;
use super::json::{arr, bool_of, map, non_empty, obj, opt_bool, opt_str, present, str_of, strings};
use super::options::Options;
use super::path::{child, index, key};
use super::structural::{self, MAX_DEPTH};

const OPENAPI_TYPES: [&str; 6] = ["array", "boolean", "integer", "number", "object", "string"];
const VALIDATION_REASONS: [&str; 4] = [
    "FieldValueDuplicate",
    "FieldValueForbidden",
    "FieldValueInvalid",
    "FieldValueRequired",
];

/// The per-node state of upstream's `specStandardValidatorV3`.
#[derive(Clone)]
pub(crate) struct Context {
    allow_defaults: bool,
    disallow_defaults_reason: String,
    inside_resource_meta: bool,
    require_valid_property_type: bool,
}

impl Context {
    /// The root context under `opts`.
    pub(crate) fn root(opts: &Options) -> Self {
        Context {
            allow_defaults: opts.allow_defaults,
            disallow_defaults_reason: String::new(),
            inside_resource_meta: false,
            require_valid_property_type: opts.require_valid_property_type,
        }
    }

    fn forbid_defaults(&self, reason: &str) -> Self {
        Context {
            allow_defaults: false,
            disallow_defaults_reason: reason.to_owned(),
            ..self.clone()
        }
    }

    fn inside_meta(&self) -> Self {
        Context {
            inside_resource_meta: true,
            ..self.clone()
        }
    }
}

/// Problems of `schema` under `path`, in upstream's order (map keys sorted).
pub(crate) fn validate_schema(
    schema: &Value,
    path: &str,
    ctx: &Context,
    is_root: bool,
    opts: &Options,
    depth: usize,
    out: &mut Vec<Cause>,
) {
    if !schema.is_object() {
        return;
    }
    if depth > MAX_DEPTH {
        out.push(Cause::forbidden(
            path,
            format!("must not be nested more than {MAX_DEPTH} levels deep"),
        ));
        return;
    }
    standard(schema, path, ctx, out);
    if bool_of(schema, "uniqueItems") {
        out.push(Cause::forbidden(
            child(path, "uniqueItems"),
            "uniqueItems cannot be set to true since the runtime complexity becomes quadratic",
        ));
    }
    let next = depth + 1;
    if let Some(additional) = schema.get("additionalProperties").filter(|a| !a.is_null()) {
        let allows_all = additional.as_bool() == Some(true);
        if non_empty(schema, "properties") && !allows_all {
            out.push(Cause::forbidden(
                child(path, "additionalProperties"),
                "additionalProperties and properties are mutual exclusive",
            ));
        }
        let sub = if ctx.inside_resource_meta {
            ctx.forbid_defaults("inside additionalProperties applying to object metadata")
        } else {
            ctx.clone()
        };
        if additional.is_object() {
            validate_schema(
                additional,
                &child(path, "additionalProperties"),
                &sub,
                false,
                opts,
                next,
                out,
            );
        }
    }
    let props_path = child(path, "properties");
    let embedded = bool_of(schema, "x-kubernetes-embedded-resource");
    for (name, prop) in map(schema, "properties").into_iter().flatten() {
        let mut sub = ctx.clone();
        if (is_root || embedded) && matches!(name.as_str(), "metadata" | "kind" | "apiVersion") {
            sub = sub.inside_meta();
            if is_root {
                sub = sub.forbid_defaults(&format!("in top-level {name}"));
            }
        }
        validate_schema(prop, &key(&props_path, name), &sub, false, opts, next, out);
    }
    if let Some(not) = obj(schema, "not") {
        validate_schema(not, &child(path, "not"), ctx, false, opts, next, out);
    }
    for k in ["allOf", "oneOf", "anyOf"] {
        for (i, s) in arr(schema, k).into_iter().flatten().enumerate() {
            validate_schema(s, &index(&child(path, k), i), ctx, false, opts, next, out);
        }
    }
    for (name, s) in map(schema, "definitions").into_iter().flatten() {
        validate_schema(
            s,
            &key(&child(path, "definitions"), name),
            ctx,
            false,
            opts,
            next,
            out,
        );
    }
    match schema.get("items") {
        Some(items @ Value::Object(_)) => {
            validate_schema(items, &child(path, "items"), ctx, false, opts, next, out);
        }
        Some(Value::Array(list)) => {
            for (i, s) in list.iter().enumerate() {
                validate_schema(
                    s,
                    &index(&child(path, "items"), i),
                    ctx,
                    false,
                    opts,
                    next,
                    out,
                );
            }
        }
        _ => {}
    }
    for (name, s) in map(schema, "dependencies").into_iter().flatten() {
        validate_schema(
            s,
            &key(&child(path, "dependencies"), name),
            ctx,
            false,
            opts,
            next,
            out,
        );
    }
    if opt_bool(schema, "x-kubernetes-preserve-unknown-fields") == Some(false) {
        out.push(Cause::invalid(
            child(path, "x-kubernetes-preserve-unknown-fields"),
            &json!(false),
            "must be true or undefined",
        ));
    }
    list_and_map_types(schema, path, opts, out);
    if opts.require_map_list_keys_map_set_validation {
        out.extend(map_list_keys_map_set(schema, path));
    }
    validation_rules(schema, path, out);
}

/// Upstream `specStandardValidatorV3.validate`.
fn standard(schema: &Value, path: &str, ctx: &Context, out: &mut Vec<Cause>) {
    let ty = str_of(schema, "type");
    if ctx.require_valid_property_type && !ty.is_empty() && !OPENAPI_TYPES.contains(&ty) {
        out.push(Cause::not_supported(
            child(path, "type"),
            &json!(ty),
            &OPENAPI_TYPES,
        ));
    }
    if present(schema, "default") && !ctx.allow_defaults {
        let mut detail = "must not be set".to_owned();
        if !ctx.disallow_defaults_reason.is_empty() {
            detail = format!("{detail} {}", ctx.disallow_defaults_reason);
        }
        out.push(Cause::forbidden(child(path, "default"), detail));
    }
    if non_empty(schema, "id") {
        out.push(Cause::forbidden(child(path, "id"), "id is not supported"));
    }
    if present(schema, "additionalItems") {
        out.push(Cause::forbidden(
            child(path, "additionalItems"),
            "additionalItems is not supported",
        ));
    }
    if non_empty(schema, "patternProperties") {
        out.push(Cause::forbidden(
            child(path, "patternProperties"),
            "patternProperties is not supported",
        ));
    }
    if non_empty(schema, "definitions") {
        out.push(Cause::forbidden(
            child(path, "definitions"),
            "definitions is not supported",
        ));
    }
    if present(schema, "dependencies") {
        out.push(Cause::forbidden(
            child(path, "dependencies"),
            "dependencies is not supported",
        ));
    }
    if present(schema, "$ref") {
        out.push(Cause::forbidden(
            child(path, "$ref"),
            "$ref is not supported",
        ));
    }
    if ty == "null" {
        out.push(Cause::forbidden(
            child(path, "type"),
            "type cannot be set to null, use nullable as an alternative",
        ));
    }
    if schema
        .get("items")
        .and_then(Value::as_array)
        .is_some_and(|a| !a.is_empty())
    {
        out.push(Cause::forbidden(
            child(path, "items"),
            "items must be a schema object and not an array",
        ));
    }
    if ctx.inside_resource_meta && bool_of(schema, "x-kubernetes-embedded-resource") {
        out.push(Cause::forbidden(
            child(path, "x-kubernetes-embedded-resource"),
            "must not be used inside of resource meta",
        ));
    }
}

/// `x-kubernetes-map-type`, `x-kubernetes-list-type` and `x-kubernetes-list-map-keys`.
fn list_and_map_types(schema: &Value, path: &str, opts: &Options, out: &mut Vec<Cause>) {
    let ty = str_of(schema, "type");
    let type_path = child(path, "type");
    let type_error = |out: &mut Vec<Cause>, detail: &str| {
        if ty.is_empty() {
            out.push(Cause::required(&type_path, detail));
        } else {
            out.push(Cause::invalid(&type_path, &json!(ty), detail));
        }
    };
    let map_type = opt_str(schema, "x-kubernetes-map-type");
    if let Some(mt) = map_type {
        if ty != "object" {
            type_error(out, "must be object if x-kubernetes-map-type is specified");
        }
        if mt != "atomic" && mt != "granular" {
            out.push(Cause::not_supported(
                child(path, "x-kubernetes-map-type"),
                &json!(mt),
                &["atomic", "granular"],
            ));
        }
    }
    let list_type = opt_str(schema, "x-kubernetes-list-type");
    let items = obj(schema, "items");
    let items_path = child(path, "items");
    if list_type.is_some() && ty != "array" {
        type_error(out, "must be array if x-kubernetes-list-type is specified");
    } else if opts.require_atomic_set_type
        && list_type == Some("set")
        && let Some(is) = items
    {
        let detail = "must be atomic as item of a list with x-kubernetes-list-type=set";
        let item_list_type = opt_str(is, "x-kubernetes-list-type");
        // Upstream prints the item's list type as the bad value in both cases.
        let shown = json!(item_list_type.unwrap_or("null"));
        match str_of(is, "type") {
            "array" if item_list_type.is_some_and(|t| t != "atomic") => {
                out.push(Cause::invalid(
                    child(&items_path, "x-kubernetes-list-type"),
                    &shown,
                    detail,
                ));
            }
            "object" if opt_str(is, "x-kubernetes-map-type") != Some("atomic") => {
                out.push(Cause::invalid(
                    child(&items_path, "x-kubernetes-map-type"),
                    &shown,
                    detail,
                ));
            }
            _ => {}
        }
    }
    if let Some(lt) = list_type
        && !matches!(lt, "atomic" | "set" | "map")
    {
        out.push(Cause::not_supported(
            child(path, "x-kubernetes-list-type"),
            &json!(lt),
            &["atomic", "set", "map"],
        ));
    }
    let keys = strings(schema, "x-kubernetes-list-map-keys");
    if !keys.is_empty() {
        match list_type {
            None => out.push(Cause::required(
                child(path, "x-kubernetes-list-type"),
                "must be map if x-kubernetes-list-map-keys is non-empty",
            )),
            Some("map") => {}
            Some(lt) => out.push(Cause::invalid(
                child(path, "x-kubernetes-list-type"),
                &json!(lt),
                "must be map if x-kubernetes-list-map-keys is non-empty",
            )),
        }
    }
    if list_type != Some("map") {
        return;
    }
    if keys.is_empty() {
        out.push(Cause::required(
            child(path, "x-kubernetes-list-map-keys"),
            "must not be empty if x-kubernetes-list-type is map",
        ));
    }
    match schema.get("items") {
        None | Some(Value::Null) => out.push(Cause::required(
            &items_path,
            "must have a schema if x-kubernetes-list-type is map",
        )),
        Some(Value::Array(list)) => {
            let schemas: Vec<String> = list.iter().map(super::render::schema_props).collect();
            out.push(Cause::invalid_rendered(
                &items_path,
                &format!(
                    "apiextensions.JSONSchemaPropsOrArray{{Schema:(*apiextensions.JSONSchemaProps)(nil), JSONSchemas:[]apiextensions.JSONSchemaProps{{{}}}}}",
                    schemas.join(", ")
                ),
                "must only have a single schema if x-kubernetes-list-type is map",
            ));
        }
        _ => {}
    }
    let Some(is) = items else {
        return;
    };
    let item_type = str_of(is, "type");
    if item_type != "object" {
        out.push(Cause::invalid(
            child(&items_path, "type"),
            &json!(item_type),
            "must be object if parent array's x-kubernetes-list-type is map",
        ));
        return;
    }
    let keys_path = child(path, "x-kubernetes-list-map-keys");
    let keys_value = json!(keys);
    let mut seen = Vec::new();
    for k in &keys {
        match map(is, "properties").and_then(|p| p.get(*k)) {
            Some(p) => {
                if matches!(str_of(p, "type"), "array" | "object") {
                    // Upstream prints the items' type as the bad value.
                    out.push(Cause::invalid(
                        child(&key(&child(&items_path, "properties"), k), "type"),
                        &json!(item_type),
                        "must be a scalar type if parent array's x-kubernetes-list-type is map",
                    ));
                }
            }
            None => out.push(Cause::invalid(
                &keys_path,
                &keys_value,
                "entries must all be names of item properties",
            )),
        }
        if seen.contains(k) {
            out.push(Cause::invalid(
                &keys_path,
                &keys_value,
                "must not contain duplicate entries",
            ));
        }
        seen.push(*k);
    }
}

/// Upstream `validateMapListKeysMapSet`.
pub(crate) fn map_list_keys_map_set(schema: &Value, path: &str) -> Vec<Cause> {
    let mut out = Vec::new();
    let (Some(is), Some(lt)) = (
        obj(schema, "items"),
        opt_str(schema, "x-kubernetes-list-type"),
    ) else {
        return out;
    };
    if lt != "set" && lt != "map" {
        return out;
    }
    let items_path = child(path, "items");
    if bool_of(is, "nullable") {
        out.push(Cause::forbidden(
            child(&items_path, "nullable"),
            format!("cannot be nullable when x-kubernetes-list-type is {lt}"),
        ));
    }
    if lt == "map" {
        let required = strings(is, "required");
        for k in strings(schema, "x-kubernetes-list-map-keys") {
            let Some(p) = map(is, "properties").and_then(|m| m.get(k)) else {
                continue;
            };
            let prop_path = key(&child(&items_path, "properties"), k);
            if !required.contains(&k) && !present(p, "default") {
                out.push(Cause::required(
                    child(&prop_path, "default"),
                    "this property is in x-kubernetes-list-map-keys, so it must have a default or be a required property",
                ));
            }
            if bool_of(p, "nullable") {
                out.push(Cause::forbidden(
                    child(&prop_path, "nullable"),
                    "this property is in x-kubernetes-list-map-keys, so it cannot be nullable",
                ));
            }
        }
    }
    out
}

fn has_newlines(s: &str) -> bool {
    s.contains(['\n', '\r'])
}

/// The static checks of each `x-kubernetes-validations` entry.
fn validation_rules(schema: &Value, path: &str, out: &mut Vec<Cause>) {
    let base = child(path, "x-kubernetes-validations");
    for (i, rule) in arr(schema, "x-kubernetes-validations")
        .into_iter()
        .flatten()
        .enumerate()
    {
        let p = index(&base, i);
        let text = str_of(rule, "rule");
        let message = str_of(rule, "message");
        let message_expression = str_of(rule, "messageExpression");
        let (trimmed_rule, trimmed_msg) = (text.trim(), message.trim());
        if trimmed_rule.is_empty() {
            out.push(Cause::required(child(&p, "rule"), "rule is not specified"));
        } else if !message.is_empty() && trimmed_msg.is_empty() {
            out.push(Cause::invalid(
                child(&p, "message"),
                &json!(message),
                "message must be non-empty if specified",
            ));
        } else if has_newlines(trimmed_msg) {
            out.push(Cause::invalid(
                child(&p, "message"),
                &json!(message),
                "message must not contain line breaks",
            ));
        } else if has_newlines(trimmed_rule) && trimmed_msg.is_empty() {
            out.push(Cause::required(
                child(&p, "message"),
                "message must be specified if rule contains line breaks",
            ));
        }
        if !message_expression.is_empty() && message_expression.trim().is_empty() {
            out.push(Cause::required(
                child(&p, "messageExpression"),
                "messageExpression must be non-empty if specified",
            ));
        }
        if let Some(reason) = opt_str(rule, "reason")
            && !VALIDATION_REASONS.contains(&reason)
        {
            out.push(Cause::not_supported(
                child(&p, "reason"),
                &json!(reason),
                &VALIDATION_REASONS,
            ));
        }
        let field_path = str_of(rule, "fieldPath");
        let fp = child(&p, "fieldPath");
        if !field_path.is_empty() && field_path.trim().is_empty() {
            out.push(Cause::invalid(
                &fp,
                &json!(field_path),
                "fieldPath must be non-empty if specified",
            ));
        }
        if has_newlines(field_path) {
            out.push(Cause::invalid(
                &fp,
                &json!(field_path),
                "fieldPath must not contain line breaks",
            ));
        }
        if !field_path.is_empty() && !path_valid(schema, field_path) {
            out.push(Cause::invalid(
                &fp,
                &json!(field_path),
                "fieldPath must be a valid path",
            ));
        }
    }
}

/// Upstream `pathValid`: unknown (so valid) when the schema is not structural.
fn path_valid(schema: &Value, field_path: &str) -> bool {
    structural::conversion_error(schema).is_some()
        || field_path::resolve(field_path, schema, true).is_ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(schema: Value) -> Vec<String> {
        let opts = Options::create();
        let mut out = Vec::new();
        validate_schema(
            &schema,
            "spec.validation.openAPIV3Schema",
            &Context::root(&opts),
            true,
            &opts,
            0,
            &mut out,
        );
        out.iter().map(ToString::to_string).collect()
    }

    const P: &str = "spec.validation.openAPIV3Schema";

    #[test]
    fn valid_schema() {
        assert!(check(json!({"type": "object", "properties": {"spec": {"type": "object", "properties": {
            "ports": {"type": "array", "x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["port"],
                "items": {"type": "object", "required": ["port"], "properties": {"port": {"type": "integer"}}}},
            "tags": {"type": "array", "x-kubernetes-list-type": "set", "items": {"type": "string"}},
            "labels": {"type": "object", "x-kubernetes-map-type": "atomic", "additionalProperties": {"type": "string"}},
            "n": {"type": "integer", "default": 3},
        }, "x-kubernetes-validations": [{"rule": "self.n > 0", "fieldPath": ".n", "reason": "FieldValueInvalid"}]}}})).is_empty());
    }

    // Upstream validation_test.go facts.
    #[test]
    fn unsupported_keywords() {
        assert_eq!(
            check(
                json!({"type": "object", "properties": {"a": {"type": "null", "$ref": "#/x", "id": "i",
                "uniqueItems": true, "patternProperties": {"x": {}}, "items": [{}]}}})
            ),
            [
                format!(
                    r#"{P}.properties[a].type: Unsupported value: "null": supported values: "array", "boolean", "integer", "number", "object", "string""#
                ),
                format!("{P}.properties[a].id: Forbidden: id is not supported"),
                format!(
                    "{P}.properties[a].patternProperties: Forbidden: patternProperties is not supported"
                ),
                format!("{P}.properties[a].$ref: Forbidden: $ref is not supported"),
                format!(
                    "{P}.properties[a].type: Forbidden: type cannot be set to null, use nullable as an alternative"
                ),
                format!(
                    "{P}.properties[a].items: Forbidden: items must be a schema object and not an array"
                ),
                format!(
                    "{P}.properties[a].uniqueItems: Forbidden: uniqueItems cannot be set to true since the runtime complexity becomes quadratic"
                ),
            ]
        );
        assert_eq!(
            check(json!({"type": "object", "properties": {"a": {"type": "bogus"}}})),
            [format!(
                r#"{P}.properties[a].type: Unsupported value: "bogus": supported values: "array", "boolean", "integer", "number", "object", "string""#
            )]
        );
    }

    #[test]
    fn defaults_in_metadata() {
        assert_eq!(
            check(
                json!({"type": "object", "properties": {"metadata": {"type": "object", "default": {}},
                "e": {"type": "object", "x-kubernetes-embedded-resource": true, "properties": {
                    "metadata": {"type": "object", "additionalProperties": {"type": "string", "default": "x"}}}}}})
            ),
            [
                format!(
                    "{P}.properties[e].properties[metadata].additionalProperties.default: Forbidden: must not be set inside additionalProperties applying to object metadata"
                ),
                format!(
                    "{P}.properties[metadata].default: Forbidden: must not be set in top-level metadata"
                ),
            ]
        );
    }

    #[test]
    fn additional_properties_and_properties() {
        assert_eq!(
            check(
                json!({"type": "object", "properties": {"a": {"type": "object", "properties": {"b": {"type": "string"}},
                "additionalProperties": false}, "c": {"type": "object", "properties": {"b": {"type": "string"}},
                "additionalProperties": true}}})
            ),
            [format!(
                "{P}.properties[a].additionalProperties: Forbidden: additionalProperties and properties are mutual exclusive"
            )]
        );
    }

    #[test]
    fn list_types() {
        assert_eq!(
            check(json!({"type": "object", "properties": {
                "a": {"type": "string", "x-kubernetes-list-type": "map"},
                "b": {"type": "array", "x-kubernetes-list-type": "bag", "items": {"type": "string"}},
                "c": {"type": "array", "x-kubernetes-list-map-keys": ["k"], "items": {"type": "string"}},
                "d": {"type": "array", "x-kubernetes-list-type": "set", "items": {"type": "object"}},
                "e": {"x-kubernetes-map-type": "bogus"},
                "f": {"type": "array", "x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["k", "x", "k"],
                    "items": {"type": "object", "properties": {"k": {"type": "object", "nullable": true}}}},
            }})),
            [
                format!(
                    r#"{P}.properties[a].type: Invalid value: "string": must be array if x-kubernetes-list-type is specified"#
                ),
                format!(
                    "{P}.properties[a].x-kubernetes-list-map-keys: Required value: must not be empty if x-kubernetes-list-type is map"
                ),
                format!(
                    "{P}.properties[a].items: Required value: must have a schema if x-kubernetes-list-type is map"
                ),
                format!(
                    r#"{P}.properties[b].x-kubernetes-list-type: Unsupported value: "bag": supported values: "atomic", "set", "map""#
                ),
                format!(
                    "{P}.properties[c].x-kubernetes-list-type: Required value: must be map if x-kubernetes-list-map-keys is non-empty"
                ),
                format!(
                    r#"{P}.properties[d].items.x-kubernetes-map-type: Invalid value: "null": must be atomic as item of a list with x-kubernetes-list-type=set"#
                ),
                format!(
                    "{P}.properties[e].type: Required value: must be object if x-kubernetes-map-type is specified"
                ),
                format!(
                    r#"{P}.properties[e].x-kubernetes-map-type: Unsupported value: "bogus": supported values: "atomic", "granular""#
                ),
                format!(
                    r#"{P}.properties[f].items.properties[k].type: Invalid value: "object": must be a scalar type if parent array's x-kubernetes-list-type is map"#
                ),
                format!(
                    r#"{P}.properties[f].x-kubernetes-list-map-keys: Invalid value: []string{{"k", "x", "k"}}: entries must all be names of item properties"#
                ),
                format!(
                    r#"{P}.properties[f].items.properties[k].type: Invalid value: "object": must be a scalar type if parent array's x-kubernetes-list-type is map"#
                ),
                format!(
                    r#"{P}.properties[f].x-kubernetes-list-map-keys: Invalid value: []string{{"k", "x", "k"}}: must not contain duplicate entries"#
                ),
                format!(
                    "{P}.properties[f].items.properties[k].default: Required value: this property is in x-kubernetes-list-map-keys, so it must have a default or be a required property"
                ),
                format!(
                    "{P}.properties[f].items.properties[k].nullable: Forbidden: this property is in x-kubernetes-list-map-keys, so it cannot be nullable"
                ),
                format!(
                    "{P}.properties[f].items.properties[k].default: Required value: this property is in x-kubernetes-list-map-keys, so it must have a default or be a required property"
                ),
                format!(
                    "{P}.properties[f].items.properties[k].nullable: Forbidden: this property is in x-kubernetes-list-map-keys, so it cannot be nullable"
                ),
            ]
        );
    }

    #[test]
    fn validation_rule_fields() {
        assert_eq!(
            check(
                json!({"type": "object", "properties": {"a": {"type": "string"}}, "x-kubernetes-validations": [
                    {"rule": " "},
                    {"rule": "a\nb"},
                    {"rule": "true", "message": " ", "messageExpression": " ", "reason": "Nope"},
                    {"rule": "true", "fieldPath": ".b"},
                ]})
            ),
            [
                format!(
                    "{P}.x-kubernetes-validations[0].rule: Required value: rule is not specified"
                ),
                format!(
                    "{P}.x-kubernetes-validations[1].message: Required value: message must be specified if rule contains line breaks"
                ),
                format!(
                    r#"{P}.x-kubernetes-validations[2].message: Invalid value: " ": message must be non-empty if specified"#
                ),
                format!(
                    "{P}.x-kubernetes-validations[2].messageExpression: Required value: messageExpression must be non-empty if specified"
                ),
                format!(
                    r#"{P}.x-kubernetes-validations[2].reason: Unsupported value: "Nope": supported values: "FieldValueDuplicate", "FieldValueForbidden", "FieldValueInvalid", "FieldValueRequired""#
                ),
                format!(
                    r#"{P}.x-kubernetes-validations[3].fieldPath: Invalid value: ".b": fieldPath must be a valid path"#
                ),
            ]
        );
    }
}
