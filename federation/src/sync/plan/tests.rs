use proptest::prelude::*;
use serde_json::{Map, Value, json};
use skein_admission::placement::{ConflictResolution, Drift};

use super::*;

const UID: &str = "3f1c-origin";

fn policy(conflict: ConflictResolution, drift: Drift) -> Policy {
    Policy { conflict, drift }
}

fn default_policy() -> Policy {
    policy(ConflictResolution::Abort, Drift::Enforce)
}

/// The copy render() makes of a two-container Deployment.
fn desired() -> Value {
    json!({
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {
            "name": "web",
            "namespace": "shop",
            "labels": {"app": "web", "federation.skein.io/managed-by": "default"},
            "annotations": {"federation.skein.io/origin-uid": UID},
        },
        "spec": {
            "replicas": 3,
            "selector": {"matchLabels": {"app": "web"}},
            "template": {
                "metadata": {"labels": {"app": "web"}, "creationTimestamp": null},
                "spec": {"containers": [
                    {"name": "web", "image": "nginx:1.27", "ports": [{"containerPort": 80}]},
                    {"name": "log", "image": "busybox", "command": ["tail", "-f"]},
                ]},
            },
        },
    })
}

/// Skein's apply entry for [`desired`], as an API server writes it.
fn skein_apply() -> Value {
    json!({
        "manager": "skein",
        "operation": "Apply",
        "apiVersion": "apps/v1",
        "time": "2026-12-03T10:00:00Z",
        "fieldsType": "FieldsV1",
        "fieldsV1": {
            "f:metadata": {
                "f:annotations": {"f:federation.skein.io/origin-uid": {}},
                "f:labels": {"f:app": {}, "f:federation.skein.io/managed-by": {}},
            },
            "f:spec": {
                "f:replicas": {},
                "f:selector": {},
                "f:template": {
                    "f:metadata": {"f:creationTimestamp": {}, "f:labels": {"f:app": {}}},
                    "f:spec": {"f:containers": {
                        "k:{\"name\":\"log\"}": {".": {}, "f:command": {}, "f:image": {}, "f:name": {}},
                        "k:{\"name\":\"web\"}": {".": {}, "f:image": {}, "f:name": {},
                            "f:ports": {"k:{\"containerPort\":80,\"protocol\":\"TCP\"}": {".": {}, "f:containerPort": {}}}},
                    }},
                },
            },
        },
    })
}

/// The member's object for [`desired`]: defaults, status, the
/// controller's revision annotation, and managedFields.
fn observed() -> Value {
    json!({
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {
            "name": "web",
            "namespace": "shop",
            "uid": "member-uid",
            "resourceVersion": "4711",
            "generation": 1,
            "creationTimestamp": "2026-12-03T10:00:00Z",
            "labels": {"app": "web", "federation.skein.io/managed-by": "default"},
            "annotations": {"federation.skein.io/origin-uid": UID, "deployment.kubernetes.io/revision": "1"},
            "managedFields": [
                skein_apply(),
                {
                    "manager": "kube-controller-manager",
                    "operation": "Update",
                    "apiVersion": "apps/v1",
                    "time": "2026-12-03T10:00:01Z",
                    "fieldsType": "FieldsV1",
                    "fieldsV1": {"f:metadata": {"f:annotations": {".": {}, "f:deployment.kubernetes.io/revision": {}}}},
                },
                {
                    "manager": "kube-controller-manager",
                    "operation": "Update",
                    "apiVersion": "apps/v1",
                    "subresource": "status",
                    "time": "2026-12-03T10:00:02Z",
                    "fieldsType": "FieldsV1",
                    "fieldsV1": {"f:status": {"f:replicas": {}, "f:readyReplicas": {}}},
                },
            ],
        },
        "spec": {
            "replicas": 3,
            "revisionHistoryLimit": 10,
            "progressDeadlineSeconds": 600,
            "strategy": {"type": "RollingUpdate", "rollingUpdate": {"maxSurge": "25%", "maxUnavailable": "25%"}},
            "selector": {"matchLabels": {"app": "web"}},
            "template": {
                "metadata": {"labels": {"app": "web"}, "creationTimestamp": null},
                "spec": {
                    "restartPolicy": "Always",
                    "dnsPolicy": "ClusterFirst",
                    "containers": [
                        {"name": "web", "image": "nginx:1.27", "imagePullPolicy": "IfNotPresent",
                            "ports": [{"containerPort": 80, "protocol": "TCP"}],
                            "terminationMessagePath": "/dev/termination-log", "resources": {}},
                        {"name": "log", "image": "busybox", "command": ["tail", "-f"], "imagePullPolicy": "Always"},
                    ],
                },
            },
        },
        "status": {"replicas": 3, "readyReplicas": 3},
    })
}

