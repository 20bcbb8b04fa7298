//! CustomResourceDefinitions, as `apiextensions-apiserver` v1.33 treats them,
//! over `serde_json::Value`s. Pure: no I/O, no panics on any input.
//!
//! - [`crd`]: validation of `CustomResourceDefinition` objects themselves
//!   (names, group, versions, structural schema rules, `x-kubernetes-*`
//!   combinations, CEL compile errors) with upstream's paths and messages.
//! - [`schema`]: structural schemas applied to custom resources:
//!   validation, pruning of unknown fields, defaulting.
//! - [`cel`]: `x-kubernetes-validations` rules, compiled once per CRD
//!   version, evaluated with Kubernetes' CEL libraries.
//! - [`jsonpath`]: kubectl's JSONPath dialect, which
//!   `additionalPrinterColumns` use (the apiserver's `table/custom.rs`
//!   formats their cells as upstream's table convertor).
//! - [`openapi`]: the published OpenAPI v3/v2 schemas of a CRD version.
//!
//! Field errors are [`skein_admission::Cause`]s, so the apiserver renders
//! them like every other 422.

pub mod cel;
pub mod crd;
pub mod jsonpath;
pub mod openapi;
pub mod schema;
