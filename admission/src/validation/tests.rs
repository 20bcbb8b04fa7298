//! Messages checked against kube-apiserver 1.33's for the same input.

use serde_json::{Value, json};

use super::*;
use crate::defaults;

/// Defaults `obj` as the chain would, then validates it.
fn check(group: &str, kind: &str, mut obj: Value, old: Option<Value>) -> Vec<String> {
    let version = if group == "autoscaling" { "v2" } else { "v1" };
    defaults::apply(group, version, kind, &mut obj, old.is_none());
    validate(group, kind, &obj, old.as_ref())
        .iter()
        .map(ToString::to_string)
        .collect()
}

fn deployment(selector: Value, labels: Value) -> Value {
    json!({"metadata": {"name": "web"}, "spec": {"selector": selector,
        "template": {"metadata": {"labels": labels}, "spec": {"containers": [{"name": "web", "image": "nginx"}]}}}})
}

#[test]
fn valid_workloads_pass() {
    let d = deployment(
        json!({"matchLabels": {"app": "web"}}),
        json!({"app": "web"}),
    );
    assert!(check("apps", "Deployment", d.clone(), None).is_empty());
    assert!(check("apps", "ReplicaSet", d.clone(), None).is_empty());
    assert!(check("apps", "DaemonSet", d.clone(), None).is_empty());
    let mut sts = d.clone();
    sts["spec"]["serviceName"] = json!("web");
    assert!(check("apps", "StatefulSet", sts, None).is_empty());
}

#[test]
fn deployment_selector_rules() {
    let bad = deployment(json!({"matchLabels": {"app": "web"}}), json!({"app": "y"}));
    assert_eq!(
        check("apps", "Deployment", bad, None),
        [
            r#"spec.template.metadata.labels: Invalid value: map[string]string{"app":"y"}: `selector` does not match template `labels`"#
        ]
    );
    let mut missing = deployment(json!(null), json!({"app": "web"}));
    missing["spec"].as_object_mut().unwrap().remove("selector");
    assert_eq!(
        check("apps", "Deployment", missing, None),
        [
            "spec.selector: Required value",
            r#"spec.template.metadata.labels: Invalid value: map[string]string{"app":"web"}: `selector` does not match template `labels`"#,
        ]
    );
    assert_eq!(
        check(
            "apps",
            "Deployment",
            deployment(json!({}), json!({"app": "web"})),
            None
        ),
        [
            "spec.selector: Invalid value: v1.LabelSelector{MatchLabels:map[string]string(nil), MatchExpressions:[]v1.LabelSelectorRequirement(nil)}: empty selector is invalid for deployment"
        ]
    );
    let old = deployment(
        json!({"matchLabels": {"app": "web"}}),
        json!({"app": "web", "v": "2"}),
    );
    let new = deployment(
        json!({"matchLabels": {"app": "web", "v": "2"}}),
        json!({"app": "web", "v": "2"}),
    );
    assert_eq!(
        check("apps", "Deployment", new, Some(old.clone())),
        [
            r#"spec.selector: Invalid value: v1.LabelSelector{MatchLabels:map[string]string{"app":"web", "v":"2"}, MatchExpressions:[]v1.LabelSelectorRequirement(nil)}: field is immutable"#
        ]
    );
    assert!(check("apps", "Deployment", old.clone(), Some(old)).is_empty());
}

#[test]
fn deployment_numbers_and_strategy() {
    let mut d = deployment(
        json!({"matchLabels": {"app": "web"}}),
        json!({"app": "web"}),
    );
    d["spec"]["replicas"] = json!(-1);
    d["spec"]["strategy"] = json!({"type": "Recreate", "rollingUpdate": {"maxSurge": 1}});
    assert_eq!(
        check("apps", "Deployment", d.clone(), None),
        [
            "spec.replicas: Invalid value: -1: must be greater than or equal to 0",
            "spec.strategy.rollingUpdate: Forbidden: may not be specified when strategy `type` is 'Recreate'",
        ]
    );
    d["spec"]["replicas"] = json!(1);
    d["spec"]["strategy"] = json!({"rollingUpdate": {"maxSurge": 0, "maxUnavailable": "120%"}});
    assert_eq!(
        check("apps", "Deployment", d.clone(), None),
        [
            r#"spec.strategy.rollingUpdate.maxUnavailable: Invalid value: intstr.IntOrString{Type:1, IntVal:0, StrVal:"120%"}: must not be greater than 100%"#
        ]
    );
    d["spec"]["strategy"] = json!({"rollingUpdate": {"maxSurge": 0, "maxUnavailable": 0}});
    assert_eq!(
        check("apps", "Deployment", d.clone(), None),
        [
            "spec.strategy.rollingUpdate.maxUnavailable: Invalid value: intstr.IntOrString{Type:0, IntVal:0, StrVal:\"\"}: may not be 0 when `maxSurge` is 0"
        ]
    );
    d["spec"]["strategy"] = json!({});
    d["spec"]["template"]["spec"]["restartPolicy"] = json!("Never");
    assert_eq!(
        check("apps", "Deployment", d, None),
        [
            r#"spec.template.spec.restartPolicy: Unsupported value: "Never": supported values: "Always""#
        ]
    );
}

