//! `bench flood`: issue 31's API priority and fairness acceptance. One
//! `skein serve` with the default FlowSchemas; two token users, neither
//! in `system:masters`:
//! - `polite` creates ConfigMaps at a paced rate (one HTTP/2 connection,
//!   as client-go), first alone, then during the flood, in the same run;
//! - `flooder` opens `--connections` HTTP/1.1 connections (2,000) and
//!   creates ConfigMaps on each as fast as answers come back; a 429 is
//!   retried after its `Retry-After`, as client-go (and so kubectl and
//!   every controller) does, or at once with `--ignore-retry-after` (a
//!   client that does not back off).
//!
//! - the syncer propagates: `--members` member servers that store copies
//!   (one helper process, as `bench fleet`) are joined, and an admin
//!   (exempt, so only the federation's own work is measured) creates
//!   ConfigMaps placed on every member at `--propagation-rate`, in both
//!   phases; each one's time from its create's answer to its Placement
//!   showing every copy synced is its propagation latency. The flood's
//!   and the polite user's Namespaces are control-plane-only, so the
//!   syncers carry only that stream.
//!
//! Printed: the polite user's and the propagation's p50/p99 alone and
//! under the flood (and their ratios), failures, and the flood's 201s,
//! 429s and errors.
//! Both users land in `global-default` (ByUser), so the polite user's
//! flow has its own queues there; `--skein-flag=--enable-priority-and-fairness=false`
//! gives the same run without shedding.

use std::fmt::Write as _;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use anyhow::Context as _;
use bytes::Bytes;
use hyper::Method;
use serde_json::json;

use crate::client::{Https, Protocol};
use crate::cluster::{Skein, skein_facts};
use crate::report;

const FLOOD_TOKEN: &str = "flood-token-0123456789";
const POLITE_TOKEN: &str = "polite-token-0123456789";

/// `bench flood` flags.
#[derive(clap::Args)]
pub struct Args {
    /// Connections the flooding user opens.
    #[arg(long, default_value_t = 2000)]
    connections: usize,
    /// Seconds the polite user is measured in each phase.
    #[arg(long, default_value_t = 15.0)]
    seconds: f64,
    /// The polite user's requests per second.
    #[arg(long, default_value_t = 20.0)]
    rate: f64,
    /// Member servers the federation propagates to (0: no propagation).
    #[arg(long, default_value_t = 3)]
    members: usize,
    /// Federated ConfigMaps created per second in each phase.
    #[arg(long, default_value_t = 5.0)]
    propagation_rate: f64,
    /// The flood retries a 429 at once instead of after its
    /// `Retry-After` (client-go waits for it).
    #[arg(long)]
    ignore_retry_after: bool,
    /// A flag added to `skein serve` (repeatable).
    #[arg(long = "skein-flag", allow_hyphen_values = true)]
    skein_flags: Vec<String>,
    /// The niceness of the flooding process (`bench flood-load`, run
    /// through `nice`). Its clients stand for other machines: at 0 they
    /// take about half of this machine's CPUs from the server under test;
    /// at 10 they get a tenth when the server is busy, still several
    /// times the requests it can answer.
    #[arg(long, default_value_t = 10)]
    flood_nice: i32,
}

/// `bench flood-load` flags (started by `bench flood`).
#[derive(clap::Args)]
pub struct LoadArgs {
    /// The server.
    #[arg(long)]
    addr: std::net::SocketAddr,
    /// A kubeconfig whose CA the server's certificate chains to.
    #[arg(long)]
    kubeconfig: std::path::PathBuf,
    /// How many connections.
    #[arg(long)]
    connections: usize,
    /// Retry a 429 at once.
    #[arg(long)]
    ignore_retry_after: bool,
}

/// The polite user's latencies (ms) and failures in one phase.
struct Phase {
    latencies: Vec<f64>,
    failures: Vec<String>,
}

impl Phase {
    fn quantile(&self, q: f64) -> f64 {
        if self.latencies.is_empty() {
            return f64::NAN;
        }
        let i = ((self.latencies.len() - 1) as f64 * q).round() as usize;
        self.latencies[i.min(self.latencies.len() - 1)]
    }
}

fn configmap(name: &str) -> Option<(&'static str, Bytes)> {
    let body = json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name}, "data": {"k": "v"}});
    Some(("application/json", Bytes::from(body.to_string())))
}

