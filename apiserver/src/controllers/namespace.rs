//! Namespace lifecycle: a Namespace being deleted has its contents deleted,
//! then its `kubernetes` finalizer removed, and then it goes away.

use std::collections::BTreeSet;
use std::time::Duration;

use futures::StreamExt;
use serde_json::{Value, json};

use crate::status::ApiError;
use crate::registry::list::ListQuery;
use crate::registry::watch::{WatchItem, WatchQuery};
use crate::registry::{
    DeleteOptions, Propagation, Registry, Target, WriteOptions, object, resource,
};

/// The finalizer kube-apiserver's namespace controller owns.
pub const FINALIZER: &str = "kubernetes";

/// Runs forever: watches namespaces and finishes terminating ones.
pub async fn run(registry: Registry) {
    let Some(namespaces) = resource::find("", "v1", "namespaces") else {
        return;
    };
    loop {
        let stream = registry
            .watch(namespaces, None, WatchQuery::default())
            .await;
        let mut stream = match stream {
            Ok(s) => s,
            Err(e) => {
                tracing::warn!(error = %e, "namespace controller: watch failed; retrying");
                tokio::time::sleep(Duration::from_secs(1)).await;
                continue;
            }
        };
        let mut terminating: BTreeSet<String> = BTreeSet::new();
        let mut tick = tokio::time::interval(Duration::from_millis(500));
        loop {
            tokio::select! {
                item = stream.next() => match item {
                    Some(WatchItem::Added(o) | WatchItem::Modified(o)) => {
                        if object::is_deleting(&o) {
                            terminating.insert(object::name(&o).to_string());
                        }
                    }
                    Some(WatchItem::Deleted(o)) => {
                        terminating.remove(object::name(&o));
                    }
                    Some(WatchItem::Bookmark { .. }) => {}
                    Some(WatchItem::Error(_)) | None => break,
                },
                _ = tick.tick() => {}
            }
            let pending: Vec<String> = terminating.iter().cloned().collect();
            for ns in pending {
                match finish(&registry, &ns).await {
                    Ok(true) => {
                        terminating.remove(&ns);
                    }
                    Ok(false) => {}
                    Err(e) if e.reason() == "NotFound" => {
                        terminating.remove(&ns);
                    }
                    Err(e) => {
                        tracing::warn!(namespace = %ns, error = %e, "namespace cleanup failed")
                    }
                }
            }
        }
    }
}

/// Deletes what is left in `ns`; once it is empty, removes the finalizer.
/// Returns whether the namespace is finished.
async fn finish(registry: &Registry, ns: &str) -> Result<bool, ApiError> {
    let mut remaining = 0;
    let opts = DeleteOptions {
        propagation: Some(Propagation::Background),
        ..DeleteOptions::default()
    };
    for res in resource::all().iter().filter(|r| r.namespaced) {
        let page = registry.list(res, Some(ns), &ListQuery::default()).await?;
        for obj in page.items {
            remaining += 1;
            if object::is_deleting(&obj) {
                continue;
            }
            match registry.delete(res, ns, object::name(&obj), &opts).await {
                Ok(_) => {}
                Err(e) if e.reason() == "NotFound" => {}
                Err(e) => return Err(e),
            }
        }
    }
    if remaining > 0 {
        // Check again on the next tick: objects with finalizers linger.
        let left = count(registry, ns).await?;
        if left > 0 {
            return Ok(false);
        }
    }
    let Some(namespaces) = resource::find("", "v1", "namespaces") else {
        return Ok(true);
    };
    let opts = WriteOptions {
        dry_run: false,
        field_manager: "skein-namespace-controller".into(),
        ..WriteOptions::default()
    };
    registry
        .update_with(namespaces, "", ns, Target::Main, &opts, |current| {
            let mut next = current.clone();
            if let Some(spec) = next.get_mut("spec").and_then(Value::as_object_mut) {
                let kept: Vec<Value> = spec
                    .get("finalizers")
                    .and_then(Value::as_array)
                    .map(|a| {
                        a.iter()
                            .filter(|f| f.as_str() != Some(FINALIZER))
                            .cloned()
                            .collect()
                    })
                    .unwrap_or_default();
                if kept.is_empty() {
                    spec.remove("finalizers");
                } else {
                    spec.insert("finalizers".into(), json!(kept));
                }
            }
            Ok(next)
        })
        .await?;
    Ok(true)
}

async fn count(registry: &Registry, ns: &str) -> Result<usize, ApiError> {
    let mut n = 0;
    for res in resource::all().iter().filter(|r| r.namespaced) {
        n += registry
            .list(res, Some(ns), &ListQuery::default())
            .await?
            .items
            .len();
    }
    Ok(n)
}
