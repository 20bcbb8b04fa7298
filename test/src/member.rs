//! Member clusters for federation tests: `skein serve --role=member`
//! processes on fixed ports (so one can be stopped and started again where
//! its kubeconfig points), and the Secret + Cluster objects that join them.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

use base64::Engine;
use serde_json::{Value, json};

use crate::cli;
use crate::etcd::free_port;
use crate::server::Server;

/// Where the tests keep members' kubeconfig Secrets.
pub const SECRETS_NS: &str = "skein-system";

/// A member `skein serve --role=member` on a fixed port, so it can be
/// stopped and started again where its kubeconfig points. Killed on drop.
pub struct Member {
    child: Option<Child>,
    dir: PathBuf,
    /// The port it listens on.
    pub port: u16,
    extra: Vec<String>,
}

impl Member {
    /// Starts a member on a free port with `extra` flags; waits until it is ready.
    pub async fn start(dir: &Path, extra: &[&str]) -> Member {
        let mut m = Member {
            child: None,
            dir: dir.to_path_buf(),
            port: free_port(),
            extra: extra.iter().map(|s| (*s).to_owned()).collect(),
        };
        m.run().await;
        m
    }

    pub async fn run(&mut self) {
        fs::create_dir_all(&self.dir).expect("create the member's data dir");
        let log = fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(self.dir.join("skein.log"))
            .expect("open the member's log");
        let child = Command::new(crate::skein_bin())
            .arg("serve")
            .arg("--data-dir")
            .arg(&self.dir)
            .arg(format!("--secure-port={}", self.port))
            .arg("--role=member")
            .args(&self.extra)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::from(log))
            .spawn()
            .expect("spawn a member");
        self.child = Some(child);
        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            if let Some(c) = self.child.as_mut()
                && let Ok(Some(status)) = c.try_wait()
            {
                panic!("member exited with {status}; its log:\n{}", self.logs());
            }
            if self.ready().await {
                return;
            }
            assert!(
                Instant::now() < deadline,
                "member on port {} not ready within 30s; its log:\n{}",
                self.port,
                self.logs()
            );
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }

    pub async fn ready(&self) -> bool {
        let Ok(ca) = fs::read(self.dir.join("pki/ca.crt")) else {
            return false;
        };
        let Ok(ca) = reqwest::Certificate::from_pem(&ca) else {
            return false;
        };
        let client = reqwest::Client::builder()
            .use_rustls_tls()
            .tls_built_in_root_certs(false)
            .add_root_certificate(ca)
            .timeout(Duration::from_secs(2))
            .build()
            .expect("reqwest client");
        let url = format!("https://127.0.0.1:{}/readyz", self.port);
        matches!(client.get(url).send().await, Ok(r) if r.status() == 200)
    }

    pub fn logs(&self) -> String {
        fs::read_to_string(self.dir.join("skein.log")).unwrap_or_default()
    }

    pub fn stop(&mut self) {
        if let Some(mut c) = self.child.take() {
            let _ = c.kill();
            let _ = c.wait();
        }
    }

    pub fn kubeconfig_path(&self) -> PathBuf {
        self.dir.join("admin.kubeconfig")
    }

    pub fn kubeconfig(&self) -> String {
        fs::read_to_string(self.kubeconfig_path()).expect("read the member's admin.kubeconfig")
    }

    /// kubectl against the member; asserts success, returns stdout.
    pub fn kubectl(&self, k: &Path, args: &[&str]) -> String {
        let out: Output = Command::new(k)
            .arg("--kubeconfig")
            .arg(self.kubeconfig_path())
            .args(args)
            .env_remove("KUBECONFIG")
            .stdin(Stdio::null())
            .output()
            .expect("run kubectl");
        assert!(
            out.status.success(),
            "kubectl {args:?} on the member failed:\n{}\n{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stdout).into_owned()
    }
}

impl Drop for Member {
    fn drop(&mut self) {
        self.stop();
    }
}

/// Writes `objects` as one List manifest under the federation's data dir
/// and `kubectl apply`s it.
pub fn apply(k: &Path, fed: &Server, file: &str, objects: &[Value]) {
    let path = fed.data_dir.join(format!("{file}.json"));
    let list = json!({"apiVersion": "v1", "kind": "List", "items": objects});
    fs::write(&path, list.to_string()).expect("write a manifest");
    cli::ok(k, fed, &["apply", "-f", &path.to_string_lossy()]);
}

pub fn secret(name: &str, kubeconfig: &str) -> Value {
    json!({
        "apiVersion": "v1", "kind": "Secret",
        "metadata": {"name": name, "namespace": SECRETS_NS},
        "data": {"kubeconfig": base64::engine::general_purpose::STANDARD.encode(kubeconfig)},
    })
}

