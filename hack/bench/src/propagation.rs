//! `bench propagation`: one federation fanning Deployments out to member
//! processes on this machine (issue 12's benchmark).
//!
//! For each member count (default 3 and 10; a fresh federation and fresh
//! members each time) and each mode (`Duplicated` with 1 replica, then
//! `Divided` with 3 replicas over every cluster), `--objects` Deployments
//! (default 1,000) are created on the federation over HTTPS with the admin
//! certificate, `--concurrency` (default 16) in flight, each mode in its own
//! Namespace. A watch on that Namespace's Placements, opened before the
//! first create, timestamps every event on arrival; an object is *applied*
//! the first time its Placement reports `status.summary.clusters ==
//! synced == members`, and *ready* when `ready == members` too.
//!
//! Measured per (members, mode): the time until every create returned,
//! until every object was applied and ready; the fan-out rate (objects per
//! second until all applied); p50/p99 of submit (the create's response) to
//! applied; the members' API requests per object and member (the delta of
//! their `apiserver_request_total` over resource requests, so probes of
//! `/readyz` and the benchmark's own `/metrics` scrapes are left out); the
//! federation's CPU (utime + stime from `/proc/<pid>/stat`) and RSS.
//!
//! The machine's ceiling, in the same run: before any member joins, the
//! same number of Deployments created the same way on the first federation,
//! marked `skein.io/control-plane-only` (stored, never fanned out). The
//! report prints the fan-out rate as a share of it.

use std::collections::HashMap;
use std::fmt::Write as _;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use anyhow::Context as _;
use bytes::Bytes;
use futures::StreamExt as _;
use hyper::Method;
use serde_json::{Value, json};
use skein_tests::server::Server;

use crate::client::{Credentials, Https, Protocol};
use crate::cluster::Skein;
use crate::members::{cpu_ticks, join, post, rss_kib};
use crate::report;

/// `bench propagation` flags.
#[derive(clap::Args)]
pub struct Args {
    /// Member counts to run, each with a fresh federation and members.
    #[arg(long, value_delimiter = ',', default_values_t = [3usize, 10])]
    members: Vec<usize>,
    /// Deployments per (members, mode).
    #[arg(long, default_value_t = 1000)]
    objects: usize,
    /// Creates in flight on the federation.
    #[arg(long, default_value_t = 16)]
    concurrency: usize,
    /// How long one (members, mode) may take until every object is ready;
    /// what was reached by then is reported.
    #[arg(long, default_value_t = 150)]
    timeout_seconds: u64,
    /// Modes to run, in order.
    #[arg(long, value_enum, value_delimiter = ',', default_values_t = [Mode::Duplicated, Mode::Divided])]
    modes: Vec<Mode>,
    /// Members without `--simulate-workloads` (a diagnostic: they store
    /// the copies only, so a run ends when every object is applied and the
    /// syncer's own limit shows; nothing becomes ready).
    #[arg(long)]
    no_simulate: bool,
    /// Offered load: creates per second (0: as fast as `--concurrency`
    /// allows). Below the fan-out rate, p99 shows the latency of a copy
    /// rather than the queue behind a burst.
    #[arg(long, default_value_t = 0.0)]
    rate: f64,
    /// The members' `--sim-nice` (0–19): above 0 their simulated kubelets
    /// and controllers yield the CPU to their API servers (in a real
    /// cluster they run on other machines), so the fan-out is measured
    /// apart from the simulated workloads, which then take longer to be
    /// ready.
    #[arg(long, default_value_t = 0, value_parser = clap::value_parser!(i32).range(0..=19))]
    sim_nice: i32,
    /// Flags added to the federation's `skein serve` (a diagnostic, e.g.
    /// `--federation-flag=--sync-concurrency=16`); shown in the report.
    #[arg(long = "federation-flag", allow_hyphen_values = true)]
    federation_flags: Vec<String>,
}

/// p99 submit-to-applied target with [`TARGET_MEMBERS`] members.
const P99_TARGET: Duration = Duration::from_secs(1);
/// Fan-out rate target (objects per second) with [`TARGET_MEMBERS`] members.
const RATE_TARGET: f64 = 200.0;
/// The member count the targets are stated for.
const TARGET_MEMBERS: usize = 10;

/// The flags of every member process: simulated workloads with room for
/// every Pod (4 Nodes of 1,000 Pods), Pods Ready 200 ms after binding, no
/// object-count poll.
const MEMBER_FLAGS: &[&str] = &[
    "--role=member",
    "--simulate-workloads",
    "--sim-nodes=4",
    "--sim-node-pods=1000",
    "--sim-pod-ready-delay=200ms",
    "--etcd-count-metric-poll-period=0s",
];

