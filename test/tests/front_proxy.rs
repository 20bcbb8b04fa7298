//! Front-proxy (requestheader) authentication, as an aggregated API server
//! behind a host's aggregator: `X-Remote-*` headers are trusted only from a
//! certificate of the requestheader CA whose name is allowed, configured by
//! flags or read from the host's `extension-apiserver-authentication`
//! ConfigMap through `--authentication-kubeconfig`.

use std::path::Path;

use rcgen::{
    BasicConstraints, CertificateParams, DnType, ExtendedKeyUsagePurpose, IsCa, Issuer, KeyPair,
};
use serde_json::{Value, json};
use skein_tests::server::Server;

/// A CA and client certificates signed by it (PEM).
struct Ca {
    pem: String,
    issuer: Issuer<'static, KeyPair>,
}

impl Ca {
    fn new(name: &str) -> Ca {
        let mut params = CertificateParams::new(Vec::<String>::new()).expect("params");
        params.distinguished_name.push(DnType::CommonName, name);
        params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
        let key = KeyPair::generate().expect("key");
        let cert = params.self_signed(&key).expect("self-signed CA");
        Ca {
            pem: cert.pem(),
            issuer: Issuer::new(params, key),
        }
    }

    /// A client certificate and key (one PEM) with common name `cn`.
    fn client(&self, cn: &str) -> Vec<u8> {
        let mut params = CertificateParams::new(Vec::<String>::new()).expect("params");
        params.distinguished_name.push(DnType::CommonName, cn);
        params.extended_key_usages = vec![ExtendedKeyUsagePurpose::ClientAuth];
        let key = KeyPair::generate().expect("key");
        let cert = params.signed_by(&key, &self.issuer).expect("signed");
        format!("{}{}", cert.pem(), key.serialize_pem()).into_bytes()
    }
}

fn client(server: &Server, identity: Option<&[u8]>) -> reqwest::Client {
    let mut builder = server.client_builder(false);
    if let Some(pem) = identity {
        builder = builder.identity(reqwest::Identity::from_pem(pem).expect("identity"));
    }
    builder.build().expect("client")
}

/// `POST selfsubjectreviews` with `headers`: the status and the body.
async fn whoami(
    server: &Server,
    client: &reqwest::Client,
    headers: &[(&str, &str)],
) -> (u16, Value) {
    let mut request = client
        .post(server.url(&format!(
            "{PREFIX}/apis/authentication.k8s.io/v1/selfsubjectreviews"
        )))
        .header("content-type", "application/json")
        .body(
            json!({"apiVersion": "authentication.k8s.io/v1", "kind": "SelfSubjectReview"})
                .to_string(),
        );
    for (k, v) in headers {
        request = request.header(*k, *v);
    }
    let response = request.send().await.expect("POST selfsubjectreviews");
    let status = response.status().as_u16();
    let body = response.bytes().await.expect("body");
    (status, serde_json::from_slice(&body).unwrap_or(Value::Null))
}

/// Where a host's aggregator sends its users' requests (the federated
/// context of aggregated mode).
const PREFIX: &str = "/apis/federation.skein.io/v1alpha1/federations/default/proxy";

const ALICE: &[(&str, &str)] = &[
    ("X-Remote-User", "alice"),
    ("X-Remote-Group", "team-a"),
    ("X-Remote-Group", "system:masters"),
    ("X-Remote-Extra-Scopes", "view"),
    ("X-Remote-Extra-Example.com%2fOrg", "acme"),
];