/// Adds a managedFields entry to `obj`.
fn with_manager(mut obj: Value, entry: Value) -> Value {
    if let Some(a) = obj
        .pointer_mut("/metadata/managedFields")
        .and_then(Value::as_array_mut)
    {
        a.push(entry);
    }
    obj
}

fn update_entry(manager: &str, subresource: &str, fields: Value) -> Value {
    let mut e = json!({
        "manager": manager, "operation": "Update", "apiVersion": "apps/v1",
        "time": "2026-12-03T10:05:00Z", "fieldsType": "FieldsV1", "fieldsV1": fields,
    });
    if !subresource.is_empty() {
        e["subresource"] = json!(subresource);
    }
    e
}

/// Removes `path` from Skein's entry (another manager took it).
fn take_from_skein(mut obj: Value, pointer: &str) -> Value {
    let parent = &pointer[..pointer.rfind('/').unwrap_or(0)];
    let key = &pointer[pointer.rfind('/').map_or(0, |i| i + 1)..];
    let key = key.replace("~1", "/").replace("~0", "~");
    obj.pointer_mut(&format!("/metadata/managedFields/0/fieldsV1{parent}"))
        .and_then(Value::as_object_mut)
        .expect("path in skein's entry")
        .remove(&key);
    obj
}

#[test]
fn nothing_to_do_when_the_member_holds_the_copy() {
    assert_eq!(
        plan(
            Desired::Copy(&desired()),
            Some(&observed()),
            UID,
            default_policy()
        ),
        Action::Nothing
    );
}

#[test]
fn create_when_the_member_has_none() {
    assert_eq!(
        plan(Desired::Copy(&desired()), None, UID, default_policy()),
        Action::Create
    );
}

#[test]
fn an_object_skein_does_not_manage_is_a_conflict_by_policy() {
    let cm = json!({
        "apiVersion": "v1", "kind": "ConfigMap",
        "metadata": {"name": "x", "namespace": "ns", "labels": {"federation.skein.io/managed-by": "default"},
            "managedFields": [
                {"manager": "kubectl-client-side-apply", "operation": "Update", "apiVersion": "v1",
                    "fieldsType": "FieldsV1", "fieldsV1": {"f:data": {"f:a": {}}}},
                {"manager": "kubectl-edit", "operation": "Update", "apiVersion": "v1",
                    "fieldsType": "FieldsV1", "fieldsV1": {"f:data": {"f:b": {}}}},
                {"manager": "kubectl-client-side-apply", "operation": "Update", "apiVersion": "v1",
                    "subresource": "status", "fieldsType": "FieldsV1", "fieldsV1": {}},
            ]},
        "data": {"a": "1"},
    });
    let want = json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "x", "namespace": "ns"}, "data": {"a": "1"}});
    assert_eq!(
        plan(Desired::Copy(&want), Some(&cm), UID, default_policy()),
        Action::Conflict {
            message: r#"a ConfigMap "x" that Skein does not manage exists in namespace "ns" (managed by kubectl-client-side-apply, kubectl-edit)"#.into()
        }
    );
    let adopt = policy(ConflictResolution::Adopt, Drift::Enforce);
    assert_eq!(
        plan(Desired::Copy(&want), Some(&cm), UID, adopt),
        Action::Apply { force: true }
    );
    let overwrite = policy(ConflictResolution::Overwrite, Drift::Enforce);
    assert_eq!(
        plan(Desired::Copy(&want), Some(&cm), UID, overwrite),
        Action::Replace
    );

    let ns = json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "shop"}});
    assert_eq!(
        plan(Desired::Copy(&ns), Some(&ns), UID, default_policy()),
        Action::Conflict {
            message: r#"a Namespace "shop" that Skein does not manage exists"#.into()
        }
    );
    let ing = json!({"apiVersion": "networking.k8s.io/v1", "kind": "Ingress", "metadata": {"name": "i", "namespace": "n"}});
    assert_eq!(
        plan(Desired::Copy(&ing), Some(&ing), UID, default_policy()),
        Action::Conflict {
            message: r#"an Ingress "i" that Skein does not manage exists in namespace "n""#.into()
        }
    );
}

#[test]
fn a_copy_of_an_older_object_is_taken_over() {
    let mut o = observed();
    o["metadata"]["annotations"][crate::sync::ORIGIN_UID] = json!("an-older-uid");
    assert_eq!(
        plan(Desired::Copy(&desired()), Some(&o), UID, default_policy()),
        Action::Apply { force: true }
    );
}