/// [`MEMBER_FLAGS`] with `--sim-nice` when `sim_nice` is above 0, without
/// any `--sim*` flag when `no_simulate`.
fn member_flags(no_simulate: bool, sim_nice: i32) -> Vec<String> {
    let nice = (sim_nice > 0).then(|| format!("--sim-nice={sim_nice}"));
    MEMBER_FLAGS
        .iter()
        .map(|f| (*f).to_owned())
        .chain(nice)
        .filter(|f| !no_simulate || !f.starts_with("--sim"))
        .collect()
}

/// How replicas are placed.
#[derive(Clone, Copy, PartialEq, Eq, Debug, clap::ValueEnum)]
enum Mode {
    /// One replica, whole on every cluster.
    Duplicated,
    /// Three replicas, split over every cluster (most get 0).
    Divided,
}

impl Mode {
    /// The `skein.io/replica-scheduling` value.
    fn name(self) -> &'static str {
        match self {
            Mode::Duplicated => "Duplicated",
            Mode::Divided => "Divided",
        }
    }

    /// `spec.replicas` of the federated Deployment.
    fn replicas(self) -> u32 {
        match self {
            Mode::Duplicated => 1,
            Mode::Divided => 3,
        }
    }
}

/// What one (members, mode) run measured.
struct Outcome {
    members: usize,
    mode: Mode,
    /// Deployments created successfully.
    created: usize,
    create_errors: usize,
    first_error: Option<String>,
    /// From the first create to the last create's response.
    submitted: Duration,
    /// From the first create until every created object was applied.
    all_applied: Option<Duration>,
    /// From the first create until every created object was ready.
    all_ready: Option<Duration>,
    applied: usize,
    ready: usize,
    /// Submit-to-applied per created object, seconds; `None`: never applied.
    latencies: Vec<Option<f64>>,
    /// Resource requests the members served over the run, all members.
    member_requests: u64,
    /// Store writes (create, update, delete) the federation made over the
    /// run, the benchmark's own creates included.
    federation_writes: u64,
    /// Federation CPU seconds over the run, and the run's length.
    cpu_seconds: f64,
    elapsed: f64,
    /// CPU seconds of every member process over the run (their API
    /// servers and, when simulating, their simulated workloads).
    member_cpu_seconds: f64,
    rss_kib: u64,
    hwm_kib: u64,
}

impl Outcome {
    /// CPU milliseconds the federation and its members spent per created
    /// object over the run (until all were ready, or applied when the
    /// members do not simulate workloads).
    fn cpu_ms_per_object(&self) -> f64 {
        1000.0 * (self.cpu_seconds + self.member_cpu_seconds) / self.created.max(1) as f64
    }

    /// Objects per second fanned out: created objects over the time until
    /// all were applied (`None` if some never were).
    fn rate(&self) -> Option<f64> {
        self.all_applied
            .map(|d| self.created as f64 / d.as_secs_f64().max(1e-9))
    }
}

/// First arrival times of each Placement's applied and ready states.
#[derive(Default)]
struct Progress {
    applied: HashMap<String, Instant>,
    ready: HashMap<String, Instant>,
}

