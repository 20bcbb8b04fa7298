//! `bench storage`: creates/s and gets/s of 1 KiB values for raw etcd, the
//! etcd backend and the embedded backend, side by side, plus the cost of
//! watch fan-out to 1,000 watchers, each a store watch or all served by
//! Skein's watch cache (one store watch); ratios against the targets.
//!
//! Everything is durable as configured for production: etcd runs with its
//! default fsync settings, the embedded store fsyncs every group commit.
//! Each cell is a closed loop: N tasks, each doing one operation after the
//! other on its own keys (`/bench/<run>/<task>/<i>`) for a fixed time.

use std::fmt::Write as _;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use anyhow::Context as _;
use futures::StreamExt as _;
use skein_storage::embedded::{EmbeddedOptions, EmbeddedStore};
use skein_storage::etcd::{EtcdOptions, EtcdStore};
use skein_storage::{Store, WatchMessage};

use crate::measure::{Cell, LoadSnapshot, command_line, fsync_latency, run_cell};
use crate::report::{cpu_model, lat, ops};

/// Options of `bench storage`.
#[derive(clap::Args)]
pub struct Args {
    /// Seconds each table cell runs.
    #[arg(long, default_value_t = 3.0)]
    seconds: f64,
    /// Each cell's time is split into this many rounds, run in rotation
    /// across the systems, so that a change in background load (other
    /// processes, the disk) hits all of them alike.
    #[arg(long, default_value_t = 3)]
    rounds: u32,
    /// Concurrency levels (tasks issuing operations in a loop).
    #[arg(long, value_delimiter = ',', default_value = "1,16,64")]
    concurrency: Vec<usize>,
    /// Value size in bytes.
    #[arg(long, default_value_t = 1024)]
    value_bytes: usize,
    /// Watchers of the fan-out measurement (0 skips it).
    #[arg(long, default_value_t = 1000)]
    watchers: usize,
    /// Writer concurrency of the fan-out measurement.
    #[arg(long, default_value_t = 64)]
    fanout_concurrency: usize,
    /// Skip the fan-out measurement against the etcd backend.
    #[arg(long)]
    no_etcd_fanout: bool,
}

/// Targets the report checks (docs/benchmarks.md): etcd backend / raw etcd,
/// and embedded / raw etcd at [`EMBEDDED_TARGET_CONCURRENCY`].
const BACKEND_VS_RAW_TARGET: f64 = 0.9;
const EMBEDDED_VS_RAW_TARGET: f64 = 2.0;
/// Concurrency at which embedded is compared with raw etcd.
const EMBEDDED_TARGET_CONCURRENCY: usize = 64;
/// Writers' rate with the watchers served by the watch cache, against
/// their rate with none (issue 13).
const CACHE_FANOUT_TARGET: f64 = 0.8;

/// How long watchers may take to catch up after the writers stop.
const DRAIN_TIMEOUT: Duration = Duration::from_secs(120);

/// One system under test.
#[derive(Clone)]
pub(crate) enum Target {
    /// etcd-client puts and gets, one client shared by all tasks.
    Raw(Box<etcd_client::Client>),
    /// etcd-client creating with the etcd backend's compare-and-swap
    /// transaction: separates etcd's cost of a txn from Skein's client code.
    RawTxn(Box<etcd_client::Client>),
    /// A Skein storage backend.
    Store(Arc<dyn Store>),
}

impl Target {
    async fn create(&self, key: String, value: &[u8]) -> anyhow::Result<()> {
        match self {
            Target::Raw(client) => {
                client.kv_client().put(key, value.to_vec(), None).await?;
            }
            Target::RawTxn(client) => {
                use etcd_client::{Compare, CompareOp, Txn, TxnOp};
                let txn = Txn::new()
                    .when([Compare::create_revision(key.as_str(), CompareOp::Equal, 0)])
                    .and_then([TxnOp::put(key.as_str(), value, None)])
                    .or_else([TxnOp::get(key.as_str(), None)]);
                let resp = client.kv_client().txn(txn).await?;
                anyhow::ensure!(resp.succeeded(), "raw txn: {key} exists");
            }
            Target::Store(store) => {
                store.create(&key, value).await?;
            }
        }
        Ok(())
    }

