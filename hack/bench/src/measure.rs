//! Closed-loop load generation and latency statistics.

use std::future::Future;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// The outcome of one table cell: `concurrency` tasks running one operation
/// in a loop for a fixed time.
pub struct Cell {
    /// Successful operations.
    pub ok: u64,
    /// Failed operations (not in the latencies).
    pub errors: u64,
    /// The first error seen, to show in the report.
    pub first_error: Option<String>,
    /// From the start until the last task finished its last operation.
    pub elapsed: Duration,
    /// Latencies of the successful operations in nanoseconds, sorted.
    latencies_ns: Vec<u64>,
    /// Successful operations of each task (task `t` did indexes `0..per_task[t]`).
    pub per_task: Vec<u64>,
    /// What other processes did meanwhile: the cell is suspect when
    /// [`Others::disturbing`].
    pub others: Others,
}

impl Cell {
    /// One cell from several runs of the same measurement (rounds): counts
    /// and times add up, latencies pool, interference is time-weighted.
    pub fn merge(parts: Vec<Cell>) -> Cell {
        let mut merged = Cell {
            ok: 0,
            errors: 0,
            first_error: None,
            elapsed: Duration::ZERO,
            latencies_ns: Vec::new(),
            per_task: Vec::new(),
            others: Others::default(),
        };
        for part in parts {
            let secs = part.elapsed.as_secs_f64();
            merged.others.cpu += part.others.cpu * secs;
            merged.others.disk_read_mb_s += part.others.disk_read_mb_s * secs;
            merged.ok += part.ok;
            merged.errors += part.errors;
            merged.first_error = merged.first_error.or(part.first_error);
            merged.elapsed += part.elapsed;
            merged.latencies_ns.extend(part.latencies_ns);
            if merged.per_task.len() < part.per_task.len() {
                merged.per_task.resize(part.per_task.len(), 0);
            }
            for (sum, n) in merged.per_task.iter_mut().zip(part.per_task) {
                *sum += n;
            }
        }
        let total = merged.elapsed.as_secs_f64();
        if total > 0.0 {
            merged.others.cpu /= total;
            merged.others.disk_read_mb_s /= total;
        }
        merged.latencies_ns.sort_unstable();
        merged
    }

    /// Successful operations per second.
    pub fn rate(&self) -> f64 {
        self.ok as f64 / self.elapsed.as_secs_f64()
    }

    /// The `q` quantile (0..=1) of the latencies, in milliseconds.
    pub fn quantile_ms(&self, q: f64) -> f64 {
        let n = self.latencies_ns.len();
        if n == 0 {
            return f64::NAN;
        }
        let rank = ((q * n as f64).ceil() as usize).clamp(1, n);
        self.latencies_ns[rank - 1] as f64 / 1e6
    }
}

/// Runs `op(task, i)` in a loop on `concurrency` Tokio tasks until
/// `duration` has passed; task `t`'s `i`-th call gets `(t, i)`. Each task
/// finishes the operation in flight when time is up.
pub async fn run_cell<F, Fut>(concurrency: usize, duration: Duration, op: F) -> Cell
where
    F: Fn(usize, u64) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = anyhow::Result<()>> + Send + 'static,
{
    let op = Arc::new(op);
    let load = LoadSnapshot::now();
    let start = Instant::now();
    let deadline = start + duration;
    let tasks: Vec<_> = (0..concurrency)
        .map(|task| {
            let op = op.clone();
            tokio::spawn(async move {
                let mut latencies = Vec::with_capacity(4096);
                let (mut ok, mut errors, mut first_error) = (0u64, 0u64, None);
                while Instant::now() < deadline {
                    let t0 = Instant::now();
                    match op(task, ok).await {
                        Ok(()) => {
                            let ns = t0.elapsed().as_nanos();
                            latencies.push(u64::try_from(ns).unwrap_or(u64::MAX));
                            ok += 1;
                        }
                        Err(e) => {
                            errors += 1;
                            first_error.get_or_insert_with(|| format!("{e:#}"));
                        }
                    }
                }
                (latencies, ok, errors, first_error)
            })
        })
        .collect();
    let mut cell = Cell {
        ok: 0,
        errors: 0,
        first_error: None,
        elapsed: Duration::ZERO,
        latencies_ns: Vec::new(),
        per_task: Vec::with_capacity(concurrency),
        others: Others::default(),
    };
    for task in tasks {
        let (latencies, ok, errors, first_error) = task.await.expect("a benchmark task panicked");
        cell.latencies_ns.extend(latencies);
        cell.ok += ok;
        cell.errors += errors;
        cell.per_task.push(ok);
        if cell.first_error.is_none() {
            cell.first_error = first_error;
        }
    }
    cell.elapsed = start.elapsed();
    cell.others = LoadSnapshot::now().others_since(&load);
    cell.latencies_ns.sort_unstable();
    cell
}

