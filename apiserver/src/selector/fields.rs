//! Which fields each kind can be selected by, and their values.
//!
//! Mirrors kube-apiserver v1.33: the field label conversion functions that
//! decide which field names a group/version/kind accepts
//! (`pkg/apis/core/v1/conversion.go`, `pkg/apis/batch/v1/conversion.go`,
//! `pkg/apis/events/v1/conversion.go`, `pkg/apis/certificates/*/conversion.go`,
//! `pkg/apis/resource/*/conversion.go`), the default for every other kind
//! (`runtime.DefaultMetaV1FieldSelectorConversion`), and the per-kind
//! `GetAttrs`/`ToSelectableFields` that produce the values
//! (`pkg/registry/<group>/<kind>/strategy.go`).
//!
//! Contracts:
//! - A kind without its own conversion accepts `metadata.name` and
//!   `metadata.namespace`, even when cluster-scoped (there the namespace
//!   reads as `""`). Kinds with their own conversion accept exactly their
//!   list: Node, Namespace, CertificateSigningRequest, ClusterTrustBundle and
//!   ResourceSlice reject `metadata.namespace`.
//! - Some accepted fields are never filled in upstream either, so they
//!   compare as `""`: Pod `status.podIPs`; apps/v1 ReplicaSet's
//!   `status.replicas` is the reverse (a value exists but the label is
//!   rejected), exactly as upstream.
//! - [`value`] reads the stored JSON and returns Go's zero value (`""`,
//!   `"0"`, `"false"`) for a missing field of a known name; it assumes
//!   defaulting already ran (e.g. a Service's `spec.type`).

use serde_json::Value;

use super::field;
use super::{Result, SelectorError};
use skein_admission::selector::go::go_quote;

const DEFAULT: &[&str] = &["metadata.name", "metadata.namespace"];
const POD: &[&str] = &[
    "metadata.name",
    "metadata.namespace",
    "spec.nodeName",
    "spec.restartPolicy",
    "spec.schedulerName",
    "spec.serviceAccountName",
    "spec.hostNetwork",
    "status.phase",
    "status.podIP",
    "status.podIPs",
    "status.nominatedNodeName",
    // Old v1 clients' name for spec.nodeName.
    "spec.host",
];
const NODE: &[&str] = &["metadata.name", "spec.unschedulable"];
const REPLICATION_CONTROLLER: &[&str] = &["metadata.name", "metadata.namespace", "status.replicas"];
const CORE_EVENT: &[&str] = &[
    "involvedObject.kind",
    "involvedObject.namespace",
    "involvedObject.name",
    "involvedObject.uid",
    "involvedObject.apiVersion",
    "involvedObject.resourceVersion",
    "involvedObject.fieldPath",
    "reason",
    "reportingComponent",
    "source",
    "type",
    "metadata.namespace",
    "metadata.name",
];
const NAMESPACE: &[&str] = &["status.phase", "metadata.name"];
const SECRET: &[&str] = &["type", "metadata.namespace", "metadata.name"];
const SERVICE: &[&str] = &[
    "metadata.namespace",
    "metadata.name",
    "spec.clusterIP",
    "spec.type",
];
const JOB: &[&str] = &["metadata.name", "metadata.namespace", "status.successful"];
const EVENTS_EVENT: &[&str] = &[
    "reason",
    "regarding.kind",
    "regarding.namespace",
    "regarding.name",
    "regarding.uid",
    "regarding.apiVersion",
    "regarding.resourceVersion",
    "regarding.fieldPath",
    "reportingController",
    "source",
    "type",
    "metadata.namespace",
    "metadata.name",
];
const SIGNER: &[&str] = &["metadata.name", "spec.signerName"];
const RESOURCE_SLICE: &[&str] = &["metadata.name", "spec.nodeName", "spec.driver"];

/// How a kind's conversion function words an unsupported field.
#[derive(Clone, Copy)]
enum Wording {
    /// `runtime.DefaultMetaV1FieldSelectorConversion`.
    Default,
    /// `field label not supported: x`.
    Plain,
    /// `field label "x" not supported for Job`.
    QuotedFor(&'static str),
    /// `field label not supported for resource.k8s.io/v1beta1, Kind=ResourceSlice: x`.
    ForGvk,
}

fn conversion(group: &str, version: &str, kind: &str) -> (&'static [&'static str], Wording) {
    use Wording::*;
    match (group, version, kind) {
        ("", "v1", "Pod") => (POD, Plain),
        ("", "v1", "Node") => (NODE, Plain),
        ("", "v1", "ReplicationController") => (REPLICATION_CONTROLLER, Plain),
        ("", "v1", "Event") => (CORE_EVENT, Plain),
        ("", "v1", "Namespace") => (NAMESPACE, Plain),
        ("", "v1", "Secret") => (SECRET, Plain),
        ("", "v1", "Service") => (SERVICE, Plain),
        ("batch", "v1", "Job") => (JOB, QuotedFor("Job")),
        ("events.k8s.io", "v1", "Event") => (EVENTS_EVENT, Plain),
        ("certificates.k8s.io", "v1", "CertificateSigningRequest") => (SIGNER, Plain),
        ("certificates.k8s.io", "v1alpha1" | "v1beta1", "ClusterTrustBundle") => (SIGNER, Plain),
        ("resource.k8s.io", "v1alpha3" | "v1beta1" | "v1beta2", "ResourceSlice") => {
            (RESOURCE_SLICE, ForGvk)
        }
        _ => (DEFAULT, Default),
    }
}

