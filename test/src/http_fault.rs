//! An HTTP fault proxy in front of one member: it terminates TLS with the
//! member's own serving certificate (so the federation, which trusts the
//! member's CA, still verifies it), and forwards each request over a TLS
//! connection of its own that presents the member's admin client
//! certificate (the identity the member's kubeconfig gives the
//! federation). It can therefore answer instead of the member: 500, 429
//! and 503 with a `metav1.Status` body (and `Retry-After: 1` for 429 and
//! 503), for every request or for all but the health probes.
//!
//! Only HTTP/1.1 is offered (ALPN), so each request of a downstream
//! connection goes in order over one upstream connection, watches
//! streaming through. Runs on a thread and runtime of its own, like
//! [`crate::fault::FaultProxy`]; a misconfiguration (no certificate in the
//! member's `pki/`, an upstream not listening) is an error from
//! [`HttpFaultProxy::start`], and an upstream that stops answering makes
//! the proxy answer 502 at once rather than hang.

use std::net::SocketAddr;
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use http_body_util::{BodyExt, Full, combinators::BoxBody};
use hyper::body::{Bytes, Incoming};
use hyper::{Request, Response, StatusCode};
use hyper_util::rt::TokioIo;
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer, ServerName};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::{Mutex, oneshot, watch};

use crate::fault::{CONNECT_TIMEOUT, ProxyError};

/// What the proxy answers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HttpFault {
    /// Every request goes to the member.
    None,
    /// Requests are answered with this status (500, 429 or 503) instead;
    /// `/readyz`, `/livez` and `/healthz` too when `probes`.
    Status {
        /// The HTTP status code.
        code: u16,
        /// Whether the health probes get it as well.
        probes: bool,
    },
}

type Body = BoxBody<Bytes, hyper::Error>;

struct Shared {
    fault: watch::Sender<HttpFault>,
    answered: AtomicUsize,
    upstream: SocketAddr,
    connector: tokio_rustls::TlsConnector,
}

/// A running HTTP fault proxy. See the module documentation.
pub struct HttpFaultProxy {
    /// The address it listens on.
    pub addr: SocketAddr,
    shared: Arc<Shared>,
    stop: Option<oneshot::Sender<()>>,
    thread: Option<std::thread::JoinHandle<()>>,
}

fn pem_error(what: &str, e: impl std::fmt::Display) -> ProxyError {
    ProxyError::Listen(format!("{what}: {e}"))
}

impl HttpFaultProxy {
    /// Starts a proxy for the member whose data dir is `member_dir`
    /// (its `pki/` gives the serving certificate, the CA and the admin
    /// client certificate), listening on `port` of `127.0.0.1`.
    pub fn start(member_dir: &Path, port: u16) -> Result<HttpFaultProxy, ProxyError> {
        let upstream = SocketAddr::from(([127, 0, 0, 1], port));
        std::net::TcpStream::connect_timeout(&upstream, CONNECT_TIMEOUT)
            .map_err(|e| ProxyError::Upstream(upstream, e.to_string()))?;
        let pki = member_dir.join("pki");
        let certs = |f: &str| -> Result<Vec<CertificateDer<'static>>, ProxyError> {
            CertificateDer::pem_file_iter(pki.join(f))
                .and_then(Iterator::collect)
                .map_err(|e| pem_error(f, e))
        };
        let key = |f: &str| PrivateKeyDer::from_pem_file(pki.join(f)).map_err(|e| pem_error(f, e));
        let provider = Arc::new(rustls::crypto::ring::default_provider());
        let mut server = rustls::ServerConfig::builder_with_provider(provider.clone())
            .with_safe_default_protocol_versions()
            .map_err(|e| pem_error("TLS", e))?
            .with_no_client_auth()
            .with_single_cert(certs("serving.crt")?, key("serving.key")?)
            .map_err(|e| pem_error("serving.crt", e))?;
        server.alpn_protocols = vec![b"http/1.1".to_vec()];
        let mut roots = rustls::RootCertStore::empty();
        for c in certs("ca.crt")? {
            roots.add(c).map_err(|e| pem_error("ca.crt", e))?;
        }
        let client = rustls::ClientConfig::builder_with_provider(provider)
            .with_safe_default_protocol_versions()
            .map_err(|e| pem_error("TLS", e))?
            .with_root_certificates(roots)
            .with_client_auth_cert(certs("admin.crt")?, key("admin.key")?)
            .map_err(|e| pem_error("admin.crt", e))?;
        let std_listener = std::net::TcpListener::bind("127.0.0.1:0")
            .and_then(|l| l.set_nonblocking(true).map(|()| l))
            .map_err(|e| ProxyError::Listen(e.to_string()))?;
        let addr = std_listener
            .local_addr()
            .map_err(|e| ProxyError::Listen(e.to_string()))?;
        let shared = Arc::new(Shared {
            fault: watch::channel(HttpFault::None).0,
            answered: AtomicUsize::new(0),
            upstream,
            connector: tokio_rustls::TlsConnector::from(Arc::new(client)),
        });
        let acceptor = tokio_rustls::TlsAcceptor::from(Arc::new(server));
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .enable_all()
            .build()
            .map_err(|e| ProxyError::Listen(e.to_string()))?;
        let (stop, stopped) = oneshot::channel();
        let for_thread = shared.clone();
        let thread = std::thread::Builder::new()
            .name(format!("http-fault-{}", addr.port()))
            .spawn(move || {
                runtime.block_on(async move {
                    let listener = TcpListener::from_std(std_listener)
                        .expect("a non-blocking std listener converts");
                    tokio::select! {
                        () = accept_loop(listener, acceptor, for_thread) => {}
                        _ = stopped => {}
                    }
                });
            })
            .map_err(|e| ProxyError::Listen(e.to_string()))?;
        Ok(HttpFaultProxy {
            addr,
            shared,
            stop: Some(stop),
            thread: Some(thread),
        })
    }

    /// The member's kubeconfig with its server pointed at the proxy;
    /// panics when it does not name the member's address.
    pub fn kubeconfig(&self, member_kubeconfig: &str) -> String {
        let from = format!("https://{}", self.shared.upstream);
        assert!(
            member_kubeconfig.contains(&from),
            "the kubeconfig does not name the proxy's upstream {from}:\n{member_kubeconfig}"
        );
        member_kubeconfig.replace(&from, &format!("https://{}", self.addr))
    }

    /// Switches what the proxy answers from now on.
    pub fn set(&self, fault: HttpFault) {
        self.shared.fault.send_replace(fault);
    }

    /// How many answers the proxy made up so far.
    pub fn answered(&self) -> usize {
        self.shared.answered.load(Ordering::Relaxed)
    }
}

