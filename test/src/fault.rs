//! A fault-injecting TCP proxy on loopback, placed between the federation
//! and one member (issue 31, "Faults").
//!
//! The member keeps serving on its own port; the kubeconfig the federation
//! is given ([`FaultProxy::kubeconfig`]) names the proxy's port instead.
//! The member's serving certificate holds the SAN `127.0.0.1`, so TLS
//! still verifies end to end: the proxy forwards bytes and never
//! terminates TLS (the federation's client certificate reaches the member
//! unchanged). Faults are switched at runtime through the handle:
//!
//! - [`Fault::Latency`]: every chunk the member sends arrives this much
//!   later (a pipeline, not a per-chunk sleep: a 500 ms link answers every
//!   request 500 ms late, however many chunks the answer has);
//! - [`Fault::Reset`]: every new connection is accepted and reset (RST);
//! - [`Fault::BlackHole`]: connections are accepted and nothing is
//!   forwarded either way, on new and existing connections alike, and
//!   nothing is closed: a member that accepts connections but never
//!   answers (not even the TLS handshake). Bytes held back flow again
//!   once the fault is lifted, as TCP's retransmissions would after a
//!   partition heals;
//! - [`FaultProxy::cut`]: every current connection is reset, so a
//!   partition also ends the watches already open
//!   ([`FaultProxy::partition`] is black hole plus cut).
//!
//! Contract: the proxy runs on a thread and runtime of its own, so a test
//! that blocks its own threads (kubectl, sleeps) never delays the
//! proxied traffic. A misconfiguration is an error, never a hang:
//! [`FaultProxy::start`] fails within [`CONNECT_TIMEOUT`] when the
//! upstream does not accept connections, [`FaultProxy::kubeconfig`]
//! panics when the kubeconfig does not name the upstream, and a
//! connection whose upstream refuses is reset at once (counted by
//! [`FaultProxy::upstream_errors`]). Dropping the handle stops the proxy
//! and closes every connection.
//!
//! Faults that need an HTTP answer (500/429/503) terminate TLS: see
//! [`crate::http_fault`].

use std::collections::HashMap;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::{mpsc, oneshot, watch};

/// How long the proxy waits for its upstream to accept a connection.
pub const CONNECT_TIMEOUT: Duration = Duration::from_secs(5);

/// The fault applied to the proxied traffic.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Fault {
    /// Bytes pass unchanged.
    None,
    /// Bytes from the member arrive this much later.
    Latency(Duration),
    /// New connections are reset as soon as they are accepted.
    Reset,
    /// Nothing is forwarded and nothing is closed (a partition, or a
    /// member that accepts connections and never answers).
    BlackHole,
}

/// Why a proxy could not start.
#[derive(Debug)]
pub enum ProxyError {
    /// The upstream address did not accept a connection in time.
    Upstream(SocketAddr, String),
    /// The proxy could not listen on loopback.
    Listen(String),
}

impl std::fmt::Display for ProxyError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ProxyError::Upstream(addr, why) => write!(
                f,
                "the fault proxy's upstream {addr} does not accept connections \
                 (within {CONNECT_TIMEOUT:?}): {why}"
            ),
            ProxyError::Listen(why) => write!(f, "the fault proxy cannot listen: {why}"),
        }
    }
}

impl std::error::Error for ProxyError {}

struct Shared {
    fault: watch::Sender<Fault>,
    /// Live connections by id: the sender that resets one.
    conns: Mutex<HashMap<u64, oneshot::Sender<()>>>,
    next_id: AtomicU64,
    accepted: AtomicUsize,
    upstream_errors: AtomicUsize,
}

