//! Static bearer tokens (`skein serve --token-auth-file`) end to end: a real
//! process, real HTTPS, real kubectl 1.35 and 1.32 with a token-only
//! kubeconfig.

use std::path::{Path, PathBuf};
use std::process::Output;

use reqwest::StatusCode;
use skein_tests::kubectl_binaries;
use skein_tests::server::Server;

// With json.Encoder's trailing newline, as upstream.
const UNAUTHORIZED: &str = "{\"kind\":\"Status\",\"apiVersion\":\"v1\",\"metadata\":{},\"status\":\"Failure\",\"message\":\"Unauthorized\",\"reason\":\"Unauthorized\",\"code\":401}\n";

/// kube-apiserver's format: `token,user,uid,"group1,group2"`.
const TOKENS: &str = "alice-token,alice,1001,\"dev,ops\"\nbob-token,bob,\n";

/// kubectl's last line for a 401.
const LOGGED_IN: &str = "error: You must be logged in to the server (Unauthorized)";

/// Writes `TOKENS` next to the data dir and starts a server that reads it;
/// alice's group `dev` may view everything (a ClusterRoleBinding to
/// `view`), so she can list namespaces under RBAC.
async fn start(dir: &Path) -> Server {
    let file = write_token_file(dir, TOKENS);
    let flag = format!("--token-auth-file={}", file.display());
    let server = Server::start(&dir.join("data"), &[&flag]).await;
    let binding = serde_json::json!({
        "apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRoleBinding",
        "metadata": {"name": "dev-view"},
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "view"},
        "subjects": [{"apiGroup": "rbac.authorization.k8s.io", "kind": "Group", "name": "dev"}],
    });
    let r = server
        .client(true)
        .post(server.url("/apis/rbac.authorization.k8s.io/v1/clusterrolebindings"))
        .header("content-type", "application/json")
        .body(binding.to_string())
        .send()
        .await
        .expect("request");
    assert_eq!(r.status(), StatusCode::CREATED);
    // The authorizer follows RBAC objects by a watch: wait until it has.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    loop {
        let r = server
            .client(false)
            .get(server.url("/api/v1/namespaces"))
            .bearer_auth("alice-token")
            .send()
            .await
            .expect("request");
        if r.status() == StatusCode::OK {
            break;
        }
        assert!(std::time::Instant::now() < deadline, "alice never got view");
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    server
}

fn write_token_file(dir: &Path, text: &str) -> PathBuf {
    let file = dir.join("tokens.csv");
    std::fs::write(&file, text).expect("write the token file");
    file
}

fn text(out: &Output) -> (String, String) {
    (
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn assert_success(kubectl: &Path, args: &[&str], out: &Output) -> String {
    let (stdout, stderr) = text(out);
    assert!(
        out.status.success(),
        "{} {args:?} failed ({}):\n{stdout}\n{stderr}",
        kubectl.display(),
        out.status
    );
    stdout
}

#[tokio::test]
async fn kubectl_authenticates_with_a_bearer_token() {
    let kubectls = kubectl_binaries();
    let dir = tempfile::tempdir().expect("tempdir");
    let server = start(dir.path()).await;
    let alice = server.token_kubeconfig("alice", "alice-token");
    let wrong = server.token_kubeconfig("wrong", "not-a-token");
    let config: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&alice).expect("read")).expect("json");
    assert!(
        config["users"][0]["user"]
            .get("client-certificate-data")
            .is_none(),
        "the token kubeconfig must not carry a client certificate: {config}"
    );

    for kubectl in &kubectls {
        let k = kubectl.display();

        let args = ["auth", "whoami", "-o", "json"];
        let stdout = assert_success(kubectl, &args, &server.kubectl_with(kubectl, &alice, &args));
        let review: serde_json::Value = serde_json::from_str(&stdout)
            .unwrap_or_else(|e| panic!("{k}: whoami is not JSON ({e}):\n{stdout}"));
        assert_eq!(review["kind"], "SelfSubjectReview", "{k}: {review}");
        let info = &review["status"]["userInfo"];
        assert_eq!(info["username"], "alice", "{k}: {review}");
        assert_eq!(
            info["groups"],
            serde_json::json!(["dev", "ops", "system:authenticated"]),
            "{k}: {review}"
        );

        // The table kubectl users see.
        let args = ["auth", "whoami"];
        let stdout = assert_success(kubectl, &args, &server.kubectl_with(kubectl, &alice, &args));
        let rows: Vec<Vec<&str>> = stdout
            .lines()
            .map(|l| l.split_whitespace().collect())
            .collect();
        assert!(
            rows.contains(&vec!["Username", "alice"]),
            "{k}: no Username row:\n{stdout}"
        );
        assert!(
            rows.contains(&vec!["Groups", "[dev", "ops", "system:authenticated]"]),
            "{k}: no Groups row:\n{stdout}"
        );

        let args = ["get", "ns", "-o", "name"];
        let stdout = assert_success(kubectl, &args, &server.kubectl_with(kubectl, &alice, &args));
        assert!(
            stdout.lines().any(|l| l == "namespace/default"),
            "{k}: {stdout}"
        );
        let args = ["get", "ns"];
        let stdout = assert_success(kubectl, &args, &server.kubectl_with(kubectl, &alice, &args));
        assert!(
            stdout.lines().any(|l| l.starts_with("default ")),
            "{k}: {stdout}"
        );

        // A wrong token: kubectl's standard message and exit code 1.
        for args in [&["get", "ns"][..], &["auth", "whoami"]] {
            let out = server.kubectl_with(kubectl, &wrong, args);
            let (stdout, stderr) = text(&out);
            assert_eq!(
                out.status.code(),
                Some(1),
                "{k} {args:?}:\n{stdout}\n{stderr}"
            );
            assert_eq!(
                stderr.lines().rfind(|l| !l.trim().is_empty()),
                Some(LOGGED_IN),
                "{k} {args:?}:\n{stderr}"
            );
        }

        // The admin's client certificate still works alongside the tokens.
        let args = ["auth", "whoami", "-o", "json"];
        let stdout = assert_success(kubectl, &args, &server.kubectl(kubectl, &args));
        let review: serde_json::Value = serde_json::from_str(&stdout).expect("json");
        assert_eq!(
            review["status"]["userInfo"]["username"], "skein-admin",
            "{k}: {review}"
        );
    }
}

