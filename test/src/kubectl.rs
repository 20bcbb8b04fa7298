//! Running a real kubectl against a [`Server`] with a deadline, in the
//! foreground ([`run`]) or in the background ([`Background`], for `get -w`).
//!
//! Every invocation uses the server's admin kubeconfig and a discovery cache
//! inside its data dir, and ignores `$KUBECONFIG`. kubectl can hang (a
//! `wait` whose list keeps failing retries forever, whatever its
//! `--timeout`), so nothing here waits without a deadline: a command that
//! overruns is killed and the test panics, quoting what it printed so far
//! and the end of the server's log.

use std::io::Read;
use std::path::Path;
use std::process::{Child, Command, ExitStatus, Output, Stdio};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use crate::server::Server;

/// How many trailing lines of the server log a failure quotes.
const LOG_TAIL_LINES: usize = 40;

/// `kubectl --kubeconfig <admin.kubeconfig> --cache-dir <data-dir>/kubectl-cache`,
/// without `$KUBECONFIG`, stdin closed, stdout and stderr piped.
pub fn command(kubectl: &Path, server: &Server) -> Command {
    let mut cmd = Command::new(kubectl);
    cmd.arg("--kubeconfig")
        .arg(server.kubeconfig())
        .arg("--cache-dir")
        .arg(server.data_dir.join("kubectl-cache"))
        .env_remove("KUBECONFIG")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    cmd
}

/// `kubectl-1.35 get cm x`: the tool's directory name (`.tools/kubectl-1.35/kubectl`)
/// or file name, then the arguments, for messages.
pub fn describe(kubectl: &Path, args: &[&str]) -> String {
    let tool = kubectl
        .parent()
        .and_then(Path::file_name)
        .filter(|d| d.to_string_lossy().starts_with("kubectl"))
        .or_else(|| kubectl.file_name())
        .map_or_else(
            || kubectl.display().to_string(),
            |n| n.to_string_lossy().into_owned(),
        );
    format!("{tool} {}", args.join(" "))
}

/// The last [`LOG_TAIL_LINES`] lines of the server log.
pub fn log_tail(server: &Server) -> String {
    let logs = server.logs();
    let lines: Vec<&str> = logs.lines().collect();
    lines[lines.len().saturating_sub(LOG_TAIL_LINES)..].join("\n")
}

