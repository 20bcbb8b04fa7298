//! The effective placement of an object: its own placement annotations
//! over its Namespace's (DESIGN §3). Pure: no I/O.
//!
//! Layering rules:
//! - The cluster choice (`skein.io/clusters`, `skein.io/cluster-selector`
//!   and the Federation V1 `federation.alpha.kubernetes.io/cluster-selector`)
//!   is taken as a whole: an object that sets any of them ignores the
//!   Namespace's cluster choice entirely (a Namespace's `clusters: a,b` is
//!   not ANDed with an object's selector).
//! - Every other key layers one by one: the object's value where it has
//!   one, else the Namespace's ([`Placement::or`]); overrides merge by
//!   cluster, the object's winning.
//! - The Namespace's annotations are read with the object's kind, so a
//!   Namespace's V1 `deployment-preferences` apply to its Deployments only.
//! - Stored annotations passed admission, but a Namespace annotated before
//!   Skein knew a key (or an object stored before) may hold a malformed
//!   one: a malformed key reads as unset, never as an error.
//! - A cluster-scoped object takes the defaults of the Namespace named by
//!   its `meta.helm.sh/release-namespace` annotation (a Helm release's
//!   ClusterRoles land with the rest of the chart); a Namespace object's
//!   own annotations are only defaults for its objects, so it has none.

use serde_json::{Map, Value};
use skein_admission::placement::{self, Placement};

/// The annotation Helm puts on every object of a release: the release's
/// namespace.
pub const HELM_RELEASE_NAMESPACE: &str = "meta.helm.sh/release-namespace";

/// The Namespace whose annotations are `object`'s defaults: its own
/// namespace; for a cluster-scoped object, the Helm release's namespace
/// (`meta.helm.sh/release-namespace`); `None` for a Namespace object and
/// for a cluster-scoped object outside any release.
pub fn defaults_namespace(object: &Value) -> Option<&str> {
    if object.get("kind").and_then(Value::as_str) == Some("Namespace") {
        return None;
    }
    fn non_empty(v: Option<&Value>) -> Option<&str> {
        v.and_then(Value::as_str).filter(|s| !s.is_empty())
    }
    non_empty(object.pointer("/metadata/namespace")).or_else(|| {
        non_empty(
            object
                .pointer("/metadata/annotations")
                .and_then(|a| a.get(HELM_RELEASE_NAMESPACE)),
        )
    })
}

/// The placement `object` gets: its annotations over `namespace`'s (the
/// Namespace object named by [`defaults_namespace`], when it exists). See
/// the module documentation for the rules. Never fails: malformed
/// annotations read as unset.
pub fn effective(object: &Value, namespace: Option<&Value>) -> Placement {
    let kind = object
        .get("kind")
        .and_then(Value::as_str)
        .unwrap_or_default();
    let own = lenient(annotations(object), kind);
    let Some(ns) = namespace else {
        return own;
    };
    let defaults = lenient(annotations(ns), kind);
    let own_choice = own.clusters.is_some() || own.cluster_selector.is_some();
    let (clusters, selector) = if own_choice {
        (own.clusters.clone(), own.cluster_selector.clone())
    } else {
        (defaults.clusters.clone(), defaults.cluster_selector.clone())
    };
    Placement {
        clusters,
        cluster_selector: selector,
        ..own.or(&defaults)
    }
}

fn annotations(object: &Value) -> Option<&Map<String, Value>> {
    object
        .pointer("/metadata/annotations")
        .and_then(Value::as_object)
}

