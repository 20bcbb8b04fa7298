//! What a Pod update may change (upstream `ValidatePodUpdate`,
//! `ValidateContainerUpdates`, `validateOnlyAddedTolerations`,
//! `validateOnlyDeletedSchedulingGates`): container images, a lower
//! `activeDeadlineSeconds`, added tolerations, removed scheduling gates,
//! and a negative grace period raised to 1. Anything else is refused with
//! upstream's message and a diff of the two specs.

use serde_json::{Map, Value, json};

use crate::Cause;
use crate::json::arr;
use crate::path::Path;

/// Upstream's `updatablePodSpecFields`, joined with `,`.
pub(super) const UPDATABLE: &str = "pod updates may not change fields other than `spec.containers[*].image`,`spec.initContainers[*].image`,`spec.activeDeadlineSeconds`,`spec.tolerations` (only additions to existing tolerations),`spec.terminationGracePeriodSeconds` (allow it to be set to 1 if it was previously negative)";

/// Checks the update of `old` to `new` (both defaulted pod specs).
pub(super) fn update(
    new: &Map<String, Value>,
    old: &Map<String, Value>,
    path: &Path,
    out: &mut Vec<Cause>,
) {
    for key in ["containers", "initContainers"] {
        let (n, o) = (arr(new, key), arr(old, key));
        let p = path.child(key);
        if n.len() != o.len() {
            out.push(Cause::forbidden(
                p,
                "pod updates may not add or remove containers",
            ));
            return;
        }
        for (i, c) in n.iter().enumerate() {
            let image = c.get("image").and_then(Value::as_str).unwrap_or_default();
            if image.is_empty() {
                out.push(Cause::required(p.index(i).child("image"), ""));
            }
        }
    }
    let ads = path.child("activeDeadlineSeconds");
    let new_ads = new.get("activeDeadlineSeconds").and_then(Value::as_i64);
    let old_ads = old.get("activeDeadlineSeconds").and_then(Value::as_i64);
    match (new_ads, old_ads) {
        (Some(n), _) if !(0..=2_147_483_647).contains(&n) => {
            out.push(Cause::invalid(
                ads,
                &json!(n),
                "must be between 0 and 2147483647, inclusive",
            ));
            return;
        }
        (Some(n), Some(o)) if o < n => {
            out.push(Cause::invalid(
                ads,
                &json!(n),
                "must be less than or equal to previous value",
            ));
            return;
        }
        (None, Some(_)) => out.push(Cause::invalid(
            ads,
            &Value::Null,
            "must not update from a positive integer to nil value",
        )),
        _ => {}
    }
    only_added_tolerations(new, old, &path.child("tolerations"), out);
    only_deleted_gates(new, old, &path.child("schedulingGates"), out);

    let mut munged = new.clone();
    for key in ["containers", "initContainers"] {
        let olds = arr(old, key).to_vec();
        if let Some(list) = munged.get_mut(key).and_then(Value::as_array_mut) {
            for (c, o) in list.iter_mut().zip(&olds) {
                if let (Some(c), Some(image)) = (c.as_object_mut(), o.get("image")) {
                    c.insert("image".into(), image.clone());
                }
            }
        }
    }
    for key in ["activeDeadlineSeconds", "schedulingGates", "tolerations"] {
        match old.get(key) {
            Some(v) => munged.insert(key.into(), v.clone()),
            None => munged.remove(key),
        };
    }
    let old_grace = old
        .get("terminationGracePeriodSeconds")
        .and_then(Value::as_i64);
    let new_grace = munged
        .get("terminationGracePeriodSeconds")
        .and_then(Value::as_i64);
    if old_grace.is_some_and(|g| g < 0) && new_grace == Some(1) {
        munged.insert("terminationGracePeriodSeconds".into(), json!(old_grace));
    }
    let (a, b) = (
        semantic(&Value::Object(old.clone())),
        semantic(&Value::Object(munged)),
    );
    if a != b {
        let mut lines = Vec::new();
        diff("", &a, &b, &mut lines);
        out.push(Cause::forbidden(
            path,
            format!("{UPDATABLE}\n  core.PodSpec{{\n{}  }}\n", lines.concat()),
        ));
    }
}

/// `validateOnlyAddedTolerations`: each old toleration must still be there
/// (its `tolerationSeconds` may change).
fn only_added_tolerations(
    new: &Map<String, Value>,
    old: &Map<String, Value>,
    path: &Path,
    out: &mut Vec<Cause>,
) {
    let strip = |t: &Value| {
        let mut t = semantic(t);
        if let Some(m) = t.as_object_mut() {
            m.remove("tolerationSeconds");
        }
        t
    };
    let news: Vec<Value> = arr(new, "tolerations").iter().map(strip).collect();
    for o in arr(old, "tolerations") {
        if !news.contains(&strip(o)) {
            out.push(Cause::forbidden(
                path,
                "existing toleration can not be modified except its tolerationSeconds",
            ));
            return;
        }
    }
}

