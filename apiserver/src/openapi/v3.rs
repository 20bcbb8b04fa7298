//! OpenAPI 3.0 documents: one per served group/version
//! (`/openapi/v3/apis/apps/v1`), plus the small discovery documents
//! kube-apiserver also lists (`api`, `apis`, `apis/<group>`, `version`).
//!
//! Shape as kube-openapi's `builder3` emits it: `openapi: 3.0.0`,
//! `info {title: Kubernetes, version: unversioned}`, `paths`, and
//! `components.schemas` holding exactly the definitions the paths reach.

use serde_json::{Map, Value, json};

use super::params::{In, Param};
use super::paths::{self, Body, Op, PathItem, Produces};
use super::schemas::{self, Form};
use crate::registry::resource::ResourceInfo;
use crate::schema::Definitions;

/// Patch media types, as upstream lists them (minus CBOR, which is not
/// served).
pub const PATCH_TYPES: &[&str] = &[
    "application/apply-patch+yaml",
    "application/json-patch+json",
    "application/merge-patch+json",
    "application/strategic-merge-patch+json",
];

/// Patch media types of custom resources (apiextensions-apiserver's
/// builder: JSON patch, merge patch, apply patch).
pub const CUSTOM_PATCH_TYPES: &[&str] = &[
    "application/apply-patch+yaml",
    "application/json-patch+json",
    "application/merge-patch+json",
];

/// Request and response media types of custom resources.
pub const JSON_TYPES: &[&str] = &["application/json", "application/yaml"];

const OBJECT_TYPES: &[&str] = &[
    "application/json",
    "application/vnd.kubernetes.protobuf",
    "application/yaml",
];
const STREAM_TYPES: &[&str] = &[
    "application/json",
    "application/json;stream=watch",
    "application/vnd.kubernetes.protobuf",
    "application/vnd.kubernetes.protobuf;stream=watch",
    "application/yaml",
];

/// Response media types of an operation.
pub fn produces(p: Produces) -> &'static [&'static str] {
    match p {
        Produces::Object => OBJECT_TYPES,
        Produces::Stream => STREAM_TYPES,
        Produces::Any => &["*/*"],
        Produces::Json => JSON_TYPES,
        Produces::Text => &[
            "application/json",
            "application/vnd.kubernetes.protobuf",
            "application/yaml",
            "text/plain",
        ],
    }
}

/// Description of a response code.
pub fn code_description(code: &str) -> &'static str {
    match code {
        "200" => "OK",
        "201" => "Created",
        "202" => "Accepted",
        _ => "Unauthorized",
    }
}

fn param(p: &Param, description: Option<&str>) -> Value {
    let mut v = json!({
        "description": description.unwrap_or(p.description),
        "in": match p.location { In::Query => "query", In::Path => "path" },
        "name": p.name,
        "schema": {"type": p.ty, "uniqueItems": true},
    });
    if p.location == In::Path {
        v["required"] = Value::Bool(true);
    }
    v
}

fn content(types: &[&str], def: &str) -> Value {
    let schema = if def == super::subresource::STRING {
        json!({ "schema": {"type": "string"} })
    } else {
        json!({ "schema": Form::V3.reference(def) })
    };
    Value::Object(
        types
            .iter()
            .map(|t| ((*t).to_owned(), schema.clone()))
            .collect(),
    )
}

