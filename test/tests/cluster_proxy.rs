//! The `clusters/proxy` subresource end to end: a federation and a member
//! (`skein serve --role=member`) as real processes, the member registered
//! by creating its Secret and Cluster directly, and kubectl 1.35 and 1.32
//! reading the member through a kubeconfig whose server is
//! `https://<federation>/apis/federation.skein.io/v1alpha1/clusters/eu-1/proxy`.

use std::path::{Path, PathBuf};
use std::time::Duration;

use base64::Engine;
use reqwest::StatusCode;
use serde_json::{Value, json};
use skein_tests::cli::{self, WATCH_TIMEOUT};
use skein_tests::http::Api;
use skein_tests::kubectl::Background;
use skein_tests::kubectl_binaries;
use skein_tests::server::Server;

const PROXY: &str = "/apis/federation.skein.io/v1alpha1/clusters/eu-1/proxy";

/// `dev` is an ordinary user; `root` is in `system:masters` by token.
const TOKENS: &str = "dev-token,dev,1001,\"dev\"\nroot-token,root,1002,\"system:masters\"\n";

const FORBIDDEN: &str = "clusters.federation.skein.io \"eu-1\" is forbidden: User \"dev\" cannot get resource \"clusters/proxy\" in API group \"federation.skein.io\" at the cluster scope";

struct Setup {
    member: Server,
    fed: Server,
    _dir: tempfile::TempDir,
}

/// A federation (with a token file) and a member, the member registered
/// as Cluster `eu-1` with its admin kubeconfig in a Secret.
async fn setup() -> Setup {
    let dir = tempfile::tempdir().expect("tempdir");
    let tokens = dir.path().join("tokens.csv");
    std::fs::write(&tokens, TOKENS).expect("write the token file");
    let flag = format!("--token-auth-file={}", tokens.display());
    let fed = Server::start(&dir.path().join("fed"), &[&flag]).await;
    // The member knows a token of its own, so a caller's token that leaked
    // through the proxy would be refused there (401) instead of ignored.
    let member_tokens = dir.path().join("member-tokens.csv");
    std::fs::write(&member_tokens, "member-token,m,1,\"system:masters\"\n")
        .expect("write the member's token file");
    let member_flag = format!("--token-auth-file={}", member_tokens.display());
    let member = Server::start(&dir.path().join("member"), &["--role=member", &member_flag]).await;
    let kubeconfig = std::fs::read_to_string(member.kubeconfig()).expect("member kubeconfig");
    let api = Api::new(&fed);
    api.post(
        "/api/v1/namespaces",
        &json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "skein-system"}}),
    )
    .await
    .expect(201);
    api.post(
        "/api/v1/namespaces/skein-system/secrets",
        &json!({"apiVersion": "v1", "kind": "Secret",
                "metadata": {"name": "cluster-eu-1-kubeconfig"},
                "data": {"kubeconfig": base64::engine::general_purpose::STANDARD.encode(kubeconfig)}}),
    )
    .await
    .expect(201);
    api.post(
        "/apis/federation.skein.io/v1alpha1/clusters",
        &json!({"apiVersion": "federation.skein.io/v1alpha1", "kind": "Cluster",
                "metadata": {"name": "eu-1"},
                "spec": {"kubeconfigSecretRef": {"namespace": "skein-system", "name": "cluster-eu-1-kubeconfig"}}}),
    )
    .await
    .expect(201);
    Setup {
        member,
        fed,
        _dir: dir,
    }
}

/// `kubeconfig` (a kubeconfig file of the federation) with its server
/// pointed at Cluster eu-1's proxy, written next to it as `<name>`.
fn proxied(kubeconfig: &Path, name: &str) -> PathBuf {
    let mut config: Value =
        serde_json::from_str(&std::fs::read_to_string(kubeconfig).expect("read kubeconfig"))
            .expect("kubeconfig is JSON");
    let server = config["clusters"][0]["cluster"]["server"]
        .as_str()
        .expect("server")
        .to_owned();
    config["clusters"][0]["cluster"]["server"] = json!(format!("{server}{PROXY}"));
    let path = kubeconfig.with_file_name(name);
    std::fs::write(&path, config.to_string()).expect("write kubeconfig");
    path
}

fn arg(p: &Path) -> String {
    p.display().to_string()
}

