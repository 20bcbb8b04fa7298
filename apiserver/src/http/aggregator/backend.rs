//! The aggregator's HTTPS client for one backend, as kube-aggregator's
//! proxy transport: TLS with the front-proxy client certificate, verified
//! against the APIService's `caBundle` for `<service>.<namespace>.svc` (or
//! not at all with `insecureSkipTLSVerify`), and HTTP/2 when the backend
//! offers it by ALPN (Go's transport does the same), HTTP/1.1 otherwise.
//!
//! Contracts: one client per backend setting (the [`super::Aggregator`]
//! caches them); with HTTP/2 every short request to the backend shares one
//! multiplexed connection, so the backend sees what a direct client-go
//! caller makes it see; long-running requests (watches, logs, proxies,
//! see [`is_long_running`]) each get an HTTP/1.1 connection of their own,
//! so however many are open they never use up the HTTP/2 connection's
//! streams (a server allows 200–1,000 per connection) and hold up short
//! requests behind them; request and response bodies stream; no request
//! is retried (a proxied POST must not be sent twice); nothing panics.

use std::sync::Arc;

use axum::body::Body;
use hyper_util::client::legacy::Client;
use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::rt::TokioExecutor;
use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer, ServerName, UnixTime};
use rustls::{DigitallySignedStruct, RootCertStore, SignatureScheme};

use crate::pki::CertKey;

/// A client for one backend. Cheap to clone.
#[derive(Clone)]
pub struct BackendClient {
    /// ALPN h2 (or HTTP/1.1 if that is all the backend speaks).
    short: Client<hyper_rustls::HttpsConnector<HttpConnector>, Body>,
    /// HTTP/1.1 only: a connection per long-running request.
    long: Client<hyper_rustls::HttpsConnector<HttpConnector>, Body>,
}

impl BackendClient {
    /// A client presenting `client_cert` that verifies the backend's
    /// certificate for `server_name` against `ca_pem` (the system has no
    /// say: an APIService without a `caBundle` and without
    /// `insecureSkipTLSVerify` trusts nothing, as kube-aggregator), or
    /// skips verification when `insecure`.
    pub fn new(
        server_name: &str,
        ca_pem: Option<&str>,
        insecure: bool,
        client_cert: &CertKey,
    ) -> Result<BackendClient, String> {
        let provider = Arc::new(rustls::crypto::ring::default_provider());
        let builder = rustls::ClientConfig::builder_with_provider(provider.clone())
            .with_safe_default_protocol_versions()
            .map_err(|e| format!("unable to build a TLS client: {e}"))?;
        let builder = if insecure {
            builder
                .dangerous()
                .with_custom_certificate_verifier(Arc::new(NoVerification(provider)))
        } else {
            let mut roots = RootCertStore::empty();
            for cert in CertificateDer::pem_slice_iter(ca_pem.unwrap_or("").as_bytes()) {
                let cert = cert.map_err(|e| format!("invalid caBundle: {e}"))?;
                roots
                    .add(cert)
                    .map_err(|e| format!("invalid caBundle: {e}"))?;
            }
            builder.with_root_certificates(roots)
        };
        let chain: Vec<CertificateDer<'static>> =
            CertificateDer::pem_slice_iter(client_cert.cert_pem.as_bytes())
                .collect::<Result<_, _>>()
                .map_err(|e| format!("invalid front-proxy client certificate: {e}"))?;
        let key = PrivateKeyDer::from_pem_slice(client_cert.key_pem.as_bytes())
            .map_err(|e| format!("invalid front-proxy client key: {e}"))?;
        let config = builder
            .with_client_auth_cert(chain, key)
            .map_err(|e| format!("invalid front-proxy client certificate: {e}"))?;
        let name = ServerName::try_from(server_name.to_string())
            .map_err(|e| format!("invalid server name {server_name:?}: {e}"))?;
        let connector = |http2: bool| {
            let mut http = HttpConnector::new();
            http.enforce_http(false);
            http.set_nodelay(true);
            http.set_connect_timeout(Some(std::time::Duration::from_secs(10)));
            let builder = hyper_rustls::HttpsConnectorBuilder::new()
                .with_tls_config(config.clone())
                .https_only()
                .with_server_name_resolver(hyper_rustls::FixedServerNameResolver::new(
                    name.clone(),
                ));
            if http2 {
                builder.enable_all_versions().wrap_connector(http)
            } else {
                builder.enable_http1().wrap_connector(http)
            }
        };
        let short = Client::builder(TokioExecutor::new())
            .http2_adaptive_window(true)
            .build(connector(true));
        let long = Client::builder(TokioExecutor::new()).build(connector(false));
        Ok(BackendClient { short, long })
    }