pub fn cluster(name: &str, secret: &str) -> Value {
    json!({
        "apiVersion": "federation.skein.io/v1alpha1", "kind": "Cluster",
        "metadata": {"name": name},
        "spec": {"kubeconfigSecretRef": {"namespace": SECRETS_NS, "name": secret}},
    })
}

/// Creates the Secrets namespace, then each member's Secret and Cluster.
pub fn join(k: &Path, fed: &Server, members: &[(&str, String)]) {
    let mut objects = vec![json!({"apiVersion": "v1", "kind": "Namespace",
        "metadata": {"name": SECRETS_NS}})];
    for (name, kubeconfig) in members {
        objects.push(secret(name, kubeconfig));
        objects.push(cluster(name, name));
    }
    apply(k, fed, "join", &objects);
}

/// A federation and its simulated members, joined and Ready.
pub struct Federation {
    /// The federation (`skein serve`, control-plane role).
    pub fed: Server,
    /// The members by Cluster name, in the order given.
    pub members: Vec<(String, Member)>,
}

impl Federation {
    /// Starts a federation with `fed_args` and one `--role=member
    /// --simulate-workloads` process per `(name, region)`, joins each as a
    /// Cluster labelled `region=<region>` (with kubectl `k`), and waits
    /// until every Cluster is Ready and its inventory lists served
    /// resources.
    pub async fn start(
        dir: &Path,
        k: &Path,
        fed_args: &[&str],
        clusters: &[(&str, &str)],
    ) -> Federation {
        let mut args = vec!["--cluster-probe-period=1s"];
        args.extend_from_slice(fed_args);
        let fed = Server::start(&dir.join("federation"), &args).await;
        let mut members = Vec::new();
        for (name, _) in clusters {
            let m = Member::start(
                &dir.join(name),
                &["--simulate-workloads", "--sim-pod-ready-delay=200ms"],
            )
            .await;
            members.push(((*name).to_owned(), m));
        }
        let joined: Vec<(&str, String)> = members
            .iter()
            .map(|(n, m)| (n.as_str(), m.kubeconfig()))
            .collect();
        join(k, &fed, &joined);
        for (name, region) in clusters {
            cli::ok(
                k,
                &fed,
                &[
                    "label",
                    "cluster",
                    name,
                    &format!("region={region}"),
                    "--overwrite",
                ],
            );
        }
        let federation = Federation { fed, members };
        for (name, _) in clusters {
            federation
                .wait_cluster(name, Duration::from_secs(60), |c| {
                    is_ready(c) && c.pointer("/status/servedResources").is_some()
                })
                .await;
        }
        federation
    }

    /// The member joined as `name`.
    pub fn member(&self, name: &str) -> &Member {
        self.members
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, m)| m)
            .unwrap_or_else(|| panic!("no member {name}"))
    }

    /// The member joined as `name`, to stop or restart it.
    pub fn member_mut(&mut self, name: &str) -> &mut Member {
        self.members
            .iter_mut()
            .find(|(n, _)| n == name)
            .map(|(_, m)| m)
            .unwrap_or_else(|| panic!("no member {name}"))
    }

    /// Polls the stored Cluster until `done` holds; panics after `timeout`
    /// with its last state.
    pub async fn wait_cluster(
        &self,
        name: &str,
        timeout: Duration,
        done: impl Fn(&Value) -> bool,
    ) -> Value {
        let api = crate::http::Api::new(&self.fed);
        let start = Instant::now();
        loop {
            let c = api
                .get(&format!(
                    "/apis/federation.skein.io/v1alpha1/clusters/{name}"
                ))
                .await
                .expect(200);
            if done(&c) {
                return c;
            }
            assert!(
                start.elapsed() < timeout,
                "cluster {name} not as expected within {timeout:?}: {:#}\n--- federation log tail:\n{}",
                c["status"],
                crate::kubectl::log_tail(&self.fed)
            );
            tokio::time::sleep(Duration::from_millis(200)).await;
        }
    }
}

/// Whether a Cluster's Ready condition is True.
pub fn is_ready(c: &Value) -> bool {
    c.pointer("/status/conditions")
        .and_then(Value::as_array)
        .is_some_and(|cs| {
            cs.iter()
                .any(|x| x["type"] == "Ready" && x["status"] == "True")
        })
}

/// Established TCP connections to `port` on this machine (the client ends:
/// `/proc/net/tcp{,6}` rows in state `01` whose remote port is `port`).
pub fn connections_to(port: u16) -> usize {
    let hex_port = format!("{port:04X}");
    ["/proc/net/tcp", "/proc/net/tcp6"]
        .iter()
        .filter_map(|p| fs::read_to_string(p).ok())
        .map(|table| {
            table
                .lines()
                .skip(1)
                .filter(|line| {
                    let f: Vec<&str> = line.split_whitespace().collect();
                    f.len() > 3
                        && f[2].rsplit(':').next() == Some(hex_port.as_str())
                        && f[3] == "01"
                })
                .count()
        })
        .sum()
}
