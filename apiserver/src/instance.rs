//! One server instance's state: what a process-wide `static` would hold
//! otherwise. Created by the server wiring, held by every [`Registry`] of
//! that server and reached through it, so two servers (a federation and
//! its members, say) can run in one process without seeing each other's
//! CRDs, informers or metrics.
//!
//! - [`Resources`]: the resource table (built-ins and this instance's
//!   CRDs).
//! - [`Metrics`]: the Prometheus registry `/metrics` renders.
//! - [`FlowControl`]: API priority and fairness (its configuration,
//!   levels, seats and queues).
//! - [`Instance::shared`]: values that modules above the registry keep
//!   once per instance (the shared informers, the OpenAPI documents, the
//!   cluster proxy's member clients), by type and key, without the
//!   registry knowing their types (as `http::Extensions`).
//!
//! [`Registry`]: crate::registry::Registry

use std::any::{Any, TypeId};
use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};

use crate::flowcontrol::FlowControl;
use crate::metrics::Metrics;
use crate::registry::resource::Resources;

/// See the module documentation. Shared behind an `Arc`.
pub struct Instance {
    resources: Resources,
    metrics: Arc<Metrics>,
    flowcontrol: Arc<FlowControl>,
    shared: Mutex<HashMap<(TypeId, String), Box<dyn Any + Send + Sync>>>,
}

impl std::fmt::Debug for Instance {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Instance")
            .field("resources", &self.resources)
            .finish_non_exhaustive()
    }
}

impl Instance {
    /// A new instance: the built-in resource table, empty metrics.
    pub fn new() -> Arc<Instance> {
        Instance::with_metrics(Arc::new(Metrics::new()))
    }

    /// A new instance recording into `metrics` (which the store's
    /// metrics decorator, made before the instance, already holds).
    pub fn with_metrics(metrics: Arc<Metrics>) -> Arc<Instance> {
        Arc::new(Instance {
            resources: Resources::new(),
            flowcontrol: Arc::new(FlowControl::new(metrics.clone())),
            metrics,
            shared: Mutex::new(HashMap::new()),
        })
    }

    /// The instance's resource table.
    pub fn resources(&self) -> &Resources {
        &self.resources
    }

    /// The instance's metrics.
    pub fn metrics(&self) -> &Arc<Metrics> {
        &self.metrics
    }

    /// The instance's API priority and fairness.
    pub fn flowcontrol(&self) -> &Arc<FlowControl> {
        &self.flowcontrol
    }

    /// The instance's value of type `T` under `key`: the one kept, unless
    /// `stale` says it is no longer usable, else a new one from `make`,
    /// kept for later callers. `make` runs under the map's lock: it must
    /// not call `shared` itself.
    pub fn shared<T: Clone + Send + Sync + 'static>(
        &self,
        key: &str,
        stale: impl FnOnce(&T) -> bool,
        make: impl FnOnce() -> T,
    ) -> T {
        let mut map = self.shared.lock().unwrap_or_else(PoisonError::into_inner);
        let slot = (TypeId::of::<T>(), key.to_owned());
        if let Some(kept) = map.get(&slot).and_then(|b| b.downcast_ref::<T>())
            && !stale(kept)
        {
            return kept.clone();
        }
        let value = make();
        map.insert(slot, Box::new(value.clone()));
        value
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shared_values_are_per_instance_type_and_key() {
        let (a, b) = (Instance::new(), Instance::new());
        let one = a.shared("k", |_| false, || Arc::new(1u32));
        assert!(Arc::ptr_eq(
            &one,
            &a.shared("k", |_| false, || Arc::new(2u32))
        ));
        assert_eq!(*b.shared("k", |_| false, || Arc::new(3u32)), 3);
        assert_eq!(*a.shared("other", |_| false, || Arc::new(4u32)), 4);
        assert_eq!(*a.shared("k", |_| true, || Arc::new(5u32)), 5);
        assert_eq!(*a.shared("k", |_| false, || Arc::new(6u32)), 5);
    }

    #[test]
    fn tables_are_per_instance() {
        let (a, b) = (Instance::new(), Instance::new());
        let row = a.resources().all()[0].clone();
        a.resources().replace_custom(vec![row]);
        assert_ne!(
            a.resources().snapshot().generation(),
            b.resources().snapshot().generation()
        );
    }
}
