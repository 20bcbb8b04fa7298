//! `bench fleet`: one federation with a fleet of members (issue 31's
//! scale table).
//!
//! Members are `skein serve --role=member` servers that only store copies,
//! each with its own store, port, certificates and identity, served by one
//! helper process (`bench fleet-host`, in-process servers: a hundred
//! processes would not fit two CPUs). The federation reaches each over
//! HTTPS through its own kubeconfig, as any member; it cannot tell them
//! from separate processes.
//!
//! For each member count N (default 10, 50, 100; a fresh federation and
//! fleet each time): Clusters are labelled `region=r0…` in groups of 10,
//! one team Namespace per region selects its region
//! (`skein.io/cluster-selector`), so each object lands on 10 clusters;
//! Namespace `global` sends its objects to every cluster. The mix, in
//! turn: Divided Deployments (10 replicas), Duplicated ConfigMaps,
//! Secrets and Services, plus 100 ConfigMaps in `global`. A watch on every
//! Placement timestamps on arrival the first event where every copy is
//! synced.
//!
//! Phases and what they measure:
//! 1. paced: `--rate` objects/s for `--paced-seconds`: p50/p99 submit
//!    (the create's 201) to applied;
//! 2. burst: the rest of `--objects` (and the `global` ConfigMaps) at
//!    `--concurrency`: objects and copies per second until all applied,
//!    p99; the federation's CPU per object and member, RSS, federation
//!    store writes and member requests per object;
//! 3. restart: SIGTERM, start on the same data: time until every cluster's
//!    queue is empty with every copy applied, and member writes meanwhile
//!    (0 when nothing changed);
//! 4. a member lost (m0 partitioned away by its fault proxy: black hole
//!    and every open connection cut): time from `Ready=False` to its
//!    Divided replicas re-planned elsewhere, against the grace period;
//!    then it rejoins (healed, its store as it was): time until its copies
//!    are applied again, and its write requests against the copies it
//!    holds.
//!
//! Between the burst and the restart, m1 answers 500 ms late (its fault
//! proxy) while more objects are paced in: the p99 of objects away from
//! its region, against the first paced phase's.

use std::collections::{BTreeMap, HashMap};
use std::fmt::Write as _;
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use anyhow::Context as _;
use base64::Engine as _;
use bytes::Bytes;
use futures::StreamExt as _;
use hyper::Method;
use serde_json::{Value, json};
use skein_tests::server::Server;
use tokio::io::AsyncBufReadExt as _;

use crate::client::{Credentials, Https, Protocol};
use crate::cluster::Skein;
use crate::members::{cpu_ticks, post, rss_kib};
use crate::propagation::{quantile, resource_requests, store_writes};

/// `bench fleet` flags.
#[derive(clap::Args)]
pub struct Args {
    /// Member counts to run, each with a fresh federation and fleet.
    #[arg(long, value_delimiter = ',', default_values_t = [10usize, 50, 100])]
    members: Vec<usize>,
    /// Federated objects per run (besides the 100 `global` ConfigMaps).
    #[arg(long, default_value_t = 10_000)]
    objects: usize,
    /// Paced phase: objects per second.
    #[arg(long, default_value_t = 20.0)]
    rate: f64,
    /// Paced phase: how long.
    #[arg(long, default_value_t = 30)]
    paced_seconds: u64,
    /// Burst phase: creates in flight.
    #[arg(long, default_value_t = 32)]
    concurrency: usize,
    /// How long a phase may take before what was reached is reported.
    #[arg(long, default_value_t = 600)]
    timeout_seconds: u64,
    /// Skip the restart and member-loss phases.
    #[arg(long)]
    scale_only: bool,
    /// Copy the federation's log here at the end of each run (set
    /// `RUST_LOG`, e.g. `info,skein_federation::sync=debug`, to trace
    /// the syncers' writes).
    #[arg(long)]
    federation_log: Option<PathBuf>,
}

/// Clusters per region (each team Namespace selects one region).
const REGION_SIZE: usize = 10;
/// ConfigMaps placed on every cluster.
const GLOBAL_OBJECTS: usize = 100;
/// The federation's probe period, failure threshold and grace period.
const PROBE_PERIOD: &str = "--cluster-probe-period=5s";
const GRACE: Duration = Duration::from_secs(20);

/// Flags of every member server.
const MEMBER_FLAGS: &[&str] = &[
    "--role=member",
    "--etcd-count-metric-poll-period=0s",
    "--access-log=false",
];

/// p99 submit-to-applied target at the paced rate.
const P99_TARGET: Duration = Duration::from_secs(2);
/// RSS target of the federation (KiB).
const RSS_TARGET_KIB: u64 = 1024 * 1024;
/// Restart target.
const RESTART_TARGET: Duration = Duration::from_secs(60);

// ---------------------------------------------------------------- the host

/// `bench fleet-host` flags (started by `bench fleet`).
#[derive(clap::Args)]
pub struct HostArgs {
    /// How many members.
    #[arg(long)]
    count: usize,
    /// Where their data directories go (`m0`, `m1`…).
    #[arg(long)]
    dir: PathBuf,
}

/// Serves `count` members in this process; prints `member I PORT` as each
/// is ready, then `ready`; serves until its stdin closes.
pub async fn host(args: HostArgs) -> anyhow::Result<()> {
    let mut servers: Vec<Server> = Vec::with_capacity(args.count);
    for chunk in (0..args.count).collect::<Vec<_>>().chunks(10) {
        let starts = chunk.iter().map(|i| {
            let data = args.dir.join(format!("m{i}"));
            async move { Server::start_in_process(&data, MEMBER_FLAGS).await }
        });
        for (i, s) in chunk.iter().zip(futures::future::join_all(starts).await) {
            println!("member {i} {}", s.addr.port());
            servers.push(s);
        }
    }
    println!("ready");
    std::io::stdout().flush().context("stdout")?;
    // Serve until the bench closes our stdin (or goes away).
    let mut lines = tokio::io::BufReader::new(tokio::io::stdin()).lines();
    while lines.next_line().await.context("stdin")?.is_some() {}
    drop(servers);
    Ok(())
}

