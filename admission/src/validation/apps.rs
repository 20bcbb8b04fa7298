//! apps/v1 validation (upstream `pkg/apis/apps/validation/validation.go`
//! and the apps/v1 immutable-selector rule in
//! `pkg/registry/apps/*/strategy.go`).

use serde_json::{Map, Value, json};

use super::{int_or_percent, int_or_percent_value, non_negative, pod, render_int_or_string};
use crate::Cause;
use crate::json::str_of;
use crate::names::IMMUTABLE_MSG;
use crate::path::Path;
use crate::selector::{
    label_selector_is_empty, label_selector_matches, render_label_selector, validate_label_selector,
};

fn spec(obj: &Value) -> Map<String, Value> {
    obj.get("spec")
        .and_then(Value::as_object)
        .cloned()
        .unwrap_or_default()
}

/// Selector required, strictly valid, not empty (`empty selector is invalid
/// for <kind>`).
fn required_selector(spec: &Map<String, Value>, kind: &str, path: &Path, out: &mut Vec<Cause>) {
    match spec.get("selector").filter(|s| !s.is_null()) {
        None => out.push(Cause::required(path.child("selector"), "")),
        Some(sel) => {
            out.extend(validate_label_selector(sel, &path.child("selector")));
            if label_selector_is_empty(sel) {
                out.push(Cause::invalid_rendered(
                    path.child("selector"),
                    &render_label_selector(sel),
                    format!("empty selector is invalid for {kind}"),
                ));
            }
        }
    }
}

/// `` `selector` does not match template `labels` `` unless the selector is
/// `{}` (which selects everything); a missing selector matches nothing.
fn selector_matches_template(spec: &Map<String, Value>, path: &Path, out: &mut Vec<Cause>) {
    let sel = spec.get("selector").filter(|s| !s.is_null());
    if sel.is_some_and(label_selector_is_empty) {
        return;
    }
    let labels = spec
        .get("template")
        .and_then(|t| t.pointer("/metadata/labels"))
        .and_then(Value::as_object)
        .cloned()
        .unwrap_or_default();
    if !label_selector_matches(sel, &labels) {
        out.push(Cause::invalid(
            path.child("template").child("metadata").child("labels"),
            &Value::Object(labels),
            "`selector` does not match template `labels`",
        ));
    }
}

/// Workload templates may only restart Always and have no deadline.
fn always_restart(spec: &Map<String, Value>, kind: &str, path: &Path, out: &mut Vec<Cause>) {
    let tspec = path.child("template").child("spec");
    let restart = spec
        .get("template")
        .and_then(|t| t.pointer("/spec/restartPolicy"))
        .and_then(Value::as_str)
        .unwrap_or_default();
    if !restart.is_empty() && restart != "Always" {
        out.push(Cause::not_supported(
            tspec.child("restartPolicy"),
            &json!(restart),
            &["Always"],
        ));
    }
    if spec
        .get("template")
        .and_then(|t| t.pointer("/spec/activeDeadlineSeconds"))
        .is_some_and(|v| !v.is_null())
    {
        out.push(Cause::forbidden(
            tspec.child("activeDeadlineSeconds"),
            format!("activeDeadlineSeconds in {kind} is not Supported"),
        ));
    }
}

/// apps/v1 selectors cannot change.
fn immutable_selector(obj: &Value, old: Option<&Value>, out: &mut Vec<Cause>) {
    let Some(old) = old else { return };
    let new_sel = obj
        .pointer("/spec/selector")
        .cloned()
        .unwrap_or(Value::Null);
    let old_sel = old
        .pointer("/spec/selector")
        .cloned()
        .unwrap_or(Value::Null);
    if normalize_selector(&new_sel) != normalize_selector(&old_sel) {
        out.push(Cause::invalid_rendered(
            "spec.selector",
            &render_label_selector(&new_sel),
            IMMUTABLE_MSG,
        ));
    }
}

/// Semantic equality: empty maps/lists equal absent ones.
fn normalize_selector(sel: &Value) -> Value {
    let mut out = serde_json::Map::new();
    for key in ["matchLabels", "matchExpressions"] {
        match sel.get(key) {
            Some(Value::Object(m)) if !m.is_empty() => {
                out.insert(key.into(), Value::Object(m.clone()));
            }
            Some(Value::Array(a)) if !a.is_empty() => {
                out.insert(key.into(), Value::Array(a.clone()));
            }
            _ => {}
        }
    }
    Value::Object(out)
}

