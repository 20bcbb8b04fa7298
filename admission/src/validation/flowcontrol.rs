//! FlowSchema and PriorityLevelConfiguration validation (upstream
//! `pkg/apis/flowcontrol/validation/validation.go`, v1 requests of
//! release 1.33: zero nominal shares allowed, lendable and borrowing
//! percents checked). Status conditions are not validated (the status
//! subresource keeps the stored spec). Not checked: that the mandatory
//! objects' spec equals the fixed value (upstream renders the whole Go
//! struct in that message); the server's ensurer puts it back instead.

use serde_json::{Value, json};

use crate::Cause;
use crate::names;
use crate::path::Path;

/// Upstream's `FlowSchemaMaxMatchingPrecedence`.
const MAX_PRECEDENCE: i64 = 10_000;

/// Upstream's `priorityLevelConfigurationQueuingMaxQueues`.
const MAX_QUEUES: i64 = 10_000_000;

/// Upstream's `shufflesharding.MaxHashBits`.
const MAX_HASH_BITS: f64 = 60.0;

/// Verbs a rule may name besides `*`, sorted as upstream lists them.
const VERBS: &[&str] = &[
    "create",
    "delete",
    "deletecollection",
    "get",
    "list",
    "patch",
    "proxy",
    "update",
    "watch",
];

const NS_INTRO: &str = "each member of this list must be '*' or a DNS-1123 label; ";

fn strings(v: Option<&Value>) -> Vec<String> {
    v.and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .map(str::to_owned)
        .collect()
}

fn has_wildcard(list: &[String]) -> bool {
    list.iter().any(|s| s == "*")
}

/// `ValidateFlowSchema` (without the metadata, which the registry checks).
pub(super) fn flow_schema(obj: &Value) -> Vec<Cause> {
    let mut out = Vec::new();
    let name = obj
        .pointer("/metadata/name")
        .and_then(Value::as_str)
        .unwrap_or_default();
    let spec = obj.get("spec").unwrap_or(&Value::Null);
    let path = Path::new("spec");
    let precedence = spec
        .get("matchingPrecedence")
        .and_then(Value::as_i64)
        .unwrap_or(0);
    let pp = path.child("matchingPrecedence");
    if precedence <= 0 {
        out.push(Cause::invalid(
            &pp,
            &json!(precedence),
            "must be a positive value",
        ));
    }
    if precedence > MAX_PRECEDENCE {
        out.push(Cause::invalid(
            &pp,
            &json!(precedence),
            format!("must not be greater than {MAX_PRECEDENCE}"),
        ));
    }
    if precedence == 1 && name != "exempt" {
        out.push(Cause::invalid(
            &pp,
            &json!(precedence),
            "only the schema named 'exempt' may have matchingPrecedence 1",
        ));
    }
    if let Some(dm) = spec.get("distinguisherMethod").filter(|v| !v.is_null()) {
        let t = dm.get("type").and_then(Value::as_str).unwrap_or_default();
        if t != "ByNamespace" && t != "ByUser" {
            out.push(Cause::not_supported(
                path.child("distinguisherMethod").child("type"),
                &json!(t),
                &["ByNamespace", "ByUser"],
            ));
        }
    }
    let level = spec
        .pointer("/priorityLevelConfiguration/name")
        .and_then(Value::as_str)
        .unwrap_or_default();
    let lp = path.child("priorityLevelConfiguration").child("name");
    if level.is_empty() {
        out.push(Cause::required(&lp, "must reference a priority level"));
    } else {
        for msg in names::dns1123_subdomain(level) {
            out.push(Cause::invalid(&lp, &json!(level), msg));
        }
    }
    let rules = spec
        .get("rules")
        .and_then(Value::as_array)
        .into_iter()
        .flatten();
    for (i, rule) in rules.enumerate() {
        policy_rules(rule, &path.child("rules").index(i), &mut out);
    }
    out
}

fn policy_rules(rule: &Value, path: &Path, out: &mut Vec<Cause>) {
    let list = |k: &str| {
        rule.get(k)
            .and_then(Value::as_array)
            .cloned()
            .unwrap_or_default()
    };
    let subjects = list("subjects");
    if subjects.is_empty() {
        out.push(Cause::required(
            path.child("subjects"),
            "subjects must contain at least one value",
        ));
    }
    for (i, s) in subjects.iter().enumerate() {
        subject(s, &path.child("subjects").index(i), out);
    }
    let (resources, non_resources) = (list("resourceRules"), list("nonResourceRules"));
    if resources.is_empty() && non_resources.is_empty() {
        out.push(Cause::required(
            path,
            "at least one of resourceRules and nonResourceRules has to be non-empty",
        ));
    }
    for (i, r) in resources.iter().enumerate() {
        resource_rule(r, &path.child("resourceRules").index(i), out);
    }
    for (i, r) in non_resources.iter().enumerate() {
        non_resource_rule(r, &path.child("nonResourceRules").index(i), out);
    }
}

