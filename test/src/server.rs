//! A real `skein serve` child process.
//!
//! [`Server::start`] runs `skein serve --data-dir <dir> --secure-port 0`,
//! reads the bound address from the `Serving securely on <addr>` line on
//! stdout, and waits until `/readyz` answers 200 over HTTPS (verifying the
//! server against `<dir>/pki/ca.crt`). The server's stderr goes to
//! `<dir>/skein.log`, which panics quote. Dropping a [`Server`] kills it.
//!
//! `Server::start_in_process` (`in_process.rs`) runs the same server in the test's own
//! process (`skein::server::serve` on the test's runtime), for tests that
//! need no process isolation (no SIGKILL, no restart): several servers
//! then share one process and its start-up cost. Dropping it shuts it
//! down.

use std::fs;
use std::io::{BufRead, BufReader};
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Output, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use nix::sys::signal::{Signal, kill};
use nix::unistd::Pid;

/// How long a server may take to become ready.
pub const START_TIMEOUT: Duration = Duration::from_secs(30);

/// A file in a server's data dir holding one more CA (PEM) its clients
/// trust: for servers started with `--tls-cert-file`.
pub const TRUSTED_CA: &str = "trusted-ca.crt";

/// The stdout line prefix that announces the bound address.
const SERVING_LINE: &str = "Serving securely on ";

/// A running `skein serve`. Killed (SIGKILL) on drop unless stopped.
pub struct Server {
    pub(crate) child: Option<Child>,
    /// An in-process server: the sender that shuts it down and its task.
    pub(crate) in_process: Option<crate::in_process::InProcess>,
    /// The etcd it stores in, when [`Server::start_on_backend`] started one
    /// (dropped after the server is killed).
    pub(crate) etcd: Option<crate::etcd::Etcd>,
    /// The address it listens on.
    pub addr: SocketAddr,
    /// Its `--data-dir`.
    pub data_dir: PathBuf,
    pub(crate) log: PathBuf,
}

impl Server {
    /// Starts `skein serve` on `data_dir` with a free port and waits until
    /// it is ready. `extra` flags are appended.
    pub async fn start(data_dir: &Path, extra: &[&str]) -> Server {
        fs::create_dir_all(data_dir).expect("create the data dir");
        let log = data_dir.join("skein.log");
        let stderr = fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(&log)
            .expect("open skein.log");
        let mut child = Command::new(crate::skein_bin())
            .arg("serve")
            .arg("--data-dir")
            .arg(data_dir)
            .arg("--secure-port=0")
            .args(extra)
            .env(
                "RUST_LOG",
                std::env::var("RUST_LOG").unwrap_or_else(|_| "info".into()),
            )
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::from(stderr))
            .spawn()
            .expect("spawn skein");

