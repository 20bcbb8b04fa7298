//! One `CustomResourceValidation` (`{openAPIV3Schema: …}`), upstream
//! `validateCustomResourceDefinitionValidation`: root restrictions when the
//! status subresource is on, structural rules, the OpenAPI rules, and CEL.

use serde_json::{Value, json};
use skein_admission::Cause;

use super::default_values;
use super::json::{non_zero, obj, present};
use super::options::Options;
use super::path::child;
use super::schema_props::{Context, validate_schema};
use super::structural;

/// The JSON keys of `JSONSchemaProps` in Go declaration order, with their
/// Go field names.
const FIELDS: [(&str, &str); 44] = [
    ("id", "ID"),
    ("$schema", "Schema"),
    ("$ref", "Ref"),
    ("description", "Description"),
    ("type", "Type"),
    ("nullable", "Nullable"),
    ("format", "Format"),
    ("title", "Title"),
    ("default", "Default"),
    ("maximum", "Maximum"),
    ("exclusiveMaximum", "ExclusiveMaximum"),
    ("minimum", "Minimum"),
    ("exclusiveMinimum", "ExclusiveMinimum"),
    ("maxLength", "MaxLength"),
    ("minLength", "MinLength"),
    ("pattern", "Pattern"),
    ("maxItems", "MaxItems"),
    ("minItems", "MinItems"),
    ("uniqueItems", "UniqueItems"),
    ("multipleOf", "MultipleOf"),
    ("enum", "Enum"),
    ("maxProperties", "MaxProperties"),
    ("minProperties", "MinProperties"),
    ("required", "Required"),
    ("items", "Items"),
    ("allOf", "AllOf"),
    ("oneOf", "OneOf"),
    ("anyOf", "AnyOf"),
    ("not", "Not"),
    ("properties", "Properties"),
    ("additionalProperties", "AdditionalProperties"),
    ("patternProperties", "PatternProperties"),
    ("dependencies", "Dependencies"),
    ("additionalItems", "AdditionalItems"),
    ("definitions", "Definitions"),
    ("externalDocs", "ExternalDocs"),
    ("example", "Example"),
    (
        "x-kubernetes-preserve-unknown-fields",
        "XPreserveUnknownFields",
    ),
    ("x-kubernetes-embedded-resource", "XEmbeddedResource"),
    ("x-kubernetes-int-or-string", "XIntOrString"),
    ("x-kubernetes-list-map-keys", "XListMapKeys"),
    ("x-kubernetes-list-type", "XListType"),
    ("x-kubernetes-map-type", "XMapType"),
    ("x-kubernetes-validations", "XValidations"),
];

const ALLOWED_AT_ROOT: [&str; 22] = [
    "Description",
    "Type",
    "Format",
    "Title",
    "Maximum",
    "ExclusiveMaximum",
    "Minimum",
    "ExclusiveMinimum",
    "MaxLength",
    "MinLength",
    "Pattern",
    "MaxItems",
    "MinItems",
    "UniqueItems",
    "MultipleOf",
    "Required",
    "Items",
    "Properties",
    "ExternalDocs",
    "Example",
    "XPreserveUnknownFields",
    "XValidations",
];

/// `true` when the Go field behind `key` holds a non-zero value.
fn go_non_zero(schema: &Value, key: &str) -> bool {
    match key {
        // Pointers (`*bool`, `*JSONSchemaPropsOrBool`): set even when false.
        "additionalProperties" | "additionalItems" | "x-kubernetes-preserve-unknown-fields" => {
            present(schema, key)
        }
        _ => non_zero(schema, key),
    }
}