/// `rate` creates per second for `secs`, each on its own task so a slow
/// answer does not delay the next.
async fn paced(client: &Https, rate: f64, secs: f64, prefix: &str) -> Phase {
    let n = (rate * secs).round().max(1.0) as usize;
    let start = tokio::time::Instant::now();
    let mut tasks = tokio::task::JoinSet::new();
    for i in 0..n {
        tokio::time::sleep_until(start + Duration::from_secs_f64(i as f64 / rate)).await;
        let client = client.clone();
        let name = format!("{prefix}-{i}");
        tasks.spawn(async move {
            let t = Instant::now();
            let reply = client
                .send(
                    Method::POST,
                    "/api/v1/namespaces/polite/configmaps",
                    configmap(&name),
                )
                .await;
            let ms = t.elapsed().as_secs_f64() * 1000.0;
            match reply {
                Ok(r) if r.status.as_u16() == 201 => Ok(ms),
                Ok(r) => Err(format!("{}", r.status)),
                Err(e) => Err(format!("{e:#}")),
            }
        });
    }
    let mut phase = Phase {
        latencies: Vec::new(),
        failures: Vec::new(),
    };
    while let Some(done) = tasks.join_next().await {
        match done {
            Ok(Ok(ms)) => phase.latencies.push(ms),
            Ok(Err(e)) => phase.failures.push(e),
            Err(e) => phase.failures.push(e.to_string()),
        }
    }
    phase.latencies.sort_by(f64::total_cmp);
    phase
}

/// Sleeps `d`, or less once `stop` is set.
async fn sleep_unless_stopped(stop: &AtomicBool, d: Duration) {
    let end = tokio::time::Instant::now() + d;
    while !stop.load(Ordering::Relaxed) && tokio::time::Instant::now() < end {
        tokio::time::sleep(Duration::from_millis(100).min(end - tokio::time::Instant::now())).await;
    }
}

/// The propagation stream: the member fleet and the Placement watch.
struct Propagation {
    admin: Https,
    members: usize,
    progress: Arc<std::sync::Mutex<crate::fleet::Progress>>,
    _watch: tokio::task::JoinHandle<()>,
    _fleet: crate::fleet::Fleet,
    _dir: tempfile::TempDir,
}

impl Propagation {
    /// Starts `members` members, joins them, and watches Placements.
    async fn start(skein: &Skein, admin: &Https, members: usize) -> anyhow::Result<Propagation> {
        let dir = tempfile::tempdir().context("temp dir for members")?;
        let fleet = crate::fleet::Fleet::start(members, dir.path()).await?;
        crate::members::post(
            admin,
            "/api/v1/namespaces",
            &json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "skein-system"}}),
            &[201, 409],
        )
        .await?;
        for i in 0..members {
            crate::fleet::join(admin, &fleet, i, 1).await?;
        }
        crate::propagation::wait_usable(admin, members, Duration::from_secs(120)).await?;
        crate::members::post(
            admin,
            "/api/v1/namespaces",
            &json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "propagate",
                "annotations": {"skein.io/clusters": "*"}}}),
            &[201],
        )
        .await?;
        let progress = Arc::new(std::sync::Mutex::new(crate::fleet::Progress::default()));
        let watch = crate::fleet::follow(&skein.server, progress.clone()).await?;
        Ok(Propagation {
            admin: admin.clone(),
            members,
            progress,
            _watch: watch,
            _fleet: fleet,
            _dir: dir,
        })
    }

    /// Creates `rate` ConfigMaps per second for `secs`, placed on every
    /// member; each one's seconds from its create's answer to every copy
    /// synced (in ms, as [`Phase`]).
    async fn stream(&self, rate: f64, secs: f64, prefix: &str) -> Phase {
        let n = (rate * secs).round().max(1.0) as usize;
        let objs: Vec<crate::fleet::Obj> = (0..n)
            .map(|i| crate::fleet::Obj {
                ns: "propagate".into(),
                kind: "ConfigMap",
                plural: "configmaps",
                group_path: "/api/v1",
                name: format!("{prefix}-{i}"),
                expect: self.members,
            })
            .collect();
        if let Ok(mut p) = self.progress.lock() {
            p.expected
                .extend(objs.iter().map(|o| (o.placement(), o.expect)));
        }
        let submitted = crate::fleet::submit(&self.admin, &objs, 1, rate).await;
        crate::fleet::wait_applied(&self.progress, &objs, Duration::from_secs(120)).await;
        let mut phase = Phase {
            latencies: Vec::new(),
            failures: Vec::new(),
        };
        let applied = self
            .progress
            .lock()
            .map(|p| p.applied.clone())
            .unwrap_or_default();
        for (key, at) in submitted {
            match (at, applied.get(&key)) {
                (Ok(at), Some(done)) => phase
                    .latencies
                    .push(done.saturating_duration_since(at).as_secs_f64() * 1000.0),
                (Ok(_), None) => phase
                    .failures
                    .push(format!("{key}: not applied within 120 s")),
                (Err(e), _) => phase.failures.push(format!("{key}: {e}")),
            }
        }
        phase.latencies.sort_by(f64::total_cmp);
        phase
    }
}

