//! `bench members`: one federation probing many member clusters on this
//! machine. Members are real `skein serve --role=member` processes (small
//! footprint: one simulated Node, no object-count poll), joined by creating
//! their kubeconfig Secret and Cluster over HTTPS as `skein join` does.
//!
//! Measured, once every Cluster is Ready:
//! - the federation's CPU (utime + stime from `/proc/<pid>/stat`) over the
//!   observation window, as a share of one CPU, and its RSS;
//! - the probe period actually kept: the intervals between consecutive
//!   `/readyz` requests each member logged (its access log, microsecond
//!   timestamps), minus the period; p50, p99 and the worst lateness;
//! - the time from killing one member (SIGKILL) to its Cluster's
//!   `Ready=False`.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::time::{Duration, Instant};

use anyhow::Context as _;
use base64::Engine as _;
use bytes::Bytes;
use hyper::Method;
use serde_json::{Value, json};
use skein_tests::server::Server;

use crate::client::{Https, Protocol};
use crate::cluster::Skein;
use crate::report;

/// `bench members` flags.
#[derive(clap::Args)]
pub struct Args {
    /// How many member processes to start and join.
    #[arg(long, default_value_t = 50)]
    members: usize,
    /// How long to observe the probing once every member is Ready.
    #[arg(long, default_value_t = 60)]
    observe_seconds: u64,
    /// Run the federation on a real etcd instead of its embedded store.
    #[arg(long)]
    etcd: bool,
}

/// The federation's probe period (its default `--cluster-probe-period`).
const PERIOD: Duration = Duration::from_secs(10);

/// CPU-share target: probing N members uses less than this of one CPU.
const CPU_TARGET: f64 = 0.05;

/// Lateness target: no probe later than this.
const LATENESS_TARGET: Duration = Duration::from_secs(1);

