//! One schema node: the structural skeleton (types, `properties`, `items`,
//! `additionalProperties`, `x-kubernetes-*`, `default`, `nullable`) and
//! the value validations (bounds, `enum`, `pattern`, `format`, junctors),
//! read from an `openAPIV3Schema` once per CRD version.
//!
//! Upstream keeps two views (the structural schema for pruning and
//! defaulting, the go-openapi schema for validation); one tree serves both
//! here: pruning and defaulting walk only `properties`, `items` and
//! `additionalProperties`, validation also walks `allOf`/`anyOf`/`oneOf`/
//! `not`.

use std::collections::BTreeMap;

use serde_json::Value;

use super::format;
use super::pattern::Pattern;

/// Deepest schema nesting [`Node::parse`] accepts (serde_json parses at
/// most 128 JSON levels, about 64 schema levels, so real schemas fit).
pub const MAX_SCHEMA_DEPTH: usize = 100;

/// `additionalProperties`: a boolean or a schema.
#[derive(Debug, Clone)]
pub(crate) enum Additional {
    /// `true` or `false` (`true` keeps nothing under it when pruning, as
    /// upstream's structural schema has no schema for it).
    Allows(bool),
    /// A schema for every value.
    Schema(Box<Node>),
}

/// A parsed schema node. Fields hold what upstream reads; absent keywords
/// are `None`/empty.
#[derive(Debug, Clone, Default)]
pub(crate) struct Node {
    /// `type` (or `integer,string` for `x-kubernetes-int-or-string`).
    pub types: Vec<String>,
    /// `nullable`.
    pub nullable: bool,
    /// `x-kubernetes-preserve-unknown-fields: true`.
    pub preserve_unknown: bool,
    /// `x-kubernetes-embedded-resource: true`.
    pub embedded: bool,
    /// `default`, pruned by its own schema (upstream `PruneDefaults`).
    pub default: Option<Value>,
    /// `properties`.
    pub properties: BTreeMap<String, Node>,
    /// `additionalProperties`.
    pub additional: Option<Additional>,
    /// `items` (a single schema; the array form is not structural).
    pub items: Option<Box<Node>>,
    /// `x-kubernetes-list-type`.
    pub list_type: Option<String>,
    /// `x-kubernetes-list-map-keys`.
    pub list_map_keys: Vec<String>,
    /// `format`, empty when apiextensions does not support it
    /// (`StripUnsupportedFormatsPostProcess`).
    pub format: String,
    /// `pattern`.
    pub pattern: Option<Pattern>,
    /// `enum`.
    pub enumeration: Option<Vec<Value>>,
    /// `maximum` / `exclusiveMaximum`.
    pub maximum: Option<f64>,
    /// `exclusiveMaximum`.
    pub exclusive_maximum: bool,
    /// `minimum`.
    pub minimum: Option<f64>,
    /// `exclusiveMinimum`.
    pub exclusive_minimum: bool,
    /// `multipleOf`.
    pub multiple_of: Option<f64>,
    /// `maxLength` (runes).
    pub max_length: Option<i64>,
    /// `minLength` (runes).
    pub min_length: Option<i64>,
    /// `maxItems`.
    pub max_items: Option<i64>,
    /// `minItems`.
    pub min_items: Option<i64>,
    /// `uniqueItems`.
    pub unique_items: bool,
    /// `maxProperties`.
    pub max_properties: Option<i64>,
    /// `minProperties`.
    pub min_properties: Option<i64>,
    /// `required`.
    pub required: Vec<String>,
    /// `allOf`.
    pub all_of: Vec<Node>,
    /// `anyOf`.
    pub any_of: Vec<Node>,
    /// `oneOf`.
    pub one_of: Vec<Node>,
    /// `not`.
    pub not: Option<Box<Node>>,
}

