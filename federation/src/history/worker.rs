//! The revision-history worker: shared informers on Deployments,
//! ReplicaSets, StatefulSets, DaemonSets and ControllerRevisions feed one
//! work queue per owner kind (a history object's change queues its
//! controller); each sync reads the owner and its namespace's history
//! objects from the informer caches, asks the pure planner, and writes
//! the plan through the registry.
//!
//! Contract: an owner is synced once its caches show this worker's own
//! previous writes ([`Expectations`]); a failed sync is retried with the
//! queue's backoff; a history object name held by an object the owner
//! does not control fails the sync (logged, retried).

use skein_apiserver::status::ErrorKind;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use serde_json::Value;

use super::deployments;
use super::expectations::{Expect, Expectations};
use super::revisions::{self, Kind};
use super::write_options;
use skein_apiserver::controllers::informer::{Informer, Notice, ObjectKey};
use skein_apiserver::controllers::queue::WorkQueue;
use skein_apiserver::registry::{DeleteOptions, Registry, ResourceInfo, Target, object, resource};
use skein_apiserver::status::ApiError;
use skein_workloads::deployment::revision;
use skein_workloads::template;

/// How soon an owner waiting for its own writes to show is looked at again.
const EXPECTATION_POLL: Duration = Duration::from_millis(50);

/// What the sync loops share.
#[derive(Clone)]
struct Ctx {
    registry: Registry,
    deployments: Informer,
    replicasets: Informer,
    statefulsets: Informer,
    daemonsets: Informer,
    revisions: Informer,
    expectations: Arc<Mutex<Expectations>>,
}

/// The work queues, one per owner kind.
#[derive(Clone, Default)]
struct Queues {
    deployments: WorkQueue<ObjectKey>,
    statefulsets: WorkQueue<ObjectKey>,
    daemonsets: WorkQueue<ObjectKey>,
}

/// One of the resources the worker follows.
fn find(group: &str, plural: &str) -> Result<Arc<ResourceInfo>, ApiError> {
    resource::builtin(group, "v1", plural)
        .ok_or_else(|| ApiError::internal(format!("{plural}.{group}/v1 is not served")))
}

/// Waits until the federation has a Cluster: a federation without
/// members is a plain API server, whose Deployments carry no revision
/// annotations and own no ReplicaSets (nothing fans them out).
async fn first_cluster(registry: &Registry) {
    let res = loop {
        match registry
            .resources()
            .find("federation.skein.io", "v1alpha1", "clusters")
        {
            Some(r) => break r,
            None => tokio::time::sleep(Duration::from_secs(1)).await,
        }
    };
    let clusters = Informer::start(registry, res);
    let mut notices = clusters.subscription();
    clusters.synced().await;
    while clusters.list(|_| true).is_empty() {
        if notices.next().await.is_none() {
            return;
        }
    }
}

/// Runs the worker until the runtime shuts down; it starts keeping
/// history once the federation has a Cluster.
pub async fn run(registry: Registry) {
    first_cluster(&registry).await;
    let ctx = match start(&registry) {
        Ok(ctx) => ctx,
        Err(e) => {
            tracing::error!(error = %e, "revision history controller not started");
            return;
        }
    };
    let queues = Queues::default();
    let mut subs = [
        ctx.deployments.subscription(),
        ctx.replicasets.subscription(),
        ctx.statefulsets.subscription(),
        ctx.daemonsets.subscription(),
        ctx.revisions.subscription(),
    ];
    for informer in [
        &ctx.deployments,
        &ctx.replicasets,
        &ctx.statefulsets,
        &ctx.daemonsets,
        &ctx.revisions,
    ] {
        informer.synced().await;
    }
    resync(&ctx, &queues);
    // Workers per owner kind, as kube-controller-manager's defaults
    // (`--concurrent-deployment-syncs` 5, `--concurrent-statefulset-syncs`
    // 5, `--concurrent-daemonset-syncs` 2); the queue never hands one key
    // to two workers.
    for (queue, owner, workers) in [
        (&queues.deployments, Owner::Deployment, 5),
        (&queues.statefulsets, Owner::Revisions(Kind::StatefulSet), 5),
        (&queues.daemonsets, Owner::Revisions(Kind::DaemonSet), 2),
    ] {
        for _ in 0..workers {
            tokio::spawn(work(ctx.clone(), queue.clone(), owner));
        }
    }
    let [d, rs, sts, ds, cr] = &mut subs;
    loop {
        let notice = tokio::select! {
            n = d.next() => n,
            n = rs.next() => n,
            n = sts.next() => n,
            n = ds.next() => n,
            n = cr.next() => n,
        };
        match notice {
            Some(Notice::Applied(o) | Notice::Deleted(o)) => route(&queues, &o),
            Some(Notice::Resync) => resync(&ctx, &queues),
            None => return,
        }
    }
}

