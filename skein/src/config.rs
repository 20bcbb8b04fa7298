//! The command line: `skein serve` (whose flags join the API server's,
//! the federation's and the simulator's) and the client subcommands.

use std::path::PathBuf;

use clap::{Parser, Subcommand};
use skein_apiserver::config::parse_duration;

/// Everything `skein serve` is configured with: the API server's flags,
/// the member-cluster controllers' and the workload simulator's.
#[derive(Debug, Clone, clap::Args)]
#[group(skip)]
pub struct Config {
    /// The API server's settings.
    #[command(flatten)]
    pub server: skein_apiserver::config::Config,

    /// The workload simulator's settings.
    #[command(flatten)]
    pub sim: skein_simulator::SimConfig,

    /// The member-cluster controllers' settings.
    #[command(flatten)]
    pub members: skein_federation::MemberConfig,
}

impl Config {
    /// The defaults of every flag, with `data_dir`.
    pub fn with_data_dir(data_dir: impl Into<PathBuf>) -> Self {
        Config {
            server: skein_apiserver::config::Config::with_data_dir(data_dir),
            sim: skein_simulator::SimConfig::default(),
            members: skein_federation::MemberConfig::default(),
        }
    }
}

/// `skein`: a Kubernetes-API-compatible federation control plane.
#[derive(Debug, Parser)]
#[command(name = "skein", version, about)]
pub struct Cli {
    /// What to do.
    #[command(subcommand)]
    pub command: Command,
}

/// The subcommands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Serve the Kubernetes API over HTTPS.
    Serve(Box<Config>),
    /// Join a member cluster to the federation: check that it answers,
    /// store its kubeconfig in a Secret, create the Cluster and wait until
    /// it is Ready.
    Join(JoinArgs),
    /// Remove a member cluster from the federation (its Cluster and the
    /// Secret holding its kubeconfig).
    Unjoin(UnjoinArgs),
    /// Print a kubeconfig for the federation: the admin one, or with
    /// `--aggregated` the federated context of a host user.
    Kubeconfig(KubeconfigArgs),
    /// Storage maintenance through the API (`rewrite`: re-encrypt every
    /// object of the encrypted resources with the current key).
    #[command(subcommand)]
    Storage(StorageCommand),
}

/// `skein storage ...`.
#[derive(Debug, Clone, clap::Subcommand)]
pub enum StorageCommand {
    /// Re-encrypt every stored object of the configured resources with the
    /// current first key of `--encryption-provider-config`.
    Rewrite(RewriteArgs),
}

/// `skein storage rewrite`.
#[derive(Debug, Clone, clap::Args)]
pub struct RewriteArgs {
    /// The `EncryptionConfiguration` the server runs with (its resources
    /// are what gets rewritten).
    #[arg(long)]
    pub encryption_provider_config: PathBuf,
    /// The server's kubeconfig (default: `$KUBECONFIG`, then
    /// `<data-dir>/admin.kubeconfig`).
    #[arg(long)]
    pub kubeconfig: Option<PathBuf>,
    /// The server's data directory, for its admin kubeconfig.
    #[arg(long, default_value = "./skein-data")]
    pub data_dir: PathBuf,
}

/// `skein kubeconfig [--aggregated --host-kubeconfig F]`.
#[derive(Debug, Clone, clap::Args)]
pub struct KubeconfigArgs {
    /// Print the federated context of aggregated mode: the host
    /// kubeconfig's cluster under the federation's prefix path, with the
    /// host user's own credentials.
    #[arg(long, requires = "host_kubeconfig")]
    pub aggregated: bool,
    /// The host user's kubeconfig (with `--aggregated`).
    #[arg(long)]
    pub host_kubeconfig: Option<std::path::PathBuf>,
    /// The context of `--host-kubeconfig` (its current-context when absent).
    #[arg(long)]
    pub context: Option<String>,
    /// The federation's data directory (without `--aggregated`).
    #[arg(long, default_value = "./skein-data")]
    pub data_dir: std::path::PathBuf,
}