fn revision_history(spec: &Map<String, Value>, path: &Path, out: &mut Vec<Cause>) {
    non_negative(
        spec.get("revisionHistoryLimit"),
        &path.child("revisionHistoryLimit"),
        out,
    );
}

pub(super) fn deployment(obj: &Value, old: Option<&Value>) -> Vec<Cause> {
    let mut out = Vec::new();
    let spec = spec(obj);
    let path = Path::new("spec");
    non_negative(spec.get("replicas"), &path.child("replicas"), &mut out);
    required_selector(&spec, "deployment", &path, &mut out);
    selector_matches_template(&spec, &path, &mut out);
    out.extend(pod::template(spec.get("template"), &path.child("template")));
    always_restart(&spec, "ReplicaSet", &path, &mut out);
    strategy(&spec, &path.child("strategy"), &mut out);
    non_negative(
        spec.get("minReadySeconds"),
        &path.child("minReadySeconds"),
        &mut out,
    );
    revision_history(&spec, &path, &mut out);
    if let Some(pds) = spec.get("progressDeadlineSeconds").and_then(Value::as_i64) {
        non_negative(
            spec.get("progressDeadlineSeconds"),
            &path.child("progressDeadlineSeconds"),
            &mut out,
        );
        let min_ready = spec
            .get("minReadySeconds")
            .and_then(Value::as_i64)
            .unwrap_or(0);
        if pds <= min_ready {
            out.push(Cause::invalid(
                path.child("progressDeadlineSeconds"),
                &json!(pds),
                "must be greater than minReadySeconds",
            ));
        }
    }
    immutable_selector(obj, old, &mut out);
    out
}

fn strategy(spec: &Map<String, Value>, path: &Path, out: &mut Vec<Cause>) {
    let Some(strategy) = spec.get("strategy").and_then(Value::as_object) else {
        return;
    };
    let ru = strategy.get("rollingUpdate").filter(|v| !v.is_null());
    match str_of(strategy, "type") {
        "Recreate" => {
            if ru.is_some() {
                out.push(Cause::forbidden(
                    path.child("rollingUpdate"),
                    "may not be specified when strategy `type` is 'Recreate'",
                ));
            }
        }
        "RollingUpdate" => match ru {
            None => out.push(Cause::required(
                path.child("rollingUpdate"),
                "this should be defaulted and never be nil",
            )),
            Some(ru) => {
                let p = path.child("rollingUpdate");
                let (mu, ms) = (ru.get("maxUnavailable"), ru.get("maxSurge"));
                int_or_percent(mu, &p.child("maxUnavailable"), out);
                int_or_percent(ms, &p.child("maxSurge"), out);
                if int_or_percent_value(mu) == 0 && int_or_percent_value(ms) == 0 {
                    out.push(Cause::invalid_rendered(
                        p.child("maxUnavailable"),
                        &render_int_or_string(mu.unwrap_or(&json!(0))),
                        "may not be 0 when `maxSurge` is 0",
                    ));
                }
            }
        },
        other => out.push(Cause::not_supported(
            path.clone(),
            &json!(other),
            &["Recreate", "RollingUpdate"],
        )),
    }
}

pub(super) fn replica_set(obj: &Value, old: Option<&Value>) -> Vec<Cause> {
    let mut out = Vec::new();
    let spec = spec(obj);
    let path = Path::new("spec");
    non_negative(spec.get("replicas"), &path.child("replicas"), &mut out);
    non_negative(
        spec.get("minReadySeconds"),
        &path.child("minReadySeconds"),
        &mut out,
    );
    required_selector(&spec, "deployment", &path, &mut out);
    selector_matches_template(&spec, &path, &mut out);
    out.extend(pod::template(spec.get("template"), &path.child("template")));
    always_restart(&spec, "ReplicaSet", &path, &mut out);
    immutable_selector(obj, old, &mut out);
    out
}

