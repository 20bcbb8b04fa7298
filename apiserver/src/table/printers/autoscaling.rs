//! autoscaling HorizontalPodAutoscaler: `printHorizontalPodAutoscaler`.
//!
//! TARGETS renders each metric as `current/target`, the status entry at
//! the same index supplying `current` (`<unknown>` when missing):
//!
//! - Resource / ContainerResource: `cpu: 50%/80%` (utilization; target
//!   `<auto>` when unset) or `memory: 100Mi/200Mi` (average value);
//! - Pods: `15/20`; Object and External: `15/20`, or `15/20 (avg)` for an
//!   average-value target;
//! - anything else: `<unknown type>`.
//!
//! At most two are shown, then ` + N more...`; no metrics is `<none>`.
//! Quantities are canonical, and a quantity that is absent where upstream
//! dereferences a pointer prints as `<nil>`. autoscaling/v1 objects
//! (`targetCPUUtilizationPercentage`) read as the one cpu metric upstream
//! converts them to.

use serde_json::{Value, json};
use time::OffsetDateTime;

use super::super::column::Column;
use super::super::descriptions as doc;
use super::super::printer::{Printer, no_conditions};
use super::super::{fields, quantity};

pub(crate) static HORIZONTAL_POD_AUTOSCALER: Printer = Printer {
    columns: &COLUMNS,
    cells,
    conditions: no_conditions,
    empty_rows_are_null: false,
};

static COLUMNS: [Column; 7] = [
    Column::name(),
    Column::string("Reference", doc::HPA_SPEC_SCALE_TARGET_REF),
    Column::string("Targets", doc::HPA_SPEC_METRICS),
    Column::string("MinPods", doc::HPA_SPEC_MIN_REPLICAS),
    Column::string("MaxPods", doc::HPA_SPEC_MAX_REPLICAS),
    Column::string("Replicas", doc::HPA_STATUS_CURRENT_REPLICAS),
    Column::age(),
];

fn cells(hpa: &Value, now: OffsetDateTime) -> Vec<Value> {
    let reference = format!(
        "{}/{}",
        fields::str_at(hpa, &["spec", "scaleTargetRef", "kind"]),
        fields::str_at(hpa, &["spec", "scaleTargetRef", "name"])
    );
    let min_pods = fields::opt_int_at(hpa, &["spec", "minReplicas"])
        .map_or_else(|| "<unset>".to_owned(), |n| n.to_string());
    vec![
        fields::name(hpa).into(),
        reference.into(),
        targets(hpa).into(),
        min_pods.into(),
        fields::int_at(hpa, &["spec", "maxReplicas"]).into(),
        fields::int_at(hpa, &["status", "currentReplicas"]).into(),
        fields::age(hpa, now).into(),
    ]
}

/// `formatHPAMetrics`.
fn targets(hpa: &Value) -> String {
    const MAX: usize = 2;
    let (specs, statuses) = metrics(hpa);
    if specs.is_empty() {
        return "<none>".to_owned();
    }
    let mut list: Vec<String> = specs
        .iter()
        .enumerate()
        .map(|(i, spec)| format_metric(spec, statuses.get(i)))
        .collect();
    let count = list.len();
    if count > MAX {
        list.truncate(MAX);
        return format!("{} + {} more...", list.join(", "), count - MAX);
    }
    list.join(", ")
}

/// The v2 metric specs and statuses; for a v1 object, the cpu metric its
/// `targetCPUUtilizationPercentage` converts to.
fn metrics(hpa: &Value) -> (Vec<Value>, Vec<Value>) {
    let specs = fields::items_at(hpa, &["spec", "metrics"]);
    let v1_target = fields::opt_int_at(hpa, &["spec", "targetCPUUtilizationPercentage"]);
    match v1_target {
        Some(target) if specs.is_empty() => {
            let spec = json!({"type": "Resource", "resource": {
                "name": "cpu", "target": {"type": "Utilization", "averageUtilization": target}}});
            let statuses = fields::opt_int_at(hpa, &["status", "currentCPUUtilizationPercentage"])
                .map(|current| {
                    json!({"type": "Resource", "resource": {
                        "name": "cpu", "current": {"averageUtilization": current}}})
                })
                .into_iter()
                .collect();
            (vec![spec], statuses)
        }
        _ => (
            specs.to_vec(),
            fields::items_at(hpa, &["status", "currentMetrics"]).to_vec(),
        ),
    }
}

/// A quantity behind a Go pointer: canonical, or `<nil>` when absent.
fn ptr_quantity(v: &Value, path: &[&str]) -> String {
    fields::at(v, path).map_or_else(|| "<nil>".to_owned(), quantity::canonical)
}

/// One metric: `spec` with its positional `status`, if any.
fn format_metric(spec: &Value, status: Option<&Value>) -> String {
    const UNKNOWN: &str = "<unknown>";
    // The status's source of the same type, when present (a Go pointer).
    let current = |key: &str| status.and_then(|s| fields::at(s, &[key]));
    match fields::str_at(spec, &["type"]) {
        kind @ ("External" | "Object") => {
            let key = if kind == "External" {
                "external"
            } else {
                "object"
            };
            let target = fields::child(spec, &[key, "target"]);
            if fields::is_set(target, &["averageValue"]) {
                let cur = current(key)
                    .filter(|c| fields::is_set(c, &["current", "averageValue"]))
                    .map_or_else(
                        || UNKNOWN.to_owned(),
                        |c| ptr_quantity(c, &["current", "averageValue"]),
                    );
                format!("{cur}/{} (avg)", ptr_quantity(target, &["averageValue"]))
            } else {
                let cur = current(key).map_or_else(
                    || UNKNOWN.to_owned(),
                    |c| ptr_quantity(c, &["current", "value"]),
                );
                format!("{cur}/{}", ptr_quantity(target, &["value"]))
            }
        }
        "Pods" => {
            let cur = current("pods").map_or_else(
                || UNKNOWN.to_owned(),
                |c| ptr_quantity(c, &["current", "averageValue"]),
            );
            format!(
                "{cur}/{}",
                ptr_quantity(spec, &["pods", "target", "averageValue"])
            )
        }
        kind @ ("Resource" | "ContainerResource") => {
            let key = if kind == "Resource" {
                "resource"
            } else {
                "containerResource"
            };
            let source = fields::child(spec, &[key]);
            let name = fields::str_at(source, &["name"]);
            let target = fields::child(source, &["target"]);
            if fields::is_set(target, &["averageValue"]) {
                let cur = current(key).map_or_else(
                    || UNKNOWN.to_owned(),
                    |c| ptr_quantity(c, &["current", "averageValue"]),
                );
                format!("{name}: {cur}/{}", ptr_quantity(target, &["averageValue"]))
            } else {
                let cur = current(key)
                    .and_then(|c| fields::opt_int_at(c, &["current", "averageUtilization"]))
                    .map_or_else(|| UNKNOWN.to_owned(), |u| format!("{u}%"));
                let goal = fields::opt_int_at(target, &["averageUtilization"])
                    .map_or_else(|| "<auto>".to_owned(), |u| format!("{u}%"));
                format!("{name}: {cur}/{goal}")
            }
        }
        _ => "<unknown type>".to_owned(),
    }
}
