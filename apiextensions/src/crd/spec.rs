//! `spec` and the whole object (upstream `ValidateCustomResourceDefinition`,
//! `validateCustomResourceDefinitionSpec`, `…Version`, `…SpecUpdate`).

use serde_json::{Value, json};
use skein_admission::{
    Cause,
    names::{dns1035_label, dns1123_subdomain},
};

use super::columns::validate_column;
use super::conversion::validate_conversion;
use super::field_path;
use super::json::{arr, non_empty, obj, present, str_of};
use super::options::Options;
use super::path::{child, index};
use super::render;
use super::structural;
use super::subresources::validate_subresources;
use super::validation::validate_validation;
use super::view::{Spec, Version, status_enabled};

/// `metadata.name` must be `<plural>.<group>` (the DNS-subdomain rule is the
/// registry's generic metadata validation).
pub(crate) fn validate_name(crd: &Value) -> Vec<Cause> {
    let name = crd
        .pointer("/metadata/name")
        .and_then(Value::as_str)
        .unwrap_or_default();
    let spec = crd.get("spec").unwrap_or(&Value::Null);
    let plural = spec
        .get("names")
        .map(|n| str_of(n, "plural"))
        .unwrap_or_default();
    let required = format!("{plural}.{}", str_of(spec, "group"));
    if name != required {
        vec![Cause::invalid(
            "metadata.name",
            &json!(name),
            r#"must be spec.names.plural+"."+spec.group"#,
        )]
    } else {
        Vec::new()
    }
}

/// Upstream `validateDeprecationWarning`.
fn deprecation_warning(deprecated: bool, warning: Option<&str>) -> Vec<String> {
    let Some(w) = warning else {
        return Vec::new();
    };
    if !deprecated {
        return vec!["can only be set for deprecated versions".into()];
    }
    let mut out = Vec::new();
    if w.len() > 256 {
        out.push("must be <= 256 characters long".into());
    }
    if w.is_empty() {
        out.push("must not be an empty string".into());
    }
    // Upstream tests printability first, so a control character (never
    // printable) is reported as non-printable.
    if let Some((i, _)) = w.char_indices().find(|(_, c)| !is_print(*c)) {
        out.push(format!(
            "must only contain printable UTF-8 characters; non-printable character found at index {i}"
        ));
    }
    out
}

/// Go's `unicode.IsPrint` for the characters Rust can tell apart: letters,
/// marks, numbers, punctuation, symbols and the ASCII space.
fn is_print(c: char) -> bool {
    c == ' '
        || !(c.is_control()
            || c.is_whitespace()
            || matches!(c, '\u{200b}'..='\u{200f}' | '\u{2028}'..='\u{202e}' | '\u{2060}'..='\u{206f}' | '\u{feff}' | '\u{fff9}'..='\u{fffb}'))
}

/// Problems of one version (upstream `validateCustomResourceDefinitionVersion`).
fn validate_version(v: &Version<'_>, path: &str, status: bool, opts: &Options) -> Vec<Cause> {
    let mut out = Vec::new();
    for err in deprecation_warning(v.deprecated, v.deprecation_warning) {
        out.push(Cause::invalid(
            child(path, "deprecationWarning"),
            &json!(v.deprecation_warning),
            err,
        ));
    }
    out.extend(validate_validation(
        v.schema,
        status,
        opts,
        &child(path, "schema"),
    ));
    out.extend(validate_subresources(
        v.subresources,
        &child(path, "subresources"),
    ));
    for (i, col) in v.columns.into_iter().flatten().enumerate() {
        out.extend(validate_column(
            col,
            &index(&child(path, "additionalPrinterColumns"), i),
        ));
    }
    if let Some(fields) = v.selectable_fields.filter(|f| !f.is_empty()) {
        match v.schema.and_then(|s| obj(s, "openAPIV3Schema")) {
            None => out.push(Cause::invalid(
                child(path, "selectableFields"),
                &json!(""),
                "selectableFields may only be set when version.schema.openAPIV3Schema is not included",
            )),
            Some(schema) => out.extend(selectable_fields(fields, schema, path)),
        }
    }
    out
}