#[test]
fn containers() {
    let mut d = deployment(
        json!({"matchLabels": {"app": "web"}}),
        json!({"app": "web"}),
    );
    d["spec"]["template"]["spec"]["containers"] = json!([
        {"name": "Web", "image": "nginx"},
        {"name": "b", "image": "", "ports": [{"containerPort": 70000, "name": "HTTP"}, {"containerPort": 80, "protocol": "ICMP"}]},
        {"name": "b", "image": "x", "volumeMounts": [{"name": "data", "mountPath": "/data"}]},
    ]);
    assert_eq!(
        check("apps", "Deployment", d, None),
        [
            "spec.template.spec.containers[0].name: Invalid value: \"Web\": a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')",
            "spec.template.spec.containers[1].image: Required value",
            "spec.template.spec.containers[1].ports[0].name: Invalid value: \"HTTP\": must contain only alpha-numeric characters (a-z, 0-9), and hyphens (-)",
            "spec.template.spec.containers[1].ports[0].name: Invalid value: \"HTTP\": must contain at least one letter (a-z)",
            "spec.template.spec.containers[1].ports[0].containerPort: Invalid value: 70000: must be between 1 and 65535, inclusive",
            r#"spec.template.spec.containers[1].ports[1].protocol: Unsupported value: "ICMP": supported values: "SCTP", "TCP", "UDP""#,
            r#"spec.template.spec.containers[2].volumeMounts[0].name: Not found: "data""#,
            r#"spec.template.spec.containers[2].name: Duplicate value: "b""#,
        ]
    );
}

#[test]
fn pod_restart_policy_and_no_containers() {
    let p = json!({"spec": {"containers": [], "restartPolicy": "Sometimes"}});
    assert_eq!(
        check("", "Pod", p, None),
        [
            "spec.containers: Required value",
            r#"spec.restartPolicy: Unsupported value: "Sometimes": supported values: "Always", "OnFailure", "Never""#,
        ]
    );
}

#[test]
fn statefulset_forbidden_updates() {
    let mut old = deployment(
        json!({"matchLabels": {"app": "web"}}),
        json!({"app": "web"}),
    );
    old["spec"]["serviceName"] = json!("web");
    let mut new = old.clone();
    new["spec"]["serviceName"] = json!("other");
    new["spec"]["replicas"] = json!(3);
    let mut stored = old.clone();
    defaults::apply("apps", "v1", "StatefulSet", &mut stored, true);
    assert_eq!(
        check("apps", "StatefulSet", new, Some(stored.clone())),
        [
            "spec: Forbidden: updates to statefulset spec for fields other than 'replicas', 'ordinals', 'template', 'updateStrategy', 'revisionHistoryLimit', 'persistentVolumeClaimRetentionPolicy' and 'minReadySeconds' are forbidden"
        ]
    );
    let mut scaled = old;
    scaled["spec"]["replicas"] = json!(5);
    assert!(check("apps", "StatefulSet", scaled, Some(stored)).is_empty());
}

#[test]
fn jobs() {
    let job =
        json!({"spec": {"template": {"spec": {"containers": [{"name": "pi", "image": "perl"}]}}}});
    assert_eq!(
        check("batch", "Job", job.clone(), None),
        [
            r#"spec.template.spec.restartPolicy: Unsupported value: "Always": supported values: "OnFailure", "Never""#
        ]
    );
    let mut ok = job;
    ok["spec"]["template"]["spec"]["restartPolicy"] = json!("Never");
    assert!(check("batch", "Job", ok.clone(), None).is_empty());
    let mut stored = ok.clone();
    defaults::apply("batch", "v1", "Job", &mut stored, true);
    let mut changed = ok;
    changed["spec"]["template"]["spec"]["containers"][0]["image"] = json!("perl:2");
    let errs = check("batch", "Job", changed, Some(stored));
    assert_eq!(errs.len(), 1);
    assert!(
        errs[0].starts_with("spec.template: Invalid value: ")
            && errs[0].ends_with(": field is immutable"),
        "{errs:?}"
    );
}

