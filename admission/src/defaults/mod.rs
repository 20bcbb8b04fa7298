//! Defaulting: the values kube-apiserver 1.33 fills in when it decodes an
//! object, so a round trip (`kubectl apply`, then `get -o yaml`, `diff`)
//! looks like a real cluster's. One mutating plugin, [`Defaults`],
//! dispatching on the object's kind.

mod cluster;
mod misc;
mod pod;
mod quantities;
mod service;
mod workloads;

use serde_json::{Value, json};

use crate::{Attributes, Denial, Mutate, Operation};

/// The defaulting plugin. Idempotent: defaulting a defaulted object
/// changes nothing. Runs on create and update of the main resource only
/// (a subresource body is not the stored kind, or only its status is
/// kept).
#[derive(Debug, Default, Clone, Copy)]
pub struct Defaults;

impl Mutate for Defaults {
    fn name(&self) -> &str {
        "Defaults"
    }

    fn handles(&self, op: Operation) -> bool {
        matches!(op, Operation::Create | Operation::Update)
    }

    fn admit(&self, attrs: &mut Attributes) -> Result<(), Denial> {
        if attrs.subresource.is_some() {
            return Ok(());
        }
        let create = attrs.operation == Operation::Create;
        let (group, version, kind) = (
            attrs.gvk.group.clone(),
            attrs.gvk.version.clone(),
            attrs.gvk.kind.clone(),
        );
        if let Some(obj) = attrs.object.as_mut() {
            apply(&group, &version, &kind, obj, create);
        }
        Ok(())
    }
}

/// Defaults `obj` of kind `group/version, kind` in place; `create` adds
/// what upstream's default-on admission plugins add to new Pods.
pub fn apply(group: &str, version: &str, kind: &str, obj: &mut Value, create: bool) {
    let Some(map) = obj.as_object_mut() else {
        return;
    };
    match (group, kind) {
        ("apps", "Deployment") => workloads::deployment(map),
        ("apps", "ReplicaSet") => workloads::replica_set(map),
        ("apps", "StatefulSet") => workloads::stateful_set(map),
        ("apps", "DaemonSet") => workloads::daemon_set(map),
        ("batch", "Job") => workloads::job(map),
        ("batch", "CronJob") => workloads::cron_job(map),
        ("", "ReplicationController") => workloads::replication_controller(map),
        ("", "Pod") => pod::pod(map, create),
        ("", "PodTemplate") => {
            if let Some(t) = crate::json::ensure_obj(map, "template") {
                pod::template(t);
            }
        }
        ("", "Service") => service::service(map),
        ("", "Secret") => misc::secret(map),
        ("", "PersistentVolumeClaim") => misc::persistent_volume_claim(map),
        ("", "PersistentVolume") => misc::persistent_volume(map),
        ("", "ResourceQuota") => quantities::resource_quota(map),
        ("", "LimitRange") => quantities::limit_range(map),
        ("autoscaling", "HorizontalPodAutoscaler") if version == "v1" => misc::hpa_v1(map),
        ("autoscaling", "HorizontalPodAutoscaler") => misc::hpa_v2(map),
        ("networking.k8s.io", "NetworkPolicy") => misc::network_policy(map),
        ("networking.k8s.io", "IngressClass") => misc::ingress_class(map),
        ("scheduling.k8s.io", "PriorityClass") => cluster::priority_class(map),
        ("storage.k8s.io", "StorageClass") => cluster::storage_class(map),
        ("storage.k8s.io", "CSIDriver") => cluster::csi_driver(map),
        ("flowcontrol.apiserver.k8s.io", "FlowSchema") => cluster::flow_schema(map),
        ("flowcontrol.apiserver.k8s.io", "PriorityLevelConfiguration") => {
            cluster::priority_level(map)
        }
        ("rbac.authorization.k8s.io", "RoleBinding" | "ClusterRoleBinding") => {
            misc::role_binding(map);
        }
        _ => {}
    }
}

/// What the Job strategy adds on create once the object has its UID
/// (upstream `pkg/registry/batch/job/strategy.go`, `generateSelector`):
/// unless `spec.manualSelector` is true, the labels
/// `batch.kubernetes.io/controller-uid` and `batch.kubernetes.io/job-name`
/// (plus the legacy `controller-uid` and `job-name`) on the pod template,
/// and a selector matching the UID. Call it from the registry's create
/// strategy after `metadata.uid` is set; it is a no-op without a UID.
pub fn job_selector(job: &mut Value) {
    let uid = crate::json::str_at(job, "/metadata/uid").to_owned();
    let name = crate::json::str_at(job, "/metadata/name").to_owned();
    if uid.is_empty() {
        return;
    }
    let Some(spec) = job.get_mut("spec").and_then(Value::as_object_mut) else {
        return;
    };
    if spec.get("manualSelector").and_then(Value::as_bool) == Some(true) {
        return;
    }
    let mut template_labels = None;
    if let Some(t) = crate::json::ensure_obj(spec, "template")
        && let Some(meta) = crate::json::ensure_obj(t, "metadata")
        && let Some(labels) = crate::json::ensure_obj(meta, "labels")
    {
        for (k, v) in [
            ("batch.kubernetes.io/controller-uid", &uid),
            ("batch.kubernetes.io/job-name", &name),
            ("controller-uid", &uid),
            ("job-name", &name),
        ] {
            labels.entry(k).or_insert_with(|| json!(v));
        }
        template_labels = Some(labels.clone());
    }
    if let Some(sel) = crate::json::ensure_obj(spec, "selector")
        && let Some(ml) = crate::json::ensure_obj(sel, "matchLabels")
    {
        ml.entry("batch.kubernetes.io/controller-uid")
            .or_insert_with(|| json!(uid));
    }
    // Upstream defaults objects again when it reads them from storage, so a
    // Job without labels shows its template's (now generated) labels.
    if let Some(labels) = template_labels
        && let Some(meta) = job.get_mut("metadata").and_then(Value::as_object_mut)
    {
        let empty = meta
            .get("labels")
            .and_then(Value::as_object)
            .is_none_or(serde_json::Map::is_empty);
        if empty {
            meta.insert("labels".into(), Value::Object(labels));
        }
    }
}

#[cfg(test)]
mod tests;
