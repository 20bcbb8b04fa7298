//! Upstream `structuraldefaulting.ValidateDefaults`: every `default` in the
//! structural part of a schema (not below `additionalProperties`) must be
//! free of unknown fields, valid against its own schema, and pass its
//! schema's CEL rules; errors are rooted at `<node>.default`.
//!
//! A default inside `apiVersion`, `kind` or `metadata` of a resource is
//! first put into a whole object (`apiVersion: validation/v1`, `kind:
//! Validation`) whose type and object metadata must be valid, then
//! validated against its schema; unknown fields are allowed there (object
//! metadata decoding drops them).

use serde_json::{Map, Value};
use skein_admission::Cause;

use super::json::{map, obj, present};
use super::path::{child, key};
use super::structural::MAX_DEPTH;
use crate::schema::Structural;

/// Problems of the defaults in `schema` (an `openAPIV3Schema` that passed
/// the structural rules) under `path`. `require_pruned` reports defaults
/// with fields their schema does not know.
pub(crate) fn validate_defaults(schema: &Value, path: &str, require_pruned: bool) -> Vec<Cause> {
    let mut out = Vec::new();
    // The root is a resource, validated as an embedded one.
    let mut root = schema.clone();
    if let Some(m) = root.as_object_mut() {
        m.insert("x-kubernetes-embedded-resource".into(), Value::Bool(true));
    }
    let resource = Resource {
        schema: &root,
        steps: Vec::new(),
    };
    walk(&root, path, &resource, false, require_pruned, 0, &mut out);
    out
}

/// A step from a resource's root to a value.
#[derive(Clone)]
enum Step<'a> {
    Field(&'a str),
    Item,
}

/// The innermost resource around a schema node (upstream's
/// `SurroundingObjectFunc`): its schema and the steps from it to the node.
#[derive(Clone)]
struct Resource<'a> {
    schema: &'a Value,
    steps: Vec<Step<'a>>,
}

impl Resource<'_> {
    /// `value` placed at the node inside a `validation/v1` `Validation`.
    fn surround(&self, value: &Value) -> Value {
        let mut x = value.clone();
        for step in self.steps.iter().rev() {
            x = match step {
                Step::Field(k) => Value::Object(Map::from_iter([((*k).to_owned(), x)])),
                Step::Item => Value::Array(vec![x]),
            };
        }
        if let Value::Object(m) = &mut x {
            m.entry("apiVersion")
                .or_insert_with(|| Value::String("validation/v1".into()));
            m.entry("kind")
                .or_insert_with(|| Value::String("Validation".into()));
        }
        x
    }
}

fn walk<'a>(
    s: &'a Value,
    path: &str,
    resource: &Resource<'a>,
    inside_meta: bool,
    require_pruned: bool,
    depth: usize,
    out: &mut Vec<Cause>,
) {
    if depth > MAX_DEPTH || !s.is_object() {
        return;
    }
    let embedded = s
        .get("x-kubernetes-embedded-resource")
        .and_then(Value::as_bool)
        == Some(true);
    let inside_meta = inside_meta && !embedded;
    let own;
    let resource = if embedded {
        own = Resource {
            schema: s,
            steps: Vec::new(),
        };
        &own
    } else {
        resource
    };
    if let Some(default) = s.get("default").filter(|d| !d.is_null()) {
        let p = child(path, "default");
        if inside_meta {
            if !check_meta_default(resource, default, &p, out) {
                check_default(s, default, &p, false, out);
            }
        } else {
            check_default(s, default, &p, require_pruned, out);
        }
    }
    let step = |st: Step<'a>| {
        let mut r = resource.clone();
        r.steps.push(st);
        r
    };
    if let Some(items) = obj(s, "items") {
        let r = step(Step::Item);
        walk(
            items,
            &child(path, "items"),
            &r,
            inside_meta,
            require_pruned,
            depth + 1,
            out,
        );
    }
    let props = child(path, "properties");
    for (k, sub) in map(s, "properties").into_iter().flat_map(Map::iter) {
        let meta =
            inside_meta || (embedded && matches!(k.as_str(), "metadata" | "apiVersion" | "kind"));
        let r = step(Step::Field(k));
        walk(
            sub,
            &key(&props, k),
            &r,
            meta,
            require_pruned,
            depth + 1,
            out,
        );
    }
}

