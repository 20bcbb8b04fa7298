//! The HTTP layer: TLS, authentication, routing and `metav1.Status` errors.
//!
//! **Architecture Invariant:** no business logic here, and every error body
//! is a `metav1.Status` built by [`status::ApiError`].

pub mod authn;
pub mod health;
pub mod routes;
pub mod status;
pub mod tls;
pub mod version;

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use skein_storage::Store;

pub use routes::app;

/// What every handler can reach. Cheap to clone.
#[derive(Clone)]
pub struct AppState {
    /// The object store.
    pub store: Arc<dyn Store>,
    /// Set once shutdown begins; `/readyz` then fails its `shutdown` check.
    shutting_down: Arc<AtomicBool>,
}

impl AppState {
    /// State over `store`, not shutting down.
    pub fn new(store: Arc<dyn Store>) -> Self {
        AppState {
            store,
            shutting_down: Arc::new(AtomicBool::new(false)),
        }
    }

    /// Marks the server as shutting down (see [`AppState::is_shutting_down`]).
    pub fn begin_shutdown(&self) {
        self.shutting_down.store(true, Ordering::SeqCst);
    }

    /// Whether shutdown has begun.
    pub fn is_shutting_down(&self) -> bool {
        self.shutting_down.load(Ordering::SeqCst)
    }
}