#[test]
fn cronjobs() {
    let cj = json!({"metadata": {"name": "c"}, "spec": {"schedule": "", "jobTemplate": {"spec": {"template": {"spec": {
        "containers": [{"name": "c", "image": "busybox"}], "restartPolicy": "OnFailure"}}}}}});
    assert_eq!(
        check("batch", "CronJob", cj.clone(), None),
        ["spec.schedule: Required value"]
    );
    let mut bad = cj;
    bad["spec"]["schedule"] = json!("every minute");
    bad["spec"]["concurrencyPolicy"] = json!("Sometimes");
    assert_eq!(
        check("batch", "CronJob", bad, None),
        [
            r#"spec.schedule: Invalid value: "every minute": expected exactly 5 fields, found 2: every minute"#,
            r#"spec.concurrencyPolicy: Unsupported value: "Sometimes": supported values: "Allow", "Forbid", "Replace""#,
        ]
    );
}

#[test]
fn services() {
    let ok = json!({"spec": {"ports": [{"port": 80}], "selector": {"app": "web"}}});
    assert!(check("", "Service", ok, None).is_empty());
    assert_eq!(
        check("", "Service", json!({"spec": {}}), None),
        ["spec.ports: Required value"]
    );
    let bad = json!({"spec": {"type": "Fancy", "ports": [{"port": 0, "name": "a"}, {"port": 80, "name": "a"}, {"port": 80, "name": "b"}]}});
    assert_eq!(
        check("", "Service", bad, None),
        [
            "spec.ports[0].port: Invalid value: 0: must be between 1 and 65535, inclusive",
            "spec.ports[0].targetPort: Invalid value: 0: must be between 1 and 65535, inclusive",
            r#"spec.ports[1].name: Duplicate value: "a""#,
            r#"spec.type: Unsupported value: "Fancy": supported values: "ClusterIP", "ExternalName", "LoadBalancer", "NodePort""#,
            r#"spec.ports[2]: Duplicate value: core.ServicePort{Name:"", Protocol:"TCP", AppProtocol:(*string)(nil), Port:80, TargetPort:intstr.IntOrString{Type:0, IntVal:0, StrVal:""}, NodePort:0}"#,
        ]
    );
    let multi = json!({"spec": {"ports": [{"port": 80}, {"port": 443}]}});
    assert_eq!(
        check("", "Service", multi, None),
        [
            "spec.ports[0].name: Required value",
            "spec.ports[1].name: Required value"
        ]
    );
    let np = json!({"spec": {"ports": [{"port": 80, "nodePort": 30001}]}});
    assert_eq!(
        check("", "Service", np, None),
        ["spec.ports[0].nodePort: Forbidden: may not be used when `type` is 'ClusterIP'"]
    );
    let ext = json!({"spec": {"type": "ExternalName"}});
    assert_eq!(
        check("", "Service", ext, None),
        ["spec.externalName: Required value"]
    );
}

