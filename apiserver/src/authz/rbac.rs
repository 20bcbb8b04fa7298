//! RBAC evaluation, pure: upstream's `plugin/pkg/auth/authorizer/rbac`
//! over a [`Policy`] snapshot of Roles, ClusterRoles and their bindings.
//!
//! Contract:
//! - [`Policy::from_objects`] reads `rbac.authorization.k8s.io/v1` objects
//!   as JSON; fields it does not understand are ignored, never an error.
//!   A ClusterRole's `rules` are used as stored: aggregated roles get
//!   theirs from the aggregation controller (`controllers/aggregation.rs`).
//! - [`Policy::authorize`] visits ClusterRoleBindings, then the
//!   RoleBindings of the request's namespace, in name order, and stops at
//!   the first rule that allows the request (upstream's `VisitRulesFor`).
//!   A binding whose role is missing is skipped and reported in the deny
//!   reason (`RBAC: role.rbac.authorization.k8s.io "x" not found`).
//! - [`Policy::rules_for`] lists every rule that applies to a user in a
//!   namespace, with the same resolution errors.

use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;

use serde_json::Value;
use skein_admission::UserInfo;

use super::attributes::Attributes;

/// One `PolicyRule`.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Rule {
    /// `verbs`.
    pub verbs: Vec<String>,
    /// `apiGroups`.
    pub api_groups: Vec<String>,
    /// `resources` (`pods`, `pods/log`, `*/scale`, `*`).
    pub resources: Vec<String>,
    /// `resourceNames`; empty means every name.
    pub resource_names: Vec<String>,
    /// `nonResourceURLs` (a trailing `*` is a prefix match).
    pub non_resource_urls: Vec<String>,
}

fn strings(v: Option<&Value>) -> Vec<String> {
    v.and_then(Value::as_array)
        .map(|a| {
            a.iter()
                .filter_map(Value::as_str)
                .map(str::to_string)
                .collect()
        })
        .unwrap_or_default()
}

impl Rule {
    /// A rule from its JSON form.
    pub fn from_json(v: &Value) -> Rule {
        Rule {
            verbs: strings(v.get("verbs")),
            api_groups: strings(v.get("apiGroups")),
            resources: strings(v.get("resources")),
            resource_names: strings(v.get("resourceNames")),
            non_resource_urls: strings(v.get("nonResourceURLs")),
        }
    }

    /// The rules of a Role or ClusterRole object.
    pub fn list_from(role: &Value) -> Vec<Rule> {
        role.get("rules")
            .and_then(Value::as_array)
            .map(|a| a.iter().map(Rule::from_json).collect())
            .unwrap_or_default()
    }

    /// Upstream's `RuleAllows`.
    pub fn allows(&self, attrs: &Attributes) -> bool {
        if !has_or_all(&self.verbs, &attrs.verb) {
            return false;
        }
        if !attrs.resource_request {
            return self
                .non_resource_urls
                .iter()
                .any(|u| non_resource_url_covers(u, &attrs.path));
        }
        if !has_or_all(&self.api_groups, &attrs.api_group) {
            return false;
        }
        let combined;
        let resource = if attrs.subresource.is_empty() {
            attrs.resource.as_str()
        } else {
            combined = format!("{}/{}", attrs.resource, attrs.subresource);
            combined.as_str()
        };
        let resource_ok = self.resources.iter().any(|r| {
            r == "*"
                || r == resource
                || (!attrs.subresource.is_empty()
                    && r.len() == attrs.subresource.len() + 2
                    && r.starts_with("*/")
                    && r.ends_with(attrs.subresource.as_str()))
        });
        resource_ok && (self.resource_names.is_empty() || self.resource_names.contains(&attrs.name))
    }
}

fn has_or_all(set: &[String], want: &str) -> bool {
    set.iter().any(|s| s == "*" || s == want)
}

/// Upstream's `nonResourceURLCovers`: equal, or the owner ends in `*` and
/// the path starts with what precedes its trailing `*`s.
pub fn non_resource_url_covers(owner: &str, path: &str) -> bool {
    owner == path || (owner.ends_with('*') && path.starts_with(owner.trim_end_matches('*')))
}

