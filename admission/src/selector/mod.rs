//! Label selectors, Skein's one implementation of them.
//!
//! - [`label`]: the kubectl `-l` / `?labelSelector=` syntax and
//!   `metav1.LabelSelector` as a typed [`label::Selector`] with upstream's
//!   parser, error texts and printing (`apimachinery/pkg/labels`). The
//!   apiserver's list/watch filters, its field-selector module, and the
//!   placement annotations (`skein.io/cluster-selector`, V1's JSON form) all
//!   use it.
//! - This module: validation and matching of `metav1.LabelSelector`
//!   objects in workload specs (`apimachinery/pkg/apis/meta/v1/validation`).
//! - [`go`]: Go's formatting of field errors, aggregates and quoted strings
//!   that the messages above reach users through.
//!
//! Pure: no I/O, no panics on any input (fuzzed through the apiserver's
//! selector target).

mod error;
pub mod go;
pub mod label;

pub use error::{Result, SelectorError};

use serde_json::{Map, Value};

use crate::Cause;
use crate::denial::quote;
use crate::names;
use crate::path::Path;

/// Field errors of a `metav1.LabelSelector` object at `path` (upstream
/// `ValidateLabelSelector`, strict label values).
pub(crate) fn validate_label_selector(sel: &Value, path: &Path) -> Vec<Cause> {
    let mut out = Vec::new();
    let Some(sel) = sel.as_object() else {
        return out;
    };
    if let Some(labels) = sel.get("matchLabels").and_then(Value::as_object) {
        out.extend(validate_labels(labels, &path.child("matchLabels")));
    }
    for (i, expr) in crate::json::arr(sel, "matchExpressions").iter().enumerate() {
        let p = path.child("matchExpressions").index(i);
        let Some(expr) = expr.as_object() else {
            continue;
        };
        let op = crate::json::str_of(expr, "operator");
        let values = crate::json::arr(expr, "values");
        match op {
            "In" | "NotIn" => {
                if values.is_empty() {
                    out.push(Cause::required(
                        p.child("values"),
                        "must be specified when `operator` is 'In' or 'NotIn'",
                    ));
                }
            }
            "Exists" | "DoesNotExist" => {
                if !values.is_empty() {
                    out.push(Cause::forbidden(
                        p.child("values"),
                        "may not be specified when `operator` is 'Exists' or 'DoesNotExist'",
                    ));
                }
            }
            _ => out.push(Cause::invalid(
                p.child("operator"),
                &Value::String(op.to_owned()),
                "not a valid selector operator",
            )),
        }
        let key = crate::json::str_of(expr, "key");
        for msg in names::qualified_name(key) {
            out.push(Cause::invalid(
                p.child("key"),
                &Value::String(key.into()),
                msg,
            ));
        }
        for (j, v) in values.iter().enumerate() {
            let v = v.as_str().unwrap_or_default();
            for msg in names::label_value(v) {
                out.push(Cause::invalid(
                    p.child("values").index(j),
                    &Value::String(v.into()),
                    msg,
                ));
            }
        }
    }
    out
}

/// Field errors of a label map (upstream `ValidateLabels`), keys sorted.
pub(crate) fn validate_labels(labels: &Map<String, Value>, path: &Path) -> Vec<Cause> {
    let mut out = Vec::new();
    let mut keys: Vec<&String> = labels.keys().collect();
    keys.sort();
    for k in keys {
        for msg in names::qualified_name(k) {
            out.push(Cause::invalid(path, &Value::String(k.clone()), msg));
        }
        let v = labels[k.as_str()].as_str().unwrap_or_default();
        for msg in names::label_value(v) {
            out.push(Cause::invalid(path, &Value::String(v.to_owned()), msg));
        }
    }
    out
}

