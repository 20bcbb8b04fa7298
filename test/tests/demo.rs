//! `hack/demo.sh` end to end: the script itself, as a user runs it, with the
//! built `skein` (`SKEIN_BIN`) and a real kubectl (`SKEIN_KUBECTL`).
//!
//! - `--run CMD`: the federation and three members come up and join, `kubectl
//!   get clusters` shows them Ready, the commands to try are printed, CMD
//!   (the printed weighted Deployment, or the Namespace default, with
//!   kubectl 1.35) works against them, and the script exits 0 leaving no
//!   process; a failing CMD's status is the script's.
//! - SIGINT: started without `--run`, the script prints "ready"; SIGINT to
//!   the script alone, or to its whole process group as Ctrl-C does (with
//!   kubectl 1.32), stops every process and exits 0.
//!
//! "No process left" is checked three ways: the PIDs the script prints are
//! gone, the addresses it prints refuse connections, and no process on the
//! machine has the demo directory on its command line.

use std::io::{BufRead, BufReader, Read};
use std::net::{SocketAddr, TcpStream};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use nix::sys::signal::{Signal, kill};
use nix::unistd::Pid;
use skein_tests::{kubectl_binaries, repo_root, skein_bin};

/// The longest the script may run in a test (start, join, CMD, stop).
const DEADLINE: Duration = Duration::from_secs(180);

/// The servers a default demo starts, in the order it prints them.
const ALL: [&str; 4] = ["federation", "eu", "us", "ap"];

/// A `--run` command: the printed Deployment split 2:1:0, its rollout, the
/// placements and the members' copies.
const RUN_DEPLOYMENT: &str = r#"set -eux
kubectl apply -f - <<'YAML'
apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  annotations:
    skein.io/replica-preferences: '{"clusters":{"eu":{"weight":2},"us":{"weight":1},"ap":{"weight":0}}}'
spec:
  replicas: 6
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      containers:
      - {name: web, image: nginx:1.27, resources: {requests: {cpu: 100m, memory: 64Mi}}}
YAML
kubectl rollout status deployment/web --timeout=90s
echo "federation-ready=$(kubectl get deploy web -o jsonpath='{.status.readyReplicas}')"
kubectl get placements
for m in eu us; do
  for i in $(seq 1 100); do
    n="$(kubectl --kubeconfig "$SKEIN_DEMO_DIR/$m/admin.kubeconfig" get deploy web -o jsonpath='{.spec.replicas}' 2>/dev/null || true)"
    [ -n "$n" ] && break
    sleep 0.2
  done
  echo "member-$m-replicas=$n"
done
"#;

/// A `--run` command: the printed Namespace default (a ConfigMap in a
/// Namespace annotated `skein.io/cluster-selector=region=eu`).
const RUN_NAMESPACE_DEFAULT: &str = r#"set -eux
kubectl create namespace team-eu
kubectl annotate namespace team-eu skein.io/cluster-selector=region=eu
kubectl -n team-eu create configmap settings --from-literal=color=blue
for i in $(seq 1 100); do
  kubectl --kubeconfig "$SKEIN_DEMO_DIR/eu/admin.kubeconfig" -n team-eu get configmap settings -o name 2>/dev/null && break
  sleep 0.2
done
kubectl -n team-eu get placements
echo "eu-configmap=$(kubectl --kubeconfig "$SKEIN_DEMO_DIR/eu/admin.kubeconfig" -n team-eu get configmap settings -o jsonpath='{.data.color}')"
echo "us-configmap=$(kubectl --kubeconfig "$SKEIN_DEMO_DIR/us/admin.kubeconfig" -n team-eu get configmap settings -o name --ignore-not-found)"
"#;

/// A running `bash hack/demo.sh`, its stdout and stderr collected together.
struct Demo {
    child: Child,
    output: Arc<Mutex<String>>,
    readers: Vec<JoinHandle<()>>,
    dir: PathBuf,
}

