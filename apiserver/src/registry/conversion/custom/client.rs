//! The HTTPS client of a conversion webhook given by `clientConfig.url`:
//! one POST of a JSON body, as client-go's REST client does it for
//! apiextensions-apiserver v1.33 (`k8s.io/apiserver/pkg/util/webhook`):
//! the URL gets `?timeout=30s`, the whole call is bounded by 30 s, TLS
//! trusts `caBundle` when given and the system roots otherwise, and errors
//! read as Go's (`Post "<url>": dial tcp ...: connect: connection refused`).
//!
//! Contracts: no panics; the connection (TCP and TLS) takes at most
//! [`CONNECT_TIMEOUT`]; a response body over [`MAX_RESPONSE_BYTES`] is an
//! error, never buffered further; idle HTTP/1.1 connections are reused.

use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

use http_body_util::{BodyExt, Full, Limited};
use hyper::body::Bytes;
use hyper::client::conn::http1::{self, SendRequest};
use hyper::{Request, StatusCode, Uri};
use hyper_util::rt::TokioIo;
use rustls::RootCertStore;
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, ServerName};
use serde_json::Value;
use tokio::net::TcpStream;
use tokio_rustls::TlsConnector;

/// The whole call: client-go's webhook client `Timeout` (30 s), also sent
/// to the webhook as `?timeout=30s`.
pub const REQUEST_TIMEOUT: Duration = Duration::from_secs(30);

/// TCP connect plus TLS handshake.
pub const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);

/// The largest response body read (a review of many large objects fits).
pub const MAX_RESPONSE_BYTES: usize = 64 * 1024 * 1024;

/// Idle connections kept per webhook.
const MAX_IDLE: usize = 8;

/// Go's system certificate files on Linux (`crypto/x509/root_linux.go`),
/// after `$SSL_CERT_FILE`.
const SYSTEM_CERT_FILES: [&str; 6] = [
    "/etc/ssl/certs/ca-certificates.crt",
    "/etc/pki/tls/certs/ca-bundle.crt",
    "/etc/ssl/ca-bundle.pem",
    "/etc/pki/tls/cacert.pem",
    "/etc/pki/ca-trust/extracted/pem/tls-ca-bundle.pem",
    "/etc/ssl/cert.pem",
];

/// One webhook endpoint: where to connect, how to trust it, and idle
/// connections to reuse.
pub struct Endpoint {
    /// The URL as Go prints it in errors (with `?timeout=30s`).
    url: String,
    host: String,
    port: u16,
    authority: String,
    path_and_query: String,
    server_name: ServerName<'static>,
    tls: TlsConnector,
    idle: Mutex<Vec<SendRequest<Full<Bytes>>>>,
}

impl std::fmt::Debug for Endpoint {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Endpoint").field("url", &self.url).finish()
    }
}

impl Endpoint {
    /// An endpoint for `url` (https only), trusting the PEM certificates
    /// of `ca_bundle` when it is non-empty, else the system roots. The
    /// error says why the client cannot be built (client-go's texts where
    /// it has one).
    pub fn new(url: &str, ca_bundle: &[u8]) -> Result<Endpoint, String> {
        let uri: Uri = url.parse().map_err(|e| format!("Unparsable URL: {e}"))?;
        if uri.scheme_str() != Some("https") {
            return Err(format!(
                "unsupported scheme in {url:?}: conversion webhooks are called over https"
            ));
        }
        let authority = uri
            .authority()
            .map(|a| a.as_str().to_string())
            .ok_or_else(|| format!("Unparsable URL: no host in {url:?}"))?;
        let raw_host = uri.host().unwrap_or_default();
        let host = raw_host
            .trim_start_matches('[')
            .trim_end_matches(']')
            .to_string();
        let port = uri.port_u16().unwrap_or(443);
        let server_name = ServerName::try_from(host.clone())
            .map_err(|e| format!("Unparsable URL: invalid host {host:?}: {e}"))?;
        // client-go joins the path (cleaning a trailing slash); the query
        // carries the timeout.
        let path = uri.path().trim_end_matches('/');
        let path_and_query = format!("{}?timeout=30s", if path.is_empty() { "/" } else { path });
        let shown = format!("https://{authority}{path}?timeout=30s");
        let roots = if ca_bundle.is_empty() {
            system_roots()
        } else {
            Arc::new(bundle_roots(ca_bundle)?)
        };
        let provider = Arc::new(rustls::crypto::ring::default_provider());
        let mut config = rustls::ClientConfig::builder_with_provider(provider)
            .with_safe_default_protocol_versions()
            .map_err(|e| format!("unable to build a TLS client: {e}"))?
            .with_root_certificates(roots)
            .with_no_client_auth();
        config.alpn_protocols = vec![b"http/1.1".to_vec()];
        Ok(Endpoint {
            url: shown,
            host,
            port,
            authority,
            path_and_query,
            server_name,
            tls: TlsConnector::from(Arc::new(config)),
            idle: Mutex::new(Vec::new()),
        })
    }

