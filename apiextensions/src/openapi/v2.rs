//! The Swagger 2.0 form of a published schema: upstream's
//! `pkg/controller/openapi/v2/conversion.go: ToStructuralOpenAPIV2`, then
//! kube-openapi's `handler.PruneDefaults` (the v2 document carries no
//! `default`).
//!
//! # Contracts
//! - Input is the output of [`super::structural::published`]; the walk is
//!   parent first, as upstream's visitor, so a parent still sees which of
//!   its properties are `nullable` when it filters `required`.
//! - Bounded by [`super::structural::MAX_DEPTH`]; never panics.

use serde_json::{Map, Value};

use super::structural::MAX_DEPTH;

/// `ToStructuralOpenAPIV2`: drops `allOf`/`anyOf`/`oneOf`/`not`; a
/// `nullable` node loses `type`, `items` and `properties`; a
/// `x-kubernetes-preserve-unknown-fields` node loses `items` and
/// `properties` (and `type: object`); an array without items loses its
/// type; nullable properties leave `required`; a nullable
/// `additionalProperties` clears `required`.
pub fn to_v2(node: &mut Map<String, Value>, depth: usize) {
    if depth > MAX_DEPTH {
        return;
    }
    for k in ["allOf", "oneOf", "anyOf", "not"] {
        node.remove(k);
    }
    let is = |m: &Map<String, Value>, k: &str| m.get(k).and_then(Value::as_bool) == Some(true);
    if is(node, "nullable") {
        node.remove("type");
        node.remove("nullable");
        node.remove("items");
        node.remove("properties");
    }
    let preserve = is(node, "x-kubernetes-preserve-unknown-fields");
    if preserve {
        node.remove("items");
        node.remove("properties");
    }
    let ty = node.get("type").and_then(Value::as_str).unwrap_or("");
    if (ty == "array" && !node.contains_key("items")) || (preserve && ty == "object") {
        node.remove("type");
    }
    let nullable_props: Vec<String> = node
        .get("properties")
        .and_then(Value::as_object)
        .map(|p| {
            p.iter()
                .filter(|(_, s)| s.get("nullable").and_then(Value::as_bool) == Some(true))
                .map(|(k, _)| k.clone())
                .collect()
        })
        .unwrap_or_default();
    if let Some(Value::Array(req)) = node.get_mut("required") {
        req.retain(|r| {
            !r.as_str()
                .is_some_and(|r| nullable_props.iter().any(|n| n == r))
        });
        if req.is_empty() {
            node.remove("required");
        }
    }
    if node
        .get("additionalProperties")
        .and_then(|a| a.get("nullable"))
        .and_then(Value::as_bool)
        == Some(true)
    {
        node.remove("required");
    }
    for_each_child(node, &mut |c| to_v2(c, depth + 1));
}

/// `PruneDefaults`: removes every `default` keyword.
pub fn prune_defaults(node: &mut Map<String, Value>, depth: usize) {
    if depth > MAX_DEPTH {
        return;
    }
    node.remove("default");
    for_each_child(node, &mut |c| prune_defaults(c, depth + 1));
}

/// Calls `f` on every schema directly under `node` (`items`,
/// `properties`, `additionalProperties`, the junctors).
fn for_each_child(node: &mut Map<String, Value>, f: &mut impl FnMut(&mut Map<String, Value>)) {
    for k in ["items", "additionalProperties", "not"] {
        if let Some(Value::Object(c)) = node.get_mut(k) {
            f(c);
        }
    }
    if let Some(Value::Object(p)) = node.get_mut("properties") {
        for c in p.values_mut() {
            if let Value::Object(c) = c {
                f(c);
            }
        }
    }
    for k in ["allOf", "anyOf", "oneOf"] {
        if let Some(Value::Array(a)) = node.get_mut(k) {
            for c in a {
                if let Value::Object(c) = c {
                    f(c);
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn conv(s: &str) -> Value {
        let mut v: Value = serde_json::from_str(s).unwrap_or(Value::Null);
        if let Value::Object(m) = &mut v {
            to_v2(m, 0);
            prune_defaults(m, 0);
        }
        v
    }

    fn v(s: &str) -> Value {
        serde_json::from_str(s).unwrap_or(Value::Null)
    }

    #[test]
    fn junctors_go() {
        // builder_test.go TestBuildOpenAPIV2 "v2".
        assert_eq!(
            conv(r#"{"type":"string","oneOf":[{"pattern":"a"},{"pattern":"b"}]}"#),
            v(r#"{"type":"string"}"#)
        );
        assert_eq!(
            conv(
                r#"{"x-kubernetes-int-or-string":true,"anyOf":[{"type":"integer"},{"type":"string"}]}"#
            ),
            v(r#"{"x-kubernetes-int-or-string":true}"#)
        );
    }

    #[test]
    fn nullable_and_preserve_unknown_fields() {
        // conversion_test.go cases (facts).
        assert_eq!(
            conv(r#"{"type":"object","nullable":true,"properties":{"a":{"type":"string"}}}"#),
            v(r#"{}"#)
        );
        assert_eq!(
            conv(
                r#"{"type":"object","x-kubernetes-preserve-unknown-fields":true,"properties":{"a":{"type":"string"}}}"#
            ),
            v(r#"{"x-kubernetes-preserve-unknown-fields":true}"#)
        );
        assert_eq!(
            conv(
                r#"{"type":"array","x-kubernetes-preserve-unknown-fields":true,"items":{"type":"string"}}"#
            ),
            v(r#"{"x-kubernetes-preserve-unknown-fields":true}"#)
        );
        assert_eq!(
            conv(
                r#"{"type":"object","required":["a","b"],"properties":{"a":{"type":"string","nullable":true},"b":{"type":"string"}}}"#
            ),
            v(r#"{"type":"object","required":["b"],"properties":{"a":{},"b":{"type":"string"}}}"#)
        );
        assert_eq!(
            conv(
                r#"{"type":"object","required":["a"],"additionalProperties":{"type":"string","nullable":true}}"#
            ),
            v(r#"{"type":"object","additionalProperties":{}}"#)
        );
    }

    #[test]
    fn defaults_are_pruned_but_not_properties_named_default() {
        assert_eq!(
            conv(
                r#"{"type":"object","default":{},"properties":{"default":{"type":"string","default":"x"}}}"#
            ),
            v(r#"{"type":"object","properties":{"default":{"type":"string"}}}"#)
        );
    }
}
