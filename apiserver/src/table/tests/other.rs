//! Ingress, HPA, PDB, RBAC bindings and Lease: `TestPrintIngress`,
//! `TestPrintHPA`, `TestPrintPodDisruptionBudget`, `TestPrintRoleBinding`,
//! `TestPrintClusterRoleBinding`, `TestPrintLease`.

use serde_json::{Value, json};

use super::{check, just_now};

#[test]
fn ingress() {
    let ing = json!({
        "metadata": {"name": "test1", "creationTimestamp": just_now()},
        "spec": {
            "ingressClassName": "foo",
            "defaultBackend": {"service": {"name": "default-backend", "port": {"name": "default-backend"}}},
            "rules": [{"host": "foo.bar.com"}],
        },
        "status": {"loadBalancer": {"ingress": [{"ip": "2.3.4.5", "hostname": "localhost.localdomain"}]}},
    });
    check(
        "networking.k8s.io",
        "Ingress",
        ing,
        json!(["test1", "foo", "foo.bar.com", "2.3.4.5", "80", "0s"]),
    );
    let many = json!({
        "metadata": {"name": "many"},
        "spec": {"rules": [{"host": "a"}, {}, {"host": "b"}, {"host": "c"}, {"host": "d"}, {"host": "e"}],
                 "tls": [{"hosts": ["a"]}]},
        "status": {"loadBalancer": {"ingress": [{"hostname": "lb.example.com"}, {"ip": "1.1.1.1"}]}},
    });
    check(
        "networking.k8s.io",
        "Ingress",
        many,
        json!([
            "many",
            "<none>",
            "a,b,c + 3 more...",
            "1.1.1.1,lb.example.com",
            "80, 443",
            "<unknown>"
        ]),
    );
    check(
        "networking.k8s.io",
        "Ingress",
        json!({"metadata": {"name": "i"}, "spec": {"rules": [{}]}}),
        json!(["i", "<none>", "*", "", "80"]),
    );
}

fn hpa(metrics: Value, current: Value) -> Value {
    json!({
        "metadata": {"name": "some-hpa"},
        "spec": {"scaleTargetRef": {"name": "some-rc", "kind": "ReplicationController"},
                 "minReplicas": 2, "maxReplicas": 10, "metrics": metrics},
        "status": {"currentReplicas": 4, "desiredReplicas": 5, "currentMetrics": current},
    })
}

fn check_targets(h: Value, targets: &str) {
    check(
        "autoscaling",
        "HorizontalPodAutoscaler",
        h,
        json!([
            "some-hpa",
            "ReplicationController/some-rc",
            targets,
            "2",
            10,
            4,
            "<unknown>"
        ]),
    );
}