/// A running fault proxy. See the module documentation.
pub struct FaultProxy {
    /// The address the proxy listens on (`127.0.0.1:<port>`).
    pub addr: SocketAddr,
    /// The address it forwards to.
    pub upstream: SocketAddr,
    shared: Arc<Shared>,
    stop: Option<oneshot::Sender<()>>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl FaultProxy {
    /// Starts a proxy on a free loopback port forwarding to `upstream`,
    /// with no fault. Fails (within [`CONNECT_TIMEOUT`]) when `upstream`
    /// does not accept a connection.
    pub fn start(upstream: SocketAddr) -> Result<FaultProxy, ProxyError> {
        std::net::TcpStream::connect_timeout(&upstream, CONNECT_TIMEOUT)
            .map_err(|e| ProxyError::Upstream(upstream, e.to_string()))?;
        let std_listener = std::net::TcpListener::bind("127.0.0.1:0")
            .and_then(|l| l.set_nonblocking(true).map(|()| l))
            .map_err(|e| ProxyError::Listen(e.to_string()))?;
        let addr = std_listener
            .local_addr()
            .map_err(|e| ProxyError::Listen(e.to_string()))?;
        let (fault, _) = watch::channel(Fault::None);
        let shared = Arc::new(Shared {
            fault,
            conns: Mutex::new(HashMap::new()),
            next_id: AtomicU64::new(0),
            accepted: AtomicUsize::new(0),
            upstream_errors: AtomicUsize::new(0),
        });
        let (stop, stopped) = oneshot::channel();
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .thread_name("fault-proxy")
            .enable_all()
            .build()
            .map_err(|e| ProxyError::Listen(e.to_string()))?;
        let for_thread = shared.clone();
        let thread = std::thread::Builder::new()
            .name(format!("fault-proxy-{}", addr.port()))
            .spawn(move || {
                runtime.block_on(async move {
                    let listener = TcpListener::from_std(std_listener)
                        .expect("a non-blocking std listener converts");
                    tokio::select! {
                        () = accept_loop(listener, upstream, for_thread.clone()) => {}
                        _ = stopped => {}
                    }
                    // Reset whatever is still open.
                    for_thread.cut();
                });
            })
            .map_err(|e| ProxyError::Listen(e.to_string()))?;
        Ok(FaultProxy {
            addr,
            upstream,
            shared,
            stop: Some(stop),
            thread: Some(thread),
        })
    }

    /// Starts a proxy in front of the member listening on `port`
    /// (`127.0.0.1`); panics with the reason when it cannot.
    pub fn for_port(port: u16) -> FaultProxy {
        FaultProxy::start(SocketAddr::from(([127, 0, 0, 1], port)))
            .unwrap_or_else(|e| panic!("{e}"))
    }

    /// The proxy's port.
    pub fn port(&self) -> u16 {
        self.addr.port()
    }

    /// The member's kubeconfig with its server pointed at the proxy. Panics
    /// when the kubeconfig does not name the upstream as
    /// `https://127.0.0.1:<port>` (the proxy would then not be in the path).
    pub fn kubeconfig(&self, member_kubeconfig: &str) -> String {
        let from = format!("https://{}", self.upstream);
        assert!(
            member_kubeconfig.contains(&from),
            "the kubeconfig does not name the proxy's upstream {from}:\n{member_kubeconfig}"
        );
        member_kubeconfig.replace(&from, &format!("https://{}", self.addr))
    }

    /// Switches the fault for every byte forwarded from now on.
    pub fn set(&self, fault: Fault) {
        self.shared.fault.send_replace(fault);
    }

    /// The current fault.
    pub fn fault(&self) -> Fault {
        *self.shared.fault.borrow()
    }

    /// Resets every current connection; returns how many there were.
    pub fn cut(&self) -> usize {
        self.shared.cut()
    }

    /// A partition: nothing passes and the connections already open are
    /// reset (so watches end too).
    pub fn partition(&self) {
        self.set(Fault::BlackHole);
        self.cut();
    }

    /// Lifts every fault.
    pub fn heal(&self) {
        self.set(Fault::None);
    }

    /// Connections accepted so far.
    pub fn accepted(&self) -> usize {
        self.shared.accepted.load(Ordering::Relaxed)
    }

    /// Connections open now.
    pub fn open(&self) -> usize {
        self.shared.conns.lock().expect("conns lock").len()
    }

    /// Connections reset because the upstream refused them.
    pub fn upstream_errors(&self) -> usize {
        self.shared.upstream_errors.load(Ordering::Relaxed)
    }
}

impl Drop for FaultProxy {
    fn drop(&mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

impl Shared {
    fn cut(&self) -> usize {
        let conns: Vec<_> = self
            .conns
            .lock()
            .expect("conns lock")
            .drain()
            .map(|(_, tx)| tx)
            .collect();
        let n = conns.len();
        for tx in conns {
            let _ = tx.send(());
        }
        n
    }
}

async fn accept_loop(listener: TcpListener, upstream: SocketAddr, shared: Arc<Shared>) {
    loop {
        let Ok((client, _)) = listener.accept().await else {
            tokio::time::sleep(Duration::from_millis(10)).await;
            continue;
        };
        shared.accepted.fetch_add(1, Ordering::Relaxed);
        let id = shared.next_id.fetch_add(1, Ordering::Relaxed);
        let (reset_tx, reset_rx) = oneshot::channel();
        shared
            .conns
            .lock()
            .expect("conns lock")
            .insert(id, reset_tx);
        let shared = shared.clone();
        tokio::spawn(async move {
            connection(client, upstream, &shared, reset_rx).await;
            shared.conns.lock().expect("conns lock").remove(&id);
        });
    }
}

/// Closes `s` with a reset (SO_LINGER 0) rather than a FIN.
fn reset(s: TcpStream) {
    let _ = s.set_zero_linger();
    drop(s);
}

async fn connection(
    mut client: TcpStream,
    upstream: SocketAddr,
    shared: &Shared,
    mut reset_rx: oneshot::Receiver<()>,
) {
    let mut fault = shared.fault.subscribe();
    let now = *fault.borrow_and_update();
    match now {
        Fault::Reset => return reset(client),
        Fault::BlackHole => {
            // Accepted, never answered, until the fault changes or the
            // connection is cut.
            let lifted = tokio::select! {
                r = fault.wait_for(|f| *f != Fault::BlackHole) => r.map(|f| *f).ok(),
                _ = &mut reset_rx => None,
            };
            if matches!(lifted, None | Some(Fault::Reset)) {
                return reset(client);
            }
        }
        Fault::None | Fault::Latency(_) => {}
    }
    let mut server = match tokio::time::timeout(CONNECT_TIMEOUT, TcpStream::connect(upstream)).await
    {
        Ok(Ok(s)) => s,
        Ok(Err(_)) | Err(_) => {
            shared.upstream_errors.fetch_add(1, Ordering::Relaxed);
            return reset(client);
        }
    };
    let _ = server.set_nodelay(true);
    let _ = client.set_nodelay(true);
    {
        let (cr, cw) = client.split();
        let (sr, sw) = server.split();
        let up = pump(cr, sw, shared.fault.subscribe(), false);
        let down = pump(sr, cw, shared.fault.subscribe(), true);
        tokio::select! {
            _ = async { tokio::join!(up, down) } => {}
            _ = &mut reset_rx => {}
        }
    }
    // Ended (either side closed, or cut): reset both sides.
    reset(server);
    reset(client);
}

/// Copies `from` to `to` until either ends. While the fault is
/// [`Fault::BlackHole`] nothing is written; `delayed` applies
/// [`Fault::Latency`] (the direction from the member).
async fn pump(
    mut from: impl AsyncReadExt + Unpin,
    mut to: impl AsyncWriteExt + Unpin,
    fault: watch::Receiver<Fault>,
    delayed: bool,
) {
    let (tx, mut rx) = mpsc::unbounded_channel::<(Instant, Vec<u8>)>();
    let read = async move {
        let mut buf = vec![0u8; 32 * 1024];
        loop {
            match from.read(&mut buf).await {
                Ok(0) | Err(_) => break,
                Ok(n) => {
                    if tx.send((Instant::now(), buf[..n].to_vec())).is_err() {
                        break;
                    }
                }
            }
        }
    };
    let write = async move {
        let mut fault = fault;
        while let Some((at, bytes)) = rx.recv().await {
            let current = *fault.borrow_and_update();
            if current == Fault::BlackHole {
                let _ = fault.wait_for(|f| *f != Fault::BlackHole).await;
            }
            let now = *fault.borrow();
            if let (true, Fault::Latency(d)) = (delayed, now) {
                tokio::time::sleep_until((at + d).into()).await;
            }
            if to.write_all(&bytes).await.is_err() {
                return;
            }
        }
        let _ = to.shutdown().await;
    };
    // A closed reader ends the writer once it has drained; a failed
    // writer drops the queue, which ends the reader at its next chunk.
    tokio::join!(read, write);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_closed_upstream_is_an_error_not_a_hang() {
        let port = crate::etcd::free_port();
        let started = Instant::now();
        let err = FaultProxy::start(SocketAddr::from(([127, 0, 0, 1], port)))
            .err()
            .expect("nothing listens there");
        assert!(started.elapsed() < CONNECT_TIMEOUT + Duration::from_secs(1));
        assert!(
            err.to_string().contains("does not accept connections"),
            "{err}"
        );
    }

    /// An echo server behind the proxy: round trips take the latency set,
    /// a black hole holds the answer until lifted, a reset ends at once.
    #[test]
    fn faults_shape_the_bytes() {
        use std::io::{Read, Write};
        let echo = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
        let upstream = echo.local_addr().expect("addr");
        std::thread::spawn(move || {
            for s in echo.incoming() {
                let Ok(mut s) = s else { return };
                std::thread::spawn(move || {
                    let mut buf = [0u8; 64];
                    while let Ok(n) = s.read(&mut buf) {
                        if n == 0 || s.write_all(&buf[..n]).is_err() {
                            return;
                        }
                    }
                });
            }
        });
        let proxy = FaultProxy::start(upstream).expect("the echo server listens");
        let round_trip = |s: &mut std::net::TcpStream| {
            let t = Instant::now();
            s.write_all(b"ping").expect("write");
            let mut buf = [0u8; 4];
            s.read_exact(&mut buf).map(|()| t.elapsed())
        };
        let mut s = std::net::TcpStream::connect(proxy.addr).expect("connect");
        s.set_read_timeout(Some(Duration::from_secs(5)))
            .expect("timeout");
        assert!(round_trip(&mut s).expect("echo") < Duration::from_millis(200));
        proxy.set(Fault::Latency(Duration::from_millis(300)));
        let rt = round_trip(&mut s).expect("echo");
        assert!(
            rt >= Duration::from_millis(300) && rt < Duration::from_secs(2),
            "{rt:?}"
        );
        proxy.set(Fault::BlackHole);
        let healer = {
            let fault = proxy.shared.fault.clone();
            std::thread::spawn(move || {
                std::thread::sleep(Duration::from_millis(500));
                fault.send_replace(Fault::None);
            })
        };
        let rt = round_trip(&mut s).expect("the answer comes once the hole is lifted");
        assert!(rt >= Duration::from_millis(400), "{rt:?}");
        healer.join().expect("healer");
        proxy.set(Fault::Reset);
        assert_eq!(proxy.cut(), 1);
        let mut buf = [0u8; 4];
        assert!(
            matches!(s.read(&mut buf), Ok(0) | Err(_)),
            "cut ends the connection"
        );
        let mut fresh = std::net::TcpStream::connect(proxy.addr).expect("connect");
        fresh
            .set_read_timeout(Some(Duration::from_secs(5)))
            .expect("timeout");
        let _ = fresh.write_all(b"ping");
        assert!(
            matches!(fresh.read(&mut buf), Ok(0) | Err(_)),
            "a reset connection"
        );
    }
}
