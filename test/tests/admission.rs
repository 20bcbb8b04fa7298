//! Admission over real HTTPS: defaulting (what a 1.33 cluster stores),
//! Service address allocation, per-kind validation and placement
//! annotations. Each refusal is checked for its status, reason, causes and
//! that nothing was stored.

use serde_json::{Value, json};
use skein_tests::http::{Api, message};
use skein_tests::server::Server;

async fn start() -> (tempfile::TempDir, Server, Api) {
    let dir = tempfile::tempdir().expect("tempdir");
    let server = Server::start(dir.path(), &[]).await;
    let api = Api::new(&server);
    (dir, server, api)
}

const DEPLOYS: &str = "/apis/apps/v1/namespaces/default/deployments";
const SERVICES: &str = "/api/v1/namespaces/default/services";

fn deployment(name: &str) -> Value {
    json!({
        "apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": {"name": name},
        "spec": {
            "selector": {"matchLabels": {"app": name}},
            "template": {
                "metadata": {"labels": {"app": name}},
                "spec": {"containers": [{"name": "app", "image": "nginx"}]}
            }
        }
    })
}

fn service(name: &str) -> Value {
    json!({
        "apiVersion": "v1", "kind": "Service",
        "metadata": {"name": name},
        "spec": {"selector": {"app": name}, "ports": [{"port": 80}]}
    })
}

fn causes(status: &Value) -> Vec<(String, String)> {
    status["details"]["causes"]
        .as_array()
        .map(|a| {
            a.iter()
                .map(|c| {
                    (
                        c["reason"].as_str().unwrap_or("").to_string(),
                        c["field"].as_str().unwrap_or("").to_string(),
                    )
                })
                .collect()
        })
        .unwrap_or_default()
}

#[tokio::test]
async fn objects_are_stored_with_upstream_defaults() {
    let (_dir, _server, api) = start().await;
    let d = api.post(DEPLOYS, &deployment("web")).await.expect(201);
    let spec = &d["spec"];
    assert_eq!(spec["replicas"], 1);
    assert_eq!(spec["revisionHistoryLimit"], 10);
    assert_eq!(spec["progressDeadlineSeconds"], 600);
    assert_eq!(
        spec["strategy"],
        json!({"type": "RollingUpdate", "rollingUpdate": {"maxSurge": "25%", "maxUnavailable": "25%"}})
    );
    let pod = &spec["template"]["spec"];
    assert_eq!(pod["restartPolicy"], "Always");
    assert_eq!(pod["dnsPolicy"], "ClusterFirst");
    assert_eq!(pod["schedulerName"], "default-scheduler");
    assert_eq!(pod["terminationGracePeriodSeconds"], 30);
    assert_eq!(pod["securityContext"], json!({}));
    let c = &pod["containers"][0];
    // No tag means :latest, so Always.
    assert_eq!(c["imagePullPolicy"], "Always");
    assert_eq!(c["terminationMessagePath"], "/dev/termination-log");
    assert_eq!(c["terminationMessagePolicy"], "File");
    // What was returned is what is stored.
    assert_eq!(api.get(&format!("{DEPLOYS}/web")).await.expect(200), d);

    // Services get an address from the service CIDR, distinct per Service,
    // and upstream's port and policy defaults.
    let a = api.post(SERVICES, &service("a")).await.expect(201);
    let b = api.post(SERVICES, &service("b")).await.expect(201);
    let ip = |s: &Value| s["spec"]["clusterIP"].as_str().unwrap_or("").to_string();
    assert_ne!(ip(&a), ip(&b));
    for s in [&a, &b] {
        let octets: Vec<u8> = ip(s).split('.').filter_map(|o| o.parse().ok()).collect();
        assert_eq!(octets.len(), 4, "{s}");
        assert_eq!(octets[0], 10, "{s}");
        assert_eq!(octets[1] & 0xf0, 96, "inside 10.96.0.0/12: {s}");
        assert_eq!(s["spec"]["clusterIPs"], json!([ip(s)]));
        assert_eq!(s["spec"]["type"], "ClusterIP");
        assert_eq!(s["spec"]["sessionAffinity"], "None");
        assert_eq!(s["spec"]["ipFamilies"], json!(["IPv4"]));
        assert_eq!(s["spec"]["ipFamilyPolicy"], "SingleStack");
        assert_eq!(s["spec"]["internalTrafficPolicy"], "Cluster");
        assert_eq!(
            s["spec"]["ports"],
            json!([{"port": 80, "protocol": "TCP", "targetPort": 80}])
        );
    }
    // A dry run allocates nothing that sticks: a real create still works.
    api.post(&format!("{SERVICES}?dryRun=All"), &service("c"))
        .await
        .expect(201);
    assert!(api.names(SERVICES).await.iter().all(|n| n != "c"));
}

