//! The API server's `skein serve` flags ([`Config`]). The federation's
//! and the simulator's flags live in their crates; the `skein` crate joins
//! them into one command line.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};
use std::path::PathBuf;

use clap::ValueEnum;

/// Leader election of the controllers (kube-controller-manager's flags).
#[derive(Debug, Clone, clap::Args)]
pub struct LeaderElectionConfig {
    /// Run the controllers (garbage collector, namespaces, ServiceAccounts,
    /// the federation's scheduler, syncer and member health) only while
    /// holding a `coordination.k8s.io` Lease, so that several replicas can
    /// serve one etcd (kube-controller-manager's `--leader-elect`). Every
    /// replica serves the API either way. Off by default: turn it on for
    /// more than one replica (the Helm chart does). A replica that loses
    /// the Lease shuts down and exits non-zero, to be restarted as a
    /// candidate.
    #[arg(long = "leader-elect", default_value_t = false, action = clap::ArgAction::Set,
          num_args = 0..=1, default_missing_value = "true")]
    pub enabled: bool,
    /// How long a Lease holds after its last renewal; a candidate takes
    /// over a leader that has not renewed for this long.
    #[arg(long = "leader-elect-lease-duration", default_value = "15s", value_parser = parse_duration)]
    pub lease_duration: std::time::Duration,
    /// How long the leader keeps retrying a renewal before it gives up
    /// leadership (less than the lease duration).
    #[arg(long = "leader-elect-renew-deadline", default_value = "10s", value_parser = parse_duration)]
    pub renew_deadline: std::time::Duration,
    /// How often candidates try to take the Lease and the leader renews it.
    #[arg(long = "leader-elect-retry-period", default_value = "2s", value_parser = parse_duration)]
    pub retry_period: std::time::Duration,
    /// The Lease's name.
    #[arg(long = "leader-elect-resource-name", default_value = "skein")]
    pub resource_name: String,
    /// The Lease's namespace.
    #[arg(
        long = "leader-elect-resource-namespace",
        default_value = "kube-system"
    )]
    pub resource_namespace: String,
}

impl Default for LeaderElectionConfig {
    fn default() -> Self {
        LeaderElectionConfig {
            enabled: false,
            lease_duration: std::time::Duration::from_secs(15),
            renew_deadline: std::time::Duration::from_secs(10),
            retry_period: std::time::Duration::from_secs(2),
            resource_name: "skein".into(),
            resource_namespace: "kube-system".into(),
        }
    }
}

impl LeaderElectionConfig {
    /// Checks what clap cannot: the deadline is shorter than the lease,
    /// and the retry period shorter than the deadline (client-go's
    /// checks).
    pub fn validate(&self) -> Result<(), String> {
        if self.lease_duration <= self.renew_deadline {
            return Err(
                "--leader-elect-lease-duration must be greater than --leader-elect-renew-deadline"
                    .into(),
            );
        }
        if self.renew_deadline.as_secs_f64() <= 1.2 * self.retry_period.as_secs_f64() {
            return Err("--leader-elect-renew-deadline must be greater than 1.2 × --leader-elect-retry-period".into());
        }
        if self.retry_period.is_zero() {
            return Err("--leader-elect-retry-period must be greater than zero".into());
        }
        Ok(())
    }
}

/// Which kind of server `skein serve` runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, ValueEnum)]
pub enum Role {
    /// The federation control plane (with federation controllers).
    #[default]
    ControlPlane,
    /// A plain Kubernetes API server, usable as a member cluster.
    Member,
}

/// Everything `skein serve` is configured with.
#[derive(Debug, Clone, clap::Args)]
pub struct Config {
    /// Directory for the embedded store, the PKI and the admin kubeconfig.
    #[arg(long, default_value = "./skein-data")]
    pub data_dir: PathBuf,

    /// IP address to listen on.
    #[arg(long, default_value_t = IpAddr::V4(Ipv4Addr::LOCALHOST))]
    pub bind_address: IpAddr,

    /// HTTPS port; 0 picks a free port (the chosen one is printed).
    #[arg(long, default_value_t = 6443)]
    pub secure_port: u16,

