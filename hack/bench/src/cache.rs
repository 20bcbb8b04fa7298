//! `bench cache`: what the watch cache (issue 13) promises, on both stores
//! in one run. For each of the embedded store and a real etcd it starts a
//! `skein serve` (with a static bearer token) and measures:
//!
//! - LIST of 1,000 1 KiB Secrets over HTTPS (HTTP/2, client certificate),
//!   beside a bare axum/rustls server ([`crate::bare`]) answering the very
//!   bytes of that LIST, read once from Skein and served pre-encoded: the
//!   ceiling of a LIST on this machine;
//! - the wrk workload of the issue: 16 HTTP/1.1 keep-alive connections over
//!   TLS with a bearer token, plain `GET` of a collection of 1,000 1 KiB
//!   ConfigMaps in one namespace; by this program's client and, when `wrk`
//!   is on PATH, by wrk too;
//! - LIST with a label selector matching 10 of 10,000 ConfigMaps;
//! - watch fan-out: N watchers (1,000) on one collection while writes arrive
//!   at a fixed rate (500/s): the write-to-delivery latency (from just before
//!   the write is sent to the moment a watcher reads its event, sampled on
//!   every 10th watcher) and the count of events delivered; and the closed-
//!   loop create rate with the watchers open against the rate with none;
//! - the server's RSS before and after the 12,000 1 KiB objects above, and
//!   20,000 more ConfigMaps (`--rss-extra`, listed in pages of 1,000), are
//!   created and listed, per object.
//!
//! Every LIST response is checked for its item count, every watcher's
//! event count is compared with the writes made.

use std::fmt::Write as _;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use anyhow::Context as _;
use bytes::Bytes;
use futures::StreamExt as _;
use http::Method;
use http_body_util::BodyExt as _;
use serde::Deserialize;
use serde::de::IgnoredAny;

use crate::bare::{self, BareServer};
use crate::client::{Https, Protocol};
use crate::cluster::{Skein, skein_facts};
use crate::measure::{Cell, run_cell};
use crate::report::{facts_table, lat, loadavg, machine_facts, ops};

/// Options of `bench cache`.
#[derive(clap::Args)]
pub struct Args {
    /// Seconds each throughput measurement runs.
    #[arg(long, default_value_t = 5.0)]
    seconds: f64,
    /// Seconds of unmeasured warm-up before each throughput measurement.
    #[arg(long, default_value_t = 1.0)]
    warmup: f64,
    /// Tasks issuing LISTs of Secrets (HTTP/2) in a loop.
    #[arg(long, default_value_t = 64)]
    concurrency: usize,
    /// Objects in each listed collection (Secrets, ConfigMaps).
    #[arg(long, default_value_t = 1000)]
    list_size: usize,
    /// More 1 KiB ConfigMaps, in a namespace of their own, created (and
    /// listed once) only so that the RSS per object is measured over more
    /// objects: the allocator's fixed costs and its noise (±4 MB between
    /// runs) weigh less.
    #[arg(long, default_value_t = 20_000)]
    rss_extra: usize,
    /// ConfigMaps in the namespace the label selector LIST reads (10 match).
    #[arg(long, default_value_t = 10_000)]
    selector_total: usize,
    /// Watchers of the fan-out measurement.
    #[arg(long, default_value_t = 1000)]
    watchers: usize,
    /// Writes per second while the watchers are open.
    #[arg(long, default_value_t = 500.0)]
    write_rate: f64,
    /// Measure only these stores (repeatable; both by default).
    #[arg(long, value_enum)]
    store: Vec<Backend>,
    /// Do not run wrk even if it is on PATH.
    #[arg(long)]
    no_wrk: bool,
    /// An extra flag for `skein serve` (repeatable), e.g. `--skein-flag=--role=member`
    /// to measure without the federation's controllers.
    #[arg(long, allow_hyphen_values = true)]
    skein_flag: Vec<String>,
    /// Stop after the RSS measurement (print it, skip the rest): for quick
    /// memory experiments.
    #[arg(long)]
    rss_only: bool,
}

/// `--rss-only` stopped a store's run after printing its memory figures.
#[derive(Debug)]
struct RssOnly;

impl std::fmt::Display for RssOnly {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("stopped after the RSS measurement (--rss-only)")
    }
}

impl std::error::Error for RssOnly {}

/// The stores Skein runs on.
#[derive(Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Backend {
    /// The embedded store (redb).
    Embedded,
    /// A real single-member etcd started for the run.
    Etcd,
}

