//! `metadata` of the resource and of `x-kubernetes-embedded-resource`
//! objects (`pkg/apiserver/schema/objectmeta`): whatever the schema says,
//! `metadata` is an `ObjectMeta`, so decoding drops fields `ObjectMeta`
//! does not have (reported as unknown fields, `metadata.foo`) and empty
//! ones (`omitempty`); embedded resources must carry `apiVersion` and
//! `kind`, and their metadata is validated as object metadata.

use serde_json::{Map, Value};
use skein_admission::{Cause, names};

use super::gofmt;
use super::node::Node;
use super::path::{Path, Style};

/// `ObjectMeta`'s JSON fields (apimachinery v1.33).
const OBJECT_META: [&str; 15] = [
    "name",
    "generateName",
    "namespace",
    "selfLink",
    "uid",
    "resourceVersion",
    "generation",
    "creationTimestamp",
    "deletionTimestamp",
    "deletionGracePeriodSeconds",
    "labels",
    "annotations",
    "ownerReferences",
    "finalizers",
    "managedFields",
];
/// `OwnerReference`'s JSON fields.
const OWNER_REFERENCE: [&str; 6] = [
    "apiVersion",
    "kind",
    "name",
    "uid",
    "controller",
    "blockOwnerDeletion",
];
/// `ManagedFieldsEntry`'s JSON fields.
const MANAGED_FIELDS: [&str; 7] = [
    "manager",
    "operation",
    "apiVersion",
    "time",
    "fieldsType",
    "fieldsV1",
    "subresource",
];
/// `ObjectMeta` string fields.
const STRING_FIELDS: [&str; 6] = [
    "name",
    "generateName",
    "namespace",
    "selfLink",
    "uid",
    "resourceVersion",
];

/// A `field.Path` rendering: `a.b`, `a[key]`, `a[0]`.
fn child(path: &str, k: &str) -> String {
    if path.is_empty() {
        k.to_owned()
    } else {
        format!("{path}.{k}")
    }
}

/// Decodes `obj["metadata"]` as `ObjectMeta` does: drops unknown fields
/// (returning `<prefix>metadata.<field>` paths) and empty values. Leaves
/// a non-object `metadata` alone (validation reports it).
pub(crate) fn coerce_metadata(obj: &mut Map<String, Value>, path: &str) -> Vec<String> {
    let prefix = child(path, "metadata");
    let Some(Value::Object(meta)) = obj.get_mut("metadata") else {
        return Vec::new();
    };
    let mut unknown = Vec::new();
    meta.retain(|k, v| {
        if !OBJECT_META.contains(&k.as_str()) {
            unknown.push(format!("{prefix}.{k}"));
            return false;
        }
        !is_empty(k, v)
    });
    for (list, known) in [
        ("ownerReferences", &OWNER_REFERENCE[..]),
        ("managedFields", &MANAGED_FIELDS[..]),
    ] {
        if let Some(Value::Array(items)) = meta.get_mut(list) {
            for (i, item) in items.iter_mut().enumerate() {
                if let Value::Object(entry) = item {
                    entry.retain(|k, _| {
                        let keep = known.contains(&k.as_str());
                        if !keep {
                            unknown.push(format!("{prefix}.{list}[{i}].{k}"));
                        }
                        keep
                    });
                }
            }
        }
    }
    unknown.sort();
    unknown
}

/// Whether `ObjectMeta`'s JSON encoding omits the field (`omitempty`, and
/// a zero `creationTimestamp`).
fn is_empty(k: &str, v: &Value) -> bool {
    match v {
        Value::Null => true,
        Value::String(s) => s.is_empty(),
        Value::Array(a) => a.is_empty(),
        Value::Object(m) => m.is_empty(),
        Value::Number(n) => k == "generation" && n.as_i64() == Some(0),
        Value::Bool(_) => false,
    }
}

/// `Coerce(nil, obj, s, false, ...)`: the metadata of every embedded
/// resource below the root. Returns unknown-field paths.
pub(crate) fn coerce_embedded(x: &mut Value, s: &Node, path: &Path<'_>, paths: &mut Vec<String>) {
    match x {
        Value::Object(map) => {
            if s.embedded {
                paths.extend(coerce_metadata(map, &path.render(Style::Field)));
            }
            for (k, v) in map.iter_mut() {
                if let Some(prop) = s.properties.get(k) {
                    coerce_embedded(v, prop, &Path::Prop(path, k), paths);
                } else if let Some(extra) = s.additional_schema() {
                    coerce_embedded(v, extra, &Path::Extra(path, k), paths);
                }
            }
        }
        Value::Array(items) => {
            if let Some(item) = s.items.as_deref() {
                for (i, v) in items.iter_mut().enumerate() {
                    coerce_embedded(v, item, &Path::Index(path, i), paths);
                }
            }
        }
        _ => {}
    }
}