/// Runs the benchmark and prints its report.
pub async fn run(args: Args) -> anyhow::Result<()> {
    anyhow::ensure!(
        args.objects > 0 && args.concurrency > 0,
        "--objects and --concurrency must be positive"
    );
    let started = Instant::now();
    let timeout = Duration::from_secs(args.timeout_seconds);
    let mut outcomes = Vec::new();
    let mut ceiling: Option<(f64, usize)> = None;
    for (round, &n) in args.members.iter().enumerate() {
        eprintln!("starting a federation for {n} members");
        let fed = Skein::start_with(false, &args.federation_flags).await?;
        let api = fed.client(Protocol::H2)?;
        let fed_pid = fed.server.pid().context("the federation's pid")?;
        if round == 0 {
            eprintln!("ceiling: {} control-plane-only creates", args.objects);
            ceiling = Some(measure_ceiling(&api, args.objects, args.concurrency).await?);
        }
        eprintln!("starting {n} members");
        let dir = tempfile::tempdir().context("temp dir for members")?;
        let mut members: Vec<Server> = Vec::with_capacity(n);
        for chunk in (0..n).collect::<Vec<_>>().chunks(10) {
            let starts = chunk.iter().map(|i| {
                let data = dir.path().join(format!("m{i}"));
                let flags = member_flags(args.no_simulate, args.sim_nice);
                async move {
                    let flags: Vec<&str> = flags.iter().map(String::as_str).collect();
                    Server::start(&data, &flags).await
                }
            });
            members.extend(futures::future::join_all(starts).await);
        }
        post(
            &api,
            "/api/v1/namespaces",
            &json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "skein-system"}}),
            &[201, 409],
        )
        .await?;
        for (i, m) in members.iter().enumerate() {
            join(&api, &format!("m{i}"), m).await?;
        }
        let joined = Instant::now();
        wait_usable(&api, n, Duration::from_secs(120)).await?;
        eprintln!(
            "  all {n} Ready with an inventory after {:.1?}",
            joined.elapsed()
        );
        let member_pids = members
            .iter()
            .map(|m| m.pid().context("a member's pid"))
            .collect::<anyhow::Result<Vec<u32>>>()?;
        let member_apis = members
            .iter()
            .map(|m| {
                let creds = Credentials::from_kubeconfig(&m.kubeconfig())?;
                Https::new(m.addr, &creds, Protocol::H2)
            })
            .collect::<anyhow::Result<Vec<_>>>()?;
        for &mode in &args.modes {
            eprintln!("{n} members, {}: {} Deployments", mode.name(), args.objects);
            let o = run_mode(
                &fed.server,
                &api,
                &Pids {
                    federation: fed_pid,
                    members: &member_pids,
                },
                &member_apis,
                mode,
                &args,
                timeout,
            )
            .await?;
            eprintln!(
                "  applied {}/{} in {:?}, ready {}/{} in {:?}",
                o.applied, o.created, o.all_applied, o.ready, o.created, o.all_ready
            );
            outcomes.push(o);
        }
        drop(members);
        drop(fed);
    }
    print!("{}", render(&args, &outcomes, ceiling, started.elapsed()));
    Ok(())
}

/// Creates `objects` control-plane-only Deployments at `concurrency`;
/// returns (creates per second, errors).
async fn measure_ceiling(
    api: &Https,
    objects: usize,
    concurrency: usize,
) -> anyhow::Result<(f64, usize)> {
    let ns = "ceiling";
    post(
        api,
        "/api/v1/namespaces",
        &json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns}}),
        &[201],
    )
    .await?;
    let t0 = Instant::now();
    let results = submit(api, ns, objects, concurrency, 0.0, |i| {
        deployment(
            &format!("ceiling-{i:05}"),
            ns,
            1,
            json!({"skein.io/control-plane-only": "true"}),
        )
    })
    .await;
    let elapsed = t0.elapsed().as_secs_f64();
    let ok = results.iter().filter(|(_, r)| r.is_ok()).count();
    Ok((ok as f64 / elapsed, objects - ok))
}

/// The processes whose CPU a run counts.
struct Pids<'a> {
    federation: u32,
    members: &'a [u32],
}