    /// The URL as shown in errors (with `?timeout=30s`).
    pub fn url(&self) -> &str {
        &self.url
    }

    /// POSTs `body` (JSON) and returns the 2xx response body, or Go's
    /// error text (`Post "<url>": <why>`, or the webhook's own status
    /// message for a non-2xx answer).
    pub async fn post(&self, body: Vec<u8>) -> Result<Vec<u8>, String> {
        let body = Bytes::from(body);
        match tokio::time::timeout(REQUEST_TIMEOUT, self.exchange(body)).await {
            Ok(result) => result,
            Err(_) => Err(self.wrap(
                "context deadline exceeded (Client.Timeout exceeded while awaiting headers)",
            )),
        }
    }

    fn wrap(&self, why: &str) -> String {
        format!("Post {}: {why}", skein_admission::quote(&self.url))
    }

    async fn exchange(&self, body: Bytes) -> Result<Vec<u8>, String> {
        // A reused connection the webhook closed meanwhile fails before
        // anything is answered: retry once on a fresh one, as Go does.
        // (Conversion is a pure function of the review, so a repeat is
        // harmless.)
        if let Some(sender) = self.take_idle()
            && let Ok(done) = self.send(sender, body.clone()).await
        {
            return done;
        }
        let sender = self.connect().await.map_err(|e| self.wrap(&e))?;
        match self.send(sender, body).await {
            Ok(done) => done,
            Err(e) => Err(self.wrap(&e)),
        }
    }

    fn take_idle(&self) -> Option<SendRequest<Full<Bytes>>> {
        let mut idle = self.idle.lock().ok()?;
        while let Some(sender) = idle.pop() {
            if sender.is_ready() {
                return Some(sender);
            }
        }
        None
    }

    fn put_idle(&self, sender: SendRequest<Full<Bytes>>) {
        if let Ok(mut idle) = self.idle.lock()
            && idle.len() < MAX_IDLE
            && !sender.is_closed()
        {
            idle.push(sender);
        }
    }

    /// TCP, TLS and the HTTP/1.1 handshake, within [`CONNECT_TIMEOUT`].
    async fn connect(&self) -> Result<SendRequest<Full<Bytes>>, String> {
        let dial = async {
            let addrs: Vec<_> = tokio::net::lookup_host((self.host.as_str(), self.port))
                .await
                .map_err(|e| format!("dial tcp: lookup {}: {e}", self.host))?
                .collect();
            let mut last = format!("dial tcp: lookup {}: no such host", self.host);
            for addr in addrs {
                match TcpStream::connect(addr).await {
                    Ok(tcp) => {
                        let _ = tcp.set_nodelay(true);
                        return Ok(tcp);
                    }
                    Err(e) => last = format!("dial tcp {addr}: connect: {}", io_reason(&e)),
                }
            }
            Err(last)
        };
        let handshake = async {
            let tcp = dial.await?;
            self.tls
                .connect(self.server_name.clone(), tcp)
                .await
                .map_err(|e| tls_reason(&e, &self.host))
        };
        let tls = match tokio::time::timeout(CONNECT_TIMEOUT, handshake).await {
            Ok(r) => r?,
            Err(_) => {
                return Err(format!("dial tcp {}:{}: i/o timeout", self.host, self.port));
            }
        };
        let (sender, conn) = http1::handshake(TokioIo::new(tls))
            .await
            .map_err(|e| e.to_string())?;
        tokio::spawn(async move {
            let _ = conn.await;
        });
        Ok(sender)
    }

