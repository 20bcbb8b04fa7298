//! Printers of the kinds added for issue 9, from upstream's cell functions
//! (`printers.go`, Kubernetes 1.33) and `printers_test.go` cases:
//! ResourceQuota, PriorityClass, CertificateSigningRequest,
//! ReplicationController, PodTemplate, ControllerRevision, NetworkPolicy,
//! EndpointSlice, StorageClass, IngressClass, RuntimeClass, APIService,
//! FlowSchema, PriorityLevelConfiguration, CSI kinds, VolumeAttachment,
//! webhook configurations, admission policies, ServiceCIDR, IPAddress,
//! ComponentStatus.

use serde_json::{Value, json};
use time::Duration;

use super::{ago, cells, check, now, printer};
use crate::table::{IncludeObject, ListMeta, table};

fn column_names(group: &str, kind: &str) -> Vec<String> {
    printer(group, kind)
        .columns()
        .iter()
        .map(|c| c.name.to_string())
        .collect()
}

/// (name, type, priority) of every column.
fn column_shapes(group: &str, kind: &str) -> Vec<(String, String, i32)> {
    printer(group, kind)
        .columns()
        .iter()
        .map(|c| (c.name.to_string(), c.type_.to_string(), c.priority))
        .collect()
}

fn shapes(list: &[(&str, &str, i32)]) -> Vec<(String, String, i32)> {
    list.iter()
        .map(|(n, t, p)| ((*n).to_owned(), (*t).to_owned(), *p))
        .collect()
}

#[test]
fn resource_quota_splits_requests_and_limits() {
    let rq = json!({
        "metadata": {"name": "compute", "creationTimestamp": ago(Duration::hours(5))},
        "spec": {"hard": {"pods": "10"}},
        "status": {
            "hard": {"pods": "10", "limits.cpu": "2", "requests.memory": "1024Mi",
                     "limits.memory": "2Gi", "services": "5", "limits": "1"},
            "used": {"pods": "3", "requests.memory": "512Mi", "limits.cpu": "500m"},
        },
    });
    check(
        "",
        "ResourceQuota",
        rq,
        json!([
            "compute",
            "limits: 0/1, pods: 3/10, requests.memory: 512Mi/1Gi, services: 0/5",
            "limits.cpu: 500m/2, limits.memory: 0/2Gi",
            "5h"
        ]),
    );
    // No status yet (no quota controller has run): both columns empty.
    check(
        "",
        "ResourceQuota",
        json!({"metadata": {"name": "q"}, "spec": {"hard": {"pods": "1"}}}),
        json!(["q", "", "", "<unknown>"]),
    );
    assert_eq!(
        column_names("", "ResourceQuota"),
        ["Name", "Request", "Limit", "Age"]
    );
}

#[test]
fn priority_class_value_default_and_policy() {
    let pc = json!({"metadata": {"name": "high", "creationTimestamp": ago(Duration::days(3))},
                    "value": 1000000, "globalDefault": true, "preemptionPolicy": "Never"});
    check(
        "scheduling.k8s.io",
        "PriorityClass",
        pc,
        json!(["high", 1000000, true, "3d", "Never"]),
    );
    check(
        "scheduling.k8s.io",
        "PriorityClass",
        json!({"metadata": {"name": "low"}, "value": -5}),
        json!(["low", -5, false, "<unknown>", ""]),
    );
    assert_eq!(
        column_shapes("scheduling.k8s.io", "PriorityClass"),
        shapes(&[
            ("Name", "string", 0),
            ("Value", "integer", 0),
            ("Global-Default", "boolean", 0),
            ("Age", "string", 0),
            ("PreemptionPolicy", "string", 0),
        ])
    );
}

