//! The HTTPS client of `bench api` and `bench patch`: reqwest 0.12 on
//! rustls, trusting only the server's CA and presenting the admin client
//! certificate from `admin.kubeconfig`. Every server under test gets a
//! client built by [`Https::new`] with the same settings.

use std::path::Path;
use std::time::Duration;

use anyhow::Context as _;
use base64::Engine as _;
use bytes::Bytes;
use reqwest::{Method, StatusCode, Version};

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

/// The CA to trust and the client identity, from a kubeconfig.
pub struct Credentials {
    ca_pem: Vec<u8>,
    /// Client certificate followed by its key, PEM.
    identity_pem: Vec<u8>,
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
            identity_pem,
        })
    }
}

/// A client for one server. Cheap to clone (the pool is shared).
#[derive(Clone)]
pub struct Https {
    client: reqwest::Client,
    /// `https://<addr>`.
    base: String,
}

/// A whole response.
pub struct Reply {
    /// The HTTP status.
    pub status: StatusCode,
    /// The protocol the response came over.
    pub version: Version,
    /// The body.
    pub body: Bytes,
}

impl Https {
    /// A client for `https://<addr>` with `credentials`, speaking `protocol`.
    pub fn new(
        addr: std::net::SocketAddr,
        credentials: &Credentials,
        protocol: Protocol,
    ) -> anyhow::Result<Https> {
        let ca = reqwest::Certificate::from_pem(&credentials.ca_pem).context("the CA")?;
        let identity =
            reqwest::Identity::from_pem(&credentials.identity_pem).context("the identity")?;
        let mut builder = reqwest::Client::builder()
            .use_rustls_tls()
            .tls_built_in_root_certs(false)
            .add_root_certificate(ca)
            .identity(identity)
            .timeout(Duration::from_secs(60))
            .pool_max_idle_per_host(usize::MAX);
        builder = match protocol {
            Protocol::H2 => builder
                .http2_initial_stream_window_size(4 << 20)
                .http2_initial_connection_window_size(1 << 30),
            Protocol::Http1 => builder.http1_only(),
        };
        Ok(Https {
            client: builder.build().context("building the HTTPS client")?,
            base: format!("https://{addr}"),
        })
    }

    /// Sends `method path` (path with query) with an optional body of
    /// `content_type`, and reads the whole response.
    pub async fn send(
        &self,
        method: Method,
        path: &str,
        body: Option<(&'static str, Bytes)>,
    ) -> anyhow::Result<Reply> {
        let mut request = self
            .client
            .request(method.clone(), format!("{}{path}", self.base))
            .header("accept", "application/json");
        if let Some((content_type, body)) = body {
            request = request.header("content-type", content_type).body(body);
        }
        let response = request
            .send()
            .await
            .with_context(|| format!("{method} {path}"))?;
        let status = response.status();
        let version = response.version();
        let body = response
            .bytes()
            .await
            .with_context(|| format!("{method} {path}: reading the body"))?;
        Ok(Reply {
            status,
            version,
            body,
        })
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
    let hex_port = format!("{port:04X}");
    ["/proc/net/tcp", "/proc/net/tcp6"]
        .iter()
        .filter_map(|p| std::fs::read_to_string(p).ok())
        .map(|table| {
            table
                .lines()
                .skip(1)
                .filter(|line| {
                    let f: Vec<&str> = line.split_whitespace().collect();
                    // sl local_address rem_address st …; st 01 = ESTABLISHED
                    f.len() > 3
                        && f[2].rsplit(':').next() == Some(hex_port.as_str())
                        && f[3] == "01"
                })
                .count()
        })
        .sum()
}