/// Problems of `validation` (a `*CustomResourceValidation`) under `path`
/// (`spec.validation` or `spec.versions[i].schema`).
pub(crate) fn validate_validation(
    validation: Option<&Value>,
    status_enabled: bool,
    opts: &Options,
    path: &str,
) -> Vec<Cause> {
    let mut out = Vec::new();
    let Some(schema) = validation.and_then(|v| obj(v, "openAPIV3Schema")) else {
        return out;
    };
    let schema_path = child(path, "openAPIV3Schema");
    if status_enabled {
        for (key, name) in FIELDS {
            if !go_non_zero(schema, key) {
                continue;
            }
            if name == "Type" {
                let ty = schema.get("type").cloned().unwrap_or(Value::Null);
                if ty.as_str() != Some("object") {
                    out.push(Cause::invalid(
                        child(path, "openAPIV3Schema.type"),
                        &ty,
                        r#"only "object" is allowed as the type at the root of the schema if the status subresource is enabled"#,
                    ));
                    break;
                }
                continue;
            }
            if !ALLOWED_AT_ROOT.contains(&name) {
                out.push(Cause::invalid_rendered(
                    &schema_path,
                    &super::render::schema_props(schema),
                    format!(
                        "only [{}] fields are allowed at the root of the schema if the status subresource is enabled",
                        ALLOWED_AT_ROOT.join(" ")
                    ),
                ));
                break;
            }
        }
    }
    if schema.get("nullable").and_then(Value::as_bool) == Some(true) {
        out.push(Cause::forbidden(
            child(path, "openAPIV3Schema.nullable"),
            "nullable cannot be true at the root",
        ));
    }
    let mut structural_init_error = None;
    let mut structural_ok = false;
    if opts.require_structural_schema {
        if let Some(err) = structural::conversion_error(schema) {
            structural_init_error = Some(Cause::invalid(&schema_path, &json!(""), err));
        } else {
            let errs = structural::validate_structural(schema, &schema_path);
            if errs.is_empty() {
                let defaults = default_values::validate_defaults(
                    schema,
                    &schema_path,
                    opts.require_pruned_defaults,
                );
                structural_ok = defaults.is_empty();
                out.extend(defaults);
            }
            out.extend(errs);
        }
    }
    let mut schema_errors = Vec::new();
    validate_schema(
        schema,
        &schema_path,
        &Context::root(opts),
        true,
        opts,
        0,
        &mut schema_errors,
    );
    let schema_clean = schema_errors.is_empty();
    out.extend(schema_errors);
    if structural_ok && schema_clean {
        out.extend(super::rules::compile_errors(schema, &schema_path));
    }
    if out.is_empty() {
        out.extend(structural_init_error);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(schema: Value, status: bool) -> Vec<String> {
        let v = json!({"openAPIV3Schema": schema});
        validate_validation(Some(&v), status, &Options::create(), "spec.validation")
            .iter()
            .map(ToString::to_string)
            .collect()
    }

    #[test]
    fn root_with_status() {
        assert!(check(json!({"type": "object", "description": "d", "properties": {"status": {"type": "object"}}}), true).is_empty());
        assert_eq!(
            check(json!({"type": "object", "x-kubernetes-preserve-unknown-fields": true, "anyOf": [{"required": ["a"]}],
                "properties": {"a": {"type": "string"}}}), true)
                .iter()
                .map(|m| m.split(": ").next().unwrap_or_default())
                .collect::<Vec<_>>(),
            ["spec.validation.openAPIV3Schema"]
        );
        assert!(check(json!({"type": "object", "anyOf": [{"required": ["a"]}], "properties": {"a": {"type": "string"}}}), false).is_empty());
    }

    #[test]
    fn nullable_root_and_unsupported() {
        assert_eq!(
            check(json!({"type": "object", "nullable": true}), false),
            [
                "spec.validation.openAPIV3Schema.nullable: Forbidden: nullable cannot be true at the root"
            ]
        );
        assert_eq!(
            check(
                json!({"type": "object", "$schema": "http://json-schema.org"}),
                false
            ),
            [
                r#"spec.validation.openAPIV3Schema: Invalid value: "": OpenAPIV3Schema 'schema' is not supported"#
            ]
        );
        // Structural errors come first, then the OpenAPI rules.
        assert_eq!(
            check(
                json!({"type": "object", "properties": {"a": {"uniqueItems": true}}}),
                false
            ),
            [
                "spec.validation.openAPIV3Schema.properties[a].type: Required value: must not be empty for specified object fields",
                "spec.validation.openAPIV3Schema.properties[a].uniqueItems: Forbidden: uniqueItems cannot be set to true since the runtime complexity becomes quadratic",
            ]
        );
    }
}