pub(super) fn stateful_set(obj: &Value, old: Option<&Value>) -> Vec<Cause> {
    let mut out = Vec::new();
    let spec = spec(obj);
    let path = Path::new("spec");
    let pmp = str_of(&spec, "podManagementPolicy");
    if !pmp.is_empty() && !["OrderedReady", "Parallel"].contains(&pmp) {
        out.push(Cause::invalid(
            path.child("podManagementPolicy"),
            &json!(pmp),
            "must be 'OrderedReady' or 'Parallel'",
        ));
    }
    if let Some(us) = spec.get("updateStrategy").and_then(Value::as_object) {
        let p = path.child("updateStrategy");
        match str_of(us, "type") {
            "OnDelete" => {
                if us.get("rollingUpdate").is_some_and(|v| !v.is_null()) {
                    out.push(Cause::invalid(
                        p.child("rollingUpdate"),
                        us.get("rollingUpdate").unwrap_or(&Value::Null),
                        "only allowed for updateStrategy 'RollingUpdate'",
                    ));
                }
            }
            "RollingUpdate" => {
                if let Some(ru) = us.get("rollingUpdate") {
                    non_negative(
                        ru.get("partition"),
                        &p.child("rollingUpdate").child("partition"),
                        &mut out,
                    );
                }
            }
            "" => out.push(Cause::required(p.clone(), "")),
            other => out.push(Cause::invalid(
                p.clone(),
                &json!(other),
                "must be 'RollingUpdate' or 'OnDelete'",
            )),
        }
    }
    if let Some(policy) = spec
        .get("persistentVolumeClaimRetentionPolicy")
        .and_then(Value::as_object)
    {
        let p = path.child("persistentVolumeClaimRetentionPolicy");
        for key in ["whenDeleted", "whenScaled"] {
            let v = str_of(policy, key);
            if !["Retain", "Delete"].contains(&v) {
                out.push(Cause::not_supported(
                    p.child(key),
                    &json!(v),
                    &["Retain", "Delete"],
                ));
            }
        }
    }
    non_negative(spec.get("replicas"), &path.child("replicas"), &mut out);
    non_negative(
        spec.get("minReadySeconds"),
        &path.child("minReadySeconds"),
        &mut out,
    );
    if let Some(ordinals) = spec.get("ordinals").and_then(Value::as_object) {
        // Upstream names this field `ordinals.start` as one path element.
        non_negative(
            ordinals.get("start"),
            &path.child("ordinals.start"),
            &mut out,
        );
    }
    required_selector(&spec, "statefulset", &path, &mut out);
    selector_matches_template(&spec, &path, &mut out);
    // Upstream ValidatePodTemplateSpecForStatefulSet checks the template's
    // labels and annotations but not its pod spec: a container may mount
    // one of the claim templates, which are volumes only once the
    // controller creates the Pods.
    if let Some(t) = spec.get("template").and_then(Value::as_object) {
        pod::template_labels(t, &path.child("template"), &mut out);
    }
    always_restart(&spec, "StatefulSet", &path, &mut out);
    if let Some(old) = old {
        // Upstream ValidateStatefulSetUpdate: only these fields may change.
        const MUTABLE: [&str; 7] = [
            "replicas",
            "ordinals",
            "template",
            "updateStrategy",
            "revisionHistoryLimit",
            "persistentVolumeClaimRetentionPolicy",
            "minReadySeconds",
        ];
        let strip = |v: &Value| {
            let mut m = v
                .get("spec")
                .and_then(Value::as_object)
                .cloned()
                .unwrap_or_default();
            for k in MUTABLE {
                m.remove(k);
            }
            m.retain(|_, v| !v.is_null());
            m
        };
        if strip(obj) != strip(old) {
            out.push(Cause::forbidden(
                "spec",
                "updates to statefulset spec for fields other than 'replicas', 'ordinals', 'template', 'updateStrategy', 'revisionHistoryLimit', 'persistentVolumeClaimRetentionPolicy' and 'minReadySeconds' are forbidden",
            ));
        }
    }
    out
}

