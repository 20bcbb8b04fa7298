//! The cleanup finalizer at admission: a mutating admission plugin of the
//! control-plane role that puts [`super::CLEANUP_FINALIZER`] on a new
//! object that will propagate, as it is created, the way upstream's
//! `StorageObjectInUseProtection` plugin puts its finalizer on a new
//! PersistentVolumeClaim. The propagator would otherwise add it by an
//! update before the object's first copy is made: one write more per
//! object, and one the fan-out waits for.
//!
//! Contract:
//! - Only creates of the main resource of the built-in kinds in
//!   [`kinds::PROPAGATED`] (not Namespaces, which carry no finalizer; not
//!   custom resources), only while the federation has at least one
//!   Cluster, and never for an object that [`kinds::stays_on_federation`]
//!   or whose effective placement (its own annotations over its
//!   Namespace's, as the propagator reads them) says
//!   `skein.io/control-plane-only: "true"`.
//! - It never refuses a request.
//! - It is a shortcut, not the guarantee: the propagator still adds the
//!   finalizer to any object that propagates without it (an update, a
//!   Namespace's defaults, a replica that has not seen the Clusters yet),
//!   and releases it from objects that end up with no copy to clean up
//!   (a Namespace this replica had not seen yet), as before.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, OnceLock};

use serde_json::Value;
use skein_admission::{Attributes, Denial, Mutate, Operation};

use super::kinds;
use crate::scheduler::effective;
use skein_apiserver::controllers::informer::{Informer, ObjectKey};
use skein_apiserver::registry::{Registry, object, resource};

/// The plugin. [`CleanupFinalizer::follow_clusters`] keeps its view of
/// whether the federation has Clusters, and of the Namespaces whose
/// placement defaults a new object takes.
#[derive(Default)]
pub struct CleanupFinalizer {
    members: AtomicBool,
    namespaces: OnceLock<Informer>,
}

impl std::fmt::Debug for CleanupFinalizer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CleanupFinalizer")
            .field("members", &self.members)
            .field("namespaces", &self.namespaces.get().is_some())
            .finish()
    }
}

impl CleanupFinalizer {
    /// A plugin that adds nothing until told the federation has Clusters.
    pub fn new() -> Arc<CleanupFinalizer> {
        Arc::new(CleanupFinalizer::default())
    }

    /// Follows the Clusters and the Namespaces stored in `registry`
    /// (informers of its own, on every replica) for as long as the runtime
    /// runs.
    pub fn follow_clusters(self: &Arc<Self>, registry: &Registry) {
        if let Some(res) = resource::builtin("", "v1", "namespaces") {
            let _ = self.namespaces.set(Informer::start(registry, res));
        }
        let me = Arc::downgrade(self);
        let registry = registry.clone();
        tokio::spawn(async move {
            // Served once the federation's CRDs are installed.
            let res = loop {
                match registry
                    .resources()
                    .find("federation.skein.io", "v1alpha1", "clusters")
                {
                    Some(res) => break res,
                    None => tokio::time::sleep(std::time::Duration::from_millis(200)).await,
                }
            };
            let clusters = Informer::start(&registry, res);
            let mut notices = clusters.subscription();
            clusters.synced().await;
            loop {
                let Some(plugin) = me.upgrade() else { return };
                let any = !clusters.list(|_| true).is_empty();
                plugin.members.store(any, Ordering::Relaxed);
                drop(plugin);
                if notices.next().await.is_none() {
                    return;
                }
            }
        });
    }

    /// Tells the plugin whether the federation has Clusters (for tests;
    /// the server uses [`CleanupFinalizer::follow_clusters`]).
    pub fn set_members(&self, any: bool) {
        self.members.store(any, Ordering::Relaxed);
    }
}

/// Whether a new `obj` of `group`/`plural` in `namespace` (the
/// Namespace object, when known) gets the finalizer, given that the
/// federation has Clusters. Pure.
pub fn wanted(group: &str, plural: &str, obj: &Value, namespace: Option<&Value>) -> bool {
    plural != "namespaces"
        && kinds::PROPAGATED
            .iter()
            .any(|(g, _, p)| *g == group && *p == plural)
        && kinds::stays_on_federation(group, plural, obj).is_none()
        && effective(obj, namespace).control_plane_only != Some(true)
        && !object::finalizers(obj)
            .iter()
            .any(|f| f == super::CLEANUP_FINALIZER)
}

impl Mutate for CleanupFinalizer {
    fn name(&self) -> &str {
        "FederationCleanupFinalizer"
    }

    fn handles(&self, op: Operation) -> bool {
        op == Operation::Create
    }

