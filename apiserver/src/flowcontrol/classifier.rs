//! The classifier: which FlowSchema a request matches, and its flow.
//!
//! Semantics of `k8s.io/apiserver/pkg/util/flowcontrol` (rule matching):
//! - schemas are tried in ascending `matchingPrecedence`, ties by name;
//!   the first whose any rule matches wins;
//! - a rule matches when one of its subjects matches the user and, for a
//!   resource request, one of its resource rules matches, for any other
//!   request one of its non-resource rules matches;
//! - subjects: `User` by name, `Group` by membership, `ServiceAccount` by
//!   the `system:serviceaccount:<ns>:<name>` user name; `*` is any name;
//! - resource rules: verb, API group, `resource[/subresource]` (each with
//!   `*`), and either a namespace listed (or `*`) for a namespaced request
//!   or `clusterScope` for one without a namespace;
//! - non-resource rules: verb and URL (`*`, the exact path, or a prefix
//!   ending in `*`).
//!
//! Schemas are compiled once per configuration change ([`Schema::parse`]);
//! matching a request compares strings and allocates nothing.

use std::hash::{DefaultHasher, Hash, Hasher};

use axum::http::HeaderValue;
use serde_json::Value;
use skein_admission::UserInfo;

use crate::authz::attributes::Target;

/// A list of names where `*` means every name.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
struct Names {
    all: bool,
    names: Vec<String>,
}

impl Names {
    fn parse(v: Option<&Value>) -> Names {
        let names: Vec<String> = v
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter_map(Value::as_str)
            .map(str::to_owned)
            .collect();
        Names {
            all: names.iter().any(|n| n == "*"),
            names,
        }
    }

    fn has(&self, name: &str) -> bool {
        self.all || self.names.iter().any(|n| n == name)
    }
}

#[derive(Clone, Debug, PartialEq, Eq)]
enum Subject {
    User(String),
    Group(String),
    ServiceAccount { namespace: String, name: String },
}

impl Subject {
    fn parse(v: &Value) -> Option<Subject> {
        let s = |p: &str| v.pointer(p).and_then(Value::as_str).map(str::to_owned);
        match v.get("kind")?.as_str()? {
            "User" => Some(Subject::User(s("/user/name")?)),
            "Group" => Some(Subject::Group(s("/group/name")?)),
            "ServiceAccount" => Some(Subject::ServiceAccount {
                namespace: s("/serviceAccount/namespace")?,
                name: s("/serviceAccount/name")?,
            }),
            _ => None,
        }
    }

    fn matches(&self, user: &UserInfo) -> bool {
        match self {
            Subject::User(n) => n == "*" || *n == user.name,
            Subject::Group(g) => g == "*" || user.groups.iter().any(|x| x == g),
            Subject::ServiceAccount { namespace, name } => {
                let Some(rest) = user.name.strip_prefix("system:serviceaccount:") else {
                    return false;
                };
                let Some((ns, account)) = rest.split_once(':') else {
                    return false;
                };
                ns == namespace && (name == "*" || account == name)
            }
        }
    }
}

#[derive(Clone, Debug, PartialEq, Eq)]
struct ResourceRule {
    verbs: Names,
    groups: Names,
    resources: Names,
    cluster_scope: bool,
    namespaces: Names,
}

impl ResourceRule {
    fn matches(&self, t: &Target<'_>) -> bool {
        if !self.verbs.has(&t.verb) || !self.groups.has(t.api_group) {
            return false;
        }
        let resource = self.resources.all
            || self.resources.names.iter().any(|r| {
                if t.subresource.is_empty() {
                    r == t.resource
                } else {
                    r.strip_prefix(t.resource)
                        .and_then(|s| s.strip_prefix('/'))
                        .is_some_and(|s| s == t.subresource)
                }
            });
        resource
            && if t.namespace.is_empty() {
                self.cluster_scope
            } else {
                self.namespaces.has(t.namespace)
            }
    }
}

