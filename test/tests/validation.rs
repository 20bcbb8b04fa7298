//! Field validation and defaulting as kube-apiserver 1.33 answers them,
//! over raw HTTPS (422 Status bodies with upstream's message and causes,
//! nothing stored) and with kubectl 1.35 and 1.32 (what users read).

use serde_json::{Value, json};
use skein_tests::cli::*;
use skein_tests::http::{Api, message};

/// The `details.causes` of a Status as (reason, field, message) triples.
fn causes(status: &Value) -> Vec<(String, String, String)> {
    status["details"]["causes"]
        .as_array()
        .map(|a| {
            a.iter()
                .map(|c| {
                    let s = |k: &str| c[k].as_str().unwrap_or("").to_owned();
                    (s("reason"), s("field"), s("message"))
                })
                .collect()
        })
        .unwrap_or_default()
}

fn pod(name: &str, container: Value) -> Value {
    json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name},
           "spec": {"containers": [container]}})
}

const PODS: &str = "/api/v1/namespaces/default/pods";

#[tokio::test]
async fn invalid_pods_are_refused_with_upstream_status_and_nothing_is_stored() {
    let env = start().await;
    let api = Api::new(&env.server);

    // Requests above limits, and an extended resource that must equal its
    // limit.
    let bad = pod(
        "greedy",
        json!({"name": "app", "image": "nginx", "resources": {
            "limits": {"cpu": "500m", "example.com/gpu": "1"},
            "requests": {"cpu": "1", "example.com/gpu": "2"}}}),
    );
    let status = api.post(PODS, &bad).await.expect_status(422, "Invalid");
    assert_eq!(
        message(&status),
        r#"Pod "greedy" is invalid: [spec.containers[0].resources.requests: Invalid value: "1": must be less than or equal to cpu limit of 500m, spec.containers[0].resources.requests: Invalid value: "2": must be equal to example.com/gpu limit of 1]"#
    );
    assert_eq!(status["details"]["name"], "greedy");
    assert_eq!(status["details"]["kind"], "Pod");
    assert_eq!(
        causes(&status),
        [
            (
                "FieldValueInvalid".to_owned(),
                "spec.containers[0].resources.requests".to_owned(),
                r#"Invalid value: "1": must be less than or equal to cpu limit of 500m"#.to_owned()
            ),
            (
                "FieldValueInvalid".to_owned(),
                "spec.containers[0].resources.requests".to_owned(),
                r#"Invalid value: "2": must be equal to example.com/gpu limit of 1"#.to_owned()
            ),
        ]
    );
    api.get(&format!("{PODS}/greedy")).await.expect(404);

    // Probes: one handler, liveness success threshold 1; env names as the
    // relaxed 1.33 rule; sidecar-only fields on a plain init container.
    let mut probed = pod(
        "probed",
        json!({"name": "app", "image": "nginx",
               "env": [{"name": "A=B", "value": "x"}],
               "livenessProbe": {"httpGet": {"port": 80}, "tcpSocket": {"port": 80}, "successThreshold": 2}}),
    );
    probed["spec"]["initContainers"] = json!([{"name": "init", "image": "busybox", "readinessProbe": {"exec": {"command": ["true"]}}}]);
    let status = api.post(PODS, &probed).await.expect_status(422, "Invalid");
    assert_eq!(
        causes(&status),
        [
            (
                "FieldValueInvalid".to_owned(),
                "spec.containers[0].env[0].name".to_owned(),
                r#"Invalid value: "A=B": a valid environment variable name must consist only of printable ASCII characters other than '='"#.to_owned()
            ),
            (
                "FieldValueForbidden".to_owned(),
                "spec.containers[0].livenessProbe.tcpSocket".to_owned(),
                "Forbidden: may not specify more than 1 handler type".to_owned()
            ),
            (
                "FieldValueInvalid".to_owned(),
                "spec.containers[0].livenessProbe.successThreshold".to_owned(),
                "Invalid value: 2: must be 1".to_owned()
            ),
            (
                "FieldValueForbidden".to_owned(),
                "spec.initContainers[0].readinessProbe".to_owned(),
                "Forbidden: may not be set for init containers without restartPolicy=Always".to_owned()
            ),
        ]
    );
    api.get(&format!("{PODS}/probed")).await.expect(404);

    // A sidecar may carry probes; a probe period of 0 is defaulted.
    let mut sidecar = pod("sidecar", json!({"name": "app", "image": "nginx"}));
    sidecar["spec"]["initContainers"] = json!([{"name": "proxy", "image": "envoy",
        "restartPolicy": "Always", "readinessProbe": {"tcpSocket": {"port": 15000}, "periodSeconds": 0}}]);
    let created = api.post(PODS, &sidecar).await.expect(201);
    assert_eq!(
        created["spec"]["initContainers"][0]["readinessProbe"],
        json!({"tcpSocket": {"port": 15000}, "timeoutSeconds": 1, "periodSeconds": 10,
               "successThreshold": 1, "failureThreshold": 3})
    );
}

