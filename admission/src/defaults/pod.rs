//! Pod, pod template and container defaults: upstream
//! `pkg/apis/core/v1/defaults.go` plus the generated
//! `pkg/apis/core/v1/zz_generated.defaults.go` that applies them inside
//! every template, and the v1 conversion that mirrors `serviceAccountName`
//! into the deprecated `serviceAccount`.

use serde_json::{Map, Value, json};

use crate::json::{
    default, default_str, each_obj_mut, empty_obj, ensure_obj, obj_mut, str_of, unset,
};

/// A `PodTemplateSpec` inside a workload: `metadata.creationTimestamp:
/// null` (as 1.33 serializes the zero time) and the pod spec defaults.
pub(crate) fn template(template: &mut Map<String, Value>) {
    if let Some(meta) = ensure_obj(template, "metadata") {
        meta.entry("creationTimestamp").or_insert(Value::Null);
    }
    if let Some(spec) = ensure_obj(template, "spec") {
        pod_spec(spec);
    }
}

/// `SetDefaults_PodSpec` and everything the generated defaulter applies to
/// a pod spec's members.
pub(crate) fn pod_spec(spec: &mut Map<String, Value>) {
    default_str(spec, "dnsPolicy", "ClusterFirst");
    default_str(spec, "restartPolicy", "Always");
    default(spec, "terminationGracePeriodSeconds", json!(30));
    default(spec, "securityContext", empty_obj());
    default_str(spec, "schedulerName", "default-scheduler");
    // v1 conversion: serviceAccountName falls back to the deprecated field,
    // and the deprecated field always mirrors it on the way out.
    let sa = match str_of(spec, "serviceAccountName") {
        "" => str_of(spec, "serviceAccount").to_owned(),
        s => s.to_owned(),
    };
    if sa.is_empty() {
        spec.remove("serviceAccount");
    } else {
        spec.insert("serviceAccountName".into(), json!(sa));
        spec.insert("serviceAccount".into(), json!(sa));
    }
    for key in ["containers", "initContainers", "ephemeralContainers"] {
        each_obj_mut(spec, key, container);
    }
    each_obj_mut(spec, "volumes", volume);
    super::quantities::list(spec, "overhead");
    super::quantities::requirements(spec, "resources");
}

/// `SetDefaults_Pod` extras that apply to Pods but not to templates:
/// `enableServiceLinks`, requests defaulted from limits, and what the
/// default-on admission plugins add on create (Priority: `priority: 0` and
/// `preemptionPolicy`; DefaultTolerationSeconds: the not-ready/unreachable
/// tolerations; ServiceAccount: `serviceAccountName: default`).
pub(crate) fn pod(pod: &mut Map<String, Value>, create: bool) {
    let Some(spec) = ensure_obj(pod, "spec") else {
        return;
    };
    if create
        && crate::json::empty_str(spec, "serviceAccountName")
        && crate::json::empty_str(spec, "serviceAccount")
    {
        spec.insert("serviceAccountName".into(), json!("default"));
    }
    pod_spec(spec);
    default(spec, "enableServiceLinks", json!(true));
    // SetDefaults_Pod: with the host's network, a container port is also
    // the host port (pod templates no longer get this in 1.33).
    if spec.get("hostNetwork").and_then(Value::as_bool) == Some(true) {
        for key in ["containers", "initContainers"] {
            each_obj_mut(spec, key, |c| {
                each_obj_mut(c, "ports", |p| {
                    let host = p.get("hostPort").and_then(Value::as_i64).unwrap_or(0);
                    if host == 0
                        && let Some(cp) = p.get("containerPort").cloned()
                    {
                        p.insert("hostPort".into(), cp);
                    }
                });
            });
        }
    }
    for key in ["containers", "initContainers"] {
        each_obj_mut(spec, key, requests_from_limits);
    }
    if create {
        let class = str_of(spec, "priorityClassName");
        let priority = match class {
            "" => Some(0),
            "system-cluster-critical" => Some(2_000_000_000),
            "system-node-critical" => Some(2_000_001_000),
            _ => None,
        };
        if let Some(p) = priority {
            default(spec, "priority", json!(p));
            default_str(spec, "preemptionPolicy", "PreemptLowerPriority");
        }
        default_tolerations(spec);
    }
}

/// Upstream `plugin/pkg/admission/defaulttolerationseconds`: 300s for
/// not-ready and unreachable, unless the pod already tolerates them.
fn default_tolerations(spec: &mut Map<String, Value>) {
    let tolerations = spec
        .entry("tolerations")
        .or_insert_with(|| Value::Array(Vec::new()));
    if tolerations.is_null() {
        *tolerations = Value::Array(Vec::new());
    }
    let Some(list) = tolerations.as_array_mut() else {
        return;
    };
    for key in [
        "node.kubernetes.io/not-ready",
        "node.kubernetes.io/unreachable",
    ] {
        let tolerated = list.iter().any(|t| {
            let k = t.get("key").and_then(Value::as_str).unwrap_or_default();
            let op = t.get("operator").and_then(Value::as_str).unwrap_or("Equal");
            let effect = t.get("effect").and_then(Value::as_str).unwrap_or_default();
            (k == key || (k.is_empty() && op == "Exists"))
                && (effect.is_empty() || effect == "NoExecute")
        });
        if !tolerated {
            list.push(json!({
                "effect": "NoExecute",
                "key": key,
                "operator": "Exists",
                "tolerationSeconds": 300,
            }));
        }
    }
}

fn requests_from_limits(c: &mut Map<String, Value>) {
    let Some(res) = obj_mut(c, "resources") else {
        return;
    };
    let Some(limits) = res.get("limits").and_then(Value::as_object).cloned() else {
        return;
    };
    if limits.is_empty() {
        return;
    }
    if let Some(requests) = ensure_obj(res, "requests") {
        for (k, v) in limits {
            requests.entry(k).or_insert(v);
        }
    }
}