impl Node {
    /// Reads `schema`; `path` names the node in errors. Fails on a
    /// non-object schema, a keyword of the wrong JSON type, or nesting
    /// deeper than [`MAX_SCHEMA_DEPTH`].
    pub(crate) fn parse(schema: &Value, path: &str, depth: usize) -> Result<Node, String> {
        if depth > MAX_SCHEMA_DEPTH {
            return Err(format!(
                "{path}: schema nesting exceeds {MAX_SCHEMA_DEPTH} levels"
            ));
        }
        let Some(map) = schema.as_object() else {
            return Err(format!("{path}: must be an object"));
        };
        let mut node = Node::default();
        let child = |v: &Value, p: String| Node::parse(v, &p, depth + 1);
        for (key, value) in map {
            let at = || format!("{path}.{key}");
            match key.as_str() {
                "type" => match value {
                    Value::String(t) if !t.is_empty() => node.types = vec![t.clone()],
                    Value::String(_) | Value::Null => {}
                    _ => return Err(format!("{}: must be a string", at())),
                },
                "nullable" => node.nullable = flag(value, &at)?,
                "x-kubernetes-preserve-unknown-fields" => node.preserve_unknown = flag(value, &at)?,
                "x-kubernetes-embedded-resource" => node.embedded = flag(value, &at)?,
                "uniqueItems" => node.unique_items = flag(value, &at)?,
                "exclusiveMaximum" => node.exclusive_maximum = flag(value, &at)?,
                "exclusiveMinimum" => node.exclusive_minimum = flag(value, &at)?,
                "default" => node.default = Some(value.clone()),
                "properties" => {
                    let Some(props) = value.as_object() else {
                        return Err(format!("{}: must be an object", at()));
                    };
                    for (name, sub) in props {
                        let parsed = child(sub, format!("{path}.properties[{name}]"))?;
                        node.properties.insert(name.clone(), parsed);
                    }
                }
                "additionalProperties" => {
                    node.additional = match value {
                        Value::Bool(b) => Some(Additional::Allows(*b)),
                        Value::Null => None,
                        other => Some(Additional::Schema(Box::new(child(
                            other,
                            format!("{path}.additionalProperties"),
                        )?))),
                    }
                }
                "items" => match value {
                    Value::Object(_) => {
                        node.items = Some(Box::new(child(value, format!("{path}.items"))?))
                    }
                    Value::Null => {}
                    _ => return Err(format!("{}: must be a single schema", at())),
                },
                "x-kubernetes-list-type" => node.list_type = opt_string(value, &at)?,
                "x-kubernetes-list-map-keys" => node.list_map_keys = strings(value, &at)?,
                "required" => node.required = strings(value, &at)?,
                "format" => {
                    node.format = match opt_string(value, &at)? {
                        Some(f) if format::supported(&f) => f,
                        _ => String::new(),
                    }
                }
                "pattern" => {
                    node.pattern = opt_string(value, &at)?
                        .filter(|p| !p.is_empty())
                        .map(|p| Pattern::new(&p))
                }
                "enum" => match value {
                    Value::Array(values) => node.enumeration = Some(values.clone()),
                    Value::Null => {}
                    _ => return Err(format!("{}: must be an array", at())),
                },
                "maximum" => node.maximum = number(value, &at)?,
                "minimum" => node.minimum = number(value, &at)?,
                "multipleOf" => node.multiple_of = number(value, &at)?,
                "maxLength" => node.max_length = integer(value, &at)?,
                "minLength" => node.min_length = integer(value, &at)?,
                "maxItems" => node.max_items = integer(value, &at)?,
                "minItems" => node.min_items = integer(value, &at)?,
                "maxProperties" => node.max_properties = integer(value, &at)?,
                "minProperties" => node.min_properties = integer(value, &at)?,
                "allOf" | "anyOf" | "oneOf" => {
                    let list = match value {
                        Value::Array(list) => list,
                        Value::Null => continue,
                        _ => return Err(format!("{}: must be an array", at())),
                    };
                    let mut parsed = Vec::with_capacity(list.len());
                    for (i, sub) in list.iter().enumerate() {
                        parsed.push(child(sub, format!("{path}.{key}[{i}]"))?);
                    }
                    match key.as_str() {
                        "allOf" => node.all_of = parsed,
                        "anyOf" => node.any_of = parsed,
                        _ => node.one_of = parsed,
                    }
                }
                "not" if !value.is_null() => {
                    node.not = Some(Box::new(child(value, format!("{path}.not"))?));
                }
                _ => {}
            }
        }
        if map.get("x-kubernetes-int-or-string") == Some(&Value::Bool(true)) {
            node.types = vec!["integer".to_owned(), "string".to_owned()];
        }
        Ok(node)
    }

