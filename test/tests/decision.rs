//! The dry-run decision (issue 12): `kubectl create --dry-run=server`,
//! `kubectl apply --dry-run=server` (client-side and server-side) of an
//! object on a federation with three simulated members (eu, us, ap) return
//! it with the annotation `federation.skein.io/decision`, the decision the
//! scheduler would make now; nothing is stored. Real `skein serve`
//! processes and real kubectl 1.35 and 1.32.

use std::fs;
use std::path::Path;

use serde_json::{Value, json};
use skein_tests::cli;
use skein_tests::http::Api;
use skein_tests::kubectl_binaries;
use skein_tests::member::Federation;
use skein_tests::server::Server;

const DECISION: &str = "federation.skein.io/decision";

/// Writes `object` to a manifest file under the federation's data dir.
fn manifest(fed: &Server, name: &str, object: &Value) -> String {
    let path = fed.data_dir.join(format!("{name}.json"));
    fs::write(&path, object.to_string()).expect("write a manifest");
    path.to_string_lossy().into_owned()
}

/// The decision annotation of a printed object, parsed.
fn decision(printed: &str, what: &str) -> Value {
    let obj: Value = serde_json::from_str(printed)
        .unwrap_or_else(|e| panic!("{what}: kubectl printed no JSON ({e}):\n{printed}"));
    let text = obj["metadata"]["annotations"][DECISION]
        .as_str()
        .unwrap_or_else(|| panic!("{what}: no {DECISION} annotation in:\n{obj:#}"));
    serde_json::from_str(text)
        .unwrap_or_else(|e| panic!("{what}: annotation not JSON ({e}): {text}"))
}

fn deployment(name: &str, ns: &str, annotations: Value) -> Value {
    json!({
        "apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": {"name": name, "namespace": ns, "annotations": annotations},
        "spec": {
            "replicas": 6,
            "selector": {"matchLabels": {"app": name}},
            "template": {
                "metadata": {"labels": {"app": name}},
                "spec": {"containers": [{"name": "c", "image": "nginx"}]}
            }
        }
    })
}

fn config_map(name: &str, ns: &str, annotations: Value) -> Value {
    json!({
        "apiVersion": "v1", "kind": "ConfigMap",
        "metadata": {"name": name, "namespace": ns, "annotations": annotations},
        "data": {"k": "v"}
    })
}

fn weighted() -> Value {
    json!({"skein.io/replica-preferences":
        r#"{"clusters":{"eu":{"weight":2},"us":{"weight":1},"ap":{"weight":0}}}"#})
}

async fn assert_absent(api: &Api, path: &str) {
    let r = api.get(path).await;
    assert_eq!(
        r.status.as_u16(),
        404,
        "{path} was stored by a dry run: {:?}",
        r.body
    );
}

#[tokio::test]
async fn dry_runs_show_the_decision_and_store_nothing() {
    let kubectls = kubectl_binaries();
    let dir = tempfile::tempdir().expect("tempdir");
    let f = Federation::start(
        dir.path(),
        &kubectls[0],
        &[],
        &[("eu", "eu"), ("us", "us"), ("ap", "ap")],
    )
    .await;
    let fed = &f.fed;
    let api = Api::new(fed);
    let k0 = &kubectls[0];
    cli::ok(k0, fed, &["create", "namespace", "plain"]);
    let team = json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {
        "name": "team-eu", "annotations": {"skein.io/cluster-selector": "region=eu"}}});
    cli::ok(k0, fed, &["create", "-f", &manifest(fed, "team-eu", &team)]);

    for (i, k) in kubectls.iter().enumerate() {
        check_with(k, i, fed, &api).await;
    }
}

