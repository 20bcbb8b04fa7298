//! The vendored definitions (JSON Schema 2020-12, `#/$defs/` references,
//! nullable type arrays) rewritten into the two forms kube-apiserver
//! publishes: OpenAPI 3.0 `components.schemas` and Swagger 2.0
//! `definitions`.
//!
//! Upstream's forms were checked against kubectl's copies of kube-apiserver
//! documents (`kubernetes/kubectl: testdata/openapi/v3/apis/apps/v1.json`)
//! and kube-openapi's builders (`kube-openapi/pkg/builder3`,
//! `pkg/common/common.go: GenerateOpenAPIV3OneOfSchema`).
//!
//! # Contracts
//! - The walk is structural: only schema keywords are rewritten. A property
//!   *named* `type`, `oneOf` or `enum` (JSONSchemaProps has all three) is a
//!   name in `properties`, never a keyword.
//! - Every `$ref` in the output points inside the same document
//!   (`#/components/schemas/<name>` or `#/definitions/<name>`), and
//!   [`closure`] yields every name a document must carry for that to hold.
//! - kubernetes-validate's own additions are removed: the `null` member of
//!   type arrays and the `enum` it puts on `apiVersion` and `kind`. Every
//!   `x-kubernetes-*` extension is kept where it stands.

use std::collections::{BTreeMap, BTreeSet};

use serde_json::{Map, Value, json};

use crate::schema::Definitions;

const SOURCE_PREFIX: &str = "#/$defs/";

/// `IntOrString`'s definition name.
const INT_OR_STRING: &str = "io.k8s.apimachinery.pkg.util.intstr.IntOrString";
/// `Quantity`'s definition name.
const QUANTITY: &str = "io.k8s.apimachinery.pkg.api.resource.Quantity";

/// Which published form to produce.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Form {
    /// OpenAPI 3.0 (`/openapi/v3/...`).
    V3,
    /// Swagger 2.0 (`/openapi/v2`).
    V2,
}

impl Form {
    /// The `$ref` prefix of this form.
    pub fn ref_prefix(self) -> &'static str {
        match self {
            Form::V3 => "#/components/schemas/",
            Form::V2 => "#/definitions/",
        }
    }

    /// A reference to definition `name` in this form.
    pub fn reference(self, name: &str) -> Value {
        json!({ "$ref": format!("{}{name}", self.ref_prefix()) })
    }
}

/// Every definition reachable from `roots` through `$ref` (roots included),
/// sorted by name. Unknown names are skipped.
pub fn closure<'a>(defs: &Definitions, roots: impl IntoIterator<Item = &'a str>) -> Vec<String> {
    let raw = defs.raw();
    let mut seen: BTreeSet<String> = BTreeSet::new();
    let mut stack: Vec<String> = roots
        .into_iter()
        .filter(|n| raw.contains_key(*n))
        .map(str::to_owned)
        .collect();
    while let Some(name) = stack.pop() {
        if !seen.insert(name.clone()) {
            continue;
        }
        if let Some(node) = raw.get(&name) {
            collect_refs(node, &mut |target| {
                if raw.contains_key(target) && !seen.contains(target) {
                    stack.push(target.to_owned());
                }
            });
        }
    }
    seen.into_iter().collect()
}

fn collect_refs(node: &Value, f: &mut impl FnMut(&str)) {
    match node {
        Value::Object(m) => {
            for (k, v) in m {
                if k == "$ref" {
                    if let Some(t) = v.as_str().and_then(|r| r.strip_prefix(SOURCE_PREFIX)) {
                        f(t);
                    }
                } else {
                    collect_refs(v, f);
                }
            }
        }
        Value::Array(a) => a.iter().for_each(|v| collect_refs(v, f)),
        _ => {}
    }
}

/// The named definitions in `form`, keyed by name (sorted).
pub fn convert_all(defs: &Definitions, names: &[String], form: Form) -> Map<String, Value> {
    let mut out = Map::new();
    for name in names {
        if let Some(node) = defs.raw().get(name) {
            out.insert(name.clone(), definition(name, node, form));
        }
    }
    out
}