impl Drop for HttpFaultProxy {
    fn drop(&mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

async fn accept_loop(
    listener: TcpListener,
    acceptor: tokio_rustls::TlsAcceptor,
    shared: Arc<Shared>,
) {
    loop {
        let Ok((tcp, _)) = listener.accept().await else {
            continue;
        };
        let (acceptor, shared) = (acceptor.clone(), shared.clone());
        tokio::spawn(async move {
            let Ok(tls) = acceptor.accept(tcp).await else {
                return;
            };
            // One upstream connection per downstream one, made on demand.
            let upstream: Arc<Mutex<Option<hyper::client::conn::http1::SendRequest<Incoming>>>> =
                Arc::default();
            let service = hyper::service::service_fn(move |req: Request<Incoming>| {
                let (shared, upstream) = (shared.clone(), upstream.clone());
                async move { Ok::<_, hyper::Error>(answer(&shared, &upstream, req).await) }
            });
            let _ = hyper::server::conn::http1::Builder::new()
                .serve_connection(TokioIo::new(tls), service)
                .await;
        });
    }
}

fn made_up(code: u16, message: &str) -> Response<Body> {
    let reason = match code {
        429 => "TooManyRequests",
        503 => "ServiceUnavailable",
        502 => "BadGateway",
        _ => "InternalError",
    };
    let body = serde_json::json!({
        "kind": "Status", "apiVersion": "v1", "metadata": {},
        "status": "Failure", "message": message, "reason": reason, "code": code,
    });
    let mut r = Response::new(
        Full::new(Bytes::from(body.to_string()))
            .map_err(|never| match never {})
            .boxed(),
    );
    *r.status_mut() = StatusCode::from_u16(code).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
    r.headers_mut().insert(
        "content-type",
        hyper::header::HeaderValue::from_static("application/json"),
    );
    if matches!(code, 429 | 503) {
        r.headers_mut()
            .insert("retry-after", hyper::header::HeaderValue::from_static("1"));
    }
    r
}

async fn answer(
    shared: &Shared,
    upstream: &Mutex<Option<hyper::client::conn::http1::SendRequest<Incoming>>>,
    req: Request<Incoming>,
) -> Response<Body> {
    let probe = matches!(req.uri().path(), "/readyz" | "/livez" | "/healthz");
    let fault = *shared.fault.borrow();
    if let HttpFault::Status { code, probes } = fault
        && (probes || !probe)
    {
        shared.answered.fetch_add(1, Ordering::Relaxed);
        return made_up(code, "injected by the fault proxy");
    }
    let mut guard = upstream.lock().await;
    if guard.as_ref().is_none_or(|s| s.is_closed()) {
        match connect(shared).await {
            Ok(s) => *guard = Some(s),
            Err(e) => return made_up(502, &format!("the fault proxy's upstream: {e}")),
        }
    }
    let Some(sender) = guard.as_mut() else {
        return made_up(502, "no upstream connection");
    };
    if let Err(e) = sender.ready().await {
        *guard = None;
        return made_up(502, &format!("the fault proxy's upstream: {e}"));
    }
    match sender.send_request(req).await {
        Ok(r) => r.map(BodyExt::boxed),
        Err(e) => {
            *guard = None;
            made_up(502, &format!("the fault proxy's upstream: {e}"))
        }
    }
}

async fn connect(
    shared: &Shared,
) -> Result<hyper::client::conn::http1::SendRequest<Incoming>, String> {
    let tcp = tokio::time::timeout(CONNECT_TIMEOUT, TcpStream::connect(shared.upstream))
        .await
        .map_err(|_| format!("no connection within {CONNECT_TIMEOUT:?}"))?
        .map_err(|e| e.to_string())?;
    let name = ServerName::IpAddress(shared.upstream.ip().into());
    let tls = tokio::time::timeout(CONNECT_TIMEOUT, shared.connector.connect(name, tcp))
        .await
        .map_err(|_| format!("no TLS handshake within {CONNECT_TIMEOUT:?}"))?
        .map_err(|e| e.to_string())?;
    let (sender, conn) = hyper::client::conn::http1::handshake(TokioIo::new(tls))
        .await
        .map_err(|e| e.to_string())?;
    tokio::spawn(async move {
        let _ = conn.await;
    });
    Ok(sender)
}