/// `skein join NAME --kubeconfig F ...`.
#[derive(Debug, Clone, clap::Args)]
pub struct JoinArgs {
    /// The Cluster's name (a DNS-1123 label).
    pub name: String,
    /// The member's kubeconfig.
    #[arg(long)]
    pub kubeconfig: PathBuf,
    /// The context of `--kubeconfig` to use (its current-context when absent).
    #[arg(long)]
    pub context: Option<String>,
    /// Labels for the Cluster, `key=value` (repeatable).
    #[arg(long = "label", value_name = "KEY=VALUE")]
    pub labels: Vec<String>,
    /// The federation's kubeconfig (default: `$KUBECONFIG`, then
    /// `<data-dir>/admin.kubeconfig`).
    #[arg(long)]
    pub federation_kubeconfig: Option<PathBuf>,
    /// The federation's data directory, for its admin kubeconfig.
    #[arg(long, default_value = "./skein-data")]
    pub data_dir: PathBuf,
    /// How long to wait for the Cluster to become Ready.
    #[arg(long, default_value = "2m", value_parser = parse_duration)]
    pub timeout: std::time::Duration,
}

/// `skein unjoin NAME`.
#[derive(Debug, Clone, clap::Args)]
pub struct UnjoinArgs {
    /// The Cluster's name.
    pub name: String,
    /// Leave the federation's copies on the member, without Skein's
    /// markers, instead of deleting them.
    #[arg(long)]
    pub orphan: bool,
    /// How long to wait for the copies to be removed (or orphaned).
    #[arg(long, default_value = "120s", value_parser = parse_duration)]
    pub timeout: std::time::Duration,
    /// The federation's kubeconfig (default: `$KUBECONFIG`, then
    /// `<data-dir>/admin.kubeconfig`).
    #[arg(long)]
    pub federation_kubeconfig: Option<PathBuf>,
    /// The federation's data directory, for its admin kubeconfig.
    #[arg(long, default_value = "./skein-data")]
    pub data_dir: PathBuf,
}

/// The Markdown reference of every `skein` subcommand's flags (one table
/// per subcommand: flag, default, description), generated from the clap
/// definition so it cannot drift. `bash hack/flags.sh` writes it to
/// `docs/flags.md`; a test fails when that file is stale.
pub fn flag_reference() -> String {
    use clap::CommandFactory;
    let mut cli = Cli::command();
    cli.build();
    let mut out = String::from(
        "# `skein` flags\n\n\
         Generated from the CLI definition by `bash hack/flags.sh`; do not edit by hand \
         (a test fails when this file is stale).\n",
    );
    for sub in cli.get_subcommands() {
        write_subcommand(&mut out, &format!("skein {}", sub.get_name()), sub);
    }
    out
}

fn write_subcommand(out: &mut String, path: &str, cmd: &clap::Command) {
    let args: Vec<&clap::Arg> = cmd
        .get_arguments()
        .filter(|a| !a.is_hide_set() && a.get_id() != "help" && a.get_id() != "version")
        .collect();
    if !args.is_empty() {
        out.push_str(&format!("\n## `{path}`\n\n"));
        if let Some(about) = cmd.get_about() {
            out.push_str(&format!("{}\n\n", one_line(&about.to_string())));
        }
        out.push_str("| flag | default | description |\n| --- | --- | --- |\n");
        for arg in args {
            let name = match (arg.get_long(), arg.get_value_names()) {
                (Some(long), _) => format!("`--{long}`"),
                (None, Some(names)) => {
                    let names: Vec<String> = names.iter().map(|n| format!("`{n}`")).collect();
                    names.join(" ")
                }
                (None, None) => format!("`{}`", arg.get_id()),
            };
            let defaults: Vec<String> = arg
                .get_default_values()
                .iter()
                .map(|v| v.to_string_lossy().into_owned())
                .collect();
            let default = match defaults.join(",") {
                d if defaults.is_empty() => d,
                d if d.is_empty() => "`\"\"`".to_owned(),
                d => format!("`{d}`"),
            };
            let mut help = arg
                .get_long_help()
                .or_else(|| arg.get_help())
                .map(|h| one_line(&h.to_string()))
                .unwrap_or_default();
            let values: Vec<String> = arg
                .get_possible_values()
                .iter()
                .filter(|v| !v.is_hide_set())
                .map(|v| format!("`{}`", v.get_name()))
                .collect();
            if !values.is_empty() {
                if !help.is_empty() && !help.ends_with('.') {
                    help.push('.');
                }
                help.push_str(&format!(" One of {}.", values.join(", ")));
            }
            out.push_str(&format!(
                "| {name} | {default} | {} |\n",
                help.replace('|', "\\|")
            ));
        }
    }
    for sub in cmd.get_subcommands() {
        write_subcommand(out, &format!("{path} {}", sub.get_name()), sub);
    }
}

