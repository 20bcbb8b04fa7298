//! `pods/resize` (in-place pod resize, beta and on by default in v1.33;
//! upstream `podResizeStrategy`): GET the Pod; PUT or PATCH a Pod and only
//! `resources` and `resizePolicy` of its containers (and of restartable
//! init containers) are taken, matched by name.
//!
//! Validation (upstream `ValidatePodResize`): pods with pod-level resources,
//! static pods and Windows pods cannot be resized; the QoS class may not
//! change; requests and limits may not be removed; only `cpu` and `memory`
//! may change; a pod whose running containers report no resources runs on a
//! node without resize support; the new resources pass the Pod's container
//! validation. Errors are 422 `Pod "p" is invalid`.

use axum::response::Response;
use serde_json::{Map, Value};
use skein_admission::Cause as AdmissionCause;

use super::super::AppState;
use super::super::api::Call;
use super::super::status::ApiError;
use super::ephemeral::{invalid_pod, serve};
use crate::registry::ResourceInfo;

/// A resource quantity as a number (upstream `resource.Quantity` value),
/// `None` when it does not parse. Enough to compare and sum quantities.
pub fn quantity(q: &str) -> Option<f64> {
    let q = q.trim();
    const SUFFIXES: &[(&str, f64)] = &[
        ("Ki", 1024.0),
        ("Mi", 1_048_576.0),
        ("Gi", 1_073_741_824.0),
        ("Ti", 1_099_511_627_776.0),
        ("Pi", 1_125_899_906_842_624.0),
        ("Ei", 1_152_921_504_606_846_976.0),
        ("n", 1e-9),
        ("u", 1e-6),
        ("m", 1e-3),
        ("k", 1e3),
        ("M", 1e6),
        ("G", 1e9),
        ("T", 1e12),
        ("P", 1e15),
        ("E", 1e18),
    ];
    for (suffix, factor) in SUFFIXES {
        if let Some(number) = q.strip_suffix(suffix) {
            return number.parse::<f64>().ok().map(|n| n * factor);
        }
    }
    q.parse::<f64>().ok()
}

fn list<'a>(spec: &'a Value, key: &str) -> Vec<&'a Value> {
    spec.get(key)
        .and_then(Value::as_array)
        .map(|a| a.iter().collect())
        .unwrap_or_default()
}

/// Whether an init container is a restartable sidecar.
fn sidecar(c: &Value) -> bool {
    c.get("restartPolicy").and_then(Value::as_str) == Some("Always")
}

fn resources<'a>(c: &'a Value, which: &str) -> Option<&'a Map<String, Value>> {
    c.pointer(&format!("/resources/{which}"))
        .and_then(Value::as_object)
}

/// Upstream `qos.ComputePodQOS` over cpu and memory.
pub fn qos_class(pod: &Value) -> &'static str {
    let empty = Value::Null;
    let spec = pod.get("spec").unwrap_or(&empty);
    let mut containers = list(spec, "initContainers");
    containers.extend(list(spec, "containers"));
    let mut requests: Map<String, Value> = Map::new();
    let mut limits: Map<String, Value> = Map::new();
    let mut guaranteed = true;
    let add = |into: &mut Map<String, Value>, name: &str, v: f64| {
        let sum = into.get(name).and_then(Value::as_f64).unwrap_or(0.0) + v;
        into.insert(name.to_string(), Value::from(sum));
    };
    for c in containers {
        for (name, q) in resources(c, "requests").into_iter().flatten() {
            let v = q.as_str().and_then(quantity).unwrap_or(0.0);
            if matches!(name.as_str(), "cpu" | "memory") && v > 0.0 {
                add(&mut requests, name, v);
            }
        }
        let mut found = Vec::new();
        for (name, q) in resources(c, "limits").into_iter().flatten() {
            let v = q.as_str().and_then(quantity).unwrap_or(0.0);
            if matches!(name.as_str(), "cpu" | "memory") && v > 0.0 {
                found.push(name.as_str());
                add(&mut limits, name, v);
            }
        }
        if !(found.contains(&"cpu") && found.contains(&"memory")) {
            guaranteed = false;
        }
    }
    if requests.is_empty() && limits.is_empty() {
        return "BestEffort";
    }
    if guaranteed {
        for (name, req) in &requests {
            if limits.get(name).and_then(Value::as_f64) != req.as_f64() {
                guaranteed = false;
                break;
            }
        }
    }
    if guaranteed && requests.len() == limits.len() {
        "Guaranteed"
    } else {
        "Burstable"
    }
}

