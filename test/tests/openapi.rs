//! OpenAPI over real HTTPS and through kubectl 1.35 and 1.32: the v3 index
//! and documents (hashes, ETag, 304, immutable caching, never a redirect),
//! the v2 gnostic protobuf, `kubectl explain` (v3 and
//! `--output=plaintext-openapiv2`), and `kubectl create -f` with kubectl's
//! default validation, which must choose server-side validation
//! (`fieldValidation=Strict`) because every PATCH operation advertises
//! `fieldValidation` (`cli-runtime/pkg/resource/query_param_verifier_v3.go`).

use reqwest::StatusCode;
use serde_json::{Value, json};
use skein_tests::cli::{self, err, ok, start};
use skein_tests::http::Api;
use skein_tests::kubectl as kc;

/// The `serverRelativeURL` of `key` in the `/openapi/v3` index.
async fn document_url(api: &Api, key: &str) -> String {
    let index = api.get("/openapi/v3").await.expect(200);
    index["paths"][key]["serverRelativeURL"]
        .as_str()
        .unwrap_or_else(|| panic!("no {key} in the index: {index}"))
        .to_string()
}

#[tokio::test]
async fn v3_index_documents_hashes_and_caching() {
    let env = start().await;
    let api = Api::new(&env.server);

    let index = api.get("/openapi/v3").await;
    assert_eq!(index.status, StatusCode::OK);
    assert_eq!(index.header("content-type"), Some("application/json"));
    assert_eq!(index.header("cache-control"), Some("no-cache, private"));
    let paths = index.json()["paths"].clone();
    for key in [
        "api/v1",
        "apis/apps/v1",
        "apis/batch/v1",
        "apis/networking.k8s.io/v1",
        "apis/rbac.authorization.k8s.io/v1",
        "apis",
        "api",
    ] {
        let url = paths[key]["serverRelativeURL"].as_str().unwrap_or_default();
        assert!(
            url.starts_with(&format!("/openapi/v3/{key}?hash=")),
            "{key}: {url}"
        );
    }

    // The hashed URL: the document, immutable for a year, its hash as ETag.
    let url = document_url(&api, "apis/apps/v1").await;
    let hash = url.split("hash=").nth(1).unwrap_or_default().to_string();
    assert_eq!(hash.len(), 128, "{url}");
    let doc = api.get_as(&url, "application/json").await;
    assert_eq!(doc.status, StatusCode::OK);
    assert_eq!(doc.header("content-type"), Some("application/json"));
    assert_eq!(doc.header("etag"), Some(format!("\"{hash}\"").as_str()));
    assert_eq!(doc.header("cache-control"), Some("public, immutable"));
    let expires = doc.header("expires").unwrap_or_default();
    assert!(expires.ends_with(" GMT"), "Expires: {expires}");
    let year: i32 = expires
        .split(' ')
        .nth(3)
        .and_then(|y| y.parse().ok())
        .unwrap_or(0);
    assert!(year >= 2026, "Expires: {expires}");
    let body = doc.json();
    assert_eq!(body["openapi"], "3.0.0");
    let patch = &body["paths"]["/apis/apps/v1/namespaces/{namespace}/deployments/{name}"]["patch"];
    assert_eq!(
        patch["x-kubernetes-group-version-kind"],
        json!({"group": "apps", "kind": "Deployment", "version": "v1"})
    );
    let names: Vec<&str> = patch["parameters"]
        .as_array()
        .map(|a| a.iter().filter_map(|p| p["name"].as_str()).collect())
        .unwrap_or_default();
    assert_eq!(
        names,
        ["dryRun", "fieldManager", "fieldValidation", "force"]
    );
    assert_eq!(
        body["components"]["schemas"]["io.k8s.api.core.v1.PodSpec"]["properties"]["containers"]["x-kubernetes-patch-merge-key"],
        "name"
    );

    // If-None-Match with the ETag: 304, no body.
    let etag = format!("\"{hash}\"");
    let cached = api
        .call(
            reqwest::Method::GET,
            &url,
            &[("accept", "application/json"), ("if-none-match", &etag)],
            None,
        )
        .await;
    assert_eq!(cached.status, StatusCode::NOT_MODIFIED);
    assert!(cached.body.is_empty());

    // A stale hash or none: the current document, not a redirect, and not
    // cacheable as immutable.
    for stale in [
        "/openapi/v3/apis/apps/v1?hash=0123",
        "/openapi/v3/apis/apps/v1",
    ] {
        let r = api.get_as(stale, "application/json").await;
        assert_eq!(r.status, StatusCode::OK, "{stale}");
        assert!(r.header("location").is_none(), "{stale}");
        assert_eq!(r.header("etag"), Some(etag.as_str()), "{stale}");
        assert_eq!(r.header("cache-control"), Some("no-cache, private"));
        assert_eq!(r.body, doc.body, "{stale}");
    }

    // Only JSON is served for v3: a protobuf-only Accept is 406 Status.
    let pb = api
        .get_as(
            &url,
            "application/com.github.proto-openapi.spec.v3@v1.0+protobuf",
        )
        .await;
    let status = pb.expect_status(406, "NotAcceptable");
    assert_eq!(status["kind"], "Status");

    // Unknown documents are a 404 Status.
    api.get("/openapi/v3/apis/nope.example.com/v1")
        .await
        .expect_status(404, "NotFound");

    // Unauthenticated clients learn nothing.
    let anonymous = env.server.client(false);
    let r = anonymous
        .get(env.server.url("/openapi/v3"))
        .send()
        .await
        .expect("request");
    assert_eq!(r.status(), StatusCode::UNAUTHORIZED);
}

