//! Subresources: which (group, resource) has which, with the kind and
//! verbs kube-apiserver v1.33's discovery lists for each, and the registry
//! write path they share.
//!
//! `status` and `scale` follow the resource table's flags
//! ([`ResourceInfo::status`], [`ResourceInfo::scale`]); every other
//! subresource is in [`EXTRA`]. Discovery and OpenAPI read [`of`], the HTTP
//! layer serves exactly those, so the three agree.
//!
//! [`Registry::update_subresource`] is the read-modify-write of writes
//! through a subresource that change only part of an object
//! (`pods/ephemeralcontainers`, `pods/resize`, `pods/binding`,
//! `namespaces/finalize`, `certificatesigningrequests/approval`): the caller
//! computes the new object from the stored one; system fields are kept from
//! the stored object, metadata is validated, the manager's managedFields
//! entry names the subresource.

use serde_json::{Value, json};
use skein_storage::Error as StoreError;

use super::object::{meta_str, set_meta};
use super::{
    Registry, ResourceInfo, WriteOptions, key, managed, parse_rv, store_error, strategy, validation,
};
use crate::status::ApiError;

/// One subresource as discovery lists it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Subresource {
    /// The path segment after the object's name (`exec`, `status`).
    pub name: &'static str,
    /// Group of the kind it takes and returns, when it is not the parent's
    /// (`policy` for `pods/eviction`); `None` for the parent's group/version.
    pub group_version: Option<(&'static str, &'static str)>,
    /// The kind (`PodExecOptions`, `Eviction`, the parent's kind for status).
    pub kind: &'static str,
    /// Discovery verbs, sorted.
    pub verbs: &'static [&'static str],
}

impl Subresource {
    /// The response kind's group and version, given the parent resource.
    pub fn group_version_of(&self, parent: &ResourceInfo) -> (&'static str, &'static str) {
        self.group_version.unwrap_or((parent.group, parent.version))
    }
}

const GET_PATCH_UPDATE: &[&str] = &["get", "patch", "update"];
const CONNECT: &[&str] = &["create", "get"];
const PROXY: &[&str] = &["create", "delete", "get", "patch", "update"];
const CREATE: &[&str] = &["create"];

const fn sub(
    name: &'static str,
    group_version: Option<(&'static str, &'static str)>,
    kind: &'static str,
    verbs: &'static [&'static str],
) -> Subresource {
    Subresource {
        name,
        group_version,
        kind,
        verbs,
    }
}

/// The subresources other than `status` and `scale`, per (group, plural),
/// as kube-apiserver v1.33 serves them by default.
pub const EXTRA: &[(&str, &str, &[Subresource])] = &[
    (
        "",
        "pods",
        &[
            sub("attach", None, "PodAttachOptions", CONNECT),
            sub("binding", None, "Binding", CREATE),
            sub("ephemeralcontainers", None, "Pod", GET_PATCH_UPDATE),
            sub("eviction", Some(("policy", "v1")), "Eviction", CREATE),
            sub("exec", None, "PodExecOptions", CONNECT),
            sub("log", None, "Pod", &["get"]),
            sub("portforward", None, "PodPortForwardOptions", CONNECT),
            sub("proxy", None, "PodProxyOptions", PROXY),
            sub("resize", None, "Pod", GET_PATCH_UPDATE),
        ],
    ),
    (
        "",
        "nodes",
        &[sub("proxy", None, "NodeProxyOptions", PROXY)],
    ),
    (
        "",
        "services",
        &[sub("proxy", None, "ServiceProxyOptions", PROXY)],
    ),
    (
        "",
        "serviceaccounts",
        &[sub(
            "token",
            Some(("authentication.k8s.io", "v1")),
            "TokenRequest",
            CREATE,
        )],
    ),
    (
        "",
        "namespaces",
        &[sub("finalize", None, "Namespace", &["update"])],
    ),
    // Skein's own: a member cluster through the federation
    // (`http/cluster_proxy.rs`), named as Karmada names it.
    (
        "federation.skein.io",
        "clusters",
        &[sub("proxy", None, "ClusterProxyOptions", PROXY)],
    ),
    // The federated context of aggregated mode: the whole API again under
    // `federations/default/proxy` (`http/routes.rs` AGGREGATED_PREFIX),
    // which a host authorizes as this subresource.
    (
        "federation.skein.io",
        "federations",
        &[sub("proxy", None, "FederationProxyOptions", PROXY)],
    ),
    (
        "certificates.k8s.io",
        "certificatesigningrequests",
        &[sub(
            "approval",
            None,
            "CertificateSigningRequest",
            GET_PATCH_UPDATE,
        )],
    ),
];

/// The `status`/`scale`-less subresources of `(group, plural)`.
pub fn extra(group: &str, plural: &str) -> &'static [Subresource] {
    EXTRA
        .iter()
        .find(|(g, p, _)| *g == group && *p == plural)
        .map(|(_, _, s)| *s)
        .unwrap_or_default()
}

/// Every subresource of `r`, sorted by name (discovery's order).
pub fn of(r: &ResourceInfo) -> Vec<Subresource> {
    let mut out: Vec<Subresource> = extra(r.group, r.plural).to_vec();
    if r.scale.is_some() {
        out.push(sub(
            "scale",
            Some(("autoscaling", "v1")),
            "Scale",
            GET_PATCH_UPDATE,
        ));
    }
    if r.status {
        out.push(sub("status", None, r.kind, GET_PATCH_UPDATE));
    }
    out.sort_by_key(|s| s.name);
    out
}

/// Finds subresource `name` of `r`.
pub fn find(r: &ResourceInfo, name: &str) -> Option<Subresource> {
    of(r).into_iter().find(|s| s.name == name)
}