impl Backend {
    fn name(self) -> &'static str {
        match self {
            Backend::Embedded => "embedded",
            Backend::Etcd => "etcd",
        }
    }
}

/// The bearer token of the run (a static token of `system:masters`).
const TOKEN: &str = "bench-cache-token";
const SECRETS_NS: &str = "cache-secrets";
const CONFIGMAPS_NS: &str = "cache-configmaps";
const SELECT_NS: &str = "cache-select";
const WATCH_NS: &str = "cache-watch";
const RSS_NS: &str = "cache-rss";
/// Objects' JSON size as sent.
const OBJECT_BYTES: usize = 1024;
/// Makes created names unique.
static NAMES: AtomicU64 = AtomicU64::new(0);
/// ConfigMaps every namespace holds besides the bench's (the root CA
/// publisher's `kube-root-ca.crt`).
const ROOT_CA_CONFIGMAPS: usize = 1;
/// Objects of the selector namespace that carry the matching label.
const SELECTED: usize = 10;
/// Connections of the wrk workload.
const WRK_CONNECTIONS: usize = 16;
/// Concurrency of the selector LIST and of the closed-loop writers.
const SMALL_CONCURRENCY: usize = 16;
/// Watch streams per HTTP/2 connection (below hyper's default limit of
/// concurrent streams).
const STREAMS_PER_CONNECTION: usize = 100;
/// Every how many watchers one records latencies.
const LATENCY_SAMPLE: usize = 10;
/// How long the watchers may take to catch up after the paced writes.
const DELIVERY_GRACE: Duration = Duration::from_secs(10);

/// Targets of issue 13 (V1: the Federation V1 Go apiserver's 105–108 lists/s;
/// today: 58–71 LISTs/s of Secrets).
const LIST_TARGET: f64 = 4.0 * 71.0;
const LIST_VS_BARE_TARGET: f64 = 0.5;
const V1_LISTS: f64 = 108.0;
const SELECTOR_TARGET: f64 = 2000.0;
const P99_TARGET_MS: f64 = 100.0;
const WRITERS_TARGET: f64 = 0.8;
const RSS_TARGET_KIB: f64 = 3.0;

/// An object of kind `kind` (Secret or ConfigMap) padded to
/// [`OBJECT_BYTES`] of JSON, with `labels`.
fn object(kind: &str, namespace: &str, name: &str, labels: serde_json::Value) -> Bytes {
    let encode = |pad: &str| {
        let mut o = serde_json::json!({
            "apiVersion": "v1",
            "kind": kind,
            "metadata": {"name": name, "namespace": namespace, "labels": labels},
        });
        if kind == "Secret" {
            o["type"] = "Opaque".into();
            o["data"] = serde_json::json!({ "payload": pad });
        } else {
            o["data"] = serde_json::json!({ "payload": pad });
        }
        o.to_string()
    };
    let bare = encode("").len();
    let pad = "QUJD".repeat(OBJECT_BYTES.saturating_sub(bare) / 4);
    Bytes::from(encode(&pad))
}

/// A small ConfigMap carrying the wall-clock time it is sent at.
fn stamped(name: &str) -> Bytes {
    let sent = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos());
    Bytes::from(
        serde_json::json!({
            "apiVersion": "v1",
            "kind": "ConfigMap",
            "metadata": {"name": name, "namespace": WATCH_NS},
            "data": {"sent": format!("{SENT_MARK}{sent}")},
        })
        .to_string(),
    )
}
/// What precedes the send time in a watch event's bytes.
const SENT_MARK: &str = "t=";

/// The send time in nanoseconds in one watch event line, if any.
fn sent_ns(line: &[u8]) -> Option<u128> {
    let needle = b"\"sent\":\"t=";
    let at = line.windows(needle.len()).position(|w| w == needle)? + needle.len();
    let digits = line[at..].iter().take_while(|b| b.is_ascii_digit()).count();
    std::str::from_utf8(&line[at..at + digits])
        .ok()?
        .parse()
        .ok()
}

fn now_ns() -> u128 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos())
}

#[derive(Deserialize)]
struct Items {
    items: Vec<IgnoredAny>,
    metadata: ListMeta,
}
#[derive(Deserialize)]
struct ListMeta {
    #[serde(rename = "resourceVersion", default)]
    resource_version: String,
    #[serde(rename = "continue", default)]
    next: String,
}