pub(super) fn daemon_set(obj: &Value, old: Option<&Value>) -> Vec<Cause> {
    let mut out = Vec::new();
    let spec = spec(obj);
    let path = Path::new("spec");
    if let Some(sel) = spec.get("selector").filter(|s| !s.is_null()) {
        out.extend(validate_label_selector(sel, &path.child("selector")));
    }
    selector_matches_template(&spec, &path, &mut out);
    if let Some(sel) = spec.get("selector").filter(|s| !s.is_null())
        && label_selector_is_empty(sel)
    {
        out.push(Cause::invalid_rendered(
            path.child("selector"),
            &render_label_selector(sel),
            "empty selector is invalid for daemonset",
        ));
    }
    out.extend(pod::template(spec.get("template"), &path.child("template")));
    let restart = spec
        .get("template")
        .and_then(|t| t.pointer("/spec/restartPolicy"))
        .and_then(Value::as_str)
        .unwrap_or_default();
    if !restart.is_empty() && restart != "Always" {
        out.push(Cause::not_supported(
            path.child("template").child("spec").child("restartPolicy"),
            &json!(restart),
            &["Always"],
        ));
    }
    non_negative(
        spec.get("minReadySeconds"),
        &path.child("minReadySeconds"),
        &mut out,
    );
    if let Some(us) = spec.get("updateStrategy").and_then(Value::as_object) {
        let p = path.child("updateStrategy");
        match str_of(us, "type") {
            "OnDelete" => {}
            "RollingUpdate" => {
                if let Some(ru) = us.get("rollingUpdate") {
                    let rp = p.child("rollingUpdate");
                    let (mu, ms) = (ru.get("maxUnavailable"), ru.get("maxSurge"));
                    int_or_percent(mu, &rp.child("maxUnavailable"), &mut out);
                    int_or_percent(ms, &rp.child("maxSurge"), &mut out);
                    if int_or_percent_value(mu) == 0 && int_or_percent_value(ms) == 0 {
                        out.push(Cause::invalid_rendered(
                            rp.child("maxUnavailable"),
                            &render_int_or_string(mu.unwrap_or(&json!(0))),
                            "may not be 0 when `maxSurge` is 0",
                        ));
                    }
                }
            }
            other => out.push(Cause::not_supported(
                p.child("type"),
                &json!(other),
                &["OnDelete", "RollingUpdate"],
            )),
        }
    }
    revision_history(&spec, &path, &mut out);
    immutable_selector(obj, old, &mut out);
    out
}

/// A core/v1 ReplicationController (upstream
/// `ValidateReplicationControllerSpec`, `ValidatePodTemplateSpecForRC`):
/// a non-empty selector map matching the template labels, replicas, and
/// a pod template that restarts Always with no deadline.
pub(super) fn replication_controller(obj: &Value) -> Vec<Cause> {
    let mut out = Vec::new();
    let spec = spec(obj);
    let path = Path::new("spec");
    non_negative(
        spec.get("minReadySeconds"),
        &path.child("minReadySeconds"),
        &mut out,
    );
    let selector = spec
        .get("selector")
        .and_then(Value::as_object)
        .cloned()
        .unwrap_or_default();
    if selector.is_empty() {
        out.push(Cause::required(path.child("selector"), ""));
    }
    match spec.get("replicas").filter(|v| !v.is_null()) {
        None => out.push(Cause::required(path.child("replicas"), "")),
        Some(r) => non_negative(Some(r), &path.child("replicas"), &mut out),
    }
    let tp = path.child("template");
    let Some(template) = spec.get("template").and_then(Value::as_object) else {
        out.push(Cause::required(&tp, ""));
        return out;
    };
    let labels = template
        .get("metadata")
        .and_then(|m| m.get("labels"))
        .and_then(Value::as_object)
        .cloned()
        .unwrap_or_default();
    if !selector.is_empty() && selector.iter().any(|(k, v)| labels.get(k) != Some(v)) {
        out.push(Cause::invalid(
            tp.child("metadata").child("labels"),
            &Value::Object(labels),
            "`selector` does not match template `labels`",
        ));
    }
    out.extend(pod::template(spec.get("template"), &tp));
    let restart = template
        .get("spec")
        .and_then(|s| s.get("restartPolicy"))
        .and_then(Value::as_str)
        .unwrap_or_default();
    if restart != "Always" {
        out.push(Cause::not_supported(
            tp.child("spec").child("restartPolicy"),
            &json!(restart),
            &["Always"],
        ));
    }
    if template
        .get("spec")
        .and_then(|s| s.get("activeDeadlineSeconds"))
        .is_some_and(|v| !v.is_null())
    {
        out.push(Cause::forbidden(
            tp.child("spec").child("activeDeadlineSeconds"),
            "activeDeadlineSeconds in ReplicationController is not Supported",
        ));
    }
    out
}
