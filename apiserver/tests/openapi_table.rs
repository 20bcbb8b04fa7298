//! The OpenAPI documents follow a server instance's resource table: a
//! custom row added with `Resources::replace_custom` shows in `/openapi/v3` (its group/version
//! document, the index) and `/openapi/v2` at the next read, built-in
//! documents are shared between generations, a read of an unchanged
//! generation is served from the cache, and removing the row removes it.
//! The row's server-side-apply schema comes from its CRD. Another
//! instance in the same process sees none of it.

use std::sync::Arc;

use serde_json::{Value, json};
use skein_apiserver::instance::Instance;
use skein_apiserver::openapi::{v2_docs, v3_set};
use skein_apiserver::registry::custom;

fn crd(schema: Value) -> Value {
    json!({
        "apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
        "metadata": {"name": "widgets.table.example.com", "uid": "u1",
                     "creationTimestamp": "2026-01-01T00:00:00Z"},
        "spec": {"group": "table.example.com", "scope": "Namespaced",
            "names": {"plural": "widgets", "singular": "widget", "kind": "Widget",
                      "listKind": "WidgetList"},
            "versions": [{"name": "v1", "served": true, "storage": true,
                "schema": {"openAPIV3Schema": schema}}]}
    })
}

fn json_of(bytes: &[u8]) -> Value {
    serde_json::from_slice(bytes).unwrap_or(Value::Null)
}

#[test]
fn documents_follow_the_table() {
    const KEY: &str = "apis/table.example.com/v1";
    const DEF: &str = "com.example.table.v1.Widget";
    let instance = Instance::new();
    let other = Instance::new();
    let before = v3_set(&instance);
    assert!(!before.docs.contains_key(KEY));

    let schema_v1 = json!({"type": "object", "properties": {
        "spec": {"type": "object", "properties": {"size": {"type": "integer"}}}}});
    instance
        .resources()
        .replace_custom(custom::rows(&[crd(schema_v1)]).0);
    let after = v3_set(&instance);
    let doc = json_of(&after.docs[KEY].bytes);
    assert_eq!(
        doc["components"]["schemas"][DEF]["x-kubernetes-group-version-kind"],
        json!([{"group": "table.example.com", "kind": "Widget", "version": "v1"}])
    );
    assert!(Arc::ptr_eq(
        &before.docs["apis/apps/v1"],
        &after.docs["apis/apps/v1"]
    ));
    let index = json_of(&after.index.bytes);
    let url = index["paths"][KEY]["serverRelativeURL"]
        .as_str()
        .unwrap_or_default();
    assert_eq!(
        url,
        format!("/openapi/v3/{KEY}?hash={}", after.docs[KEY].hash)
    );
    assert!(
        Arc::ptr_eq(&v3_set(&instance), &after),
        "an unchanged generation is cached"
    );
    let v2 = json_of(&v2_docs(&instance).json.bytes);
    assert!(v2["definitions"][DEF].is_object());
    assert!(v2["paths"]["/apis/table.example.com/v1/namespaces/{namespace}/widgets"].is_object());
    let row = instance
        .resources()
        .find("table.example.com", "v1", "widgets")
        .expect("the custom row");
    let ssa = row.schema().expect("an SSA schema");
    assert_eq!(ssa.type_name(), Some(DEF));
    assert!(ssa.field("spec").and_then(|s| s.field("size")).is_some());

    // A changed schema is a new generation with a new document.
    let schema_v2 = json!({"type": "object", "properties": {
        "spec": {"type": "object", "properties": {"colour": {"type": "string"}}}}});
    instance
        .resources()
        .replace_custom(custom::rows(&[crd(schema_v2)]).0);
    let changed = v3_set(&instance);
    assert!(
        !v3_set(&other).docs.contains_key(KEY),
        "another instance's table"
    );
    assert!(
        other
            .resources()
            .find("table.example.com", "v1", "widgets")
            .is_none()
    );
    assert_ne!(changed.docs[KEY].hash, after.docs[KEY].hash);
    let doc = json_of(&changed.docs[KEY].bytes);
    assert!(
        doc["components"]["schemas"][DEF]["properties"]["spec"]["properties"]["colour"].is_object()
    );

    instance.resources().replace_custom(vec![]);
    let gone = v3_set(&instance);
    assert!(!gone.docs.contains_key(KEY));
    assert!(json_of(&gone.index.bytes)["paths"].get(KEY).is_none());
    let v2 = json_of(&v2_docs(&instance).json.bytes);
    assert!(v2["definitions"].get(DEF).is_none());
}