/// Runs kubectl with `args` and returns what it printed and its exit
/// status. Panics if it cannot start or has not exited within `timeout`
/// (it is killed first).
pub fn run(kubectl: &Path, server: &Server, args: &[&str], timeout: Duration) -> Output {
    let mut bg = Background::spawn(kubectl, server, args);
    let deadline = Instant::now() + timeout;
    loop {
        if let Some(status) = bg.try_wait() {
            return bg.finish(status);
        }
        if Instant::now() > deadline {
            let out = bg.stop();
            panic!(
                "`{}` did not exit within {timeout:?} (killed)\n--- stdout:\n{}\n--- stderr:\n{}\n\
                 --- server log (tail):\n{}",
                describe(kubectl, args),
                String::from_utf8_lossy(&out.stdout),
                String::from_utf8_lossy(&out.stderr),
                log_tail(server),
            );
        }
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// The client's minor version (`kubectl version --client -o json`), e.g.
/// 35 for kubectl 1.35.2. Some messages differ between kubectl releases.
pub fn client_minor(kubectl: &Path) -> u32 {
    let out = Command::new(kubectl)
        .args(["version", "--client", "-o", "json"])
        .env_remove("KUBECONFIG")
        .stdin(Stdio::null())
        .output()
        .unwrap_or_else(|e| panic!("cannot run {}: {e}", kubectl.display()));
    let text = String::from_utf8_lossy(&out.stdout);
    let v: serde_json::Value = serde_json::from_str(&text).unwrap_or_else(|e| {
        panic!(
            "{} version --client -o json: not JSON ({e}):\n{text}",
            kubectl.display()
        )
    });
    v["clientVersion"]["minor"]
        .as_str()
        .map(|m| m.trim_end_matches('+'))
        .and_then(|m| m.parse().ok())
        .unwrap_or_else(|| panic!("{}: no clientVersion.minor in {v}", kubectl.display()))
}

/// A kubectl running in the background; its output is collected as it
/// comes. Killed on drop.
pub struct Background {
    child: Option<Child>,
    stdout: Arc<Mutex<Vec<u8>>>,
    stderr: Arc<Mutex<Vec<u8>>>,
    readers: Vec<JoinHandle<()>>,
    what: String,
}

impl Background {
    /// Starts kubectl with `args`. Panics if it cannot start.
    pub fn spawn(kubectl: &Path, server: &Server, args: &[&str]) -> Background {
        let what = describe(kubectl, args);
        let mut child = command(kubectl, server)
            .args(args)
            .spawn()
            .unwrap_or_else(|e| panic!("cannot run {}: {e}", kubectl.display()));
        let stdout = Arc::new(Mutex::new(Vec::new()));
        let stderr = Arc::new(Mutex::new(Vec::new()));
        let readers = vec![
            pump(child.stdout.take().expect("piped stdout"), stdout.clone()),
            pump(child.stderr.take().expect("piped stderr"), stderr.clone()),
        ];
        Background {
            child: Some(child),
            stdout,
            stderr,
            readers,
            what,
        }
    }

    /// Everything it printed on stdout so far.
    pub fn stdout(&self) -> String {
        String::from_utf8_lossy(&self.stdout.lock().expect("stdout buffer")).into_owned()
    }

    /// Everything it printed on stderr so far.
    pub fn stderr(&self) -> String {
        String::from_utf8_lossy(&self.stderr.lock().expect("stderr buffer")).into_owned()
    }

    /// Waits until `done(stdout so far)` holds. Panics, quoting both
    /// streams, if it does not within `timeout` or kubectl exits first.
    pub fn wait_for_stdout(&mut self, what: &str, timeout: Duration, done: impl Fn(&str) -> bool) {
        let deadline = Instant::now() + timeout;
        loop {
            if done(&self.stdout()) {
                return;
            }
            let exited = self.try_wait();
            if exited.is_some() || Instant::now() > deadline {
                // Let the readers drain what is left before quoting it.
                std::thread::sleep(Duration::from_millis(50));
                let why = exited.map_or_else(
                    || format!("within {timeout:?}"),
                    |s| format!("before exiting with {s}"),
                );
                panic!(
                    "`{}` did not print {what} {why}\n--- stdout:\n{}\n--- stderr:\n{}",
                    self.what,
                    self.stdout(),
                    self.stderr()
                );
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// Kills it (if still running) and returns everything it printed.
    pub fn stop(mut self) -> Output {
        let mut child = self.child.take().expect("running");
        let _ = child.kill();
        let status = child.wait().expect("reap kubectl");
        self.finish(status)
    }

    fn try_wait(&mut self) -> Option<ExitStatus> {
        self.child
            .as_mut()
            .and_then(|c| c.try_wait().expect("poll kubectl"))
    }

    fn finish(mut self, status: ExitStatus) -> Output {
        self.child = None;
        for reader in self.readers.drain(..) {
            let _ = reader.join();
        }
        Output {
            status,
            stdout: std::mem::take(&mut *self.stdout.lock().expect("stdout buffer")),
            stderr: std::mem::take(&mut *self.stderr.lock().expect("stderr buffer")),
        }
    }
}

impl Drop for Background {
    fn drop(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

/// Copies `from` into `into` until EOF, chunk by chunk.
fn pump(mut from: impl Read + Send + 'static, into: Arc<Mutex<Vec<u8>>>) -> JoinHandle<()> {
    std::thread::spawn(move || {
        let mut buf = [0u8; 8192];
        loop {
            match from.read(&mut buf) {
                Ok(0) | Err(_) => return,
                Ok(n) => into
                    .lock()
                    .expect("output buffer")
                    .extend_from_slice(&buf[..n]),
            }
        }
    })
}
