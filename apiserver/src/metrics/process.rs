//! `process_*` metrics, read from `/proc/self` at each scrape, with the
//! names and help texts of Go's process collector (and component-base's
//! `process_start_time_seconds`) that kube-apiserver exposes.
//!
//! Linux only: elsewhere, or when `/proc` cannot be read, the series are
//! left out rather than reported as zero.

use prometheus_client::collector::Collector;
use prometheus_client::encoding::{DescriptorEncoder, EncodeMetric};
use prometheus_client::metrics::counter::ConstCounter;
use prometheus_client::metrics::gauge::ConstGauge;

/// Clock ticks per second of `/proc/<pid>/stat` times (`USER_HZ`, 100 on
/// every Linux architecture; the kernel converts to it for userspace).
const USER_HZ: f64 = 100.0;

/// The scrape-time process collector.
#[derive(Debug, Default)]
pub struct ProcessCollector {}

impl ProcessCollector {
    /// A collector of this process.
    pub fn new() -> Self {
        ProcessCollector {}
    }
}

/// What one read of `/proc` found.
#[derive(Debug, Default, PartialEq)]
pub struct Sample {
    /// User plus system CPU seconds.
    pub cpu_seconds: Option<f64>,
    /// Resident set size in bytes.
    pub resident_bytes: Option<f64>,
    /// Virtual memory size in bytes.
    pub virtual_bytes: Option<f64>,
    /// Start time, seconds since the Unix epoch.
    pub start_time: Option<f64>,
    /// Open file descriptors.
    pub open_fds: Option<f64>,
    /// The soft limit on open file descriptors.
    pub max_fds: Option<f64>,
    /// The soft limit on the address space (`RLIMIT_AS`).
    pub max_virtual_bytes: Option<f64>,
}

/// Reads this process's figures from `/proc`.
pub fn sample() -> Sample {
    let read = |p: &str| std::fs::read_to_string(p).ok();
    let stat = read("/proc/self/stat").and_then(|s| parse_stat(&s));
    let status = read("/proc/self/status");
    let boot = read("/proc/stat").and_then(|s| boot_time(&s));
    let limits = read("/proc/self/limits");
    Sample {
        cpu_seconds: stat.map(|s| (s.utime + s.stime) as f64 / USER_HZ),
        resident_bytes: status.as_deref().and_then(|s| status_kib(s, "VmRSS:")),
        virtual_bytes: status.as_deref().and_then(|s| status_kib(s, "VmSize:")),
        start_time: stat
            .zip(boot)
            .map(|(s, b)| b as f64 + s.starttime as f64 / USER_HZ),
        open_fds: std::fs::read_dir("/proc/self/fd")
            .ok()
            .map(|d| d.count() as f64),
        max_fds: limits
            .as_deref()
            .and_then(|l| soft_limit(l, "Max open files")),
        max_virtual_bytes: limits
            .as_deref()
            .and_then(|l| soft_limit(l, "Max address space")),
    }
}

/// The fields of `/proc/<pid>/stat` used here.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Stat {
    /// Field 14, user time in ticks.
    pub utime: u64,
    /// Field 15, system time in ticks.
    pub stime: u64,
    /// Field 22, start time in ticks after boot.
    pub starttime: u64,
}

/// Parses `/proc/<pid>/stat`. The command name (field 2) may contain
/// spaces and parentheses, so fields are counted after its last `)`.
pub fn parse_stat(text: &str) -> Option<Stat> {
    let rest = &text[text.rfind(')')? + 1..];
    // `rest` starts at field 3 (state).
    let fields: Vec<&str> = rest.split_whitespace().collect();
    let field = |n: usize| fields.get(n - 3)?.parse::<u64>().ok();
    Some(Stat {
        utime: field(14)?,
        stime: field(15)?,
        starttime: field(22)?,
    })
}

/// `btime` of `/proc/stat`: boot time in seconds since the epoch.
pub fn boot_time(text: &str) -> Option<u64> {
    text.lines()
        .find_map(|l| l.strip_prefix("btime "))
        .and_then(|v| v.trim().parse().ok())
}