    /// Comma-separated etcd endpoints. Without it, the embedded store in
    /// `<data-dir>/store.redb` is used.
    #[arg(long, value_delimiter = ',')]
    pub etcd_servers: Vec<String>,

    /// Prefix prepended to every etcd key (keys themselves look like
    /// `/registry/<resource>/...`).
    #[arg(long, default_value = "")]
    pub etcd_prefix: String,

    /// How much revision history to keep before compacting it (kube-apiserver's
    /// `--etcd-compaction-interval`); `0s` disables compaction.
    #[arg(long, default_value = "5m", value_parser = parse_duration)]
    pub etcd_compaction_interval: std::time::Duration,

    /// Control plane or member cluster.
    #[arg(long, value_enum, default_value_t = Role::ControlPlane)]
    pub role: Role,

    /// Give workloads simulated status, like KWOK (member role).
    #[arg(long)]
    pub simulate_workloads: bool,

    /// Leader election of the controllers.
    #[command(flatten)]
    pub leader_election: LeaderElectionConfig,

    /// Static bearer-token file (`token,user,uid,"group1,group2"` lines).
    #[arg(long)]
    pub token_auth_file: Option<PathBuf>,

    /// Authentication: anonymous requests, ServiceAccount tokens, OIDC,
    /// the CSR client signer.
    #[command(flatten)]
    pub authn: AuthnConfig,
    /// Front-proxy (requestheader) authentication, for aggregated mode.
    #[command(flatten)]
    pub front_proxy: FrontProxyConfig,
    /// Delegated authorization of what the host asks at the root path, for
    /// aggregated mode.
    #[command(flatten)]
    pub delegation: DelegationConfig,

    /// IPv4 CIDR that Service cluster IPs are allocated from
    /// (kube-apiserver's `--service-cluster-ip-range`).
    #[arg(long, default_value = "10.96.0.0/12")]
    pub service_cluster_ip_range: String,

    /// Inclusive port range for NodePort Services, `low-high`
    /// (kube-apiserver's `--service-node-port-range`).
    #[arg(long, default_value = "30000-32767", value_parser = parse_port_range)]
    pub service_node_port_range: std::ops::RangeInclusive<u16>,

    /// Log one line per request (target `skein::access`, INFO level);
    /// `--access-log=false` turns it off.
    #[arg(long, default_value_t = true, action = clap::ArgAction::Set)]
    pub access_log: bool,

    /// Enforce API priority and fairness (kube-apiserver's
    /// `--enable-priority-and-fairness`): FlowSchemas and
    /// PriorityLevelConfigurations classify, queue and reject requests;
    /// `=false` serves every request at once.
    #[arg(long, default_value_t = true, action = clap::ArgAction::Set)]
    pub enable_priority_and_fairness: bool,

    /// With API priority and fairness, this plus
    /// `--max-mutating-requests-inflight` is the server's concurrency in
    /// seats, shared among priority levels by their
    /// `nominalConcurrencyShares` (kube-apiserver's flag and default).
    #[arg(long, default_value_t = 400)]
    pub max_requests_inflight: usize,

    /// See `--max-requests-inflight` (kube-apiserver's flag and default).
    #[arg(long, default_value_t = 200)]
    pub max_mutating_requests_inflight: usize,

    /// How often `apiserver_storage_objects` is recomputed
    /// (kube-apiserver's `--etcd-count-metric-poll-period`); `0s` disables it.
    #[arg(long, default_value = "1m", value_parser = parse_duration)]
    pub etcd_count_metric_poll_period: std::time::Duration,

    /// Amount of time to retain events (kube-apiserver's `--event-ttl`, Go
    /// duration syntax): an Event (core/v1 or events.k8s.io/v1) is deleted
    /// this long after its last write, and watchers see it DELETED; an
    /// update starts the time again. Whole seconds, as upstream; under
    /// `1s` Events never expire.
    #[arg(long, default_value = "1h0m0s", value_parser = parse_go_duration)]
    pub event_ttl: std::time::Duration,