/// A top-level resource served without storage, listed by discovery with
/// the stored ones: core/v1 `bindings` (create a Binding, upstream's
/// `LegacyBindingREST`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Virtual {
    /// Group.
    pub group: &'static str,
    /// Version.
    pub version: &'static str,
    /// Plural.
    pub plural: &'static str,
    /// Singular.
    pub singular: &'static str,
    /// Kind.
    pub kind: &'static str,
    /// Namespaced.
    pub namespaced: bool,
    /// Verbs.
    pub verbs: &'static [&'static str],
}

/// The storage-less resources of `group`/`version` handled here.
pub fn virtual_resources(group: &str, version: &str) -> Vec<Virtual> {
    match (group, version) {
        ("", "v1") => vec![Virtual {
            group: "",
            version: "v1",
            plural: "bindings",
            singular: "binding",
            kind: "Binding",
            namespaced: true,
            verbs: CREATE,
        }],
        _ => vec![],
    }
}

/// Keeps the fields no client may change from the stored object.
fn keep_system_fields(new: &mut Value, old: &Value) {
    for field in [
        "uid",
        "creationTimestamp",
        "deletionTimestamp",
        "deletionGracePeriodSeconds",
        "generation",
    ] {
        let v = old.get("metadata").and_then(|m| m.get(field)).cloned();
        set_meta(new, field, v);
    }
}

impl Registry {
    /// Read-modify-write of one object through a subresource that changes
    /// only part of it. `change` gets the stored object and returns the
    /// whole new object; a `metadata.resourceVersion` in it is a
    /// precondition. Name, namespace and system fields stay the stored
    /// object's; metadata is validated; the write's managedFields entry
    /// names `subresource`. Retried on conflicts (without a precondition).
    /// A missing object is 404.
    pub async fn update_subresource<F>(
        &self,
        res: &ResourceInfo,
        ns: &str,
        name: &str,
        subresource: &'static str,
        opts: &WriteOptions,
        mut change: F,
    ) -> Result<Value, ApiError>
    where
        F: FnMut(&Value) -> Result<Value, ApiError> + Send,
    {
        let key = key::object(res, ns, name);
        for _ in 0..16 {
            let current = match self.store.get(&key).await {
                Ok(kv) => kv,
                Err(StoreError::NotFound { .. }) => {
                    return Err(ApiError::not_found(res.group, res.plural, name));
                }
                Err(e) => return Err(store_error(e)),
            };
            let old = Registry::decode(&current)?;
            let mut new = change(&old)?;
            let precondition = meta_str(&new, "resourceVersion")
                .filter(|s| !s.is_empty())
                .map(|rv| parse_rv(rv, res, name))
                .transpose()?;
            if precondition.is_some_and(|rv| rv != current.mod_revision) {
                return Err(ApiError::conflict(
                    res.group,
                    res.plural,
                    name,
                    ApiError::MODIFIED,
                ));
            }
            set_meta(&mut new, "name", Some(json!(name)));
            if res.namespaced {
                set_meta(&mut new, "namespace", Some(json!(ns)));
            }
            keep_system_fields(&mut new, &old);
            let causes = validation::object_meta(&new, strategy::name_rule(res));
            if !causes.is_empty() {
                return Err(ApiError::invalid(res.group, res.kind, name, causes));
            }
            if !opts.keep_managed_fields {
                managed::record_update(
                    &mut new,
                    Some(&old),
                    res,
                    &opts.field_manager,
                    Some(subresource),
                );
            }
            match self
                .write_update(res, ns, name, new, &old, current.mod_revision, opts)
                .await
            {
                Err(e) if e.reason() == "Conflict" && precondition.is_none() => continue,
                other => return other,
            }
        }
        Err(ApiError::conflict(
            res.group,
            res.plural,
            name,
            "too many concurrent updates",
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::registry::resource;

    fn names(group: &str, plural: &str) -> Vec<&'static str> {
        let r = resource::builtins()
            .into_iter()
            .find(|r| r.group == group && r.plural == plural)
            .expect("served");
        of(&r).iter().map(|s| s.name).collect()
    }

    #[test]
    fn pods_have_upstreams_subresources_in_discovery_order() {
        assert_eq!(
            names("", "pods"),
            [
                "attach",
                "binding",
                "ephemeralcontainers",
                "eviction",
                "exec",
                "log",
                "portforward",
                "proxy",
                "resize",
                "status"
            ]
        );
        assert_eq!(names("", "replicationcontrollers"), ["scale", "status"]);
        assert_eq!(names("", "namespaces"), ["finalize", "status"]);
        assert_eq!(names("", "nodes"), ["proxy", "status"]);
        assert_eq!(names("", "services"), ["proxy", "status"]);
        assert_eq!(names("", "serviceaccounts"), ["token"]);
        assert_eq!(names("", "configmaps"), Vec::<&str>::new());
    }

    #[test]
    fn every_extra_row_names_a_served_resource() {
        // federation.skein.io rows come from the CRDs installed at start.
        for (group, plural, _) in EXTRA.iter().filter(|(g, _, _)| *g != "federation.skein.io") {
            assert!(
                resource::builtins()
                    .iter()
                    .any(|r| r.group == *group && r.plural == *plural),
                "{group}/{plural}"
            );
        }
    }

    #[test]
    fn eviction_and_token_name_their_own_group() {
        let pods = resource::builtin("", "v1", "pods").expect("pods");
        let eviction = find(&pods, "eviction").expect("eviction");
        assert_eq!(eviction.group_version_of(&pods), ("policy", "v1"));
        let log = find(&pods, "log").expect("log");
        assert_eq!(log.group_version_of(&pods), ("", "v1"));
        assert!(find(&pods, "scale").is_none());
    }
}