/// The field selector labels a group/version/kind accepts, as its
/// conversion function lists them (group `""` is the core group).
pub fn supported(group: &str, version: &str, kind: &str) -> &'static [&'static str] {
    conversion(group, version, kind).0
}

/// Checks every term's field against [`supported`], in the selector's
/// order, and fails on the first unsupported one with upstream's message:
/// `"x" is not a known field selector: only "metadata.name",
/// "metadata.namespace"` for kinds without their own list, else e.g.
/// `field label not supported: x`.
pub fn validate(group: &str, version: &str, kind: &str, selector: &field::Selector) -> Result<()> {
    convert(group, version, kind, selector).map(|_| ())
}

/// [`validate`], returning the selector with upstream's renames applied
/// (Pod `spec.host` → `spec.nodeName`; events.k8s.io `regarding.*` →
/// `involvedObject.*`, `reportingController` → `reportingComponent`), i.e.
/// what upstream's list handler passes to storage. [`value`] understands
/// both spellings.
pub fn convert(
    group: &str,
    version: &str,
    kind: &str,
    selector: &field::Selector,
) -> Result<field::Selector> {
    let (labels, wording) = conversion(group, version, kind);
    selector.transform(|label, value| {
        if !labels.contains(&label) {
            return Err(SelectorError::UnsupportedField(unsupported(
                wording, group, version, kind, label,
            )));
        }
        let renamed = match (group, kind, label) {
            ("", "Pod", "spec.host") => "spec.nodeName",
            ("events.k8s.io", "Event", l) => core_event_name(l),
            (_, _, l) => l,
        };
        Ok((renamed.to_string(), value.to_string()))
    })
}

fn unsupported(wording: Wording, group: &str, version: &str, kind: &str, label: &str) -> String {
    match wording {
        Wording::Default => format!(
            "{} is not a known field selector: only \"metadata.name\", \"metadata.namespace\"",
            go_quote(label)
        ),
        Wording::Plain => format!("field label not supported: {label}"),
        Wording::QuotedFor(what) => {
            format!("field label {} not supported for {what}", go_quote(label))
        }
        Wording::ForGvk => {
            format!("field label not supported for {group}/{version}, Kind={kind}: {label}")
        }
    }
}

/// events.k8s.io's field names in core/v1 terms (upstream
/// `AddFieldLabelConversionsForEvent` in `pkg/apis/events/v1`).
fn core_event_name(label: &str) -> &str {
    match label {
        "regarding.kind" => "involvedObject.kind",
        "regarding.namespace" => "involvedObject.namespace",
        "regarding.name" => "involvedObject.name",
        "regarding.uid" => "involvedObject.uid",
        "regarding.apiVersion" => "involvedObject.apiVersion",
        "regarding.resourceVersion" => "involvedObject.resourceVersion",
        "regarding.fieldPath" => "involvedObject.fieldPath",
        "reportingController" => "reportingComponent",
        other => other,
    }
}