    /// Serve lists and watches from an in-memory watch cache per resource
    /// (kube-apiserver's `--watch-cache`); `--watch-cache=false` reads the
    /// store for every request.
    #[arg(long, default_value_t = true, action = clap::ArgAction::Set)]
    pub watch_cache: bool,

    /// MiB of page cache the embedded store keeps in memory (redb's cache:
    /// its reads and write buffer). The watch cache serves reads, so the
    /// default is 2 MiB; the OS page cache still holds the file. Without
    /// the watch cache, redb's default (1 GiB) is used unless set.
    #[arg(long)]
    pub embedded_cache_mib: Option<usize>,

    /// Authorizers in order, comma-separated (kube-apiserver's
    /// `--authorization-mode`): `RBAC` (default) and/or `AlwaysAllow`.
    #[arg(long, default_value = "RBAC", value_delimiter = ',', value_parser = parse_authorization_mode)]
    pub authorization_mode: Vec<crate::authz::Mode>,
    /// Encryption at rest, audit and TLS hardening.
    #[command(flatten)]
    pub protect: ProtectConfig,
}

/// One `--authorization-mode` value, spelled as kube-apiserver's.
fn parse_authorization_mode(s: &str) -> std::result::Result<crate::authz::Mode, String> {
    match s {
        "RBAC" => Ok(crate::authz::Mode::Rbac),
        "AlwaysAllow" => Ok(crate::authz::Mode::AlwaysAllow),
        other => Err(format!(
            "authorization-mode {other:?} is not a valid mode (supported: RBAC, AlwaysAllow)"
        )),
    }
}

/// Authentication flags, named and shaped as kube-apiserver's.
#[derive(Debug, Clone, clap::Args)]
pub struct AuthnConfig {
    /// Serve requests without credentials as `system:anonymous` (group
    /// `system:unauthenticated`); when false (the default) they are 401
    /// except `/healthz`, `/livez`, `/readyz` and `/version`.
    #[arg(long, default_value_t = false, action = clap::ArgAction::Set, num_args = 0..=1, default_missing_value = "true")]
    pub anonymous_auth: bool,

    /// Issuer of ServiceAccount tokens (repeatable: the first issues, all
    /// are accepted). Default `https://kubernetes.default.svc.cluster.local`.
    #[arg(long = "service-account-issuer")]
    pub service_account_issuers: Vec<String>,

    /// PEM files of extra public keys (or private keys, certificates) that
    /// verify ServiceAccount tokens (repeatable).
    #[arg(long = "service-account-key-file")]
    pub service_account_key_files: Vec<PathBuf>,

    /// PKCS#8 PEM private key (RSA or ECDSA P-256/P-384) that signs
    /// ServiceAccount tokens. Default: `<data-dir>/pki/sa.key`, an ECDSA
    /// P-256 key generated on first start.
    #[arg(long)]
    pub service_account_signing_key_file: Option<PathBuf>,

    /// Longest ServiceAccount token lifetime; longer requests are
    /// shortened to it (`0s`: no limit).
    #[arg(long, default_value = "0s", value_parser = parse_duration)]
    pub service_account_max_token_expiration: std::time::Duration,

    /// Audiences of tokens meant for this server (comma-separated); the
    /// issuers when empty.
    #[arg(long, value_delimiter = ',')]
    pub api_audiences: Vec<String>,

    /// OIDC issuer URL; enables the OIDC authenticator (https only).
    #[arg(long)]
    pub oidc_issuer_url: Option<String>,

    /// OIDC client id: the audience tokens must name.
    #[arg(long)]
    pub oidc_client_id: Option<String>,

    /// JWKS file with the OIDC issuer's public keys (Skein does not fetch
    /// them from the issuer).
    #[arg(long)]
    pub oidc_jwks_file: Option<PathBuf>,

    /// The claim that is the user name.
    #[arg(long, default_value = "sub")]
    pub oidc_username_claim: String,

    /// Prefix of OIDC user names; default `<issuer-url>#` unless the
    /// username claim is `email`; `-` for none.
    #[arg(long)]
    pub oidc_username_prefix: Option<String>,

