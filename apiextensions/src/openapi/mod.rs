//! The OpenAPI schemas kube-apiserver publishes for one served version of
//! a CustomResourceDefinition (apiextensions-apiserver
//! `pkg/controller/openapi/builder/builder.go`, with kube-openapi's v3
//! and v2 builders): the kind `<reversed-group>.<version>.<Kind>` and its
//! `<Kind>List`.
//!
//! # Contracts
//! - The kind's schema is the version's structural schema
//!   ([`structural::published`]) with `apiVersion`, `kind` (TypeMeta's
//!   schemas and descriptions) and `metadata` (a reference to
//!   [`OBJECT_META`]) set, the same three on every
//!   `x-kubernetes-embedded-resource` object (which then requires `kind`
//!   and `apiVersion`), and `x-kubernetes-group-version-kind`. A version
//!   without a publishable schema gets `{"type":"object"}` and the marker
//!   only (so kubectl does not assume `additionalProperties: false`).
//! - v3 ([`v3_schemas`]): `#/components/schemas/` references, a reference
//!   with siblings wrapped in `allOf`; `nullable`, junctors and `default`
//!   kept. v2 ([`v2_definitions`]): `#/definitions/` references, the
//!   schema passed through upstream's v2 conversion ([`v2::to_v2`]:
//!   junctors and nullable go) and defaults pruned; a version whose root
//!   preserves unknown fields is published as `{"type":"object"}` there.
//! - Both forms carry `x-kubernetes-selectable-fields` when the version has
//!   `selectableFields` (CustomResourceFieldSelectors is GA in 1.33).
//! - The output references [`OBJECT_META`] and [`LIST_META`] and nothing
//!   else: the caller adds those definitions (and what they reference).
//! - Pure; errors only for a CRD that is not an object or has no such
//!   version; never panics (depth bounded by [`structural::MAX_DEPTH`]).

pub mod structural;
pub mod v2;

use serde_json::{Map, Value, json};

/// `ObjectMeta`'s definition name.
pub const OBJECT_META: &str = "io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta";
/// `ListMeta`'s definition name.
pub const LIST_META: &str = "io.k8s.apimachinery.pkg.apis.meta.v1.ListMeta";

/// TypeMeta's `apiVersion` description (generated OpenAPI).
const API_VERSION_DOC: &str = "APIVersion defines the versioned schema of this representation of an object. Servers should convert recognized schemas to the latest internal value, and may reject unrecognized values. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#resources";
/// TypeMeta's `kind` description (generated OpenAPI).
const KIND_DOC: &str = "Kind is a string value representing the REST resource this object represents. Servers may infer this from the endpoint the client submits requests to. Cannot be updated. In CamelCase. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#types-kinds";
/// `PartialObjectMetadata`'s `metadata` description.
const METADATA_DOC: &str = "Standard object's metadata. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#metadata";
/// `PartialObjectMetadataList`'s `metadata` description.
const LIST_METADATA_DOC: &str = "Standard list metadata. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#types-kinds";
/// `apiVersion` of an embedded resource (builder.go `addEmbeddedProperties`).
const EMBEDDED_API_VERSION_DOC: &str = "apiVersion defines the versioned schema of this representation of an object. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#resources";
/// `kind` of an embedded resource.
const EMBEDDED_KIND_DOC: &str = "kind is a string value representing the type of this object. In CamelCase. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#types-kinds";

/// Which published form to produce.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Form {
    /// OpenAPI 3.0 `components.schemas` (`/openapi/v3/apis/<g>/<v>`).
    V3,
    /// Swagger 2.0 `definitions` (`/openapi/v2`).
    V2,
    /// The v3 schema with plain `#/$defs/<name>` references (siblings kept
    /// beside `$ref`), the shape of the vendored built-in definitions:
    /// what the apiserver's server-side-apply schema reads. Upstream feeds
    /// its SSA type converter from the v3 form too.
    Source,
}

impl Form {
    /// A reference to definition `name` carrying `description`.
    fn reference(self, name: &str, description: &str) -> Value {
        match self {
            Form::V3 => json!({
                "allOf": [{"$ref": format!("#/components/schemas/{name}")}],
                "description": description,
            }),
            Form::V2 => {
                json!({"$ref": format!("#/definitions/{name}"), "description": description})
            }
            Form::Source => json!({"$ref": format!("#/$defs/{name}"), "description": description}),
        }
    }

    /// A bare reference to definition `name`.
    fn bare_reference(self, name: &str) -> Value {
        let prefix = match self {
            Form::V3 => "#/components/schemas/",
            Form::V2 => "#/definitions/",
            Form::Source => "#/$defs/",
        };
        json!({ "$ref": format!("{prefix}{name}") })
    }
}

