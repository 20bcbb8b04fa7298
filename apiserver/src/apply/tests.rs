//! End-to-end tests of [`apply`] and [`update`] with real kinds.

use serde_json::{Value, json};

use super::*;
use crate::schema::definitions;

const T0: &str = "2024-05-01T10:00:00Z";
const T1: &str = "2024-05-01T10:00:01Z";
const T2: &str = "2024-05-01T10:00:02Z";

fn req<'a>(kind: &'a str, manager: &'a str, now: &'a str) -> Request<'a> {
    let (group, version, api_version, status) = match kind {
        "Deployment" => ("apps", "v1", "apps/v1", true),
        "Service" => ("", "v1", "v1", true),
        _ => ("", "v1", "v1", false),
    };
    Request {
        schema: definitions().for_gvk(group, version, kind),
        api_version,
        kind,
        manager,
        subresource: None,
        status_subresource: status,
        now,
    }
}

fn deployment(replicas: i64, image: &str) -> Value {
    json!({
        "apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": {"name": "web", "namespace": "default"},
        "spec": {
            "replicas": replicas,
            "selector": {"matchLabels": {"app": "web"}},
            "template": {
                "metadata": {"labels": {"app": "web"}},
                "spec": {"containers": [{"name": "app", "image": image}]}
            }
        }
    })
}

/// What the registry adds on create (uid etc.), so `update` sees a stored
/// object.
fn stored(mut v: Value) -> Value {
    let m = v["metadata"].as_object_mut().unwrap();
    m.insert("uid".into(), json!("u-1"));
    m.insert("resourceVersion".into(), json!("5"));
    m.insert("creationTimestamp".into(), json!(T0));
    v
}

fn entries(v: &Value) -> Vec<Value> {
    v["metadata"]["managedFields"]
        .as_array()
        .cloned()
        .unwrap_or_default()
}

fn entry<'v>(v: &'v Value, manager: &str, op: &str) -> Option<&'v Value> {
    v["metadata"]["managedFields"]
        .as_array()?
        .iter()
        .find(|e| e["manager"] == manager && e["operation"] == op)
}

fn apply_ok(r: &Request<'_>, live: Option<&Value>, config: &Value, force: bool) -> Value {
    match apply(r, live, config, force) {
        Ok(v) => stored(v),
        Err(e) => panic!("apply failed: {e}"),
    }
}

#[test]
fn create_by_apply_owns_what_a_real_cluster_shows() {
    let out = apply_ok(
        &req("Deployment", "kubectl", T0),
        None,
        &deployment(2, "nginx"),
        false,
    );
    assert_eq!(
        entries(&out),
        vec![json!({
            "manager": "kubectl", "operation": "Apply", "apiVersion": "apps/v1",
            "time": T0, "fieldsType": "FieldsV1",
            "fieldsV1": {"f:spec": {
                "f:replicas": {}, "f:selector": {},
                "f:template": {
                    "f:metadata": {"f:labels": {"f:app": {}}},
                    "f:spec": {"f:containers": {"k:{\"name\":\"app\"}": {
                        ".": {}, "f:image": {}, "f:name": {}}}}}}}
        })]
    );
    assert_eq!(out["spec"]["replicas"], 2);
    assert_eq!(out["apiVersion"], "apps/v1");
}

