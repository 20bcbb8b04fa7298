//! Scheduling constraints of a pod spec (upstream `validateAffinity`,
//! `ValidateNodeSelector`, `ValidateNodeSelectorRequirement`,
//! `validatePodAffinityTerm`, `ValidateTolerations`).

use serde_json::{Map, Value, json};

use crate::Cause;
use crate::json::{arr, str_of};
use crate::names;
use crate::path::Path;
use crate::selector::validate_label_selector;

/// `unversionedvalidation.ValidateLabelName` (`IsQualifiedName`, which
/// reports an empty name part both as empty and as not matching).
fn label_name(name: &str, path: &Path, out: &mut Vec<Cause>) {
    let mut msgs = names::qualified_name(name);
    if name.rsplit('/').next() == Some("") && !msgs.iter().any(|m| m == names::QUALIFIED_NAME_MSG) {
        msgs.push(names::QUALIFIED_NAME_MSG.to_owned());
    }
    for msg in msgs {
        out.push(Cause::invalid(path, &json!(name), msg));
    }
}

/// `spec.affinity`.
pub(super) fn affinity(a: &Map<String, Value>, path: &Path, out: &mut Vec<Cause>) {
    if let Some(na) = a.get("nodeAffinity").and_then(Value::as_object) {
        let p = path.child("nodeAffinity");
        if let Some(req) = na
            .get("requiredDuringSchedulingIgnoredDuringExecution")
            .and_then(Value::as_object)
        {
            node_selector(
                req,
                false,
                &p.child("requiredDuringSchedulingIgnoredDuringExecution"),
                out,
            );
        }
        let pref_path = p.child("preferredDuringSchedulingIgnoredDuringExecution");
        for (i, term) in arr(na, "preferredDuringSchedulingIgnoredDuringExecution")
            .iter()
            .enumerate()
        {
            weight(term, &pref_path.index(i), out);
            let empty = Map::new();
            let pref = term
                .get("preference")
                .and_then(Value::as_object)
                .unwrap_or(&empty);
            node_selector_term(pref, true, &pref_path.index(i).child("preference"), out);
        }
    }
    for key in ["podAffinity", "podAntiAffinity"] {
        let Some(pa) = a.get(key).and_then(Value::as_object) else {
            continue;
        };
        let p = path.child(key);
        let req = p.child("requiredDuringSchedulingIgnoredDuringExecution");
        for (i, term) in arr(pa, "requiredDuringSchedulingIgnoredDuringExecution")
            .iter()
            .enumerate()
        {
            if let Some(term) = term.as_object() {
                pod_affinity_term(term, &req.index(i), out);
            }
        }
        let pref = p.child("preferredDuringSchedulingIgnoredDuringExecution");
        for (i, term) in arr(pa, "preferredDuringSchedulingIgnoredDuringExecution")
            .iter()
            .enumerate()
        {
            weight(term, &pref.index(i), out);
            let empty = Map::new();
            let inner = term
                .get("podAffinityTerm")
                .and_then(Value::as_object)
                .unwrap_or(&empty);
            pod_affinity_term(inner, &pref.index(i).child("podAffinityTerm"), out);
        }
    }
}

fn weight(term: &Value, path: &Path, out: &mut Vec<Cause>) {
    let w = term.get("weight").and_then(Value::as_i64).unwrap_or(0);
    if !(1..=100).contains(&w) {
        out.push(Cause::invalid(
            path.child("weight"),
            &json!(w),
            "must be in the range 1-100",
        ));
    }
}

/// `ValidateNodeSelector`.
fn node_selector(sel: &Map<String, Value>, allow_invalid: bool, path: &Path, out: &mut Vec<Cause>) {
    let terms_path = path.child("nodeSelectorTerms");
    let terms = arr(sel, "nodeSelectorTerms");
    if terms.is_empty() {
        out.push(Cause::required(
            terms_path,
            "must have at least one node selector term",
        ));
        return;
    }
    for (i, term) in terms.iter().enumerate() {
        if let Some(term) = term.as_object() {
            node_selector_term(term, allow_invalid, &terms_path.index(i), out);
        }
    }
}