fn subject(s: &Value, path: &Path, out: &mut Vec<Cause>) {
    let present = |k: &str| s.get(k).is_some_and(|v| !v.is_null());
    let kind = s.get("kind").and_then(Value::as_str).unwrap_or_default();
    let (own, others): (&str, &[(&str, &str)]) = match kind {
        "ServiceAccount" => (
            "serviceAccount",
            &[
                ("user", "user is forbidden when subject kind is not 'User'"),
                (
                    "group",
                    "group is forbidden when subject kind is not 'Group'",
                ),
            ],
        ),
        "User" => (
            "user",
            &[
                (
                    "serviceAccount",
                    "serviceAccount is forbidden when subject kind is not 'ServiceAccount'",
                ),
                (
                    "group",
                    "group is forbidden when subject kind is not 'Group'",
                ),
            ],
        ),
        "Group" => (
            "group",
            &[
                (
                    "serviceAccount",
                    "serviceAccount is forbidden when subject kind is not 'ServiceAccount'",
                ),
                ("user", "user is forbidden when subject kind is not 'User'"),
            ],
        ),
        _ => {
            out.push(Cause::not_supported(
                path.child("kind"),
                &json!(kind),
                &["Group", "ServiceAccount", "User"],
            ));
            return;
        }
    };
    let op = path.child(own);
    match s.get(own).filter(|v| !v.is_null()) {
        None => out.push(Cause::required(
            &op,
            format!("{own} is required when subject kind is '{kind}'"),
        )),
        Some(v) => {
            let name = v.get("name").and_then(Value::as_str).unwrap_or_default();
            if name.is_empty() {
                out.push(Cause::required(op.child("name"), ""));
            } else if kind == "ServiceAccount" && name != "*" {
                for msg in names::dns1123_subdomain(name) {
                    out.push(Cause::invalid(op.child("name"), &json!(name), msg));
                }
            }
            if kind == "ServiceAccount" {
                let ns = v
                    .get("namespace")
                    .and_then(Value::as_str)
                    .unwrap_or_default();
                if ns.is_empty() {
                    out.push(Cause::required(
                        op.child("namespace"),
                        "must specify namespace for service account",
                    ));
                } else {
                    for msg in names::dns1123_label(ns) {
                        out.push(Cause::invalid(op.child("namespace"), &json!(ns), msg));
                    }
                }
            }
        }
    }
    for (key, msg) in others {
        if present(key) {
            out.push(Cause::forbidden(path.child(key), msg));
        }
    }
}

/// The verbs of a rule: required, `*` alone, or supported ones.
fn verbs(rule: &Value, path: &Path, out: &mut Vec<Cause>) {
    let verbs = strings(rule.get("verbs"));
    let vp = path.child("verbs");
    if verbs.is_empty() {
        out.push(Cause::required(
            &vp,
            "verbs must contain at least one value",
        ));
    } else if has_wildcard(&verbs) {
        if verbs.len() > 1 {
            out.push(Cause::invalid(
                &vp,
                &json!(verbs),
                "if '*' is present, must not specify other verbs",
            ));
        }
    } else if !verbs.iter().all(|v| VERBS.contains(&v.as_str())) {
        out.push(Cause::not_supported(&vp, &json!(verbs), VERBS));
    }
}

fn resource_rule(rule: &Value, path: &Path, out: &mut Vec<Cause>) {
    verbs(rule, path, out);
    for (key, what) in [("apiGroups", "api group"), ("resources", "resource")] {
        let list = strings(rule.get(key));
        if list.is_empty() {
            out.push(Cause::required(
                path.child(key),
                format!("resource rules must supply at least one {what}"),
            ));
        } else if list.len() > 1 && has_wildcard(&list) {
            out.push(Cause::invalid(
                path.child(key),
                &json!(list),
                format!("if '*' is present, must not specify other {what}s"),
            ));
        }
    }
    let namespaces = strings(rule.get("namespaces"));
    let cluster = rule.get("clusterScope").and_then(Value::as_bool) == Some(true);
    let np = path.child("namespaces");
    if namespaces.is_empty() && !cluster {
        out.push(Cause::required(
            &np,
            "resource rules that are not cluster scoped must supply at least one namespace",
        ));
    } else if has_wildcard(&namespaces) {
        if namespaces.len() > 1 {
            out.push(Cause::invalid(
                &np,
                &json!(namespaces),
                "if '*' is present, must not specify other namespaces",
            ));
        }
    } else {
        for (i, ns) in namespaces.iter().enumerate() {
            for msg in names::dns1123_label(ns) {
                out.push(Cause::invalid(
                    np.index(i),
                    &json!(ns),
                    format!("{NS_INTRO}{msg}"),
                ));
            }
        }
    }
}

