//! `/openapi/v2`: one Swagger 2.0 document for everything served, built
//! from the same path items and definitions as v3, in the form
//! kube-apiserver's `swagger.json` has (`$ref` with sibling `description`,
//! `consumes`/`produces`, body parameters, `schemes: [https]`), and its
//! gnostic protobuf encoding ([`super::gnostic`]).

use serde_json::{Map, Value, json};

use super::params::{In, Param};
use super::paths::{Body, Op, PathItem};
use super::schemas::{self, Form};
use super::v3::{
    CUSTOM_PATCH_TYPES, JSON_TYPES, PATCH_TYPES, code_description, group_version_items, produces,
};
use super::{Served, gnostic, paths};
use crate::registry::resource::ResourceInfo;
use crate::schema::Definitions;

/// The v2 document in both encodings.
#[derive(Debug)]
pub struct V2Docs {
    /// `application/json`.
    pub json: Served,
    /// gnostic `openapi.v2.Document` protobuf.
    pub protobuf: Served,
}

fn param(p: &Param, description: Option<&str>) -> Value {
    let mut v = json!({
        "description": description.unwrap_or(p.description),
        "in": match p.location { In::Query => "query", In::Path => "path" },
        "name": p.name,
        "type": p.ty,
        "uniqueItems": true,
    });
    if p.location == In::Path {
        v["required"] = Value::Bool(true);
    }
    v
}

fn operation(op: &Op, tag: &str) -> Value {
    let mut responses = Map::new();
    for code in &op.codes {
        responses.insert(
            (*code).to_owned(),
            json!({"description": code_description(code), "schema": if op.response == super::subresource::STRING {
                json!({"type": "string"})
            } else {
                Form::V2.reference(&op.response)
            }}),
        );
    }
    responses.insert("401".to_owned(), json!({"description": "Unauthorized"}));
    let mut params: Vec<Value> = Vec::new();
    let consumes: Vec<&str> = match &op.body {
        Some(Body::Object { schema, required }) => {
            params.push(json!({"in": "body", "name": "body", "required": required,
                "schema": Form::V2.reference(schema)}));
            vec!["*/*"]
        }
        Some(Body::Patch) => {
            params.push(json!({"in": "body", "name": "body", "required": true,
                "schema": Form::V2.reference("io.k8s.apimachinery.pkg.apis.meta.v1.Patch")}));
            PATCH_TYPES.to_vec()
        }
        Some(Body::Json { schema, required }) => {
            params.push(json!({"in": "body", "name": "body", "required": required,
                "schema": Form::V2.reference(schema)}));
            JSON_TYPES.to_vec()
        }
        Some(Body::JsonPatch) => {
            params.push(json!({"in": "body", "name": "body", "required": true,
                "schema": Form::V2.reference("io.k8s.apimachinery.pkg.apis.meta.v1.Patch")}));
            CUSTOM_PATCH_TYPES.to_vec()
        }
        None => vec!["*/*"],
    };
    params.extend(op.params.iter().map(|p| param(p, None)));
    let mut v = json!({
        "consumes": consumes,
        "description": op.description,
        "operationId": op.operation_id,
        "produces": produces(op.produces),
        "responses": responses,
        "schemes": ["https"],
        "tags": [tag],
    });
    if !params.is_empty() {
        v["parameters"] = Value::Array(params);
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

/// Renders path items into the v2 `paths` object `out`.
pub fn render_paths(items: &[PathItem], tag: &str, out: &mut Map<String, Value>) {
    paths::render_into(items, tag, out, operation, param);
}

/// The Swagger 2.0 document as JSON (pure; [`build`] encodes it).
pub fn document(
    defs: &Definitions,
    gvs: &[(
        &'static str,
        &'static str,
        Vec<std::sync::Arc<ResourceInfo>>,
    )],
) -> Value {
    let mut all_paths = Map::new();
    let mut roots: Vec<String> = Vec::new();
    for (group, version, resources) in gvs {
        let (items, r) = group_version_items(defs, group, version, resources);
        render_paths(&items, &paths::tag(group, version), &mut all_paths);
        roots.extend(r);
    }
    let names = schemas::closure(defs, roots.iter().map(String::as_str));
    json!({
        "definitions": schemas::convert_all(defs, &names, Form::V2),
        "info": {"title": "Kubernetes", "version": "v1.33.0"},
        "paths": all_paths,
        "swagger": "2.0",
    })
}

/// Encodes a v2 document as JSON and as gnostic protobuf.
pub fn encode(doc: &Value) -> V2Docs {
    V2Docs {
        json: Served::json(doc),
        protobuf: Served::new(gnostic::encode(doc)),
    }
}