/// The definition name of a custom kind: the group reversed, then version
/// and kind (`stable.example.com`, `v1`, `CronTab` →
/// `com.example.stable.v1.CronTab`), as the apiserver's definition namer.
pub fn definition_name(group: &str, version: &str, kind: &str) -> String {
    let group = if group.contains('.') {
        group.split('.').rev().collect::<Vec<_>>().join(".")
    } else {
        group.to_owned()
    };
    format!("{group}.{version}.{kind}")
}

/// What the builder reads from a CRD for one version.
#[derive(Debug, Clone, PartialEq)]
pub struct CrdVersion {
    /// `spec.group`.
    pub group: String,
    /// The version name.
    pub version: String,
    /// `spec.names.kind`.
    pub kind: String,
    /// `spec.names.listKind` (`<kind>List` when unset).
    pub list_kind: String,
    /// `spec.names.plural`.
    pub plural: String,
    /// The version's `schema.openAPIV3Schema`, if any.
    pub schema: Option<Value>,
    /// `spec.preserveUnknownFields`.
    pub preserve_unknown_fields: bool,
    /// The version's `selectableFields[*].jsonPath`.
    pub selectable_fields: Vec<String>,
}

impl CrdVersion {
    /// Reads `version` of `crd` (`apiextensions.k8s.io/v1` JSON).
    pub fn read(crd: &Value, version: &str) -> Result<Self, String> {
        let spec = crd
            .get("spec")
            .and_then(Value::as_object)
            .ok_or_else(|| "the CustomResourceDefinition has no spec".to_owned())?;
        let text = |v: Option<&Value>| v.and_then(Value::as_str).unwrap_or("").to_owned();
        let names = spec.get("names");
        let kind = text(names.and_then(|n| n.get("kind")));
        let mut list_kind = text(names.and_then(|n| n.get("listKind")));
        if list_kind.is_empty() {
            list_kind = format!("{kind}List");
        }
        let v = spec
            .get("versions")
            .and_then(Value::as_array)
            .and_then(|vs| {
                vs.iter()
                    .find(|v| v.get("name").and_then(Value::as_str) == Some(version))
            })
            .ok_or_else(|| format!("the CustomResourceDefinition has no version {version:?}"))?;
        let schema = v
            .get("schema")
            .and_then(|s| s.get("openAPIV3Schema"))
            .filter(|s| !s.is_null())
            .cloned();
        let selectable_fields = v
            .get("selectableFields")
            .and_then(Value::as_array)
            .map(|a| {
                a.iter()
                    .filter_map(|f| f.get("jsonPath").and_then(Value::as_str))
                    .map(|p| p.strip_prefix('.').unwrap_or(p).to_owned())
                    .collect()
            })
            .unwrap_or_default();
        Ok(Self {
            group: text(spec.get("group")),
            version: version.to_owned(),
            kind,
            list_kind,
            plural: text(names.and_then(|n| n.get("plural"))),
            schema,
            preserve_unknown_fields: spec.get("preserveUnknownFields").and_then(Value::as_bool)
                == Some(true),
            selectable_fields,
        })
    }

    /// The kind's definition name.
    pub fn kind_name(&self) -> String {
        definition_name(&self.group, &self.version, &self.kind)
    }

    /// The list kind's definition name.
    pub fn list_name(&self) -> String {
        definition_name(&self.group, &self.version, &self.list_kind)
    }

    fn gvk(&self, kind: &str) -> Value {
        json!([{"group": self.group, "kind": kind, "version": self.version}])
    }

    fn selectable(&self) -> Option<Value> {
        (!self.selectable_fields.is_empty()).then(|| {
            Value::Array(
                self.selectable_fields
                    .iter()
                    .map(|p| json!({ "fieldPath": p }))
                    .collect(),
            )
        })
    }

    /// The kind's schema in `form` (`buildKubeNative`).
    pub fn kind_schema(&self, form: Form) -> Value {
        let published = self
            .schema
            .as_ref()
            .and_then(structural::published)
            .and_then(|v| match v {
                Value::Object(m) => Some(m),
                _ => None,
            });
        let mut out = match published {
            Some(s)
                if form == Form::V2
                    && (self.preserve_unknown_fields
                        || s.get("x-kubernetes-preserve-unknown-fields")
                            == Some(&Value::Bool(true))) =>
            {
                object_only()
            }
            None => object_only(),
            Some(mut s) => {
                if form == Form::V2 {
                    v2::to_v2(&mut s, 0);
                    v2::prune_defaults(&mut s, 0);
                }
                set_property(
                    &mut s,
                    "metadata",
                    form.reference(OBJECT_META, METADATA_DOC),
                );
                add_type_meta(&mut s);
                add_embedded(&mut s, form, 0);
                s
            }
        };
        out.insert(
            "x-kubernetes-group-version-kind".to_owned(),
            self.gvk(&self.kind),
        );
        if let Some(sel) = self.selectable() {
            out.insert("x-kubernetes-selectable-fields".to_owned(), sel);
        }
        Value::Object(out)
    }

