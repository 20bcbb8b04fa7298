//! The `api-approved.kubernetes.io` annotation protected groups need
//! (upstream `validateAPIApproval`, `apihelpers.GetAPIApprovalState`).

use serde_json::{Value, json};
use skein_admission::{Cause, quote};

use super::json::str_of;
use super::url;

/// The annotation a CRD in a protected group must carry.
pub const API_APPROVED_ANNOTATION: &str = "api-approved.kubernetes.io";

#[derive(Debug, PartialEq, Eq, Clone, Copy)]
enum State {
    Invalid,
    Approved,
    Bypassed,
    Missing,
}

/// `k8s.io`, `kubernetes.io` and their subdomains are the community's.
pub(crate) fn is_protected_group(group: &str) -> bool {
    group == "k8s.io"
        || group.ends_with(".k8s.io")
        || group == "kubernetes.io"
        || group.ends_with(".kubernetes.io")
}

fn annotation(crd: &Value) -> &str {
    crd.pointer("/metadata/annotations")
        .map(|a| str_of(a, API_APPROVED_ANNOTATION))
        .unwrap_or_default()
}

fn state(value: &str) -> (State, String) {
    let name = quote(API_APPROVED_ANNOTATION);
    if value.is_empty() {
        return (
            State::Missing,
            format!(
                "protected groups must have approval annotation {name}, see https://github.com/kubernetes/enhancements/pull/1111"
            ),
        );
    }
    if value.starts_with("unapproved") {
        return (State::Bypassed, format!("not approved: {}", quote(value)));
    }
    // url.ParseRequestURI: an absolute URL (or absolute path) without a fragment.
    let request_uri = !value.contains('#')
        && url::parse(value).is_ok_and(|u| !u.scheme.is_empty() && !u.host.is_empty());
    if request_uri {
        return (State::Approved, format!("approved in {value}"));
    }
    (
        State::Invalid,
        format!(
            "protected groups must have approval annotation {name} with either a URL or a reason starting with \"unapproved\", see https://github.com/kubernetes/enhancements/pull/1111"
        ),
    )
}

/// Problems of the approval annotation of `new` (and `old` on update: an
/// unchanged state is never refused).
pub(crate) fn validate_api_approval(new: &Value, old: Option<&Value>) -> Vec<Cause> {
    let group = new
        .pointer("/spec/group")
        .and_then(Value::as_str)
        .unwrap_or_default();
    if !is_protected_group(group) {
        return Vec::new();
    }
    let value = annotation(new);
    let (new_state, reason) = state(value);
    if let Some(old) = old
        && state(annotation(old)).0 == new_state
    {
        return Vec::new();
    }
    let path = format!("metadata.annotations[{API_APPROVED_ANNOTATION}]");
    match new_state {
        State::Approved | State::Bypassed => Vec::new(),
        State::Missing => vec![Cause::required(path, reason)],
        State::Invalid => vec![Cause::invalid(path, &json!(value), reason)],
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn crd(group: &str, approval: Option<&str>) -> Value {
        let mut c = json!({"metadata": {"annotations": {}}, "spec": {"group": group}});
        if let Some(a) = approval {
            c["metadata"]["annotations"][API_APPROVED_ANNOTATION] = json!(a);
        }
        c
    }

    // Upstream validation_test.go "protected group" cases.
    #[test]
    fn approval_states() {
        assert!(validate_api_approval(&crd("example.com", None), None).is_empty());
        let missing = validate_api_approval(&crd("sigs.k8s.io", None), None);
        assert_eq!(
            missing[0].to_string(),
            r#"metadata.annotations[api-approved.kubernetes.io]: Required value: protected groups must have approval annotation "api-approved.kubernetes.io", see https://github.com/kubernetes/enhancements/pull/1111"#
        );
        assert!(
            validate_api_approval(
                &crd(
                    "kubernetes.io",
                    Some("https://github.com/kubernetes/kubernetes/pull/78458")
                ),
                None
            )
            .is_empty()
        );
        assert!(
            validate_api_approval(&crd("x.k8s.io", Some("unapproved, experimental")), None)
                .is_empty()
        );
        let invalid = validate_api_approval(&crd("k8s.io", Some("yes")), None);
        assert!(invalid[0].to_string().starts_with(
            r#"metadata.annotations[api-approved.kubernetes.io]: Invalid value: "yes": protected groups must have approval annotation "api-approved.kubernetes.io" with either a URL"#
        ));
        // An update keeping the (missing) state is allowed.
        let old = crd("k8s.io", None);
        assert!(validate_api_approval(&crd("k8s.io", None), Some(&old)).is_empty());
    }
}