    /// The claim holding the user's groups (a string or list of strings).
    #[arg(long)]
    pub oidc_groups_claim: Option<String>,

    /// Prefix of OIDC group names.
    #[arg(long, default_value = "")]
    pub oidc_groups_prefix: String,

    /// `key=value` claims every OIDC token must carry (comma-separated,
    /// repeatable).
    #[arg(long = "oidc-required-claim", value_delimiter = ',')]
    pub oidc_required_claims: Vec<String>,

    /// Accepted OIDC signing algorithms (comma-separated).
    #[arg(long, value_delimiter = ',', default_value = "RS256")]
    pub oidc_signing_algs: Vec<String>,

    /// Longest lifetime of a certificate the `kubernetes.io/kube-apiserver-client`
    /// signer issues for an approved CSR.
    #[arg(long, default_value = "8760h", value_parser = parse_duration)]
    pub cluster_signing_duration: std::time::Duration,
}

impl Default for AuthnConfig {
    fn default() -> Self {
        AuthnConfig {
            anonymous_auth: false,
            service_account_issuers: Vec::new(),
            service_account_key_files: Vec::new(),
            service_account_signing_key_file: None,
            service_account_max_token_expiration: std::time::Duration::ZERO,
            api_audiences: Vec::new(),
            oidc_issuer_url: None,
            oidc_client_id: None,
            oidc_jwks_file: None,
            oidc_username_claim: "sub".into(),
            oidc_username_prefix: None,
            oidc_groups_claim: None,
            oidc_groups_prefix: String::new(),
            oidc_required_claims: Vec::new(),
            oidc_signing_algs: vec!["RS256".into()],
            cluster_signing_duration: std::time::Duration::from_secs(365 * 24 * 3600),
        }
    }
}

/// Front-proxy authentication flags, named as an aggregated API server's
/// (`http/requestheader.rs` has the contract).
#[derive(Debug, Clone, PartialEq, Eq, clap::Args)]
pub struct FrontProxyConfig {
    /// CA bundle that verifies front-proxy client certificates; the
    /// `--requestheader-*` headers are trusted only from them. Unset: read
    /// from the host through `--authentication-kubeconfig`, else off.
    #[arg(long)]
    pub requestheader_client_ca_file: Option<PathBuf>,
    /// Common names a front-proxy certificate may have (comma-separated);
    /// empty allows any certificate the CA verifies.
    #[arg(long, value_delimiter = ',')]
    pub requestheader_allowed_names: Vec<String>,
    /// Headers naming the user.
    #[arg(long, value_delimiter = ',', default_value = "X-Remote-User")]
    pub requestheader_username_headers: Vec<String>,
    /// Headers naming the user's uid (none by default, as 1.33).
    #[arg(long, value_delimiter = ',')]
    pub requestheader_uid_headers: Vec<String>,
    /// Headers naming the user's groups.
    #[arg(long, value_delimiter = ',', default_value = "X-Remote-Group")]
    pub requestheader_group_headers: Vec<String>,
    /// Prefixes of the headers carrying the user's extra attributes.
    #[arg(long, value_delimiter = ',', default_value = "X-Remote-Extra-")]
    pub requestheader_extra_headers_prefix: Vec<String>,
    /// Kubeconfig of the host cluster, whose
    /// `kube-system/extension-apiserver-authentication` ConfigMap gives the
    /// requestheader settings when `--requestheader-client-ca-file` is unset.
    #[arg(long)]
    pub authentication_kubeconfig: Option<PathBuf>,
}

impl Default for FrontProxyConfig {
    fn default() -> Self {
        FrontProxyConfig {
            requestheader_client_ca_file: None,
            requestheader_allowed_names: Vec::new(),
            requestheader_username_headers: vec!["X-Remote-User".into()],
            requestheader_uid_headers: Vec::new(),
            requestheader_group_headers: vec!["X-Remote-Group".into()],
            requestheader_extra_headers_prefix: vec!["X-Remote-Extra-".into()],
            authentication_kubeconfig: None,
        }
    }
}

