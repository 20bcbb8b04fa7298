//! The loop around the batch and stateful workload controllers
//! (StatefulSet, DaemonSet, Job, CronJob): one work queue of owner keys,
//! fed by the owner's informer, by informers of related objects (each
//! mapped to the owners it concerns) and by a periodic resync; one worker
//! that calls the controller's `sync` for each key.
//!
//! Contract:
//! - A key is synced only while its owner is in the informer's cache; a
//!   deleted owner's key is dropped (its dependents go by the garbage
//!   collector, as upstream).
//! - `sync` returning `Ok(Some(d))` looks at the key again after `d`;
//!   an error retries it with the queue's backoff.
//! - Syncs read the objects they act on from the registry (not from the
//!   caches), so a Pod just created is never created twice; the informers
//!   only tell which keys to look at.

use skein_apiserver::status::ErrorKind;
use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use serde_json::Value;

use skein_apiserver::controllers::informer::{Informer, Notice, ObjectKey};
use skein_apiserver::controllers::queue::WorkQueue;
use skein_apiserver::registry::list::ListQuery;
use skein_apiserver::registry::{DeleteOptions, ResourceInfo, object};
use skein_apiserver::status::ApiError;

use super::Sim;
use super::template;

/// Maps a changed related object to the owner keys it concerns.
pub type Mapper = Arc<dyn Fn(&Value, &Informer) -> Vec<ObjectKey> + Send + Sync>;

/// A mapper for objects controlled by an owner of `kind`: the controller
/// ownerReference's name in the object's namespace.
pub fn controller_of(kind: &'static str) -> Mapper {
    Arc::new(move |obj: &Value, _: &Informer| {
        object::owner_refs(obj)
            .iter()
            .filter(|r| {
                r.get("controller").and_then(Value::as_bool) == Some(true)
                    && r.get("kind").and_then(Value::as_str) == Some(kind)
            })
            .filter_map(|r| r.get("name").and_then(Value::as_str))
            .map(|n| ObjectKey::new(object::namespace(obj), n))
            .collect()
    })
}

/// A mapper that concerns every owner (e.g. a Node change for DaemonSets).
pub fn every_owner() -> Mapper {
    Arc::new(|_: &Value, owners: &Informer| {
        owners
            .list(|_| true)
            .iter()
            .map(|o| ObjectKey::of(o))
            .collect()
    })
}

/// Runs a controller until the runtime shuts down: see the module
/// documentation. `resync` re-queues every owner periodically.
pub async fn drive<F, Fut>(
    name: &'static str,
    owners: Informer,
    related: Vec<(Informer, Mapper)>,
    resync: Duration,
    sync: F,
) where
    F: Fn(ObjectKey) -> Fut,
    Fut: Future<Output = Result<Option<Duration>, ApiError>>,
{
    let queue: WorkQueue<ObjectKey> = WorkQueue::new();
    let mut subs = vec![(owners.subscription(), None)];
    for (informer, mapper) in &related {
        subs.push((informer.subscription(), Some(mapper.clone())));
    }
    owners.synced().await;
    for (informer, _) in &related {
        informer.synced().await;
    }
    for (mut sub, mapper) in subs {
        let queue = queue.clone();
        let owners = owners.clone();
        tokio::spawn(async move {
            while let Some(notice) = sub.next().await {
                let keys = match (&notice, &mapper) {
                    (Notice::Applied(o) | Notice::Deleted(o), None) => vec![ObjectKey::of(o)],
                    (Notice::Applied(o) | Notice::Deleted(o), Some(m)) => m(o, &owners),
                    (Notice::Resync, _) => all_keys(&owners),
                };
                for k in keys {
                    queue.add(k);
                }
            }
        });
    }
    {
        let queue = queue.clone();
        let owners = owners.clone();
        tokio::spawn(async move {
            let mut tick = tokio::time::interval(resync);
            loop {
                tick.tick().await;
                for k in all_keys(&owners) {
                    queue.add(k);
                }
            }
        });
    }
    loop {
        let item = queue.next().await;
        let key = item.key().clone();
        if owners.get(&key).is_none() {
            continue;
        }
        match sync(key.clone()).await {
            Ok(Some(delay)) => item.requeue_after(delay),
            Ok(None) => {}
            Err(e) => {
                tracing::debug!(controller = name, key = %key, error = %e, "sync failed; retrying");
                item.retry();
            }
        }
    }
}

fn all_keys(owners: &Informer) -> Vec<ObjectKey> {
    owners
        .list(|_| true)
        .iter()
        .map(|o| ObjectKey::of(o))
        .collect()
}

/// The current state of `owner` (from the registry), `None` when gone.
///
/// # Errors
///
/// Registry failures other than 404.
pub async fn fresh(
    sim: &Sim,
    res: &ResourceInfo,
    key: &ObjectKey,
) -> Result<Option<Value>, ApiError> {
    match sim.registry.get(res, &key.namespace, &key.name).await {
        Ok(o) => Ok(Some(o)),
        Err(e) if e.kind() == ErrorKind::NotFound => Ok(None),
        Err(e) => Err(e),
    }
}