#[test]
fn update_after_scale_takes_replicas_then_apply_conflicts() {
    let live = apply_ok(
        &req("Deployment", "kubectl", T0),
        None,
        &deployment(2, "nginx"),
        false,
    );
    // kubectl scale / edit: an Update changing only replicas.
    let mut scaled = live.clone();
    scaled["spec"]["replicas"] = json!(5);
    update(
        &req("Deployment", "kubectl-edit", T1),
        Some(&live),
        &mut scaled,
    )
    .unwrap();
    let edit = entry(&scaled, "kubectl-edit", "Update").unwrap();
    assert_eq!(edit["fieldsV1"], json!({"f:spec": {"f:replicas": {}}}));
    assert_eq!(edit["apiVersion"], "apps/v1");
    assert_eq!(edit["time"], T1);
    let kubectl = entry(&scaled, "kubectl", "Apply").unwrap();
    assert!(kubectl["fieldsV1"]["f:spec"].get("f:replicas").is_none());
    // Entries: Apply first.
    let names: Vec<Value> = entries(&scaled)
        .iter()
        .map(|e| e["manager"].clone())
        .collect();
    assert_eq!(names, [json!("kubectl"), json!("kubectl-edit")]);

    // Applying a different replicas value conflicts.
    let err = apply(
        &req("Deployment", "kubectl", T2),
        Some(&scaled),
        &deployment(3, "nginx"),
        false,
    )
    .unwrap_err();
    let Error::Conflicts(c) = &err else {
        panic!("{err:?}")
    };
    assert_eq!(
        conflict_message(c),
        "Apply failed with 1 conflict: conflict with \"kubectl-edit\" using apps/v1: .spec.replicas"
    );
    assert_eq!(c[0].field, ".spec.replicas");
    assert_eq!(
        c[0].cause_message(),
        "conflict with \"kubectl-edit\" using apps/v1"
    );

    // Applying the live value is no conflict: shared ownership.
    let shared = apply_ok(
        &req("Deployment", "kubectl", T2),
        Some(&scaled),
        &deployment(5, "nginx"),
        false,
    );
    assert!(
        entry(&shared, "kubectl", "Apply").unwrap()["fieldsV1"]["f:spec"]["f:replicas"].is_object()
    );
    assert!(entry(&shared, "kubectl-edit", "Update").is_some());

    // Force takes it.
    let forced = apply_ok(
        &req("Deployment", "kubectl", T2),
        Some(&scaled),
        &deployment(3, "nginx"),
        true,
    );
    assert_eq!(forced["spec"]["replicas"], 3);
    assert!(entry(&forced, "kubectl-edit", "Update").is_none());
    assert_eq!(entry(&forced, "kubectl", "Apply").unwrap()["time"], T2);
}

#[test]
fn conflicts_with_several_managers_and_fields() {
    let live = apply_ok(
        &req("Deployment", "helm", T0),
        None,
        &deployment(2, "nginx"),
        false,
    );
    let err = apply(
        &req("Deployment", "kubectl", T1),
        Some(&live),
        &deployment(3, "redis"),
        false,
    )
    .unwrap_err();
    let Error::Conflicts(c) = err else { panic!() };
    assert_eq!(
        conflict_message(&c),
        "Apply failed with 2 conflicts: conflicts with \"helm\":\n- .spec.replicas\n- .spec.template.spec.containers[name=\"app\"].image"
    );
}

