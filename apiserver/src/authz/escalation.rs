//! Escalation prevention, as upstream's RBAC storage does it: nobody
//! grants permissions they do not hold.
//!
//! - Creating or updating a Role or ClusterRole needs every one of its
//!   rules to be covered by the author's own rules in that namespace
//!   (cluster-wide for ClusterRoles), or the `escalate` verb on it; an
//!   `aggregationRule` needs full authority.
//! - Creating or updating a RoleBinding or ClusterRoleBinding needs the
//!   `bind` verb on the referenced role, or holding every rule of it.
//! - `system:masters` skip both; an update that changes neither rules nor
//!   the aggregation rule (roles) nor roleRef and subjects (bindings) is
//!   not checked (upstream's "only mutating GC fields" shortcut, widened).
//!
//! [`Escalation`] is an admission validator; writes without a user (the
//! server's own controllers) are not checked.

use std::collections::BTreeMap;

use serde_json::Value;
use skein_admission::{Attributes as Admitted, Denial, Operation, UserInfo, Validate};

use super::rbac::{Rule, go_quote, go_quote_list, non_resource_url_covers};
use super::{Attributes, Authorizer, MASTERS};

const RBAC: &str = "rbac.authorization.k8s.io";

/// Upstream's `Covers`: the parts of `servant` (broken down to one verb,
/// group, resource and name each) that no rule of `owner` covers.
pub fn uncovered(owner: &[Rule], servant: &[Rule]) -> Vec<Rule> {
    servant
        .iter()
        .flat_map(breakdown)
        .filter(|sub| !owner.iter().any(|o| covers(o, sub)))
        .collect()
}

/// Upstream's `BreakdownRule`.
fn breakdown(rule: &Rule) -> Vec<Rule> {
    let one = |s: &String| vec![s.clone()];
    let mut out = Vec::new();
    for group in &rule.api_groups {
        for resource in &rule.resources {
            for verb in &rule.verbs {
                let base = Rule {
                    verbs: one(verb),
                    api_groups: one(group),
                    resources: one(resource),
                    ..Rule::default()
                };
                if rule.resource_names.is_empty() {
                    out.push(base);
                } else {
                    for name in &rule.resource_names {
                        out.push(Rule {
                            resource_names: one(name),
                            ..base.clone()
                        });
                    }
                }
            }
        }
    }
    for url in &rule.non_resource_urls {
        for verb in &rule.verbs {
            out.push(Rule {
                verbs: one(verb),
                non_resource_urls: one(url),
                ..Rule::default()
            });
        }
    }
    out
}

fn has(set: &[String], s: &str) -> bool {
    set.iter().any(|x| x == s)
}

fn has_all(set: &[String], want: &[String]) -> bool {
    want.iter().all(|w| has(set, w))
}

/// Upstream's `ruleCovers` for a broken-down `sub`.
fn covers(owner: &Rule, sub: &Rule) -> bool {
    let verbs = has(&owner.verbs, "*") || has_all(&owner.verbs, &sub.verbs);
    let groups = has(&owner.api_groups, "*") || has_all(&owner.api_groups, &sub.api_groups);
    let resources = has(&owner.resources, "*")
        || has_all(&owner.resources, &sub.resources)
        || sub.resources.iter().all(|r| {
            has(&owner.resources, r)
                || r.split_once('/')
                    .is_some_and(|(_, s)| has(&owner.resources, &format!("*/{s}")))
        });
    let urls = sub.non_resource_urls.iter().all(|u| {
        owner
            .non_resource_urls
            .iter()
            .any(|o| non_resource_url_covers(o, u))
    });
    let names = owner.resource_names.is_empty()
        || (!sub.resource_names.is_empty() && has_all(&owner.resource_names, &sub.resource_names));
    verbs && groups && resources && names && urls
}

/// Upstream's `CompactRules` then `CompactString`, sorted: one line per
/// missing permission, verbs of one group/resource(/name) merged.
pub fn describe_missing(missing: &[Rule]) -> Vec<String> {
    let mut simple: BTreeMap<(String, String, Option<String>), Rule> = BTreeMap::new();
    let mut lines = Vec::new();
    for r in missing {
        let is_simple = r.resource_names.len() <= 1
            && r.non_resource_urls.is_empty()
            && r.api_groups.len() == 1
            && r.resources.len() == 1;
        if is_simple {
            let key = (
                r.api_groups[0].clone(),
                r.resources[0].clone(),
                r.resource_names.first().cloned(),
            );
            let entry = simple.entry(key).or_insert_with(|| Rule {
                verbs: Vec::new(),
                ..r.clone()
            });
            for v in &r.verbs {
                if !entry.verbs.contains(v) {
                    entry.verbs.push(v.clone());
                }
            }
        } else {
            lines.push(compact_string(r));
        }
    }
    lines.extend(simple.values().map(compact_string));
    lines.sort();
    lines.dedup();
    lines
}

