//! OpenAPI of custom resources: the documents of the group/versions served
//! from CustomResourceDefinitions, as apiextensions-apiserver publishes
//! them (`pkg/controller/openapi/builder/builder.go`,
//! `pkg/controller/openapiv3`).
//!
//! # Contracts
//! - Schemas come from [`skein_apiextensions::openapi`] (the kind and its
//!   list, from the CRD version's structural schema); the definitions they
//!   and the operations reference (ObjectMeta, ListMeta, Status, Patch,
//!   DeleteOptions, Scale) come from the vendored built-ins, so every
//!   `$ref` resolves inside the document.
//! - Paths are [`super::paths::resource`]'s, changed as upstream's CRD
//!   builder differs from the built-in installer: no `watch` paths, `list
//!   objects of kind <Kind>`, JSON and YAML only (request bodies and
//!   responses; no protobuf, no streams), PATCH bodies of JSON patch,
//!   merge patch and apply patch only (no strategic merge), PATCH answers
//!   200 only, and every operation (`scale` included) marked with the
//!   CRD's group/version/kind.
//! - A row whose CRD has no such version (cannot happen for a row the
//!   table built) is left out rather than published half.

use std::sync::Arc;

use serde_json::{Map, Value, json};
use skein_apiextensions::openapi::{self as published, CrdVersion, LIST_META, OBJECT_META};

use super::paths::{self, Body, Gvk, Method, PathItem, Produces};
use super::schemas::{self, Form};
use super::{v2, v3};
use crate::registry::resource::ResourceInfo;
use crate::schema::Definitions;

/// The vendored definitions every custom group/version document needs.
const BASE_DEFINITIONS: &[&str] = &[
    "io.k8s.apimachinery.pkg.apis.meta.v1.DeleteOptions",
    "io.k8s.apimachinery.pkg.apis.meta.v1.Patch",
    "io.k8s.apimachinery.pkg.apis.meta.v1.Status",
    OBJECT_META,
    LIST_META,
];

/// The CRD version behind a custom row, read for publishing.
fn crd_version(r: &ResourceInfo) -> Option<CrdVersion> {
    let c = r.custom.as_ref()?;
    CrdVersion::read(&c.crd, &c.version).ok()
}

/// The path items of one custom row (see the module contracts).
pub fn items(r: &ResourceInfo, kind_def: &str, list_def: &str) -> Vec<PathItem> {
    let mut items = paths::resource(r, kind_def, list_def);
    items.retain(|i| !i.path.contains("/watch/"));
    let gvk = Gvk {
        group: r.group.to_owned(),
        version: r.version.to_owned(),
        kind: r.kind.to_owned(),
    };
    for op in items.iter_mut().flat_map(|i| i.ops.iter_mut()) {
        if op.action == Some("list") {
            op.description = format!("list objects of kind {}", r.kind);
        }
        op.produces = Produces::Json;
        op.body = match op.body.take() {
            Some(Body::Object { schema, required }) => Some(Body::Json { schema, required }),
            Some(Body::Patch) => Some(Body::JsonPatch),
            other => other,
        };
        if op.method == Method::Patch {
            op.codes = vec!["200"];
        }
        op.gvk = Some(gvk.clone());
    }
    items
}

/// What one custom group/version publishes: path items, the vendored
/// definitions they need, and the CRDs' own schemas in `form`.
struct Parts {
    items: Vec<PathItem>,
    roots: Vec<String>,
    schemas: Map<String, Value>,
}

fn parts(rows: &[Arc<ResourceInfo>], form: published::Form) -> Parts {
    let mut out = Parts {
        items: Vec::new(),
        roots: BASE_DEFINITIONS.iter().map(|s| (*s).to_owned()).collect(),
        schemas: Map::new(),
    };
    for r in rows {
        let Some(cv) = crd_version(r) else {
            continue;
        };
        out.items.extend(items(r, &cv.kind_name(), &cv.list_name()));
        if r.scale.is_some() {
            out.roots.push(paths::SCALE.to_owned());
        }
        out.schemas.extend(cv.schemas(form));
    }
    out
}

/// The OpenAPI v3 document of a custom group/version (titled as
/// upstream's CRD builder titles it).
pub fn v3_document(
    defs: &Definitions,
    group: &str,
    version: &str,
    rows: &[Arc<ResourceInfo>],
) -> Value {
    let mut doc = v3::document(defs, Map::new(), &[]);
    doc["info"] = json!({"title": "Kubernetes CRD Swagger", "version": "v0.1.0"});
    extend_v3(&mut doc, defs, group, version, rows);
    doc
}

/// Adds custom rows' paths and schemas to the v3 document `doc` of their
/// group/version.
pub fn extend_v3(
    doc: &mut Value,
    defs: &Definitions,
    group: &str,
    version: &str,
    rows: &[Arc<ResourceInfo>],
) {
    let p = parts(rows, published::Form::V3);
    let rendered = v3::render_paths(&p.items, &paths::tag(group, version));
    if let Some(paths_obj) = doc.get_mut("paths").and_then(Value::as_object_mut) {
        paths_obj.extend(rendered);
    }
    let names = schemas::closure(defs, p.roots.iter().map(String::as_str));
    if let Some(s) = doc
        .pointer_mut("/components/schemas")
        .and_then(Value::as_object_mut)
    {
        for (k, v) in schemas::convert_all(defs, &names, Form::V3) {
            s.entry(k).or_insert(v);
        }
        s.extend(p.schemas);
    }
}

