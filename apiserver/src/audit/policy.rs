//! `audit.k8s.io/v1` `Policy` (`--audit-policy-file`) and its evaluation,
//! as upstream's `audit/policy/checker.go`: the first rule that matches a
//! request decides its level, stages left out and managedFields handling;
//! no matching rule is level `None`.

use serde::Deserialize;

/// How much of a request is recorded.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Deserialize)]
pub enum Level {
    /// Nothing.
    #[default]
    None,
    /// User, verb, object reference, response code, timestamps.
    Metadata,
    /// Metadata and the request body.
    Request,
    /// Metadata, request and response bodies.
    RequestResponse,
}

impl Level {
    /// The name in events.
    pub fn as_str(self) -> &'static str {
        match self {
            Level::None => "None",
            Level::Metadata => "Metadata",
            Level::Request => "Request",
            Level::RequestResponse => "RequestResponse",
        }
    }
}

/// An event stage.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize)]
pub enum Stage {
    /// As soon as the request is authenticated.
    RequestReceived,
    /// Response headers sent (long-running requests only).
    ResponseStarted,
    /// The response is complete.
    ResponseComplete,
    /// A handler panicked.
    Panic,
}

impl Stage {
    /// The name in events.
    pub fn as_str(self) -> &'static str {
        match self {
            Stage::RequestReceived => "RequestReceived",
            Stage::ResponseStarted => "ResponseStarted",
            Stage::ResponseComplete => "ResponseComplete",
            Stage::Panic => "Panic",
        }
    }
}

/// The policy file.
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Policy {
    /// `audit.k8s.io/v1`.
    #[serde(default)]
    pub api_version: String,
    /// `Policy`.
    #[serde(default)]
    pub kind: String,
    /// Rules, first match wins.
    #[serde(default)]
    pub rules: Vec<PolicyRule>,
    /// Stages never recorded.
    #[serde(default)]
    pub omit_stages: Vec<Stage>,
    /// Drop `metadata.managedFields` from recorded bodies.
    #[serde(default)]
    pub omit_managed_fields: bool,
}

/// One rule; every non-empty list must match.
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PolicyRule {
    /// The level of matching requests.
    pub level: Level,
    /// User names.
    #[serde(default)]
    pub users: Vec<String>,
    /// Groups (any of the user's).
    #[serde(default)]
    pub user_groups: Vec<String>,
    /// Verbs (`get`, `list`, `watch`, `create`, … or the lowercase HTTP
    /// method for non-resource URLs).
    #[serde(default)]
    pub verbs: Vec<String>,
    /// Resources by group.
    #[serde(default)]
    pub resources: Vec<GroupResources>,
    /// Namespaces (`""` matches cluster-scoped requests).
    #[serde(default)]
    pub namespaces: Vec<String>,
    /// Non-resource paths; a trailing `*` is a prefix match.
    #[serde(default, rename = "nonResourceURLs")]
    pub non_resource_urls: Vec<String>,
    /// Stages this rule leaves out, besides the policy's.
    #[serde(default)]
    pub omit_stages: Vec<Stage>,
    /// Overrides the policy's `omitManagedFields`.
    pub omit_managed_fields: Option<bool>,
}

/// Resources of one group.
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct GroupResources {
    /// The group (`""` for core).
    #[serde(default)]
    pub group: String,
    /// Resources: `pods`, `pods/log`, `*`, `*/status`, `pods/*`; empty is
    /// every resource of the group.
    #[serde(default)]
    pub resources: Vec<String>,
    /// Object names; empty is any.
    #[serde(default)]
    pub resource_names: Vec<String>,
}

/// What the policy looks at in a request.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Attributes {
    /// User name (`""` when authentication failed).
    pub user: String,
    /// The user's groups.
    pub groups: Vec<String>,
    /// Verb.
    pub verb: String,
    /// For resource requests: group, resource, subresource, namespace,
    /// name. `None` for non-resource requests.
    pub resource: Option<ResourceAttributes>,
    /// The URL path.
    pub path: String,
}

/// The resource part of [`Attributes`].
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ResourceAttributes {
    /// Group.
    pub group: String,
    /// API version.
    pub version: String,
    /// Plural resource.
    pub resource: String,
    /// Subresource or `""`.
    pub subresource: String,
    /// Namespace or `""`.
    pub namespace: String,
    /// Name or `""`.
    pub name: String,
}

/// The decision for one request.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Decision {
    /// Level.
    pub level: Level,
    /// Stages not to record.
    pub omit_stages: Vec<Stage>,
    /// Drop managedFields from bodies.
    pub omit_managed_fields: bool,
}

