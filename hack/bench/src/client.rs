//! The HTTPS client of `bench api` and `bench patch`: hyper's client
//! connections over tokio-rustls, trusting only the server's CA and
//! presenting the admin client certificate from `admin.kubeconfig`. Every
//! server under test gets a client built by [`Https::new`] with the same
//! settings.
//!
//! It is a load generator, kept lean so that it takes as little as possible
//! of the CPUs it shares with the server it measures: requests go straight
//! to hyper's `SendRequest` (no URL parsing, redirect or timeout layers),
//! and bodies are collected without copies.

use std::path::Path;
use std::sync::{Arc, Mutex};

use anyhow::Context as _;
use base64::Engine as _;
use bytes::Bytes;
use http::{Method, Request, StatusCode, Version};
use http_body_util::{BodyExt as _, Full};
use hyper::client::conn::{http1, http2};
use hyper_util::rt::{TokioExecutor, TokioIo};
use rustls::pki_types::ServerName;
use tokio::net::TcpStream;

/// How the client talks to a server.
#[derive(Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Protocol {
    /// HTTP/2 by ALPN: every request multiplexed on one connection, as
    /// client-go (kubectl, controllers) does.
    H2,
    /// HTTP/1.1 only: a keep-alive pool, one connection per request in
    /// flight (so one per task).
    Http1,
}

impl Protocol {
    /// How the report names it.
    pub fn describe(self) -> &'static str {
        match self {
            Protocol::H2 => {
                "HTTP/2 (ALPN h2; one multiplexed connection per server; windows: stream 4 MiB, \
                 connection 1 GiB, as client-go)"
            }
            Protocol::Http1 => "HTTP/1.1 (keep-alive pool, one connection per task)",
        }
    }
}

/// The CA to trust and the client identity, from a kubeconfig: a client
/// certificate, or a bearer token ([`Credentials::bearer`]).
#[derive(Clone)]
pub struct Credentials {
    ca_pem: Vec<u8>,
    /// Client certificate followed by its key, PEM (none with a token).
    identity_pem: Option<Vec<u8>>,
    /// `Authorization: Bearer <token>` on every request.
    token: Option<String>,
}

impl Credentials {
    /// Reads the first cluster's `certificate-authority-data` and the first
    /// user's `client-certificate-data` / `client-key-data` from a
    /// kubeconfig (Skein writes `admin.kubeconfig` as JSON).
    pub fn from_kubeconfig(path: &Path) -> anyhow::Result<Credentials> {
        let text =
            std::fs::read_to_string(path).with_context(|| format!("reading {}", path.display()))?;
        let config: serde_json::Value = serde_json::from_str(&text)
            .with_context(|| format!("{} is not JSON", path.display()))?;
        let field = |pointer: &str| -> anyhow::Result<Vec<u8>> {
            let b64 = config
                .pointer(pointer)
                .and_then(|v| v.as_str())
                .with_context(|| format!("{} has no {pointer}", path.display()))?;
            base64::engine::general_purpose::STANDARD
                .decode(b64)
                .with_context(|| format!("{pointer} in {} is not base64", path.display()))
        };
        let ca_pem = field("/clusters/0/cluster/certificate-authority-data")?;
        let mut identity_pem = field("/users/0/user/client-certificate-data")?;
        identity_pem.extend(field("/users/0/user/client-key-data")?);
        Ok(Credentials {
            ca_pem,
            identity_pem: Some(identity_pem),
            token: None,
        })
    }

    /// The same CA, authenticating with a bearer `token` instead of the
    /// client certificate.
    pub fn bearer(&self, token: &str) -> Credentials {
        Credentials {
            ca_pem: self.ca_pem.clone(),
            identity_pem: None,
            token: Some(token.to_owned()),
        }
    }

    /// A rustls client configuration trusting only the CA and presenting
    /// the identity, offering `alpn`.
    fn tls(&self, alpn: &[&[u8]]) -> anyhow::Result<rustls::ClientConfig> {
        let mut roots = rustls::RootCertStore::empty();
        for cert in rustls_pemfile::certs(&mut self.ca_pem.as_slice()) {
            roots
                .add(cert.context("the CA certificate")?)
                .context("adding the CA")?;
        }
        let provider = Arc::new(rustls::crypto::ring::default_provider());
        let builder = rustls::ClientConfig::builder_with_provider(provider)
            .with_safe_default_protocol_versions()
            .context("TLS versions")?
            .with_root_certificates(roots);
        let mut config = match &self.identity_pem {
            Some(identity_pem) => {
                let chain = rustls_pemfile::certs(&mut identity_pem.as_slice())
                    .collect::<Result<Vec<_>, _>>()
                    .context("the client certificate")?;
                let key = rustls_pemfile::private_key(&mut identity_pem.as_slice())
                    .context("the client key")?
                    .context("no client key in the kubeconfig")?;
                builder
                    .with_client_auth_cert(chain, key)
                    .context("the client identity")?
            }
            None => builder.with_no_client_auth(),
        };
        config.alpn_protocols = alpn.iter().map(|p| p.to_vec()).collect();
        Ok(config)
    }
}

