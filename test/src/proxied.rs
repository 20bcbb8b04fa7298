//! A federation whose members are reached through [`FaultProxy`]s: the
//! fixture of the fault suites and the chaos run (issue 31).
//!
//! Members are `skein serve --role=member` processes that only store (no
//! `--simulate-workloads`: cheap). Each is joined with its own admin
//! kubeconfig pointed at its proxy, so every request of the federation to
//! it (probes, applies, watches) crosses the proxy, while the test reads
//! the member directly.

use std::collections::BTreeMap;
use std::fs;
use std::path::Path;
use std::time::Duration;

use crate::cli;
use crate::fault::FaultProxy;
use crate::http::Api;
use crate::invariants::{MemberView, member_api};
use crate::member::{self, Federation, Member};
use crate::server::Server;

/// The federation flags of the fault suites: probes every second with a
/// 2 s timeout, not Ready after two failures, a 4 s grace period.
pub const FAST_HEALTH: [&str; 4] = [
    "--cluster-probe-period=1s",
    "--cluster-probe-timeout=2s",
    "--cluster-failure-threshold=2",
    "--cluster-grace-period=4s",
];

/// A federation, its members and one proxy per member.
pub struct Proxied {
    /// The federation and members (the members' own ports, not the
    /// proxies').
    pub f: Federation,
    /// The proxy in front of each member, by Cluster name.
    pub proxies: BTreeMap<String, FaultProxy>,
}

impl Proxied {
    /// Starts a federation with [`FAST_HEALTH`] plus `fed_args`, and one
    /// member per `(name, labels)`, each behind a proxy, joined with
    /// kubectl `k` (labels as `k=v,…`), and waits until every Cluster is
    /// Ready with its inventory.
    pub async fn start(
        dir: &Path,
        k: &Path,
        fed_args: &[&str],
        clusters: &[(&str, &str)],
    ) -> Proxied {
        let mut args = FAST_HEALTH.to_vec();
        args.extend_from_slice(fed_args);
        let fed = Server::start(&dir.join("federation"), &args).await;
        let mut members = Vec::new();
        let mut proxies = BTreeMap::new();
        for (name, _) in clusters {
            let m = Member::start(&dir.join(name), &[]).await;
            proxies.insert((*name).to_owned(), FaultProxy::for_port(m.port));
            members.push(((*name).to_owned(), m));
        }
        let joined: Vec<(&str, String)> = members
            .iter()
            .map(|(n, m)| (n.as_str(), proxies[n].kubeconfig(&m.kubeconfig())))
            .collect();
        member::join(k, &fed, &joined);
        for (name, labels) in clusters {
            if !labels.is_empty() {
                let mut a = vec!["label", "cluster", name, "--overwrite"];
                a.extend(labels.split(','));
                cli::ok(k, &fed, &a);
            }
        }
        let p = Proxied {
            f: Federation { fed, members },
            proxies,
        };
        for (name, _) in clusters {
            p.wait_ready(name, true, Duration::from_secs(60)).await;
        }
        p
    }

    /// The proxy in front of `name`.
    pub fn proxy(&self, name: &str) -> &FaultProxy {
        self.proxies
            .get(name)
            .unwrap_or_else(|| panic!("no proxy for {name}"))
    }

    /// An admin API of the federation.
    pub fn api(&self) -> Api {
        Api::new(&self.f.fed)
    }

    /// Every member, joined, for [`crate::invariants::check`].
    pub fn views(&self) -> Vec<MemberView> {
        self.f
            .members
            .iter()
            .map(|(n, m)| MemberView {
                name: n.clone(),
                api: member_api(m),
                joined: true,
            })
            .collect()
    }

    /// Waits until `name`'s Ready condition is `ready` (and, when Ready,
    /// its inventory is known); panics after `timeout`.
    pub async fn wait_ready(&self, name: &str, ready: bool, timeout: Duration) {
        self.f
            .wait_cluster(name, timeout, |c| {
                member::is_ready(c) == ready
                    && (!ready || c.pointer("/status/servedResources").is_some())
            })
            .await;
    }
}

/// Stops `m` and deletes its store and everything else in its data dir but
/// its certificates (`pki/`), its admin kubeconfig and its log. Started
/// again ([`Member::run`]) it serves on the same port with the same
/// serving certificate and credentials and an empty store: a member whose
/// store was wiped while it was away.
pub fn wipe(m: &mut Member) {
    m.stop();
    let dir = m
        .kubeconfig_path()
        .parent()
        .expect("the kubeconfig is in the data dir")
        .to_path_buf();
    let keep = ["pki", "admin.kubeconfig", "skein.log"];
    for entry in fs::read_dir(&dir).expect("read the member's data dir") {
        let entry = entry.expect("a dir entry");
        if keep.iter().any(|k| entry.file_name() == *k) {
            continue;
        }
        let path = entry.path();
        if path.is_dir() {
            fs::remove_dir_all(&path).expect("remove a dir");
        } else {
            fs::remove_file(&path).expect("remove a file");
        }
    }
}