/// A binding's subject.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Subject {
    /// `User`, `Group` or `ServiceAccount`.
    pub kind: String,
    /// The name.
    pub name: String,
    /// The namespace (ServiceAccounts).
    pub namespace: String,
}

impl Subject {
    /// Upstream's `appliesToUser`; `namespace` is the binding's namespace
    /// (the default for ServiceAccount subjects).
    pub fn applies_to(&self, user: &UserInfo, namespace: &str) -> bool {
        match self.kind.as_str() {
            "User" => user.name == self.name,
            "Group" => user.groups.contains(&self.name),
            "ServiceAccount" => {
                let ns = if self.namespace.is_empty() {
                    namespace
                } else {
                    &self.namespace
                };
                !ns.is_empty()
                    && user
                        .name
                        .strip_prefix("system:serviceaccount:")
                        .and_then(|rest| rest.split_once(':'))
                        .is_some_and(|(n, name)| n == ns && name == self.name)
            }
            _ => false,
        }
    }

    /// Upstream's `describeSubject` (for allow reasons).
    fn describe(&self, binding_namespace: &str) -> String {
        if self.kind == "ServiceAccount" {
            let ns = if self.namespace.is_empty() {
                binding_namespace
            } else {
                &self.namespace
            };
            format!("{} {}", self.kind, go_quote(&format!("{}/{ns}", self.name)))
        } else {
            format!("{} {}", self.kind, go_quote(&self.name))
        }
    }
}

/// A RoleBinding (namespace set) or ClusterRoleBinding (namespace empty).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Binding {
    /// The binding's name.
    pub name: String,
    /// Its namespace, "" for a ClusterRoleBinding.
    pub namespace: String,
    /// `roleRef.kind`: `Role` or `ClusterRole`.
    pub role_kind: String,
    /// `roleRef.name`.
    pub role_name: String,
    /// `subjects`.
    pub subjects: Vec<Subject>,
}

impl Binding {
    /// A binding from its JSON form.
    pub fn from_json(v: &Value) -> Binding {
        let meta = |f: &str| {
            v.pointer(&format!("/metadata/{f}"))
                .and_then(Value::as_str)
                .unwrap_or("")
                .to_string()
        };
        let role = |f: &str| {
            v.pointer(&format!("/roleRef/{f}"))
                .and_then(Value::as_str)
                .unwrap_or("")
                .to_string()
        };
        let subjects = v
            .get("subjects")
            .and_then(Value::as_array)
            .map(|a| {
                a.iter()
                    .map(|s| {
                        let f =
                            |k: &str| s.get(k).and_then(Value::as_str).unwrap_or("").to_string();
                        Subject {
                            kind: f("kind"),
                            name: f("name"),
                            namespace: f("namespace"),
                        }
                    })
                    .collect()
            })
            .unwrap_or_default();
        Binding {
            name: meta("name"),
            namespace: meta("namespace"),
            role_kind: role("kind"),
            role_name: role("name"),
            subjects,
        }
    }

    /// The first subject that applies to `user`.
    fn subject_for(&self, user: &UserInfo) -> Option<&Subject> {
        self.subjects
            .iter()
            .find(|s| s.applies_to(user, &self.namespace))
    }

    /// Upstream's binding describers (for allow reasons).
    fn describe(&self, subject: &Subject) -> String {
        if self.namespace.is_empty() {
            format!(
                "ClusterRoleBinding {} of {} {} to {}",
                go_quote(&self.name),
                self.role_kind,
                go_quote(&self.role_name),
                subject.describe("")
            )
        } else {
            format!(
                "RoleBinding {} of {} {} to {}",
                go_quote(&format!("{}/{}", self.name, self.namespace)),
                self.role_kind,
                go_quote(&self.role_name),
                subject.describe(&self.namespace)
            )
        }
    }
}

