//! autoscaling/v2 metric specs and scaling behavior (upstream
//! `pkg/apis/autoscaling/validation/validation.go`: `validateMetrics`,
//! `validateMetricSpec`, the per-source checks, `validateMetricTarget`,
//! `validateBehavior`).

use std::collections::BTreeSet;

use serde_json::{Map, Value, json};

use super::quantity::Quantity;
use crate::Cause;
use crate::json::{arr, str_of};
use crate::names;
use crate::path::Path;

/// Metric source types, sorted as upstream's `sets.List`.
const SOURCE_TYPES: [&str; 5] = [
    "ContainerResource",
    "External",
    "Object",
    "Pods",
    "Resource",
];

/// `validateMetrics`; `min_replicas` is `spec.minReplicas`.
pub(super) fn metrics(
    list: &[Value],
    min_replicas: Option<i64>,
    path: &Path,
    out: &mut Vec<Cause>,
) {
    let mut object_or_external = false;
    for (i, m) in list.iter().enumerate() {
        let Some(m) = m.as_object() else { continue };
        metric_spec(m, &path.index(i), out);
        if ["Object", "External"].contains(&str_of(m, "type")) {
            object_or_external = true;
        }
    }
    if min_replicas == Some(0) && !object_or_external {
        out.push(Cause::forbidden(
            path,
            "must specify at least one Object or External metric to support scaling to zero replicas",
        ));
    }
}

/// `validateMetricSpec`.
fn metric_spec(m: &Map<String, Value>, path: &Path, out: &mut Vec<Cause>) {
    let kind = str_of(m, "type");
    if kind.is_empty() {
        out.push(Cause::required(
            path.child("type"),
            "must specify a metric source type",
        ));
    }
    if !SOURCE_TYPES.contains(&kind) {
        out.push(Cause::not_supported(
            path.child("type"),
            &json!(kind),
            &SOURCE_TYPES,
        ));
    }
    let mut present = BTreeSet::new();
    for key in [
        "object",
        "external",
        "pods",
        "resource",
        "containerResource",
    ] {
        let Some(src) = m.get(key).and_then(Value::as_object) else {
            continue;
        };
        present.insert(key);
        if present.len() == 1 {
            source(key, src, &path.child(key), out);
        }
    }
    let expected = match kind {
        "Object" => "object",
        "Pods" => "pods",
        "Resource" => "resource",
        "External" => "external",
        "ContainerResource" => "containerResource",
        other => {
            out.push(Cause::not_supported(
                path.child("type"),
                &json!(other),
                &SOURCE_TYPES,
            ));
            ""
        }
    };
    if !expected.is_empty() && !present.contains(expected) {
        out.push(Cause::required(
            path.child(expected),
            "must populate information for the given metric source",
        ));
    }
    if present.len() != 1 {
        present.remove(expected);
        for key in present {
            out.push(Cause::forbidden(
                path.child(key),
                "must populate the given metric source only",
            ));
        }
    }
}

