//! Aggregated mode's federated context: the whole native API under
//! `/apis/federation.skein.io/v1alpha1/federations/default/proxy`, used by
//! kubectl 1.32 and 1.35 and Helm 3.17 and 4.1 through a kubeconfig whose
//! `server` is that prefix (DESIGN §1).

use std::path::{Path, PathBuf};
use std::time::Duration;

use serde_json::Value;
use skein_tests::http::{helm_binaries, helm_with};
use skein_tests::kubectl_binaries;
use skein_tests::server::Server;

const PREFIX: &str = "/apis/federation.skein.io/v1alpha1/federations/default/proxy";

/// The admin kubeconfig with its server moved under the prefix.
fn prefix_kubeconfig(server: &Server) -> PathBuf {
    let mut config = server.kubeconfig_json();
    let url = config["clusters"][0]["cluster"]["server"]
        .as_str()
        .expect("the admin kubeconfig names a server")
        .trim_end_matches('/')
        .to_string();
    config["clusters"][0]["cluster"]["server"] = Value::String(format!("{url}{PREFIX}"));
    let path = server.data_dir.join("prefix.kubeconfig");
    std::fs::write(&path, config.to_string()).expect("write the prefix kubeconfig");
    path
}

/// Runs kubectl through the prefix; asserts success and returns stdout.
fn kubectl_ok(server: &Server, k: &Path, config: &Path, args: &[&str]) -> String {
    let out = server.kubectl_with(k, config, args);
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        out.status.success(),
        "{} {args:?}: {}\nstdout:\n{stdout}\nstderr:\n{}\nserver log (tail):\n{}",
        k.display(),
        out.status,
        String::from_utf8_lossy(&out.stderr),
        tail(&server.logs())
    );
    stdout
}

fn tail(log: &str) -> String {
    let lines: Vec<&str> = log.lines().collect();
    lines[lines.len().saturating_sub(40)..].join("\n")
}

const DEPLOYMENT: &str = r#"apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  labels: {app: web}
spec:
  replicas: 2
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      containers:
      - name: web
        image: nginx:1.27
"#;

#[tokio::test]
async fn kubectl_works_through_the_prefix() {
    let dir = tempfile::tempdir().expect("tempdir");
    let server = Server::start(dir.path(), &[]).await;
    let config = prefix_kubeconfig(&server);
    let manifest = dir.path().join("web.yaml");
    std::fs::write(&manifest, DEPLOYMENT).expect("write the manifest");
    let manifest = manifest.to_str().expect("utf-8 path");

    for (i, k) in kubectl_binaries().iter().enumerate() {
        let ns = format!("prefix-{i}");
        let out = kubectl_ok(&server, k, &config, &["create", "namespace", &ns]);
        assert_eq!(out, format!("namespace/{ns} created\n"));

        // Discovery through the prefix: the native groups are there.
        let out = kubectl_ok(
            &server,
            k,
            &config,
            &["api-resources", "--api-group=apps", "-o", "name"],
        );
        assert!(out.lines().any(|l| l == "deployments.apps"), "{out}");

        // Client-side apply (validated against OpenAPI v3 fetched through
        // the prefix), then server-side apply.
        let out = kubectl_ok(&server, k, &config, &["apply", "-n", &ns, "-f", manifest]);
        assert_eq!(out, "deployment.apps/web created\n");
        let out = kubectl_ok(
            &server,
            k,
            &config,
            &[
                "apply",
                "--server-side",
                "--field-manager=other",
                "--force-conflicts",
                "-n",
                &ns,
                "-f",
                manifest,
            ],
        );
        assert_eq!(out, "deployment.apps/web serverside-applied\n");
        let out = kubectl_ok(
            &server,
            k,
            &config,
            &["create", "configmap", "c", "-n", &ns, "--from-literal=a=b"],
        );
        assert_eq!(out, "configmap/c created\n");

        // What the prefix shows is what the root shows.
        let through = kubectl_ok(
            &server,
            k,
            &config,
            &["get", "deployment", "web", "-n", &ns, "-o", "json"],
        );
        let direct = server.kubectl(k, &["get", "deployment", "web", "-n", &ns, "-o", "json"]);
        assert!(direct.status.success());
        assert_eq!(through, String::from_utf8_lossy(&direct.stdout));
        let out = kubectl_ok(
            &server,
            k,
            &config,
            &[
                "get",
                "deployment",
                "web",
                "-n",
                &ns,
                "-o",
                "jsonpath={.spec.replicas} {.metadata.managedFields[*].manager}",
            ],
        );
        assert!(out.starts_with("2 "), "{out}");
        assert!(out.contains("other"), "{out}");

        let out = kubectl_ok(
            &server,
            k,
            &config,
            &["explain", "deployment.spec.replicas"],
        );
        assert!(
            out.contains("replicas") && out.contains("<integer>"),
            "{out}"
        );

        // A watch through the prefix sees a change made at the root.
        let mut watch = std::process::Command::new(k)
            .args(["--kubeconfig", config.to_str().expect("utf-8 path")])
            .args(["get", "configmaps", "-n", &ns, "--watch", "-o", "name"])
            .env_remove("KUBECONFIG")
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .expect("spawn kubectl get --watch");
        tokio::time::sleep(Duration::from_millis(1500)).await;
        let out = server.kubectl(k, &["create", "configmap", "d", "-n", &ns]);
        assert!(out.status.success(), "{out:?}");
        tokio::time::sleep(Duration::from_millis(1500)).await;
        let _ = watch.kill();
        let out = watch.wait_with_output().expect("kubectl watch output");
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert!(
            stdout.lines().any(|l| l == "configmap/c"),
            "{stdout}\n{}",
            String::from_utf8_lossy(&out.stderr)
        );
        assert!(
            stdout.lines().any(|l| l == "configmap/d"),
            "{stdout}\n{}",
            String::from_utf8_lossy(&out.stderr)
        );

        let out = kubectl_ok(
            &server,
            k,
            &config,
            &["delete", "namespace", &ns, "--wait=false"],
        );
        assert_eq!(out, format!("namespace \"{ns}\" deleted\n"));
    }
}

