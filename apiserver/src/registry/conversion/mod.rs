//! Conversion between the versions of one stored resource.
//!
//! Upstream keeps one storage version per resource and converts at the
//! edges: an `autoscaling/v1` HorizontalPodAutoscaler is stored as
//! `autoscaling/v2`, and `events.k8s.io/v1` Events are core/v1 Events seen
//! through another shape. A [`Conversion`] is attached to the resource-table
//! row of every served version that is not the storage version; the registry
//! converts requests into the storage version and results back, so storage,
//! admission, the garbage collector and watches only ever see one form.
//!
//! Contracts: conversions are pure functions over `serde_json::Value`s,
//! never panic, and round-trip (`to_storage(from_storage(x))` keeps every
//! field the request version can express, as upstream's conversions do).

pub mod custom;
pub mod event;
pub mod hpa;

use serde_json::Value;

/// How a served version maps onto its storage version.
#[derive(Debug)]
pub struct Conversion {
    /// The storage version's group ("" for core).
    pub storage_group: &'static str,
    /// The storage version.
    pub storage_version: &'static str,
    /// The storage version's plural (the same resource).
    pub storage_plural: &'static str,
    /// Request version → storage version (`apiVersion` and `kind` set to
    /// the storage version's). An error is a malformed request (400).
    pub to_storage: fn(Value) -> Result<Value, String>,
    /// Storage version → request version. Total.
    pub from_storage: fn(Value) -> Value,
}

/// Sets `apiVersion` (and keeps `kind`) of an object.
pub(crate) fn set_api_version(obj: &mut Value, api_version: &str) {
    if let Some(map) = obj.as_object_mut() {
        map.insert("apiVersion".into(), Value::String(api_version.into()));
    }
}

/// Moves `from` to `to` inside one JSON object (absent stays absent).
pub(crate) fn rename(map: &mut serde_json::Map<String, Value>, from: &str, to: &str) {
    if let Some(v) = map.remove(from) {
        map.insert(to.to_string(), v);
    }
}
