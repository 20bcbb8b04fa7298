//! The member-cluster controllers' flags (`skein serve`, control-plane
//! role).

use skein_apiserver::config::parse_duration;

/// The member-cluster controllers' flags (control-plane role).
#[derive(Debug, Clone, clap::Args)]
pub struct MemberConfig {
    /// How often each member's `/readyz` is probed.
    #[arg(long = "cluster-probe-period", default_value = "10s", value_parser = parse_duration)]
    pub probe_period: std::time::Duration,
    /// How long one probe may take.
    #[arg(long = "cluster-probe-timeout", default_value = "3s", value_parser = parse_duration)]
    pub probe_timeout: std::time::Duration,
    /// Consecutive failed probes that make a Ready member not Ready.
    #[arg(long = "cluster-failure-threshold", default_value_t = 3)]
    pub failure_threshold: u32,
    /// How long a member may stay not Ready before its Divided replicas
    /// are re-planned onto Ready clusters (Duplicated copies stay).
    #[arg(long = "cluster-grace-period", default_value = "60s", value_parser = parse_duration)]
    pub grace_period: std::time::Duration,
    /// How many writes the syncer has in flight to one member at a time.
    #[arg(long = "sync-concurrency", default_value_t = 8)]
    pub sync_concurrency: usize,
}

impl Default for MemberConfig {
    fn default() -> Self {
        MemberConfig {
            probe_period: std::time::Duration::from_secs(10),
            probe_timeout: std::time::Duration::from_secs(3),
            failure_threshold: 3,
            grace_period: std::time::Duration::from_secs(60),
            sync_concurrency: 8,
        }
    }
}