/// Delegated authorization flags, named as an aggregated API server's
/// (k8s.io/apiserver's `DelegatingAuthorizationOptions`; `authz/delegated.rs`
/// has the contract). They apply to the requests a host's aggregator sends
/// to the root path (`http/host_view.rs`); everything else keeps Skein's
/// own `--authorization-mode`.
#[derive(Debug, Clone, PartialEq, Eq, clap::Args)]
pub struct DelegationConfig {
    /// Kubeconfig of the host cluster that `SubjectAccessReview`s are sent
    /// to. Unset: the in-cluster configuration when Skein runs in a Pod,
    /// else no delegation (the host's requests get Skein's own RBAC).
    #[arg(long)]
    pub authorization_kubeconfig: Option<PathBuf>,
    /// How long an allowed review is cached.
    #[arg(long, default_value = "10s", value_parser = parse_duration)]
    pub authorization_webhook_cache_authorized_ttl: std::time::Duration,
    /// How long a denied review is cached.
    #[arg(long, default_value = "10s", value_parser = parse_duration)]
    pub authorization_webhook_cache_unauthorized_ttl: std::time::Duration,
    /// Paths (a trailing `*` matches a prefix) that the host's requests
    /// may reach without a review.
    #[arg(long, value_delimiter = ',', default_value = "/healthz,/readyz,/livez")]
    pub authorization_always_allow_paths: Vec<String>,
}

impl Default for DelegationConfig {
    fn default() -> Self {
        DelegationConfig {
            authorization_kubeconfig: None,
            authorization_webhook_cache_authorized_ttl: std::time::Duration::from_secs(10),
            authorization_webhook_cache_unauthorized_ttl: std::time::Duration::from_secs(10),
            authorization_always_allow_paths: vec![
                "/healthz".into(),
                "/readyz".into(),
                "/livez".into(),
            ],
        }
    }
}

/// Encryption at rest and TLS settings, named as kube-apiserver's.
#[derive(Debug, Clone, Default, clap::Args)]
pub struct ProtectConfig {
    /// An `apiserver.config.k8s.io/v1` `EncryptionConfiguration` file:
    /// which resources are encrypted in storage, and with which providers
    /// (aesgcm, aescbc, secretbox, identity).
    #[arg(long)]
    pub encryption_provider_config: Option<PathBuf>,

    /// The HTTPS serving certificate (PEM; intermediates after it), as
    /// kube-apiserver's `--tls-cert-file`. Without it Skein serves the
    /// certificate it generates in `<data-dir>/pki`. Needs
    /// `--tls-private-key-file`.
    #[arg(long, requires = "tls_private_key_file")]
    pub tls_cert_file: Option<PathBuf>,

    /// The private key of `--tls-cert-file` (PEM: PKCS#8, PKCS#1 or SEC1).
    #[arg(long, requires = "tls_cert_file")]
    pub tls_private_key_file: Option<PathBuf>,

    /// Minimum TLS version: `VersionTLS12` or `VersionTLS13`
    /// (`VersionTLS10`/`VersionTLS11` are refused as insecure).
    #[arg(long, default_value = "VersionTLS12")]
    pub tls_min_version: String,

    /// Comma-separated TLS 1.2 cipher suites by their IANA names, as
    /// kube-apiserver takes them (TLS 1.3 suites are always on); default:
    /// rustls' secure suites.
    #[arg(long, value_delimiter = ',')]
    pub tls_cipher_suites: Vec<String>,

    /// Write `audit.k8s.io/v1` events to this file (`-` for stdout);
    /// needs `--audit-policy-file`.
    #[arg(long)]
    pub audit_log_path: Option<PathBuf>,

    /// An `audit.k8s.io/v1` `Policy` file: which requests are recorded at
    /// which level.
    #[arg(long)]
    pub audit_policy_file: Option<PathBuf>,

    /// Megabytes the audit log may reach before it is rotated (0: 100).
    #[arg(long, default_value_t = 0)]
    pub audit_log_maxsize: u64,

