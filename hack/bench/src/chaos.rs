//! `bench chaos`: the long form of the chaos run (issue 31), the driver
//! and invariant checker of `skein_tests::chaos` for `--minutes` (30 by
//! default) instead of the CI test's one minute.
//!
//! Beside the run's own report (steps, errors, invariants after the
//! faults stop, repeated Events), it samples the federation's RSS
//! (`VmRSS`) and thread count (`Threads`, from `/proc/<pid>/status`; the
//! pid changes at every SIGKILL and restart) every 5 s, and compares the
//! maxima of the first 10 minutes after the warm-up with those of the last
//! 10 minutes: each may grow by at most 10 % (issue 31). Runs shorter
//! than 21 minutes compare the first and last thirds after the warm-up.
//! Exits non-zero when an invariant fails or a bound is missed.

use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use anyhow::Context as _;
use skein_tests::chaos::{Chaos, Config, summary};

/// `bench chaos` flags.
#[derive(clap::Args)]
pub struct Args {
    /// How long the random steps go on.
    #[arg(long, default_value_t = 30)]
    minutes: u64,
    /// Member clusters, each behind a fault proxy.
    #[arg(long, default_value_t = 6)]
    members: usize,
    /// The seed (default: the time).
    #[arg(long)]
    seed: Option<u64>,
    /// SIGKILL the federation every this many seconds.
    #[arg(long, default_value_t = 300)]
    kill_every_seconds: u64,
    /// Samples before this are not compared.
    #[arg(long, default_value_t = 2)]
    warmup_minutes: u64,
}

/// How much the last window's maxima may exceed the first's.
const GROWTH_BOUND: f64 = 1.1;

#[derive(Clone, Copy)]
struct Sample {
    at: Duration,
    rss_kib: u64,
    threads: u64,
}

fn status_field(status: &str, field: &str) -> Option<u64> {
    status
        .lines()
        .find_map(|l| l.strip_prefix(field))
        .and_then(|v| v.split_whitespace().next())
        .and_then(|v| v.parse().ok())
}

/// Runs the benchmark and prints its report.
pub async fn run(args: Args) -> anyhow::Result<()> {
    let seed = args.seed.unwrap_or_else(|| {
        SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(1, |d| d.as_secs())
    });
    let config = Config {
        members: args.members,
        duration: Duration::from_secs(args.minutes * 60),
        seed,
        kill_every: (args.kill_every_seconds > 0)
            .then(|| Duration::from_secs(args.kill_every_seconds)),
        pause: Duration::from_millis(150),
        settle: Duration::from_secs(120),
    };
    eprintln!(
        "chaos: {} members, {} minutes, seed {seed}, SIGKILL every {} s",
        args.members, args.minutes, args.kill_every_seconds
    );
    let dir = tempfile::tempdir().context("a temp dir")?;
    let k = skein_tests::kubectl_binaries()
        .first()
        .context("a kubectl")?
        .clone();
    let chaos = Chaos::start(dir.path(), &k, &config).await;
    let pid = chaos.fed_pid.clone();
    let samples: Arc<Mutex<Vec<Sample>>> = Arc::default();
    let stop = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let sampler = {
        let (samples, stop) = (samples.clone(), stop.clone());
        let start = Instant::now();
        std::thread::spawn(move || {
            while !stop.load(Ordering::Relaxed) {
                let p = pid.load(Ordering::Relaxed);
                if let Ok(s) = std::fs::read_to_string(format!("/proc/{p}/status"))
                    && let (Some(rss_kib), Some(threads)) =
                        (status_field(&s, "VmRSS:"), status_field(&s, "Threads:"))
                {
                    samples.lock().expect("samples").push(Sample {
                        at: start.elapsed(),
                        rss_kib,
                        threads,
                    });
                }
                std::thread::sleep(Duration::from_secs(5));
            }
        })
    };
    let report = chaos.run(&config).await;
    stop.store(true, Ordering::Relaxed);
    let _ = sampler.join();
    let samples = samples.lock().expect("samples").clone();

    let warmup = Duration::from_secs(args.warmup_minutes * 60);
    let end = config.duration;
    let span = if end >= warmup + Duration::from_secs(21 * 60) {
        Duration::from_secs(10 * 60)
    } else {
        end.saturating_sub(warmup) / 3
    };
    let max_in = |from: Duration, to: Duration, f: fn(&Sample) -> u64| {
        samples
            .iter()
            .filter(|s| s.at >= from && s.at < to)
            .map(f)
            .max()
            .unwrap_or(0)
    };
    let first = (warmup, warmup + span);
    let last = (end.saturating_sub(span), end);
    let rss = (
        max_in(first.0, first.1, |s| s.rss_kib),
        max_in(last.0, last.1, |s| s.rss_kib),
    );
    let threads = (
        max_in(first.0, first.1, |s| s.threads),
        max_in(last.0, last.1, |s| s.threads),
    );
    #[allow(clippy::cast_precision_loss)]
    let ratio = |(a, b): (u64, u64)| {
        if a == 0 {
            f64::INFINITY
        } else {
            b as f64 / a as f64
        }
    };
    let verdict = |r: f64| if r <= GROWTH_BOUND { "PASS" } else { "MISS" };
    println!("# bench chaos (issue 31)\n");
    println!(
        "seed {seed}, {} members, {} min of steps, SIGKILL every {} s, machine {}, load {}\n",
        args.members,
        args.minutes,
        args.kill_every_seconds,
        crate::report::cpu_model(),
        crate::report::loadavg()
    );
    println!("{}\n", summary(&report));
    println!(
        "| federation | max, first {:.0?}-{:.0?} | max, last {:.0?}-{:.0?} | last/first | ≤ {GROWTH_BOUND} |",
        first.0, first.1, last.0, last.1
    );
    println!("|---|---|---|---|---|");
    println!(
        "| RSS (MiB) | {:.1} | {:.1} | {:.2} | {} |",
        rss.0 as f64 / 1024.0,
        rss.1 as f64 / 1024.0,
        ratio(rss),
        verdict(ratio(rss))
    );
    println!(
        "| threads | {} | {} | {:.2} | {} |",
        threads.0,
        threads.1,
        ratio(threads),
        verdict(ratio(threads))
    );
    println!("\n{} samples every 5 s", samples.len());
    let ok = report.errors.is_empty()
        && report.violations.is_empty()
        && ratio(rss) <= GROWTH_BOUND
        && ratio(threads) <= GROWTH_BOUND;
    anyhow::ensure!(ok, "the chaos run failed (see the report)");
    Ok(())
}
