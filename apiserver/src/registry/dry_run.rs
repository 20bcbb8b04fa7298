//! A hook on what dry runs return: the registry calls it on the object a
//! dry-run create, update, patch or apply of a main resource would store,
//! after admission and validation, just before it is returned. Nothing a
//! hook does is stored. The control-plane role sets one (the federation's
//! decision preview, `federation::preview`); the registry knows nothing
//! of what it adds.

use serde_json::Value;

use super::{Registry, ResourceInfo, Target, WriteOptions};

/// Decorates a dry run's answer.
#[async_trait::async_trait]
pub trait DryRunHook: Send + Sync {
    /// Changes `obj` (the object the dry run would store, in `res`'s
    /// version) before it is returned. `registry` serves reads the hook
    /// needs. Never fails the request: a hook that cannot decorate leaves
    /// `obj` as it is.
    async fn decorate(&self, registry: &Registry, res: &ResourceInfo, obj: &mut Value);
}

impl Registry {
    /// The same registry calling `hook` on every dry run of a main
    /// resource's create, update, patch and apply.
    pub fn with_dry_run_hook(mut self, hook: std::sync::Arc<dyn DryRunHook>) -> Self {
        self.dry_run_hook = Some(hook);
        self
    }

    /// Runs the hook on a successful dry run of the main resource (not on
    /// writes through a subresource such as `scale` or `status`).
    pub(super) async fn after_dry_run(
        &self,
        res: &ResourceInfo,
        target: Target,
        opts: &WriteOptions,
        obj: &mut Value,
    ) {
        if !opts.dry_run || target != Target::Main || opts.subresource.is_some() {
            return;
        }
        if let Some(hook) = &self.dry_run_hook {
            hook.decorate(self, res, obj).await;
        }
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use serde_json::json;
    use skein_storage::embedded::{EmbeddedOptions, EmbeddedStore};

    use super::*;
    use crate::registry::resource;

    struct Stamp;

    #[async_trait::async_trait]
    impl DryRunHook for Stamp {
        async fn decorate(&self, _: &Registry, res: &ResourceInfo, obj: &mut Value) {
            obj["metadata"]["annotations"] = json!({"stamped": res.plural});
        }
    }

    fn stamped(v: &Value) -> bool {
        v.pointer("/metadata/annotations/stamped").is_some()
    }

    #[tokio::test]
    async fn only_dry_runs_of_the_main_resource_are_decorated() {
        let dir = tempfile::tempdir().expect("tempdir");
        let store = EmbeddedStore::open(&dir.path().join("s.redb"), EmbeddedOptions::default())
            .await
            .expect("open");
        let registry = Registry::new(store).with_dry_run_hook(Arc::new(Stamp));
        let nss = resource::builtin("", "v1", "namespaces").expect("namespaces");
        let cms = resource::builtin("", "v1", "configmaps").expect("configmaps");
        let real = WriteOptions::default();
        let dry = WriteOptions {
            dry_run: true,
            ..WriteOptions::default()
        };
        let ns = json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "a"}});
        registry
            .create(&nss, "", ns, &real)
            .await
            .expect("namespace");
        let cm = json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c", "namespace": "a"}});

        let out = registry
            .create(&cms, "a", cm.clone(), &dry)
            .await
            .expect("dry create");
        assert_eq!(out["metadata"]["annotations"]["stamped"], "configmaps");
        assert!(
            registry.get(&cms, "a", "c").await.is_err(),
            "a dry run stored"
        );

        let out = registry
            .create(&cms, "a", cm.clone(), &real)
            .await
            .expect("create");
        assert!(!stamped(&out));
        assert!(!stamped(&registry.get(&cms, "a", "c").await.expect("get")));

        let change = |cur: &Value| {
            let mut next = cur.clone();
            next["data"] = json!({"k": "v"});
            Ok(next)
        };
        let out = registry
            .update_with(&cms, "a", "c", Target::Main, &dry, change)
            .await
            .expect("dry update");
        assert!(stamped(&out));
        let out = registry
            .update_with(&cms, "a", "c", Target::Status, &dry, change)
            .await
            .expect("dry status update");
        assert!(!stamped(&out), "a status write is not decorated");
        let via_scale = WriteOptions {
            subresource: Some("scale"),
            ..dry.clone()
        };
        let out = registry
            .update_with(&cms, "a", "c", Target::Main, &via_scale, change)
            .await
            .expect("dry write through a subresource");
        assert!(!stamped(&out));
        let current = registry.get(&cms, "a", "c").await.expect("get");
        let out = registry
            .update(&cms, "a", "c", current, Target::Main, &dry)
            .await
            .expect("dry put");
        assert!(stamped(&out));
        let (out, created) = registry
            .apply_with(&cms, "a", "c", Target::Main, &dry, |live| {
                Ok(live.cloned().unwrap_or(Value::Null))
            })
            .await
            .expect("dry apply");
        assert!(stamped(&out) && !created);
        let stored = registry.get(&cms, "a", "c").await.expect("get");
        assert!(!stamped(&stored) && stored.get("data").is_none());
    }
}