#[tokio::test]
async fn invalid_objects_are_refused_with_field_causes() {
    let (_dir, _server, api) = start().await;

    // Selector must match the template labels.
    let mut d = deployment("mismatch");
    d["spec"]["template"]["metadata"]["labels"] = json!({"app": "other"});
    let s = api.post(DEPLOYS, &d).await.expect_status(422, "Invalid");
    assert_eq!(
        message(&s),
        r#"Deployment.apps "mismatch" is invalid: spec.template.metadata.labels: Invalid value: map[string]string{"app":"other"}: `selector` does not match template `labels`"#
    );
    assert_eq!(
        causes(&s),
        [(
            "FieldValueInvalid".to_string(),
            "spec.template.metadata.labels".to_string()
        )]
    );

    // Container names unique DNS labels; ports in range.
    let mut d = deployment("containers");
    d["spec"]["template"]["spec"]["containers"] = json!([
        {"name": "app", "image": "nginx", "ports": [{"containerPort": 70000}]},
        {"name": "app", "image": "nginx"},
        {"name": "Bad_Name", "image": "nginx"},
    ]);
    let s = api.post(DEPLOYS, &d).await.expect_status(422, "Invalid");
    let fields: Vec<String> = causes(&s).into_iter().map(|(_, f)| f).collect();
    for want in [
        "spec.template.spec.containers[0].ports[0].containerPort",
        "spec.template.spec.containers[1].name",
        "spec.template.spec.containers[2].name",
    ] {
        assert!(fields.iter().any(|f| f == want), "{want} missing: {s}");
    }

    // The selector is immutable.
    api.post(DEPLOYS, &deployment("fixed")).await.expect(201);
    let mut changed = api.get(&format!("{DEPLOYS}/fixed")).await.expect(200);
    changed["spec"]["selector"] = json!({"matchLabels": {"app": "fixed", "tier": "x"}});
    changed["spec"]["template"]["metadata"]["labels"] = json!({"app": "fixed", "tier": "x"});
    let s = api
        .put(&format!("{DEPLOYS}/fixed"), &changed)
        .await
        .expect_status(422, "Invalid");
    assert!(message(&s).contains("spec.selector"), "{s}");
    assert!(message(&s).contains("field is immutable"), "{s}");

    // A Service's clusterIP is immutable.
    let svc = api.post(SERVICES, &service("web")).await.expect(201);
    let mut moved = svc.clone();
    moved["spec"]["clusterIP"] = json!("10.96.0.200");
    moved["spec"]["clusterIPs"] = json!(["10.96.0.200"]);
    let s = api
        .put(&format!("{SERVICES}/web"), &moved)
        .await
        .expect_status(422, "Invalid");
    assert!(message(&s).contains("spec.clusterIP"), "{s}");
    assert_eq!(api.get(&format!("{SERVICES}/web")).await.expect(200), svc);

    // Secret and ConfigMap keys; immutable ConfigMaps.
    let s = api
        .post(
            "/api/v1/namespaces/default/secrets",
            &json!({"metadata": {"name": "s"}, "data": {"bad key": "eA=="}}),
        )
        .await
        .expect_status(422, "Invalid");
    assert_eq!(causes(&s)[0].1, "data[bad key]", "{s}");
    let cms = "/api/v1/namespaces/default/configmaps";
    let cm = api
        .post(
            cms,
            &json!({"metadata": {"name": "frozen"}, "data": {"a": "1"}, "immutable": true}),
        )
        .await
        .expect(201);
    let mut thawed = cm.clone();
    thawed["data"]["a"] = json!("2");
    let s = api
        .put(&format!("{cms}/frozen"), &thawed)
        .await
        .expect_status(422, "Invalid");
    assert_eq!(
        message(&s),
        "ConfigMap \"frozen\" is invalid: data: Forbidden: field is immutable when `immutable` is set"
    );

    // Nothing invalid was stored.
    let names = api.names(DEPLOYS).await;
    assert_eq!(names, ["fixed"]);
}

#[tokio::test]
async fn placement_annotations_are_validated() {
    let (_dir, _server, api) = start().await;
    let cms = "/api/v1/namespaces/default/configmaps";
    let with = |name: &str, annotations: Value| json!({"metadata": {"name": name, "annotations": annotations}, "data": {"a": "1"}});

    // Well-formed, including the Federation V1 forms.
    api.post(
        cms,
        &with(
            "good",
            json!({
                "skein.io/clusters": "east,west",
                "skein.io/cluster-selector": "region in (eu, us),!legacy",
                "skein.io/replica-scheduling": "Duplicated",
                "skein.io/replica-preferences": r#"{"rebalance":true,"clusters":{"east":{"weight":2,"minReplicas":1,"maxReplicas":10},"*":{"weight":1}}}"#,
                "override.skein.io/east": r#"{"data":{"a":"2"}}"#,
                "skein.io/drift": "Report",
                "federation.alpha.kubernetes.io/cluster-selector": r#"[{"key":"region","operator":"in","values":["eu"]}]"#,
            }),
        ),
    )
    .await
    .expect(201);

    for (key, value) in [
        ("skein.io/drift", "Sometimes"),
        ("skein.io/replica-scheduling", "Halved"),
        ("skein.io/cluster-selector", "region in (eu"),
        (
            "skein.io/replica-preferences",
            r#"{"clusters":{"east":{"weight":-1}}}"#,
        ),
        ("override.skein.io/east", "[{\"op\":\"jump\"}]"),
        ("skein.io/clusters", "East_1"),
        (
            "federation.alpha.kubernetes.io/cluster-selector",
            r#"[{"key":"r","operator":"near"}]"#,
        ),
        ("skein.io/unknown", "x"),
    ] {
        let s = api
            .post(cms, &with("bad", json!({ key: value })))
            .await
            .expect_status(422, "Invalid");
        assert!(message(&s).contains(key), "{key}: {s}");
        let field = format!("metadata.annotations[{key}]");
        assert!(
            causes(&s).iter().any(|(_, f)| *f == field),
            "{key}: cause field {field} missing: {s}"
        );
    }
    assert_eq!(
        api.names(cms).await.iter().filter(|n| *n == "bad").count(),
        0
    );
}
