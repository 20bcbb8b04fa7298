//! The dry-run decision preview (issue 12): `kubectl create
//! --dry-run=server` (and `kubectl apply --dry-run=server`, a server-side
//! apply dry run, a dry-run update or patch) of an object that would
//! propagate returns it with the annotation
//! [`DECISION_ANNOTATION`](crate::sync::DECISION_ANNOTATION):
//! the decision the scheduler would make now, from the object's effective
//! placement (its Namespace's defaults included), the Cluster objects as
//! stored (readiness with the grace period, taints, served APIs, available
//! capacity) and, for an object already placed, its Placement's previous
//! decision. Only dry runs see it; it is never stored.
//!
//! Objects that do not propagate get nothing: kinds outside
//! [`kinds::PROPAGATED`] and custom resources, objects that [`kinds::stays_on_federation`],
//! `skein.io/control-plane-only: "true"`, and Namespaces (a Namespace goes
//! wherever its objects go; it has no decision of its own).
//!
//! The worker is thin: reads through the registry, then the pure scheduler.

use std::sync::Arc;
use std::time::Duration;

use serde_json::{Value, json};

use super::scheduler::{self, ClusterSnapshot, Gvr, ScheduleInput, record};
use super::sync::record::placement_name;
use super::sync::{DECISION_ANNOTATION, kinds};
use skein_apiserver::registry::{DryRunHook, Registry, ResourceInfo, resource};

/// The [`DryRunHook`] of the control-plane role.
#[derive(Debug, Clone)]
pub struct DecisionPreview {
    /// `--cluster-grace-period`.
    pub grace_period: Duration,
}

/// The hook to install on the control-plane role's registry.
pub fn hook(grace_period: Duration) -> Arc<dyn DryRunHook> {
    Arc::new(DecisionPreview { grace_period })
}

/// The propagated storage resource `res` is a version of: a built-in one
/// of [`kinds::PROPAGATED`], or a custom resource outside Skein's own
/// group.
fn propagated(res: &ResourceInfo) -> Option<Gvr> {
    if let Some(custom) = &res.custom {
        return (res.group != skein_apiserver::registry::custom::FEDERATION_GROUP)
            .then(|| Gvr::new(res.group, &custom.storage_version, res.plural));
    }
    kinds::PROPAGATED
        .iter()
        .find(|(g, _, p)| *g == res.group && *p == res.plural)
        .map(|(g, v, p)| Gvr::new(g, v, p))
}

#[async_trait::async_trait]
impl DryRunHook for DecisionPreview {
    async fn decorate(&self, registry: &Registry, res: &ResourceInfo, obj: &mut Value) {
        let Some(gvr) = propagated(res) else {
            return;
        };
        if gvr.resource == "namespaces"
            || kinds::stays_on_federation(&gvr.group, &gvr.resource, obj).is_some()
        {
            return;
        }
        let namespace = match scheduler::defaults_namespace(obj) {
            Some(ns) => match resource::builtin("", "v1", "namespaces") {
                Some(nss) => registry.get(&nss, "", ns).await.ok(),
                None => None,
            },
            None => None,
        };
        let placement = scheduler::effective(obj, namespace.as_ref());
        if placement.control_plane_only == Some(true) {
            return;
        }
        let Some(clusters_res) =
            registry
                .resources()
                .find("federation.skein.io", "v1alpha1", "clusters")
        else {
            return;
        };
        let clusters = match registry.all_of(&clusters_res).await {
            Ok(c) => c,
            Err(e) => {
                tracing::debug!(error = %e, "dry-run decision: reading Clusters failed");
                return;
            }
        };
        // A federation without members is a plain API server: its dry
        // runs answer as one.
        if clusters.is_empty() {
            return;
        }
        let previous = previous_decision(registry, res, obj).await;
        let now = time::OffsetDateTime::now_utc();
        let mut snapshots: Vec<ClusterSnapshot> = clusters
            .iter()
            .map(|c| ClusterSnapshot::from_cluster_at(c, now, self.grace_period))
            .collect();
        if res.custom.is_some() {
            served_through_crd_copies(registry, res, &mut snapshots).await;
        }
        let replicas =
            kinds::divided(res.group, res.kind).map(|how| kinds::total_replicas(how, obj));
        let capacity = scheduler::capacity_map(obj, &snapshots);
        let key = scheduler::object_key(obj);
        let decision = scheduler::schedule(&ScheduleInput {
            gvr: &gvr,
            object_key: &key,
            placement: &placement,
            replicas,
            clusters: &snapshots,
            current: &previous.replicas,
            previous: &previous.clusters,
            capacity: &capacity,
        });
        let text = scheduler::decision_annotation(
            &decision,
            scheduler::scheduling_of(&placement, replicas),
        );
        annotate(obj, &text);
    }
}

