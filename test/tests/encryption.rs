//! Encryption at rest (`--encryption-provider-config`) end to end, on the
//! embedded store and on a real etcd: what kubectl writes is sealed in the
//! bytes the store keeps (read from etcd over its JSON gateway and from
//! the embedded store's file), reads come back in plaintext, and a key
//! rotation followed by `skein storage rewrite` or by kubectl's
//! `get -o json | replace -f -` leaves every value under the new key (a
//! server that only knows the new key still reads them all).

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use nix::sys::signal::Signal;
use skein_tests::etcd::Etcd;
use skein_tests::kubectl_binaries;
use skein_tests::server::Server;

const PLAINTEXT: &str = "supersecret-marker-7c1f";

/// Keys (base64 of 32 bytes each).
fn key(byte: u8) -> String {
    STANDARD.encode([byte; 32])
}

fn write_config(dir: &Path, name: &str, keys: &[(&str, u8)], identity: bool) -> PathBuf {
    let mut text = String::from(
        "apiVersion: apiserver.config.k8s.io/v1\nkind: EncryptionConfiguration\nresources:\n  - resources: [secrets]\n    providers:\n      - aesgcm:\n          keys:\n",
    );
    for (n, b) in keys {
        text.push_str(&format!(
            "            - name: {n}\n              secret: {}\n",
            key(*b)
        ));
    }
    if identity {
        text.push_str("      - identity: {}\n");
    }
    let path = dir.join(name);
    std::fs::write(&path, text).expect("write the encryption config");
    path
}

/// The raw stored value of `key`: from etcd's JSON gateway, or `None` for
/// the embedded store (whose file is searched instead).
async fn etcd_value(etcd: &Etcd, key: &str) -> Vec<u8> {
    let body = serde_json::json!({"key": STANDARD.encode(key)});
    let reply: serde_json::Value = reqwest::Client::new()
        .post(format!("{}/v3/kv/range", etcd.endpoint()))
        .header("content-type", "application/json")
        .body(body.to_string())
        .send()
        .await
        .expect("etcd range")
        .bytes()
        .await
        .map(|b| serde_json::from_slice(&b).expect("etcd json"))
        .expect("etcd body");
    let value = reply["kvs"][0]["value"]
        .as_str()
        .unwrap_or_else(|| panic!("{key} not in etcd: {reply}"));
    STANDARD.decode(value).expect("base64 from etcd")
}

fn contains(haystack: &[u8], needle: &[u8]) -> bool {
    haystack.windows(needle.len()).any(|w| w == needle)
}