/// A `kB` figure of `/proc/<pid>/status`, in bytes.
pub fn status_kib(text: &str, key: &str) -> Option<f64> {
    let line = text.lines().find_map(|l| l.strip_prefix(key))?;
    let kib: f64 = line.split_whitespace().next()?.parse().ok()?;
    Some(kib * 1024.0)
}

/// The soft limit of a `/proc/<pid>/limits` row; `unlimited` is reported
/// as Go's procfs does, the largest `uint64`.
pub fn soft_limit(text: &str, name: &str) -> Option<f64> {
    let line = text.lines().find_map(|l| l.strip_prefix(name))?;
    match line.split_whitespace().next()? {
        "unlimited" => Some(u64::MAX as f64),
        v => v.parse().ok(),
    }
}

impl Collector for ProcessCollector {
    fn encode(&self, mut encoder: DescriptorEncoder) -> Result<(), std::fmt::Error> {
        let s = sample();
        if let Some(v) = s.cpu_seconds {
            let c = ConstCounter::new(v);
            // The registry appends `_total` to counters.
            let e = encoder.encode_descriptor(
                "process_cpu_seconds",
                "Total user and system CPU time spent in seconds.",
                None,
                c.metric_type(),
            )?;
            c.encode(e)?;
        }
        let gauges = [
            (
                "process_max_fds",
                "Maximum number of open file descriptors.",
                s.max_fds,
            ),
            (
                "process_open_fds",
                "Number of open file descriptors.",
                s.open_fds,
            ),
            (
                "process_resident_memory_bytes",
                "Resident memory size in bytes.",
                s.resident_bytes,
            ),
            (
                "process_start_time_seconds",
                "[ALPHA] Start time of the process since unix epoch in seconds.",
                s.start_time,
            ),
            (
                "process_virtual_memory_bytes",
                "Virtual memory size in bytes.",
                s.virtual_bytes,
            ),
            (
                "process_virtual_memory_max_bytes",
                "Maximum amount of virtual memory available in bytes.",
                s.max_virtual_bytes,
            ),
        ];
        for (name, help, value) in gauges {
            if let Some(v) = value {
                let g = ConstGauge::new(v);
                let e = encoder.encode_descriptor(name, help, None, g.metric_type())?;
                g.encode(e)?;
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stat_with_a_tricky_command_name() {
        let line = "4242 (sk ein) (x)) S 1 4242 4242 0 -1 4194560 1000 0 0 0 250 75 0 0 20 0 \
                    12 0 123456 1000000 2000 18446744073709551615";
        assert_eq!(
            parse_stat(line),
            Some(Stat {
                utime: 250,
                stime: 75,
                starttime: 123456
            })
        );
        assert_eq!(parse_stat("garbage"), None);
        assert_eq!(parse_stat("1 (x) S 1 2"), None);
    }

    #[test]
    fn status_limits_and_boot_time() {
        let status = "Name:\tskein\nVmSize:\t  1000 kB\nVmRSS:\t    20 kB\n";
        assert_eq!(status_kib(status, "VmRSS:"), Some(20480.0));
        assert_eq!(status_kib(status, "VmSize:"), Some(1_024_000.0));
        assert_eq!(status_kib(status, "VmSwap:"), None);
        let limits = "Limit                     Soft Limit           Hard Limit           Units\n\
                      Max open files            1024                 524288               files\n\
                      Max address space         unlimited            unlimited            bytes\n";
        assert_eq!(soft_limit(limits, "Max open files"), Some(1024.0));
        assert_eq!(
            soft_limit(limits, "Max address space"),
            Some(u64::MAX as f64)
        );
        assert_eq!(
            boot_time("cpu 1 2\nbtime 1700000000\n"),
            Some(1_700_000_000)
        );
    }

    #[test]
    fn this_process_is_sampled() {
        let s = sample();
        assert!(s.cpu_seconds.is_some_and(|v| v >= 0.0));
        assert!(s.resident_bytes.is_some_and(|v| v > 0.0));
        assert!(s.open_fds.is_some_and(|v| v >= 3.0));
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_secs_f64())
            .unwrap_or_default();
        assert!(
            s.start_time
                .is_some_and(|t| t > now - 86_400.0 * 365.0 && t <= now + 1.0)
        );
    }
}
