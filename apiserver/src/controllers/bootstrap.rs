//! Objects that exist from the first start, as kube-apiserver's bootstrap
//! creates them (idempotent; run before serving):
//! - the `default`, `kube-system`, `kube-public` and `kube-node-lease`
//!   namespaces, and the `kubernetes.io/metadata.name` label on every
//!   namespace stored without it (written before the label existed);
//! - the `system-node-critical` and `system-cluster-critical`
//!   PriorityClasses;
//! - the RBAC bootstrap roles users see first: `cluster-admin` (and its
//!   binding to `system:masters`), `admin`, `edit` and `view` with their
//!   aggregation rules, and the `system:aggregate-to-*` roles whose rules
//!   the aggregation controller gathers into them;
//! - the mandatory and suggested FlowSchemas and
//!   PriorityLevelConfigurations (`flowcontrol::defaults`).
//!
//! Existing objects are left as they are (upstream reconciles the RBAC
//! defaults marked `autoupdate`; see the module docs of `controllers`).

use serde_json::{Value, json};
use skein_admission::namespace_name::{self, LABEL};

use crate::registry::list::ListQuery;
use crate::registry::{Registry, Target, WriteOptions, object, resource};
use crate::status::ApiError;

/// The namespaces every cluster has.
pub const SYSTEM_NAMESPACES: &[&str] =
    &["default", "kube-system", "kube-public", "kube-node-lease"];

/// The PriorityClasses every cluster has: name, value, description.
pub const SYSTEM_PRIORITY_CLASSES: &[(&str, i64, &str)] = &[
    (
        "system-node-critical",
        2_000_001_000,
        "Used for system critical pods that must not be moved from their current node.",
    ),
    (
        "system-cluster-critical",
        2_000_000_000,
        "Used for system critical pods that must run in the cluster, but can be moved to another node if necessary.",
    ),
];

/// The field manager kube-apiserver's own writes carry.
const MANAGER: &str = "kube-apiserver";

fn opts() -> WriteOptions {
    WriteOptions {
        dry_run: false,
        field_manager: MANAGER.into(),
        ..WriteOptions::default()
    }
}

/// Creates everything that is missing. Idempotent.
///
/// # Errors
///
/// A read or write failed.
pub async fn ensure(registry: &Registry) -> Result<(), ApiError> {
    ensure_namespaces(registry).await?;
    label_namespaces(registry).await?;
    for (name, value, description) in SYSTEM_PRIORITY_CLASSES {
        let obj = json!({
            "apiVersion": "scheduling.k8s.io/v1",
            "kind": "PriorityClass",
            "metadata": {"name": name},
            "value": value,
            "description": description,
            "preemptionPolicy": "PreemptLowerPriority",
        });
        create(registry, "scheduling.k8s.io", "v1", "priorityclasses", obj).await?;
    }
    for role in cluster_roles()
        .into_iter()
        .chain(aggregate_roles().map_err(|e| ApiError::internal(e.to_string()))?)
    {
        create(registry, RBAC, "v1", "clusterroles", role).await?;
    }
    for binding in cluster_role_bindings() {
        create(registry, RBAC, "v1", "clusterrolebindings", binding).await?;
    }
    for (ns, role) in namespaced_roles() {
        create_in(registry, RBAC, "v1", "roles", ns, role).await?;
    }
    crate::flowcontrol::defaults::ensure(registry, false).await?;
    Ok(())
}

/// The namespaced bootstrap Roles an aggregated API server's chart binds
/// to, as upstream's bootstrap policy: `extension-apiserver-authentication-reader`
/// in `kube-system` (read the front-proxy settings ConfigMap).
pub fn namespaced_roles() -> Vec<(&'static str, Value)> {
    let mut meta = rbac_meta("extension-apiserver-authentication-reader", &[]);
    meta["namespace"] = json!("kube-system");
    vec![(
        "kube-system",
        json!({
            "apiVersion": "rbac.authorization.k8s.io/v1",
            "kind": "Role",
            "metadata": meta,
            "rules": [{
                "apiGroups": [""],
                "resources": ["configmaps"],
                "resourceNames": ["extension-apiserver-authentication"],
                "verbs": ["get", "list", "watch"],
            }],
        }),
    )]
}

