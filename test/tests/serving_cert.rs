//! `--tls-cert-file` / `--tls-private-key-file` (issue 14): Skein serves a
//! certificate it was given (a chart's, a company CA's) instead of the one
//! it generates, as kube-apiserver.

use std::path::Path;
use std::process::Command;
use std::time::Duration;

use skein_tests::server::Server;

fn openssl(dir: &Path, args: &[&str]) {
    let out = Command::new("openssl")
        .current_dir(dir)
        .args(args)
        .output()
        .expect("run openssl (is it installed?)");
    assert!(
        out.status.success(),
        "openssl {args:?} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// A CA and, signed by it, a serving certificate for `127.0.0.1` and
/// `localhost` (RSA, PKCS#1 key as openssl's `genrsa -traditional`
/// writes), plus a second, unrelated key.
fn make_pki(dir: &Path) {
    openssl(
        dir,
        &[
            "req",
            "-x509",
            "-newkey",
            "ec",
            "-pkeyopt",
            "ec_paramgen_curve:P-256",
            "-nodes",
            "-keyout",
            "ca.key",
            "-out",
            "ca.crt",
            "-days",
            "2",
            "-subj",
            "/CN=test-serving-ca",
        ],
    );
    openssl(
        dir,
        &["genrsa", "-traditional", "-out", "serving.key", "2048"],
    );
    openssl(
        dir,
        &[
            "req",
            "-new",
            "-key",
            "serving.key",
            "-out",
            "serving.csr",
            "-subj",
            "/CN=skein",
        ],
    );
    std::fs::write(
        dir.join("ext.cnf"),
        "subjectAltName=IP:127.0.0.1,DNS:localhost\nextendedKeyUsage=serverAuth\n",
    )
    .expect("write ext.cnf");
    openssl(
        dir,
        &[
            "x509",
            "-req",
            "-in",
            "serving.csr",
            "-CA",
            "ca.crt",
            "-CAkey",
            "ca.key",
            "-CAcreateserial",
            "-out",
            "serving.crt",
            "-days",
            "2",
            "-extfile",
            "ext.cnf",
        ],
    );
    openssl(dir, &["genrsa", "-out", "other.key", "2048"]);
}

/// A client that trusts only `ca` (PEM) and presents no certificate.
fn client_trusting(ca: &[u8]) -> reqwest::Client {
    reqwest::Client::builder()
        .use_rustls_tls()
        .tls_built_in_root_certs(false)
        .add_root_certificate(reqwest::Certificate::from_pem(ca).expect("CA PEM"))
        .timeout(Duration::from_secs(10))
        .build()
        .expect("client")
}

#[tokio::test(flavor = "multi_thread")]
async fn a_given_serving_certificate_is_served() {
    let pki = tempfile::tempdir().expect("tempdir");
    make_pki(pki.path());
    let data = tempfile::tempdir().expect("tempdir");
    let cert = format!(
        "--tls-cert-file={}",
        pki.path().join("serving.crt").display()
    );
    let key = format!(
        "--tls-private-key-file={}",
        pki.path().join("serving.key").display()
    );
    std::fs::copy(
        pki.path().join("ca.crt"),
        data.path().join(skein_tests::server::TRUSTED_CA),
    )
    .expect("trust the given CA");
    let server = Server::start(data.path(), &[&cert, &key]).await;

    // A client that trusts only the given CA verifies Skein.
    let ca = std::fs::read(pki.path().join("ca.crt")).expect("ca.crt");
    let reply = client_trusting(&ca)
        .get(server.url("/readyz"))
        .send()
        .await
        .expect("a TLS connection verified with the given CA");
    assert_eq!(reply.status(), 200);
    // One that trusts only Skein's generated CA does not.
    let generated = server.pki_file("ca.crt");
    let refused = client_trusting(&generated)
        .get(server.url("/readyz"))
        .send()
        .await;
    assert!(
        refused.is_err(),
        "the generated certificate is no longer served: {refused:?}"
    );
    // Client certificates still authenticate against Skein's CA.
    let body = skein_tests::http::Api::new(&server)
        .post(
            "/apis/authentication.k8s.io/v1/selfsubjectreviews",
            &serde_json::json!({"apiVersion": "authentication.k8s.io/v1", "kind": "SelfSubjectReview"}),
        )
        .await
        .expect(201);
    assert_eq!(
        body["status"]["userInfo"]["username"], "skein-admin",
        "{body}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_key_that_does_not_match_or_a_lone_flag_is_refused() {
    let pki = tempfile::tempdir().expect("tempdir");
    make_pki(pki.path());
    let data = tempfile::tempdir().expect("tempdir");
    let cert = format!(
        "--tls-cert-file={}",
        pki.path().join("serving.crt").display()
    );
    let other = format!(
        "--tls-private-key-file={}",
        pki.path().join("other.key").display()
    );
    let (status, output) = Server::start_expecting_failure(data.path(), &[&cert, &other]).await;
    assert!(!status.success());
    assert!(
        output.contains("--tls-cert-file") && output.contains("the key must match the certificate"),
        "a clear message about the mismatch: {output}"
    );
    let (status, output) = Server::start_expecting_failure(data.path(), &[&cert]).await;
    assert!(!status.success());
    assert!(output.contains("--tls-private-key-file"), "{output}");
    let missing = format!(
        "--tls-private-key-file={}",
        pki.path().join("absent.key").display()
    );
    let (status, output) = Server::start_expecting_failure(data.path(), &[&cert, &missing]).await;
    assert!(!status.success());
    assert!(output.contains("absent.key"), "{output}");
}