/// Runs the benchmark and prints its report.
pub async fn run(args: Args) -> anyhow::Result<()> {
    let started = Instant::now();
    eprintln!("starting the federation");
    let fed = Skein::start(args.etcd).await?;
    let api = fed.client(Protocol::H2)?;
    let fed_pid = fed.server.pid().context("the federation's pid")?;

    eprintln!("starting {} members", args.members);
    let dir = tempfile::tempdir().context("temp dir for members")?;
    let mut members: Vec<Option<Server>> = Vec::with_capacity(args.members);
    for chunk in (0..args.members).collect::<Vec<_>>().chunks(10) {
        let starts = chunk.iter().map(|i| {
            let data = dir.path().join(format!("m{i}"));
            async move {
                Server::start(
                    &data,
                    &[
                        "--role=member",
                        "--simulate-workloads",
                        "--sim-nodes=1",
                        "--etcd-count-metric-poll-period=0s",
                    ],
                )
                .await
            }
        });
        members.extend(
            futures::future::join_all(starts)
                .await
                .into_iter()
                .map(Some),
        );
    }

    eprintln!("joining them");
    let join_start = Instant::now();
    post(
        &api,
        "/api/v1/namespaces",
        &json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "skein-system"}}),
        &[201, 409],
    )
    .await?;
    for (i, m) in members.iter().enumerate() {
        let Some(m) = m else { continue };
        join(&api, &format!("m{i}"), m).await?;
    }
    wait_all_ready(&api, args.members, Duration::from_secs(180)).await?;
    let all_ready = join_start.elapsed();
    eprintln!("all {} Ready after {all_ready:.1?}", args.members);

    let window_start = wall_clock();
    let cpu_before = cpu_ticks(fed_pid)?;
    let t0 = Instant::now();
    tokio::time::sleep(Duration::from_secs(args.observe_seconds)).await;
    let cpu_after = cpu_ticks(fed_pid)?;
    let elapsed = t0.elapsed().as_secs_f64();
    let window_end = wall_clock();
    let ticks_per_second = 100.0;
    let cpu_share = (cpu_after - cpu_before) as f64 / ticks_per_second / elapsed;
    let (rss, hwm) = rss_kib(fed_pid)?;

    let mut lateness: Vec<f64> = Vec::new();
    let mut intervals = 0usize;
    for m in members.iter().flatten() {
        let stamps = readyz_times(&m.logs(), window_start, window_end);
        for w in stamps.windows(2) {
            intervals += 1;
            lateness.push((w[1] - w[0] - PERIOD.as_secs_f64()).max(0.0));
        }
    }
    lateness.sort_by(f64::total_cmp);
    let q = |p: f64| -> f64 {
        if lateness.is_empty() {
            return f64::NAN;
        }
        let i = ((lateness.len() as f64 - 1.0) * p).round() as usize;
        lateness[i.min(lateness.len() - 1)]
    };
    let worst = lateness.last().copied().unwrap_or(f64::NAN);

    eprintln!("killing member m0");
    let killed = Instant::now();
    members[0] = None;
    let death = wait_not_ready(&api, "m0", Duration::from_secs(120)).await?;
    let death_to_not_ready = killed.elapsed();

    let mut w = String::new();
    let _ = writeln!(w, "# bench members\n");
    let mut facts = report::machine_facts();
    facts.extend(crate::cluster::skein_facts());
    facts.push(("store", fed.backend()));
    facts.push((
        "members",
        format!(
            "{} × `skein serve --role=member --simulate-workloads --sim-nodes=1`",
            args.members
        ),
    ));
    facts.push((
        "probe period",
        format!("{PERIOD:?} (the default), failure threshold 3, timeout 3 s"),
    ));
    facts.push((
        "observed",
        format!("{elapsed:.1} s once all were Ready ({all_ready:.1?} after the first join)"),
    ));
    facts.push(("load average", report::loadavg()));
    report::facts_table(&mut w, &facts);
    let _ = writeln!(w);
    let _ = writeln!(
        w,
        "| measure | value | target | verdict |\n| --- | --- | --- | --- |"
    );
    let _ = writeln!(
        w,
        "| federation CPU while probing | {:.2}% of one CPU | < {:.0}% | {} |",
        cpu_share * 100.0,
        CPU_TARGET * 100.0,
        if cpu_share < CPU_TARGET {
            "PASS"
        } else {
            "MISS"
        }
    );
    let _ = writeln!(
        w,
        "| federation RSS (peak) | {:.1} MiB ({:.1} MiB) | | |",
        rss as f64 / 1024.0,
        hwm as f64 / 1024.0
    );
    let _ = writeln!(
        w,
        "| probe lateness p50 / p99 / worst ({intervals} intervals) | {:.3} / {:.3} / {:.3} s | ≤ {:.0} s | {} |",
        q(0.5),
        q(0.99),
        worst,
        LATENESS_TARGET.as_secs_f64(),
        if intervals > 0 && worst <= LATENESS_TARGET.as_secs_f64() {
            "PASS"
        } else {
            "MISS"
        }
    );
    let _ = writeln!(
        w,
        "| member killed → `Ready=False` | {:.1} s (reason {}) | ≤ 40 s | {} |",
        death_to_not_ready.as_secs_f64(),
        death,
        if death_to_not_ready <= Duration::from_secs(40) {
            "PASS"
        } else {
            "MISS"
        }
    );
    let _ = writeln!(w, "\nTotal run: {:.0?}.", started.elapsed());
    print!("{w}");
    Ok(())
}

pub(crate) async fn post(api: &Https, path: &str, body: &Value, ok: &[u16]) -> anyhow::Result<()> {
    let reply = api
        .send(
            Method::POST,
            path,
            Some(("application/json", Bytes::from(body.to_string()))),
        )
        .await?;
    anyhow::ensure!(
        ok.contains(&reply.status.as_u16()),
        "POST {path}: {}: {}",
        reply.status,
        crate::client::excerpt(&reply.body)
    );
    Ok(())
}

