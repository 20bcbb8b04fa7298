//! What admission plugins are told about a request.

use std::collections::BTreeMap;
use std::fmt;

use serde_json::Value;

/// The kind of write being admitted.
///
/// Reads never go through admission. `Connect` covers the connect-style
/// subresources (`pods/exec`, `pods/portforward`, `services/proxy`, ...).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Operation {
    /// A `POST` that creates an object (or a subresource such as `pods/binding`).
    Create,
    /// A `PUT` or `PATCH` of an existing object, including server-side apply.
    Update,
    /// A `DELETE` of one object (a `deletecollection` is admitted per item).
    Delete,
    /// A connect-style request to a subresource.
    Connect,
}

impl Operation {
    /// All operations, in declaration order.
    pub const ALL: [Operation; 4] = [
        Operation::Create,
        Operation::Update,
        Operation::Delete,
        Operation::Connect,
    ];

    /// The upstream spelling (`admission.k8s.io` `Operation`): `"CREATE"`,
    /// `"UPDATE"`, `"DELETE"` or `"CONNECT"`. This is what an `AdmissionReview`
    /// and webhook `rules[].operations` use.
    pub fn as_str(self) -> &'static str {
        match self {
            Operation::Create => "CREATE",
            Operation::Update => "UPDATE",
            Operation::Delete => "DELETE",
            Operation::Connect => "CONNECT",
        }
    }
}

impl fmt::Display for Operation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A resource by group, version and plural name, e.g. `apps/v1 deployments`.
///
/// The core group is the empty string.
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct GroupVersionResource {
    /// API group; `""` for the core group.
    pub group: String,
    /// API version, e.g. `"v1"`.
    pub version: String,
    /// Plural lower-case resource name, e.g. `"deployments"`.
    pub resource: String,
}

impl GroupVersionResource {
    /// A GVR from its three parts.
    pub fn new(
        group: impl Into<String>,
        version: impl Into<String>,
        resource: impl Into<String>,
    ) -> Self {
        Self {
            group: group.into(),
            version: version.into(),
            resource: resource.into(),
        }
    }

    /// The group-qualified resource as Kubernetes prints it in messages:
    /// `"deployments.apps"`, or just `"pods"` for the core group.
    pub fn qualified_resource(&self) -> String {
        qualify(&self.resource, &self.group)
    }
}

impl fmt::Display for GroupVersionResource {
    /// Upstream's `schema.GroupVersionResource` format:
    /// `apps/v1, Resource=deployments`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}, Resource={}",
            group_version(&self.group, &self.version),
            self.resource
        )
    }
}

/// A type by group, version and kind, e.g. `apps/v1 Deployment`.
///
/// The core group is the empty string.
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct GroupVersionKind {
    /// API group; `""` for the core group.
    pub group: String,
    /// API version, e.g. `"v1"`.
    pub version: String,
    /// Kind, e.g. `"Deployment"`.
    pub kind: String,
}

impl GroupVersionKind {
    /// A GVK from its three parts.
    pub fn new(
        group: impl Into<String>,
        version: impl Into<String>,
        kind: impl Into<String>,
    ) -> Self {
        Self {
            group: group.into(),
            version: version.into(),
            kind: kind.into(),
        }
    }

    /// The `apiVersion` field value: `"apps/v1"`, or `"v1"` for the core group.
    pub fn api_version(&self) -> String {
        group_version(&self.group, &self.version)
    }
}

impl fmt::Display for GroupVersionKind {
    /// Upstream's `schema.GroupVersionKind` format: `apps/v1, Kind=Deployment`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}, Kind={}", self.api_version(), self.kind)
    }
}

/// `group/version`, or just `version` for the core group.
fn group_version(group: &str, version: &str) -> String {
    if group.is_empty() {
        version.to_owned()
    } else {
        format!("{group}/{version}")
    }
}

/// `name.group`, or just `name` for the core group.
pub(crate) fn qualify(name: &str, group: &str) -> String {
    if group.is_empty() {
        name.to_owned()
    } else {
        format!("{name}.{group}")
    }
}

/// The group every authenticated user belongs to.
pub const AUTHENTICATED_GROUP: &str = "system:authenticated";

/// The group of unauthenticated requests; a user already in it does not get
/// [`AUTHENTICATED_GROUP`] added (as upstream's `AuthenticatedGroupAdder`).
pub const UNAUTHENTICATED_GROUP: &str = "system:unauthenticated";

/// The user of anonymous requests (`--anonymous-auth`).
pub const ANONYMOUS_USER: &str = "system:anonymous";

/// The user making a request (upstream `user.Info`): what authentication
/// found, what the authorizer and admission judge, and what a write
/// records (a CertificateSigningRequest's `spec.username`). The one user
/// type of every Skein crate.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct UserInfo {
    /// User name, e.g. `"system:admin"` or
    /// `"system:serviceaccount:default:builder"`.
    pub name: String,
    /// The user's uid: a token file's 3rd column, a ServiceAccount's uid;
    /// `None` when the authenticator has none (certificate users).
    pub uid: Option<String>,
    /// Groups, e.g. `["system:authenticated"]`.
    pub groups: Vec<String>,
    /// Extra authenticator-provided attributes (ServiceAccount tokens'
    /// credential id and bound Pod, scopes), as `user.Info.GetExtra`.
    pub extra: BTreeMap<String, Vec<String>>,
}