#[derive(Clone, Debug, PartialEq, Eq)]
struct NonResourceRule {
    verbs: Names,
    urls: Vec<String>,
}

impl NonResourceRule {
    fn matches(&self, t: &Target<'_>) -> bool {
        self.verbs.has(&t.verb)
            && self.urls.iter().any(|u| {
                u == "*"
                    || u == t.path
                    || u.strip_suffix('*').is_some_and(|p| t.path.starts_with(p))
            })
    }
}

#[derive(Clone, Debug, PartialEq, Eq)]
struct Rule {
    subjects: Vec<Subject>,
    resources: Vec<ResourceRule>,
    non_resources: Vec<NonResourceRule>,
}

impl Rule {
    fn parse(v: &Value) -> Rule {
        let list = |k: &str| v.get(k).and_then(Value::as_array).into_iter().flatten();
        Rule {
            subjects: list("subjects").filter_map(Subject::parse).collect(),
            resources: list("resourceRules")
                .map(|r| ResourceRule {
                    verbs: Names::parse(r.get("verbs")),
                    groups: Names::parse(r.get("apiGroups")),
                    resources: Names::parse(r.get("resources")),
                    cluster_scope: r.get("clusterScope").and_then(Value::as_bool) == Some(true),
                    namespaces: Names::parse(r.get("namespaces")),
                })
                .collect(),
            non_resources: list("nonResourceRules")
                .map(|r| NonResourceRule {
                    verbs: Names::parse(r.get("verbs")),
                    urls: Names::parse(r.get("nonResourceURLs")).names,
                })
                .collect(),
        }
    }

    fn matches(&self, t: &Target<'_>, user: &UserInfo) -> bool {
        self.subjects.iter().any(|s| s.matches(user))
            && if t.resource_request {
                self.resources.iter().any(|r| r.matches(t))
            } else {
                self.non_resources.iter().any(|r| r.matches(t))
            }
    }
}

/// How a schema tells flows apart (`spec.distinguisherMethod.type`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Distinguisher {
    /// No distinguisher: one flow per schema.
    None,
    /// `ByUser`: one flow per user name.
    ByUser,
    /// `ByNamespace`: one flow per namespace ("" for cluster-scoped and
    /// non-resource requests).
    ByNamespace,
}

/// One compiled FlowSchema.
#[derive(Clone, Debug)]
pub struct Schema {
    /// `metadata.name`.
    pub name: String,
    /// `metadata.uid` as the `X-Kubernetes-PF-FlowSchema-UID` value
    /// (`None` for a built-in stand-in that is not stored).
    pub uid: Option<HeaderValue>,
    /// `spec.matchingPrecedence`.
    pub precedence: i64,
    /// `spec.priorityLevelConfiguration.name`.
    pub level: String,
    /// `spec.distinguisherMethod.type`.
    pub distinguisher: Distinguisher,
    rules: Vec<Rule>,
}

impl Schema {
    /// A stored FlowSchema, compiled (missing fields read as upstream's
    /// defaults; validation keeps stored schemas well-formed).
    pub fn parse(obj: &Value) -> Schema {
        let spec = obj.get("spec").unwrap_or(&Value::Null);
        let distinguisher = match spec
            .pointer("/distinguisherMethod/type")
            .and_then(Value::as_str)
        {
            Some("ByUser") => Distinguisher::ByUser,
            Some("ByNamespace") => Distinguisher::ByNamespace,
            _ => Distinguisher::None,
        };
        Schema {
            name: crate::registry::object::name(obj).to_owned(),
            uid: obj
                .pointer("/metadata/uid")
                .and_then(Value::as_str)
                .and_then(|u| HeaderValue::from_str(u).ok()),
            precedence: spec
                .get("matchingPrecedence")
                .and_then(Value::as_i64)
                .unwrap_or(1000),
            level: spec
                .pointer("/priorityLevelConfiguration/name")
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_owned(),
            distinguisher,
            rules: spec
                .get("rules")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
                .map(Rule::parse)
                .collect(),
        }
    }