/// Upstream `isPodResizeRequestSupported`: the first running container
/// status decides by whether it reports resources.
fn resize_supported(pod: &Value) -> bool {
    let statuses = pod
        .pointer("/status/containerStatuses")
        .and_then(Value::as_array);
    for s in statuses.into_iter().flatten() {
        if s.pointer("/state/running").is_some_and(|r| !r.is_null()) {
            return s.get("resources").is_some_and(|r| !r.is_null());
        }
    }
    true
}

/// Names of resources present in `old` and missing in `new`.
fn removed(old: Option<&Map<String, Value>>, new: Option<&Map<String, Value>>) -> bool {
    old.into_iter()
        .flatten()
        .any(|(k, _)| new.is_none_or(|n| !n.contains_key(k)))
}

/// Whether anything but cpu and memory differs between two resource lists.
fn other_changed(old: Option<&Map<String, Value>>, new: Option<&Map<String, Value>>) -> bool {
    let empty = Map::new();
    let (old, new) = (old.unwrap_or(&empty), new.unwrap_or(&empty));
    let keys = old.keys().chain(new.keys());
    keys.filter(|k| !matches!(k.as_str(), "cpu" | "memory"))
        .any(|k| old.get(k) != new.get(k))
}

/// The stored Pod with the sent Pod's container resources and resize
/// policies, validated as upstream.
fn take_resize(name: &str, stored: &Value, sent: &Value) -> Result<Value, ApiError> {
    let mut next = stored.clone();
    let empty = Value::Null;
    let sent_spec = sent.get("spec").unwrap_or(&empty);
    for key in ["containers", "initContainers"] {
        let wanted = list(sent_spec, key);
        let Some(own) = next
            .get_mut("spec")
            .and_then(|s| s.get_mut(key))
            .and_then(Value::as_array_mut)
        else {
            continue;
        };
        for c in own.iter_mut() {
            if key == "initContainers" && !sidecar(c) {
                continue;
            }
            let cname = c
                .get("name")
                .and_then(Value::as_str)
                .unwrap_or("")
                .to_string();
            let Some(w) = wanted
                .iter()
                .find(|w| w.get("name").and_then(Value::as_str) == Some(cname.as_str()))
            else {
                continue;
            };
            let Some(map) = c.as_object_mut() else {
                continue;
            };
            for field in ["resources", "resizePolicy"] {
                match w.get(field) {
                    Some(v) if !v.is_null() => {
                        map.insert(field.into(), v.clone());
                    }
                    _ => {
                        map.remove(field);
                    }
                }
            }
        }
    }
    let only = |detail: &str| {
        Err(invalid_pod(
            name,
            vec![AdmissionCause::forbidden("", detail)],
        ))
    };
    let pod_level = |p: &Value| {
        ["requests", "limits"].iter().any(|w| {
            p.pointer(&format!("/spec/resources/{w}"))
                .and_then(Value::as_object)
                .is_some_and(|m| !m.is_empty())
        })
    };
    if pod_level(stored) || pod_level(&next) {
        return only("pods with pod-level resources cannot be resized");
    }
    if stored
        .pointer("/metadata/annotations/kubernetes.io~1config.mirror")
        .is_some()
    {
        return only("static pods cannot be resized");
    }
    if stored.pointer("/spec/os/name").and_then(Value::as_str) == Some("windows") {
        return only("windows pods cannot be resized");
    }
    let mut causes: Vec<AdmissionCause> =
        skein_admission::validation::validate("", "Pod", &next, None)
            .into_iter()
            .filter(|c| c.field.contains(".resources") || c.field.contains(".resizePolicy"))
            .collect();
    let current_qos = stored
        .pointer("/status/qosClass")
        .and_then(Value::as_str)
        .map_or_else(
            || qos_class(stored),
            |q| if q.is_empty() { qos_class(stored) } else { q },
        );
    if current_qos != qos_class(&next) {
        let shown = stored
            .pointer("/status/qosClass")
            .cloned()
            .unwrap_or(Value::String(String::new()));
        causes.push(AdmissionCause::invalid(
            "spec",
            &shown,
            "Pod QOS Class may not change as a result of resizing",
        ));
    }
    if !resize_supported(stored) {
        causes.push(AdmissionCause::forbidden(
            "spec",
            "Pod running on node without support for resize",
        ));
    }
    let mut other = false;
    for key in ["initContainers", "containers"] {
        let old_list = stored
            .pointer(&format!("/spec/{key}"))
            .and_then(Value::as_array);
        let new_list = next
            .pointer(&format!("/spec/{key}"))
            .and_then(Value::as_array);
        for (i, (o, n)) in old_list
            .into_iter()
            .flatten()
            .zip(new_list.into_iter().flatten())
            .enumerate()
        {
            if key == "initContainers" && !sidecar(o) {
                continue;
            }
            for which in ["requests", "limits"] {
                if removed(resources(o, which), resources(n, which)) {
                    causes.push(AdmissionCause::forbidden(
                        format!("spec.{key}[{i}].resources.{which}"),
                        format!("resource {which} cannot be removed"),
                    ));
                }
                other |= other_changed(resources(o, which), resources(n, which));
            }
        }
    }
    if other {
        causes.push(AdmissionCause::forbidden(
            "spec",
            "only cpu and memory resources are mutable",
        ));
    }
    if causes.is_empty() {
        Ok(next)
    } else {
        Err(invalid_pod(name, causes))
    }
}