/// Creates the member's kubeconfig Secret and its Cluster.
pub(crate) async fn join(api: &Https, name: &str, member: &Server) -> anyhow::Result<()> {
    let kubeconfig = std::fs::read(member.kubeconfig()).context("a member's admin.kubeconfig")?;
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
        "metadata": {"name": name},
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

/// Each Cluster's Ready condition (status, reason).
async fn readiness(api: &Https) -> anyhow::Result<BTreeMap<String, (String, String)>> {
    let body = api
        .expect(
            200,
            Method::GET,
            "/apis/federation.skein.io/v1alpha1/clusters",
            None,
        )
        .await?;
    let list: Value = serde_json::from_slice(&body).context("the Cluster list")?;
    let mut out = BTreeMap::new();
    for c in list["items"].as_array().into_iter().flatten() {
        let name = c["metadata"]["name"]
            .as_str()
            .unwrap_or_default()
            .to_owned();
        let ready = c["status"]["conditions"]
            .as_array()
            .into_iter()
            .flatten()
            .find(|c| c["type"] == "Ready");
        let field = |k: &str| {
            ready
                .and_then(|r| r[k].as_str())
                .unwrap_or_default()
                .to_owned()
        };
        out.insert(name, (field("status"), field("reason")));
    }
    Ok(out)
}

async fn wait_all_ready(api: &Https, n: usize, limit: Duration) -> anyhow::Result<()> {
    let deadline = Instant::now() + limit;
    loop {
        let states = readiness(api).await?;
        let ready = states.values().filter(|(s, _)| s == "True").count();
        if ready == n {
            return Ok(());
        }
        anyhow::ensure!(
            Instant::now() < deadline,
            "only {ready} of {n} Clusters became Ready within {limit:?}: {states:?}"
        );
        tokio::time::sleep(Duration::from_millis(500)).await;
    }
}

/// Waits until `name` is `Ready=False`; returns the reason.
async fn wait_not_ready(api: &Https, name: &str, limit: Duration) -> anyhow::Result<String> {
    let deadline = Instant::now() + limit;
    loop {
        if let Some((status, reason)) = readiness(api).await?.get(name)
            && status == "False"
        {
            return Ok(reason.clone());
        }
        anyhow::ensure!(
            Instant::now() < deadline,
            "{name} still Ready after {limit:?}"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// Seconds since the Unix epoch, as the log timestamps count them.
fn wall_clock() -> f64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0.0, |d| d.as_secs_f64())
}

/// The times (Unix seconds) of the `/readyz` requests a member logged
/// between `from` and `to`.
fn readyz_times(log: &str, from: f64, to: f64) -> Vec<f64> {
    log.lines()
        .filter(|l| l.contains("skein::access") && l.contains("URI=\"/readyz"))
        .filter_map(|l| l.split_whitespace().next().and_then(parse_rfc3339))
        .filter(|t| *t >= from && *t <= to)
        .collect()
}

/// `2026-12-03T13:12:06.123456Z` → Unix seconds.
fn parse_rfc3339(s: &str) -> Option<f64> {
    let s = s.strip_suffix('Z')?;
    let (date, clock) = s.split_once('T')?;
    let mut d = date.split('-').map(str::parse::<i64>);
    let (y, m, day) = (d.next()?.ok()?, d.next()?.ok()?, d.next()?.ok()?);
    let mut c = clock.split(':');
    let (h, min) = (
        c.next()?.parse::<i64>().ok()?,
        c.next()?.parse::<i64>().ok()?,
    );
    let sec = c.next()?.parse::<f64>().ok()?;
    // Days from the civil date (Howard Hinnant's algorithm).
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (m + 9) % 12;
    let doy = (153 * mp + 2) / 5 + day - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    let days = era * 146_097 + doe - 719_468;
    Some((days * 86_400 + h * 3600 + min * 60) as f64 + sec)
}

/// utime + stime of `pid`, in clock ticks.
pub(crate) fn cpu_ticks(pid: u32) -> anyhow::Result<u64> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).context("/proc/<pid>/stat")?;
    // Fields after the command name (which may hold spaces) in parentheses.
    let rest = stat.rsplit_once(')').map(|(_, r)| r).unwrap_or_default();
    let fields: Vec<&str> = rest.split_whitespace().collect();
    let field = |i: usize| -> anyhow::Result<u64> {
        fields
            .get(i)
            .and_then(|f| f.parse().ok())
            .context("a malformed /proc/<pid>/stat")
    };
    // utime and stime are fields 14 and 15; `rest` starts at field 3.
    Ok(field(11)? + field(12)?)
}

/// (VmRSS, VmHWM) of `pid` in KiB.
pub(crate) fn rss_kib(pid: u32) -> anyhow::Result<(u64, u64)> {
    let status =
        std::fs::read_to_string(format!("/proc/{pid}/status")).context("/proc/<pid>/status")?;
    let get = |key: &str| {
        status
            .lines()
            .find(|l| l.starts_with(key))
            .and_then(|l| l.split_whitespace().nth(1))
            .and_then(|v| v.parse().ok())
            .unwrap_or(0)
    };
    Ok((get("VmRSS:"), get("VmHWM:")))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn log_timestamps_parse_as_unix_seconds() {
        assert_eq!(parse_rfc3339("1970-01-01T00:00:01.5Z"), Some(1.5));
        assert_eq!(parse_rfc3339("2026-12-03T13:12:06Z"), Some(1_796_303_526.0));
        assert_eq!(parse_rfc3339("nonsense"), None);
    }
}