/// Creates the [`SYSTEM_NAMESPACES`] that are missing (also run
/// periodically: upstream's bootstrap and system-namespaces controllers
/// recreate them when deleted).
///
/// # Errors
///
/// A read or write failed.
pub async fn ensure_namespaces(registry: &Registry) -> Result<(), ApiError> {
    for name in SYSTEM_NAMESPACES {
        let obj = json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}});
        create(registry, "", "v1", "namespaces", obj).await?;
    }
    Ok(())
}

/// Creates `obj` (cluster-scoped) unless it exists.
pub(crate) async fn create(
    registry: &Registry,
    group: &str,
    version: &str,
    plural: &str,
    obj: Value,
) -> Result<(), ApiError> {
    create_in(registry, group, version, plural, "", obj).await
}

/// Creates `obj` in namespace `ns` ("" for cluster-scoped) unless it
/// exists.
async fn create_in(
    registry: &Registry,
    group: &str,
    version: &str,
    plural: &str,
    ns: &str,
    obj: Value,
) -> Result<(), ApiError> {
    let Some(res) = registry.resources().find(group, version, plural) else {
        return Ok(());
    };
    let name = object::name(&obj).to_string();
    if registry.get(&res, ns, &name).await.is_ok() {
        return Ok(());
    }
    let obj = res
        .normalize(obj)
        .map_err(|e| ApiError::internal(e.to_string()))?;
    match registry.create(&res, ns, obj, &opts()).await {
        Ok(_) => {
            tracing::info!(resource = res.plural, name, "created bootstrap object");
            Ok(())
        }
        Err(e) if e.reason() == "AlreadyExists" => Ok(()),
        Err(e) => Err(e),
    }
}

/// Adds the `kubernetes.io/metadata.name` label to namespaces stored
/// without it (upstream's defaulting shows it on every read).
async fn label_namespaces(registry: &Registry) -> Result<(), ApiError> {
    let Some(res) = resource::builtin("", "v1", "namespaces") else {
        return Ok(());
    };
    let page = registry.list(&res, None, &ListQuery::default()).await?;
    for ns in page.items {
        let name = object::name(&ns).to_string();
        if object::labels(&ns).get(LABEL) == Some(&name) {
            continue;
        }
        let result = registry
            .update_with(&res, "", &name, Target::Main, &opts(), |current| {
                let mut next = current.clone();
                namespace_name::label(&mut next, &name);
                Ok(next)
            })
            .await;
        match result {
            Ok(_) => {}
            Err(e) if e.reason() == "NotFound" => {}
            Err(e) => return Err(e),
        }
    }
    Ok(())
}

const RBAC: &str = "rbac.authorization.k8s.io";
const AGGREGATE_TO: &str = "rbac.authorization.k8s.io/aggregate-to-";

/// Upstream's metadata of bootstrap RBAC objects.
fn rbac_meta(name: &str, extra_labels: &[(&str, &str)]) -> Value {
    let mut labels = serde_json::Map::new();
    labels.insert("kubernetes.io/bootstrapping".into(), json!("rbac-defaults"));
    for (k, v) in extra_labels {
        labels.insert((*k).into(), json!(v));
    }
    json!({
        "name": name,
        "labels": labels,
        "annotations": {"rbac.authorization.kubernetes.io/autoupdate": "true"},
    })
}

fn aggregated(name: &str, selects: &str, extra_labels: &[(&str, &str)]) -> Value {
    json!({
        "apiVersion": "rbac.authorization.k8s.io/v1",
        "kind": "ClusterRole",
        "metadata": rbac_meta(name, extra_labels),
        "aggregationRule": {"clusterRoleSelectors": [
            {"matchLabels": {format!("{AGGREGATE_TO}{selects}"): "true"}}
        ]},
    })
}