/// Go's `strconv.Quote` (`%q`) for the strings RBAC messages print.
pub use skein_admission::gofmt::quote as go_quote;

/// Go's `%q` of a `[]string`: `["a" "b"]`.
pub fn go_quote_list(items: &[String]) -> String {
    let inner: Vec<String> = items.iter().map(|s| go_quote(s)).collect();
    format!("[{}]", inner.join(" "))
}

/// A snapshot of every RBAC object, indexed for evaluation.
#[derive(Debug, Default)]
pub struct Policy {
    cluster_roles: HashMap<String, Arc<Vec<Rule>>>,
    roles: HashMap<(String, String), Arc<Vec<Rule>>>,
    cluster_bindings: Bindings,
    role_bindings: HashMap<String, Bindings>,
}

/// Bindings in evaluation order (by name, as upstream's listers return
/// them) with an index from subject to position, so a request visits only
/// the bindings that can apply to its user.
#[derive(Debug, Default)]
struct Bindings {
    list: Vec<Binding>,
    /// `User` subjects by name, and `ServiceAccount` subjects by the user
    /// name they apply to (`system:serviceaccount:<ns>:<name>`).
    users: HashMap<String, Vec<usize>>,
    /// `Group` subjects by name.
    groups: HashMap<String, Vec<usize>>,
}

impl Bindings {
    fn new(mut list: Vec<Binding>) -> Bindings {
        list.sort_by(|a, b| a.name.cmp(&b.name));
        let mut users: HashMap<String, Vec<usize>> = HashMap::new();
        let mut groups: HashMap<String, Vec<usize>> = HashMap::new();
        for (i, b) in list.iter().enumerate() {
            for s in &b.subjects {
                let slot = match s.kind.as_str() {
                    "User" => users.entry(s.name.clone()),
                    "Group" => groups.entry(s.name.clone()),
                    "ServiceAccount" => {
                        let ns = if s.namespace.is_empty() {
                            &b.namespace
                        } else {
                            &s.namespace
                        };
                        if ns.is_empty() {
                            continue;
                        }
                        users.entry(format!("system:serviceaccount:{ns}:{}", s.name))
                    }
                    _ => continue,
                };
                let positions = slot.or_default();
                if positions.last() != Some(&i) {
                    positions.push(i);
                }
            }
        }
        Bindings {
            list,
            users,
            groups,
        }
    }

    /// The bindings with a subject that may apply to `user`, in order (a
    /// superset: [`Binding::subject_for`] decides).
    fn candidates<'s>(&'s self, user: &UserInfo) -> impl Iterator<Item = &'s Binding> + 's {
        let mut positions: Vec<usize> = Vec::new();
        if let Some(p) = self.users.get(&user.name) {
            positions.extend_from_slice(p);
        }
        for g in &user.groups {
            if let Some(p) = self.groups.get(g) {
                positions.extend_from_slice(p);
            }
        }
        positions.sort_unstable();
        positions.dedup();
        positions.into_iter().filter_map(|i| self.list.get(i))
    }
}

/// What [`Policy::authorize`] decided.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Verdict {
    /// Whether a rule allows the request.
    pub allowed: bool,
    /// Upstream's reason: `RBAC: allowed by …` when allowed, the
    /// resolution errors (`RBAC: [...]`) or "" when not.
    pub reason: String,
}