    /// Whether the request matches one of the schema's rules.
    pub fn matches(&self, t: &Target<'_>, user: &UserInfo) -> bool {
        self.rules.iter().any(|r| r.matches(t, user))
    }

    /// The request's flow within this schema, as a hash (the schema's
    /// name and the distinguisher's value), for shuffle sharding.
    pub fn flow_hash(&self, t: &Target<'_>, user: &UserInfo) -> u64 {
        let mut h = DefaultHasher::new();
        self.name.hash(&mut h);
        match self.distinguisher {
            Distinguisher::None => "",
            Distinguisher::ByUser => &user.name,
            Distinguisher::ByNamespace => t.namespace,
        }
        .hash(&mut h);
        h.finish()
    }
}

/// Orders `schemas` as they are tried: ascending precedence, then name.
pub fn sort(schemas: &mut [Schema]) {
    schemas.sort_by(|a, b| (a.precedence, &a.name).cmp(&(b.precedence, &b.name)));
}

/// The index of the first schema in `schemas` (sorted by [`sort`]) that
/// `t` from `user` matches and for which `usable` holds (its priority
/// level exists).
pub fn classify(
    schemas: &[Schema],
    t: &Target<'_>,
    user: &UserInfo,
    usable: impl Fn(&Schema) -> bool,
) -> Option<usize> {
    schemas.iter().position(|s| usable(s) && s.matches(t, user))
}

#[cfg(test)]
mod tests {
    use axum::http::Method;

    use super::*;
    use crate::flowcontrol::defaults;

    fn user(name: &str, groups: &[&str]) -> UserInfo {
        UserInfo {
            name: name.into(),
            groups: groups.iter().map(|g| (*g).to_string()).collect(),
            ..UserInfo::default()
        }
    }

    fn defaults() -> Vec<Schema> {
        let mut all: Vec<Schema> = defaults::all("flowschemas")
            .iter()
            .map(|(o, _)| Schema::parse(o))
            .collect();
        sort(&mut all);
        all
    }

    /// The schema the defaults give `method path?query` from `u`.
    fn schema_of(u: &UserInfo, method: Method, path: &str, query: Option<&str>) -> String {
        let schemas = defaults();
        let t = Target::parse(&method, path, query);
        let i = classify(&schemas, &t, u, |_| true).expect("catch-all matches everything");
        schemas[i].name.clone()
    }

