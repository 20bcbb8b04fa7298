//! Namespace lifecycle: a Namespace being deleted has its contents deleted,
//! then its `kubernetes` finalizer removed, and then it goes away. While
//! content remains, the namespace's status carries upstream's deletion
//! conditions ([`conditions`]), so `kubectl describe ns` says what blocks
//! it.

pub mod conditions;

use std::collections::BTreeSet;
use std::time::Duration;

use futures::StreamExt;
use serde_json::{Value, json};

use crate::registry::list::ListQuery;
use crate::registry::watch::{WatchItem, WatchQuery};
use crate::registry::{
    DeleteOptions, Propagation, Registry, Target, WriteOptions, object, resource,
};
use crate::status::ApiError;

use conditions::Remaining;

/// The finalizer kube-apiserver's namespace controller owns.
pub const FINALIZER: &str = "kubernetes";

/// Runs forever: watches namespaces and finishes terminating ones.
pub async fn run(registry: Registry) {
    let Some(namespaces) = resource::builtin("", "v1", "namespaces") else {
        return;
    };
    loop {
        let stream = registry
            .watch(&namespaces, None, WatchQuery::default())
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

/// Deletes what is left in `ns` and records upstream's deletion conditions
/// on its status; once it is empty, removes the finalizer. Returns whether
/// the namespace is finished.
async fn finish(registry: &Registry, ns: &str) -> Result<bool, ApiError> {
    let opts = DeleteOptions {
        propagation: Some(Propagation::Background),
        ..DeleteOptions::default()
    };
    let mut remaining = Remaining::default();
    let mut failures: Vec<String> = Vec::new();
    let mut seen = BTreeSet::new();
    for res in registry
        .resources()
        .stored()
        .into_iter()
        .filter(|r| r.namespaced)
    {
        // One version per resource, as upstream's preferred-version discovery.
        if !seen.insert((res.group, res.plural)) {
            continue;
        }
        let page = match registry.list(&res, Some(ns), &ListQuery::default()).await {
            Ok(page) => page,
            Err(e) => {
                failures.push(e.message().to_string());
                continue;
            }
        };
        let mut deleted_any = false;
        for obj in &page.items {
            if object::is_deleting(obj) {
                continue;
            }
            match registry.delete(&res, ns, object::name(obj), &opts).await {
                Ok(_) => deleted_any = true,
                Err(e) if e.reason() == "NotFound" => {}
                Err(e) => failures.push(e.message().to_string()),
            }
        }
        let left = if deleted_any {
            match registry.list(&res, Some(ns), &ListQuery::default()).await {
                Ok(page) => page.items,
                Err(e) => {
                    failures.push(e.message().to_string());
                    continue;
                }
            }
        } else {
            page.items
        };
        remaining.add(&res, &left);
    }
    let conditions = conditions::of(&remaining, &failures);
    record_conditions(registry, ns, &conditions).await?;
    if !remaining.is_empty() || !failures.is_empty() {
        // Check again on the next tick: objects with finalizers linger.
        return Ok(false);
    }
    let Some(namespaces) = resource::builtin("", "v1", "namespaces") else {
        return Ok(true);
    };
    let opts = WriteOptions {
        dry_run: false,
        field_manager: "skein-namespace-controller".into(),
        ..WriteOptions::default()
    };
    registry
        .update_with(&namespaces, "", ns, Target::Main, &opts, |current| {
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

/// Writes `conditions` into the namespace's status when they differ from
/// what it holds (upstream's `updateConditions`: a condition's
/// `lastTransitionTime` changes only when its status does).
async fn record_conditions(
    registry: &Registry,
    ns: &str,
    conditions: &[conditions::Condition],
) -> Result<(), ApiError> {
    let Some(namespaces) = resource::builtin("", "v1", "namespaces") else {
        return Ok(());
    };
    let current = registry.get(&namespaces, "", ns).await?;
    let now = object::now_rfc3339();
    let Some(next) = conditions::merge(&current, conditions, &now) else {
        return Ok(());
    };
    let opts = WriteOptions {
        dry_run: false,
        field_manager: "skein-namespace-controller".into(),
        ..WriteOptions::default()
    };
    registry
        .update_with(&namespaces, "", ns, Target::Status, &opts, |current| {
            let mut obj = current.clone();
            let merged =
                conditions::merge(current, conditions, &now).unwrap_or_else(|| next.clone());
            if let Some(map) = obj.as_object_mut() {
                let status = map.entry("status").or_insert_with(|| json!({}));
                if let Some(status) = status.as_object_mut() {
                    status.insert("conditions".into(), merged);
                }
            }
            Ok(obj)
        })
        .await?;
    Ok(())
}