/// The disk's durable-write latency: `rounds` appends of 4 KiB to a file in
/// `dir`, each followed by `fdatasync` (what a WAL commit costs at least).
/// Returns (p50, p99) in milliseconds.
pub fn fsync_latency(dir: &std::path::Path, rounds: usize) -> std::io::Result<(f64, f64)> {
    use std::io::Write;
    let path = dir.join("fsync-probe");
    let mut file = std::fs::File::create(&path)?;
    let block = [0x5au8; 4096];
    let mut us = Vec::with_capacity(rounds);
    for _ in 0..rounds {
        let t0 = Instant::now();
        file.write_all(&block)?;
        file.sync_data()?;
        us.push(t0.elapsed().as_secs_f64() * 1000.0);
    }
    std::fs::remove_file(&path)?;
    us.sort_by(f64::total_cmp);
    let at = |q: f64| us[((q * us.len() as f64).ceil() as usize).clamp(1, us.len()) - 1];
    Ok((at(0.5), at(0.99)))
}

/// The first line of a command's stdout, or a note why there is none.
pub fn command_line(program: &str, args: &[&str]) -> String {
    match std::process::Command::new(program).args(args).output() {
        Ok(out) => String::from_utf8_lossy(&out.stdout)
            .lines()
            .next()
            .unwrap_or("")
            .trim()
            .to_owned(),
        Err(e) => format!("({program}: {e})"),
    }
}

/// What other processes did to the machine over an interval: they compete
/// with the benchmark for the 2 cores and, through the shared disk, for
/// fsync latency.
#[derive(Clone, Copy, Default)]
pub struct Others {
    /// Share of all cores (0..=1) they used.
    pub cpu: f64,
    /// MB/s they read from disk (the benchmark itself reads nothing: its data
    /// stays in the page cache), e.g. a build loading its artifacts.
    pub disk_read_mb_s: f64,
}

impl Others {
    /// Whether a measurement taken meanwhile is suspect.
    pub fn disturbing(&self) -> bool {
        self.cpu > 0.10 || self.disk_read_mb_s > 2.0
    }
}

/// Machine-wide counters and this process's own share of them (with its
/// direct children, i.e. etcd). The difference between two snapshots is what
/// other processes did meanwhile.
#[derive(Clone, Copy)]
pub struct LoadSnapshot {
    at: Instant,
    /// Busy CPU seconds of the machine, all cores.
    machine_cpu: f64,
    our_cpu: f64,
    /// Bytes read from the machine's disks.
    disk_read: f64,
    our_read: f64,
}

/// Clock ticks per second of /proc (USER_HZ; 100 on Linux).
const TICKS: f64 = 100.0;