/// LISTs `path` in pages of 1,000 (as kubectl and informers do; no single
/// response of the whole collection is held) and checks there are `n`
/// items.
async fn list_paged(client: &Https, path: &str, n: usize) -> anyhow::Result<()> {
    let mut seen = 0;
    let mut next = String::new();
    loop {
        let page = match next.as_str() {
            "" => format!("{path}?limit=1000"),
            token => format!("{path}?limit=1000&continue={token}"),
        };
        let body = client.expect(200, Method::GET, &page, None).await?;
        let list: Items = serde_json::from_slice(&body).context("not a list")?;
        seen += list.items.len();
        if list.metadata.next.is_empty() {
            break;
        }
        next = list.metadata.next;
    }
    anyhow::ensure!(seen == n, "LIST {path}: {seen} items, expected {n}");
    Ok(())
}

/// LISTs `path` and checks it has `n` items; returns the list's revision.
async fn list(client: &Https, path: &str, n: usize) -> anyhow::Result<String> {
    let body = client.expect(200, Method::GET, path, None).await?;
    let list: Items = serde_json::from_slice(&body).context("not a list")?;
    anyhow::ensure!(
        list.items.len() == n,
        "LIST {path}: {} items, expected {n}",
        list.items.len()
    );
    Ok(list.metadata.resource_version)
}

/// Creates a namespace (201).
async fn namespace(client: &Https, name: &str) -> anyhow::Result<()> {
    let body =
        serde_json::json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}});
    client
        .expect(
            201,
            Method::POST,
            "/api/v1/namespaces",
            Some(("application/json", Bytes::from(body.to_string()))),
        )
        .await?;
    Ok(())
}

/// Creates `n` 1 KiB objects of `resource` (`secrets`, `configmaps`) in
/// `ns`, 16 at a time; the first [`SELECTED`] get `pick=yes` when `label`.
async fn populate(
    client: &Https,
    resource: &str,
    ns: &str,
    n: usize,
    label: bool,
) -> anyhow::Result<()> {
    let kind = if resource == "secrets" {
        "Secret"
    } else {
        "ConfigMap"
    };
    let results: Vec<anyhow::Result<Bytes>> = futures::stream::iter(0..n)
        .map(|i| {
            let client = client.clone();
            let labels = if label && i < SELECTED {
                serde_json::json!({"app": "bench", "pick": "yes"})
            } else {
                serde_json::json!({"app": "bench"})
            };
            let body = object(kind, ns, &format!("o-{i:05}"), labels);
            let path = format!("/api/v1/namespaces/{ns}/{resource}");
            async move {
                client
                    .expect(201, Method::POST, &path, Some(("application/json", body)))
                    .await
            }
        })
        .buffer_unordered(16)
        .collect()
        .await;
    for r in results {
        r.with_context(|| format!("creating {resource} in {ns}"))?;
    }
    Ok(())
}

/// The resident set size of process `pid` in KiB.
fn rss_kib(pid: u32) -> anyhow::Result<u64> {
    status_kib(pid, "VmRSS:")
}

/// The anonymous part of process `pid`'s resident set (its heap and
/// stacks, not the pages of its binary it has touched) in KiB.
fn anon_kib(pid: u32) -> anyhow::Result<u64> {
    status_kib(pid, "RssAnon:")
}

/// A KiB figure of `/proc/<pid>/status`.
fn status_kib(pid: u32, field: &str) -> anyhow::Result<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status"))
        .with_context(|| format!("reading /proc/{pid}/status"))?;
    status
        .lines()
        .find_map(|l| l.strip_prefix(field))
        .and_then(|v| v.split_whitespace().next())
        .and_then(|v| v.parse().ok())
        .with_context(|| format!("no {field}"))
}

/// Runs `op` unmeasured for the warm-up, then measured; the first error of
/// the warm-up stops the run.
async fn cell<F, Fut>(what: &str, args: &Args, c: usize, op: F) -> anyhow::Result<Cell>
where
    F: Fn(usize, u64) -> Fut + Send + Sync + Clone + 'static,
    Fut: std::future::Future<Output = anyhow::Result<()>> + Send + 'static,
{
    eprintln!("    {what}");
    let warm = run_cell(c, Duration::from_secs_f64(args.warmup), op.clone()).await;
    if let Some(e) = warm.first_error {
        anyhow::bail!("warm-up of {what}: {e}");
    }
    Ok(run_cell(c, Duration::from_secs_f64(args.seconds), op).await)
}

