//! `autoscaling/v1` HorizontalPodAutoscaler ⇄ `autoscaling/v2` (the storage
//! version), as upstream's pkg/apis/autoscaling/v1 conversion does it:
//!
//! - `spec.targetCPUUtilizationPercentage` is the first `cpu` Resource
//!   metric with an `averageUtilization` target; every other metric travels
//!   in the annotation `autoscaling.alpha.kubernetes.io/metrics` (as v1
//!   `MetricSpec`s), `status.currentMetrics` in `…/current-metrics`,
//!   `status.conditions` in `…/conditions`, and `spec.behavior` in
//!   `…/behavior` (as upstream's internal struct, Go field names).
//! - Written through v1, those annotations are lifted back into the v2
//!   fields and removed; a v1 object with no metric at all gets upstream's
//!   implicit default, 80% average CPU utilization.

use serde_json::{Map, Value, json};

use super::{Conversion, set_api_version};

/// The conversion of the `autoscaling/v1` row.
pub static HPA_V1: Conversion = Conversion {
    storage_group: "autoscaling",
    storage_version: "v2",
    storage_plural: "horizontalpodautoscalers",
    to_storage,
    from_storage,
};

const METRICS: &str = "autoscaling.alpha.kubernetes.io/metrics";
const CURRENT_METRICS: &str = "autoscaling.alpha.kubernetes.io/current-metrics";
const CONDITIONS: &str = "autoscaling.alpha.kubernetes.io/conditions";
const BEHAVIOR: &str = "autoscaling.alpha.kubernetes.io/behavior";

/// upstream's `autoscaling.DefaultCPUUtilization`.
const DEFAULT_CPU_UTILIZATION: i64 = 80;

type Obj = Map<String, Value>;

fn obj(v: Option<&Value>) -> Obj {
    v.and_then(Value::as_object).cloned().unwrap_or_default()
}

fn copy(from: &Obj, to: &mut Obj, keys: &[&str]) {
    for k in keys {
        if let Some(v) = from.get(*k) {
            to.insert((*k).to_string(), v.clone());
        }
    }
}

/// Copies `from[src]` to `to[dst]` when present.
fn put(to: &mut Obj, dst: &str, from: &Obj, src: &str) {
    if let Some(v) = from.get(src).filter(|v| !v.is_null()) {
        to.insert(dst.to_string(), v.clone());
    }
}

/// A Go non-pointer Quantity: "0" when absent.
fn quantity(from: &Obj, key: &str) -> Value {
    from.get(key)
        .filter(|v| !v.is_null())
        .cloned()
        .unwrap_or_else(|| json!("0"))
}

fn is_cpu_resource(m: &Value) -> bool {
    m.get("type").and_then(Value::as_str) == Some("Resource")
        && m.get("resource")
            .and_then(|r| r.get("name"))
            .and_then(Value::as_str)
            == Some("cpu")
}

// ---- v2 → v1 ------------------------------------------------------------