    async fn get(&self, key: String) -> anyhow::Result<()> {
        match self {
            Target::Raw(client) | Target::RawTxn(client) => {
                let resp = client.kv_client().get(key.as_str(), None).await?;
                anyhow::ensure!(resp.kvs().len() == 1, "raw get: {key} is missing");
            }
            Target::Store(store) => {
                store.get(&key).await?;
            }
        }
        Ok(())
    }
}

/// The three columns of the main tables, in order.
const TARGETS: [&str; 3] = ["raw etcd", "etcd backend", "embedded"];

/// Runs creates on `/bench/<run>/<task>/<i>` for `secs`.
pub(crate) async fn creates(
    target: &Target,
    run: &str,
    concurrency: usize,
    secs: Duration,
    value: &Arc<[u8]>,
) -> Cell {
    let (target, run, value) = (target.clone(), run.to_owned(), value.clone());
    run_cell(concurrency, secs, move |task, i| {
        let (target, value) = (target.clone(), value.clone());
        let key = format!("/bench/{run}/{task}/{i}");
        async move { target.create(key, &value).await }
    })
    .await
}

/// Reads back, round robin, the keys that `creates` made in `run`.
async fn gets(
    target: &Target,
    run: &str,
    created: &[u64],
    secs: Duration,
    value: &Arc<[u8]>,
) -> Cell {
    // Every task needs at least one key to read.
    let mut created = created.to_vec();
    for (task, n) in created.iter_mut().enumerate() {
        if *n == 0 {
            target
                .create(format!("/bench/{run}/{task}/0"), value)
                .await
                .expect("pre-populating a key to read");
            *n = 1;
        }
    }
    let created = Arc::new(created);
    let (target, run) = (target.clone(), run.to_owned());
    run_cell(created.len(), secs, move |task, i| {
        let target = target.clone();
        let key = format!("/bench/{run}/{task}/{}", i % created[task]);
        async move { target.get(key).await }
    })
    .await
}

/// An event counter alone on its cache line.
#[derive(Default)]
#[repr(align(64))]
struct Padded(AtomicU64);

/// A create run under load from watchers, and what the watchers saw.
struct Fanout {
    cell: Cell,
    watchers: usize,
    /// Events every watcher should have received (the successful creates).
    expected: u64,
    min_events: u64,
    max_events: u64,
    /// Watch streams that ended with an error.
    watch_errors: usize,
    first_watch_error: Option<String>,
    /// Time after the writers stopped until every watcher had every event
    /// (`None`: not within [`DRAIN_TIMEOUT`]).
    catch_up: Option<Duration>,
}

/// Where the fan-out's watchers watch.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Watching {
    /// Each watcher is its own store watch.
    Store,
    /// Each watcher is a watch of Skein's watch cache
    /// (`skein_apiserver::registry::cache`), which holds ONE store watch
    /// for all of them, as LIST/WATCH requests are served.
    Cache,
}

/// One watcher's stream: how many events each message carried (`Err`: the
/// watch failed or was closed).
type Events = futures::stream::BoxStream<'static, Result<u64, String>>;

