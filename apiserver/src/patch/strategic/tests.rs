//! Golden cases ported from upstream (`testdata/`, see its README), the
//! patch shapes kubectl sends, upstream's error texts, and properties.

use std::sync::OnceLock;

use proptest::prelude::*;
use serde_json::{Value, json};

use super::*;
use crate::schema::{Definitions, definitions};

fn merge_item_defs() -> &'static Definitions {
    static DEFS: OnceLock<Definitions> = OnceLock::new();
    DEFS.get_or_init(|| Definitions::parse(include_str!("testdata/merge-item.defs.json")).unwrap())
}

fn merge_item() -> Option<Schema<'static>> {
    Some(merge_item_defs().named("mergeItem").unwrap())
}

/// Runs every case of a golden file; returns the failures.
fn golden(file: &str, text: &str) -> usize {
    let doc: Value = serde_json::from_str(text).unwrap();
    let cases = doc["cases"].as_array().unwrap();
    assert!(!cases.is_empty(), "{file}: no cases");
    let mut failures = Vec::new();
    for c in cases {
        let desc = c["description"].as_str().unwrap();
        let got = apply(&c["original"], &c["patch"], merge_item());
        match (got, c.get("result"), c.get("error")) {
            (Ok(got), Some(want), _) if &got == want => {}
            (Err(err), _, Some(want)) if err.to_string().contains(want.as_str().unwrap()) => {}
            (got, want, want_err) => failures.push(format!(
                "{file}: {desc}\n  original: {}\n  patch:    {}\n  want:     {}\n  got:      {got:?}",
                c["original"],
                c["patch"],
                want.or(want_err).unwrap(),
            )),
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    cases.len()
}

#[test]
fn golden_custom_cases() {
    golden("custom.json", include_str!("testdata/custom.json"));
}

#[test]
fn golden_create_cases() {
    golden("create.json", include_str!("testdata/create.json"));
}

#[test]
fn golden_raw_cases() {
    golden("raw.json", include_str!("testdata/raw.json"));
}

#[test]
fn golden_unknown_field_cases() {
    golden("unknown.json", include_str!("testdata/unknown.json"));
}

// ---- real schemas, the shapes kubectl sends ----

fn deployment() -> Option<Schema<'static>> {
    definitions().for_gvk("apps", "v1", "Deployment")
}

fn pod() -> Option<Schema<'static>> {
    definitions().for_gvk("", "v1", "Pod")
}

fn service() -> Option<Schema<'static>> {
    definitions().for_gvk("", "v1", "Service")
}

fn two_container_deployment() -> Value {
    json!({
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "web", "labels": {"app": "web"}},
        "spec": {
            "replicas": 2,
            "selector": {"matchLabels": {"app": "web"}},
            "strategy": {"type": "RollingUpdate", "rollingUpdate": {"maxSurge": "25%", "maxUnavailable": "25%"}},
            "template": {
                "metadata": {"labels": {"app": "web"}},
                "spec": {
                    "containers": [
                        {"name": "app", "image": "nginx:1.25", "ports": [{"containerPort": 80, "protocol": "TCP"}],
                         "env": [{"name": "A", "value": "1"}, {"name": "B", "value": "2"}]},
                        {"name": "sidecar", "image": "busybox:1.36", "args": ["sleep", "3600"]}
                    ],
                    "volumes": [{"name": "data", "emptyDir": {}}]
                }
            }
        }
    })
}

fn containers(v: &Value) -> &Vec<Value> {
    v["spec"]["template"]["spec"]["containers"]
        .as_array()
        .unwrap()
}

#[test]
fn set_image_changes_one_container_only() {
    // kubectl set image deployment/web app=nginx:1.27
    let patch = json!({"spec": {"template": {"spec": {"containers": [{"name": "app", "image": "nginx:1.27"}]}}}});
    let out = apply(&two_container_deployment(), &patch, deployment()).unwrap();
    let c = containers(&out);
    assert_eq!(c.len(), 2);
    assert_eq!(c[0]["image"], "nginx:1.27");
    assert_eq!(
        c[0]["env"],
        two_container_deployment()["spec"]["template"]["spec"]["containers"][0]["env"]
    );
    assert_eq!(
        c[1],
        two_container_deployment()["spec"]["template"]["spec"]["containers"][1]
    );
}

