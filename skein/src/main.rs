//! The `skein` binary: flags → `Config` → [`server::run`].

use clap::Parser;
use skein::config::{Cli, Command};
use skein::server;

/// mimalloc instead of glibc malloc: the request paths allocate many small
/// JSON nodes, and glibc's allocator was ~15% of the server's CPU on them.
/// Built with `RUSTFLAGS="--cfg skein_heap_profile"` the binary keeps the
/// system allocator, which heap profilers such as heaptrack can follow.
#[cfg_attr(not(skein_heap_profile), global_allocator)]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let cli = Cli::parse();
    match cli.command {
        Command::Serve(config) => {
            // Only the server logs; the client subcommands print one line.
            server::init_logging();
            server::run(*config).await
        }
        Command::Join(args) => skein::cli::join::run(args).await,
        Command::Unjoin(args) => skein::cli::join::unjoin(args).await,
        Command::Kubeconfig(args) => skein::cli::kubeconfig::run(args).await,
        Command::Storage(cmd) => skein::cli::storage::run(cmd).await,
    }
}