#[test]
fn certificate_signing_request_condition_and_duration() {
    let csr = |conditions: Value, certificate: Option<&str>, expiration: Option<i64>| {
        let mut obj = json!({
            "metadata": {"name": "csr1", "creationTimestamp": ago(Duration::minutes(5))},
            "spec": {"signerName": "kubernetes.io/kube-apiserver-client", "username": "alice",
                     "request": "LS0t", "usages": ["client auth"]},
            "status": {"conditions": conditions},
        });
        if let Some(c) = certificate {
            obj["status"]["certificate"] = json!(c);
        }
        if let Some(e) = expiration {
            obj["spec"]["expirationSeconds"] = json!(e);
        }
        obj
    };
    let g = "certificates.k8s.io";
    let k = "CertificateSigningRequest";
    check(
        g,
        k,
        csr(json!([]), None, None),
        json!([
            "csr1",
            "5m",
            "kubernetes.io/kube-apiserver-client",
            "alice",
            "<none>",
            "Pending"
        ]),
    );
    check(
        g,
        k,
        csr(json!([{"type": "Approved"}]), Some("Y2VydA=="), Some(3600)),
        json!([
            "csr1",
            "5m",
            "kubernetes.io/kube-apiserver-client",
            "alice",
            "60m",
            "Approved,Issued"
        ]),
    );
    check(
        g,
        k,
        csr(
            json!([{"type": "Approved"}, {"type": "Denied"}, {"type": "Failed"}]),
            None,
            Some(86400 * 2),
        ),
        json!([
            "csr1",
            "5m",
            "kubernetes.io/kube-apiserver-client",
            "alice",
            "2d",
            "Denied,Failed"
        ]),
    );
    check(
        g,
        k,
        json!({"metadata": {"name": "bare"}}),
        json!(["bare", "<unknown>", "<none>", "", "<none>", "Pending"]),
    );
    assert_eq!(
        column_names(g, k),
        [
            "Name",
            "Age",
            "SignerName",
            "Requestor",
            "RequestedDuration",
            "Condition"
        ]
    );
}

#[test]
fn replication_controller_and_pod_template() {
    let rc = json!({
        "metadata": {"name": "rc1", "creationTimestamp": ago(Duration::seconds(30))},
        "spec": {"replicas": 5, "selector": {"b": "2", "a": "1"},
                 "template": {"metadata": {"labels": {"a": "1", "b": "2"}},
                              "spec": {"containers": [{"name": "web", "image": "nginx"},
                                                      {"name": "log", "image": "busybox"}]}}},
        "status": {"replicas": 3, "readyReplicas": 1},
    });
    check(
        "",
        "ReplicationController",
        rc,
        json!(["rc1", 5, 3, 1, "30s", "web,log", "nginx,busybox", "a=1,b=2"]),
    );
    check(
        "",
        "ReplicationController",
        json!({"metadata": {"name": "empty"}}),
        json!(["empty", 0, 0, 0, "<unknown>", "", "", "<none>"]),
    );
    assert_eq!(
        column_shapes("", "ReplicationController"),
        shapes(&[
            ("Name", "string", 0),
            ("Desired", "integer", 0),
            ("Current", "integer", 0),
            ("Ready", "integer", 0),
            ("Age", "string", 0),
            ("Containers", "string", 1),
            ("Images", "string", 1),
            ("Selector", "string", 1),
        ])
    );

    let pt = json!({"metadata": {"name": "pt"},
        "template": {"metadata": {"labels": {"app": "web"}},
                     "spec": {"containers": [{"name": "c", "image": "img:1"}]}}});
    check(
        "",
        "PodTemplate",
        pt,
        json!(["pt", "c", "img:1", "app=web"]),
    );
    check(
        "",
        "PodTemplate",
        json!({"metadata": {"name": "bare"}}),
        json!(["bare", "", "", "<none>"]),
    );
    assert_eq!(
        column_names("", "PodTemplate"),
        ["Name", "Containers", "Images", "Pod Labels"]
    );
}

#[test]
fn controller_revision_names_its_controller() {
    let cr = |owners: Value| {
        json!({
            "metadata": {"name": "web-7d4b9c", "ownerReferences": owners},
            "revision": 3,
        })
    };
    let g = "apps";
    let k = "ControllerRevision";
    check(
        g,
        k,
        cr(json!([
            {"apiVersion": "v1", "kind": "Pod", "name": "p", "uid": "1"},
            {"apiVersion": "apps/v1", "kind": "StatefulSet", "name": "web", "uid": "2", "controller": true},
        ])),
        json!(["web-7d4b9c", "statefulset.apps/web", 3, "<unknown>"]),
    );
    check(
        g,
        k,
        cr(
            json!([{"apiVersion": "v1", "kind": "ReplicationController", "name": "rc",
        "uid": "3", "controller": true}]),
        ),
        json!(["web-7d4b9c", "replicationcontroller/rc", 3]),
    );
    check(
        g,
        k,
        cr(
            json!([{"apiVersion": "apps/v1", "kind": "DaemonSet", "name": "ds", "uid": "4",
        "controller": false}]),
        ),
        json!(["web-7d4b9c", "<none>", 3]),
    );
    check(g, k, cr(json!(null)), json!(["web-7d4b9c", "<none>", 3]));
    assert_eq!(
        column_names(g, k),
        ["Name", "Controller", "Revision", "Age"]
    );
}