impl LoadSnapshot {
    /// Reads /proc and /sys. Zeros where they are unreadable (then nothing is
    /// flagged).
    pub fn now() -> LoadSnapshot {
        let machine_cpu = std::fs::read_to_string("/proc/stat")
            .ok()
            .and_then(|s| {
                let first = s.lines().next()?.to_owned();
                // cpu user nice system idle iowait irq softirq steal …
                let f: Vec<f64> = first
                    .split_whitespace()
                    .skip(1)
                    .map(|x| x.parse().unwrap_or(0.0))
                    .collect();
                Some(
                    [0, 1, 2, 5, 6]
                        .iter()
                        .map(|&i| f.get(i).copied().unwrap_or(0.0))
                        .sum::<f64>(),
                )
            })
            .unwrap_or(0.0);
        let me = std::process::id();
        let mut ours: Vec<u32> = vec![me];
        let mut our_cpu = 0.0;
        if let Ok(dir) = std::fs::read_dir("/proc") {
            for entry in dir.flatten() {
                let Some(pid) = entry
                    .file_name()
                    .to_str()
                    .and_then(|p| p.parse::<u32>().ok())
                else {
                    continue;
                };
                if let Some((ticks, ppid)) = proc_cpu_ticks(pid)
                    && (pid == me || ppid == me)
                {
                    our_cpu += ticks;
                    if pid != me {
                        ours.push(pid);
                    }
                }
            }
        }
        let our_read = ours.iter().filter_map(|&p| proc_read_bytes(p)).sum();
        LoadSnapshot {
            at: Instant::now(),
            machine_cpu: machine_cpu / TICKS,
            our_cpu: our_cpu / TICKS,
            disk_read: disk_read_bytes(),
            our_read,
        }
    }

    /// What other processes did since `earlier`.
    pub fn others_since(&self, earlier: &LoadSnapshot) -> Others {
        let cores = std::thread::available_parallelism().map_or(1, |n| n.get()) as f64;
        let wall = self.at.duration_since(earlier.at).as_secs_f64();
        if wall <= 0.0 {
            return Others::default();
        }
        let cpu = (self.machine_cpu - earlier.machine_cpu) - (self.our_cpu - earlier.our_cpu);
        let read = (self.disk_read - earlier.disk_read) - (self.our_read - earlier.our_read);
        Others {
            cpu: (cpu / (wall * cores)).clamp(0.0, 1.0),
            disk_read_mb_s: (read / wall / 1e6).max(0.0),
        }
    }
}

/// utime + stime (ticks) and parent pid of a process, from /proc/<pid>/stat.
fn proc_cpu_ticks(pid: u32) -> Option<(f64, u32)> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // The command name may hold spaces: fields start after its ')'.
    let fields: Vec<&str> = stat.rsplit_once(')')?.1.split_whitespace().collect();
    let ppid = fields.get(1)?.parse().ok()?;
    let utime: f64 = fields.get(11)?.parse().ok()?;
    let stime: f64 = fields.get(12)?.parse().ok()?;
    Some((utime + stime, ppid))
}

/// Bytes a process caused to be read from storage (/proc/<pid>/io).
fn proc_read_bytes(pid: u32) -> Option<f64> {
    let io = std::fs::read_to_string(format!("/proc/{pid}/io")).ok()?;
    io.lines()
        .find_map(|l| l.strip_prefix("read_bytes:"))
        .and_then(|v| v.trim().parse().ok())
}

/// Bytes read from the machine's disks (not loop, RAM or zram devices).
fn disk_read_bytes() -> f64 {
    let Ok(dir) = std::fs::read_dir("/sys/block") else {
        return 0.0;
    };
    dir.flatten()
        .filter(|e| {
            let name = e.file_name().to_string_lossy().into_owned();
            !["loop", "ram", "zram"].iter().any(|p| name.starts_with(p))
        })
        .filter_map(|e| std::fs::read_to_string(e.path().join("stat")).ok())
        .filter_map(|stat| {
            // reads, merges, sectors read, … (512-byte sectors)
            stat.split_whitespace().nth(2)?.parse::<f64>().ok()
        })
        .map(|sectors| sectors * 512.0)
        .sum()
}
