//! Encoding as upstream, over raw HTTPS against a real `skein serve`: the
//! exact bytes kube-apiserver v1.33 writes (Go's field order and zero
//! values, `json.Encoder`'s trailing newline, `json.MarshalIndent` for
//! pretty requests, `metav1.Status` bodies, Go's type-error text), and the
//! initial status strategies set (Pod QoS class, PVC/PV phase).

use reqwest::Method;
use serde_json::{Value, json};
use skein_tests::http::{Api, Reply};
use skein_tests::server::Server;

async fn start() -> (tempfile::TempDir, Server, Api) {
    let dir = tempfile::tempdir().expect("tempdir");
    let server = Server::start(dir.path(), &[]).await;
    let api = Api::new(&server);
    (dir, server, api)
}

fn text(r: &Reply) -> String {
    r.text()
}

/// The body's text from `"key":` to the end.
fn tail_from<'a>(body: &'a str, key: &str) -> &'a str {
    let at = body
        .rfind(&format!("\"{key}\":"))
        .unwrap_or_else(|| panic!("no {key} in {body}"));
    &body[at..]
}

fn deployment(name: &str) -> Value {
    json!({
        "apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": {"name": name},
        "spec": {
            "replicas": 2,
            "selector": {"matchLabels": {"app": name}},
            "template": {
                "metadata": {"labels": {"app": name}},
                "spec": {"containers": [{"name": "app", "image": "nginx:1.27"}]}
            }
        }
    })
}

#[tokio::test]
async fn service_and_replication_controller_status_bytes() {
    let (_dir, _server, api) = start().await;
    let svc = json!({"apiVersion": "v1", "kind": "Service", "metadata": {"name": "web"},
        "spec": {"selector": {"app": "web"}, "ports": [{"port": 80}]}});
    let created = api.post("/api/v1/namespaces/default/services", &svc).await;
    created.expect(201);
    assert_eq!(
        tail_from(&text(&created), "status"),
        "\"status\":{\"loadBalancer\":{}}}\n"
    );
    let got = api.get("/api/v1/namespaces/default/services/web").await;
    assert_eq!(
        tail_from(&text(&got), "status"),
        "\"status\":{\"loadBalancer\":{}}}\n"
    );
    // ServicePort in Go order: name, protocol, appProtocol, port, targetPort, nodePort.
    assert!(
        text(&got).contains("\"ports\":[{\"protocol\":\"TCP\",\"port\":80,\"targetPort\":80}]"),
        "{}",
        text(&got)
    );

    let rc = json!({"apiVersion": "v1", "kind": "ReplicationController", "metadata": {"name": "rc"},
        "spec": {"replicas": 1, "selector": {"app": "rc"},
            "template": {"metadata": {"labels": {"app": "rc"}},
                "spec": {"containers": [{"name": "c", "image": "nginx:1.27"}]}}}});
    let created = api
        .post("/api/v1/namespaces/default/replicationcontrollers", &rc)
        .await;
    created.expect(201);
    let body = text(&created);
    assert_eq!(tail_from(&body, "status"), "\"status\":{\"replicas\":0}}\n");
    // A pod template's zero creationTimestamp prints as Go 1.33 prints it.
    assert!(
        body.contains(
            "\"template\":{\"metadata\":{\"creationTimestamp\":null,\"labels\":{\"app\":\"rc\"}},"
        ),
        "{body}"
    );
}