/// The helper process and its members.
pub(crate) struct Fleet {
    child: tokio::process::Child,
    /// Held open: the host serves until it closes.
    _stdin: tokio::process::ChildStdin,
    dir: PathBuf,
    ports: Vec<u16>,
    /// The fault proxies the federation reaches members [`LOST`] and
    /// [`SLOW`] through, by index.
    proxies: BTreeMap<usize, skein_tests::fault::FaultProxy>,
}

/// The member partitioned away and healed (a member lost and rejoining).
const LOST: usize = 0;
/// The member made to answer 500 ms late.
const SLOW: usize = 1;

impl Fleet {
    pub(crate) async fn start(count: usize, dir: &Path) -> anyhow::Result<Fleet> {
        let exe = std::env::current_exe().context("the bench binary")?;
        let mut child = tokio::process::Command::new(exe)
            .args(["fleet-host", "--count", &count.to_string(), "--dir"])
            .arg(dir)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .kill_on_drop(true)
            .spawn()
            .context("starting bench fleet-host")?;
        let stdin = child.stdin.take().context("fleet-host stdin")?;
        let out = child.stdout.take().context("fleet-host stdout")?;
        let mut stdout = tokio::io::BufReader::new(out).lines();
        let mut ports = vec![0u16; count];
        let deadline = Duration::from_secs(60 + 3 * count as u64);
        tokio::time::timeout(deadline, async {
            loop {
                let line = stdout
                    .next_line()
                    .await
                    .context("fleet-host output")?
                    .context("fleet-host ended before its members were ready")?;
                let w: Vec<&str> = line.split_whitespace().collect();
                match w.as_slice() {
                    ["ready"] => return anyhow::Ok(()),
                    ["member", i, port] => {
                        let i: usize = i.parse().context("member index")?;
                        *ports.get_mut(i).context("member index")? =
                            port.parse().context("member port")?;
                    }
                    _ => {}
                }
            }
        })
        .await
        .with_context(|| format!("{count} members not ready within {deadline:?}"))??;
        let mut proxies = BTreeMap::new();
        for m in [LOST, SLOW].into_iter().filter(|m| *m < count) {
            let upstream = std::net::SocketAddr::from(([127, 0, 0, 1], ports[m]));
            let proxy = skein_tests::fault::FaultProxy::start(upstream)
                .with_context(|| format!("the proxy of member {m}"))?;
            proxies.insert(m, proxy);
        }
        Ok(Fleet {
            child,
            _stdin: stdin,
            dir: dir.to_path_buf(),
            ports,
            proxies,
        })
    }

    fn kubeconfig(&self, i: usize) -> PathBuf {
        self.dir.join(format!("m{i}")).join("admin.kubeconfig")
    }

    fn client(&self, i: usize) -> anyhow::Result<Https> {
        let creds = Credentials::from_kubeconfig(&self.kubeconfig(i))?;
        let addr = std::net::SocketAddr::from(([127, 0, 0, 1], self.ports[i]));
        Https::new(addr, &creds, Protocol::H2)
    }
}

impl Drop for Fleet {
    fn drop(&mut self) {
        let _ = self.child.start_kill();
    }
}

// ------------------------------------------------------------- the bench

/// What one object is, for its expected placement.
#[derive(Clone)]
pub(crate) struct Obj {
    pub(crate) ns: String,
    pub(crate) kind: &'static str,
    pub(crate) plural: &'static str,
    pub(crate) group_path: &'static str,
    pub(crate) name: String,
    /// Clusters it must land on.
    pub(crate) expect: usize,
}

impl Obj {
    /// `ns/placement-name`, as the Placement watch reports it.
    pub(crate) fn placement(&self) -> String {
        format!("{}/{}-{}", self.ns, self.kind.to_lowercase(), self.name)
    }

    fn body(&self, i: usize) -> Value {
        let meta = json!({"name": self.name, "namespace": self.ns});
        match self.kind {
            "Deployment" => json!({
                "apiVersion": "apps/v1", "kind": "Deployment", "metadata": meta,
                "spec": {
                    "replicas": 10,
                    "selector": {"matchLabels": {"app": self.name}},
                    "template": {"metadata": {"labels": {"app": self.name}},
                        "spec": {"containers": [{"name": "web", "image": "nginx:1.27"}]}},
                },
            }),
            "Secret" => json!({"apiVersion": "v1", "kind": "Secret", "metadata": meta,
                "data": {"key": base64::engine::general_purpose::STANDARD.encode(format!("value-{i}"))}}),
            "Service" => json!({"apiVersion": "v1", "kind": "Service", "metadata": meta,
                "spec": {"selector": {"app": self.name}, "ports": [{"port": 80, "targetPort": 8080}]}}),
            _ => json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": meta,
                "data": {"index": i.to_string(), "payload": "x".repeat(256)}}),
        }
    }

    fn path(&self) -> String {
        format!("{}/namespaces/{}/{}", self.group_path, self.ns, self.plural)
    }
}

/// The objects of a run with `regions` regions: `objects` team objects in
/// turn over the kinds and regions, then the `global` ConfigMaps.
fn objects(objects: usize, regions: usize, members: usize) -> Vec<Obj> {
    let kinds: [(&str, &str, &str); 4] = [
        ("Deployment", "deployments", "/apis/apps/v1"),
        ("ConfigMap", "configmaps", "/api/v1"),
        ("Secret", "secrets", "/api/v1"),
        ("Service", "services", "/api/v1"),
    ];
    let per_region = members.min(REGION_SIZE);
    let mut out: Vec<Obj> = (0..objects)
        .map(|i| {
            let (kind, plural, group_path) = kinds[i % kinds.len()];
            Obj {
                ns: format!("team-{}", i % regions),
                kind,
                plural,
                group_path,
                name: format!("o-{i:05}"),
                expect: per_region,
            }
        })
        .collect();
    out.extend((0..GLOBAL_OBJECTS).map(|i| Obj {
        ns: "global".into(),
        kind: "ConfigMap",
        plural: "configmaps",
        group_path: "/api/v1",
        name: format!("g-{i:03}"),
        expect: members,
    }));
    out
}

/// What the Placement watch saw: per `ns/name`, when every copy was first
/// synced (with the expected count reached).
#[derive(Default)]
pub(crate) struct Progress {
    pub(crate) applied: HashMap<String, Instant>,
    pub(crate) expected: HashMap<String, usize>,
    /// Per Deployment's Placement (`ns/deployment-…`), its latest
    /// `status.decision`: (cluster, replicas).
    pub(crate) decisions: HashMap<String, Vec<(String, i64)>>,
}

