//! The Deployment controller, as kube-controller-manager v1.33's
//! (`pkg/controller/deployment`): one ReplicaSet per Pod template
//! (`<deploy>-<pod-template-hash>`), revisions, RollingUpdate within
//! maxSurge/maxUnavailable, Recreate, proportional scaling, pause,
//! revision-history cleanup, and the status and conditions `kubectl
//! rollout status` reads.
//!
//! The decisions are pure ([`plan`], [`revision`], [`status`]); this
//! module is the worker: it reads the Deployment from the registry at each
//! sync and its namespace's ReplicaSets from the shared informer, once that
//! has caught up with this controller's own ReplicaSet writes (so a sync
//! never acts on a cache older than its previous sync's writes; other
//! writers' changes arrive as notices and sync again, as upstream), writes
//! ReplicaSets and the Deployment's status, and is woken by the shared
//! informers (Deployments, ReplicaSets, Pods). `replica_sets.rs` holds
//! its ReplicaSet side (claims, the new ReplicaSet, scaling writes),
//! `rollout.rs` its strategies and status writes; [`events`] serves both
//! controllers.

pub mod events;
pub use skein_workloads::deployment::plan;
mod replica_sets;
pub use skein_workloads::deployment::revision;
mod rollout;
pub mod status;

use skein_apiserver::status::ErrorKind;
use std::time::Duration;

use serde_json::Value;
use time::OffsetDateTime;

use self::plan::{DeploySpec, RsView, Strategy};
use self::status::Status;
use super::Sim;
use super::replicaset::{controller_of_kind, selector_of};
use super::template;
use skein_apiserver::controllers::informer::{Informer, Notice, ObjectKey};
use skein_apiserver::controllers::queue::WorkQueue;
use skein_apiserver::registry::list::ListQuery;
use skein_apiserver::registry::{ResourceInfo, object};
use skein_apiserver::status::ApiError;

/// The field manager of this controller's writes.
const MANAGER: &str = "deployment-controller";

/// Runs the controller until the runtime shuts down.
pub async fn run(sim: Sim) {
    let (Ok(deploys), Ok(sets), Ok(pods)) = (
        sim.informer("apps", "v1", "deployments"),
        sim.informer("apps", "v1", "replicasets"),
        sim.informer("", "v1", "pods"),
    ) else {
        tracing::error!("deployment controller: resources not served");
        return;
    };
    let queue: WorkQueue<ObjectKey> = WorkQueue::new();
    spawn_notices(&deploys, &sets, &pods, &queue);
    deploys.synced().await;
    sets.synced().await;
    for d in deploys.list(|_| true) {
        queue.add(ObjectKey::of(&d));
    }
    for _ in 1..WORKERS {
        tokio::spawn(work(sim.clone(), queue.clone()));
    }
    work(sim, queue).await;
}

/// How many Deployments are synced at once (the queue never hands one
/// key to two workers).
const WORKERS: usize = 4;

async fn work(sim: Sim, queue: WorkQueue<ObjectKey>) {
    loop {
        let item = queue.next().await;
        match sync(&sim, item.key(), OffsetDateTime::now_utc()).await {
            Ok(Some(after)) => item.requeue_after(after),
            Ok(None) => drop(item),
            Err(e) => {
                tracing::debug!(deployment = %item.key(), error = %e, "deployment sync failed");
                item.retry();
            }
        }
    }
}

fn spawn_notices(
    deploys: &Informer,
    sets: &Informer,
    pods: &Informer,
    queue: &WorkQueue<ObjectKey>,
) {
    let all = {
        let (deploys, queue) = (deploys.clone(), queue.clone());
        move || {
            for d in deploys.list(|_| true) {
                queue.add(ObjectKey::of(&d));
            }
        }
    };
    let mut sub = deploys.subscription();
    let (q, resync) = (queue.clone(), all.clone());
    tokio::spawn(async move {
        while let Some(n) = sub.next().await {
            match n {
                Notice::Applied(d) | Notice::Deleted(d) => q.add(ObjectKey::of(&d)),
                Notice::Resync => resync(),
            }
        }
    });
    let mut sub = sets.subscription();
    let (q, resync, ds) = (queue.clone(), all.clone(), deploys.clone());
    tokio::spawn(async move {
        while let Some(n) = sub.next().await {
            match n {
                Notice::Applied(rs) | Notice::Deleted(rs) => {
                    for key in deployments_of_set(&ds, &rs) {
                        q.add(key);
                    }
                }
                Notice::Resync => resync(),
            }
        }
    });
    // A Recreate rollout waits for the old Pods to be gone.
    let mut sub = pods.subscription();
    let (q, resync, rss) = (queue.clone(), all, sets.clone());
    tokio::spawn(async move {
        while let Some(n) = sub.next().await {
            match n {
                Notice::Deleted(pod) => {
                    let ns = object::namespace(&pod);
                    if let Some(rs) = controller_of_kind(&pod, "ReplicaSet")
                        .and_then(|rs| rss.get(&ObjectKey::new(ns, rs)))
                        && let Some(d) = controller_of_kind(&rs, "Deployment")
                    {
                        q.add(ObjectKey::new(ns, d));
                    }
                }
                Notice::Applied(_) => {}
                Notice::Resync => resync(),
            }
        }
    });
}