#[derive(Default)]
struct FloodCounts {
    created: AtomicU64,
    rejected: AtomicU64,
    other: AtomicU64,
    errors: AtomicU64,
}

/// [`FloodCounts`] read at one moment.
#[derive(Clone, Copy, Default)]
struct Counted {
    created: u64,
    rejected: u64,
    other: u64,
    errors: u64,
}

impl FloodCounts {
    fn read(&self) -> Counted {
        Counted {
            created: self.created.load(Ordering::Relaxed),
            rejected: self.rejected.load(Ordering::Relaxed),
            other: self.other.load(Ordering::Relaxed),
            errors: self.errors.load(Ordering::Relaxed),
        }
    }
}

impl Counted {
    fn line(&self) -> String {
        format!(
            "{} {} {} {}",
            self.created, self.rejected, self.other, self.errors
        )
    }

    fn parse(line: &str) -> anyhow::Result<Counted> {
        let n: Vec<u64> = line
            .split_whitespace()
            .map(str::parse)
            .collect::<Result<_, _>>()
            .with_context(|| format!("flood-load answered {line:?}"))?;
        match n.as_slice() {
            [created, rejected, other, errors] => Ok(Counted {
                created: *created,
                rejected: *rejected,
                other: *other,
                errors: *errors,
            }),
            _ => anyhow::bail!("flood-load answered {line:?}"),
        }
    }
}

/// The flooding process: `bench flood-load` under `nice`. Each line
/// written to its stdin is answered with its counts; closing stdin stops
/// it, and it answers its final counts.
struct Flood {
    child: tokio::process::Child,
    stdin: Option<tokio::process::ChildStdin>,
    lines: tokio::io::Lines<tokio::io::BufReader<tokio::process::ChildStdout>>,
}

impl Flood {
    fn start(skein: &Skein, args: &Args) -> anyhow::Result<Flood> {
        let exe = std::env::current_exe().context("the bench's own path")?;
        let mut cmd = tokio::process::Command::new("nice");
        cmd.arg("-n")
            .arg(args.flood_nice.to_string())
            .arg(exe)
            .arg("flood-load")
            .arg("--addr")
            .arg(skein.server.addr.to_string())
            .arg("--kubeconfig")
            .arg(skein.server.kubeconfig())
            .arg("--connections")
            .arg(args.connections.to_string());
        if args.ignore_retry_after {
            cmd.arg("--ignore-retry-after");
        }
        let mut child = cmd
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .kill_on_drop(true)
            .spawn()
            .context("starting `nice … bench flood-load` (nice is coreutils)")?;
        let stdin = child.stdin.take();
        let stdout = child.stdout.take().context("flood-load's stdout")?;
        use tokio::io::AsyncBufReadExt as _;
        let lines = tokio::io::BufReader::new(stdout).lines();
        Ok(Flood {
            child,
            stdin,
            lines,
        })
    }

    async fn answer(&mut self) -> anyhow::Result<Counted> {
        let line = tokio::time::timeout(Duration::from_secs(60), self.lines.next_line())
            .await
            .context("flood-load did not answer within 60 s")?
            .context("reading flood-load's answer")?
            .context("flood-load exited")?;
        Counted::parse(&line)
    }

    async fn counts(&mut self) -> anyhow::Result<Counted> {
        use tokio::io::AsyncWriteExt as _;
        let stdin = self.stdin.as_mut().context("flood-load was stopped")?;
        stdin.write_all(b"count\n").await?;
        stdin.flush().await?;
        self.answer().await
    }

    async fn stop(&mut self) -> anyhow::Result<Counted> {
        drop(self.stdin.take());
        let counts = self.answer().await?;
        let _ = self.child.wait().await;
        Ok(counts)
    }
}