/// The default inside type or object metadata, put into its resource,
/// must give valid metadata; `true` when it does not (reported).
fn check_meta_default(
    resource: &Resource<'_>,
    default: &Value,
    path: &str,
    out: &mut Vec<Cause>,
) -> bool {
    let Ok(structural) = Structural::parse(resource.schema) else {
        return false;
    };
    let object = resource.surround(default);
    let in_meta = |f: &str| {
        ["apiVersion", "kind", "metadata"]
            .iter()
            .any(|m| f == *m || f.strip_prefix(m).is_some_and(|r| r.starts_with(['.', '['])))
    };
    // The metadata checks, not the schema's own rules (checked next).
    let errs: Vec<String> = structural
        .validate(&object)
        .into_iter()
        .filter(|c| in_meta(&c.field))
        .filter(|c| {
            c.reason != crate::schema::FIELD_VALUE_TYPE_INVALID
                && c.reason != Cause::FIELD_VALUE_NOT_SUPPORTED
                && !c.message.contains(" in body ")
        })
        .map(|c| c.to_string())
        .collect();
    let aggregate = match errs.as_slice() {
        [] => return false,
        [one] => one.clone(),
        many => format!("[{}]", many.join(", ")),
    };
    out.push(Cause::invalid(
        path,
        default,
        format!("must result in valid metadata: {aggregate}"),
    ));
    true
}

fn check_default(
    s: &Value,
    default: &Value,
    path: &str,
    require_pruned: bool,
    out: &mut Vec<Cause>,
) {
    // The node's schema without the defaults below it, as upstream's
    // validator of this node sees them.
    let Ok(structural) = Structural::parse(s) else {
        return;
    };
    if require_pruned {
        let mut pruned = default.clone();
        if !structural.prune(&mut pruned).is_empty() {
            out.push(Cause::invalid(
                path,
                default,
                "must not have unknown fields",
            ));
        }
    }
    let errs = structural.validate(default);
    if !errs.is_empty() {
        out.extend(errs.into_iter().map(|e| rooted(e, path)));
        return;
    }
    if let Some(rules) = crate::cel::compile(s, path).ok().filter(|r| !r.is_empty()) {
        out.extend(
            rules
                .validate(default, None)
                .into_iter()
                .map(|e| rooted(e, path)),
        );
    }
}

/// A cause of a default value's validation, its field rooted at `path`.
fn rooted(mut cause: Cause, path: &str) -> Cause {
    cause.field = match cause.field.as_str() {
        "" | "<nil>" => path.to_owned(),
        f if f.starts_with('[') => format!("{path}{f}"),
        f => format!("{path}.{f}"),
    };
    cause
}

