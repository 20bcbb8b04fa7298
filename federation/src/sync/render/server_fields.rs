//! What the federation's server (and its controllers) set on an object,
//! kind by kind: stripped from the member copy so the member's own
//! allocators and controllers own it (as KubeFed's retain logic does).

use serde_json::{Map, Value};

/// `metadata` fields the member copy keeps; every other one (uid,
/// resourceVersion, generation, creationTimestamp, managedFields,
/// finalizers, deletion fields, ownerReferences, selfLink, generateName)
/// is the federation's server's.
pub(super) const KEPT_METADATA: [&str; 4] = ["name", "namespace", "labels", "annotations"];

/// Annotations never copied, by exact key.
const DROPPED_ANNOTATIONS: [&str; 8] = [
    "kubectl.kubernetes.io/last-applied-configuration",
    "deployment.kubernetes.io/revision",
    "deprecated.daemonset.template.generation",
    skein_admission::placement::V1_CLUSTER_SELECTOR,
    skein_admission::placement::V1_REPLICA_SET_PREFERENCES,
    skein_admission::placement::V1_DEPLOYMENT_PREFERENCES,
    skein_admission::placement::V1_JOB_PREFERENCES,
    "volume.beta.kubernetes.io/storage-provisioner",
];

/// Annotation prefixes never copied: placement, overrides, Skein's own
/// bookkeeping (the decision, the markers, which are set afresh), and a
/// PersistentVolumeClaim's binding annotations.
const DROPPED_ANNOTATION_PREFIXES: [&str; 5] = [
    "skein.io/",
    skein_admission::placement::OVERRIDE_PREFIX,
    "federation.skein.io/",
    "pv.kubernetes.io/",
    "volume.kubernetes.io/",
];

/// Template labels the Job API server adds when it generates the selector.
const JOB_GENERATED_LABELS: [&str; 4] = [
    "controller-uid",
    "batch.kubernetes.io/controller-uid",
    "job-name",
    "batch.kubernetes.io/job-name",
];

/// Whether an annotation is the federation's (placement) or its server's.
pub(super) fn dropped_annotation(key: &str) -> bool {
    DROPPED_ANNOTATIONS.contains(&key)
        || DROPPED_ANNOTATION_PREFIXES
            .iter()
            .any(|p| key.starts_with(p))
}

/// Removes the kind's server-set fields from `obj` (already stripped of
/// `status` and metadata's server fields).
pub(super) fn strip(group: &str, kind: &str, obj: &mut Map<String, Value>) {
    match (group, kind) {
        ("", "Service") => service(obj),
        ("", "ServiceAccount") => {
            obj.remove("secrets");
        }
        ("", "PersistentVolumeClaim") => {
            if let Some(spec) = obj.get_mut("spec").and_then(Value::as_object_mut) {
                spec.remove("volumeName");
            }
        }
        ("", "Namespace") => {
            if let Some(spec) = obj.get_mut("spec").and_then(Value::as_object_mut) {
                spec.remove("finalizers");
                if spec.is_empty() {
                    obj.remove("spec");
                }
            }
            // The API server labels every Namespace with its own name.
            if let Some(labels) = obj
                .get_mut("metadata")
                .and_then(|m| m.get_mut("labels"))
                .and_then(Value::as_object_mut)
            {
                labels.remove("kubernetes.io/metadata.name");
            }
        }
        ("batch", "Job") => job(obj),
        _ => {}
    }
}

/// Cluster IPs, node ports and IP families are the member's allocations;
/// a headless Service's `clusterIP: None` is the user's and stays.
fn service(obj: &mut Map<String, Value>) {
    let Some(spec) = obj.get_mut("spec").and_then(Value::as_object_mut) else {
        return;
    };
    let headless = spec.get("clusterIP").and_then(Value::as_str) == Some("None");
    if !headless {
        spec.remove("clusterIP");
        spec.remove("clusterIPs");
    }
    spec.remove("healthCheckNodePort");
    spec.remove("ipFamilies");
    if let Some(ports) = spec.get_mut("ports").and_then(Value::as_array_mut) {
        for p in ports.iter_mut().filter_map(Value::as_object_mut) {
            p.remove("nodePort");
        }
    }
}

/// A generated selector (`batch.kubernetes.io/controller-uid` or the
/// older `controller-uid`) names the federation's uid: the member
/// generates its own, with its own template labels.
fn job(obj: &mut Map<String, Value>) {
    let Some(spec) = obj.get_mut("spec").and_then(Value::as_object_mut) else {
        return;
    };
    if spec.get("manualSelector").and_then(Value::as_bool) == Some(true) {
        return;
    }
    let generated = spec
        .get("selector")
        .and_then(|s| s.get("matchLabels"))
        .and_then(Value::as_object)
        .is_some_and(|m| {
            m.contains_key("batch.kubernetes.io/controller-uid") || m.contains_key("controller-uid")
        });
    if !generated {
        return;
    }
    spec.remove("selector");
    spec.remove("manualSelector");
    let Some(meta) = spec
        .get_mut("template")
        .and_then(|t| t.get_mut("metadata"))
        .and_then(Value::as_object_mut)
    else {
        return;
    };
    if let Some(labels) = meta.get_mut("labels").and_then(Value::as_object_mut) {
        for k in JOB_GENERATED_LABELS {
            labels.remove(k);
        }
        if labels.is_empty() {
            meta.remove("labels");
        }
    }
}
