//! `skein serve` end to end: a real process, real HTTPS, real kubectl.

use std::time::Duration;

use nix::sys::signal::Signal;
use reqwest::{StatusCode, Version};
use skein_tests::kubectl_binaries;
use skein_tests::server::Server;

// With json.Encoder's trailing newline, as upstream.
const UNAUTHORIZED: &str = "{\"kind\":\"Status\",\"apiVersion\":\"v1\",\"metadata\":{},\"status\":\"Failure\",\"message\":\"Unauthorized\",\"reason\":\"Unauthorized\",\"code\":401}\n";

#[tokio::test]
async fn kubectl_version_reports_1_33() {
    let kubectls = kubectl_binaries();
    let dir = tempfile::tempdir().expect("tempdir");
    let server = Server::start(dir.path(), &[]).await;
    for kubectl in &kubectls {
        let out = server.kubectl(kubectl, &["version", "-o", "json"]);
        let stdout = String::from_utf8_lossy(&out.stdout);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(
            out.status.success(),
            "{} version failed ({}):\n{stdout}\n{stderr}",
            kubectl.display(),
            out.status
        );
        let v: serde_json::Value = serde_json::from_str(&stdout)
            .unwrap_or_else(|e| panic!("{}: not JSON ({e}):\n{stdout}", kubectl.display()));
        let server_version = &v["serverVersion"];
        assert_eq!(server_version["major"], "1", "{}: {v}", kubectl.display());
        assert_eq!(server_version["minor"], "33", "{}: {v}", kubectl.display());
        let git = server_version["gitVersion"].as_str().unwrap_or_default();
        assert!(
            git.starts_with("v1.33.0+skein-"),
            "{}: {git}",
            kubectl.display()
        );
    }
}

#[tokio::test]
async fn anonymous_requests_get_401_except_public_paths() {
    let dir = tempfile::tempdir().expect("tempdir");
    let server = Server::start(dir.path(), &[]).await;
    let anonymous = server.client(false);

    for path in ["/api", "/apis", "/api/v1/namespaces", "/healthz/etcd"] {
        let r = anonymous
            .get(server.url(path))
            .send()
            .await
            .expect("request");
        assert_eq!(r.status(), StatusCode::UNAUTHORIZED, "{path}");
        assert_eq!(r.headers()["content-type"], "application/json", "{path}");
        assert_eq!(r.text().await.expect("body"), UNAUTHORIZED, "{path}");
    }

    for path in ["/healthz", "/livez", "/readyz"] {
        let r = anonymous
            .get(server.url(path))
            .send()
            .await
            .expect("request");
        assert_eq!(r.status(), StatusCode::OK, "{path}");
        assert_eq!(r.text().await.expect("body"), "ok", "{path}");
    }

    let r = anonymous
        .get(server.url("/version"))
        .send()
        .await
        .expect("request");
    assert_eq!(r.status(), StatusCode::OK);
    let v: serde_json::Value = r.json_text().await;
    assert_eq!(v["minor"], "33");

    let r = anonymous
        .get(server.url("/readyz?verbose"))
        .send()
        .await
        .expect("request");
    assert_eq!(
        r.text().await.expect("body"),
        "[+]ping ok\n[+]etcd ok\n[+]shutdown ok\nreadyz check passed\n"
    );
}

#[tokio::test]
async fn admin_certificate_authenticates() {
    let dir = tempfile::tempdir().expect("tempdir");
    let server = Server::start(dir.path(), &[]).await;
    let admin = server.client(true);

    // Authenticated, so an unknown path is a 404 rather than a 401: Go's
    // plain-text `http.NotFound`, as kube-apiserver answers paths no API
    // group serves.
    let r = admin
        .get(server.url("/no/such/path"))
        .send()
        .await
        .expect("request");
    assert_eq!(r.status(), StatusCode::NOT_FOUND);
    assert_eq!(
        r.headers()["content-type"],
        "text/plain; charset=utf-8",
        "plain-text 404"
    );
    assert_eq!(r.text().await.expect("body"), "404 page not found\n");
    let r = admin
        .get(server.url("/healthz/etcd"))
        .send()
        .await
        .expect("request");
    assert_eq!(r.status(), StatusCode::OK);
    assert_eq!(r.text().await.expect("body"), "ok");
}

#[tokio::test]
async fn client_certificate_from_another_ca_is_rejected() {
    let dir_a = tempfile::tempdir().expect("tempdir");
    let dir_b = tempfile::tempdir().expect("tempdir");
    let a = Server::start(dir_a.path(), &[]).await;
    let b = Server::start(dir_b.path(), &[]).await;
    // B's CA as trust root, A's admin certificate as identity.
    let foreign = b
        .client_builder(false)
        .identity(a.admin_identity())
        .build()
        .expect("client");
    let err = foreign
        .get(b.url("/healthz"))
        .send()
        .await
        .expect_err("the handshake must fail");
    assert!(err.is_connect() || err.is_request(), "{err:?}");
    // B still serves its own admin.
    let r = b
        .client(true)
        .get(b.url("/healthz/ping"))
        .send()
        .await
        .expect("request");
    assert_eq!(r.status(), StatusCode::OK);
}