impl Policy {
    /// A snapshot of the given objects (each list in any order).
    pub fn from_objects<'a>(
        cluster_roles: impl IntoIterator<Item = &'a Value>,
        roles: impl IntoIterator<Item = &'a Value>,
        cluster_bindings: impl IntoIterator<Item = &'a Value>,
        role_bindings: impl IntoIterator<Item = &'a Value>,
    ) -> Policy {
        let name = |v: &Value| {
            v.pointer("/metadata/name")
                .and_then(Value::as_str)
                .unwrap_or("")
                .to_string()
        };
        let namespace = |v: &Value| {
            v.pointer("/metadata/namespace")
                .and_then(Value::as_str)
                .unwrap_or("")
                .to_string()
        };
        let cluster_bindings = Bindings::new(
            cluster_bindings
                .into_iter()
                .map(Binding::from_json)
                .collect(),
        );
        let mut by_ns: BTreeMap<String, Vec<Binding>> = BTreeMap::new();
        for b in role_bindings.into_iter().map(Binding::from_json) {
            by_ns.entry(b.namespace.clone()).or_default().push(b);
        }
        Policy {
            cluster_roles: cluster_roles
                .into_iter()
                .map(|r| (name(r), Arc::new(Rule::list_from(r))))
                .collect(),
            roles: roles
                .into_iter()
                .map(|r| ((namespace(r), name(r)), Arc::new(Rule::list_from(r))))
                .collect(),
            cluster_bindings,
            role_bindings: by_ns
                .into_iter()
                .map(|(ns, list)| (ns, Bindings::new(list)))
                .collect(),
        }
    }

    /// The rules a binding grants, or upstream's lister NotFound text.
    fn role_rules(&self, b: &Binding) -> Result<&Arc<Vec<Rule>>, String> {
        let found = match b.role_kind.as_str() {
            "ClusterRole" => self.cluster_roles.get(&b.role_name),
            "Role" => self.roles.get(&(b.namespace.clone(), b.role_name.clone())),
            other => return Err(format!("unsupported role reference kind: {other:?}")),
        };
        found.ok_or_else(|| {
            format!(
                "{}.rbac.authorization.k8s.io {} not found",
                b.role_kind.to_ascii_lowercase(),
                go_quote(&b.role_name)
            )
        })
    }

    /// Visits the bindings that apply to `user` in `namespace` ("" for
    /// cluster bindings only): `visit(binding, subject, rules)` returns
    /// `false` to stop. Resolution errors are collected.
    fn visit<'s>(
        &'s self,
        user: &UserInfo,
        namespace: &str,
        errors: &mut Vec<String>,
        mut visit: impl FnMut(&'s Binding, &'s Subject, &'s [Rule]) -> bool,
    ) {
        let local = (!namespace.is_empty())
            .then(|| self.role_bindings.get(namespace))
            .flatten();
        let all = self
            .cluster_bindings
            .candidates(user)
            .chain(local.into_iter().flat_map(|l| l.candidates(user)));
        for b in all {
            let Some(subject) = b.subject_for(user) else {
                continue;
            };
            match self.role_rules(b) {
                Ok(rules) => {
                    if !visit(b, subject, rules) {
                        return;
                    }
                }
                Err(e) => errors.push(e),
            }
        }
    }

    /// Upstream's RBAC `Authorize`.
    pub fn authorize(&self, attrs: &Attributes) -> Verdict {
        let mut errors = Vec::new();
        let mut reason = None;
        self.visit(&attrs.user, &attrs.namespace, &mut errors, |b, s, rules| {
            if rules.iter().any(|r| r.allows(attrs)) {
                reason = Some(format!("RBAC: allowed by {}", b.describe(s)));
                return false;
            }
            true
        });
        match reason {
            Some(reason) => Verdict {
                allowed: true,
                reason,
            },
            None => Verdict {
                allowed: false,
                reason: if errors.is_empty() {
                    String::new()
                } else {
                    format!("RBAC: {}", aggregate(&errors))
                },
            },
        }
    }

    /// Every rule that applies to `user` in `namespace` (cluster-wide ones
    /// first), and the resolution errors met on the way.
    pub fn rules_for(&self, user: &UserInfo, namespace: &str) -> (Vec<Rule>, Vec<String>) {
        let mut errors = Vec::new();
        let mut rules = Vec::new();
        self.visit(user, namespace, &mut errors, |_, _, r| {
            rules.extend(r.iter().cloned());
            true
        });
        (rules, errors)
    }

    /// The rules of a role reference (`kind` Role or ClusterRole; Roles are
    /// looked up in `namespace`), or upstream's NotFound text.
    pub fn role_reference_rules(
        &self,
        kind: &str,
        name: &str,
        namespace: &str,
    ) -> Result<Vec<Rule>, String> {
        let b = Binding {
            name: String::new(),
            namespace: namespace.to_string(),
            role_kind: kind.to_string(),
            role_name: name.to_string(),
            subjects: Vec::new(),
        };
        self.role_rules(&b).map(|r| r.as_ref().clone())
    }
}