fn non_resource_rule(rule: &Value, path: &Path, out: &mut Vec<Cause>) {
    verbs(rule, path, out);
    let urls = strings(rule.get("nonResourceURLs"));
    let up = path.child("nonResourceURLs");
    if urls.is_empty() {
        out.push(Cause::required(
            &up,
            "nonResourceURLs must contain at least one value",
        ));
    } else if has_wildcard(&urls) {
        if urls.len() > 1 {
            out.push(Cause::invalid(
                &up,
                &json!(urls),
                "if '*' is present, must not specify other non-resource URLs",
            ));
        }
    } else {
        for (i, url) in urls.iter().enumerate() {
            if let Some(msg) = url_path(url) {
                out.push(Cause::invalid(up.index(i), &json!(url), msg));
            }
        }
    }
}

/// `ValidateNonResourceURLPath`.
fn url_path(path: &str) -> Option<&'static str> {
    if path.is_empty() {
        return Some("must not be empty");
    }
    if path == "/" {
        return None;
    }
    if !path.starts_with('/') {
        return Some("must start with slash");
    }
    if path.contains(' ') {
        return Some("must not contain white-space");
    }
    if path.contains("//") {
        return Some("must not contain double slash");
    }
    let wildcards = path.matches('*').count();
    if wildcards > 1 || (wildcards == 1 && !path.ends_with("/*")) {
        return Some("wildcard can only do suffix matching");
    }
    None
}

/// `ValidatePriorityLevelConfiguration` (without the metadata).
pub(super) fn priority_level(obj: &Value) -> Vec<Cause> {
    let mut out = Vec::new();
    let name = obj
        .pointer("/metadata/name")
        .and_then(Value::as_str)
        .unwrap_or_default();
    let spec = obj.get("spec").unwrap_or(&Value::Null);
    let path = Path::new("spec");
    let t = spec.get("type").and_then(Value::as_str).unwrap_or_default();
    if (name == "exempt") != (t == "Exempt") {
        out.push(Cause::invalid(
            path.child("type"),
            &json!(t),
            "type must be 'Exempt' if and only if name is 'exempt'",
        ));
    }
    let present = |k: &str| spec.get(k).filter(|v| !v.is_null());
    match t {
        "Exempt" => {
            if present("limited").is_some() {
                out.push(Cause::forbidden(
                    path.child("limited"),
                    "must be nil if the type is not Limited",
                ));
            }
            if let Some(e) = present("exempt") {
                shares_and_lending(e, &path.child("exempt"), &mut out);
            }
        }
        "Limited" => {
            if present("exempt").is_some() {
                out.push(Cause::forbidden(
                    path.child("exempt"),
                    "must be nil if the type is Limited",
                ));
            }
            match present("limited") {
                None => out.push(Cause::required(
                    path.child("limited"),
                    "must not be empty when type is Limited",
                )),
                Some(l) => limited(l, &path.child("limited"), &mut out),
            }
        }
        _ => out.push(Cause::not_supported(
            path.child("type"),
            &json!(t),
            &["Exempt", "Limited"],
        )),
    }
    out
}

fn shares_and_lending(v: &Value, path: &Path, out: &mut Vec<Cause>) {
    if let Some(n) = v.get("nominalConcurrencyShares").and_then(Value::as_i64)
        && n < 0
    {
        out.push(Cause::invalid(
            path.child("nominalConcurrencyShares"),
            &json!(n),
            "must be a non-negative integer",
        ));
    }
    if let Some(p) = v.get("lendablePercent").and_then(Value::as_i64)
        && !(0..=100).contains(&p)
    {
        out.push(Cause::invalid(
            path.child("lendablePercent"),
            &json!(p),
            "must be between 0 and 100, inclusive",
        ));
    }
}

