//! Shared helpers of the kubectl suites: run kubectl with a deadline and
//! assert on what it prints, per-test servers ([`Env`]), and table parsing.
//!
//! Every helper panics with the command, its output and the server log's
//! tail when kubectl does not do what the test expects.

use std::cell::Cell;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::Output;
use std::time::Duration;

use serde_json::{Value, json};

use crate::kubectl as kc;
use crate::kubectl_binaries;
use crate::server::Server;

/// The deadline of one kubectl invocation. Generous: commands that wait
/// (`wait`, `delete` of objects with finalizers) are given `--timeout=30s`,
/// and kubectl does not always honour it.
pub const TIMEOUT: Duration = Duration::from_secs(40);

/// How long a background `get -w` may take to print an expected line.
pub const WATCH_TIMEOUT: Duration = Duration::from_secs(20);

// ---------------------------------------------------------------------------
// Helpers
// ---------------------------------------------------------------------------

/// Runs `kubectl <args>` against `server` (admin kubeconfig) with
/// [`TIMEOUT`].
pub fn kubectl(k: &Path, server: &Server, args: &[&str]) -> Output {
    kc::run(k, server, args, TIMEOUT)
}

/// Runs kubectl, asserts it exits 0, and returns its stdout.
pub fn ok(k: &Path, server: &Server, args: &[&str]) -> String {
    let out = kubectl(k, server, args);
    if !out.status.success() {
        panic!("{}", failure("succeed", k, server, args, &out));
    }
    stdout(&out)
}

/// Runs kubectl, asserts it exits 1 (kubectl's code for every error), and
/// returns its stderr.
pub fn err(k: &Path, server: &Server, args: &[&str]) -> String {
    let out = kubectl(k, server, args);
    if out.status.code() != Some(1) {
        panic!(
            "{}",
            failure("fail with exit code 1", k, server, args, &out)
        );
    }
    stderr(&out)
}

pub fn stdout(out: &Output) -> String {
    String::from_utf8_lossy(&out.stdout).into_owned()
}

pub fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// The panic message for a kubectl run that did not do what it should.
pub fn failure(expected: &str, k: &Path, server: &Server, args: &[&str], out: &Output) -> String {
    format!(
        "`{}` should {expected} but exited with {}\n--- stdout:\n{}\n--- stderr:\n{}\n\
         --- server log (tail):\n{}",
        kc::describe(k, args),
        out.status,
        stdout(out),
        stderr(out),
        kc::log_tail(server),
    )
}

/// `kubectl get ... -o json`, parsed.
pub fn get_json(k: &Path, server: &Server, args: &[&str]) -> Value {
    let args = [args, &["-o", "json"]].concat();
    let text = ok(k, server, &args);
    serde_json::from_str(&text).unwrap_or_else(|e| {
        panic!(
            "`{}` printed no JSON ({e}):\n{text}",
            kc::describe(k, &args)
        )
    })
}

/// The whitespace-separated cells of every non-empty line.
pub fn cells(table: &str) -> Vec<Vec<&str>> {
    table
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| l.split_whitespace().collect())
        .collect()
}

/// Column `i` of every non-empty line (header included).
pub fn column(table: &str, i: usize) -> Vec<&str> {
    cells(table)
        .into_iter()
        .map(|row| row.get(i).copied().unwrap_or(""))
        .collect()
}

/// The cell at `row`, `col` (counting the header as row 0), or "" if absent.
pub fn cell(table: &str, row: usize, col: usize) -> &str {
    cells(table)
        .get(row)
        .and_then(|r| r.get(col))
        .copied()
        .unwrap_or("")
}

/// The header cells (first line) of a table.
pub fn header(table: &str) -> Vec<&str> {
    cells(table).into_iter().next().unwrap_or_default()
}

/// The blocks of a multi-kind `get` (tables separated by a blank line).
pub fn blocks(out: &str) -> Vec<&str> {
    out.split("\n\n").filter(|b| !b.trim().is_empty()).collect()
}

