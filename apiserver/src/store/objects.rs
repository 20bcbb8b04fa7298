//! `apiserver_storage_objects{resource}`: every stored resource counted
//! once per period (upstream's `--etcd-count-metric-poll-period`, default
//! one minute, first count at startup), -1 when a count fails, as
//! upstream's `startObservingCount` does.
//!
//! The count pages through the resource's key prefix (500 keys a page,
//! all pages at one revision); each page is timed as
//! `etcd_request_duration_seconds{operation="listWithCount"}` with the
//! key prefix as `type`, the label upstream's count request uses.

use std::sync::Arc;
use std::time::{Duration, Instant};

use skein_storage::{ListOptions, Store};

use crate::registry::key;
use crate::registry::resource::ResourceInfo;

/// Keys read per page while counting.
const PAGE: usize = 500;

/// Whether `res` has objects in storage (component statuses are computed
/// on request and never stored).
pub fn is_stored(res: &ResourceInfo) -> bool {
    !(res.group.is_empty() && res.plural == "componentstatuses")
}

/// Counts the objects under `prefix`, reading pages of [`PAGE`] keys at
/// one revision.
pub async fn count(store: &dyn Store, prefix: &str) -> skein_storage::Result<i64> {
    let mut total = 0i64;
    let mut opts = ListOptions {
        limit: PAGE,
        ..ListOptions::default()
    };
    loop {
        let page = store.list(prefix, opts.clone()).await?;
        total += page.items.len() as i64;
        match page.items.last() {
            Some(last) if page.more => {
                opts.at_revision = page.revision;
                opts.start_after = Some(last.key.clone());
            }
            _ => return Ok(total),
        }
    }
}

/// Counts every stored resource once and sets the gauges.
pub async fn update_all(store: &dyn Store, instance: &crate::instance::Instance) {
    let metrics = instance.metrics();
    for res in instance.resources().all().iter().filter(|r| is_stored(r)) {
        let prefix = key::prefix(res, None);
        let start = Instant::now();
        let n = match count(store, &prefix).await {
            Ok(n) => n,
            Err(e) => {
                tracing::debug!(resource = %res.qualified(), error = %e, "counting stored objects failed");
                -1
            }
        };
        metrics.observe_storage(
            "listWithCount",
            super::metrics::key_type(&prefix),
            start.elapsed(),
        );
        metrics.set_storage_objects(super::metrics::key_type(&prefix), n);
    }
}

/// Spawns the periodic count; `period` zero disables it.
pub fn spawn(store: Arc<dyn Store>, instance: Arc<crate::instance::Instance>, period: Duration) {
    if period.is_zero() {
        return;
    }
    tokio::spawn(async move {
        let mut tick = tokio::time::interval(period);
        tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        loop {
            tick.tick().await;
            update_all(store.as_ref(), &instance).await;
        }
    });
}

#[cfg(test)]
mod tests {
    use super::*;
    use skein_storage::embedded::{EmbeddedOptions, EmbeddedStore};

    #[tokio::test]
    async fn counts_across_pages_and_sets_the_gauge() {
        let dir = tempfile::tempdir().expect("tempdir");
        let store = EmbeddedStore::open(&dir.path().join("s.redb"), EmbeddedOptions::default())
            .await
            .expect("open");
        let prefix = "/registry/apps/controllerrevisions/";
        for i in 0..(PAGE + 7) {
            store
                .create(&format!("{prefix}ns/r{i:04}"), b"{}")
                .await
                .expect("create");
        }
        store
            .create("/registry/apps/controllerrevisionsx/ns/other", b"{}")
            .await
            .expect("create");
        assert_eq!(count(store.as_ref(), prefix).await.expect("count"), 507);
        let instance = crate::instance::Instance::new();
        update_all(store.as_ref(), &instance).await;
        let text = instance.metrics().render();
        assert!(
            text.contains("apiserver_storage_objects{resource=\"controllerrevisions.apps\"} 507\n"),
            "{text}"
        );
        assert!(!text.contains("resource=\"componentstatuses\""), "{text}");
        store.close().await;
        update_all(store.as_ref(), &instance).await;
        let text = instance.metrics().render();
        assert!(
            text.contains("apiserver_storage_objects{resource=\"controllerrevisions.apps\"} -1\n")
        );
    }
}
