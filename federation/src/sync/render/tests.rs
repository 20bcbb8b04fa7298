use serde_json::{Value, json};
use skein_admission::placement::Override;

use super::*;

fn input(template: &Value) -> RenderInput<'_> {
    RenderInput {
        template,
        cluster: "eu",
        replicas: None,
        completions: None,
        retain_replicas: false,
        override_: None,
        federation: "default",
    }
}

fn server_metadata(mut extra: Value) -> Value {
    let base = json!({
        "uid": "0b6e-uid",
        "resourceVersion": "812",
        "generation": 3,
        "creationTimestamp": "2026-12-03T10:00:00Z",
        "selfLink": "/apis/x",
        "finalizers": ["federation.skein.io/cleanup"],
        "deletionTimestamp": "2026-12-03T11:00:00Z",
        "deletionGracePeriodSeconds": 0,
        "ownerReferences": [{"apiVersion": "v1", "kind": "ConfigMap", "name": "o", "uid": "x"}],
        "managedFields": [{"manager": "kubectl", "operation": "Apply", "fieldsType": "FieldsV1", "fieldsV1": {"f:spec": {}}}],
    });
    let (Value::Object(m), Some(b)) = (&mut extra, base.as_object()) else {
        panic!("objects")
    };
    for (k, v) in b {
        m.insert(k.clone(), v.clone());
    }
    extra
}

#[test]
fn deployment_keeps_only_what_the_user_meant() {
    let t = json!({
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": server_metadata(json!({
            "name": "web",
            "namespace": "shop",
            "labels": {"app": "web"},
            "annotations": {
                "team": "a",
                "deployment.kubernetes.io/revision": "4",
                "kubectl.kubernetes.io/last-applied-configuration": "{}",
                "skein.io/clusters": "eu,us",
                "skein.io/replica-scheduling": "Divided",
                "override.skein.io/eu": "{\"spec\":{\"paused\":true}}",
                "federation.kubernetes.io/deployment-preferences": "{}",
                "federation.alpha.kubernetes.io/cluster-selector": "[]",
                "federation.skein.io/decision": "{}",
            },
        })),
        "spec": {
            "replicas": 6,
            "selector": {"matchLabels": {"app": "web"}},
            "template": {
                "metadata": {"labels": {"app": "web"}, "creationTimestamp": null},
                "spec": {"containers": [{"name": "web", "image": "nginx:1.27"}]},
            },
        },
        "status": {"replicas": 6, "readyReplicas": 6},
    });
    let mut i = input(&t);
    i.replicas = Some(4);
    let got = render(&i).unwrap();
    assert_eq!(
        got,
        json!({
            "apiVersion": "apps/v1",
            "kind": "Deployment",
            "metadata": {
                "name": "web",
                "namespace": "shop",
                "labels": {"app": "web", "federation.skein.io/managed-by": "default"},
                "annotations": {"team": "a", "federation.skein.io/origin-uid": "0b6e-uid"},
            },
            "spec": {
                "replicas": 4,
                "selector": {"matchLabels": {"app": "web"}},
                "template": {
                    "metadata": {"labels": {"app": "web"}, "creationTimestamp": null},
                    "spec": {"containers": [{"name": "web", "image": "nginx:1.27"}]},
                },
            },
        })
    );
}

#[test]
fn configmap_keeps_its_data_and_empty_maps_go() {
    let t = json!({
        "apiVersion": "v1", "kind": "ConfigMap",
        "metadata": {"name": "c", "namespace": "n", "uid": "u1", "labels": {},
            "annotations": {"skein.io/clusters": "*"}},
        "data": {"a": "1"}, "binaryData": {"b": "AA=="}, "immutable": true,
    });
    let got = render(&input(&t)).unwrap();
    assert_eq!(
        got,
        json!({
            "apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": "c", "namespace": "n",
                "labels": {"federation.skein.io/managed-by": "default"},
                "annotations": {"federation.skein.io/origin-uid": "u1"}},
            "data": {"a": "1"}, "binaryData": {"b": "AA=="}, "immutable": true,
        })
    );
}

