//! Golden tests: upstream's `printers_test.go` cases (Kubernetes 1.33),
//! translated to v1 JSON, plus Table assembly and robustness.
//!
//! Upstream tests mostly check the default (non-wide) cells; our rows are
//! always wide, so [`check`] compares the leading cells the case lists.

mod core;
mod event;
mod kinds;
mod node;
mod other;
mod pod;
mod storage;
mod workloads;

use serde_json::{Value, json};
use time::{Duration, OffsetDateTime};

use super::*;

/// The fixed "now" of every test.
fn now() -> OffsetDateTime {
    timestamp::parse("2025-01-01T00:00:00Z").expect("valid timestamp")
}

/// An RFC 3339 timestamp `d` before [`now`] (negative: in the future).
fn ago(d: Duration) -> String {
    timestamp::format_rfc3339(now() - d)
}

/// A timestamp 1s in the future: upstream's `time.Now().Add(1.9e9)`,
/// which prints as age `0s`.
fn just_now() -> String {
    ago(Duration::seconds(-1))
}

/// The cells `printer(group, kind)` gives `obj`.
fn cells(group: &str, kind: &str, obj: &Value) -> Vec<Value> {
    printer(group, kind).row(obj, now())
}

/// Asserts the leading cells of `obj`'s row equal `expected` (a JSON array),
/// and that the row has one cell per column.
#[track_caller]
fn check(group: &str, kind: &str, obj: Value, expected: Value) {
    let got = cells(group, kind, &obj);
    assert_eq!(
        got.len(),
        expected_cells(group, kind),
        "cells vs columns for {obj}"
    );
    let expected = expected.as_array().expect("expected cells are an array");
    assert_eq!(
        &got[..expected.len().min(got.len())],
        expected.as_slice(),
        "for {obj}"
    );
}

/// Every (group, kind) with a dedicated printer.
const KINDS: &[(&str, &str)] = &[
    ("", "Pod"),
    ("", "Node"),
    ("", "Namespace"),
    ("", "ConfigMap"),
    ("", "Secret"),
    ("", "ServiceAccount"),
    ("", "Endpoints"),
    ("", "Service"),
    ("", "Event"),
    ("events.k8s.io", "Event"),
    ("", "PersistentVolume"),
    ("", "PersistentVolumeClaim"),
    ("", "PodTemplate"),
    ("", "ReplicationController"),
    ("", "ResourceQuota"),
    ("", "ComponentStatus"),
    ("apps", "Deployment"),
    ("apps", "ReplicaSet"),
    ("apps", "StatefulSet"),
    ("apps", "DaemonSet"),
    ("apps", "ControllerRevision"),
    ("apiregistration.k8s.io", "APIService"),
    ("batch", "Job"),
    ("batch", "CronJob"),
    ("certificates.k8s.io", "CertificateSigningRequest"),
    ("networking.k8s.io", "Ingress"),
    ("networking.k8s.io", "IngressClass"),
    ("networking.k8s.io", "NetworkPolicy"),
    ("networking.k8s.io", "ServiceCIDR"),
    ("networking.k8s.io", "IPAddress"),
    ("autoscaling", "HorizontalPodAutoscaler"),
    ("autoscaling", "Scale"),
    ("policy", "PodDisruptionBudget"),
    ("rbac.authorization.k8s.io", "RoleBinding"),
    ("rbac.authorization.k8s.io", "ClusterRoleBinding"),
    ("storage.k8s.io", "StorageClass"),
    ("storage.k8s.io", "VolumeAttachment"),
    ("storage.k8s.io", "CSIDriver"),
    ("storage.k8s.io", "CSINode"),
    ("storage.k8s.io", "CSIStorageCapacity"),
    (
        "admissionregistration.k8s.io",
        "MutatingWebhookConfiguration",
    ),
    (
        "admissionregistration.k8s.io",
        "ValidatingWebhookConfiguration",
    ),
    ("admissionregistration.k8s.io", "ValidatingAdmissionPolicy"),
    (
        "admissionregistration.k8s.io",
        "ValidatingAdmissionPolicyBinding",
    ),
    ("scheduling.k8s.io", "PriorityClass"),
    ("coordination.k8s.io", "Lease"),
    ("node.k8s.io", "RuntimeClass"),
    ("flowcontrol.apiserver.k8s.io", "FlowSchema"),
    ("flowcontrol.apiserver.k8s.io", "PriorityLevelConfiguration"),
    ("discovery.k8s.io", "EndpointSlice"),
];