#[test]
fn client_side_apply_three_way_patch() {
    // What kubectl apply sends after one container's image changed in the
    // file: the changed field plus $setElementOrder for the list.
    let patch = json!({
        "metadata": {"annotations": {"kubectl.kubernetes.io/last-applied-configuration": "{...}"}},
        "spec": {"template": {"spec": {
            "$setElementOrder/containers": [{"name": "app"}, {"name": "sidecar"}],
            "containers": [{"image": "busybox:1.37", "name": "sidecar"}]
        }}}
    });
    let out = apply(&two_container_deployment(), &patch, deployment()).unwrap();
    let c = containers(&out);
    assert_eq!(c.len(), 2);
    assert_eq!(c[0]["name"], "app");
    assert_eq!(c[0]["image"], "nginx:1.25");
    assert_eq!(c[1]["name"], "sidecar");
    assert_eq!(c[1]["image"], "busybox:1.37");
    assert_eq!(c[1]["args"], json!(["sleep", "3600"]));
    assert!(
        out["metadata"]["annotations"]
            .get("kubectl.kubernetes.io/last-applied-configuration")
            .is_some()
    );
    assert_eq!(out["metadata"]["labels"], json!({"app": "web"}));
}

#[test]
fn apply_reorders_by_set_element_order_and_adds_a_container() {
    let patch = json!({"spec": {"template": {"spec": {
        "$setElementOrder/containers": [{"name": "sidecar"}, {"name": "new"}, {"name": "app"}],
        "containers": [{"name": "new", "image": "redis:7"}]
    }}}});
    let out = apply(&two_container_deployment(), &patch, deployment()).unwrap();
    let names: Vec<_> = containers(&out).iter().map(|c| c["name"].clone()).collect();
    assert_eq!(names, vec![json!("sidecar"), json!("new"), json!("app")]);
}

#[test]
fn apply_removes_a_container_with_delete_directive() {
    let patch = json!({"spec": {"template": {"spec": {
        "$setElementOrder/containers": [{"name": "app"}],
        "containers": [{"$patch": "delete", "name": "sidecar"}]
    }}}});
    let out = apply(&two_container_deployment(), &patch, deployment()).unwrap();
    let c = containers(&out);
    assert_eq!(c.len(), 1);
    assert_eq!(c[0]["name"], "app");
}

#[test]
fn env_var_removed_by_delete_directive() {
    let patch = json!({"spec": {"template": {"spec": {"containers": [{
        "name": "app",
        "$setElementOrder/env": [{"name": "B"}],
        "env": [{"$patch": "delete", "name": "A"}]
    }]}}}});
    let out = apply(&two_container_deployment(), &patch, deployment()).unwrap();
    assert_eq!(
        containers(&out)[0]["env"],
        json!([{"name": "B", "value": "2"}])
    );
}

#[test]
fn ports_merge_on_container_port() {
    let patch = json!({"spec": {"template": {"spec": {"containers": [{
        "name": "app",
        "ports": [{"containerPort": 80, "name": "http"}, {"containerPort": 443, "protocol": "TCP"}]
    }]}}}});
    let out = apply(&two_container_deployment(), &patch, deployment()).unwrap();
    assert_eq!(
        containers(&out)[0]["ports"],
        json!([
            {"containerPort": 80, "protocol": "TCP", "name": "http"},
            {"containerPort": 443, "protocol": "TCP"}
        ])
    );
}

#[test]
fn volume_source_switch_with_retain_keys() {
    // kubectl apply after emptyDir was replaced by a configMap in the file.
    let patch = json!({"spec": {"template": {"spec": {
        "$setElementOrder/volumes": [{"name": "data"}],
        "volumes": [{"$retainKeys": ["configMap", "name"], "configMap": {"name": "cfg"}, "emptyDir": null, "name": "data"}]
    }}}});
    let out = apply(&two_container_deployment(), &patch, deployment()).unwrap();
    assert_eq!(
        out["spec"]["template"]["spec"]["volumes"],
        json!([{"name": "data", "configMap": {"name": "cfg"}}])
    );
}