#[test]
fn network_policy_pod_selector() {
    let g = "networking.k8s.io";
    check(
        g,
        "NetworkPolicy",
        json!({"metadata": {"name": "deny-all"}, "spec": {"podSelector": {}}}),
        json!(["deny-all", "<none>", "<unknown>"]),
    );
    check(
        g,
        "NetworkPolicy",
        json!({"metadata": {"name": "np"}, "spec": {"podSelector": {
        "matchLabels": {"role": "db"},
        "matchExpressions": [{"key": "tier", "operator": "In", "values": ["b", "a"]}]}}}),
        json!(["np", "role=db,tier in (a,b)"]),
    );
    assert_eq!(
        column_names(g, "NetworkPolicy"),
        ["Name", "Pod-Selector", "Age"]
    );
}

#[test]
fn endpoint_slice_ports_and_endpoints() {
    let g = "discovery.k8s.io";
    let k = "EndpointSlice";
    let slice = json!({
        "metadata": {"name": "svc-abc"},
        "addressType": "IPv4",
        "ports": [{"name": "http", "port": 80, "protocol": "TCP"}, {"name": "named"}, {}, {"port": 9000}],
        "endpoints": [{"addresses": ["10.1.2.3", "10.1.2.4"]}, {"addresses": ["10.1.2.5"]},
                      {"addresses": ["10.1.2.6"]}, {"addresses": ["10.1.2.7"]}],
    });
    check(
        g,
        k,
        slice,
        json!([
            "svc-abc",
            "IPv4",
            "80,named,* + 1 more...",
            "10.1.2.3,10.1.2.4,10.1.2.5 + 2 more...",
            "<unknown>"
        ]),
    );
    check(
        g,
        k,
        json!({"metadata": {"name": "e"}, "addressType": "FQDN", "endpoints": []}),
        json!(["e", "FQDN", "<unset>", "<unset>"]),
    );
    check(
        g,
        k,
        json!({"metadata": {"name": "three"}, "addressType": "IPv6",
        "ports": [{"port": 1}, {"port": 2}, {"port": 3}],
        "endpoints": [{"addresses": ["::1"]}]}),
        json!(["three", "IPv6", "1,2,3", "::1"]),
    );
    assert_eq!(
        column_names(g, k),
        ["Name", "AddressType", "Ports", "Endpoints", "Age"]
    );
}

#[test]
fn storage_class_defaults_and_default_marker() {
    let g = "storage.k8s.io";
    check(
        g,
        "StorageClass",
        json!({"metadata": {"name": "standard", "annotations":
        {"storageclass.kubernetes.io/is-default-class": "true"}}, "provisioner": "kubernetes.io/gce-pd"}),
        json!([
            "standard (default)",
            "kubernetes.io/gce-pd",
            "Delete",
            "Immediate",
            false,
            "<unknown>"
        ]),
    );
    check(
        g,
        "StorageClass",
        json!({"metadata": {"name": "fast", "annotations":
        {"storageclass.beta.kubernetes.io/is-default-class": "true",
         "storageclass.kubernetes.io/is-default-class": "false"}},
        "provisioner": "csi.example.com", "reclaimPolicy": "Retain",
        "volumeBindingMode": "WaitForFirstConsumer", "allowVolumeExpansion": true}),
        json!([
            "fast (default)",
            "csi.example.com",
            "Retain",
            "WaitForFirstConsumer",
            true
        ]),
    );
    check(
        g,
        "StorageClass",
        json!({"metadata": {"name": "slow", "annotations":
        {"storageclass.kubernetes.io/is-default-class": "yes"}}, "provisioner": "p"}),
        json!(["slow", "p"]),
    );
    assert_eq!(
        column_names(g, "StorageClass"),
        [
            "Name",
            "Provisioner",
            "ReclaimPolicy",
            "VolumeBindingMode",
            "AllowVolumeExpansion",
            "Age"
        ]
    );
}