#[tokio::test]
async fn pod_updates_may_change_only_what_upstream_allows() {
    let env = start().await;
    let api = Api::new(&env.server);
    let created = api
        .post(
            PODS,
            &pod("web", json!({"name": "app", "image": "nginx:1.27"})),
        )
        .await
        .expect(201);

    // A changed image and an added toleration are allowed.
    let mut next = created.clone();
    next["spec"]["containers"][0]["image"] = json!("nginx:1.28");
    next["spec"]["tolerations"]
        .as_array_mut()
        .expect("defaulted tolerations")
        .push(json!({"key": "dedicated", "operator": "Exists", "effect": "NoSchedule"}));
    let updated = api.put(&format!("{PODS}/web"), &next).await.expect(200);
    assert_eq!(updated["spec"]["containers"][0]["image"], "nginx:1.28");

    // Resources may not change: upstream's message, then a diff.
    let mut resized = updated.clone();
    resized["spec"]["containers"][0]["resources"] = json!({"limits": {"cpu": "1"}});
    let status = api
        .put(&format!("{PODS}/web"), &resized)
        .await
        .expect_status(422, "Invalid");
    let msg = message(&status);
    assert!(
        msg.starts_with("Pod \"web\" is invalid: spec: Forbidden: pod updates may not change fields other than `spec.containers[*].image`,`spec.initContainers[*].image`,`spec.activeDeadlineSeconds`,`spec.tolerations` (only additions to existing tolerations),`spec.terminationGracePeriodSeconds` (allow it to be set to 1 if it was previously negative)\n"),
        "{msg}"
    );
    assert!(msg.contains("containers[0].resources"), "{msg}");
    let stored = api.get(&format!("{PODS}/web")).await.expect(200);
    assert_eq!(stored["spec"]["containers"][0]["resources"], json!({}));

    // With kubectl: `set image` works, `set resources` is refused.
    for (i, k) in env.each() {
        let image = format!("app=nginx:1.{}", 30 + i);
        let out = ok(k, &env.server, &["set", "image", "pod/web", &image]);
        assert_eq!(out, "pod/web image updated\n");
        let stderr = err(
            k,
            &env.server,
            &["set", "resources", "pod/web", "--limits=cpu=2"],
        );
        assert!(
            stderr.contains("spec: Forbidden: pod updates may not change fields other than `spec.containers[*].image`"),
            "{stderr}"
        );
    }
}