/// The Deployments a ReplicaSet change concerns: its controller, or (an
/// orphan) every Deployment of its namespace whose selector matches it.
fn deployments_of_set(deploys: &Informer, rs: &Value) -> Vec<ObjectKey> {
    let ns = object::namespace(rs);
    if let Some(d) = controller_of_kind(rs, "Deployment") {
        return vec![ObjectKey::new(ns, d)];
    }
    if template::controller_uid(rs).is_some() {
        return Vec::new();
    }
    deploys
        .list_namespace(ns)
        .iter()
        .filter(|d| selector_of(d).is_some_and(|s| s.matches_object(rs)))
        .map(|d| ObjectKey::of(d))
        .collect()
}

/// One Deployment being synced: its object, spec, stored status, and
/// ReplicaSets (as read at the start, then as written).
struct Sync<'a> {
    sim: &'a Sim,
    d: Value,
    spec: DeploySpec,
    status: Status,
    sets: Vec<Value>,
    ns: String,
    now: OffsetDateTime,
    rs_res: std::sync::Arc<ResourceInfo>,
    d_res: std::sync::Arc<ResourceInfo>,
    /// The shared ReplicaSet informer; every ReplicaSet write is
    /// [`Informer::expect`]ed on it.
    rs_cache: Informer,
}

/// One sync of the Deployment at `key`; `Some(delay)` asks to look again.
async fn sync(
    sim: &Sim,
    key: &ObjectKey,
    now: OffsetDateTime,
) -> Result<Option<Duration>, ApiError> {
    let d_res = Sim::resource("apps", "v1", "deployments")?;
    let rs_res = Sim::resource("apps", "v1", "replicasets")?;
    let d = match sim.registry.get(&d_res, &key.namespace, &key.name).await {
        Ok(d) => d,
        Err(e) if e.kind() == ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(e),
    };
    let rs_cache = sim.informer("apps", "v1", "replicasets")?;
    let listed: Vec<Value> = if rs_cache.caught_up().await {
        // Only this Deployment's ReplicaSets and orphans can be claimed.
        let mut sets = rs_cache.controlled_by(object::uid(&d));
        sets.extend(rs_cache.orphans(&key.namespace));
        sets.sort_by(|a, b| object::name(a).cmp(object::name(b)));
        sets.iter().map(|rs| (**rs).clone()).collect()
    } else {
        sim.registry
            .list(&rs_res, Some(&key.namespace), &ListQuery::default())
            .await?
            .items
    };
    let mut s = Sync {
        sim,
        spec: DeploySpec::of(&d),
        status: Status::of(&d),
        sets: Vec::new(),
        ns: key.namespace.clone(),
        now,
        rs_res,
        d_res,
        rs_cache,
        d,
    };
    let Some(selector) = selector_of(&s.d) else {
        return Ok(None);
    };
    if selector.is_empty() {
        // Upstream refuses to select everything.
        return Ok(None);
    }
    s.sets = s.claim(&selector, listed).await;
    if object::is_deleting(&s.d) {
        let (new, _) = s.new_and_old(false).await?;
        s.write_status(new.as_deref(), false).await?;
        return Ok(None);
    }
    if let Some(c) = status::paused_condition(&s.spec, &s.status, &status::rfc3339(now)) {
        let mut next = s.status.clone();
        next.set_condition(c);
        s.put_status(next).await?;
    }
    let views = s.views();
    let refs: Vec<&RsView> = views.iter().collect();
    if s.spec.paused || plan::is_scaling_event(&s.spec, &refs) {
        return s.sync_scale().await;
    }
    match s.spec.strategy {
        Strategy::Recreate => s.recreate().await,
        Strategy::RollingUpdate { .. } => s.rolling().await,
    }
}

fn rs_key(rs: &Value) -> String {
    object::name(rs).to_owned()
}
