//! Expected values are what kube-apiserver 1.33 stores for the same input
//! (the `kubectl create …` generators' objects, read back with
//! `kubectl get -o json`, minus server-set metadata and status).

use serde_json::{Value, json};

use super::*;

fn defaulted(group: &str, version: &str, kind: &str, mut obj: Value) -> Value {
    apply(group, version, kind, &mut obj, true);
    // Idempotent: a second pass changes nothing.
    let mut again = obj.clone();
    apply(group, version, kind, &mut again, false);
    assert_eq!(again, obj, "defaulting {kind} twice differs");
    obj
}

fn nginx_pod_spec() -> Value {
    json!({
        "containers": [{
            "image": "nginx",
            "imagePullPolicy": "Always",
            "name": "nginx",
            "resources": {},
            "terminationMessagePath": "/dev/termination-log",
            "terminationMessagePolicy": "File",
        }],
        "dnsPolicy": "ClusterFirst",
        "restartPolicy": "Always",
        "schedulerName": "default-scheduler",
        "securityContext": {},
        "terminationGracePeriodSeconds": 30,
    })
}

#[test]
fn deployment_like_kubectl_create_deployment() {
    // kubectl create deployment nginx --image=nginx
    let obj = json!({
        "apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": {"name": "nginx", "labels": {"app": "nginx"}},
        "spec": {
            "replicas": 1,
            "selector": {"matchLabels": {"app": "nginx"}},
            "strategy": {},
            "template": {
                "metadata": {"labels": {"app": "nginx"}},
                "spec": {"containers": [{"image": "nginx", "name": "nginx", "resources": {}}]},
            },
        },
    });
    let got = defaulted("apps", "v1", "Deployment", obj);
    assert_eq!(
        got["spec"],
        json!({
            "progressDeadlineSeconds": 600,
            "replicas": 1,
            "revisionHistoryLimit": 10,
            "selector": {"matchLabels": {"app": "nginx"}},
            "strategy": {
                "rollingUpdate": {"maxSurge": "25%", "maxUnavailable": "25%"},
                "type": "RollingUpdate",
            },
            "template": {
                "metadata": {"creationTimestamp": null, "labels": {"app": "nginx"}},
                "spec": nginx_pod_spec(),
            },
        })
    );
}

#[test]
fn recreate_strategy_gets_no_rolling_update() {
    let obj = json!({"spec": {"strategy": {"type": "Recreate"}, "template": {"spec": {"containers": []}}}});
    let got = defaulted("apps", "v1", "Deployment", obj);
    assert_eq!(got["spec"]["strategy"], json!({"type": "Recreate"}));
}