/// Adds a custom group/version's paths and definitions to the v2
/// document `doc`.
pub fn add_v2(
    doc: &mut Value,
    defs: &Definitions,
    group: &str,
    version: &str,
    rows: &[Arc<ResourceInfo>],
) {
    let p = parts(rows, published::Form::V2);
    if let Some(paths_obj) = doc.get_mut("paths").and_then(Value::as_object_mut) {
        v2::render_paths(&p.items, &paths::tag(group, version), paths_obj);
    }
    let names = schemas::closure(defs, p.roots.iter().map(String::as_str));
    if let Some(d) = doc.get_mut("definitions").and_then(Value::as_object_mut) {
        for (k, v) in schemas::convert_all(defs, &names, Form::V2) {
            d.entry(k).or_insert(v);
        }
        d.extend(p.schemas);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::registry::custom as crds;
    use crate::schema;

    fn crd() -> Value {
        json!({
            "apiVersion": "apiextensions.k8s.io/v1",
            "kind": "CustomResourceDefinition",
            "metadata": {"name": "crontabs.stable.example.com", "uid": "u1",
                         "creationTimestamp": "2026-01-01T00:00:00Z"},
            "spec": {
                "group": "stable.example.com",
                "scope": "Namespaced",
                "names": {"plural": "crontabs", "singular": "crontab", "kind": "CronTab",
                          "listKind": "CronTabList"},
                "versions": [{
                    "name": "v1", "served": true, "storage": true,
                    "subresources": {"status": {}, "scale": {
                        "specReplicasPath": ".spec.replicas",
                        "statusReplicasPath": ".status.replicas"}},
                    "schema": {"openAPIV3Schema": {"type": "object", "properties": {
                        "spec": {"type": "object", "properties": {
                            "cronSpec": {"type": "string", "description": "When."},
                            "replicas": {"type": "integer", "default": 1}}},
                        "status": {"type": "object", "properties": {
                            "replicas": {"type": "integer"}}}}}}
                }]
            }
        })
    }

    fn rows() -> Vec<Arc<ResourceInfo>> {
        crds::rows(&[crd()]).0
    }

    #[test]
    fn v3_document_of_a_crd_group_version() {
        let rows = rows();
        assert!(!rows.is_empty(), "the CRD gives rows");
        let doc = v3_document(schema::definitions(), "stable.example.com", "v1", &rows);
        assert_eq!(doc["info"]["title"], "Kubernetes CRD Swagger");
        let s = &doc["components"]["schemas"];
        let kind = &s["com.example.stable.v1.CronTab"];
        assert_eq!(
            kind["x-kubernetes-group-version-kind"],
            json!([{"group": "stable.example.com", "kind": "CronTab", "version": "v1"}])
        );
        assert_eq!(
            kind["properties"]["spec"]["properties"]["replicas"]["default"],
            1
        );
        // Every $ref resolves inside the document.
        for (r, name) in schemas::refs_in(&doc, "#/components/schemas/") {
            let name = name.unwrap_or_else(|| panic!("foreign ref {r}"));
            assert!(s.get(&name).is_some(), "dangling {r}");
        }
        let p = &doc["paths"];
        let item = "/apis/stable.example.com/v1/namespaces/{namespace}/crontabs/{name}";
        let patch = &p[item]["patch"];
        let types: Vec<&String> = patch["requestBody"]["content"]
            .as_object()
            .map(|m| m.keys().collect())
            .unwrap_or_default();
        assert_eq!(
            types,
            [
                "application/apply-patch+yaml",
                "application/json-patch+json",
                "application/merge-patch+json"
            ]
        );
        assert_eq!(
            patch["operationId"],
            "patchStableExampleComV1NamespacedCronTab"
        );
        assert_eq!(patch["tags"], json!(["stableExampleCom_v1"]));
        let get_types: Vec<&String> = p[item]["get"]["responses"]["200"]["content"]
            .as_object()
            .map(|m| m.keys().collect())
            .unwrap_or_default();
        assert_eq!(get_types, ["application/json", "application/yaml"]);
        let list = &p["/apis/stable.example.com/v1/namespaces/{namespace}/crontabs"]["get"];
        assert_eq!(list["description"], "list objects of kind CronTab");
        assert!(p["/apis/stable.example.com/v1/crontabs"]["get"].is_object());
        assert!(p[format!("{item}/status")]["patch"].is_object());
        let scale = &p[format!("{item}/scale")]["get"];
        assert_eq!(
            scale["responses"]["200"]["content"]["application/json"]["schema"]["$ref"],
            "#/components/schemas/io.k8s.api.autoscaling.v1.Scale"
        );
        assert_eq!(scale["x-kubernetes-group-version-kind"]["kind"], "CronTab");
        assert!(
            p.as_object()
                .is_some_and(|m| m.keys().all(|k| !k.contains("/watch/"))),
            "no watch paths"
        );
    }

    #[test]
    fn v2_definitions_and_paths_are_added() {
        let rows = rows();
        let mut doc = json!({"definitions": {}, "paths": {}});
        add_v2(
            &mut doc,
            schema::definitions(),
            "stable.example.com",
            "v1",
            &rows,
        );
        let kind = &doc["definitions"]["com.example.stable.v1.CronTab"];
        assert_eq!(
            kind["properties"]["metadata"]["$ref"],
            "#/definitions/io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"
        );
        assert!(
            kind["properties"]["spec"]["properties"]["replicas"]
                .get("default")
                .is_none()
        );
        for (r, name) in schemas::refs_in(&doc, "#/definitions/") {
            let name = name.unwrap_or_else(|| panic!("foreign ref {r}"));
            assert!(doc["definitions"].get(&name).is_some(), "dangling {r}");
        }
        let patch = &doc["paths"]["/apis/stable.example.com/v1/namespaces/{namespace}/crontabs/{name}"]
            ["patch"];
        assert_eq!(
            patch["consumes"],
            json!([
                "application/apply-patch+yaml",
                "application/json-patch+json",
                "application/merge-patch+json"
            ])
        );
    }
}