fn operation(op: &Op, tag: &str) -> Value {
    let mut responses = Map::new();
    for code in &op.codes {
        responses.insert(
            (*code).to_owned(),
            json!({
                "content": content(produces(op.produces), &op.response),
                "description": code_description(code),
            }),
        );
    }
    responses.insert("401".to_owned(), json!({"description": "Unauthorized"}));
    let mut v = json!({
        "description": op.description,
        "operationId": op.operation_id,
        "responses": responses,
        "tags": [tag],
    });
    if !op.params.is_empty() {
        v["parameters"] = Value::Array(op.params.iter().map(|p| param(p, None)).collect());
    }
    match &op.body {
        Some(Body::Object { schema, required }) => {
            let mut body = json!({ "content": content(&["*/*"], schema) });
            if *required {
                body["required"] = Value::Bool(true);
            }
            v["requestBody"] = body;
        }
        Some(Body::Patch) => {
            v["requestBody"] = json!({
                "content": content(PATCH_TYPES, "io.k8s.apimachinery.pkg.apis.meta.v1.Patch"),
                "required": true,
            });
        }
        Some(Body::Json { schema, required }) => {
            let mut body = json!({ "content": content(JSON_TYPES, schema) });
            if *required {
                body["required"] = Value::Bool(true);
            }
            v["requestBody"] = body;
        }
        Some(Body::JsonPatch) => {
            v["requestBody"] = json!({
                "content": content(CUSTOM_PATCH_TYPES, "io.k8s.apimachinery.pkg.apis.meta.v1.Patch"),
                "required": true,
            });
        }
        None => {}
    }
    if let Some(a) = op.action {
        v["x-kubernetes-action"] = json!(a);
    }
    if let Some(g) = &op.gvk {
        v["x-kubernetes-group-version-kind"] =
            json!({"group": g.group, "kind": g.kind, "version": g.version});
    }
    v
}

/// Renders path items as an OpenAPI 3 `paths` object.
pub fn render_paths(items: &[PathItem], tag: &str) -> Map<String, Value> {
    let mut out = Map::new();
    paths::render_into(items, tag, &mut out, operation, param);
    out
}

/// The path items of one group/version's resources (plus its root), and
/// the definition names its operations name directly.
pub fn group_version_items(
    defs: &Definitions,
    group: &str,
    version: &str,
    resources: &[std::sync::Arc<ResourceInfo>],
) -> (Vec<PathItem>, Vec<String>) {
    let mut items = vec![paths::root(group, version)];
    let mut roots: Vec<String> = paths::META_DEFINITIONS
        .iter()
        .map(|s| (*s).to_owned())
        .collect();
    for r in resources {
        let (Some(kind_def), Some(list_def)) = (
            defs.name_for_gvk(r.group, r.version, r.kind),
            defs.name_for_gvk(r.group, r.version, r.list_kind),
        ) else {
            continue;
        };
        items.extend(paths::resource(r, kind_def, list_def));
        roots.push(kind_def.to_owned());
        roots.push(list_def.to_owned());
        if r.scale.is_some() {
            roots.push(paths::SCALE.to_owned());
        }
        roots.extend(
            super::subresource::definitions(r)
                .into_iter()
                .map(str::to_owned),
        );
    }
    items.extend(super::subresource::virtual_items(group, version));
    roots.extend(
        super::subresource::virtual_definitions(group, version)
            .into_iter()
            .map(str::to_owned),
    );
    (items, roots)
}

/// Assembles an OpenAPI 3 document from rendered paths and the definition
/// names they need (the closure is taken here).
pub fn document(defs: &Definitions, paths: Map<String, Value>, roots: &[String]) -> Value {
    let names = schemas::closure(defs, roots.iter().map(String::as_str));
    json!({
        "components": {"schemas": schemas::convert_all(defs, &names, Form::V3)},
        "info": {"title": "Kubernetes", "version": "unversioned"},
        "openapi": "3.0.0",
        "paths": paths,
    })
}

/// The document of one served group/version.
pub fn group_version(
    defs: &Definitions,
    group: &str,
    version: &str,
    resources: &[std::sync::Arc<ResourceInfo>],
) -> Value {
    let (items, roots) = group_version_items(defs, group, version, resources);
    let rendered = render_paths(&items, &paths::tag(group, version));
    document(defs, rendered, &roots)
}

/// A one-GET discovery document (`api`, `apis`, `apis/<group>`, `version`).
pub fn discovery(
    defs: &Definitions,
    path: &str,
    description: &str,
    operation_id: &str,
    tag: &str,
    def: &str,
) -> Value {
    let item = PathItem {
        path: path.to_owned(),
        params: vec![],
        ops: vec![Op {
            method: paths::Method::Get,
            description: description.to_owned(),
            operation_id: operation_id.to_owned(),
            params: vec![],
            body: None,
            codes: vec!["200"],
            response: def.to_owned(),
            produces: Produces::Object,
            action: None,
            gvk: None,
        }],
    };
    document(defs, render_paths(&[item], tag), &[def.to_owned()])
}