#[test]
fn ingress_class_and_runtime_class() {
    let g = "networking.k8s.io";
    check(
        g,
        "IngressClass",
        json!({"metadata": {"name": "nginx"}, "spec": {
        "controller": "k8s.io/ingress-nginx",
        "parameters": {"apiGroup": "k8s.example.com", "kind": "IngressParameters", "name": "external-lb"}}}),
        json!([
            "nginx",
            "k8s.io/ingress-nginx",
            "IngressParameters.k8s.example.com/external-lb",
            "<unknown>"
        ]),
    );
    check(
        g,
        "IngressClass",
        json!({"metadata": {"name": "plain"}, "spec": {
        "controller": "c", "parameters": {"kind": "ConfigMap", "name": "cm"}}}),
        json!(["plain", "c", "ConfigMap/cm"]),
    );
    check(
        g,
        "IngressClass",
        json!({"metadata": {"name": "none"}, "spec": {"controller": "c"}}),
        json!(["none", "c", "<none>"]),
    );
    assert_eq!(
        column_names(g, "IngressClass"),
        ["Name", "Controller", "Parameters", "Age"]
    );

    check(
        "node.k8s.io",
        "RuntimeClass",
        json!({"metadata": {"name": "gvisor"}, "handler": "runsc"}),
        json!(["gvisor", "runsc", "<unknown>"]),
    );
    assert_eq!(
        column_names("node.k8s.io", "RuntimeClass"),
        ["Name", "Handler", "Age"]
    );
}

#[test]
fn api_service_service_and_availability() {
    let g = "apiregistration.k8s.io";
    let k = "APIService";
    check(
        g,
        k,
        json!({"metadata": {"name": "v1."}, "spec": {"version": "v1", "groupPriorityMinimum": 18000,
        "versionPriority": 1}, "status": {"conditions": [{"type": "Available", "status": "True",
        "reason": "Local"}]}}),
        json!(["v1.", "Local", "True", "<unknown>"]),
    );
    check(
        g,
        k,
        json!({"metadata": {"name": "v1beta1.metrics.k8s.io"}, "spec": {"service":
        {"namespace": "kube-system", "name": "metrics-server"}}, "status": {"conditions": [
        {"type": "Available", "status": "False", "reason": "MissingEndpoints"}]}}),
        json!([
            "v1beta1.metrics.k8s.io",
            "kube-system/metrics-server",
            "False (MissingEndpoints)"
        ]),
    );
    check(
        g,
        k,
        json!({"metadata": {"name": "a"}, "status": {"conditions": [
        {"type": "Available", "status": "False"}]}}),
        json!(["a", "Local", "False"]),
    );
    check(
        g,
        k,
        json!({"metadata": {"name": "b"}}),
        json!(["b", "Local", "Unknown"]),
    );
    assert_eq!(column_names(g, k), ["Name", "Service", "Available", "Age"]);
}

