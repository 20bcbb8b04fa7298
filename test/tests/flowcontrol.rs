//! API priority and fairness end to end, with a real server over HTTPS
//! and kubectl: the default FlowSchemas and PriorityLevelConfigurations
//! exist, a flood from one user at a small priority level is answered 429
//! (`Retry-After`, a Status, the PF headers) while `system:masters` and
//! other users are served, invalid objects get upstream's 422, and the
//! `apiserver_flowcontrol_*` series report it.

use std::time::Duration;

use reqwest::Method;
use serde_json::{Value, json};
use skein_tests::http::{Api, Reply};
use skein_tests::kubectl_binaries;
use skein_tests::server::Server;

const FS: &str = "/apis/flowcontrol.apiserver.k8s.io/v1/flowschemas";
const PL: &str = "/apis/flowcontrol.apiserver.k8s.io/v1/prioritylevelconfigurations";

const DEFAULT_SCHEMAS: &[&str] = &[
    "catch-all",
    "endpoint-controller",
    "exempt",
    "global-default",
    "kube-controller-manager",
    "kube-scheduler",
    "kube-system-service-accounts",
    "probes",
    "service-accounts",
    "system-leader-election",
    "system-node-high",
    "system-nodes",
    "workload-leader-election",
];

const DEFAULT_LEVELS: &[&str] = &[
    "catch-all",
    "exempt",
    "global-default",
    "leader-election",
    "node-high",
    "system",
    "workload-high",
    "workload-low",
];

async fn as_user(api: &Api, user: &str, method: Method, path: &str, body: Option<&Value>) -> Reply {
    let body = body.map(|b| serde_json::to_vec(b).expect("json"));
    api.call(
        method,
        path,
        &[
            ("impersonate-user", user),
            ("content-type", "application/json"),
        ],
        body,
    )
    .await
}

/// `n` concurrent ConfigMap creates by `flooder`, names `{prefix}{i}`.
fn flood(api: &Api, prefix: &str, n: usize) -> tokio::task::JoinSet<Reply> {
    let mut set = tokio::task::JoinSet::new();
    for i in 0..n {
        let api = api.clone();
        let cm = json!({"metadata": {"name": format!("{prefix}{i}")}, "data": {"k": "v"}});
        set.spawn(async move {
            as_user(
                &api,
                "flooder",
                Method::POST,
                "/api/v1/namespaces/default/configmaps",
                Some(&cm),
            )
            .await
        });
    }
    set
}