/// autoscaling/v2 → autoscaling/v1.
pub fn from_storage(v2: Value) -> Value {
    let Value::Object(mut top) = v2 else {
        return v2;
    };
    let spec2 = obj(top.get("spec"));
    let status2 = obj(top.get("status"));
    let metrics: Vec<Value> = spec2
        .get("metrics")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();

    let mut spec = Obj::new();
    copy(
        &spec2,
        &mut spec,
        &["scaleTargetRef", "minReplicas", "maxReplicas"],
    );
    if let Some(cpu) = metrics.iter().find(|m| is_cpu_resource(m))
        && let Some(u) = cpu.pointer("/resource/target/averageUtilization")
        && !u.is_null()
    {
        spec.insert("targetCPUUtilizationPercentage".into(), u.clone());
    }
    let other: Vec<Value> = metrics
        .iter()
        .filter(|m| {
            !(is_cpu_resource(m)
                && m.pointer("/resource/target/averageUtilization")
                    .is_some_and(|u| !u.is_null()))
        })
        .map(|m| metric_to_v1(m, &SPEC))
        .collect();

    let mut status = Obj::new();
    copy(
        &status2,
        &mut status,
        &[
            "observedGeneration",
            "lastScaleTime",
            "currentReplicas",
            "desiredReplicas",
        ],
    );
    // v1's replica counts are plain int32s: Go prints 0 for them.
    for k in ["currentReplicas", "desiredReplicas"] {
        status.entry(k).or_insert(json!(0));
    }
    let current: Vec<Value> = status2
        .get("currentMetrics")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    for m in &current {
        if is_cpu_resource(m)
            && let Some(u) = m.pointer("/resource/current/averageUtilization")
            && !u.is_null()
        {
            status.insert("currentCPUUtilizationPercentage".into(), u.clone());
        }
    }
    let conditions: Vec<Value> = status2
        .get("conditions")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();

    let mut notes: Vec<(&str, String)> = Vec::new();
    if !other.is_empty() {
        notes.push((METRICS, Value::Array(other).to_string()));
    }
    if !current.is_empty() {
        let v1: Vec<Value> = current.iter().map(|m| metric_to_v1(m, &STATUS)).collect();
        notes.push((CURRENT_METRICS, Value::Array(v1).to_string()));
    }
    if !conditions.is_empty() {
        notes.push((CONDITIONS, conditions_text(&conditions)));
    }
    if let Some(b) = spec2.get("behavior").filter(|b| b.is_object()) {
        notes.push((BEHAVIOR, behavior_text(b)));
    }
    if !notes.is_empty() {
        let meta = top
            .entry("metadata")
            .or_insert_with(|| Value::Object(Obj::new()));
        if let Some(meta) = meta.as_object_mut() {
            let ann = meta
                .entry("annotations")
                .or_insert_with(|| Value::Object(Obj::new()));
            if let Some(ann) = ann.as_object_mut() {
                for (k, v) in notes {
                    ann.insert(k.to_string(), Value::String(v));
                }
            }
        }
    }
    top.insert("spec".into(), Value::Object(spec));
    top.insert("status".into(), Value::Object(status));
    let mut out = Value::Object(top);
    set_api_version(&mut out, "autoscaling/v1");
    out
}

/// How one side of a metric maps between v2 and v1: spec targets (v2's
/// `target`, v1's `target*` fields) or status values (`current`,
/// `current*`). Each entry is (v2 key, v1 key, required): a required v1
/// field is a Go non-pointer `Quantity`, `"0"` when v2 has none, and always
/// set in v2 when read back (upstream takes its address).
struct Side {
    holder: &'static str,
    typed: bool,
    object: &'static [(&'static str, &'static str, bool)],
    pods: &'static [(&'static str, &'static str, bool)],
    resource: &'static [(&'static str, &'static str, bool)],
    external: &'static [(&'static str, &'static str, bool)],
}

const SPEC: Side = Side {
    holder: "target",
    typed: true,
    object: &[
        ("value", "targetValue", true),
        ("averageValue", "averageValue", false),
    ],
    pods: &[("averageValue", "targetAverageValue", true)],
    resource: &[
        ("averageUtilization", "targetAverageUtilization", false),
        ("averageValue", "targetAverageValue", false),
    ],
    external: &[
        ("value", "targetValue", false),
        ("averageValue", "targetAverageValue", false),
    ],
};

const STATUS: Side = Side {
    holder: "current",
    typed: false,
    object: &[
        ("value", "currentValue", true),
        ("averageValue", "averageValue", false),
    ],
    pods: &[("averageValue", "currentAverageValue", true)],
    resource: &[
        ("averageUtilization", "currentAverageUtilization", false),
        ("averageValue", "currentAverageValue", true),
    ],
    external: &[
        ("value", "currentValue", true),
        ("averageValue", "currentAverageValue", false),
    ],
};

/// The numbers of one metric, v2 `holder` → v1 fields.
fn numbers_to_v1(to: &mut Obj, holder: &Obj, table: &[(&str, &str, bool)]) {
    for (v2, v1, required) in table {
        if *required {
            to.insert((*v1).to_string(), quantity(holder, v2));
        } else {
            put(to, v1, holder, v2);
        }
    }
}

/// The numbers of one metric, v1 fields → v2 `holder`.
fn numbers_from_v1(from: &Obj, table: &[(&str, &str, bool)]) -> Obj {
    let mut holder = Obj::new();
    for (v2, v1, required) in table {
        if *required {
            holder.insert((*v2).to_string(), quantity(from, v1));
        } else {
            put(&mut holder, v2, from, v1);
        }
    }
    holder
}

fn string_or_empty(from: &Obj, key: &str) -> Value {
    from.get(key).cloned().unwrap_or(json!(""))
}