/// A custom resource counts as served by every cluster whose copy of its
/// CRD is Ready in the CRD's ClusterPlacement, as the propagator counts
/// it (before the member's next discovery), with the versions the
/// federation's CRD serves.
async fn served_through_crd_copies(
    registry: &Registry,
    res: &ResourceInfo,
    snapshots: &mut [ClusterSnapshot],
) {
    let (Some(crds), Some(cps)) = (
        resource::builtin("apiextensions.k8s.io", "v1", "customresourcedefinitions"),
        registry
            .resources()
            .find("federation.skein.io", "v1alpha1", "clusterplacements"),
    ) else {
        return;
    };
    let name = format!("{}.{}", res.plural, res.group);
    let (Ok(crd), Ok(placement)) = (
        registry.get(&crds, "", &name).await,
        registry
            .get(&cps, "", &placement_name("CustomResourceDefinition", &name))
            .await,
    ) else {
        return;
    };
    let ready: Vec<&str> = placement
        .pointer("/status/clusters")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter(|c| c.get("state").and_then(Value::as_str) == Some("Ready"))
        .filter_map(|c| c.get("name").and_then(Value::as_str))
        .collect();
    let served = super::sync::cluster::served_versions(&crd);
    for snapshot in snapshots.iter_mut() {
        if ready.contains(&snapshot.name.as_str()) {
            for (gv, plural) in &served {
                snapshot.also_serves(gv, plural);
            }
        }
    }
}

/// The decision of the object's stored Placement (ClusterPlacement for a
/// cluster-scoped object), found by its `spec.resourceRef` (kind, name and,
/// when both have one, uid); empty when there is none.
async fn previous_decision(
    registry: &Registry,
    res: &ResourceInfo,
    obj: &Value,
) -> record::Previous {
    let plural = if res.namespaced {
        "placements"
    } else {
        "clusterplacements"
    };
    let Some(placements) = registry
        .resources()
        .find("federation.skein.io", "v1alpha1", plural)
    else {
        return record::Previous::default();
    };
    let meta = |v: &Value, f: &str| {
        v.pointer(&format!("/metadata/{f}"))
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_owned()
    };
    let (ns, name, uid) = (meta(obj, "namespace"), meta(obj, "name"), meta(obj, "uid"));
    let Ok(all) = registry.all_of(&placements).await else {
        return record::Previous::default();
    };
    let found = all.iter().find(|p| {
        let r = |f: &str| {
            p.pointer(&format!("/spec/resourceRef/{f}"))
                .and_then(Value::as_str)
                .unwrap_or_default()
        };
        meta(p, "namespace") == ns
            && r("kind") == res.kind
            && r("name") == name
            && (uid.is_empty() || r("uid").is_empty() || r("uid") == uid)
    });
    record::previous(found.and_then(|p| p.pointer("/status/decision")))
}

/// Sets the decision annotation on `obj`.
fn annotate(obj: &mut Value, text: &str) {
    let Some(meta) = obj.get_mut("metadata").and_then(Value::as_object_mut) else {
        return;
    };
    let annotations = meta
        .entry("annotations")
        .or_insert_with(|| Value::Object(serde_json::Map::new()));
    if !annotations.is_object() {
        *annotations = json!({});
    }
    if let Some(a) = annotations.as_object_mut() {
        a.insert(DECISION_ANNOTATION.to_owned(), json!(text));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn annotate_adds_to_existing_or_missing_annotations() {
        let mut a = json!({"metadata": {"name": "x"}});
        annotate(&mut a, "{}");
        assert_eq!(a["metadata"]["annotations"][DECISION_ANNOTATION], "{}");
        let mut b = json!({"metadata": {"name": "x", "annotations": {"k": "v"}}});
        annotate(&mut b, "d");
        assert_eq!(b["metadata"]["annotations"]["k"], "v");
        assert_eq!(b["metadata"]["annotations"][DECISION_ANNOTATION], "d");
    }
}