#[test]
fn service_leaves_allocations_to_the_member() {
    let t = json!({
        "apiVersion": "v1", "kind": "Service",
        "metadata": {"name": "web", "namespace": "shop", "uid": "s1"},
        "spec": {
            "type": "LoadBalancer",
            "clusterIP": "10.96.4.7",
            "clusterIPs": ["10.96.4.7"],
            "ipFamilies": ["IPv4"],
            "ipFamilyPolicy": "SingleStack",
            "healthCheckNodePort": 31999,
            "externalTrafficPolicy": "Local",
            "selector": {"app": "web"},
            "ports": [
                {"name": "http", "port": 80, "targetPort": 8080, "protocol": "TCP", "nodePort": 30080},
                {"name": "https", "port": 443, "protocol": "TCP", "nodePort": 30443},
            ],
        },
        "status": {"loadBalancer": {}},
    });
    let got = render(&input(&t)).unwrap();
    assert_eq!(
        got["spec"],
        json!({
            "type": "LoadBalancer",
            "ipFamilyPolicy": "SingleStack",
            "externalTrafficPolicy": "Local",
            "selector": {"app": "web"},
            "ports": [
                {"name": "http", "port": 80, "targetPort": 8080, "protocol": "TCP"},
                {"name": "https", "port": 443, "protocol": "TCP"},
            ],
        })
    );
    assert!(got.get("status").is_none());
}

#[test]
fn headless_service_stays_headless() {
    let t = json!({
        "apiVersion": "v1", "kind": "Service",
        "metadata": {"name": "db", "namespace": "n", "uid": "s2"},
        "spec": {"clusterIP": "None", "clusterIPs": ["None"], "ipFamilies": ["IPv4"], "ports": [{"port": 5432}]},
    });
    let got = render(&input(&t)).unwrap();
    assert_eq!(
        got["spec"],
        json!({"clusterIP": "None", "clusterIPs": ["None"], "ports": [{"port": 5432}]})
    );
}

#[test]
fn job_with_a_generated_selector_is_divided() {
    let t = json!({
        "apiVersion": "batch/v1", "kind": "Job",
        "metadata": {"name": "pi", "namespace": "n", "uid": "j1",
            "labels": {"batch.kubernetes.io/controller-uid": "j1", "app": "pi"}},
        "spec": {
            "parallelism": 6,
            "completions": 12,
            "manualSelector": false,
            "selector": {"matchLabels": {"batch.kubernetes.io/controller-uid": "j1"}},
            "template": {
                "metadata": {"labels": {
                    "controller-uid": "j1", "batch.kubernetes.io/controller-uid": "j1",
                    "job-name": "pi", "batch.kubernetes.io/job-name": "pi",
                }},
                "spec": {"restartPolicy": "Never", "containers": [{"name": "pi", "image": "perl"}]},
            },
        },
    });
    let mut i = input(&t);
    i.replicas = Some(2);
    i.completions = Some(4);
    let got = render(&i).unwrap();
    assert_eq!(
        got["spec"],
        json!({
            "parallelism": 2,
            "completions": 4,
            "template": {
                "metadata": {},
                "spec": {"restartPolicy": "Never", "containers": [{"name": "pi", "image": "perl"}]},
            },
        })
    );
    // A manual selector is the user's.
    let mut manual = t.clone();
    manual["spec"]["manualSelector"] = json!(true);
    let got = render(&input(&manual)).unwrap();
    assert_eq!(got["spec"]["selector"], t["spec"]["selector"]);
    assert_eq!(got["spec"]["manualSelector"], json!(true));
    assert_eq!(got["spec"]["parallelism"], json!(6));
}

