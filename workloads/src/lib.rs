//! Pure workload logic that a cluster and the federation share: Pods made
//! from templates and Pod state as the controllers read it
//! ([`template`]), the Deployment controller's arithmetic and revisions
//! ([`deployment`]), the ControllerRevisions of StatefulSets and
//! DaemonSets ([`controller_history`]), and controller expectations
//! ([`expectations`]).
//!
//! # Architecture Invariants
//! - Pure functions over JSON objects, time passed in: no I/O, no async,
//!   no registry. The simulator's controllers and the federation's history
//!   worker call these; nothing here calls them.
//! - Depends on no Skein crate.

pub mod controller_history;
pub mod deployment;
pub mod expectations;
pub mod template;
