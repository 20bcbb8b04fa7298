//! Subresources against a real `skein serve`: discovery lists them, and
//! each answers as kube-apiserver v1.33 does without a kubelet — through
//! kubectl 1.35 and 1.32 (logs, exec, attach, port-forward, debug, drain,
//! create token) and raw HTTPS where the Status bytes matter (eviction,
//! binding, proxies, token, finalize, resize).

use std::time::{Duration, Instant};

use reqwest::Method;
use serde_json::{Value, json};
use skein_tests::cli::{self, err, ok};
use skein_tests::http::{Api, Reply};
use skein_tests::kubectl::Background;

const NS: &str = "default";

fn pods() -> String {
    format!("/api/v1/namespaces/{NS}/pods")
}

fn pod_path(name: &str) -> String {
    format!("{}/{name}", pods())
}

fn pod(name: &str, app: &str) -> Value {
    json!({"apiVersion": "v1", "kind": "Pod",
        "metadata": {"name": name, "labels": {"app": app}},
        "spec": {"containers": [{"name": "app", "image": "nginx",
            "ports": [{"containerPort": 80}]}]}})
}

/// Creates a pod, retrying while the namespace's `default` ServiceAccount
/// is still being created by its controller.
async fn create_pod(api: &Api, name: &str, app: &str) -> Value {
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        let r = api.post(&pods(), &pod(name, app)).await;
        if r.status.as_u16() == 201 || Instant::now() > deadline {
            return r.expect(201);
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

/// Merge-patches `path`'s `/status` with `status`.
async fn set_status(api: &Api, path: &str, status: Value) -> Value {
    api.merge_patch(&format!("{path}/status"), &json!({"status": status}))
        .await
        .expect(200)
}

/// A ready, running pod selected by `app`.
async fn running_pod(api: &Api, name: &str, app: &str) {
    create_pod(api, name, app).await;
    set_status(
        api,
        &pod_path(name),
        json!({"phase": "Running", "conditions": [{"type": "Ready", "status": "True"}]}),
    )
    .await;
}

/// A Node with an InternalIP, as a kubelet would register it.
async fn node(api: &Api, name: &str, ip: &str) {
    api.post(
        "/api/v1/nodes",
        &json!({"apiVersion": "v1", "kind": "Node", "metadata": {"name": name}}),
    )
    .await
    .expect(201);
    set_status(
        api,
        &format!("/api/v1/nodes/{name}"),
        json!({"addresses": [{"type": "InternalIP", "address": ip}]}),
    )
    .await;
}

fn binding(pod: &str, node: &str) -> Value {
    json!({"apiVersion": "v1", "kind": "Binding", "metadata": {"name": pod},
        "target": {"kind": "Node", "name": node}})
}

fn eviction(version: &str, pod: &str) -> Value {
    json!({"apiVersion": version, "kind": "Eviction", "metadata": {"name": pod, "namespace": NS}})
}

/// The Success Status a subresource create answers.
fn success_201() -> Value {
    json!({"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Success", "code": 201})
}

/// A failure Status body.
fn failure(code: u16, reason: &str, message: &str, details: Option<Value>) -> Value {
    let mut v = json!({"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
        "message": message});
    if !reason.is_empty() {
        v["reason"] = json!(reason);
    }
    if let Some(d) = details {
        v["details"] = d;
    }
    v["code"] = json!(code);
    v
}

/// Asserts the reply's code and that its body is exactly `body`.
fn assert_body(r: &Reply, code: u16, body: &Value) {
    assert_eq!(r.status.as_u16(), code, "{}", r.text());
    assert_eq!(&r.json(), body);
}

#[tokio::test]
async fn discovery_lists_every_subresource() {
    let env = cli::start().await;
    let api = Api::new(&env.server);
    let core = api.get("/api/v1").await.expect(200);
    let resources = core["resources"].as_array().expect("resources").clone();
    let find = |name: &str| {
        resources
            .iter()
            .find(|r| r["name"] == name)
            .cloned()
            .unwrap_or_else(|| panic!("{name} missing from /api/v1"))
    };
    let sub = |name: &str, kind: &str, verbs: Value, namespaced: bool| json!({"name": name, "singularName": "", "namespaced": namespaced, "kind": kind, "verbs": verbs});
    let connect = json!(["create", "get"]);
    let proxy = json!(["create", "delete", "get", "patch", "update"]);
    let gpu = json!(["get", "patch", "update"]);
    for (name, kind, verbs, namespaced) in [
        ("pods/attach", "PodAttachOptions", &connect, true),
        ("pods/binding", "Binding", &json!(["create"]), true),
        ("pods/ephemeralcontainers", "Pod", &gpu, true),
        ("pods/exec", "PodExecOptions", &connect, true),
        ("pods/log", "Pod", &json!(["get"]), true),
        ("pods/portforward", "PodPortForwardOptions", &connect, true),
        ("pods/proxy", "PodProxyOptions", &proxy, true),
        ("pods/resize", "Pod", &gpu, true),
        ("pods/status", "Pod", &gpu, true),
        ("services/proxy", "ServiceProxyOptions", &proxy, true),
        ("services/status", "Service", &gpu, true),
        ("nodes/proxy", "NodeProxyOptions", &proxy, false),
        ("nodes/status", "Node", &gpu, false),
        (
            "namespaces/finalize",
            "Namespace",
            &json!(["update"]),
            false,
        ),
        ("namespaces/status", "Namespace", &gpu, false),
    ] {
        assert_eq!(find(name), sub(name, kind, verbs.clone(), namespaced));
    }
    assert_eq!(
        find("pods/eviction"),
        json!({"name": "pods/eviction", "singularName": "", "namespaced": true, "group": "policy",
            "version": "v1", "kind": "Eviction", "verbs": ["create"]})
    );
    assert_eq!(
        find("serviceaccounts/token"),
        json!({"name": "serviceaccounts/token", "singularName": "", "namespaced": true,
            "group": "authentication.k8s.io", "version": "v1", "kind": "TokenRequest", "verbs": ["create"]})
    );
    assert_eq!(
        find("replicationcontrollers/scale"),
        json!({"name": "replicationcontrollers/scale", "singularName": "", "namespaced": true,
            "group": "autoscaling", "version": "v1", "kind": "Scale", "verbs": ["get", "patch", "update"]})
    );
    assert_eq!(
        find("bindings"),
        json!({"name": "bindings", "singularName": "binding", "namespaced": true, "kind": "Binding",
            "verbs": ["create"]})
    );
    // Sorted by name, subresources right after their resource.
    let names: Vec<&str> = resources
        .iter()
        .filter_map(|r| r["name"].as_str())
        .collect();
    let mut sorted = names.clone();
    sorted.sort_unstable();
    assert_eq!(names, sorted);

    let certs = api.get("/apis/certificates.k8s.io/v1").await.expect(200);
    assert!(
        certs["resources"].as_array().is_some_and(|rs| rs
            .iter()
            .any(|r| r["name"] == "certificatesigningrequests/approval"
                && r["verbs"] == json!(["get", "patch", "update"]))),
        "{certs}"
    );

    // Aggregated discovery lists the same subresources.
    let agg = api
        .get_as(
            "/api",
            "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList",
        )
        .await
        .expect(200);
    let pods = agg["items"][0]["versions"][0]["resources"]
        .as_array()
        .and_then(|rs| rs.iter().find(|r| r["resource"] == "pods"))
        .cloned()
        .expect("pods in aggregated discovery");
    let subs: Vec<&str> = pods["subresources"]
        .as_array()
        .expect("subresources")
        .iter()
        .filter_map(|s| s["subresource"].as_str())
        .collect();
    assert_eq!(
        subs,
        [
            "attach",
            "binding",
            "ephemeralcontainers",
            "eviction",
            "exec",
            "log",
            "portforward",
            "proxy",
            "resize",
            "status"
        ]
    );
    let evict = pods["subresources"]
        .as_array()
        .and_then(|s| s.iter().find(|s| s["subresource"] == "eviction"))
        .cloned()
        .expect("eviction");
    assert_eq!(
        evict,
        json!({"subresource": "eviction",
            "responseKind": {"group": "policy", "version": "v1", "kind": "Eviction"},
            "verbs": ["create"]})
    );
    let bindings = agg["items"][0]["versions"][0]["resources"]
        .as_array()
        .and_then(|rs| rs.iter().find(|r| r["resource"] == "bindings"))
        .cloned()
        .expect("bindings in aggregated discovery");
    assert_eq!(bindings["scope"], "Namespaced");

    // OpenAPI lists a path for every subresource discovery lists.
    let doc = api.get("/openapi/v3/api/v1").await.expect(200);
    let paths = doc["paths"].as_object().expect("paths");
    for r in &resources {
        let name = r["name"].as_str().unwrap_or_default();
        let Some((parent, sub)) = name.split_once('/') else {
            continue;
        };
        let path = if r["namespaced"] == true {
            format!("/api/v1/namespaces/{{namespace}}/{parent}/{{name}}/{sub}")
        } else {
            format!("/api/v1/{parent}/{{name}}/{sub}")
        };
        assert!(
            paths.contains_key(&path),
            "{path} missing from /openapi/v3/api/v1"
        );
    }
    let op = |path: &str, method: &str| paths[path][method]["operationId"].clone();
    let base = "/api/v1/namespaces/{namespace}/pods/{name}";
    assert_eq!(
        op(&format!("{base}/eviction"), "post"),
        "createCoreV1NamespacedPodEviction"
    );
    assert_eq!(
        op(&format!("{base}/exec"), "get"),
        "connectCoreV1GetNamespacedPodExec"
    );
    assert_eq!(
        op(&format!("{base}/log"), "get"),
        "readCoreV1NamespacedPodLog"
    );
    assert_eq!(
        op(&format!("{base}/proxy/{{path}}"), "head"),
        "connectCoreV1HeadNamespacedPodProxyWithPath"
    );
    assert_eq!(
        op("/api/v1/namespaces/{namespace}/bindings", "post"),
        "createCoreV1NamespacedBinding"
    );
    assert_eq!(
        paths[&format!("{base}/eviction")]["post"]["requestBody"]["content"]["*/*"]["schema"]["$ref"],
        "#/components/schemas/io.k8s.api.policy.v1.Eviction"
    );
    assert!(doc["components"]["schemas"]["io.k8s.api.policy.v1.Eviction"].is_object());
    let v2 = api.get("/openapi/v2").await.expect(200);
    assert_eq!(
        v2["paths"][&format!("{base}/log")]["get"]["responses"]["200"]["schema"],
        json!({"type": "string"})
    );

    for (_, k) in env.each() {
        let out = ok(k, &env.server, &["api-resources", "--api-group="]);
        assert!(
            out.lines().any(|l| l.split_whitespace().collect::<Vec<_>>()
                == ["bindings", "v1", "true", "Binding"]),
            "{out}"
        );
    }
}

#[tokio::test]
async fn unscheduled_pod_has_no_host_for_logs_exec_attach_port_forward() {
    let env = cli::start().await;
    let api = Api::new(&env.server);
    create_pod(&api, "p1", "p1").await;

    // Raw: log of an unscheduled pod is an empty 204; the streams are 400.
    let log = api.get(&format!("{}/log", pod_path("p1"))).await;
    assert_eq!(log.status.as_u16(), 204, "{}", log.text());
    assert!(log.body.is_empty());
    let no_host = failure(
        400,
        "BadRequest",
        "pod p1 does not have a host assigned",
        None,
    );
    for sub in [
        "exec?command=ls&stdout=true",
        "attach?stdout=true",
        "portforward?ports=80",
    ] {
        for method in [Method::GET, Method::POST] {
            let r = api
                .call(method, &format!("{}/{sub}", pod_path("p1")), &[], None)
                .await;
            assert_body(&r, 400, &no_host);
        }
    }
    let missing = api
        .post(&format!("{}/exec?command=ls", pod_path("nope")), &json!({}))
        .await;
    assert_eq!(missing.status.as_u16(), 404);
    let wrong = api
        .get(&format!("{}/log?container=sidecar", pod_path("p1")))
        .await;
    assert_body(
        &wrong,
        400,
        &failure(
            400,
            "BadRequest",
            "container sidecar is not valid for pod p1",
            None,
        ),
    );
    let invalid = api
        .get(&format!("{}/log?tailLines=-1", pod_path("p1")))
        .await;
    assert_eq!(invalid.status.as_u16(), 422, "{}", invalid.text());
    assert_eq!(
        invalid.json()["message"],
        "PodLogOptions \"p1\" is invalid: tailLines: Invalid value: -1: must be greater than or equal to 0"
    );

    for (_, k) in env.each() {
        let out = ok(k, &env.server, &["logs", "p1"]);
        assert_eq!(out, "", "an unscheduled pod has an empty log");
        let e = err(k, &env.server, &["exec", "p1", "--", "ls"]);
        assert!(
            e.contains("Error from server (BadRequest): pod p1 does not have a host assigned"),
            "{e}"
        );
        let e = err(k, &env.server, &["attach", "p1"]);
        assert!(
            e.contains("Error from server (BadRequest): pod p1 does not have a host assigned"),
            "{e}"
        );
    }
    // kubectl refuses to port-forward to a Pending pod by itself; a Running
    // one reaches the server.
    for (_, k) in env.each() {
        let e = err(k, &env.server, &["port-forward", "p1", "18080:80"]);
        assert!(
            e.contains("pod is not running. Current status=Pending"),
            "{e}"
        );
    }
    set_status(&api, &pod_path("p1"), json!({"phase": "Running"})).await;
    for (_, k) in env.each() {
        let e = err(k, &env.server, &["port-forward", "p1", "18080:80"]);
        assert!(
            e.contains("error upgrading connection: pod p1 does not have a host assigned"),
            "{e}"
        );
    }
}

#[tokio::test]
async fn scheduled_pod_reports_the_unreachable_kubelet() {
    let env = cli::start().await;
    let api = Api::new(&env.server);
    create_pod(&api, "p2", "p2").await;

    // Binding: assigns the node once, then conflicts.
    let bind = format!("{}/binding", pod_path("p2"));
    assert_body(
        &api.post(&bind, &binding("p2", "n1")).await,
        201,
        &success_201(),
    );
    let stored = api.get(&pod_path("p2")).await.expect(200);
    assert_eq!(stored["spec"]["nodeName"], "n1");
    let scheduled = stored["status"]["conditions"]
        .as_array()
        .and_then(|c| c.iter().find(|c| c["type"] == "PodScheduled"))
        .cloned()
        .expect("PodScheduled");
    assert_eq!(scheduled["status"], "True");
    assert_body(
        &api.post(&bind, &binding("p2", "n2")).await,
        409,
        &failure(
            409,
            "Conflict",
            "Operation cannot be fulfilled on pods/binding \"p2\": pod p2 is already assigned to node \"n1\"",
            Some(json!({"name": "p2", "kind": "pods/binding"})),
        ),
    );
    assert_body(
        &api.post(&bind, &binding("other", "n1")).await,
        400,
        &failure(
            400,
            "BadRequest",
            "name in URL does not match name in Binding object",
            None,
        ),
    );
    // The legacy collection binds by the Binding's name.
    create_pod(&api, "p3", "p3").await;
    assert_body(
        &api.post(
            &format!("/api/v1/namespaces/{NS}/bindings"),
            &binding("p3", "n1"),
        )
        .await,
        201,
        &success_201(),
    );
    assert_eq!(
        api.get(&pod_path("p3")).await.expect(200)["spec"]["nodeName"],
        "n1"
    );

    // The node does not exist yet: upstream's lookup fails first.
    for (_, k) in env.each() {
        let e = err(k, &env.server, &["logs", "p2"]);
        assert!(
            e.contains("Error from server (NotFound): nodes \"n1\" not found"),
            "{e}"
        );
    }
    node(&api, "n1", "10.0.0.5").await;
    let dial = "dial tcp 10.0.0.5:10250: no kubelet serves this node (Skein runs no kubelets)";
    assert_body(
        &api.get(&format!("{}/log", pod_path("p2"))).await,
        500,
        &failure(
            500,
            "",
            &format!("Get \"https://10.0.0.5:10250/containerLogs/{NS}/p2/app\": {dial}"),
            None,
        ),
    );
    let backend = format!("error dialing backend: {dial}");
    assert_body(
        &api.post(
            &format!("{}/exec?command=ls&stdout=true", pod_path("p2")),
            &json!({}),
        )
        .await,
        500,
        &failure(500, "", &backend, None),
    );
    assert_body(
        &api.get("/api/v1/nodes/n1/proxy/metrics").await,
        500,
        &failure(500, "", &backend, None),
    );
    for (_, k) in env.each() {
        let e = err(k, &env.server, &["logs", "p2"]);
        assert!(e.contains(dial), "{e}");
        let e = err(k, &env.server, &["exec", "p2", "--", "ls"]);
        assert!(e.contains(&format!("Error from server: {backend}")), "{e}");
    }
}

#[tokio::test]
async fn eviction_respects_pod_disruption_budgets() {
    let env = cli::start().await;
    let api = Api::new(&env.server);
    running_pod(&api, "e1", "guarded").await;
    let pdb_path = format!("/apis/policy/v1/namespaces/{NS}/poddisruptionbudgets/budget");
    api.post(
        &format!("/apis/policy/v1/namespaces/{NS}/poddisruptionbudgets"),
        &json!({"apiVersion": "policy/v1", "kind": "PodDisruptionBudget",
            "metadata": {"name": "budget"},
            "spec": {"minAvailable": 1, "selector": {"matchLabels": {"app": "guarded"}}}}),
    )
    .await
    .expect(201);
    let evict = format!("{}/eviction", pod_path("e1"));

    // No disruption controller has observed the budget yet.
    let r = api.post(&evict, &eviction("policy/v1", "e1")).await;
    assert_body(
        &r,
        429,
        &failure(
            429,
            "TooManyRequests",
            "Cannot evict pod as it would violate the pod's disruption budget.",
            Some(json!({"causes": [{"reason": "DisruptionBudget",
                "message": "The disruption budget budget is still being processed by the server."}],
                "retryAfterSeconds": 10})),
        ),
    );
    assert_eq!(r.header("retry-after"), Some("10"));

    // Observed, and no disruption allowed.
    set_status(
        &api,
        &pdb_path,
        json!({"observedGeneration": 1, "disruptionsAllowed": 0, "currentHealthy": 1,
            "desiredHealthy": 1, "expectedPods": 1}),
    )
    .await;
    for version in ["policy/v1", "policy/v1beta1"] {
        let r = api.post(&evict, &eviction(version, "e1")).await;
        assert_body(
            &r,
            429,
            &failure(
                429,
                "TooManyRequests",
                "Cannot evict pod as it would violate the pod's disruption budget.",
                Some(json!({"causes": [{"reason": "DisruptionBudget",
                    "message": "The disruption budget budget needs 1 healthy pods and has 1 currently"}]})),
            ),
        );
        assert_eq!(r.header("retry-after"), None);
    }
    api.get(&pod_path("e1")).await.expect(200);

    // kubectl drain retries on the 429 and reports it.
    node(&api, "n1", "10.0.0.5").await;
    let bind = format!("{}/binding", pod_path("e1"));
    assert_body(
        &api.post(&bind, &binding("e1", "n1")).await,
        201,
        &success_201(),
    );
    for (_, k) in env.each() {
        let e = err(k, &env.server, &["drain", "n1", "--force", "--timeout=6s"]);
        assert!(
            e.contains("Cannot evict pod as it would violate the pod's disruption budget."),
            "{e}"
        );
        ok(k, &env.server, &["uncordon", "n1"]);
    }

    // Malformed requests.
    assert_body(
        &api.post(&evict, &eviction("policy/v1", "other")).await,
        400,
        &failure(
            400,
            "BadRequest",
            "name in URL does not match name in Eviction object",
            None,
        ),
    );

    // One disruption allowed: a dry run changes nothing; then the
    // eviction is recorded and the pod goes.
    set_status(
        &api,
        &pdb_path,
        json!({"disruptionsAllowed": 1, "currentHealthy": 2}),
    )
    .await;
    assert_body(
        &api.post(&format!("{evict}?dryRun=All"), &eviction("policy/v1", "e1"))
            .await,
        201,
        &success_201(),
    );
    api.get(&pod_path("e1")).await.expect(200);
    assert_eq!(
        api.get(&pdb_path).await.expect(200)["status"]["disruptionsAllowed"],
        1
    );
    assert_body(
        &api.post(&evict, &eviction("policy/v1", "e1")).await,
        201,
        &success_201(),
    );
    assert_eq!(api.get(&pod_path("e1")).await.status.as_u16(), 404);
    let pdb = api.get(&pdb_path).await.expect(200);
    assert_eq!(pdb["status"]["disruptionsAllowed"], 0);
    assert!(pdb["status"]["disruptedPods"]["e1"].is_string(), "{pdb}");
    let condition = &pdb["status"]["conditions"][0];
    assert_eq!(condition["type"], "DisruptionAllowed");
    assert_eq!(condition["status"], "False");
    assert_eq!(condition["reason"], "InsufficientPods");

    // A Pending pod is evicted without consulting budgets.
    create_pod(&api, "e2", "guarded").await;
    assert_body(
        &api.post(
            &format!("{}/eviction", pod_path("e2")),
            &eviction("policy/v1", "e2"),
        )
        .await,
        201,
        &success_201(),
    );
    assert_eq!(api.get(&pod_path("e2")).await.status.as_u16(), 404);

    // Two budgets selecting one pod: upstream's 500.
    running_pod(&api, "e3", "guarded").await;
    api.post(
        &format!("/apis/policy/v1/namespaces/{NS}/poddisruptionbudgets"),
        &json!({"apiVersion": "policy/v1", "kind": "PodDisruptionBudget",
            "metadata": {"name": "second"},
            "spec": {"maxUnavailable": 1, "selector": {"matchLabels": {"app": "guarded"}}}}),
    )
    .await
    .expect(201);
    assert_body(
        &api.post(
            &format!("{}/eviction", pod_path("e3")),
            &eviction("policy/v1", "e3"),
        )
        .await,
        500,
        &failure(
            500,
            "",
            "This pod has more than one PodDisruptionBudget, which the eviction subresource does not support.",
            None,
        ),
    );

    // kubectl drain evicts an unguarded pod.
    running_pod(&api, "free", "free").await;
    assert_body(
        &api.post(
            &format!("{}/binding", pod_path("free")),
            &binding("free", "n1"),
        )
        .await,
        201,
        &success_201(),
    );
    let k = &env.kubectls[0];
    let out = ok(
        k,
        &env.server,
        &[
            "drain",
            "n1",
            "--force",
            "--pod-selector=app=free",
            "--timeout=20s",
        ],
    );
    assert!(out.contains("pod/free evicted"), "{out}");
    assert_eq!(api.get(&pod_path("free")).await.status.as_u16(), 404);
}

#[tokio::test]
async fn kubectl_debug_adds_an_ephemeral_container() {
    let env = cli::start().await;
    let api = Api::new(&env.server);
    create_pod(&api, "target", "target").await;
    for (i, k) in env.each() {
        let name = format!("dbg{i}");
        let out = cli::kubectl(
            k,
            &env.server,
            &["debug", "target", "--image=busybox", "-c", &name],
        );
        let stderr = cli::stderr(&out);
        assert!(out.status.success(), "{stderr}");
        assert!(!stderr.contains("disabled"), "{stderr}");
        let p = api.get(&pod_path("target")).await.expect(200);
        let added = p["spec"]["ephemeralContainers"]
            .as_array()
            .and_then(|a| a.iter().find(|c| c["name"] == name.as_str()))
            .cloned()
            .unwrap_or_else(|| panic!("{name} not added: {p}"));
        assert_eq!(added["image"], "busybox");
        assert_eq!(added["terminationMessagePolicy"], "File");
        assert_eq!(p["spec"]["containers"][0]["image"], "nginx");
    }
    // An interactive debug adds its container and then waits for it to run.
    let k = &env.kubectls[0];
    let bg = Background::spawn(
        k,
        &env.server,
        &["debug", "-it", "target", "--image=busybox", "-c", "live"],
    );
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        let p = api.get(&pod_path("target")).await.expect(200);
        let names: Vec<&str> = p["spec"]["ephemeralContainers"]
            .as_array()
            .map(|a| a.iter().filter_map(|c| c["name"].as_str()).collect())
            .unwrap_or_default();
        if names.contains(&"live") {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "debug -it added no container: {}",
            bg.stderr()
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    let out = bg.stop();
    assert!(
        !cli::stderr(&out).contains("disabled"),
        "{}",
        cli::stderr(&out)
    );

    // A duplicate name is refused with upstream's field error.
    let e = err(
        k,
        &env.server,
        &["debug", "target", "--image=busybox", "-c", "app"],
    );
    assert!(
        e.contains("spec.ephemeralContainers[3].name: Duplicate value: \"app\""),
        "{e}"
    );
    // Ephemeral containers cannot be removed.
    let r = api
        .merge_patch(
            &format!("{}/ephemeralcontainers", pod_path("target")),
            &json!({"spec": {"ephemeralContainers": null}}),
        )
        .await;
    assert_eq!(r.status.as_u16(), 422, "{}", r.text());
    assert!(
        r.json()["message"].as_str().is_some_and(
            |m| m.contains("existing ephemeral containers \"dbg0\" may not be removed")
        ),
        "{}",
        r.text()
    );
}

#[tokio::test]
async fn token_proxies_resize_and_finalize() {
    let env = cli::start().await;
    let api = Api::new(&env.server);

    // serviceaccounts/token: issues a token (tests/tokens.rs covers
    // what it authenticates as); upstream's 422 for a short expiration.
    api.post(
        &format!("/api/v1/namespaces/{NS}/serviceaccounts"),
        &json!({"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": "robot"}}),
    )
    .await
    .expect(201);
    let path = format!("/api/v1/namespaces/{NS}/serviceaccounts/robot/token");
    let created = api
        .post(
            &path,
            &json!({"apiVersion": "authentication.k8s.io/v1", "kind": "TokenRequest", "spec": {}}),
        )
        .await
        .expect(201);
    assert_eq!(created["kind"], "TokenRequest");
    assert_eq!(created["metadata"]["name"], "robot");
    assert_eq!(created["spec"]["expirationSeconds"], 3600);
    assert!(
        created["status"]["token"]
            .as_str()
            .is_some_and(|t| t.split('.').count() == 3)
    );
    assert!(created["status"]["expirationTimestamp"].is_string());
    let reply = api
        .post(
            &path,
            &json!({"apiVersion": "authentication.k8s.io/v1", "kind": "TokenRequest",
                "spec": {"expirationSeconds": 60}}),
        )
        .await;
    let status = reply.expect_status(422, "Invalid");
    assert_eq!(
        status["message"],
        "TokenRequest.authentication.k8s.io \"\" is invalid: spec.expirationSeconds: Invalid value: 60: may not specify a duration less than 10 minutes"
    );
    for (_, k) in env.each() {
        let token = ok(k, &env.server, &["create", "token", "robot"]);
        assert_eq!(token.trim().split('.').count(), 3, "{token}");
        let e = err(k, &env.server, &["create", "token", "nobody"]);
        assert!(e.contains("serviceaccounts \"nobody\" not found"), "{e}");
    }

    // services/proxy: no endpoints.
    api.post(
        &format!("/api/v1/namespaces/{NS}/services"),
        &json!({"apiVersion": "v1", "kind": "Service", "metadata": {"name": "web"},
            "spec": {"selector": {"app": "web"}, "ports": [{"name": "http", "port": 80}]}}),
    )
    .await
    .expect(201);
    let svc = format!("/api/v1/namespaces/{NS}/services");
    assert_body(
        &api.get(&format!("{svc}/web/proxy/healthz")).await,
        503,
        &failure(
            503,
            "ServiceUnavailable",
            "no endpoints available for service \"web\"",
            None,
        ),
    );
    assert_body(
        &api.get(&format!("{svc}/web:81/proxy/")).await,
        503,
        &failure(
            503,
            "ServiceUnavailable",
            "no service port 81 found for service \"web\"",
            None,
        ),
    );
    for (_, k) in env.each() {
        let e = err(
            k,
            &env.server,
            &["get", "--raw", &format!("{svc}/web/proxy/")],
        );
        assert!(
            e.contains(
                "Error from server (ServiceUnavailable): no endpoints available for service \"web\""
            ),
            "{e}"
        );
    }
    // pods/proxy: a pod without an address.
    create_pod(&api, "p1", "web").await;
    assert_body(
        &api.get(&format!("{}/proxy/", pod_path("p1"))).await,
        400,
        &failure(400, "BadRequest", "address not allowed", None),
    );

    // pods/resize: only resources change.
    let resize = format!("{}/resize", pod_path("p1"));
    let r = api
        .raw(
            Method::PATCH,
            &resize,
            "application/strategic-merge-patch+json",
            serde_json::to_vec(
                &json!({"spec": {"containers": [{"name": "app", "image": "other",
                "resources": {"requests": {"cpu": "100m"}}}]}}),
            )
            .expect("json"),
        )
        .await;
    assert_eq!(r.status.as_u16(), 422, "QoS would change: {}", r.text());
    assert!(
        r.text()
            .contains("Pod QOS Class may not change as a result of resizing")
    );
    let r = api.get(&resize).await.expect(200);
    assert_eq!(r["kind"], "Pod");
    // A Burstable pod's cpu request changes; its image does not.
    let mut burstable = pod("p2", "web");
    burstable["spec"]["containers"][0]["resources"] =
        json!({"requests": {"cpu": "100m"}, "limits": {"cpu": "500m"}});
    api.post(&pods(), &burstable).await.expect(201);
    let resized = api
        .raw(
            Method::PATCH,
            &format!("{}/resize", pod_path("p2")),
            "application/strategic-merge-patch+json",
            serde_json::to_vec(
                &json!({"spec": {"containers": [{"name": "app", "image": "other",
                "resources": {"requests": {"cpu": "200m"}}}]}}),
            )
            .expect("json"),
        )
        .await
        .expect(200);
    let c = &resized["spec"]["containers"][0];
    assert_eq!(c["resources"]["requests"]["cpu"], "200m");
    assert_eq!(c["resources"]["limits"]["cpu"], "500m");
    assert_eq!(c["image"], "nginx");
    assert!(
        resized["metadata"]["managedFields"]
            .as_array()
            .is_some_and(|m| m.iter().any(|e| e["subresource"] == "resize")),
        "{resized}"
    );

    // namespaces/finalize: releases a namespace held by a finalizer.
    api.post(
        "/api/v1/namespaces",
        &json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "held"},
            "spec": {"finalizers": ["kubernetes", "example.com/hold"]}}),
    )
    .await
    .expect(201);
    api.delete("/api/v1/namespaces/held").await;
    let deadline = Instant::now() + Duration::from_secs(20);
    let held = loop {
        let ns = api.get("/api/v1/namespaces/held").await.expect(200);
        if ns["spec"]["finalizers"] == json!(["example.com/hold"]) {
            break ns;
        }
        assert!(Instant::now() < deadline, "namespace controller left {ns}");
        tokio::time::sleep(Duration::from_millis(200)).await;
    };
    assert_eq!(held["status"]["phase"], "Terminating");
    let mut bad = held.clone();
    bad["spec"]["finalizers"] = json!(["bogus"]);
    let r = api.put("/api/v1/namespaces/held/finalize", &bad).await;
    assert_eq!(r.status.as_u16(), 422, "{}", r.text());
    assert_eq!(
        r.json()["message"],
        "Namespace \"held\" is invalid: spec.finalizers[0]: Invalid value: \"bogus\": name is neither a standard finalizer name nor is it fully qualified"
    );
    let mut release = held.clone();
    release["spec"]["finalizers"] = json!([]);
    let r = api.put("/api/v1/namespaces/held/finalize", &release).await;
    assert_eq!(r.status.as_u16(), 200, "{}", r.text());
    assert_eq!(
        api.get("/api/v1/namespaces/held").await.status.as_u16(),
        404
    );
}

