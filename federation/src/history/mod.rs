//! Revision history on the federation (issue 12): no Deployment,
//! StatefulSet or DaemonSet controller runs on the control plane (those
//! objects are templates for the members), yet `kubectl rollout history`
//! and `kubectl rollout undo` read and restore revisions from history
//! objects. This controller keeps the history objects a cluster keeps:
//! ReplicaSets `<deployment>-<pod-template-hash>` with
//! `deployment.kubernetes.io/revision` for Deployments ([`deployments`]),
//! ControllerRevisions for StatefulSets and DaemonSets ([`revisions`]),
//! plus the Deployment's own revision annotation.
//!
//! Contract:
//! - every history object has a controller ownerReference to its owner,
//!   so the syncer never propagates it
//!   ([`crate::sync::kinds::stays_on_federation`]) and the
//!   garbage collector deletes it with its owner;
//! - every write goes through the [`Registry`] with field manager
//!   [`FIELD_MANAGER`]; nothing is written when nothing changed; the only
//!   write to an owner is the Deployment's `deployment.kubernetes.io/revision`
//!   annotation (an update touching that annotation alone, which leaves
//!   `metadata.generation` and the user's applied fields alone); owners'
//!   statuses and the history objects' statuses are not touched (the
//!   status aggregator owns them);
//! - decisions are pure ([`deployments::plan`], [`revisions::plan`]); the
//!   [`worker`] around them is thin and syncs an owner only once its
//!   informers show its own previous writes ([`expectations`]).

pub mod deployments;
pub mod expectations;
pub mod revisions;
pub mod worker;

use skein_apiserver::registry::{Registry, WriteOptions};

/// The field manager of every write this controller makes.
pub const FIELD_MANAGER: &str = "skein-history";

/// The write options of this controller.
pub fn write_options() -> WriteOptions {
    WriteOptions {
        field_manager: FIELD_MANAGER.into(),
        ..WriteOptions::default()
    }
}

/// Starts the revision-history controller; it runs until the runtime
/// shuts down.
pub fn spawn(registry: &Registry) {
    tokio::spawn(worker::run(registry.clone()));
}
