//! The aggregator's HTTPS client for one backend, as kube-aggregator's
//! proxy transport: TLS with the front-proxy client certificate, verified
//! against the APIService's `caBundle` for `<service>.<namespace>.svc` (or
//! not at all with `insecureSkipTLSVerify`), and HTTP/2 when the backend
//! offers it by ALPN (Go's transport does the same), HTTP/1.1 otherwise.
//!
//! Contracts: one client per backend setting (the [`super::Aggregator`]
//! caches them); with HTTP/2 every request to the backend shares one
//! multiplexed connection, so the backend sees what a direct client-go
//! caller makes it see; request and response bodies stream; no request
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
    client: Client<hyper_rustls::HttpsConnector<HttpConnector>, Body>,
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
        let mut http = HttpConnector::new();
        http.enforce_http(false);
        http.set_nodelay(true);
        http.set_connect_timeout(Some(std::time::Duration::from_secs(10)));
        let name = ServerName::try_from(server_name.to_string())
            .map_err(|e| format!("invalid server name {server_name:?}: {e}"))?;
        let connector = hyper_rustls::HttpsConnectorBuilder::new()
            .with_tls_config(config)
            .https_only()
            .with_server_name_resolver(hyper_rustls::FixedServerNameResolver::new(name))
            .enable_all_versions()
            .wrap_connector(http);
        let client = Client::builder(TokioExecutor::new())
            .http2_adaptive_window(true)
            .build(connector);
        Ok(BackendClient { client })
    }

    /// Sends `request` (its URI absolute: the backend's `https://` URL and
    /// the path) and returns the response head with its streaming body.
    pub async fn send(
        &self,
        request: axum::http::Request<Body>,
    ) -> Result<axum::http::Response<hyper::body::Incoming>, String> {
        self.client
            .request(request)
            .await
            .map_err(|e| crate::federation::members::member::chain(&e))
    }
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