async fn check_with(k: &Path, i: usize, fed: &Server, api: &Api) {
    let v = skein_tests::kubectl::client_minor(k);
    // Weighted split 2/1/0 of 6 replicas: 4/2/0; nothing stored.
    let web = format!("web-{i}");
    let file = manifest(fed, &web, &deployment(&web, "plain", weighted()));
    let out = cli::ok(
        k,
        fed,
        &["create", "--dry-run=server", "-o", "json", "-f", &file],
    );
    let d = decision(&out, &format!("kubectl 1.{v} create --dry-run=server"));
    assert_eq!(
        d,
        json!({"scheduling": "Divided", "clusters": {"eu": 4, "us": 2, "ap": 0},
               "excluded": {}, "unplaced": 0}),
        "kubectl 1.{v}"
    );
    assert_absent(
        api,
        &format!("/apis/apps/v1/namespaces/plain/deployments/{web}"),
    )
    .await;
    let missing = cli::err(k, fed, &["get", "deployment", &web, "-n", "plain"]);
    assert!(missing.contains("not found"), "kubectl 1.{v}: {missing}");

    // kubectl apply --dry-run=server (client-side apply: a dry-run create).
    let out = cli::ok(
        k,
        fed,
        &["apply", "--dry-run=server", "-o", "json", "-f", &file],
    );
    let d = decision(&out, &format!("kubectl 1.{v} apply --dry-run=server"));
    assert_eq!(
        d["clusters"],
        json!({"eu": 4, "us": 2, "ap": 0}),
        "kubectl 1.{v}"
    );
    // Server-side apply dry run.
    let out = cli::ok(
        k,
        fed,
        &[
            "apply",
            "--server-side",
            "--dry-run=server",
            "-o",
            "json",
            "-f",
            &file,
        ],
    );
    let d = decision(
        &out,
        &format!("kubectl 1.{v} apply --server-side --dry-run=server"),
    );
    assert_eq!(
        d["clusters"],
        json!({"eu": 4, "us": 2, "ap": 0}),
        "kubectl 1.{v}"
    );
    assert_absent(
        api,
        &format!("/apis/apps/v1/namespaces/plain/deployments/{web}"),
    )
    .await;

    // A Namespace's selector is its objects' default: only eu.
    let cm = format!("settings-{i}");
    let file = manifest(fed, &cm, &config_map(&cm, "team-eu", json!({})));
    let out = cli::ok(
        k,
        fed,
        &["create", "--dry-run=server", "-o", "json", "-f", &file],
    );
    let d = decision(&out, &format!("kubectl 1.{v} create cm in team-eu"));
    assert_eq!(
        d,
        json!({"scheduling": "Duplicated", "clusters": ["eu"],
               "excluded": {"ap": "NotSelected", "us": "NotSelected"}}),
        "kubectl 1.{v}"
    );
    assert_absent(api, &format!("/api/v1/namespaces/team-eu/configmaps/{cm}")).await;
    // The object's own cluster choice replaces the Namespace's as a whole.
    let own = format!("own-{i}");
    let file = manifest(
        fed,
        &own,
        &config_map(&own, "team-eu", json!({"skein.io/clusters": "us,ap"})),
    );
    let out = cli::ok(
        k,
        fed,
        &["create", "--dry-run=server", "-o", "json", "-f", &file],
    );
    let d = decision(
        &out,
        &format!("kubectl 1.{v} create cm with its own clusters"),
    );
    assert_eq!(d["clusters"], json!(["ap", "us"]), "kubectl 1.{v}");

    // A cluster-scoped object of a Helm release takes the defaults of the
    // release's namespace.
    let role = format!("chart-reader-{i}");
    let cluster_role = json!({
        "apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole",
        "metadata": {"name": role, "annotations": {"meta.helm.sh/release-namespace": "team-eu"}},
        "rules": [{"apiGroups": [""], "resources": ["pods"], "verbs": ["get"]}]
    });
    let file = manifest(fed, &role, &cluster_role);
    let out = cli::ok(
        k,
        fed,
        &["create", "--dry-run=server", "-o", "json", "-f", &file],
    );
    let d = decision(
        &out,
        &format!("kubectl 1.{v} create a release's ClusterRole"),
    );
    assert_eq!(d["clusters"], json!(["eu"]), "kubectl 1.{v}");

    // An unknown cluster name is not an error: it shows as excluded.
    let named = format!("named-{i}");
    let file = manifest(
        fed,
        &named,
        &config_map(&named, "plain", json!({"skein.io/clusters": "eu,nope"})),
    );
    let out = cli::ok(
        k,
        fed,
        &["create", "--dry-run=server", "-o", "json", "-f", &file],
    );
    let d = decision(&out, &format!("kubectl 1.{v} create cm for eu,nope"));
    assert_eq!(
        d,
        json!({"scheduling": "Duplicated", "clusters": ["eu"],
               "excluded": {"ap": "NotSelected", "nope": "UnknownCluster", "us": "NotSelected"}}),
        "kubectl 1.{v}"
    );

    // A bad replica-weighting is a 422 naming the annotation.
    let bad = format!("bad-{i}");
    let file = manifest(
        fed,
        &bad,
        &deployment(
            &bad,
            "plain",
            json!({"skein.io/replica-weighting": "bogus"}),
        ),
    );
    let stderr = cli::err(
        k,
        fed,
        &["create", "--dry-run=server", "-o", "json", "-f", &file],
    );
    assert!(
        stderr.contains("metadata.annotations[skein.io/replica-weighting]")
            && stderr.contains(r#"Unsupported value: "bogus""#)
            && stderr.contains(r#"supported values: "Static", "Capacity""#),
        "kubectl 1.{v}: {stderr}"
    );

    // Objects that stay on the federation get no decision.
    let local = format!("local-{i}");
    let file = manifest(
        fed,
        &local,
        &config_map(
            &local,
            "plain",
            json!({"skein.io/control-plane-only": "true"}),
        ),
    );
    let out = cli::ok(
        k,
        fed,
        &["create", "--dry-run=server", "-o", "json", "-f", &file],
    );
    let obj: Value = serde_json::from_str(&out).expect("json");
    assert!(
        obj["metadata"]["annotations"].get(DECISION).is_none(),
        "kubectl 1.{v}: {obj:#}"
    );

    // A real create stores no decision; a dry-run update of it shows one
    // and stores nothing either.
    let real = format!("real-{i}");
    let file = manifest(fed, &real, &deployment(&real, "plain", weighted()));
    cli::ok(k, fed, &["create", "-f", &file]);
    let stored = cli::get_json(k, fed, &["get", "deployment", &real, "-n", "plain"]);
    assert!(
        stored["metadata"]["annotations"].get(DECISION).is_none(),
        "kubectl 1.{v}: stored {stored:#}"
    );
    let out = cli::ok(
        k,
        fed,
        &[
            "annotate",
            "deployment",
            &real,
            "-n",
            "plain",
            "note=x",
            "--dry-run=server",
            "-o",
            "json",
        ],
    );
    let d = decision(&out, &format!("kubectl 1.{v} annotate --dry-run=server"));
    assert_eq!(
        d["clusters"],
        json!({"eu": 4, "us": 2, "ap": 0}),
        "kubectl 1.{v}"
    );
    let stored = cli::get_json(k, fed, &["get", "deployment", &real, "-n", "plain"]);
    let annotations = &stored["metadata"]["annotations"];
    assert!(
        annotations.get(DECISION).is_none() && annotations.get("note").is_none(),
        "kubectl 1.{v}: stored {stored:#}"
    );
}
