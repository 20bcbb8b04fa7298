//! RBAC validation (upstream `pkg/apis/rbac/validation/validation.go`:
//! `ValidatePolicyRule`, `ValidateRole`, `ValidateClusterRole`,
//! `ValidateRoleBinding(Update)`, `ValidateClusterRoleBinding(Update)`,
//! `ValidateRoleBindingSubject`).

use serde_json::{Map, Value, json};

use crate::Cause;
use crate::json::{arr, str_of};
use crate::names;
use crate::path::Path;
use crate::selector::validate_label_selector;

const GROUP: &str = "rbac.authorization.k8s.io";

/// `ValidatePolicyRule` over `rules`; namespaced roles may not name
/// non-resource URLs.
fn rules(obj: &Value, namespaced: bool, out: &mut Vec<Cause>) {
    let empty = Map::new();
    let obj = obj.as_object().unwrap_or(&empty);
    for (i, rule) in arr(obj, "rules").iter().enumerate() {
        let Some(rule) = rule.as_object() else {
            continue;
        };
        let p = Path::new("rules").index(i);
        if arr(rule, "verbs").is_empty() {
            out.push(Cause::required(
                p.child("verbs"),
                "verbs must contain at least one value",
            ));
        }
        let urls = arr(rule, "nonResourceURLs");
        if !urls.is_empty() {
            let value = Value::Array(urls.to_vec());
            if namespaced {
                out.push(Cause::invalid(
                    p.child("nonResourceURLs"),
                    &value,
                    "namespaced rules cannot apply to non-resource URLs",
                ));
            }
            if ["apiGroups", "resources", "resourceNames"]
                .iter()
                .any(|k| !arr(rule, k).is_empty())
            {
                out.push(Cause::invalid(
                    p.child("nonResourceURLs"),
                    &value,
                    "rules cannot apply to both regular resources and non-resource URLs",
                ));
            }
            continue;
        }
        if arr(rule, "apiGroups").is_empty() {
            out.push(Cause::required(
                p.child("apiGroups"),
                "resource rules must supply at least one api group",
            ));
        }
        if arr(rule, "resources").is_empty() {
            out.push(Cause::required(
                p.child("resources"),
                "resource rules must supply at least one resource",
            ));
        }
    }
}

pub(super) fn role(obj: &Value) -> Vec<Cause> {
    let mut out = Vec::new();
    rules(obj, true, &mut out);
    out
}

pub(super) fn cluster_role(obj: &Value) -> Vec<Cause> {
    let mut out = Vec::new();
    rules(obj, false, &mut out);
    if let Some(agg) = obj.get("aggregationRule").and_then(Value::as_object) {
        let p = Path::new("aggregationRule").child("clusterRoleSelectors");
        let selectors = arr(agg, "clusterRoleSelectors");
        if selectors.is_empty() {
            out.push(Cause::required(
                &p,
                "at least one clusterRoleSelector required if aggregationRule is non-nil",
            ));
        }
        for (i, sel) in selectors.iter().enumerate() {
            out.extend(validate_label_selector(sel, &p.index(i)));
        }
    }
    out
}

/// Upstream `path.IsValidPathSegmentName`, RBAC's name rule.
pub(super) fn path_segment(name: &str) -> Vec<String> {
    let mut out = Vec::new();
    if name == "." || name == ".." {
        out.push(format!("may not be '{name}'"));
    }
    if name.contains('/') {
        out.push("may not contain '/'".to_owned());
    }
    if name.contains('%') {
        out.push("may not contain '%'".to_owned());
    }
    out
}

/// A RoleBinding (`namespaced`) or ClusterRoleBinding; `old` on update.
pub(super) fn binding(obj: &Value, old: Option<&Value>, namespaced: bool) -> Vec<Cause> {
    let mut out = Vec::new();
    let empty = Map::new();
    let role_ref = obj
        .get("roleRef")
        .and_then(Value::as_object)
        .unwrap_or(&empty);
    let rp = Path::new("roleRef");
    let group = str_of(role_ref, "apiGroup");
    if group != GROUP {
        out.push(Cause::not_supported(
            rp.child("apiGroup"),
            &json!(group),
            &[GROUP],
        ));
    }
    let kind = str_of(role_ref, "kind");
    let kinds: &[&str] = if namespaced {
        &["Role", "ClusterRole"]
    } else {
        &["ClusterRole"]
    };
    if !kinds.contains(&kind) {
        out.push(Cause::not_supported(rp.child("kind"), &json!(kind), kinds));
    }
    let name = str_of(role_ref, "name");
    if name.is_empty() {
        out.push(Cause::required(rp.child("name"), ""));
    } else {
        for msg in path_segment(name) {
            out.push(Cause::invalid(rp.child("name"), &json!(name), msg));
        }
    }
    let empty_obj = Map::new();
    let obj_map = obj.as_object().unwrap_or(&empty_obj);
    for (i, s) in arr(obj_map, "subjects").iter().enumerate() {
        if let Some(s) = s.as_object() {
            subject(s, namespaced, &Path::new("subjects").index(i), &mut out);
        }
    }
    if let Some(old) = old {
        let old_ref = old
            .get("roleRef")
            .and_then(Value::as_object)
            .unwrap_or(&empty);
        let key = |m: &Map<String, Value>| {
            (
                str_of(m, "apiGroup").to_owned(),
                str_of(m, "kind").to_owned(),
                str_of(m, "name").to_owned(),
            )
        };
        if key(old_ref) != key(role_ref) {
            out.push(Cause::invalid_rendered(
                "roleRef",
                &format!(
                    "rbac.RoleRef{{APIGroup:{}, Kind:{}, Name:{}}}",
                    crate::quote(group),
                    crate::quote(kind),
                    crate::quote(name)
                ),
                "cannot change roleRef",
            ));
        }
    }
    out
}