    /// Sends `request` (its URI absolute: the backend's `https://` URL and
    /// the path) and returns the response head with its streaming body.
    pub async fn send(
        &self,
        request: axum::http::Request<Body>,
    ) -> Result<axum::http::Response<hyper::body::Incoming>, String> {
        let client = if is_long_running(request.uri()) {
            &self.long
        } else {
            &self.short
        };
        client
            .request(request)
            .await
            .map_err(|e| crate::member_client::chain(&e))
    }
}

/// Whether a request may stay open indefinitely: a watch (`watch=true|1`,
/// or a `watch` path segment as in the old `/api/v1/watch/...` paths), or
/// a `log`, `exec`, `attach` or `portforward` subresource. This only picks
/// the connection, so a false positive (an object named `watch`) costs
/// nothing; the `proxy` subresource is not counted, because every request
/// under the aggregated prefix (`/federations/default/proxy/...`) has it.
pub fn is_long_running(uri: &axum::http::Uri) -> bool {
    let watch = uri.query().is_some_and(|q| {
        q.split('&')
            .any(|kv| matches!(kv, "watch=true" | "watch=1" | "watch=True"))
    });
    let mut segments = uri.path().split('/').filter(|s| !s.is_empty());
    let last = uri.path().rsplit('/').find(|s| !s.is_empty());
    watch
        || segments.any(|s| s == "watch")
        || matches!(last, Some("log" | "exec" | "attach" | "portforward"))
}

/// `insecureSkipTLSVerify`: any certificate is accepted; signatures are
/// still checked with the provider's algorithms so the handshake is sound.
#[derive(Debug)]
struct NoVerification(Arc<rustls::crypto::CryptoProvider>);

impl ServerCertVerifier for NoVerification {
    fn verify_server_cert(
        &self,
        _end_entity: &CertificateDer<'_>,
        _intermediates: &[CertificateDer<'_>],
        _server_name: &ServerName<'_>,
        _ocsp_response: &[u8],
        _now: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        Ok(ServerCertVerified::assertion())
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls12_signature(
            message,
            cert,
            dss,
            &self.0.signature_verification_algorithms,
        )
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls13_signature(
            message,
            cert,
            dss,
            &self.0.signature_verification_algorithms,
        )
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.0.signature_verification_algorithms.supported_schemes()
    }
}

#[cfg(test)]
mod tests {
    use super::is_long_running;

    #[test]
    fn long_running_requests_are_told_apart() {
        let long = |u: &str| is_long_running(&u.parse().expect("uri"));
        let prefix = "/apis/federation.skein.io/v1alpha1/federations/default/proxy";
        assert!(long(&format!("{prefix}/api/v1/configmaps?watch=true")));
        assert!(long("/apis/example.com/v1/things?labelSelector=a&watch=1"));
        assert!(long(&format!(
            "{prefix}/api/v1/watch/namespaces/default/pods"
        )));
        assert!(long(&format!(
            "{prefix}/api/v1/namespaces/d/pods/p/log?follow=true"
        )));
        assert!(long("/api/v1/namespaces/d/pods/p/exec"));
        assert!(!long(&format!("{prefix}/api/v1/namespaces")));
        assert!(!long(&format!("{prefix}/api/v1/configmaps?watch=false")));
        assert!(!long("/apis/example.com/v1/things"));
    }
}