#[test]
fn statefulset_and_claim_templates() {
    let obj = json!({
        "spec": {
            "serviceName": "web",
            "selector": {"matchLabels": {"app": "web"}},
            "template": {"metadata": {"labels": {"app": "web"}},
                "spec": {"containers": [{"name": "web", "image": "registry.k8s.io/nginx-slim:0.24",
                    "ports": [{"containerPort": 80, "name": "web"}],
                    "volumeMounts": [{"name": "www", "mountPath": "/usr/share/nginx/html"}]}]}},
            "volumeClaimTemplates": [{"metadata": {"name": "www"},
                "spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}}}],
        },
    });
    let got = defaulted("apps", "v1", "StatefulSet", obj);
    let spec = &got["spec"];
    assert_eq!(spec["podManagementPolicy"], "OrderedReady");
    assert_eq!(spec["replicas"], 1);
    assert_eq!(spec["revisionHistoryLimit"], 10);
    assert_eq!(
        spec["updateStrategy"],
        json!({"type": "RollingUpdate", "rollingUpdate": {"partition": 0}})
    );
    assert_eq!(
        spec["persistentVolumeClaimRetentionPolicy"],
        json!({"whenDeleted": "Retain", "whenScaled": "Retain"})
    );
    assert_eq!(
        spec["volumeClaimTemplates"][0],
        json!({"metadata": {"name": "www", "creationTimestamp": null},
            "spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}, "volumeMode": "Filesystem"},
            "status": {"phase": "Pending"}})
    );
    let c = &spec["template"]["spec"]["containers"][0];
    assert_eq!(c["imagePullPolicy"], "IfNotPresent");
    assert_eq!(c["ports"][0]["protocol"], "TCP");
    // OnDelete keeps no rollingUpdate.
    let ondelete = defaulted(
        "apps",
        "v1",
        "StatefulSet",
        json!({"spec": {"updateStrategy": {"type": "OnDelete"}}}),
    );
    assert_eq!(
        ondelete["spec"]["updateStrategy"],
        json!({"type": "OnDelete"})
    );
}

#[test]
fn daemonset() {
    let got = defaulted(
        "apps",
        "v1",
        "DaemonSet",
        json!({"spec": {"template": {"spec": {}}}}),
    );
    assert_eq!(
        got["spec"]["updateStrategy"],
        json!({"type": "RollingUpdate", "rollingUpdate": {"maxSurge": 0, "maxUnavailable": 1}})
    );
    assert_eq!(got["spec"]["revisionHistoryLimit"], 10);
}

#[test]
fn job_like_kubectl_create_job() {
    // kubectl create job pi --image=perl:5.34.0 -- perl -e 1
    let obj = json!({
        "metadata": {"name": "pi", "uid": "0b6c8f7e-0000-4000-8000-000000000001"},
        "spec": {"template": {"metadata": {}, "spec": {
            "containers": [{"name": "pi", "image": "perl:5.34.0", "command": ["perl", "-e", "1"], "resources": {}}],
            "restartPolicy": "Never"}}},
    });
    let mut got = defaulted("batch", "v1", "Job", obj);
    job_selector(&mut got);
    let uid = "0b6c8f7e-0000-4000-8000-000000000001";
    let labels = json!({
        "batch.kubernetes.io/controller-uid": uid,
        "batch.kubernetes.io/job-name": "pi",
        "controller-uid": uid,
        "job-name": "pi",
    });
    assert_eq!(got["metadata"]["labels"], labels);
    let spec = &got["spec"];
    assert_eq!(spec["backoffLimit"], 6);
    assert_eq!(spec["completionMode"], "NonIndexed");
    assert_eq!(spec["completions"], 1);
    assert_eq!(spec["parallelism"], 1);
    assert_eq!(spec["podReplacementPolicy"], "TerminatingOrFailed");
    assert_eq!(spec["suspend"], false);
    assert_eq!(spec["manualSelector"], Value::Null);
    assert_eq!(
        spec["selector"],
        json!({"matchLabels": {"batch.kubernetes.io/controller-uid": uid}})
    );
    assert_eq!(
        spec["template"]["metadata"],
        json!({"creationTimestamp": null, "labels": labels})
    );
    assert_eq!(spec["template"]["spec"]["restartPolicy"], "Never");
    // parallelism alone leaves completions unset.
    let p = defaulted("batch", "v1", "Job", json!({"spec": {"parallelism": 3}}));
    assert_eq!(p["spec"]["completions"], Value::Null);
}

#[test]
fn cronjob_like_kubectl_create_cronjob() {
    let obj = json!({"spec": {"schedule": "*/1 * * * *", "jobTemplate": {"metadata": {"name": "x"},
        "spec": {"template": {"metadata": {}, "spec": {"containers": [{"name": "x", "image": "busybox", "resources": {}}], "restartPolicy": "OnFailure"}}}}}});
    let got = defaulted("batch", "v1", "CronJob", obj);
    let spec = &got["spec"];
    assert_eq!(spec["concurrencyPolicy"], "Allow");
    assert_eq!(spec["failedJobsHistoryLimit"], 1);
    assert_eq!(spec["successfulJobsHistoryLimit"], 3);
    assert_eq!(spec["suspend"], false);
    assert_eq!(
        spec["jobTemplate"]["metadata"],
        json!({"name": "x", "creationTimestamp": null})
    );
    // The job template is not defaulted as a Job.
    assert_eq!(spec["jobTemplate"]["spec"]["backoffLimit"], Value::Null);
    assert_eq!(
        spec["jobTemplate"]["spec"]["template"]["spec"]["containers"][0]["imagePullPolicy"],
        "Always"
    );
}

#[test]
fn pod_like_kubectl_run() {
    // kubectl run nginx --image=nginx:1.27
    let obj = json!({"metadata": {"name": "nginx", "labels": {"run": "nginx"}},
        "spec": {"containers": [{"name": "nginx", "image": "nginx:1.27", "resources": {}}], "dnsPolicy": "ClusterFirst", "restartPolicy": "Always"}});
    let got = defaulted("", "v1", "Pod", obj);
    assert_eq!(
        got["spec"],
        json!({
            "containers": [{
                "image": "nginx:1.27", "imagePullPolicy": "IfNotPresent", "name": "nginx", "resources": {},
                "terminationMessagePath": "/dev/termination-log", "terminationMessagePolicy": "File",
            }],
            "dnsPolicy": "ClusterFirst",
            "enableServiceLinks": true,
            "preemptionPolicy": "PreemptLowerPriority",
            "priority": 0,
            "restartPolicy": "Always",
            "schedulerName": "default-scheduler",
            "securityContext": {},
            "serviceAccount": "default",
            "serviceAccountName": "default",
            "terminationGracePeriodSeconds": 30,
            "tolerations": [
                {"effect": "NoExecute", "key": "node.kubernetes.io/not-ready", "operator": "Exists", "tolerationSeconds": 300},
                {"effect": "NoExecute", "key": "node.kubernetes.io/unreachable", "operator": "Exists", "tolerationSeconds": 300},
            ],
        })
    );
}

#[test]
fn container_members() {
    let obj = json!({"spec": {"containers": [{
        "name": "c", "image": "app@sha256:0123",
        "resources": {"limits": {"cpu": "1"}},
        "livenessProbe": {"httpGet": {"port": 8080}},
        "lifecycle": {"preStop": {"httpGet": {"port": 80}}},
        "env": [{"name": "NODE", "valueFrom": {"fieldRef": {"fieldPath": "spec.nodeName"}}}],
    }], "volumes": [
        {"name": "scratch"},
        {"name": "cfg", "configMap": {"name": "cfg"}},
        {"name": "host", "hostPath": {"path": "/var/log"}},
        {"name": "tok", "projected": {"sources": [{"serviceAccountToken": {"path": "token"}}]}},
    ]}});
    let got = defaulted("", "v1", "Pod", obj);
    let c = &got["spec"]["containers"][0];
    assert_eq!(c["imagePullPolicy"], "IfNotPresent");
    assert_eq!(
        c["resources"],
        json!({"limits": {"cpu": "1"}, "requests": {"cpu": "1"}})
    );
    assert_eq!(
        c["livenessProbe"],
        json!({"httpGet": {"port": 8080, "path": "/", "scheme": "HTTP"}, "timeoutSeconds": 1, "periodSeconds": 10, "successThreshold": 1, "failureThreshold": 3})
    );
    assert_eq!(c["lifecycle"]["preStop"]["httpGet"]["scheme"], "HTTP");
    assert_eq!(c["env"][0]["valueFrom"]["fieldRef"]["apiVersion"], "v1");
    let v = &got["spec"]["volumes"];
    assert_eq!(v[0], json!({"name": "scratch", "emptyDir": {}}));
    assert_eq!(v[1]["configMap"]["defaultMode"], 420);
    assert_eq!(v[2]["hostPath"], json!({"path": "/var/log", "type": ""}));
    assert_eq!(v[3]["projected"]["defaultMode"], 420);
    assert_eq!(
        v[3]["projected"]["sources"][0]["serviceAccountToken"]["expirationSeconds"],
        3600
    );
}

#[test]
fn template_service_account_mirrors_into_the_deprecated_field() {
    let got = defaulted(
        "apps",
        "v1",
        "Deployment",
        json!({"spec": {"template": {"spec": {"serviceAccountName": "builder"}}}}),
    );
    let spec = &got["spec"]["template"]["spec"];
    assert_eq!(spec["serviceAccount"], "builder");
    assert_eq!(spec["serviceAccountName"], "builder");
    assert_eq!(spec["enableServiceLinks"], Value::Null);
    let old = defaulted(
        "apps",
        "v1",
        "Deployment",
        json!({"spec": {"template": {"spec": {"serviceAccount": "old"}}}}),
    );
    assert_eq!(old["spec"]["template"]["spec"]["serviceAccountName"], "old");
}

#[test]
fn service_like_kubectl_create_service() {
    // kubectl create service clusterip web --tcp=80:8080
    let obj = json!({"spec": {"ports": [{"name": "80-8080", "port": 80, "targetPort": 8080}], "selector": {"app": "web"}, "type": "ClusterIP"}});
    let got = defaulted("", "v1", "Service", obj);
    assert_eq!(
        got["spec"],
        json!({
            "internalTrafficPolicy": "Cluster",
            "ports": [{"name": "80-8080", "port": 80, "protocol": "TCP", "targetPort": 8080}],
            "selector": {"app": "web"},
            "sessionAffinity": "None",
            "type": "ClusterIP",
        })
    );
    let lb = defaulted(
        "",
        "v1",
        "Service",
        json!({"spec": {"type": "LoadBalancer", "ports": [{"port": 443}], "sessionAffinity": "ClientIP"}}),
    );
    let spec = &lb["spec"];
    assert_eq!(spec["ports"][0]["targetPort"], 443);
    assert_eq!(spec["externalTrafficPolicy"], "Cluster");
    assert_eq!(spec["allocateLoadBalancerNodePorts"], true);
    assert_eq!(
        spec["sessionAffinityConfig"],
        json!({"clientIP": {"timeoutSeconds": 10800}})
    );
    let ext = defaulted(
        "",
        "v1",
        "Service",
        json!({"spec": {"type": "ExternalName", "externalName": "example.com"}}),
    );
    assert_eq!(ext["spec"]["internalTrafficPolicy"], Value::Null);
    assert_eq!(ext["spec"]["externalTrafficPolicy"], Value::Null);
}

#[test]
fn secret_string_data_and_type() {
    let got = defaulted(
        "",
        "v1",
        "Secret",
        json!({"stringData": {"password": "s3cret"}, "data": {"user": "YWRtaW4="}}),
    );
    assert_eq!(
        got,
        json!({"type": "Opaque", "data": {"user": "YWRtaW4=", "password": "czNjcmV0"}})
    );
    let tls = defaulted("", "v1", "Secret", json!({"type": "kubernetes.io/tls"}));
    assert_eq!(tls["type"], "kubernetes.io/tls");
}

#[test]
fn hpa_v2() {
    let got = defaulted(
        "autoscaling",
        "v2",
        "HorizontalPodAutoscaler",
        json!({"spec": {"maxReplicas": 5,
        "scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "web"}}}),
    );
    assert_eq!(got["spec"]["minReplicas"], 1);
    assert_eq!(
        got["spec"]["metrics"],
        json!([{"type": "Resource", "resource": {"name": "cpu", "target": {"type": "Utilization", "averageUtilization": 80}}}])
    );
    assert_eq!(got["spec"]["behavior"], Value::Null);
    let with = defaulted(
        "autoscaling",
        "v2",
        "HorizontalPodAutoscaler",
        json!({"spec": {"behavior": {"scaleDown": {"stabilizationWindowSeconds": 60}}}}),
    );
    assert_eq!(
        with["spec"]["behavior"],
        json!({
            "scaleDown": {"stabilizationWindowSeconds": 60, "selectPolicy": "Max", "policies": [{"type": "Percent", "value": 100, "periodSeconds": 15}]},
            "scaleUp": {"stabilizationWindowSeconds": 0, "selectPolicy": "Max", "policies": [{"type": "Pods", "value": 4, "periodSeconds": 15}, {"type": "Percent", "value": 100, "periodSeconds": 15}]},
        })
    );
}

#[test]
fn network_policy_types() {
    let got = defaulted(
        "networking.k8s.io",
        "v1",
        "NetworkPolicy",
        json!({"spec": {"podSelector": {}, "egress": [{"ports": [{"port": 53}]}]}}),
    );
    assert_eq!(got["spec"]["policyTypes"], json!(["Ingress", "Egress"]));
    assert_eq!(got["spec"]["egress"][0]["ports"][0]["protocol"], "TCP");
}

#[test]
fn other_kinds_and_subresources_untouched() {
    let cm = json!({"data": {"a": "b"}});
    assert_eq!(defaulted("", "v1", "ConfigMap", cm.clone()), cm);
    let mut attrs = crate::Attributes::new(
        Operation::Update,
        crate::GroupVersionResource::new("apps", "v1", "deployments"),
        crate::GroupVersionKind::new("autoscaling", "v1", "Scale"),
        "web",
    );
    attrs.subresource = Some("scale".into());
    attrs.object = Some(json!({"spec": {"replicas": 2}}));
    Defaults.admit(&mut attrs).unwrap();
    assert_eq!(attrs.object, Some(json!({"spec": {"replicas": 2}})));
}

#[test]
fn quantities_are_stored_canonical() {
    // A chart's `cpu: 0.5`, `memory: 1024Mi`: stored as upstream prints them.
    let pod = json!({"metadata": {"name": "q"}, "spec": {"containers": [{"name": "a", "image": "x",
        "resources": {"limits": {"cpu": "1000m", "memory": "1024Mi"}, "requests": {"cpu": "0.5"}}}],
        "volumes": [{"name": "tmp", "emptyDir": {"sizeLimit": "0.5Gi"}}]}});
    let got = defaulted("", "v1", "Pod", pod);
    assert_eq!(
        got["spec"]["containers"][0]["resources"],
        json!({"limits": {"cpu": "1", "memory": "1Gi"}, "requests": {"cpu": "500m", "memory": "1Gi"}})
    );
    assert_eq!(got["spec"]["volumes"][0]["emptyDir"]["sizeLimit"], "512Mi");
    let quota = json!({"spec": {"hard": {"requests.cpu": "2000m", "pods": "10"}}});
    assert_eq!(
        defaulted("", "v1", "ResourceQuota", quota)["spec"]["hard"],
        json!({"requests.cpu": "2", "pods": "10"})
    );
}

#[test]
fn persistent_volumes_and_claims() {
    let pv = json!({"spec": {"capacity": {"storage": "1024Mi"}, "accessModes": ["ReadWriteOnce"],
        "hostPath": {"path": "/data"}}});
    let got = defaulted("", "v1", "PersistentVolume", pv);
    assert_eq!(got["spec"]["persistentVolumeReclaimPolicy"], "Retain");
    assert_eq!(got["spec"]["volumeMode"], "Filesystem");
    assert_eq!(got["spec"]["capacity"]["storage"], "1Gi");
    assert_eq!(got["status"], json!({"phase": "Pending"}));
    // An explicit policy is kept.
    let pv = json!({"spec": {"persistentVolumeReclaimPolicy": "Delete", "volumeMode": "Block"}});
    let got = defaulted("", "v1", "PersistentVolume", pv);
    assert_eq!(got["spec"]["persistentVolumeReclaimPolicy"], "Delete");
    assert_eq!(got["spec"]["volumeMode"], "Block");
    let pvc = json!({"spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}}});
    let got = defaulted("", "v1", "PersistentVolumeClaim", pvc);
    assert_eq!(got["spec"]["volumeMode"], "Filesystem");
    assert_eq!(got["status"], json!({"phase": "Pending"}));
}

#[test]
fn role_binding_subjects_and_role_ref() {
    let rb = json!({"roleRef": {"kind": "ClusterRole", "name": "view"},
        "subjects": [{"kind": "User", "name": "alice"}, {"kind": "Group", "name": "devs"},
                     {"kind": "ServiceAccount", "name": "default", "namespace": "x"}]});
    let got = defaulted("rbac.authorization.k8s.io", "v1", "ClusterRoleBinding", rb);
    assert_eq!(got["roleRef"]["apiGroup"], "rbac.authorization.k8s.io");
    assert_eq!(got["subjects"][0]["apiGroup"], "rbac.authorization.k8s.io");
    assert_eq!(got["subjects"][1]["apiGroup"], "rbac.authorization.k8s.io");
    assert!(got["subjects"][2].get("apiGroup").is_none());
}

#[test]
fn probe_zero_values_are_defaulted() {
    let pod = json!({"spec": {"containers": [{"name": "a", "image": "x",
        "readinessProbe": {"tcpSocket": {"port": 80}, "periodSeconds": 0, "timeoutSeconds": 5}}]}});
    let got = defaulted("", "v1", "Pod", pod);
    assert_eq!(
        got["spec"]["containers"][0]["readinessProbe"],
        json!({"tcpSocket": {"port": 80}, "periodSeconds": 10, "timeoutSeconds": 5,
               "successThreshold": 1, "failureThreshold": 3})
    );
}

#[test]
fn host_network_pods_default_host_ports() {
    let pod = json!({"spec": {"hostNetwork": true, "containers": [{"name": "a", "image": "x",
        "ports": [{"containerPort": 8080}, {"containerPort": 9090, "hostPort": 9090}]}]}});
    let got = defaulted("", "v1", "Pod", pod);
    assert_eq!(
        got["spec"]["containers"][0]["ports"],
        json!([{"containerPort": 8080, "hostPort": 8080, "protocol": "TCP"},
               {"containerPort": 9090, "hostPort": 9090, "protocol": "TCP"}])
    );
    // Not in templates (DefaultHostNetworkHostPortsInPodTemplates is off).
    let d = json!({"spec": {"selector": {"matchLabels": {"a": "b"}}, "template": {"metadata": {"labels": {"a": "b"}},
        "spec": {"hostNetwork": true, "containers": [{"name": "a", "image": "x", "ports": [{"containerPort": 8080}]}]}}}});
    let got = defaulted("apps", "v1", "Deployment", d);
    assert!(
        got["spec"]["template"]["spec"]["containers"][0]["ports"][0]
            .get("hostPort")
            .is_none()
    );
}

#[test]
fn hpa_metric_targets_are_canonical() {
    let hpa = json!({"spec": {"maxReplicas": 3, "scaleTargetRef": {"kind": "Deployment", "name": "w"},
        "metrics": [{"type": "Pods", "pods": {"metric": {"name": "rps"},
            "target": {"type": "AverageValue", "averageValue": "1000m"}}}]}});
    let got = defaulted("autoscaling", "v2", "HorizontalPodAutoscaler", hpa);
    assert_eq!(
        got["spec"]["metrics"][0]["pods"]["target"]["averageValue"],
        "1"
    );
}