#[test]
fn other_kinds_lose_their_server_fields() {
    let sa = json!({"apiVersion": "v1", "kind": "ServiceAccount",
        "metadata": {"name": "a", "namespace": "n", "uid": "u"},
        "secrets": [{"name": "a-token-x"}], "imagePullSecrets": [{"name": "reg"}]});
    let got = render(&input(&sa)).unwrap();
    assert!(got.get("secrets").is_none());
    assert_eq!(got["imagePullSecrets"], json!([{"name": "reg"}]));

    let pvc = json!({"apiVersion": "v1", "kind": "PersistentVolumeClaim",
        "metadata": {"name": "d", "namespace": "n", "uid": "u", "annotations": {
            "pv.kubernetes.io/bind-completed": "yes",
            "volume.kubernetes.io/storage-provisioner": "x",
            "volume.beta.kubernetes.io/storage-provisioner": "x",
            "volume.beta.kubernetes.io/storage-class": "fast"}},
        "spec": {"volumeName": "pv-1", "resources": {"requests": {"storage": "1Gi"}}}});
    let got = render(&input(&pvc)).unwrap();
    assert_eq!(
        got["spec"],
        json!({"resources": {"requests": {"storage": "1Gi"}}})
    );
    assert_eq!(
        got["metadata"]["annotations"],
        json!({"volume.beta.kubernetes.io/storage-class": "fast", "federation.skein.io/origin-uid": "u"})
    );

    let ns = json!({"apiVersion": "v1", "kind": "Namespace",
        "metadata": {"name": "shop", "uid": "u", "labels": {"kubernetes.io/metadata.name": "shop"}},
        "spec": {"finalizers": ["kubernetes"]}, "status": {"phase": "Active"}});
    let got = render(&input(&ns)).unwrap();
    assert_eq!(
        got,
        json!({"apiVersion": "v1", "kind": "Namespace",
            "metadata": {"name": "shop",
                "labels": {"federation.skein.io/managed-by": "default"},
                "annotations": {"federation.skein.io/origin-uid": "u"}}})
    );
}

fn deployment() -> Value {
    json!({
        "apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": {"name": "web", "namespace": "shop", "uid": "d1"},
        "spec": {"replicas": 3, "template": {"spec": {"containers": [{"name": "web", "image": "nginx"}]}}},
    })
}

#[test]
fn retain_replicas_leaves_them_to_the_member() {
    let t = deployment();
    let mut i = input(&t);
    i.replicas = Some(2);
    i.retain_replicas = true;
    let got = render(&i).unwrap();
    assert!(got["spec"].get("replicas").is_none());
    assert!(got["spec"].get("template").is_some());
}

#[test]
fn merge_override_applies_and_cannot_remove_markers() {
    let t = deployment();
    let ov = Override::Merge(
        json!({
            "spec": {"replicas": 9, "template": {"spec": {"nodeSelector": {"zone": "a"}}}},
            "metadata": {"labels": {"federation.skein.io/managed-by": null, "tier": "eu"},
                "annotations": {"federation.skein.io/origin-uid": "forged"}},
        })
        .as_object()
        .cloned()
        .unwrap(),
    );
    let mut i = input(&t);
    i.replicas = Some(2);
    i.override_ = Some(&ov);
    let got = render(&i).unwrap();
    assert_eq!(got["spec"]["replicas"], json!(9));
    assert_eq!(
        got["spec"]["template"]["spec"]["nodeSelector"],
        json!({"zone": "a"})
    );
    assert_eq!(
        got["metadata"]["labels"],
        json!({"tier": "eu", "federation.skein.io/managed-by": "default"})
    );
    assert_eq!(
        got["metadata"]["annotations"],
        json!({"federation.skein.io/origin-uid": "d1"})
    );
}

#[test]
fn json_override_applies_in_order() {
    let t = deployment();
    let ov = Override::Json(vec![
        json!({"op": "replace", "path": "/spec/template/spec/containers/0/image", "value": "nginx:eu"}),
        json!({"op": "add", "path": "/spec/template/spec/containers/0/args", "value": ["-v"]}),
    ]);
    let mut i = input(&t);
    i.override_ = Some(&ov);
    let got = render(&i).unwrap();
    assert_eq!(
        got["spec"]["template"]["spec"]["containers"],
        json!([{"name": "web", "image": "nginx:eu", "args": ["-v"]}])
    );
}