/// Help text on one line: wrapped lines joined with spaces.
fn one_line(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

#[cfg(test)]
mod tests {
    use std::net::{IpAddr, Ipv4Addr};
    use std::path::PathBuf;

    use clap::Parser;
    use skein_apiserver::config::{AuthnConfig, Config, Role};

    use super::{Cli, Command};

    fn parse(args: &[&str]) -> Config {
        let cli = Cli::try_parse_from(args).expect("flags parse");
        match cli.command {
            Command::Serve(c) => c.server,
            other => panic!("not serve: {other:?}"),
        }
    }

    #[test]
    fn defaults() {
        let c = parse(&["skein", "serve"]);
        assert_eq!(c.data_dir, PathBuf::from("./skein-data"));
        assert_eq!(c.bind_address, IpAddr::V4(Ipv4Addr::LOCALHOST));
        assert_eq!(c.secure_port, 6443);
        assert!(c.etcd_servers.is_empty());
        assert_eq!(c.etcd_prefix, "");
        assert_eq!(c.role, Role::ControlPlane);
        assert!(!c.simulate_workloads);
        assert_eq!(c.token_auth_file, None);
        assert_eq!(c.store_path(), PathBuf::from("./skein-data/store.redb"));
    }

    #[test]
    fn every_flag() {
        let c = parse(&[
            "skein",
            "serve",
            "--data-dir=/d",
            "--bind-address=0.0.0.0",
            "--secure-port=0",
            "--etcd-servers=http://a:2379,http://b:2379",
            "--etcd-prefix=/skein",
            "--role=member",
            "--simulate-workloads",
            "--token-auth-file=/t.csv",
        ]);
        assert_eq!(c.etcd_servers, ["http://a:2379", "http://b:2379"]);
        assert_eq!(c.secure_port, 0);
        assert_eq!(c.role, Role::Member);
        assert!(c.simulate_workloads);
        assert_eq!(c.token_auth_file, Some(PathBuf::from("/t.csv")));
        assert_eq!(c.client_address(), IpAddr::V4(Ipv4Addr::LOCALHOST));
        assert_eq!(c.kubeconfig_path(), PathBuf::from("/d/admin.kubeconfig"));
    }

    #[test]
    fn authn_flags() {
        let c = parse(&["skein", "serve"]);
        assert!(!c.authn.anonymous_auth);
        assert_eq!(c.authn.oidc_username_claim, "sub");
        assert_eq!(c.authn.oidc_signing_algs, ["RS256"]);
        let d = AuthnConfig::default();
        assert_eq!(c.authn.cluster_signing_duration, d.cluster_signing_duration);
        assert_eq!(c.authn.oidc_signing_algs, d.oidc_signing_algs);
        let c = parse(&[
            "skein",
            "serve",
            "--anonymous-auth",
            "--service-account-issuer=https://a",
            "--service-account-issuer=https://b",
            "--oidc-required-claim=hd=x.io,tier=1",
            "--oidc-signing-algs=RS256,ES256",
            "--cluster-signing-duration=1h",
        ]);
        assert!(c.authn.anonymous_auth);
        assert_eq!(c.authn.service_account_issuers, ["https://a", "https://b"]);
        assert_eq!(c.authn.oidc_required_claims, ["hd=x.io", "tier=1"]);
        assert_eq!(c.authn.oidc_signing_algs, ["RS256", "ES256"]);
        assert_eq!(
            c.authn.cluster_signing_duration,
            std::time::Duration::from_secs(3600)
        );
        assert!(
            !parse(&["skein", "serve", "--anonymous-auth=false"])
                .authn
                .anonymous_auth
        );
    }

    #[test]
    fn bad_role_is_rejected() {
        assert!(Cli::try_parse_from(["skein", "serve", "--role=boss"]).is_err());
    }

    #[test]
    fn docs_flags_md_is_current() {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../docs/flags.md");
        let committed = std::fs::read_to_string(&path).unwrap_or_default();
        assert!(
            committed == super::flag_reference(),
            "docs/flags.md is stale: run `bash hack/flags.sh` and commit the result"
        );
    }
}