/// Upstream's `CompactString`.
fn compact_string(r: &Rule) -> String {
    let mut parts = Vec::new();
    for (label, list) in [
        ("APIGroups", &r.api_groups),
        ("Resources", &r.resources),
        ("NonResourceURLs", &r.non_resource_urls),
        ("ResourceNames", &r.resource_names),
        ("Verbs", &r.verbs),
    ] {
        if !list.is_empty() {
            parts.push(format!("{label}:{}", go_quote_list(list)));
        }
    }
    format!("{{{}}}", parts.join(", "))
}

/// The admission validator (see the module documentation).
#[derive(Debug)]
pub struct Escalation {
    authorizer: Authorizer,
}

impl Escalation {
    /// A validator asking `authorizer`.
    pub fn new(authorizer: Authorizer) -> Escalation {
        Escalation { authorizer }
    }

    fn allowed(&self, user: &UserInfo, verb: &str, resource: &str, name: &str, ns: &str) -> bool {
        self.authorizer
            .authorize(&Attributes {
                user: user.clone(),
                verb: verb.into(),
                resource_request: true,
                api_group: RBAC.into(),
                api_version: "v1".into(),
                resource: resource.into(),
                namespace: ns.into(),
                name: name.into(),
                ..Attributes::default()
            })
            .allowed
    }

    /// Upstream's `ConfirmNoEscalation`.
    fn confirm(&self, user: &UserInfo, ns: &str, rules: &[Rule]) -> Result<(), Denial> {
        let (owner, errors) = self.authorizer.rules_for(user, ns);
        let missing = uncovered(&owner, rules);
        if missing.is_empty() {
            return Ok(());
        }
        let mut msg = format!(
            "user {} (groups={}) is attempting to grant RBAC permissions not currently held:\n{}",
            go_quote(&user.name),
            go_quote_list(&user.groups),
            describe_missing(&missing).join("\n")
        );
        if !errors.is_empty() {
            msg.push_str(&format!("; resolution errors: [{}]", errors.join(" ")));
        }
        Err(Denial::forbidden(self.name(), msg))
    }

    fn check_role(&self, attrs: &Admitted, obj: &Value, ns: &str) -> Result<(), Denial> {
        let user = &attrs.user;
        let rules = Rule::list_from(obj);
        let aggregation = obj.get("aggregationRule").filter(|a| !a.is_null());
        if let Some(old) = &attrs.old_object
            && Rule::list_from(old) == rules
            && old.get("aggregationRule").filter(|a| !a.is_null()) == aggregation
        {
            return Ok(());
        }
        if self.allowed(user, "escalate", &attrs.gvr.resource, &attrs.name, ns) {
            return Ok(());
        }
        self.confirm(user, ns, &rules)?;
        if aggregation.is_some() {
            let all = vec!["*".to_string()];
            let full = [
                Rule {
                    verbs: all.clone(),
                    api_groups: all.clone(),
                    resources: all.clone(),
                    ..Rule::default()
                },
                Rule {
                    verbs: all.clone(),
                    non_resource_urls: all,
                    ..Rule::default()
                },
            ];
            if self.confirm(user, ns, &full).is_err() {
                return Err(Denial::forbidden(
                    self.name(),
                    "must have cluster-admin privileges to use the aggregationRule",
                ));
            }
        }
        Ok(())
    }

