//! `skein join` and `skein unjoin` end to end: the real binary against a
//! federation and members (`skein serve --role=member`) as real processes,
//! on the embedded store and on a real etcd; what the user sees (exit
//! codes, stdout, the one-line `error: …` on stderr) and what is stored
//! (the Secret and the Cluster, checked with kubectl).

use std::net::{SocketAddr, TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use base64::Engine;
use serde_json::{Value, json};
use skein_tests::cli;
use skein_tests::etcd::Etcd;
use skein_tests::kubectl_binaries;
use skein_tests::server::Server;

/// The longest a `skein join`/`unjoin` may run here.
const DEADLINE: Duration = Duration::from_secs(60);

/// Runs `skein <args>` (with `env` set, `$KUBECONFIG` removed unless given)
/// and returns what it printed; kills it after [`DEADLINE`].
fn skein(args: &[&str], env: &[(&str, &Path)]) -> Output {
    let mut cmd = Command::new(skein_tests::skein_bin());
    cmd.args(args)
        .env_remove("KUBECONFIG")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    for (k, v) in env {
        cmd.env(k, v);
    }
    let mut child = cmd.spawn().expect("spawn skein");
    let started = Instant::now();
    loop {
        if child.try_wait().expect("poll skein").is_some() {
            return child.wait_with_output().expect("skein output");
        }
        if started.elapsed() > DEADLINE {
            let _ = child.kill();
            let out = child.wait_with_output().expect("skein output");
            panic!(
                "skein {args:?} ran longer than {DEADLINE:?}\n--- stdout:\n{}\n--- stderr:\n{}",
                text(&out.stdout),
                text(&out.stderr)
            );
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

/// Asserts `out` failed with exit code 1 and exactly one stderr line,
/// `error: …`; returns that line.
fn one_line_error(args: &[&str], out: &Output) -> String {
    let stderr = text(&out.stderr);
    assert_eq!(
        out.status.code(),
        Some(1),
        "skein {args:?} should fail\n--- stdout:\n{}\n--- stderr:\n{stderr}",
        text(&out.stdout)
    );
    let lines: Vec<&str> = stderr.lines().collect();
    assert_eq!(lines.len(), 1, "one line on stderr: {stderr:?}");
    assert!(lines[0].starts_with("error: "), "{stderr:?}");
    lines[0].to_owned()
}

fn succeeded(args: &[&str], out: &Output) -> String {
    assert!(
        out.status.success(),
        "skein {args:?} failed ({})\n--- stdout:\n{}\n--- stderr:\n{}",
        out.status,
        text(&out.stdout),
        text(&out.stderr)
    );
    text(&out.stdout)
}

/// A federation and one member.
struct World {
    member: Server,
    fed: Server,
    _etcd: Option<Etcd>,
    dir: tempfile::TempDir,
    kubectl: PathBuf,
}

/// A federation started with `fed_flags` (plus etcd's when `on_etcd`) and
/// a member started with `member_flags`.
async fn world(on_etcd: bool, fed_flags: &[&str], member_flags: &[&str]) -> World {
    let kubectl = kubectl_binaries().remove(0);
    let dir = tempfile::tempdir().expect("tempdir");
    let etcd = if on_etcd {
        Some(
            tokio::task::spawn_blocking(Etcd::start)
                .await
                .expect("start etcd"),
        )
    } else {
        None
    };
    let flag = etcd
        .as_ref()
        .map(|e| format!("--etcd-servers={}", e.endpoint()));
    let mut extra: Vec<&str> = flag.iter().map(String::as_str).collect();
    extra.extend_from_slice(fed_flags);
    let fed = Server::start(&dir.path().join("fed"), &extra).await;
    let member_flags = [&["--role=member"][..], member_flags].concat();
    let member = Server::start(&dir.path().join("member"), &member_flags).await;
    World {
        member,
        fed,
        _etcd: etcd,
        dir,
        kubectl,
    }
}

impl World {
    fn path(&self, name: &str) -> PathBuf {
        self.dir.path().join(name)
    }

    /// `kubectl get <args> -o json` on the federation; `None` when not found.
    fn get(&self, args: &[&str]) -> Option<Value> {
        let mut all = vec!["get"];
        all.extend_from_slice(args);
        all.extend(["-o", "json", "--ignore-not-found"]);
        let out = cli::ok(&self.kubectl, &self.fed, &all);
        (!out.trim().is_empty()).then(|| serde_json::from_str(&out).expect("json"))
    }

    fn cluster(&self, name: &str) -> Option<Value> {
        self.get(&["clusters.federation.skein.io", name])
    }

    fn secret(&self, name: &str) -> Option<Value> {
        self.get(&[
            "secret",
            "-n",
            "skein-system",
            &format!("cluster-{name}-kubeconfig"),
        ])
    }

    fn assert_nothing_created(&self, name: &str) {
        assert_eq!(self.cluster(name), None, "no Cluster {name}");
        assert_eq!(self.secret(name), None, "no Secret for {name}");
    }

    /// The member's admin kubeconfig rewritten by `edit`, saved as `file`.
    fn member_kubeconfig(&self, file: &str, edit: impl FnOnce(&mut Value)) -> PathBuf {
        let mut config = self.member.kubeconfig_json();
        edit(&mut config);
        let path = self.path(file);
        std::fs::write(&path, config.to_string()).expect("write kubeconfig");
        path
    }
}

/// A TCP forwarder to `target` on a free loopback port that forwards the
/// first connection it accepts and closes every later one at once.
fn first_connection_only(target: SocketAddr) -> SocketAddr {
    let listener = TcpListener::bind("127.0.0.1:0").expect("bind a forwarder");
    let addr = listener.local_addr().expect("forwarder address");
    std::thread::spawn(move || {
        let mut first = true;
        for conn in listener.incoming() {
            let Ok(client) = conn else { continue };
            if !std::mem::take(&mut first) {
                drop(client);
                continue;
            }
            let Ok(server) = TcpStream::connect(target) else {
                continue;
            };
            for (mut from, mut to) in [
                (client.try_clone(), server.try_clone()),
                (server.try_clone(), client.try_clone()),
            ]
            .into_iter()
            .filter_map(|(a, b)| Some((a.ok()?, b.ok()?)))
            {
                std::thread::spawn(move || {
                    let _ = std::io::copy(&mut from, &mut to);
                    let _ = to.shutdown(std::net::Shutdown::Write);
                });
            }
        }
    });
    addr
}

fn s(p: &Path) -> String {
    p.display().to_string()
}

#[test]
fn join_and_unjoin_have_help() {
    for (cmd, flags) in [
        (
            "join",
            &[
                "--kubeconfig",
                "--context",
                "--label",
                "--federation-kubeconfig",
                "--timeout",
            ][..],
        ),
        ("unjoin", &["--federation-kubeconfig"][..]),
    ] {
        let out = skein(&[cmd, "--help"], &[]);
        let help = succeeded(&[cmd, "--help"], &out);
        assert!(help.contains(&format!("Usage: skein {cmd}")), "{help}");
        for f in flags {
            assert!(help.contains(f), "{cmd} --help lists {f}: {help}");
        }
    }
    // A missing argument is clap's usage error (exit 2).
    let out = skein(&["join", "eu-1"], &[]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out.stderr));
    assert!(text(&out.stderr).contains("--kubeconfig"));
}

/// Everything but the Ready path, on one backend.
async fn failures_and_unjoin(on_etcd: bool) {
    let w = world(on_etcd, &[], &[]).await;
    let fed_kubeconfig = s(&w.fed.kubeconfig());
    let fed_flag = ["--federation-kubeconfig", fed_kubeconfig.as_str()];

    // Bad credentials: a token the member does not know.
    let wrong = w.member.token_kubeconfig("wrong", "not-a-token");
    let wrong = s(&wrong);
    let args = [&["join", "eu-1", "--kubeconfig", &wrong][..], &fed_flag].concat();
    let line = one_line_error(&args, &skein(&args, &[]));
    assert_eq!(
        line,
        "error: member \"eu-1\" rejected the credentials: Unauthorized"
    );
    w.assert_nothing_created("eu-1");

    // An unreachable member (a port nothing listens on).
    let port = skein_tests::etcd::free_port();
    let unreachable = s(&w.member_kubeconfig("unreachable.kubeconfig", |c| {
        c["clusters"][0]["cluster"]["server"] = json!(format!("https://127.0.0.1:{port}"));
    }));
    let args = [
        &["join", "eu-1", "--kubeconfig", &unreachable][..],
        &fed_flag,
    ]
    .concat();
    let line = one_line_error(&args, &skein(&args, &[]));
    assert!(
        line.starts_with(&format!(
            "error: cannot reach member \"eu-1\" at https://127.0.0.1:{port}: "
        )) && line.contains("onnect"),
        "{line}"
    );
    w.assert_nothing_created("eu-1");

    // An exec plugin, and a bad label.
    let exec = w.member_kubeconfig("exec.kubeconfig", |c| {
        c["users"][0]["user"] =
            json!({"exec": {"apiVersion": "client.authentication.k8s.io/v1", "command": "aws"}});
    });
    let exec = s(&exec);
    let args = [&["join", "eu-1", "--kubeconfig", &exec][..], &fed_flag].concat();
    let line = one_line_error(&args, &skein(&args, &[]));
    assert!(line.contains("exec plugin (aws)"), "{line}");
    let member = s(&w.member.kubeconfig());
    let args = [
        &[
            "join",
            "eu-1",
            "--kubeconfig",
            &member,
            "--label",
            "no way=x",
        ][..],
        &fed_flag,
    ]
    .concat();
    let line = one_line_error(&args, &skein(&args, &[]));
    assert!(
        line.starts_with("error: invalid --label \"no way=x\": key \"no way\""),
        "{line}"
    );
    w.assert_nothing_created("eu-1");

    // A kubeconfig that names its files by relative paths, with a context
    // that is not the current one: stored flattened and minified.
    let pki = w.member.data_dir.join("pki");
    let files = w.path("files");
    std::fs::create_dir_all(&files).expect("mkdir");
    for f in ["ca.crt", "admin.crt", "admin.key"] {
        std::fs::copy(pki.join(f), files.join(f)).expect("copy a pki file");
    }
    // The member is reached through a forwarder that serves only the first
    // connection: join's own checks get through, the federation's probes
    // never do, so the Cluster never becomes Ready.
    let server = format!("https://{}", first_connection_only(w.member.addr));
    let by_files = files.join("member.kubeconfig");
    std::fs::write(
        &by_files,
        json!({
            "apiVersion": "v1", "kind": "Config", "current-context": "other",
            "clusters": [{"name": "m", "cluster": {"server": server, "certificate-authority": "ca.crt"}},
                         {"name": "o", "cluster": {"server": "https://127.0.0.1:1"}}],
            "users": [{"name": "admin", "user": {"client-certificate": "admin.crt", "client-key": "admin.key"}}],
            "contexts": [{"name": "member", "context": {"cluster": "m", "user": "admin"}},
                         {"name": "other", "context": {"cluster": "o"}}],
        })
        .to_string(),
    )
    .expect("write kubeconfig");

    // While the federation's Cluster controller does not report Ready, the
    // join waits, prints progress and times out, leaving the Cluster. The
    // federation is found through $KUBECONFIG here.
    let args = [
        "join",
        "eu-1",
        "--kubeconfig",
        &s(&by_files),
        "--context",
        "member",
        "--label",
        "region=eu",
        "--label",
        "example.com/tier=gold",
        "--timeout",
        "3s",
    ];
    let out = skein(&args, &[("KUBECONFIG", &w.fed.kubeconfig())]);
    let line = one_line_error(&args, &out);
    assert!(
        line.starts_with(
            "error: cluster \"eu-1\" did not become Ready within 3s (last condition: "
        ) && line.ends_with("remove it with `skein unjoin eu-1`"),
        "{line}"
    );
    let stdout = text(&out.stdout);
    assert!(
        stdout.contains(&format!(
            "member \"eu-1\" at {server} answers (version v1.33"
        )),
        "{stdout}"
    );
    assert!(
        stdout.contains("waiting for cluster \"eu-1\" to become Ready ("),
        "{stdout}"
    );
    let cluster = w.cluster("eu-1").expect("the Cluster is left");
    assert_eq!(
        cluster["metadata"]["labels"],
        json!({"region": "eu", "example.com/tier": "gold"})
    );
    assert_eq!(
        cluster["spec"]["kubeconfigSecretRef"],
        json!({"namespace": "skein-system", "name": "cluster-eu-1-kubeconfig", "key": "kubeconfig"})
    );
    let secret = w.secret("eu-1").expect("the Secret");
    assert_eq!(
        secret["metadata"]["labels"],
        json!({"federation.skein.io/cluster": "eu-1"})
    );
    let stored = base64::engine::general_purpose::STANDARD
        .decode(
            secret["data"]["kubeconfig"]
                .as_str()
                .expect("kubeconfig key"),
        )
        .expect("base64");
    let stored: Value = serde_json::from_slice(&stored).expect("stored kubeconfig is JSON");
    assert_eq!(stored["current-context"], "member");
    assert_eq!(stored["contexts"].as_array().map(Vec::len), Some(1));
    assert_eq!(stored["clusters"].as_array().map(Vec::len), Some(1));
    let b64 = |f: &str| {
        base64::engine::general_purpose::STANDARD.encode(std::fs::read(pki.join(f)).expect("read"))
    };
    assert_eq!(
        stored["clusters"][0]["cluster"],
        json!({"server": server, "certificate-authority-data": b64("ca.crt")})
    );
    assert_eq!(
        stored["users"][0]["user"],
        json!({"client-certificate-data": b64("admin.crt"), "client-key-data": b64("admin.key")})
    );

    // The name is taken now; the data dir's admin kubeconfig is the
    // fallback.
    let data_dir = s(&w.fed.data_dir);
    let args = [
        "join",
        "eu-1",
        "--kubeconfig",
        &member,
        "--data-dir",
        &data_dir,
    ];
    let line = one_line_error(&args, &skein(&args, &[]));
    assert_eq!(line, "error: cluster \"eu-1\" already exists");

    // Unjoin removes both; a second unjoin finds nothing.
    let args = [&["unjoin", "eu-1"][..], &fed_flag].concat();
    let out = succeeded(&args, &skein(&args, &[]));
    assert!(out.contains("cluster \"eu-1\" deleted"), "{out}");
    assert!(
        out.contains("secret skein-system/cluster-eu-1-kubeconfig deleted"),
        "{out}"
    );
    w.assert_nothing_created("eu-1");
    let line = one_line_error(&args, &skein(&args, &[]));
    assert_eq!(line, "error: cluster \"eu-1\" not found");

    // A Secret that is not Skein's is never replaced nor deleted.
    cli::ok(
        &w.kubectl,
        &w.fed,
        &[
            "create",
            "secret",
            "generic",
            "cluster-eu-2-kubeconfig",
            "-n",
            "skein-system",
            "--from-literal=kubeconfig=x",
        ],
    );
    let args = [
        &["join", "eu-2", "--kubeconfig", &member, "--timeout", "1s"][..],
        &fed_flag,
    ]
    .concat();
    let line = one_line_error(&args, &skein(&args, &[]));
    assert!(
        line.starts_with("error: secret skein-system/cluster-eu-2-kubeconfig already exists and is not labelled federation.skein.io/cluster=eu-2"),
        "{line}"
    );
    assert_eq!(w.cluster("eu-2"), None);
    assert!(w.secret("eu-2").is_some());
}

#[tokio::test]
async fn join_failures_and_unjoin_on_the_embedded_store() {
    failures_and_unjoin(false).await;
}

#[tokio::test]
async fn join_failures_and_unjoin_on_etcd() {
    failures_and_unjoin(true).await;
}

/// A join that ends Ready, what it prints, what kubectl then shows, and
/// the unjoin.
async fn join_ends_ready(on_etcd: bool) {
    let w = world(
        on_etcd,
        &[],
        &[
            "--simulate-workloads",
            "--sim-nodes=2",
            "--sim-node-cpu=4",
            "--sim-node-memory=8Gi",
            "--sim-region=eu",
            "--sim-zones=eu-a,eu-b",
        ],
    )
    .await;
    let fed_kubeconfig = s(&w.fed.kubeconfig());
    let member = s(&w.member.kubeconfig());
    let args = [
        "join",
        "eu-1",
        "--kubeconfig",
        &member,
        "--label",
        "region=eu",
        "--federation-kubeconfig",
        &fed_kubeconfig,
        "--timeout",
        "40s",
    ];
    let out = succeeded(&args, &skein(&args, &[]));
    let server = w.member.url("");
    let lines: Vec<&str> = out.lines().collect();
    assert!(
        lines[0].starts_with(&format!(
            "member \"eu-1\" at {server} answers (version v1.33.0"
        )),
        "{out}"
    );
    assert_eq!(
        lines[1], "cluster \"eu-1\" created; waiting up to 40s for it to become Ready",
        "{out}"
    );
    // Progress lines, if any, then the summary.
    let summary = lines
        .iter()
        .position(|l| *l == "cluster \"eu-1\" is Ready")
        .unwrap_or_else(|| panic!("no Ready line: {out}"));
    assert!(
        lines[2..summary]
            .iter()
            .all(|l| l.starts_with("waiting for cluster \"eu-1\" to become Ready (")),
        "{out}"
    );
    let summary = &lines[summary + 1..];
    assert!(summary[0].starts_with("  version:      v1.33.0"), "{out}");
    assert_eq!(
        &summary[1..5],
        [
            "  region:       eu",
            "  zones:        eu-a, eu-b",
            "  nodes:        2",
            "  allocatable:  cpu 8, memory 16Gi",
        ],
        "{out}"
    );
    assert!(summary[5].starts_with("  available:    cpu "), "{out}");
    let resources = summary[6]
        .strip_prefix("  resources:    ")
        .and_then(|r| r.split_once(" in "))
        .and_then(|(n, rest)| Some((n.parse::<u32>().ok()?, rest)))
        .unwrap_or_else(|| panic!("no resources line: {out}"));
    assert!(
        resources.0 > 40 && resources.1.ends_with(" groupVersions"),
        "{out}"
    );

    // kubectl shows it Ready.
    for k in kubectl_binaries() {
        let table = cli::ok(&k, &w.fed, &["get", "clusters"]);
        assert_eq!(
            cli::header(&table),
            ["NAME", "READY", "VERSION", "REGION", "NODES", "AGE"],
            "{table}"
        );
        let row = &cli::cells(&table)[1];
        assert_eq!(
            (row[0], row[1], row[3], row[4]),
            ("eu-1", "True", "eu", "2"),
            "{table}"
        );
        assert!(row[2].starts_with("v1.33.0"), "{table}");
    }

    // A second join of the name fails; unjoin removes both objects.
    let line = one_line_error(&args, &skein(&args, &[]));
    assert_eq!(line, "error: cluster \"eu-1\" already exists");
    let unjoin = ["unjoin", "eu-1", "--federation-kubeconfig", &fed_kubeconfig];
    succeeded(&unjoin, &skein(&unjoin, &[]));
    w.assert_nothing_created("eu-1");
}

#[tokio::test]
async fn join_ends_ready_on_the_embedded_store() {
    join_ends_ready(false).await;
}

#[tokio::test]
async fn join_ends_ready_on_etcd() {
    join_ends_ready(true).await;
}