/// `validateOnlyDeletedSchedulingGates`.
fn only_deleted_gates(
    new: &Map<String, Value>,
    old: &Map<String, Value>,
    path: &Path,
    out: &mut Vec<Cause>,
) {
    let name = |g: &Value| {
        g.get("name")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_owned()
    };
    let olds: Vec<String> = arr(old, "schedulingGates").iter().map(name).collect();
    for (i, g) in arr(new, "schedulingGates").iter().enumerate() {
        let n = name(g);
        if !olds.contains(&n) {
            out.push(Cause::forbidden(
                path.index(i).child("name"),
                format!("only deletion is allowed, but found new scheduling gate '{n}'"),
            ));
        }
    }
}

/// Upstream's semantic equality treats absent, `null` and empty lists and
/// maps alike: drop them.
fn semantic(v: &Value) -> Value {
    match v {
        Value::Object(m) => Value::Object(
            m.iter()
                .map(|(k, v)| (k.clone(), semantic(v)))
                .filter(|(_, v)| !is_empty(v))
                .collect(),
        ),
        Value::Array(a) => Value::Array(a.iter().map(semantic).collect()),
        other => other.clone(),
    }
}

fn is_empty(v: &Value) -> bool {
    match v {
        Value::Null => true,
        Value::Array(a) => a.is_empty(),
        Value::Object(m) => m.is_empty(),
        _ => false,
    }
}

/// A line diff of two values in the style of go-cmp (`-` old, `+` new),
/// naming each changed field by its JSON path. Upstream prints the
/// internal Go types with go-cmp, whose output is deliberately unstable;
/// this keeps its shape and content, not its bytes.
fn diff(at: &str, a: &Value, b: &Value, out: &mut Vec<String>) {
    match (a, b) {
        (Value::Object(x), Value::Object(y)) => {
            let keys: std::collections::BTreeSet<&String> = x.keys().chain(y.keys()).collect();
            for k in keys {
                let p = if at.is_empty() {
                    k.clone()
                } else {
                    format!("{at}.{k}")
                };
                match (x.get(k), y.get(k)) {
                    (Some(l), Some(r)) if l != r => diff(&p, l, r, out),
                    (Some(l), None) => out.push(format!("- \t{p}: {l},\n")),
                    (None, Some(r)) => out.push(format!("+ \t{p}: {r},\n")),
                    _ => {}
                }
            }
        }
        (Value::Array(x), Value::Array(y)) if x.len() == y.len() => {
            for (i, (l, r)) in x.iter().zip(y).enumerate() {
                if l != r {
                    diff(&format!("{at}[{i}]"), l, r, out);
                }
            }
        }
        _ => {
            out.push(format!("- \t{at}: {a},\n"));
            out.push(format!("+ \t{at}: {b},\n"));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(v: Value) -> Map<String, Value> {
        v.as_object().cloned().unwrap_or_default()
    }

    fn run(new: Value, old: Value) -> Vec<String> {
        let mut out = Vec::new();
        update(&spec(new), &spec(old), &Path::new("spec"), &mut out);
        out.iter().map(ToString::to_string).collect()
    }

    #[test]
    fn images_deadlines_and_tolerations_may_change() {
        let old = json!({"containers": [{"name": "a", "image": "nginx:1"}],
            "tolerations": [{"key": "k", "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 300}]});
        let new = json!({"containers": [{"name": "a", "image": "nginx:2"}], "activeDeadlineSeconds": 30,
            "tolerations": [{"key": "k", "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 10},
                            {"key": "x", "operator": "Exists"}]});
        assert!(run(new, old).is_empty());
    }

    #[test]
    fn other_changes_are_forbidden_with_a_diff() {
        let old = json!({"containers": [{"name": "a", "image": "nginx", "resources": {}}]});
        let new = json!({"containers": [{"name": "a", "image": "nginx",
            "resources": {"limits": {"cpu": "1"}}}]});
        let got = run(new, old);
        assert_eq!(
            got,
            [format!(
                "spec: Forbidden: {UPDATABLE}\n  core.PodSpec{{\n+ \tcontainers[0].resources: {{\"limits\":{{\"cpu\":\"1\"}}}},\n  }}\n"
            )]
        );
        let old = json!({"containers": [{"name": "a", "image": "nginx"}]});
        let new =
            json!({"containers": [{"name": "a", "image": "nginx"}, {"name": "b", "image": "x"}]});
        assert_eq!(
            run(new, old),
            ["spec.containers: Forbidden: pod updates may not add or remove containers"]
        );
        let old = json!({"containers": [], "activeDeadlineSeconds": 10,
            "tolerations": [{"key": "k", "operator": "Exists"}]});
        let new = json!({"containers": [], "activeDeadlineSeconds": 20});
        assert_eq!(
            run(new, old),
            [
                "spec.activeDeadlineSeconds: Invalid value: 20: must be less than or equal to previous value"
            ]
        );
        let old = json!({"containers": [], "tolerations": [{"key": "k", "operator": "Exists"}]});
        let new = json!({"containers": [], "schedulingGates": [{"name": "g"}]});
        assert_eq!(
            run(new, old),
            [
                "spec.tolerations: Forbidden: existing toleration can not be modified except its tolerationSeconds",
                "spec.schedulingGates[0].name: Forbidden: only deletion is allowed, but found new scheduling gate 'g'",
            ]
        );
    }
}