/// `bench flood-load`: floods creates over `connections` HTTP/1.1
/// connections as the `flooder` user until stdin closes (see [`Flood`]).
pub async fn load(args: LoadArgs) -> anyhow::Result<()> {
    use tokio::io::AsyncBufReadExt as _;
    let credentials =
        crate::client::Credentials::from_kubeconfig(&args.kubeconfig)?.bearer(FLOOD_TOKEN);
    let flooder = Https::new(args.addr, &credentials, Protocol::Http1)?;
    let stop = Arc::new(AtomicBool::new(false));
    let counts = Arc::new(FloodCounts::default());
    let mut flood = tokio::task::JoinSet::new();
    for c in 0..args.connections {
        let (flooder, stop, counts) = (flooder.clone(), stop.clone(), counts.clone());
        let honor_retry_after = !args.ignore_retry_after;
        flood.spawn(async move {
            let mut i = 0u64;
            while !stop.load(Ordering::Relaxed) {
                let name = format!("f{c}-{i}");
                i += 1;
                match flooder
                    .send(
                        Method::POST,
                        "/api/v1/namespaces/flood/configmaps",
                        configmap(&name),
                    )
                    .await
                {
                    Ok(r) if r.status.as_u16() == 201 => {
                        counts.created.fetch_add(1, Ordering::Relaxed)
                    }
                    Ok(r) if r.status.as_u16() == 429 => {
                        // client-go sleeps for the Retry-After (1 s from
                        // APF) before it retries.
                        if let Some(secs) = r.retry_after.filter(|_| honor_retry_after) {
                            sleep_unless_stopped(&stop, Duration::from_secs(secs)).await;
                        }
                        counts.rejected.fetch_add(1, Ordering::Relaxed)
                    }
                    Ok(_) => counts.other.fetch_add(1, Ordering::Relaxed),
                    Err(_) => {
                        // A connection the server could not take yet;
                        // back off a little rather than spin.
                        tokio::time::sleep(Duration::from_millis(50)).await;
                        counts.errors.fetch_add(1, Ordering::Relaxed)
                    }
                };
            }
        });
    }
    let mut stdin = tokio::io::BufReader::new(tokio::io::stdin()).lines();
    while let Ok(Some(_)) = stdin.next_line().await {
        println!("{}", counts.read().line());
    }
    stop.store(true, Ordering::Relaxed);
    while flood.join_next().await.is_some() {}
    println!("{}", counts.read().line());
    Ok(())
}

