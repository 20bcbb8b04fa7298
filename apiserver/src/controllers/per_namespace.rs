//! The loop shared by the controllers that keep one object in every
//! namespace (the `default` ServiceAccount, the `kube-root-ca.crt`
//! ConfigMap), as kube-controller-manager's do: a namespace that appears
//! or changes is synced, and so is one whose object is deleted or changed.
//! Failed syncs are retried every second; any watch failure restarts the
//! loop (its initial events resync every namespace).

use std::collections::BTreeSet;
use std::future::Future;
use std::time::Duration;

use futures::StreamExt;

use crate::registry::watch::{WatchItem, WatchQuery};
use crate::registry::{Filter, Registry, ResourceInfo, object, resource};
use crate::status::ApiError;

/// One kept object: its resource and name, and how to sync a namespace.
pub(crate) struct Kept<F> {
    /// For logs: what the controller keeps.
    pub what: &'static str,
    /// The kept object's resource.
    pub res: std::sync::Arc<ResourceInfo>,
    /// The kept object's name.
    pub name: &'static str,
    /// Makes the object right in one Active namespace.
    pub sync: F,
}

/// Whether a failed write needs no retry: the namespace went away or is
/// terminating (upstream ignores `NotFound` and the `NamespaceTerminating`
/// cause), or someone else created the object first.
pub(crate) fn settled(e: &ApiError) -> bool {
    matches!(e.reason(), "NotFound" | "AlreadyExists")
        || (e.reason() == "Forbidden" && e.message().contains("is being terminated"))
}

/// Runs forever.
pub(crate) async fn run<F, Fut>(registry: Registry, mut kept: Kept<F>)
where
    F: FnMut(Registry, String) -> Fut,
    Fut: Future<Output = Result<(), ApiError>>,
{
    let Some(namespaces) = resource::builtin("", "v1", "namespaces") else {
        return;
    };
    loop {
        if let Err(e) = watch_once(&registry, &namespaces, &mut kept).await {
            tracing::warn!(controller = kept.what, error = %e, "restarting");
        }
        tokio::time::sleep(Duration::from_millis(500)).await;
    }
}

async fn watch_once<F, Fut>(
    registry: &Registry,
    namespaces: &std::sync::Arc<ResourceInfo>,
    kept: &mut Kept<F>,
) -> Result<(), ApiError>
where
    F: FnMut(Registry, String) -> Fut,
    Fut: Future<Output = Result<(), ApiError>>,
{
    let selector = format!("metadata.name={}", kept.name);
    let objects = WatchQuery {
        filter: Filter::parse(&kept.res, None, Some(&selector))?,
        ..WatchQuery::default()
    };
    let mut ns_events = registry
        .watch(namespaces, None, WatchQuery::default())
        .await?;
    let mut obj_events = registry.watch(&kept.res, None, objects).await?;
    let mut active: BTreeSet<String> = BTreeSet::new();
    let mut dirty: BTreeSet<String> = BTreeSet::new();
    let mut tick = tokio::time::interval(Duration::from_secs(1));
    loop {
        tokio::select! {
            item = ns_events.next() => match item {
                Some(WatchItem::Added(o) | WatchItem::Modified(o)) => {
                    let name = object::name(&o).to_string();
                    let phase = o.pointer("/status/phase").and_then(|p| p.as_str());
                    if object::is_deleting(&o) || phase.is_some_and(|p| p != "Active") {
                        active.remove(&name);
                        dirty.remove(&name);
                    } else {
                        active.insert(name.clone());
                        dirty.insert(name);
                    }
                }
                Some(WatchItem::Deleted(o)) => {
                    active.remove(object::name(&o));
                    dirty.remove(object::name(&o));
                }
                Some(WatchItem::Bookmark { .. }) => {}
                Some(WatchItem::Error(e)) => return Err(e),
                None => return Ok(()),
            },
            item = obj_events.next() => match item {
                Some(WatchItem::Modified(o) | WatchItem::Deleted(o)) => {
                    let ns = object::namespace(&o);
                    if active.contains(ns) {
                        dirty.insert(ns.to_string());
                    }
                }
                Some(WatchItem::Added(_) | WatchItem::Bookmark { .. }) => {}
                Some(WatchItem::Error(e)) => return Err(e),
                None => return Ok(()),
            },
            _ = tick.tick() => {}
        }
        let pending = std::mem::take(&mut dirty);
        for ns in pending {
            match (kept.sync)(registry.clone(), ns.clone()).await {
                Ok(()) => {}
                Err(e) if settled(&e) => {}
                Err(e) => {
                    tracing::warn!(controller = kept.what, namespace = %ns, error = %e, "sync failed; retrying");
                    dirty.insert(ns);
                }
            }
        }
    }
}
