//! Admission: the decisions taken about a write after it is decoded and
//! before it is stored (modeled on `k8s.io/apiserver/pkg/admission`).
//!
//! The apiserver runs admission in two phases at different points of the
//! request path:
//!
//! ```text
//! decode → Chain::admit (Mutate) → strategy (defaults, validation)
//!        → Chain::validate (Validate) → storage
//! ```
//!
//! - [`Attributes`] describe the request: operation, resource, names, the
//!   incoming and the stored object (as [`serde_json::Value`]), the user.
//! - [`Mutate`] plugins may change [`Attributes::object`]; [`Validate`]
//!   plugins only look. Either may refuse with a [`Denial`], which maps onto a
//!   `metav1.Status` (code, reason, message, causes).
//! - [`Chain`] runs plugins in registration order, skips those whose
//!   `handles(operation)` is false, and stops at the first denial.
//!
//! **Architecture invariant:** this crate is pure. It depends on neither
//! storage nor the apiserver, performs no I/O of its own and never writes;
//! anything a future plugin must read will come in through a trait it is
//! given.

pub mod allocator;
mod attributes;
mod chain;
pub mod defaults;
mod denial;
pub mod gofmt;
mod json;
pub mod names;
pub mod namespace_name;
pub mod path;
pub mod placement;
pub mod selector;
pub mod serviceaccount;
pub mod validation;

/// `resource.Quantity` parsing, comparison and canonical text (one home,
/// used by the apiserver's strategies too).
pub use validation::quantity;

pub use attributes::{
    ANONYMOUS_USER, AUTHENTICATED_GROUP, Attributes, GroupVersionKind, GroupVersionResource,
    Operation, UNAUTHENTICATED_GROUP, UserInfo,
};
pub use chain::Chain;
pub use denial::{Cause, Denial, quote, render_value};

/// A mutating admission plugin (upstream `admission.MutationInterface`).
///
/// Contract:
/// - `admit` may change [`Attributes::object`] and nothing else; the other
///   fields are the request's identity. `old_object` is read-only.
/// - It should be idempotent: the apiserver may admit the same request more
///   than once (e.g. when retrying an update after a conflict).
/// - On a dry run ([`Attributes::dry_run`]) it must have no side effects
///   outside `attrs`.
/// - It runs before the strategy, so the object it sees is not yet defaulted
///   or validated.
pub trait Mutate: Send + Sync {
    /// The plugin's name, e.g. `"DefaultTolerationSeconds"`; used in
    /// denials, logs and `Debug` output.
    fn name(&self) -> &str;

    /// Whether this plugin cares about `op`. The chain does not call
    /// [`Mutate::admit`] for operations it does not handle. Default: all.
    fn handles(&self, op: Operation) -> bool {
        let _ = op;
        true
    }

    /// Mutates `attrs.object`, or refuses the request.
    ///
    /// # Errors
    ///
    /// A [`Denial`] refuses the whole request; no later plugin runs.
    fn admit(&self, attrs: &mut Attributes) -> Result<(), Denial>;
}

/// A validating admission plugin (upstream `admission.ValidationInterface`).
///
/// Contract:
/// - `validate` must not mutate anything (it is only given `&Attributes`)
///   and must not depend on running before or after another validator.
/// - It runs after every mutator and after the strategy, so it sees the
///   object exactly as it will be stored.
/// - On a dry run ([`Attributes::dry_run`]) it must have no side effects.
pub trait Validate: Send + Sync {
    /// The plugin's name, e.g. `"PodSecurity"`; used in denials, logs and
    /// `Debug` output.
    fn name(&self) -> &str;

    /// Whether this plugin cares about `op`. The chain does not call
    /// [`Validate::validate`] for operations it does not handle.
    /// Default: all.
    fn handles(&self, op: Operation) -> bool {
        let _ = op;
        true
    }

    /// Accepts or refuses the request.
    ///
    /// # Errors
    ///
    /// A [`Denial`] refuses the whole request; no later plugin runs.
    fn validate(&self, attrs: &Attributes) -> Result<(), Denial>;
}
