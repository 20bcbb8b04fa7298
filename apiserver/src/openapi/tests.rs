//! Unit tests of the OpenAPI documents: conversion, paths, invariants.

use std::sync::OnceLock;

use prost::Message;
use serde_json::{Value, json};

use super::schemas::{self, Form};
use super::*;

fn set() -> &'static V3Set {
    static SET: OnceLock<V3Set> = OnceLock::new();
    SET.get_or_init(|| {
        build_v3(
            schema::definitions(),
            &crate::registry::resource::Resources::new(),
        )
    })
}

fn doc(path: &str) -> Value {
    let served = set()
        .docs
        .get(path)
        .unwrap_or_else(|| panic!("no doc {path}"));
    serde_json::from_slice(&served.bytes).unwrap()
}

fn v2_json() -> Value {
    serde_json::from_slice(&v2_docs(&crate::instance::Instance::new()).json.bytes).unwrap()
}

#[test]
fn index_lists_every_group_version_with_its_hash() {
    let index: Value = serde_json::from_slice(&set().index.bytes).unwrap();
    let paths = index["paths"].as_object().unwrap();
    for key in [
        "api/v1",
        "apis/apps/v1",
        "apis/batch/v1",
        "apis/rbac.authorization.k8s.io/v1",
        "apis/authentication.k8s.io/v1",
        "api",
        "apis",
        "apis/apps",
        "version",
    ] {
        let url = paths[key]["serverRelativeURL"].as_str().unwrap();
        let hash = &set().docs[key].hash;
        assert_eq!(url, format!("/openapi/v3/{key}?hash={hash}"));
        assert_eq!(hash.len(), 128);
        assert!(
            hash.chars()
                .all(|c| c.is_ascii_digit() || c.is_ascii_uppercase())
        );
    }
    // Every served resource's group/version is listed.
    for r in crate::registry::resource::builtins() {
        let key = paths::prefix(r.group, r.version)
            .trim_start_matches('/')
            .to_owned();
        assert!(paths.contains_key(&key), "{key}");
    }
}

#[test]
fn no_defs_refs_remain_and_every_ref_resolves() {
    for (key, served) in &set().docs {
        let d: Value = serde_json::from_slice(&served.bytes).unwrap();
        let text = String::from_utf8(served.bytes.clone()).unwrap();
        assert!(!text.contains("#/$defs/"), "{key}");
        let schemas = d["components"]["schemas"].as_object().unwrap();
        for (r, target) in schemas::refs_in(&d, Form::V3.ref_prefix()) {
            let target = target.unwrap_or_else(|| panic!("{key}: foreign ref {r}"));
            assert!(schemas.contains_key(&target), "{key}: dangling {r}");
        }
    }
    let v2 = v2_json();
    let defs = v2["definitions"].as_object().unwrap();
    for (r, target) in schemas::refs_in(&v2, Form::V2.ref_prefix()) {
        let target = target.unwrap_or_else(|| panic!("v2: foreign ref {r}"));
        assert!(defs.contains_key(&target), "v2: dangling {r}");
    }
}

#[test]
fn deployment_keeps_patch_and_list_metadata() {
    let d = doc("apis/apps/v1");
    let s = &d["components"]["schemas"];
    let containers = &s["io.k8s.api.core.v1.PodSpec"]["properties"]["containers"];
    assert_eq!(containers["x-kubernetes-patch-merge-key"], "name");
    assert_eq!(containers["x-kubernetes-patch-strategy"], "merge");
    assert_eq!(containers["x-kubernetes-list-type"], "map");
    assert_eq!(containers["x-kubernetes-list-map-keys"], json!(["name"]));
    assert_eq!(containers["type"], "array");
    assert_eq!(
        containers["items"],
        json!({"$ref": "#/components/schemas/io.k8s.api.core.v1.Container"})
    );
    let ports = &s["io.k8s.api.core.v1.Container"]["properties"]["ports"];
    assert_eq!(ports["x-kubernetes-patch-merge-key"], "containerPort");
    assert_eq!(
        ports["x-kubernetes-list-map-keys"],
        json!(["containerPort", "protocol"])
    );
    let strategy = &s["io.k8s.api.apps.v1.DeploymentSpec"]["properties"]["strategy"];
    assert_eq!(strategy["x-kubernetes-patch-strategy"], "retainKeys");
    // A $ref with siblings is wrapped in allOf, as kube-openapi's builder3 does.
    assert_eq!(
        strategy["allOf"],
        json!([{"$ref": "#/components/schemas/io.k8s.api.apps.v1.DeploymentStrategy"}])
    );
    assert!(strategy.get("$ref").is_none());
    let selector = &s["io.k8s.apimachinery.pkg.apis.meta.v1.LabelSelector"];
    assert_eq!(selector["x-kubernetes-map-type"], "atomic");
    assert_eq!(
        s["io.k8s.api.apps.v1.Deployment"]["x-kubernetes-group-version-kind"],
        json!([{"group": "apps", "kind": "Deployment", "version": "v1"}])
    );
}