    /// Rotated audit logs kept (0: all).
    #[arg(long, default_value_t = 0)]
    pub audit_log_maxbackup: usize,

    /// Days a rotated audit log is kept (0: forever).
    #[arg(long, default_value_t = 0)]
    pub audit_log_maxage: u64,
}

impl ProtectConfig {
    /// The audit flags together.
    pub fn audit(&self) -> crate::audit::AuditOptions {
        crate::audit::AuditOptions {
            log_path: self.audit_log_path.clone(),
            policy_file: self.audit_policy_file.clone(),
            rotation: crate::audit::Rotation {
                max_size_mb: self.audit_log_maxsize,
                max_backups: self.audit_log_maxbackup,
                max_age_days: self.audit_log_maxage,
            },
        }
    }
}

/// Parses Go-style durations as kube-apiserver flags take them: `300ms`,
/// `30s`, `5m`, `1h`.
pub fn parse_duration(s: &str) -> std::result::Result<std::time::Duration, String> {
    let (digits, unit) = s.split_at(s.find(|c: char| !c.is_ascii_digit()).unwrap_or(s.len()));
    let n: u64 = digits
        .parse()
        .map_err(|_| format!("invalid duration {s:?}"))?;
    let ms = match unit {
        "ms" => n,
        "s" | "" => n * 1000,
        "m" => n * 60_000,
        "h" => n * 3_600_000,
        _ => {
            return Err(format!(
                "invalid duration {s:?}: unit must be ms, s, m or h"
            ));
        }
    };
    Ok(std::time::Duration::from_millis(ms))
}

/// Parses a duration as Go's `time.ParseDuration` does (what
/// kube-apiserver's duration flags accept; see
/// [`skein_admission::gofmt::parse_duration`]), e.g. `1h0m0s`, `1.5h`,
/// `5m`, `300ms`; `0` needs no unit. Errors carry Go's messages
/// (`time: invalid duration "bogus"`), and a negative duration, which no
/// flag here means, is refused.
pub fn parse_go_duration(s: &str) -> std::result::Result<std::time::Duration, String> {
    let nanos = skein_admission::gofmt::parse_duration(s)?;
    if nanos < 0 {
        return Err(format!(
            "negative duration {} is not allowed",
            skein_admission::gofmt::quote(s)
        ));
    }
    Ok(std::time::Duration::from_nanos(nanos.unsigned_abs()))
}

impl Config {
    /// The admission plugins' settings (Service CIDR and node ports).
    pub fn admission(&self) -> crate::admission::AdmissionConfig {
        crate::admission::AdmissionConfig {
            service_cidr: self.service_cluster_ip_range.clone(),
            node_ports: self.service_node_port_range.clone(),
        }
    }

    /// Bytes of the embedded store's page cache: `--embedded-cache-mib`,
    /// else 2 MiB in front of a watch cache (hot B-tree pages; leaves come
    /// from the OS page cache) and redb's 1 GiB without one.
    pub fn embedded_cache_bytes(&self) -> usize {
        match self.embedded_cache_mib {
            Some(mib) => mib.saturating_mul(1 << 20),
            None if self.watch_cache => 2 << 20,
            None => skein_storage::embedded::DEFAULT_PAGE_CACHE_BYTES,
        }
    }

    /// History kept before compaction; `None` when compaction is off.
    pub fn retain_history(&self) -> Option<std::time::Duration> {
        (!self.etcd_compaction_interval.is_zero()).then_some(self.etcd_compaction_interval)
    }

