//! Controllers that make the native API behave like a cluster's control
//! plane: namespace lifecycle and ownerReference garbage collection.
//!
//! **Architecture Invariant:** controllers go through the
//! [`crate::registry::Registry`] as a system user; they never touch storage
//! or HTTP.

pub mod bootstrap;
pub mod gc;
pub mod namespace;

use crate::registry::Registry;

/// Starts every controller; they run until the runtime shuts down.
pub fn spawn_all(registry: &Registry) {
    tokio::spawn(namespace::run(registry.clone()));
    tokio::spawn(gc::run(registry.clone()));
}
