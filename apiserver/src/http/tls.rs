//! HTTPS: the rustls configuration and the accept loop.
//!
//! The loop is ours rather than axum-server's because handlers need the
//! verified client certificate: after each TLS handshake the peer's
//! certificate becomes a [`ClientCertUser`] that is inserted into every
//! request of that connection. HTTP/1.1 and HTTP/2 are negotiated with ALPN
//! (hyper-util's `auto` builder also accepts h2 prior knowledge).
//!
//! Client certificates are requested, not required: a client without one
//! is anonymous (and [`super::authn`] decides), while a client whose
//! certificate does not verify against the CA fails the handshake. With
//! front-proxy authentication, certificates of the requestheader CA pass
//! the handshake too, and become a [`FrontProxyPeer`] instead of a user.

use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use axum::Router;
use axum::extract::ConnectInfo;
use hyper::body::Incoming;
use hyper_util::rt::{TokioExecutor, TokioIo};
use hyper_util::server::conn::auto;
use hyper_util::server::graceful::GracefulShutdown;
use rustls::RootCertStore;
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer, UnixTime};
use rustls::server::danger::ClientCertVerifier;
use rustls::server::{ServerConfig, WebPkiClientVerifier};
use tokio::net::TcpListener;
use tokio_rustls::TlsAcceptor;
use tower::ServiceExt;

use super::authn::ClientCertUser;
use super::requestheader::FrontProxyPeer;
use super::tls_policy::TlsPolicy;
use crate::pki::Pki;
use crate::{Error, Result};

/// A client must finish its TLS handshake within this time.
pub const HANDSHAKE_TIMEOUT: Duration = Duration::from_secs(10);
/// On shutdown, in-flight requests get this long to finish.
pub const SHUTDOWN_GRACE: Duration = Duration::from_secs(10);

fn bad_pem(what: &str, e: impl ToString) -> Error {
    Error::BadCertificate {
        path: what.into(),
        reason: e.to_string(),
    }
}

/// The server's TLS configuration: the serving certificate, client
/// certificates verified against the CA but optional, ALPN h2 and
/// http/1.1, versions and suites from `policy` (`--tls-min-version`,
/// `--tls-cipher-suites`). Uses the ring provider explicitly, so no
/// process-wide default provider needs installing.
pub fn server_config(pki: &Pki, policy: &TlsPolicy) -> Result<Arc<ServerConfig>> {
    Ok(server_tls(pki, policy, None)?.config)
}

/// The TLS configuration and how a connection's client certificate is
/// turned into an identity.
#[derive(Clone)]
pub struct Tls {
    /// The rustls configuration.
    pub config: Arc<ServerConfig>,
    /// Present with front-proxy authentication: the handshake then accepts
    /// certificates of either CA, and each peer's chain is checked against
    /// each CA separately, so a front-proxy certificate is never taken for
    /// a client-CA user or the other way round.
    split: Option<SplitVerifiers>,
}

#[derive(Clone)]
struct SplitVerifiers {
    client: Arc<dyn ClientCertVerifier>,
    front_proxy: Arc<dyn ClientCertVerifier>,
}

impl From<Arc<ServerConfig>> for Tls {
    /// A configuration whose client certificates all come from the client
    /// CA (no front proxy).
    fn from(config: Arc<ServerConfig>) -> Self {
        Tls {
            config,
            split: None,
        }
    }
}