/// A v2 `MetricSpec` or `MetricStatus` as the v1 one upstream keeps in the
/// annotations.
fn metric_to_v1(m: &Value, side: &Side) -> Value {
    let t = m.get("type").cloned().unwrap_or(Value::Null);
    let mut out = Obj::new();
    out.insert("type".into(), t.clone());
    let (key, table) = match t.as_str().unwrap_or("") {
        "Object" => ("object", side.object),
        "Pods" => ("pods", side.pods),
        "Resource" => ("resource", side.resource),
        "ContainerResource" => ("containerResource", side.resource),
        "External" => ("external", side.external),
        _ => return Value::Object(out),
    };
    let src = obj(m.get(key));
    let metric = obj(src.get("metric"));
    let mut o = Obj::new();
    match key {
        "object" => {
            o.insert(
                "target".into(),
                src.get("describedObject").cloned().unwrap_or(json!({})),
            );
            o.insert("metricName".into(), string_or_empty(&metric, "name"));
            put(&mut o, "selector", &metric, "selector");
        }
        "pods" => {
            o.insert("metricName".into(), string_or_empty(&metric, "name"));
            put(&mut o, "selector", &metric, "selector");
        }
        "external" => {
            o.insert("metricName".into(), string_or_empty(&metric, "name"));
            put(&mut o, "metricSelector", &metric, "selector");
        }
        _ => {
            o.insert("name".into(), string_or_empty(&src, "name"));
            if key == "containerResource" {
                o.insert("container".into(), string_or_empty(&src, "container"));
            }
        }
    }
    numbers_to_v1(&mut o, &obj(src.get(side.holder)), table);
    out.insert(key.into(), Value::Object(o));
    Value::Object(out)
}

/// A v1 annotation metric back into v2's `MetricSpec` or `MetricStatus`;
/// targets get upstream's target type.
fn metric_from_v1(m: &Value, side: &Side) -> Value {
    let t = m.get("type").cloned().unwrap_or(Value::Null);
    let mut out = Obj::new();
    out.insert("type".into(), t.clone());
    let (key, table) = match t.as_str().unwrap_or("") {
        "Object" => ("object", side.object),
        "Pods" => ("pods", side.pods),
        "Resource" => ("resource", side.resource),
        "ContainerResource" => ("containerResource", side.resource),
        "External" => ("external", side.external),
        _ => return Value::Object(out),
    };
    let src = obj(m.get(key));
    let mut holder = numbers_from_v1(&src, table);
    let has = |k: &str| src.get(k).is_some_and(|v| !v.is_null());
    if side.typed {
        let target_type = match key {
            "object" if has("averageValue") => "AverageValue",
            "object" => "Value",
            "pods" => "AverageValue",
            "external" if has("targetValue") => "Value",
            "external" => "AverageValue",
            _ if has("targetAverageUtilization") => "Utilization",
            _ => "AverageValue",
        };
        holder.insert("type".into(), json!(target_type));
    }
    let mut o = Obj::new();
    let mut metric = Obj::new();
    match key {
        "object" | "pods" => {
            metric.insert("name".into(), string_or_empty(&src, "metricName"));
            put(&mut metric, "selector", &src, "selector");
            if key == "object" {
                o.insert(
                    "describedObject".into(),
                    src.get("target").cloned().unwrap_or(json!({})),
                );
            }
            o.insert("metric".into(), Value::Object(metric));
        }
        "external" => {
            metric.insert("name".into(), string_or_empty(&src, "metricName"));
            put(&mut metric, "selector", &src, "metricSelector");
            o.insert("metric".into(), Value::Object(metric));
        }
        _ => {
            o.insert("name".into(), string_or_empty(&src, "name"));
            if key == "containerResource" {
                o.insert("container".into(), string_or_empty(&src, "container"));
            }
        }
    }
    o.insert(side.holder.into(), Value::Object(holder));
    out.insert(key.into(), Value::Object(o));
    Value::Object(out)
}

/// Writes `fields` of `v` in the given order as a JSON object (Go's
/// encoding of a struct whose fields have no JSON tags: every field, `null`
/// when absent).
fn go_struct(
    v: Option<&Value>,
    fields: &[(&str, &str)],
    nested: &dyn Fn(&str, &Value) -> String,
) -> String {
    let Some(map) = v.and_then(Value::as_object) else {
        return "null".into();
    };
    let parts: Vec<String> = fields
        .iter()
        .map(|(go, json)| {
            let text = match map.get(*json) {
                None | Some(Value::Null) => "null".to_string(),
                Some(x) => nested(json, x),
            };
            format!("{}:{text}", Value::String((*go).to_string()))
        })
        .collect();
    format!("{{{}}}", parts.join(","))
}