/// The value of a selectable field of a stored object, as upstream's
/// `GetAttrs` for the kind computes it; `None` when the kind has no such
/// selectable field (which [`field::Selector::matches`] treats as `""`).
///
/// `group` and `kind` say how `object` is shaped (the version does not
/// matter for these fields). Field names may be given as the client sent
/// them or as [`convert`] renamed them.
pub fn value(group: &str, kind: &str, object: &Value, field: &str) -> Option<String> {
    match field {
        "metadata.name" => return Some(string_at(object, &["metadata", "name"])),
        "metadata.namespace" => return Some(string_at(object, &["metadata", "namespace"])),
        _ => {}
    }
    let s = |path: &[&str]| Some(string_at(object, path));
    match (group, kind) {
        ("", "Pod") => match field {
            "spec.nodeName" | "spec.host" => s(&["spec", "nodeName"]),
            "spec.restartPolicy" => s(&["spec", "restartPolicy"]),
            "spec.schedulerName" => s(&["spec", "schedulerName"]),
            // v1 `serviceAccount` is the deprecated alias; the new name wins.
            "spec.serviceAccountName" => Some(first_non_empty(
                object,
                &[&["spec", "serviceAccountName"], &["spec", "serviceAccount"]],
            )),
            "spec.hostNetwork" => Some(bool_at(object, &["spec", "hostNetwork"]).to_string()),
            "status.phase" => s(&["status", "phase"]),
            // v1 `podIP` is authoritative over `podIPs[0]` when both are set.
            "status.podIP" => Some(first_non_empty(
                object,
                &[&["status", "podIP"], &["status", "podIPs", "0", "ip"]],
            )),
            "status.nominatedNodeName" => s(&["status", "nominatedNodeName"]),
            _ => None,
        },
        ("", "Event") => event_value(object, core_event_name(field), false),
        ("events.k8s.io", "Event") => event_value(object, core_event_name(field), true),
        ("", "Node") => match field {
            "spec.unschedulable" => Some(bool_at(object, &["spec", "unschedulable"]).to_string()),
            _ => None,
        },
        ("", "Namespace") | ("", "Secret") | ("", "Service") => {
            let path: &[&str] = match field {
                "status.phase" if kind == "Namespace" => &["status", "phase"],
                "type" if kind == "Secret" => &["type"],
                "spec.clusterIP" if kind == "Service" => &["spec", "clusterIP"],
                "spec.type" if kind == "Service" => &["spec", "type"],
                _ => return None,
            };
            s(path)
        }
        ("", "ReplicationController") | ("apps", "ReplicaSet") => match field {
            "status.replicas" => Some(int_at(object, &["status", "replicas"]).to_string()),
            _ => None,
        },
        ("batch", "Job") => match field {
            "status.successful" => Some(int_at(object, &["status", "succeeded"]).to_string()),
            _ => None,
        },
        ("certificates.k8s.io", "CertificateSigningRequest" | "ClusterTrustBundle") => {
            match field {
                "spec.signerName" => s(&["spec", "signerName"]),
                _ => None,
            }
        }
        ("resource.k8s.io", "ResourceSlice") => match field {
            "spec.nodeName" => s(&["spec", "nodeName"]),
            "spec.driver" => s(&["spec", "driver"]),
            _ => None,
        },
        _ => None,
    }
}

/// Whether `object` (shaped as `group`/`kind`) satisfies `selector`.
pub fn matches(group: &str, kind: &str, selector: &field::Selector, object: &Value) -> bool {
    selector.matches(|f| value(group, kind, object, f))
}

/// Upstream event `ToSelectableFields`, for a core/v1 Event or (`events`)
/// an events.k8s.io/v1 Event; `field` in core/v1 terms.
fn event_value(object: &Value, field: &str, events: bool) -> Option<String> {
    let reference = if events {
        "regarding"
    } else {
        "involvedObject"
    };
    let reporting = if events {
        "reportingController"
    } else {
        "reportingComponent"
    };
    let from_reference = |key: &str| Some(string_at(object, &[reference, key]));
    match field {
        "involvedObject.kind" => from_reference("kind"),
        "involvedObject.namespace" => from_reference("namespace"),
        "involvedObject.name" => from_reference("name"),
        "involvedObject.uid" => from_reference("uid"),
        "involvedObject.apiVersion" => from_reference("apiVersion"),
        "involvedObject.resourceVersion" => from_reference("resourceVersion"),
        "involvedObject.fieldPath" => from_reference("fieldPath"),
        "reason" => Some(string_at(object, &["reason"])),
        "type" => Some(string_at(object, &["type"])),
        "reportingComponent" => Some(string_at(object, &[reporting])),
        // The source component, else the reporting controller.
        "source" => {
            let source = if events {
                ["deprecatedSource", "component"]
            } else {
                ["source", "component"]
            };
            Some(first_non_empty(object, &[&source, &[reporting]]))
        }
        _ => None,
    }
}

fn at<'a>(object: &'a Value, path: &[&str]) -> Option<&'a Value> {
    path.iter().try_fold(object, |v, key| match v {
        Value::Array(items) => key.parse::<usize>().ok().and_then(|i| items.get(i)),
        _ => v.get(key),
    })
}

fn string_at(object: &Value, path: &[&str]) -> String {
    at(object, path)
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_string()
}

fn first_non_empty(object: &Value, paths: &[&[&str]]) -> String {
    paths
        .iter()
        .map(|p| string_at(object, p))
        .find(|s| !s.is_empty())
        .unwrap_or_default()
}

fn bool_at(object: &Value, path: &[&str]) -> bool {
    at(object, path).and_then(Value::as_bool).unwrap_or(false)
}

fn int_at(object: &Value, path: &[&str]) -> i64 {
    at(object, path).and_then(Value::as_i64).unwrap_or(0)
}

#[cfg(test)]
#[path = "fields_tests.rs"]
mod tests;
