//! The admin kubeconfig, `<data-dir>/admin.kubeconfig`.
//!
//! Written as JSON, which is valid YAML and which kubectl, client-go and
//! Helm all read. Rewritten at every start because the port may change.

use std::net::SocketAddr;
use std::path::Path;

use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use serde_json::{Value, json};

use crate::Result;
use crate::pki::{ADMIN_USER, Pki};

/// The cluster and context name in the admin kubeconfig.
pub const CONTEXT: &str = "skein";

/// The kubeconfig document for the admin user of a server at `server`
/// (dialled as `https://<server>`).
pub fn admin(server: SocketAddr, pki: &Pki) -> Value {
    let b64 = |pem: &str| STANDARD.encode(pem.as_bytes());
    json!({
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [{
            "name": CONTEXT,
            "cluster": {
                "server": format!("https://{server}"),
                "certificate-authority-data": b64(&pki.ca.cert_pem),
            },
        }],
        "users": [{
            "name": ADMIN_USER,
            "user": {
                "client-certificate-data": b64(&pki.admin.cert_pem),
                "client-key-data": b64(&pki.admin.key_pem),
            },
        }],
        "contexts": [{
            "name": CONTEXT,
            "context": { "cluster": CONTEXT, "user": ADMIN_USER },
        }],
        "current-context": CONTEXT,
        "preferences": {},
    })
}

/// Writes [`admin`] to `path` with mode 0600 (it holds the admin key).
pub fn write_admin(path: &Path, server: SocketAddr, pki: &Pki) -> Result<()> {
    let mut text = serde_json::to_string_pretty(&admin(server, pki))
        .expect("a serde_json::Value always serializes");
    text.push('\n');
    crate::pki::write_atomic(path, text.as_bytes(), 0o600)
}

#[cfg(test)]
mod tests {
    use std::os::unix::fs::PermissionsExt;

    use super::*;
    use crate::pki::CertKey;

    fn pki() -> Pki {
        let pair = |s: &str| CertKey {
            cert_pem: format!("{s}-cert"),
            key_pem: format!("{s}-key"),
        };
        Pki {
            ca: pair("ca"),
            serving: pair("serving"),
            admin: pair("admin"),
        }
    }

    #[test]
    fn content() {
        let addr: SocketAddr = "127.0.0.1:6443".parse().expect("addr");
        let v = admin(addr, &pki());
        assert_eq!(v["current-context"], "skein");
        assert_eq!(v["clusters"][0]["name"], "skein");
        assert_eq!(
            v["clusters"][0]["cluster"]["server"],
            "https://127.0.0.1:6443"
        );
        assert_eq!(
            v["clusters"][0]["cluster"]["certificate-authority-data"],
            STANDARD.encode("ca-cert")
        );
        assert_eq!(v["users"][0]["name"], "skein-admin");
        assert_eq!(
            v["users"][0]["user"]["client-certificate-data"],
            STANDARD.encode("admin-cert")
        );
        assert_eq!(
            v["users"][0]["user"]["client-key-data"],
            STANDARD.encode("admin-key")
        );
        assert_eq!(v["contexts"][0]["name"], "skein");
        assert_eq!(v["contexts"][0]["context"]["cluster"], "skein");
        assert_eq!(v["contexts"][0]["context"]["user"], "skein-admin");
    }

    #[test]
    fn ipv6_server_is_bracketed() {
        let addr: SocketAddr = "[::1]:7000".parse().expect("addr");
        assert_eq!(
            admin(addr, &pki())["clusters"][0]["cluster"]["server"],
            "https://[::1]:7000"
        );
    }

    #[test]
    fn written_private_and_rewritten() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("admin.kubeconfig");
        write_admin(&path, "127.0.0.1:1".parse().expect("addr"), &pki()).expect("write");
        write_admin(&path, "127.0.0.1:2".parse().expect("addr"), &pki()).expect("rewrite");
        let mode = std::fs::metadata(&path).expect("stat").permissions().mode() & 0o777;
        assert_eq!(mode, 0o600);
        let v: Value =
            serde_json::from_str(&std::fs::read_to_string(&path).expect("read")).expect("json");
        assert_eq!(v["clusters"][0]["cluster"]["server"], "https://127.0.0.1:2");
    }
}