/// `utilerrors.NewAggregate(errs).Error()`: one error as itself, several
/// as `[a, b]`.
pub fn aggregate(errors: &[String]) -> String {
    match errors {
        [one] => one.clone(),
        many => format!("[{}]", many.join(", ")),
    }
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;
    use serde_json::json;

    use super::*;

    fn user(name: &str, groups: &[&str]) -> UserInfo {
        UserInfo {
            name: name.into(),
            uid: None,
            groups: groups.iter().map(|g| (*g).to_string()).collect(),
            extra: BTreeMap::new(),
        }
    }

    fn res(u: &UserInfo, verb: &str, group: &str, resource: &str, ns: &str) -> Attributes {
        Attributes {
            user: u.clone(),
            verb: verb.into(),
            resource_request: true,
            api_group: group.into(),
            api_version: "v1".into(),
            resource: resource.into(),
            namespace: ns.into(),
            ..Attributes::default()
        }
    }

    fn rule(v: Value) -> Rule {
        Rule::from_json(&v)
    }

    #[test]
    fn rules_match_verbs_groups_resources_and_names() {
        let u = user("u", &[]);
        let r = rule(
            json!({"verbs": ["get", "list"], "apiGroups": ["apps"], "resources": ["deployments"]}),
        );
        assert!(r.allows(&res(&u, "get", "apps", "deployments", "ns")));
        assert!(!r.allows(&res(&u, "create", "apps", "deployments", "ns")));
        assert!(!r.allows(&res(&u, "get", "", "deployments", "ns")));
        assert!(!r.allows(&res(&u, "get", "apps", "replicasets", "ns")));
        let mut sub = res(&u, "get", "apps", "deployments", "ns");
        sub.subresource = "scale".into();
        assert!(
            !r.allows(&sub),
            "a resource rule does not cover its subresources"
        );
        let star = rule(json!({"verbs": ["*"], "apiGroups": ["*"], "resources": ["*/scale"]}));
        assert!(star.allows(&sub));
        assert!(!star.allows(&res(&u, "get", "apps", "deployments", "ns")));
        let named = rule(
            json!({"verbs": ["get"], "apiGroups": [""], "resources": ["configmaps"], "resourceNames": ["a"]}),
        );
        let mut a = res(&u, "get", "", "configmaps", "ns");
        a.name = "a".into();
        assert!(named.allows(&a));
        a.name = "b".into();
        assert!(!named.allows(&a));
        // A list has no name: resourceNames never allow it.
        assert!(!named.allows(&res(&u, "list", "", "configmaps", "ns")));
    }

    #[test]
    fn non_resource_urls_match_exactly_or_by_trailing_star() {
        let u = user("u", &[]);
        let r = rule(json!({"verbs": ["get"], "nonResourceURLs": ["/api", "/apis/*", "/x**"]}));
        let path = |p: &str| Attributes {
            user: u.clone(),
            verb: "get".into(),
            path: p.into(),
            ..Attributes::default()
        };
        assert!(r.allows(&path("/api")));
        assert!(!r.allows(&path("/api/v1")));
        assert!(r.allows(&path("/apis/apps/v1")));
        assert!(r.allows(&path("/apis/")));
        assert!(!r.allows(&path("/apis")));
        assert!(r.allows(&path("/xyz")));
        // A non-resource rule never allows a resource request.
        assert!(!r.allows(&res(&u, "get", "", "pods", "")));
    }

    fn policy() -> Policy {
        let cr = [
            json!({"metadata": {"name": "view"}, "rules": [{"verbs": ["get", "list"], "apiGroups": ["apps"], "resources": ["deployments"]}]}),
            json!({"metadata": {"name": "nodes"}, "rules": [{"verbs": ["list"], "apiGroups": [""], "resources": ["nodes"]}]}),
        ];
        let roles = [
            json!({"metadata": {"name": "cm", "namespace": "b"}, "rules": [{"verbs": ["get"], "apiGroups": [""], "resources": ["configmaps"]}]}),
        ];
        let crb = [
            json!({"metadata": {"name": "ops-nodes"}, "roleRef": {"kind": "ClusterRole", "name": "nodes"}, "subjects": [{"kind": "Group", "name": "ops"}]}),
            json!({"metadata": {"name": "dangling"}, "roleRef": {"kind": "ClusterRole", "name": "gone"}, "subjects": [{"kind": "User", "name": "dan"}]}),
        ];
        let rb = [
            json!({"metadata": {"name": "v", "namespace": "a"}, "roleRef": {"kind": "ClusterRole", "name": "view"}, "subjects": [{"kind": "User", "name": "alice"}, {"kind": "ServiceAccount", "name": "bot"}]}),
            json!({"metadata": {"name": "c", "namespace": "b"}, "roleRef": {"kind": "Role", "name": "cm"}, "subjects": [{"kind": "User", "name": "alice"}]}),
        ];
        Policy::from_objects(&cr, &roles, &crb, &rb)
    }

    #[test]
    fn bindings_grant_their_roles_where_they_live() {
        let p = policy();
        let alice = user("alice", &["system:authenticated"]);
        let v = p.authorize(&res(&alice, "list", "apps", "deployments", "a"));
        assert_eq!(
            v,
            Verdict {
                allowed: true,
                reason:
                    "RBAC: allowed by RoleBinding \"v/a\" of ClusterRole \"view\" to User \"alice\""
                        .into()
            }
        );
        assert!(
            !p.authorize(&res(&alice, "list", "apps", "deployments", "b"))
                .allowed
        );
        assert!(
            !p.authorize(&res(&alice, "list", "apps", "deployments", ""))
                .allowed
        );
        assert!(
            p.authorize(&res(&alice, "get", "", "configmaps", "b"))
                .allowed
        );
        assert!(
            !p.authorize(&res(&alice, "get", "", "configmaps", "a"))
                .allowed
        );
        let bot = user("system:serviceaccount:a:bot", &[]);
        let v = p.authorize(&res(&bot, "get", "apps", "deployments", "a"));
        assert_eq!(
            v.reason,
            "RBAC: allowed by RoleBinding \"v/a\" of ClusterRole \"view\" to ServiceAccount \"bot/a\""
        );
        let other_bot = user("system:serviceaccount:b:bot", &[]);
        assert!(
            !p.authorize(&res(&other_bot, "get", "apps", "deployments", "a"))
                .allowed
        );
        let ops = user("o", &["ops"]);
        let v = p.authorize(&res(&ops, "list", "", "nodes", ""));
        assert_eq!(
            v.reason,
            "RBAC: allowed by ClusterRoleBinding \"ops-nodes\" of ClusterRole \"nodes\" to Group \"ops\""
        );
    }

    #[test]
    fn missing_roles_are_reported_in_the_deny_reason() {
        let p = policy();
        let dan = user("dan", &[]);
        let v = p.authorize(&res(&dan, "get", "", "pods", "a"));
        assert_eq!(
            v,
            Verdict {
                allowed: false,
                reason: "RBAC: clusterrole.rbac.authorization.k8s.io \"gone\" not found".into()
            }
        );
        let (rules, errors) = p.rules_for(&dan, "a");
        assert!(rules.is_empty());
        assert_eq!(errors.len(), 1);
    }

    #[test]
    fn rules_for_lists_cluster_then_namespace_rules() {
        let p = policy();
        let alice = user("alice", &["ops"]);
        let (rules, errors) = p.rules_for(&alice, "a");
        assert!(errors.is_empty());
        assert_eq!(rules.len(), 2);
        assert_eq!(rules[0].resources, ["nodes"]);
        assert_eq!(rules[1].resources, ["deployments"]);
        let (rules, _) = p.rules_for(&alice, "");
        assert_eq!(rules.len(), 1);
    }

    proptest! {
        /// A `*` in verbs, groups and resources allows every resource
        /// request; an empty rule allows nothing.
        #[test]
        fn star_allows_everything_and_empty_nothing(
            verb in "[a-z]{1,8}", group in "[a-z.]{0,8}", resource in "[a-z]{1,8}",
            sub in "[a-z]{0,5}", name in "[a-z]{0,5}", ns in "[a-z]{0,5}",
        ) {
            let u = user("u", &[]);
            let mut a = res(&u, &verb, &group, &resource, &ns);
            a.subresource = sub;
            a.name = name;
            let all = rule(json!({"verbs": ["*"], "apiGroups": ["*"], "resources": ["*"]}));
            prop_assert!(all.allows(&a));
            prop_assert!(!Rule::default().allows(&a));
        }

        /// An exact rule for a request allows it, and changing any one
        /// attribute to a different value denies it.
        #[test]
        fn exact_rules_allow_only_their_request(
            verb in "[a-z]{1,6}", group in "[a-z]{0,6}", resource in "[a-z]{1,6}", other in "[A-Z]{1,3}",
        ) {
            let u = user("u", &[]);
            let r = rule(json!({"verbs": [verb], "apiGroups": [group], "resources": [resource]}));
            let a = res(&u, &verb, &group, &resource, "ns");
            prop_assert!(r.allows(&a));
            let mut b = a.clone(); b.verb = other.clone();
            prop_assert!(!r.allows(&b));
            let mut b = a.clone(); b.api_group = other.clone();
            prop_assert!(!r.allows(&b));
            let mut b = a.clone(); b.resource = other;
            prop_assert!(!r.allows(&b));
        }
    }

    fn subject_strategy() -> impl Strategy<Value = Subject> {
        (
            prop::sample::select(vec!["User", "Group", "ServiceAccount", "Other"]),
            prop::sample::select(vec!["a", "b", "g1", "g2", "sa"]),
            prop::sample::select(vec!["", "ns1", "ns2"]),
        )
            .prop_map(|(kind, name, namespace)| Subject {
                kind: kind.into(),
                name: name.into(),
                namespace: namespace.into(),
            })
    }

    proptest! {
        /// The subject index visits exactly the bindings a scan of every
        /// binding would, in the same order.
        #[test]
        fn the_subject_index_finds_what_a_scan_finds(
            bindings in prop::collection::vec(
                (prop::sample::select(vec!["", "ns1", "ns2"]), prop::collection::vec(subject_strategy(), 0..4)),
                0..12,
            ),
            name in prop::sample::select(vec![
                "a", "b", "system:serviceaccount:ns1:sa", "system:serviceaccount:ns2:sa", "g1",
            ]),
            groups in prop::collection::vec(prop::sample::select(vec!["g1", "g2", "a"]), 0..3),
        ) {
            let list: Vec<Binding> = bindings
                .into_iter()
                .enumerate()
                .map(|(i, (namespace, subjects))| Binding {
                    name: format!("b{i:02}"),
                    namespace: namespace.into(),
                    role_kind: "ClusterRole".into(),
                    role_name: "r".into(),
                    subjects,
                })
                .collect();
            let groups: Vec<&str> = groups.clone();
            let u = user(name, &groups);
            let indexed = Bindings::new(list.clone());
            let found: Vec<(String, Subject)> = indexed
                .candidates(&u)
                .filter_map(|b| b.subject_for(&u).map(|s| (b.name.clone(), s.clone())))
                .collect();
            let mut scanned: Vec<(String, Subject)> = list
                .iter()
                .filter_map(|b| b.subject_for(&u).map(|s| (b.name.clone(), s.clone())))
                .collect();
            scanned.sort_by(|x, y| x.0.cmp(&y.0));
            prop_assert_eq!(found, scanned);
        }
    }
}