/// Parses `annotations`, dropping the keys that do not parse.
fn lenient(annotations: Option<&Map<String, Value>>, kind: &str) -> Placement {
    let Some(all) = annotations else {
        return Placement::default();
    };
    if let Ok(p) = placement::parse(all, kind) {
        return p;
    }
    let good: Map<String, Value> = all
        .iter()
        .filter(|(k, v)| {
            let one: Map<String, Value> = std::iter::once(((*k).clone(), (*v).clone())).collect();
            placement::parse(&one, kind).is_ok()
        })
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect();
    placement::parse(&good, kind).unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use serde_json::json;
    use skein_admission::placement::{Clusters, Drift, ReplicaScheduling, ReplicaWeighting};

    use super::*;

    fn obj(kind: &str, ns: Option<&str>, annotations: Value) -> Value {
        let mut v = json!({"kind": kind, "metadata": {"name": "x", "annotations": annotations}});
        if let Some(ns) = ns {
            v["metadata"]["namespace"] = json!(ns);
        }
        v
    }

    #[test]
    fn the_defaults_namespace() {
        assert_eq!(
            defaults_namespace(&obj("Deployment", Some("team"), json!({}))),
            Some("team")
        );
        let helm = obj(
            "ClusterRole",
            None,
            json!({HELM_RELEASE_NAMESPACE: "team-eu"}),
        );
        assert_eq!(defaults_namespace(&helm), Some("team-eu"));
        assert_eq!(
            defaults_namespace(&obj("ClusterRole", None, json!({}))),
            None
        );
        let ns = obj("Namespace", None, json!({HELM_RELEASE_NAMESPACE: "x"}));
        assert_eq!(defaults_namespace(&ns), None);
        // A namespaced object's own namespace wins over the release's.
        let both = obj("ConfigMap", Some("a"), json!({HELM_RELEASE_NAMESPACE: "b"}));
        assert_eq!(defaults_namespace(&both), Some("a"));
    }

    #[test]
    fn without_a_namespace_the_object_alone_counts() {
        let p = effective(
            &obj("Deployment", Some("a"), json!({"skein.io/drift": "Report"})),
            None,
        );
        assert_eq!(p.drift, Some(Drift::Report));
        assert_eq!(effective(&json!({}), None), Placement::default());
    }

    #[test]
    fn the_namespace_cluster_choice_applies_when_the_object_has_none() {
        let ns = obj(
            "Namespace",
            None,
            json!({"skein.io/clusters": "a,b", "skein.io/cluster-selector": "region=eu"}),
        );
        let p = effective(&obj("Deployment", Some("n"), json!({})), Some(&ns));
        assert_eq!(
            p.clusters,
            Some(Clusters::Named(vec!["a".into(), "b".into()]))
        );
        assert_eq!(
            p.cluster_selector.map(|s| s.to_string()).as_deref(),
            Some("region=eu")
        );
    }

    #[test]
    fn the_cluster_choice_is_taken_as_a_whole() {
        let ns = obj(
            "Namespace",
            None,
            json!({"skein.io/clusters": "a,b", "skein.io/cluster-selector": "region=eu"}),
        );
        // An object selector alone drops the Namespace's cluster list too.
        let p = effective(
            &obj(
                "Deployment",
                Some("n"),
                json!({"skein.io/cluster-selector": "region=us"}),
            ),
            Some(&ns),
        );
        assert_eq!(p.clusters, None);
        assert_eq!(
            p.cluster_selector.map(|s| s.to_string()).as_deref(),
            Some("region=us")
        );
        // An object cluster list alone drops the Namespace's selector.
        let p = effective(
            &obj("Deployment", Some("n"), json!({"skein.io/clusters": "c"})),
            Some(&ns),
        );
        assert_eq!(p.clusters, Some(Clusters::Named(vec!["c".into()])));
        assert_eq!(p.cluster_selector, None);
        // The V1 selector counts as a cluster choice.
        let v1 = r#"[{"key":"tier","operator":"in","values":["gold"]}]"#;
        let p = effective(
            &obj(
                "Deployment",
                Some("n"),
                json!({"federation.alpha.kubernetes.io/cluster-selector": v1}),
            ),
            Some(&ns),
        );
        assert_eq!(p.clusters, None);
        assert_eq!(
            p.cluster_selector.map(|s| s.to_string()).as_deref(),
            Some("tier in (gold)")
        );
    }

    #[test]
    fn other_keys_layer_one_by_one() {
        let ns = obj(
            "Namespace",
            None,
            json!({
                "skein.io/drift": "Ignore",
                "skein.io/replica-scheduling": "Duplicated",
                "skein.io/replica-weighting": "Capacity",
                "override.skein.io/a": r#"{"metadata":{"labels":{"from":"ns"}}}"#,
                "override.skein.io/b": r#"{"metadata":{"labels":{"from":"ns"}}}"#,
            }),
        );
        let own = obj(
            "Deployment",
            Some("n"),
            json!({
                "skein.io/drift": "Report",
                "override.skein.io/b": r#"{"metadata":{"labels":{"from":"own"}}}"#,
            }),
        );
        let p = effective(&own, Some(&ns));
        assert_eq!(p.drift, Some(Drift::Report));
        assert_eq!(p.replica_scheduling, Some(ReplicaScheduling::Duplicated));
        assert_eq!(p.replica_weighting, Some(ReplicaWeighting::Capacity));
        assert_eq!(p.overrides.len(), 2);
        let b = format!("{:?}", p.overrides["b"]);
        assert!(b.contains("own"), "{b}");
    }

    #[test]
    fn namespace_v1_preferences_follow_the_object_kind() {
        let ns = obj(
            "Namespace",
            None,
            json!({"federation.kubernetes.io/deployment-preferences": r#"{"clusters":{"a":{"weight":3}}}"#}),
        );
        let d = effective(&obj("Deployment", Some("n"), json!({})), Some(&ns));
        assert_eq!(
            d.replica_preferences.map(|p| p.clusters["a"].weight),
            Some(3)
        );
        let rs = effective(&obj("ReplicaSet", Some("n"), json!({})), Some(&ns));
        assert_eq!(rs.replica_preferences, None);
    }

    #[test]
    fn malformed_keys_read_as_unset() {
        let ns = obj(
            "Namespace",
            None,
            json!({
                "skein.io/drift": "Sometimes",
                "skein.io/clusters": "A,,B",
                "skein.io/cluster-selector": "region=eu",
                "skein.io/retain-replicas": "true",
                "skein.io/typo": "x",
            }),
        );
        let p = effective(&obj("Deployment", Some("n"), json!({})), Some(&ns));
        assert_eq!(p.drift, None);
        assert_eq!(p.clusters, None);
        assert_eq!(
            p.cluster_selector.map(|s| s.to_string()).as_deref(),
            Some("region=eu")
        );
        assert_eq!(p.retain_replicas, Some(true));
        let own = obj(
            "Deployment",
            Some("n"),
            json!({"skein.io/replica-weighting": 7, "skein.io/drift": "Report"}),
        );
        let p = effective(&own, None);
        assert_eq!(p.replica_weighting, None);
        assert_eq!(p.drift, Some(Drift::Report));
    }
}
