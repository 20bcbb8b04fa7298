//! Defaulting from `default` (`pkg/apiserver/schema/defaulting/algorithm.go`):
//! a missing field, or a `null` where the schema is not `nullable`, takes
//! its schema's default; then defaulting descends into every field and
//! item. Idempotent. Recursion follows the schema.

use serde_json::Value;

use super::node::Node;

fn non_nullable_null(x: &Value, s: Option<&Node>) -> bool {
    x.is_null() && s.is_some_and(|s| !s.nullable)
}

/// `Default(x, s)`.
pub(crate) fn apply(x: &mut Value, s: &Node) {
    match x {
        Value::Object(map) => {
            for (k, prop) in &s.properties {
                let Some(default) = &prop.default else {
                    continue;
                };
                let missing = map.get(k).is_none_or(|v| non_nullable_null(v, Some(prop)));
                if missing {
                    map.insert(k.clone(), default.clone());
                }
            }
            for (k, v) in map.iter_mut() {
                if let Some(prop) = s.properties.get(k) {
                    apply(v, prop);
                } else if let Some(extra) = s.additional_schema() {
                    if non_nullable_null(v, Some(extra))
                        && let Some(default) = &extra.default
                    {
                        *v = default.clone();
                    }
                    apply(v, extra);
                }
            }
        }
        Value::Array(items) => {
            let Some(item) = s.items.as_deref() else {
                return;
            };
            for v in items.iter_mut() {
                if non_nullable_null(v, Some(item))
                    && let Some(default) = &item.default
                {
                    *v = default.clone();
                }
                apply(v, item);
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

    /// Cases from upstream's `TestDefault` (defaulting/algorithm_test.go).
    #[test]
    fn upstream_default_table() {
        let s = node(json!({"type": "object", "properties": {
            "a": {"type": "string", "default": "A"},
            "b": {"type": "object", "default": {"x": 1}, "properties": {
                "x": {"type": "integer"},
                "y": {"type": "string", "default": "Y"}}},
            "c": {"type": "array", "items": {"type": "object", "properties": {
                "z": {"type": "string", "default": "Z"}}}},
            "d": {"type": "object", "additionalProperties": {
                "type": "object", "default": {"m": 1}, "properties": {"m": {"type": "integer"}}}},
            "e": {"type": "string", "nullable": true, "default": "E"},
            "f": {"type": "array", "items": {"type": "string", "default": "F"}}
        }}));
        let cases = [
            (
                json!({}),
                json!({"a": "A", "b": {"x": 1, "y": "Y"}, "e": "E"}),
            ),
            (
                json!({"a": null, "c": [{}, {"z": "q"}], "e": null}),
                json!({"a": "A", "b": {"x": 1, "y": "Y"}, "c": [{"z": "Z"}, {"z": "q"}], "e": null}),
            ),
            (
                json!({"d": {"k": null, "j": {}}, "f": [null, "x"]}),
                json!({"a": "A", "b": {"x": 1, "y": "Y"}, "d": {"k": {"m": 1}, "j": {}}, "e": "E", "f": ["F", "x"]}),
            ),
        ];
        for (mut input, want) in cases {
            apply(&mut input, &s);
            assert_eq!(input, want);
            let again = input.clone();
            apply(&mut input, &s);
            assert_eq!(input, again, "idempotent");
        }
    }
}