/// One named definition in `form`.
pub fn definition(name: &str, node: &Value, form: Form) -> Value {
    let description = node.get("description").cloned();
    let special = match (name, form) {
        // GenerateOpenAPIV3OneOfSchema(IntOrString{}.OpenAPIV3OneOfTypes())
        // with the v2 type/format kept as the format.
        (INT_OR_STRING, Form::V3) => Some(json!({
            "format": "int-or-string",
            "oneOf": [{"type": "integer"}, {"type": "string"}],
        })),
        (INT_OR_STRING, Form::V2) => Some(json!({"type": "string", "format": "int-or-string"})),
        (QUANTITY, Form::V3) => Some(json!({"oneOf": [{"type": "string"}, {"type": "number"}]})),
        (QUANTITY, Form::V2) => Some(json!({"type": "string"})),
        _ => None,
    };
    match special {
        Some(mut v) => {
            if let (Some(d), Some(m)) = (description, v.as_object_mut()) {
                m.insert("description".to_owned(), d);
            }
            v
        }
        None => schema(node, form),
    }
}

/// Converts one schema node (and everything under it).
pub fn schema(node: &Value, form: Form) -> Value {
    let Some(m) = node.as_object() else {
        return node.clone();
    };
    let mut out = Map::new();
    let mut reference = None;
    for (k, v) in m {
        match k.as_str() {
            "$ref" => {
                reference = v
                    .as_str()
                    .map(|r| r.strip_prefix(SOURCE_PREFIX).unwrap_or(r).to_owned());
            }
            "type" => {
                if let Some(t) = collapse_type(v) {
                    out.insert(k.clone(), t);
                }
            }
            "properties" => {
                let props = v
                    .as_object()
                    .map(|props| {
                        props
                            .iter()
                            .map(|(name, p)| (name.clone(), property(name, p, form)))
                            .collect::<Map<_, _>>()
                    })
                    .unwrap_or_default();
                out.insert(k.clone(), Value::Object(props));
            }
            "items" | "not" => {
                out.insert(k.clone(), schema(v, form));
            }
            "additionalProperties" => {
                let converted = if v.is_object() {
                    schema(v, form)
                } else {
                    v.clone()
                };
                out.insert(k.clone(), converted);
            }
            "oneOf" | "anyOf" | "allOf" => {
                let list = v
                    .as_array()
                    .map(|a| a.iter().map(|s| schema(s, form)).collect())
                    .unwrap_or_default();
                out.insert(k.clone(), Value::Array(list));
            }
            _ => {
                out.insert(k.clone(), v.clone());
            }
        }
    }
    match reference {
        None => Value::Object(out),
        Some(target) if out.is_empty() => form.reference(&target),
        // kube-openapi's v3 builder wraps a reference with siblings in allOf
        // (a 3.0 `$ref` ignores its siblings); Swagger 2.0 keeps them beside.
        Some(target) => match form {
            Form::V3 => {
                out.insert("allOf".to_owned(), json!([form.reference(&target)]));
                Value::Object(out)
            }
            Form::V2 => {
                out.insert(
                    "$ref".to_owned(),
                    Value::String(format!("{}{target}", form.ref_prefix())),
                );
                Value::Object(out)
            }
        },
    }
}

/// A property: as [`schema`], without kubernetes-validate's `enum` on
/// `apiVersion`/`kind` (upstream publishes none there).
fn property(name: &str, node: &Value, form: Form) -> Value {
    let mut v = schema(node, form);
    if matches!(name, "apiVersion" | "kind")
        && let Some(m) = v.as_object_mut()
    {
        m.remove("enum");
    }
    v
}

/// `["string", "null"]` → `"string"`; a plain string stays. An array of
/// only `null` has no OpenAPI 3.0 equivalent and is dropped.
fn collapse_type(v: &Value) -> Option<Value> {
    match v {
        Value::Array(a) => {
            let types: Vec<&Value> = a.iter().filter(|t| t.as_str() != Some("null")).collect();
            match types.as_slice() {
                [] => None,
                [one] => Some((*one).clone()),
                _ => Some(Value::Array(types.into_iter().cloned().collect())),
            }
        }
        other => Some(other.clone()),
    }
}

/// Every `$ref` target in `doc`, with the prefix stripped (`None` for refs
/// that do not use `prefix`). For tests and invariant checks.
pub fn refs_in(doc: &Value, prefix: &str) -> BTreeMap<String, Option<String>> {
    let mut out = BTreeMap::new();
    fn walk(v: &Value, prefix: &str, out: &mut BTreeMap<String, Option<String>>) {
        match v {
            Value::Object(m) => {
                for (k, x) in m {
                    if k == "$ref" {
                        if let Some(r) = x.as_str() {
                            out.insert(r.to_owned(), r.strip_prefix(prefix).map(str::to_owned));
                        }
                    } else {
                        walk(x, prefix, out);
                    }
                }
            }
            Value::Array(a) => a.iter().for_each(|x| walk(x, prefix, out)),
            _ => {}
        }
    }
    walk(doc, prefix, &mut out);
    out
}