#[test]
fn flow_schema_cells_and_list_order() {
    let g = "flowcontrol.apiserver.k8s.io";
    let fs = |name: &str, precedence: i64| {
        json!({
            "metadata": {"name": name},
            "spec": {"priorityLevelConfiguration": {"name": "workload-low"},
                     "matchingPrecedence": precedence, "distinguisherMethod": {"type": "ByUser"}},
        })
    };
    check(
        g,
        "FlowSchema",
        fs("service-accounts", 9000),
        json!([
            "service-accounts",
            "workload-low",
            9000,
            "ByUser",
            "<unknown>",
            "?"
        ]),
    );
    let mut dangling = fs("d", 1);
    dangling["spec"]["distinguisherMethod"] = Value::Null;
    dangling["status"] = json!({"conditions": [{"type": "Dangling", "status": "False"}]});
    check(
        g,
        "FlowSchema",
        dangling,
        json!(["d", "workload-low", 1, "<none>", "<unknown>", "False"]),
    );
    assert_eq!(
        column_names(g, "FlowSchema"),
        [
            "Name",
            "PriorityLevel",
            "MatchingPrecedence",
            "DistinguisherMethod",
            "Age",
            "MissingPL"
        ]
    );

    let list = [
        fs("zeta", 100),
        fs("beta", 500),
        fs("alpha", 100),
        fs("exempt", 1),
    ];
    let t = table(
        g,
        "FlowSchema",
        &list,
        &ListMeta::default(),
        IncludeObject::None,
        now(),
    );
    let names: Vec<&Value> = t["rows"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| &r["cells"][0])
        .collect();
    assert_eq!(
        names,
        [
            &json!("exempt"),
            &json!("alpha"),
            &json!("zeta"),
            &json!("beta")
        ]
    );
    // Other kinds keep storage order.
    let cms = [
        json!({"metadata": {"name": "b"}}),
        json!({"metadata": {"name": "a"}}),
    ];
    let t = table(
        "",
        "ConfigMap",
        &cms,
        &ListMeta::default(),
        IncludeObject::None,
        now(),
    );
    assert_eq!(t["rows"][0]["cells"][0], "b");
}

#[test]
fn priority_level_configuration_limited_and_exempt() {
    let g = "flowcontrol.apiserver.k8s.io";
    let k = "PriorityLevelConfiguration";
    check(
        g,
        k,
        json!({"metadata": {"name": "exempt"}, "spec": {"type": "Exempt", "exempt": {}}}),
        json!([
            "exempt",
            "Exempt",
            "<none>",
            "<none>",
            "<none>",
            "<none>",
            "<unknown>"
        ]),
    );
    check(
        g,
        k,
        json!({"metadata": {"name": "global-default"}, "spec": {"type": "Limited", "limited": {
        "nominalConcurrencyShares": 20, "lendablePercent": 50,
        "limitResponse": {"type": "Queue", "queuing": {"queues": 128, "handSize": 6, "queueLengthLimit": 50}}}}}),
        json!(["global-default", "Limited", 20, 128, 6, 50]),
    );
    check(
        g,
        k,
        json!({"metadata": {"name": "catch-all"}, "spec": {"type": "Limited", "limited": {
        "nominalConcurrencyShares": 5, "limitResponse": {"type": "Reject"}}}}),
        json!(["catch-all", "Limited", 5, "<none>", "<none>", "<none>"]),
    );
    assert_eq!(
        column_names(g, k),
        [
            "Name",
            "Type",
            "NominalConcurrencyShares",
            "Queues",
            "HandSize",
            "QueueLengthLimit",
            "Age"
        ]
    );
}