/// One member count's figures.
struct Outcome {
    members: usize,
    objects: usize,
    copies: usize,
    paced: usize,
    paced_p50: Option<f64>,
    paced_p99: Option<f64>,
    burst_objects: usize,
    burst_seconds: Option<f64>,
    burst_p99: Option<f64>,
    applied: usize,
    create_errors: usize,
    first_error: Option<String>,
    rss_idle_kib: u64,
    rss_kib: u64,
    hwm_kib: u64,
    /// From the join (every Cluster usable) to the federation sending no
    /// member request for [`QUIET`] (`None`: not within 120 s).
    settled: Option<Duration>,
    cpu_seconds: f64,
    fed_writes: u64,
    member_requests: u64,
    /// p99 of paced objects away from the slow member's region: without
    /// and with it answering 500 ms late, and the p99 of those on it.
    slow: Option<(Option<f64>, Option<f64>, Option<f64>)>,
    restart: Option<Restart>,
    loss: Option<Loss>,
}

struct Restart {
    idle_after: Option<Duration>,
    member_writes: u64,
    /// The same by verb and resource (summed over the members).
    by: BTreeMap<(String, String), u64>,
}

struct Loss {
    not_ready_after: Duration,
    replanned_after: Option<Duration>,
    rejoined_after: Option<Duration>,
    /// The lost member's write requests from its loss to converged, by
    /// verb and resource.
    rejoin_writes: BTreeMap<(String, String), u64>,
    held: usize,
    /// Deployment copies whose share moved away while the member was lost
    /// (their scale-down to 0 is a rightful write on rejoin).
    moving: u64,
}

impl Loss {
    /// Rejoin writes that scaled a moved share to 0 (at most one per
    /// Deployment copy whose share moved).
    fn scaled_down(&self) -> u64 {
        let applies = self
            .rejoin_writes
            .get(&("APPLY".to_owned(), "deployments".to_owned()))
            .copied()
            .unwrap_or(0);
        applies.min(self.moving)
    }

    /// Rejoin writes that carried nothing new: every other write.
    fn re_applied(&self) -> u64 {
        self.rejoin_writes.values().sum::<u64>() - self.scaled_down()
    }
}

/// Runs the benchmark and prints its report.
pub async fn run(args: Args) -> anyhow::Result<()> {
    anyhow::ensure!(
        args.members.iter().all(|n| *n >= 1) && args.rate > 0.0 && args.concurrency > 0,
        "members, rate and concurrency must be positive"
    );
    let started = Instant::now();
    let mut outcomes = Vec::new();
    for &n in &args.members {
        eprintln!("== {n} members");
        outcomes.push(run_one(&args, n).await?);
    }
    print!("{}", render(&args, &outcomes, started.elapsed()));
    Ok(())
}