/// A PKCS#10 request for `CN=alice` (its key was discarded).
const ALICE_CSR: &str = "LS0tLS1CRUdJTiBDRVJUSUZJQ0FURSBSRVFVRVNULS0tLS0KTUlJQ1ZUQ0NBVDBDQVFBd0VERU9NQXdHQTFVRUF3d0ZZV3hwWTJVd2dnRWlNQTBHQ1NxR1NJYjNEUUVCQVFVQQpBNElCRHdBd2dnRUtBb0lCQVFDaWQvMmFtU280Q0xCZ1dlb0FWbkdhRW0yRlAxMTk3cEtmQzJLY2pSSktMLzRZCkpCbWdTN3lUczNYem5YV1BBTGcvWWdNK3IrdEVpN3p3emFET1MrdXFXY0lJWG5iNnNwcGhBaGFJRit5RGlVR2MKcCtiNHhMMmsvSytidERoQUxBUTFlejBGeGd3Nzd0b1FLblZIZGUzNkRNd3M1dVFKY0g1TWcvZ2tKZjc0a2VPWAp3eG13VGM0OS91MEdvZGVtaE10VzhuekdzcUFqYVRpSlg5VHFuaWFHOUhNWncrRG5ScHRubVRweUd6RFlQR3p0CkZVdVUxYm4wSDdEcVo0ZWwvVm1XalNvdjFwVGFadGMzV1NOVXNwcm1abW1OdFNIKzhkYjhMc2FNRHljQVF0bWMKbjZQUXcvVWhFTWNBalVFSG9TSGkzTEg4cVRQUnBubHowdlBBeFFaVkFnTUJBQUdnQURBTkJna3Foa2lHOXcwQgpBUXNGQUFPQ0FRRUFNckR6N25GUFozV09wY3hXbWxJdThHSEQzVHRiRnpLZ2JrWUxscFNkNEE1YjBXQXNCSGFoCkZtdXhpcnJIbGdqOWZkQS9MK0RETmdlOW9hVlcreDdTM3phMUZIbWVzSzNSL3U1UVdWaS9wYVUyWW5WdWF4bzYKQm9SeS9jcHRsaWpIZVMzcGJhNlNocFpSdXo0RnNDQ3hOM3Q5WmFVZzltczUvZldZQ0JkeVZESWVtT2ZjTGlMVAo5NGlGNDRXS2NuSTVpazBGWFRUdmREVEptM1hZUHo5WHEvN0ozcnF4SlFwN3hqUWtLL3ViY0M3dXlsck9ZcXluCjhUMW9qaFozak14UXRJVjdmREFNNUF5OTNicXduam1hWit5K2N5Y2pXUDB3ZlFQV1Z3TmgxZG5ZRjJ0a0l6eWEKaUVXcXY2aTZ5YndTNENqMWNFdWNIT1I1cGY3cTFCWEhjUT09Ci0tLS0tRU5EIENFUlRJRklDQVRFIFJFUVVFU1QtLS0tLQo=";