#[tokio::test]
async fn helm_installs_through_the_prefix() {
    let dir = tempfile::tempdir().expect("tempdir");
    let server = Server::start(dir.path(), &[]).await;
    let config = prefix_kubeconfig(&server);
    let chart = skein_tests::repo_root().join("test/fixtures/podinfo");
    let chart = chart.to_str().expect("utf-8 path");
    for (i, h) in helm_binaries().iter().enumerate() {
        let ns = format!("helm-prefix-{i}");
        let args = ["install", "web", chart, "-n", &ns, "--create-namespace"];
        let out = helm_with(&server, h, &config, &args);
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert!(
            out.status.success(),
            "{} {args:?}: {stdout}\n{}\nserver log (tail):\n{}",
            h.display(),
            String::from_utf8_lossy(&out.stderr),
            tail(&server.logs())
        );
        assert!(stdout.contains("STATUS: deployed"), "{stdout}");
        // The release and its objects are where a direct client sees them.
        let k = &kubectl_binaries()[0];
        let out = server.kubectl(k, &["get", "deployment", "-n", &ns, "-o", "name"]);
        assert_eq!(
            String::from_utf8_lossy(&out.stdout),
            "deployment.apps/web-podinfo\n"
        );
        let out = helm_with(&server, h, &config, &["list", "-n", &ns, "-q"]);
        assert_eq!(String::from_utf8_lossy(&out.stdout), "web\n");
    }
}

#[tokio::test]
async fn the_prefix_is_authenticated_and_unknown_paths_are_404() {
    let dir = tempfile::tempdir().expect("tempdir");
    let server = Server::start(dir.path(), &[]).await;
    let anonymous = server.client(false);
    let response = anonymous
        .get(server.url(&format!("{PREFIX}/api/v1/namespaces")))
        .send()
        .await
        .expect("GET");
    assert_eq!(response.status(), 401);
    let body: Value =
        serde_json::from_slice(&response.bytes().await.expect("body")).expect("a Status");
    assert_eq!(body["kind"], "Status");
    assert_eq!(body["reason"], "Unauthorized");

    let admin = server.client(true);
    let response = admin
        .get(server.url(&format!("{PREFIX}/api/v1/namespaces/default")))
        .send()
        .await
        .expect("GET");
    assert_eq!(response.status(), 200);
    let body: Value =
        serde_json::from_slice(&response.bytes().await.expect("body")).expect("a Namespace");
    assert_eq!(body["metadata"]["name"], "default");

    // Public paths are public under the prefix too.
    let response = anonymous
        .get(server.url(&format!("{PREFIX}/version")))
        .send()
        .await
        .expect("GET");
    assert_eq!(response.status(), 200);

    // Only the default Federation's proxy is a prefix.
    let response =
        admin
            .get(server.url(
                "/apis/federation.skein.io/v1alpha1/federations/other/proxy/api/v1/namespaces",
            ))
            .send()
            .await
            .expect("GET");
    assert_eq!(response.status(), 404);
}
