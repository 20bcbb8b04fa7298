//! The ServiceAccounts the `ServiceAccount` admission plugin reads: an
//! informer-style cache of every account (kept from a watch through the
//! registry), with upstream's fallback on a miss — a live read, retried
//! ten times over one to two seconds for the `default` account, which the
//! ServiceAccount controller may not have created yet.
//!
//! Admission is synchronous, so the live read blocks the calling worker
//! with `block_in_place` (multi-threaded runtimes only; elsewhere a miss
//! is answered from the cache alone).

use std::collections::HashMap;
use std::sync::{Arc, OnceLock, RwLock};
use std::time::Duration;

use futures::StreamExt;
use serde_json::Value;
use skein_admission::serviceaccount::{DEFAULT_SERVICE_ACCOUNT, Lookup, ServiceAccountLookup};
use tokio::runtime::{Handle, RuntimeFlavor};

use crate::registry::watch::{WatchItem, WatchQuery};
use crate::registry::{Registry, object, resource};

/// The cache. Create it before the registry (the admission chain holds
/// it), then [`AccountCache::attach`] the registry and spawn
/// [`AccountCache::run`].
#[derive(Default)]
pub struct AccountCache {
    registry: OnceLock<Registry>,
    accounts: RwLock<HashMap<String, Value>>,
}

impl std::fmt::Debug for AccountCache {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AccountCache").finish_non_exhaustive()
    }
}

fn key(ns: &str, name: &str) -> String {
    format!("{ns}/{name}")
}

impl AccountCache {
    /// An empty cache.
    pub fn new() -> Arc<Self> {
        Arc::new(AccountCache::default())
    }

    /// Gives the cache the registry it reads through (once).
    pub fn attach(&self, registry: Registry) {
        let _ = self.registry.set(registry);
    }

    fn cached(&self, ns: &str, name: &str) -> Option<Value> {
        let map = self.accounts.read().unwrap_or_else(|e| e.into_inner());
        map.get(&key(ns, name)).cloned()
    }

    fn edit(&self, f: impl FnOnce(&mut HashMap<String, Value>)) {
        let mut map = self.accounts.write().unwrap_or_else(|e| e.into_inner());
        f(&mut map);
    }

    /// Runs forever: keeps the cache from a watch of every ServiceAccount,
    /// starting over (from a fresh list) after any failure.
    pub async fn run(self: Arc<Self>) {
        let Some(res) = resource::builtin("", "v1", "serviceaccounts") else {
            return;
        };
        let Some(registry) = self.registry.get().cloned() else {
            return;
        };
        loop {
            match registry.watch(&res, None, WatchQuery::default()).await {
                Ok(mut events) => {
                    self.edit(HashMap::clear);
                    while let Some(item) = events.next().await {
                        match item {
                            WatchItem::Added(o) | WatchItem::Modified(o) => {
                                let k = key(object::namespace(&o), object::name(&o));
                                self.edit(|m| {
                                    m.insert(k, o);
                                });
                            }
                            WatchItem::Deleted(o) => {
                                let k = key(object::namespace(&o), object::name(&o));
                                self.edit(|m| {
                                    m.remove(&k);
                                });
                            }
                            WatchItem::Bookmark { .. } => {}
                            WatchItem::Error(e) => {
                                tracing::warn!(error = %e, "service account cache: watch ended");
                                break;
                            }
                        }
                    }
                }
                Err(e) => tracing::warn!(error = %e, "service account cache: watch failed"),
            }
            tokio::time::sleep(Duration::from_millis(500)).await;
        }
    }

    /// The live read behind a cache miss.
    async fn live(registry: &Registry, ns: &str, name: &str) -> Lookup {
        let (Some(namespaces), Some(accounts)) = (
            resource::builtin("", "v1", "namespaces"),
            resource::builtin("", "v1", "serviceaccounts"),
        ) else {
            return Lookup::Missing;
        };
        match registry.get(&namespaces, "", ns).await {
            Ok(n) if object::is_deleting(&n) => return Lookup::NamespaceUnusable,
            Ok(_) => {}
            Err(e) if e.reason() == "NotFound" => return Lookup::NamespaceUnusable,
            Err(e) => return Lookup::Failed(e.message().to_string()),
        }
        let attempts = if name == DEFAULT_SERVICE_ACCOUNT {
            10
        } else {
            1
        };
        let pause =
            Duration::from_millis(100 + u64::from(uuid::Uuid::new_v4().as_bytes()[0] % 100));
        for attempt in 0..attempts {
            if attempt > 0 {
                tokio::time::sleep(pause).await;
            }
            match registry.get(&accounts, ns, name).await {
                Ok(sa) => return Lookup::Found(sa),
                Err(e) if e.reason() == "NotFound" => {}
                Err(e) => return Lookup::Failed(e.message().to_string()),
            }
        }
        Lookup::Missing
    }
}

impl ServiceAccountLookup for AccountCache {
    fn service_account(&self, namespace: &str, name: &str) -> Lookup {
        if let Some(sa) = self.cached(namespace, name) {
            return Lookup::Found(sa);
        }
        let Some(registry) = self.registry.get() else {
            return Lookup::Missing;
        };
        let Ok(handle) = Handle::try_current() else {
            return Lookup::Missing;
        };
        if handle.runtime_flavor() != RuntimeFlavor::MultiThread {
            return Lookup::Missing;
        }
        tokio::task::block_in_place(|| handle.block_on(Self::live(registry, namespace, name)))
    }
}