/// Whether a `metav1.LabelSelector` object matches `labels`, as
/// `LabelSelectorAsSelector(sel).Matches(labels)`: a missing selector
/// (`None` or `null`) matches nothing, `{}` matches everything. A selector
/// with an invalid operator matches nothing.
pub(crate) fn label_selector_matches(sel: Option<&Value>, labels: &Map<String, Value>) -> bool {
    let Some(sel) = sel.and_then(Value::as_object) else {
        return false;
    };
    if let Some(ml) = sel.get("matchLabels").and_then(Value::as_object) {
        for (k, v) in ml {
            if labels.get(k) != Some(v) {
                return false;
            }
        }
    }
    for expr in crate::json::arr(sel, "matchExpressions") {
        let Some(expr) = expr.as_object() else {
            return false;
        };
        let key = crate::json::str_of(expr, "key");
        let values: Vec<&str> = crate::json::arr(expr, "values")
            .iter()
            .filter_map(Value::as_str)
            .collect();
        let got = labels.get(key).and_then(Value::as_str);
        let ok = match crate::json::str_of(expr, "operator") {
            "In" => got.is_some_and(|g| values.contains(&g)),
            "NotIn" => got.is_none_or(|g| !values.contains(&g)),
            "Exists" => got.is_some(),
            "DoesNotExist" => got.is_none(),
            _ => false,
        };
        if !ok {
            return false;
        }
    }
    true
}

/// `true` for a selector object with neither matchLabels nor
/// matchExpressions (upstream: "empty selector is invalid for ...").
pub(crate) fn label_selector_is_empty(sel: &Value) -> bool {
    let n = |k: &str| match sel.get(k) {
        Some(Value::Object(m)) => m.len(),
        Some(Value::Array(a)) => a.len(),
        _ => 0,
    };
    n("matchLabels") + n("matchExpressions") == 0
}

/// `v1.LabelSelector{MatchLabels:map[string]string{"app":"web"},
/// MatchExpressions:[]v1.LabelSelectorRequirement(nil)}`: Go's `%#v` of a
/// selector, which kube-apiserver 1.33 prints in selector errors.
pub(crate) fn render_label_selector(sel: &Value) -> String {
    let labels = match sel.get("matchLabels").and_then(Value::as_object) {
        Some(m) => crate::denial::render_value(&Value::Object(m.clone())),
        None => "map[string]string(nil)".to_owned(),
    };
    let exprs = match sel.get("matchExpressions").and_then(Value::as_array) {
        None => "[]v1.LabelSelectorRequirement(nil)".to_owned(),
        Some(items) => {
            let parts: Vec<String> = items
                .iter()
                .map(|e| {
                    let values = match e.get("values").and_then(Value::as_array) {
                        Some(v) => crate::denial::render_value(&Value::Array(v.clone())),
                        None => "[]string(nil)".to_owned(),
                    };
                    format!(
                        "v1.LabelSelectorRequirement{{Key:{}, Operator:{}, Values:{values}}}",
                        quote(crate::json::str_at(e, "/key")),
                        quote(crate::json::str_at(e, "/operator")),
                    )
                })
                .collect();
            format!("[]v1.LabelSelectorRequirement{{{}}}", parts.join(", "))
        }
    };
    format!("v1.LabelSelector{{MatchLabels:{labels}, MatchExpressions:{exprs}}}")
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn label_selector_objects() {
        let labels = json!({"app": "web"});
        let labels = labels.as_object().unwrap();
        let sel = json!({"matchLabels": {"app": "web"}});
        assert!(label_selector_matches(Some(&sel), labels));
        assert!(!label_selector_matches(None, labels));
        assert!(label_selector_matches(Some(&json!({})), labels));
        assert_eq!(
            render_label_selector(&sel),
            r#"v1.LabelSelector{MatchLabels:map[string]string{"app":"web"}, MatchExpressions:[]v1.LabelSelectorRequirement(nil)}"#
        );
        let bad = json!({"matchExpressions": [{"key": "a", "operator": "In"}]});
        let errs = validate_label_selector(&bad, &Path::new("spec.selector"));
        assert_eq!(
            errs[0].to_string(),
            "spec.selector.matchExpressions[0].values: Required value: must be specified when `operator` is 'In' or 'NotIn'"
        );
    }
}