impl Tls {
    /// The identities a peer's certificate chain proves: a client-CA user,
    /// a front proxy, or neither. The chain has already passed the
    /// handshake's verifier.
    fn identify(
        &self,
        chain: Option<&[CertificateDer<'static>]>,
    ) -> (Option<ClientCertUser>, Option<FrontProxyPeer>) {
        let Some((leaf, intermediates)) = chain.and_then(|c| c.split_first()) else {
            return (None, None);
        };
        let Some(split) = &self.split else {
            return (ClientCertUser::from_der(leaf), None);
        };
        let now = UnixTime::now();
        let user = split
            .client
            .verify_client_cert(leaf, intermediates, now)
            .is_ok()
            .then(|| ClientCertUser::from_der(leaf))
            .flatten();
        let proxy = split
            .front_proxy
            .verify_client_cert(leaf, intermediates, now)
            .is_ok()
            .then(|| common_name(leaf))
            .flatten()
            .map(|common_name| FrontProxyPeer { common_name });
        (user, proxy)
    }
}

/// A certificate's common name (empty names count as none).
fn common_name(der: &[u8]) -> Option<String> {
    let (_, cert) = x509_parser::parse_x509_certificate(der).ok()?;
    let cn = cert
        .subject()
        .iter_common_name()
        .find_map(|cn| cn.as_str().ok())?
        .to_string();
    (!cn.is_empty()).then_some(cn)
}

fn roots(pem: &[u8], what: &str) -> Result<RootCertStore> {
    let mut roots = RootCertStore::empty();
    for cert in CertificateDer::pem_slice_iter(pem) {
        roots.add(cert.map_err(|e| bad_pem(what, e))?)?;
    }
    if roots.is_empty() {
        return Err(bad_pem(what, "no certificate in the PEM data"));
    }
    Ok(roots)
}

/// [`server_config`] that also accepts front-proxy certificates verified
/// by `front_proxy_ca` (a PEM bundle) when given.
pub fn server_tls(pki: &Pki, policy: &TlsPolicy, front_proxy_ca: Option<&[u8]>) -> Result<Tls> {
    let provider = policy.provider.clone();
    let verifier = |roots: RootCertStore| {
        WebPkiClientVerifier::builder_with_provider(Arc::new(roots), provider.clone())
            .allow_unauthenticated()
            .build()
    };

    let client_roots = roots(pki.ca.cert_pem.as_bytes(), "ca.crt")?;
    let (handshake, split) = match front_proxy_ca {
        None => (verifier(client_roots)?, None),
        Some(pem) => {
            let proxy_roots = roots(pem, "--requestheader-client-ca-file")?;
            let mut union = client_roots.clone();
            union.roots.extend(proxy_roots.roots.iter().cloned());
            let split = SplitVerifiers {
                client: verifier(client_roots)?,
                front_proxy: verifier(proxy_roots)?,
            };
            (verifier(union)?, Some(split))
        }
    };

    let chain = CertificateDer::pem_slice_iter(pki.serving.cert_pem.as_bytes())
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| bad_pem("serving.crt", e))?;
    let key = PrivateKeyDer::from_pem_slice(pki.serving.key_pem.as_bytes())
        .map_err(|e| bad_pem("serving.key", e))?;

    let mut config = ServerConfig::builder_with_provider(provider)
        .with_protocol_versions(&policy.versions)?
        .with_client_cert_verifier(handshake)
        .with_single_cert(chain, key)?;
    config.alpn_protocols = vec![b"h2".to_vec(), b"http/1.1".to_vec()];
    Ok(Tls {
        config: Arc::new(config),
        split,
    })
}

