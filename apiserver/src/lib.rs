//! Skein's Kubernetes API server, as a library: HTTP, authentication and
//! authorization, audit, the registry and its watch cache, storage
//! wiring, OpenAPI, apply and patch, tables, the native controllers
//! (garbage collector, namespaces, bootstrap, CRDs) and the member-cluster
//! client. The `skein` crate wires it with the federation and the
//! simulator into the `skein` binary.
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
pub mod codec;
pub mod config;
pub mod controllers;
pub mod csr_signer;
pub mod encryption;
pub mod error;
pub mod flowcontrol;
pub mod http;
pub mod instance;
pub mod kubeconfig;
pub mod log_writer;
pub mod member_client;
pub mod metrics;
pub mod openapi;
pub mod patch;
pub mod pki;
pub mod registry;
pub mod schema;
pub mod selector;
pub mod status;
pub mod store;
pub mod table;
pub mod wire;

pub use error::{Error, Result};
