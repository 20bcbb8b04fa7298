//! Label and field selectors (kubectl `-l` / `--field-selector` syntax).
//!
//! Pure functions that reproduce kube-apiserver v1.33 exactly, because
//! kubectl, Helm and controllers send these strings unchanged and show the
//! server's error text to users:
//!
//! - [`label`]: `?labelSelector=` and `metav1.LabelSelector`
//!   (`k8s.io/apimachinery/pkg/labels`, `metav1.LabelSelectorAsSelector`).
//! - [`field`]: `?fieldSelector=` (`k8s.io/apimachinery/pkg/fields`).
//! - [`fields`]: which fields each group/version/kind can be selected by,
//!   their upstream error messages, and reading those fields from stored JSON.
//!
//! A list or watch handler does, in upstream's order:
//! 1. `label::Selector::parse(q.labelSelector)?` and
//!    `field::Selector::parse(q.fieldSelector)?`;
//! 2. `fields::convert(group, version, kind, &field_selector)?`;
//! 3. per object, `label.matches_object(obj) && fields::matches(group, kind, &field, obj)`.
//!
//! Every failure is a [`SelectorError`], which the HTTP layer renders as a
//! `400 BadRequest` `metav1.Status` carrying the message unchanged.
//!
//! # Invariants
//! - No function here panics or does I/O, whatever the input; a fuzz target
//!   (`fuzz/`) and property tests check the parsers on arbitrary strings.
//! - Parsing a selector's `Display` output gives the selector back.

pub mod field;
pub mod fields;

/// Label selectors live in the admission crate, their one home (placement
/// annotations parse them there too).
pub use skein_admission::selector::label;
pub use skein_admission::selector::{Result, SelectorError};

#[cfg(test)]
mod props;