/// `true` when a structural `schema` has a default with fields its schema
/// does not know (upstream `schemaHasUnprunedDefaults`).
pub(crate) fn has_unpruned_defaults(schema: &Value) -> bool {
    super::spec::schema_has(schema, &|s| present(s, "default"), 0)
        && super::structural::conversion_error(schema).is_none()
        && super::structural::validate_structural(schema, "").is_empty()
        && validate_defaults(schema, "", true)
            .iter()
            .any(|c| c.message.ends_with(": must not have unknown fields"))
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn check(schema: Value) -> Vec<String> {
        validate_defaults(&schema, "spec.validation.openAPIV3Schema", true)
            .iter()
            .map(ToString::to_string)
            .collect()
    }

    const P: &str = "spec.validation.openAPIV3Schema";

    #[test]
    fn valid_defaults() {
        assert!(check(json!({"type": "object", "properties": {"spec": {"type": "object", "default": {"n": 1},
            "properties": {"n": {"type": "integer", "default": 3, "minimum": 1},
                "l": {"type": "array", "items": {"type": "string", "default": "x"}}}}}})).is_empty());
        assert!(!has_unpruned_defaults(&json!({"type": "object"})));
        assert!(has_unpruned_defaults(
            &json!({"type": "object", "properties": {
            "a": {"type": "object", "default": {"x": 1}}}})
        ));
    }

    // Upstream validation_test.go "invalid defaults with enabled feature gate, structural schema".
    #[test]
    fn invalid_defaults() {
        assert_eq!(
            check(json!({"type": "object", "properties": {
                "a": {"type": "integer", "default": "x"},
                "b": {"type": "object", "default": {"n": 0, "unknown": 1},
                    "properties": {"n": {"type": "integer", "minimum": 1}}},
                "c": {"type": "string", "enum": ["x"], "default": "y"},
            }})),
            [
                // kube-openapi names the default's own root "", hence the two spaces.
                format!(
                    r#"{P}.properties[a].default: Invalid value: "string":  in body must be of type integer: "string""#
                ),
                // Upstream prints the Go map (`map[string]interface {}{...}`); Skein its JSON.
                format!(
                    r#"{P}.properties[b].default: Invalid value: {{"n":0,"unknown":1}}: must not have unknown fields"#
                ),
                format!(
                    "{P}.properties[b].default.n: Invalid value: 0: n in body should be greater than or equal to 1"
                ),
                format!(
                    r#"{P}.properties[c].default: Unsupported value: "y": supported values: "x""#
                ),
            ]
        );
    }

    // Upstream validation_test.go "v1.15 era tests for metadata defaults" (v1, v3, v4).
    #[test]
    fn metadata_defaults() {
        let embedded = |props: Value| {
            json!({"type": "object", "properties": {"embedded": {"type": "object",
                "x-kubernetes-embedded-resource": true, "properties": props}}})
        };
        // Unknown fields in metadata defaults are allowed (pruned on write).
        assert!(
            check(embedded(json!({"metadata": {"type": "object",
            "default": {"name": "foo", "unknown": 42}}})))
            .is_empty()
        );
        let e = format!("{P}.properties[embedded]");
        let got = check(embedded(json!({
            "apiVersion": {"type": "string", "default": "v1"},
            "kind": {"type": "string", "default": "%"},
            "metadata": {"type": "object", "default": {"labels": {"bar": "x y"}}}})));
        let fields: Vec<&str> = got
            .iter()
            .map(|m| m.split(": ").next().unwrap_or_default())
            .collect();
        assert_eq!(
            fields,
            [
                format!("{e}.properties[kind].default"),
                format!("{e}.properties[metadata].default")
            ]
        );
        assert!(got[0].starts_with(&format!(
            r#"{e}.properties[kind].default: Invalid value: "%": must result in valid metadata: kind: Invalid value: "%": may have mixed case"#
        )), "{got:?}");
        let got = check(embedded(
            json!({"metadata": {"type": "object", "properties": {
            "name": {"type": "string", "default": 42},
            "labels": {"type": "object", "properties": {"bar": {"type": "string", "default": 42}}}}}}),
        ));
        let fields: Vec<&str> = got
            .iter()
            .map(|m| m.split(": ").next().unwrap_or_default())
            .collect();
        assert_eq!(
            fields,
            [
                format!("{e}.properties[metadata].properties[labels].properties[bar].default"),
                format!("{e}.properties[metadata].properties[name].default"),
            ]
        );
    }

    #[test]
    fn cel_rules_on_defaults() {
        let got = check(
            json!({"type": "object", "properties": {"spec": {"type": "object",
            "default": {"min": 5, "max": 1},
            "properties": {"min": {"type": "integer"}, "max": {"type": "integer"}},
            "x-kubernetes-validations": [{"rule": "self.min <= self.max"}]}}}),
        );
        assert_eq!(got.len(), 1, "{got:?}");
        assert!(
            got[0].starts_with(&format!("{P}.properties[spec].default: Invalid value: ")),
            "{got:?}"
        );
        assert!(
            got[0].ends_with("failed rule: self.min <= self.max"),
            "{got:?}"
        );
    }
}
