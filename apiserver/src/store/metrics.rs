//! [`MetricsStore`]: a [`Store`] decorator that times every storage call
//! into `etcd_request_duration_seconds{operation, type}`, for both
//! backends (upstream measures its etcd3 store the same way, whatever
//! etcd is behind it).
//!
//! `operation` is upstream's: `get`, `list`, `create`, `update`, `delete`
//! (failed calls are timed too, as upstream). `type` is the group-qualified
//! resource of the key (`deployments.apps`, `pods`), read from the
//! `/registry/<group>/<resource>/…` layout; keys outside it (the
//! controllers' list of everything) are `type=""`. `watch`, `compact`,
//! `current_revision` and `close` pass through untimed: upstream does not
//! time them either. Open watches are counted instead, on
//! `skein_storage_watches{type}` (Skein's own series: how many store
//! watches the watch caches and controllers hold).

use std::collections::HashMap;
use std::sync::{Arc, LazyLock};
use std::time::Instant;

use async_trait::async_trait;
use skein_storage::{KeyValue, ListOptions, ListResult, Result, Revision, Store, WatchStream};

use crate::registry::resource;

/// Times the calls of the store it wraps.
pub struct MetricsStore {
    inner: Arc<dyn Store>,
    metrics: Arc<crate::metrics::Metrics>,
}

impl MetricsStore {
    /// Wraps `inner`.
    pub fn wrap(inner: Arc<dyn Store>, metrics: Arc<crate::metrics::Metrics>) -> Arc<dyn Store> {
        Arc::new(MetricsStore { inner, metrics })
    }
}

/// `(storage group segment, plural)` → `plural[.group]`, for every row of
/// the resource table; built once.
static QUALIFIED: LazyLock<HashMap<(&'static str, &'static str), &'static str>> =
    LazyLock::new(|| {
        resource::builtins()
            .iter()
            .map(|r| {
                let segment = if r.group.is_empty() { "core" } else { r.group };
                // Leaked once per row of a fixed table: label values must
                // outlive the registry, which lives as long as the process.
                let name: &'static str = Box::leak(r.qualified().into_boxed_str());
                ((segment, r.plural), name)
            })
            .collect()
    });

/// The `type` label of a storage key or prefix.
pub fn key_type(key: &str) -> &'static str {
    let Some(rest) = key.strip_prefix("/registry/") else {
        return "";
    };
    let mut parts = rest.split('/');
    let (Some(group), Some(plural)) = (parts.next(), parts.next()) else {
        return "";
    };
    let map: &HashMap<(&str, &str), &'static str> = &QUALIFIED;
    map.get(&(group, plural)).copied().unwrap_or("")
}

/// The `type` label of a watched prefix: [`key_type`]'s, or for a custom
/// resource (`/registry/<group>/<plural>/`) `plural.group`, interned once
/// per resource; `""` for a prefix of several resources.
fn watch_type(prefix: &str) -> &'static str {
    let known = key_type(prefix);
    if !known.is_empty() {
        return known;
    }
    let Some(rest) = prefix.strip_prefix("/registry/") else {
        return "";
    };
    let mut parts = rest.split('/');
    let (Some(group), Some(plural)) = (parts.next(), parts.next()) else {
        return "";
    };
    if group.is_empty() || plural.is_empty() {
        return "";
    }
    static INTERNED: LazyLock<std::sync::Mutex<std::collections::HashSet<&'static str>>> =
        LazyLock::new(Default::default);
    let name = format!("{plural}.{group}");
    let mut interned = INTERNED.lock().unwrap_or_else(|p| p.into_inner());
    if let Some(known) = interned.get(name.as_str()) {
        return known;
    }
    // Leaked once per custom resource: label values outlive any registry.
    let leaked: &'static str = Box::leak(name.into_boxed_str());
    interned.insert(leaked);
    leaked
}

/// One open store watch on `skein_storage_watches`: counted from its
/// creation until it is dropped.
struct Open(prometheus_client::metrics::gauge::Gauge);

impl Open {
    fn new(gauge: prometheus_client::metrics::gauge::Gauge) -> Open {
        gauge.inc();
        Open(gauge)
    }
}

impl Drop for Open {
    fn drop(&mut self) {
        self.0.dec();
    }
}

/// A store watch stream, counted while it lives.
struct Counted {
    inner: WatchStream,
    /// Decrements the gauge when the stream is dropped.
    _open: Open,
}

impl futures::Stream for Counted {
    type Item = <WatchStream as futures::Stream>::Item;

    fn poll_next(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<Option<Self::Item>> {
        self.inner.as_mut().poll_next(cx)
    }
}

fn observe(metrics: &crate::metrics::Metrics, operation: &'static str, key: &str, start: Instant) {
    metrics.observe_storage(operation, key_type(key), start.elapsed());
}

#[async_trait]
impl Store for MetricsStore {
    async fn get(&self, key: &str) -> Result<KeyValue> {
        let start = Instant::now();
        let r = self.inner.get(key).await;
        observe(&self.metrics, "get", key, start);
        r
    }

    async fn list(&self, prefix: &str, opts: ListOptions) -> Result<ListResult> {
        let start = Instant::now();
        let r = self.inner.list(prefix, opts).await;
        observe(&self.metrics, "list", prefix, start);
        r
    }

    async fn create(&self, key: &str, value: &[u8]) -> Result<KeyValue> {
        let start = Instant::now();
        let r = self.inner.create(key, value).await;
        observe(&self.metrics, "create", key, start);
        r
    }

    async fn update(
        &self,
        key: &str,
        value: &[u8],
        expected_mod_revision: Revision,
    ) -> Result<KeyValue> {
        let start = Instant::now();
        let r = self.inner.update(key, value, expected_mod_revision).await;
        observe(&self.metrics, "update", key, start);
        r
    }

    async fn delete(
        &self,
        key: &str,
        expected_mod_revision: Option<Revision>,
    ) -> Result<(KeyValue, Revision)> {
        let start = Instant::now();
        let r = self.inner.delete(key, expected_mod_revision).await;
        observe(&self.metrics, "delete", key, start);
        r
    }

    async fn watch(&self, prefix: &str, after_revision: Revision) -> Result<WatchStream> {
        let stream = self.inner.watch(prefix, after_revision).await?;
        Ok(Box::pin(Counted {
            inner: stream,
            _open: Open::new(self.metrics.storage_watches(watch_type(prefix))),
        }))
    }

    async fn compact(&self, revision: Revision) -> Result<()> {
        self.inner.compact(revision).await
    }

    async fn current_revision(&self) -> Result<Revision> {
        self.inner.current_revision().await
    }

    fn request_progress(&self) -> bool {
        self.inner.request_progress()
    }

    async fn needs_rewrite(&self, key: &str, mod_revision: Revision) -> Result<bool> {
        self.inner.needs_rewrite(key, mod_revision).await
    }

    async fn close(&self) {
        self.inner.close().await;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn key_types() {
        assert_eq!(
            key_type("/registry/apps/deployments/ns/web"),
            "deployments.apps"
        );
        assert_eq!(key_type("/registry/apps/deployments/"), "deployments.apps");
        assert_eq!(key_type("/registry/core/pods/ns/p"), "pods");
        assert_eq!(key_type("/registry/core/namespaces/default"), "namespaces");
        assert_eq!(key_type("/registry/"), "");
        assert_eq!(key_type("/registry/nope/things/x"), "");
        assert_eq!(key_type("/elsewhere/apps/deployments/x"), "");
    }
}