#[tokio::test]
async fn v2_is_gnostic_protobuf_or_json() {
    let env = start().await;
    let api = Api::new(&env.server);
    let pb = api
        .get_as(
            "/openapi/v2",
            "application/com.github.proto-openapi.spec.v2@v1.0+protobuf",
        )
        .await;
    assert_eq!(pb.status, StatusCode::OK);
    assert_eq!(
        pb.header("content-type"),
        Some("application/com.github.proto-openapi.spec.v2.v1.0+protobuf")
    );
    // Field 1 (swagger, length-delimited) = "2.0".
    assert_eq!(&pb.body[..5], b"\x0a\x032.0");

    let js = api.get_as("/openapi/v2", "application/json").await;
    assert_eq!(js.status, StatusCode::OK);
    let doc: Value = js.json();
    assert_eq!(doc["swagger"], "2.0");
    assert_eq!(
        doc["definitions"]["io.k8s.api.apps.v1.Deployment"]["x-kubernetes-group-version-kind"],
        json!([{"group": "apps", "kind": "Deployment", "version": "v1"}])
    );
    assert!(js.header("etag").is_some());
}

#[tokio::test]
async fn kubectl_explain_reads_v3_and_v2() {
    let env = start().await;
    let s = &env.server;
    for (_, k) in env.each() {
        let out = ok(
            k,
            s,
            &[
                "explain",
                "deployment.spec.template.spec.containers",
                "--recursive",
            ],
        );
        let lines: Vec<&str> = out.lines().collect();
        assert!(lines.contains(&"GROUP:      apps"), "{out}");
        assert!(lines.contains(&"KIND:       Deployment"), "{out}");
        assert!(lines.contains(&"VERSION:    v1"), "{out}");
        assert!(lines.contains(&"FIELD: containers <[]Container>"), "{out}");
        for line in [
            "  args\t<[]string>",
            "  env\t<[]EnvVar>",
            "    name\t<string> -required-",
            "  image\t<string>",
            "  name\t<string> -required-",
            "  ports\t<[]ContainerPort>",
            "    containerPort\t<integer> -required-",
            "  resources\t<ResourceRequirements>",
            "    limits\t<map[string]Quantity>",
        ] {
            assert!(lines.contains(&line), "missing {line:?} in:\n{out}");
        }

        let plain = ok(
            k,
            s,
            &[
                "explain",
                "--output=plaintext-openapiv2",
                "deployments.spec",
            ],
        );
        let lines: Vec<&str> = plain.lines().collect();
        assert!(lines.contains(&"KIND:     Deployment"), "{plain}");
        assert!(lines.contains(&"VERSION:  apps/v1"), "{plain}");
        assert!(lines.contains(&"RESOURCE: spec <Object>"), "{plain}");
        assert!(lines.contains(&"   replicas\t<integer>"), "{plain}");
        assert!(
            lines.contains(&"   template\t<Object> -required-"),
            "{plain}"
        );
    }
}

fn deployment(name: &str, extra_spec: Value) -> Value {
    let mut d = json!({
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": name},
        "spec": {
            "replicas": 1,
            "selector": {"matchLabels": {"app": name}},
            "template": {
                "metadata": {"labels": {"app": name}},
                "spec": {"containers": [{"name": "web", "image": "nginx:1.27"}]}
            }
        }
    });
    if let (Some(spec), Some(extra)) = (d["spec"].as_object_mut(), extra_spec.as_object()) {
        spec.extend(extra.clone());
    }
    d
}

#[tokio::test]
async fn create_validates_on_the_server() {
    let env = start().await;
    let s = &env.server;
    for (i, k) in env.each() {
        let ns = format!("validate-{i}");
        env.namespace(k, &ns);

        // Default validation (no --validate flag): kubectl reads the v3
        // document and sends fieldValidation=Strict.
        let good = env.manifest(&deployment("web", json!({})));
        let out = kc::run(
            k,
            s,
            &["create", "-f", &good, "-n", &ns, "-v=6"],
            cli::TIMEOUT,
        );
        let stdout = cli::stdout(&out);
        let stderr = cli::stderr(&out);
        assert!(out.status.success(), "{stdout}\n{stderr}");
        assert_eq!(stdout, "deployment.apps/web created\n");
        assert!(
            stderr.contains("/openapi/v3/apis/apps/v1?hash="),
            "kubectl did not read the v3 document:\n{stderr}"
        );
        assert!(
            stderr.contains(&format!(
                "/apis/apps/v1/namespaces/{ns}/deployments?fieldManager=kubectl-create&fieldValidation=Strict"
            )),
            "kubectl did not ask for server-side validation:\n{stderr}"
        );
        assert!(!stderr.contains("/openapi/v2"), "{stderr}");

        // An unknown field: kubectl's strict-decoding error, nothing stored.
        let bad = env.manifest(&deployment("bad", json!({"bogusField": 3})));
        let msg = err(k, s, &["create", "-f", &bad, "-n", &ns]);
        assert_eq!(
            msg,
            format!(
                "Error from server (BadRequest): error when creating \"{bad}\": \
                 Deployment in version \"v1\" cannot be handled as a Deployment: \
                 strict decoding error: unknown field \"spec.bogusField\"\n"
            )
        );
        let missing = err(k, s, &["get", "deployment", "bad", "-n", &ns]);
        assert!(
            missing.contains("NotFound") || missing.contains("not found"),
            "{missing}"
        );
    }
}