    fn check_binding(&self, attrs: &Admitted, obj: &Value, ns: &str) -> Result<(), Denial> {
        let user = &attrs.user;
        let role_ref = |o: &Value, f: &str| {
            o.pointer(&format!("/roleRef/{f}"))
                .and_then(Value::as_str)
                .unwrap_or("")
                .to_string()
        };
        if let Some(old) = &attrs.old_object
            && old.get("roleRef") == obj.get("roleRef")
            && old.get("subjects") == obj.get("subjects")
        {
            return Ok(());
        }
        let (kind, name) = (role_ref(obj, "kind"), role_ref(obj, "name"));
        let resource = match kind.as_str() {
            "ClusterRole" => "clusterroles",
            "Role" => "roles",
            _ => return Ok(()), // validation refuses it
        };
        if self.allowed(user, "bind", resource, &name, ns) {
            return Ok(());
        }
        let rules = self
            .authorizer
            .role_reference_rules(&kind, &name, ns)
            .map_err(|e| Denial::forbidden(self.name(), e))?;
        self.confirm(user, ns, &rules)
    }
}

impl Validate for Escalation {
    fn name(&self) -> &str {
        "RBACEscalation"
    }

    fn handles(&self, op: Operation) -> bool {
        matches!(op, Operation::Create | Operation::Update)
    }

    fn validate(&self, attrs: &Admitted) -> Result<(), Denial> {
        if attrs.gvr.group != RBAC
            || attrs.user.name.is_empty()
            || attrs.subresource.is_some()
            || !self.authorizer.uses_rbac()
            || attrs.user.groups.iter().any(|g| g == MASTERS)
        {
            return Ok(());
        }
        let Some(obj) = &attrs.object else {
            return Ok(());
        };
        let ns = attrs.namespace.as_deref().unwrap_or("");
        match attrs.gvr.resource.as_str() {
            "roles" | "clusterroles" => self.check_role(attrs, obj, ns),
            "rolebindings" | "clusterrolebindings" => self.check_binding(attrs, obj, ns),
            _ => Ok(()),
        }
    }
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;
    use serde_json::json;

    use super::*;

    fn rule(v: Value) -> Rule {
        Rule::from_json(&v)
    }

    #[test]
    fn covering_as_upstream() {
        let owner = [
            rule(
                json!({"verbs": ["get", "list"], "apiGroups": ["apps"], "resources": ["deployments", "*/scale"]}),
            ),
            rule(json!({"verbs": ["get"], "nonResourceURLs": ["/apis/*"]})),
            rule(
                json!({"verbs": ["get"], "apiGroups": [""], "resources": ["secrets"], "resourceNames": ["a"]}),
            ),
        ];
        let ok = [
            rule(
                json!({"verbs": ["get"], "apiGroups": ["apps"], "resources": ["deployments", "replicasets/scale"]}),
            ),
            rule(json!({"verbs": ["get"], "nonResourceURLs": ["/apis/apps"]})),
            rule(
                json!({"verbs": ["get"], "apiGroups": [""], "resources": ["secrets"], "resourceNames": ["a"]}),
            ),
        ];
        assert!(uncovered(&owner, &ok).is_empty());
        let bad = [
            rule(
                json!({"verbs": ["get", "create", "delete"], "apiGroups": ["apps"], "resources": ["deployments"]}),
            ),
            rule(json!({"verbs": ["get"], "apiGroups": [""], "resources": ["secrets"]})),
            rule(json!({"verbs": ["get"], "nonResourceURLs": ["/api"]})),
        ];
        let missing = uncovered(&owner, &bad);
        assert_eq!(
            describe_missing(&missing),
            [
                "{APIGroups:[\"\"], Resources:[\"secrets\"], Verbs:[\"get\"]}",
                "{APIGroups:[\"apps\"], Resources:[\"deployments\"], Verbs:[\"create\" \"delete\"]}",
                "{NonResourceURLs:[\"/api\"], Verbs:[\"get\"]}",
            ]
        );
    }

    proptest! {
        /// Every rule set covers itself, and `*` covers everything.
        #[test]
        fn rules_cover_themselves(
            verbs in prop::collection::vec("[a-z*]{1,4}", 1..3),
            groups in prop::collection::vec("[a-z]{0,4}", 1..3),
            resources in prop::collection::vec("[a-z]{1,4}(/[a-z]{1,3})?", 1..3),
            names in prop::collection::vec("[a-z]{1,3}", 0..2),
        ) {
            let r = Rule { verbs, api_groups: groups, resources, resource_names: names, non_resource_urls: vec![] };
            prop_assert!(uncovered(std::slice::from_ref(&r), std::slice::from_ref(&r)).is_empty());
            let all = vec!["*".to_string()];
            let star = Rule { verbs: all.clone(), api_groups: all.clone(), resources: all, ..Rule::default() };
            prop_assert!(uncovered(&[star], &[r]).is_empty());
        }
    }
}
