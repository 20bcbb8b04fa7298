//! The workload simulator's flags (`skein serve --simulate-workloads`).

use skein_apiserver::config::parse_duration;

/// The workload simulator's flags (`--simulate-workloads`, member role).
#[derive(Debug, Clone, clap::Args)]
pub struct SimConfig {
    /// How many simulated Nodes to create.
    #[arg(long = "sim-nodes", default_value_t = 3)]
    pub nodes: u32,
    /// Each simulated Node's CPU capacity (a quantity: `8`, `3500m`).
    #[arg(long = "sim-node-cpu", default_value = "8")]
    pub node_cpu: String,
    /// Each simulated Node's memory capacity (a quantity: `32Gi`).
    #[arg(long = "sim-node-memory", default_value = "32Gi")]
    pub node_memory: String,
    /// Each simulated Node's Pod capacity.
    #[arg(long = "sim-node-pods", default_value_t = 110)]
    pub node_pods: u32,
    /// The `topology.kubernetes.io/region` label of the simulated Nodes.
    #[arg(long = "sim-region", default_value = "sim-region")]
    pub region: String,
    /// The `topology.kubernetes.io/zone` labels, spread over the Nodes in
    /// turn (comma-separated).
    #[arg(
        long = "sim-zones",
        value_delimiter = ',',
        default_value = "sim-zone-a"
    )]
    pub zones: Vec<String>,
    /// IPv4 CIDR that `type: LoadBalancer` Services get ingress IPs from
    /// (written into status only; nothing listens on them).
    #[arg(long = "sim-lb-range", default_value = "172.18.255.0/24")]
    pub lb_range: String,
    /// How long a bound Pod takes to become Running and Ready.
    #[arg(long = "sim-pod-ready-delay", default_value = "1s", value_parser = parse_duration)]
    pub pod_ready_delay: std::time::Duration,
    /// How long a Job's Pod runs before it succeeds.
    #[arg(long = "sim-job-duration", default_value = "2s", value_parser = parse_duration)]
    pub job_duration: std::time::Duration,
    /// The niceness (0–19) of the simulator's threads. Above 0 the
    /// simulated kubelets and controllers run on threads of their own that
    /// yield the CPU to the member's API server, as a real cluster's
    /// kubelets and controller manager, on other machines, never compete
    /// with it; at 0 they share the API server's threads.
    #[arg(long = "sim-nice", default_value_t = 0, value_parser = clap::value_parser!(i32).range(0..=19))]
    pub nice: i32,
}

impl Default for SimConfig {
    fn default() -> Self {
        SimConfig {
            nodes: 3,
            node_cpu: "8".into(),
            node_memory: "32Gi".into(),
            node_pods: 110,
            region: "sim-region".into(),
            zones: vec!["sim-zone-a".into()],
            lb_range: "172.18.255.0/24".into(),
            pod_ready_delay: std::time::Duration::from_secs(1),
            job_duration: std::time::Duration::from_secs(2),
            nice: 0,
        }
    }
}
