//! Skein's API server: the `skein` binary's library half.
//!
//! `main.rs` only parses flags into a [`config::Config`] and calls
//! [`server::run`]. Everything else lives here so it can be unit-tested.
//!
//! # Architecture Invariants
//! - Every HTTP error body is a `metav1.Status`, rendered only by
//!   [`status::ApiError`].
//! - The server speaks HTTPS only; there is no plain-HTTP listener.
//! - `store` is the only module that names a storage backend.

pub mod admission;
pub mod apply;
pub mod audit;
pub mod authz;
pub mod cli;
pub mod codec;
pub mod config;
pub mod controllers;
pub mod csr_signer;
pub mod encryption;
pub mod error;
pub mod federation;
pub mod http;
pub mod kubeconfig;
pub mod log_writer;
pub mod metrics;
pub mod openapi;
pub mod patch;
pub mod pki;
pub mod registry;
pub mod schema;
pub mod selector;
pub mod server;
pub mod status;
pub mod store;
pub mod table;
pub mod wire;

pub use error::{Error, Result};
