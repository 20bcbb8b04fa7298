//! Federation: what makes Skein more than an API server. Members (the
//! `clusters.federation.skein.io` controllers: credentials, health,
//! inventory, the cluster proxy); later the scheduler, the syncer and the
//! status aggregators.
//!
//! **Architecture Invariant:** like every controller, federation workers
//! read and write Skein's own objects only through the
//! [`skein_apiserver::registry::Registry`]; members are reached only with the `kube`
//! client built by [`skein_apiserver::member_client`]. Pure modules (no I/O) are
//! named as such in their doc comments.

pub mod config;
pub mod history;
pub mod members;
pub mod metrics;
pub mod preview;
pub mod scheduler;
pub mod status;
pub mod summary;
pub mod sync;

pub use crate::config::MemberConfig;
use skein_apiserver::registry::Registry;

/// Starts the federation controllers (control-plane role only); they run
/// until the runtime shuts down.
pub fn spawn_all(registry: &Registry, members: &MemberConfig) {
    members::spawn_all(registry, members);
    sync::propagator::spawn(registry, members);
    history::spawn(registry);
    summary::spawn(registry);
}
