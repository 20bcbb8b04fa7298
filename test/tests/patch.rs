//! PATCH over real HTTPS: the four patch types, `PatchOptions` checks,
//! server-side apply (create, ownership, conflicts, force, status), and bad
//! patch documents. Each case checks the status code, the `Status` body and
//! what was (not) stored.

use reqwest::Method;
use serde_json::{Value, json};
use skein_tests::http::{Api, Reply, message};
use skein_tests::server::Server;

const JSON_PATCH: &str = "application/json-patch+json";
const MERGE: &str = "application/merge-patch+json";
const STRATEGIC: &str = "application/strategic-merge-patch+json";
const APPLY: &str = "application/apply-patch+yaml";

async fn start() -> (tempfile::TempDir, Server, Api) {
    let dir = tempfile::tempdir().expect("tempdir");
    let server = Server::start(dir.path(), &[]).await;
    let api = Api::new(&server);
    (dir, server, api)
}

fn deploy(name: &str) -> String {
    format!("/apis/apps/v1/namespaces/default/deployments/{name}")
}

fn deployment(name: &str, replicas: i64) -> Value {
    json!({
        "apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": {"name": name},
        "spec": {
            "replicas": replicas,
            "selector": {"matchLabels": {"app": name}},
            "template": {
                "metadata": {"labels": {"app": name}},
                "spec": {"containers": [
                    {"name": "app", "image": "nginx:1.27"},
                    {"name": "log", "image": "busybox:1.36"},
                ]}
            }
        }
    })
}

async fn patch(api: &Api, path: &str, content_type: &str, body: &str) -> Reply {
    api.raw(Method::PATCH, path, content_type, body.as_bytes().to_vec())
        .await
}

fn images(d: &Value) -> Vec<(String, String)> {
    d["spec"]["template"]["spec"]["containers"]
        .as_array()
        .expect("containers")
        .iter()
        .map(|c| {
            (
                c["name"].as_str().unwrap_or("").to_string(),
                c["image"].as_str().unwrap_or("").to_string(),
            )
        })
        .collect()
}

fn pair(a: &str, b: &str) -> (String, String) {
    (a.to_string(), b.to_string())
}