#[test]
fn kubectl_scale_is_drift() {
    let mut o = take_from_skein(observed(), "/f:spec/f:replicas");
    o["spec"]["replicas"] = json!(7);
    let o = with_manager(
        o,
        update_entry("kubectl", "scale", json!({"f:spec": {"f:replicas": {}}})),
    );
    let d = desired();
    let at = |drift| {
        plan(
            Desired::Copy(&d),
            Some(&o),
            UID,
            policy(ConflictResolution::Abort, drift),
        )
    };
    assert_eq!(at(Drift::Enforce), Action::Apply { force: true });
    assert_eq!(
        at(Drift::Report),
        Action::Drifted {
            path: "spec.replicas".into(),
            manager: "kubectl".into()
        }
    );
    assert_eq!(at(Drift::Ignore), Action::Nothing);
}

#[test]
fn kubectl_edit_of_an_image_is_drift_at_the_container() {
    let mut o = take_from_skein(
        observed(),
        "/f:spec/f:template/f:spec/f:containers/k:{\"name\":\"web\"}/f:image",
    );
    o["spec"]["template"]["spec"]["containers"][0]["image"] = json!("nginx:evil");
    let o = with_manager(
        o,
        update_entry(
            "kubectl-edit",
            "",
            json!({"f:spec": {"f:template": {"f:spec": {"f:containers": {"k:{\"name\":\"web\"}": {"f:image": {}}}}}}}),
        ),
    );
    assert_eq!(
        plan(
            Desired::Copy(&desired()),
            Some(&o),
            UID,
            policy(ConflictResolution::Abort, Drift::Report)
        ),
        Action::Drifted {
            path: "spec.template.spec.containers[name=web].image".into(),
            manager: "kubectl-edit".into()
        }
    );
}

#[test]
fn an_atomic_list_owned_whole_is_drift() {
    let mut o = take_from_skein(
        observed(),
        "/f:spec/f:template/f:spec/f:containers/k:{\"name\":\"log\"}/f:command",
    );
    o["spec"]["template"]["spec"]["containers"][1]["command"] = json!(["sleep", "-f"]);
    let o = with_manager(
        o,
        update_entry(
            "helm",
            "",
            json!({"f:spec": {"f:template": {"f:spec": {"f:containers": {"k:{\"name\":\"log\"}": {"f:command": {}}}}}}}),
        ),
    );
    assert_eq!(
        plan(
            Desired::Copy(&desired()),
            Some(&o),
            UID,
            policy(ConflictResolution::Abort, Drift::Report)
        ),
        Action::Drifted {
            path: "spec.template.spec.containers[name=log].command[0]".into(),
            manager: "helm".into()
        }
    );
}

#[test]
fn a_sidecar_another_manager_added_is_drift() {
    let mut o = observed();
    if let Some(a) = o
        .pointer_mut("/spec/template/spec/containers")
        .and_then(Value::as_array_mut)
    {
        a.push(json!({"name": "mesh", "image": "envoy"}));
    }
    let o = with_manager(
        o,
        update_entry(
            "istio",
            "",
            json!({"f:spec": {"f:template": {"f:spec": {"f:containers": {"k:{\"name\":\"mesh\"}": {".": {}, "f:image": {}, "f:name": {}}}}}}}),
        ),
    );
    assert_eq!(
        plan(
            Desired::Copy(&desired()),
            Some(&o),
            UID,
            policy(ConflictResolution::Abort, Drift::Report)
        ),
        Action::Drifted {
            path: "spec.template.spec.containers[name=mesh]".into(),
            manager: "istio".into()
        }
    );
}

#[test]
fn a_changed_template_is_an_unforced_apply() {
    let mut d = desired();
    d["spec"]["template"]["spec"]["containers"][0]["image"] = json!("nginx:1.28");
    assert_eq!(
        plan(Desired::Copy(&d), Some(&observed()), UID, default_policy()),
        Action::Apply { force: false }
    );
    // A field only the member defaulted differs: nobody else owns it.
    let mut d = desired();
    d["spec"]["revisionHistoryLimit"] = json!(3);
    assert_eq!(
        plan(Desired::Copy(&d), Some(&observed()), UID, default_policy()),
        Action::Apply { force: false }
    );
}

#[test]
fn a_field_the_template_lost_is_an_unforced_apply() {
    let mut d = desired();
    if let Some(l) = d
        .pointer_mut("/metadata/labels")
        .and_then(Value::as_object_mut)
    {
        l.remove("app");
    }
    assert_eq!(contained(&d, &observed()), Ok(()));
    assert_eq!(
        plan(Desired::Copy(&d), Some(&observed()), UID, default_policy()),
        Action::Apply { force: false }
    );
}