/// Kinds whose rows upstream fills with more cells than columns.
const EXTRA_CELL_KINDS: &[(&str, &str)] = &[("networking.k8s.io", "IPAddress")];

/// The number of cells `printer(group, kind)` must give every row.
fn expected_cells(group: &str, kind: &str) -> usize {
    let columns = printer(group, kind).columns().len();
    if EXTRA_CELL_KINDS.contains(&(group, kind)) {
        columns + 1
    } else {
        columns
    }
}

#[test]
fn every_served_kind_has_a_printer_decision() {
    let mut undecided = Vec::new();
    for r in crate::registry::resource::builtins() {
        let dedicated = printers::lookup(r.group, r.kind).is_some();
        let default = printers::DEFAULT_TABLE_KINDS.contains(&(r.group, r.kind));
        assert!(
            !(dedicated && default),
            "{}/{} is both printed and listed as default",
            r.group,
            r.kind
        );
        if !dedicated && !default {
            undecided.push(format!("{}/{} ({})", r.group, r.kind, r.plural));
        }
        if default {
            assert!(std::ptr::eq(printer(r.group, r.kind), &DEFAULT_PRINTER));
        }
    }
    assert!(
        undecided.is_empty(),
        "kinds served without a printer decision (add a printer ported from \
         upstream's printers.go, or list them in printers::DEFAULT_TABLE_KINDS \
         with the reason): {undecided:?}"
    );
    for (group, kind) in KINDS {
        assert!(printers::lookup(group, kind).is_some(), "{group}/{kind}");
    }
}

#[test]
fn every_kind_has_a_dedicated_printer_with_name_first() {
    for (group, kind) in KINDS {
        let p = printer(group, kind);
        assert!(
            !std::ptr::eq(p, &DEFAULT_PRINTER),
            "{group}/{kind} fell back to the default"
        );
        let names: Vec<&str> = p.columns().iter().map(|c| c.name.as_ref()).collect();
        // VolumeAttachment's Attacher column is format "name" too upstream.
        let name_col = p.columns().iter().filter(|c| c.format == "name").count();
        // Scale's Name column has no format upstream.
        let expected = match *kind {
            "VolumeAttachment" => 2,
            "Scale" => 0,
            _ => 1,
        };
        assert_eq!(name_col, expected, "{group}/{kind}: {names:?}");
        if *kind != "Event" {
            assert_eq!(names[0], "Name", "{group}/{kind}");
        }
        assert!(
            p.columns()
                .iter()
                .all(|c| c.priority == 0 || c.priority == 1)
        );
    }
    assert!(std::ptr::eq(printer("core", "Pod"), printer("", "Pod")));
}

#[test]
fn never_panics_and_always_fills_every_column() {
    let garbage = [
        json!(null),
        json!(42),
        json!("pod"),
        json!([]),
        json!({}),
        json!({"metadata": null, "spec": null, "status": null}),
        json!({"metadata": [], "spec": "x", "status": 7}),
        json!({"status": {"containerStatuses": [{"restartCount": i64::MAX}, {"restartCount": i64::MAX}],
                          "initContainerStatuses": [{"restartCount": i64::MIN}]},
               "spec": {"capacity": {"storage": "9e999999"}, "completions": i64::MIN}}),
        json!({"metadata": {"name": 5, "creationTimestamp": "nope", "deletionTimestamp": 1,
                             "labels": [1], "annotations": "x"},
               "spec": {"containers": {}, "initContainers": [null, 1, "x"], "ports": [null],
                        "replicas": "three", "selector": {"matchLabels": [], "matchExpressions": [null]},
                        "metrics": [null, {"type": "Resource"}, {"type": "Pods", "pods": 3}],
                        "rules": [null], "tls": {}, "capacity": {"storage": {}},
                        "completions": 1.5, "minAvailable": true, "subjects": [7]},
               "status": {"containerStatuses": [null, {"state": {"terminated": null, "waiting": 3}}],
                          "initContainerStatuses": [{"state": {"terminated": {"exitCode": "1"}}}],
                          "conditions": [null, 1], "addresses": [{}], "currentMetrics": [1],
                          "loadBalancer": {"ingress": [null, {"ip": 1}]}},
               "subsets": [{"addresses": [null], "ports": [{}]}],
               "series": 1, "involvedObject": [], "roleRef": 2, "data": [1, 2]}),
    ];
    let mut kinds = KINDS.to_vec();
    kinds.push(("", "NoSuchKind"));
    kinds.push(("rbac.authorization.k8s.io", "Role"));
    for (group, kind) in kinds {
        let p = printer(group, kind);
        for obj in &garbage {
            let row = p.row(obj, now());
            assert_eq!(
                row.len(),
                expected_cells(group, kind),
                "{group}/{kind} on {obj}"
            );
            let _ = p.conditions(obj);
        }
    }
}