#[tokio::test]
async fn patch_types_options_and_preconditions() {
    let (_dir, _server, api) = start().await;
    let path = deploy("web");
    api.post(
        "/apis/apps/v1/namespaces/default/deployments",
        &deployment("web", 1),
    )
    .await
    .expect(201);

    // Strategic merge: containers merge by name.
    let d = patch(
        &api,
        &path,
        STRATEGIC,
        r#"{"spec":{"template":{"spec":{"containers":[{"name":"log","image":"busybox:1.37"}]}}}}"#,
    )
    .await
    .expect(200);
    assert_eq!(
        images(&d),
        [pair("app", "nginx:1.27"), pair("log", "busybox:1.37")]
    );
    // $patch: delete removes one element by key.
    let d = patch(
        &api,
        &path,
        STRATEGIC,
        r#"{"spec":{"template":{"spec":{"containers":[{"name":"log","$patch":"delete"}]}}}}"#,
    )
    .await
    .expect(200);
    assert_eq!(images(&d), [pair("app", "nginx:1.27")]);

    // A merge patch replaces lists whole.
    let d = patch(
        &api,
        &path,
        MERGE,
        r#"{"spec":{"template":{"spec":{"containers":[{"name":"only","image":"redis:7"}]}}}}"#,
    )
    .await
    .expect(200);
    assert_eq!(images(&d), [pair("only", "redis:7")]);

    // JSON patch.
    let d = patch(
        &api,
        &path,
        JSON_PATCH,
        r#"[{"op":"replace","path":"/spec/replicas","value":4}]"#,
    )
    .await
    .expect(200);
    assert_eq!(d["spec"]["replicas"], 4);

    // A resourceVersion in the patch is a precondition.
    let stale = r#"{"metadata":{"resourceVersion":"1"},"spec":{"replicas":9}}"#;
    let s = patch(&api, &path, MERGE, stale)
        .await
        .expect_status(409, "Conflict");
    assert_eq!(
        message(&s),
        r#"Operation cannot be fulfilled on deployments.apps "web": the object has been modified; please apply your changes to the latest version and try again"#
    );

    // Unsupported content type: 415 listing the four.
    let s = patch(&api, &path, "application/json", "{}")
        .await
        .expect_status(415, "UnsupportedMediaType");
    assert_eq!(
        message(&s),
        "the body of the request was in an unknown format - accepted media types include: \
         application/json-patch+json, application/merge-patch+json, \
         application/strategic-merge-patch+json, application/apply-patch+yaml"
    );

    // force is for apply only; apply needs a fieldManager.
    let s = patch(&api, &format!("{path}?force=true"), MERGE, "{}")
        .await
        .expect_status(422, "Invalid");
    assert_eq!(
        message(&s),
        r#"PatchOptions.meta.k8s.io "" is invalid: force: Forbidden: may not be specified for non-apply patch"#
    );
    let s = patch(&api, &path, APPLY, "{}")
        .await
        .expect_status(422, "Invalid");
    assert_eq!(
        message(&s),
        r#"PatchOptions.meta.k8s.io "" is invalid: fieldManager: Required value: is required for apply patch"#
    );

    // Bad documents: 4xx, nothing changes.
    let before = api.get(&path).await.expect(200);
    patch(&api, &path, MERGE, "{not json")
        .await
        .expect_status(400, "BadRequest");
    patch(
        &api,
        &path,
        JSON_PATCH,
        r#"[{"op":"explode","path":"/spec"}]"#,
    )
    .await
    .expect_client_error();
    patch(
        &api,
        &path,
        JSON_PATCH,
        r#"[{"op":"remove","path":"/spec/nothing/here"}]"#,
    )
    .await
    .expect_status(422, "Invalid");
    patch(&api, &path, STRATEGIC, r#"{"spec":{"$patch":"explode"}}"#)
        .await
        .expect_client_error();
    patch(&api, &path, STRATEGIC, "[1,2]")
        .await
        .expect_client_error();
    patch(
        &api,
        &format!("{path}?fieldManager=t"),
        APPLY,
        "spec: [unclosed",
    )
    .await
    .expect_status(400, "BadRequest");
    patch(
        &api,
        &format!("{path}?fieldValidation=Strict"),
        STRATEGIC,
        r#"{"spec":{"replicaz":2}}"#,
    )
    .await
    .expect_status(400, "BadRequest");
    assert_eq!(api.get(&path).await.expect(200), before);
}

#[tokio::test]
async fn server_side_apply_creates_owns_conflicts_and_forces() {
    let (_dir, _server, api) = start().await;
    let path = deploy("ssa");
    let config = serde_json::to_string(&deployment("ssa", 2)).expect("json");

    // Apply creates (201), owned by the manager.
    let created = patch(&api, &format!("{path}?fieldManager=alice"), APPLY, &config)
        .await
        .expect(201);
    let mf = &created["metadata"]["managedFields"];
    assert_eq!(mf.as_array().map(Vec::len), Some(1), "{mf}");
    assert_eq!(mf[0]["manager"], "alice");
    assert_eq!(mf[0]["operation"], "Apply");
    assert_eq!(mf[0]["fieldsType"], "FieldsV1");
    let f = &mf[0]["fieldsV1"];
    assert_eq!(f["f:spec"]["f:replicas"], json!({}), "{f}");
    assert_eq!(
        f["f:spec"]["f:template"]["f:spec"]["f:containers"]["k:{\"name\":\"app\"}"],
        json!({".": {}, "f:image": {}, "f:name": {}}),
        "{f}"
    );

    // The same apply again: 200, nothing changes.
    let again = patch(&api, &format!("{path}?fieldManager=alice"), APPLY, &config)
        .await
        .expect(200);
    assert_eq!(
        again["metadata"]["resourceVersion"],
        created["metadata"]["resourceVersion"]
    );

    // YAML works as well as JSON.
    let yaml = "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: ssa\n  labels:\n    team: blue\n";
    let labelled = patch(&api, &format!("{path}?fieldManager=bob"), APPLY, yaml)
        .await
        .expect(200);
    assert_eq!(labelled["metadata"]["labels"]["team"], "blue");
    assert_eq!(labelled["spec"]["replicas"], 2);

    // bob applying a different replicas conflicts with alice.
    let bob = r#"{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"ssa"},"spec":{"replicas":7}}"#;
    let s = patch(&api, &format!("{path}?fieldManager=bob"), APPLY, bob)
        .await
        .expect_status(409, "Conflict");
    assert_eq!(
        message(&s),
        r#"Apply failed with 1 conflict: conflict with "alice": .spec.replicas"#
    );
    assert_eq!(
        s["details"]["causes"][0]["reason"], "FieldManagerConflict",
        "{s}"
    );
    assert_eq!(s["details"]["causes"][0]["field"], ".spec.replicas", "{s}");
    assert_eq!(api.get(&path).await.expect(200)["spec"]["replicas"], 2);

    // force=true takes the field.
    let forced = patch(
        &api,
        &format!("{path}?fieldManager=bob&force=true"),
        APPLY,
        bob,
    )
    .await
    .expect(200);
    assert_eq!(forced["spec"]["replicas"], 7);
    let owners: Vec<&str> = forced["metadata"]["managedFields"]
        .as_array()
        .expect("managedFields")
        .iter()
        .filter(|e| e["fieldsV1"]["f:spec"]["f:replicas"].is_object())
        .filter_map(|e| e["manager"].as_str())
        .collect();
    assert_eq!(owners, ["bob"]);

    // An Update manager's field: conflict names it with its API version.
    patch(
        &api,
        &format!("{path}?fieldManager=scaler"),
        MERGE,
        r#"{"spec":{"replicas":3}}"#,
    )
    .await
    .expect(200);
    let s = patch(&api, &format!("{path}?fieldManager=bob"), APPLY, bob)
        .await
        .expect_status(409, "Conflict");
    assert_eq!(
        message(&s),
        r#"Apply failed with 1 conflict: conflict with "scaler" using apps/v1: .spec.replicas"#
    );

    // dryRun applies nothing.
    let dry = patch(
        &api,
        &format!("{path}?fieldManager=bob&force=true&dryRun=All"),
        APPLY,
        bob,
    )
    .await
    .expect(200);
    assert_eq!(dry["spec"]["replicas"], 7);
    assert_eq!(api.get(&path).await.expect(200)["spec"]["replicas"], 3);

    // Wrong identity in the configuration.
    let other = r#"{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"elsewhere"}}"#;
    patch(&api, &format!("{path}?fieldManager=bob"), APPLY, other)
        .await
        .expect_status(400, "BadRequest");
    let wrong_version =
        r#"{"apiVersion":"apps/v1beta1","kind":"Deployment","metadata":{"name":"ssa"}}"#;
    let s = patch(
        &api,
        &format!("{path}?fieldManager=bob"),
        APPLY,
        wrong_version,
    )
    .await
    .expect_status(400, "BadRequest");
    assert!(message(&s).contains("apps/v1beta1"), "{s}");
}