    /// A configuration with every flag at its default and the given data
    /// directory (for tests).
    pub fn with_data_dir(data_dir: impl Into<PathBuf>) -> Self {
        Config {
            data_dir: data_dir.into(),
            bind_address: IpAddr::V4(Ipv4Addr::LOCALHOST),
            secure_port: 6443,
            etcd_servers: Vec::new(),
            etcd_prefix: String::new(),
            etcd_compaction_interval: std::time::Duration::from_secs(300),
            role: Role::ControlPlane,
            simulate_workloads: false,
            leader_election: LeaderElectionConfig::default(),
            token_auth_file: None,
            authn: AuthnConfig::default(),
            front_proxy: FrontProxyConfig::default(),
            delegation: DelegationConfig::default(),
            authorization_mode: vec![crate::authz::Mode::Rbac],
            service_cluster_ip_range: "10.96.0.0/12".into(),
            service_node_port_range: 30000..=32767,
            access_log: true,
            enable_priority_and_fairness: true,
            max_requests_inflight: 400,
            max_mutating_requests_inflight: 200,
            etcd_count_metric_poll_period: std::time::Duration::from_secs(60),
            event_ttl: std::time::Duration::from_secs(3600),
            watch_cache: true,
            embedded_cache_mib: None,
            protect: ProtectConfig {
                tls_min_version: "VersionTLS12".into(),
                ..ProtectConfig::default()
            },
        }
    }

    /// The embedded store's file.
    pub fn store_path(&self) -> PathBuf {
        self.data_dir.join("store.redb")
    }

    /// The directory holding the CA, serving and admin certificates.
    pub fn pki_dir(&self) -> PathBuf {
        self.data_dir.join("pki")
    }

    /// The admin kubeconfig that every start rewrites.
    pub fn kubeconfig_path(&self) -> PathBuf {
        self.data_dir.join("admin.kubeconfig")
    }

    /// The address clients on this machine should dial: the bind address,
    /// or loopback when it is the unspecified address (`0.0.0.0`, `::`).
    pub fn client_address(&self) -> IpAddr {
        match self.bind_address {
            IpAddr::V4(a) if a.is_unspecified() => IpAddr::V4(Ipv4Addr::LOCALHOST),
            IpAddr::V6(a) if a.is_unspecified() => IpAddr::V6(Ipv6Addr::LOCALHOST),
            other => other,
        }
    }
}

/// `30000-32767` → `30000..=32767`.
fn parse_port_range(s: &str) -> Result<std::ops::RangeInclusive<u16>, String> {
    let (lo, hi) = s
        .split_once('-')
        .ok_or_else(|| format!("{s:?} is not a port range like 30000-32767"))?;
    let lo: u16 = lo.trim().parse().map_err(|e| format!("{lo:?}: {e}"))?;
    let hi: u16 = hi.trim().parse().map_err(|e| format!("{hi:?}: {e}"))?;
    if lo == 0 || lo > hi {
        return Err(format!("{s:?} is not a valid port range"));
    }
    Ok(lo..=hi)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn go_durations_parse_as_go_does() {
        let ok = |s: &str| parse_go_duration(s).expect(s);
        assert_eq!(ok("1h0m0s"), Duration::from_secs(3600));
        assert_eq!(ok("5m"), Duration::from_secs(300));
        assert_eq!(ok("30s"), Duration::from_secs(30));
        assert_eq!(ok("1.5h"), Duration::from_secs(5400));
        assert_eq!(ok("300ms"), Duration::from_millis(300));
        assert_eq!(ok("1m30.5s"), Duration::from_millis(90_500));
        assert_eq!(ok("2us"), Duration::from_micros(2));
        assert_eq!(ok("0"), Duration::ZERO);
        assert_eq!(ok("+3s"), Duration::from_secs(3));
        assert_eq!(ok("-0s"), Duration::ZERO);
        assert_eq!(
            parse_go_duration("bogus"),
            Err(r#"time: invalid duration "bogus""#.into())
        );
        assert_eq!(
            parse_go_duration("5"),
            Err(r#"time: missing unit in duration "5""#.into())
        );
        assert_eq!(
            parse_go_duration("5d"),
            Err(r#"time: unknown unit "d" in duration "5d""#.into())
        );
        assert!(parse_go_duration("").is_err());
        assert!(parse_go_duration(".s").is_err());
        assert!(parse_go_duration("1h-1s").is_err());
        assert!(parse_go_duration("9999999999h").is_err());
        assert_eq!(
            parse_go_duration("-1h"),
            Err(r#"negative duration "-1h" is not allowed"#.into())
        );
    }
}
