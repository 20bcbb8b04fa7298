//! `bench`: Skein's benchmarks, as a program that prints a table.
//!
//! Run it through `hack/bench.sh` (a release build). Each subcommand is one
//! benchmark; see `docs/benchmarks.md` for what they measure and for the
//! latest results.
//!
//! - `bench storage`: the storage backends against raw etcd.

mod measure;
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
    }
}