#[tokio::test]
async fn deployment_get_is_in_go_struct_order() {
    let (_dir, _server, api) = start().await;
    api.post(
        "/apis/apps/v1/namespaces/default/deployments",
        &deployment("web"),
    )
    .await
    .expect(201);
    let got = api
        .get("/apis/apps/v1/namespaces/default/deployments/web")
        .await;
    got.expect(200);
    let body = text(&got);
    assert!(
        body.starts_with(
            "{\"kind\":\"Deployment\",\"apiVersion\":\"apps/v1\",\"metadata\":{\"name\":\"web\",\"namespace\":\"default\",\"uid\":\""
        ),
        "{body}"
    );
    // ObjectMeta: uid, resourceVersion, generation, creationTimestamp, labels…, managedFields last.
    let order = [
        "\"uid\":",
        "\"resourceVersion\":",
        "\"generation\":1,",
        "\"creationTimestamp\":\"",
        "\"managedFields\":",
        "\"spec\":{\"replicas\":2,\"selector\":{\"matchLabels\":{\"app\":\"web\"}},\"template\":{\"metadata\":{\"creationTimestamp\":null,\"labels\":{\"app\":\"web\"}},\"spec\":{\"containers\":[{\"name\":\"app\",\"image\":\"nginx:1.27\",\"resources\":{},\"terminationMessagePath\":\"/dev/termination-log\",\"terminationMessagePolicy\":\"File\",\"imagePullPolicy\":\"IfNotPresent\"}],\"restartPolicy\":\"Always\",\"terminationGracePeriodSeconds\":30,\"dnsPolicy\":\"ClusterFirst\",\"securityContext\":{},\"schedulerName\":\"default-scheduler\"}},\"strategy\":{\"type\":\"RollingUpdate\",\"rollingUpdate\":{\"maxUnavailable\":\"25%\",\"maxSurge\":\"25%\"}},\"revisionHistoryLimit\":10,\"progressDeadlineSeconds\":600},",
        "\"status\":{}}\n",
    ];
    let mut at = 0;
    for part in order {
        let found = body[at..]
            .find(part)
            .unwrap_or_else(|| panic!("{part} not after byte {at} in {body}"));
        at += found + part.len();
    }
    assert_eq!(at, body.len(), "{body}");
    // managedFields entries in ManagedFieldsEntry's order.
    assert!(
        body.contains("\"managedFields\":[{\"manager\":\"unknown\",\"operation\":\"Update\",\"apiVersion\":\"apps/v1\",\"time\":\""),
        "{body}"
    );
    assert!(
        body.contains("\"fieldsType\":\"FieldsV1\",\"fieldsV1\":{"),
        "{body}"
    );
}

#[tokio::test]
async fn bodies_end_with_a_newline_lists_and_watch_lines_too() {
    let (_dir, _server, api) = start().await;
    let cm = json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "one"}, "data": {"b": "2", "a": "<&>"}});
    let created = api.post("/api/v1/namespaces/default/configmaps", &cm).await;
    created.expect(201);
    let body = text(&created);
    assert!(body.ends_with("}\n") && !body.ends_with("\n\n"), "{body:?}");
    // Go escapes HTML characters in strings.
    assert!(
        body.ends_with(",\"data\":{\"a\":\"\\u003c\\u0026\\u003e\",\"b\":\"2\"}}\n"),
        "{body:?}"
    );
    let list = api.get("/api/v1/namespaces/default/configmaps").await;
    list.expect(200);
    let body = text(&list);
    assert!(
        body.starts_with(
            "{\"kind\":\"ConfigMapList\",\"apiVersion\":\"v1\",\"metadata\":{\"resourceVersion\":\""
        ),
        "{body}"
    );
    // Items of a typed list carry no kind/apiVersion, as upstream's.
    assert!(
        body.contains("\"items\":[{\"metadata\":{\"name\":"),
        "{body}"
    );
    assert!(body.ends_with("}]}\n"), "{body:?}");

    let response = api
        .start(
            Method::GET,
            "/api/v1/namespaces/default/configmaps?watch=true&fieldSelector=metadata.name%3Done",
            &[],
            None,
        )
        .await;
    let mut response = response;
    let mut buf = Vec::new();
    while !buf.contains(&b'\n') {
        let chunk = tokio::time::timeout(std::time::Duration::from_secs(10), response.chunk())
            .await
            .expect("watch event in time")
            .expect("watch chunk")
            .expect("watch open");
        buf.extend_from_slice(&chunk);
    }
    let line = String::from_utf8(buf).expect("utf8");
    assert!(
        line.starts_with("{\"type\":\"ADDED\",\"object\":{\"kind\":\"ConfigMap\",\"apiVersion\":\"v1\",\"metadata\":{\"name\":\"one\","),
        "{line}"
    );
    assert!(line.ends_with("\"b\":\"2\"}}}\n"), "{line:?}");
}