#[test]
fn types_collapse_and_validate_additions_are_dropped() {
    let d = doc("apis/apps/v1");
    let s = &d["components"]["schemas"];
    let dep = &s["io.k8s.api.apps.v1.Deployment"];
    assert_eq!(dep["type"], "object");
    assert_eq!(dep["properties"]["apiVersion"]["type"], "string");
    assert!(dep["properties"]["apiVersion"].get("enum").is_none());
    assert!(dep["properties"]["kind"].get("enum").is_none());
    assert_eq!(
        s["io.k8s.api.apps.v1.DeploymentSpec"]["properties"]["replicas"],
        json!({"description": s["io.k8s.api.apps.v1.DeploymentSpec"]["properties"]["replicas"]["description"],
               "format": "int32", "type": "integer"})
    );
    let text = serde_json::to_string(&d).unwrap();
    assert!(!text.contains("\"null\""));
    let ios = &s["io.k8s.apimachinery.pkg.util.intstr.IntOrString"];
    assert_eq!(ios["format"], "int-or-string");
    assert_eq!(
        ios["oneOf"],
        json!([{"type": "integer"}, {"type": "string"}])
    );
    let q = &s["io.k8s.apimachinery.pkg.api.resource.Quantity"];
    assert_eq!(q["oneOf"], json!([{"type": "string"}, {"type": "number"}]));
    // v2: the Swagger forms.
    let v2 = v2_json();
    let ios2 = &v2["definitions"]["io.k8s.apimachinery.pkg.util.intstr.IntOrString"];
    assert_eq!(ios2["type"], "string");
    assert_eq!(ios2["format"], "int-or-string");
    let strategy2 =
        &v2["definitions"]["io.k8s.api.apps.v1.DeploymentSpec"]["properties"]["strategy"];
    assert_eq!(
        strategy2["$ref"],
        "#/definitions/io.k8s.api.apps.v1.DeploymentStrategy"
    );
}

#[test]
fn property_names_that_look_like_keywords_stay_properties() {
    let d = doc("apis/apiextensions.k8s.io/v1");
    let props = &d["components"]["schemas"]["io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.JSONSchemaProps"]
        ["properties"];
    assert_eq!(props["type"]["type"], "string");
    assert_eq!(props["oneOf"]["type"], "array");
    assert_eq!(props["enum"]["type"], "array");
}

#[test]
fn only_reachable_definitions_are_carried() {
    let d = doc("apis/apps/v1");
    let s = d["components"]["schemas"].as_object().unwrap();
    assert!(s.contains_key("io.k8s.api.autoscaling.v1.Scale"));
    assert!(s.contains_key("io.k8s.apimachinery.pkg.apis.meta.v1.Patch"));
    assert!(s.contains_key("io.k8s.apimachinery.pkg.apis.meta.v1.WatchEvent"));
    assert!(!s.contains_key("io.k8s.api.batch.v1.Job"));
    assert!(!s.contains_key("io.k8s.api.core.v1.Namespace"));
}