/// The matrix every configuration must pass.
async fn check(server: &Server, ca: &Ca, other: &Ca) {
    // The allowed front proxy: the headers are the identity.
    let proxy = client(server, Some(&ca.client("front-proxy-client")));
    let (status, body) = whoami(server, &proxy, ALICE).await;
    assert_eq!(status, 201, "{body}\n{}", server.logs());
    let info = &body["status"]["userInfo"];
    assert_eq!(info["username"], "alice", "{body}");
    assert_eq!(
        info["groups"],
        json!(["team-a", "system:masters", "system:authenticated"]),
        "{body}"
    );
    assert_eq!(info["extra"]["scopes"], json!(["view"]), "{body}");
    assert_eq!(info["extra"]["example.com/org"], json!(["acme"]), "{body}");
    // And the asserted user is the one authorized: system:masters can list.
    let response = proxy
        .get(server.url(&format!("{PREFIX}/api/v1/namespaces")))
        .header("X-Remote-User", "alice")
        .header("X-Remote-Group", "system:masters")
        .send()
        .await
        .expect("GET");
    assert_eq!(response.status(), 200);
    // Outside the prefix a front proxy is the host, which sees only
    // `federations` (README, "What the host sees").
    let response = proxy
        .get(server.url("/api/v1/namespaces"))
        .header("X-Remote-User", "alice")
        .header("X-Remote-Group", "system:masters")
        .send()
        .await
        .expect("GET");
    assert_eq!(response.status(), 404);

    // The front proxy without a username header is nobody: 401.
    let (status, body) = whoami(server, &proxy, &[("X-Remote-Group", "system:masters")]).await;
    assert_eq!(status, 401, "{body}");
    assert_eq!(body["reason"], "Unauthorized");

    // The same headers without a certificate are ignored: 401.
    let (status, body) = whoami(server, &client(server, None), ALICE).await;
    assert_eq!(status, 401, "{body}");
    assert_eq!(body["kind"], "Status");

    // From a certificate of the front-proxy CA whose name is not allowed:
    // ignored, and that certificate is nobody either.
    let stranger = client(server, Some(&ca.client("someone-else")));
    let (status, body) = whoami(server, &stranger, ALICE).await;
    assert_eq!(status, 401, "{body}");

    // From a client-CA user: ignored, the certificate's user stands.
    let (status, body) = whoami(server, &server.client(true), ALICE).await;
    assert_eq!(status, 201, "{body}");
    assert_eq!(
        body["status"]["userInfo"]["username"], "skein-admin",
        "{body}"
    );
    assert!(body["status"]["userInfo"]["extra"].is_null(), "{body}");

    // A certificate of an unknown CA fails the TLS handshake.
    let unknown = client(server, Some(&other.client("front-proxy-client")));
    let result = unknown.get(server.url("/version")).send().await;
    assert!(result.is_err(), "{result:?}");
}

#[tokio::test]
async fn requestheader_flags() {
    let dir = tempfile::tempdir().expect("tempdir");
    let ca = Ca::new("front-proxy-ca");
    let ca_file = dir.path().join("front-proxy-ca.crt");
    std::fs::write(&ca_file, &ca.pem).expect("write the CA");
    let server = Server::start(
        &dir.path().join("fed"),
        &[
            &format!("--requestheader-client-ca-file={}", ca_file.display()),
            "--requestheader-allowed-names=front-proxy-client,aggregator",
        ],
    )
    .await;
    check(&server, &ca, &Ca::new("other")).await;
}

#[tokio::test]
async fn requestheader_from_the_hosts_configmap() {
    let dir = tempfile::tempdir().expect("tempdir");
    let host = Server::start(&dir.path().join("host"), &["--role=member"]).await;
    let ca = Ca::new("host-front-proxy-ca");
    let configmap = json!({
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": "extension-apiserver-authentication", "namespace": "kube-system"},
        "data": {
            "requestheader-client-ca-file": ca.pem,
            "requestheader-allowed-names": "[\"front-proxy-client\"]",
            "requestheader-username-headers": "[\"X-Remote-User\"]",
            "requestheader-group-headers": "[\"X-Remote-Group\"]",
            "requestheader-extra-headers-prefix": "[\"X-Remote-Extra-\"]",
        }
    });
    // Every Skein publishes its own; this one is replaced with the test
    // CA's, as a host with another front proxy would have it.
    let response =
        host.client(true)
            .put(host.url(
                "/api/v1/namespaces/kube-system/configmaps/extension-apiserver-authentication",
            ))
            .header("content-type", "application/json")
            .body(configmap.to_string())
            .send()
            .await
            .expect("PUT the ConfigMap");
    assert_eq!(response.status(), 200);

    let server = Server::start(
        &dir.path().join("fed"),
        &[&format!(
            "--authentication-kubeconfig={}",
            host.kubeconfig().display()
        )],
    )
    .await;
    check(&server, &ca, &Ca::new("other")).await;
}

#[tokio::test]
async fn a_host_without_the_configmap_is_a_startup_error() {
    let dir = tempfile::tempdir().expect("tempdir");
    let host = Server::start(&dir.path().join("host"), &["--role=member"]).await;
    let response =
        host.client(true)
            .delete(host.url(
                "/api/v1/namespaces/kube-system/configmaps/extension-apiserver-authentication",
            ))
            .send()
            .await
            .expect("DELETE the ConfigMap");
    assert_eq!(response.status(), 200);
    let flag = format!(
        "--authentication-kubeconfig={}",
        host.kubeconfig().display()
    );
    let (status, stderr) = Server::start_expecting_failure(&dir.path().join("fed"), &[&flag]).await;
    assert!(!status.success());
    assert!(
        stderr.contains("kube-system/extension-apiserver-authentication"),
        "{stderr}"
    );
    let missing: &Path = &dir.path().join("nope.crt");
    let flag = format!("--requestheader-client-ca-file={}", missing.display());
    let (status, stderr) =
        Server::start_expecting_failure(&dir.path().join("fed2"), &[&flag]).await;
    assert!(!status.success());
    assert!(
        stderr.contains("--requestheader-client-ca-file"),
        "{stderr}"
    );
}
