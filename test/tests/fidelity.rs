//! What real clients see of kube-apiserver v1.33 that is not a single
//! verb's semantics: which group/versions and resources are served (and
//! only those), conversion between versions of one stored resource
//! (autoscaling/v1 ⇄ v2 HorizontalPodAutoscalers, core/v1 ⇄
//! events.k8s.io/v1 Events), upstream's message texts, and DELETE bodies.
//! Raw HTTPS where bytes matter, kubectl 1.35 and 1.32 where a command
//! shows it.

use std::collections::BTreeSet;

use reqwest::Method;
use serde_json::{Value, json};
use skein_tests::cli::{self, Env};
use skein_tests::http::{Api, items, message};
use skein_tests::kubectl as kc;
use skein_tests::server::Server;

async fn start() -> (tempfile::TempDir, Server, Api) {
    let dir = tempfile::tempdir().expect("tempdir");
    let server = Server::start(dir.path(), &[]).await;
    let api = Api::new(&server);
    (dir, server, api)
}

fn repo_file(rel: &str) -> String {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join(rel);
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// `"<group/version> <resource>"` for every resource and subresource that
/// legacy discovery lists.
async fn legacy_discovery(api: &Api) -> BTreeSet<String> {
    let mut gvs = vec!["v1".to_string()];
    let groups = api.get("/apis").await.expect(200);
    for g in groups["groups"].as_array().expect("groups") {
        for v in g["versions"].as_array().expect("versions") {
            gvs.push(
                v["groupVersion"]
                    .as_str()
                    .expect("groupVersion")
                    .to_string(),
            );
        }
    }
    let mut out = BTreeSet::new();
    for gv in gvs {
        let path = if gv == "v1" {
            "/api/v1".to_string()
        } else {
            format!("/apis/{gv}")
        };
        let list = api.get(&path).await.expect(200);
        assert_eq!(list["groupVersion"], gv.as_str(), "{list}");
        for r in list["resources"].as_array().expect("resources") {
            out.insert(format!("{gv} {}", r["name"].as_str().expect("name")));
        }
    }
    out
}

/// The same from aggregated discovery (`apidiscovery.k8s.io/v2`).
async fn aggregated_discovery(api: &Api) -> BTreeSet<String> {
    let accept = "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList";
    let mut out = BTreeSet::new();
    for root in ["/api", "/apis"] {
        let doc = api.get_as(root, accept).await.expect(200);
        for g in doc["items"].as_array().expect("items") {
            let group = g["metadata"]["name"].as_str().unwrap_or("");
            for v in g["versions"].as_array().expect("versions") {
                let version = v["version"].as_str().expect("version");
                let gv = if group.is_empty() {
                    version.to_string()
                } else {
                    format!("{group}/{version}")
                };
                for r in v["resources"].as_array().expect("resources") {
                    let name = r["resource"].as_str().expect("resource");
                    out.insert(format!("{gv} {name}"));
                    for s in r["subresources"].as_array().into_iter().flatten() {
                        out.insert(format!(
                            "{gv} {name}/{}",
                            s["subresource"].as_str().expect("sub")
                        ));
                    }
                }
            }
        }
    }
    out
}

#[tokio::test]
async fn discovery_serves_exactly_upstream_v1_33_defaults() {
    let want: BTreeSet<String> = repo_file("fixtures/discovery-v1.33.txt")
        .lines()
        .filter(|l| !l.starts_with('#') && !l.trim().is_empty())
        .map(str::to_string)
        .collect();
    let (_dir, _server, api) = start().await;
    // Skein's own API (CRDs installed at start) comes on top of upstream's
    // defaults, and nothing else does.
    let own: BTreeSet<String> = ["clusters", "placements", "clusterplacements", "federations"]
        .iter()
        .flat_map(|r| {
            [
                format!("federation.skein.io/v1alpha1 {r}"),
                format!("federation.skein.io/v1alpha1 {r}/status"),
            ]
        })
        .chain([
            "federation.skein.io/v1alpha1 clusters/proxy".to_owned(),
            "federation.skein.io/v1alpha1 federations/proxy".to_owned(),
        ])
        .collect();
    for (how, all) in [
        ("legacy", legacy_discovery(&api).await),
        ("aggregated", aggregated_discovery(&api).await),
    ] {
        let (skein, got): (BTreeSet<String>, BTreeSet<String>) = all
            .into_iter()
            .partition(|l| l.starts_with("federation.skein.io/"));
        assert_eq!(skein, own, "{how} discovery of federation.skein.io");
        let missing: Vec<_> = want.difference(&got).collect();
        let extra: Vec<_> = got.difference(&want).collect();
        assert!(
            missing.is_empty() && extra.is_empty(),
            "{how} discovery differs from upstream v1.33's defaults:\nmissing {missing:#?}\nextra {extra:#?}"
        );
    }
    // autoscaling serves v2 (preferred) and v1, in that order.
    let autoscaling = api.get("/apis/autoscaling").await.expect(200);
    assert_eq!(
        autoscaling["versions"],
        json!([{"groupVersion": "autoscaling/v2", "version": "v2"},
            {"groupVersion": "autoscaling/v1", "version": "v1"}])
    );
    assert_eq!(autoscaling["preferredVersion"]["version"], "v2");
    // One resource, one storage version: the same storageVersionHash.
    let hash = |list: Value, name: &str| {
        list["resources"]
            .as_array()
            .and_then(|rs| rs.iter().find(|r| r["name"] == name))
            .map(|r| r["storageVersionHash"].clone())
            .unwrap_or(Value::Null)
    };
    assert_eq!(
        hash(
            api.get("/apis/autoscaling/v1").await.expect(200),
            "horizontalpodautoscalers"
        ),
        hash(
            api.get("/apis/autoscaling/v2").await.expect(200),
            "horizontalpodautoscalers"
        )
    );
    assert_eq!(
        hash(
            api.get("/apis/events.k8s.io/v1").await.expect(200),
            "events"
        ),
        hash(api.get("/api/v1").await.expect(200), "events")
    );
}

fn hpa_v1(name: &str) -> Value {
    json!({"apiVersion": "autoscaling/v1", "kind": "HorizontalPodAutoscaler",
        "metadata": {"name": name},
        "spec": {"scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "web"},
            "minReplicas": 2, "maxReplicas": 5, "targetCPUUtilizationPercentage": 70}})
}

#[tokio::test]
async fn autoscaling_v1_and_v2_are_one_resource() {
    let (_dir, _server, api) = start().await;
    let v1s = "/apis/autoscaling/v1/namespaces/default/horizontalpodautoscalers";
    let v2s = "/apis/autoscaling/v2/namespaces/default/horizontalpodautoscalers";
    let created = api.post(v1s, &hpa_v1("web")).await.expect(201);
    assert_eq!(created["apiVersion"], "autoscaling/v1");
    assert_eq!(created["spec"]["targetCPUUtilizationPercentage"], 70);
    assert!(created["spec"].get("metrics").is_none(), "{created}");

    let v2 = api.get(&format!("{v2s}/web")).await.expect(200);
    assert_eq!(v2["apiVersion"], "autoscaling/v2");
    assert_eq!(
        v2["spec"]["metrics"],
        json!([{"type": "Resource", "resource": {"name": "cpu",
            "target": {"type": "Utilization", "averageUtilization": 70}}}])
    );
    assert_eq!(v2["metadata"]["uid"], created["metadata"]["uid"]);
    assert_eq!(
        v2["metadata"]["resourceVersion"],
        created["metadata"]["resourceVersion"]
    );

    // A v2-only metric written through v2 is kept when read through v1 (in
    // upstream's annotation) and survives a v1 update.
    let mut v2 = v2;
    v2["spec"]["metrics"] = json!([
        {"type": "Pods", "pods": {"metric": {"name": "qps"}, "target": {"type": "AverageValue", "averageValue": "10"}}},
        {"type": "Resource", "resource": {"name": "cpu", "target": {"type": "Utilization", "averageUtilization": 60}}}
    ]);
    api.put(&format!("{v2s}/web"), &v2).await.expect(200);
    let mut v1 = api.get(&format!("{v1s}/web")).await.expect(200);
    assert_eq!(v1["spec"]["targetCPUUtilizationPercentage"], 60);
    assert_eq!(
        v1["metadata"]["annotations"]["autoscaling.alpha.kubernetes.io/metrics"],
        r#"[{"pods":{"metricName":"qps","targetAverageValue":"10"},"type":"Pods"}]"#
    );
    v1["spec"]["maxReplicas"] = json!(9);
    api.put(&format!("{v1s}/web"), &v1).await.expect(200);
    let v2 = api.get(&format!("{v2s}/web")).await.expect(200);
    assert_eq!(v2["spec"]["maxReplicas"], 9);
    assert_eq!(v2["spec"]["metrics"][0]["pods"]["metric"]["name"], "qps");
    assert_eq!(
        v2["spec"]["metrics"][1]["resource"]["target"]["averageUtilization"],
        60
    );
    assert!(v2["metadata"].get("annotations").is_none(), "{v2}");

    // Lists and deletes through either version see the same object.
    assert_eq!(items(&api.get(v1s).await.expect(200)).len(), 1);
    let list = api.get(v2s).await.expect(200);
    assert_eq!(list["kind"], "HorizontalPodAutoscalerList");
    assert_eq!(list["apiVersion"], "autoscaling/v2");
    api.delete(&format!("{v1s}/web")).await.expect(200);
    api.get(&format!("{v2s}/web"))
        .await
        .expect_status(404, "NotFound");

    // A v2 body posted to the v1 URL: upstream's version check.
    let s = api
        .post(
            v1s,
            &json!({"apiVersion": "autoscaling/v2", "kind": "HorizontalPodAutoscaler",
            "metadata": {"name": "x"}, "spec": {"maxReplicas": 1,
            "scaleTargetRef": {"kind": "Deployment", "name": "web"}}}),
        )
        .await
        .expect_status(400, "BadRequest");
    assert_eq!(
        message(&s),
        "the API version in the data (autoscaling/v2) does not match the expected API version (autoscaling/v1)"
    );
}

#[tokio::test]
async fn kubectl_autoscale_works_with_1_32_and_1_35() {
    let env = cli::start().await;
    for (i, k) in env.each() {
        let ns = format!("as{i}");
        env.namespace(k, &ns);
        env.create(
            k,
            &ns,
            &json!({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web"},
                "spec": {"replicas": 1, "selector": {"matchLabels": {"app": "web"}},
                    "template": {"metadata": {"labels": {"app": "web"}},
                        "spec": {"containers": [{"name": "web", "image": "nginx:1.27"}]}}}}),
        );
        let out = cli::ok(
            k,
            &env.server,
            &[
                "autoscale",
                "deployment",
                "web",
                "--min=2",
                "--max=5",
                "--cpu-percent=80",
                "-n",
                &ns,
            ],
        );
        assert_eq!(
            out,
            "horizontalpodautoscaler.autoscaling/web autoscaled\n",
            "kubectl {}",
            kc::client_minor(k)
        );
        // Through the other version too.
        let v1 = cli::get_json(
            k,
            &env.server,
            &[
                "get",
                "horizontalpodautoscalers.v1.autoscaling",
                "web",
                "-n",
                &ns,
                "-o",
                "json",
            ],
        );
        assert_eq!(v1["spec"]["targetCPUUtilizationPercentage"], 80, "{v1}");
        let v2 = cli::get_json(
            k,
            &env.server,
            &[
                "get",
                "horizontalpodautoscalers.v2.autoscaling",
                "web",
                "-n",
                &ns,
                "-o",
                "json",
            ],
        );
        assert_eq!(
            v2["spec"]["metrics"][0]["resource"]["target"]["averageUtilization"], 80,
            "{v2}"
        );
        assert_eq!(v2["spec"]["minReplicas"], 2);
    }
}

#[tokio::test]
async fn events_are_one_resource_seen_through_two_apis() {
    let (_dir, _server, api) = start().await;
    let core = "/api/v1/namespaces/default/events";
    let events = "/apis/events.k8s.io/v1/namespaces/default/events";
    api.post(
        core,
        &json!({"metadata": {"name": "e1"},
        "involvedObject": {"kind": "Pod", "name": "p", "namespace": "default"},
        "reason": "Started", "message": "started container", "type": "Normal",
        "source": {"component": "kubelet", "host": "n1"}, "count": 3,
        "firstTimestamp": "2026-01-01T00:00:00Z", "lastTimestamp": "2026-01-01T00:01:00Z"}),
    )
    .await
    .expect(201);
    let e = api.get(&format!("{events}/e1")).await.expect(200);
    assert_eq!(e["apiVersion"], "events.k8s.io/v1");
    assert_eq!(e["regarding"]["name"], "p");
    assert_eq!(e["note"], "started container");
    assert_eq!(e["deprecatedSource"]["component"], "kubelet");
    assert_eq!(e["deprecatedCount"], 3);
    assert_eq!(e["deprecatedFirstTimestamp"], "2026-01-01T00:00:00Z");
    assert!(
        e.get("message").is_none() && e.get("involvedObject").is_none(),
        "{e}"
    );

    api.post(
        events,
        &json!({"apiVersion": "events.k8s.io/v1", "kind": "Event",
        "metadata": {"name": "e2"}, "eventTime": "2026-01-01T00:00:00.000000Z",
        "reportingController": "example.com/ctl", "reportingInstance": "ctl-1",
        "action": "Scale", "reason": "Scaled", "type": "Normal", "note": "scaled up",
        "regarding": {"kind": "Deployment", "name": "web", "namespace": "default"}}),
    )
    .await
    .expect(201);
    let c = api.get(&format!("{core}/e2")).await.expect(200);
    assert_eq!(c["apiVersion"], "v1");
    assert_eq!(c["message"], "scaled up");
    assert_eq!(c["involvedObject"]["kind"], "Deployment");
    assert_eq!(c["reportingComponent"], "example.com/ctl");

    // Both lists list both events.
    for path in [core, events] {
        let mut names = api.names(path).await;
        names.sort();
        assert_eq!(names, ["e1", "e2"], "{path}");
    }
    api.delete(&format!("{events}/e1")).await.expect(200);
    api.get(&format!("{core}/e1"))
        .await
        .expect_status(404, "NotFound");
}

#[tokio::test]
async fn messages_match_kube_apiserver() {
    let (_dir, _server, api) = start().await;
    let cms = "/api/v1/namespaces/default/configmaps";
    api.post(cms, &json!({"metadata": {"name": "one"}}))
        .await
        .expect(201);

    // PUT with another name in the body.
    let s = api
        .put(&format!("{cms}/one"), &json!({"metadata": {"name": "two"}}))
        .await
        .expect_status(400, "BadRequest");
    assert_eq!(
        message(&s),
        "the name of the object (two) does not match the name on the URL (one)"
    );
    let s = api
        .put(
            &format!("{cms}/one"),
            &json!({"metadata": {"name": "one", "namespace": "other"}}),
        )
        .await
        .expect_status(400, "BadRequest");
    assert_eq!(
        message(&s),
        "the namespace of the object (other) does not match the namespace on the URL (default)"
    );

    // Delete preconditions name the Kind.
    let opts = |pre: Value| {
        Some(
            serde_json::to_vec(
                &json!({"kind": "DeleteOptions", "apiVersion": "v1", "preconditions": pre}),
            )
            .expect("json"),
        )
    };
    let headers = [("content-type", "application/json")];
    let live = api.get(&format!("{cms}/one")).await.expect(200);
    let rv = live["metadata"]["resourceVersion"].as_str().expect("rv");
    let s = api
        .call(
            Method::DELETE,
            &format!("{cms}/one"),
            &headers,
            opts(json!({"resourceVersion": "1"})),
        )
        .await
        .expect_status(409, "Conflict");
    assert_eq!(
        message(&s),
        format!(
            "Operation cannot be fulfilled on ConfigMap \"one\": the ResourceVersion in the precondition (1) \
             does not match the ResourceVersion in record ({rv}). The object might have been modified"
        )
    );
    assert_eq!(s["details"], json!({"name": "one", "kind": "ConfigMap"}));

    // A body over 3 MiB.
    let big = vec![b' '; 3 * 1024 * 1024 + 1];
    let s = api
        .raw(Method::POST, cms, "application/json", big)
        .await
        .expect_status(413, "RequestEntityTooLarge");
    assert_eq!(message(&s), "Request entity too large: limit is 3145728");

    // A body of another kind, and a kind the scheme does not know.
    let s = api
        .post(
            cms,
            &json!({"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "s"}}),
        )
        .await
        .expect_status(400, "BadRequest");
    assert_eq!(
        message(&s),
        "Secret in version \"v1\" cannot be handled as a ConfigMap: converting (v1.Secret) to (core.ConfigMap): unknown conversion"
    );
    let s = api
        .post(
            cms,
            &json!({"apiVersion": "v1", "kind": "configmap", "metadata": {"name": "s"}}),
        )
        .await
        .expect_status(400, "BadRequest");
    assert_eq!(
        message(&s),
        "configmap in version \"v1\" cannot be handled as a ConfigMap: no kind \"configmap\" is registered for version \"v1\" in scheme \"pkg/api/legacyscheme/scheme.go:30\""
    );
    // Nothing else stored (kube-root-ca.crt is the root CA publisher's).
    assert_eq!(
        api.names(cms).await,
        ["kube-root-ca.crt", "one"],
        "nothing else stored"
    );

    // Paths no group serves: Go's plain 404; a served group/version with an
    // unknown resource: the NotFound Status.
    for path in [
        "/apis/no.such.group/v1/things",
        "/apis/apps/v9/deployments",
        "/apis/no.such.group",
    ] {
        let r = api.get(path).await;
        assert_eq!(r.status.as_u16(), 404, "{path}");
        assert_eq!(
            r.header("content-type"),
            Some("text/plain; charset=utf-8"),
            "{path}"
        );
        assert_eq!(r.text(), "404 page not found\n", "{path}");
    }
    let s = api
        .get("/apis/apps/v1/nothings")
        .await
        .expect_status(404, "NotFound");
    assert_eq!(
        message(&s),
        "the server could not find the requested resource"
    );
}

#[tokio::test]
async fn delete_returns_the_object_where_upstream_storage_does() {
    let (_dir, _server, api) = start().await;
    api.post(
        "/api/v1/namespaces/default/services",
        &json!({"metadata": {"name": "svc"},
        "spec": {"ports": [{"port": 80}]}}),
    )
    .await
    .expect(201);
    let gone = api
        .delete("/api/v1/namespaces/default/services/svc")
        .await
        .expect(200);
    assert_eq!(gone["kind"], "Service", "{gone}");
    assert_eq!(gone["metadata"]["name"], "svc");
    api.post(
        "/api/v1/namespaces/default/serviceaccounts",
        &json!({"metadata": {"name": "robot"}}),
    )
    .await
    .expect(201);
    let gone = api
        .delete("/api/v1/namespaces/default/serviceaccounts/robot")
        .await
        .expect(200);
    assert_eq!(gone["kind"], "ServiceAccount", "{gone}");

    let cm = api
        .post(
            "/api/v1/namespaces/default/configmaps",
            &json!({"metadata": {"name": "c"}}),
        )
        .await
        .expect(201);
    let gone = api
        .delete("/api/v1/namespaces/default/configmaps/c")
        .await
        .expect(200);
    assert_eq!(
        gone,
        json!({"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Success",
            "details": {"name": "c", "kind": "configmaps", "uid": cm["metadata"]["uid"]}})
    );
}

#[tokio::test]
async fn review_resources_answer_as_an_always_allow_server() {
    let (_dir, _server, api) = start().await;
    let sar = api
        .post("/apis/authorization.k8s.io/v1/selfsubjectaccessreviews", &json!({
            "spec": {"resourceAttributes": {"verb": "delete", "resource": "pods", "namespace": "default"}}}))
        .await
        .expect(201);
    assert_eq!(sar["status"], json!({"allowed": true}));
    let s = api
        .post(
            "/apis/authorization.k8s.io/v1/subjectaccessreviews",
            &json!({"spec": {}}),
        )
        .await
        .expect_status(422, "Invalid");
    assert!(
        message(&s).starts_with("SubjectAccessReview.authorization.k8s.io \"\" is invalid: "),
        "{s}"
    );
    let rules = api
        .post(
            "/apis/authorization.k8s.io/v1/selfsubjectrulesreviews",
            &json!({"spec": {"namespace": "default"}}),
        )
        .await
        .expect(201);
    assert_eq!(rules["status"]["resourceRules"][0]["verbs"], json!(["*"]));
    let s = api
        .post(
            "/apis/authentication.k8s.io/v1/tokenreviews",
            &json!({"spec": {}}),
        )
        .await
        .expect_status(400, "BadRequest");
    assert_eq!(
        message(&s),
        "token is required for TokenReview in authentication"
    );
    let tr = api
        .post(
            "/apis/authentication.k8s.io/v1/tokenreviews",
            &json!({"spec": {"token": "nope"}}),
        )
        .await
        .expect(201);
    assert_eq!(tr["status"], json!({"user": {}}));
}

#[tokio::test]
async fn kubectl_auth_can_i_with_1_32_and_1_35() {
    let env: Env = cli::start().await;
    for (_, k) in env.each() {
        let out = cli::ok(
            k,
            &env.server,
            &["auth", "can-i", "delete", "pods", "-n", "default"],
        );
        assert_eq!(out, "yes\n", "kubectl {}", kc::client_minor(k));
        let out = cli::ok(
            k,
            &env.server,
            &["auth", "can-i", "--list", "-n", "default"],
        );
        assert!(
            out.lines()
                .next()
                .is_some_and(|h| h.starts_with("Resources")),
            "{out}"
        );
        assert!(out.contains("*.*"), "{out}");
    }
}