/// The objects of `res` in `namespace` controlled by the object whose uid
/// is `owner_uid`, read from the registry.
///
/// # Errors
///
/// Registry failures.
pub async fn owned(
    sim: &Sim,
    res: &ResourceInfo,
    namespace: &str,
    owner_uid: &str,
) -> Result<Vec<Value>, ApiError> {
    let page = sim
        .registry
        .list(res, Some(namespace), &ListQuery::default())
        .await?;
    Ok(page
        .items
        .into_iter()
        .filter(|o| template::is_controlled_by(o, owner_uid))
        .collect())
}

/// Deletes `name` of `res` in `namespace`; already gone is fine.
///
/// # Errors
///
/// Registry failures other than 404.
pub async fn delete(
    sim: &Sim,
    res: &ResourceInfo,
    namespace: &str,
    name: &str,
    propagation: Option<skein_apiserver::registry::Propagation>,
) -> Result<(), ApiError> {
    let opts = DeleteOptions {
        propagation,
        ..DeleteOptions::default()
    };
    match sim.registry.delete(res, namespace, name, &opts).await {
        Ok(_) => Ok(()),
        Err(e) if e.kind() == ErrorKind::NotFound => Ok(()),
        Err(e) => Err(e),
    }
}

/// Creates `obj` of `res` in `namespace`; returns the stored object, or
/// `None` when one of that name exists already.
///
/// # Errors
///
/// Registry failures other than 409 AlreadyExists.
pub async fn create(
    sim: &Sim,
    res: &ResourceInfo,
    namespace: &str,
    obj: Value,
    manager: &str,
) -> Result<Option<Value>, ApiError> {
    match sim
        .registry
        .create(res, namespace, obj, &Sim::opts(manager))
        .await
    {
        Ok(o) => Ok(Some(o)),
        Err(e) if e.kind() == ErrorKind::AlreadyExists => Ok(None),
        Err(e) => Err(e),
    }
}

/// Writes `status` as `res`'s status subresource of `obj` when it differs
/// from the stored one.
///
/// # Errors
///
/// Registry failures.
pub async fn write_status(
    sim: &Sim,
    res: &ResourceInfo,
    obj: &Value,
    status: Value,
    manager: &str,
) -> Result<(), ApiError> {
    if obj.get("status") == Some(&status) {
        return Ok(());
    }
    sim.registry
        .update_with(
            res,
            object::namespace(obj),
            object::name(obj),
            skein_apiserver::registry::Target::Status,
            &Sim::opts(manager),
            |cur| {
                let mut next = cur.clone();
                if let Some(m) = next.as_object_mut() {
                    m.insert("status".into(), status.clone());
                }
                Ok(next)
            },
        )
        .await
        .map(|_| ())
}

/// A core/v1 Event about `owner` (`api_version`/`kind`) from the
/// controller `component`, as client-go's recorder writes it (named
/// `<owner>.<nanoseconds in hex>`).
#[allow(clippy::too_many_arguments)]
pub fn event(
    owner: &Value,
    api_version: &str,
    kind: &str,
    type_: &str,
    reason: &str,
    message: &str,
    component: &str,
    now: time::OffsetDateTime,
) -> Value {
    use skein_apiserver::controllers::event;
    event::event(
        &event::Involved::of(owner, api_version, kind),
        type_,
        reason,
        message,
        event::Source::component(component),
        &event::Stamp::at(now),
    )
}

/// Records `events` (best effort: failures are logged, never retried).
pub async fn record(sim: &Sim, events: Vec<Value>) {
    super::pods::events::record(sim, events).await;
}

/// The current time (UTC).
pub fn now() -> time::OffsetDateTime {
    time::OffsetDateTime::now_utc()
}

/// `t` as Kubernetes writes timestamps (RFC 3339, seconds, UTC).
pub fn rfc3339(t: time::OffsetDateTime) -> String {
    skein_apiserver::registry::object::rfc3339(t)
}

/// Parses an RFC 3339 timestamp.
pub fn parse_time(s: &str) -> Option<time::OffsetDateTime> {
    time::OffsetDateTime::parse(s, &time::format_description::well_known::Rfc3339).ok()
}

/// The integer at `pointer` in `obj`, or `default`.
pub fn int(obj: &Value, pointer: &str, default: i64) -> i64 {
    obj.pointer(pointer)
        .and_then(Value::as_i64)
        .unwrap_or(default)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn timestamps_round_trip_at_second_precision() {
        let t = parse_time("2026-03-04T05:06:07Z").expect("time");
        assert_eq!(rfc3339(t), "2026-03-04T05:06:07Z");
        assert_eq!(int(&serde_json::json!({"a": 3}), "/a", 1), 3);
        assert_eq!(int(&serde_json::json!({}), "/a", 1), 1);
    }
}
