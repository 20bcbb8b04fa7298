//! The `skein` binary: flags → `Config` → [`server::run`].

use clap::Parser;
use skein_apiserver::config::{Cli, Command};
use skein_apiserver::server;

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    server::init_logging();
    let cli = Cli::parse();
    match cli.command {
        Command::Serve(config) => server::run(config).await,
    }
}