async fn run_one(args: &Args, n: usize) -> anyhow::Result<Outcome> {
    let flags = vec![
        PROBE_PERIOD.to_owned(),
        format!("--cluster-grace-period={}s", GRACE.as_secs()),
        "--access-log=false".to_owned(),
    ];
    let mut fed = Skein::start_with(false, &flags).await?;
    let mut api = fed.client(Protocol::H2)?;
    let mut fed_pid = fed.server.pid().context("the federation's pid")?;
    let (rss_idle_kib, _) = rss_kib(fed_pid)?;

    eprintln!("  starting {n} members in one helper process");
    let dir = tempfile::tempdir().context("temp dir for members")?;
    let fleet = Fleet::start(n, dir.path()).await?;
    let regions = n.div_ceil(REGION_SIZE);
    eprintln!("  joining them ({regions} regions)");
    post(
        &api,
        "/api/v1/namespaces",
        &json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "skein-system"}}),
        &[201, 409],
    )
    .await?;
    for i in 0..n {
        join(&api, &fleet, i, regions).await?;
    }
    crate::propagation::wait_usable(&api, n, Duration::from_secs(120 + n as u64)).await?;
    for r in 0..regions {
        post(
            &api,
            "/api/v1/namespaces",
            &json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": format!("team-{r}"),
                "annotations": {"skein.io/cluster-selector": format!("region=r{r}")}}}),
            &[201],
        )
        .await?;
    }
    post(
        &api,
        "/api/v1/namespaces",
        &json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "global",
            "annotations": {"skein.io/clusters": "*"}}}),
        &[201],
    )
    .await?;

    let all = objects(args.objects, regions, n);
    let copies: usize = all.iter().map(|o| o.expect).sum();
    let progress = Arc::new(Mutex::new(Progress {
        applied: HashMap::new(),
        expected: all.iter().map(|o| (o.placement(), o.expect)).collect(),
        decisions: HashMap::new(),
    }));
    let watch = follow(&fed.server, progress.clone()).await?;

    // The paced phase measures a settled fleet: the syncers' first lists
    // of every kind on every member (after a join, an object's sync waits
    // for its kind's list) have landed once the federation has sent no
    // member request for QUIET.
    let joined = Instant::now();
    let settled = wait_quiet(&api, Duration::from_secs(120)).await?;
    eprintln!(
        "  settled {:.1} s after the join",
        joined.elapsed().as_secs_f64()
    );
    let paced = ((args.rate * args.paced_seconds as f64) as usize).min(all.len());
    eprintln!("  paced: {paced} objects at {}/s", args.rate);
    let limit = Duration::from_secs(args.timeout_seconds);
    let paced_submits = submit(&api, &all[..paced], args.concurrency, args.rate).await;
    wait_applied(&progress, &all[..paced], limit).await;
    let cpu0 = cpu_ticks(fed_pid)?;
    let writes0: u64 = store_writes(&api).await?.values().sum();
    let members0 = fleet_requests(&fleet, n).await?;
    eprintln!("  burst: {} objects", all.len() - paced);
    let t_burst = Instant::now();
    let burst_submits = submit(&api, &all[paced..], args.concurrency, 0.0).await;
    let burst_done = wait_applied(&progress, &all[paced..], limit).await;
    let burst_seconds = burst_done.then(|| t_burst.elapsed().as_secs_f64());
    let cpu_seconds = (cpu_ticks(fed_pid)? - cpu0) as f64 / 100.0;
    let fed_writes = store_writes(&api).await?.values().sum::<u64>() - writes0;
    let member_requests = fleet_requests(&fleet, n).await? - members0;
    let (rss_kib_now, hwm_kib) = rss_kib(fed_pid)?;

    let latencies = |submits: &[(String, Result<Instant, String>)]| -> Vec<Option<f64>> {
        let p = progress
            .lock()
            .map(|p| p.applied.clone())
            .unwrap_or_default();
        submits
            .iter()
            .filter_map(|(k, r)| r.as_ref().ok().map(|t| (k, t)))
            .map(|(k, t)| {
                p.get(k)
                    .map(|a| a.saturating_duration_since(*t).as_secs_f64())
            })
            .collect()
    };
    let paced_lat = latencies(&paced_submits);
    let burst_lat = latencies(&burst_submits);
    let errors: Vec<&String> = paced_submits
        .iter()
        .chain(&burst_submits)
        .filter_map(|(_, r)| r.as_ref().err())
        .collect();
    let applied = progress
        .lock()
        .map(|p| {
            all.iter()
                .filter(|o| p.applied.contains_key(&o.placement()))
                .count()
        })
        .unwrap_or(0);

    // The slow member: m1 (region r0) answers 500 ms late; paced objects
    // away from r0 must keep their p99.
    let mut slow = None;
    let mut slow_objects: Vec<Obj> = Vec::new();
    if let Some(proxy) = fleet.proxies.get(&SLOW).filter(|_| regions > 1) {
        let away = |submits: &[(String, Result<Instant, String>)], on_r0: bool| {
            let kept: Vec<(String, Result<Instant, String>)> = submits
                .iter()
                .filter(|(k, _)| k.starts_with("team-0/") == on_r0)
                .cloned()
                .collect();
            quantile(&latencies(&kept), 0.99)
        };
        let base = away(&paced_submits, false);
        eprintln!(
            "  slow member: m{SLOW} answers 500 ms late; {paced} more objects at {}/s",
            args.rate
        );
        proxy.set(skein_tests::fault::Fault::Latency(Duration::from_millis(
            500,
        )));
        let more: Vec<Obj> = objects(paced, regions, n)
            .into_iter()
            .take(paced)
            .map(|mut o| {
                o.name = o.name.replacen("o-", "s-", 1);
                o
            })
            .collect();
        if let Ok(mut p) = progress.lock() {
            for o in &more {
                p.expected.insert(o.placement(), o.expect);
            }
        }
        let slow_submits = submit(&api, &more, args.concurrency, args.rate).await;
        wait_applied(&progress, &more, limit).await;
        proxy.set(skein_tests::fault::Fault::None);
        slow = Some((base, away(&slow_submits, false), away(&slow_submits, true)));
        slow_objects = more;
    }
    watch.abort();

    let mut restart = None;
    let mut loss = None;
    if !args.scale_only && applied == all.len() {
        eprintln!("  restart");
        // From a quiet fleet: what the federation still had to do before
        // the restart is not counted as the restart's.
        let all_copies = copies + slow_objects.iter().map(|o| o.expect).sum::<usize>();
        wait_idle(&api, n, all_copies, Instant::now(), limit).await?;
        tokio::time::sleep(Duration::from_secs(2)).await;
        let before = fleet_writes_by(&fleet, n).await?;
        let data = fed.server.data_dir.clone();
        fed.server
            .stop_with(nix::sys::signal::Signal::SIGTERM, Duration::from_secs(30))
            .await;
        let t = Instant::now();
        let extra: Vec<&str> = flags.iter().map(String::as_str).collect();
        fed.server = Server::start(&data, &extra).await;
        api = fed.client(Protocol::H2)?;
        fed_pid = fed.server.pid().context("the federation's pid")?;
        let idle_after = wait_idle(&api, n, all_copies, t, limit).await?;
        // Anything late would show in the writes too.
        tokio::time::sleep(Duration::from_secs(5)).await;
        let by = skein_tests::metrics::growth(&before, &fleet_writes_by(&fleet, n).await?);
        restart = Some(Restart {
            idle_after,
            member_writes: by.values().sum(),
            by,
        });

        eprintln!("  member m{LOST} lost (partitioned)");
        let held = copies_on(&api, "m0").await?;
        // Its Divided shares move away for good (`rebalance: false`): each
        // such copy is rightly scaled to 0 when it is back.
        let moving = divided_shares(&api, "team-0", "m0")
            .await?
            .iter()
            .filter(|(_, on)| *on > 0)
            .count() as u64;
        let writes_before = member_writes_by(&fleet.client(LOST)?).await?;
        // A Placement watch on the federation as it runs now (the first
        // ended with its restart); it starts with every Placement.
        let decisions = Arc::new(Mutex::new(Progress::default()));
        let watch = follow(&fed.server, decisions.clone()).await?;
        let proxy = fleet
            .proxies
            .get(&LOST)
            .context("the lost member's proxy")?;
        proxy.partition();
        let t_stop = Instant::now();
        let not_ready_after = wait_ready(&api, "m0", false, limit).await?;
        let t_nr = Instant::now();
        let replanned = wait_replanned(&decisions, "team-0", "m0", GRACE + limit).await;
        let replanned_after = replanned.then(|| t_nr.elapsed());
        watch.abort();
        eprintln!("  m{LOST} rejoins (healed)");
        proxy.heal();
        let t_start = Instant::now();
        wait_ready(&api, "m0", true, limit).await?;
        let expected_m0 = all
            .iter()
            .chain(&slow_objects)
            .filter(|o| o.ns == "team-0" || o.ns == "global")
            .count();
        let rejoined = wait_copies(&api, "m0", expected_m0, limit).await?;
        tokio::time::sleep(Duration::from_secs(3)).await;
        let rejoin_writes = skein_tests::metrics::growth(
            &writes_before,
            &member_writes_by(&fleet.client(LOST)?).await?,
        );
        loss = Some(Loss {
            not_ready_after: not_ready_after.max(t_nr - t_stop),
            replanned_after,
            rejoined_after: rejoined.then(|| t_start.elapsed()),
            rejoin_writes,
            held,
            moving,
        });
    }
    let _ = fed_pid;
    if let Some(to) = &args.federation_log {
        std::fs::copy(fed.server.data_dir.join("skein.log"), to)
            .with_context(|| format!("copying the federation's log to {}", to.display()))?;
    }
    Ok(Outcome {
        members: n,
        objects: all.len(),
        copies,
        paced,
        paced_p50: quantile(&paced_lat, 0.5),
        paced_p99: quantile(&paced_lat, 0.99),
        burst_objects: all.len() - paced,
        burst_seconds,
        burst_p99: quantile(&burst_lat, 0.99),
        applied,
        create_errors: errors.len(),
        first_error: errors.first().map(|e| (*e).clone()),
        rss_idle_kib,
        rss_kib: rss_kib_now,
        hwm_kib,
        settled,
        cpu_seconds,
        fed_writes,
        member_requests,
        slow,
        restart,
        loss,
    })
}

