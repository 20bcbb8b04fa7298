//! Real etcd servers on loopback, for storage and end-to-end tests.
//!
//! The binary is `$SKEIN_ETCD`, or `etcd` on `PATH` (Debian's `etcd-server`,
//! which the README's test command installs). If it is missing, starting a
//! server panics with a message that says how to get it: tests fail, they do
//! not skip.

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// The etcd binary to run.
pub fn etcd_binary() -> PathBuf {
    if let Some(p) = std::env::var_os("SKEIN_ETCD") {
        return PathBuf::from(p);
    }
    for dir in std::env::split_paths(&std::env::var_os("PATH").unwrap_or_default()) {
        let candidate = dir.join("etcd");
        if candidate.is_file() {
            return candidate;
        }
    }
    panic!(
        "etcd not found: set SKEIN_ETCD or install Debian's etcd-server \
         (the README's test command, hack/test.sh, installs it)"
    );
}

/// A free loopback port (bound and released), never one this process has
/// handed out before: the OS may give a just-released port to the next
/// `bind(0)`, and two etcds of parallel tests on one port would make those
/// tests share a store.
pub fn free_port() -> u16 {
    static GIVEN: std::sync::Mutex<Vec<u16>> = std::sync::Mutex::new(Vec::new());
    loop {
        let port = TcpListener::bind("127.0.0.1:0")
            .and_then(|l| l.local_addr())
            .map(|a| a.port())
            .expect("no free loopback port");
        let mut given = GIVEN
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if !given.contains(&port) {
            given.push(port);
            return port;
        }
    }
}

/// One etcd member process. Killed on drop.
pub struct EtcdMember {
    /// Member name.
    pub name: String,
    /// Client URL, `http://127.0.0.1:<port>`.
    pub client_url: String,
    child: Option<Child>,
    dir: tempfile::TempDir,
}

impl EtcdMember {
    /// Kills the member with SIGKILL and waits for it.
    pub fn kill(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

impl Drop for EtcdMember {
    fn drop(&mut self) {
        self.kill();
    }
}

/// A running etcd (one member or a cluster).
pub struct Etcd {
    /// The members, in start order.
    pub members: Vec<EtcdMember>,
}

impl Etcd {
    /// Starts a single-member etcd on free loopback ports.
    pub fn start() -> Etcd {
        Etcd::cluster(1)
    }

    /// Starts an `n`-member cluster on loopback and waits until every member
    /// answers `/health`.
    pub fn cluster(n: usize) -> Etcd {
        let bin = etcd_binary();
        let peers: Vec<(String, u16, u16)> = (0..n)
            .map(|i| (format!("m{i}"), free_port(), free_port()))
            .collect();
        let initial: Vec<String> = peers
            .iter()
            .map(|(name, _, peer)| format!("{name}=http://127.0.0.1:{peer}"))
            .collect();
        let token = format!("skein-test-{}-{}", std::process::id(), free_port());
        let mut members = Vec::new();
        for (name, client, peer) in &peers {
            let dir = tempfile::tempdir().expect("tempdir for etcd");
            let log = std::fs::File::create(dir.path().join("etcd.log")).expect("etcd log file");
            let client_url = format!("http://127.0.0.1:{client}");
            let peer_url = format!("http://127.0.0.1:{peer}");
            let child = Command::new(&bin)
                .arg("--name")
                .arg(name)
                .arg("--data-dir")
                .arg(dir.path().join("data"))
                .arg("--listen-client-urls")
                .arg(&client_url)
                .arg("--advertise-client-urls")
                .arg(&client_url)
                .arg("--listen-peer-urls")
                .arg(&peer_url)
                .arg("--initial-advertise-peer-urls")
                .arg(&peer_url)
                .arg("--initial-cluster")
                .arg(initial.join(","))
                .arg("--initial-cluster-state")
                .arg("new")
                .arg("--initial-cluster-token")
                .arg(&token)
                .arg("--logger")
                .arg("zap")
                // Periodic progress for idle watches, as kube-apiserver's
                // etcd runs with (5 s there): before 3.4.31/3.5.13 Skein
                // never asks for progress (etcd issue 15220), and these
                // are ordered with the events.
                .arg("--experimental-watch-progress-notify-interval=2s")
                .stdin(Stdio::null())
                .stdout(Stdio::null())
                .stderr(Stdio::from(log))
                .spawn()
                .unwrap_or_else(|e| panic!("cannot start {}: {e}", bin.display()));
            members.push(EtcdMember {
                name: name.clone(),
                client_url,
                child: Some(child),
                dir,
            });
        }
        let etcd = Etcd { members };
        for m in &etcd.members {
            wait_healthy(m);
        }
        etcd
    }

    /// Client URLs of the members that are still running.
    pub fn endpoints(&self) -> Vec<String> {
        self.members
            .iter()
            .filter(|m| m.child.is_some())
            .map(|m| m.client_url.clone())
            .collect()
    }

    /// The first member's client URL.
    pub fn endpoint(&self) -> String {
        self.members[0].client_url.clone()
    }
}

fn wait_healthy(m: &EtcdMember) {
    let addr: SocketAddr = m
        .client_url
        .trim_start_matches("http://")
        .parse()
        .expect("client url is host:port");
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        if health(addr).unwrap_or(false) {
            return;
        }
        if Instant::now() > deadline {
            let log = m.dir.path().join("etcd.log");
            let tail = std::fs::read_to_string(&log).unwrap_or_default();
            let tail: String = tail.lines().rev().take(20).collect::<Vec<_>>().join("\n");
            panic!(
                "etcd member {} did not become healthy in 30s; log tail:\n{tail}",
                m.name
            );
        }
        std::thread::sleep(Duration::from_millis(100));
    }
}

fn health(addr: SocketAddr) -> std::io::Result<bool> {
    let mut s = TcpStream::connect_timeout(&addr, Duration::from_millis(500))?;
    s.set_read_timeout(Some(Duration::from_secs(2)))?;
    s.write_all(b"GET /health HTTP/1.0\r\nHost: localhost\r\n\r\n")?;
    let mut body = String::new();
    s.read_to_string(&mut body)?;
    Ok(body.contains("\"health\":\"true\""))
}