/// `spec.behavior` as upstream's internal `HorizontalPodAutoscalerBehavior`
/// marshals it (Go field names, declaration order).
fn behavior_text(b: &Value) -> String {
    let policy = |p: &Value| {
        go_struct(
            Some(p),
            &[
                ("Type", "type"),
                ("Value", "value"),
                ("PeriodSeconds", "periodSeconds"),
            ],
            &|_, x| x.to_string(),
        )
    };
    let rules = |r: &Value| {
        go_struct(
            Some(r),
            &[
                ("StabilizationWindowSeconds", "stabilizationWindowSeconds"),
                ("SelectPolicy", "selectPolicy"),
                ("Policies", "policies"),
                ("Tolerance", "tolerance"),
            ],
            &|k, x| {
                if k == "policies" {
                    let items: Vec<String> = x
                        .as_array()
                        .map(|a| a.iter().map(policy).collect())
                        .unwrap_or_default();
                    format!("[{}]", items.join(","))
                } else {
                    x.to_string()
                }
            },
        )
    };
    go_struct(
        Some(b),
        &[("ScaleUp", "scaleUp"), ("ScaleDown", "scaleDown")],
        &|_, x| rules(x),
    )
}

/// `status.conditions` as v1 `HorizontalPodAutoscalerCondition`s (JSON
/// names, Go order).
fn conditions_text(conditions: &[Value]) -> String {
    let items: Vec<String> = conditions
        .iter()
        .map(|c| {
            let map = c.as_object().cloned().unwrap_or_default();
            let mut parts = Vec::new();
            for (k, omit) in [
                ("type", false),
                ("status", false),
                ("lastTransitionTime", false),
                ("reason", true),
                ("message", true),
            ] {
                match map.get(k) {
                    Some(v) if !v.is_null() => parts.push(format!("\"{k}\":{v}")),
                    _ if omit => {}
                    _ => parts.push(format!("\"{k}\":null")),
                }
            }
            format!("{{{}}}", parts.join(","))
        })
        .collect();
    format!("[{}]", items.join(","))
}

// ---- v1 → v2 ------------------------------------------------------------

/// autoscaling/v1 → autoscaling/v2. Malformed annotations are errors, as
/// upstream's conversion fails on them.
pub fn to_storage(v1: Value) -> Result<Value, String> {
    let Value::Object(mut top) = v1 else {
        return Err("the object must be a JSON object".into());
    };
    let spec1 = obj(top.get("spec"));
    let status1 = obj(top.get("status"));
    let mut ann = obj(top.get("metadata").and_then(|m| m.get("annotations")));
    let take = |ann: &mut Obj, key: &str| -> Result<Option<Value>, String> {
        match ann.remove(key) {
            None => Ok(None),
            Some(Value::String(s)) => serde_json::from_str(&s)
                .map(Some)
                .map_err(|e| format!("metadata.annotations[{key}]: {e}")),
            Some(_) => Err(format!("metadata.annotations[{key}] must be a string")),
        }
    };

    let mut spec = Obj::new();
    copy(
        &spec1,
        &mut spec,
        &["scaleTargetRef", "minReplicas", "maxReplicas"],
    );
    let cpu = spec1
        .get("targetCPUUtilizationPercentage")
        .filter(|v| !v.is_null())
        .map(|u| cpu_metric(u.clone()));
    let mut metrics: Vec<Value> = Vec::new();
    if let Some(other) = take(&mut ann, METRICS)? {
        let other = other
            .as_array()
            .ok_or_else(|| format!("metadata.annotations[{METRICS}] must be a JSON list"))?;
        metrics.extend(other.iter().map(|m| metric_from_v1(m, &SPEC)));
    }
    metrics.extend(cpu);
    if metrics.is_empty() {
        metrics.push(cpu_metric(json!(DEFAULT_CPU_UTILIZATION)));
    }
    spec.insert("metrics".into(), Value::Array(metrics));
    if let Some(b) = take(&mut ann, BEHAVIOR)? {
        spec.insert("behavior".into(), behavior_from_text(&b));
    }

    let mut status = Obj::new();
    copy(
        &status1,
        &mut status,
        &[
            "observedGeneration",
            "lastScaleTime",
            "currentReplicas",
            "desiredReplicas",
        ],
    );
    if let Some(u) = status1
        .get("currentCPUUtilizationPercentage")
        .filter(|v| !v.is_null())
    {
        status.insert(
            "currentMetrics".into(),
            json!([{"type": "Resource", "resource": {"name": "cpu", "current": {"averageUtilization": u}}}]),
        );
    }
    if let Some(current) = take(&mut ann, CURRENT_METRICS)? {
        let current = current.as_array().ok_or_else(|| {
            format!("metadata.annotations[{CURRENT_METRICS}] must be a JSON list")
        })?;
        status.insert(
            "currentMetrics".into(),
            Value::Array(current.iter().map(|m| metric_from_v1(m, &STATUS)).collect()),
        );
    }
    if let Some(conditions) = take(&mut ann, CONDITIONS)? {
        if !conditions.is_array() {
            return Err(format!(
                "metadata.annotations[{CONDITIONS}] must be a JSON list"
            ));
        }
        status.insert("conditions".into(), conditions);
    }

    if let Some(meta) = top.get_mut("metadata").and_then(Value::as_object_mut) {
        if ann.is_empty() {
            meta.remove("annotations");
        } else {
            meta.insert("annotations".into(), Value::Object(ann));
        }
    }
    top.insert("spec".into(), Value::Object(spec));
    top.insert("status".into(), Value::Object(status));
    let mut out = Value::Object(top);
    set_api_version(&mut out, "autoscaling/v2");
    Ok(out)
}