/// Connections to one server.
enum Connections {
    /// One multiplexed HTTP/2 connection, opened on first use.
    H2(tokio::sync::OnceCell<http2::SendRequest<Full<Bytes>>>),
    /// Idle HTTP/1.1 keep-alive connections.
    Http1(Mutex<Vec<http1::SendRequest<Full<Bytes>>>>),
}

/// A client for one server. Cheap to clone (connections are shared).
#[derive(Clone)]
pub struct Https {
    inner: Arc<Inner>,
}

struct Inner {
    addr: std::net::SocketAddr,
    tls: tokio_rustls::TlsConnector,
    connections: Connections,
    /// The `Authorization` header, with a bearer token.
    authorization: Option<http::HeaderValue>,
}

/// A whole response.
pub struct Reply {
    /// The HTTP status.
    pub status: StatusCode,
    /// The protocol the response came over.
    pub version: Version,
    /// The body.
    pub body: Bytes,
    /// The `Retry-After` header in whole seconds, when there is one.
    pub retry_after: Option<u64>,
}

impl Reply {
    /// Reads the whole of `response` to `method path`.
    async fn read(
        response: http::Response<hyper::body::Incoming>,
        method: &Method,
        path: &str,
    ) -> anyhow::Result<Reply> {
        let (parts, incoming) = response.into_parts();
        let body = incoming
            .collect()
            .await
            .with_context(|| format!("{method} {path}: reading the body"))?
            .to_bytes();
        let retry_after = parts
            .headers
            .get(http::header::RETRY_AFTER)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.trim().parse().ok());
        Ok(Reply {
            status: parts.status,
            version: parts.version,
            body,
            retry_after,
        })
    }
}

impl Https {
    /// A client for `https://<addr>` with `credentials`, speaking `protocol`.
    pub fn new(
        addr: std::net::SocketAddr,
        credentials: &Credentials,
        protocol: Protocol,
    ) -> anyhow::Result<Https> {
        let (alpn, connections): (&[&[u8]], _) = match protocol {
            Protocol::H2 => (&[b"h2"], Connections::H2(tokio::sync::OnceCell::new())),
            Protocol::Http1 => (&[b"http/1.1"], Connections::Http1(Mutex::new(Vec::new()))),
        };
        let tls = tokio_rustls::TlsConnector::from(Arc::new(credentials.tls(alpn)?));
        let authorization = match &credentials.token {
            Some(token) => Some(
                http::HeaderValue::try_from(format!("Bearer {token}"))
                    .context("the bearer token")?,
            ),
            None => None,
        };
        Ok(Https {
            inner: Arc::new(Inner {
                addr,
                tls,
                connections,
                authorization,
            }),
        })
    }

    /// A new TLS connection to the server.
    async fn connect(&self) -> anyhow::Result<TokioIo<tokio_rustls::client::TlsStream<TcpStream>>> {
        let tcp = TcpStream::connect(self.inner.addr)
            .await
            .with_context(|| format!("connecting to {}", self.inner.addr))?;
        tcp.set_nodelay(true).context("TCP_NODELAY")?;
        let name = ServerName::from(self.inner.addr.ip());
        let tls = self
            .inner
            .tls
            .connect(name, tcp)
            .await
            .context("the TLS handshake")?;
        Ok(TokioIo::new(tls))
    }