#[test]
fn strategy_switch_with_retain_keys() {
    let patch = json!({"spec": {"strategy": {"$retainKeys": ["type"], "type": "Recreate", "rollingUpdate": null}}});
    let out = apply(&two_container_deployment(), &patch, deployment()).unwrap();
    assert_eq!(out["spec"]["strategy"], json!({"type": "Recreate"}));
}

#[test]
fn retain_keys_rejects_fields_outside_the_list() {
    let patch = json!({"spec": {"strategy": {"$retainKeys": ["type"], "type": "Recreate", "rollingUpdate": {"maxSurge": 1}}}});
    let err = apply(&two_container_deployment(), &patch, deployment()).unwrap_err();
    assert_eq!(err, Error::BadPatchFormatForRetainKeys);
    assert_eq!(err.to_string(), "invalid patch format of retainKeys");
    assert_eq!(err.status_code(), 400);
}

#[test]
fn rollout_restart_adds_a_template_annotation() {
    let patch = json!({"spec": {"template": {"metadata": {"annotations": {"kubectl.kubernetes.io/restartedAt": "2025-01-01T00:00:00Z"}}}}});
    let out = apply(&two_container_deployment(), &patch, deployment()).unwrap();
    assert_eq!(
        out["spec"]["template"]["metadata"],
        json!({"labels": {"app": "web"}, "annotations": {"kubectl.kubernetes.io/restartedAt": "2025-01-01T00:00:00Z"}})
    );
    let mut rest = out.clone();
    rest["spec"]["template"]["metadata"] =
        two_container_deployment()["spec"]["template"]["metadata"].clone();
    assert_eq!(rest, two_container_deployment());
}

#[test]
fn edit_style_patch_deletes_with_null_and_replaces_atomic_lists() {
    // kubectl edit: a two-way patch; args is atomic, labels merge.
    let patch = json!({
        "metadata": {"labels": {"tier": "front", "app": null}},
        "spec": {"replicas": 3, "template": {"spec": {
            "$setElementOrder/containers": [{"name": "app"}, {"name": "sidecar"}],
            "containers": [{"name": "sidecar", "args": ["sleep", "10"]}]
        }}}
    });
    let out = apply(&two_container_deployment(), &patch, deployment()).unwrap();
    assert_eq!(out["metadata"]["labels"], json!({"tier": "front"}));
    assert_eq!(out["spec"]["replicas"], 3);
    assert_eq!(containers(&out)[1]["args"], json!(["sleep", "10"]));
}

#[test]
fn finalizers_merge_as_a_set_and_delete_from_primitive_list() {
    let original = json!({"metadata": {"name": "p", "finalizers": ["a", "b"]}});
    let out = apply(
        &original,
        &json!({"metadata": {"finalizers": ["c", "a"]}}),
        pod(),
    )
    .unwrap();
    // Upstream's order: patch items first where the live order cannot
    // place the server-only ones (mergeSortedSlice).
    assert_eq!(out["metadata"]["finalizers"], json!(["c", "a", "b"]));
    let out = apply(
        &original,
        &json!({"metadata": {"$deleteFromPrimitiveList/finalizers": ["a"]}}),
        pod(),
    )
    .unwrap();
    assert_eq!(out["metadata"]["finalizers"], json!(["b"]));
}

#[test]
fn pod_patch_replace_directive_on_a_list() {
    let original =
        json!({"spec": {"containers": [{"name": "a", "image": "x"}, {"name": "b", "image": "y"}]}});
    let patch =
        json!({"spec": {"containers": [{"$patch": "replace"}, {"name": "c", "image": "z"}]}});
    let out = apply(&original, &patch, pod()).unwrap();
    assert_eq!(
        out["spec"]["containers"],
        json!([{"name": "c", "image": "z"}])
    );
}

#[test]
fn map_replace_and_delete_directives() {
    let original =
        json!({"metadata": {"labels": {"a": "1", "b": "2"}}, "spec": {"selector": {"x": "y"}}});
    let out = apply(
        &original,
        &json!({"metadata": {"labels": {"$patch": "replace", "c": "3"}}}),
        service(),
    )
    .unwrap();
    assert_eq!(out["metadata"]["labels"], json!({"c": "3"}));
    let out = apply(
        &original,
        &json!({"spec": {"selector": {"$patch": "delete"}}}),
        service(),
    )
    .unwrap();
    assert_eq!(out["spec"]["selector"], json!({}));
}

