//! Helm 3.17 and 4.1 against `skein serve` with the admin kubeconfig.

use serde_json::json;
use skein_tests::http::{Api, helm, helm_binaries};
use skein_tests::server::Server;

/// `helm list`'s header line (columns are tab-separated, padded with spaces).
const HEADER: &str = "NAME\tNAMESPACE\tREVISION\tUPDATED\tSTATUS\tCHART\tAPP VERSION";

fn base64(data: &[u8]) -> String {
    const ALPHABET: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::new();
    for chunk in data.chunks(3) {
        let b = [
            chunk[0],
            *chunk.get(1).unwrap_or(&0),
            *chunk.get(2).unwrap_or(&0),
        ];
        let n = (u32::from(b[0]) << 16) | (u32::from(b[1]) << 8) | u32::from(b[2]);
        for i in 0..4 {
            if i <= chunk.len() {
                out.push(ALPHABET[((n >> (18 - 6 * i)) & 63) as usize] as char);
            } else {
                out.push('=');
            }
        }
    }
    out
}

/// Runs `helm <args>`; asserts exit 0 and an empty stderr; returns stdout.
fn run(server: &Server, helm_bin: &std::path::Path, args: &[&str]) -> String {
    let out = helm(server, helm_bin, args);
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(
        out.status.success() && stderr.is_empty(),
        "{} {args:?} ({}):\nstdout:\n{stdout}\nstderr:\n{stderr}\nserver log:\n{}",
        helm_bin.display(),
        out.status,
        server.logs()
    );
    stdout
}

/// A row's tab-separated cells without their padding.
fn cells(line: &str) -> Vec<&str> {
    line.split('\t').map(str::trim_end).collect()
}

#[tokio::test]
async fn helm_list_all_namespaces() {
    let helms = helm_binaries();
    let dir = tempfile::tempdir().expect("tempdir");
    let server = Server::start(dir.path(), &[]).await;

    // No releases: just the header line.
    for h in &helms {
        let stdout = run(&server, h, &["list", "-A"]);
        assert_eq!(stdout, format!("{HEADER}\n"), "{}", h.display());
        let stdout = run(&server, h, &["list", "-A", "-o", "json"]);
        assert_eq!(stdout.trim(), "[]", "{}", h.display());
    }

    // A release record as Helm's Secret driver stores it (the release JSON,
    // base64-encoded, in data.release): both versions read it back through
    // the API.
    let release = json!({
        "name": "demo", "namespace": "default", "version": 1,
        "info": {"first_deployed": "2025-01-01T00:00:00Z", "last_deployed": "2025-01-01T00:00:00Z",
                 "deleted": "", "description": "Install complete", "status": "deployed"},
        "chart": {"metadata": {"apiVersion": "v2", "name": "demo-chart", "version": "0.1.0", "appVersion": "1.2.3"}},
        "config": {}, "manifest": ""
    });
    let encoded = base64(&serde_json::to_vec(&release).expect("json"));
    let secret = json!({
        "apiVersion": "v1", "kind": "Secret", "type": "helm.sh/release.v1",
        "metadata": {"name": "sh.helm.release.v1.demo.v1",
                     "labels": {"owner": "helm", "name": "demo", "status": "deployed", "version": "1"}},
        "data": {"release": base64(encoded.as_bytes())}
    });
    Api::new(&server)
        .post("/api/v1/namespaces/default/secrets", &secret)
        .await
        .expect(201);
    for h in &helms {
        let stdout = run(&server, h, &["list", "-A"]);
        let lines: Vec<&str> = stdout.lines().collect();
        assert_eq!(lines.len(), 2, "{}:\n{stdout}", h.display());
        assert_eq!(cells(lines[0]), cells(HEADER), "{}", h.display());
        assert_eq!(
            cells(lines[1]),
            [
                "demo",
                "default",
                "1",
                "2025-01-01 00:00:00 +0000 UTC",
                "deployed",
                "demo-chart-0.1.0",
                "1.2.3"
            ],
            "{}:\n{stdout}",
            h.display()
        );
        // Another namespace has none.
        let stdout = run(&server, h, &["list", "-n", "kube-system"]);
        assert_eq!(stdout, format!("{HEADER}\n"), "{}", h.display());
    }
}