/// `ValidateNodeSelectorTerm`.
fn node_selector_term(
    term: &Map<String, Value>,
    allow_invalid_values: bool,
    path: &Path,
    out: &mut Vec<Cause>,
) {
    for (j, rq) in arr(term, "matchExpressions").iter().enumerate() {
        let Some(rq) = rq.as_object() else { continue };
        let p = path.child("matchExpressions").index(j);
        let values = arr(rq, "values");
        match str_of(rq, "operator") {
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
            "Gt" | "Lt" => {
                if values.len() != 1 {
                    out.push(Cause::required(
                        p.child("values"),
                        "must be specified single value when `operator` is 'Lt' or 'Gt'",
                    ));
                }
            }
            other => out.push(Cause::invalid(
                p.child("operator"),
                &json!(other),
                "not a valid selector operator",
            )),
        }
        label_name(str_of(rq, "key"), &p.child("key"), out);
        if !allow_invalid_values {
            for (k, v) in values.iter().enumerate() {
                let v = v.as_str().unwrap_or_default();
                for msg in names::label_value(v) {
                    out.push(Cause::invalid(p.child("values").index(k), &json!(v), msg));
                }
            }
        }
    }
    for (j, rq) in arr(term, "matchFields").iter().enumerate() {
        let Some(rq) = rq.as_object() else { continue };
        let p = path.child("matchFields").index(j);
        let values = arr(rq, "values");
        match str_of(rq, "operator") {
            "In" | "NotIn" => {
                if values.len() != 1 {
                    out.push(Cause::required(
                        p.child("values"),
                        "must be only one value when `operator` is 'In' or 'NotIn' for node field selector",
                    ));
                }
            }
            other => out.push(Cause::invalid(
                p.child("operator"),
                &json!(other),
                "not a valid selector operator",
            )),
        }
        let key = str_of(rq, "key");
        if key == "metadata.name" {
            for (k, v) in values.iter().enumerate() {
                let v = v.as_str().unwrap_or_default();
                for msg in names::dns1123_subdomain(v) {
                    out.push(Cause::invalid(p.child("values").index(k), &json!(v), msg));
                }
            }
        } else {
            out.push(Cause::invalid(
                p.child("key"),
                &json!(key),
                "not a valid field selector key",
            ));
        }
    }
}

/// `validatePodAffinityTerm`.
fn pod_affinity_term(term: &Map<String, Value>, path: &Path, out: &mut Vec<Cause>) {
    if let Some(sel) = term.get("labelSelector").filter(|s| !s.is_null()) {
        out.extend(validate_label_selector(sel, &path.child("labelSelector")));
    }
    if let Some(sel) = term.get("namespaceSelector").filter(|s| !s.is_null()) {
        out.extend(validate_label_selector(
            sel,
            &path.child("namespaceSelector"),
        ));
    }
    for ns in arr(term, "namespaces") {
        let ns = ns.as_str().unwrap_or_default();
        for msg in names::dns1123_label(ns) {
            out.push(Cause::invalid(path.child("namespace"), &json!(ns), msg));
        }
    }
    let key = str_of(term, "topologyKey");
    if key.is_empty() {
        out.push(Cause::required(
            path.child("topologyKey"),
            "can not be empty",
        ));
    }
    label_name(key, &path.child("topologyKey"), out);
}