    #[test]
    fn defaults_classify_as_upstream() {
        let admin = user("admin", &["system:masters", "system:authenticated"]);
        let alice = user("alice", &["system:authenticated"]);
        let node = user("system:node:n1", &["system:nodes", "system:authenticated"]);
        let kcm = user("system:kube-controller-manager", &["system:authenticated"]);
        let ks_sa = user(
            "system:serviceaccount:kube-system:replicaset-controller",
            &[
                "system:serviceaccounts",
                "system:serviceaccounts:kube-system",
                "system:authenticated",
            ],
        );
        let sa = user(
            "system:serviceaccount:team:builder",
            &[
                "system:serviceaccounts",
                "system:serviceaccounts:team",
                "system:authenticated",
            ],
        );
        let anon = user("system:anonymous", &["system:unauthenticated"]);
        let cases: &[(&UserInfo, Method, &str, Option<&str>, &str)] = &[
            (
                &admin,
                Method::POST,
                "/api/v1/namespaces/a/configmaps",
                None,
                "exempt",
            ),
            (&admin, Method::GET, "/metrics", None, "exempt"),
            (&alice, Method::GET, "/healthz", None, "probes"),
            (&alice, Method::GET, "/readyz", None, "probes"),
            (&alice, Method::POST, "/healthz", None, "global-default"),
            (
                &alice,
                Method::GET,
                "/api/v1/namespaces/a/pods",
                None,
                "global-default",
            ),
            (&anon, Method::GET, "/version", None, "global-default"),
            (
                &node,
                Method::PUT,
                "/api/v1/nodes/n1/status",
                None,
                "system-node-high",
            ),
            (
                &node,
                Method::GET,
                "/api/v1/namespaces/a/secrets/s",
                None,
                "system-nodes",
            ),
            (
                &kcm,
                Method::PUT,
                "/apis/coordination.k8s.io/v1/namespaces/kube-system/leases/kcm",
                None,
                "system-leader-election",
            ),
            (
                &kcm,
                Method::PUT,
                "/api/v1/namespaces/a/endpoints/e",
                None,
                "endpoint-controller",
            ),
            (
                &kcm,
                Method::GET,
                "/apis/apps/v1/deployments",
                Some("watch=1"),
                "kube-controller-manager",
            ),
            (
                &ks_sa,
                Method::PUT,
                "/api/v1/namespaces/a/configmaps/lock",
                None,
                "workload-leader-election",
            ),
            (
                &ks_sa,
                Method::DELETE,
                "/api/v1/namespaces/a/pods/p",
                None,
                "kube-system-service-accounts",
            ),
            (
                &sa,
                Method::GET,
                "/api/v1/namespaces/team/pods",
                None,
                "service-accounts",
            ),
        ];
        for (u, method, path, query, want) in cases {
            assert_eq!(
                schema_of(u, method.clone(), path, *query),
                *want,
                "{} {method} {path}",
                u.name
            );
        }
    }

    #[test]
    fn resource_rules_need_namespace_or_cluster_scope() {
        let fs = Schema::parse(&serde_json::json!({
            "metadata": {"name": "s"},
            "spec": {"priorityLevelConfiguration": {"name": "p"}, "matchingPrecedence": 5, "rules": [{
                "subjects": [{"kind": "User", "user": {"name": "bob"}}],
                "resourceRules": [{"verbs": ["create"], "apiGroups": [""], "resources": ["pods/exec"], "namespaces": ["a"]}],
            }]},
        }));
        let bob = user("bob", &[]);
        let hit = Target::parse(&Method::POST, "/api/v1/namespaces/a/pods/p/exec", None);
        assert!(fs.matches(&hit, &bob));
        for (m, p) in [
            (Method::POST, "/api/v1/namespaces/b/pods/p/exec"),
            (Method::POST, "/api/v1/namespaces/a/pods"),
            (Method::GET, "/api/v1/namespaces/a/pods/p/exec"),
            (Method::POST, "/api/v1/nodes"),
        ] {
            assert!(!fs.matches(&Target::parse(&m, p, None), &bob), "{m} {p}");
        }
        assert!(!fs.matches(&hit, &user("carol", &[])));
    }

    #[test]
    fn flows_follow_the_distinguisher() {
        let schemas = defaults();
        let by_user = schemas
            .iter()
            .find(|s| s.name == "global-default")
            .expect("global-default");
        let by_ns = schemas
            .iter()
            .find(|s| s.name == "kube-scheduler")
            .expect("kube-scheduler");
        let (a, b) = (user("a", &[]), user("b", &[]));
        let t1 = Target::parse(&Method::GET, "/api/v1/namespaces/x/pods", None);
        let t2 = Target::parse(&Method::GET, "/api/v1/namespaces/y/pods", None);
        assert_eq!(by_user.flow_hash(&t1, &a), by_user.flow_hash(&t2, &a));
        assert_ne!(by_user.flow_hash(&t1, &a), by_user.flow_hash(&t1, &b));
        assert_eq!(by_ns.flow_hash(&t1, &a), by_ns.flow_hash(&t1, &b));
        assert_ne!(by_ns.flow_hash(&t1, &a), by_ns.flow_hash(&t2, &a));
    }
}
