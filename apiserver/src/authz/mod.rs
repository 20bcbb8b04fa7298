//! Authorization: whether an authenticated user may do what a request
//! asks (kube-apiserver's `--authorization-mode`).
//!
//! - [`Authorizer`] is the union of the configured [`Mode`]s, in order,
//!   behind upstream's privileged-group authorizer (`system:masters` may
//!   do everything). The first that allows wins.
//! - [`attributes`]: a request's `authorizer.Attributes` and upstream's
//!   403 for them.
//! - [`rbac`]: pure RBAC evaluation over a snapshot; [`cache`] keeps that
//!   snapshot current from informers, so authorizing never reads the store.
//! - [`delegated`]: the host's `SubjectAccessReview`s, for what a host's
//!   aggregator sends to the root path (aggregated mode).
//! - [`escalation`]: the admission plugin that refuses Roles and bindings
//!   granting more than their author holds (upstream's RBAC storage
//!   checks).
//!
//! The HTTP layer (`http/authz.rs`) calls [`Authorizer::authorize`] for
//! every authenticated request, after impersonation.

pub mod attributes;
pub mod cache;
pub mod delegated;
pub mod escalation;
pub mod rbac;

use skein_admission::UserInfo;

pub use attributes::Attributes;
pub use cache::RbacCache;
use rbac::Rule;

/// The group whose members are always allowed.
pub const MASTERS: &str = "system:masters";

/// One `--authorization-mode` value.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    /// `RBAC`: the `rbac.authorization.k8s.io` objects decide.
    Rbac,
    /// `AlwaysAllow`: every request is allowed.
    AlwaysAllow,
}

/// An authorizer's answer.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Decision {
    /// Whether the request is allowed.
    pub allowed: bool,
    /// Upstream's reason text (RBAC: which binding allowed it, or the
    /// resolution errors of a denial); may be empty.
    pub reason: String,
}

/// The union of the configured modes. Cheap to clone.
#[derive(Clone)]
pub struct Authorizer {
    modes: Vec<Mode>,
    rbac: Option<RbacCache>,
    delegated: Option<std::sync::Arc<delegated::Delegated>>,
}

impl std::fmt::Debug for Authorizer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Authorizer")
            .field("modes", &self.modes)
            .field("delegated", &self.delegated)
            .finish()
    }
}

impl Authorizer {
    /// An authorizer over `modes`; `rbac` is consulted for [`Mode::Rbac`]
    /// (without it that mode allows nothing).
    pub fn new(modes: Vec<Mode>, rbac: Option<RbacCache>) -> Authorizer {
        Authorizer {
            modes,
            rbac,
            delegated: None,
        }
    }

    /// The same, with the host's reviewer for host requests (aggregated
    /// mode; `http/host_view.rs`).
    pub fn with_delegation(mut self, delegated: delegated::Delegated) -> Authorizer {
        self.delegated = Some(std::sync::Arc::new(delegated));
        self
    }

    /// The host's reviewer, when delegation is configured.
    pub fn delegated(&self) -> Option<&delegated::Delegated> {
        self.delegated.as_deref()
    }

    /// Everything is allowed (tests, and servers without authorization).
    pub fn always_allow() -> Authorizer {
        Authorizer::new(vec![Mode::AlwaysAllow], None)
    }

    /// Whether RBAC is one of the modes.
    pub fn uses_rbac(&self) -> bool {
        self.modes.contains(&Mode::Rbac)
    }

    /// Decides `attrs` (upstream's union authorizer: the first allow
    /// wins; the reasons of denials are joined with newlines).
    pub fn authorize(&self, attrs: &Attributes) -> Decision {
        if attrs.user.groups.iter().any(|g| g == MASTERS) {
            return allow("");
        }
        let mut reasons = Vec::new();
        for mode in &self.modes {
            match mode {
                Mode::AlwaysAllow => return allow(""),
                Mode::Rbac => {
                    if let Some(cache) = &self.rbac {
                        let v = cache.policy().authorize(attrs);
                        if v.allowed {
                            return allow(&v.reason);
                        }
                        if !v.reason.is_empty() {
                            reasons.push(v.reason);
                        }
                    }
                }
            }
        }
        Decision {
            allowed: false,
            reason: reasons.join("\n"),
        }
    }

    /// The rules `user` holds in `namespace` ("" for cluster-wide only),
    /// as upstream's union `RulesFor`: `*` for `AlwaysAllow`, RBAC's rules
    /// for `RBAC` (`system:masters` has its rules through the
    /// `cluster-admin` binding). The second value is the resolution
    /// errors (the list is then incomplete).
    pub fn rules_for(&self, user: &UserInfo, namespace: &str) -> (Vec<Rule>, Vec<String>) {
        let mut rules = Vec::new();
        let mut errors = Vec::new();
        let everything = || {
            let all = vec!["*".to_string()];
            [
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
            ]
        };
        for mode in &self.modes {
            match mode {
                Mode::AlwaysAllow => rules.extend(everything()),
                Mode::Rbac => {
                    if let Some(cache) = &self.rbac {
                        let (r, e) = cache.policy().rules_for(user, namespace);
                        rules.extend(r);
                        errors.extend(e);
                    }
                }
            }
        }
        (rules, errors)
    }

    /// The RBAC snapshot's rules for a role reference (escalation checks).
    pub fn role_reference_rules(
        &self,
        kind: &str,
        name: &str,
        namespace: &str,
    ) -> Result<Vec<Rule>, String> {
        match &self.rbac {
            Some(cache) => cache.policy().role_reference_rules(kind, name, namespace),
            None => Ok(Vec::new()),
        }
    }
}

fn allow(reason: &str) -> Decision {
    Decision {
        allowed: true,
        reason: reason.to_string(),
    }
}
