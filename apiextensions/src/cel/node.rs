//! The schema as the CEL rules see it: one [`Node`] per schema node, with
//! the CEL type of its values, its compiled rules and how old values
//! correlate with new ones below it. Built once per CRD version.

use std::collections::BTreeMap;

use serde_json::Value;

use super::escape::escape;
use super::rule::Rule;

/// Schema nesting below which values are treated as untyped (real CRDs
/// stay far above it; it bounds every recursion over the tree).
pub(crate) const MAX_DEPTH: usize = 64;

/// What values of a node are, for CEL.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    /// `type: object`.
    Object,
    /// `type: array`.
    Array,
    /// `type: string`, with the formats CEL types specially.
    String(StringFormat),
    /// `type: integer` (CEL `int`).
    Integer,
    /// `type: number` (CEL `double`).
    Number,
    /// `type: boolean`.
    Boolean,
    /// `x-kubernetes-int-or-string` (CEL `dyn`: an `int` or a `string`).
    IntOrString,
    /// No type (`x-kubernetes-preserve-unknown-fields`): values as they come.
    Dynamic,
}

/// The string formats upstream turns into other CEL types.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum StringFormat {
    /// Any other format: a CEL `string`.
    Plain,
    /// `byte`: base64 text as CEL `bytes`.
    Byte,
    /// `duration`: Go duration text as CEL `duration`.
    Duration,
    /// `date`: `2006-01-02` as a CEL `timestamp`.
    Date,
    /// `date-time`: RFC 3339 as a CEL `timestamp`.
    DateTime,
}

/// `x-kubernetes-list-type`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum ListType {
    /// `atomic` (the default).
    Atomic,
    /// `set`.
    Set,
    /// `map` with its `x-kubernetes-list-map-keys`.
    Map(Vec<String>),
}

/// One property of an object node.
#[derive(Debug)]
pub(crate) struct Property {
    /// The name CEL uses (`foo__dash__bar`); `None` when the name cannot
    /// be escaped, so CEL cannot reach it.
    pub cel_name: Option<String>,
    /// The property's schema.
    pub node: Node,
}

/// One schema node.
#[derive(Debug)]
pub(crate) struct Node {
    /// The CEL type of its values.
    pub kind: Kind,
    /// `type` as upstream prints it in errors (`"object"`, `"string"`, `""`).
    pub type_name: String,
    /// The rules of `x-kubernetes-validations`, in order.
    pub rules: Vec<Rule>,
    /// `properties`, by JSON name.
    pub properties: BTreeMap<String, Property>,
    /// `additionalProperties` as a schema.
    pub additional: Option<Box<Node>>,
    /// `items`.
    pub items: Option<Box<Node>>,
    /// `x-kubernetes-list-type`.
    pub list_type: ListType,
    /// Whether old map entries correlate with new ones
    /// (`x-kubernetes-map-type` unset, `granular` or `atomic`).
    pub map_correlatable: bool,
    /// The root, or `x-kubernetes-embedded-resource`: `apiVersion`, `kind`
    /// and `metadata.name`/`generateName` are typed for CEL.
    pub resource: bool,
    /// Whether this node or one below it has rules.
    pub has_rules: bool,
    /// Whether a node below this one has rules (the walk goes no deeper
    /// otherwise).
    pub below: bool,
}

impl Node {
    /// A node with no schema: untyped, no rules.
    pub(crate) fn dynamic() -> Self {
        Self {
            kind: Kind::Dynamic,
            type_name: String::new(),
            rules: Vec::new(),
            properties: BTreeMap::new(),
            additional: None,
            items: None,
            list_type: ListType::Atomic,
            map_correlatable: true,
            resource: false,
            has_rules: false,
            below: false,
        }
    }

    /// The node's type and structure from `schema` (rules are added by the
    /// caller); children are built by `child`, which gets the child schema,
    /// its path suffix and the depth.
    pub(crate) fn shape(schema: &Value) -> Self {
        let mut node = Self::dynamic();
        let Some(map) = schema.as_object() else {
            return node;
        };
        let ty = map.get("type").and_then(Value::as_str).unwrap_or("");
        node.type_name = ty.to_owned();
        let flag = |k: &str| map.get(k).and_then(Value::as_bool).unwrap_or(false);
        node.kind = if flag("x-kubernetes-int-or-string") {
            Kind::IntOrString
        } else {
            match ty {
                "object" => Kind::Object,
                "array" => Kind::Array,
                "integer" => Kind::Integer,
                "number" => Kind::Number,
                "boolean" => Kind::Boolean,
                "string" => Kind::String(
                    match map.get("format").and_then(Value::as_str).unwrap_or("") {
                        "byte" => StringFormat::Byte,
                        "duration" => StringFormat::Duration,
                        "date" => StringFormat::Date,
                        "date-time" => StringFormat::DateTime,
                        _ => StringFormat::Plain,
                    },
                ),
                _ => Kind::Dynamic,
            }
        };
        node.resource = flag("x-kubernetes-embedded-resource");
        node.list_type = match map.get("x-kubernetes-list-type").and_then(Value::as_str) {
            Some("set") => ListType::Set,
            Some("map") => ListType::Map(
                map.get("x-kubernetes-list-map-keys")
                    .and_then(Value::as_array)
                    .map(|keys| {
                        keys.iter()
                            .filter_map(Value::as_str)
                            .map(str::to_owned)
                            .collect()
                    })
                    .unwrap_or_default(),
            ),
            _ => ListType::Atomic,
        };
        node.map_correlatable = matches!(
            map.get("x-kubernetes-map-type").and_then(Value::as_str),
            None | Some("granular") | Some("atomic")
        );
        node
    }

    /// The property `name` and its CEL name, if escapable.
    pub(crate) fn property(name: &str, node: Node) -> (String, Property) {
        (
            name.to_owned(),
            Property {
                cel_name: escape(name).map(|c| c.into_owned()),
                node,
            },
        )
    }
}