#[test]
fn deployment_paths_match_upstream_shape() {
    let d = doc("apis/apps/v1");
    let p = &d["paths"];
    for path in [
        "/apis/apps/v1/",
        "/apis/apps/v1/deployments",
        "/apis/apps/v1/namespaces/{namespace}/deployments",
        "/apis/apps/v1/namespaces/{namespace}/deployments/{name}",
        "/apis/apps/v1/namespaces/{namespace}/deployments/{name}/scale",
        "/apis/apps/v1/namespaces/{namespace}/deployments/{name}/status",
        "/apis/apps/v1/watch/deployments",
        "/apis/apps/v1/watch/namespaces/{namespace}/deployments",
        "/apis/apps/v1/watch/namespaces/{namespace}/deployments/{name}",
    ] {
        assert!(p.get(path).is_some(), "{path}");
    }
    let item = &p["/apis/apps/v1/namespaces/{namespace}/deployments/{name}"];
    let patch = &item["patch"];
    assert_eq!(patch["operationId"], "patchAppsV1NamespacedDeployment");
    assert_eq!(patch["x-kubernetes-action"], "patch");
    assert_eq!(
        patch["x-kubernetes-group-version-kind"],
        json!({"group": "apps", "kind": "Deployment", "version": "v1"})
    );
    let names: Vec<&str> = patch["parameters"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["name"].as_str().unwrap())
        .collect();
    assert_eq!(
        names,
        ["dryRun", "fieldManager", "fieldValidation", "force"]
    );
    let types: Vec<&String> = patch["requestBody"]["content"]
        .as_object()
        .unwrap()
        .keys()
        .collect();
    assert_eq!(types, PATCH_TYPES_SORTED);
    let params: Vec<&str> = item["parameters"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["name"].as_str().unwrap())
        .collect();
    assert_eq!(params, ["name", "namespace", "pretty"]);
    assert_eq!(
        item["parameters"][0]["description"],
        "name of the Deployment"
    );
    assert_eq!(item["get"]["operationId"], "readAppsV1NamespacedDeployment");
    assert_eq!(
        item["put"]["operationId"],
        "replaceAppsV1NamespacedDeployment"
    );
    assert_eq!(
        item["delete"]["operationId"],
        "deleteAppsV1NamespacedDeployment"
    );
    let coll = &p["/apis/apps/v1/namespaces/{namespace}/deployments"];
    assert_eq!(coll["post"]["description"], "create a Deployment");
    assert_eq!(coll["delete"]["x-kubernetes-action"], "deletecollection");
    assert_eq!(coll["get"]["operationId"], "listAppsV1NamespacedDeployment");
    let scale = &p["/apis/apps/v1/namespaces/{namespace}/deployments/{name}/scale"];
    assert_eq!(
        scale["get"]["x-kubernetes-group-version-kind"]["kind"],
        "Scale"
    );
    assert_eq!(
        scale["patch"]["operationId"],
        "patchAppsV1NamespacedDeploymentScale"
    );
    assert_eq!(
        p["/apis/apps/v1/deployments"]["get"]["operationId"],
        "listAppsV1DeploymentForAllNamespaces"
    );
    assert_eq!(
        p["/apis/apps/v1/watch/namespaces/{namespace}/deployments/{name}"]["get"]["x-kubernetes-action"],
        "watch"
    );
}

const PATCH_TYPES_SORTED: [&str; 4] = [
    "application/apply-patch+yaml",
    "application/json-patch+json",
    "application/merge-patch+json",
    "application/strategic-merge-patch+json",
];

#[test]
fn every_patch_operation_offers_server_side_validation() {
    let mut count = 0;
    for (key, served) in &set().docs {
        let d: Value = serde_json::from_slice(&served.bytes).unwrap();
        for (path, item) in d["paths"].as_object().unwrap() {
            let Some(patch) = item.get("patch") else {
                continue;
            };
            // Proxy subresources pass PATCH through to the backend.
            if patch["x-kubernetes-action"] == "connect" {
                continue;
            }
            count += 1;
            let names: Vec<&str> = patch["parameters"]
                .as_array()
                .unwrap()
                .iter()
                .map(|p| p["name"].as_str().unwrap())
                .collect();
            for required in ["dryRun", "fieldManager", "fieldValidation", "force"] {
                assert!(names.contains(&required), "{key} {path}: {required}");
            }
            let types: Vec<&String> = patch["requestBody"]["content"]
                .as_object()
                .unwrap()
                .keys()
                .collect();
            assert_eq!(types, PATCH_TYPES_SORTED, "{key} {path}");
            assert!(patch["x-kubernetes-group-version-kind"].is_object());
        }
    }
    assert!(count > 50, "{count}");
}