/// One (members, mode) run in a fresh Namespace.
async fn run_mode(
    fed: &Server,
    api: &Https,
    pids: &Pids<'_>,
    member_apis: &[Https],
    mode: Mode,
    args: &Args,
    timeout: Duration,
) -> anyhow::Result<Outcome> {
    let n = member_apis.len();
    let ns = format!("{}-{n}", mode.name().to_ascii_lowercase());
    post(
        api,
        "/api/v1/namespaces",
        &json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns}}),
        &[201],
    )
    .await?;
    let progress = Arc::new(Mutex::new(Progress::default()));
    let watcher = follow(fed, &ns, n, progress.clone()).await?;
    let requests_before = member_requests(member_apis).await?;
    let writes_before = store_writes(api).await?;
    let cpu_before = cpu_ticks(pids.federation)?;
    let member_cpu_before = member_ticks(pids.members)?;
    let t0 = Instant::now();
    let results = submit(api, &ns, args.objects, args.concurrency, args.rate, |i| {
        deployment(
            &format!("web-{i:05}"),
            &ns,
            mode.replicas(),
            json!({"skein.io/replica-scheduling": mode.name()}),
        )
    })
    .await;
    let submitted = t0.elapsed();
    let mut submits: HashMap<String, Instant> = HashMap::new();
    let mut create_errors = 0;
    let mut first_error = None;
    for (name, r) in results {
        match r {
            Ok(at) => {
                submits.insert(name, at);
            }
            Err(e) => {
                create_errors += 1;
                first_error.get_or_insert(e);
            }
        }
    }
    let created = submits.len();
    let deadline = t0 + timeout;
    loop {
        let (applied, ready) = counts(&progress, &submits);
        let done = if args.no_simulate { applied } else { ready };
        if done == created || Instant::now() >= deadline {
            if done < created {
                eprintln!("  timed out: {applied} applied, {ready} ready of {created}");
            }
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let elapsed = t0.elapsed().as_secs_f64();
    let cpu_after = cpu_ticks(pids.federation)?;
    let member_cpu_after = member_ticks(pids.members)?;
    watcher.abort();
    let requests_after = member_requests(member_apis).await?;
    let writes_after = store_writes(api).await?;
    // The federation's history ReplicaSets (one per Deployment that never
    // changed), a diagnostic on stderr.
    if let Ok(body) = api
        .expect(
            200,
            Method::GET,
            &format!("/apis/apps/v1/namespaces/{ns}/replicasets"),
            None,
        )
        .await
        && let Ok(list) = serde_json::from_slice::<Value>(&body)
    {
        let items = list["items"].as_array().map_or(0, Vec::len);
        let revisions: std::collections::BTreeMap<String, usize> = list["items"]
            .as_array()
            .into_iter()
            .flatten()
            .fold(Default::default(), |mut m, rs| {
                let r = rs["metadata"]["annotations"]["deployment.kubernetes.io/revision"]
                    .as_str()
                    .unwrap_or("none")
                    .to_owned();
                *m.entry(r).or_default() += 1;
                m
            });
        eprintln!("  history ReplicaSets on the federation: {items} (by revision: {revisions:?})");
    }
    // Which writes those were, per object (on stderr, a diagnostic).
    let per_object = |n: u64| n as f64 / args.objects as f64;
    let mut writes: Vec<(String, f64)> = writes_after
        .iter()
        .map(|(k, v)| {
            (
                k.clone(),
                per_object(v.saturating_sub(*writes_before.get(k).unwrap_or(&0))),
            )
        })
        .filter(|(_, v)| *v > 0.0)
        .collect();
    writes.sort_by(|a, b| b.1.total_cmp(&a.1));
    eprintln!(
        "  federation writes per object: {}",
        writes
            .iter()
            .map(|(k, v)| format!("{k} {v:.2}"))
            .collect::<Vec<_>>()
            .join(", ")
    );
    let (rss, hwm) = rss_kib(pids.federation)?;
    let p = progress
        .lock()
        .map_err(|_| anyhow::anyhow!("the watch task panicked"))?;
    let latencies: Vec<Option<f64>> = submits
        .iter()
        .map(|(name, at)| {
            p.applied
                .get(&placement_name(name))
                .map(|a| a.saturating_duration_since(*at).as_secs_f64())
        })
        .collect();
    let last = |m: &HashMap<String, Instant>| -> Option<Duration> {
        let times: Vec<Instant> = submits
            .keys()
            .map(|name| m.get(&placement_name(name)).copied())
            .collect::<Option<Vec<_>>>()?;
        times
            .into_iter()
            .max()
            .map(|t| t.saturating_duration_since(t0))
    };
    let (applied, ready) = counts_of(&p, &submits);
    Ok(Outcome {
        members: n,
        mode,
        created,
        create_errors,
        first_error,
        submitted,
        all_applied: if created > 0 { last(&p.applied) } else { None },
        all_ready: if created > 0 { last(&p.ready) } else { None },
        applied,
        ready,
        latencies,
        member_requests: requests_after.saturating_sub(requests_before),
        federation_writes: writes_after
            .values()
            .sum::<u64>()
            .saturating_sub(writes_before.values().sum::<u64>()),
        cpu_seconds: cpu_after.saturating_sub(cpu_before) as f64 / 100.0,
        elapsed,
        member_cpu_seconds: member_cpu_after.saturating_sub(member_cpu_before) as f64 / 100.0,
        rss_kib: rss,
        hwm_kib: hwm,
    })
}

/// A small Deployment named `name` in `ns`.
/// utime + stime of every member process, in clock ticks.
fn member_ticks(pids: &[u32]) -> anyhow::Result<u64> {
    pids.iter().map(|&p| cpu_ticks(p)).sum()
}

fn deployment(name: &str, ns: &str, replicas: u32, annotations: Value) -> Value {
    json!({
        "apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": {"name": name, "namespace": ns, "annotations": annotations},
        "spec": {
            "replicas": replicas,
            "selector": {"matchLabels": {"app": name}},
            "template": {
                "metadata": {"labels": {"app": name}},
                "spec": {"containers": [{"name": "web", "image": "nginx:1.25"}]},
            },
        },
    })
}

/// Creates `objects` Deployments `make(i)` in `ns`, `concurrency` in
/// flight; returns each name with the time its create returned 201, or the
/// error.
async fn submit(
    api: &Https,
    ns: &str,
    objects: usize,
    concurrency: usize,
    rate: f64,
    make: impl Fn(usize) -> Value,
) -> Vec<(String, Result<Instant, String>)> {
    let path = format!("/apis/apps/v1/namespaces/{ns}/deployments");
    let t0 = Instant::now();
    futures::stream::iter((0..objects).map(|i| {
        let body = make(i);
        let name = body["metadata"]["name"]
            .as_str()
            .unwrap_or_default()
            .to_owned();
        let (api, path) = (api.clone(), path.clone());
        async move {
            if rate > 0.0 {
                tokio::time::sleep_until((t0 + Duration::from_secs_f64(i as f64 / rate)).into())
                    .await;
            }
            let body = Bytes::from(body.to_string());
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
            (name, r)
        }
    }))
    .buffer_unordered(concurrency)
    .collect()
    .await
}

/// Opens a watch on the Placements of `ns` and follows it in a task that
/// records, on arrival, the first applied and ready event of each. Waits
/// (up to 5 s) until the watch is established.
async fn follow(
    fed: &Server,
    ns: &str,
    members: usize,
    progress: Arc<Mutex<Progress>>,
) -> anyhow::Result<tokio::task::JoinHandle<()>> {
    let client = fed
        .client_builder(true)
        .timeout(Duration::from_secs(3600))
        .build()
        .context("a watch client")?;
    let url = fed.url(&format!(
        "/apis/federation.skein.io/v1alpha1/namespaces/{ns}/placements?watch=true&timeoutSeconds=3600"
    ));
    let (open_tx, open_rx) = tokio::sync::oneshot::channel();
    let handle = tokio::spawn(async move {
        let mut response = match client.get(url).send().await {
            Ok(r) if r.status().as_u16() == 200 => r,
            Ok(r) => {
                let _ = open_tx.send(Err(format!("watching Placements: {}", r.status())));
                return;
            }
            Err(e) => {
                let _ = open_tx.send(Err(format!("watching Placements: {e}")));
                return;
            }
        };
        let _ = open_tx.send(Ok(()));
        let mut buf: Vec<u8> = Vec::new();
        loop {
            let chunk = match response.chunk().await {
                Ok(Some(c)) => c,
                Ok(None) => {
                    eprintln!("  the Placement watch ended");
                    return;
                }
                Err(e) => {
                    eprintln!("  the Placement watch failed: {e}");
                    return;
                }
            };
            let now = Instant::now();
            buf.extend_from_slice(&chunk);
            while let Some(end) = buf.iter().position(|b| *b == b'\n') {
                let line: Vec<u8> = buf.drain(..=end).collect();
                let Ok(event) = serde_json::from_slice::<Value>(&line) else {
                    continue;
                };
                if event["type"] == "ERROR" {
                    eprintln!("  watch error event: {}", event["object"]);
                }
                let Some((name, applied, ready)) = placement_state(&event, members) else {
                    continue;
                };
                if let Ok(mut p) = progress.lock() {
                    if applied {
                        p.applied.entry(name.clone()).or_insert(now);
                    }
                    if ready {
                        p.ready.entry(name).or_insert(now);
                    }
                }
            }
        }
    });
    match tokio::time::timeout(Duration::from_secs(5), open_rx).await {
        Ok(Ok(Err(e))) => anyhow::bail!(e),
        Ok(_) => {}
        Err(_) => eprintln!("  the Placement watch has no response headers after 5 s; going on"),
    }
    Ok(handle)
}

/// What one watch event says of its Placement: (name, every one of
/// `members` copies synced, every copy ready too). `None` for events that
/// are not an added or modified Placement.
fn placement_state(event: &Value, members: usize) -> Option<(String, bool, bool)> {
    let kind = event.get("type").and_then(Value::as_str)?;
    if kind != "ADDED" && kind != "MODIFIED" {
        return None;
    }
    let object = event.get("object")?;
    let name = object.pointer("/metadata/name").and_then(Value::as_str)?;
    let field = |k: &str| {
        object
            .pointer(&format!("/status/summary/{k}"))
            .and_then(Value::as_u64)
            .unwrap_or(0)
    };
    let all = members as u64;
    let placed = field("clusters") == all && all > 0;
    let synced = placed && field("synced") == all;
    Some((name.to_owned(), synced, synced && field("ready") == all))
}

/// The Placement of Deployment `name`.
fn placement_name(name: &str) -> String {
    format!("deployment-{name}")
}

/// (applied, ready) among the submitted objects.
fn counts(progress: &Mutex<Progress>, submits: &HashMap<String, Instant>) -> (usize, usize) {
    progress
        .lock()
        .map(|p| counts_of(&p, submits))
        .unwrap_or((0, 0))
}

fn counts_of(p: &Progress, submits: &HashMap<String, Instant>) -> (usize, usize) {
    let count = |m: &HashMap<String, Instant>| {
        submits
            .keys()
            .filter(|n| m.contains_key(&placement_name(n)))
            .count()
    };
    (count(&p.applied), count(&p.ready))
}

/// The sum of the members' `apiserver_request_total` over resource
/// requests.
async fn member_requests(apis: &[Https]) -> anyhow::Result<u64> {
    let mut total = 0;
    for api in apis {
        let body = api
            .expect(200, Method::GET, "/metrics", None)
            .await
            .context("a member's /metrics")?;
        total += resource_requests(&String::from_utf8_lossy(&body));
    }
    Ok(total)
}

/// The store writes `api`'s server made so far: the sum of its
/// `etcd_request_duration_seconds_count` samples for create, update and
/// delete operations.
pub(crate) async fn store_writes(
    api: &Https,
) -> anyhow::Result<std::collections::BTreeMap<String, u64>> {
    let body = api
        .expect(200, Method::GET, "/metrics", None)
        .await
        .context("the federation's /metrics")?;
    let mut by = std::collections::BTreeMap::new();
    for l in String::from_utf8_lossy(&body)
        .lines()
        .filter_map(|l| l.strip_prefix("etcd_request_duration_seconds_count{"))
    {
        let label = |name: &str| {
            l.split(&format!("{name}=\""))
                .nth(1)
                .and_then(|v| v.split('"').next())
        };
        let Some(op) = label("operation").filter(|op| ["create", "update", "delete"].contains(op))
        else {
            continue;
        };
        let Some(n) = l.rsplit(' ').next().and_then(|v| v.parse::<f64>().ok()) else {
            continue;
        };
        *by.entry(format!("{op} {}", label("type").unwrap_or("?")))
            .or_default() += n as u64;
    }
    Ok(by)
}

/// The sum of `apiserver_request_total` samples with a non-empty
/// `resource` label in a Prometheus text exposition.
pub(crate) fn resource_requests(metrics: &str) -> u64 {
    metrics
        .lines()
        .filter_map(|l| l.strip_prefix("apiserver_request_total{"))
        .filter(|l| {
            // `resource="…"` as a label of its own, not the tail of `subresource`.
            let value = l
                .strip_prefix("resource=\"")
                .or_else(|| l.split_once(",resource=\"").map(|(_, v)| v));
            value.is_some_and(|v| !v.starts_with('"'))
        })
        .filter_map(|l| l.rsplit(' ').next())
        .filter_map(|v| v.parse::<f64>().ok())
        .map(|v| v as u64)
        .sum()
}

/// The `q` quantile (0..=1) of `values`, where `None` (never happened)
/// counts as larger than any value; `None` if the quantile falls on one.
pub(crate) fn quantile(values: &[Option<f64>], q: f64) -> Option<f64> {
    if values.is_empty() {
        return None;
    }
    let mut sorted: Vec<f64> = values.iter().map(|v| v.unwrap_or(f64::INFINITY)).collect();
    sorted.sort_by(f64::total_cmp);
    let rank = ((q * sorted.len() as f64).ceil() as usize).clamp(1, sorted.len());
    let v = sorted[rank - 1];
    v.is_finite().then_some(v)
}

/// Waits until `n` Clusters are Ready and list their served resources.
pub(crate) async fn wait_usable(api: &Https, n: usize, limit: Duration) -> anyhow::Result<()> {
    let deadline = Instant::now() + limit;
    loop {
        let body = api
            .expect(
                200,
                Method::GET,
                "/apis/federation.skein.io/v1alpha1/clusters",
                None,
            )
            .await?;
        let list: Value = serde_json::from_slice(&body).context("the Cluster list")?;
        let usable = list["items"]
            .as_array()
            .into_iter()
            .flatten()
            .filter(|c| {
                let ready = c["status"]["conditions"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .any(|x| x["type"] == "Ready" && x["status"] == "True");
                ready && c.pointer("/status/servedResources").is_some()
            })
            .count();
        if usable == n {
            return Ok(());
        }
        anyhow::ensure!(
            Instant::now() < deadline,
            "only {usable} of {n} Clusters became Ready with an inventory within {limit:?}"
        );
        tokio::time::sleep(Duration::from_millis(250)).await;
    }
}

/// Seconds with millisecond precision, or `—`.
fn secs(d: Option<Duration>) -> String {
    d.map_or_else(|| "—".into(), |d| format!("{:.2}", d.as_secs_f64()))
}

/// The printed report.
fn render(
    args: &Args,
    outcomes: &[Outcome],
    ceiling: Option<(f64, usize)>,
    total: Duration,
) -> String {
    let mut w = String::new();
    let _ = writeln!(w, "# bench propagation\n");
    let mut facts = report::machine_facts();
    facts.extend(crate::cluster::skein_facts());
    facts.push((
        "federation",
        if args.federation_flags.is_empty() {
            "`skein serve` on its embedded store, default flags (probe period 10 s, \
             --sync-concurrency 8)"
                .into()
        } else {
            format!(
                "`skein serve {}` on its embedded store",
                args.federation_flags.join(" ")
            )
        },
    ));
    facts.push((
        "members",
        format!(
            "{} × `skein serve {}` (a fresh federation and members per count)",
            args.members
                .iter()
                .map(ToString::to_string)
                .collect::<Vec<_>>()
                .join(" then "),
            member_flags(args.no_simulate, args.sim_nice).join(" ")
        ),
    ));
    facts.push((
        "workload",
        format!(
            "{} Deployments per (members, mode), {} creates in flight over HTTP/2 with the \
             admin certificate; Duplicated: 1 replica on every member; Divided: 3 replicas \
             over every member (Duplicated first, then Divided, in separate Namespaces; the \
             Duplicated ones stay)",
            args.objects, args.concurrency
        ),
    ));
    if args.rate > 0.0 {
        facts.push((
            "offered load",
            format!("creates paced at {} per second", args.rate),
        ));
    }
    facts.push((
        "applied / ready",
        "first Placement watch event with `status.summary` clusters = synced = members \
         (/ and ready = members), timestamped on arrival"
            .into(),
    ));
    facts.push(("timeout per run", format!("{} s", args.timeout_seconds)));
    facts.push(("load average (end)", report::loadavg()));
    report::facts_table(&mut w, &facts);
    let _ = writeln!(w);
    let _ = writeln!(
        w,
        "| members | mode | created | all created (s) | all applied (s) | all ready (s) | \
         fan-out (objects/s) | submit→applied p50 / p99 (s) | member requests / object / member \
         | federation writes / object | federation CPU (s, share of one CPU) | members' CPU (s) \
         | CPU / object, federation + members (ms) | federation RSS / peak (MiB) |"
    );
    let _ = writeln!(
        w,
        "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |"
    );
    for o in outcomes {
        let mut created = o.created.to_string();
        if o.create_errors > 0 {
            let _ = write!(
                created,
                " ({} errors: {})",
                o.create_errors,
                o.first_error.as_deref().unwrap_or("?")
            );
        }
        let applied = match o.all_applied {
            Some(_) => secs(o.all_applied),
            None => format!("— ({} of {} applied)", o.applied, o.created),
        };
        let ready = match o.all_ready {
            Some(_) => secs(o.all_ready),
            None => format!("— ({} of {} ready)", o.ready, o.created),
        };
        let q = |p: f64| {
            quantile(&o.latencies, p).map_or_else(|| "> timeout".into(), |v| format!("{v:.3}"))
        };
        let per = o.member_requests as f64 / (o.created.max(1) * o.members) as f64;
        let writes = o.federation_writes as f64 / o.created.max(1) as f64;
        let _ = writeln!(
            w,
            "| {} | {} | {created} | {:.2} | {applied} | {ready} | {} | {} / {} | {per:.2} | \
             {writes:.1} | {:.1} ({:.0}%) | {:.1} | {:.1} | {:.0} / {:.0} |",
            o.members,
            o.mode.name(),
            o.submitted.as_secs_f64(),
            o.rate().map_or_else(|| "—".into(), |r| format!("{r:.0}")),
            q(0.5),
            q(0.99),
            o.cpu_seconds,
            100.0 * o.cpu_seconds / o.elapsed.max(1e-9),
            o.member_cpu_seconds,
            o.cpu_ms_per_object(),
            o.rss_kib as f64 / 1024.0,
            o.hwm_kib as f64 / 1024.0,
        );
    }
    let _ = writeln!(w);
    let _ = writeln!(
        w,
        "| measure | value | target | verdict |\n| --- | --- | --- | --- |"
    );
    if let Some((rate, errors)) = ceiling {
        let _ = writeln!(
            w,
            "| ceiling: control-plane-only creates on the federation, no members | {rate:.0} \
             objects/s{} | | |",
            if errors > 0 {
                format!(" ({errors} errors)")
            } else {
                String::new()
            }
        );
    }
    // A latency target means something only at the target's load: a run
    // paced below it is not judged. A paced run's fan-out rate is the
    // pace's, so only a burst judges the rate.
    let paced = args.rate > 0.0;
    for o in outcomes.iter().filter(|o| o.members == TARGET_MEMBERS) {
        let p99 = quantile(&o.latencies, 0.99);
        let _ = writeln!(
            w,
            "| {} members, {}: p99 submit→applied{} | {} | < {:.0} s at ≥ {RATE_TARGET:.0} \
             objects/s offered | {} |",
            o.members,
            o.mode.name(),
            if paced {
                format!(" (paced at {}/s)", args.rate)
            } else {
                " (a burst)".into()
            },
            p99.map_or_else(|| "> timeout".into(), |v| format!("{v:.3} s")),
            P99_TARGET.as_secs_f64(),
            if paced && args.rate < RATE_TARGET {
                "— (offered below the target rate)"
            } else if p99.is_some_and(|v| v < P99_TARGET.as_secs_f64()) {
                "PASS"
            } else {
                "MISS"
            }
        );
        if paced {
            continue;
        }
        let rate = o.rate();
        let ratio = match (rate, ceiling) {
            (Some(r), Some((c, _))) if c > 0.0 => {
                format!(" ({:.0}% of the ceiling)", 100.0 * r / c)
            }
            _ => String::new(),
        };
        let _ = writeln!(
            w,
            "| {} members, {}: objects fanned out per second | {}{ratio} | ≥ {RATE_TARGET:.0} | {} |",
            o.members,
            o.mode.name(),
            rate.map_or_else(|| "— (not all applied)".into(), |r| format!("{r:.0}")),
            if rate.is_some_and(|r| r >= RATE_TARGET) {
                "PASS"
            } else {
                "MISS"
            }
        );
    }
    // What the machine can sustain: every object costs the federation and
    // its members this much CPU in all (with simulating members, their
    // simulated workloads too), and the machine has `nproc` CPUs.
    let cpus = std::thread::available_parallelism().map_or(1, usize::from);
    for o in outcomes.iter().filter(|o| o.members == TARGET_MEMBERS) {
        let per = o.cpu_ms_per_object();
        let _ = writeln!(
            w,
            "| {} members, {}: CPU per object, federation + members, until all {} | {per:.1} ms \
             (sustainable on {cpus} CPUs: at most {:.0} objects/s) | ≤ {:.1} ms to sustain \
             {RATE_TARGET:.0}/s | |",
            o.members,
            o.mode.name(),
            if args.no_simulate { "applied" } else { "ready" },
            cpus as f64 * 1000.0 / per.max(1e-9),
            cpus as f64 * 1000.0 / RATE_TARGET,
        );
    }
    if !outcomes.iter().any(|o| o.members == TARGET_MEMBERS) {
        let _ = writeln!(
            w,
            "| targets (stated for {TARGET_MEMBERS} members) | not run | | |"
        );
    }
    let _ = writeln!(w, "\nTotal run: {:.0?}.", total);
    w
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_placement_is_applied_when_every_member_copy_is_synced() {
        let event = |t: &str, clusters: u64, synced: u64, ready: u64| {
            json!({"type": t, "object": {"metadata": {"name": "deployment-web"},
                "status": {"summary": {"clusters": clusters, "synced": synced, "ready": ready}}}})
        };
        assert_eq!(
            placement_state(&event("MODIFIED", 3, 3, 1), 3),
            Some(("deployment-web".into(), true, false))
        );
        assert_eq!(
            placement_state(&event("ADDED", 3, 3, 3), 3),
            Some(("deployment-web".into(), true, true))
        );
        // Placed on fewer clusters than expected: neither.
        assert_eq!(
            placement_state(&event("MODIFIED", 2, 2, 2), 3),
            Some(("deployment-web".into(), false, false))
        );
        assert_eq!(placement_state(&event("DELETED", 3, 3, 3), 3), None);
        let no_status = json!({"type": "ADDED", "object": {"metadata": {"name": "x"}}});
        assert_eq!(
            placement_state(&no_status, 3),
            Some(("x".into(), false, false))
        );
    }

    #[test]
    fn resource_requests_leave_out_non_resource_paths() {
        let text = "# HELP apiserver_request_total x\n\
            apiserver_request_total{code=\"200\",group=\"apps\",resource=\"deployments\",verb=\"PATCH\"} 7\n\
            apiserver_request_total{code=\"200\",group=\"\",resource=\"\",verb=\"GET\"} 100\n\
            apiserver_request_total{code=\"201\",resource=\"deployments\",subresource=\"\"} 5\n\
            apiserver_request_total{code=\"201\",group=\"\",resource=\"pods\",verb=\"POST\"} 3\n\
            apiserver_request_duration_seconds_count{resource=\"pods\"} 50\n";
        assert_eq!(resource_requests(text), 15);
    }

    #[test]
    fn quantiles_count_missing_values_as_largest() {
        let v = [Some(0.3), Some(0.1), Some(0.2), None];
        assert_eq!(quantile(&v, 0.5), Some(0.2));
        assert_eq!(quantile(&v, 0.75), Some(0.3));
        assert_eq!(quantile(&v, 0.99), None);
        assert_eq!(quantile(&[], 0.5), None);
    }
}