    fn admit(&self, attrs: &mut Attributes) -> Result<(), Denial> {
        if attrs.subresource.is_some() || !self.members.load(Ordering::Relaxed) {
            return Ok(());
        }
        let (group, plural) = (attrs.gvr.group.clone(), attrs.gvr.resource.clone());
        let namespace = attrs.namespace.as_deref().and_then(|ns| {
            self.namespaces
                .get()
                .and_then(|i| i.get(&ObjectKey::new("", ns)))
        });
        let Some(obj) = attrs.object.as_mut() else {
            return Ok(());
        };
        if !wanted(&group, &plural, obj, namespace.as_deref()) {
            return Ok(());
        }
        let Some(meta) = obj.get_mut("metadata").and_then(Value::as_object_mut) else {
            return Ok(());
        };
        // A malformed list is validation's to refuse.
        if let Value::Array(list) = meta
            .entry("finalizers")
            .or_insert_with(|| Value::Array(Vec::new()))
        {
            list.push(Value::from(super::CLEANUP_FINALIZER));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;
    use skein_admission::{GroupVersionKind, GroupVersionResource};

    use super::*;

    fn create(group: &str, plural: &str, kind: &str, obj: Value) -> Attributes {
        let mut attrs = Attributes::new(
            Operation::Create,
            GroupVersionResource::new(group, "v1", plural),
            GroupVersionKind::new(group, "v1", kind),
            obj["metadata"]["name"].as_str().unwrap_or_default(),
        );
        attrs.object = Some(obj);
        attrs
    }

    fn finalizers(attrs: &Attributes) -> Value {
        attrs
            .object
            .as_ref()
            .and_then(|o| o.pointer("/metadata/finalizers"))
            .cloned()
            .unwrap_or(Value::Null)
    }

    #[test]
    fn a_new_propagated_object_gets_the_finalizer_once_there_are_clusters() {
        let plugin = CleanupFinalizer::new();
        let web = json!({"metadata": {"name": "web", "namespace": "default"}});
        let mut attrs = create("apps", "deployments", "Deployment", web.clone());
        plugin.admit(&mut attrs).expect("admitted");
        assert_eq!(finalizers(&attrs), Value::Null, "no Clusters yet");
        plugin.set_members(true);
        let mut attrs = create("apps", "deployments", "Deployment", web);
        plugin.admit(&mut attrs).expect("admitted");
        assert_eq!(finalizers(&attrs), json!([super::super::CLEANUP_FINALIZER]));
        // Kept with the client's own, and not doubled.
        let mut attrs = create(
            "",
            "configmaps",
            "ConfigMap",
            json!({"metadata": {"name": "c", "namespace": "default", "finalizers": ["x/y"]}}),
        );
        plugin.admit(&mut attrs).expect("admitted");
        plugin.admit(&mut attrs).expect("admitted");
        assert_eq!(
            finalizers(&attrs),
            json!(["x/y", super::super::CLEANUP_FINALIZER])
        );
    }

    #[test]
    fn what_stays_on_the_federation_gets_none() {
        let cases = [
            ("", "namespaces", json!({"metadata": {"name": "team"}})),
            (
                "",
                "events",
                json!({"metadata": {"name": "e", "namespace": "default"}}),
            ),
            (
                "",
                "configmaps",
                json!({"metadata": {"name": "c", "namespace": "kube-system"}}),
            ),
            (
                "",
                "secrets",
                json!({"metadata": {"name": "sh.helm.release.v1.x.v1", "namespace": "default"}, "type": "helm.sh/release.v1"}),
            ),
            (
                "apps",
                "replicasets",
                json!({"metadata": {"name": "web-1", "namespace": "default", "ownerReferences": [{"controller": true, "uid": "u"}]}}),
            ),
            (
                "apps",
                "deployments",
                json!({"metadata": {"name": "web", "namespace": "default", "annotations": {"skein.io/control-plane-only": "true"}}}),
            ),
            (
                "example.com",
                "widgets",
                json!({"metadata": {"name": "w", "namespace": "default"}}),
            ),
        ];
        let plugin = CleanupFinalizer::new();
        plugin.set_members(true);
        for (group, plural, obj) in cases {
            let mut attrs = create(group, plural, "Any", obj.clone());
            plugin.admit(&mut attrs).expect("admitted");
            assert_eq!(finalizers(&attrs), Value::Null, "{group}/{plural} {obj}");
        }
        // Nor does an update.
        assert!(!plugin.handles(Operation::Update));
    }

    #[test]
    fn a_namespace_that_keeps_its_objects_on_the_federation_is_honoured() {
        let web = json!({"metadata": {"name": "web", "namespace": "ops"}});
        let ops = json!({"metadata": {"name": "ops", "annotations": {"skein.io/control-plane-only": "true"}}});
        let plain = json!({"metadata": {"name": "ops"}});
        assert!(!wanted("apps", "deployments", &web, Some(&ops)));
        assert!(wanted("apps", "deployments", &web, Some(&plain)));
        assert!(wanted("apps", "deployments", &web, None));
        // The object's own annotation wins over its Namespace's.
        let out = json!({"metadata": {"name": "web", "namespace": "ops", "annotations": {"skein.io/control-plane-only": "false"}}});
        assert!(wanted("apps", "deployments", &out, Some(&ops)));
        let kept = json!({"metadata": {"name": "web", "namespace": "ops", "annotations": {"skein.io/control-plane-only": "true"}}});
        assert!(!wanted("apps", "deployments", &kept, Some(&plain)));
    }
}
