//! The HTTP layer: TLS, authentication, routing and `metav1.Status` errors.
//!
//! **Architecture Invariant:** no business logic here, and every error body
//! is a `metav1.Status` built by [`status::ApiError`], except upstream's
//! plain-text `404 page not found` for paths no group/version serves
//! ([`not_found`]).

pub mod access_log;
pub mod aggregator;
pub mod api;
pub mod audit;
pub mod authn;
pub mod authz;
pub mod body;
pub mod cluster_proxy;
pub mod componentstatus;
pub mod discovery;
pub mod flowcontrol;
pub mod health;
pub mod host_view;
pub mod metrics;
pub mod not_found;
pub mod patch;
pub mod path;
pub mod query;
pub mod requestheader;
pub mod review;
pub mod routes;
pub mod scale;
pub mod status;
pub mod subresource;
pub mod tls;
pub mod tls_policy;
pub mod version;
pub mod watch;

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use skein_storage::Store;

use crate::registry::Registry;

pub use routes::app;

/// What every handler can reach. Cheap to clone.
#[derive(Clone)]
pub struct AppState {
    /// The object store.
    pub store: Arc<dyn Store>,
    /// The generic registry over `store`.
    pub registry: Registry,
    /// Set once shutdown begins; `/readyz` then fails its `shutdown` check.
    shutting_down: Arc<AtomicBool>,
    /// Flips to `true` when shutdown begins; watches end on it.
    shutdown: tokio::sync::watch::Sender<bool>,
}

impl AppState {
    /// State over `store`, not shutting down, without admission plugins.
    pub fn new(store: Arc<dyn Store>) -> Self {
        let registry = Registry::new(store.clone());
        AppState::with_registry(store, registry)
    }

    /// State over `store` with a configured `registry` (the server's).
    pub fn with_registry(store: Arc<dyn Store>, registry: Registry) -> Self {
        AppState {
            registry,
            store,
            shutting_down: Arc::new(AtomicBool::new(false)),
            shutdown: tokio::sync::watch::Sender::new(false),
        }
    }

    /// Marks the server as shutting down (see [`AppState::is_shutting_down`])
    /// and ends open watches.
    pub fn begin_shutdown(&self) {
        self.shutting_down.store(true, Ordering::SeqCst);
        self.shutdown.send_replace(true);
    }

    /// Completes when shutdown begins.
    pub fn shutdown_signal(&self) -> impl std::future::Future<Output = ()> + Send + 'static {
        let mut rx = self.shutdown.subscribe();
        async move {
            let _ = rx.wait_for(|down| *down).await;
        }
    }

    /// Whether shutdown has begun.
    pub fn is_shutting_down(&self) -> bool {
        self.shutting_down.load(Ordering::SeqCst)
    }
}