#[test]
fn failing_json_override_names_cluster_and_operation() {
    let t = deployment();
    let ov = Override::Json(vec![
        json!({"op": "add", "path": "/spec/paused", "value": true}),
        json!({"op": "replace", "path": "/spec/foo", "value": 1}),
    ]);
    let mut i = input(&t);
    i.override_ = Some(&ov);
    assert_eq!(
        render(&i).unwrap_err().0,
        "override.skein.io/eu: operation [1] (replace /spec/foo): path does not exist"
    );
}

#[test]
fn override_cannot_change_identity() {
    let t = deployment();
    let cases = [
        (
            json!({"metadata": {"name": "other"}}),
            "override.skein.io/eu: an override cannot change metadata.name (from \"web\" to \"other\")",
        ),
        (
            json!({"kind": "StatefulSet"}),
            "override.skein.io/eu: an override cannot change kind (from \"Deployment\" to \"StatefulSet\")",
        ),
        (
            json!({"metadata": {"namespace": null}}),
            "override.skein.io/eu: an override cannot change metadata.namespace (from \"shop\" to nothing)",
        ),
    ];
    for (patch, want) in cases {
        let ov = Override::Merge(patch.as_object().cloned().unwrap());
        let mut i = input(&t);
        i.override_ = Some(&ov);
        assert_eq!(render(&i).unwrap_err().0, want);
    }
    let ov = Override::Json(vec![json!({"op": "replace", "path": "", "value": 3})]);
    let mut i = input(&t);
    i.override_ = Some(&ov);
    assert!(
        render(&i)
            .unwrap_err()
            .0
            .contains("cannot change apiVersion")
    );
}

#[test]
fn not_an_object_is_an_error() {
    assert!(render(&input(&json!([1]))).is_err());
}

mod properties {
    use proptest::prelude::*;
    use serde_json::{Value, json};
    use skein_admission::placement::Override;

    use super::{deployment, input};
    use crate::sync::render::render;

    fn leaf() -> impl Strategy<Value = Value> {
        prop_oneof![
            Just(Value::Null),
            any::<bool>().prop_map(Value::from),
            (-3i64..100).prop_map(Value::from),
            "[a-z]{0,4}".prop_map(Value::from),
        ]
    }

    fn tree() -> impl Strategy<Value = Value> {
        leaf().prop_recursive(3, 24, 4, |inner| {
            prop::collection::btree_map(
                prop_oneof![
                    Just("metadata".to_owned()),
                    Just("labels".to_owned()),
                    Just("annotations".to_owned()),
                    Just("federation.skein.io/managed-by".to_owned()),
                    Just("federation.skein.io/origin-uid".to_owned()),
                    Just("spec".to_owned()),
                    Just("name".to_owned()),
                    "[a-z]{1,3}",
                ],
                inner,
                0..4,
            )
            .prop_map(|m| Value::Object(m.into_iter().collect()))
        })
    }

    proptest! {
        /// Whatever a merge override does, the copy keeps the template's
        /// identity and carries both markers, or rendering fails.
        #[test]
        fn markers_and_identity_survive_any_merge_override(patch in tree(), replicas in proptest::option::of(0i64..9), retain in any::<bool>()) {
            let t = deployment();
            let Value::Object(m) = json!({"spec": patch.clone(), "metadata": patch}) else { unreachable!() };
            let ov = Override::Merge(m);
            let mut i = input(&t);
            i.override_ = Some(&ov);
            i.replicas = replicas;
            i.retain_replicas = retain;
            match render(&i) {
                Ok(c) => {
                    prop_assert_eq!(&c["metadata"]["labels"]["federation.skein.io/managed-by"], &json!("default"));
                    prop_assert_eq!(&c["metadata"]["annotations"]["federation.skein.io/origin-uid"], &json!("d1"));
                    prop_assert_eq!(&c["metadata"]["name"], &json!("web"));
                    prop_assert_eq!(&c["metadata"]["namespace"], &json!("shop"));
                    prop_assert_eq!(&c["kind"], &json!("Deployment"));

                }
                Err(e) => prop_assert!(e.0.contains("an override cannot change"), "{}", e.0),
            }
        }
    }
}
