//! Onboarding a user with a CertificateSigningRequest, end to end: an
//! openssl key and CSR, `kubectl certificate approve`, then a kubeconfig
//! with the issued certificate that `kubectl auth whoami` shows as the CSR's
//! subject. Also a CSR the `kubernetes.io/kube-apiserver-client` signer
//! refuses (it gets upstream's `Failed` condition) and a denied one.

use std::path::Path;
use std::process::{Command, Output};

use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use serde_json::{Value, json};
use skein_tests::kubectl_binaries;
use skein_tests::server::Server;

fn ok(out: &Output, what: &str) -> String {
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        out.status.success(),
        "{what} failed: {stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    stdout
}

fn openssl(dir: &Path, args: &[&str]) {
    let out = Command::new("openssl")
        .current_dir(dir)
        .args(args)
        .output()
        .expect("run openssl");
    ok(&out, &format!("openssl {args:?}"));
}

/// An openssl key and CSR for `subject`; returns (key PEM, CSR PEM).
fn key_and_csr(dir: &Path, name: &str, subject: &str) -> (String, String) {
    let key = format!("{name}.key");
    let csr = format!("{name}.csr");
    openssl(
        dir,
        &[
            "genpkey",
            "-algorithm",
            "EC",
            "-pkeyopt",
            "ec_paramgen_curve:P-256",
            "-out",
            &key,
        ],
    );
    openssl(
        dir,
        &["req", "-new", "-key", &key, "-subj", subject, "-out", &csr],
    );
    (
        std::fs::read_to_string(dir.join(key)).expect("key"),
        std::fs::read_to_string(dir.join(csr)).expect("csr"),
    )
}

fn csr_object(name: &str, csr_pem: &str, usages: &[&str]) -> Value {
    json!({
        "apiVersion": "certificates.k8s.io/v1",
        "kind": "CertificateSigningRequest",
        "metadata": {"name": name},
        "spec": {
            "request": STANDARD.encode(csr_pem),
            "signerName": "kubernetes.io/kube-apiserver-client",
            "expirationSeconds": 86400,
            "usages": usages,
        }
    })
}

fn apply(server: &Server, k: &Path, dir: &Path, obj: &Value) {
    let file = dir.join("obj.json");
    std::fs::write(&file, obj.to_string()).expect("write");
    ok(
        &server.kubectl(k, &["create", "-f", file.to_str().unwrap_or("")]),
        "create csr",
    );
}

fn get(server: &Server, k: &Path, name: &str) -> Value {
    let out = ok(
        &server.kubectl(k, &["get", "csr", name, "-o", "json"]),
        "get csr",
    );
    serde_json::from_str(&out).expect("json")
}

#[tokio::test]
async fn approved_csr_issues_a_client_certificate_that_logs_in() {
    let k = kubectl_binaries().remove(0);
    let dir = tempfile::tempdir().expect("tempdir");
    let server = Server::start(&dir.path().join("data"), &[]).await;
    let (key, csr) = key_and_csr(dir.path(), "jane", "/CN=jane/O=dev/O=ops");
    apply(
        &server,
        &k,
        dir.path(),
        &csr_object(
            "jane",
            &csr,
            &["digital signature", "key encipherment", "client auth"],
        ),
    );
    let table = ok(&server.kubectl(&k, &["get", "csr", "jane"]), "get csr");
    assert!(table.contains("Pending"), "{table}");
    ok(
        &server.kubectl(&k, &["certificate", "approve", "jane"]),
        "approve",
    );
    let obj = get(&server, &k, "jane");
    let table = ok(&server.kubectl(&k, &["get", "csr", "jane"]), "get csr");
    assert!(table.contains("Approved,Issued"), "{table}");
    let cert = STANDARD
        .decode(obj["status"]["certificate"].as_str().expect("issued"))
        .expect("base64");
    let cert_pem = String::from_utf8(cert).expect("pem");
    // Validity: a day (expirationSeconds), starting 5 minutes back.
    let der = x509_parser::pem::parse_x509_pem(cert_pem.as_bytes())
        .expect("pem")
        .1
        .contents;
    let (_, c) = x509_parser::parse_x509_certificate(&der).expect("x509");
    let life = c.validity().not_after.timestamp() - c.validity().not_before.timestamp();
    assert_eq!(life, 86400 + 300);

    // A kubeconfig with the issued certificate: whoami is the CSR's subject.
    let mut config = server.kubeconfig_json();
    config["users"][0]["user"] = json!({
        "client-certificate-data": STANDARD.encode(&cert_pem),
        "client-key-data": STANDARD.encode(&key),
    });
    let path = dir.path().join("jane.kubeconfig");
    std::fs::write(&path, config.to_string()).expect("write kubeconfig");
    let out = ok(
        &server.kubectl_with(&k, &path, &["auth", "whoami", "-o", "json"]),
        "whoami",
    );
    let review: Value = serde_json::from_str(&out).expect("json");
    assert_eq!(
        review["status"]["userInfo"],
        json!({"username": "jane", "groups": ["dev", "ops", "system:authenticated"]})
    );

    // Approving again changes nothing (the certificate stays).
    ok(
        &server.kubectl(&k, &["certificate", "approve", "jane"]),
        "approve again",
    );
    assert_eq!(
        get(&server, &k, "jane")["status"]["certificate"],
        obj["status"]["certificate"]
    );
}

#[tokio::test]
async fn the_signer_fails_bad_usages_and_denied_csrs_are_not_signed() {
    let k = kubectl_binaries().remove(0);
    let dir = tempfile::tempdir().expect("tempdir");
    let server = Server::start(&dir.path().join("data"), &[]).await;
    let (_, csr) = key_and_csr(dir.path(), "srv", "/CN=srv");
    apply(
        &server,
        &k,
        dir.path(),
        &csr_object("srv", &csr, &["server auth", "client auth"]),
    );
    ok(
        &server.kubectl(&k, &["certificate", "approve", "srv"]),
        "approve",
    );
    let obj = get(&server, &k, "srv");
    assert!(obj["status"].get("certificate").is_none(), "{obj}");
    let failed = obj["status"]["conditions"]
        .as_array()
        .and_then(|l| l.iter().find(|c| c["type"] == "Failed"))
        .cloned()
        .unwrap_or(Value::Null);
    assert_eq!(failed["status"], "True", "{obj}");
    assert_eq!(failed["reason"], "SignerValidationFailure");
    assert_eq!(
        failed["message"],
        "invalid usage for client certificate: server auth"
    );
    let table = ok(&server.kubectl(&k, &["get", "csr", "srv"]), "get csr");
    assert!(table.contains("Approved,Failed"), "{table}");

    let (_, csr) = key_and_csr(dir.path(), "mallory", "/CN=mallory/O=system:masters");
    apply(
        &server,
        &k,
        dir.path(),
        &csr_object("mallory", &csr, &["client auth"]),
    );
    ok(
        &server.kubectl(&k, &["certificate", "deny", "mallory"]),
        "deny",
    );
    let obj = get(&server, &k, "mallory");
    assert!(obj["status"].get("certificate").is_none(), "{obj}");
    let table = ok(&server.kubectl(&k, &["get", "csr", "mallory"]), "get csr");
    assert!(table.contains("Denied"), "{table}");
}