impl UserInfo {
    /// A user with `groups` plus [`AUTHENTICATED_GROUP`], which is added
    /// unless it, or [`UNAUTHENTICATED_GROUP`], is already there.
    pub fn authenticated(name: String, uid: Option<String>, mut groups: Vec<String>) -> Self {
        if !groups
            .iter()
            .any(|g| g == AUTHENTICATED_GROUP || g == UNAUTHENTICATED_GROUP)
        {
            groups.push(AUTHENTICATED_GROUP.to_string());
        }
        UserInfo {
            name,
            uid,
            groups,
            extra: BTreeMap::new(),
        }
    }

    /// The anonymous user: `system:anonymous` in `system:unauthenticated`.
    pub fn anonymous() -> Self {
        UserInfo {
            name: ANONYMOUS_USER.to_string(),
            uid: None,
            groups: vec![UNAUTHENTICATED_GROUP.to_string()],
            extra: BTreeMap::new(),
        }
    }

    /// The `user` of a TokenReview / `userInfo` of a SelfSubjectReview:
    /// `username`, `uid` (when set), `groups`, `extra` (when any).
    pub fn to_json(&self) -> Value {
        let mut info = serde_json::json!({"username": self.name, "groups": self.groups});
        if let Some(uid) = self.uid.as_ref().filter(|u| !u.is_empty()) {
            info["uid"] = serde_json::json!(uid);
        }
        if !self.extra.is_empty() {
            info["extra"] = serde_json::json!(self.extra);
        }
        info
    }
}

/// Everything an admission plugin is told about one request
/// (upstream `admission.Attributes`).
///
/// The apiserver builds one per request after decoding the body and hands it
/// first to [`crate::Chain::admit`] (mutable) and later, after the strategy has
/// run, to [`crate::Chain::validate`] (shared). Only `object` is meant to
/// change between the two; every other field is the request's identity.
#[derive(Debug, Clone, PartialEq)]
pub struct Attributes {
    /// What kind of write this is.
    pub operation: Operation,
    /// The resource addressed by the URL (for a subresource: its parent
    /// resource, e.g. `pods` for `pods/status`).
    pub gvr: GroupVersionResource,
    /// The kind of `object` (for a subresource this may differ from the
    /// parent resource's kind, e.g. `Binding` for `pods/binding`).
    pub gvk: GroupVersionKind,
    /// The subresource, e.g. `Some("status")`; `None` for the main resource.
    pub subresource: Option<String>,
    /// Namespace, `None` for cluster-scoped resources.
    pub namespace: Option<String>,
    /// Object name. May be empty on `Create` when the client set only
    /// `metadata.generateName`.
    pub name: String,
    /// The incoming object: present on `Create` and `Update`, absent on
    /// `Delete` unless the request carried delete options, and on `Connect`
    /// the connect options if any. Mutating plugins change this in place.
    pub object: Option<Value>,
    /// The stored object before this request: present on `Update` and
    /// `Delete`, absent on `Create`. Plugins must treat it as read-only.
    pub old_object: Option<Value>,
    /// Who is asking.
    pub user: UserInfo,
    /// `?dryRun=All`: nothing will be persisted, so plugins must not cause
    /// side effects outside the request (no counters, no external calls that
    /// change state).
    pub dry_run: bool,
}

impl Attributes {
    /// Attributes for `operation` on `name` of resource `gvr` (kind `gvk`);
    /// everything else starts empty: no namespace, subresource or objects,
    /// an anonymous [`UserInfo`], and not a dry run. Set the public fields
    /// for the rest.
    pub fn new(
        operation: Operation,
        gvr: GroupVersionResource,
        gvk: GroupVersionKind,
        name: impl Into<String>,
    ) -> Self {
        Self {
            operation,
            gvr,
            gvk,
            subresource: None,
            namespace: None,
            name: name.into(),
            object: None,
            old_object: None,
            user: UserInfo::default(),
            dry_run: false,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn operation_strings_match_upstream() {
        let cases = [
            (Operation::Create, "CREATE"),
            (Operation::Update, "UPDATE"),
            (Operation::Delete, "DELETE"),
            (Operation::Connect, "CONNECT"),
        ];
        for (op, want) in cases {
            assert_eq!(op.as_str(), want);
            assert_eq!(op.to_string(), want);
        }
        assert_eq!(Operation::ALL.len(), cases.len());
    }

    #[test]
    fn group_version_formatting() {
        let cases = [
            (
                GroupVersionResource::new("apps", "v1", "deployments"),
                "apps/v1, Resource=deployments",
                "deployments.apps",
            ),
            (
                GroupVersionResource::new("", "v1", "pods"),
                "v1, Resource=pods",
                "pods",
            ),
        ];
        for (gvr, display, qualified) in cases {
            assert_eq!(gvr.to_string(), display);
            assert_eq!(gvr.qualified_resource(), qualified);
        }

        let gvk = GroupVersionKind::new("apps", "v1", "Deployment");
        assert_eq!(gvk.api_version(), "apps/v1");
        assert_eq!(gvk.to_string(), "apps/v1, Kind=Deployment");
        let core = GroupVersionKind::new("", "v1", "Pod");
        assert_eq!(core.api_version(), "v1");
        assert_eq!(core.to_string(), "v1, Kind=Pod");
    }

    #[test]
    fn new_attributes_start_empty() {
        let a = Attributes::new(
            Operation::Create,
            GroupVersionResource::new("", "v1", "pods"),
            GroupVersionKind::new("", "v1", "Pod"),
            "web",
        );
        assert_eq!(a.name, "web");
        assert_eq!(a.subresource, None);
        assert_eq!(a.namespace, None);
        assert_eq!(a.object, None);
        assert_eq!(a.old_object, None);
        assert_eq!(a.user, UserInfo::default());
        assert!(!a.dry_run);
    }
}
