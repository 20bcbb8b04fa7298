//! The repair loops of Service cluster IPs and node ports (upstream's
//! `ipallocator/controller` and `portallocator/controller` repairs).
//!
//! - [`run_claims`] (one replica, the leader): every [`PERIOD`], and once
//!   at start, makes the store's claims (IPAddress objects and node port
//!   claims, `registry/claims.rs`) agree with the stored Services.
//! - [`run_memory`] (every replica): every [`PERIOD`], re-marks in this
//!   process's allocator what stored Services hold, and frees what none
//!   holds any more (after two passes), so that an address another replica
//!   freed becomes free here too.

use std::sync::Arc;
use std::time::Duration;

use skein_admission::allocator::InMemoryAllocator;

use crate::registry::claims::Suspects;
use crate::registry::{Registry, resource};

/// Upstream's repair interval (3 minutes).
pub const PERIOD: Duration = Duration::from_secs(180);

/// Repairs the claims at once, then every [`PERIOD`]; runs until the
/// runtime shuts down.
pub async fn run_claims(registry: Registry) {
    let mut suspects = Suspects::default();
    loop {
        match registry.repair_claims(&mut suspects).await {
            Ok(done) if done.created + done.deleted > 0 => {
                tracing::info!(
                    created = done.created,
                    deleted = done.deleted,
                    "repaired Service address claims"
                );
            }
            Ok(_) => {}
            Err(e) => tracing::warn!(error = %e, "repairing Service address claims failed"),
        }
        tokio::time::sleep(PERIOD).await;
    }
}

/// Re-seeds `allocator` from the stored Services every [`PERIOD`]; runs
/// until the runtime shuts down.
pub async fn run_memory(registry: Registry, allocator: Arc<InMemoryAllocator>) {
    let Some(services) = resource::builtin("", "v1", "services") else {
        return;
    };
    loop {
        tokio::time::sleep(PERIOD).await;
        match registry.all_of(&services).await {
            Ok(all) => crate::admission::seed(&allocator, all.iter()),
            Err(e) => {
                tracing::warn!(error = %e, "reading Services for the allocator's repair failed")
            }
        }
    }
}