        let stdout = child.stdout.take().expect("piped stdout");
        let (tx, rx) = mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines().map_while(Result::ok) {
                if let Some(addr) = line.strip_prefix(SERVING_LINE) {
                    let _ = tx.send(addr.trim().to_string());
                }
            }
        });

        let mut server = Server {
            child: Some(child),
            in_process: None,
            etcd: None,
            addr: SocketAddr::from(([127, 0, 0, 1], 0)),
            data_dir: data_dir.to_path_buf(),
            log,
        };
        let deadline = Instant::now() + START_TIMEOUT;
        server.addr = loop {
            if let Ok(addr) = rx.try_recv() {
                break addr
                    .parse()
                    .unwrap_or_else(|e| panic!("bad address {addr:?} on stdout: {e}"));
            }
            server.fail_if_exited("before printing its address");
            if Instant::now() > deadline {
                server.fail(&format!("printed no address within {START_TIMEOUT:?}"));
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        };
        server.wait_ready(deadline).await;
        server
    }

    /// As [`Server::start`], on the store `SKEIN_TEST_BACKEND` names:
    /// the embedded one (unset or `embedded`), or a new single-member etcd
    /// (`etcd`) that lives as long as the server. For suites that run both
    /// ways and never restart a server on the same data dir.
    pub async fn start_on_backend(data_dir: &Path, extra: &[&str]) -> Server {
        let backend = std::env::var("SKEIN_TEST_BACKEND").unwrap_or_default();
        let etcd = match backend.as_str() {
            "" | "embedded" => None,
            "etcd" => Some(
                tokio::task::spawn_blocking(crate::etcd::Etcd::start)
                    .await
                    .expect("start etcd"),
            ),
            other => panic!("SKEIN_TEST_BACKEND must be embedded or etcd, not {other:?}"),
        };
        let flag = etcd
            .as_ref()
            .map(|e| format!("--etcd-servers={}", e.endpoint()));
        let mut args: Vec<&str> = extra.to_vec();
        args.extend(flag.iter().map(String::as_str));
        let mut server = Server::start(data_dir, &args).await;
        server.etcd = etcd;
        server
    }

    pub(crate) async fn wait_ready(&mut self, deadline: Instant) {
        let client = self.client(false);
        let url = self.url("/readyz");
        loop {
            match client.get(&url).send().await {
                Ok(r) if r.status() == 200 => return,
                Ok(_) | Err(_) if Instant::now() < deadline => {}
                Ok(r) => self.fail(&format!("/readyz still answers {}", r.status())),
                Err(e) => self.fail(&format!("/readyz unreachable: {e}")),
            }
            self.fail_if_exited("before becoming ready");
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }

    fn fail_if_exited(&mut self, when: &str) {
        let status = self
            .child
            .as_mut()
            .and_then(|c| c.try_wait().expect("poll skein"));
        if let Some(status) = status {
            self.fail(&format!("exited with {status} {when}"));
        }
    }

    fn fail(&self, what: &str) -> ! {
        panic!("skein serve {what}; its log:\n{}", self.logs());
    }

    /// The process id, while it runs.
    pub fn pid(&self) -> Option<u32> {
        self.child.as_ref().map(Child::id)
    }

    /// Everything the server logged so far.
    pub fn logs(&self) -> String {
        fs::read_to_string(&self.log).unwrap_or_default()
    }

    /// `https://<addr><path>`.
    pub fn url(&self, path: &str) -> String {
        format!("https://{}{path}", self.addr)
    }

    /// `<data-dir>/admin.kubeconfig`.
    pub fn kubeconfig(&self) -> PathBuf {
        self.data_dir.join("admin.kubeconfig")
    }

    /// The kubeconfig, parsed (it is JSON).
    pub fn kubeconfig_json(&self) -> serde_json::Value {
        let text = fs::read_to_string(self.kubeconfig()).expect("read admin.kubeconfig");
        serde_json::from_str(&text).expect("admin.kubeconfig is JSON")
    }

    /// A file under `<data-dir>/pki/`.
    pub fn pki_file(&self, name: &str) -> Vec<u8> {
        fs::read(self.data_dir.join("pki").join(name)).expect("read a pki file")
    }

    /// An HTTPS client that trusts the server's CA and presents the admin
    /// client certificate when `admin`, no certificate otherwise. It
    /// negotiates HTTP/2 or HTTP/1.1 with ALPN.
    pub fn client(&self, admin: bool) -> reqwest::Client {
        self.client_builder(admin).build().expect("reqwest client")
    }

    /// The builder behind [`Server::client`], for further tweaks.
    pub fn client_builder(&self, admin: bool) -> reqwest::ClientBuilder {
        let ca = reqwest::Certificate::from_pem(&self.pki_file("ca.crt")).expect("ca.crt");
        let mut builder = reqwest::Client::builder()
            .use_rustls_tls()
            .tls_built_in_root_certs(false)
            .add_root_certificate(ca)
            .timeout(Duration::from_secs(10));
        // A server given its serving certificate (`--tls-cert-file`) is
        // verified with the CA the test put beside its data.
        if let Ok(pem) = fs::read(self.data_dir.join(TRUSTED_CA)) {
            builder = builder.add_root_certificate(
                reqwest::Certificate::from_pem(&pem).expect("the trusted CA is PEM"),
            );
        }
        if admin {
            builder = builder.identity(self.admin_identity());
        }
        builder
    }

    /// The admin client certificate and key as a reqwest identity.
    pub fn admin_identity(&self) -> reqwest::Identity {
        let mut pem = self.pki_file("admin.crt");
        pem.extend(self.pki_file("admin.key"));
        reqwest::Identity::from_pem(&pem).expect("admin identity")
    }

    /// Runs `kubectl --kubeconfig <admin.kubeconfig> <args>`.
    pub fn kubectl(&self, kubectl: &Path, args: &[&str]) -> Output {
        self.kubectl_with(kubectl, &self.kubeconfig(), args)
    }

    /// Runs `kubectl --kubeconfig <kubeconfig> <args>` (for example with a
    /// [`Server::token_kubeconfig`]).
    pub fn kubectl_with(&self, kubectl: &Path, kubeconfig: &Path, args: &[&str]) -> Output {
        let cache = self.data_dir.join("kubectl-cache");
        Command::new(kubectl)
            .arg("--kubeconfig")
            .arg(kubeconfig)
            .arg("--cache-dir")
            .arg(&cache)
            .args(args)
            .env_remove("KUBECONFIG")
            .stdin(Stdio::null())
            .output()
            .unwrap_or_else(|e| panic!("cannot run {}: {e}", kubectl.display()))
    }

    /// Writes `<data-dir>/<name>.kubeconfig`: the admin kubeconfig's
    /// cluster (server and CA), and a user that authenticates with the
    /// bearer `token` only (no client certificate). Returns its path.
    pub fn token_kubeconfig(&self, name: &str, token: &str) -> PathBuf {
        let admin = self.kubeconfig_json();
        let cluster = admin["clusters"][0]["cluster"].clone();
        assert!(
            cluster["certificate-authority-data"].is_string(),
            "admin.kubeconfig has no CA: {admin}"
        );
        let config = serde_json::json!({
            "apiVersion": "v1",
            "kind": "Config",
            "clusters": [{"name": "skein", "cluster": cluster}],
            "users": [{"name": name, "user": {"token": token}}],
            "contexts": [{"name": name, "context": {"cluster": "skein", "user": name}}],
            "current-context": name,
        });
        let path = self.data_dir.join(format!("{name}.kubeconfig"));
        fs::write(&path, config.to_string()).expect("write a token kubeconfig");
        path
    }

    /// Runs `skein serve` on `data_dir` with `extra` flags expecting it to
    /// fail at startup: waits up to [`START_TIMEOUT`] for it to exit and
    /// returns its exit status and stderr. Panics if it starts serving.
    pub async fn start_expecting_failure(data_dir: &Path, extra: &[&str]) -> (ExitStatus, String) {
        fs::create_dir_all(data_dir).expect("create the data dir");
        let log = data_dir.join("skein-failed-start.log");
        let stderr = fs::File::create(&log).expect("create the log");
        let mut child = Command::new(crate::skein_bin())
            .arg("serve")
            .arg("--data-dir")
            .arg(data_dir)
            .arg("--secure-port=0")
            .args(extra)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::from(stderr))
            .spawn()
            .expect("spawn skein");
        let deadline = Instant::now() + START_TIMEOUT;
        loop {
            if let Some(status) = child.try_wait().expect("poll skein") {
                return (status, fs::read_to_string(&log).unwrap_or_default());
            }
            if Instant::now() > deadline {
                let _ = child.kill();
                let _ = child.wait();
                panic!(
                    "skein serve {extra:?} was expected to fail but still runs after \
                     {START_TIMEOUT:?}; its log:\n{}",
                    fs::read_to_string(&log).unwrap_or_default()
                );
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }

    /// Sends `signal` and waits up to `timeout` for the process to exit.
    /// Panics (quoting the log) if it does not.
    pub async fn stop_with(&mut self, signal: Signal, timeout: Duration) -> ExitStatus {
        let mut child = self.child.take().expect("server is running");
        let pid = Pid::from_raw(i32::try_from(child.id()).expect("pid fits in i32"));
        kill(pid, signal).expect("send signal");
        let deadline = Instant::now() + timeout;
        loop {
            if let Some(status) = child.try_wait().expect("poll skein") {
                return status;
            }
            if Instant::now() > deadline {
                let _ = child.kill();
                let _ = child.wait();
                self.fail(&format!("did not exit within {timeout:?} after {signal}"));
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
        // Its etcd, if it had one of its own, goes after it.
        self.etcd.take();
    }
}