fn limited(l: &Value, path: &Path, out: &mut Vec<Cause>) {
    shares_and_lending(l, path, out);
    let response = l.get("limitResponse").unwrap_or(&Value::Null);
    let rp = path.child("limitResponse");
    let queuing = response.get("queuing").filter(|v| !v.is_null());
    match response
        .get("type")
        .and_then(Value::as_str)
        .unwrap_or_default()
    {
        "Reject" => {
            if queuing.is_some() {
                out.push(Cause::forbidden(
                    rp.child("queuing"),
                    "must be nil if limited.limitResponse.type is not Limited",
                ));
            }
        }
        "Queue" => match queuing {
            None => out.push(Cause::required(
                rp.child("queuing"),
                "must not be empty if limited.limitResponse.type is Limited",
            )),
            Some(q) => queuing_config(q, &rp.child("queuing"), out),
        },
        other => out.push(Cause::not_supported(
            rp.child("type"),
            &json!(other),
            &["Queue", "Reject"],
        )),
    }
    if let Some(p) = l.get("borrowingLimitPercent").and_then(Value::as_i64)
        && p < 0
    {
        out.push(Cause::invalid(
            path.child("borrowingLimitPercent"),
            &json!(p),
            "if specified, must be a non-negative integer",
        ));
    }
}