#[test]
fn service_ports_merge_on_port() {
    let original = json!({"spec": {"ports": [{"port": 80, "targetPort": 8080, "protocol": "TCP"}, {"port": 443, "protocol": "TCP"}]}});
    let patch = json!({"spec": {"ports": [{"port": 443, "targetPort": 8443}]}});
    let out = apply(&original, &patch, service()).unwrap();
    assert_eq!(
        out["spec"]["ports"],
        json!([{"port": 80, "targetPort": 8080, "protocol": "TCP"}, {"port": 443, "protocol": "TCP", "targetPort": 8443}])
    );
}

#[test]
fn without_schema_maps_merge_and_lists_replace() {
    let original = json!({"a": {"b": 1, "c": [1, 2]}, "d": [{"name": "x"}]});
    let patch = json!({"a": {"c": [3], "e": null}, "d": [{"name": "y"}]});
    let out = apply(&original, &patch, None).unwrap();
    assert_eq!(out, json!({"a": {"b": 1, "c": [3]}, "d": [{"name": "y"}]}));
}

// ---- errors, with upstream's texts ----

fn err(original: Value, patch: Value, schema: Option<Schema<'static>>) -> Error {
    apply(&original, &patch, schema).unwrap_err()
}

#[test]
fn error_texts_match_upstream() {
    let e = err(json!({}), json!({"$patch": "bogus", "a": 1}), None);
    assert_eq!(
        e.to_string(),
        "unknown patch type: bogus in map: map[$patch:bogus a:1]"
    );
    assert_eq!(e.status_code(), 500);

    let e = err(json!({}), json!({"$patch": 1}), None);
    assert_eq!(
        e.to_string(),
        "unknown patch type: %!s(int64=1) in map: map[$patch:1]"
    );

    let original = json!({"mergingList": [{"name": "a"}]});
    let e = err(
        original.clone(),
        json!({"mergingList": [{"value": "x"}]}),
        merge_item(),
    );
    assert_eq!(
        e.to_string(),
        "map: map[value:x] does not contain declared merge key: name"
    );

    let e = err(
        original.clone(),
        json!({"mergingList": [{"$patch": "delete"}]}),
        merge_item(),
    );
    assert_eq!(
        e.to_string(),
        "map: map[$patch:delete] does not contain declared merge key: name"
    );

    let e = err(
        original.clone(),
        json!({"mergingList": [{"$patch": "merge"}]}),
        merge_item(),
    );
    assert_eq!(
        e.to_string(),
        "merging lists cannot yet be specified in the patch"
    );

    let e = err(
        original.clone(),
        json!({"mergingList": [{"$patch": "x", "name": "a"}]}),
        merge_item(),
    );
    assert_eq!(
        e.to_string(),
        "unknown patch type: x in map: map[$patch:x name:a]"
    );

    let e = err(
        original.clone(),
        json!({"$setElementOrder": []}),
        merge_item(),
    );
    assert_eq!(e, Error::BadPatchFormatForSetElementOrderList);
    assert_eq!(e.status_code(), 400);

    let e = err(
        original.clone(),
        json!({"$deleteFromPrimitiveListmergingIntList": [1]}),
        merge_item(),
    );
    assert_eq!(e.to_string(), "invalid patch format of primitive list");

    let e = err(
        original.clone(),
        json!({"$retainKeys": "name"}),
        merge_item(),
    );
    assert_eq!(e.to_string(), "invalid patch format of retainKeys");

    let e = err(
        original.clone(),
        json!({"$setElementOrder/mergingList": "a"}),
        merge_item(),
    );
    assert_eq!(
        e.to_string(),
        "expected a []interface {}, but received a string"
    );

    let e = err(
        json!({"mergingList": [{"name": "a"}, {"name": "b"}]}),
        json!({"$setElementOrder/mergingList": [{"name": "a"}], "mergingList": [{"name": "b"}]}),
        merge_item(),
    );
    assert_eq!(
        e.to_string(),
        "The order in patch list:\n[map[name:b]]\n doesn't match $setElementOrder list:\n[map[name:a]]\n"
    );

    let e = err(
        json!({"mergingIntList": [[1]]}),
        json!({"mergingIntList": [[2]]}),
        merge_item(),
    );
    assert_eq!(e, Error::NoListOfLists);
    assert_eq!(e.status_code(), 422);

    let e = err(
        json!({"mergingIntList": [1]}),
        json!({"mergingIntList": ["a"]}),
        merge_item(),
    );
    assert_eq!(
        e.to_string(),
        "list element types are not identical: [[1] [a]]"
    );

    let e = err(json!({}), json!([1]), None);
    assert_eq!(
        e.to_string(),
        "json: cannot unmarshal array into Go value of type map[string]interface {}"
    );
    assert_eq!(e.status_code(), 400);

    let e = err(json!([]), json!({}), None);
    assert_eq!(e.to_string(), "invalid JSON document");
}