/// wrk's requests/s and its count of non-2xx answers, or why not measured.
fn run_wrk(url: &str, secs: f64) -> Result<(f64, u64), String> {
    let out = std::process::Command::new("wrk")
        .args([
            "-t2",
            &format!("-c{WRK_CONNECTIONS}"),
            &format!("-d{}s", secs.ceil().max(1.0)),
            "-H",
            &format!("Authorization: Bearer {TOKEN}"),
            url,
        ])
        .output()
        .map_err(|e| format!("not run: {e}"))?;
    let text = String::from_utf8_lossy(&out.stdout);
    let rate = text
        .lines()
        .find_map(|l| l.strip_prefix("Requests/sec:"))
        .and_then(|v| v.trim().parse().ok())
        .ok_or_else(|| format!("no Requests/sec in wrk's output: {text}"))?;
    let bad = text
        .lines()
        .find_map(|l| l.trim().strip_prefix("Non-2xx or 3xx responses:"))
        .and_then(|v| v.trim().parse().ok())
        .unwrap_or(0);
    Ok((rate, bad))
}

/// What one watcher saw.
#[derive(Default)]
struct Seen {
    events: AtomicU64,
}

/// The figures of one store.
struct StoreRun {
    backend: Backend,
    bare_list: Cell,
    list: Cell,
    list_bytes: usize,
    wrk_style: Cell,
    wrk: Result<(f64, u64), String>,
    selector: Cell,
    writers_alone: Cell,
    writers_watched: Cell,
    paced_writes: u64,
    paced_rate: f64,
    /// Each paced create's submit-to-201 time, sorted (ms).
    paced_ms: Vec<f64>,
    delivered: u64,
    expected: u64,
    delivery_ms: Vec<f64>,
    rss_before_kib: u64,
    rss_after_kib: u64,
    objects: usize,
}