#[tokio::test]
async fn http2_and_http1_are_negotiated_with_alpn() {
    let dir = tempfile::tempdir().expect("tempdir");
    let server = Server::start(dir.path(), &[]).await;

    let r = server
        .client(true)
        .get(server.url("/version"))
        .send()
        .await
        .expect("h2");
    assert_eq!(r.version(), Version::HTTP_2);
    assert_eq!(r.status(), StatusCode::OK);

    let h1 = server
        .client_builder(true)
        .http1_only()
        .build()
        .expect("client");
    let r = h1
        .get(server.url("/version"))
        .send()
        .await
        .expect("http/1.1");
    assert_eq!(r.version(), Version::HTTP_11);
    assert_eq!(r.status(), StatusCode::OK);
}

#[tokio::test]
async fn sigterm_exits_zero_and_the_data_dir_reopens() {
    let dir = tempfile::tempdir().expect("tempdir");
    let mut server = Server::start(dir.path(), &[]).await;
    let status = server
        .stop_with(Signal::SIGTERM, Duration::from_secs(15))
        .await;
    assert_eq!(
        status.code(),
        Some(0),
        "exit status {status}; log:\n{}",
        server.logs()
    );
    assert!(server.logs().contains("store closed"), "{}", server.logs());

    // The embedded store was closed cleanly: the same data dir opens again
    // and the store answers.
    let again = Server::start(dir.path(), &[]).await;
    let r = again
        .client(true)
        .get(again.url("/readyz/etcd"))
        .send()
        .await
        .expect("request");
    assert_eq!(r.status(), StatusCode::OK);
}

#[tokio::test]
async fn sigint_also_exits_zero() {
    let dir = tempfile::tempdir().expect("tempdir");
    let mut server = Server::start(dir.path(), &[]).await;
    let status = server
        .stop_with(Signal::SIGINT, Duration::from_secs(15))
        .await;
    assert_eq!(
        status.code(),
        Some(0),
        "exit status {status}; log:\n{}",
        server.logs()
    );
}

#[tokio::test]
async fn restart_reuses_the_pki_and_rewrites_the_kubeconfig() {
    let dir = tempfile::tempdir().expect("tempdir");
    let mut first = Server::start(dir.path(), &[]).await;
    let config1 = first.kubeconfig_json();
    let ca_key1 = first.pki_file("ca.key");
    first
        .stop_with(Signal::SIGTERM, Duration::from_secs(15))
        .await;

    let second = Server::start(dir.path(), &[]).await;
    let config2 = second.kubeconfig_json();
    let ca =
        |c: &serde_json::Value| c["clusters"][0]["cluster"]["certificate-authority-data"].clone();
    let user = |c: &serde_json::Value| c["users"][0]["user"].clone();
    let server_url = |c: &serde_json::Value| c["clusters"][0]["cluster"]["server"].clone();

    assert!(ca(&config1).as_str().is_some_and(|s| !s.is_empty()));
    assert_eq!(ca(&config1), ca(&config2), "the CA must survive a restart");
    assert_eq!(
        user(&config1),
        user(&config2),
        "the admin certificate must survive a restart"
    );
    assert_eq!(ca_key1, second.pki_file("ca.key"));
    assert_eq!(server_url(&config2), format!("https://{}", second.addr));

    // The old kubeconfig's credentials still work against the new process.
    let kubectl = &kubectl_binaries()[0];
    let out = second.kubectl(kubectl, &["get", "--raw", "/healthz/etcd"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(String::from_utf8_lossy(&out.stdout), "ok");
}

#[tokio::test]
async fn etcd_backend_serves_and_stops_cleanly() {
    let etcd = skein_tests::etcd::Etcd::start();
    let dir = tempfile::tempdir().expect("tempdir");
    let servers = format!("--etcd-servers={}", etcd.endpoint());
    let mut server = Server::start(dir.path(), &[&servers, "--etcd-prefix=/skein-e2e"]).await;
    assert!(
        !dir.path().join("store.redb").exists(),
        "with --etcd-servers the embedded store must not be created"
    );
    let r = server
        .client(true)
        .get(server.url("/readyz/etcd"))
        .send()
        .await
        .expect("request");
    assert_eq!(r.status(), StatusCode::OK);
    let status = server
        .stop_with(Signal::SIGTERM, Duration::from_secs(15))
        .await;
    assert_eq!(status.code(), Some(0), "log:\n{}", server.logs());
}

/// `Response::json` needs reqwest's `json` feature; parse by hand instead.
trait JsonText {
    async fn json_text(self) -> serde_json::Value;
}

impl JsonText for reqwest::Response {
    async fn json_text(self) -> serde_json::Value {
        let text = self.text().await.expect("body");
        serde_json::from_str(&text).unwrap_or_else(|e| panic!("not JSON ({e}): {text}"))
    }
}