#[tokio::test]
async fn kubectl_certificate_approve_uses_the_approval_subresource() {
    let env = cli::start().await;
    let api = Api::new(&env.server);
    for (i, k) in env.each() {
        let name = format!("alice-{i}");
        api.post(
            "/apis/certificates.k8s.io/v1/certificatesigningrequests",
            &json!({"apiVersion": "certificates.k8s.io/v1", "kind": "CertificateSigningRequest",
                "metadata": {"name": name},
                "spec": {"request": ALICE_CSR, "signerName": "kubernetes.io/kube-apiserver-client",
                    "usages": ["client auth"]}}),
        )
        .await
        .expect(201);
        let out = ok(k, &env.server, &["certificate", "approve", &name]);
        assert_eq!(
            out,
            format!("certificatesigningrequest.certificates.k8s.io/{name} approved\n")
        );
        let csr = api
            .get(&format!(
                "/apis/certificates.k8s.io/v1/certificatesigningrequests/{name}"
            ))
            .await
            .expect(200);
        let c = &csr["status"]["conditions"][0];
        assert_eq!(c["type"], "Approved");
        assert_eq!(c["status"], "True");
        assert!(c["lastUpdateTime"].is_string(), "{csr}");
        assert!(
            csr["metadata"]["managedFields"]
                .as_array()
                .is_some_and(|m| m.iter().any(|e| e["subresource"] == "approval")),
            "{csr}"
        );
        let e = err(k, &env.server, &["certificate", "deny", &name]);
        assert!(e.contains("is already Approved"), "{e}");
    }
    // Approved and Denied together are refused by the server.
    let path = "/apis/certificates.k8s.io/v1/certificatesigningrequests/alice-0/approval";
    let mut both = api.get(path).await.expect(200);
    both["status"]["conditions"]
        .as_array_mut()
        .expect("conditions")
        .push(json!({"type": "Denied", "status": "True"}));
    let r = api.put(path, &both).await;
    assert_eq!(r.status.as_u16(), 422, "{}", r.text());
    assert!(
        r.text()
            .contains("Approved and Denied conditions are mutually exclusive"),
        "{}",
        r.text()
    );
}