impl Policy {
    /// Parses and checks a policy file's text (YAML or JSON).
    pub fn parse(text: &str) -> Result<Policy, String> {
        let p: Policy = serde_saphyr::from_str(text).map_err(|e| e.to_string())?;
        if p.kind != "Policy" || p.api_version != "audit.k8s.io/v1" {
            return Err(format!(
                "no kind {:?} is registered for version {:?}",
                p.kind, p.api_version
            ));
        }
        Ok(p)
    }

    /// The first matching rule's decision.
    pub fn evaluate(&self, a: &Attributes) -> Decision {
        for rule in &self.rules {
            if rule.matches(a) {
                let mut omit = self.omit_stages.clone();
                omit.extend(rule.omit_stages.iter().copied());
                return Decision {
                    level: rule.level,
                    omit_stages: omit,
                    omit_managed_fields: rule
                        .omit_managed_fields
                        .unwrap_or(self.omit_managed_fields),
                };
            }
        }
        Decision {
            level: Level::None,
            omit_stages: self.omit_stages.clone(),
            omit_managed_fields: self.omit_managed_fields,
        }
    }
}

impl PolicyRule {
    fn matches(&self, a: &Attributes) -> bool {
        if !self.users.is_empty() && !self.users.contains(&a.user) {
            return false;
        }
        if !self.user_groups.is_empty() && !a.groups.iter().any(|g| self.user_groups.contains(g)) {
            return false;
        }
        if !self.verbs.is_empty() && !self.verbs.contains(&a.verb) {
            return false;
        }
        if !self.non_resource_urls.is_empty()
            && (a.resource.is_some()
                || !self
                    .non_resource_urls
                    .iter()
                    .any(|u| url_matches(u, &a.path)))
        {
            return false;
        }
        if !self.namespaces.is_empty() || !self.resources.is_empty() {
            return self.matches_resource(a);
        }
        true
    }

    fn matches_resource(&self, a: &Attributes) -> bool {
        let Some(r) = &a.resource else {
            return false;
        };
        if !self.namespaces.is_empty() && !self.namespaces.contains(&r.namespace) {
            return false;
        }
        if self.resources.is_empty() {
            return true;
        }
        let combined = if r.subresource.is_empty() {
            r.resource.clone()
        } else {
            format!("{}/{}", r.resource, r.subresource)
        };
        for gr in self.resources.iter().filter(|gr| gr.group == r.group) {
            if gr.resources.is_empty() {
                return true;
            }
            for res in &gr.resources {
                if !gr.resource_names.is_empty() && !gr.resource_names.contains(&r.name) {
                    continue;
                }
                if *res == combined
                    || res == "*"
                    || (!r.subresource.is_empty() && *res == format!("*/{}", r.subresource))
                    || *res == format!("{}/*", r.resource)
                {
                    return true;
                }
            }
        }
        false
    }

    /// Whether this rule names `secrets` of the core group explicitly (the
    /// only way a Secret's body is recorded; see `http/audit.rs`).
    pub fn names_secrets(&self) -> bool {
        self.resources
            .iter()
            .any(|gr| gr.group.is_empty() && gr.resources.iter().any(|r| r == "secrets"))
    }
}

impl Policy {
    /// Whether the rule that decides `a` names Secrets explicitly.
    pub fn secrets_named_for(&self, a: &Attributes) -> bool {
        self.rules
            .iter()
            .find(|r| r.matches(a))
            .is_some_and(PolicyRule::names_secrets)
    }
}