/// Upstream `ValidateCustomResourceSelectableFields` (with the structural
/// conversion error it reports first).
fn selectable_fields(fields: &[Value], schema: &Value, parent: &str) -> Vec<Cause> {
    let mut out = Vec::new();
    if let Some(err) = structural::conversion_error(schema) {
        out.push(Cause::invalid(
            child(parent, "schema.openAPIV3Schema"),
            &json!(""),
            err,
        ));
    }
    let path = child(parent, "selectableFields");
    let mut unique: Vec<String> = Vec::new();
    for (i, f) in fields.iter().enumerate() {
        let p = index(&path, i);
        let json_path = str_of(f, "jsonPath");
        if json_path.is_empty() {
            out.push(Cause::required(child(&p, "jsonPath"), ""));
            continue;
        }
        let jp = child(&p, "jsonPath");
        let found = match field_path::resolve(json_path, schema, false) {
            Ok(found) => found,
            Err(e) => {
                out.push(Cause::invalid(
                    &jp,
                    &json!(json_path),
                    format!("is an invalid path: {e}"),
                ));
                continue;
            }
        };
        // The resolved path, as `field.Path` prints it.
        let canonical = json_path.trim_start_matches('.').to_owned();
        if canonical.split('.').next() == Some("metadata") {
            out.push(Cause::invalid(
                &jp,
                &json!(json_path),
                "must not point to fields in metadata",
            ));
        }
        if !found.is_some_and(|s| matches!(str_of(s, "type"), "string" | "boolean" | "integer")) {
            out.push(Cause::invalid(
                &jp,
                &json!(json_path),
                "must point to a field of type string, boolean or integer. Enum string fields and strings with formats are allowed.",
            ));
        }
        if unique.contains(&canonical) {
            out.push(Cause::duplicate(&jp, &json!(json_path)));
        } else {
            unique.push(canonical);
        }
    }
    if unique.len() > 8 {
        out.push(Cause::new(
            path,
            Cause::FIELD_VALUE_TOO_MANY,
            format!("Too many: {}: must have at most 8 items", unique.len()),
        ));
    }
    out
}

/// `true` when some schema of the spec satisfies `pred` at some node.
fn any_schema_node(spec: &Spec<'_>, pred: &dyn Fn(&Value) -> bool) -> bool {
    spec.schemas().any(|s| schema_has(s, pred, 0))
}

/// Upstream `SchemaHas`: `pred` at `s` or any schema below it.
pub(crate) fn schema_has(s: &Value, pred: &dyn Fn(&Value) -> bool, depth: usize) -> bool {
    if !s.is_object() || depth > structural::MAX_DEPTH {
        return false;
    }
    if pred(s) {
        return true;
    }
    let next = depth + 1;
    let one = |k: &str| s.get(k).is_some_and(|c| schema_has(c, pred, next));
    let list = |k: &str| arr(s, k).is_some_and(|l| l.iter().any(|c| schema_has(c, pred, next)));
    let values = |k: &str| {
        s.get(k)
            .and_then(Value::as_object)
            .is_some_and(|m| m.values().any(|c| schema_has(c, pred, next)))
    };
    one("items")
        || list("items")
        || list("allOf")
        || list("anyOf")
        || list("oneOf")
        || one("not")
        || values("properties")
        || one("additionalProperties")
        || values("patternProperties")
        || one("additionalItems")
        || values("definitions")
        || values("dependencies")
}

fn has_kubernetes_extensions(s: &Value) -> bool {
    s.get("x-kubernetes-embedded-resource")
        .and_then(Value::as_bool)
        == Some(true)
        || present(s, "x-kubernetes-preserve-unknown-fields")
        || s.get("x-kubernetes-int-or-string").and_then(Value::as_bool) == Some(true)
        || non_empty(s, "x-kubernetes-list-map-keys")
        || present(s, "x-kubernetes-list-type")
        || non_empty(s, "x-kubernetes-validations")
}