/// Opens `watchers` watches on `/bench/<run>/`, each consumed by its own
/// task that counts events, then runs creates under that prefix.
async fn fanout(
    store: &Arc<dyn Store>,
    run: &str,
    watchers: usize,
    concurrency: usize,
    secs: Duration,
    value: &Arc<[u8]>,
    watching: Watching,
) -> anyhow::Result<Fanout> {
    use skein_apiserver::registry::cache::{CacheConfig, CacheMessage, CacheWatch, Cacher};
    let prefix = format!("/bench/{run}/");
    let mut streams: Vec<Events> = Vec::with_capacity(watchers);
    // Kept until the end: it owns the cache's one store watch.
    let mut cacher = None;
    match watching {
        Watching::Store => {
            let from = store.current_revision().await?;
            for w in 0..watchers {
                let stream =
                    tokio::time::timeout(Duration::from_secs(30), store.watch(&prefix, from))
                        .await
                        .with_context(|| format!("opening watch {w} timed out"))?
                        .with_context(|| format!("opening watch {w}"))?;
                streams.push(
                    stream
                        .map(|m| match m {
                            Ok(WatchMessage::Event(_)) => Ok(1),
                            Ok(WatchMessage::Progress(_)) => Ok(0),
                            Err(e) => Err(e.to_string()),
                        })
                        .boxed(),
                );
            }
        }
        Watching::Cache => {
            let c = Cacher::new(store.clone(), CacheConfig::default());
            let cache = c.cache(&prefix);
            // Listed (on etcd 3.4 a fresh read is never proven by progress
            // notifications: the cache's own revision is the start).
            let listed = Instant::now();
            while cache.revision() == 0 {
                anyhow::ensure!(
                    listed.elapsed() < Duration::from_secs(30),
                    "the watch cache did not list {prefix} in time"
                );
                tokio::time::sleep(Duration::from_millis(10)).await;
            }
            let from = cache.revision();
            for w in 0..watchers {
                let CacheWatch::Stream(stream) = cache.watch(&prefix, from) else {
                    anyhow::bail!("watch {w}: the cache cannot serve revision {from}");
                };
                // The cache ends a watcher's stream when it falls behind its
                // buffer ("too slow"): an error here.
                let closed = futures::stream::once(async {
                    Err("closed by the cache (too slow)".to_string())
                });
                streams.push(
                    stream
                        .map(|m| {
                            Ok(match m {
                                CacheMessage::Event(_) => 1,
                                CacheMessage::Events(burst) => burst.iter().count() as u64,
                                CacheMessage::Progress(_) => 0,
                            })
                        })
                        .chain(closed)
                        .boxed(),
                );
            }
            cacher = Some(c);
        }
    }
    // One cache line per counter: neighbours' counts are written from both
    // CPUs, and sharing lines would bill the bench's bookkeeping to Skein.
    let counts: Arc<Vec<Padded>> = Arc::new((0..watchers).map(|_| Padded::default()).collect());
    let errors = Arc::new(AtomicUsize::new(0));
    let first_error = Arc::new(std::sync::Mutex::new(None::<String>));
    let consumers: Vec<_> = streams
        .into_iter()
        .enumerate()
        .map(|(w, mut stream)| {
            let (counts, errors, first_error) =
                (counts.clone(), errors.clone(), first_error.clone());
            tokio::spawn(async move {
                while let Some(msg) = stream.next().await {
                    match msg {
                        Ok(0) => {}
                        Ok(n) => {
                            counts[w].0.fetch_add(n, Ordering::Relaxed);
                        }
                        Err(e) => {
                            errors.fetch_add(1, Ordering::Relaxed);
                            if let Ok(mut slot) = first_error.lock() {
                                slot.get_or_insert(e);
                            }
                            return;
                        }
                    }
                }
            })
        })
        .collect();

    let cell = creates(&Target::Store(store.clone()), run, concurrency, secs, value).await;
    let written = Instant::now();
    let expected = cell.ok;
    let caught_up = || {
        counts
            .iter()
            .all(|c| c.0.load(Ordering::Relaxed) >= expected)
    };
    let mut catch_up = None;
    while written.elapsed() < DRAIN_TIMEOUT {
        if caught_up() || errors.load(Ordering::Relaxed) == watchers {
            if caught_up() {
                catch_up = Some(written.elapsed());
            }
            break;
        }
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    for consumer in &consumers {
        consumer.abort();
    }
    drop(cacher);
    let seen = counts.iter().map(|c| c.0.load(Ordering::Relaxed));
    let first_watch_error = first_error.lock().ok().and_then(|e| e.clone());
    Ok(Fanout {
        watchers,
        expected,
        min_events: seen.clone().min().unwrap_or(0),
        max_events: seen.max().unwrap_or(0),
        watch_errors: errors.load(Ordering::Relaxed),
        first_watch_error,
        catch_up,
        cell,
    })
}

/// Runs the whole benchmark and prints the report.
pub async fn run(args: Args) -> anyhow::Result<()> {
    let started = Instant::now();
    let secs = Duration::from_secs_f64(args.seconds);
    let value: Arc<[u8]> = vec![b'v'; args.value_bytes].into();

    // Other work on the machine skews everything: say how busy it was.
    let loadavg = std::fs::read_to_string("/proc/loadavg").unwrap_or_default();
    let loadavg = loadavg
        .split_whitespace()
        .take(3)
        .collect::<Vec<_>>()
        .join(" ");
    eprintln!("bench storage: probing the disk and starting etcd…");
    let embedded_dir = tempfile::tempdir().context("temp dir for the embedded store")?;
    let fsync = fsync_latency(embedded_dir.path(), 200).context("fsync probe")?;
    let etcd = tokio::task::spawn_blocking(skein_tests::etcd::Etcd::start)
        .await
        .context("starting etcd")?;
    let endpoint = etcd.endpoint();
    let run_load = LoadSnapshot::now();

    let raw = etcd_client::Client::connect([endpoint.as_str()], None)
        .await
        .context("raw etcd client")?;
    let backend: Arc<dyn Store> = EtcdStore::connect(EtcdOptions {
        endpoints: vec![endpoint.clone()],
        retain_history: None,
        ..EtcdOptions::default()
    })
    .await
    .context("etcd backend")?;
    let embedded: Arc<dyn Store> = EmbeddedStore::open(
        &embedded_dir.path().join("skein.redb"),
        EmbeddedOptions {
            retain_history: None,
            ..EmbeddedOptions::default()
        },
    )
    .await
    .context("embedded backend")?;
    let raw_txn = Target::RawTxn(Box::new(raw.clone()));
    let targets = [
        Target::Raw(Box::new(raw)),
        Target::Store(backend.clone()),
        Target::Store(embedded.clone()),
    ];
    let names = ["raw", "etcd", "embedded"];
    let rounds = args.rounds.max(1);
    let slice = secs / rounds;

    // [concurrency index][target index]; each cell merges `rounds` slices.
    let mut create_cells: Vec<Vec<Cell>> = Vec::new();
    let mut get_cells: Vec<Vec<Cell>> = Vec::new();
    // Diagnostic: raw etcd creating with the backend's txn, per concurrency.
    let mut txn_cells: Vec<Cell> = Vec::new();
    for &c in &args.concurrency {
        let mut creates_of: Vec<Vec<Cell>> = (0..names.len()).map(|_| Vec::new()).collect();
        let mut gets_of: Vec<Vec<Cell>> = (0..names.len()).map(|_| Vec::new()).collect();
        let mut txns = Vec::new();
        for round in 0..rounds {
            eprintln!(
                "  c={c:<3} round {}/{rounds}: creates, then gets",
                round + 1
            );
            for (k, (target, name)) in targets.iter().zip(names).enumerate() {
                let run = format!("{name}-c{c}-r{round}");
                creates_of[k].push(creates(target, &run, c, slice, &value).await);
                if k == 0 {
                    let run = format!("rawtxn-c{c}-r{round}");
                    txns.push(creates(&raw_txn, &run, c, slice, &value).await);
                }
            }
            for (k, (target, name)) in targets.iter().zip(names).enumerate() {
                let run = format!("{name}-c{c}-r{round}");
                let created = creates_of[k][round as usize].per_task.clone();
                gets_of[k].push(gets(target, &run, &created, slice, &value).await);
            }
        }
        create_cells.push(creates_of.into_iter().map(Cell::merge).collect());
        get_cells.push(gets_of.into_iter().map(Cell::merge).collect());
        txn_cells.push(Cell::merge(txns));
    }

    // Watch fan-out: 0 watchers, then `watchers` watchers, per backend.
    let mut fanouts: Vec<(&str, Cell, Result<Fanout, String>)> = Vec::new();
    let mut fanout_backends = Vec::new();
    if args.watchers > 0 {
        fanout_backends.push(("embedded", embedded.clone(), Watching::Store));
        fanout_backends.push(("embedded, watch cache", embedded.clone(), Watching::Cache));
    }
    if args.watchers > 0 && !args.no_etcd_fanout {
        fanout_backends.push(("etcd backend", backend.clone(), Watching::Store));
        fanout_backends.push((
            "etcd backend, watch cache",
            backend.clone(),
            Watching::Cache,
        ));
    }
    for (label, store, watching) in fanout_backends {
        let tag = label.replace([' ', ','], "-");
        let c = args.fanout_concurrency;
        eprintln!("  fan-out {label}: 0 watchers, c={c}");
        let base = creates(
            &Target::Store(store.clone()),
            &format!("fanout-{tag}-w0"),
            c,
            secs,
            &value,
        )
        .await;
        eprintln!("  fan-out {label}: {} watchers, c={c}", args.watchers);
        let run = format!("fanout-{tag}-w{}", args.watchers);
        let loaded = fanout(&store, &run, args.watchers, c, secs, &value, watching)
            .await
            .map_err(|e| format!("{e:#}"));
        fanouts.push((label, base, loaded));
    }

    let others = LoadSnapshot::now().others_since(&run_load);
    // Again at the end: a busy disk (other processes writing) shows here.
    let fsync_end = fsync_latency(embedded_dir.path(), 200).context("fsync probe")?;
    embedded.close().await;
    backend.close().await;
    let etcd_bin = skein_tests::etcd::etcd_binary();
    drop(etcd);

    // The report.
    let mut out = String::new();
    let w = &mut out;
    let _ = writeln!(w, "# Skein storage benchmark\n");
    let tmp = std::env::temp_dir();
    let facts = [
        ("date", command_line("date", &["-u", "+%Y-%m-%d %H:%M UTC"])),
        ("nproc", command_line("nproc", &[])),
        ("cpu", cpu_model()),
        ("kernel", command_line("uname", &["-sr"])),
        ("load average at start", loadavg),
        (
            "etcd",
            format!(
                "{} ({}), single member, default fsync",
                command_line(&etcd_bin.to_string_lossy(), &["--version"]),
                etcd_bin.display()
            ),
        ),
        (
            "data dirs",
            format!(
                "{} ({})",
                tmp.display(),
                command_line("stat", &["-f", "-c", "%T", &tmp.to_string_lossy()])
            ),
        ),
        (
            "disk",
            format!(
                "4 KiB append + fdatasync: p50 {:.2} ms, p99 {:.2} ms at the start; \
                 p50 {:.2} ms, p99 {:.2} ms at the end",
                fsync.0, fsync.1, fsync_end.0, fsync_end.1
            ),
        ),
        (
            "settings",
            format!(
                "{} s per cell in {} interleaved rounds, {} B values, tokio multi-thread ({} workers)",
                args.seconds,
                args.rounds.max(1),
                args.value_bytes,
                std::thread::available_parallelism().map_or(0, |n| n.get())
            ),
        ),
    ];
    let _ = writeln!(w, "| fact | value |\n| --- | --- |");
    for (k, v) in facts {
        let _ = writeln!(w, "| {k} | {v} |");
    }

    for (title, cells) in [
        ("Creates (raw etcd: put; backends: create)", &create_cells),
        ("Gets (keys created above)", &get_cells),
    ] {
        let _ = writeln!(w, "\n## {title}\n");
        let _ = write!(w, "| concurrency |");
        for t in TARGETS {
            let _ = write!(w, " {t} ops/s | p50 / p99 ms |");
        }
        let _ = writeln!(w, "\n| ---: |{}", " ---: | ---: |".repeat(TARGETS.len()));
        for (c, row) in args.concurrency.iter().zip(cells.iter()) {
            let _ = write!(w, "| {c} |");
            for cell in row {
                let _ = write!(w, " {} | {} |", ops(cell), lat(cell));
            }
            let _ = writeln!(w);
        }
    }

    let _ = writeln!(
        w,
        "\n## Diagnostic: the etcd backend's create transaction sent raw\n\n\
         Raw etcd-client sending the backend's compare-and-swap txn (create_revision = 0 ? put : get), \
         to tell etcd's cost of a txn from the cost of Skein's client code.\n"
    );
    let _ = writeln!(
        w,
        "| concurrency | raw put ops/s | raw txn ops/s | p50 / p99 ms | etcd backend ops/s | txn / put | backend / txn |"
    );
    let _ = writeln!(w, "| ---: | ---: | ---: | ---: | ---: | ---: | ---: |");
    for ((c, row), txn) in args.concurrency.iter().zip(&create_cells).zip(&txn_cells) {
        let _ = writeln!(
            w,
            "| {c} | {} | {} | {} | {} | {:.2}× | {:.2}× |",
            ops(&row[0]),
            ops(txn),
            lat(txn),
            ops(&row[1]),
            txn.rate() / row[0].rate(),
            row[1].rate() / txn.rate()
        );
    }

    let all_cells = || {
        create_cells
            .iter()
            .chain(&get_cells)
            .flatten()
            .chain(&txn_cells)
            .chain(fanouts.iter().map(|(_, base, _)| base))
            .chain(
                fanouts
                    .iter()
                    .filter_map(|(_, _, f)| f.as_ref().ok().map(|f| &f.cell)),
            )
    };
    let disturbed = all_cells().filter(|c| c.others.disturbing()).count();
    let worst_cpu = all_cells().map(|c| c.others.cpu).fold(0.0, f64::max);
    let worst_read = all_cells()
        .map(|c| c.others.disk_read_mb_s)
        .fold(0.0, f64::max);
    let _ = writeln!(
        w,
        "\nOther processes over the run: {:.0}% of the CPUs, {:.1} MB/s of disk reads \
         (worst cell: {:.0}%, {:.1} MB/s). † marks the {disturbed} cells during which they \
         used more than 10% of the CPUs or read more than 2 MB/s: those numbers are suspect.",
        others.cpu * 100.0,
        others.disk_read_mb_s,
        worst_cpu * 100.0,
        worst_read,
    );

    let _ = writeln!(
        w,
        "\n## Watch fan-out (creates at concurrency {}, watchers on the prefix)\n",
        args.fanout_concurrency
    );
    let _ = writeln!(
        w,
        "| backend | watchers | creates/s | p50 / p99 ms | slowdown | events per watcher min / max (expected) | watchers caught up | watch errors |"
    );
    let _ = writeln!(
        w,
        "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"
    );
    for (label, base, loaded) in &fanouts {
        let _ = writeln!(
            w,
            "| {label} | 0 | {} | {} | 1.00× | – | – | – |",
            ops(base),
            lat(base)
        );
        match loaded {
            Ok(f) => {
                let slowdown = base.rate() / f.cell.rate();
                let caught = match f.catch_up {
                    Some(d) => format!("{:.2} s after the writes", d.as_secs_f64()),
                    None => format!("NOT within {} s", DRAIN_TIMEOUT.as_secs()),
                };
                let _ = writeln!(
                    w,
                    "| {label} | {} | {} | {} | {slowdown:.2}× | {} / {} ({}) | {caught} | {} |",
                    f.watchers,
                    ops(&f.cell),
                    lat(&f.cell),
                    f.min_events,
                    f.max_events,
                    f.expected,
                    f.watch_errors
                );
            }
            Err(e) => {
                let _ = writeln!(w, "| {label} | {} | failed: {e} | | | | | |", args.watchers);
            }
        }
    }
    for (label, _, loaded) in &fanouts {
        if let Ok(Fanout {
            first_watch_error: Some(e),
            ..
        }) = loaded
        {
            let _ = writeln!(w, "\n{label}: first watch error: {e}");
        }
    }

    let _ = writeln!(w, "\n## Ratios against the targets\n");
    let _ = writeln!(
        w,
        "| ratio | op | concurrency | measured | target | result |"
    );
    let _ = writeln!(w, "| --- | --- | ---: | ---: | ---: | --- |");
    for (op_name, cells) in [("create", &create_cells), ("get", &get_cells)] {
        for (c, row) in args.concurrency.iter().zip(cells.iter()) {
            ratio_row(
                w,
                "etcd backend / raw etcd",
                op_name,
                *c,
                (&row[1], &row[0]),
                BACKEND_VS_RAW_TARGET,
            );
        }
    }
    for (op_name, cells) in [("create", &create_cells), ("get", &get_cells)] {
        for (c, row) in args.concurrency.iter().zip(cells.iter()) {
            if *c == EMBEDDED_TARGET_CONCURRENCY {
                ratio_row(
                    w,
                    "embedded / raw etcd",
                    op_name,
                    *c,
                    (&row[2], &row[0]),
                    EMBEDDED_VS_RAW_TARGET,
                );
            }
        }
    }
    // Issue 13: writers keep ≥ 0.8× their rate with 1,000 watchers served
    // by the watch cache (one store watch), on both stores.
    for (label, base, loaded) in &fanouts {
        if let Ok(f) = loaded
            && label.ends_with("watch cache")
        {
            ratio_row(
                w,
                &format!("{label}: creates with {} watchers / with none", f.watchers),
                "create",
                args.fanout_concurrency,
                (&f.cell, base),
                CACHE_FANOUT_TARGET,
            );
        }
    }

    let failed: Vec<String> = create_cells
        .iter()
        .chain(&get_cells)
        .flatten()
        .chain(fanouts.iter().map(|(_, base, _)| base))
        .chain(
            fanouts
                .iter()
                .filter_map(|(_, _, f)| f.as_ref().ok().map(|f| &f.cell)),
        )
        .filter(|cell| cell.errors > 0)
        .map(|cell| {
            format!(
                "{} errors, first: {}",
                cell.errors,
                cell.first_error.as_deref().unwrap_or("?")
            )
        })
        .collect();
    if !failed.is_empty() {
        let _ = writeln!(w, "\n## Errors\n");
        for f in failed {
            let _ = writeln!(w, "- {f}");
        }
    }
    let _ = writeln!(
        w,
        "\nTotal run time: {:.0} s (including etcd start and watcher set-up).",
        started.elapsed().as_secs_f64()
    );
    print!("{out}");
    Ok(())
}

/// One row of the targets table: `cells.0 / cells.1` against `target`.
/// The verdict carries † when either cell was disturbed.
fn ratio_row(w: &mut String, what: &str, op: &str, c: usize, cells: (&Cell, &Cell), target: f64) {
    let measured = cells.0.rate() / cells.1.rate();
    let verdict = if measured >= target { "PASS" } else { "MISS" };
    let mark = if cells.0.others.disturbing() || cells.1.others.disturbing() {
        " †"
    } else {
        ""
    };
    let _ = writeln!(
        w,
        "| {what} | {op} | {c} | {measured:.2}× | ≥ {target:.1}× | {verdict}{mark} |"
    );
}