/// `objectmeta.Validate(nil, obj, s, false)`: every embedded resource below
/// the root has a valid `apiVersion`, `kind` and `metadata`.
pub(crate) fn validate(x: &Value, s: &Node, path: &Path<'_>, out: &mut Vec<Cause>) {
    match x {
        Value::Object(map) => {
            if s.embedded {
                validate_embedded(map, &path.render(Style::Field), out);
            }
            for (k, v) in map {
                if let Some(prop) = s.properties.get(k) {
                    validate(v, prop, &Path::Prop(path, k), out);
                } else if let Some(extra) = s.additional_schema() {
                    validate(v, extra, &Path::Extra(path, k), out);
                }
            }
        }
        Value::Array(items) => {
            if let Some(item) = s.items.as_deref() {
                for (i, v) in items.iter().enumerate() {
                    validate(v, item, &Path::Index(path, i), out);
                }
            }
        }
        _ => {}
    }
}

/// `validateEmbeddedResource`.
fn validate_embedded(x: &Map<String, Value>, path: &str, out: &mut Vec<Cause>) {
    let api_version = child(path, "apiVersion");
    let kind_path = child(path, "kind");
    if !x.contains_key("apiVersion") {
        out.push(Cause::required(&api_version, "must not be empty"));
    }
    if !x.contains_key("kind") {
        out.push(Cause::required(&kind_path, "must not be empty"));
    }
    match x.get("apiVersion") {
        None => {}
        Some(Value::String(v)) if v.is_empty() => {
            out.push(invalid(
                &api_version,
                &Value::String(v.clone()),
                "must not be empty",
            ));
        }
        Some(Value::String(v)) => {
            if let Some(e) = group_version_error(v) {
                out.push(invalid(&api_version, &Value::String(v.clone()), &e));
            }
        }
        Some(other) => out.push(invalid(&api_version, other, "must be a string")),
    }
    match x.get("kind") {
        None => {}
        Some(Value::String(k)) if k.is_empty() => {
            out.push(invalid(
                &kind_path,
                &Value::String(k.clone()),
                "must not be empty",
            ));
        }
        Some(Value::String(k)) => {
            let errs = names::dns1035_label(&k.to_lowercase());
            if !errs.is_empty() {
                out.push(invalid(
                    &kind_path,
                    &Value::String(k.clone()),
                    &format!(
                        "may have mixed case, but should otherwise match: {}",
                        errs.join(",")
                    ),
                ));
            }
        }
        Some(other) => out.push(invalid(&kind_path, other, "must be a string")),
    }
    if let Some(meta) = x.get("metadata") {
        validate_object_meta(meta, &child(path, "metadata"), out);
    }
}

/// `schema.ParseGroupVersion`'s error, if any.
fn group_version_error(v: &str) -> Option<String> {
    if v == "/" || v.matches('/').count() > 1 {
        return Some(format!("unexpected GroupVersion string: {v}"));
    }
    None
}

fn invalid(path: &str, value: &Value, detail: &str) -> Cause {
    Cause::invalid_rendered(path, &gofmt::error_value(Some(value)), detail)
}