/// Measures one store.
async fn measure(backend: Backend, args: &Args) -> anyhow::Result<StoreRun> {
    eprintln!("bench cache: skein on {}…", backend.name());
    let dir = tempfile::tempdir().context("temp dir")?;
    let tokens = dir.path().join("tokens.csv");
    std::fs::write(
        &tokens,
        format!("{TOKEN},bench,bench-uid,\"system:masters\"\n"),
    )
    .context("writing the token file")?;
    let mut flags = vec![format!("--token-auth-file={}", tokens.display())];
    flags.extend(args.skein_flag.iter().cloned());
    let skein = Skein::start_with(backend == Backend::Etcd, &flags).await?;
    let pid = skein.server.pid().context("skein's pid")?;
    let admin = skein.client(Protocol::H2)?;
    let bearer = skein.credentials.bearer(TOKEN);
    let wrk_client = Https::new(skein.server.addr, &bearer, Protocol::Http1)?;

    for ns in [SECRETS_NS, CONFIGMAPS_NS, SELECT_NS, WATCH_NS, RSS_NS] {
        namespace(&admin, ns).await?;
    }
    tokio::time::sleep(Duration::from_secs(1)).await;
    let rss_before_kib = rss_kib(pid)?;
    let anon_before_kib = anon_kib(pid)?;
    eprintln!(
        "  creating {} Secrets, {} + {} + {} ConfigMaps…",
        args.list_size, args.list_size, args.selector_total, args.rss_extra
    );
    populate(&admin, "secrets", SECRETS_NS, args.list_size, false).await?;
    populate(&admin, "configmaps", CONFIGMAPS_NS, args.list_size, false).await?;
    populate(&admin, "configmaps", SELECT_NS, args.selector_total, true).await?;
    populate(&admin, "configmaps", RSS_NS, args.rss_extra, false).await?;
    let objects = 2 * args.list_size + args.selector_total + args.rss_extra;
    let secrets_path = format!("/api/v1/namespaces/{SECRETS_NS}/secrets");
    let configmaps_path = format!("/api/v1/namespaces/{CONFIGMAPS_NS}/configmaps");
    let select_path = format!("/api/v1/namespaces/{SELECT_NS}/configmaps?labelSelector=pick%3Dyes");
    list(&admin, &secrets_path, args.list_size).await?;
    list(
        &admin,
        &configmaps_path,
        args.list_size + ROOT_CA_CONFIGMAPS,
    )
    .await?;
    list(&admin, &select_path, SELECTED.min(args.selector_total)).await?;
    let rss_path = format!("/api/v1/namespaces/{RSS_NS}/configmaps");
    list_paged(&admin, &rss_path, args.rss_extra + ROOT_CA_CONFIGMAPS).await?;
    tokio::time::sleep(Duration::from_secs(1)).await;
    let rss_after_kib = rss_kib(pid)?;
    let anon_after_kib = anon_kib(pid)?;
    if args.rss_only {
        let per = (rss_after_kib.saturating_sub(rss_before_kib)) as f64 / objects as f64;
        let anon = (anon_after_kib.saturating_sub(anon_before_kib)) as f64 / objects as f64;
        println!(
            "--rss-only ({}): RSS {rss_before_kib} -> {rss_after_kib} KiB for {objects} objects: \
             {per:.2} KiB per object (anonymous {anon_before_kib} -> {anon_after_kib} KiB: \
             {anon:.2} KiB per object)",
            backend.name()
        );
        return Err(RssOnly.into());
    }

    // The bare server answers the very bytes of Skein's LIST.
    let list_body = admin.expect(200, Method::GET, &secrets_path, None).await?;
    let list_file = dir.path().join("list.json");
    std::fs::write(&list_file, &list_body).context("writing the list body")?;
    let bare_server = BareServer::start_with(&skein.pki_dir(), None, Some(&list_file))?;
    let bare_client = Https::new(bare_server.addr, &skein.credentials, Protocol::H2)?;
    let list_bytes = list_body.len();

    eprintln!("  measuring…");
    let n = args.list_size;
    let bare_list = {
        let client = bare_client.clone();
        cell("bare LIST", args, args.concurrency, move |_, _| {
            let client = client.clone();
            async move {
                let body = client
                    .expect(200, Method::GET, bare::LIST_PATH, None)
                    .await?;
                anyhow::ensure!(body.len() == list_bytes, "bare LIST: {} bytes", body.len());
                Ok(())
            }
        })
        .await?
    };
    let list_cell = {
        let client = admin.clone();
        let path = secrets_path.clone();
        cell("LIST Secrets", args, args.concurrency, move |_, _| {
            let (client, path) = (client.clone(), path.clone());
            async move { list(&client, &path, n).await.map(drop) }
        })
        .await?
    };
    let wrk_style = {
        let client = wrk_client.clone();
        let path = configmaps_path.clone();
        cell(
            "wrk workload (bench client)",
            args,
            WRK_CONNECTIONS,
            move |_, _| {
                let (client, path) = (client.clone(), path.clone());
                async move { list(&client, &path, n + ROOT_CA_CONFIGMAPS).await.map(drop) }
            },
        )
        .await?
    };
    let wrk = if args.no_wrk {
        Err("not run (--no-wrk)".to_owned())
    } else {
        eprintln!("    wrk");
        let url = format!("https://{}{configmaps_path}", skein.server.addr);
        let secs = args.seconds;
        tokio::task::spawn_blocking(move || run_wrk(&url, secs))
            .await
            .unwrap_or_else(|e| Err(e.to_string()))
    };
    let selector = {
        let client = admin.clone();
        let want = SELECTED.min(args.selector_total);
        cell(
            "LIST by label selector",
            args,
            SMALL_CONCURRENCY,
            move |_, _| {
                let (client, path) = (client.clone(), select_path.clone());
                async move { list(&client, &path, want).await.map(drop) }
            },
        )
        .await?
    };
    let create = |run: &'static str| {
        let client = admin.clone();
        move |task: usize, i: u64| {
            let client = client.clone();
            async move {
                // Unique across warm-up and measurement (both count from 0).
                let name = format!("{run}-{task}-{i}-{}", NAMES.fetch_add(1, Ordering::Relaxed));
                client
                    .expect(
                        201,
                        Method::POST,
                        &format!("/api/v1/namespaces/{WATCH_NS}/configmaps"),
                        Some(("application/json", stamped(&name))),
                    )
                    .await
                    .map(drop)
            }
        }
    };
    let writers_alone = cell("creates, no watchers", args, SMALL_CONCURRENCY, create("a")).await?;

    // The watchers, from the collection's current revision.
    eprintln!("  opening {} watchers…", args.watchers);
    let rv = admin
        .expect(
            200,
            Method::GET,
            &format!("/api/v1/namespaces/{WATCH_NS}/configmaps?limit=1"),
            None,
        )
        .await?;
    let rv: Items = serde_json::from_slice(&rv).context("not a list")?;
    let watch_path = format!(
        "/api/v1/namespaces/{WATCH_NS}/configmaps?watch=1&resourceVersion={}",
        rv.metadata.resource_version
    );
    let connections: Vec<Https> = (0..args.watchers.div_ceil(STREAMS_PER_CONNECTION))
        .map(|_| skein.client(Protocol::H2))
        .collect::<anyhow::Result<_>>()?;
    let seen: Vec<Arc<Seen>> = (0..args.watchers).map(|_| Arc::default()).collect();
    let latencies = Arc::new(std::sync::Mutex::new(Vec::<f64>::new()));
    let measuring = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let mut watchers = Vec::with_capacity(args.watchers);
    for (w, seen) in seen.iter().enumerate() {
        let (status, mut body) = connections[w / STREAMS_PER_CONNECTION]
            .stream(&watch_path)
            .await?;
        anyhow::ensure!(status == 200, "watch {w}: {status}");
        let seen = seen.clone();
        let sample = w % LATENCY_SAMPLE == 0;
        let latencies = latencies.clone();
        let measuring = measuring.clone();
        watchers.push(tokio::spawn(async move {
            let mut partial: Vec<u8> = Vec::new();
            let mut mine = Vec::new();
            while let Some(frame) = body.frame().await {
                let Ok(frame) = frame else { break };
                let Ok(data) = frame.into_data() else {
                    continue;
                };
                let lines = data.iter().filter(|b| **b == b'\n').count() as u64;
                if sample {
                    let at = now_ns();
                    partial.extend_from_slice(&data);
                    let mut start = 0;
                    while let Some(end) = partial[start..].iter().position(|b| *b == b'\n') {
                        let line = &partial[start..start + end];
                        if let Some(sent) = sent_ns(line)
                            && measuring.load(Ordering::Relaxed)
                        {
                            mine.push(at.saturating_sub(sent) as f64 / 1e6);
                        }
                        start += end + 1;
                    }
                    partial.drain(..start);
                    if mine.len() >= 64
                        && let Ok(mut all) = latencies.lock()
                    {
                        all.append(&mut mine);
                    }
                }
                seen.events.fetch_add(lines, Ordering::Relaxed);
            }
            if let Ok(mut all) = latencies.lock() {
                all.append(&mut mine);
            }
        }));
    }

    // Paced writes: one create every 1/rate s, each in its own task.
    eprintln!("  {} writes/s for {} s…", args.write_rate, args.seconds);
    measuring.store(true, Ordering::Relaxed);
    let before: u64 = seen.iter().map(|s| s.events.load(Ordering::Relaxed)).sum();
    let period = Duration::from_secs_f64(1.0 / args.write_rate.max(1.0));
    let mut ticker = tokio::time::interval(period);
    ticker.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Burst);
    let paced_start = Instant::now();
    let mut writes = Vec::new();
    let mut k = 0u64;
    while paced_start.elapsed() < Duration::from_secs_f64(args.seconds) {
        ticker.tick().await;
        let op = create("p");
        writes.push(tokio::spawn(async move {
            let start = Instant::now();
            op(0, k).await.map(|()| start.elapsed().as_secs_f64() * 1e3)
        }));
        k += 1;
    }
    let mut paced_ok = 0u64;
    let mut paced_ms = Vec::with_capacity(writes.len());
    for w in writes {
        if let Ok(Ok(ms)) = w.await {
            paced_ok += 1;
            paced_ms.push(ms);
        }
    }
    paced_ms.sort_by(f64::total_cmp);
    let paced_rate = paced_ok as f64 / paced_start.elapsed().as_secs_f64();
    let expected = paced_ok * args.watchers as u64;
    let grace = Instant::now();
    let delivered = loop {
        let now: u64 = seen.iter().map(|s| s.events.load(Ordering::Relaxed)).sum();
        if now - before >= expected || grace.elapsed() > DELIVERY_GRACE {
            break now - before;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    };
    measuring.store(false, Ordering::Relaxed);
    let writers_watched = cell(
        "creates, watchers open",
        args,
        SMALL_CONCURRENCY,
        create("b"),
    )
    .await?;
    for w in &watchers {
        w.abort();
    }
    drop(connections);
    let mut delivery_ms = latencies.lock().map(|l| l.clone()).unwrap_or_default();
    delivery_ms.sort_by(f64::total_cmp);
    drop(bare_server);
    drop(skein);
    Ok(StoreRun {
        backend,
        bare_list,
        list: list_cell,
        list_bytes,
        wrk_style,
        wrk,
        selector,
        writers_alone,
        writers_watched,
        paced_writes: paced_ok,
        paced_rate,
        paced_ms,
        delivered,
        expected,
        delivery_ms,
        rss_before_kib,
        rss_after_kib,
        objects,
    })
}