fn start(registry: &Registry) -> Result<Ctx, ApiError> {
    Ok(Ctx {
        registry: registry.clone(),
        deployments: Informer::start(registry, find("apps", "deployments")?),
        replicasets: Informer::start(registry, find("apps", "replicasets")?),
        statefulsets: Informer::start(registry, find("apps", "statefulsets")?),
        daemonsets: Informer::start(registry, find("apps", "daemonsets")?),
        revisions: Informer::start(registry, find("apps", "controllerrevisions")?),
        expectations: Arc::default(),
    })
}

/// Queues every owner.
fn resync(ctx: &Ctx, queues: &Queues) {
    for (informer, queue) in [
        (&ctx.deployments, &queues.deployments),
        (&ctx.statefulsets, &queues.statefulsets),
        (&ctx.daemonsets, &queues.daemonsets),
    ] {
        for o in informer.list(|_| true) {
            queue.add(ObjectKey::of(&o));
        }
    }
}

/// Queues the owner a changed object stands for: itself, or the
/// controller of a history object.
fn route(queues: &Queues, obj: &Value) {
    let kind = obj.get("kind").and_then(Value::as_str).unwrap_or_default();
    let ns = object::namespace(obj);
    match kind {
        "Deployment" => queues.deployments.add(ObjectKey::of(obj)),
        "StatefulSet" => queues.statefulsets.add(ObjectKey::of(obj)),
        "DaemonSet" => queues.daemonsets.add(ObjectKey::of(obj)),
        "ReplicaSet" | "ControllerRevision" => match controller(obj) {
            Some(("Deployment", name)) => queues.deployments.add(ObjectKey::new(ns, name)),
            Some(("StatefulSet", name)) => queues.statefulsets.add(ObjectKey::new(ns, name)),
            Some(("DaemonSet", name)) => queues.daemonsets.add(ObjectKey::new(ns, name)),
            _ => {}
        },
        _ => {}
    }
}

/// The kind and name of `obj`'s apps/v1 controller.
fn controller(obj: &Value) -> Option<(&str, &str)> {
    let r = obj
        .pointer("/metadata/ownerReferences")?
        .as_array()?
        .iter()
        .find(|r| r.get("controller").and_then(Value::as_bool) == Some(true))?;
    if r.get("apiVersion").and_then(Value::as_str) != Some("apps/v1") {
        return None;
    }
    Some((r.get("kind")?.as_str()?, r.get("name")?.as_str()?))
}

/// Which owners a loop syncs.
#[derive(Clone, Copy, Debug)]
enum Owner {
    Deployment,
    Revisions(Kind),
}

async fn work(ctx: Ctx, queue: WorkQueue<ObjectKey>, owner: Owner) {
    loop {
        let item = queue.next().await;
        let key = item.key().clone();
        let result = match owner {
            Owner::Deployment => ctx.sync_deployment(&key).await,
            Owner::Revisions(kind) => ctx.sync_revisions(kind, &key).await,
        };
        match result {
            Ok(None) => {}
            Ok(Some(delay)) => item.requeue_after(delay),
            Err(e) => {
                tracing::warn!(owner = ?owner, object = %key, error = %e, "revision history sync failed");
                item.retry();
            }
        }
    }
}

/// The uid and resourceVersion of a cached object.
fn version(obj: &Value) -> (String, i64) {
    let rv = obj
        .pointer("/metadata/resourceVersion")
        .and_then(Value::as_str)
        .and_then(|s| s.parse().ok())
        .unwrap_or(0);
    (object::uid(obj).to_owned(), rv)
}