#[test]
fn csi_kinds_and_volume_attachment() {
    let g = "storage.k8s.io";
    check(
        g,
        "CSIDriver",
        json!({"metadata": {"name": "csi.example.com"}, "spec": {}}),
        json!([
            "csi.example.com",
            true,
            false,
            false,
            "<unset>",
            false,
            "<none>",
            "<unknown>"
        ]),
    );
    check(
        g,
        "CSIDriver",
        json!({"metadata": {"name": "d"}, "spec": {"attachRequired": false,
        "podInfoOnMount": true, "storageCapacity": true, "requiresRepublish": true,
        "tokenRequests": [{"audience": "a"}, {"audience": "b", "expirationSeconds": 3600}],
        "volumeLifecycleModes": ["Persistent", "Ephemeral"]}}),
        json!(["d", false, true, true, "a,b", true, "Persistent,Ephemeral"]),
    );
    check(
        g,
        "CSIDriver",
        json!({"metadata": {"name": "e"}, "spec": {"tokenRequests": []}}),
        json!(["e", true, false, false, ""]),
    );
    assert_eq!(
        column_shapes(g, "CSIDriver"),
        shapes(&[
            ("Name", "string", 0),
            ("AttachRequired", "boolean", 0),
            ("PodInfoOnMount", "boolean", 0),
            ("StorageCapacity", "boolean", 0),
            ("TokenRequests", "string", 0),
            ("RequiresRepublish", "boolean", 0),
            ("Modes", "string", 0),
            ("Age", "string", 0),
        ])
    );

    check(
        g,
        "CSINode",
        json!({"metadata": {"name": "node1"}, "spec": {"drivers": [
        {"name": "a", "nodeID": "n"}, {"name": "b", "nodeID": "n"}]}}),
        json!(["node1", 2, "<unknown>"]),
    );
    assert_eq!(column_names(g, "CSINode"), ["Name", "Drivers", "Age"]);

    check(
        g,
        "CSIStorageCapacity",
        json!({"metadata": {"name": "cap"}, "storageClassName": "fast",
        "capacity": "1024Mi"}),
        json!(["cap", "fast", "1Gi"]),
    );
    check(
        g,
        "CSIStorageCapacity",
        json!({"metadata": {"name": "cap"}, "storageClassName": "fast"}),
        json!(["cap", "fast", "<unset>"]),
    );
    assert_eq!(
        column_names(g, "CSIStorageCapacity"),
        ["Name", "StorageClassName", "Capacity"]
    );

    check(
        g,
        "VolumeAttachment",
        json!({"metadata": {"name": "va"}, "spec": {"attacher": "csi.example.com",
        "nodeName": "node1", "source": {"persistentVolumeName": "pv1"}}, "status": {"attached": true}}),
        json!(["va", "csi.example.com", "pv1", "node1", true, "<unknown>"]),
    );
    check(
        g,
        "VolumeAttachment",
        json!({"metadata": {"name": "inline"}, "spec": {"attacher": "a",
        "nodeName": "n", "source": {"inlineVolumeSpec": {}}}}),
        json!(["inline", "a", "", "n", false]),
    );
    let attacher = &printer(g, "VolumeAttachment").columns()[1];
    assert_eq!(
        (attacher.name.as_ref(), attacher.format.as_ref()),
        ("Attacher", "name")
    );
}

#[test]
fn webhook_configurations_and_admission_policies() {
    let g = "admissionregistration.k8s.io";
    for kind in [
        "MutatingWebhookConfiguration",
        "ValidatingWebhookConfiguration",
    ] {
        check(
            g,
            kind,
            json!({"metadata": {"name": "hooks"}, "webhooks": [{"name": "a.example.com"},
            {"name": "b.example.com"}]}),
            json!(["hooks", 2, "<unknown>"]),
        );
        check(
            g,
            kind,
            json!({"metadata": {"name": "none"}}),
            json!(["none", 0]),
        );
        assert_eq!(
            column_shapes(g, kind),
            shapes(&[
                ("Name", "string", 0),
                ("Webhooks", "integer", 0),
                ("Age", "string", 0)
            ])
        );
    }
    check(
        g,
        "ValidatingAdmissionPolicy",
        json!({"metadata": {"name": "p"}, "spec": {
        "paramKind": {"apiVersion": "v1", "kind": "ConfigMap"},
        "validations": [{"expression": "true"}, {"expression": "1 == 1"}]}}),
        json!(["p", 2, "v1/ConfigMap", "<unknown>"]),
    );
    check(
        g,
        "ValidatingAdmissionPolicy",
        json!({"metadata": {"name": "q"}, "spec": {}}),
        json!(["q", 0, "<unset>"]),
    );
    assert_eq!(
        column_names(g, "ValidatingAdmissionPolicy"),
        ["Name", "Validations", "ParamKind", "Age"]
    );

    let b = "ValidatingAdmissionPolicyBinding";
    let binding = |param: Value| {
        json!({"metadata": {"name": "b"}, "spec": {"policyName": "p",
        "paramRef": param, "validationActions": ["Deny"]}})
    };
    check(
        g,
        b,
        binding(json!({"name": "cm", "namespace": "ns"})),
        json!(["b", "p", "ns/cm", "<unknown>"]),
    );
    check(
        g,
        b,
        binding(json!({"name": "cm"})),
        json!(["b", "p", "*/cm"]),
    );
    check(g, b, binding(json!(null)), json!(["b", "p", "<unset>"]));
    check(
        g,
        b,
        binding(json!({"parameterNotFoundAction": "Deny"})),
        json!(["b", "p", "<unset>"]),
    );
    check(
        g,
        b,
        binding(json!({"selector": {"matchLabels": {"b": "2", "a": "1"},
        "matchExpressions": [{"key": "env", "operator": "In", "values": ["prod", "dev"]},
                             {"key": "x", "operator": "Exists"}]}})),
        json!([
            "b",
            "p",
            "&LabelSelector{MatchLabels:map[string]string{a: 1,b: 2,},MatchExpressions:[]LabelSelectorRequirement{LabelSelectorRequirement{Key:env,Operator:In,Values:[prod dev],},LabelSelectorRequirement{Key:x,Operator:Exists,Values:[],},},}"
        ]),
    );
    check(
        g,
        b,
        binding(json!({"selector": {}})),
        json!([
            "b",
            "p",
            "&LabelSelector{MatchLabels:map[string]string{},MatchExpressions:[]LabelSelectorRequirement{},}"
        ]),
    );
    assert_eq!(
        column_names(g, b),
        ["Name", "PolicyName", "ParamRef", "Age"]
    );
}