    /// Sends `method path` (path with query) with an optional body of
    /// `content_type`, and reads the whole response.
    pub async fn send(
        &self,
        method: Method,
        path: &str,
        body: Option<(&'static str, Bytes)>,
    ) -> anyhow::Result<Reply> {
        let mut request = Request::builder()
            .method(method.clone())
            .header("accept", "application/json");
        if let Some(value) = &self.inner.authorization {
            request = request.header("authorization", value.clone());
        }
        let body = match body {
            Some((content_type, bytes)) => {
                request = request.header("content-type", content_type);
                bytes
            }
            None => Bytes::new(),
        };
        let context = || format!("{method} {path}");
        let response = match &self.inner.connections {
            Connections::H2(cell) => {
                let request = request
                    .uri(format!("https://{}{path}", self.inner.addr))
                    .version(Version::HTTP_2)
                    .body(Full::new(body))
                    .with_context(context)?;
                let sender = self.h2(cell).await?;
                sender
                    .clone()
                    .send_request(request)
                    .await
                    .with_context(context)?
            }
            Connections::Http1(pool) => {
                let request = request
                    .uri(path)
                    .header("host", self.inner.addr.to_string())
                    .body(Full::new(body))
                    .with_context(context)?;
                let idle = pool.lock().ok().and_then(|mut p| p.pop());
                let mut sender = match idle {
                    Some(s) if !s.is_closed() => s,
                    _ => {
                        let io = self.connect().await?;
                        let (sender, connection) = http1::handshake(io)
                            .await
                            .context("the HTTP/1.1 handshake")?;
                        tokio::spawn(connection);
                        sender
                    }
                };
                sender.ready().await.with_context(context)?;
                let response = sender.send_request(request).await.with_context(context)?;
                // The connection is reusable once the body is read.
                let reply = Reply::read(response, &method, path).await?;
                if let Ok(mut p) = pool.lock() {
                    p.push(sender);
                }
                return Ok(reply);
            }
        };
        Reply::read(response, &method, path).await
    }

    /// The HTTP/2 connection in `cell`, opened on first use.
    async fn h2<'a>(
        &self,
        cell: &'a tokio::sync::OnceCell<http2::SendRequest<Full<Bytes>>>,
    ) -> anyhow::Result<&'a http2::SendRequest<Full<Bytes>>> {
        cell.get_or_try_init(|| async {
            let io = self.connect().await?;
            let (sender, connection) = http2::Builder::new(TokioExecutor::new())
                .initial_stream_window_size(4 << 20)
                .initial_connection_window_size(1 << 30)
                .handshake(io)
                .await
                .context("the HTTP/2 handshake")?;
            tokio::spawn(connection);
            anyhow::Ok(sender)
        })
        .await
    }

    /// `GET path` over HTTP/2, returning the status and the body as it
    /// streams (for watches). HTTP/2 clients only.
    pub async fn stream(&self, path: &str) -> anyhow::Result<(StatusCode, hyper::body::Incoming)> {
        let Connections::H2(cell) = &self.inner.connections else {
            anyhow::bail!("GET {path}: streaming needs an HTTP/2 client");
        };
        let mut request = Request::builder()
            .method(Method::GET)
            .header("accept", "application/json")
            .uri(format!("https://{}{path}", self.inner.addr))
            .version(Version::HTTP_2);
        if let Some(value) = &self.inner.authorization {
            request = request.header("authorization", value.clone());
        }
        let request = request
            .body(Full::new(Bytes::new()))
            .with_context(|| format!("GET {path}"))?;
        let sender = self.h2(cell).await?;
        let response = sender
            .clone()
            .send_request(request)
            .await
            .with_context(|| format!("GET {path}"))?;
        let (parts, body) = response.into_parts();
        Ok((parts.status, body))
    }

    /// [`Https::send`], failing unless the status is `expected`; returns the
    /// body.
    pub async fn expect(
        &self,
        expected: u16,
        method: Method,
        path: &str,
        body: Option<(&'static str, Bytes)>,
    ) -> anyhow::Result<Bytes> {
        let reply = self.send(method.clone(), path, body).await?;
        if reply.status.as_u16() != expected {
            anyhow::bail!(
                "{method} {path}: expected {expected}, got {}: {}",
                reply.status,
                excerpt(&reply.body)
            );
        }
        Ok(reply.body)
    }
}

/// The first 300 characters of a body, for error messages.
pub fn excerpt(body: &[u8]) -> String {
    let text = String::from_utf8_lossy(body);
    let mut cut: String = text.chars().take(300).collect();
    if text.chars().count() > 300 {
        cut.push('…');
    }
    cut
}

/// How the report names a protocol version.
pub fn version_name(v: Version) -> &'static str {
    match v {
        Version::HTTP_2 => "HTTP/2",
        Version::HTTP_11 => "HTTP/1.1",
        Version::HTTP_10 => "HTTP/1.0",
        _ => "other",
    }
}

/// Established TCP connections from this machine to loopback `port`
/// (client sides only), from /proc/net/tcp and /proc/net/tcp6.
pub fn connections_to(port: u16) -> usize {
    skein_tests::member::connections_to(port)
}