/// `cluster-admin`, `admin`, `edit`, `view` as upstream's bootstrap policy
/// defines them (`edit` aggregates into `admin`, `view` into `edit`), and
/// the `system:` roles Skein's own clients and aggregated API servers use
/// (`system:discovery`, `system:basic-user`, `system:auth-delegator`,
/// `system:public-info-viewer`).
pub fn cluster_roles() -> Vec<Value> {
    let admin_label = format!("{AGGREGATE_TO}admin");
    let edit_label = format!("{AGGREGATE_TO}edit");
    vec![
        json!({
            "apiVersion": "rbac.authorization.k8s.io/v1",
            "kind": "ClusterRole",
            "metadata": rbac_meta("cluster-admin", &[]),
            "rules": [
                {"apiGroups": ["*"], "resources": ["*"], "verbs": ["*"]},
                {"nonResourceURLs": ["*"], "verbs": ["*"]},
            ],
        }),
        aggregated("admin", "admin", &[]),
        aggregated("edit", "edit", &[(admin_label.as_str(), "true")]),
        aggregated("view", "view", &[(edit_label.as_str(), "true")]),
        json!({
            "apiVersion": "rbac.authorization.k8s.io/v1",
            "kind": "ClusterRole",
            "metadata": rbac_meta("system:discovery", &[]),
            "rules": [{"nonResourceURLs": [
                "/api", "/api/*", "/apis", "/apis/*", "/healthz", "/livez", "/openapi",
                "/openapi/*", "/readyz", "/version", "/version/"
            ], "verbs": ["get"]}],
        }),
        json!({
            "apiVersion": "rbac.authorization.k8s.io/v1",
            "kind": "ClusterRole",
            "metadata": rbac_meta("system:basic-user", &[]),
            "rules": [
                {"apiGroups": ["authorization.k8s.io"], "resources": ["selfsubjectaccessreviews", "selfsubjectrulesreviews"], "verbs": ["create"]},
                {"apiGroups": ["authentication.k8s.io"], "resources": ["selfsubjectreviews"], "verbs": ["create"]},
            ],
        }),
        json!({
            "apiVersion": "rbac.authorization.k8s.io/v1",
            "kind": "ClusterRole",
            "metadata": rbac_meta("system:auth-delegator", &[]),
            "rules": [
                {"apiGroups": ["authentication.k8s.io"], "resources": ["tokenreviews"], "verbs": ["create"]},
                {"apiGroups": ["authorization.k8s.io"], "resources": ["subjectaccessreviews"], "verbs": ["create"]},
            ],
        }),
        json!({
            "apiVersion": "rbac.authorization.k8s.io/v1",
            "kind": "ClusterRole",
            "metadata": rbac_meta("system:public-info-viewer", &[]),
            "rules": [{"nonResourceURLs": [
                "/healthz", "/livez", "/readyz", "/version", "/version/"
            ], "verbs": ["get"]}],
        }),
    ]
}

/// `system:aggregate-to-admin`, `-edit` and `-view`: the rules upstream's
/// bootstrap policy gives `admin`, `edit` and `view` through aggregation
/// (data from upstream's `bootstrappolicy/testdata/cluster-roles.yaml`).
///
/// # Errors
///
/// The embedded data does not parse (a unit test guards it).
pub fn aggregate_roles() -> Result<Vec<Value>, serde_json::Error> {
    serde_json::from_str(include_str!("bootstrap/aggregate_roles.json"))
}

/// The bootstrap ClusterRoleBindings, as upstream's: `cluster-admin` to
/// `system:masters`; `system:discovery` and `system:basic-user` to every
/// authenticated user; `system:public-info-viewer` to everyone.
pub fn cluster_role_bindings() -> Vec<Value> {
    let binding = |name: &str, groups: &[&str]| {
        let subjects: Vec<Value> = groups
            .iter()
            .map(|g| json!({"apiGroup": RBAC, "kind": "Group", "name": g}))
            .collect();
        json!({
            "apiVersion": "rbac.authorization.k8s.io/v1",
            "kind": "ClusterRoleBinding",
            "metadata": rbac_meta(name, &[]),
            "roleRef": {"apiGroup": RBAC, "kind": "ClusterRole", "name": name},
            "subjects": subjects,
        })
    };
    vec![
        binding("cluster-admin", &["system:masters"]),
        binding("system:basic-user", &["system:authenticated"]),
        binding("system:discovery", &["system:authenticated"]),
        binding(
            "system:public-info-viewer",
            &["system:authenticated", "system:unauthenticated"],
        ),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn aggregate_roles_parse_and_are_labelled() {
        let roles = aggregate_roles().unwrap();
        let names: Vec<&str> = roles.iter().map(object::name).collect();
        assert_eq!(
            names,
            [
                "system:aggregate-to-admin",
                "system:aggregate-to-edit",
                "system:aggregate-to-view"
            ]
        );
        for (role, to) in roles.iter().zip(["admin", "edit", "view"]) {
            assert_eq!(
                object::labels(role)
                    .get(&format!("{AGGREGATE_TO}{to}"))
                    .map(String::as_str),
                Some("true")
            );
            assert!(role["rules"].as_array().is_some_and(|r| !r.is_empty()));
        }
    }
}