/// Creates the member's kubeconfig Secret and its Cluster, labelled with
/// its region.
pub(crate) async fn join(
    api: &Https,
    fleet: &Fleet,
    i: usize,
    regions: usize,
) -> anyhow::Result<()> {
    let name = format!("m{i}");
    let mut kubeconfig =
        std::fs::read_to_string(fleet.kubeconfig(i)).context("a member's admin.kubeconfig")?;
    if let Some(proxy) = fleet.proxies.get(&i) {
        kubeconfig = proxy.kubeconfig(&kubeconfig);
    }
    let secret = json!({
        "apiVersion": "v1", "kind": "Secret",
        "metadata": {"name": format!("cluster-{name}-kubeconfig"), "namespace": "skein-system"},
        "data": {"kubeconfig": base64::engine::general_purpose::STANDARD.encode(kubeconfig)},
    });
    post(
        api,
        "/api/v1/namespaces/skein-system/secrets",
        &secret,
        &[201],
    )
    .await?;
    let cluster = json!({
        "apiVersion": "federation.skein.io/v1alpha1", "kind": "Cluster",
        "metadata": {"name": name, "labels": {"region": format!("r{}", (i / REGION_SIZE) % regions)}},
        "spec": {"kubeconfigSecretRef": {"namespace": "skein-system", "name": format!("cluster-{name}-kubeconfig")}},
    });
    post(
        api,
        "/apis/federation.skein.io/v1alpha1/clusters",
        &cluster,
        &[201],
    )
    .await
}

/// Creates `objs`, `concurrency` in flight, at `rate` per second (0: as
/// fast as that allows); each placement key with the time its create
/// returned 201, or the error.
pub(crate) async fn submit(
    api: &Https,
    objs: &[Obj],
    concurrency: usize,
    rate: f64,
) -> Vec<(String, Result<Instant, String>)> {
    let t0 = Instant::now();
    futures::stream::iter(objs.iter().enumerate().map(|(i, o)| {
        let api = api.clone();
        let body = Bytes::from(o.body(i).to_string());
        let (key, path) = (o.placement(), o.path());
        async move {
            if rate > 0.0 {
                tokio::time::sleep_until((t0 + Duration::from_secs_f64(i as f64 / rate)).into())
                    .await;
            }
            let r = match api
                .send(Method::POST, &path, Some(("application/json", body)))
                .await
            {
                Ok(reply) if reply.status.as_u16() == 201 => Ok(Instant::now()),
                Ok(reply) => Err(format!(
                    "{}: {}",
                    reply.status,
                    crate::client::excerpt(&reply.body)
                )),
                Err(e) => Err(format!("{e:#}")),
            };
            (key, r)
        }
    }))
    .buffer_unordered(if rate > 0.0 {
        objs.len().max(1)
    } else {
        concurrency
    })
    .collect()
    .await
}