#[tokio::test]
async fn kubectl_reads_a_member_through_the_cluster_proxy() {
    let kubectls = kubectl_binaries();
    let s = setup().await;
    let admin = proxied(&s.fed.kubeconfig(), "proxy.kubeconfig");
    let admin = arg(&admin);
    let k0 = &kubectls[0];
    // Objects only the member has.
    cli::ok(k0, &s.member, &["create", "namespace", "only-on-member"]);
    cli::ok(
        k0,
        &s.member,
        &[
            "create",
            "configmap",
            "hello",
            "-n",
            "only-on-member",
            "--from-literal=a=b",
        ],
    );
    cli::ok(
        k0,
        &s.member,
        &["run", "web", "-n", "only-on-member", "--image=nginx"],
    );
    for k in &kubectls {
        let via = |args: &[&str]| {
            let mut all = vec!["--kubeconfig", admin.as_str()];
            all.extend_from_slice(args);
            cli::ok(k, &s.fed, &all)
        };
        let ns = via(&["get", "ns"]);
        assert!(ns.contains("only-on-member"), "{ns}");
        let pods = via(&["get", "pods", "-A"]);
        assert!(
            cli::cells(&pods)
                .iter()
                .any(|r| r[0] == "only-on-member" && r[1] == "web"),
            "{pods}"
        );
        let cm = via(&[
            "get",
            "cm",
            "hello",
            "-n",
            "only-on-member",
            "-o",
            "jsonpath={.data.a}",
        ]);
        assert_eq!(cm, "b");
        // The federation's own objects are not what the proxy shows.
        let fed_ns = cli::ok(k, &s.fed, &["get", "ns"]);
        assert!(!fed_ns.contains("only-on-member"), "{fed_ns}");
        // A write through the proxy lands on the member.
        let name = format!(
            "written-{}",
            kubectls.iter().position(|x| x == k).unwrap_or(0)
        );
        via(&["create", "configmap", &name, "-n", "only-on-member"]);
        cli::ok(
            k,
            &s.member,
            &["get", "configmap", &name, "-n", "only-on-member"],
        );

        // `kubectl logs` through the proxy gives exactly the member's answer.
        let direct = cli::kubectl(k, &s.member, &["logs", "web", "-n", "only-on-member"]);
        let proxied_logs = cli::kubectl(
            k,
            &s.fed,
            &[
                "--kubeconfig",
                &admin,
                "logs",
                "web",
                "-n",
                "only-on-member",
            ],
        );
        assert_eq!(
            (
                proxied_logs.status.code(),
                cli::stdout(&proxied_logs),
                cli::stderr(&proxied_logs)
            ),
            (
                direct.status.code(),
                cli::stdout(&direct),
                cli::stderr(&direct)
            ),
            "logs through the proxy differ from the member's own answer"
        );

        // A watch streams through the proxy.
        let mut watch = Background::spawn(
            k,
            &s.fed,
            &[
                "--kubeconfig",
                &admin,
                "get",
                "cm",
                "-n",
                "only-on-member",
                "-w",
            ],
        );
        watch.wait_for_stdout("the existing ConfigMaps", WATCH_TIMEOUT, |o| {
            o.contains("hello")
        });
        let later = format!("later-{name}");
        cli::ok(
            k,
            &s.member,
            &["create", "configmap", &later, "-n", "only-on-member"],
        );
        watch.wait_for_stdout("a ConfigMap created on the member", WATCH_TIMEOUT, |o| {
            o.contains(&later)
        });
        watch.stop();
    }
}

#[tokio::test]
async fn only_system_masters_may_use_the_cluster_proxy() {
    let kubectls = kubectl_binaries();
    let s = setup().await;
    let dev = proxied(
        &s.fed.token_kubeconfig("dev", "dev-token"),
        "dev-proxy.kubeconfig",
    );
    let root = proxied(
        &s.fed.token_kubeconfig("root", "root-token"),
        "root-proxy.kubeconfig",
    );
    for k in &kubectls {
        // kubectl before 1.35 sends `--raw` paths to the server's root,
        // past the proxy prefix, so only 1.35 reaches the proxy with it.
        if skein_tests::kubectl::client_minor(k) >= 35 {
            let stderr = cli::err(
                k,
                &s.fed,
                &[
                    "--kubeconfig",
                    &arg(&dev),
                    "get",
                    "--raw",
                    "/api/v1/namespaces",
                ],
            );
            assert!(stderr.contains(FORBIDDEN), "{stderr}");
        }
        let stderr = cli::err(k, &s.fed, &["--kubeconfig", &arg(&dev), "get", "ns"]);
        // Discovery itself is refused, which kubectl reports as a 403.
        assert!(stderr.contains("Error from server (Forbidden)"), "{stderr}");
        // A token user in system:masters may; the member sees the
        // federation's credentials, never the caller's token.
        let ns = cli::ok(
            k,
            &s.fed,
            &[
                "--kubeconfig",
                &arg(&root),
                "get",
                "ns",
                "kube-system",
                "-o",
                "name",
            ],
        );
        assert_eq!(ns.trim(), "namespace/kube-system");
    }
    // The body is upstream's RBAC denial.
    let client = s.fed.client(false);
    for (method, verb) in [
        (reqwest::Method::GET, "get"),
        (reqwest::Method::POST, "create"),
    ] {
        let r = client
            .request(method, s.fed.url(&format!("{PROXY}/api/v1/namespaces")))
            .bearer_auth("dev-token")
            .send()
            .await
            .expect("request");
        assert_eq!(r.status(), StatusCode::FORBIDDEN);
        let body: Value = serde_json::from_slice(&r.bytes().await.expect("body")).expect("json");
        assert_eq!(
            body,
            json!({"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
                   "message": FORBIDDEN.replace("cannot get", &format!("cannot {verb}")),
                   "reason": "Forbidden",
                   "details": {"name": "eu-1", "group": "federation.skein.io", "kind": "clusters"},
                   "code": 403})
        );
    }
}

