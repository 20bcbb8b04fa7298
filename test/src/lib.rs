//! End-to-end harness: real `skein` processes, etcd, kubectl and Helm.
//!
//! Missing binaries fail the test with a message that says how to get them;
//! no test silently skips (DESIGN.md §6).
//!
//! - [`skein_bin`]: the `skein` binary under test (`$SKEIN_BIN`, or the
//!   workspace's `target/debug/skein`; build it with
//!   `cargo build -p skein`).
//! - [`kubectl_binaries`]: every kubectl the suites run against
//!   (`$SKEIN_KUBECTL`, or the ones `hack/tools.sh` installs).
//! - [`server::Server`]: a running `skein serve` on a free port: a child
//!   process, or ([`in_process`]) a server in the test's own process.
//! - [`kubectl`]: kubectl against a server with a deadline, or in the
//!   background.
//! - [`etcd::Etcd`]: real etcd members on loopback.
//! - [`member`]: member processes, joining them, and a [`member::Federation`]
//!   fixture (a federation and simulated members, joined and Ready).
//! - [`http`]: raw API requests and watches with the admin certificate,
//!   and the Helm and Python clients ([`http::helm_binaries`],
//!   [`http::python`]).
//! - [`webhook::ConversionWebhook`]: a CRD conversion webhook on loopback.
//! - [`fault::FaultProxy`]: a fault-injecting TCP proxy between the
//!   federation and a member (latency, resets, black hole, cuts).
//! - [`metrics`]: request counts read from a server's `/metrics` (writes
//!   by verb and resource).
//! - [`invariants::check`]: the federation's invariants after faults,
//!   computed from the placement annotations (the chaos run's checker).
//! - [`proxied::Proxied`]: a federation whose members sit behind fault
//!   proxies; [`chaos::Chaos`]: the seeded chaos driver of the short test
//!   and the long benchmark.

pub mod chaos;
pub mod cli;
pub mod etcd;
pub mod fault;
pub mod http;
pub mod http_fault;
pub mod in_process;
pub mod invariants;
pub mod kubectl;
pub mod member;
pub mod metrics;
pub mod oidc;
pub mod proxied;
pub mod server;
pub mod webhook;

use std::path::{Path, PathBuf};

/// The repository root (the workspace directory).
pub fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("test/ has a parent directory")
        .to_path_buf()
}

/// The `skein` binary: `$SKEIN_BIN` if set, else `debug/skein` in the target
/// directory this test binary runs from (tests live in
/// `<target>/debug/deps/`, so that is two levels up).
///
/// Panics with instructions if it does not exist.
pub fn skein_bin() -> PathBuf {
    let path = match std::env::var_os("SKEIN_BIN") {
        Some(p) => PathBuf::from(p),
        None => {
            let exe = std::env::current_exe().expect("the test binary knows its path");
            exe.parent()
                .and_then(Path::parent)
                .map(|profile_dir| profile_dir.join("skein"))
                .expect("the test binary lives in <target>/<profile>/deps/")
        }
    };
    assert!(
        path.is_file(),
        "the skein binary {} does not exist: build it with `cargo build -p skein` \
         (or point SKEIN_BIN at one)",
        path.display()
    );
    path
}

/// The kubectl binaries to test with: `$SKEIN_KUBECTL` (colon-separated
/// paths) if set, else kubectl 1.35 and 1.32 from `<repo>/.tools/`.
///
/// Panics, naming the missing tool and how to install it, if any is absent.
pub fn kubectl_binaries() -> Vec<PathBuf> {
    let paths: Vec<PathBuf> = match std::env::var("SKEIN_KUBECTL") {
        Ok(list) if !list.trim().is_empty() => std::env::split_paths(&list).collect(),
        _ => {
            let tools = repo_root().join(".tools");
            vec![
                tools.join("kubectl-1.35").join("kubectl"),
                tools.join("kubectl-1.32").join("kubectl"),
            ]
        }
    };
    for p in &paths {
        assert!(
            p.is_file(),
            "kubectl {} is missing: run `bash hack/tools.sh` to install the pinned kubectl and \
             helm into .tools/ (or set SKEIN_KUBECTL to colon-separated kubectl paths)",
            p.display()
        );
    }
    paths
}