/// `ValidateTolerations`.
pub(super) fn tolerations(list: &[Value], path: &Path, out: &mut Vec<Cause>) {
    for (i, t) in list.iter().enumerate() {
        let Some(t) = t.as_object() else { continue };
        let p = path.index(i);
        let key = str_of(t, "key");
        let op = str_of(t, "operator");
        let effect = str_of(t, "effect");
        let value = str_of(t, "value");
        if !key.is_empty() {
            label_name(key, &p.child("key"), out);
        }
        if key.is_empty() && op != "Exists" {
            out.push(Cause::invalid(
                p.child("operator"),
                &json!(op),
                "operator must be Exists when `key` is empty, which means \"match all values and all keys\"",
            ));
        }
        if t.get("tolerationSeconds").is_some_and(|v| !v.is_null()) && effect != "NoExecute" {
            out.push(Cause::invalid(
                p.child("effect"),
                &json!(effect),
                "effect must be 'NoExecute' when `tolerationSeconds` is set",
            ));
        }
        match op {
            "Equal" | "" => {
                let errs = names::label_value(value);
                if !errs.is_empty() {
                    out.push(Cause::invalid(
                        p.child("operator"),
                        &json!(value),
                        errs.join(";"),
                    ));
                }
            }
            "Exists" => {
                if !value.is_empty() {
                    out.push(Cause::invalid(
                        p.child("operator"),
                        &json!(value),
                        "value must be empty when `operator` is 'Exists'",
                    ));
                }
            }
            other => out.push(Cause::not_supported(
                p.child("operator"),
                &json!(other),
                &["Equal", "Exists"],
            )),
        }
        if !effect.is_empty() && !["NoSchedule", "PreferNoSchedule", "NoExecute"].contains(&effect)
        {
            out.push(Cause::not_supported(
                p.child("effect"),
                &json!(effect),
                &["NoSchedule", "PreferNoSchedule", "NoExecute"],
            ));
        }
    }
}

/// `validateTopologySpreadConstraints` (without the `matchLabelKeys`
/// checks).
pub(super) fn topology_spread(list: &[Value], path: &Path, out: &mut Vec<Cause>) {
    for (i, c) in list.iter().enumerate() {
        let Some(c) = c.as_object() else { continue };
        let p = path.index(i);
        let skew = c.get("maxSkew").and_then(Value::as_i64).unwrap_or(0);
        if skew <= 0 {
            out.push(Cause::invalid(
                p.child("maxSkew"),
                &json!(skew),
                "must be greater than zero",
            ));
        }
        let key = str_of(c, "topologyKey");
        if key.is_empty() {
            out.push(Cause::required(p.child("topologyKey"), "can not be empty"));
        }
        let action = str_of(c, "whenUnsatisfiable");
        if !["DoNotSchedule", "ScheduleAnyway"].contains(&action) {
            out.push(Cause::not_supported(
                p.child("whenUnsatisfiable"),
                &json!(action),
                &["DoNotSchedule", "ScheduleAnyway"],
            ));
        }
        let repeated = list[i + 1..].iter().any(|o| {
            o.get("topologyKey")
                .and_then(Value::as_str)
                .unwrap_or_default()
                == key
                && o.get("whenUnsatisfiable")
                    .and_then(Value::as_str)
                    .unwrap_or_default()
                    == action
        });
        if repeated {
            out.push(Cause::duplicate(
                p.child("{topologyKey, whenUnsatisfiable}"),
                &json!(format!("{{{key}, {action}}}")),
            ));
        }
        if let Some(min) = c.get("minDomains").and_then(Value::as_i64) {
            if min <= 0 {
                out.push(Cause::invalid(
                    p.child("minDomains"),
                    &json!(min),
                    "must be greater than zero",
                ));
            }
            if action != "DoNotSchedule" {
                out.push(Cause::invalid(
                    p.child("minDomains"),
                    &json!(min),
                    format!(
                        "can only use minDomains if whenUnsatisfiable=DoNotSchedule, not {action}"
                    ),
                ));
            }
        }
        for key in ["nodeAffinityPolicy", "nodeTaintsPolicy"] {
            if let Some(policy) = c.get(key).and_then(Value::as_str)
                && !["Honor", "Ignore"].contains(&policy)
            {
                out.push(Cause::not_supported(
                    p.child(key),
                    &json!(policy),
                    &["Honor", "Ignore"],
                ));
            }
        }
        if let Some(sel) = c.get("labelSelector").filter(|s| !s.is_null()) {
            out.extend(validate_label_selector(sel, &p.child("labelSelector")));
        }
    }
}