#[test]
fn absent_and_orphaned() {
    let p = default_policy();
    let o = observed();
    assert_eq!(plan(Desired::Absent, Some(&o), UID, p), Action::Delete);
    assert_eq!(plan(Desired::Orphaned, Some(&o), UID, p), Action::Orphan);
    let mut theirs = observed();
    if let Some(l) = theirs
        .pointer_mut("/metadata/labels")
        .and_then(Value::as_object_mut)
    {
        l.remove(crate::sync::MANAGED_BY);
    }
    for d in [Desired::Absent, Desired::Orphaned] {
        assert_eq!(plan(d, Some(&theirs), UID, p), Action::Nothing);
        assert_eq!(plan(d, None, UID, p), Action::Nothing);
    }
}

#[test]
fn is_ours_needs_both_markers() {
    assert_eq!(is_ours(&observed()), Some(UID));
    let no_label = json!({"metadata": {"annotations": {"federation.skein.io/origin-uid": "u"}}});
    assert_eq!(is_ours(&no_label), None);
    let no_annotation =
        json!({"metadata": {"labels": {"federation.skein.io/managed-by": "default"}}});
    assert_eq!(is_ours(&no_annotation), None);
}

#[test]
fn containment_and_paths() {
    let d = desired();
    assert_eq!(contained(&d, &observed()), Ok(()));
    let cases = [
        ("/spec/replicas", json!(4), "spec.replicas"),
        ("/metadata/labels/app", json!("db"), "metadata.labels.app"),
        (
            "/spec/template/spec/containers/0/image",
            json!("x"),
            "spec.template.spec.containers[name=web].image",
        ),
        (
            "/spec/template/spec/containers/0/ports/0/containerPort",
            json!(81),
            "spec.template.spec.containers[name=web].ports[0].containerPort",
        ),
        (
            "/spec/template/spec/containers/1/command",
            json!(["tail"]),
            "spec.template.spec.containers[name=log].command[1]",
        ),
        ("/spec/selector", json!("scalar"), "spec.selector"),
    ];
    for (ptr, v, want) in cases {
        let mut o = observed();
        *o.pointer_mut(ptr).expect("pointer") = v;
        assert_eq!(contained(&d, &o), Err(want.to_owned()), "{ptr}");
    }
    // Numbers compare numerically; empty desired values may be absent.
    assert_eq!(
        contained(
            &json!({"a": 1, "b": {}, "c": [], "d": null, "e": false, "f": ""}),
            &json!({"a": 1.0})
        ),
        Ok(())
    );
    assert_eq!(contained(&json!({"a": {"b": 0}}), &json!({})), Ok(()));
    assert_eq!(
        contained(&json!({"a": {"b": 1}}), &json!({})),
        Err("a".to_owned())
    );
    assert_eq!(
        contained(&json!({"a": [1, 2]}), &json!({"a": [1]})),
        Err("a[1]".to_owned())
    );
}

#[test]
fn field_owner_reads_managed_fields() {
    let o = with_manager(
        observed(),
        update_entry("kubectl", "scale", json!({"f:spec": {"f:replicas": {}}})),
    );
    let replicas = FieldPath(vec![
        Step::Field("spec".into()),
        Step::Field("replicas".into()),
    ]);
    assert_eq!(field_owner(&o, &replicas).as_deref(), Some("kubectl"));
    // Skein's own fields and defaulted ones have no other owner.
    let image = differences(
        &json!({"spec": {"template": {"spec": {"containers": [{"name": "web", "image": "x"}]}}}}),
        &o,
        1,
    );
    assert_eq!(field_owner(&o, &image[0]), None);
    let port = FieldPath(vec![
        Step::Field("spec".into()),
        Step::Field("template".into()),
        Step::Field("spec".into()),
        Step::Field("containers".into()),
        Step::Item {
            index: 0,
            key: None,
        },
        Step::Field("ports".into()),
        Step::Item {
            index: 0,
            key: None,
        },
        Step::Field("containerPort".into()),
    ]);
    assert_eq!(field_owner(&o, &port), None);
    let other = with_manager(
        o.clone(),
        update_entry(
            "x",
            "",
            json!({"f:spec": {"f:template": {"f:spec": {"f:containers": {"k:{\"name\":\"web\"}": {"f:ports": {"k:{\"containerPort\":80,\"protocol\":\"TCP\"}": {"f:containerPort": {}}}}}}}}}),
        ),
    );
    assert_eq!(field_owner(&other, &port).as_deref(), Some("x"));
    // Unreadable managedFields: no owner.
    let mut bad = o;
    bad["metadata"]["managedFields"] = json!("nope");
    assert_eq!(field_owner(&bad, &replicas), None);
}

