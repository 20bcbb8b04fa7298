//! The RBAC objects in memory: four informers (ClusterRoles, Roles,
//! ClusterRoleBindings, RoleBindings) and a [`Policy`] snapshot rebuilt
//! from them after every change.
//!
//! Contract: [`RbacCache::policy`] never reads the store and never waits;
//! it hands out the latest snapshot. A change is visible there shortly
//! after its watch event (changes arriving together make one rebuild), as
//! upstream's informer-fed RBAC authorizer.

use std::sync::Arc;

use arc_swap::ArcSwap;
use tokio::sync::broadcast::error::RecvError;

use super::rbac::Policy;
use crate::controllers::informer::Informer;
use crate::registry::{Registry, resource};

const RBAC: &str = "rbac.authorization.k8s.io";
const PLURALS: [&str; 4] = [
    "clusterroles",
    "roles",
    "clusterrolebindings",
    "rolebindings",
];

/// See the module documentation. Cheap to clone.
#[derive(Clone)]
pub struct RbacCache {
    informers: Arc<Vec<Informer>>,
    policy: Arc<ArcSwap<Policy>>,
}

impl RbacCache {
    /// Starts the informers and the rebuilding task; `None` if the RBAC
    /// resources are not in the resource table (never, for a server).
    pub fn start(registry: &Registry) -> Option<RbacCache> {
        let mut informers = Vec::new();
        for plural in PLURALS {
            let res = resource::builtin(RBAC, "v1", plural)?;
            informers.push(Informer::start(registry, res));
        }
        let cache = RbacCache {
            informers: Arc::new(informers),
            policy: Arc::new(ArcSwap::from_pointee(Policy::default())),
        };
        let mut subscriptions: Vec<_> = cache.informers.iter().map(Informer::subscribe).collect();
        let runner = cache.clone();
        tokio::spawn(async move {
            runner.synced().await;
            runner.rebuild();
            let (tx, mut rx) = tokio::sync::mpsc::channel::<()>(1);
            for mut sub in subscriptions.drain(..) {
                let tx = tx.clone();
                tokio::spawn(async move {
                    loop {
                        match sub.recv().await {
                            Ok(_) | Err(RecvError::Lagged(_)) => {
                                // Full means a rebuild is already pending.
                                let _ = tx.try_send(());
                            }
                            Err(RecvError::Closed) => return,
                        }
                    }
                });
            }
            drop(tx);
            while rx.recv().await.is_some() {
                runner.rebuild();
            }
        });
        Some(cache)
    }

    /// Completes once every informer has listed and the first snapshot is
    /// built.
    pub async fn synced(&self) {
        for i in self.informers.iter() {
            i.synced().await;
        }
        self.rebuild();
    }

    /// The latest snapshot.
    pub fn policy(&self) -> Arc<Policy> {
        self.policy.load_full()
    }

    fn rebuild(&self) {
        let lists: Vec<_> = self.informers.iter().map(|i| i.list(|_| true)).collect();
        let policy = Policy::from_objects(
            lists[0].iter().map(AsRef::as_ref),
            lists[1].iter().map(AsRef::as_ref),
            lists[2].iter().map(AsRef::as_ref),
            lists[3].iter().map(AsRef::as_ref),
        );
        self.policy.store(Arc::new(policy));
    }
}