impl Demo {
    /// Starts the script with `args`, data in `dir`, kubectl `kubectl`.
    fn start(dir: &Path, kubectl: &Path, args: &[&str]) -> Demo {
        // SIGINT back to its default first: a test process started with
        // it ignored (a background job) would pass that on, and a shell
        // cannot trap a signal ignored on entry.
        let mut child = Command::new("env")
            .args(["--default-signal=INT", "bash"])
            .arg(repo_root().join("hack/demo.sh"))
            .args(args)
            .current_dir(repo_root())
            .env("SKEIN_BIN", skein_bin())
            .env("SKEIN_KUBECTL", kubectl)
            .env("SKEIN_DEMO_DIR", dir)
            .env_remove("KUBECONFIG")
            // Its own process group, as in a terminal: Ctrl-C goes to it all.
            .process_group(0)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("run env --default-signal=INT bash hack/demo.sh (coreutils 8.31+ and bash)");
        let output = Arc::new(Mutex::new(String::new()));
        let mut readers = Vec::new();
        let stdout = child
            .stdout
            .take()
            .map(|s| Box::new(s) as Box<dyn Read + Send>);
        let stderr = child
            .stderr
            .take()
            .map(|s| Box::new(s) as Box<dyn Read + Send>);
        for stream in [stdout, stderr].into_iter().flatten() {
            let output = Arc::clone(&output);
            readers.push(std::thread::spawn(move || {
                for line in BufReader::new(stream).lines().map_while(Result::ok) {
                    let mut out = output.lock().expect("output lock");
                    out.push_str(&line);
                    out.push('\n');
                }
            }));
        }
        Demo {
            child,
            output,
            readers,
            dir: dir.to_path_buf(),
        }
    }

    fn output(&self) -> String {
        self.output.lock().expect("output lock").clone()
    }

    /// Fails the test, quoting the output and the end of every log.
    fn fail(&mut self, why: &str) -> ! {
        let _ = kill(Pid::from_raw(self.pid()), Signal::SIGTERM);
        std::thread::sleep(Duration::from_secs(3));
        // Whatever is left of the group (the script and its servers).
        let _ = kill(Pid::from_raw(-self.pid()), Signal::SIGKILL);
        let _ = self.child.wait();
        let mut logs = String::new();
        if let Ok(entries) = std::fs::read_dir(self.dir.join("logs")) {
            for e in entries.flatten() {
                let text = std::fs::read_to_string(e.path()).unwrap_or_default();
                let lines: Vec<&str> = text.lines().collect();
                let tail = lines[lines.len().saturating_sub(15)..].join("\n");
                logs.push_str(&format!("--- {} ---\n{tail}\n", e.path().display()));
            }
        }
        panic!("{why}\n--- demo.sh output ---\n{}\n{logs}", self.output());
    }

    fn pid(&self) -> i32 {
        i32::try_from(self.child.id()).expect("a pid fits i32")
    }

    /// Waits until the output contains `text`.
    fn wait_for(&mut self, text: &str, started: Instant) {
        loop {
            if self.output().contains(text) {
                return;
            }
            if let Some(status) = self.child.try_wait().expect("poll demo.sh") {
                self.fail(&format!(
                    "demo.sh exited ({status}) before printing {text:?}"
                ));
            }
            if started.elapsed() > DEADLINE {
                self.fail(&format!("demo.sh printed no {text:?} within {DEADLINE:?}"));
            }
            std::thread::sleep(Duration::from_millis(100));
        }
    }

    /// Waits for the script to exit; returns its status and full output.
    fn finish(mut self, started: Instant) -> (ExitStatus, String) {
        let status = loop {
            if let Some(status) = self.child.try_wait().expect("poll demo.sh") {
                break status;
            }
            if started.elapsed() > DEADLINE {
                self.fail(&format!("demo.sh still running after {DEADLINE:?}"));
            }
            std::thread::sleep(Duration::from_millis(100));
        };
        for r in self.readers.drain(..) {
            r.join().expect("output reader");
        }
        (status, self.output())
    }
}

/// `(name, address, pid)` of every server the script says it started: lines
/// `==> federation  https://ADDR  pid N  log …` and
/// `==> member eu   https://ADDR  pid N  log …`.
fn started(output: &str) -> Vec<(String, SocketAddr, i32)> {
    let mut found = Vec::new();
    for line in output.lines() {
        let Some(rest) = line.strip_prefix("==> ") else {
            continue;
        };
        let words: Vec<&str> = rest.split_whitespace().collect();
        let (name, tail) = match words.as_slice() {
            ["federation", tail @ ..] => ("federation".to_owned(), tail),
            ["member", name, tail @ ..] => ((*name).to_owned(), tail),
            _ => continue,
        };
        let [url, "pid", pid, "log", ..] = tail else {
            continue;
        };
        let Some(addr) = url.strip_prefix("https://") else {
            continue;
        };
        found.push((
            name,
            addr.parse().expect("the printed address parses"),
            pid.parse().expect("the printed pid parses"),
        ));
    }
    found
}