    /// The schema of the value under `key` of an object: the property, else
    /// the `additionalProperties` schema (upstream `getSchemaForField`).
    pub(crate) fn field(&self, key: &str) -> Option<&Node> {
        self.properties.get(key).or(match &self.additional {
            Some(Additional::Schema(s)) => Some(s),
            _ => None,
        })
    }

    /// Whether `additionalProperties` is present at all (a bool or a
    /// schema), which is what upstream's pruning tests.
    pub(crate) fn has_additional(&self) -> bool {
        self.additional.is_some()
    }

    /// The `additionalProperties` schema, if it is one.
    pub(crate) fn additional_schema(&self) -> Option<&Node> {
        match &self.additional {
            Some(Additional::Schema(s)) => Some(s),
            _ => None,
        }
    }
}

fn flag(value: &Value, at: &dyn Fn() -> String) -> Result<bool, String> {
    match value {
        Value::Bool(b) => Ok(*b),
        Value::Null => Ok(false),
        _ => Err(format!("{}: must be a boolean", at())),
    }
}

fn opt_string(value: &Value, at: &dyn Fn() -> String) -> Result<Option<String>, String> {
    match value {
        Value::String(s) => Ok(Some(s.clone())),
        Value::Null => Ok(None),
        _ => Err(format!("{}: must be a string", at())),
    }
}

fn strings(value: &Value, at: &dyn Fn() -> String) -> Result<Vec<String>, String> {
    match value {
        Value::Null => Ok(Vec::new()),
        Value::Array(items) => items
            .iter()
            .map(|v| {
                v.as_str()
                    .map(str::to_owned)
                    .ok_or_else(|| format!("{}: must be a list of strings", at()))
            })
            .collect(),
        _ => Err(format!("{}: must be a list of strings", at())),
    }
}

fn number(value: &Value, at: &dyn Fn() -> String) -> Result<Option<f64>, String> {
    match value {
        Value::Null => Ok(None),
        Value::Number(n) => Ok(n.as_f64()),
        _ => Err(format!("{}: must be a number", at())),
    }
}

fn integer(value: &Value, at: &dyn Fn() -> String) -> Result<Option<i64>, String> {
    match value {
        Value::Null => Ok(None),
        Value::Number(n) => match n.as_i64() {
            Some(i) => Ok(Some(i)),
            None => Err(format!("{}: must be an integer", at())),
        },
        _ => Err(format!("{}: must be an integer", at())),
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn reads_the_skeleton_and_the_validations() {
        let node = Node::parse(
            &json!({
                "type": "object",
                "required": ["spec"],
                "properties": {
                    "spec": {"type": "object", "properties": {
                        "replicas": {"type": "integer", "minimum": 1, "default": 1},
                        "port": {"x-kubernetes-int-or-string": true},
                        "when": {"type": "string", "format": "date-time"},
                        "n": {"type": "integer", "format": "int32"}
                    }}
                }
            }),
            "root",
            0,
        )
        .unwrap();
        let spec = &node.properties["spec"];
        assert_eq!(node.required, ["spec"]);
        assert_eq!(spec.properties["replicas"].minimum, Some(1.0));
        assert_eq!(spec.properties["port"].types, ["integer", "string"]);
        assert_eq!(spec.properties["when"].format, "date-time");
        assert_eq!(spec.properties["n"].format, "", "int32 is not validated");
    }

    #[test]
    fn rejects_wrong_keyword_types_and_deep_nesting() {
        assert!(Node::parse(&json!({"type": 5}), "s", 0).is_err());
        assert!(Node::parse(&json!("x"), "s", 0).is_err());
        assert!(Node::parse(&json!({"maxLength": 1.5}), "s", 0).is_err());
        let mut deep = json!({"type": "string"});
        for _ in 0..(MAX_SCHEMA_DEPTH + 2) {
            deep = json!({"type": "array", "items": deep});
        }
        assert!(Node::parse(&deep, "s", 0).unwrap_err().contains("nesting"));
    }
}