    /// The list kind's schema in `form` (`buildListSchema`).
    pub fn list_schema(&self, form: Form) -> Value {
        let mut out = Map::new();
        out.insert("type".to_owned(), json!("object"));
        out.insert(
            "description".to_owned(),
            json!(format!("{} is a list of {}", self.list_kind, self.kind)),
        );
        out.insert("required".to_owned(), json!(["items"]));
        set_property(
            &mut out,
            "items",
            json!({
                "type": "array",
                "items": form.bare_reference(&self.kind_name()),
                "description": format!(
                    "List of {}. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md",
                    self.plural
                ),
            }),
        );
        set_property(
            &mut out,
            "metadata",
            form.reference(LIST_META, LIST_METADATA_DOC),
        );
        add_type_meta(&mut out);
        out.insert(
            "x-kubernetes-group-version-kind".to_owned(),
            self.gvk(&self.list_kind),
        );
        if let Some(sel) = self.selectable() {
            out.insert("x-kubernetes-selectable-fields".to_owned(), sel);
        }
        Value::Object(out)
    }

    /// Both schemas in `form`, keyed by definition name.
    pub fn schemas(&self, form: Form) -> Map<String, Value> {
        let mut out = Map::new();
        out.insert(self.kind_name(), self.kind_schema(form));
        out.insert(self.list_name(), self.list_schema(form));
        out
    }
}

/// `{"type":"object"}`.
fn object_only() -> Map<String, Value> {
    let mut m = Map::new();
    m.insert("type".to_owned(), json!("object"));
    m
}

/// `SetProperty`: adds or replaces `properties[name]`.
fn set_property(s: &mut Map<String, Value>, name: &str, schema: Value) {
    let props = s
        .entry("properties")
        .or_insert_with(|| Value::Object(Map::new()));
    if !props.is_object() {
        *props = Value::Object(Map::new());
    }
    if let Value::Object(p) = props {
        p.insert(name.to_owned(), schema);
    }
}

/// `addTypeMetaProperties`: TypeMeta's `apiVersion` and `kind`.
fn add_type_meta(s: &mut Map<String, Value>) {
    set_property(
        s,
        "apiVersion",
        json!({"type": "string", "description": API_VERSION_DOC}),
    );
    set_property(
        s,
        "kind",
        json!({"type": "string", "description": KIND_DOC}),
    );
}

/// `addEmbeddedProperties`: children first, then this node; in v2 a node
/// preserving unknown fields gets nothing (kubectl would then refuse
/// unknown fields under it).
fn add_embedded(s: &mut Map<String, Value>, form: Form, depth: usize) {
    if depth > structural::MAX_DEPTH {
        return;
    }
    if let Some(Value::Object(p)) = s.get_mut("properties") {
        for c in p.values_mut() {
            if let Value::Object(c) = c {
                add_embedded(c, form, depth + 1);
            }
        }
    }
    for k in ["items", "additionalProperties"] {
        if let Some(Value::Object(c)) = s.get_mut(k) {
            add_embedded(c, form, depth + 1);
        }
    }
    let is = |k: &str| s.get(k) == Some(&Value::Bool(true));
    if form == Form::V2 && is("x-kubernetes-preserve-unknown-fields") {
        return;
    }
    if !is("x-kubernetes-embedded-resource") {
        return;
    }
    set_property(
        s,
        "apiVersion",
        json!({"type": "string", "description": EMBEDDED_API_VERSION_DOC}),
    );
    set_property(
        s,
        "kind",
        json!({"type": "string", "description": EMBEDDED_KIND_DOC}),
    );
    set_property(s, "metadata", form.reference(OBJECT_META, METADATA_DOC));
    let req = s
        .entry("required")
        .or_insert_with(|| Value::Array(Vec::new()));
    if let Value::Array(req) = req {
        for k in ["kind", "apiVersion"] {
            if !req.iter().any(|r| r.as_str() == Some(k)) {
                req.push(json!(k));
            }
        }
    }
}

/// The OpenAPI v3 schemas of `version` of `crd`: the kind and the list
/// kind, keyed by definition name (see the module contracts).
pub fn v3_schemas(crd: &Value, version: &str) -> Result<Map<String, Value>, String> {
    Ok(CrdVersion::read(crd, version)?.schemas(Form::V3))
}

/// The Swagger 2.0 definitions of `version` of `crd` (see the module
/// contracts).
pub fn v2_definitions(crd: &Value, version: &str) -> Result<Map<String, Value>, String> {
    Ok(CrdVersion::read(crd, version)?.schemas(Form::V2))
}

/// The kind's schema for server-side apply: the v3 schema in
/// [`Form::Source`] (references `#/$defs/<name>`).
pub fn apply_schema(crd: &Value, version: &str) -> Result<Value, String> {
    Ok(CrdVersion::read(crd, version)?.kind_schema(Form::Source))
}

#[cfg(test)]
mod tests;