/// The per-source checks.
fn source(kind: &str, src: &Map<String, Value>, path: &Path, out: &mut Vec<Cause>) {
    let empty = Map::new();
    let target = src
        .get("target")
        .and_then(Value::as_object)
        .unwrap_or(&empty);
    let tp = path.child("target");
    let has = |k: &str| target.get(k).is_some_and(|v| !v.is_null());
    match kind {
        "object" => {
            let described = src
                .get("describedObject")
                .and_then(Value::as_object)
                .unwrap_or(&empty);
            super::other::object_reference(described, &path.child("describedObject"), out);
            identifier(src, &path.child("metric"), out);
            metric_target(target, &tp, out);
            if !has("value") && !has("averageValue") {
                out.push(Cause::required(
                    tp.child("averageValue"),
                    "must set either a target value or averageValue",
                ));
            }
        }
        "external" => {
            identifier(src, &path.child("metric"), out);
            metric_target(target, &tp, out);
            if !has("value") && !has("averageValue") {
                out.push(Cause::required(
                    tp.child("averageValue"),
                    "must set either a target value for metric or a per-pod target",
                ));
            }
            if has("value") && has("averageValue") {
                out.push(Cause::forbidden(
                    tp.child("value"),
                    "may not set both a target value for metric and a per-pod target",
                ));
            }
        }
        "pods" => {
            identifier(src, &path.child("metric"), out);
            metric_target(target, &tp, out);
            if !has("averageValue") {
                out.push(Cause::required(
                    tp.child("averageValue"),
                    "must specify a positive target averageValue",
                ));
            }
        }
        _ => {
            let name = str_of(src, "name");
            if name.is_empty() {
                out.push(Cause::required(
                    path.child("name"),
                    "must specify a resource name",
                ));
            }
            if kind == "containerResource" {
                let container = str_of(src, "container");
                if container.is_empty() {
                    out.push(Cause::required(
                        path.child("container"),
                        "must specify a container",
                    ));
                } else {
                    for msg in names::dns1123_label(container) {
                        out.push(Cause::invalid(
                            path.child("container"),
                            &json!(container),
                            msg,
                        ));
                    }
                }
            }
            metric_target(target, &tp, out);
            if !has("averageUtilization") && !has("averageValue") {
                out.push(Cause::required(
                    tp.child("averageUtilization"),
                    "must set either a target raw value or a target utilization",
                ));
            }
            if has("averageUtilization") && has("averageValue") {
                out.push(Cause::forbidden(
                    tp.child("averageValue"),
                    "may not set both a target raw value and a target utilization",
                ));
            }
        }
    }
}

/// `validateMetricIdentifier` of `src.metric`.
fn identifier(src: &Map<String, Value>, path: &Path, out: &mut Vec<Cause>) {
    let name = src
        .get("metric")
        .and_then(|m| m.get("name"))
        .and_then(Value::as_str)
        .unwrap_or_default();
    if name.is_empty() {
        out.push(Cause::required(
            path.child("name"),
            "must specify a metric name",
        ));
    } else {
        for msg in super::rbac::path_segment(name) {
            out.push(Cause::invalid(path.child("name"), &json!(name), msg));
        }
    }
}

/// `validateMetricTarget`.
fn metric_target(t: &Map<String, Value>, path: &Path, out: &mut Vec<Cause>) {
    let kind = str_of(t, "type");
    if kind.is_empty() {
        out.push(Cause::required(
            path.child("type"),
            "must specify a metric target type",
        ));
    }
    if !["Utilization", "Value", "AverageValue"].contains(&kind) {
        out.push(Cause::invalid(
            path.child("type"),
            &json!(kind),
            "must be either Utilization, Value, or AverageValue",
        ));
    }
    for key in ["value", "averageValue"] {
        let q = match t.get(key) {
            Some(Value::String(s)) => Quantity::parse(s),
            Some(Value::Number(n)) => Quantity::parse(&n.to_string()),
            _ => None,
        };
        if let Some(q) = q
            && (q.is_negative() || q.canonical() == "0")
        {
            out.push(Cause::invalid(
                path.child(key),
                &json!(q.canonical()),
                "must be positive",
            ));
        }
    }
    if let Some(u) = t.get("averageUtilization").and_then(Value::as_i64)
        && u < 1
    {
        out.push(Cause::invalid(
            path.child("averageUtilization"),
            &json!(u),
            "must be greater than 0",
        ));
    }
}