#[tokio::test]
async fn bearer_tokens_over_https() {
    let dir = tempfile::tempdir().expect("tempdir");
    let server = start(dir.path()).await;
    let anonymous = server.client(false);

    let r = anonymous
        .get(server.url("/api"))
        .bearer_auth("alice-token")
        .send()
        .await
        .expect("request");
    assert_eq!(r.status(), StatusCode::OK);

    // Bob has no uid and no groups of his own.
    let r = anonymous
        .post(server.url("/apis/authentication.k8s.io/v1/selfsubjectreviews"))
        .bearer_auth("bob-token")
        .header("content-type", "application/json")
        .body(r#"{"apiVersion":"authentication.k8s.io/v1","kind":"SelfSubjectReview"}"#)
        .send()
        .await
        .expect("request");
    assert_eq!(r.status(), StatusCode::CREATED);
    let review: serde_json::Value =
        serde_json::from_str(&r.text().await.expect("body")).expect("json");
    let info = &review["status"]["userInfo"];
    assert_eq!(info["username"], "bob", "{review}");
    assert_eq!(
        info["groups"],
        serde_json::json!(["system:authenticated"]),
        "{review}"
    );

    // A wrong token is a 401 everywhere, the public paths included (a bad
    // credential is not "no credential", as upstream).
    for path in ["/api", "/apis", "/healthz", "/version"] {
        for token in ["not-a-token", "Alice-token", "alice-token2", "alice"] {
            let r = anonymous
                .get(server.url(path))
                .bearer_auth(token)
                .send()
                .await
                .expect("request");
            assert_eq!(r.status(), StatusCode::UNAUTHORIZED, "{path} {token}");
            assert_eq!(r.headers()["content-type"], "application/json");
            assert_eq!(
                r.text().await.expect("body"),
                UNAUTHORIZED,
                "{path} {token}"
            );
        }
    }

    // No token at all: public paths only, as before.
    let r = anonymous
        .get(server.url("/healthz"))
        .send()
        .await
        .expect("request");
    assert_eq!(r.status(), StatusCode::OK);
    let r = anonymous
        .get(server.url("/api"))
        .send()
        .await
        .expect("request");
    assert_eq!(r.status(), StatusCode::UNAUTHORIZED);

    // A client certificate is tried first: a wrong token next to it is
    // never looked at.
    let r = server
        .client(true)
        .get(server.url("/healthz/etcd"))
        .bearer_auth("not-a-token")
        .send()
        .await
        .expect("request");
    assert_eq!(r.status(), StatusCode::OK);
}

#[tokio::test]
async fn without_the_flag_bearer_tokens_authenticate_nobody() {
    let dir = tempfile::tempdir().expect("tempdir");
    let server = Server::start(dir.path(), &[]).await;
    let anonymous = server.client(false);
    let r = anonymous
        .get(server.url("/api"))
        .bearer_auth("alice-token")
        .send()
        .await
        .expect("request");
    assert_eq!(r.status(), StatusCode::UNAUTHORIZED);
    assert_eq!(r.text().await.expect("body"), UNAUTHORIZED);
}

#[tokio::test]
async fn a_malformed_token_file_stops_startup() {
    let dir = tempfile::tempdir().expect("tempdir");
    let data = dir.path().join("data");
    // No comments in kube's format: `# ...` is a one-column record.
    let file = write_token_file(dir.path(), "alice-token,alice,1001\n# tokens\n");
    let flag = format!("--token-auth-file={}", file.display());
    let (status, stderr) = Server::start_expecting_failure(&data, &[&flag]).await;
    assert!(!status.success(), "{status}: {stderr}");
    let want = format!(
        "invalid --token-auth-file {}: line 2: must have at least 3 columns \
         (token, user name, user uid), found 1",
        file.display()
    );
    assert!(stderr.contains(&want), "want {want:?} in:\n{stderr}");
    assert!(
        !data.join("pki").exists() && !data.join("store.redb").exists(),
        "the token file is read before anything else starts"
    );

    let missing = dir.path().join("missing.csv");
    let flag = format!("--token-auth-file={}", missing.display());
    let (status, stderr) = Server::start_expecting_failure(&data, &[&flag]).await;
    assert!(!status.success(), "{status}: {stderr}");
    let want = format!("cannot read --token-auth-file {}: ", missing.display());
    assert!(stderr.contains(&want), "want {want:?} in:\n{stderr}");
}
