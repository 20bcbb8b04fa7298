//! The member copy of a federated object (DESIGN §4). Pure: no I/O.
//!
//! STUB (lead): the signature is the contract; a helper fills it in.

use serde_json::Value;
use skein_admission::placement::Override;

/// What a member copy is rendered from.
#[derive(Debug, Clone, Copy)]
pub struct RenderInput<'a> {
    /// The federated object as stored on the federation.
    pub template: &'a Value,
    /// The Cluster the copy is for.
    pub cluster: &'a str,
    /// The replicas the decision gives this cluster (divided kinds):
    /// `spec.replicas`, or a Job's `spec.parallelism`.
    pub replicas: Option<i64>,
    /// A Job's share of `spec.completions` (divided Jobs with completions).
    pub completions: Option<i64>,
    /// `skein.io/retain-replicas`: leave `spec.replicas` to the member.
    pub retain_replicas: bool,
    /// This cluster's `override.skein.io/<cluster>`.
    pub override_: Option<&'a Override>,
    /// The value of the ownership label.
    pub federation: &'a str,
}

/// Why a copy cannot be rendered (an override that does not apply).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct RenderError(pub String);

/// The apply configuration for the member.
///
/// # Errors
///
/// The cluster's override does not apply to the object.
pub fn render(input: &RenderInput<'_>) -> Result<Value, RenderError> {
    let mut v = input.template.clone();
    if let Some(m) = v.get_mut("metadata").and_then(Value::as_object_mut) {
        for k in [
            "uid",
            "resourceVersion",
            "generation",
            "creationTimestamp",
            "managedFields",
            "finalizers",
            "deletionTimestamp",
            "deletionGracePeriodSeconds",
            "ownerReferences",
        ] {
            m.remove(k);
        }
        let labels = m
            .entry("labels")
            .or_insert_with(|| Value::Object(Default::default()));
        if let Some(l) = labels.as_object_mut() {
            l.insert(
                super::MANAGED_BY.into(),
                Value::String(input.federation.into()),
            );
        }
        let uid = object_uid(input.template);
        let ann = m
            .entry("annotations")
            .or_insert_with(|| Value::Object(Default::default()));
        if let Some(a) = ann.as_object_mut() {
            a.insert(super::ORIGIN_UID.into(), Value::String(uid));
        }
    }
    if let Some(o) = v.as_object_mut() {
        o.remove("status");
    }
    if let (Some(n), Some(spec)) = (
        input.replicas,
        v.get_mut("spec").and_then(Value::as_object_mut),
    ) {
        spec.insert("replicas".into(), Value::from(n));
    }
    Ok(v)
}

fn object_uid(v: &Value) -> String {
    v.pointer("/metadata/uid")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_owned()
}
