//! `bench`: Skein's benchmarks, as a program that prints a table.
//!
//! Run it through `hack/bench.sh` (a release build). Each subcommand is one
//! benchmark; see `docs/benchmarks.md` for what they measure and for the
//! latest results.
//!
//! - `bench storage`: the storage backends against raw etcd.
//! - `bench api`: GET/LIST/CREATE of Secrets over HTTPS against a real
//!   `skein serve`, beside a bare axum/rustls server and the storage layer,
//!   and GET/CREATE of a custom resource with CEL rules beside the Secrets.
//! - `bench patch`: PUT vs strategic-merge-patch vs server-side apply of
//!   Deployments against a real `skein serve`.
//! - `bench cache`: the watch cache's figures (LIST vs a bare server of
//!   the same bytes, the wrk workload, selector LIST, watch fan-out, RSS per
//!   object) on both stores in one run.
//! - `bench members`: one federation probing 50 member processes.
//! - `bench propagation`: one federation fanning Deployments out to 3 and
//!   10 member processes.
//! - `bench fleet`: one federation with 10, 50 and 100 members that store
//!   copies and 10,000 objects (scale, restart, a member lost).
//! - `bench chaos`: the long chaos run (faults, SIGKILLs, invariants) with
//!   the federation's RSS and threads sampled.

/// The same allocator as the `skein` binary, so that the storage column and
/// the bare server run on what Skein runs on.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

mod api;
mod bare;
mod cache;
mod chaos;
mod client;
mod cluster;
mod custom;
mod fleet;
mod flood;
mod measure;
mod members;
mod patch;
mod propagation;
mod report;
mod storage;

use clap::{Parser, Subcommand};

/// Skein's benchmarks. Progress goes to stderr, the report to stdout.
#[derive(Parser)]
#[command(name = "bench")]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Storage throughput and latency: raw etcd vs the etcd backend vs the
    /// embedded backend, plus the cost of watch fan-out.
    Storage(storage::Args),
    /// HTTPS GET, LIST and CREATE of 1 KiB Secrets on a real `skein serve`
    /// at concurrency 64, beside a bare axum/rustls server and the storage
    /// layer's create rate. Needs `$SKEIN_BIN` (hack/bench.sh sets it).
    Api(api::Args),
    /// The watch cache on both stores in one run: LIST of 1,000 Secrets vs
    /// a bare server of the same bytes, the wrk workload (c = 16 HTTP/1.1,
    /// bearer token, 1,000 ConfigMaps), LIST by label selector (10 of
    /// 10,000), 1,000 watchers under 500 writes/s, RSS per object. Needs
    /// `$SKEIN_BIN`.
    Cache(cache::Args),
    /// PUT vs strategic-merge-patch vs server-side apply of 4 KiB
    /// Deployments on a real `skein serve` at concurrency 16. Needs
    /// `$SKEIN_BIN` (hack/bench.sh sets it).
    Patch(patch::Args),
    /// One federation probing many `skein serve --role=member` processes:
    /// its CPU and RSS, the probe period kept, and the time from a
    /// member's death to `Ready=False`. Needs `$SKEIN_BIN`.
    Members(members::Args),
    /// Deployments propagated by one federation to 3 and 10 member
    /// processes: time to applied and ready, latency, fan-out rate, member
    /// requests, federation CPU and RSS. Needs `$SKEIN_BIN`.
    Propagation(propagation::Args),
    /// One federation with 10, 50 and 100 members that store copies, and
    /// 10,000 objects: paced and burst submit-to-applied, RSS, CPU and
    /// requests per object, restart, a member lost and rejoining (issue
    /// 31's scale table). Needs `$SKEIN_BIN`.
    Fleet(fleet::Args),
    /// The members of `bench fleet`, served by one process (started by
    /// it; not for direct use).
    #[command(hide = true)]
    FleetHost(fleet::HostArgs),
    /// The long chaos run of issue 31: random writes, joins, unjoins,
    /// proxy faults, wiped members and SIGKILLs of the federation for
    /// `--minutes`, then the invariants, and the federation's RSS and
    /// threads over the first and last 10 minutes. Needs `$SKEIN_BIN`.
    Chaos(chaos::Args),
    /// Issue 31's API priority and fairness acceptance: a polite user's
    /// paced creates, alone and under a 2,000-connection flood of creates
    /// by another user (neither in `system:masters`); p50/p99 and 429s.
    /// Needs `$SKEIN_BIN`.
    Flood(flood::Args),
    /// The flooding clients of `bench flood` (started by it, under
    /// `nice`; not for direct use).
    #[command(hide = true)]
    FloodLoad(flood::LoadArgs),
    /// The bare server of `bench api` (started by it; not for direct use).
    #[command(hide = true)]
    BareServer(bare::Args),
}

fn main() -> anyhow::Result<()> {
    let cli = Cli::parse();
    // Multi-thread runtime with one worker per core, like `skein serve`.
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .expect("a Tokio runtime");
    match cli.command {
        Command::Storage(args) => runtime.block_on(storage::run(args)),
        Command::Api(args) => runtime.block_on(api::run(args)),
        Command::Cache(args) => runtime.block_on(cache::run(args)),
        Command::Patch(args) => runtime.block_on(patch::run(args)),
        Command::Members(args) => runtime.block_on(members::run(args)),
        Command::Propagation(args) => runtime.block_on(propagation::run(args)),
        Command::Fleet(args) => runtime.block_on(fleet::run(args)),
        Command::FleetHost(args) => runtime.block_on(fleet::host(args)),
        Command::Chaos(args) => runtime.block_on(chaos::run(args)),
        Command::Flood(args) => runtime.block_on(flood::run(args)),
        Command::FloodLoad(args) => runtime.block_on(flood::load(args)),
        Command::BareServer(args) => runtime.block_on(bare::serve(args)),
    }
}
