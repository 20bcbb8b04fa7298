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