// ---- properties ----

fn leaf() -> impl Strategy<Value = Value> {
    prop_oneof![
        any::<bool>().prop_map(Value::from),
        (-3i64..1000).prop_map(Value::from),
        "[a-z0-9]{0,6}".prop_map(Value::from),
    ]
}

/// A spec-like tree: maps, keyed lists of objects (`name` = `c<i>`) and
/// atomic lists of scalars.
fn tree() -> impl Strategy<Value = Value> {
    leaf().prop_recursive(4, 40, 4, |inner| {
        prop_oneof![
            prop::collection::btree_map("[a-z]{1,4}", inner.clone(), 1..4)
                .prop_map(|m| Value::Object(m.into_iter().collect())),
            prop::collection::vec(inner, 1..3).prop_map(|items| {
                Value::Array(
                    items
                        .into_iter()
                        .enumerate()
                        .map(|(i, v)| json!({"name": format!("c{i}"), "v": v}))
                        .collect(),
                )
            }),
            prop::collection::vec(leaf(), 1..3).prop_map(Value::Array),
        ]
    })
}

fn object_of(spec: Value) -> Value {
    json!({
        "apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": {"name": "w", "namespace": "n",
            "labels": {"federation.skein.io/managed-by": "default"},
            "annotations": {"federation.skein.io/origin-uid": UID}},
        "spec": spec,
    })
}

/// Every leaf path (positions an API server owns whole: scalars and
/// atomic lists) of `v`, as FieldsV1 element keys and as pointers.
fn leaves(
    v: &Value,
    fields: &mut Vec<String>,
    ptr: &mut Vec<String>,
    out: &mut Vec<(Vec<String>, Vec<String>)>,
) {
    match v {
        Value::Object(m) if !m.is_empty() => {
            for (k, c) in m {
                fields.push(format!("f:{k}"));
                ptr.push(k.replace('~', "~0").replace('/', "~1"));
                leaves(c, fields, ptr, out);
                fields.pop();
                ptr.pop();
            }
        }
        Value::Array(a) if a.iter().all(Value::is_object) && !a.is_empty() => {
            for (i, c) in a.iter().enumerate() {
                let name = c.get("name").and_then(Value::as_str).unwrap_or_default();
                fields.push(format!("k:{{\"name\":\"{name}\"}}"));
                ptr.push(i.to_string());
                leaves(c, fields, ptr, out);
                fields.pop();
                ptr.pop();
            }
        }
        _ => out.push((fields.clone(), ptr.clone())),
    }
}

/// FieldsV1 of the given leaf paths.
fn fields_v1(paths: &[&Vec<String>]) -> Value {
    let mut root = Map::new();
    for p in paths {
        let mut cur = &mut root;
        for (i, k) in p.iter().enumerate() {
            let e = cur.entry(k.clone()).or_insert_with(|| json!({}));
            if k.starts_with("k:")
                && i + 1 < p.len()
                && let Some(m) = e.as_object_mut()
            {
                m.insert(".".into(), json!({}));
            }
            cur = match e.as_object_mut() {
                Some(m) => m,
                None => return Value::Object(root),
            };
        }
    }
    Value::Object(root)
}

fn entry(manager: &str, op: &str, fields: Value) -> Value {
    json!({"manager": manager, "operation": op, "apiVersion": "apps/v1", "fieldsType": "FieldsV1", "fieldsV1": fields})
}

/// Adds `extra` under every object of `v` that does not have it.
fn add_defaults(v: &mut Value, extra: &Value) {
    match v {
        Value::Object(m) => {
            for c in m.values_mut() {
                add_defaults(c, extra);
            }
            m.entry("zz-default").or_insert_with(|| extra.clone());
        }
        Value::Array(a) => a.iter_mut().for_each(|c| add_defaults(c, extra)),
        _ => {}
    }
}

fn mutate(v: &Value) -> Value {
    match v {
        Value::Bool(b) => Value::Bool(!b),
        Value::Number(n) => Value::from(n.as_i64().unwrap_or(0) + 1),
        Value::String(s) => Value::String(format!("{s}x")),
        Value::Array(a) => {
            let mut a = a.clone();
            a.push(json!("extra"));
            Value::Array(a)
        }
        other => other.clone(),
    }
}