#[tokio::test]
async fn proxy_errors_are_statuses() {
    let mut s = setup().await;
    let api = Api::new(&s.fed);
    // The proxy root and a path below it reach the member: the root is
    // the member's `/`, whatever it answers there.
    let member_root = Api::new(&s.member).get("/").await;
    let root = api.get(PROXY).await;
    assert_eq!(
        (root.status, root.text()),
        (member_root.status, member_root.text())
    );
    let version = api.get(&format!("{PROXY}/version")).await.expect(200);
    assert_eq!(version["major"], "1");
    // The caller's Authorization never reaches the member (which would
    // refuse this token): the member sees the stored credentials.
    let namespaces = api
        .call(
            reqwest::Method::GET,
            &format!("{PROXY}/api/v1/namespaces/kube-system"),
            &[("authorization", "Bearer not-the-members-token")],
            None,
        )
        .await
        .expect(200);
    assert_eq!(namespaces["metadata"]["name"], "kube-system");
    // Query strings and methods go through: a dry-run create changes nothing.
    let cm = json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "dry"}});
    api.post(
        &format!("{PROXY}/api/v1/namespaces/default/configmaps?dryRun=All"),
        &cm,
    )
    .await
    .expect(201);
    Api::new(&s.member)
        .get("/api/v1/namespaces/default/configmaps/dry")
        .await
        .expect_status(404, "NotFound");
    // The member's own errors are passed through as it sent them.
    let missing = api
        .get(&format!(
            "{PROXY}/api/v1/namespaces/default/configmaps/nope"
        ))
        .await
        .expect_status(404, "NotFound");
    assert_eq!(missing["message"], "configmaps \"nope\" not found");
    // Discovery and OpenAPI list the subresource.
    let group = api
        .get("/apis/federation.skein.io/v1alpha1")
        .await
        .expect(200);
    let proxy = group["resources"]
        .as_array()
        .into_iter()
        .flatten()
        .find(|r| r["name"] == "clusters/proxy")
        .cloned();
    assert_eq!(
        proxy,
        Some(
            json!({"name": "clusters/proxy", "singularName": "", "namespaced": false,
                    "kind": "ClusterProxyOptions",
                    "verbs": ["create", "delete", "get", "patch", "update"]})
        )
    );
    let doc = api
        .get("/openapi/v3/apis/federation.skein.io/v1alpha1")
        .await
        .expect(200);
    for path in [
        "/apis/federation.skein.io/v1alpha1/clusters/{name}/proxy",
        "/apis/federation.skein.io/v1alpha1/clusters/{name}/proxy/{path}",
    ] {
        assert!(doc["paths"][path]["get"].is_object(), "{path}");
    }
    // An unknown cluster.
    let unknown = api
        .get("/apis/federation.skein.io/v1alpha1/clusters/nope/proxy/version")
        .await
        .expect_status(404, "NotFound");
    assert_eq!(
        unknown["message"],
        "clusters.federation.skein.io \"nope\" not found"
    );
    // A member's path on the member itself: no federation group there.
    let plain = Api::new(&s.member)
        .get("/apis/federation.skein.io/v1alpha1/clusters/eu-1/proxy/version")
        .await;
    assert_eq!(
        (plain.status, plain.text()),
        (StatusCode::NOT_FOUND, "404 page not found\n".to_owned())
    );
    // A member that is down: 503 with the reason.
    s.member
        .stop_with(nix::sys::signal::Signal::SIGKILL, Duration::from_secs(10))
        .await;
    let down = api
        .get(&format!("{PROXY}/version"))
        .await
        .expect_status(503, "ServiceUnavailable");
    let message = down["message"].as_str().unwrap_or_default();
    assert!(
        message.starts_with("error trying to reach cluster \"eu-1\": https://127.0.0.1:")
            && message.contains("onnect"),
        "{down}"
    );
}
