//! One printer per built-in kind, ported from kube-apiserver 1.33's
//! `pkg/printers/internalversion/printers.go` (`AddHandlers` and the
//! `print*` functions).
//!
//! Upstream prints from internal types; these read the external v1 JSON,
//! whose field names match for every kind here. A field missing from the
//! JSON is the internal type's zero value — no API defaulting happens here
//! (an omitted `spec.replicas` prints as 0, an omitted port protocol as
//! empty), so objects must be stored defaulted, as kube-apiserver stores
//! them, for the output to match a real cluster.

use std::cmp::Ordering;

use serde_json::Value;
use time::OffsetDateTime;

use super::column::Column;
use super::fields;
use super::printer::{Printer, no_conditions};

mod admission;
mod apps;
mod autoscaling;
mod batch;
mod certificates;
mod cluster;
mod coordination;
mod core;
mod csi;
mod discovery;
mod event;
mod flowcontrol;
mod networking;
mod node;
mod pod;
mod policy;
mod quota;
mod rbac;
mod service;
mod storage;
mod storage_class;
mod templates;

/// Kinds upstream v1.33 prints with the default table (`Name`, `Created
/// At`), by (group, kind). Every kind Skein serves is either here or has a
/// dedicated printer in [`lookup`]; a unit test holds the resource table to
/// that, so a new kind needs a decision. (Only the tests read it: the
/// default is what [`lookup`] not finding a kind means.)
#[cfg(test)]
pub(crate) const DEFAULT_TABLE_KINDS: &[(&str, &str)] = &[
    // `limitrange/storage`: `rest.NewDefaultTableConvertor` ("TODO: define
    // table converter that exposes more than name/creation timestamp").
    ("", "LimitRange"),
    // RBAC roles: `printers.go` has no handler; their storage uses the
    // default convertor.
    ("rbac.authorization.k8s.io", "Role"),
    ("rbac.authorization.k8s.io", "ClusterRole"),
    // apiextensions-apiserver's CRD storage: `rest.NewDefaultTableConvertor`.
    ("apiextensions.k8s.io", "CustomResourceDefinition"),
    // Create-only kinds without list or get: upstream's storage for them
    // has no table convertor at all (`AllowsMediaTypeTransform` then refuses
    // a Table), so there are no columns to match; should Skein ever convert
    // one, the default table is what it gets.
    ("", "Binding"),
    ("authentication.k8s.io", "TokenReview"),
    ("authentication.k8s.io", "SelfSubjectReview"),
    ("authorization.k8s.io", "SubjectAccessReview"),
    ("authorization.k8s.io", "SelfSubjectAccessReview"),
    ("authorization.k8s.io", "LocalSubjectAccessReview"),
    ("authorization.k8s.io", "SelfSubjectRulesReview"),
];

/// A printer with no row conditions and `[]` for an empty list — the shape
/// of every `printers.go` handler.
pub(super) const fn kind_printer(
    columns: &'static [Column],
    cells: fn(&Value, OffsetDateTime) -> Vec<Value>,
) -> Printer {
    Printer {
        columns,
        cells,
        conditions: no_conditions,
        empty_rows_are_null: false,
    }
}

/// The row order upstream's list printer imposes for `(group, kind)`, if
/// any (only FlowSchema lists are sorted; every other list keeps storage
/// order).
pub(crate) fn list_order(group: &str, kind: &str) -> Option<fn(&Value, &Value) -> Ordering> {
    match (group, kind) {
        ("flowcontrol.apiserver.k8s.io", "FlowSchema") => Some(flowcontrol::flow_schema_order),
        _ => None,
    }
}