/// `validateBehavior`.
pub(super) fn behavior(b: &Map<String, Value>, path: &Path, out: &mut Vec<Cause>) {
    for key in ["scaleUp", "scaleDown"] {
        let Some(rules) = b.get(key).and_then(Value::as_object) else {
            continue;
        };
        let p = path.child(key);
        if let Some(w) = rules
            .get("stabilizationWindowSeconds")
            .and_then(Value::as_i64)
        {
            if w < 0 {
                out.push(Cause::invalid(
                    p.child("stabilizationWindowSeconds"),
                    &json!(w),
                    "must be greater than or equal to zero",
                ));
            }
            if w > 3600 {
                out.push(Cause::invalid(
                    p.child("stabilizationWindowSeconds"),
                    &json!(w),
                    "must be less than or equal to 3600",
                ));
            }
        }
        if let Some(sp) = rules.get("selectPolicy").and_then(Value::as_str)
            && !["Disabled", "Max", "Min"].contains(&sp)
        {
            out.push(Cause::not_supported(
                p.child("selectPolicy"),
                &json!(sp),
                &["Disabled", "Max", "Min"],
            ));
        }
        let pp = p.child("policies");
        let policies = arr(rules, "policies");
        if policies.is_empty() {
            out.push(Cause::required(&pp, "must specify at least one Policy"));
        }
        for (i, policy) in policies.iter().enumerate() {
            let ip = pp.index(i);
            let kind = policy
                .get("type")
                .and_then(Value::as_str)
                .unwrap_or_default();
            if !["Percent", "Pods"].contains(&kind) {
                out.push(Cause::not_supported(
                    ip.child("type"),
                    &json!(kind),
                    &["Percent", "Pods"],
                ));
            }
            let value = policy.get("value").and_then(Value::as_i64).unwrap_or(0);
            if value <= 0 {
                out.push(Cause::invalid(
                    ip.child("value"),
                    &json!(value),
                    "must be greater than zero",
                ));
            }
            let period = policy
                .get("periodSeconds")
                .and_then(Value::as_i64)
                .unwrap_or(0);
            if period <= 0 {
                out.push(Cause::invalid(
                    ip.child("periodSeconds"),
                    &json!(period),
                    "must be greater than zero",
                ));
            }
            if period > 1800 {
                out.push(Cause::invalid(
                    ip.child("periodSeconds"),
                    &json!(period),
                    "must be less than or equal to 1800",
                ));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(spec: Value) -> Vec<String> {
        let mut out = Vec::new();
        let list = spec.as_array().cloned().unwrap_or_default();
        metrics(&list, Some(1), &Path::new("spec.metrics"), &mut out);
        out.iter().map(ToString::to_string).collect()
    }

    #[test]
    fn metric_specs_by_type() {
        let ok = json!([
            {"type": "Resource", "resource": {"name": "cpu", "target": {"type": "Utilization", "averageUtilization": 80}}},
            {"type": "Pods", "pods": {"metric": {"name": "rps"}, "target": {"type": "AverageValue", "averageValue": "100"}}},
            {"type": "External", "external": {"metric": {"name": "queue"}, "target": {"type": "Value", "value": "30"}}},
        ]);
        assert!(check(ok).is_empty());
        let bad = json!([
            {"type": "Resource", "resource": {"name": "memory", "target": {"type": "Utilization"}}},
            {"type": "Pods", "resource": {"name": "cpu", "target": {"type": "Utilization", "averageUtilization": 0}}},
            {"type": "Sometimes"},
            {"type": "External", "external": {"metric": {"name": "a/b"}, "target": {"type": "Value", "value": "-1", "averageValue": "1"}}},
        ]);
        assert_eq!(
            check(bad),
            [
                "spec.metrics[0].resource.target.averageUtilization: Required value: must set either a target raw value or a target utilization",
                "spec.metrics[1].resource.target.averageUtilization: Invalid value: 0: must be greater than 0",
                "spec.metrics[1].pods: Required value: must populate information for the given metric source",
                r#"spec.metrics[2].type: Unsupported value: "Sometimes": supported values: "ContainerResource", "External", "Object", "Pods", "Resource""#,
                r#"spec.metrics[2].type: Unsupported value: "Sometimes": supported values: "ContainerResource", "External", "Object", "Pods", "Resource""#,
                r#"spec.metrics[3].external.metric.name: Invalid value: "a/b": may not contain '/'"#,
                r#"spec.metrics[3].external.target.value: Invalid value: "-1": must be positive"#,
                "spec.metrics[3].external.target.value: Forbidden: may not set both a target value for metric and a per-pod target",
            ]
        );
    }
}