fn url_matches(spec: &str, path: &str) -> bool {
    match spec.strip_suffix('*') {
        Some(prefix) => path.starts_with(prefix),
        None => spec == path,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const POLICY: &str = r#"
apiVersion: audit.k8s.io/v1
kind: Policy
omitStages: [RequestReceived]
rules:
  - level: None
    users: ["system:kube-proxy"]
  - level: None
    nonResourceURLs: ["/healthz*", "/version"]
  - level: RequestResponse
    resources:
      - group: ""
        resources: ["secrets"]
        resourceNames: ["keep"]
  - level: Metadata
    resources:
      - group: ""
        resources: ["secrets", "configmaps"]
  - level: Request
    verbs: ["create", "update", "patch"]
    userGroups: ["dev"]
    namespaces: ["team"]
    omitStages: [ResponseStarted]
    omitManagedFields: true
  - level: Metadata
    resources:
      - group: "apps"
        resources: ["*/scale", "deployments/*"]
  - level: RequestResponse
    resources:
      - group: ""
        resources: ["pods/log"]
  - level: Metadata
"#;

    fn res(
        group: &str,
        resource: &str,
        sub: &str,
        ns: &str,
        name: &str,
    ) -> Option<ResourceAttributes> {
        Some(ResourceAttributes {
            group: group.into(),
            version: "v1".into(),
            resource: resource.into(),
            subresource: sub.into(),
            namespace: ns.into(),
            name: name.into(),
        })
    }

    fn attrs(
        user: &str,
        groups: &[&str],
        verb: &str,
        r: Option<ResourceAttributes>,
        path: &str,
    ) -> Attributes {
        Attributes {
            user: user.into(),
            groups: groups.iter().map(|g| g.to_string()).collect(),
            verb: verb.into(),
            resource: r,
            path: path.into(),
        }
    }

    #[test]
    fn first_matching_rule_decides() {
        let p = Policy::parse(POLICY).expect("policy");
        let level = |a: &Attributes| p.evaluate(a).level;
        assert_eq!(
            level(&attrs(
                "system:kube-proxy",
                &[],
                "get",
                res("", "pods", "", "a", "p"),
                "/api/v1/namespaces/a/pods/p"
            )),
            Level::None
        );
        assert_eq!(
            level(&attrs("u", &[], "get", None, "/healthz/etcd")),
            Level::None
        );
        assert_eq!(
            level(&attrs("u", &[], "get", None, "/version")),
            Level::None
        );
        assert_eq!(
            level(&attrs("u", &[], "get", None, "/versions")),
            Level::Metadata
        );
        assert_eq!(
            level(&attrs(
                "u",
                &[],
                "get",
                res("", "secrets", "", "a", "keep"),
                ""
            )),
            Level::RequestResponse
        );
        assert_eq!(
            level(&attrs(
                "u",
                &[],
                "get",
                res("", "secrets", "", "a", "other"),
                ""
            )),
            Level::Metadata
        );
        // Request only for dev in team, creating.
        let team = attrs("u", &["dev"], "create", res("", "pods", "", "team", ""), "");
        assert_eq!(level(&team), Level::Request);
        let d = p.evaluate(&team);
        assert_eq!(
            d.omit_stages,
            [Stage::RequestReceived, Stage::ResponseStarted]
        );
        assert!(d.omit_managed_fields);
        assert_eq!(
            level(&attrs(
                "u",
                &["ops"],
                "create",
                res("", "pods", "", "team", ""),
                ""
            )),
            Level::Metadata
        );
        assert_eq!(
            level(&attrs(
                "u",
                &["dev"],
                "create",
                res("", "pods", "", "other", ""),
                ""
            )),
            Level::Metadata
        );
        assert_eq!(
            level(&attrs(
                "u",
                &[],
                "get",
                res("", "pods", "log", "a", "p"),
                ""
            )),
            Level::RequestResponse
        );
        assert_eq!(
            level(&attrs("u", &[], "get", res("", "pods", "", "a", "p"), "")),
            Level::Metadata
        );
    }

    #[test]
    fn subresource_wildcards() {
        let rule = |resources: &[&str]| PolicyRule {
            level: Level::Request,
            resources: vec![GroupResources {
                group: "apps".into(),
                resources: resources.iter().map(|r| r.to_string()).collect(),
                resource_names: vec![],
            }],
            ..PolicyRule::default()
        };
        let scale = attrs(
            "u",
            &[],
            "get",
            res("apps", "deployments", "scale", "a", "d"),
            "",
        );
        let plain = attrs(
            "u",
            &[],
            "get",
            res("apps", "deployments", "", "a", "d"),
            "",
        );
        let rs = attrs(
            "u",
            &[],
            "get",
            res("apps", "replicasets", "scale", "a", "d"),
            "",
        );
        assert!(rule(&["*/scale"]).matches(&scale));
        assert!(!rule(&["*/scale"]).matches(&plain));
        assert!(rule(&["*/scale"]).matches(&rs));
        assert!(rule(&["deployments/*"]).matches(&scale));
        assert!(!rule(&["deployments/*"]).matches(&rs));
        assert!(rule(&["*"]).matches(&scale));
        assert!(!rule(&["deployments"]).matches(&scale));
        assert!(rule(&["deployments/scale"]).matches(&scale));
        // Resource rules never match non-resource requests.
        assert!(!rule(&["*"]).matches(&attrs("u", &[], "get", None, "/metrics")));
        let empty_group = PolicyRule {
            level: Level::Metadata,
            resources: vec![GroupResources::default()],
            ..PolicyRule::default()
        };
        assert!(empty_group.matches(&attrs("u", &[], "get", res("", "pods", "", "", ""), "")));
        assert!(!empty_group.matches(&plain));
    }

    #[test]
    fn no_rule_is_none_and_bad_kind_fails() {
        let p =
            Policy::parse("apiVersion: audit.k8s.io/v1\nkind: Policy\nrules: []\n").expect("ok");
        assert_eq!(p.evaluate(&Attributes::default()).level, Level::None);
        assert!(Policy::parse("apiVersion: v1\nkind: Policy\n").is_err());
        assert!(
            Policy::parse("apiVersion: audit.k8s.io/v1\nkind: Policy\nrules:\n  - level: Loud\n")
                .is_err()
        );
    }
}