/// Asserts that the servers the script started are all gone: their PIDs,
/// their ports, and any process naming the demo directory.
fn assert_all_stopped(
    servers: &[(String, SocketAddr, i32)],
    names: &[&str],
    dir: &Path,
    output: &str,
) {
    assert_eq!(
        servers.iter().map(|s| s.0.as_str()).collect::<Vec<_>>(),
        names,
        "the script names the servers it started:\n{output}"
    );
    for (name, addr, pid) in servers {
        assert!(
            kill(Pid::from_raw(*pid), None).is_err(),
            "{name} (pid {pid}) still runs after demo.sh exited:\n{output}"
        );
        assert!(
            TcpStream::connect_timeout(addr, Duration::from_secs(1)).is_err(),
            "{name}'s address {addr} still accepts connections:\n{output}"
        );
    }
    let dir = dir.to_string_lossy().into_owned();
    let mut strays = Vec::new();
    for entry in std::fs::read_dir("/proc").expect("read /proc").flatten() {
        let Ok(cmdline) = std::fs::read(entry.path().join("cmdline")) else {
            continue;
        };
        let cmdline = String::from_utf8_lossy(&cmdline).replace('\0', " ");
        if cmdline.contains(&dir) {
            strays.push(format!(
                "{}: {cmdline}",
                entry.file_name().to_string_lossy()
            ));
        }
    }
    assert!(
        strays.is_empty(),
        "processes naming {dir} are still running:\n{}\n{output}",
        strays.join("\n")
    );
}

/// Asserts what the script prints once the members are Ready: the cluster
/// table with three Ready members, the kubeconfig, and the commands to try.
fn assert_ready_output(output: &str, dir: &Path) {
    for member in ["eu", "us", "ap"] {
        assert!(
            output.lines().any(|l| {
                let cols: Vec<&str> = l.split_whitespace().collect();
                cols.first() == Some(&member) && cols.get(1) == Some(&"True")
            }),
            "`kubectl get clusters` shows {member} Ready:\n{output}"
        );
    }
    assert!(
        output.contains("NAME") && output.contains("READY"),
        "the cluster table has its header:\n{output}"
    );
    let kubeconfig = dir.join("federation").join("admin.kubeconfig");
    assert!(
        output.contains(&format!("export KUBECONFIG={}", kubeconfig.display())),
        "the export line names the federation kubeconfig:\n{output}"
    );
    for command in [
        r#"skein.io/replica-preferences: '{"clusters":{"eu":{"weight":2},"us":{"weight":1},"ap":{"weight":0}}}'"#,
        "replicas: 6",
        "kubectl rollout status deployment/web",
        "kubectl get placements",
        &format!(
            "kubectl --kubeconfig {}/eu/admin.kubeconfig get deploy web",
            dir.display()
        ),
        "kubectl create namespace team-eu",
        "kubectl annotate namespace team-eu skein.io/cluster-selector=region=eu",
        "--dry-run=server -o yaml",
        "federation.skein.io/decision",
    ] {
        assert!(
            output.contains(command),
            "the commands to try include {command:?}:\n{output}"
        );
    }
    assert!(
        output.contains(&format!("{}/logs", dir.display())),
        "the script says where the logs are:\n{output}"
    );
}

/// Runs `demo.sh --run CMD` with the first kubectl (1.35); asserts that it
/// exits 0, printed the cluster table and the commands, and left nothing
/// running. Returns its output.
fn run_demo(cmd: &str) -> String {
    let tmp = tempfile::tempdir().expect("tempdir");
    let dir = tmp.path().join("demo");
    let kubectl = &kubectl_binaries()[0];
    let started_at = Instant::now();
    let demo = Demo::start(&dir, kubectl, &["--run", cmd]);
    let (status, output) = demo.finish(started_at);
    assert!(
        status.success(),
        "demo.sh --run exits 0, got {status}:\n{output}"
    );
    assert_ready_output(&output, &dir);
    assert!(
        output.contains("--run command exited with status 0"),
        "{output}"
    );
    assert_all_stopped(&started(&output), &ALL, &dir, &output);
    output
}

