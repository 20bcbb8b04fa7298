//! Pruning of unknown fields (`pkg/apiserver/schema/pruning/algorithm.go`)
//! and of `null`s the schema neither allows nor defaults
//! (`defaulting/prunenulls.go`).
//!
//! Unknown-field paths read as upstream's `UnknownFieldPathOptions` builds
//! them: keys joined with `.`, indices as `[i]` (`spec.foo`,
//! `spec.list[0].bar`, `spec.map.key.x`), sorted.
//!
//! Recursion follows the schema; values below a missing schema (lists in
//! lists without `items`) are walked with an explicit stack, so no input
//! nests the stack deeper than the schema.

use serde_json::{Map, Value};

use super::node::Node;
use super::path::{Path, Style};

/// The fields every resource (and embedded resource) keeps regardless of
/// its schema.
const META_FIELDS: [&str; 3] = ["apiVersion", "kind", "metadata"];

/// `PruneWithOptions(obj, s, isResourceRoot=true)`: drops every field the
/// schema does not know and returns their paths, sorted.
pub(crate) fn prune_root(root: &Node, obj: &mut Value) -> Vec<String> {
    prune_with(root, obj, true)
}

/// `Prune(obj, s, false)` for a default value: drops what its own schema
/// does not know (upstream `PruneDefaults`).
pub(crate) fn prune_value(node: &Node, value: &mut Value) {
    prune_with(node, value, node.embedded);
}

/// `PruneWithOptions(obj, s, isResourceRoot)` with paths tracked, sorted.
fn prune_with(node: &Node, value: &mut Value, embedded: bool) -> Vec<String> {
    let mut paths = Vec::new();
    let mut walker = Pruner { paths: &mut paths };
    walker.prune(value, Some(node), &Path::Root, embedded);
    paths.sort();
    paths
}

struct Pruner<'p> {
    paths: &'p mut Vec<String>,
}

fn join(parent: &str, key: &str) -> String {
    if parent.is_empty() {
        key.to_owned()
    } else {
        format!("{parent}.{key}")
    }
}

/// The unknown-field spelling of the field `k` under `path`.
fn field_path(path: &Path<'_>, k: &str) -> String {
    Path::Prop(path, k).render(Style::Pruning)
}

impl Pruner<'_> {
    /// `prune(x, s)`; `embedded` is `s.XEmbeddedResource` (forced at the
    /// root).
    fn prune(&mut self, x: &mut Value, s: Option<&Node>, path: &Path<'_>, embedded: bool) {
        if let Some(s) = s
            && s.preserve_unknown
        {
            self.skip_prune(x, s, path, embedded);
            return;
        }
        match x {
            Value::Object(map) => {
                let Some(s) = s else {
                    for k in map.keys() {
                        self.paths.push(field_path(path, k));
                    }
                    map.clear();
                    return;
                };
                self.prune_object(map, s, path, embedded, false);
            }
            Value::Array(items) => match s {
                None => self.prune_unschemaed(items, path),
                Some(s) => {
                    for (i, v) in items.iter_mut().enumerate() {
                        let item = s.items.as_deref();
                        let embedded = item.is_some_and(|n| n.embedded);
                        self.prune(v, item, &Path::Index(path, i), embedded);
                    }
                }
            },
            _ => {}
        }
    }

    /// The object case of `prune` (`keep_unknown` for `skipPrune`).
    fn prune_object(
        &mut self,
        map: &mut Map<String, Value>,
        s: &Node,
        path: &Path<'_>,
        embedded: bool,
        keep_unknown: bool,
    ) {
        let mut unknown = Vec::new();
        for (k, v) in map.iter_mut() {
            if embedded && META_FIELDS.contains(&k.as_str()) {
                continue;
            }
            if let Some(prop) = s.properties.get(k) {
                self.prune(v, Some(prop), &Path::Prop(path, k), prop.embedded);
            } else if s.has_additional() {
                let sub = s.additional_schema();
                self.prune(
                    v,
                    sub,
                    &Path::Extra(path, k),
                    sub.is_some_and(|n| n.embedded),
                );
            } else if !keep_unknown {
                if !META_FIELDS.contains(&k.as_str()) || !path.is_root() {
                    self.paths.push(field_path(path, k));
                }
                unknown.push(k.clone());
            }
        }
        for k in unknown {
            map.remove(&k);
        }
    }

    /// `skipPrune`: under `x-kubernetes-preserve-unknown-fields`, known
    /// fields are still pruned by their schemas.
    fn skip_prune(&mut self, x: &mut Value, s: &Node, path: &Path<'_>, embedded: bool) {
        match x {
            Value::Object(map) => self.prune_object(map, s, path, embedded, true),
            Value::Array(items) => {
                if let Some(item) = s.items.as_deref() {
                    for (i, v) in items.iter_mut().enumerate() {
                        self.skip_prune(v, item, &Path::Index(path, i), item.embedded);
                    }
                }
            }
            _ => {}
        }
    }

    /// `prune(x, nil)` on a list: every object inside, however deep, loses
    /// all its fields.
    fn prune_unschemaed(&mut self, items: &mut [Value], path: &Path<'_>) {
        if !items.iter().any(|v| v.is_object() || v.is_array()) {
            return;
        }
        let path = path.render(Style::Pruning);
        let mut stack: Vec<(&mut Value, String)> = items
            .iter_mut()
            .enumerate()
            .map(|(i, v)| (v, format!("{path}[{i}]")))
            .collect();
        while let Some((v, at)) = stack.pop() {
            match v {
                Value::Object(map) => {
                    for k in map.keys() {
                        self.paths.push(join(&at, k));
                    }
                    map.clear();
                }
                Value::Array(inner) => {
                    for (i, v) in inner.iter_mut().enumerate() {
                        stack.push((v, format!("{at}[{i}]")));
                    }
                }
                _ => {}
            }
        }
    }
}