fn policies() -> impl Strategy<Value = Policy> {
    (
        prop_oneof![
            Just(ConflictResolution::Abort),
            Just(ConflictResolution::Adopt),
            Just(ConflictResolution::Overwrite)
        ],
        prop_oneof![
            Just(Drift::Enforce),
            Just(Drift::Report),
            Just(Drift::Ignore)
        ],
    )
        .prop_map(|(conflict, drift)| Policy { conflict, drift })
}

proptest! {
    /// The member's object = the copy + defaulted fields + status +
    /// Skein's managedFields: nothing to do.
    #[test]
    fn defaulted_copy_needs_nothing(spec in tree(), extra in leaf(), p in policies()) {
        let d = object_of(json!({"s": spec}));
        let mut o = d.clone();
        if let Some(s) = o.get_mut("spec") {
            add_defaults(s, &extra);
        }
        let mut all = Vec::new();
        leaves(&d, &mut Vec::new(), &mut Vec::new(), &mut all);
        let paths: Vec<&Vec<String>> = all.iter().map(|(f, _)| f).collect();
        o["metadata"]["managedFields"] = json!([entry("skein", "Apply", fields_v1(&paths))]);
        o["status"] = json!({"replicas": 1});
        prop_assert_eq!(contained(&d, &o), Ok(()));
        prop_assert_eq!(plan(Desired::Copy(&d), Some(&o), UID, p), Action::Nothing);
    }

    /// A member object without both markers is only ever touched by
    /// Adopt (apply) or Overwrite (replace).
    #[test]
    fn others_objects_are_left_alone(
        spec in tree(), other in tree(), p in policies(), marker in 0u8..3, which in 0u8..3,
    ) {
        let d = object_of(json!({"s": spec}));
        let mut o = object_of(json!({"s": other}));
        let meta = &mut o["metadata"];
        match marker {
            0 => { meta["labels"] = json!({}); meta["annotations"] = json!({}); }
            1 => { meta["labels"] = json!({}); }
            _ => { meta["annotations"] = json!({}); }
        }
        let desired = match which { 0 => Desired::Copy(&d), 1 => Desired::Absent, _ => Desired::Orphaned };
        let a = plan(desired, Some(&o), UID, p);
        let allowed = match (which, p.conflict) {
            (0, ConflictResolution::Abort) => matches!(a, Action::Conflict { .. }),
            (0, ConflictResolution::Adopt) => a == Action::Apply { force: true },
            (0, ConflictResolution::Overwrite) => a == Action::Replace,
            _ => a == Action::Nothing,
        };
        prop_assert!(allowed, "{:?} for {:?}", a, p);
    }

    /// Absent and Orphaned on a member without the object: nothing.
    #[test]
    fn absent_without_object_is_nothing(p in policies(), orphan in any::<bool>()) {
        let d = if orphan { Desired::Orphaned } else { Desired::Absent };
        prop_assert_eq!(plan(d, None, UID, p), Action::Nothing);
    }

    /// Another manager changed one leaf it now owns: the drift policy
    /// decides, and Report names that leaf and manager.
    #[test]
    fn changed_leaf_follows_the_drift_policy(spec in tree(), pick in any::<prop::sample::Index>(), p in policies()) {
        let d = object_of(json!({"s": spec}));
        let mut all = Vec::new();
        leaves(&d["spec"], &mut vec!["f:spec".to_owned()], &mut vec!["spec".to_owned()], &mut all);
        // Item names are list keys, not values to change.
        let candidates: Vec<_> = all.iter().filter(|(f, _)| f.last().map(String::as_str) != Some("f:name")).collect();
        prop_assume!(!candidates.is_empty());
        let (fields, ptr) = candidates[pick.index(candidates.len())];
        let pointer = format!("/{}", ptr.join("/"));
        let mut o = d.clone();
        let old = d.pointer(&pointer).cloned().unwrap_or(Value::Null);
        prop_assume!(!old.is_null());
        if let Some(slot) = o.pointer_mut(&pointer) {
            *slot = mutate(&old);
        }
        let mut skein_leaves = Vec::new();
        leaves(&d, &mut Vec::new(), &mut Vec::new(), &mut skein_leaves);
        let skein: Vec<&Vec<String>> = skein_leaves.iter().map(|(f, _)| f).filter(|f| *f != fields).collect();
        o["metadata"]["managedFields"] = json!([
            entry("skein", "Apply", fields_v1(&skein)),
            entry("kubectl-edit", "Update", fields_v1(&[fields])),
        ]);
        // Leaving the drifted field out, nothing else is to do.
        let cut = without_drift(&d, &o);
        prop_assert_eq!(plan(Desired::Copy(&cut), Some(&o), UID, p), Action::Nothing);
        let a = plan(Desired::Copy(&d), Some(&o), UID, p);
        match p.drift {
            Drift::Enforce => prop_assert_eq!(a, Action::Apply { force: true }),
            Drift::Ignore => prop_assert_eq!(a, Action::Nothing),
            Drift::Report => {
                let Action::Drifted { path, manager } = a else {
                    return Err(TestCaseError::fail(format!("{a:?}")));
                };
                prop_assert_eq!(manager, "kubectl-edit");
                let want = contained(&d, &o).expect_err("differs");
                prop_assert_eq!(path, want);
            }
        }
    }
}