/// `pods/{name}/resize`.
pub(in crate::http) async fn handle(
    state: &AppState,
    call: &Call,
    res: &ResourceInfo,
    ns: &str,
    name: &str,
) -> Result<Response, ApiError> {
    serve(state, call, res, ns, name, "resize", take_resize).await
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn pod(resources: Value) -> Value {
        json!({"metadata": {"name": "p1"}, "spec": {"containers": [
            {"name": "app", "image": "nginx", "resources": resources}]}})
    }

    #[test]
    fn quantities_and_qos() {
        assert_eq!(quantity("500m"), Some(0.5));
        assert_eq!(quantity("1Gi"), Some(1_073_741_824.0));
        assert_eq!(quantity("2"), Some(2.0));
        assert_eq!(qos_class(&pod(json!({}))), "BestEffort");
        assert_eq!(
            qos_class(&pod(json!({"limits": {"cpu": "1", "memory": "1Gi"},
                "requests": {"cpu": "1000m", "memory": "1Gi"}}))),
            "Guaranteed"
        );
        assert_eq!(
            qos_class(&pod(json!({"requests": {"cpu": "100m"}}))),
            "Burstable"
        );
    }

    #[test]
    fn resize_takes_only_resources() {
        let stored = pod(json!({"requests": {"cpu": "100m"}}));
        let mut sent = pod(json!({"requests": {"cpu": "200m"}}));
        sent["spec"]["containers"][0]["image"] = json!("other");
        let next = take_resize("p1", &stored, &sent).unwrap();
        assert_eq!(next["spec"]["containers"][0]["image"], "nginx");
        assert_eq!(
            next["spec"]["containers"][0]["resources"]["requests"]["cpu"],
            "200m"
        );
    }

    #[test]
    fn resize_refuses_qos_changes_and_removals() {
        let stored = pod(json!({"requests": {"cpu": "100m"}}));
        let e = take_resize("p1", &stored, &pod(json!({}))).unwrap_err();
        let m = e.message();
        assert!(
            m.contains("Pod QOS Class may not change as a result of resizing"),
            "{m}"
        );
        assert!(
            m.contains("spec.containers[0].resources.requests: Forbidden: resource requests cannot be removed"),
            "{m}"
        );
        let e = take_resize(
            "p1",
            &stored,
            &pod(json!({"requests": {"cpu": "100m", "ephemeral-storage": "1Gi"}})),
        )
        .unwrap_err();
        assert!(
            e.message()
                .contains("only cpu and memory resources are mutable")
        );
    }
}