fn queuing_config(q: &Value, path: &Path, out: &mut Vec<Cause>) {
    let n = |k: &str| q.get(k).and_then(Value::as_i64).unwrap_or(0);
    let (length, queues, hand) = (n("queueLengthLimit"), n("queues"), n("handSize"));
    if length <= 0 {
        out.push(Cause::invalid(
            path.child("queueLengthLimit"),
            &json!(length),
            "must be positive",
        ));
    }
    if queues <= 0 {
        out.push(Cause::invalid(
            path.child("queues"),
            &json!(queues),
            "must be positive",
        ));
    } else if queues > MAX_QUEUES {
        out.push(Cause::invalid(
            path.child("queues"),
            &json!(queues),
            format!("must not be greater than {MAX_QUEUES}"),
        ));
    }
    let hp = path.child("handSize");
    if hand <= 0 {
        out.push(Cause::invalid(&hp, &json!(hand), "must be positive"));
    } else if hand > queues {
        out.push(Cause::invalid(
            &hp,
            &json!(hand),
            format!("should not be greater than queues ({queues})"),
        ));
    } else if ((queues as f64).log2() * hand as f64).ceil() > MAX_HASH_BITS {
        out.push(Cause::invalid(
            &hp,
            &json!(hand),
            format!(
                "required entropy bits of deckSize {queues} and handSize {hand} should not be greater than {MAX_HASH_BITS}"
            ),
        ));
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn messages(causes: &[Cause]) -> Vec<String> {
        causes
            .iter()
            .map(|c| format!("{}: {}", c.field, c.message))
            .collect()
    }

    #[test]
    fn flow_schema_errors_read_as_upstream() {
        let fs = json!({"metadata": {"name": "x"}, "spec": {
            "matchingPrecedence": 1,
            "distinguisherMethod": {"type": "ByColor"},
            "priorityLevelConfiguration": {"name": ""},
            "rules": [
                {"subjects": [], "resourceRules": [{"verbs": ["*", "get"], "apiGroups": [], "resources": ["*", "pods"], "namespaces": ["Bad"]}]},
                {"subjects": [{"kind": "Robot"}, {"kind": "User", "group": {"name": "g"}}],
                 "nonResourceRules": [{"verbs": ["fly"], "nonResourceURLs": ["healthz", "/a/*/b"]}]},
                {"subjects": [{"kind": "ServiceAccount", "serviceAccount": {"name": "*"}}]},
            ],
        }});
        assert_eq!(
            messages(&flow_schema(&fs)),
            [
                "spec.matchingPrecedence: Invalid value: 1: only the schema named 'exempt' may have matchingPrecedence 1",
                "spec.distinguisherMethod.type: Unsupported value: \"ByColor\": supported values: \"ByNamespace\", \"ByUser\"",
                "spec.priorityLevelConfiguration.name: Required value: must reference a priority level",
                "spec.rules[0].subjects: Required value: subjects must contain at least one value",
                "spec.rules[0].resourceRules[0].verbs: Invalid value: []string{\"*\", \"get\"}: if '*' is present, must not specify other verbs",
                "spec.rules[0].resourceRules[0].apiGroups: Required value: resource rules must supply at least one api group",
                "spec.rules[0].resourceRules[0].resources: Invalid value: []string{\"*\", \"pods\"}: if '*' is present, must not specify other resources",
                "spec.rules[0].resourceRules[0].namespaces[0]: Invalid value: \"Bad\": each member of this list must be '*' or a DNS-1123 label; a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')",
                "spec.rules[1].subjects[0].kind: Unsupported value: \"Robot\": supported values: \"Group\", \"ServiceAccount\", \"User\"",
                "spec.rules[1].subjects[1].user: Required value: user is required when subject kind is 'User'",
                "spec.rules[1].subjects[1].group: Forbidden: group is forbidden when subject kind is not 'Group'",
                "spec.rules[1].nonResourceRules[0].verbs: Unsupported value: []string{\"fly\"}: supported values: \"create\", \"delete\", \"deletecollection\", \"get\", \"list\", \"patch\", \"proxy\", \"update\", \"watch\"",
                "spec.rules[1].nonResourceRules[0].nonResourceURLs[0]: Invalid value: \"healthz\": must start with slash",
                "spec.rules[1].nonResourceRules[0].nonResourceURLs[1]: Invalid value: \"/a/*/b\": wildcard can only do suffix matching",
                "spec.rules[2].subjects[0].serviceAccount.namespace: Required value: must specify namespace for service account",
                "spec.rules[2]: Required value: at least one of resourceRules and nonResourceRules has to be non-empty",
            ]
        );
    }

    #[test]
    fn priority_level_errors_read_as_upstream() {
        let pl = json!({"metadata": {"name": "p"}, "spec": {"type": "Limited", "exempt": {}, "limited": {
            "nominalConcurrencyShares": -1, "lendablePercent": 101, "borrowingLimitPercent": -5,
            "limitResponse": {"type": "Queue", "queuing": {"queues": 4, "handSize": 5, "queueLengthLimit": 0}}}}});
        assert_eq!(
            messages(&priority_level(&pl)),
            [
                "spec.exempt: Forbidden: must be nil if the type is Limited",
                "spec.limited.nominalConcurrencyShares: Invalid value: -1: must be a non-negative integer",
                "spec.limited.lendablePercent: Invalid value: 101: must be between 0 and 100, inclusive",
                "spec.limited.limitResponse.queuing.queueLengthLimit: Invalid value: 0: must be positive",
                "spec.limited.limitResponse.queuing.handSize: Invalid value: 5: should not be greater than queues (4)",
                "spec.limited.borrowingLimitPercent: Invalid value: -5: if specified, must be a non-negative integer",
            ]
        );
        let exempt_named_wrong = json!({"metadata": {"name": "exempt"}, "spec": {"type": "Limited", "limited": {
            "nominalConcurrencyShares": 1, "limitResponse": {"type": "Reject", "queuing": {"queues": 1}}}}});
        assert_eq!(
            messages(&priority_level(&exempt_named_wrong)),
            [
                "spec.type: Invalid value: \"Limited\": type must be 'Exempt' if and only if name is 'exempt'",
                "spec.limited.limitResponse.queuing: Forbidden: must be nil if limited.limitResponse.type is not Limited",
            ]
        );
        let entropy = json!({"metadata": {"name": "p"}, "spec": {"type": "Limited", "limited": {
            "limitResponse": {"type": "Queue", "queuing": {"queues": 1024, "handSize": 7, "queueLengthLimit": 1}}}}});
        assert_eq!(
            messages(&priority_level(&entropy)),
            [
                "spec.limited.limitResponse.queuing.handSize: Invalid value: 7: required entropy bits of deckSize 1024 and handSize 7 should not be greater than 60"
            ]
        );
    }

    #[test]
    fn the_defaults_are_valid() {
        let fs = json!({"metadata": {"name": "probes"}, "spec": {"matchingPrecedence": 2,
            "priorityLevelConfiguration": {"name": "exempt"},
            "rules": [{"subjects": [{"kind": "Group", "group": {"name": "system:authenticated"}}],
                       "nonResourceRules": [{"verbs": ["get"], "nonResourceURLs": ["/healthz", "/readyz", "/livez"]}]}]}});
        assert!(flow_schema(&fs).is_empty());
        let sa = json!({"metadata": {"name": "s"}, "spec": {"matchingPrecedence": 900,
            "distinguisherMethod": {"type": "ByNamespace"},
            "priorityLevelConfiguration": {"name": "workload-high"},
            "rules": [{"subjects": [{"kind": "ServiceAccount", "serviceAccount": {"namespace": "kube-system", "name": "*"}}],
                       "resourceRules": [{"verbs": ["*"], "apiGroups": ["*"], "resources": ["*"], "namespaces": ["*"], "clusterScope": true}]}]}});
        assert!(flow_schema(&sa).is_empty());
    }
}