/// `SetDefaults_Container` and its members.
pub(crate) fn container(c: &mut Map<String, Value>) {
    default_str(c, "terminationMessagePath", "/dev/termination-log");
    default_str(c, "terminationMessagePolicy", "File");
    if crate::json::empty_str(c, "imagePullPolicy") {
        let policy = if image_tag(str_of(c, "image")).as_deref() == Some("latest") {
            "Always"
        } else {
            "IfNotPresent"
        };
        c.insert("imagePullPolicy".into(), json!(policy));
    }
    default(c, "resources", empty_obj());
    super::quantities::requirements(c, "resources");
    each_obj_mut(c, "ports", |p| default_str(p, "protocol", "TCP"));
    for probe in ["livenessProbe", "readinessProbe", "startupProbe"] {
        if let Some(p) = obj_mut(c, probe) {
            // SetDefaults_Probe tests for zero values, so 0 is defaulted too.
            default_nonzero(p, "timeoutSeconds", 1);
            default_nonzero(p, "periodSeconds", 10);
            default_nonzero(p, "successThreshold", 1);
            default_nonzero(p, "failureThreshold", 3);
            handler(p);
        }
    }
    if let Some(lc) = obj_mut(c, "lifecycle") {
        for hook in ["postStart", "preStop"] {
            if let Some(h) = obj_mut(lc, hook) {
                handler(h);
            }
        }
    }
    each_obj_mut(c, "env", |e| {
        if let Some(from) = obj_mut(e, "valueFrom")
            && let Some(f) = obj_mut(from, "fieldRef")
        {
            default_str(f, "apiVersion", "v1");
        }
    });
}

/// Sets `key` to `value` when it is unset or `0` (Go's zero value).
fn default_nonzero(m: &mut Map<String, Value>, key: &str, value: i64) {
    if m.get(key).and_then(Value::as_i64).is_none_or(|n| n == 0) && !is_non_numeric(m.get(key)) {
        m.insert(key.to_owned(), json!(value));
    }
}

/// `true` for a present value that is not a number (left for validation).
fn is_non_numeric(v: Option<&Value>) -> bool {
    v.is_some_and(|v| !v.is_null() && !v.is_number())
}

/// `SetDefaults_HTTPGetAction`: path `/`, scheme `HTTP`.
fn handler(h: &mut Map<String, Value>) {
    if let Some(get) = obj_mut(h, "httpGet") {
        default_str(get, "path", "/");
        default_str(get, "scheme", "HTTP");
    }
}

/// The image's tag as upstream's `parsers.ParseImageName` reports it:
/// `latest` when there is neither tag nor digest, `None` when there is only
/// a digest or the reference is unusable.
fn image_tag(image: &str) -> Option<String> {
    if image.is_empty() {
        return None;
    }
    let (name, digest) = match image.split_once('@') {
        Some((n, d)) => (n, Some(d)),
        None => (image, None),
    };
    let last = name.rsplit('/').next().unwrap_or(name);
    match last.split_once(':') {
        Some((_, tag)) => Some(tag.to_owned()),
        None if digest.is_some() => None,
        None => Some("latest".to_owned()),
    }
}

/// `SetDefaults_Volume` (emptyDir when no source is given) and the volume
/// source defaults (`defaultMode: 420`, hostPath `type: ""`, projected
/// token expiry, PVC template volume mode).
fn volume(v: &mut Map<String, Value>) {
    let has_source = v.iter().any(|(k, val)| k != "name" && !val.is_null());
    if !has_source {
        v.insert("emptyDir".into(), empty_obj());
    }
    for source in ["secret", "configMap", "downwardAPI", "projected"] {
        if let Some(s) = obj_mut(v, source) {
            default(s, "defaultMode", json!(420));
        }
    }
    if let Some(d) = obj_mut(v, "downwardAPI") {
        each_obj_mut(d, "items", field_ref_version);
    }
    if let Some(p) = obj_mut(v, "projected") {
        each_obj_mut(p, "sources", |s| {
            if let Some(t) = obj_mut(s, "serviceAccountToken") {
                default(t, "expirationSeconds", json!(3600));
            }
            if let Some(d) = obj_mut(s, "downwardAPI") {
                each_obj_mut(d, "items", field_ref_version);
            }
        });
    }
    if let Some(h) = obj_mut(v, "hostPath")
        && unset(h, "type")
    {
        h.insert("type".into(), json!(""));
    }
    if let Some(e) = obj_mut(v, "ephemeral")
        && let Some(t) = obj_mut(e, "volumeClaimTemplate")
        && let Some(spec) = obj_mut(t, "spec")
    {
        default_str(spec, "volumeMode", "Filesystem");
        super::quantities::requirements(spec, "resources");
    }
    if let Some(e) = obj_mut(v, "emptyDir")
        && let Some(limit) = e.get_mut("sizeLimit")
    {
        super::quantities::one(limit);
    }
}

fn field_ref_version(item: &mut Map<String, Value>) {
    if let Some(f) = obj_mut(item, "fieldRef") {
        default_str(f, "apiVersion", "v1");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn image_tags() {
        let cases = [
            ("nginx", Some("latest")),
            ("nginx:latest", Some("latest")),
            ("nginx:1.27", Some("1.27")),
            ("localhost:5000/app", Some("latest")),
            ("localhost:5000/app:v1", Some("v1")),
            ("nginx@sha256:abc", None),
            ("nginx:1@sha256:abc", Some("1")),
            ("", None),
        ];
        for (image, want) in cases {
            assert_eq!(image_tag(image).as_deref(), want, "{image}");
        }
    }
}