/// Problems of `crd.spec` under `opts` (upstream `validateCustomResourceDefinitionSpec`).
pub(crate) fn validate_spec(crd: &Value, opts: &Options) -> Vec<Cause> {
    let spec = Spec::of(crd);
    let mut opts = opts.clone();
    let mut out = Vec::new();
    let group = spec.group;
    if group.is_empty() {
        out.push(Cause::required("spec.group", ""));
    } else {
        let errs = dns1123_subdomain(group);
        if !errs.is_empty() {
            out.push(Cause::invalid("spec.group", &json!(group), errs.join(",")));
        } else if !group.contains('.') {
            out.push(Cause::invalid(
                "spec.group",
                &json!(group),
                "should be a domain with at least one dot",
            ));
        }
    }
    match spec.scope {
        "" => out.push(Cause::required("spec.scope", "")),
        "Cluster" | "Namespaced" => {}
        other => out.push(Cause::not_supported(
            "spec.scope",
            &json!(other),
            &["Cluster", "Namespaced"],
        )),
    }
    if !spec.preserve_unknown_fields {
        opts.require_structural_schema = true;
    }
    let has_top_schema = spec
        .validation
        .and_then(|v| obj(v, "openAPIV3Schema"))
        .is_some();
    let version_schema =
        |v: &Version<'_>| v.schema.and_then(|s| obj(s, "openAPIV3Schema")).is_some();
    if opts.require_open_api_schema {
        if !has_top_schema {
            for (i, v) in spec.versions.iter().enumerate() {
                if !version_schema(v) {
                    out.push(Cause::required(
                        format!("spec.versions[{i}].schema.openAPIV3Schema"),
                        "schemas are required",
                    ));
                }
            }
        }
    } else if !spec.preserve_unknown_fields && !has_top_schema {
        for (i, v) in spec.versions.iter().enumerate() {
            let served = v.raw.get("served").and_then(Value::as_bool) == Some(true);
            if served && !version_schema(v) {
                out.push(Cause::required(
                    format!("spec.versions[{i}].schema.openAPIV3Schema"),
                    "because otherwise all fields are pruned",
                ));
            }
        }
    }
    if opts.allow_defaults && any_schema_node(&spec, &|s| present(s, "default")) {
        opts.require_structural_schema = true;
        if spec.preserve_unknown_fields {
            out.push(Cause::invalid(
                "spec.preserveUnknownFields",
                &json!(true),
                "must be false in order to use defaults in the schema",
            ));
        }
    }
    if any_schema_node(&spec, &has_kubernetes_extensions) {
        opts.require_structural_schema = true;
    }

    let mut storage = 0;
    let mut names: Vec<&str> = Vec::new();
    let mut unique = true;
    for (i, v) in spec.versions.iter().enumerate() {
        if v.storage {
            storage += 1;
        }
        if names.contains(&v.name) {
            unique = false;
        } else {
            names.push(v.name);
        }
        let p = index("spec.versions", i);
        let errs = dns1035_label(v.name);
        if !errs.is_empty() {
            out.push(Cause::invalid(
                child(&p, "name"),
                &json!(v.name),
                errs.join(","),
            ));
        }
        let status = status_enabled(spec.subresources_for(i));
        out.extend(validate_version(v, &p, status, &opts));
    }
    let versions_present = arr(spec.raw, "versions").is_some();
    let rendered = || render::versions(&spec.versions, versions_present);
    if !unique {
        out.push(Cause::invalid_rendered(
            "spec.versions",
            &rendered(),
            "must contain unique version names",
        ));
    }
    if storage != 1 {
        out.push(Cause::invalid_rendered(
            "spec.versions",
            &rendered(),
            "must have exactly one version marked as storage version",
        ));
    }
    let version = spec.version();
    if !version.is_empty() {
        let errs = dns1035_label(version);
        if !errs.is_empty() {
            out.push(Cause::invalid(
                "spec.version",
                &json!(version),
                errs.join(","),
            ));
        }
    }
    for field in ["plural", "singular", "kind", "listKind"] {
        if str_of(spec.names, field).is_empty() {
            out.push(Cause::required(format!("spec.names.{field}"), ""));
        }
    }
    out.extend(super::names::validate_names(spec.names, "spec.names"));
    out.extend(validate_validation(
        spec.validation,
        spec.any_status_enabled(),
        &opts,
        "spec.validation",
    ));
    out.extend(validate_subresources(
        spec.subresources,
        "spec.subresources",
    ));
    for (i, col) in spec.columns.into_iter().flatten().enumerate() {
        out.extend(validate_column(
            col,
            &index("spec.additionalPrinterColumns", i),
        ));
    }
    if let Some(fields) = spec.selectable_fields.filter(|f| !f.is_empty()) {
        match spec.validation.and_then(|v| obj(v, "openAPIV3Schema")) {
            None => out.push(Cause::invalid(
                "spec.selectableFields",
                &json!(""),
                "selectableFields may only be set when validations.schema is included",
            )),
            Some(schema) => out.extend(selectable_fields(fields, schema, "spec")),
        }
    }
    let strategy = spec
        .conversion
        .map(|c| str_of(c, "strategy"))
        .unwrap_or_default();
    if spec.conversion.is_some() && strategy != "None" && spec.preserve_unknown_fields {
        out.push(Cause::invalid(
            "spec.conversion.strategy",
            &json!(strategy),
            "must be None if spec.preserveUnknownFields is true",
        ));
    }
    out.extend(validate_conversion(
        spec.conversion,
        opts.require_recognized_conversion_review_version,
        opts.allow_invalid_ca_bundle,
        "spec.conversion",
    ));
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn deprecation_warnings() {
        assert!(deprecation_warning(true, Some("use v2")).is_empty());
        assert!(deprecation_warning(false, None).is_empty());
        assert_eq!(
            deprecation_warning(false, Some("x")),
            ["can only be set for deprecated versions"]
        );
        assert_eq!(
            deprecation_warning(true, Some("")),
            ["must not be an empty string"]
        );
        assert_eq!(
            deprecation_warning(true, Some("a\tb")),
            [
                "must only contain printable UTF-8 characters; non-printable character found at index 1"
            ]
        );
        assert_eq!(
            deprecation_warning(true, Some(&"x".repeat(257))),
            ["must be <= 256 characters long"]
        );
    }

    #[test]
    fn selectable() {
        let schema = json!({"type": "object", "properties": {"spec": {"type": "object", "properties": {
            "color": {"type": "string"}, "size": {"type": "object"}}}}});
        let fields = [
            json!({"jsonPath": ".spec.color"}),
            json!({"jsonPath": ".spec.color"}),
            json!({"jsonPath": ".spec.size"}),
            json!({"jsonPath": ".spec['color']"}),
            json!({}),
        ];
        let got: Vec<String> = selectable_fields(&fields, &schema, "spec.versions[0]")
            .iter()
            .map(ToString::to_string)
            .collect();
        assert_eq!(
            got,
            [
                r#"spec.versions[0].selectableFields[1].jsonPath: Duplicate value: ".spec.color""#,
                r#"spec.versions[0].selectableFields[2].jsonPath: Invalid value: ".spec.size": must point to a field of type string, boolean or integer. Enum string fields and strings with formats are allowed."#,
                r#"spec.versions[0].selectableFields[3].jsonPath: Invalid value: ".spec['color']": is an invalid path: array notation is not allowed"#,
                "spec.versions[0].selectableFields[4].jsonPath: Required value",
            ]
        );
    }
}