#[test]
fn service_cluster_ip_is_immutable() {
    let old = json!({"spec": {"clusterIP": "10.96.0.10", "clusterIPs": ["10.96.0.10"], "ports": [{"port": 80}]}});
    let new =
        json!({"spec": {"clusterIP": "None", "clusterIPs": ["None"], "ports": [{"port": 80}]}});
    assert_eq!(
        check("", "Service", new, Some(old.clone())),
        [r#"spec.clusterIPs[0]: Invalid value: []string{"None"}: may not change once set"#]
    );
    assert!(check("", "Service", old.clone(), Some(old)).is_empty());
}

#[test]
fn config_maps_and_secrets() {
    let cm = json!({"data": {"good.key": "x", "bad key": "y"}, "binaryData": {"good.key": "eA=="}});
    assert_eq!(
        check("", "ConfigMap", cm, None),
        [
            "data[bad key]: Invalid value: \"bad key\": a valid config key must consist of alphanumeric characters, '-', '_' or '.' (e.g. 'key.name',  or 'KEY_NAME',  or 'key-name', regex used for validation is '[-._a-zA-Z0-9]+')",
            r#"data[good.key]: Invalid value: "good.key": duplicate of key present in binaryData"#,
            r#"binaryData[good.key]: Invalid value: "good.key": duplicate of key present in data"#,
        ]
    );
    let old = json!({"immutable": true, "data": {"a": "1"}});
    let new = json!({"immutable": true, "data": {"a": "2"}});
    assert_eq!(
        check("", "ConfigMap", new, Some(old.clone())),
        ["data: Forbidden: field is immutable when `immutable` is set"]
    );
    assert_eq!(
        check(
            "",
            "ConfigMap",
            json!({"data": {"a": "1"}}),
            Some(old.clone())
        ),
        ["immutable: Forbidden: field is immutable when `immutable` is set"]
    );
    assert!(check("", "ConfigMap", old.clone(), Some(old)).is_empty());
    let big = "a".repeat(1024 * 1024 + 1);
    assert_eq!(
        check("", "ConfigMap", json!({"data": {"a": big}}), None),
        ["[]: Too long: may not be more than 1048576 bytes"]
    );

    let old_secret = json!({"type": "Opaque", "immutable": true, "data": {"a": "MQ=="}});
    assert_eq!(
        check(
            "",
            "Secret",
            json!({"type": "Opaque", "immutable": true, "data": {"a": "Mg=="}}),
            Some(old_secret.clone())
        ),
        ["data: Forbidden: field is immutable when `immutable` is set"]
    );
    assert_eq!(
        check(
            "",
            "Secret",
            json!({"type": "kubernetes.io/tls", "immutable": true, "data": {"a": "MQ=="}}),
            Some(old_secret)
        ),
        [
            r#"type: Invalid value: "kubernetes.io/tls": field is immutable"#,
            "data[tls.crt]: Required value",
            "data[tls.key]: Required value",
        ]
    );
    assert_eq!(
        check("", "Secret", json!({"stringData": {"a b": "x"}}), None).len(),
        1
    );
}

#[test]
fn hpa_pdb_ingress() {
    let hpa = json!({"spec": {"minReplicas": 5, "maxReplicas": 2, "scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "web"}}});
    assert_eq!(
        check("autoscaling", "HorizontalPodAutoscaler", hpa, None),
        ["spec.maxReplicas: Invalid value: 2: must be greater than or equal to `minReplicas`"]
    );
    let hpa0 = json!({"spec": {"minReplicas": 0, "maxReplicas": 0, "scaleTargetRef": {"kind": "", "name": "web"}}});
    assert_eq!(
        check("autoscaling", "HorizontalPodAutoscaler", hpa0, None),
        [
            "spec.minReplicas: Invalid value: 0: must be greater than or equal to 1",
            "spec.maxReplicas: Invalid value: 0: must be greater than 0",
            "spec.scaleTargetRef.kind: Required value",
            // The defaulted CPU metric cannot scale to zero (upstream reports
            // both, HPAScaleToZero being off).
            "spec.metrics: Forbidden: must specify at least one Object or External metric to support scaling to zero replicas",
        ]
    );
    let pdb = json!({"spec": {"minAvailable": 1, "maxUnavailable": "10%", "selector": {"matchLabels": {"app": "web"}}}});
    assert_eq!(
        check("policy", "PodDisruptionBudget", pdb, None),
        [
            r#"spec: Invalid value: {"maxUnavailable":"10%","minAvailable":1,"selector":{"matchLabels":{"app":"web"}}}: minAvailable and maxUnavailable cannot be both set"#
        ]
    );
    assert!(
        check(
            "policy",
            "PodDisruptionBudget",
            json!({"spec": {"minAvailable": "50%"}}),
            None
        )
        .is_empty()
    );
    let ing = json!({"spec": {"rules": [{"host": "Example.com", "http": {"paths": [
        {"path": "api", "pathType": "Prefix", "backend": {"service": {"name": "web", "port": {"number": 80}}}},
        {"path": "/", "backend": {"service": {"name": "web", "port": {}}}},
    ]}}]}});
    assert_eq!(
        check("networking.k8s.io", "Ingress", ing, None),
        [
            "spec.rules[0].host: Invalid value: \"Example.com\": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')",
            r#"spec.rules[0].http.paths[0].path: Invalid value: "api": must be an absolute path"#,
            "spec.rules[0].http.paths[1].pathType: Required value: pathType must be specified",
            "spec.rules[0].http.paths[1].backend.service.port: Required value: port name or number is required",
        ]
    );
    let ok = json!({"spec": {"ingressClassName": "nginx", "rules": [{"host": "*.example.com", "http": {"paths": [
        {"path": "/", "pathType": "ImplementationSpecific", "backend": {"service": {"name": "web", "port": {"name": "http"}}}}]}}]}});
    assert!(check("networking.k8s.io", "Ingress", ok, None).is_empty());
}

#[test]
fn plugin_denial_and_subresources() {
    let mut attrs = crate::Attributes::new(
        Operation::Create,
        crate::GroupVersionResource::new("apps", "v1", "deployments"),
        crate::GroupVersionKind::new("apps", "v1", "Deployment"),
        "x",
    );
    let mut obj = deployment(json!({"matchLabels": {"app": "x"}}), json!({"app": "y"}));
    obj["metadata"]["name"] = json!("x");
    defaults::apply("apps", "v1", "Deployment", &mut obj, true);
    attrs.object = Some(obj);
    let d = Validation.validate(&attrs).unwrap_err();
    assert_eq!(
        d.to_string(),
        r#"Deployment.apps "x" is invalid: spec.template.metadata.labels: Invalid value: map[string]string{"app":"y"}: `selector` does not match template `labels`"#
    );
    match &d {
        Denial::Invalid { causes, .. } => {
            assert_eq!(causes[0].field, "spec.template.metadata.labels");
            assert_eq!(causes[0].reason, Cause::FIELD_VALUE_INVALID);
        }
        other => panic!("{other:?}"),
    }
    attrs.subresource = Some("status".into());
    assert!(Validation.validate(&attrs).is_ok());
}

fn statefulset(template_spec: Value) -> Value {
    json!({"metadata": {"name": "alertmanager"}, "spec": {
        "serviceName": "alertmanager",
        "selector": {"matchLabels": {"app": "am"}},
        "template": {"metadata": {"labels": {"app": "am"}}, "spec": template_spec},
        "volumeClaimTemplates": [{"metadata": {"name": "storage"},
            "spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}}}]}})
}

#[test]
fn statefulset_containers_may_mount_claim_templates() {
    // The Alertmanager shape: a config volume and the claim template.
    let sts = statefulset(json!({
        "containers": [{"name": "am", "image": "prom/alertmanager",
            "volumeMounts": [{"name": "config", "mountPath": "/etc/am"}, {"name": "storage", "mountPath": "/data"}]}],
        "volumes": [{"name": "config", "configMap": {"name": "am"}}]}));
    assert!(check("apps", "StatefulSet", sts, None).is_empty());
    // As upstream, the pod spec of a StatefulSet template is not validated
    // (ValidatePodTemplateSpecForStatefulSet); its labels are, at
    // spec.template.labels.
    let mut sts = statefulset(json!({"containers": [{"name": "Bad", "image": ""}]}));
    assert!(check("apps", "StatefulSet", sts.clone(), None).is_empty());
    sts["spec"]["template"]["metadata"]["labels"]["bad key!"] = json!("x");
    sts["spec"]["selector"] = json!({"matchLabels": {"app": "am"}});
    assert_eq!(
        check("apps", "StatefulSet", sts, None),
        [
            "spec.template.labels: Invalid value: \"bad key!\": name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')"
        ]
    );
    // A Deployment has no claim templates: the same mount is not found.
    let d = json!({"spec": {"selector": {"matchLabels": {"app": "am"}},
        "template": {"metadata": {"labels": {"app": "am"}}, "spec": {
            "containers": [{"name": "am", "image": "x", "volumeMounts": [{"name": "storage", "mountPath": "/data"}]}]}}}});
    assert_eq!(
        check("apps", "Deployment", d, None),
        [r#"spec.template.spec.containers[0].volumeMounts[0].name: Not found: "storage""#]
    );
}

fn pod(spec: Value) -> Value {
    json!({"metadata": {"name": "p"}, "spec": spec})
}

#[test]
fn ephemeral_volumes_init_and_sidecar_containers() {
    let p = pod(json!({
    "initContainers": [
        {"name": "init", "image": "busybox", "volumeMounts": [{"name": "scratch", "mountPath": "/s"}]},
        {"name": "proxy", "image": "envoy", "restartPolicy": "Always",
         "readinessProbe": {"tcpSocket": {"port": 15000}}},
    ],
    "containers": [{"name": "app", "image": "app", "volumeMounts": [{"name": "scratch", "mountPath": "/s"}],
        "volumeDevices": [{"name": "block", "devicePath": "/dev/xvda"}]}],
    "volumes": [
        {"name": "scratch", "ephemeral": {"volumeClaimTemplate": {"spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}}}}},
        {"name": "block", "persistentVolumeClaim": {"claimName": "b"}},
    ]}));
    assert!(check("", "Pod", p, None).is_empty());
    let bad = pod(json!({
        "initContainers": [
            {"name": "app", "image": "busybox", "livenessProbe": {"exec": {"command": ["true"]}}},
            {"name": "side", "image": "x", "restartPolicy": "OnFailure"},
        ],
        "containers": [{"name": "app", "image": "app", "restartPolicy": "Always",
            "volumeDevices": [{"name": "cfg", "devicePath": "/dev/x"}]}],
        "volumes": [{"name": "cfg", "configMap": {"name": "c"}}]}));
    assert_eq!(
        check("", "Pod", bad, None),
        [
            r#"spec.containers[0].volumeDevices[0].name: Invalid value: "cfg": can only use volume source type of PersistentVolumeClaim or Ephemeral for block mode"#,
            "spec.containers[0].restartPolicy: Forbidden: may not be set for non-init containers",
            r#"spec.initContainers[0].name: Duplicate value: "app""#,
            "spec.initContainers[0].livenessProbe: Forbidden: may not be set for init containers without restartPolicy=Always",
            r#"spec.initContainers[1].restartPolicy: Unsupported value: "OnFailure": supported values: "Always""#,
        ]
    );
    let ephemeral = pod(json!({"containers": [{"name": "a", "image": "x"}],
        "ephemeralContainers": [{"name": "debug", "image": "busybox"}]}));
    assert_eq!(
        check("", "Pod", ephemeral, None),
        ["spec.ephemeralContainers: Forbidden: cannot be set on create"]
    );
}

#[test]
fn probes_and_handlers() {
    let p = pod(json!({"containers": [{"name": "a", "image": "x",
        "livenessProbe": {"httpGet": {"port": 8080}, "exec": {"command": ["x"]}, "successThreshold": 2, "periodSeconds": -1},
        "readinessProbe": {"initialDelaySeconds": 1},
        "startupProbe": {"tcpSocket": {"port": "HTTP"}},
        "lifecycle": {"preStop": {"sleep": {"seconds": 60}}}}]}));
    assert_eq!(
        check("", "Pod", p, None),
        [
            "spec.containers[0].lifecycle.preStop.sleep: Invalid value: 60: must be non-negative and less than terminationGracePeriodSeconds (30)",
            "spec.containers[0].livenessProbe.httpGet: Forbidden: may not specify more than 1 handler type",
            "spec.containers[0].livenessProbe.periodSeconds: Invalid value: -1: must be greater than or equal to 0",
            "spec.containers[0].livenessProbe.successThreshold: Invalid value: 2: must be 1",
            "spec.containers[0].readinessProbe: Required value: must specify a handler type",
            r#"spec.containers[0].startupProbe.tcpSocket.port: Invalid value: "HTTP": must contain only alpha-numeric characters (a-z, 0-9), and hyphens (-)"#,
            r#"spec.containers[0].startupProbe.tcpSocket.port: Invalid value: "HTTP": must contain at least one letter (a-z)"#,
        ]
    );
}

#[test]
fn env_and_env_from() {
    let p = pod(json!({"containers": [{"name": "a", "image": "x",
        "env": [
            {"name": "GOOD.name-1", "value": "v"},
            {"name": "1_STARTS_WITH_DIGIT", "value": "ok in 1.33"},
            {"name": "A=B"},
            {"name": ""},
            {"name": "X", "value": "v", "valueFrom": {"fieldRef": {"fieldPath": "metadata.name"}}},
            {"name": "Y", "valueFrom": {}},
            {"name": "Z", "valueFrom": {"fieldRef": {"fieldPath": "spec.restartPolicy"}}},
            {"name": "W", "valueFrom": {"secretKeyRef": {"name": "s", "key": "a b"}}},
        ],
        "envFrom": [{"prefix": "P=", "configMapRef": {"name": "c"}}, {}]}]}));
    assert_eq!(
        check("", "Pod", p, None),
        [
            r#"spec.containers[0].env[2].name: Invalid value: "A=B": a valid environment variable name must consist only of printable ASCII characters other than '='"#,
            "spec.containers[0].env[3].name: Required value",
            r#"spec.containers[0].env[4].valueFrom: Invalid value: "": may not be specified when `value` is not empty"#,
            "spec.containers[0].env[5].valueFrom: Invalid value: \"\": must specify one of: `fieldRef`, `resourceFieldRef`, `configMapKeyRef` or `secretKeyRef`",
            r#"spec.containers[0].env[6].valueFrom.fieldRef.fieldPath: Unsupported value: "spec.restartPolicy": supported values: "metadata.name", "metadata.namespace", "metadata.uid", "spec.nodeName", "spec.serviceAccountName", "status.hostIP", "status.hostIPs", "status.podIP", "status.podIPs""#,
            "spec.containers[0].env[7].valueFrom.secretKeyRef.key: Invalid value: \"a b\": a valid config key must consist of alphanumeric characters, '-', '_' or '.' (e.g. 'key.name',  or 'KEY_NAME',  or 'key-name', regex used for validation is '[-._a-zA-Z0-9]+')",
            r#"spec.containers[0].envFrom[0].prefix: Invalid value: "P=": a valid environment variable name must consist only of printable ASCII characters other than '='"#,
            "spec.containers[0].envFrom: Invalid value: \"\": must specify one of: `configMapRef` or `secretRef`",
        ]
    );
}

#[test]
fn resources() {
    let p = pod(
        json!({"containers": [{"name": "a", "image": "x", "resources": {
        "limits": {"cpu": "500m", "memory": "128Mi", "example.com/gpu": "1"},
        "requests": {"cpu": "1", "memory": "-1", "example.com/gpu": "2", "disk": "1"}}}]}),
    );
    assert_eq!(
        check("", "Pod", p, None),
        [
            r#"spec.containers[0].resources.requests[cpu]: Invalid value: "1": must be less than or equal to cpu limit of 500m"#.replace("requests[cpu]", "requests"),
            r#"spec.containers[0].resources.requests[disk]: Invalid value: "disk": must be a standard resource for containers"#.to_owned(),
            r#"spec.containers[0].resources.requests: Invalid value: "2": must be equal to example.com/gpu limit of 1"#.to_owned(),
            r#"spec.containers[0].resources.requests[memory]: Invalid value: "-1": must be greater than or equal to 0"#.to_owned(),
        ]
    );
    // Requests default from limits; equal values pass, as do canonical
    // equivalents.
    let ok = pod(
        json!({"containers": [{"name": "a", "image": "x", "resources": {
        "limits": {"cpu": "1", "memory": "1Gi"}, "requests": {"cpu": "1000m", "memory": "1024Mi"}}}]}),
    );
    assert!(check("", "Pod", ok, None).is_empty());
}

#[test]
fn affinity_tolerations_security() {
    let p = pod(json!({"containers": [{"name": "a", "image": "x",
            "securityContext": {"runAsUser": -1, "allowPrivilegeEscalation": false, "privileged": true}}],
        "securityContext": {"seccompProfile": {"type": "Localhost"}, "sysctls": [{"name": "Net.Bad"}]},
        "affinity": {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
            {"matchExpressions": [{"key": "zone", "operator": "Equals", "values": ["a"]},
                                  {"key": "disk", "operator": "In"}]}]},
            "preferredDuringSchedulingIgnoredDuringExecution": [{"weight": 0, "preference": {}}]},
            "podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [{"labelSelector": {"matchLabels": {"app": "a"}}}]}},
        "tolerations": [{"operator": "Equal", "value": "x"}, {"key": "k", "operator": "Exists", "value": "v", "tolerationSeconds": 5}]}));
    assert_eq!(
        check("", "Pod", p, None),
        [
            "spec.containers[0].securityContext.runAsUser: Invalid value: -1: must be between 0 and 2147483647, inclusive",
            r#"spec.containers[0].securityContext: Invalid value: {"allowPrivilegeEscalation":false,"privileged":true,"runAsUser":-1}: cannot set `allowPrivilegeEscalation` to false and `privileged` to true"#,
            "spec.securityContext.sysctls[0].name: Invalid value: \"Net.Bad\": must have at most 253 characters and match regex ^([a-z0-9]([-_a-z0-9]*[a-z0-9])?[\\./])*[a-z0-9]([-_a-z0-9]*[a-z0-9])?$",
            "spec.securityContext.seccompProfile.localhostProfile: Required value: must be set when seccomp type is Localhost",
            r#"spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[0].matchExpressions[0].operator: Invalid value: "Equals": not a valid selector operator"#,
            "spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[0].matchExpressions[1].values: Required value: must be specified when `operator` is 'In' or 'NotIn'",
            "spec.affinity.nodeAffinity.preferredDuringSchedulingIgnoredDuringExecution[0].weight: Invalid value: 0: must be in the range 1-100",
            "spec.affinity.podAntiAffinity.requiredDuringSchedulingIgnoredDuringExecution[0].topologyKey: Required value: can not be empty",
            "spec.affinity.podAntiAffinity.requiredDuringSchedulingIgnoredDuringExecution[0].topologyKey: Invalid value: \"\": name part must be non-empty",
            "spec.affinity.podAntiAffinity.requiredDuringSchedulingIgnoredDuringExecution[0].topologyKey: Invalid value: \"\": name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')",
            "spec.tolerations[0].operator: Invalid value: \"Equal\": operator must be Exists when `key` is empty, which means \"match all values and all keys\"",
            r#"spec.tolerations[1].effect: Invalid value: "": effect must be 'NoExecute' when `tolerationSeconds` is set"#,
            r#"spec.tolerations[1].operator: Invalid value: "v": value must be empty when `operator` is 'Exists'"#,
        ]
    );
}

#[test]
fn replication_controllers() {
    let rc = json!({"metadata": {"name": "rc"}, "spec": {"replicas": 2,
        "template": {"metadata": {"labels": {"app": "web"}}, "spec": {"containers": [{"name": "web", "image": "nginx"}]}}}});
    // The selector defaults to the template labels.
    assert!(check("", "ReplicationController", rc.clone(), None).is_empty());
    let mut bad = rc;
    bad["spec"]["selector"] = json!({"app": "other"});
    bad["spec"]["template"]["spec"]["restartPolicy"] = json!("Never");
    bad["spec"]["template"]["spec"]["containers"][0]["image"] = json!("");
    assert_eq!(
        check("", "ReplicationController", bad, None),
        [
            r#"spec.template.metadata.labels: Invalid value: map[string]string{"app":"web"}: `selector` does not match template `labels`"#,
            "spec.template.spec.containers[0].image: Required value",
            r#"spec.template.spec.restartPolicy: Unsupported value: "Never": supported values: "Always""#,
        ]
    );
}

#[test]
fn topology_spread_constraints() {
    let p = pod(json!({"containers": [{"name": "a", "image": "x"}],
    "topologySpreadConstraints": [
        {"maxSkew": 0, "topologyKey": "zone", "whenUnsatisfiable": "DoNotSchedule"},
        {"maxSkew": 1, "topologyKey": "zone", "whenUnsatisfiable": "DoNotSchedule", "minDomains": 2},
        {"maxSkew": 1, "topologyKey": "", "whenUnsatisfiable": "Sometimes", "minDomains": 0,
         "labelSelector": {"matchExpressions": [{"key": "app", "operator": "In"}]}},
    ]}));
    assert_eq!(
        check("", "Pod", p, None),
        [
            "spec.topologySpreadConstraints[0].maxSkew: Invalid value: 0: must be greater than zero",
            r#"spec.topologySpreadConstraints[0].{topologyKey, whenUnsatisfiable}: Duplicate value: "{zone, DoNotSchedule}""#,
            "spec.topologySpreadConstraints[2].topologyKey: Required value: can not be empty",
            r#"spec.topologySpreadConstraints[2].whenUnsatisfiable: Unsupported value: "Sometimes": supported values: "DoNotSchedule", "ScheduleAnyway""#,
            "spec.topologySpreadConstraints[2].minDomains: Invalid value: 0: must be greater than zero",
            "spec.topologySpreadConstraints[2].minDomains: Invalid value: 0: can only use minDomains if whenUnsatisfiable=DoNotSchedule, not Sometimes",
            "spec.topologySpreadConstraints[2].labelSelector.matchExpressions[0].values: Required value: must be specified when `operator` is 'In' or 'NotIn'",
        ]
    );
}

#[test]
fn statefulset_retention_policy_and_ordinals() {
    let mut sts = statefulset(json!({"containers": [{"name": "am", "image": "x"}]}));
    sts["spec"]["persistentVolumeClaimRetentionPolicy"] =
        json!({"whenDeleted": "Keep", "whenScaled": "Delete"});
    sts["spec"]["ordinals"] = json!({"start": -1});
    assert_eq!(
        check("apps", "StatefulSet", sts, None),
        [
            r#"spec.persistentVolumeClaimRetentionPolicy.whenDeleted: Unsupported value: "Keep": supported values: "Retain", "Delete""#,
            "spec.ordinals.start: Invalid value: -1: must be greater than or equal to 0",
        ]
    );
}