#[test]
fn fields_no_longer_applied_are_removed_unless_owned_elsewhere() {
    let mut cfg = deployment(2, "nginx");
    cfg["metadata"]["labels"] = json!({"a": "1", "b": "2"});
    cfg["spec"]["template"]["spec"]["containers"] =
        json!([{"name": "app", "image": "nginx"}, {"name": "side", "image": "busybox"}]);
    let live = apply_ok(&req("Deployment", "kubectl", T0), None, &cfg, false);

    // Another applier shares label b.
    let other = json!({"apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": {"name": "web", "labels": {"b": "2"}}});
    let live = apply_ok(&req("Deployment", "other", T1), Some(&live), &other, false);

    let mut next = deployment(2, "nginx");
    next["metadata"]["labels"] = json!({"a": "1"});
    let out = apply_ok(&req("Deployment", "kubectl", T2), Some(&live), &next, false);
    assert_eq!(out["metadata"]["labels"], json!({"a": "1", "b": "2"}));
    let names: Vec<&str> = out["spec"]["template"]["spec"]["containers"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["app"]);

    // Once the other applier lets go too, b goes.
    let bare = json!({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web"}});
    let out = apply_ok(&req("Deployment", "other", T2), Some(&out), &bare, false);
    assert_eq!(out["metadata"]["labels"], json!({"a": "1"}));
    assert!(entry(&out, "other", "Apply").is_none());
}

#[test]
fn removed_list_field_leaves_other_fields_alone() {
    let mut cfg = deployment(2, "nginx");
    cfg["spec"]["template"]["spec"]["containers"][0]["args"] = json!(["-v"]);
    let live = apply_ok(&req("Deployment", "kubectl", T0), None, &cfg, false);
    let out = apply_ok(
        &req("Deployment", "kubectl", T1),
        Some(&live),
        &deployment(2, "nginx"),
        false,
    );
    let c = &out["spec"]["template"]["spec"]["containers"][0];
    assert!(c.get("args").is_none(), "{c}");
    assert_eq!(c["image"], "nginx");
}

#[test]
fn no_op_apply_keeps_timestamps() {
    let live = apply_ok(
        &req("Deployment", "kubectl", T0),
        None,
        &deployment(2, "nginx"),
        false,
    );
    let again = apply_ok(
        &req("Deployment", "kubectl", T2),
        Some(&live),
        &deployment(2, "nginx"),
        false,
    );
    assert_eq!(entries(&again), entries(&live));
    // A new applier of the same values co-owns, without a time (upstream
    // does not stamp a no-op apply).
    let co = apply_ok(
        &req("Deployment", "helm", T2),
        Some(&live),
        &deployment(2, "nginx"),
        false,
    );
    let helm = entry(&co, "helm", "Apply").unwrap();
    assert!(helm.get("time").is_none());
    assert_eq!(co["spec"], live["spec"]);
}

#[test]
fn create_update_owns_pointer_structs_with_dot() {
    let mut obj = deployment(1, "nginx");
    obj["metadata"]["labels"] = json!({"app": "web"});
    obj["spec"]["strategy"] =
        json!({"type": "RollingUpdate", "rollingUpdate": {"maxSurge": "25%"}});
    update(&req("Deployment", "kubectl-create", T0), None, &mut obj).unwrap();
    let e = entry(&obj, "kubectl-create", "Update").unwrap();
    assert_eq!(
        e["fieldsV1"],
        json!({
            "f:metadata": {"f:labels": {".": {}, "f:app": {}}},
            "f:spec": {
                "f:replicas": {}, "f:selector": {},
                "f:strategy": {"f:rollingUpdate": {".": {}, "f:maxSurge": {}}, "f:type": {}},
                "f:template": {
                    "f:metadata": {"f:labels": {".": {}, "f:app": {}}},
                    "f:spec": {"f:containers": {"k:{\"name\":\"app\"}": {
                        ".": {}, "f:image": {}, "f:name": {}}}}}}
        })
    );
}

#[test]
fn no_op_update_keeps_managed_fields() {
    let mut obj = stored(deployment(1, "nginx"));
    update(&req("Deployment", "kubectl-create", T0), None, &mut obj).unwrap();
    let mut same = obj.clone();
    update(
        &req("Deployment", "kubectl-edit", T2),
        Some(&obj),
        &mut same,
    )
    .unwrap();
    assert_eq!(same, obj);
    // Without managedFields in the body (a PUT of an edited copy), they are
    // recomputed from the stored object.
    let mut put = obj.clone();
    put["metadata"]
        .as_object_mut()
        .unwrap()
        .remove("managedFields");
    update(
        &req("Deployment", "kubectl-replace", T2),
        Some(&obj),
        &mut put,
    )
    .unwrap();
    assert_eq!(put, obj);
}

#[test]
fn status_subresource_is_separate() {
    let live = apply_ok(
        &req("Deployment", "kubectl", T0),
        None,
        &deployment(2, "nginx"),
        false,
    );
    let mut with_status = live.clone();
    with_status["status"] = json!({"replicas": 2, "readyReplicas": 2});
    let mut r = req("Deployment", "kube-controller-manager", T1);
    r.subresource = Some("status");
    update(&r, Some(&live), &mut with_status).unwrap();
    let kcm = entry(&with_status, "kube-controller-manager", "Update").unwrap();
    assert_eq!(kcm["subresource"], "status");
    assert_eq!(
        kcm["fieldsV1"],
        json!({"f:status": {"f:readyReplicas": {}, "f:replicas": {}}})
    );
    // A main-resource write never owns status, and does not take it away.
    let mut main = with_status.clone();
    main["spec"]["replicas"] = json!(4);
    main["status"]["replicas"] = json!(9);
    update(
        &req("Deployment", "kubectl-edit", T2),
        Some(&with_status),
        &mut main,
    )
    .unwrap();
    assert_eq!(
        entry(&main, "kubectl-edit", "Update").unwrap()["fieldsV1"],
        json!({"f:spec": {"f:replicas": {}}})
    );
    assert!(entry(&main, "kube-controller-manager", "Update").is_some());
    // Applying status on the main resource owns nothing of it.
    let mut cfg = deployment(4, "nginx");
    cfg["status"] = json!({"replicas": 1});
    let out = apply_ok(&req("Deployment", "kubectl", T2), Some(&main), &cfg, true);
    assert!(
        entry(&out, "kubectl", "Apply").unwrap()["fieldsV1"]
            .get("f:status")
            .is_none()
    );
}

#[test]
fn update_managers_are_capped_into_ancient_changes() {
    let mut obj = stored(json!({"apiVersion": "v1", "kind": "ConfigMap",
        "metadata": {"name": "c", "namespace": "default"}, "data": {}}));
    update(
        &req("ConfigMap", "m0", "2024-05-01T10:00:00Z"),
        None,
        &mut obj,
    )
    .unwrap();
    for i in 0..12 {
        let mut next = obj.clone();
        next["data"][format!("k{i}")] = json!("v");
        let now = format!("2024-05-01T10:00:{:02}Z", i + 1);
        let manager = format!("m{}", i + 1);
        update(&req("ConfigMap", &manager, &now), Some(&obj), &mut next).unwrap();
        obj = next;
    }
    let names: Vec<String> = entries(&obj)
        .iter()
        .map(|e| e["manager"].as_str().unwrap().to_owned())
        .collect();
    assert_eq!(names.len(), 10, "{names:?}");
    assert!(names.contains(&"ancient-changes".to_owned()), "{names:?}");
    assert!(!names.contains(&"m1".to_owned()) && !names.contains(&"m2".to_owned()));
    assert!(names.contains(&"m12".to_owned()));
    let ancient = entry(&obj, "ancient-changes", "Update").unwrap();
    assert!(
        ancient["fieldsV1"]["f:data"]["f:k0"].is_object(),
        "{ancient}"
    );
    assert!(
        ancient["fieldsV1"]["f:data"]["f:k1"].is_object(),
        "{ancient}"
    );
}

#[test]
fn client_managed_fields_are_honoured_and_reset() {
    // Client-side apply created it.
    let mut live = stored(deployment(2, "nginx"));
    update(
        &req("Deployment", "kubectl-client-side-apply", T0),
        None,
        &mut live,
    )
    .unwrap();
    // kubectl's csaupgrade: a JSON patch rewriting the entry to an Apply by
    // kubectl with the same fields.
    let mut upgraded = live.clone();
    let mut e = entry(&live, "kubectl-client-side-apply", "Update")
        .unwrap()
        .clone();
    e["manager"] = json!("kubectl");
    e["operation"] = json!("Apply");
    upgraded["metadata"]["managedFields"] = json!([e]);
    update(
        &req("Deployment", "kubectl", T1),
        Some(&live),
        &mut upgraded,
    )
    .unwrap();
    assert_eq!(entries(&upgraded).len(), 1);
    assert!(entry(&upgraded, "kubectl", "Apply").is_some());
    // Now server-side apply by kubectl has no conflict on replicas.
    let out = apply_ok(
        &req("Deployment", "kubectl", T2),
        Some(&upgraded),
        &deployment(3, "nginx"),
        false,
    );
    assert_eq!(out["spec"]["replicas"], 3);
    assert_eq!(entries(&out).len(), 1);

    // An empty list resets; then the object stays untracked.
    let mut reset = out.clone();
    reset["metadata"]["managedFields"] = json!([]);
    update(&req("Deployment", "x", T2), Some(&out), &mut reset).unwrap();
    assert!(reset["metadata"].get("managedFields").is_none());
    let mut later = reset.clone();
    later["spec"]["replicas"] = json!(7);
    update(&req("Deployment", "y", T2), Some(&reset), &mut later).unwrap();
    assert!(later["metadata"].get("managedFields").is_none());

    // Invalid entries fall back to the stored ones.
    let mut bad = out.clone();
    bad["metadata"]["managedFields"] = json!([{"manager": "z", "operation": "Nope"}]);
    update(&req("Deployment", "x", T2), Some(&out), &mut bad).unwrap();
    assert_eq!(entries(&bad), entries(&out));
}

#[test]
fn first_apply_to_untracked_object_conflicts_with_before_first_apply() {
    let live = stored(deployment(2, "nginx"));
    let err = apply(
        &req("Deployment", "helm", T1),
        Some(&live),
        &deployment(3, "nginx"),
        false,
    )
    .unwrap_err();
    let Error::Conflicts(c) = err else { panic!() };
    assert_eq!(
        conflict_message(&c),
        "Apply failed with 1 conflict: conflict with \"before-first-apply\" using apps/v1: .spec.replicas"
    );
    let out = apply_ok(
        &req("Deployment", "helm", T1),
        Some(&live),
        &deployment(2, "nginx"),
        false,
    );
    assert!(entry(&out, "before-first-apply", "Update").is_some());
    assert!(entry(&out, "helm", "Apply").is_some());
}

#[test]
fn kubectl_takes_over_fields_unchanged_since_client_side_apply() {
    let mut cfg = deployment(2, "nginx");
    let last = serde_json::to_string(&cfg).unwrap();
    cfg["metadata"]["annotations"] = json!({LAST_APPLIED: last});
    let mut live = stored(cfg.clone());
    update(
        &req("Deployment", "kubectl-client-side-apply", T0),
        None,
        &mut live,
    )
    .unwrap();
    // replicas changed by someone else since: still a conflict.
    let mut scaled = live.clone();
    scaled["spec"]["replicas"] = json!(4);
    update(
        &req("Deployment", "kubectl-scale", T0),
        Some(&live),
        &mut scaled,
    )
    .unwrap();
    let err = apply(
        &req("Deployment", "kubectl", T1),
        Some(&scaled),
        &deployment(3, "redis"),
        false,
    )
    .unwrap_err();
    let Error::Conflicts(c) = err else { panic!() };
    assert_eq!(c.len(), 1, "{c:?}");
    assert_eq!(c[0].field, ".spec.replicas");
    assert_eq!(c[0].manager, "kubectl-scale");
    // Without that, the image (unchanged since the last apply) is taken
    // over, and the annotation follows the new config.
    let out = apply_ok(
        &req("Deployment", "kubectl", T1),
        Some(&live),
        &deployment(2, "redis"),
        false,
    );
    assert_eq!(
        out["spec"]["template"]["spec"]["containers"][0]["image"],
        "redis"
    );
    let ann = out["metadata"]["annotations"][LAST_APPLIED]
        .as_str()
        .unwrap();
    assert!(ann.contains("redis") && ann.ends_with('\n'), "{ann}");
}

#[test]
fn apply_rejects_bad_configs_as_upstream() {
    let r = req("Deployment", "kubectl", T0);
    let mut wrong = deployment(1, "x");
    wrong["kind"] = json!("ReplicaSet");
    assert_eq!(
        apply(&r, None, &wrong, false),
        Err(Error::BadRequest(
            "invalid object type: apps/v1, Kind=ReplicaSet".into()
        ))
    );
    assert_eq!(
        apply(&r, None, &json!({}), false),
        Err(Error::BadRequest("invalid object type: /, Kind=".into()))
    );
    let mut mf = deployment(1, "x");
    mf["metadata"]["managedFields"] = json!([]);
    assert_eq!(
        apply(&r, None, &mf, false),
        Err(Error::BadRequest(
            "metadata.managedFields must be nil".into()
        ))
    );
    let mut unknown = deployment(1, "x");
    unknown["spec"]["bogus"] = json!(1);
    assert_eq!(
        apply(&r, None, &unknown, false),
        Err(Error::Internal(
            "failed to create typed patch object (default/web; apps/v1, Kind=Deployment): .spec.bogus: field not declared in schema".into()
        ))
    );
    let r2 = req("Deployment", "", T0);
    assert!(matches!(
        apply(&r2, None, &deployment(1, "x"), false),
        Err(Error::Invalid { .. })
    ));
}

#[test]
fn service_ports_key_on_port_and_defaulted_protocol() {
    let svc = json!({"apiVersion": "v1", "kind": "Service",
        "metadata": {"name": "s", "namespace": "default"},
        "spec": {"selector": {"app": "web"}, "ports": [{"port": 80, "targetPort": 8080}]}});
    let out = apply_ok(&req("Service", "helm", T0), None, &svc, false);
    assert_eq!(
        entry(&out, "helm", "Apply").unwrap()["fieldsV1"],
        json!({"f:spec": {
            "f:ports": {"k:{\"port\":80,\"protocol\":\"TCP\"}": {".": {}, "f:port": {}, "f:targetPort": {}}},
            "f:selector": {}}})
    );
    // The registry defaults protocol; a later apply without it still
    // matches the same item.
    let mut live = out.clone();
    live["spec"]["ports"][0]["protocol"] = json!("TCP");
    let mut next = svc.clone();
    next["spec"]["ports"][0]["targetPort"] = json!(9090);
    let out = apply_ok(&req("Service", "helm", T1), Some(&live), &next, false);
    assert_eq!(out["spec"]["ports"].as_array().unwrap().len(), 1);
    assert_eq!(out["spec"]["ports"][0]["targetPort"], 9090);
    assert_eq!(out["spec"]["ports"][0]["protocol"], "TCP");
}

#[test]
fn configmap_data_is_a_granular_map() {
    let cm = |data: Value| {
        json!({"apiVersion": "v1", "kind": "ConfigMap",
        "metadata": {"name": "c"}, "data": data})
    };
    let live = apply_ok(
        &req("ConfigMap", "a", T0),
        None,
        &cm(json!({"x": "1"})),
        false,
    );
    let live = apply_ok(
        &req("ConfigMap", "b", T1),
        Some(&live),
        &cm(json!({"y": "2"})),
        false,
    );
    assert_eq!(live["data"], json!({"x": "1", "y": "2"}));
    assert_eq!(
        entry(&live, "b", "Apply").unwrap()["fieldsV1"],
        json!({"f:data": {"f:y": {}}})
    );
    let err = apply(
        &req("ConfigMap", "b", T2),
        Some(&live),
        &cm(json!({"x": "3"})),
        false,
    )
    .unwrap_err();
    let Error::Conflicts(c) = err else { panic!() };
    assert_eq!(
        conflict_message(&c),
        "Apply failed with 1 conflict: conflict with \"a\": .data.x"
    );
}