/// `ValidateRoleBindingSubject`.
fn subject(s: &Map<String, Value>, namespaced: bool, path: &Path, out: &mut Vec<Cause>) {
    let name = str_of(s, "name");
    let group = str_of(s, "apiGroup");
    if name.is_empty() {
        out.push(Cause::required(path.child("name"), ""));
    }
    match str_of(s, "kind") {
        "ServiceAccount" => {
            if !name.is_empty() {
                for msg in names::dns1123_subdomain(name) {
                    out.push(Cause::invalid(path.child("name"), &json!(name), msg));
                }
            }
            if !group.is_empty() {
                out.push(Cause::not_supported(
                    path.child("apiGroup"),
                    &json!(group),
                    &[""],
                ));
            }
            if !namespaced && str_of(s, "namespace").is_empty() {
                out.push(Cause::required(path.child("namespace"), ""));
            }
        }
        "User" | "Group" => {
            if group != GROUP {
                out.push(Cause::not_supported(
                    path.child("apiGroup"),
                    &json!(group),
                    &[GROUP],
                ));
            }
        }
        other => out.push(Cause::not_supported(
            path.child("kind"),
            &json!(other),
            &["ServiceAccount", "User", "Group"],
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn strings(c: Vec<Cause>) -> Vec<String> {
        c.iter().map(ToString::to_string).collect()
    }

    #[test]
    fn policy_rules() {
        let r = json!({"rules": [
            {"apiGroups": [""], "resources": ["pods"], "verbs": ["get"]},
            {"apiGroups": [""], "resources": ["pods"]},
            {"verbs": ["get"], "nonResourceURLs": ["/healthz"]},
            {"verbs": ["get"]},
        ]});
        assert_eq!(
            strings(role(&r)),
            [
                "rules[1].verbs: Required value: verbs must contain at least one value",
                r#"rules[2].nonResourceURLs: Invalid value: []string{"/healthz"}: namespaced rules cannot apply to non-resource URLs"#,
                "rules[3].apiGroups: Required value: resource rules must supply at least one api group",
                "rules[3].resources: Required value: resource rules must supply at least one resource",
            ]
        );
        let cr = json!({"rules": [{"verbs": ["get"], "nonResourceURLs": ["/metrics"], "resourceNames": ["x"]}],
            "aggregationRule": {"clusterRoleSelectors": []}});
        assert_eq!(
            strings(cluster_role(&cr)),
            [
                r#"rules[0].nonResourceURLs: Invalid value: []string{"/metrics"}: rules cannot apply to both regular resources and non-resource URLs"#,
                "aggregationRule.clusterRoleSelectors: Required value: at least one clusterRoleSelector required if aggregationRule is non-nil",
            ]
        );
    }

    #[test]
    fn bindings() {
        let rb = json!({"roleRef": {"apiGroup": GROUP, "kind": "Role", "name": "r"},
            "subjects": [{"kind": "ServiceAccount", "name": "default", "apiGroup": ""},
                         {"kind": "User", "name": "alice", "apiGroup": GROUP}]});
        assert!(binding(&rb, None, true).is_empty());
        assert_eq!(
            strings(binding(&rb, None, false)),
            [
                r#"roleRef.kind: Unsupported value: "Role": supported values: "ClusterRole""#,
                "subjects[0].namespace: Required value",
            ]
        );
        let mut changed = rb.clone();
        changed["roleRef"]["name"] = json!("other");
        assert_eq!(
            strings(binding(&changed, Some(&rb), true)),
            [
                r#"roleRef: Invalid value: rbac.RoleRef{APIGroup:"rbac.authorization.k8s.io", Kind:"Role", Name:"other"}: cannot change roleRef"#
            ]
        );
        let bad = json!({"roleRef": {"apiGroup": "", "kind": "Role", "name": "a/b"},
            "subjects": [{"kind": "Robot", "name": ""}, {"kind": "User", "name": "bob", "apiGroup": ""}]});
        assert_eq!(
            strings(binding(&bad, None, true)),
            [
                r#"roleRef.apiGroup: Unsupported value: "": supported values: "rbac.authorization.k8s.io""#,
                r#"roleRef.name: Invalid value: "a/b": may not contain '/'"#,
                "subjects[0].name: Required value",
                r#"subjects[0].kind: Unsupported value: "Robot": supported values: "ServiceAccount", "User", "Group""#,
                r#"subjects[1].apiGroup: Unsupported value: "": supported values: "rbac.authorization.k8s.io""#,
            ]
        );
    }
}