    /// One request on `sender`. The outer error means nothing was
    /// answered (the caller may retry); the inner result is the answer.
    async fn send(
        &self,
        mut sender: SendRequest<Full<Bytes>>,
        body: Bytes,
    ) -> Result<Result<Vec<u8>, String>, String> {
        sender.ready().await.map_err(|e| e.to_string())?;
        let request = Request::post(self.path_and_query.as_str())
            .header(hyper::header::HOST, self.authority.as_str())
            .header(hyper::header::CONTENT_TYPE, "application/json")
            .header(hyper::header::ACCEPT, "application/json, */*")
            .header(hyper::header::USER_AGENT, "skein-apiserver")
            .body(Full::new(body))
            .map_err(|e| e.to_string())?;
        let response = sender
            .send_request(request)
            .await
            .map_err(|e| e.to_string())?;
        let status = response.status();
        let text_body = response
            .headers()
            .get(hyper::header::CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .is_some_and(|ct| ct.starts_with("text/"));
        let collected = Limited::new(response.into_body(), MAX_RESPONSE_BYTES)
            .collect()
            .await;
        let bytes = match collected {
            Ok(c) => c.to_bytes().to_vec(),
            Err(e) => {
                let why = if e.is::<http_body_util::LengthLimitError>() {
                    format!("response body larger than {MAX_RESPONSE_BYTES} bytes")
                } else {
                    e.to_string()
                };
                return Ok(Err(self.wrap(&why)));
            }
        };
        self.put_idle(sender);
        if status.is_success() {
            Ok(Ok(bytes))
        } else {
            Ok(Err(status_error(status, &bytes, text_body)))
        }
    }
}

/// Go's text for a refused or failed connect.
fn io_reason(e: &std::io::Error) -> String {
    match e.kind() {
        std::io::ErrorKind::ConnectionRefused => "connection refused".into(),
        std::io::ErrorKind::ConnectionReset => "connection reset by peer".into(),
        std::io::ErrorKind::TimedOut => "i/o timeout".into(),
        _ => e.to_string(),
    }
}

/// Go's text for a failed TLS handshake.
fn tls_reason(e: &std::io::Error, host: &str) -> String {
    use rustls::{CertificateError, Error};
    let inner = e.get_ref().and_then(|i| i.downcast_ref::<Error>());
    match inner {
        // A candidate issuer whose signature does not verify is Go's
        // unknown authority too.
        Some(Error::InvalidCertificate(
            CertificateError::UnknownIssuer | CertificateError::BadSignature,
        )) => "tls: failed to verify certificate: x509: certificate signed by unknown authority"
            .into(),
        Some(Error::InvalidCertificate(
            CertificateError::NotValidForName | CertificateError::NotValidForNameContext { .. },
        )) => {
            format!("tls: failed to verify certificate: x509: certificate is not valid for {host}")
        }
        Some(Error::InvalidCertificate(
            CertificateError::Expired
            | CertificateError::ExpiredContext { .. }
            | CertificateError::NotValidYet
            | CertificateError::NotValidYetContext { .. },
        )) => {
            "tls: failed to verify certificate: x509: certificate has expired or is not yet valid"
                .into()
        }
        Some(other) => format!("tls: {other}"),
        None => io_reason(e),
    }
}

/// client-go's error for a non-2xx answer: the body's `Status` message
/// when it is one, else `NewGenericServerResponse`'s text for the code.
fn status_error(status: StatusCode, body: &[u8], text_body: bool) -> String {
    if let Ok(v) = serde_json::from_slice::<Value>(body)
        && v.get("kind").and_then(Value::as_str) == Some("Status")
        && let Some(m) = v
            .get("message")
            .and_then(Value::as_str)
            .filter(|m| !m.is_empty())
    {
        return m.to_string();
    }
    let server_message = if text_body {
        String::from_utf8_lossy(body).trim().to_string()
    } else {
        "unknown".to_string()
    };
    let code = status.as_u16();
    match code {
        409 => "the server reported a conflict".into(),
        404 => "the server could not find the requested resource".into(),
        400 => "the server rejected our request for an unknown reason".into(),
        401 => "the server has asked for the client to provide credentials".into(),
        403 | 415 => server_message,
        406 if server_message.is_empty() || server_message == "unknown" => {
            "the server was unable to respond with a content type that the client supports".into()
        }
        406 => server_message,
        405 => "the server does not allow this method on the requested resource".into(),
        422 => "the server rejected our request due to an error in our request".into(),
        503 => "the server is currently unable to handle the request".into(),
        504 => "the server was unable to return a response in the time allotted, but may still be processing the request".into(),
        429 => "the server has received too many requests and has asked us to try again later".into(),
        c if c >= 500 => format!(
            "an error on the server ({}) has prevented the request from succeeding",
            skein_admission::quote(&server_message)
        ),
        c => format!("the server responded with the status code {c} but did not return more information"),
    }
}

/// The certificates of a PEM `caBundle`; client-go's error when there
/// are none.
fn bundle_roots(pem: &[u8]) -> Result<RootCertStore, String> {
    let mut roots = RootCertStore::empty();
    for cert in CertificateDer::pem_slice_iter(pem).flatten() {
        let _ = roots.add(cert);
    }
    if roots.is_empty() {
        return Err("unable to load root certificates: unable to parse bytes as PEM block".into());
    }
    Ok(roots)
}

/// The system roots, read once: `$SSL_CERT_FILE`, else the first of Go's
/// Linux bundle files that has certificates.
fn system_roots() -> Arc<RootCertStore> {
    static ROOTS: OnceLock<Arc<RootCertStore>> = OnceLock::new();
    ROOTS
        .get_or_init(|| {
            let env = std::env::var("SSL_CERT_FILE").ok();
            let files = env.iter().map(String::as_str).chain(SYSTEM_CERT_FILES);
            for file in files {
                let Ok(pem) = std::fs::read(file) else {
                    continue;
                };
                if let Ok(roots) = bundle_roots(&pem) {
                    return Arc::new(roots);
                }
            }
            Arc::new(RootCertStore::empty())
        })
        .clone()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn url_parts() {
        let e = Endpoint::new("https://127.0.0.1:9443/convert/", b"")
            .map(|e| (e.url, e.host, e.port, e.path_and_query));
        assert_eq!(
            e,
            Ok((
                "https://127.0.0.1:9443/convert?timeout=30s".to_string(),
                "127.0.0.1".to_string(),
                9443,
                "/convert?timeout=30s".to_string()
            ))
        );
        let e = Endpoint::new("https://[::1]", b"").map(|e| (e.host, e.port, e.path_and_query));
        assert_eq!(e, Ok(("::1".to_string(), 443, "/?timeout=30s".to_string())));
        assert!(Endpoint::new("http://x/convert", b"").is_err());
        assert_eq!(
            Endpoint::new("https://x/", b"not pem").map(|_| ()),
            Err("unable to load root certificates: unable to parse bytes as PEM block".into())
        );
    }

    #[test]
    fn non_success_texts() {
        let cases = [
            (
                404,
                &b"nope"[..],
                false,
                "the server could not find the requested resource",
            ),
            (
                500,
                b"boom\n",
                true,
                r#"an error on the server ("boom") has prevented the request from succeeding"#,
            ),
            (
                500,
                b"{}",
                false,
                r#"an error on the server ("unknown") has prevented the request from succeeding"#,
            ),
            (
                418,
                b"",
                false,
                "the server responded with the status code 418 but did not return more information",
            ),
            (
                400,
                br#"{"kind":"Status","message":"bad review"}"#,
                false,
                "bad review",
            ),
        ];
        for (code, body, text, want) in cases {
            let status = StatusCode::from_u16(code).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
            assert_eq!(status_error(status, body, text), want);
        }
    }
}
