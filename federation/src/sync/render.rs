//! The member copy of a federated object (DESIGN §4). Pure: no I/O.
//!
//! Contract: [`render`] returns the server-side-apply configuration the
//! syncer sends to one member (field manager
//! [`FIELD_MANAGER`](super::FIELD_MANAGER)). It holds only what the
//! federation's user meant: identity, labels, annotations and the kind's
//! top-level fields, minus `status`, metadata's server fields, placement
//! and bookkeeping annotations, and what the kind's allocators and
//! controllers set (cluster IPs, node ports, generated Job selectors,
//! volume bindings...; see `server_fields`), so the member's own
//! controllers own those. The cluster's share of the replicas is set,
//! then its override applied, then the ownership markers
//! ([`MANAGED_BY`](super::MANAGED_BY), [`ORIGIN_UID`](super::ORIGIN_UID))
//! asserted; an override can neither remove the markers nor change the
//! object's identity (apiVersion, kind, name, namespace).

mod overrides;
mod server_fields;

use serde_json::{Map, Value};
use skein_admission::placement::{OVERRIDE_PREFIX, Override};

use super::kinds::{self, Divided};
use super::{MANAGED_BY, ORIGIN_UID};

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
/// The template is not an object, or the cluster's override does not
/// apply to the copy (a failing operation, named by index:
/// `override.skein.io/eu: operation [1] (replace /spec/foo): path does not
/// exist`), or it tried to change the object's identity.
pub fn render(input: &RenderInput<'_>) -> Result<Value, RenderError> {
    let Value::Object(template) = input.template else {
        return Err(RenderError(
            "the federated object is not a JSON object".into(),
        ));
    };
    let mut obj = strip(template);
    let (group, kind) = group_kind(&obj);
    server_fields::strip(&group, &kind, &mut obj);
    set_replicas(&mut obj, &group, &kind, input);
    let mut doc = Value::Object(obj);
    if let Some(ov) = input.override_ {
        let annotation = format!("{OVERRIDE_PREFIX}{}", input.cluster);
        let before = identity(&doc);
        overrides::apply(&mut doc, ov).map_err(|e| RenderError(format!("{annotation}: {e}")))?;
        let after = identity(&doc);
        if let Some((field, was, now)) = changed_identity(&before, &after) {
            return Err(RenderError(format!(
                "{annotation}: an override cannot change {field} (from {was} to {now})"
            )));
        }
    }
    let Value::Object(mut obj) = doc else {
        return Err(RenderError("the copy is not a JSON object".into()));
    };
    mark(&mut obj, input.federation, &origin_uid(input.template));
    Ok(Value::Object(obj))
}

/// The federated object's uid (the value of [`ORIGIN_UID`]).
pub fn origin_uid(template: &Value) -> String {
    template
        .pointer("/metadata/uid")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_owned()
}

/// The copy without `status`, metadata's server fields and dropped
/// annotations.
fn strip(template: &Map<String, Value>) -> Map<String, Value> {
    let mut out = Map::new();
    for (k, v) in template {
        match k.as_str() {
            "status" => {}
            "metadata" => {
                if let Value::Object(m) = v {
                    out.insert(k.clone(), Value::Object(metadata(m)));
                }
            }
            _ => {
                out.insert(k.clone(), v.clone());
            }
        }
    }
    out
}

fn metadata(m: &Map<String, Value>) -> Map<String, Value> {
    let mut out = Map::new();
    for key in server_fields::KEPT_METADATA {
        let Some(v) = m.get(key) else { continue };
        let v = match (key, v) {
            ("annotations", Value::Object(a)) => Value::Object(
                a.iter()
                    .filter(|(k, _)| !server_fields::dropped_annotation(k))
                    .map(|(k, v)| (k.clone(), v.clone()))
                    .collect(),
            ),
            _ => v.clone(),
        };
        if matches!(&v, Value::Object(o) if o.is_empty()) || v.is_null() {
            continue;
        }
        out.insert(key.to_owned(), v);
    }
    out
}

fn group_kind(obj: &Map<String, Value>) -> (String, String) {
    let api_version = obj
        .get("apiVersion")
        .and_then(Value::as_str)
        .unwrap_or_default();
    let group = api_version.rsplit_once('/').map_or("", |(g, _)| g);
    let kind = obj.get("kind").and_then(Value::as_str).unwrap_or_default();
    (group.to_owned(), kind.to_owned())
}

/// The cluster's share of a divided kind's replicas; `retain_replicas`
/// leaves `spec.replicas` out (the member's autoscaler owns it).
fn set_replicas(obj: &mut Map<String, Value>, group: &str, kind: &str, input: &RenderInput<'_>) {
    let how = kinds::divided(group, kind);
    if how.is_some() && input.replicas.is_some() {
        obj.entry("spec")
            .or_insert_with(|| Value::Object(Map::new()));
    }
    let Some(spec) = obj.get_mut("spec").and_then(Value::as_object_mut) else {
        return;
    };
    match (how, input.replicas) {
        (Some(Divided::Replicas), Some(n)) => {
            spec.insert("replicas".into(), Value::from(n));
        }
        (Some(Divided::Job), Some(n)) => {
            spec.insert("parallelism".into(), Value::from(n));
            if let Some(c) = input.completions {
                spec.insert("completions".into(), Value::from(c));
            }
        }
        _ => {}
    }
    if input.retain_replicas {
        spec.remove("replicas");
    }
}

type Identity = [(&'static str, Option<Value>); 4];

fn identity(doc: &Value) -> Identity {
    let at = |p: &str| doc.pointer(p).cloned();
    [
        ("apiVersion", at("/apiVersion")),
        ("kind", at("/kind")),
        ("metadata.name", at("/metadata/name")),
        ("metadata.namespace", at("/metadata/namespace")),
    ]
}

fn changed_identity(before: &Identity, after: &Identity) -> Option<(&'static str, String, String)> {
    let show = |v: &Option<Value>| match v {
        Some(v) => serde_json::to_string(v).unwrap_or_default(),
        None => "nothing".to_owned(),
    };
    before
        .iter()
        .zip(after.iter())
        .find(|((_, a), (_, b))| a != b)
        .map(|((field, a), (_, b))| (*field, show(a), show(b)))
}

/// Sets the ownership markers (an override cannot remove them).
fn mark(obj: &mut Map<String, Value>, federation: &str, uid: &str) {
    let meta = obj
        .entry("metadata")
        .or_insert_with(|| Value::Object(Map::new()));
    if !meta.is_object() {
        *meta = Value::Object(Map::new());
    }
    let Some(meta) = meta.as_object_mut() else {
        return;
    };
    for (map, key, value) in [
        ("labels", MANAGED_BY, federation),
        ("annotations", ORIGIN_UID, uid),
    ] {
        let m = meta.entry(map).or_insert_with(|| Value::Object(Map::new()));
        if !m.is_object() {
            *m = Value::Object(Map::new());
        }
        if let Some(m) = m.as_object_mut() {
            m.insert(key.to_owned(), Value::String(value.to_owned()));
        }
    }
}

#[cfg(test)]
mod tests;