#[test]
fn hpa_targets() {
    let unset = json!({"metadata": {"name": "some-hpa"},
        "spec": {"scaleTargetRef": {"name": "some-rc", "kind": "ReplicationController"}, "maxReplicas": 10},
        "status": {"currentReplicas": 4, "desiredReplicas": 5}});
    check(
        "autoscaling",
        "HorizontalPodAutoscaler",
        unset,
        json!([
            "some-hpa",
            "ReplicationController/some-rc",
            "<none>",
            "<unset>",
            10,
            4,
            "<unknown>"
        ]),
    );

    let selector = json!({"matchLabels": {"label": "value"}});
    let external_avg = json!([{"type": "External", "external": {
        "metric": {"name": "some-external-metric", "selector": selector},
        "target": {"type": "AverageValue", "averageValue": "100m"}}}]);
    check_targets(
        hpa(external_avg.clone(), json!(null)),
        "<unknown>/100m (avg)",
    );
    check_targets(
        hpa(
            external_avg,
            json!([{"type": "External", "external": {
            "metric": {"name": "some-external-metric"}, "current": {"averageValue": "50m"}}}]),
        ),
        "50m/100m (avg)",
    );
    let external_value = json!([{"type": "External", "external": {
        "metric": {"name": "some-service-metric"}, "target": {"type": "Value", "value": "100m"}}}]);
    check_targets(hpa(external_value.clone(), json!([])), "<unknown>/100m");
    check_targets(
        hpa(
            external_value,
            json!([{"type": "External", "external": {"current": {"value": "50m"}}}]),
        ),
        "50m/100m",
    );

    let pods = json!([{"type": "Pods", "pods": {"metric": {"name": "some-pods-metric"},
        "target": {"type": "AverageValue", "averageValue": "100m"}}}]);
    check_targets(hpa(pods.clone(), json!([])), "<unknown>/100m");
    check_targets(
        hpa(
            pods,
            json!([{"type": "Pods", "pods": {"current": {"averageValue": "50m"}}}]),
        ),
        "50m/100m",
    );

    let object = json!([{"type": "Object", "object": {
        "describedObject": {"name": "some-service", "kind": "Service"},
        "metric": {"name": "some-service-metric"}, "target": {"type": "Value", "value": "100m"}}}]);
    check_targets(hpa(object.clone(), json!([])), "<unknown>/100m");
    check_targets(
        hpa(
            object,
            json!([{"type": "Object", "object": {"current": {"value": "50m"}}}]),
        ),
        "50m/100m",
    );

    for kind in ["Resource", "ContainerResource"] {
        let key = if kind == "Resource" {
            "resource"
        } else {
            "containerResource"
        };
        let spec = |target: Value| json!([{"type": kind, key: {"name": "cpu", "container": "application", "target": target}}]);
        let value = spec(json!({"type": "AverageValue", "averageValue": "100m"}));
        check_targets(hpa(value.clone(), json!([])), "cpu: <unknown>/100m");
        check_targets(
            hpa(
                value,
                json!([{"type": kind, key: {"name": "cpu", "current": {"averageValue": "50m"}}}]),
            ),
            "cpu: 50m/100m",
        );
        let util = spec(json!({"type": "Utilization", "averageUtilization": 80}));
        check_targets(hpa(util.clone(), json!([])), "cpu: <unknown>/80%");
        check_targets(
            hpa(
                util,
                json!([{"type": kind, key: {"name": "cpu",
                "current": {"averageUtilization": 50, "averageValue": "40m"}}}]),
            ),
            "cpu: 50%/80%",
        );
    }

    // Multiple specs: at most two, then "+ N more...".
    let multiple = json!([
        {"type": "Pods", "pods": {"metric": {"name": "some-pods-metric"},
            "target": {"type": "AverageValue", "averageValue": "100m"}}},
        {"type": "Resource", "resource": {"name": "cpu", "target": {"type": "Utilization", "averageUtilization": 80}}},
        {"type": "Pods", "pods": {"metric": {"name": "other-pods-metric"},
            "target": {"type": "AverageValue", "averageValue": "400m"}}},
    ]);
    let current = json!([
        {"type": "Pods", "pods": {"current": {"averageValue": "50m"}}},
        {"type": "Resource", "resource": {"name": "cpu", "current": {"averageUtilization": 50, "averageValue": "40m"}}},
    ]);
    check_targets(hpa(multiple, current), "50m/100m, cpu: 50%/80% + 1 more...");

    // Canonical quantities, <auto>, <nil> and unknown types.
    let memory = json!([{"type": "Resource", "resource": {"name": "memory",
        "target": {"type": "AverageValue", "averageValue": "1024Mi"}}}]);
    check_targets(
        hpa(
            memory,
            json!([{"type": "Resource", "resource": {"current": {"averageValue": "0.5Gi"}}}]),
        ),
        "memory: 512Mi/1Gi",
    );
    check_targets(
        hpa(
            json!([{"type": "Resource", "resource": {"name": "cpu", "target": {}}}]),
            json!([]),
        ),
        "cpu: <unknown>/<auto>",
    );
    check_targets(
        hpa(json!([{"type": "Pods", "pods": {}}]), json!([{"pods": {}}])),
        "<nil>/<nil>",
    );
    check_targets(
        hpa(json!([{"type": "Custom"}]), json!([])),
        "<unknown type>",
    );
}