#[test]
fn run_mode_weighted_deployment() {
    let output = run_demo(RUN_DEPLOYMENT);
    for expected in [
        "deployment.apps/web created",
        "deployment \"web\" successfully rolled out",
        "federation-ready=6",
        "member-eu-replicas=4",
        "member-us-replicas=2",
    ] {
        assert!(
            output.contains(expected),
            "output has {expected:?}:\n{output}"
        );
    }
}

#[test]
fn run_mode_namespace_default() {
    let output = run_demo(RUN_NAMESPACE_DEFAULT);
    for expected in ["namespace/team-eu annotated", "eu-configmap=blue"] {
        assert!(
            output.contains(expected),
            "output has {expected:?}:\n{output}"
        );
    }
    assert!(
        output.lines().any(|l| l.trim_end() == "us-configmap="),
        "the ConfigMap in team-eu is not on us:\n{output}"
    );
}

#[test]
fn run_mode_passes_on_the_command_status() {
    // A failing CMD fails the script, and still nothing is left running.
    let tmp = tempfile::tempdir().expect("tempdir");
    let dir = tmp.path().join("demo");
    let kubectl = &kubectl_binaries()[0];
    let started_at = Instant::now();
    let demo = Demo::start(
        &dir,
        kubectl,
        &["--members", "1", "--run", "kubectl get clusters; exit 3"],
    );
    let (status, output) = demo.finish(started_at);
    assert_eq!(
        status.code(),
        Some(3),
        "demo.sh exits with CMD's status:\n{output}"
    );
    assert!(
        output.contains("--run command exited with status 3"),
        "{output}"
    );
    assert!(
        output
            .lines()
            .any(|l| l.starts_with("eu ") && l.contains(" True ")),
        "the one member is Ready:\n{output}"
    );
    assert_all_stopped(&started(&output), &["federation", "eu"], &dir, &output);
}

/// Starts the demo without `--run` (with kubectl 1.32), waits for "ready",
/// checks that it serves, then sends SIGINT to `pid(script)` and asserts a
/// clean stop with exit 0.
fn interrupt(target: impl Fn(i32) -> i32) {
    let tmp = tempfile::tempdir().expect("tempdir");
    let dir = tmp.path().join("demo");
    // kubectl 1.32 here, 1.35 in the --run tests.
    let kubectl = kubectl_binaries()
        .into_iter()
        .last()
        .expect("at least one kubectl");
    let started_at = Instant::now();
    let mut demo = Demo::start(&dir, &kubectl, &[]);
    demo.wait_for("==> ready:", started_at);
    let before = demo.output();
    assert_ready_output(&before, &dir);
    let servers = started(&before);
    for (name, _, pid) in &servers {
        assert!(
            kill(Pid::from_raw(*pid), None).is_ok(),
            "{name} (pid {pid}) runs while the demo waits:\n{before}"
        );
    }
    // The federation answers while the demo waits.
    let out = Command::new(&kubectl)
        .arg("--kubeconfig")
        .arg(dir.join("federation").join("admin.kubeconfig"))
        .args(["get", "clusters", "-o", "name"])
        .output()
        .expect("run kubectl");
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        "cluster.federation.skein.io/ap\ncluster.federation.skein.io/eu\ncluster.federation.skein.io/us\n",
        "kubectl get clusters on the waiting demo: {}",
        String::from_utf8_lossy(&out.stderr)
    );

    kill(Pid::from_raw(target(demo.pid())), Signal::SIGINT).expect("send SIGINT");
    let (status, output) = demo.finish(started_at);
    assert!(
        status.success(),
        "demo.sh exits 0 on SIGINT, got {status}:\n{output}"
    );
    assert!(output.contains("interrupted: shutting down"), "{output}");
    assert!(
        output.contains("==> stopped; data and logs are kept in"),
        "{output}"
    );
    assert!(
        !output.contains("did not stop within"),
        "every server stopped on SIGTERM without SIGKILL:\n{output}"
    );
    assert_all_stopped(&servers, &ALL, &dir, &output);
}

#[test]
fn sigint_to_the_script_stops_everything_and_exits_zero() {
    // The script alone gets it: it must stop its servers itself.
    interrupt(|script| script);
}

#[test]
fn ctrl_c_stops_everything_and_exits_zero() {
    // What Ctrl-C in a terminal does: SIGINT to the whole foreground
    // process group, the servers included.
    interrupt(|script| -script);
}
