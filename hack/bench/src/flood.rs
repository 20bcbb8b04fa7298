//! `bench flood`: issue 31's API priority and fairness acceptance. One
//! `skein serve` with the default FlowSchemas; two token users, neither
//! in `system:masters`:
//! - `polite` creates ConfigMaps at a paced rate (one HTTP/2 connection,
//!   as client-go), first alone, then during the flood, in the same run;
//! - `flooder` opens `--connections` HTTP/1.1 connections (2,000) and
//!   creates ConfigMaps on each as fast as answers come back.
//!
//! Printed: the polite user's p50/p99 alone and under the flood (and
//! their ratio), its failures, and the flood's 201s, 429s and errors.
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
    /// A flag added to `skein serve` (repeatable).
    #[arg(long = "skein-flag", allow_hyphen_values = true)]
    skein_flags: Vec<String>,
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

#[derive(Default)]
struct FloodCounts {
    created: AtomicU64,
    rejected: AtomicU64,
    other: AtomicU64,
    errors: AtomicU64,
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
        let body = json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns}});
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
    let flooder = Https::new(
        addr,
        &skein.credentials.bearer(FLOOD_TOKEN),
        Protocol::Http1,
    )?;
    // Warm the polite connection and caches.
    let _ = paced(&polite, args.rate, 1.0, "warm").await;

    eprintln!("bench flood: the polite user alone ({} s)…", args.seconds);
    let alone = paced(&polite, args.rate, args.seconds, "alone").await;

    eprintln!("bench flood: {} flooding connections…", args.connections);
    let stop = Arc::new(AtomicBool::new(false));
    let counts = Arc::new(FloodCounts::default());
    let mut flood = tokio::task::JoinSet::new();
    for c in 0..args.connections {
        let (flooder, stop, counts) = (flooder.clone(), stop.clone(), counts.clone());
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
    // Let the connections open before measuring.
    tokio::time::sleep(Duration::from_secs(3)).await;
    let before = (
        counts.created.load(Ordering::Relaxed),
        counts.rejected.load(Ordering::Relaxed),
    );
    eprintln!(
        "bench flood: the polite user under the flood ({} s)…",
        args.seconds
    );
    let t = Instant::now();
    let under = paced(&polite, args.rate, args.seconds, "under").await;
    let window = t.elapsed().as_secs_f64();
    let during = (
        counts.created.load(Ordering::Relaxed) - before.0,
        counts.rejected.load(Ordering::Relaxed) - before.1,
    );
    stop.store(true, Ordering::Relaxed);
    while flood.join_next().await.is_some() {}
    let open = crate::client::connections_to(addr.port());

    let mut out = String::new();
    let _ = writeln!(out, "## bench flood\n");
    let mut facts = report::machine_facts();
    facts.extend(skein_facts());
    facts.push(("skein flags", format!("{:?}", args.skein_flags)));
    facts.push(("flooding connections", args.connections.to_string()));
    facts.push((
        "polite rate",
        format!("{}/s for {} s per phase", args.rate, args.seconds),
    ));
    report::facts_table(&mut out, &facts);
    let _ = writeln!(out);
    let _ = writeln!(out, "| polite user | p50 ms | p99 ms | ok | failed |");
    let _ = writeln!(out, "| --- | --- | --- | --- | --- |");
    for (label, p) in [("alone", &alone), ("under the flood", &under)] {
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
    let _ = writeln!(
        out,
        "flood during the measured window ({window:.1} s): {} created ({:.0}/s), {} answered 429; \
         whole flood: {} created, {} 429, {} other answers, {} connection errors; {} connections open at the end",
        during.0,
        during.0 as f64 / window,
        during.1,
        counts.created.load(Ordering::Relaxed),
        counts.rejected.load(Ordering::Relaxed),
        counts.other.load(Ordering::Relaxed),
        counts.errors.load(Ordering::Relaxed),
        open,
    );
    for (label, p) in [("alone", &alone), ("under", &under)] {
        if let Some(first) = p.failures.first() {
            let _ = writeln!(
                out,
                "polite {label}: {} failures, first: {first}",
                p.failures.len()
            );
        }
    }
    print!("{out}");
    Ok(())
}