/// Serves `app` over TLS on `listener` until `shutdown` completes, then
/// stops accepting and gives open connections [`SHUTDOWN_GRACE`] to finish
/// their in-flight requests (idle keep-alive connections close at once).
pub async fn serve(
    listener: TcpListener,
    tls: impl Into<Tls>,
    app: Router,
    shutdown: impl Future<Output = ()>,
) {
    let tls: Tls = tls.into();
    let acceptor = TlsAcceptor::from(tls.config.clone());
    let builder = auto::Builder::new(TokioExecutor::new());
    let graceful = GracefulShutdown::new();
    tokio::pin!(shutdown);

    loop {
        let (tcp, peer) = tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok(conn) => conn,
                Err(e) => {
                    // Usually EMFILE or a connection reset before accept;
                    // back off briefly instead of spinning.
                    tracing::warn!(error = %e, "accept failed");
                    tokio::time::sleep(Duration::from_millis(50)).await;
                    continue;
                }
            },
            () = &mut shutdown => break,
        };
        // As Go's net package (kube-apiserver): no Nagle. HTTP/2 writes
        // many small frames on one connection; with Nagle a frame can
        // wait for the peer's delayed ACK (tens of milliseconds).
        if let Err(e) = tcp.set_nodelay(true) {
            tracing::debug!(%peer, error = %e, "TCP_NODELAY");
        }
        let acceptor = acceptor.clone();
        let tls = tls.clone();
        let app = app.clone();
        let builder = builder.clone();
        let watcher = graceful.watcher();
        tokio::spawn(async move {
            let stream = match tokio::time::timeout(HANDSHAKE_TIMEOUT, acceptor.accept(tcp)).await {
                Ok(Ok(stream)) => stream,
                Ok(Err(e)) => {
                    tracing::debug!(%peer, error = %e, "TLS handshake failed");
                    return;
                }
                Err(_) => {
                    tracing::debug!(%peer, "TLS handshake timed out");
                    return;
                }
            };
            let (user, proxy) = tls.identify(stream.get_ref().1.peer_certificates());
            let service = hyper::service::service_fn(move |mut req: hyper::Request<Incoming>| {
                req.extensions_mut().insert(ConnectInfo(peer));
                if let Some(user) = &user {
                    req.extensions_mut().insert(user.clone());
                }
                if let Some(proxy) = &proxy {
                    req.extensions_mut().insert(proxy.clone());
                }
                app.clone().oneshot(req)
            });
            let conn = builder.serve_connection_with_upgrades(TokioIo::new(stream), service);
            if let Err(e) = watcher.watch(conn.into_owned()).await {
                tracing::debug!(%peer, error = %e, "connection ended with an error");
            }
        });
    }

    drop(listener);
    tracing::info!(
        connections = graceful.count(),
        "stopped accepting; draining connections"
    );
    if tokio::time::timeout(SHUTDOWN_GRACE, graceful.shutdown())
        .await
        .is_err()
    {
        tracing::warn!(grace = ?SHUTDOWN_GRACE, "connections still open after the grace period; closing them");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn config_from_generated_pki() {
        let dir = tempfile::tempdir().expect("tempdir");
        let pki = Pki::load_or_create(dir.path(), &["localhost".to_string()]).expect("pki");
        let config = server_config(&pki, &TlsPolicy::default()).expect("config");
        assert_eq!(
            config.alpn_protocols,
            [b"h2".to_vec(), b"http/1.1".to_vec()]
        );
    }

    /// Shutdown stops accepting at once but lets a request that is already
    /// running finish with its real response.
    #[tokio::test]
    async fn shutdown_lets_in_flight_requests_finish() {
        use axum::routing::get;
        use tokio::sync::{Notify, oneshot};

        let dir = tempfile::tempdir().expect("tempdir");
        let pki = Pki::load_or_create(dir.path(), &["127.0.0.1".to_string()]).expect("pki");
        let tls = server_config(&pki, &TlsPolicy::default()).expect("config");
        let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind");
        let addr = listener.local_addr().expect("addr");

        let started = Arc::new(Notify::new());
        let app = Router::new().route(
            "/slow",
            get({
                let started = started.clone();
                move || async move {
                    started.notify_one();
                    tokio::time::sleep(Duration::from_millis(500)).await;
                    "done"
                }
            }),
        );
        let (stop, stopped) = oneshot::channel::<()>();
        let server = tokio::spawn(serve(listener, tls, app, async {
            let _ = stopped.await;
        }));

        let ca = reqwest::Certificate::from_pem(pki.ca.cert_pem.as_bytes()).expect("ca");
        let client = reqwest::Client::builder()
            .use_rustls_tls()
            .tls_built_in_root_certs(false)
            .add_root_certificate(ca)
            .build()
            .expect("client");
        let url = format!("https://{addr}/slow");
        let request = tokio::spawn(client.get(&url).send());
        started.notified().await;
        stop.send(()).expect("server is waiting");

        let response = request
            .await
            .expect("join")
            .expect("in-flight request completes");
        assert_eq!(response.status(), 200);
        assert_eq!(response.text().await.expect("body"), "done");
        tokio::time::timeout(Duration::from_secs(5), server)
            .await
            .expect("serve returns after draining")
            .expect("join");
        let fresh = reqwest::Client::builder()
            .use_rustls_tls()
            .tls_built_in_root_certs(false)
            .build()
            .expect("client");
        assert!(fresh.get(&url).send().await.is_err(), "no longer accepting");
    }
}