/// The expectation a written object sets.
fn written(obj: &Value) -> Expect {
    let (uid, rv) = version(obj);
    Expect {
        name: object::name(obj).to_owned(),
        resource_version: Some(rv),
        uid,
    }
}

fn ignore_not_found<T>(r: Result<T, ApiError>) -> Result<Option<T>, ApiError> {
    match r {
        Ok(v) => Ok(Some(v)),
        Err(e) if e.kind() == ErrorKind::NotFound => Ok(None),
        Err(e) => Err(e),
    }
}

impl Ctx {
    fn lock(&self) -> MutexGuard<'_, Expectations> {
        self.expectations
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Whether `key`'s previous writes show in `cache`.
    fn caught_up(&self, key: &ObjectKey, cache: &Informer) -> bool {
        self.lock().satisfied(key, Instant::now(), |name| {
            cache
                .get(&ObjectKey::new(key.namespace.clone(), name))
                .map(|o| version(&o))
        })
    }

    async fn sync_deployment(&self, key: &ObjectKey) -> Result<Option<Duration>, ApiError> {
        let Some(d) = self.deployments.get(key) else {
            self.lock().forget(key);
            return Ok(None);
        };
        if !self.caught_up(key, &self.replicasets) {
            return Ok(Some(EXPECTATION_POLL));
        }
        // Only what the Deployment controls counts (the plan ignores the
        // rest): the informer's controller index, not the namespace.
        let rss = self.replicasets.controlled_by(object::uid(&d));
        let refs: Vec<&Value> = rss.iter().map(AsRef::as_ref).collect();
        let plan = deployments::plan(&d, &refs);
        if plan.is_empty() {
            return Ok(None);
        }
        let rs_res = self.replicasets.resource().clone();
        let ns = key.namespace.as_str();
        let opts = write_options();
        let mut writes = Vec::new();
        let result = async {
            if let Some(rs) = plan.create {
                let created = self.create_or_own(&rs_res, ns, rs, &d).await?;
                writes.push(written(&created));
            }
            for u in &plan.updates {
                let updated = self
                    .registry
                    .update_with(&rs_res, ns, &u.name, Target::Main, &opts, |cur| {
                        if object::uid(cur) != u.uid {
                            return Err(ApiError::conflict(
                                "apps",
                                "replicasets",
                                &u.name,
                                "the object was replaced",
                            ));
                        }
                        Ok(deployments::apply_update(cur, u).unwrap_or_else(|| cur.clone()))
                    })
                    .await;
                if let Some(rs) = ignore_not_found(updated)? {
                    writes.push(written(&rs));
                }
            }
            for (name, uid) in &plan.deletes {
                self.delete(&rs_res, ns, name, uid).await?;
                writes.push(Expect {
                    name: name.clone(),
                    resource_version: None,
                    uid: uid.clone(),
                });
            }
            if let Some(rev) = &plan.revision {
                let d_res = self.deployments.resource().clone();
                let updated = self
                    .registry
                    .update_with(&d_res, ns, &key.name, Target::Main, &opts, |cur| {
                        if object::uid(cur) != object::uid(&d) {
                            return Err(ApiError::conflict(
                                "apps",
                                "deployments",
                                &key.name,
                                "the object was replaced",
                            ));
                        }
                        Ok(deployments::with_revision(cur, rev).unwrap_or_else(|| cur.clone()))
                    })
                    .await;
                ignore_not_found(updated)?;
            }
            Ok::<(), ApiError>(())
        }
        .await;
        self.lock().expect(key.clone(), writes, Instant::now());
        result.map(|()| None)
    }