/// Go's `encoding/json` name of a JSON value's type in unmarshal errors.
fn json_type(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "bool",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

/// The metadata of an embedded resource: decoded as `ObjectMeta` (type
/// errors read as Go's `encoding/json`), then upstream's
/// `ValidateObjectMeta` rules for name (a path segment), generateName,
/// namespace, generation, labels and annotation keys.
fn validate_object_meta(meta: &Value, path: &str, out: &mut Vec<Cause>) {
    let Value::Object(m) = meta else {
        if !meta.is_null() {
            out.push(invalid(
                path,
                meta,
                &format!(
                    "json: cannot unmarshal {} into Go value of type v1.ObjectMeta",
                    json_type(meta)
                ),
            ));
        }
        return;
    };
    for field in STRING_FIELDS {
        if let Some(v) = m.get(field)
            && !v.is_string()
            && !v.is_null()
        {
            out.push(invalid(
                path,
                meta,
                &format!(
                    "json: cannot unmarshal {} into Go struct field ObjectMeta.{field} of type string",
                    json_type(v)
                ),
            ));
            return;
        }
    }
    for field in ["labels", "annotations"] {
        match m.get(field) {
            None | Some(Value::Null) => {}
            Some(Value::Object(entries)) => {
                if let Some(bad) = entries.values().find(|v| !v.is_string() && !v.is_null()) {
                    out.push(invalid(
                        path,
                        meta,
                        &format!(
                            "json: cannot unmarshal {} into Go struct field ObjectMeta.{field} of type string",
                            json_type(bad)
                        ),
                    ));
                    return;
                }
            }
            Some(other) => {
                out.push(invalid(
                    path,
                    meta,
                    &format!(
                        "json: cannot unmarshal {} into Go struct field ObjectMeta.{field} of type map[string]string",
                        json_type(other)
                    ),
                ));
                return;
            }
        }
    }
    let text = |f: &str| m.get(f).and_then(Value::as_str).unwrap_or("");
    let generate_name = text("generateName");
    if !generate_name.is_empty() {
        for msg in path_segment(generate_name, true) {
            out.push(Cause::invalid(
                child(path, "generateName"),
                &Value::String(generate_name.to_owned()),
                msg,
            ));
        }
    }
    let name = text("name");
    if !name.is_empty() {
        for msg in path_segment(name, false) {
            out.push(Cause::invalid(
                child(path, "name"),
                &Value::String(name.to_owned()),
                msg,
            ));
        }
    }
    let namespace = text("namespace");
    if !namespace.is_empty() {
        for msg in names::dns1123_label(namespace) {
            out.push(Cause::invalid(
                child(path, "namespace"),
                &Value::String(namespace.to_owned()),
                msg,
            ));
        }
    }
    if let Some(g) = m.get("generation").and_then(Value::as_i64)
        && g < 0
    {
        out.push(Cause::invalid(
            child(path, "generation"),
            &Value::from(g),
            "must be greater than or equal to 0",
        ));
    }
    if let Some(Value::Object(labels)) = m.get("labels") {
        let at = child(path, "labels");
        let mut keys: Vec<&String> = labels.keys().collect();
        keys.sort();
        for k in keys {
            for msg in names::qualified_name(k) {
                out.push(Cause::invalid(&at, &Value::String(k.clone()), msg));
            }
            let v = labels.get(k).and_then(Value::as_str).unwrap_or("");
            for msg in names::label_value(v) {
                out.push(Cause::invalid(&at, &Value::String(v.to_owned()), msg));
            }
        }
    }
    if let Some(Value::Object(annotations)) = m.get("annotations") {
        let at = child(path, "annotations");
        let mut keys: Vec<&String> = annotations.keys().collect();
        keys.sort();
        let mut total = 0usize;
        for k in keys {
            for msg in names::qualified_name(&k.to_lowercase()) {
                out.push(Cause::invalid(&at, &Value::String(k.clone()), msg));
            }
            total += k.len()
                + annotations
                    .get(k)
                    .and_then(Value::as_str)
                    .map_or(0, str::len);
        }
        const TOTAL_ANNOTATION_SIZE_LIMIT: usize = 256 * 1024;
        if total > TOTAL_ANNOTATION_SIZE_LIMIT {
            out.push(Cause::new(
                at,
                Cause::FIELD_VALUE_TOO_LONG,
                format!("Too long: may not be more than {TOTAL_ANNOTATION_SIZE_LIMIT} bytes"),
            ));
        }
    }
}

/// `path.ValidatePathSegmentName` (`prefix` for generateName).
fn path_segment(name: &str, prefix: bool) -> Vec<String> {
    if !prefix {
        for bad in [".", ".."] {
            if name == bad {
                return vec![format!("may not be '{bad}'")];
            }
        }
    }
    ["/", "%"]
        .iter()
        .filter(|c| name.contains(*c))
        .map(|c| format!("may not contain '{c}'"))
        .collect()
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn unknown_and_empty_metadata_fields_go() {
        let mut obj = json!({"metadata": {
            "name": "a", "foo": 1, "labels": {}, "generation": 0, "creationTimestamp": null,
            "ownerReferences": [{"name": "o", "bar": true}]
        }});
        let Some(map) = obj.as_object_mut() else {
            panic!()
        };
        let paths = coerce_metadata(map, "");
        assert_eq!(paths, ["metadata.foo", "metadata.ownerReferences[0].bar"]);
        assert_eq!(
            obj,
            json!({"metadata": {"name": "a", "ownerReferences": [{"name": "o"}]}})
        );
    }

    #[test]
    fn embedded_resources_need_type_meta_and_valid_metadata() {
        let s = Node::parse(
            &json!({"type": "object", "properties": {"t": {"type": "object",
                "x-kubernetes-embedded-resource": true, "x-kubernetes-preserve-unknown-fields": true}}}),
            "s",
            0,
        )
        .unwrap();
        let mut out = Vec::new();
        validate(
            &json!({"t": {"kind": "in valid", "metadata": {"name": "a/b", "labels": {"x": "-"}}}}),
            &s,
            &Path::Root,
            &mut out,
        );
        let got: Vec<String> = out.iter().map(ToString::to_string).collect();
        assert_eq!(got[0], "t.apiVersion: Required value: must not be empty");
        assert!(got[1].starts_with(r#"t.kind: Invalid value: "in valid": may have mixed case, but should otherwise match: a DNS-1035 label"#), "{}", got[1]);
        assert_eq!(
            got[2],
            r#"t.metadata.name: Invalid value: "a/b": may not contain '/'"#
        );
        assert!(
            got[3].starts_with(r#"t.metadata.labels: Invalid value: "-": a valid label"#),
            "{}",
            got[3]
        );
        assert_eq!(got.len(), 4);
    }
}