#[test]
fn default_printer_shows_name_and_created_at() {
    let obj =
        json!({"metadata": {"name": "admin", "creationTimestamp": "2024-05-06T07:08:09+02:00"}});
    let got = cells("rbac.authorization.k8s.io", "ClusterRole", &obj);
    assert_eq!(got, vec![json!("admin"), json!("2024-05-06T05:08:09Z")]);
    let got = cells("example.com", "Widget", &json!({"metadata": {"name": "w"}}));
    assert_eq!(got, vec![json!("w"), json!("0001-01-01T00:00:00Z")]);
    let columns = serde_json::to_value(DEFAULT_PRINTER.columns()).unwrap();
    assert_eq!(
        columns,
        json!([
            {"name": "Name", "type": "string", "format": "name",
             "description": descriptions::META_NAME, "priority": 0},
            {"name": "Created At", "type": "date", "format": "",
             "description": descriptions::META_CREATION_TIMESTAMP, "priority": 0},
        ])
    );
}

fn sample_pod(name: &str, rv: &str) -> Value {
    json!({
        "kind": "Pod", "apiVersion": "v1",
        "metadata": {"name": name, "namespace": "default", "resourceVersion": rv,
                     "creationTimestamp": ago(Duration::minutes(5)), "labels": {"app": "web"}},
        "spec": {"containers": [{"name": "c", "image": "nginx"}], "nodeName": "n1"},
        "status": {"phase": "Running", "podIP": "10.0.0.1",
                   "containerStatuses": [{"name": "c", "ready": true, "restartCount": 0,
                                          "state": {"running": {}}}]},
    })
}

#[test]
fn list_table_has_list_metadata_columns_and_partial_metadata_rows() {
    let pods = [sample_pod("a", "10"), sample_pod("b", "11")];
    let meta = ListMeta {
        resource_version: "12".into(),
        continue_token: "tok".into(),
        remaining_item_count: Some(3),
    };
    let t = table("", "Pod", &pods, &meta, IncludeObject::Metadata, now());
    assert_eq!(t["kind"], "Table");
    assert_eq!(t["apiVersion"], "meta.k8s.io/v1");
    assert_eq!(
        t["metadata"],
        json!({"resourceVersion": "12", "continue": "tok", "remainingItemCount": 3})
    );
    let cols = t["columnDefinitions"].as_array().unwrap();
    assert_eq!(cols.len(), 9);
    assert_eq!(cols[5]["name"], "IP");
    assert_eq!(cols[5]["priority"], 1);
    assert_eq!(cols[3]["type"], "string");
    let rows = t["rows"].as_array().unwrap();
    assert_eq!(rows.len(), 2);
    assert_eq!(
        rows[0]["cells"],
        json!([
            "a", "1/1", "Running", "0", "5m", "10.0.0.1", "n1", "<none>", "<none>"
        ])
    );
    assert_eq!(rows[0]["object"]["kind"], "PartialObjectMetadata");
    assert_eq!(rows[0]["object"]["apiVersion"], "meta.k8s.io/v1");
    assert_eq!(rows[0]["object"]["metadata"], pods[0]["metadata"]);
    assert!(rows[0].get("conditions").is_none());
}