    /// Creates the new ReplicaSet `rs` of `d`; one of that name that `d`
    /// already controls with the same template is taken as created.
    async fn create_or_own(
        &self,
        res: &ResourceInfo,
        ns: &str,
        rs: Value,
        d: &Value,
    ) -> Result<Value, ApiError> {
        let name = object::name(&rs).to_owned();
        match self.registry.create(res, ns, rs, &write_options()).await {
            Ok(created) => Ok(created),
            Err(e) if e.kind() == ErrorKind::AlreadyExists => {
                let current = self.registry.get(res, ns, &name).await?;
                let same = revision::equal_ignore_hash(
                    current.pointer("/spec/template").unwrap_or(&Value::Null),
                    d.pointer("/spec/template").unwrap_or(&Value::Null),
                );
                if template::is_controlled_by(&current, object::uid(d)) && same {
                    Ok(current)
                } else {
                    Err(ApiError::conflict(
                        "apps",
                        "replicasets",
                        &name,
                        &format!(
                            "a ReplicaSet of that name that Deployment {ns}/{} does not control exists",
                            object::name(d)
                        ),
                    ))
                }
            }
            Err(e) => Err(e),
        }
    }

    async fn delete(
        &self,
        res: &ResourceInfo,
        ns: &str,
        name: &str,
        uid: &str,
    ) -> Result<(), ApiError> {
        let opts = DeleteOptions {
            precondition_uid: Some(uid.to_owned()),
            ..DeleteOptions::default()
        };
        match self.registry.delete(res, ns, name, &opts).await {
            Ok(_) => Ok(()),
            // Gone already, or replaced by another object of that name.
            Err(e) if matches!(e.kind(), ErrorKind::NotFound | ErrorKind::Conflict) => Ok(()),
            Err(e) => Err(e),
        }
    }

    async fn sync_revisions(
        &self,
        kind: Kind,
        key: &ObjectKey,
    ) -> Result<Option<Duration>, ApiError> {
        let owners = match kind {
            Kind::StatefulSet => &self.statefulsets,
            Kind::DaemonSet => &self.daemonsets,
        };
        let Some(owner) = owners.get(key) else {
            self.lock().forget(key);
            return Ok(None);
        };
        if !self.caught_up(key, &self.revisions) {
            return Ok(Some(EXPECTATION_POLL));
        }
        let revs = self.revisions.controlled_by(object::uid(&owner));
        let refs: Vec<&Value> = revs.iter().map(AsRef::as_ref).collect();
        let plan = revisions::plan(kind, &owner, &refs);
        if plan.is_empty() {
            return Ok(None);
        }
        let res = self.revisions.resource().clone();
        let ns = key.namespace.as_str();
        let opts = write_options();
        let mut writes = Vec::new();
        let result = async {
            if let Some(rev) = plan.create {
                let name = object::name(&rev).to_owned();
                match self.registry.create(&res, ns, rev.clone(), &opts).await {
                    Ok(created) => writes.push(written(&created)),
                    Err(e) if e.kind() == ErrorKind::AlreadyExists => {
                        let current = self.registry.get(&res, ns, &name).await?;
                        let ours = template::is_controlled_by(&current, object::uid(&owner))
                            && current.get("data") == rev.get("data");
                        if !ours {
                            return Err(ApiError::conflict(
                                "apps",
                                "controllerrevisions",
                                &name,
                                &format!(
                                    "a ControllerRevision of that name that {} {ns}/{} does not control exists",
                                    kind.name(),
                                    key.name
                                ),
                            ));
                        }
                        writes.push(written(&current));
                    }
                    Err(e) => return Err(e),
                }
            }
            if let Some((name, uid, number)) = &plan.renumber {
                let updated = self
                    .registry
                    .update_with(&res, ns, name, Target::Main, &opts, |cur| {
                        if object::uid(cur) != uid {
                            return Err(ApiError::conflict(
                                "apps",
                                "controllerrevisions",
                                name,
                                "the object was replaced",
                            ));
                        }
                        Ok(revisions::renumbered(cur, *number).unwrap_or_else(|| cur.clone()))
                    })
                    .await;
                if let Some(r) = ignore_not_found(updated)? {
                    writes.push(written(&r));
                }
            }
            for (name, uid) in &plan.deletes {
                self.delete(&res, ns, name, uid).await?;
                writes.push(Expect {
                    name: name.clone(),
                    resource_version: None,
                    uid: uid.clone(),
                });
            }
            Ok::<(), ApiError>(())
        }
        .await;
        self.lock().expect(key.clone(), writes, Instant::now());
        result.map(|()| None)
    }
}