/// The dedicated printer for `(group, kind)`, if upstream has one. Keyed by
/// group and kind, never version: every served version of a kind prints
/// alike, as upstream prints the internal type.
pub(crate) fn lookup(group: &str, kind: &str) -> Option<&'static Printer> {
    let printer = match (group, kind) {
        ("", "Pod") => &pod::POD,
        ("", "Node") => &node::NODE,
        ("", "Namespace") => &core::NAMESPACE,
        ("", "ConfigMap") => &core::CONFIG_MAP,
        ("", "Secret") => &core::SECRET,
        ("", "ServiceAccount") => &core::SERVICE_ACCOUNT,
        ("", "Endpoints") => &core::ENDPOINTS,
        ("", "Service") => &service::SERVICE,
        ("", "Event") => &event::EVENT,
        ("events.k8s.io", "Event") => &event::EVENTS_V1_EVENT,
        ("", "PersistentVolume") => &storage::PERSISTENT_VOLUME,
        ("", "PersistentVolumeClaim") => &storage::PERSISTENT_VOLUME_CLAIM,
        ("", "PodTemplate") => &templates::POD_TEMPLATE,
        ("", "ReplicationController") => &templates::REPLICATION_CONTROLLER,
        ("", "ResourceQuota") => &quota::RESOURCE_QUOTA,
        ("", "ComponentStatus") => &cluster::COMPONENT_STATUS,
        ("apps", "ControllerRevision") => &templates::CONTROLLER_REVISION,
        // The `scale` subresource's object (not a resource of its own).
        ("autoscaling", "Scale") => &templates::SCALE,
        ("apiregistration.k8s.io", "APIService") => &cluster::API_SERVICE,
        ("certificates.k8s.io", "CertificateSigningRequest") => {
            &certificates::CERTIFICATE_SIGNING_REQUEST
        }
        ("networking.k8s.io", "IngressClass") => &networking::INGRESS_CLASS,
        ("networking.k8s.io", "NetworkPolicy") => &networking::NETWORK_POLICY,
        ("networking.k8s.io", "ServiceCIDR") => &networking::SERVICE_CIDR,
        ("networking.k8s.io", "IPAddress") => &networking::IP_ADDRESS,
        ("storage.k8s.io", "StorageClass") => &storage_class::STORAGE_CLASS,
        ("storage.k8s.io", "VolumeAttachment") => &csi::VOLUME_ATTACHMENT,
        ("storage.k8s.io", "CSIDriver") => &csi::CSI_DRIVER,
        ("storage.k8s.io", "CSINode") => &csi::CSI_NODE,
        ("storage.k8s.io", "CSIStorageCapacity") => &csi::CSI_STORAGE_CAPACITY,
        ("admissionregistration.k8s.io", "MutatingWebhookConfiguration") => {
            &admission::MUTATING_WEBHOOK_CONFIGURATION
        }
        ("admissionregistration.k8s.io", "ValidatingWebhookConfiguration") => {
            &admission::VALIDATING_WEBHOOK_CONFIGURATION
        }
        ("admissionregistration.k8s.io", "ValidatingAdmissionPolicy") => {
            &admission::VALIDATING_ADMISSION_POLICY
        }
        ("admissionregistration.k8s.io", "ValidatingAdmissionPolicyBinding") => {
            &admission::VALIDATING_ADMISSION_POLICY_BINDING
        }
        ("scheduling.k8s.io", "PriorityClass") => &cluster::PRIORITY_CLASS,
        ("node.k8s.io", "RuntimeClass") => &cluster::RUNTIME_CLASS,
        ("flowcontrol.apiserver.k8s.io", "FlowSchema") => &flowcontrol::FLOW_SCHEMA,
        ("flowcontrol.apiserver.k8s.io", "PriorityLevelConfiguration") => {
            &flowcontrol::PRIORITY_LEVEL_CONFIGURATION
        }
        ("discovery.k8s.io", "EndpointSlice") => &discovery::ENDPOINT_SLICE,
        ("apps", "Deployment") => &apps::DEPLOYMENT,
        ("apps", "ReplicaSet") => &apps::REPLICA_SET,
        ("apps", "StatefulSet") => &apps::STATEFUL_SET,
        ("apps", "DaemonSet") => &apps::DAEMON_SET,
        ("batch", "Job") => &batch::JOB,
        ("batch", "CronJob") => &batch::CRON_JOB,
        ("networking.k8s.io", "Ingress") => &networking::INGRESS,
        ("autoscaling", "HorizontalPodAutoscaler") => &autoscaling::HORIZONTAL_POD_AUTOSCALER,
        ("policy", "PodDisruptionBudget") => &policy::POD_DISRUPTION_BUDGET,
        ("rbac.authorization.k8s.io", "RoleBinding") => &rbac::ROLE_BINDING,
        ("rbac.authorization.k8s.io", "ClusterRoleBinding") => &rbac::CLUSTER_ROLE_BINDING,
        ("coordination.k8s.io", "Lease") => &coordination::LEASE,
        _ => return None,
    };
    Some(printer)
}

/// `layoutContainerCells`: container names and images of the container
/// list at `path`, each comma-joined.
fn container_cells(obj: &Value, path: &[&str]) -> [Value; 2] {
    let containers = fields::items_at(obj, path);
    let names: Vec<&str> = containers
        .iter()
        .map(|c| fields::str_at(c, &["name"]))
        .collect();
    let images: Vec<&str> = containers
        .iter()
        .map(|c| fields::str_at(c, &["image"]))
        .collect();
    [names.join(",").into(), images.join(",").into()]
}

/// A sorted set of ingress points (`ip`, else `hostname`), comma-joined —
/// `loadBalancerStatusStringer` in its wide form (kube-apiserver always
/// prints wide).
fn load_balancer_ingress(obj: &Value, path: &[&str]) -> String {
    let mut points: Vec<&str> = fields::items_at(obj, path)
        .iter()
        .filter_map(|ing| {
            let ip = fields::str_at(ing, &["ip"]);
            let host = fields::str_at(ing, &["hostname"]);
            if !ip.is_empty() {
                Some(ip)
            } else if !host.is_empty() {
                Some(host)
            } else {
                None
            }
        })
        .collect();
    points.sort_unstable();
    points.dedup();
    points.join(",")
}
