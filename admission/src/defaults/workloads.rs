//! Workload defaults: upstream `pkg/apis/apps/v1/defaults.go`,
//! `pkg/apis/batch/v1/defaults.go`, and ReplicationController from
//! `pkg/apis/core/v1/defaults.go`.

use serde_json::{Map, Value, json};

use super::pod;
use crate::json::{default, default_str, each_obj_mut, ensure_obj, obj_mut, str_of};

fn spec(obj: &mut Map<String, Value>) -> Option<&mut Map<String, Value>> {
    ensure_obj(obj, "spec")
}

fn template(spec: &mut Map<String, Value>) {
    if let Some(t) = ensure_obj(spec, "template") {
        pod::template(t);
    }
}

/// `SetDefaults_Deployment`.
pub(crate) fn deployment(obj: &mut Map<String, Value>) {
    let Some(spec) = spec(obj) else { return };
    default(spec, "replicas", json!(1));
    if let Some(strategy) = ensure_obj(spec, "strategy") {
        default_str(strategy, "type", "RollingUpdate");
        if str_of(strategy, "type") == "RollingUpdate"
            && let Some(ru) = ensure_obj(strategy, "rollingUpdate")
        {
            default(ru, "maxUnavailable", json!("25%"));
            default(ru, "maxSurge", json!("25%"));
        }
    }
    default(spec, "revisionHistoryLimit", json!(10));
    default(spec, "progressDeadlineSeconds", json!(600));
    template(spec);
}

/// `SetDefaults_ReplicaSet`.
pub(crate) fn replica_set(obj: &mut Map<String, Value>) {
    let Some(spec) = spec(obj) else { return };
    default(spec, "replicas", json!(1));
    template(spec);
}

/// `SetDefaults_StatefulSet` (StatefulSetAutoDeletePVC on, as in 1.33;
/// MaxUnavailableStatefulSet off).
pub(crate) fn stateful_set(obj: &mut Map<String, Value>) {
    let Some(spec) = spec(obj) else { return };
    default_str(spec, "podManagementPolicy", "OrderedReady");
    if let Some(us) = ensure_obj(spec, "updateStrategy") {
        if crate::json::empty_str(us, "type") {
            us.insert("type".into(), json!("RollingUpdate"));
            ensure_obj(us, "rollingUpdate");
        }
        if str_of(us, "type") == "RollingUpdate"
            && let Some(ru) = obj_mut(us, "rollingUpdate")
        {
            default(ru, "partition", json!(0));
        }
    }
    if let Some(policy) = ensure_obj(spec, "persistentVolumeClaimRetentionPolicy") {
        default_str(policy, "whenDeleted", "Retain");
        default_str(policy, "whenScaled", "Retain");
    }
    default(spec, "replicas", json!(1));
    default(spec, "revisionHistoryLimit", json!(10));
    template(spec);
    each_obj_mut(spec, "volumeClaimTemplates", super::misc::pvc);
}

/// `SetDefaults_DaemonSet`.
pub(crate) fn daemon_set(obj: &mut Map<String, Value>) {
    let Some(spec) = spec(obj) else { return };
    if let Some(us) = ensure_obj(spec, "updateStrategy") {
        default_str(us, "type", "RollingUpdate");
        if str_of(us, "type") == "RollingUpdate"
            && let Some(ru) = ensure_obj(us, "rollingUpdate")
        {
            default(ru, "maxUnavailable", json!(1));
            default(ru, "maxSurge", json!(0));
        }
    }
    default(spec, "revisionHistoryLimit", json!(10));
    template(spec);
}

/// `SetDefaults_ReplicationController`: selector and labels from the
/// template, one replica.
pub(crate) fn replication_controller(obj: &mut Map<String, Value>) {
    let labels = obj
        .get("spec")
        .and_then(|s| s.pointer("/template/metadata/labels"))
        .and_then(Value::as_object)
        .filter(|l| !l.is_empty())
        .cloned();
    if let Some(labels) = &labels
        && let Some(meta) = ensure_obj(obj, "metadata")
    {
        let empty = meta
            .get("labels")
            .and_then(Value::as_object)
            .is_none_or(Map::is_empty);
        if empty {
            meta.insert("labels".into(), Value::Object(labels.clone()));
        }
    }
    let Some(spec) = spec(obj) else { return };
    if let Some(labels) = labels {
        let empty = spec
            .get("selector")
            .and_then(Value::as_object)
            .is_none_or(Map::is_empty);
        if empty {
            spec.insert("selector".into(), Value::Object(labels));
        }
    }
    default(spec, "replicas", json!(1));
    if let Some(t) = obj_mut(spec, "template") {
        pod::template(t);
    }
}

/// `SetDefaults_Job`. The generated selector and the
/// `batch.kubernetes.io/controller-uid` labels need the object's UID and
/// are the strategy's job ([`crate::defaults::job_selector`]).
pub(crate) fn job(obj: &mut Map<String, Value>) {
    let template_labels = obj
        .get("spec")
        .and_then(|s| s.pointer("/template/metadata/labels"))
        .and_then(Value::as_object)
        .cloned();
    if let Some(labels) = template_labels
        && let Some(meta) = ensure_obj(obj, "metadata")
    {
        let empty = meta
            .get("labels")
            .and_then(Value::as_object)
            .is_none_or(Map::is_empty);
        if empty {
            meta.insert("labels".into(), Value::Object(labels));
        }
    }
    let Some(spec) = spec(obj) else { return };
    job_spec(spec);
}

fn job_spec(spec: &mut Map<String, Value>) {
    if crate::json::unset(spec, "completions") && crate::json::unset(spec, "parallelism") {
        spec.insert("completions".into(), json!(1));
        spec.insert("parallelism".into(), json!(1));
    }
    default(spec, "parallelism", json!(1));
    if crate::json::unset(spec, "backoffLimit") {
        let limit = if crate::json::unset(spec, "backoffLimitPerIndex") {
            6
        } else {
            i64::from(i32::MAX)
        };
        spec.insert("backoffLimit".into(), json!(limit));
    }
    default_str(spec, "completionMode", "NonIndexed");
    default(spec, "suspend", json!(false));
    let has_failure_policy = !crate::json::unset(spec, "podFailurePolicy");
    if let Some(pfp) = obj_mut(spec, "podFailurePolicy") {
        each_obj_mut(pfp, "rules", |rule| {
            each_obj_mut(rule, "onPodConditions", |c| {
                default_str(c, "status", "True")
            });
        });
    }
    default_str(
        spec,
        "podReplacementPolicy",
        if has_failure_policy {
            "Failed"
        } else {
            "TerminatingOrFailed"
        },
    );
    template(spec);
}

/// `SetDefaults_CronJob`; the job template gets only the pod template
/// defaults (not `SetDefaults_Job`), as the generated defaulter does.
pub(crate) fn cron_job(obj: &mut Map<String, Value>) {
    let Some(spec) = spec(obj) else { return };
    default_str(spec, "concurrencyPolicy", "Allow");
    default(spec, "suspend", json!(false));
    default(spec, "successfulJobsHistoryLimit", json!(3));
    default(spec, "failedJobsHistoryLimit", json!(1));
    if let Some(jt) = ensure_obj(spec, "jobTemplate") {
        if let Some(meta) = ensure_obj(jt, "metadata") {
            meta.entry("creationTimestamp").or_insert(Value::Null);
        }
        if let Some(js) = ensure_obj(jt, "spec") {
            template(js);
        }
    }
}