#[test]
fn service_cidr_and_ip_address() {
    let g = "networking.k8s.io";
    check(
        g,
        "ServiceCIDR",
        json!({"metadata": {"name": "kubernetes"}, "spec": {"cidrs":
        ["10.96.0.0/12", "fd00::/108"]}}),
        json!(["kubernetes", "10.96.0.0/12,fd00::/108", "<unknown>"]),
    );
    assert_eq!(column_names(g, "ServiceCIDR"), ["Name", "CIDRs", "Age"]);

    // Upstream's IPAddress rows have one more cell (the age) than columns.
    let ip = json!({"metadata": {"name": "10.96.0.1", "creationTimestamp": ago(Duration::minutes(1))},
        "spec": {"parentRef": {"group": "", "resource": "services", "namespace": "default",
                               "name": "kubernetes"}}});
    assert_eq!(
        cells(g, "IPAddress", &ip),
        [
            json!("10.96.0.1"),
            json!("services/default/kubernetes"),
            json!("60s")
        ]
    );
    let gateway = json!({"metadata": {"name": "2001:db8::1"}, "spec": {"parentRef": {
        "group": "Gateway.Networking.K8s.io", "resource": "Gateways", "name": "GW"}}});
    assert_eq!(
        cells(g, "IPAddress", &gateway)[1],
        "gateways.gateway.networking.k8s.io/GW"
    );
    assert_eq!(
        cells(g, "IPAddress", &json!({"metadata": {"name": "x"}}))[1],
        "<none>"
    );
    assert_eq!(column_names(g, "IPAddress"), ["Name", "ParentRef"]);
}

#[test]
fn component_status_conditions() {
    check(
        "",
        "ComponentStatus",
        json!({"metadata": {"name": "etcd-0"}, "conditions": [
        {"type": "Healthy", "status": "True", "message": "ok"}]}),
        json!(["etcd-0", "Healthy", "ok", ""]),
    );
    check(
        "",
        "ComponentStatus",
        json!({"metadata": {"name": "scheduler"}, "conditions": [
        {"type": "Healthy", "status": "False", "message": "", "error": "connection refused"}]}),
        json!(["scheduler", "Unhealthy", "", "connection refused"]),
    );
    check(
        "",
        "ComponentStatus",
        json!({"metadata": {"name": "x"}}),
        json!(["x", "Unknown", "", ""]),
    );
    assert_eq!(
        column_names("", "ComponentStatus"),
        ["Name", "Status", "Message", "Error"]
    );
}

#[test]
fn scale_subresource() {
    let scale = json!({"kind": "Scale", "apiVersion": "autoscaling/v1",
        "metadata": {"name": "web", "namespace": "default", "creationTimestamp": ago(Duration::minutes(3))},
        "spec": {"replicas": 3}, "status": {"replicas": 2, "selector": "app=web"}});
    check("autoscaling", "Scale", scale, json!(["web", 3, 2, "3m"]));
    assert_eq!(
        column_shapes("autoscaling", "Scale"),
        shapes(&[
            ("Name", "string", 0),
            ("Desired", "integer", 0),
            ("Available", "integer", 0),
            ("Age", "string", 0),
        ])
    );
    assert_eq!(printer("autoscaling", "Scale").columns()[0].format, "");
}
