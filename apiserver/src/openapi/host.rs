//! The OpenAPI documents a host's aggregator sees at the root path
//! (`http/host_view.rs`): only the paths of `federations` in
//! `federation.skein.io/v1alpha1`, and only the schemas those paths reach.
//!
//! A host merges what an aggregated server publishes into its own
//! `/openapi/v2` and serves its `/openapi/v3/apis/<group>/<version>`, so
//! publishing Skein's whole native API there would describe paths the host
//! never routes to Skein.
//!
//! Contract: [`filter`] keeps a path exactly when
//! `host_view::shows_openapi_path` says so, and keeps every schema a kept
//! path reaches through `$ref`s (transitively) and no other, so every
//! `$ref` of the result resolves inside it.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

use serde_json::{Value, json};

use super::{Served, V3Set, v2};
use crate::http::host_view;

/// The document key of the host's one group/version.
pub fn v3_key() -> String {
    format!("apis/{}/{}", host_view::GROUP, host_view::VERSION)
}

/// The host's v3 set from the full one: the group/version's document,
/// filtered, and an index naming only it (empty when the group is not
/// served yet).
pub fn v3(full: &V3Set) -> V3Set {
    let key = v3_key();
    let mut docs = BTreeMap::new();
    if let Some(doc) = full
        .docs
        .get(&key)
        .and_then(|d| serde_json::from_slice::<Value>(&d.bytes).ok())
    {
        let filtered = filter(&doc, "/components/schemas", "#/components/schemas/");
        docs.insert(key, Arc::new(Served::json(&filtered)));
    }
    let paths: serde_json::Map<String, Value> = docs
        .iter()
        .map(|(k, d)| {
            (
                k.clone(),
                json!({"serverRelativeURL": format!("/openapi/v3/{k}?hash={}", d.hash)}),
            )
        })
        .collect();
    V3Set {
        docs,
        index: Served::json(&json!({ "paths": paths })),
    }
}

/// The host's v2 document from the full one (JSON bytes).
pub fn v2(full_json: &[u8]) -> v2::V2Docs {
    let doc = serde_json::from_slice::<Value>(full_json).unwrap_or_else(|_| json!({}));
    v2::encode(&filter(&doc, "/definitions", "#/definitions/"))
}

/// `doc` with only the host's paths and the schemas they reach; schemas
/// live at the JSON pointer `schemas` and are referenced as
/// `<ref_prefix><name>`.
pub fn filter(doc: &Value, schemas: &str, ref_prefix: &str) -> Value {
    let mut out = doc.clone();
    if let Some(paths) = out.get_mut("paths").and_then(Value::as_object_mut) {
        paths.retain(|p, _| host_view::shows_openapi_path(p));
    }
    let mut wanted = BTreeSet::new();
    if let Some(paths) = out.get("paths") {
        refs(paths, ref_prefix, &mut wanted);
    }
    let all = doc
        .pointer(schemas)
        .and_then(Value::as_object)
        .cloned()
        .unwrap_or_default();
    // The transitive closure over the schemas' own references.
    let mut queue: Vec<String> = wanted.iter().cloned().collect();
    while let Some(name) = queue.pop() {
        if let Some(schema) = all.get(&name) {
            let mut more = BTreeSet::new();
            refs(schema, ref_prefix, &mut more);
            for m in more {
                if wanted.insert(m.clone()) {
                    queue.push(m);
                }
            }
        }
    }
    if let Some(kept) = out.pointer_mut(schemas).and_then(Value::as_object_mut) {
        kept.retain(|name, _| wanted.contains(name));
    }
    out
}

/// Every schema name `v` references as `$ref: <prefix><name>`.
fn refs(v: &Value, prefix: &str, out: &mut BTreeSet<String>) {
    match v {
        Value::Object(map) => {
            for (k, child) in map {
                if k == "$ref"
                    && let Some(name) = child.as_str().and_then(|r| r.strip_prefix(prefix))
                {
                    out.insert(name.to_owned());
                } else {
                    refs(child, prefix, out);
                }
            }
        }
        Value::Array(items) => items.iter().for_each(|i| refs(i, prefix, out)),
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keeps_federations_paths_and_the_schemas_they_reach() {
        let doc = json!({
            "paths": {
                "/apis/federation.skein.io/v1alpha1/federations": {"get": {"responses": {"200": {"schema": {"$ref": "#/definitions/FederationList"}}}}},
                "/apis/federation.skein.io/v1alpha1/namespaces/{namespace}/placements": {"get": {"responses": {"200": {"schema": {"$ref": "#/definitions/PlacementList"}}}}},
                "/api/v1/pods": {"get": {"responses": {"200": {"schema": {"$ref": "#/definitions/PodList"}}}}},
            },
            "definitions": {
                "FederationList": {"properties": {"items": {"items": {"$ref": "#/definitions/Federation"}}}},
                "Federation": {"properties": {"metadata": {"$ref": "#/definitions/ObjectMeta"}}},
                "ObjectMeta": {"type": "object"},
                "PlacementList": {"type": "object"},
                "PodList": {"type": "object"},
            },
        });
        let out = filter(&doc, "/definitions", "#/definitions/");
        let paths: Vec<&String> = out["paths"].as_object().expect("paths").keys().collect();
        assert_eq!(
            paths,
            vec!["/apis/federation.skein.io/v1alpha1/federations"]
        );
        let defs: Vec<&String> = out["definitions"]
            .as_object()
            .expect("defs")
            .keys()
            .collect();
        assert_eq!(defs, vec!["Federation", "FederationList", "ObjectMeta"]);
    }
}