fn kubectl_ok(server: &Server, kubectl: &Path, args: &[&str]) -> String {
    let out = server.kubectl(kubectl, args);
    assert!(
        out.status.success(),
        "kubectl {args:?} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

struct Backend {
    etcd: Option<Etcd>,
}

impl Backend {
    fn flags(&self) -> Vec<String> {
        self.etcd
            .iter()
            .map(|e| format!("--etcd-servers={}", e.endpoint()))
            .collect()
    }

    /// Checks the stored bytes of Secret `default/name` (and, for the
    /// embedded store, of the whole file): sealed under `key_name`, never
    /// the plaintext, while ConfigMap `default/plain` stays readable.
    async fn assert_sealed(&self, data_dir: &Path, name: &str, key_name: &str) {
        let prefix = format!("k8s:enc:aesgcm:v1:{key_name}:");
        let encoded = STANDARD.encode(PLAINTEXT);
        match &self.etcd {
            Some(etcd) => {
                let raw = etcd_value(etcd, &format!("/registry/core/secrets/default/{name}")).await;
                assert!(
                    raw.starts_with(prefix.as_bytes()),
                    "etcd holds {:?}",
                    String::from_utf8_lossy(&raw)
                );
                assert!(
                    !contains(&raw, encoded.as_bytes()) && !contains(&raw, PLAINTEXT.as_bytes())
                );
                let cm = etcd_value(etcd, "/registry/core/configmaps/default/plain").await;
                assert!(
                    contains(&cm, b"visible-value"),
                    "unencrypted resources stay plain"
                );
            }
            None => {
                let file = std::fs::read(data_dir.join("store.redb")).expect("read store.redb");
                assert!(
                    contains(&file, prefix.as_bytes()),
                    "no {prefix} in store.redb"
                );
                assert!(
                    !contains(&file, encoded.as_bytes()),
                    "the Secret's data is in store.redb in plaintext"
                );
                assert!(!contains(&file, PLAINTEXT.as_bytes()));
                assert!(
                    contains(&file, b"visible-value"),
                    "unencrypted resources stay plain"
                );
            }
        }
    }
}

async fn rotation(backend: Backend) {
    let kubectl = kubectl_binaries().remove(0);
    let dir = tempfile::tempdir().expect("tempdir");
    let data = dir.path().join("data");
    let v1 = write_config(dir.path(), "v1.yaml", &[("key1", 1)], true);
    let mut flags = backend.flags();
    flags.push(format!("--encryption-provider-config={}", v1.display()));
    let args: Vec<&str> = flags.iter().map(String::as_str).collect();
    let mut server = Server::start(&data, &args).await;

    let literal = format!("--from-literal=password={PLAINTEXT}");
    kubectl_ok(
        &server,
        &kubectl,
        &["create", "secret", "generic", "s1", &literal],
    );
    kubectl_ok(
        &server,
        &kubectl,
        &[
            "create",
            "configmap",
            "plain",
            "--from-literal=k=visible-value",
        ],
    );
    backend.assert_sealed(&data, "s1", "key1").await;
    let read = kubectl_ok(
        &server,
        &kubectl,
        &["get", "secret", "s1", "-o", "jsonpath={.data.password}"],
    );
    assert_eq!(read, STANDARD.encode(PLAINTEXT));
    server
        .stop_with(Signal::SIGTERM, Duration::from_secs(20))
        .await;

    // Rotate: key2 first, key1 still readable. `skein storage rewrite`.
    let v2 = write_config(dir.path(), "v2.yaml", &[("key2", 2), ("key1", 1)], true);
    let mut flags = backend.flags();
    flags.push(format!("--encryption-provider-config={}", v2.display()));
    let args: Vec<&str> = flags.iter().map(String::as_str).collect();
    let mut server = Server::start(&data, &args).await;
    let read = kubectl_ok(
        &server,
        &kubectl,
        &["get", "secret", "s1", "-o", "jsonpath={.data.password}"],
    );
    assert_eq!(read, STANDARD.encode(PLAINTEXT), "old key still reads");
    let out = Command::new(skein_tests::skein_bin())
        .args(["storage", "rewrite", "--encryption-provider-config"])
        .arg(&v2)
        .arg("--kubeconfig")
        .arg(server.kubeconfig())
        .output()
        .expect("run skein storage rewrite");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "rewrite failed: {stdout} {}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(stdout.contains("secrets: "), "{stdout}");
    if let Some(etcd) = &backend.etcd {
        let raw = etcd_value(etcd, "/registry/core/secrets/default/s1").await;
        assert!(
            raw.starts_with(b"k8s:enc:aesgcm:v1:key2:"),
            "{}",
            String::from_utf8_lossy(&raw)
        );
    }
    server
        .stop_with(Signal::SIGTERM, Duration::from_secs(20))
        .await;

    // Only key2, no identity: every Secret must have been rewritten.
    let only2 = write_config(dir.path(), "only2.yaml", &[("key2", 2)], false);
    let mut flags = backend.flags();
    flags.push(format!("--encryption-provider-config={}", only2.display()));
    let args: Vec<&str> = flags.iter().map(String::as_str).collect();
    let mut server = Server::start(&data, &args).await;
    kubectl_ok(&server, &kubectl, &["get", "secrets", "-A"]);
    let read = kubectl_ok(
        &server,
        &kubectl,
        &["get", "secret", "s1", "-o", "jsonpath={.data.password}"],
    );
    assert_eq!(read, STANDARD.encode(PLAINTEXT));
    server
        .stop_with(Signal::SIGTERM, Duration::from_secs(20))
        .await;

    // Rotate again with upstream's recipe: get -o json | replace -f -.
    let v3 = write_config(dir.path(), "v3.yaml", &[("key3", 3), ("key2", 2)], false);
    let mut flags = backend.flags();
    flags.push(format!("--encryption-provider-config={}", v3.display()));
    let args: Vec<&str> = flags.iter().map(String::as_str).collect();
    let mut server = Server::start(&data, &args).await;
    let all = kubectl_ok(&server, &kubectl, &["get", "secrets", "-A", "-o", "json"]);
    let mut replace = Command::new(&kubectl)
        .arg("--kubeconfig")
        .arg(server.kubeconfig())
        .args(["replace", "-f", "-"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("kubectl replace");
    replace
        .stdin
        .take()
        .expect("stdin")
        .write_all(all.as_bytes())
        .expect("pipe");
    let out = replace.wait_with_output().expect("kubectl replace");
    assert!(
        out.status.success(),
        "replace: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    server
        .stop_with(Signal::SIGTERM, Duration::from_secs(20))
        .await;

    let only3 = write_config(dir.path(), "only3.yaml", &[("key3", 3)], false);
    let mut flags = backend.flags();
    flags.push(format!("--encryption-provider-config={}", only3.display()));
    let args: Vec<&str> = flags.iter().map(String::as_str).collect();
    let server = Server::start(&data, &args).await;
    let read = kubectl_ok(
        &server,
        &kubectl,
        &["get", "secret", "s1", "-o", "jsonpath={.data.password}"],
    );
    assert_eq!(read, STANDARD.encode(PLAINTEXT));
    backend.assert_sealed(&data, "s1", "key3").await;

    // A server without the key cannot read the Secret: a clean error.
    drop(server);
    let only9 = write_config(dir.path(), "only9.yaml", &[("key9", 9)], false);
    let mut flags = backend.flags();
    flags.push(format!("--encryption-provider-config={}", only9.display()));
    let args: Vec<&str> = flags.iter().map(String::as_str).collect();
    let server = Server::start(&data, &args).await;
    let out = server.kubectl(&kubectl, &["get", "secret", "s1"]);
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("unable to transform key \\\"/registry/core/secrets/default/s1\\\": no matching prefix found")
            || err.contains("unable to transform key \"/registry/core/secrets/default/s1\": no matching prefix found"),
        "{err}"
    );
}

#[tokio::test]
async fn secrets_are_sealed_in_the_embedded_store_and_rotate() {
    rotation(Backend { etcd: None }).await;
}

#[tokio::test]
async fn secrets_are_sealed_in_etcd_and_rotate() {
    let etcd = tokio::task::spawn_blocking(Etcd::start)
        .await
        .expect("etcd");
    rotation(Backend { etcd: Some(etcd) }).await;
}

#[tokio::test]
async fn a_bad_config_is_upstreams_startup_error() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("bad.yaml");
    std::fs::write(
        &path,
        "apiVersion: apiserver.config.k8s.io/v1\nkind: EncryptionConfiguration\nresources:\n  - resources: [secrets]\n    providers:\n      - aescbc:\n          keys:\n            - name: k\n              secret: cGFzc3dvcmQ=\n",
    )
    .expect("write");
    let flag = format!("--encryption-provider-config={}", path.display());
    let (status, log) = Server::start_expecting_failure(&dir.path().join("data"), &[&flag]).await;
    assert!(!status.success());
    let expected = format!(
        "error while parsing encryption provider configuration file \"{}\": error while parsing file: resources[0].providers[0].aescbc.keys[0].secret: Invalid value: \"REDACTED\": secret is not of the expected length, got 8, expected one of [16 24 32]",
        path.display()
    );
    assert!(log.contains(&expected), "{log}");
}