#[tokio::test]
async fn pretty_for_the_query_parameter_and_curl_user_agents() {
    let (_dir, _server, api) = start().await;
    let cm = json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "p"}, "data": {"k": "v"}});
    api.post("/api/v1/namespaces/default/configmaps", &cm)
        .await
        .expect(201);
    let path = "/api/v1/namespaces/default/configmaps/p";
    let compact = text(&api.get(path).await);
    let pretty = api.get(&format!("{path}?pretty=true")).await;
    pretty.expect(200);
    let body = text(&pretty);
    assert!(
        body.starts_with("{\n  \"kind\": \"ConfigMap\",\n  \"apiVersion\": \"v1\",\n  \"metadata\": {\n    \"name\": \"p\",\n    \"namespace\": \"default\",\n"),
        "{body}"
    );
    // json.MarshalIndent: no trailing newline.
    assert!(
        body.ends_with("  },\n  \"data\": {\n    \"k\": \"v\"\n  }\n}"),
        "{body:?}"
    );
    let reparsed: Value = serde_json::from_str(&body).expect("json");
    assert_eq!(
        reparsed,
        serde_json::from_str::<Value>(&compact).expect("json")
    );

    let curl = api
        .call(Method::GET, path, &[("user-agent", "curl/8.5.0")], None)
        .await;
    assert_eq!(text(&curl), body);
    let wget = api
        .call(Method::GET, path, &[("user-agent", "Wget/1.21.4")], None)
        .await;
    assert_eq!(text(&wget), body);
    // An explicit pretty=false wins over the user agent.
    let off = api
        .call(
            Method::GET,
            &format!("{path}?pretty=false"),
            &[("user-agent", "curl/8.5.0")],
            None,
        )
        .await;
    assert_eq!(text(&off), compact);
    // Errors are indented too.
    let missing = api
        .call(
            Method::GET,
            "/api/v1/namespaces/default/configmaps/nope",
            &[("user-agent", "curl/8.5.0")],
            None,
        )
        .await;
    assert_eq!(
        text(&missing),
        "{\n  \"kind\": \"Status\",\n  \"apiVersion\": \"v1\",\n  \"metadata\": {},\n  \"status\": \"Failure\",\n  \"message\": \"configmaps \\\"nope\\\" not found\",\n  \"reason\": \"NotFound\",\n  \"details\": {\n    \"name\": \"nope\",\n    \"kind\": \"configmaps\"\n  },\n  \"code\": 404\n}"
    );
}

#[tokio::test]
async fn status_bodies_are_upstreams_bytes() {
    let (_dir, _server, api) = start().await;
    let missing = api
        .get("/apis/apps/v1/namespaces/default/deployments/nope")
        .await;
    assert_eq!(missing.status.as_u16(), 404);
    assert_eq!(
        text(&missing),
        "{\"kind\":\"Status\",\"apiVersion\":\"v1\",\"metadata\":{},\"status\":\"Failure\",\"message\":\"deployments.apps \\\"nope\\\" not found\",\"reason\":\"NotFound\",\"details\":{\"name\":\"nope\",\"group\":\"apps\",\"kind\":\"deployments\"},\"code\":404}\n"
    );
    let bad = json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "Bad_Name"}});
    let invalid = api
        .post("/api/v1/namespaces/default/configmaps", &bad)
        .await;
    assert_eq!(invalid.status.as_u16(), 422);
    let detail = "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')";
    assert_eq!(
        text(&invalid),
        format!(
            "{{\"kind\":\"Status\",\"apiVersion\":\"v1\",\"metadata\":{{}},\"status\":\"Failure\",\"message\":\"ConfigMap \\\"Bad_Name\\\" is invalid: metadata.name: Invalid value: \\\"Bad_Name\\\": {detail}\",\"reason\":\"Invalid\",\"details\":{{\"name\":\"Bad_Name\",\"kind\":\"ConfigMap\",\"causes\":[{{\"reason\":\"FieldValueInvalid\",\"message\":\"Invalid value: \\\"Bad_Name\\\": {detail}\",\"field\":\"metadata.name\"}}]}},\"code\":422}}\n"
        )
    );
}

