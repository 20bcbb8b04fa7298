//! Validation of the common kinds with upstream's field paths and
//! messages (`pkg/apis/{core,apps,batch,autoscaling,policy,networking}/
//! validation/validation.go`). Object metadata (name, labels,
//! annotations) is the registry's and is not checked again here.

mod affinity;
mod apps;
mod batch;
mod config;
mod container;
mod flowcontrol;
mod metrics;
mod network;
mod other;
mod pod;
mod pod_update;
pub mod quantity;
mod rbac;
mod security;
mod service;
mod volume;

use serde_json::{Value, json};

use crate::json::object_name;
use crate::path::Path;
use crate::{Attributes, Cause, Denial, Operation, Validate};

/// The validating plugin: one dispatch over the object's kind. Runs on
/// create and update of the main resource (subresource writes keep the
/// stored spec).
#[derive(Debug, Default, Clone, Copy)]
pub struct Validation;

impl Validate for Validation {
    fn name(&self) -> &str {
        "Validation"
    }

    fn handles(&self, op: Operation) -> bool {
        matches!(op, Operation::Create | Operation::Update)
    }

    fn validate(&self, attrs: &Attributes) -> Result<(), Denial> {
        if attrs.subresource.is_some() {
            return Ok(());
        }
        let Some(obj) = attrs.object.as_ref() else {
            return Ok(());
        };
        let old = match attrs.operation {
            Operation::Update => attrs.old_object.as_ref(),
            _ => None,
        };
        let causes = validate(&attrs.gvk.group, &attrs.gvk.kind, obj, old);
        if causes.is_empty() {
            Ok(())
        } else {
            Err(Denial::invalid(
                &attrs.gvk,
                object_name(obj, &attrs.name),
                causes,
            ))
        }
    }
}

/// Field errors of `obj` of kind `group, kind`; `old` is the stored object
/// on update.
pub fn validate(group: &str, kind: &str, obj: &Value, old: Option<&Value>) -> Vec<Cause> {
    match (group, kind) {
        ("apps", "Deployment") => apps::deployment(obj, old),
        ("apps", "ReplicaSet") => apps::replica_set(obj, old),
        ("apps", "StatefulSet") => apps::stateful_set(obj, old),
        ("apps", "DaemonSet") => apps::daemon_set(obj, old),
        ("batch", "Job") => batch::job(obj, old),
        ("batch", "CronJob") => batch::cron_job(obj, old),
        ("", "ReplicationController") => apps::replication_controller(obj),
        ("", "Pod") => pod::pod(obj, old),
        ("", "PodTemplate") => pod::template(obj.get("template"), &Path::new("template")),
        ("", "Service") => service::service(obj, old),
        ("", "ConfigMap") => config::config_map(obj, old),
        ("", "Secret") => config::secret(obj, old),
        ("autoscaling", "HorizontalPodAutoscaler") => other::hpa(obj),
        ("policy", "PodDisruptionBudget") => other::pdb(obj),
        ("networking.k8s.io", "Ingress") => other::ingress(obj),
        ("networking.k8s.io", "NetworkPolicy") => network::network_policy(obj),
        ("rbac.authorization.k8s.io", "Role") => rbac::role(obj),
        ("rbac.authorization.k8s.io", "ClusterRole") => rbac::cluster_role(obj),
        ("rbac.authorization.k8s.io", "RoleBinding") => rbac::binding(obj, old, true),
        ("rbac.authorization.k8s.io", "ClusterRoleBinding") => rbac::binding(obj, old, false),
        ("flowcontrol.apiserver.k8s.io", "FlowSchema") => flowcontrol::flow_schema(obj),
        ("flowcontrol.apiserver.k8s.io", "PriorityLevelConfiguration") => {
            flowcontrol::priority_level(obj)
        }
        _ => Vec::new(),
    }
}

/// `must be greater than or equal to 0` when `v` is a negative integer.
fn non_negative(v: Option<&Value>, path: &Path, out: &mut Vec<Cause>) {
    if let Some(n) = v.and_then(Value::as_i64)
        && n < 0
    {
        out.push(Cause::invalid(path, &json!(n), crate::names::NEGATIVE_MSG));
    }
}

/// Go's `%#v` of an `intstr.IntOrString`.
fn render_int_or_string(v: &Value) -> String {
    match v {
        Value::String(s) => format!(
            "intstr.IntOrString{{Type:1, IntVal:0, StrVal:{}}}",
            crate::quote(s)
        ),
        other => format!(
            "intstr.IntOrString{{Type:0, IntVal:{}, StrVal:\"\"}}",
            other.as_i64().unwrap_or(0)
        ),
    }
}

/// Upstream `ValidatePositiveIntOrPercent` and `IsNotMoreThan100Percent`.
fn int_or_percent(v: Option<&Value>, path: &Path, out: &mut Vec<Cause>) {
    match v {
        Some(Value::String(s)) => {
            if !crate::names::is_percent(s) {
                out.push(Cause::invalid_rendered(
                    path,
                    &render_int_or_string(&json!(s)),
                    crate::names::PERCENT_MSG,
                ));
            } else if s
                .trim_end_matches('%')
                .parse::<u64>()
                .is_ok_and(|n| n > 100)
            {
                out.push(Cause::invalid_rendered(
                    path,
                    &render_int_or_string(&json!(s)),
                    "must not be greater than 100%",
                ));
            }
        }
        Some(Value::Number(_)) => non_negative(v, path, out),
        _ => {}
    }
}

/// The value of an int-or-percent as upstream's `getIntOrPercentValue`.
fn int_or_percent_value(v: Option<&Value>) -> i64 {
    match v {
        Some(Value::String(s)) => s.trim_end_matches('%').parse().unwrap_or(0),
        Some(Value::Number(n)) => n.as_i64().unwrap_or(0),
        _ => 0,
    }
}

#[cfg(test)]
mod tests;