#[test]
fn hpa_autoscaling_v1() {
    let v1 = json!({
        "metadata": {"name": "some-hpa"},
        "spec": {"scaleTargetRef": {"name": "web", "kind": "Deployment"}, "minReplicas": 1, "maxReplicas": 5,
                 "targetCPUUtilizationPercentage": 70},
        "status": {"currentReplicas": 2, "currentCPUUtilizationPercentage": 35},
    });
    check(
        "autoscaling",
        "HorizontalPodAutoscaler",
        v1,
        json!(["some-hpa", "Deployment/web", "cpu: 35%/70%", "1", 5, 2]),
    );
}

#[test]
fn pod_disruption_budget() {
    let pdb = |spec: Value, allowed: i64| {
        json!({"metadata": {"name": "pdb", "namespace": "ns1", "creationTimestamp": just_now()},
               "spec": spec, "status": {"disruptionsAllowed": allowed}})
    };
    check(
        "policy",
        "PodDisruptionBudget",
        pdb(json!({"minAvailable": 22}), 5),
        json!(["pdb", "22", "N/A", 5, "0s"]),
    );
    check(
        "policy",
        "PodDisruptionBudget",
        pdb(json!({"maxUnavailable": 11}), 5),
        json!(["pdb", "N/A", "11", 5, "0s"]),
    );
    check(
        "policy",
        "PodDisruptionBudget",
        pdb(json!({"maxUnavailable": "25%"}), 3),
        json!(["pdb", "N/A", "25%", 3, "0s"]),
    );
}

#[test]
fn role_bindings() {
    for kind in ["RoleBinding", "ClusterRoleBinding"] {
        let basic = json!({
            "metadata": {"name": "binding1", "creationTimestamp": just_now()},
            "subjects": [{"kind": "User", "name": "system:kube-controller-manager"}],
            "roleRef": {"kind": "Role", "name": "extension-apiserver-authentication-reader"},
        });
        check(
            "rbac.authorization.k8s.io",
            kind,
            basic,
            json!([
                "binding1",
                "Role/extension-apiserver-authentication-reader",
                "0s",
                "system:kube-controller-manager",
                "",
                ""
            ]),
        );
        let wide = json!({
            "metadata": {"name": "binding2", "creationTimestamp": just_now()},
            "subjects": [
                {"kind": "User", "name": "user-name"},
                {"kind": "Group", "name": "group-name"},
                {"kind": "ServiceAccount", "name": "service-account-name", "namespace": "service-account-namespace"},
                {"kind": "User", "name": "second"},
                {"kind": "Robot", "name": "ignored"},
            ],
            "roleRef": {"kind": "Role", "name": "role-name"},
        });
        check(
            "rbac.authorization.k8s.io",
            kind,
            wide,
            json!([
                "binding2",
                "Role/role-name",
                "0s",
                "user-name, second",
                "group-name",
                "service-account-namespace/service-account-name"
            ]),
        );
    }
    // Roles have no printer upstream: the default table.
    let role = json!({"metadata": {"name": "r", "creationTimestamp": "2024-01-02T03:04:05Z"}});
    check(
        "rbac.authorization.k8s.io",
        "Role",
        role,
        json!(["r", "2024-01-02T03:04:05Z"]),
    );
}

#[test]
fn lease() {
    let lease = json!({"metadata": {"name": "lease1", "creationTimestamp": just_now()},
                       "spec": {"holderIdentity": "holder1"}});
    check(
        "coordination.k8s.io",
        "Lease",
        lease,
        json!(["lease1", "holder1", "0s"]),
    );
    check(
        "coordination.k8s.io",
        "Lease",
        json!({"metadata": {"name": "l"}, "spec": {}}),
        json!(["l", "", "<unknown>"]),
    );
}
