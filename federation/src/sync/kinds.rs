//! What propagates to members and how a kind's replicas are divided.
//! Pure: no I/O.
//!
//! Contract: [`PROPAGATED`] lists the resources (in their storage version)
//! whose objects fan out; [`stays_on_federation`] names the objects of
//! those resources that never leave the federation whatever their
//! annotations say (what every cluster makes for itself, Helm's release
//! records, Skein's own namespace, objects a controller on the federation
//! made); `skein.io/control-plane-only` is the placement's business and is
//! not read here.

use serde_json::Value;

use skein_apiserver::registry::object;

/// `(group, version, plural)` of every built-in resource whose objects
/// propagate, Namespaces first (they are created on members as their
/// objects need them). CustomResourceDefinitions propagate too, and the
/// custom resources they define join these as they become established
/// (see the propagator).
pub const PROPAGATED: &[(&str, &str, &str)] = &[
    ("", "v1", "namespaces"),
    ("apiextensions.k8s.io", "v1", "customresourcedefinitions"),
    ("", "v1", "configmaps"),
    ("", "v1", "secrets"),
    ("", "v1", "serviceaccounts"),
    ("", "v1", "services"),
    ("", "v1", "persistentvolumeclaims"),
    ("", "v1", "limitranges"),
    ("", "v1", "resourcequotas"),
    ("apps", "v1", "deployments"),
    ("apps", "v1", "replicasets"),
    ("apps", "v1", "statefulsets"),
    ("apps", "v1", "daemonsets"),
    ("batch", "v1", "jobs"),
    ("batch", "v1", "cronjobs"),
    ("networking.k8s.io", "v1", "ingresses"),
    ("networking.k8s.io", "v1", "ingressclasses"),
    ("networking.k8s.io", "v1", "networkpolicies"),
    ("rbac.authorization.k8s.io", "v1", "roles"),
    ("rbac.authorization.k8s.io", "v1", "rolebindings"),
    ("rbac.authorization.k8s.io", "v1", "clusterroles"),
    ("rbac.authorization.k8s.io", "v1", "clusterrolebindings"),
    ("policy", "v1", "poddisruptionbudgets"),
    ("autoscaling", "v2", "horizontalpodautoscalers"),
    ("storage.k8s.io", "v1", "storageclasses"),
    ("scheduling.k8s.io", "v1", "priorityclasses"),
];

/// Namespaces every cluster has (or Skein keeps for itself): never
/// propagated, and nothing in them is.
pub const SYSTEM_NAMESPACES: &[&str] = &[
    "kube-system",
    "kube-public",
    "kube-node-lease",
    "skein-system",
];

/// How a divided kind carries its replicas.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Divided {
    /// `spec.replicas` (Deployment, ReplicaSet, StatefulSet; default 1).
    Replicas,
    /// `spec.parallelism` and `spec.completions` (Job; default 1 each,
    /// completions unset stays unset).
    Job,
}

/// How `kind` (of `group`) is divided, if it is.
pub fn divided(group: &str, kind: &str) -> Option<Divided> {
    match (group, kind) {
        ("apps", "Deployment" | "ReplicaSet" | "StatefulSet") => Some(Divided::Replicas),
        ("batch", "Job") => Some(Divided::Job),
        _ => None,
    }
}

/// The replica count the scheduler divides: `spec.replicas` (default 1)
/// or a Job's `spec.parallelism` (default 1).
pub fn total_replicas(how: Divided, obj: &Value) -> i64 {
    let path = match how {
        Divided::Replicas => "/spec/replicas",
        Divided::Job => "/spec/parallelism",
    };
    obj.pointer(path)
        .and_then(Value::as_i64)
        .unwrap_or(1)
        .max(0)
}

/// A Job's `spec.completions`, when set.
pub fn job_completions(obj: &Value) -> Option<i64> {
    obj.pointer("/spec/completions").and_then(Value::as_i64)
}