#[test]
fn include_object_none_and_object() {
    let pod = sample_pod("a", "10");
    let meta = ListMeta::default();
    let none = table(
        "",
        "Pod",
        std::slice::from_ref(&pod),
        &meta,
        IncludeObject::None,
        now(),
    );
    assert_eq!(none["rows"][0]["object"], Value::Null);
    assert!(none["rows"][0].as_object().unwrap().contains_key("object"));
    assert_eq!(none["metadata"], json!({}));
    let full = table(
        "",
        "Pod",
        std::slice::from_ref(&pod),
        &meta,
        IncludeObject::Object,
        now(),
    );
    assert_eq!(full["rows"][0]["object"], pod);
    assert_eq!(IncludeObject::parse(""), Some(IncludeObject::Metadata));
    assert_eq!(
        IncludeObject::parse("Metadata"),
        Some(IncludeObject::Metadata)
    );
    assert_eq!(IncludeObject::parse("None"), Some(IncludeObject::None));
    assert_eq!(IncludeObject::parse("Object"), Some(IncludeObject::Object));
    assert_eq!(IncludeObject::parse("object"), None);
}

#[test]
fn partial_metadata_always_has_creation_timestamp() {
    let obj = json!({"metadata": {"name": "x"}});
    let t = object_table("", "ConfigMap", &obj, IncludeObject::Metadata, now());
    assert_eq!(
        t["rows"][0]["object"]["metadata"],
        json!({"name": "x", "creationTimestamp": null})
    );
    let t = object_table("", "ConfigMap", &json!({}), IncludeObject::Metadata, now());
    assert_eq!(
        t["rows"][0]["object"]["metadata"],
        json!({"creationTimestamp": null})
    );
}

#[test]
fn empty_lists_have_empty_or_null_rows_like_upstream() {
    let meta = ListMeta {
        resource_version: "5".into(),
        ..ListMeta::default()
    };
    let pods = table("", "Pod", &[], &meta, IncludeObject::Metadata, now());
    assert_eq!(pods["rows"], json!([]));
    assert_eq!(pods["metadata"], json!({"resourceVersion": "5"}));
    let roles = table(
        "rbac.authorization.k8s.io",
        "Role",
        &[],
        &meta,
        IncludeObject::Metadata,
        now(),
    );
    assert_eq!(roles["rows"], Value::Null);
    assert_eq!(roles["columnDefinitions"].as_array().unwrap().len(), 2);
}

#[test]
fn single_object_table_carries_the_object_resource_version() {
    let t = object_table(
        "",
        "Pod",
        &sample_pod("a", "77"),
        IncludeObject::Metadata,
        now(),
    );
    assert_eq!(t["metadata"], json!({"resourceVersion": "77"}));
    assert_eq!(t["rows"].as_array().unwrap().len(), 1);
    assert_eq!(t["columnDefinitions"].as_array().unwrap().len(), 9);
}

#[test]
fn watch_tables_send_headers_once_and_pass_status_through() {
    let mut w = WatchTables::new("", "Pod", IncludeObject::None);
    let first = w.event_object(&sample_pod("a", "1"), now());
    assert_eq!(first["columnDefinitions"].as_array().unwrap().len(), 9);
    assert_eq!(first["metadata"], json!({"resourceVersion": "1"}));
    assert_eq!(first["rows"][0]["cells"][0], "a");
    let second = w.event_object(&sample_pod("b", "2"), now());
    assert_eq!(second["columnDefinitions"], Value::Null);
    assert_eq!(second["rows"][0]["cells"][0], "b");

    let status = json!({"kind": "Status", "apiVersion": "v1", "status": "Failure", "code": 410});
    let mut w = WatchTables::new("", "Pod", IncludeObject::Metadata);
    assert_eq!(w.event_object(&status, now()), status);
    let after = w.event_object(&sample_pod("c", "3"), now());
    assert_eq!(after["columnDefinitions"], Value::Null);
}

#[test]
fn succeeded_pod_rows_carry_the_completed_condition() {
    let mut pod = sample_pod("done", "1");
    pod["status"]["phase"] = json!("Succeeded");
    let t = object_table("", "Pod", &pod, IncludeObject::None, now());
    assert_eq!(
        t["rows"][0]["conditions"],
        json!([{"type": "Completed", "status": "True", "reason": "Succeeded",
                "message": "The pod has completed successfully."}])
    );
    pod["status"]["phase"] = json!("Failed");
    let t = object_table("", "Pod", &pod, IncludeObject::None, now());
    assert_eq!(t["rows"][0]["conditions"][0]["reason"], "Failed");
    assert_eq!(t["rows"][0]["conditions"][0]["message"], "The pod failed.");
}
