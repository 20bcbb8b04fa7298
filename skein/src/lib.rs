//! The `skein` binary's library half: the command line ([`config`]), the
//! client subcommands ([`cli`]), and [`server::serve`], which wires the API
//! server, the federation and the simulator into one server instance.
//! `main.rs` only parses flags and calls in here, so the test harness can
//! run servers in its own process.
//!
//! # Architecture Invariants
//! - The only crate that depends on both the federation and the
//!   simulator; nothing depends on it but the binary, the test harness and
//!   the benchmarks.

pub mod cli;
pub mod config;
pub mod server;

pub use config::Config;