/// managedFields as Skein's own field manager ([`skein_apiserver::apply`]) writes
/// them on a member: the planner reads what a member really records.
mod with_the_field_manager {
    use serde_json::{Value, json};
    use skein_admission::placement::{ConflictResolution, Drift};

    use super::{UID, desired, policy};
    use crate::sync::plan::{Action, Desired, plan};
    use skein_apiserver::apply::{self, Request};
    use skein_apiserver::schema::definitions;

    fn req<'a>(manager: &'a str, subresource: Option<&'a str>, now: &'a str) -> Request<'a> {
        Request {
            schema: definitions().for_gvk("apps", "v1", "Deployment"),
            api_version: "apps/v1",
            kind: "Deployment",
            manager,
            subresource,
            status_subresource: true,
            now,
        }
    }

    /// The member after Skein applied `d` (and maybe an earlier copy).
    fn applied(live: Option<&Value>, d: &Value) -> Value {
        apply::apply(&req("skein", None, "2026-12-03T10:00:00Z"), live, d, false).expect("apply")
    }

    /// `manager` writes `change` to the member's object (a PUT/PATCH).
    fn updated(
        live: &Value,
        manager: &str,
        subresource: Option<&str>,
        change: impl Fn(&mut Value),
    ) -> Value {
        let mut new = live.clone();
        change(&mut new);
        apply::update(
            &req(manager, subresource, "2026-12-03T10:05:00Z"),
            Some(live),
            &mut new,
        )
        .expect("update");
        new
    }

    fn report() -> super::Policy {
        policy(ConflictResolution::Abort, Drift::Report)
    }

    #[test]
    fn a_fresh_copy_needs_nothing() {
        let d = desired();
        let live = applied(None, &d);
        assert_eq!(
            plan(Desired::Copy(&d), Some(&live), UID, report()),
            Action::Nothing
        );
    }

    #[test]
    fn kubectl_edit_and_scale_are_drift() {
        let d = desired();
        let live = applied(None, &d);
        let edited = updated(&live, "kubectl-edit", None, |o| {
            o["spec"]["template"]["spec"]["containers"][0]["image"] = json!("nginx:evil");
        });
        assert_eq!(
            plan(Desired::Copy(&d), Some(&edited), UID, report()),
            Action::Drifted {
                path: "spec.template.spec.containers[name=web].image".into(),
                manager: "kubectl-edit".into()
            }
        );
        let scaled = updated(&live, "kubectl", Some("scale"), |o| {
            o["spec"]["replicas"] = json!(9)
        });
        assert_eq!(
            plan(Desired::Copy(&d), Some(&scaled), UID, report()),
            Action::Drifted {
                path: "spec.replicas".into(),
                manager: "kubectl".into()
            }
        );
        let enforce = policy(ConflictResolution::Abort, Drift::Enforce);
        assert_eq!(
            plan(Desired::Copy(&d), Some(&scaled), UID, enforce),
            Action::Apply { force: true }
        );
    }

    #[test]
    fn template_changes_are_unforced_applies_until_applied() {
        let d = desired();
        let live = applied(None, &d);
        // A new image.
        let mut d2 = d.clone();
        d2["spec"]["template"]["spec"]["containers"][0]["image"] = json!("nginx:1.28");
        assert_eq!(
            plan(Desired::Copy(&d2), Some(&live), UID, report()),
            Action::Apply { force: false }
        );
        let live2 = applied(Some(&live), &d2);
        assert_eq!(
            plan(Desired::Copy(&d2), Some(&live2), UID, report()),
            Action::Nothing
        );
        // A label and a container the template no longer has.
        let mut d3 = d2.clone();
        if let Some(l) = d3
            .pointer_mut("/metadata/labels")
            .and_then(Value::as_object_mut)
        {
            l.remove("app");
        }
        if let Some(c) = d3
            .pointer_mut("/spec/template/spec/containers")
            .and_then(Value::as_array_mut)
        {
            c.pop();
        }
        assert_eq!(
            plan(Desired::Copy(&d3), Some(&live2), UID, report()),
            Action::Apply { force: false }
        );
        let live3 = applied(Some(&live2), &d3);
        assert!(live3.pointer("/metadata/labels/app").is_none());
        assert_eq!(
            plan(Desired::Copy(&d3), Some(&live3), UID, report()),
            Action::Nothing
        );
    }
}

