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

use serde_json::Value;

use super::fields;
use super::printer::Printer;

mod apps;
mod autoscaling;
mod batch;
mod coordination;
mod core;
mod event;
mod networking;
mod node;
mod pod;
mod policy;
mod rbac;
mod service;
mod storage;

/// The dedicated printer for `(group, kind)`, if upstream has one.
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