#[tokio::test]
async fn defaults_exist_and_kubectl_lists_them() {
    let dir = tempfile::tempdir().expect("tempdir");
    let server = Server::start(&dir.path().join("data"), &[]).await;
    let api = Api::new(&server);
    for (path, names) in [(FS, DEFAULT_SCHEMAS), (PL, DEFAULT_LEVELS)] {
        let list = api.get(path).await.expect(200);
        let mut got: Vec<String> = list["items"]
            .as_array()
            .expect("items")
            .iter()
            .map(|i| {
                i["metadata"]["name"]
                    .as_str()
                    .unwrap_or_default()
                    .to_string()
            })
            .collect();
        got.sort();
        assert_eq!(got, names, "{path}");
        for item in list["items"].as_array().expect("items") {
            assert_eq!(
                item["metadata"]["annotations"]["apf.kubernetes.io/autoupdate-spec"], "true",
                "{item}"
            );
        }
    }
    let exempt = api.get(&format!("{FS}/exempt")).await.expect(200);
    assert_eq!(exempt["spec"]["matchingPrecedence"], 1);
    assert_eq!(
        exempt["spec"]["rules"][0]["subjects"][0]["group"]["name"],
        "system:masters"
    );
    let low = api.get(&format!("{PL}/workload-low")).await.expect(200);
    assert_eq!(low["spec"]["limited"]["nominalConcurrencyShares"], 100);
    assert_eq!(low["spec"]["limited"]["lendablePercent"], 90);

    for k in kubectl_binaries() {
        let out = server.kubectl(&k, &["get", "flowschemas"]);
        let text = String::from_utf8_lossy(&out.stdout);
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let header = text.lines().next().unwrap_or_default();
        assert!(
            header.starts_with("NAME")
                && header.contains("PRIORITYLEVEL")
                && header.contains("MATCHINGPRECEDENCE"),
            "{text}"
        );
        for name in DEFAULT_SCHEMAS {
            assert!(
                text.lines().any(|l| l.starts_with(&format!("{name} "))),
                "{name} in\n{text}"
            );
        }
        let out = server.kubectl(&k, &["get", "prioritylevelconfigurations"]);
        let text = String::from_utf8_lossy(&out.stdout);
        assert!(
            text.lines()
                .next()
                .unwrap_or_default()
                .contains("NOMINALCONCURRENCYSHARES"),
            "{text}"
        );
        assert!(
            text.lines().any(|l| l.starts_with("global-default ")),
            "{text}"
        );
    }
    // A restart leaves the defaults as they are (nothing rewritten).
    let versions = |list: &Value| -> Vec<(String, String)> {
        let mut v: Vec<(String, String)> = list["items"]
            .as_array()
            .expect("items")
            .iter()
            .map(|i| {
                (
                    i["metadata"]["name"]
                        .as_str()
                        .unwrap_or_default()
                        .to_string(),
                    i["metadata"]["resourceVersion"]
                        .as_str()
                        .unwrap_or_default()
                        .to_string(),
                )
            })
            .collect();
        v.sort();
        v
    };
    let before = (
        versions(&api.get(FS).await.expect(200)),
        versions(&api.get(PL).await.expect(200)),
    );
    let mut server = server;
    server
        .stop_with(nix::sys::signal::Signal::SIGTERM, Duration::from_secs(15))
        .await;
    let server = Server::start(&dir.path().join("data"), &[]).await;
    let api = Api::new(&server);
    let after = (
        versions(&api.get(FS).await.expect(200)),
        versions(&api.get(PL).await.expect(200)),
    );
    assert_eq!(before, after, "a restart rewrote a default object");

    // A deleted mandatory object comes back.
    api.delete(&format!("{FS}/catch-all")).await.expect(200);
    let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
    loop {
        if api.get(&format!("{FS}/catch-all")).await.status == 200 {
            break;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "catch-all was not recreated"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

#[tokio::test]
async fn invalid_objects_get_upstreams_422() {
    let dir = tempfile::tempdir().expect("tempdir");
    let server = Server::start(&dir.path().join("data"), &[]).await;
    let api = Api::new(&server);
    let cases = [
        (
            PL,
            json!({"metadata": {"name": "p"}, "spec": {"type": "Limited", "limited": {
                "nominalConcurrencyShares": 5, "lendablePercent": 101, "limitResponse": {"type": "Reject"}}}}),
            "PriorityLevelConfiguration.flowcontrol.apiserver.k8s.io \"p\" is invalid: \
             spec.limited.lendablePercent: Invalid value: 101: must be between 0 and 100, inclusive",
            "spec.limited.lendablePercent",
        ),
        (
            PL,
            json!({"metadata": {"name": "q"}, "spec": {"type": "Limited", "limited": {
                "limitResponse": {"type": "Queue", "queuing": {"queues": 4, "handSize": 5, "queueLengthLimit": 1}}}}}),
            "PriorityLevelConfiguration.flowcontrol.apiserver.k8s.io \"q\" is invalid: \
             spec.limited.limitResponse.queuing.handSize: Invalid value: 5: should not be greater than queues (4)",
            "spec.limited.limitResponse.queuing.handSize",
        ),
        (
            FS,
            json!({"metadata": {"name": "f"}, "spec": {"matchingPrecedence": 1,
                "priorityLevelConfiguration": {"name": "global-default"},
                "rules": [{"subjects": [{"kind": "Group", "group": {"name": "g"}}],
                           "nonResourceRules": [{"verbs": ["get"], "nonResourceURLs": ["/x"]}]}]}}),
            "FlowSchema.flowcontrol.apiserver.k8s.io \"f\" is invalid: \
             spec.matchingPrecedence: Invalid value: 1: only the schema named 'exempt' may have matchingPrecedence 1",
            "spec.matchingPrecedence",
        ),
        (
            FS,
            json!({"metadata": {"name": "g"}, "spec": {"matchingPrecedence": 10,
                "priorityLevelConfiguration": {"name": "global-default"},
                "rules": [{"subjects": [{"kind": "Group", "group": {"name": "g"}}]}]}}),
            "FlowSchema.flowcontrol.apiserver.k8s.io \"g\" is invalid: \
             spec.rules[0]: Required value: at least one of resourceRules and nonResourceRules has to be non-empty",
            "spec.rules[0]",
        ),
    ];
    for (path, body, message, field) in cases {
        let status = api.post(path, &body).await.expect_status(422, "Invalid");
        assert_eq!(status["message"], message);
        assert_eq!(status["details"]["causes"][0]["field"], field, "{status}");
    }
}

#[tokio::test]
async fn a_flood_at_a_small_level_gets_429_and_masters_are_exempt() {
    let dir = tempfile::tempdir().expect("tempdir");
    let server = Server::start(&dir.path().join("data"), &[]).await;
    let api = Api::new(&server);
    // The flooder may create ConfigMaps (so what is not rejected succeeds).
    api.post(
        "/apis/rbac.authorization.k8s.io/v1/clusterrolebindings",
        &json!({"metadata": {"name": "flooder-edit"},
                "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "edit"},
                "subjects": [{"apiGroup": "rbac.authorization.k8s.io", "kind": "User", "name": "flooder"},
                             {"apiGroup": "rbac.authorization.k8s.io", "kind": "User", "name": "polite"}]}),
    )
    .await
    .expect(201);
    let level = api
        .post(
            PL,
            &json!({"metadata": {"name": "tiny"}, "spec": {"type": "Limited", "limited": {
                "nominalConcurrencyShares": 1, "lendablePercent": 0, "borrowingLimitPercent": 0,
                "limitResponse": {"type": "Queue", "queuing": {"queues": 1, "handSize": 1, "queueLengthLimit": 1}}}}}),
        )
        .await
        .expect(201);
    let schema = api
        .post(
            FS,
            &json!({"metadata": {"name": "flood"}, "spec": {
                "priorityLevelConfiguration": {"name": "tiny"}, "matchingPrecedence": 50,
                "distinguisherMethod": {"type": "ByUser"},
                "rules": [{"subjects": [{"kind": "User", "user": {"name": "flooder"}}],
                           "resourceRules": [{"verbs": ["*"], "apiGroups": ["*"], "resources": ["*"],
                                              "namespaces": ["*"], "clusterScope": true}]}]}}),
        )
        .await
        .expect(201);
    let (fs_uid, pl_uid) = (
        schema["metadata"]["uid"].as_str().expect("uid").to_string(),
        level["metadata"]["uid"].as_str().expect("uid").to_string(),
    );
    // The configuration is in effect once a request of the flooder
    // carries the new schema's uid.
    let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
    loop {
        let r = as_user(
            &api,
            "flooder",
            Method::GET,
            "/api/v1/namespaces/default/configmaps",
            None,
        )
        .await;
        if r.header("x-kubernetes-pf-flowschema-uid") == Some(fs_uid.as_str()) {
            assert_eq!(
                r.header("x-kubernetes-pf-prioritylevel-uid"),
                Some(pl_uid.as_str())
            );
            break;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "the flood schema never took effect"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }

    // 3 seats (600 × 1 / 246 shares) and one waiting place: a flood of
    // 300 concurrent creates must see 429s.
    let replies = flood(&api, "f", 300).join_all().await;
    let rejected: Vec<&Reply> = replies.iter().filter(|r| r.status == 429).collect();
    let created = replies.iter().filter(|r| r.status == 201).count();
    assert_eq!(rejected.len() + created, 300, "only 201s and 429s");
    assert!(!rejected.is_empty(), "the flood got no 429");
    assert!(created > 0);
    let r = rejected[0];
    assert_eq!(r.header("retry-after"), Some("1"));
    assert_eq!(
        r.header("x-kubernetes-pf-flowschema-uid"),
        Some(fs_uid.as_str())
    );
    assert_eq!(
        r.header("x-kubernetes-pf-prioritylevel-uid"),
        Some(pl_uid.as_str())
    );
    let status = r.json();
    assert_eq!(status["kind"], "Status");
    assert_eq!(status["reason"], "TooManyRequests");
    assert_eq!(status["code"], 429);
    assert_eq!(
        status["message"],
        "Too many requests, please try again later."
    );

    // Meanwhile (again, concurrently) the polite user and the admin are
    // served: other flows, other levels.
    let second = flood(&api, "g", 300);
    let polite = async {
        let mut codes = Vec::new();
        for i in 0..20 {
            let cm = json!({"metadata": {"name": format!("p{i}")}});
            let r = as_user(
                &api,
                "polite",
                Method::POST,
                "/api/v1/namespaces/default/configmaps",
                Some(&cm),
            )
            .await;
            codes.push(r.status.as_u16());
            let cm = json!({"metadata": {"name": format!("a{i}")}});
            let r = api.post("/api/v1/namespaces/default/configmaps", &cm).await;
            codes.push(r.status.as_u16());
            let exempt = r
                .header("x-kubernetes-pf-flowschema-uid")
                .map(str::to_string);
            assert!(
                exempt.is_some(),
                "the admin's response names its flow schema"
            );
        }
        codes
    };
    let (replies, codes) = tokio::join!(second.join_all(), polite);
    assert!(codes.iter().all(|c| *c == 201), "{codes:?}");
    assert!(replies.iter().any(|r| r.status == 429));
    let exempt_uid = api.get(&format!("{FS}/exempt")).await.expect(200)["metadata"]["uid"]
        .as_str()
        .expect("uid")
        .to_string();
    let r = api.get("/api/v1/namespaces/default/configmaps/a0").await;
    assert_eq!(
        r.header("x-kubernetes-pf-flowschema-uid"),
        Some(exempt_uid.as_str())
    );

    let metrics = api.get("/metrics").await.text();
    for line in [
        "apiserver_flowcontrol_rejected_requests_total{flow_schema=\"flood\",priority_level=\"tiny\",reason=\"queue-full\"}",
        "apiserver_flowcontrol_dispatched_requests_total{flow_schema=\"flood\",priority_level=\"tiny\"}",
        "apiserver_flowcontrol_dispatched_requests_total{flow_schema=\"exempt\",priority_level=\"exempt\"}",
        "apiserver_flowcontrol_current_inqueue_requests{flow_schema=\"flood\",priority_level=\"tiny\"} 0",
        "apiserver_flowcontrol_current_executing_requests{flow_schema=\"flood\",priority_level=\"tiny\"} 0",
        "apiserver_flowcontrol_nominal_limit_seats{priority_level=\"tiny\"} 3",
        "apiserver_flowcontrol_request_wait_duration_seconds_bucket{",
    ] {
        assert!(metrics.contains(line), "{line} in /metrics");
    }
}

/// kubectl retries a 429 after its `Retry-After`, as against
/// kube-apiserver: while the user's level has no seats (a `Reject` level
/// of 0 shares that may not borrow), every attempt is rejected; once the
/// level gets shares, the next retry succeeds. (Discovery, non-resource
/// requests, goes to `global-default`.)
#[tokio::test]
async fn kubectl_retries_429s() {
    let dir = tempfile::tempdir().expect("tempdir");
    let server = Server::start(&dir.path().join("data"), &[]).await;
    let api = Api::new(&server);
    api.post(
        "/apis/rbac.authorization.k8s.io/v1/clusterrolebindings",
        &json!({"metadata": {"name": "stalled-edit"},
                "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "edit"},
                "subjects": [{"apiGroup": "rbac.authorization.k8s.io", "kind": "User", "name": "stalled"}]}),
    )
    .await
    .expect(201);
    let shares = |n: i64| json!({"spec": {"limited": {"nominalConcurrencyShares": n}}});
    api.post(
        PL,
        &json!({"metadata": {"name": "none"}, "spec": {"type": "Limited", "limited": {
            "nominalConcurrencyShares": 0, "lendablePercent": 0, "borrowingLimitPercent": 0,
            "limitResponse": {"type": "Reject"}}}}),
    )
    .await
    .expect(201);
    let schema = api
        .post(
            FS,
            &json!({"metadata": {"name": "stalled"}, "spec": {
                "priorityLevelConfiguration": {"name": "none"}, "matchingPrecedence": 50,
                "rules": [{"subjects": [{"kind": "User", "user": {"name": "stalled"}}],
                           "resourceRules": [{"verbs": ["*"], "apiGroups": ["*"], "resources": ["*"],
                                              "namespaces": ["*"], "clusterScope": true}]}]}}),
        )
        .await
        .expect(201);
    let fs_uid = schema["metadata"]["uid"].as_str().expect("uid").to_string();
    let path = "/api/v1/namespaces/default/configmaps";
    for (i, k) in kubectl_binaries().into_iter().enumerate() {
        // Wait until the stalled user is rejected by its own schema.
        let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
        loop {
            let r = as_user(&api, "stalled", Method::GET, path, None).await;
            if r.status == 429
                && r.header("x-kubernetes-pf-flowschema-uid") == Some(fs_uid.as_str())
            {
                break;
            }
            assert!(
                tokio::time::Instant::now() < deadline,
                "the stalled user was never rejected"
            );
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        let name = format!("retried-{i}");
        let kubeconfig = server.kubeconfig();
        let run = {
            let k = k.clone();
            let data = dir.path().join("data");
            tokio::task::spawn_blocking(move || {
                std::process::Command::new(&k)
                    .args(["--kubeconfig"])
                    .arg(&kubeconfig)
                    .arg("--cache-dir")
                    .arg(data.join("kubectl-cache"))
                    .args([
                        "--as=stalled",
                        "-v=6",
                        "create",
                        "configmap",
                        &name,
                        "-n",
                        "default",
                    ])
                    .env_remove("KUBECONFIG")
                    .output()
                    .expect("kubectl runs")
            })
        };
        tokio::time::sleep(Duration::from_millis(2500)).await;
        api.merge_patch(&format!("{PL}/none"), &shares(5))
            .await
            .expect(200);
        let out = run.await.expect("kubectl task");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success(), "{}: {stderr}", k.display());
        assert!(
            stderr.contains("429"),
            "{} saw no 429: {stderr}",
            k.display()
        );
        api.get(&format!("{path}/retried-{i}")).await.expect(200);
        api.merge_patch(&format!("{PL}/none"), &shares(0))
            .await
            .expect(200);
    }
}
