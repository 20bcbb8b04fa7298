//! Admission: the decisions taken about a write after it is decoded and
//! before it is stored (modeled on `k8s.io/apiserver/pkg/admission`).
//!
//! - [`Attributes`] describe the request: operation, resource, names, the
//!   incoming and the stored object (as [`serde_json::Value`]), the user.
//! - A plugin may refuse with a [`Denial`], which maps onto a
//!   `metav1.Status` (code, reason, message, causes).
//!
//! **Architecture invariant:** this crate is pure. It depends on neither
//! storage nor the apiserver, performs no I/O of its own and never writes.

mod attributes;
mod denial;

pub use attributes::{Attributes, GroupVersionKind, GroupVersionResource, Operation, UserInfo};
pub use denial::{Cause, Denial};