fn cpu_metric(utilization: Value) -> Value {
    json!({"type": "Resource", "resource": {"name": "cpu",
        "target": {"type": "Utilization", "averageUtilization": utilization}}})
}

/// The behavior annotation (Go field names) back into v2's JSON names.
fn behavior_from_text(b: &Value) -> Value {
    fn lower(v: &Value, names: &[(&str, &str)]) -> Option<Value> {
        let map = v.as_object()?;
        let mut out = Obj::new();
        for (go, json) in names {
            if let Some(x) = map.get(*go).filter(|x| !x.is_null()) {
                out.insert((*json).to_string(), x.clone());
            }
        }
        Some(Value::Object(out))
    }
    let rules = |r: &Value| -> Option<Value> {
        let mut out = lower(
            r,
            &[
                ("StabilizationWindowSeconds", "stabilizationWindowSeconds"),
                ("SelectPolicy", "selectPolicy"),
                ("Tolerance", "tolerance"),
            ],
        )?;
        if let Some(policies) = r.get("Policies").and_then(Value::as_array)
            && let Some(map) = out.as_object_mut()
        {
            let list: Vec<Value> = policies
                .iter()
                .filter_map(|p| {
                    lower(
                        p,
                        &[
                            ("Type", "type"),
                            ("Value", "value"),
                            ("PeriodSeconds", "periodSeconds"),
                        ],
                    )
                })
                .collect();
            map.insert("policies".into(), Value::Array(list));
        }
        Some(out)
    };
    let mut out = Obj::new();
    for (go, json) in [("ScaleUp", "scaleUp"), ("ScaleDown", "scaleDown")] {
        if let Some(r) = b.get(go).and_then(&rules) {
            out.insert(json.to_string(), r);
        }
    }
    Value::Object(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v2() -> Value {
        json!({
            "apiVersion": "autoscaling/v2", "kind": "HorizontalPodAutoscaler",
            "metadata": {"name": "h", "namespace": "ns", "annotations": {"keep": "me"}},
            "spec": {
                "scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "d"},
                "minReplicas": 1, "maxReplicas": 5,
                "metrics": [
                    {"type": "Pods", "pods": {"metric": {"name": "qps"},
                        "target": {"type": "AverageValue", "averageValue": "10"}}},
                    {"type": "Resource", "resource": {"name": "cpu",
                        "target": {"type": "Utilization", "averageUtilization": 60}}}
                ],
                "behavior": {"scaleDown": {"stabilizationWindowSeconds": 300, "selectPolicy": "Min",
                    "policies": [{"type": "Pods", "value": 4, "periodSeconds": 60}]}}
            },
            "status": {
                "currentReplicas": 2, "desiredReplicas": 3,
                "currentMetrics": [{"type": "Resource", "resource": {"name": "cpu",
                    "current": {"averageUtilization": 40, "averageValue": "120m"}}}],
                "conditions": [{"type": "AbleToScale", "status": "True",
                    "lastTransitionTime": "2026-01-01T00:00:00Z", "reason": "ReadyForNewScale"}]
            }
        })
    }

    #[test]
    fn v2_to_v1_keeps_cpu_in_fields_and_the_rest_in_annotations() {
        let v1 = from_storage(v2());
        assert_eq!(v1["apiVersion"], "autoscaling/v1");
        assert_eq!(v1["spec"]["targetCPUUtilizationPercentage"], 60);
        assert!(v1["spec"].get("metrics").is_none());
        assert_eq!(v1["status"]["currentCPUUtilizationPercentage"], 40);
        let ann = &v1["metadata"]["annotations"];
        assert_eq!(ann["keep"], "me");
        assert_eq!(
            ann[METRICS],
            r#"[{"pods":{"metricName":"qps","targetAverageValue":"10"},"type":"Pods"}]"#
        );
        assert_eq!(
            ann[BEHAVIOR],
            r#"{"ScaleUp":null,"ScaleDown":{"StabilizationWindowSeconds":300,"SelectPolicy":"Min","Policies":[{"Type":"Pods","Value":4,"PeriodSeconds":60}],"Tolerance":null}}"#
        );
        assert_eq!(
            ann[CONDITIONS],
            r#"[{"type":"AbleToScale","status":"True","lastTransitionTime":"2026-01-01T00:00:00Z","reason":"ReadyForNewScale"}]"#
        );
    }

    #[test]
    fn v1_round_trips_to_the_same_v2() {
        let back = to_storage(from_storage(v2())).unwrap();
        let mut want = v2();
        // The cpu target comes back after the annotation's metrics, as upstream.
        assert_eq!(back["spec"]["metrics"], want["spec"]["metrics"]);
        assert_eq!(back["spec"]["behavior"], want["spec"]["behavior"]);
        assert_eq!(back["status"]["conditions"], want["status"]["conditions"]);
        assert_eq!(
            back["status"]["currentMetrics"],
            want["status"]["currentMetrics"]
        );
        assert_eq!(back["metadata"], want["metadata"]);
        want["spec"] = back["spec"].clone();
        want["status"] = back["status"].clone();
        assert_eq!(back, want);
    }

    #[test]
    fn plain_v1_gets_cpu_metrics_and_the_implicit_default() {
        let v1 = json!({"apiVersion": "autoscaling/v1", "kind": "HorizontalPodAutoscaler",
            "metadata": {"name": "h"},
            "spec": {"scaleTargetRef": {"kind": "Deployment", "name": "d"}, "maxReplicas": 3,
                "targetCPUUtilizationPercentage": 50}});
        let v2 = to_storage(v1.clone()).unwrap();
        assert_eq!(v2["apiVersion"], "autoscaling/v2");
        assert_eq!(
            v2["spec"]["metrics"],
            json!([{"type": "Resource", "resource": {"name": "cpu",
            "target": {"type": "Utilization", "averageUtilization": 50}}}])
        );
        let mut bare = v1;
        bare["spec"]
            .as_object_mut()
            .unwrap()
            .remove("targetCPUUtilizationPercentage");
        let v2 = to_storage(bare).unwrap();
        assert_eq!(
            v2["spec"]["metrics"][0]["resource"]["target"]["averageUtilization"],
            80
        );
        assert!(v2["metadata"].get("annotations").is_none());
    }

    #[test]
    fn malformed_annotations_are_errors() {
        let v1 = json!({"apiVersion": "autoscaling/v1", "kind": "HorizontalPodAutoscaler",
            "metadata": {"name": "h", "annotations": {METRICS: "{not json"}},
            "spec": {"maxReplicas": 3}});
        let err = to_storage(v1).unwrap_err();
        assert!(
            err.starts_with("metadata.annotations[autoscaling.alpha.kubernetes.io/metrics]"),
            "{err}"
        );
    }

    #[test]
    fn every_external_and_object_metric_round_trips() {
        let spec = json!([
            {"type": "Object", "object": {"describedObject": {"kind": "Service", "name": "s"},
                "metric": {"name": "rps"}, "target": {"type": "Value", "value": "100"}}},
            {"type": "External", "external": {"metric": {"name": "q", "selector": {"matchLabels": {"a": "b"}}},
                "target": {"type": "AverageValue", "averageValue": "3"}}},
            {"type": "ContainerResource", "containerResource": {"name": "memory", "container": "c",
                "target": {"type": "AverageValue", "averageValue": "1Gi"}}}
        ]);
        let mut obj = v2();
        obj["spec"]["metrics"] = spec.clone();
        let back = to_storage(from_storage(obj)).unwrap();
        assert_eq!(back["spec"]["metrics"], spec);
    }
}