#[test]
fn without_drift_leaves_drifted_fields_out() {
    // kubectl scale took replicas; kubectl-edit took the web image, helm
    // the log container's atomic command, and someone the marker label.
    let mut o = take_from_skein(observed(), "/f:spec/f:replicas");
    o = take_from_skein(
        o,
        "/f:spec/f:template/f:spec/f:containers/k:{\"name\":\"web\"}/f:image",
    );
    o = take_from_skein(
        o,
        "/f:spec/f:template/f:spec/f:containers/k:{\"name\":\"log\"}/f:command",
    );
    o["spec"]["replicas"] = json!(7);
    o["spec"]["template"]["spec"]["containers"][0]["image"] = json!("nginx:evil");
    o["spec"]["template"]["spec"]["containers"][1]["command"] = json!(["sleep"]);
    o["metadata"]["labels"]["federation.skein.io/managed-by"] = json!("other");
    let o = with_manager(
        o,
        update_entry("kubectl", "scale", json!({"f:spec": {"f:replicas": {}}})),
    );
    let o = with_manager(
        o,
        update_entry(
            "kubectl-edit",
            "",
            json!({
                "f:metadata": {"f:labels": {"f:federation.skein.io/managed-by": {}}},
                "f:spec": {"f:template": {"f:spec": {"f:containers": {
                    "k:{\"name\":\"web\"}": {"f:image": {}},
                    "k:{\"name\":\"log\"}": {"f:command": {}},
                }}}},
            }),
        ),
    );
    // The template also moved on: a new log image.
    let mut d = desired();
    d["spec"]["template"]["spec"]["containers"][1]["image"] = json!("busybox:2");
    let cut = without_drift(&d, &o);
    let mut want = d.clone();
    if let Some(s) = want.pointer_mut("/spec").and_then(Value::as_object_mut) {
        s.remove("replicas");
    }
    for (i, f) in [(0, "image"), (1, "command")] {
        if let Some(c) = want
            .pointer_mut(&format!("/spec/template/spec/containers/{i}"))
            .and_then(Value::as_object_mut)
        {
            c.remove(f);
        }
    }
    assert_eq!(cut, want);
    // What is left differs only where nobody else owns it (the markers
    // aside, which are never left out): an unforced apply.
    let mut o = o;
    o["metadata"]["labels"]["federation.skein.io/managed-by"] = json!("default");
    assert_eq!(
        plan(
            Desired::Copy(&cut),
            Some(&o),
            UID,
            policy(ConflictResolution::Abort, Drift::Report)
        ),
        Action::Apply { force: false }
    );
    // Without drift, the copy is unchanged.
    assert_eq!(without_drift(&desired(), &observed()), desired());
}

#[test]
fn a_status_write_is_told_from_a_change_planning_reads() {
    let seen = observed();
    let mut status = seen.clone();
    status["status"] = json!({"readyReplicas": 2, "observedGeneration": 1});
    status["metadata"]["resourceVersion"] = json!("999");
    status["metadata"]["managedFields"] =
        json!([{"manager": "kube-controller-manager", "subresource": "status"}]);
    assert!(status_only_change(&seen, &status));
    // Without any status before, too.
    let mut bare = seen.clone();
    if let Some(m) = bare.as_object_mut() {
        m.remove("status");
    }
    assert!(status_only_change(&bare, &status));
    // A spec, label, annotation or generation change is not.
    let mut spec = status.clone();
    spec["spec"]["replicas"] = json!(7);
    assert!(!status_only_change(&seen, &spec));
    let mut label = status.clone();
    label["metadata"]["labels"]["team"] = json!("x");
    assert!(!status_only_change(&seen, &label));
    let mut generation = status.clone();
    generation["metadata"]["generation"] = json!(99);
    assert!(!status_only_change(&seen, &generation));
    let mut removed = status.clone();
    if let Some(m) = removed["metadata"].as_object_mut() {
        m.remove("annotations");
    }
    assert!(!status_only_change(&seen, &removed));
    let mut extra = status;
    extra["data"] = json!({"k": "v"});
    assert!(!status_only_change(&seen, &extra));
}