#[test]
fn directives_do_not_leak_into_new_fields() {
    let patch = json!({"spec": {"template": {"spec": {"nodeSelector": {"a": "b"},
        "affinity": {"nodeAffinity": {"$patch": "delete"}, "podAffinity": {"x": null}}}}}});
    let out = apply(&two_container_deployment(), &patch, deployment()).unwrap();
    assert_eq!(
        out["spec"]["template"]["spec"]["affinity"],
        json!({"podAffinity": {}})
    );
}

#[test]
fn null_patch_is_the_identity() {
    let d = two_container_deployment();
    assert_eq!(apply(&d, &Value::Null, deployment()).unwrap(), d);
}

// ---- properties ----

fn arb_json() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        (-3i64..3).prop_map(|n| json!(n)),
        "[a-c]{0,2}".prop_map(Value::String),
    ];
    leaf.prop_recursive(4, 32, 4, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..4).prop_map(Value::Array),
            prop::collection::btree_map(
                prop_oneof![
                    Just("name".to_owned()),
                    Just("value".to_owned()),
                    Just("mergingList".to_owned()),
                    Just("mergingIntList".to_owned()),
                    Just("$patch".to_owned()),
                    Just("$retainKeys".to_owned()),
                    Just("$setElementOrder/mergingList".to_owned()),
                    Just("$deleteFromPrimitiveList/mergingIntList".to_owned()),
                    "[a-c]".prop_map(String::from),
                ],
                inner,
                0..4
            )
            .prop_map(|m| Value::Object(m.into_iter().collect())),
        ]
    })
}

/// Drops every `$`-key so a document has no directives.
fn strip_dollar(v: &mut Value) {
    match v {
        Value::Object(m) => {
            m.retain(|k, _| !k.starts_with('$'));
            m.values_mut().for_each(strip_dollar);
        }
        Value::Array(a) => a.iter_mut().for_each(strip_dollar),
        _ => {}
    }
}

fn object_in_list(v: &Value) -> bool {
    match v {
        Value::Object(m) => m.values().any(object_in_list),
        Value::Array(a) => a.iter().any(|i| i.is_object() || object_in_list(i)),
        _ => false,
    }
}

proptest! {
    #[test]
    fn empty_patch_is_the_identity(original in arb_json()) {
        let original = match original { Value::Object(_) => original, _ => json!({}) };
        for schema in [None, merge_item(), deployment()] {
            prop_assert_eq!(apply(&original, &json!({}), schema), Ok(original.clone()));
        }
    }

    #[test]
    fn arbitrary_documents_never_panic(original in arb_json(), patch in arb_json()) {
        for schema in [None, merge_item(), deployment(), pod()] {
            let _ = apply(&original, &patch, schema);
        }
    }

    #[test]
    fn without_schema_it_is_a_json_merge_patch(original in arb_json(), patch in arb_json()) {
        // No directives and no schema: RFC 7386 semantics for object
        // patches (null members removed from added subtrees as well).
        let (mut original, mut patch) = (original, patch);
        strip_dollar(&mut original);
        strip_dollar(&mut patch);
        let (Value::Object(_), Value::Object(_)) = (&original, &patch) else { return Ok(()) };
        // Upstream also drops null members of objects inside lists it adds.
        prop_assume!(!object_in_list(&patch));
        let mut want = original.clone();
        json_patch::merge(&mut want, &patch);
        prop_assert_eq!(apply(&original, &patch, None), Ok(want));
    }
}