/// `PruneNonNullableNullsWithoutDefaults`: drops object fields that are
/// `null` where the schema says neither `nullable` nor `default`.
pub(crate) fn prune_nulls(x: &mut Value, s: Option<&Node>) {
    let Some(s) = s else {
        return;
    };
    match x {
        Value::Object(map) => {
            map.retain(|k, v| {
                let field = s.field(k);
                !(v.is_null() && field.is_some_and(|f| !f.nullable && f.default.is_none()))
            });
            for (k, v) in map.iter_mut() {
                prune_nulls(v, s.field(k));
            }
        }
        Value::Array(items) => {
            for v in items {
                prune_nulls(v, s.items.as_deref());
            }
        }
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn node(v: Value) -> Node {
        Node::parse(&v, "s", 0).unwrap()
    }

    #[test]
    fn upstream_unknown_field_paths() {
        let s = node(json!({"type": "object", "properties": {
            "spec": {"type": "object", "properties": {
                "list": {"type": "array", "items": {"type": "object", "properties": {"a": {"type": "string"}}}},
                "map": {"type": "object", "additionalProperties": {"type": "object", "properties": {"x": {"type": "string"}}}},
                "free": {"type": "object", "x-kubernetes-preserve-unknown-fields": true,
                         "properties": {"known": {"type": "object", "properties": {}}}}
            }}
        }}));
        let mut obj = json!({
            "apiVersion": "a/v1", "kind": "K", "metadata": {"name": "n"},
            "spec": {
                "foo": 1,
                "list": [{"a": "x", "b": 1}],
                "map": {"k": {"x": "1", "y": 2}},
                "free": {"anything": 1, "known": {"gone": true}}
            },
            "status": {}
        });
        let paths = prune_root(&s, &mut obj);
        assert_eq!(
            paths,
            [
                "spec.foo",
                "spec.free.known.gone",
                "spec.list[0].b",
                "spec.map.k.y",
                "status"
            ]
        );
        assert_eq!(
            obj,
            json!({
                "apiVersion": "a/v1", "kind": "K", "metadata": {"name": "n"},
                "spec": {"list": [{"a": "x"}], "map": {"k": {"x": "1"}},
                         "free": {"anything": 1, "known": {}}}
            })
        );
    }

    #[test]
    fn embedded_resources_keep_their_type_and_object_meta() {
        let s = node(json!({"type": "object", "properties": {
            "template": {"type": "object", "x-kubernetes-embedded-resource": true,
                         "properties": {"spec": {"type": "object"}}},
            "plain": {"type": "object", "properties": {}}
        }}));
        let mut obj = json!({
            "template": {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "x"}, "spec": {}, "other": 1},
            "plain": {"metadata": {}, "kind": "x"}
        });
        let paths = prune_root(&s, &mut obj);
        assert_eq!(paths, ["plain.kind", "plain.metadata", "template.other"]);
    }

    /// Cases from upstream's `TestPrune` (pruning/algorithm_test.go),
    /// not at a resource root.
    #[test]
    fn upstream_prune_table() {
        let cases = [
            (
                json!({"type": "array", "items": {"properties": {"a": {}, "c": {}}}}),
                json!([{"a": 1}, {"b": 1}, {"a": 1, "b": 2, "c": 3}]),
                json!([{"a": 1}, {}, {"a": 1, "c": 3}]),
                vec!["[1].b", "[2].b"],
            ),
            (
                json!({"properties": {"a": {}, "c": {"additionalProperties": {"type": "integer"}}}}),
                json!({"a": 1, "b": 1, "c": {"a": 1, "b": 2, "c": {"a": 1}}}),
                json!({"a": 1, "c": {"a": 1, "b": 2, "c": {}}}),
                vec!["b", "c.c.a"],
            ),
            (
                json!({"properties": {"a": {}, "c": {"additionalProperties": false}}}),
                json!({"a": 1, "b": 1, "c": {"a": 1, "b": 2, "c": {"a": 1, "apiVersion": "unknown"}}}),
                json!({"a": 1, "c": {"a": 1, "b": 2, "c": {}}}),
                vec!["b", "c.c.a", "c.c.apiVersion"],
            ),
            (
                json!({"type": "object", "x-kubernetes-preserve-unknown-fields": true, "properties": {
                    "alpha": {"type": "string"},
                    "pruning": {"type": "object", "properties": {
                        "preserving": {"type": "object", "x-kubernetes-preserve-unknown-fields": true},
                        "pruning": {"type": "object"}}},
                    "preserving": {"type": "object", "x-kubernetes-preserve-unknown-fields": true, "properties": {
                        "preservingUnknownType": {"x-kubernetes-preserve-unknown-fields": true},
                        "pruning": {"type": "object"}}},
                    "keyPrune": {"type": "object", "x-kubernetes-preserve-unknown-fields": true,
                        "additionalProperties": {"type": "object", "properties": {"specified": {"type": "object"}}}}}}),
                json!({"unspecified": "bar", "alpha": "abc",
                    "pruning": {"unspecified": "bar", "pruning": {"unspecified": "bar"}, "apiVersion": "unknown",
                                "preserving": {"unspecified": "bar"}},
                    "preserving": {"unspecified": "bar", "pruning": {"unspecified": "bar"},
                                   "preservingUnknownType": [{"foo": true}]},
                    "keyPrune": {"foo": {"specified": {"unspecified": "bar"}, "unspecified": "bar"}}}),
                json!({"unspecified": "bar", "alpha": "abc",
                    "pruning": {"pruning": {}, "preserving": {"unspecified": "bar"}},
                    "preserving": {"unspecified": "bar", "pruning": {}, "preservingUnknownType": [{"foo": true}]},
                    "keyPrune": {"foo": {"specified": {}}}}),
                vec![
                    "keyPrune.foo.specified.unspecified",
                    "keyPrune.foo.unspecified",
                    "preserving.pruning.unspecified",
                    "pruning.apiVersion",
                    "pruning.pruning.unspecified",
                    "pruning.unspecified",
                ],
            ),
        ];
        for (schema, mut input, want, paths) in cases {
            let paths: Vec<String> = paths.into_iter().map(str::to_owned).collect();
            assert_eq!(prune_with(&node(schema), &mut input, false), paths);
            assert_eq!(input, want);
        }
    }

    #[test]
    fn nulls_without_nullable_or_default_go() {
        let s = node(json!({"type": "object", "properties": {
            "a": {"type": "string"},
            "b": {"type": "string", "nullable": true},
            "c": {"type": "string", "default": "x"}
        }}));
        let mut obj = json!({"a": null, "b": null, "c": null, "d": null});
        prune_nulls(&mut obj, Some(&s));
        assert_eq!(obj, json!({"b": null, "c": null, "d": null}));
    }

    #[test]
    fn unschemaed_lists_never_recurse() {
        let s = node(json!({"type": "object", "properties": {"l": {"type": "array"}}}));
        let mut deep = json!({"k": 1});
        for _ in 0..500 {
            deep = Value::Array(vec![deep]);
        }
        let mut obj = json!({ "l": [deep] });
        let paths = prune_root(&s, &mut obj);
        assert_eq!(paths.len(), 1);
        assert!(paths[0].starts_with("l[0][0]"));
        assert!(paths[0].ends_with("].k"));
    }
}