#[tokio::test]
async fn type_errors_use_gos_text() {
    let (_dir, _server, api) = start().await;
    let mut d = deployment("typed");
    d["spec"]["template"]["metadata"]["labels"]["app"] = json!(true);
    d["spec"]["selector"]["matchLabels"]["app"] = json!("typed");
    let r = api
        .post("/apis/apps/v1/namespaces/default/deployments", &d)
        .await;
    let status = r.expect_status(400, "BadRequest");
    assert_eq!(
        status["message"],
        "Deployment in version \"v1\" cannot be handled as a Deployment: json: cannot unmarshal bool into Go struct field ObjectMeta.spec.template.metadata.labels of type string"
    );
    let mut d = deployment("typed");
    d["spec"]["replicas"] = json!("two");
    let r = api
        .post("/apis/apps/v1/namespaces/default/deployments", &d)
        .await;
    let status = r.expect_status(400, "BadRequest");
    assert_eq!(
        status["message"],
        "Deployment in version \"v1\" cannot be handled as a Deployment: json: cannot unmarshal string into Go struct field DeploymentSpec.spec.replicas of type int32"
    );
}

#[tokio::test]
async fn create_strategies_set_phases_and_qos_class() {
    let (_dir, _server, api) = start().await;
    let pod = |name: &str, resources: Value| {
        json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name},
            "spec": {"containers": [{"name": "c", "image": "nginx:1.27", "resources": resources}]}})
    };
    for (name, resources, qos) in [
        ("best", json!({}), "BestEffort"),
        ("burst", json!({"requests": {"cpu": "100m"}}), "Burstable"),
        (
            "guaranteed",
            json!({"limits": {"cpu": "1", "memory": "1Gi"}}),
            "Guaranteed",
        ),
    ] {
        let created = api
            .post("/api/v1/namespaces/default/pods", &pod(name, resources))
            .await;
        created.expect(201);
        assert_eq!(
            tail_from(&text(&created), "status"),
            format!("\"status\":{{\"phase\":\"Pending\",\"qosClass\":\"{qos}\"}}}}\n"),
            "{name}"
        );
    }
    let pvc = json!({"apiVersion": "v1", "kind": "PersistentVolumeClaim", "metadata": {"name": "data"},
        "spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}}});
    let created = api
        .post("/api/v1/namespaces/default/persistentvolumeclaims", &pvc)
        .await;
    created.expect(201);
    assert_eq!(
        tail_from(&text(&created), "status"),
        "\"status\":{\"phase\":\"Pending\"}}\n"
    );
    let pv = json!({"apiVersion": "v1", "kind": "PersistentVolume", "metadata": {"name": "vol"},
        "spec": {"capacity": {"storage": "1Gi"}, "accessModes": ["ReadWriteOnce"], "hostPath": {"path": "/tmp/vol"}}});
    let created = api.post("/api/v1/persistentvolumes", &pv).await;
    created.expect(201);
    assert_eq!(
        tail_from(&text(&created), "status"),
        "\"status\":{\"phase\":\"Pending\"}}\n"
    );
}