#[test]
fn cluster_scoped_paths_have_no_namespace() {
    let d = doc("apis/rbac.authorization.k8s.io/v1");
    let p = d["paths"].as_object().unwrap();
    assert!(p.contains_key("/apis/rbac.authorization.k8s.io/v1/clusterroles/{name}"));
    assert!(p.contains_key("/apis/rbac.authorization.k8s.io/v1/watch/clusterroles/{name}"));
    assert_eq!(
        p["/apis/rbac.authorization.k8s.io/v1/clusterroles"]["get"]["operationId"],
        "listRbacAuthorizationV1ClusterRole"
    );
    assert_eq!(
        p["/apis/rbac.authorization.k8s.io/v1/clusterroles"]["post"]["tags"],
        json!(["rbacAuthorization_v1"])
    );
    let core = doc("api/v1");
    let cp = &core["paths"];
    assert_eq!(
        cp["/api/v1/namespaces/{name}"]["get"]["operationId"],
        "readCoreV1Namespace"
    );
    assert_eq!(
        cp["/api/v1/namespaces/{namespace}/pods/{name}"]["delete"]["responses"]["200"]["content"]["application/json"]
            ["schema"]["$ref"],
        "#/components/schemas/io.k8s.api.core.v1.Pod"
    );
    assert_eq!(
        cp["/api/v1/namespaces/{namespace}/endpoints"]["post"]["description"],
        "create Endpoints"
    );
}

#[test]
fn documents_are_deterministic() {
    let again = build_v3(
        schema::definitions(),
        &crate::registry::resource::Resources::new(),
    );
    assert_eq!(again.index.hash, set().index.hash);
    assert_eq!(
        again.docs["apis/apps/v1"].hash,
        set().docs["apis/apps/v1"].hash
    );
}

#[test]
fn v2_protobuf_decodes_with_definitions_and_extensions() {
    let bytes = &v2_docs(&crate::instance::Instance::new()).protobuf.bytes;
    let d = gnostic::Document::decode(bytes.as_slice()).unwrap();
    assert_eq!(d.swagger, "2.0");
    let defs = d.definitions.unwrap().additional_properties;
    let dep = defs
        .iter()
        .find(|n| n.name == "io.k8s.api.apps.v1.Deployment")
        .and_then(|n| n.value.clone())
        .unwrap();
    let gvk = dep
        .vendor_extension
        .iter()
        .find(|e| e.name == "x-kubernetes-group-version-kind")
        .and_then(|e| e.value.clone())
        .unwrap();
    let parsed: Value = serde_json::from_str(&gvk.yaml).unwrap();
    assert_eq!(
        parsed,
        json!([{"group": "apps", "kind": "Deployment", "version": "v1"}])
    );
    let spec = defs
        .iter()
        .find(|n| n.name == "io.k8s.api.core.v1.PodSpec")
        .and_then(|n| n.value.clone())
        .unwrap();
    let containers = spec
        .properties
        .unwrap()
        .additional_properties
        .into_iter()
        .find(|p| p.name == "containers")
        .and_then(|p| p.value)
        .unwrap();
    assert_eq!(containers.r#type.unwrap().value, ["array"]);
    assert_eq!(
        containers.items.unwrap().schema[0].r#ref,
        "#/definitions/io.k8s.api.core.v1.Container"
    );
    assert!(
        containers
            .vendor_extension
            .iter()
            .any(|e| e.name == "x-kubernetes-patch-merge-key"
                && e.value.as_ref().unwrap().yaml == "\"name\"")
    );
    let paths = d.paths.unwrap().path;
    let item = paths
        .iter()
        .find(|p| p.name == "/apis/apps/v1/namespaces/{namespace}/deployments/{name}")
        .and_then(|p| p.value.clone())
        .unwrap();
    let patch = item.patch.unwrap();
    assert_eq!(patch.operation_id, "patchAppsV1NamespacedDeployment");
    assert_eq!(patch.consumes.len(), 4);
}

#[test]
fn operations_follow_the_verbs_each_resource_serves() {
    let d = doc("api/v1");
    let paths = d["paths"].as_object().unwrap();
    // componentstatuses: get and list only, no watch paths.
    let item = &paths["/api/v1/componentstatuses/{name}"];
    let methods: Vec<&str> = ["get", "put", "patch", "delete"]
        .into_iter()
        .filter(|m| item.get(*m).is_some())
        .collect();
    assert_eq!(methods, ["get"]);
    assert!(paths["/api/v1/componentstatuses"].get("post").is_none());
    assert!(
        !paths
            .keys()
            .any(|p| p.starts_with("/api/v1/watch/componentstatuses"))
    );
    // DELETE documents the deleted object where upstream's storage returns it.
    let svc_delete = &paths["/api/v1/namespaces/{namespace}/services/{name}"]["delete"];
    assert!(
        svc_delete
            .to_string()
            .contains("io.k8s.api.core.v1.Service"),
        "{svc_delete}"
    );
    let cm_delete = &paths["/api/v1/namespaces/{namespace}/configmaps/{name}"]["delete"];
    assert!(cm_delete.to_string().contains("v1.Status"), "{cm_delete}");
}