/// Why `obj` (of `group`/`plural`) never leaves the federation, or `None`
/// when its placement decides.
pub fn stays_on_federation(group: &str, plural: &str, obj: &Value) -> Option<&'static str> {
    let ns = object::namespace(obj);
    let name = object::name(obj);
    if SYSTEM_NAMESPACES.contains(&ns)
        || (plural == "namespaces" && SYSTEM_NAMESPACES.contains(&name))
    {
        return Some("a system namespace");
    }
    let controlled = obj
        .pointer("/metadata/ownerReferences")
        .and_then(Value::as_array)
        .is_some_and(|refs| {
            refs.iter()
                .any(|r| r.get("controller").and_then(Value::as_bool) == Some(true))
        });
    if controlled {
        return Some("made by a controller on the federation");
    }
    match (group, plural) {
        ("", "secrets")
            if obj.get("type").and_then(Value::as_str) == Some("helm.sh/release.v1") =>
        {
            Some("a Helm release record")
        }
        ("", "configmaps") if name == "kube-root-ca.crt" => Some("made by every cluster"),
        ("", "serviceaccounts") if name == "default" => Some("made by every cluster"),
        ("", "services") if ns == "default" && name == "kubernetes" => {
            Some("made by every cluster")
        }
        ("rbac.authorization.k8s.io", _) if bootstrap_rbac(obj) => Some("bootstrap RBAC"),
        ("scheduling.k8s.io", "priorityclasses") if name.starts_with("system-") => {
            Some("a built-in PriorityClass")
        }
        ("apiextensions.k8s.io", "customresourcedefinitions")
            if obj.pointer("/spec/group").and_then(Value::as_str)
                == Some(skein_apiserver::registry::custom::FEDERATION_GROUP) =>
        {
            Some("Skein's own API")
        }
        _ => None,
    }
}

fn bootstrap_rbac(obj: &Value) -> bool {
    object::name(obj).starts_with("system:")
        || obj
            .pointer("/metadata/labels/kubernetes.io~1bootstrapping")
            .and_then(Value::as_str)
            == Some("rbac-defaults")
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn what_every_cluster_makes_stays() {
        let cm = json!({"metadata": {"namespace": "a", "name": "kube-root-ca.crt"}});
        assert!(stays_on_federation("", "configmaps", &cm).is_some());
        let sa = json!({"metadata": {"namespace": "a", "name": "default"}});
        assert!(stays_on_federation("", "serviceaccounts", &sa).is_some());
        let other = json!({"metadata": {"namespace": "a", "name": "web"}});
        assert!(stays_on_federation("", "serviceaccounts", &other).is_none());
        let svc = json!({"metadata": {"namespace": "default", "name": "kubernetes"}});
        assert!(stays_on_federation("", "services", &svc).is_some());
        let release = json!({"type": "helm.sh/release.v1", "metadata": {"namespace": "a", "name": "sh.helm.release.v1.x.v1"}});
        assert!(stays_on_federation("", "secrets", &release).is_some());
        let cr = json!({"metadata": {"name": "system:auth-delegator"}});
        assert!(stays_on_federation("rbac.authorization.k8s.io", "clusterroles", &cr).is_some());
        let ns = json!({"metadata": {"name": "kube-system"}});
        assert!(stays_on_federation("", "namespaces", &ns).is_some());
        let ours = json!({"metadata": {"name": "clusters.federation.skein.io"}, "spec": {"group": "federation.skein.io"}});
        assert!(
            stays_on_federation("apiextensions.k8s.io", "customresourcedefinitions", &ours)
                .is_some()
        );
        let users =
            json!({"metadata": {"name": "widgets.example.com"}, "spec": {"group": "example.com"}});
        assert!(
            stays_on_federation("apiextensions.k8s.io", "customresourcedefinitions", &users)
                .is_none()
        );
        let owned = json!({"metadata": {"namespace": "a", "name": "web-5d8", "ownerReferences": [{"controller": true, "uid": "u"}]}});
        assert!(stays_on_federation("apps", "replicasets", &owned).is_some());
    }

    #[test]
    fn replicas_default_to_one() {
        assert_eq!(total_replicas(Divided::Replicas, &json!({"spec": {}})), 1);
        assert_eq!(
            total_replicas(Divided::Replicas, &json!({"spec": {"replicas": 6}})),
            6
        );
        assert_eq!(
            total_replicas(Divided::Job, &json!({"spec": {"parallelism": 4}})),
            4
        );
        assert_eq!(divided("apps", "Deployment"), Some(Divided::Replicas));
        assert_eq!(divided("", "ConfigMap"), None);
    }
}
