//! The syncer (DESIGN §4): for each federated object and each cluster the
//! scheduler chose, a member copy applied by server-side apply (field
//! manager [`FIELD_MANAGER`]) through the member's `kube` client, and
//! removed again when the object or the cluster leaves the placement.
//!
//! Pure modules: [`kinds`] (what propagates, which kinds are divided),
//! [`render`] (the member copy), [`plan`] (what to do given the desired
//! copy and the member's object). The workers around them are thin.

pub mod cluster;
pub mod finalizer;
pub mod held;
pub mod kinds;
pub mod member;
pub mod plan;
pub mod propagator;
pub mod record;
pub mod render;
pub mod shared;
pub mod writes;

/// The field manager of every write the syncer makes on a member.
pub const FIELD_MANAGER: &str = "skein";
/// Ownership label on every member copy; its value is the federation's name.
pub const MANAGED_BY: &str = "federation.skein.io/managed-by";
/// Ownership annotation on every member copy: the federated object's uid.
pub const ORIGIN_UID: &str = "federation.skein.io/origin-uid";
/// Finalizer on a federated object while it has member copies.
pub const CLEANUP_FINALIZER: &str = "federation.skein.io/cleanup";
/// Annotation a dry run adds: the decision the object would get.
pub const DECISION_ANNOTATION: &str = "federation.skein.io/decision";
/// The federation's name: the value of [`MANAGED_BY`].
pub const FEDERATION_NAME: &str = "default";