/// Runs the benchmark; the report goes to stdout.
pub async fn run(args: Args) -> anyhow::Result<()> {
    let files = tempfile::tempdir().context("temp dir for the token file")?;
    let tokens = files.path().join("tokens.csv");
    std::fs::write(
        &tokens,
        format!("{FLOOD_TOKEN},flooder,flooder-uid\n{POLITE_TOKEN},polite,polite-uid\n"),
    )
    .context("writing the token file")?;
    eprintln!("bench flood: starting skein…");
    let mut flags = vec![format!("--token-auth-file={}", tokens.display())];
    flags.extend(args.skein_flags.iter().cloned());
    let skein = Skein::start_with(false, &flags).await?;
    let admin = skein.client(Protocol::H2)?;
    let binding = json!({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRoleBinding",
        "metadata": {"name": "bench-flood-edit"},
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "edit"},
        "subjects": [{"apiGroup": "rbac.authorization.k8s.io", "kind": "User", "name": "flooder"},
                     {"apiGroup": "rbac.authorization.k8s.io", "kind": "User", "name": "polite"}]});
    admin
        .expect(
            201,
            Method::POST,
            "/apis/rbac.authorization.k8s.io/v1/clusterrolebindings",
            Some(("application/json", Bytes::from(binding.to_string()))),
        )
        .await?;
    for ns in ["flood", "polite"] {
        let body = json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns,
            "annotations": {"skein.io/control-plane-only": "true"}}});
        admin
            .expect(
                201,
                Method::POST,
                "/api/v1/namespaces",
                Some(("application/json", Bytes::from(body.to_string()))),
            )
            .await?;
    }
    let addr = skein.server.addr;
    let polite = Https::new(addr, &skein.credentials.bearer(POLITE_TOKEN), Protocol::H2)?;
    let propagation = if args.members > 0 {
        eprintln!("bench flood: joining {} members…", args.members);
        Some(Propagation::start(&skein, &admin, args.members).await?)
    } else {
        None
    };
    let stream = |prefix: &'static str| {
        let propagation = propagation.as_ref();
        async move {
            match propagation {
                Some(p) => Some(p.stream(args.propagation_rate, args.seconds, prefix).await),
                None => None,
            }
        }
    };
    // Warm the polite connection, the caches and the syncers.
    let _ = tokio::join!(paced(&polite, args.rate, 1.0, "warm"), async {
        match propagation.as_ref() {
            Some(p) => Some(p.stream(args.propagation_rate, 1.0, "warm").await),
            None => None,
        }
    });

    eprintln!("bench flood: the polite user alone ({} s)…", args.seconds);
    let (alone, alone_prop) = tokio::join!(
        paced(&polite, args.rate, args.seconds, "alone"),
        stream("alone")
    );

    eprintln!("bench flood: {} flooding connections…", args.connections);
    let mut flood = Flood::start(&skein, &args)?;
    // Let the connections open before measuring.
    tokio::time::sleep(Duration::from_secs(3)).await;
    let before = flood.counts().await?;
    eprintln!(
        "bench flood: the polite user under the flood ({} s)…",
        args.seconds
    );
    let t = Instant::now();
    let (under, under_prop) = tokio::join!(
        paced(&polite, args.rate, args.seconds, "under"),
        stream("under")
    );
    let window = t.elapsed().as_secs_f64();
    let after = flood.counts().await?;
    let during = (
        after.created.saturating_sub(before.created),
        after.rejected.saturating_sub(before.rejected),
    );
    let counts = flood.stop().await?;
    let open = crate::client::connections_to(addr.port());

    let mut out = String::new();
    let _ = writeln!(out, "## bench flood\n");
    let mut facts = report::machine_facts();
    facts.extend(skein_facts());
    facts.push(("skein flags", format!("{:?}", args.skein_flags)));
    facts.push((
        "flooding connections",
        format!(
            "{} (one `bench flood-load` process at nice {})",
            args.connections, args.flood_nice
        ),
    ));
    facts.push((
        "propagation",
        if args.members > 0 {
            format!(
                "{} members storing copies (one helper process); {} ConfigMaps/s on all of them, created by an admin",
                args.members, args.propagation_rate
            )
        } else {
            "none (--members 0)".to_owned()
        },
    ));
    facts.push((
        "flood after a 429",
        if args.ignore_retry_after {
            "retries at once".to_owned()
        } else {
            "waits its Retry-After, as client-go".to_owned()
        },
    ));
    facts.push((
        "polite rate",
        format!("{}/s for {} s per phase", args.rate, args.seconds),
    ));
    report::facts_table(&mut out, &facts);
    let _ = writeln!(out);
    let _ = writeln!(out, "| stream | p50 ms | p99 ms | ok | failed |");
    let _ = writeln!(out, "| --- | --- | --- | --- | --- |");
    let mut rows: Vec<(String, &Phase)> = vec![
        ("polite user, alone".to_owned(), &alone),
        ("polite user, under the flood".to_owned(), &under),
    ];
    if let (Some(a), Some(u)) = (&alone_prop, &under_prop) {
        rows.push((
            format!(
                "propagation to {} members ({}/s), alone",
                args.members, args.propagation_rate
            ),
            a,
        ));
        rows.push(("propagation, under the flood".to_owned(), u));
    }
    for (label, p) in rows {
        let _ = writeln!(
            out,
            "| {label} | {:.1} | {:.1} | {} | {} |",
            p.quantile(0.5),
            p.quantile(0.99),
            p.latencies.len(),
            p.failures.len()
        );
    }
    let ratio = under.quantile(0.99) / alone.quantile(0.99);
    let _ = writeln!(out);
    let _ = writeln!(
        out,
        "p99 under the flood / alone: {ratio:.2}× (target: under 200 ms and within 2×: {})",
        if under.quantile(0.99) < 200.0 && ratio <= 2.0 {
            "PASS"
        } else {
            "MISS"
        }
    );
    if let (Some(a), Some(u)) = (&alone_prop, &under_prop) {
        let r = u.quantile(0.99) / a.quantile(0.99);
        let _ = writeln!(
            out,
            "propagation p99 under the flood / alone: {r:.2}× (target: within 1.5×: {})",
            if r <= 1.5 && u.failures.is_empty() {
                "PASS"
            } else {
                "MISS"
            }
        );
    }
    let _ = writeln!(
        out,
        "flood during the measured window ({window:.1} s): {} created ({:.0}/s), {} answered 429; \
         whole flood: {} created, {} 429, {} other answers, {} connection errors; {} connections open at the end",
        during.0,
        during.0 as f64 / window,
        during.1,
        counts.created,
        counts.rejected,
        counts.other,
        counts.errors,
        open,
    );
    let phases = [
        ("polite alone", Some(&alone)),
        ("polite under", Some(&under)),
        ("propagation alone", alone_prop.as_ref()),
        ("propagation under", under_prop.as_ref()),
    ];
    for (label, p) in phases.into_iter().filter_map(|(l, p)| Some((l, p?))) {
        if let Some(first) = p.failures.first() {
            let _ = writeln!(
                out,
                "{label}: {} failures, first: {first}",
                p.failures.len()
            );
        }
    }
    print!("{out}");
    Ok(())
}
