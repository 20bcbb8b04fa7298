//! Member clusters: how the federation reaches them (credentials), whether
//! they are healthy, what they hold (inventory), and the `clusters/proxy`
//! subresource.
//!
//! The Cluster controller: [`supervisor`] keeps one [`worker`] per Cluster;
//! a worker probes its member through [`member`] and writes what
//! [`health`] (the Ready state machine), [`inventory`] and [`status`]
//! compute, recording [`events`] on Ready transitions. `health`,
//! `inventory`, `status` and the Event builder are pure.

pub use skein_apiserver::member_client::credentials;
pub mod events;
pub mod health;
pub mod inventory;
pub mod member;
pub mod status;
pub mod supervisor;
pub mod worker;

use crate::config::MemberConfig;
use skein_apiserver::registry::Registry;

/// Starts the member-cluster controllers.
pub fn spawn_all(registry: &Registry, config: &MemberConfig) {
    tokio::spawn(supervisor::run(registry.clone(), config.clone()));
}