/// The `q` quantile of sorted values.
fn quantile(sorted: &[f64], q: f64) -> f64 {
    if sorted.is_empty() {
        return f64::NAN;
    }
    let rank = ((q * sorted.len() as f64).ceil() as usize).clamp(1, sorted.len());
    sorted[rank - 1]
}

fn pass(ok: bool) -> &'static str {
    if ok { "PASS" } else { "MISS" }
}

/// Runs the benchmark on the stores asked for and prints the report.
pub async fn run(args: Args) -> anyhow::Result<()> {
    let started = Instant::now();
    let load_start = loadavg();
    let backends = if args.store.is_empty() {
        vec![Backend::Embedded, Backend::Etcd]
    } else {
        args.store.clone()
    };
    let mut runs = Vec::new();
    for backend in backends {
        match measure(backend, &args).await {
            Ok(run) => runs.push(run),
            // The figures are printed; go on with the next store.
            Err(e) if e.is::<RssOnly>() => {}
            Err(e) => return Err(e),
        }
    }
    if args.rss_only {
        return Ok(());
    }
    let load_end = loadavg();

    let mut out = String::new();
    let w = &mut out;
    let _ = writeln!(w, "# Skein watch cache benchmark\n");
    let mut facts = machine_facts();
    facts.push((
        "load average (uptime) at start / end",
        format!("{load_start} / {load_end}"),
    ));
    facts.extend(skein_facts());
    facts.push((
        "settings",
        format!(
            "{} s per measurement after {} s warm-up; LIST of Secrets at concurrency {} over \
             HTTP/2 (client certificate); wrk workload: {WRK_CONNECTIONS} HTTP/1.1 keep-alive \
             connections, bearer token; selector LIST and creates at concurrency \
             {SMALL_CONCURRENCY}; {} watchers on {} HTTP/2 connections; {} objects of {OBJECT_BYTES} B \
             per list",
            args.seconds,
            args.warmup,
            args.concurrency,
            args.watchers,
            args.watchers.div_ceil(STREAMS_PER_CONNECTION),
            args.list_size,
        ),
    ));
    for r in &runs {
        facts.push((
            "LIST response",
            format!(
                "{}: {} B for {} Secrets",
                r.backend.name(),
                r.list_bytes,
                args.list_size
            ),
        ));
    }
    facts_table(w, &facts);

    let names: Vec<&str> = runs.iter().map(|r| r.backend.name()).collect();
    let _ = writeln!(w, "\n## Throughput and latency\n");
    let _ = writeln!(w, "| measurement | {} | target |", names.join(" | "));
    let _ = writeln!(w, "| --- |{} --- |", " ---: |".repeat(runs.len()));
    let row = |w: &mut String, label: &str, f: &dyn Fn(&StoreRun) -> String, target: &str| {
        let cells: Vec<String> = runs.iter().map(f).collect();
        let _ = writeln!(w, "| {label} | {} | {target} |", cells.join(" | "));
    };
    let with_lat = |c: &Cell| format!("{}/s (p50/p99 {} ms)", ops(c), lat(c));
    row(
        w,
        "bare axum + rustls: GET the same LIST bytes pre-encoded",
        &|r| with_lat(&r.bare_list),
        "—",
    );
    row(
        w,
        "skein: LIST 1,000 Secrets (HTTP/2)",
        &|r| with_lat(&r.list),
        &format!("≥ {LIST_TARGET:.0}/s (4 × 71)"),
    );
    row(
        w,
        "skein LIST / bare LIST",
        &|r| {
            let x = r.list.rate() / r.bare_list.rate();
            format!("{x:.2}× {}", pass(x >= LIST_VS_BARE_TARGET))
        },
        &format!("≥ {LIST_VS_BARE_TARGET}×"),
    );
    row(
        w,
        "wrk workload, bench client: GET 1,000 ConfigMaps, c = 16 HTTP/1.1, token",
        &|r| {
            let target = match r.backend {
                Backend::Embedded => 5.0,
                Backend::Etcd => 3.0,
            } * V1_LISTS;
            format!(
                "{} {}",
                with_lat(&r.wrk_style),
                pass(r.wrk_style.rate() >= target)
            )
        },
        &format!(
            "≥ {:.0}/s etcd, ≥ {:.0}/s embedded (3× / 5× V1's 108)",
            3.0 * V1_LISTS,
            5.0 * V1_LISTS
        ),
    );
    row(
        w,
        "wrk workload, wrk -t2 -c16",
        &|r| match &r.wrk {
            Ok((rate, bad)) => format!("{rate:.0}/s ({bad} non-2xx)"),
            Err(e) => e.clone(),
        },
        "as above",
    );
    row(
        w,
        "skein: LIST labelSelector matching 10 of 10,000 ConfigMaps",
        &|r| {
            format!(
                "{} {}",
                with_lat(&r.selector),
                pass(r.selector.rate() >= SELECTOR_TARGET)
            )
        },
        &format!("≥ {SELECTOR_TARGET:.0}/s"),
    );
    row(
        w,
        &format!(
            "watch fan-out: write-to-delivery p50 / p99 ms ({} watchers, every {LATENCY_SAMPLE}th sampled)",
            args.watchers
        ),
        &|r| {
            let p99 = quantile(&r.delivery_ms, 0.99);
            format!(
                "{:.1} / {p99:.1} {}",
                quantile(&r.delivery_ms, 0.5),
                pass(p99 < P99_TARGET_MS && r.delivered == r.expected)
            )
        },
        &format!("p99 < {P99_TARGET_MS:.0} ms"),
    );
    row(
        w,
        "diagnostic: the paced creates' own submit→201 p50 / p99 ms",
        &|r| {
            format!(
                "{:.1} / {:.1}",
                quantile(&r.paced_ms, 0.5),
                quantile(&r.paced_ms, 0.99)
            )
        },
        "—",
    );
    row(
        w,
        "watch fan-out: paced writes, events delivered / expected",
        &|r| {
            format!(
                "{} writes at {:.0}/s; {} / {}",
                r.paced_writes, r.paced_rate, r.delivered, r.expected
            )
        },
        &format!("{:.0} writes/s, all delivered", args.write_rate),
    );
    row(
        w,
        "creates/s, no watchers (c = 16)",
        &|r| with_lat(&r.writers_alone),
        "—",
    );
    row(
        w,
        &format!("creates/s, {} watchers open (c = 16)", args.watchers),
        &|r| with_lat(&r.writers_watched),
        "—",
    );
    row(
        w,
        "creates with watchers / without",
        &|r| {
            let x = r.writers_watched.rate() / r.writers_alone.rate();
            format!("{x:.2}× {}", pass(x >= WRITERS_TARGET))
        },
        &format!("≥ {WRITERS_TARGET}×"),
    );
    row(
        w,
        "server RSS before → after creating the objects (KiB)",
        &|r| {
            format!(
                "{} → {} ({} objects)",
                r.rss_before_kib, r.rss_after_kib, r.objects
            )
        },
        "—",
    );
    row(
        w,
        "RSS per 1 KiB object",
        &|r| {
            let per = r.rss_after_kib.saturating_sub(r.rss_before_kib) as f64 / r.objects as f64;
            format!("{per:.2} KiB {}", pass(per <= RSS_TARGET_KIB))
        },
        &format!("≤ {RSS_TARGET_KIB} KiB"),
    );
    let _ = writeln!(
        w,
        "\nRSS is the whole `skein serve` process (VmRSS): on the embedded store it includes \
         redb's page cache of the same objects, so it is an upper bound of the cache's share."
    );
    let errors: u64 = runs
        .iter()
        .flat_map(|r| {
            [
                &r.bare_list,
                &r.list,
                &r.wrk_style,
                &r.selector,
                &r.writers_alone,
                &r.writers_watched,
            ]
        })
        .map(|c| c.errors)
        .sum();
    let _ = writeln!(w, "\nErrors: {errors}.");
    for r in &runs {
        for (what, c) in [
            ("bare LIST", &r.bare_list),
            ("LIST", &r.list),
            ("wrk workload", &r.wrk_style),
            ("selector LIST", &r.selector),
            ("creates", &r.writers_alone),
            ("creates with watchers", &r.writers_watched),
        ] {
            if let Some(e) = &c.first_error {
                let _ = writeln!(
                    w,
                    "- {} {what}: {} errors, first: {e}",
                    r.backend.name(),
                    c.errors
                );
            }
        }
    }
    let _ = writeln!(
        w,
        "\nTotal run time: {:.0} s.",
        started.elapsed().as_secs_f64()
    );
    print!("{out}");
    anyhow::ensure!(errors == 0, "{errors} requests failed (see the report)");
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn objects_are_one_kib() {
        for kind in ["Secret", "ConfigMap"] {
            let o = object(kind, "ns", "o-00001", serde_json::json!({"app": "bench"}));
            assert!(
                (OBJECT_BYTES - 4..=OBJECT_BYTES).contains(&o.len()),
                "{kind}: {}",
                o.len()
            );
        }
    }

    #[test]
    fn finds_the_send_time_in_an_event() {
        let object: serde_json::Value = serde_json::from_slice(&stamped("x")).unwrap();
        let event = serde_json::json!({"type": "ADDED", "object": object}).to_string();
        assert!(sent_ns(event.as_bytes()).is_some_and(|t| t > 0), "{event}");
        assert_eq!(sent_ns(br#"{"type":"ADDED"}"#), None);
    }
}