/// Waits until every one of `objs` is applied (or `limit`); whether all were.
pub(crate) async fn wait_applied(
    progress: &Mutex<Progress>,
    objs: &[Obj],
    limit: Duration,
) -> bool {
    let deadline = Instant::now() + limit;
    loop {
        let done = progress
            .lock()
            .map(|p| {
                objs.iter()
                    .filter(|o| p.applied.contains_key(&o.placement()))
                    .count()
            })
            .unwrap_or(0);
        if done == objs.len() {
            return true;
        }
        if Instant::now() > deadline {
            eprintln!("  only {done} of {} applied within {limit:?}", objs.len());
            return false;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// Watches every Placement; records the first event of each where
/// `summary.clusters == synced ==` its expected count, and the latest
/// decision of each Deployment's.
pub(crate) async fn follow(
    fed: &Server,
    progress: Arc<Mutex<Progress>>,
) -> anyhow::Result<tokio::task::JoinHandle<()>> {
    let client = fed
        .client_builder(true)
        .timeout(Duration::from_secs(7200))
        .build()
        .context("a watch client")?;
    let url =
        fed.url("/apis/federation.skein.io/v1alpha1/placements?watch=true&timeoutSeconds=7200");
    let mut response = client
        .get(url)
        .send()
        .await
        .context("watching Placements")?;
    anyhow::ensure!(
        response.status().as_u16() == 200,
        "watching Placements: {}",
        response.status()
    );
    Ok(tokio::spawn(async move {
        let mut buf: Vec<u8> = Vec::new();
        while let Ok(Some(chunk)) = response.chunk().await {
            let now = Instant::now();
            buf.extend_from_slice(&chunk);
            while let Some(end) = buf.iter().position(|b| *b == b'\n') {
                let line: Vec<u8> = buf.drain(..=end).collect();
                let Ok(event) = serde_json::from_slice::<Value>(&line) else {
                    continue;
                };
                let o = &event["object"];
                let key = format!(
                    "{}/{}",
                    o["metadata"]["namespace"].as_str().unwrap_or_default(),
                    o["metadata"]["name"].as_str().unwrap_or_default()
                );
                let field = |k: &str| o["status"]["summary"][k].as_u64().unwrap_or(0) as usize;
                let Ok(mut p) = progress.lock() else { continue };
                if key.contains("/deployment-") {
                    let decision = o["status"]["decision"]["clusters"]
                        .as_array()
                        .into_iter()
                        .flatten()
                        .map(|c| {
                            (
                                c["name"].as_str().unwrap_or_default().to_owned(),
                                c["replicas"].as_i64().unwrap_or(0),
                            )
                        })
                        .collect();
                    p.decisions.insert(key.clone(), decision);
                }
                if let Some(&want) = p.expected.get(&key)
                    && field("clusters") == want
                    && field("synced") == want
                {
                    p.applied.entry(key).or_insert(now);
                }
            }
        }
        eprintln!("  the Placement watch ended");
    }))
}

/// The federation's `/metrics`, as (series with labels → value).
async fn fed_metrics(api: &Https) -> anyhow::Result<BTreeMap<String, f64>> {
    let body = api
        .expect(200, Method::GET, "/metrics", None)
        .await
        .context("the federation's /metrics")?;
    Ok(String::from_utf8_lossy(&body)
        .lines()
        .filter(|l| l.starts_with("skein_federation_"))
        .filter_map(|l| {
            let (k, v) = l.rsplit_once(' ')?;
            Some((k.to_owned(), v.parse().ok()?))
        })
        .collect())
}

/// Applied (or Ready) copies the federation reports on `cluster`.
async fn copies_on(api: &Https, cluster: &str) -> anyhow::Result<usize> {
    let m = fed_metrics(api).await?;
    Ok(["Applied", "Ready"]
        .iter()
        .filter_map(|s| {
            m.get(&format!(
                "skein_federation_copies{{cluster=\"{cluster}\",state=\"{s}\"}}"
            ))
        })
        .sum::<f64>() as usize)
}

/// How long the federation must send no member request to be settled.
const QUIET: Duration = Duration::from_secs(2);

/// Waits until the federation has sent no member request (its
/// `skein_federation_member_request_duration_seconds` counts) for
/// [`QUIET`]; the time it took, or `None` at `limit`.
async fn wait_quiet(api: &Https, limit: Duration) -> anyhow::Result<Option<Duration>> {
    let t0 = Instant::now();
    let mut last: Option<(f64, Instant)> = None;
    loop {
        let m = fed_metrics(api).await?;
        let sent: f64 = m
            .iter()
            .filter(|(k, _)| {
                k.starts_with("skein_federation_member_request_duration_seconds_count")
            })
            .map(|(_, v)| *v)
            .sum();
        match last {
            Some((n, since)) if n == sent => {
                if since.elapsed() >= QUIET {
                    return Ok(Some(t0.elapsed()));
                }
            }
            _ => last = Some((sent, Instant::now())),
        }
        if t0.elapsed() > limit {
            return Ok(None);
        }
        tokio::time::sleep(Duration::from_millis(250)).await;
    }
}

/// Waits until every syncer's queue is empty and `copies` copies are
/// applied; the time since `t0`, or `None` at `limit`.
async fn wait_idle(
    api: &Https,
    members: usize,
    copies: usize,
    t0: Instant,
    limit: Duration,
) -> anyhow::Result<Option<Duration>> {
    loop {
        if let Ok(m) = fed_metrics(api).await {
            let queues: Vec<f64> = m
                .iter()
                .filter(|(k, _)| k.starts_with("skein_federation_sync_queue_depth{"))
                .map(|(_, v)| *v)
                .collect();
            let applied: f64 = m
                .iter()
                .filter(|(k, _)| {
                    k.starts_with("skein_federation_copies{")
                        && (k.contains("state=\"Applied\"") || k.contains("state=\"Ready\""))
                })
                .map(|(_, v)| *v)
                .sum();
            if queues.len() == members
                && queues.iter().all(|q| *q == 0.0)
                && applied as usize >= copies
            {
                return Ok(Some(t0.elapsed()));
            }
        }
        if t0.elapsed() > limit {
            return Ok(None);
        }
        tokio::time::sleep(Duration::from_millis(250)).await;
    }
}

/// Waits until `cluster`'s Ready condition is `ready`; the time it took.
async fn wait_ready(
    api: &Https,
    cluster: &str,
    ready: bool,
    limit: Duration,
) -> anyhow::Result<Duration> {
    let t0 = Instant::now();
    let want = if ready { "True" } else { "False" };
    loop {
        let body = api
            .expect(
                200,
                Method::GET,
                &format!("/apis/federation.skein.io/v1alpha1/clusters/{cluster}"),
                None,
            )
            .await?;
        let c: Value = serde_json::from_slice(&body).context("a Cluster")?;
        let is = c["status"]["conditions"]
            .as_array()
            .into_iter()
            .flatten()
            .any(|x| x["type"] == "Ready" && x["status"] == want);
        if is {
            return Ok(t0.elapsed());
        }
        anyhow::ensure!(
            t0.elapsed() < limit,
            "{cluster} not Ready={want} within {limit:?}"
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

/// Each Divided Deployment of `ns` as its Placement's decision reads:
/// (replicas placed in all, replicas on `cluster`).
async fn divided_shares(api: &Https, ns: &str, cluster: &str) -> anyhow::Result<Vec<(i64, i64)>> {
    let body = api
        .expect(
            200,
            Method::GET,
            &format!("/apis/federation.skein.io/v1alpha1/namespaces/{ns}/placements"),
            None,
        )
        .await?;
    let list: Value = serde_json::from_slice(&body).context("Placements")?;
    Ok(list["items"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|p| {
            p["metadata"]["name"]
                .as_str()
                .is_some_and(|n| n.starts_with("deployment-"))
        })
        .map(|p| {
            let clusters = p["status"]["decision"]["clusters"]
                .as_array()
                .cloned()
                .unwrap_or_default();
            let replicas = |c: &Value| c["replicas"].as_i64().unwrap_or(0);
            (
                clusters.iter().map(replicas).sum(),
                clusters
                    .iter()
                    .filter(|c| c["name"] == cluster)
                    .map(replicas)
                    .sum(),
            )
        })
        .collect())
}

/// Waits until every Divided Deployment of `ns` is planned with all its
/// 10 replicas and none on `cluster`, as the Placement watch last showed
/// it (no list per check: listing a thousand Placements four times a
/// second was load of its own on the federation being measured); whether
/// that happened within `limit`.
async fn wait_replanned(
    progress: &Arc<Mutex<Progress>>,
    ns: &str,
    cluster: &str,
    limit: Duration,
) -> bool {
    let t0 = Instant::now();
    let prefix = format!("{ns}/deployment-");
    loop {
        let moved = progress.lock().is_ok_and(|p| {
            let mut shares = p
                .decisions
                .iter()
                .filter(|(k, _)| k.starts_with(&prefix))
                .map(|(_, d)| d)
                .peekable();
            shares.peek().is_some()
                && shares.all(|d| {
                    d.iter().map(|(_, r)| r).sum::<i64>() == 10
                        && d.iter().all(|(c, r)| c != cluster || *r == 0)
                })
        });
        if moved {
            return true;
        }
        if t0.elapsed() > limit {
            return false;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// Waits until the federation reports `want` copies applied on `cluster`
/// and its queue empty; whether that happened within `limit`.
async fn wait_copies(
    api: &Https,
    cluster: &str,
    want: usize,
    limit: Duration,
) -> anyhow::Result<bool> {
    let t0 = Instant::now();
    loop {
        let m = fed_metrics(api).await?;
        let applied = ["Applied", "Ready"]
            .iter()
            .filter_map(|s| {
                m.get(&format!(
                    "skein_federation_copies{{cluster=\"{cluster}\",state=\"{s}\"}}"
                ))
            })
            .sum::<f64>() as usize;
        let queue = m
            .get(&format!(
                "skein_federation_sync_queue_depth{{cluster=\"{cluster}\"}}"
            ))
            .copied()
            .unwrap_or(1.0);
        if applied >= want && queue == 0.0 {
            return Ok(true);
        }
        if t0.elapsed() > limit {
            return Ok(false);
        }
        tokio::time::sleep(Duration::from_millis(250)).await;
    }
}

/// The sum of every member's resource requests.
async fn fleet_requests(fleet: &Fleet, n: usize) -> anyhow::Result<u64> {
    let mut total = 0;
    for i in 0..n {
        let body = fleet
            .client(i)?
            .expect(200, Method::GET, "/metrics", None)
            .await
            .context("a member's /metrics")?;
        total += resource_requests(&String::from_utf8_lossy(&body));
    }
    Ok(total)
}

/// Every member's write requests, summed by verb and resource.
async fn fleet_writes_by(
    fleet: &Fleet,
    n: usize,
) -> anyhow::Result<BTreeMap<(String, String), u64>> {
    let mut total: BTreeMap<(String, String), u64> = BTreeMap::new();
    for i in 0..n {
        for (k, v) in member_writes_by(&fleet.client(i)?).await? {
            *total.entry(k).or_default() += v;
        }
    }
    Ok(total)
}

/// A member's write requests so far by verb and resource.
async fn member_writes_by(api: &Https) -> anyhow::Result<BTreeMap<(String, String), u64>> {
    let body = api
        .expect(200, Method::GET, "/metrics", None)
        .await
        .context("a member's /metrics")?;
    Ok(skein_tests::metrics::writes_by_resource(
        &String::from_utf8_lossy(&body),
    ))
}

fn secs(v: Option<f64>) -> String {
    v.map_or_else(|| "—".into(), |v| format!("{v:.2}"))
}

fn verdict(ok: bool) -> &'static str {
    if ok { "PASS" } else { "MISS" }
}

/// The printed report.
fn render(args: &Args, outcomes: &[Outcome], total: Duration) -> String {
    let mut w = String::new();
    let _ = writeln!(
        w,
        "# bench fleet\n\n{} objects per run ({} team objects: Divided Deployments of 10 \
         replicas, Duplicated ConfigMaps, Secrets and Services in turn, each Namespace \
         selecting one region of {REGION_SIZE} clusters; plus {GLOBAL_OBJECTS} ConfigMaps on \
         every cluster). Members store copies only (`skein serve --role=member`, no \
         simulation), all served by one helper process. Paced phase {} objects/s for {} s, \
         then a burst at {} in flight. Federation flags: `{PROBE_PERIOD} \
         --cluster-grace-period={}s`.\n",
        args.objects + GLOBAL_OBJECTS,
        args.objects,
        args.rate,
        args.paced_seconds,
        args.concurrency,
        GRACE.as_secs()
    );
    let _ = writeln!(
        w,
        "| members | objects | copies | applied | paced: objects, p50 / p99 (s) | burst: objects/s, copies/s | burst p99 (s) | RSS idle → after (MiB) | RSS per member / per 1k objects (MiB) | CPU ms per object per member | fed. store writes per object | member requests per object |"
    );
    let _ = writeln!(
        w,
        "|---:|---:|---:|---:|---|---|---:|---|---|---:|---:|---:|"
    );
    for o in outcomes {
        let rate = o.burst_seconds.map(|s| o.burst_objects as f64 / s);
        let copy_rate = o
            .burst_seconds
            .map(|s| (o.copies as f64 * o.burst_objects as f64 / o.objects as f64) / s);
        let mib = |k: u64| k as f64 / 1024.0;
        let grown = mib(o.rss_kib.saturating_sub(o.rss_idle_kib));
        let _ = writeln!(
            w,
            "| {} | {} | {} | {} | {}: {} / {} | {} , {} | {} | {:.0} → {:.0} (peak {:.0}) | {:.2} / {:.1} | {:.3} | {:.2} | {:.2} |",
            o.members,
            o.objects,
            o.copies,
            o.applied,
            o.paced,
            secs(o.paced_p50),
            secs(o.paced_p99),
            rate.map_or("—".into(), |r| format!("{r:.0}")),
            copy_rate.map_or("—".into(), |r| format!("{r:.0}")),
            secs(o.burst_p99),
            mib(o.rss_idle_kib),
            mib(o.rss_kib),
            mib(o.hwm_kib),
            grown / o.members as f64,
            grown / (o.objects as f64 / 1000.0),
            o.cpu_seconds * 1000.0
                / o.burst_objects.max(1) as f64
                / (o.copies as f64 / o.objects as f64),
            o.fed_writes as f64 / o.burst_objects.max(1) as f64,
            o.member_requests as f64 / o.burst_objects.max(1) as f64,
        );
    }
    let _ = writeln!(
        w,
        "\nCPU is the federation's (utime + stime) over the burst, per object and per copy it \
         makes; store writes and member requests are counted over the burst too. RSS per \
         member and per 1,000 objects divide the growth from the idle federation by each \
         (both grow together here, so each is an upper bound).\n"
    );
    for o in outcomes {
        let _ = writeln!(
            w,
            "At {} members the paced phase started {} after the join (every Cluster usable, \
             then no member request from the federation for {} s: the syncers' first lists of \
             every kind have landed; an object created before waits for its kind's list).\n",
            o.members,
            o.settled
                .map_or("—".to_owned(), |d| format!("{:.1} s", d.as_secs_f64())),
            QUIET.as_secs()
        );
    }
    let _ = writeln!(
        w,
        "| members | restart: idle after (s) | member writes during restart | member lost → Ready=False (s) | Ready=False → Divided re-planned (s) | rejoin → converged (s) | rejoin writes / copies held | of which shares scaled to 0 / re-applies |"
    );
    let _ = writeln!(w, "|---:|---:|---:|---:|---:|---:|---|---|");
    for o in outcomes {
        let (idle, rw) = o.restart.as_ref().map_or(("—".into(), "—".into()), |r| {
            (
                r.idle_after
                    .map_or("—".into(), |d| format!("{:.1}", d.as_secs_f64())),
                r.member_writes.to_string(),
            )
        });
        let (nr, rp, rj, rjw, why) = o.loss.as_ref().map_or(
            ("—".into(), "—".into(), "—".into(), "—".into(), "—".into()),
            |l| {
                let s = |d: Option<Duration>| {
                    d.map_or("—".into(), |d| format!("{:.1}", d.as_secs_f64()))
                };
                (
                    format!("{:.1}", l.not_ready_after.as_secs_f64()),
                    s(l.replanned_after),
                    s(l.rejoined_after),
                    format!("{} / {}", l.rejoin_writes.values().sum::<u64>(), l.held),
                    format!("{} / {}", l.scaled_down(), l.re_applied()),
                )
            },
        );
        let _ = writeln!(
            w,
            "| {} | {idle} | {rw} | {nr} | {rp} | {rj} | {rjw} | {why} |",
            o.members
        );
    }
    for o in outcomes {
        if let Some(r) = o.restart.as_ref().filter(|r| r.member_writes > 0) {
            let by: Vec<String> =
                r.by.iter()
                    .map(|((verb, res), n)| format!("{verb} {res}: {n}"))
                    .collect();
            let _ = writeln!(
                w,
                "\nMember writes during the restart at {} members, by verb and resource: {}.",
                o.members,
                by.join(", ")
            );
        }
        if let Some(l) = &o.loss {
            let by: Vec<String> = l
                .rejoin_writes
                .iter()
                .map(|((verb, res), n)| format!("{verb} {res}: {n}"))
                .collect();
            let _ = writeln!(
                w,
                "\nRejoin writes at {} members, by verb and resource: {}.",
                o.members,
                if by.is_empty() {
                    "none".to_owned()
                } else {
                    by.join(", ")
                }
            );
        }
    }
    if let Some(o) = outcomes.iter().max_by_key(|o| o.members) {
        let _ = writeln!(w, "\nThresholds at {} members:\n", o.members);
        let _ = writeln!(w, "| threshold | measured | verdict |\n|---|---|---|");
        let _ = writeln!(
            w,
            "| every object applied where its placement says | {} of {} | {} |",
            o.applied,
            o.objects,
            verdict(o.applied == o.objects)
        );
        let _ = writeln!(
            w,
            "| paced p99 submit-to-applied < {} s | {} s | {} |",
            P99_TARGET.as_secs(),
            secs(o.paced_p99),
            verdict(o.paced_p99.is_some_and(|p| p < P99_TARGET.as_secs_f64()))
        );
        let _ = writeln!(
            w,
            "| federation RSS < 1 GiB | {:.0} MiB (peak {:.0}) | {} |",
            o.rss_kib as f64 / 1024.0,
            o.hwm_kib as f64 / 1024.0,
            verdict(o.hwm_kib < RSS_TARGET_KIB)
        );
        if let Some(r) = &o.restart {
            let _ = writeln!(
                w,
                "| restart idle within 60 s, no re-apply | {} s, {} member writes | {} |",
                r.idle_after
                    .map_or("—".into(), |d| format!("{:.1}", d.as_secs_f64())),
                r.member_writes,
                verdict(r.idle_after.is_some_and(|d| d <= RESTART_TARGET) && r.member_writes == 0)
            );
        }
        if let Some(l) = &o.loss {
            let bound = GRACE + Duration::from_secs(5);
            let _ = writeln!(
                w,
                "| lost member's Divided replicas re-planned within grace + 5 s ({} s) | {} s | {} |",
                bound.as_secs(),
                l.replanned_after
                    .map_or("—".into(), |d| format!("{:.1}", d.as_secs_f64())),
                verdict(l.replanned_after.is_some_and(|d| d <= bound))
            );
            let _ = writeln!(
                w,
                "| rejoining member converges without re-applying copies it holds | {} re-applied of {} held ({} moved shares scaled to 0) | {} |",
                l.re_applied(),
                l.held,
                l.scaled_down(),
                verdict(l.rejoined_after.is_some() && l.re_applied() == 0)
            );
        }
    }
    let _ = writeln!(
        w,
        "\nA slow member (m{SLOW}, region r0, reached through a proxy adding 500 ms to every \
         answer) while {} objects/s more are created for {} s: p99 submit-to-applied of the \
         objects away from r0, without and with it, and of those on r0.\n",
        args.rate, args.paced_seconds
    );
    let _ = writeln!(
        w,
        "| members | away from r0: p99 without (s) | with the slow member (s) | ratio | on r0 (s) |\n|---:|---:|---:|---:|---:|"
    );
    for o in outcomes {
        if let Some((base, with, on)) = o.slow {
            let ratio = base.zip(with).map(|(b, w)| w / b);
            let _ = writeln!(
                w,
                "| {} | {} | {} | {} | {} |",
                o.members,
                secs(base),
                secs(with),
                ratio.map_or("—".into(), |r| format!("{r:.2}×")),
                secs(on)
            );
        }
    }
    if let Some(o) = outcomes.iter().max_by_key(|o| o.members)
        && let Some((base, with, _)) = o.slow
    {
        let ratio = base.zip(with).map(|(b, w)| w / b);
        let _ = writeln!(
            w,
            "\nAt {} members the others' p99 with the slow member is {} of it without (target ≤ 1.2×): {}.",
            o.members,
            ratio.map_or("—".into(), |r| format!("{r:.2}×")),
            verdict(ratio.is_some_and(|r| r <= 1.2))
        );
    }
    if let Some(e) = outcomes.iter().find_map(|o| o.first_error.as_ref()) {
        let n: usize = outcomes.iter().map(|o| o.create_errors).sum();
        let _ = writeln!(w, "\n{n} creates failed; the first: {e}");
    }
    let _ = writeln!(w, "\nTotal run: {:.0?}.", total);
    w
}