/// Whether `cell` looks like an AGE column value (`0s`, `12s`, `3m4s`, `5d`).
pub fn is_age(cell: &str) -> bool {
    cell.chars().next().is_some_and(|c| c.is_ascii_digit())
        && cell
            .chars()
            .all(|c| c.is_ascii_digit() || "smhdy".contains(c))
}

/// What `kubectl delete` prints for one deleted object: 1.35 names the
/// namespace of a namespaced object, 1.32 does not. (Either form is accepted
/// for the releases in between, which this suite does not pin.)
pub fn assert_deleted(k: &Path, printed: &str, what: &str, namespace: Option<&str>) {
    let short = format!("{what} deleted\n");
    let long = namespace.map_or_else(
        || short.clone(),
        |ns| format!("{what} deleted from {ns} namespace\n"),
    );
    let minor = kc::client_minor(k);
    let expected: Vec<&String> = match minor {
        ..=32 => vec![&short],
        35.. => vec![&long],
        _ => vec![&short, &long],
    };
    assert!(
        expected.iter().any(|e| e.as_str() == printed),
        "kubectl 1.{minor} delete printed {printed:?}, expected one of {expected:?}"
    );
}

/// One test's server, its scratch directory and the kubectls to run.
pub struct Env {
    // Field order is drop order: the server (and its etcd, if any) stops
    // before its directory goes.
    pub server: Server,
    pub dir: tempfile::TempDir,
    pub kubectls: Vec<PathBuf>,
    files: Cell<usize>,
}

/// Starts a server for one test. Fails (does not skip) if kubectl or the
/// skein binary is missing.
///
/// The store is the embedded one, or a real etcd when `SKEIN_TEST_BACKEND=etcd`
/// (hack/test.sh runs this suite both ways).
pub async fn start() -> Env {
    let kubectls = kubectl_binaries();
    let dir = tempfile::tempdir().expect("tempdir");
    let server = Server::start_on_backend(&dir.path().join("data"), &[]).await;
    Env {
        server,
        dir,
        kubectls,
        files: Cell::new(0),
    }
}

impl Env {
    /// The kubectls with their index (used to name per-binary namespaces).
    pub fn each(&self) -> impl Iterator<Item = (usize, &Path)> {
        self.kubectls.iter().map(PathBuf::as_path).enumerate()
    }

    /// Writes `object` as a JSON manifest and returns its path.
    pub fn manifest(&self, object: &Value) -> String {
        let n = self.files.get();
        self.files.set(n + 1);
        let name = object["metadata"]["name"].as_str().unwrap_or("object");
        let path = self.dir.path().join(format!("{n:03}-{name}.json"));
        fs::write(&path, serde_json::to_vec_pretty(object).expect("JSON")).expect("write manifest");
        path.to_string_lossy().into_owned()
    }

    /// `kubectl create -f <manifest> -n <ns>`; asserts it says `created`.
    pub fn create(&self, k: &Path, namespace: &str, object: &Value) {
        let file = self.manifest(object);
        let out = ok(k, &self.server, &["create", "-f", &file, "-n", namespace]);
        assert!(out.ends_with(" created\n"), "create -f {object}: {out}");
    }

    /// Creates namespace `name` from a manifest, then waits (up to 10 s)
    /// for the `kube-root-ca.crt` ConfigMap the root CA publisher adds to
    /// every namespace, so that lists of the namespace are deterministic.
    pub fn namespace(&self, k: &Path, name: &str) {
        let file = self.manifest(&namespace(name));
        let out = ok(k, &self.server, &["create", "-f", &file]);
        assert_eq!(out, format!("namespace/{name} created\n"));
        let args = ["get", "cm", "kube-root-ca.crt", "-n", name, "-o", "name"];
        let start = std::time::Instant::now();
        while !kubectl(k, &self.server, &args).status.success() {
            assert!(
                start.elapsed() < Duration::from_secs(10),
                "no kube-root-ca.crt in namespace {name}"
            );
            std::thread::sleep(Duration::from_millis(50));
        }
    }
}

/// A Namespace manifest.
pub fn namespace(name: &str) -> Value {
    json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}})
}