#[tokio::test]
async fn kubectl_shows_upstream_validation_errors() {
    let env = start().await;
    for (i, k) in env.each() {
        let ns = format!("val-{i}");
        env.namespace(k, &ns);

        // A Deployment with two container errors: kubectl lists both.
        let deploy = json!({"apiVersion": "apps/v1", "kind": "Deployment",
            "metadata": {"name": "web"},
            "spec": {"selector": {"matchLabels": {"app": "web"}},
                "template": {"metadata": {"labels": {"app": "web"}}, "spec": {"containers": [{
                    "name": "app", "image": "nginx",
                    "env": [{"name": "A=B", "value": "x"}],
                    "livenessProbe": {"exec": {"command": ["true"]}, "successThreshold": 3}}]}}}});
        let file = env.manifest(&deploy);
        let stderr = err(k, &env.server, &["apply", "-f", &file, "-n", &ns]);
        assert_eq!(
            stderr,
            "The Deployment \"web\" is invalid: \n\
             * spec.template.spec.containers[0].env[0].name: Invalid value: \"A=B\": a valid environment variable name must consist only of printable ASCII characters other than '='\n\
             * spec.template.spec.containers[0].livenessProbe.successThreshold: Invalid value: 3: must be 1\n"
        );
        let out = kubectl(k, &env.server, &["get", "deployment", "web", "-n", &ns]);
        assert!(!out.status.success(), "nothing was stored");

        // A StatefulSet mounting its claim template is accepted.
        let sts = json!({"apiVersion": "apps/v1", "kind": "StatefulSet",
            "metadata": {"name": "db"},
            "spec": {"serviceName": "db", "selector": {"matchLabels": {"app": "db"}},
                "template": {"metadata": {"labels": {"app": "db"}}, "spec": {"containers": [{
                    "name": "db", "image": "postgres",
                    "volumeMounts": [{"name": "data", "mountPath": "/var/lib/postgresql"}]}]}},
                "volumeClaimTemplates": [{"metadata": {"name": "data"}, "spec": {
                    "accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}}}]}});
        let file = env.manifest(&sts);
        let out = ok(k, &env.server, &["apply", "-f", &file, "-n", &ns]);
        assert_eq!(out, "statefulset.apps/db created\n");

        // A RoleBinding's roleRef cannot change.
        let rb = |role: &str| {
            json!({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "RoleBinding",
                "metadata": {"name": "readers"},
                "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": role},
                "subjects": [{"kind": "User", "name": "alice"}]})
        };
        let file = env.manifest(&rb("reader"));
        ok(k, &env.server, &["apply", "-f", &file, "-n", &ns]);
        let stored = get_json(
            k,
            &env.server,
            &["get", "rolebinding", "readers", "-n", &ns],
        );
        // Subjects of kind User are defaulted into the RBAC group.
        assert_eq!(
            stored["subjects"][0]["apiGroup"],
            "rbac.authorization.k8s.io"
        );
        let file = env.manifest(&rb("writer"));
        let stderr = err(k, &env.server, &["apply", "-f", &file, "-n", &ns]);
        assert_eq!(
            stderr,
            "The RoleBinding \"readers\" is invalid: roleRef: Invalid value: rbac.RoleRef{APIGroup:\"rbac.authorization.k8s.io\", Kind:\"Role\", Name:\"writer\"}: cannot change roleRef\n"
        );

        // A Role rule without verbs.
        let role = json!({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "Role",
            "metadata": {"name": "empty"},
            "rules": [{"apiGroups": [""], "resources": ["pods"], "verbs": []}]});
        let file = env.manifest(&role);
        let stderr = err(k, &env.server, &["create", "-f", &file, "-n", &ns]);
        assert_eq!(
            stderr,
            "The Role \"empty\" is invalid: rules[0].verbs: Required value: verbs must contain at least one value\n"
        );
    }
}

#[tokio::test]
async fn network_policies_hpas_and_volumes() {
    let env = start().await;
    let api = Api::new(&env.server);

    let np = json!({"apiVersion": "networking.k8s.io/v1", "kind": "NetworkPolicy",
        "metadata": {"name": "db"},
        "spec": {"podSelector": {"matchLabels": {"app": "db"}},
            "ingress": [{"from": [{"ipBlock": {"cidr": "10.0.0.0/16", "except": ["10.0.0.0/8"]}},
                                  {"ipBlock": {"cidr": "10.0.0.1"}}]}]}});
    let status = api
        .post(
            "/apis/networking.k8s.io/v1/namespaces/default/networkpolicies",
            &np,
        )
        .await
        .expect_status(422, "Invalid");
    assert_eq!(
        message(&status),
        "NetworkPolicy.networking.k8s.io \"db\" is invalid: [spec.ingress[0].from[0].ipBlock.except[0]: Invalid value: \"10.0.0.0/8\": must be a strict subset of `cidr`, spec.ingress[0].from[1].ipBlock.cidr: Invalid value: \"10.0.0.1\": must be a valid CIDR value, (e.g. 10.9.8.0/24 or 2001:db8::/64)]"
    );
    api.get("/apis/networking.k8s.io/v1/namespaces/default/networkpolicies/db")
        .await
        .expect(404);

    let hpa = json!({"apiVersion": "autoscaling/v2", "kind": "HorizontalPodAutoscaler",
        "metadata": {"name": "web"},
        "spec": {"scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "web"},
            "minReplicas": 1, "maxReplicas": 5,
            "metrics": [{"type": "Pods", "resource": {"name": "cpu", "target": {"type": "Utilization", "averageUtilization": 50}}}]}});
    let status = api
        .post(
            "/apis/autoscaling/v2/namespaces/default/horizontalpodautoscalers",
            &hpa,
        )
        .await
        .expect_status(422, "Invalid");
    assert_eq!(
        message(&status),
        "HorizontalPodAutoscaler.autoscaling \"web\" is invalid: spec.metrics[0].pods: Required value: must populate information for the given metric source"
    );

    // PersistentVolumes and claims get upstream's defaults.
    let pv = json!({"apiVersion": "v1", "kind": "PersistentVolume", "metadata": {"name": "pv1"},
        "spec": {"capacity": {"storage": "1Gi"}, "accessModes": ["ReadWriteOnce"], "hostPath": {"path": "/data"}}});
    let created = api.post("/api/v1/persistentvolumes", &pv).await.expect(201);
    assert_eq!(created["spec"]["persistentVolumeReclaimPolicy"], "Retain");
    assert_eq!(created["spec"]["volumeMode"], "Filesystem");
    assert_eq!(created["status"]["phase"], "Pending");
    let pvc = json!({"apiVersion": "v1", "kind": "PersistentVolumeClaim", "metadata": {"name": "c1"},
        "spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}}});
    let created = api
        .post("/api/v1/namespaces/default/persistentvolumeclaims", &pvc)
        .await
        .expect(201);
    assert_eq!(created["spec"]["volumeMode"], "Filesystem");
    assert_eq!(created["status"]["phase"], "Pending");
}
