//! The Deployment controller, as kube-controller-manager v1.33's
//! (`pkg/controller/deployment`): one ReplicaSet per Pod template
//! (`<deploy>-<pod-template-hash>`), revisions, RollingUpdate within
//! maxSurge/maxUnavailable, Recreate, proportional scaling, pause,
//! revision-history cleanup, and the status and conditions `kubectl
//! rollout status` reads.
//!
//! The decisions are pure ([`plan`], [`revision`], [`status`]); this
//! module is the worker: it reads the Deployment and its namespace's
//! ReplicaSets from the registry at each sync (consistent reads), writes
//! ReplicaSets and the Deployment's status, and is woken by the shared
//! informers (Deployments, ReplicaSets, Pods).

pub mod events;
pub mod plan;
pub mod revision;
pub mod status;

use std::time::Duration;

use serde_json::{Map, Value, json};
use time::OffsetDateTime;

use self::plan::{DeploySpec, REVISION, RsView, Scale, Strategy};
use self::status::{Condition, PROGRESSING, REPLICA_FAILURE, Status};
use super::Sim;
use super::replicaset::{controller_of_kind, selector_of};
use super::template;
use crate::controllers::informer::{Informer, Notice, ObjectKey};
use crate::controllers::queue::WorkQueue;
use crate::registry::list::ListQuery;
use crate::registry::{DeleteOptions, ResourceInfo, Target, object};
use crate::status::ApiError;

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
        Err(e) if e.reason() == "NotFound" => return Ok(None),
        Err(e) => return Err(e),
    };
    let listed = sim
        .registry
        .list(&rs_res, Some(&key.namespace), &ListQuery::default())
        .await?
        .items;
    let mut s = Sync {
        sim,
        spec: DeploySpec::of(&d),
        status: Status::of(&d),
        sets: Vec::new(),
        ns: key.namespace.clone(),
        now,
        rs_res,
        d_res,
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

impl Sync<'_> {
    /// Upstream's `ClaimReplicaSets`: the ReplicaSets this Deployment
    /// controls, adopting matching orphans and releasing those that no
    /// longer match.
    async fn claim(
        &self,
        selector: &crate::selector::label::Selector,
        listed: Vec<Value>,
    ) -> Vec<Value> {
        let uid = object::uid(&self.d).to_owned();
        let deleting = object::is_deleting(&self.d);
        let opts = Sim::opts(MANAGER);
        let mut owned = Vec::new();
        for rs in listed {
            let matches = selector.matches_object(&rs);
            let name = rs_key(&rs);
            match template::controller_uid(&rs) {
                Some(u) if u == uid => {
                    if matches {
                        owned.push(rs);
                    } else if !deleting {
                        let _ = self
                            .sim
                            .registry
                            .update_with(
                                &self.rs_res,
                                &self.ns,
                                &name,
                                Target::Main,
                                &opts,
                                |cur| {
                                    let mut next = cur.clone();
                                    if let Some(refs) = next
                                        .pointer_mut("/metadata/ownerReferences")
                                        .and_then(Value::as_array_mut)
                                    {
                                        refs.retain(|r| {
                                            r.get("uid").and_then(Value::as_str) != Some(&uid)
                                        });
                                    }
                                    Ok(next)
                                },
                            )
                            .await;
                    }
                }
                None if matches && !deleting && !object::is_deleting(&rs) => {
                    let owner = template::controller_ref(&self.d, "apps/v1", "Deployment");
                    let adopted = self
                        .sim
                        .registry
                        .update_with(&self.rs_res, &self.ns, &name, Target::Main, &opts, |cur| {
                            if template::controller_uid(cur).is_some() {
                                return Err(ApiError::conflict(
                                    "apps",
                                    "replicasets",
                                    &name,
                                    "already controlled",
                                ));
                            }
                            let mut next = cur.clone();
                            if let Some(meta) =
                                next.get_mut("metadata").and_then(Value::as_object_mut)
                            {
                                let refs =
                                    meta.entry("ownerReferences").or_insert_with(|| json!([]));
                                if let Some(refs) = refs.as_array_mut() {
                                    refs.push(owner.clone());
                                }
                            }
                            Ok(next)
                        })
                        .await;
                    if let Ok(rs) = adopted {
                        owned.push(rs);
                    }
                }
                _ => {}
            }
        }
        owned
    }

    fn views(&self) -> Vec<RsView> {
        self.sets.iter().map(RsView::of).collect()
    }

    fn template(&self) -> Value {
        self.d
            .pointer("/spec/template")
            .cloned()
            .unwrap_or(Value::Null)
    }

    fn d_annotations(&self) -> Map<String, Value> {
        self.d
            .pointer("/metadata/annotations")
            .and_then(Value::as_object)
            .cloned()
            .unwrap_or_default()
    }

    /// Upstream's `getAllReplicaSetsAndSyncRevision`: the new ReplicaSet's
    /// name (created when `create` and missing) and the old ones' names.
    async fn new_and_old(
        &mut self,
        create: bool,
    ) -> Result<(Option<String>, Vec<String>), ApiError> {
        let template = self.template();
        let refs: Vec<&Value> = self.sets.iter().collect();
        let existing = revision::find_new(&template, &refs).map(rs_key);
        let olds: Vec<String> = self
            .sets
            .iter()
            .map(rs_key)
            .filter(|n| Some(n) != existing.as_ref())
            .collect();
        let old_views: Vec<RsView> = self
            .sets
            .iter()
            .filter(|rs| olds.contains(&rs_key(rs)))
            .map(RsView::of)
            .collect();
        let old_refs: Vec<&RsView> = old_views.iter().collect();
        let next_revision = plan::next_revision(&old_refs);
        if let Some(name) = existing {
            self.sync_existing_new(&name, next_revision).await?;
            return Ok((Some(name), olds));
        }
        if !create {
            return Ok((None, olds));
        }
        let name = self.create_new(&old_refs, next_revision).await?;
        Ok((Some(name), olds))
    }

    /// The new ReplicaSet exists: bring its annotations and minReadySeconds
    /// up to date, then the Deployment's revision and Progressing.
    async fn sync_existing_new(&mut self, name: &str, next_revision: i64) -> Result<(), ApiError> {
        let Some(rs) = self.sets.iter().find(|r| rs_key(r) == name).cloned() else {
            return Ok(());
        };
        let mut annotations = rs
            .pointer("/metadata/annotations")
            .and_then(Value::as_object)
            .cloned()
            .unwrap_or_default();
        let changed = revision::set_new_rs_annotations(
            &self.d_annotations(),
            &mut annotations,
            next_revision,
            true,
            self.spec.replicas,
            self.spec.replicas + self.spec.max_surge(),
        );
        let min_ready = self
            .d
            .pointer("/spec/minReadySeconds")
            .and_then(Value::as_i64)
            .unwrap_or(0);
        let rs_min_ready = rs
            .pointer("/spec/minReadySeconds")
            .and_then(Value::as_i64)
            .unwrap_or(0);
        let mut rs = rs;
        if changed || min_ready != rs_min_ready {
            let updated = self
                .sim
                .registry
                .update_with(
                    &self.rs_res,
                    &self.ns,
                    name,
                    Target::Main,
                    &Sim::opts(MANAGER),
                    |cur| {
                        let mut next = cur.clone();
                        object::set_meta(
                            &mut next,
                            "annotations",
                            Some(Value::Object(annotations.clone())),
                        );
                        if let Some(spec) = next.get_mut("spec").and_then(Value::as_object_mut) {
                            spec.insert("minReadySeconds".into(), json!(min_ready));
                        }
                        Ok(next)
                    },
                )
                .await?;
            self.replace_set(updated.clone());
            rs = updated;
        }
        let rs_revision = rs
            .pointer("/metadata/annotations")
            .and_then(|a| a.get(REVISION))
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_owned();
        self.set_deployment_revision(&rs_revision).await?;
        if self.spec.progress_deadline().is_some() && self.status.condition(PROGRESSING).is_none() {
            let mut next = self.status.clone();
            next.set_condition(Condition::new(
                PROGRESSING,
                "True",
                status::FOUND_NEW_RS,
                format!("Found new replica set \"{name}\""),
                &status::rfc3339(self.now),
            ));
            self.put_status(next).await?;
        }
        Ok(())
    }

    /// Creates the new ReplicaSet (upstream's `getNewReplicaSet` with
    /// `createIfNotExisted`), handling hash collisions as upstream.
    async fn create_new(
        &mut self,
        olds: &[&RsView],
        next_revision: i64,
    ) -> Result<String, ApiError> {
        let template = self.template();
        let hash = revision::compute_hash(&template, self.status.collision_count);
        let name = format!("{}-{hash}", object::name(&self.d));
        let new_view = RsView {
            name: name.clone(),
            replicas: 0,
            ..RsView::default()
        };
        let mut all: Vec<&RsView> = olds.to_vec();
        all.push(&new_view);
        let replicas = plan::new_rs_new_replicas(&self.spec, &all, 0);
        let mut annotations = Map::new();
        revision::set_new_rs_annotations(
            &self.d_annotations(),
            &mut annotations,
            next_revision,
            false,
            self.spec.replicas,
            self.spec.replicas + self.spec.max_surge(),
        );
        let rs = revision::new_replica_set(&self.d, &hash, replicas, annotations);
        let now = status::rfc3339(self.now);
        let (created, existed) = match self
            .sim
            .registry
            .create(&self.rs_res, &self.ns, rs, &Sim::opts(MANAGER))
            .await
        {
            Ok(rs) => (rs, false),
            Err(e) if e.reason() == "AlreadyExists" => {
                let current = self.sim.registry.get(&self.rs_res, &self.ns, &name).await?;
                let ours = template::is_controlled_by(&current, object::uid(&self.d));
                let same = revision::equal_ignore_hash(
                    current.pointer("/spec/template").unwrap_or(&Value::Null),
                    &template,
                );
                if !(ours && same) {
                    // A hash collision: the next attempt hashes differently.
                    let mut next = self.status.clone();
                    next.collision_count =
                        Some(next.collision_count.unwrap_or(0).saturating_add(1));
                    self.put_status(next).await?;
                    return Err(e);
                }
                (current, true)
            }
            Err(e) => {
                let msg = format!(
                    "Failed to create new replica set \"{name}\": {}",
                    e.message()
                );
                if self.spec.progress_deadline().is_some() {
                    let mut next = self.status.clone();
                    next.set_condition(Condition::new(
                        PROGRESSING,
                        "False",
                        status::FAILED_RS_CREATE,
                        msg.clone(),
                        &now,
                    ));
                    self.put_status(next).await?;
                }
                events::emit(
                    self.sim,
                    &self.d,
                    events::DEPLOYMENT,
                    "Warning",
                    status::FAILED_RS_CREATE,
                    msg,
                )
                .await;
                return Err(e);
            }
        };
        if !existed && replicas > 0 {
            let msg = format!("Scaled up replica set {name} from 0 to {replicas}");
            events::emit(
                self.sim,
                &self.d,
                events::DEPLOYMENT,
                "Normal",
                "ScalingReplicaSet",
                msg,
            )
            .await;
        }
        self.sets.push(created);
        self.set_deployment_revision(&next_revision.to_string())
            .await?;
        if !existed && self.spec.progress_deadline().is_some() {
            let mut next = self.status.clone();
            next.set_condition(Condition::new(
                PROGRESSING,
                "True",
                status::NEW_RS_CREATED,
                format!("Created new replica set \"{name}\""),
                &now,
            ));
            self.put_status(next).await?;
        }
        Ok(name)
    }

    /// Upstream's `SetDeploymentRevision`, written through the main
    /// resource (Skein's status writes keep metadata).
    async fn set_deployment_revision(&mut self, revision: &str) -> Result<(), ApiError> {
        let current = self
            .d
            .pointer("/metadata/annotations")
            .and_then(|a| a.get(REVISION))
            .and_then(Value::as_str);
        if current == Some(revision) || revision.is_empty() {
            return Ok(());
        }
        let name = object::name(&self.d).to_owned();
        let updated = self
            .sim
            .registry
            .update_with(
                &self.d_res,
                &self.ns,
                &name,
                Target::Main,
                &Sim::opts(MANAGER),
                |cur| {
                    let mut next = cur.clone();
                    if let Some(meta) = next.get_mut("metadata").and_then(Value::as_object_mut) {
                        let ann = meta.entry("annotations").or_insert_with(|| json!({}));
                        if let Some(ann) = ann.as_object_mut() {
                            ann.insert(REVISION.into(), json!(revision));
                        }
                    }
                    Ok(next)
                },
            )
            .await?;
        object::set_meta(
            &mut self.d,
            "annotations",
            updated.pointer("/metadata/annotations").cloned(),
        );
        Ok(())
    }

    fn replace_set(&mut self, rs: Value) {
        let name = rs_key(&rs);
        match self.sets.iter_mut().find(|r| rs_key(r) == name) {
            Some(slot) => *slot = rs,
            None => self.sets.push(rs),
        }
    }

    /// Applies `scales` (upstream's `scaleReplicaSet`: size and replica
    /// annotations); whether anything was written.
    async fn apply(&mut self, scales: Vec<Scale>) -> Result<bool, ApiError> {
        let desired = self.spec.replicas;
        let max = desired + self.spec.max_surge();
        let mut wrote = false;
        for s in scales {
            let Some(rs) = self.sets.iter().find(|r| rs_key(r) == s.name) else {
                continue;
            };
            let view = RsView::of(rs);
            if view.replicas == s.replicas
                && view.desired_annotation == Some(desired)
                && view.max_annotation == Some(max)
            {
                continue;
            }
            let updated = self
                .sim
                .registry
                .update_with(
                    &self.rs_res,
                    &self.ns,
                    &s.name,
                    Target::Main,
                    &Sim::opts(MANAGER),
                    |cur| {
                        let mut next = cur.clone();
                        if let Some(spec) = next.get_mut("spec").and_then(Value::as_object_mut) {
                            spec.insert("replicas".into(), json!(s.replicas));
                        }
                        let mut ann = next
                            .pointer("/metadata/annotations")
                            .and_then(Value::as_object)
                            .cloned()
                            .unwrap_or_default();
                        revision::set_replicas_annotations(&mut ann, desired, max);
                        object::set_meta(&mut next, "annotations", Some(Value::Object(ann)));
                        Ok(next)
                    },
                )
                .await?;
            self.replace_set(updated);
            wrote = true;
            if view.replicas != s.replicas {
                let way = if view.replicas < s.replicas {
                    "up"
                } else {
                    "down"
                };
                let msg = format!(
                    "Scaled {way} replica set {} from {} to {}",
                    s.name, view.replicas, s.replicas
                );
                events::emit(
                    self.sim,
                    &self.d,
                    events::DEPLOYMENT,
                    "Normal",
                    "ScalingReplicaSet",
                    msg,
                )
                .await;
            }
        }
        Ok(wrote)
    }

    fn split(&self, new: Option<&str>) -> (Option<RsView>, Vec<RsView>) {
        let views = self.views();
        let new_view = new.and_then(|n| views.iter().find(|v| v.name == n).cloned());
        let olds = views
            .into_iter()
            .filter(|v| Some(v.name.as_str()) != new)
            .collect();
        (new_view, olds)
    }

    /// Upstream's `sync`: a scaling event or a paused Deployment.
    async fn sync_scale(&mut self) -> Result<Option<Duration>, ApiError> {
        let (new, _) = self.new_and_old(false).await?;
        let (new_view, olds) = self.split(new.as_deref());
        let old_refs: Vec<&RsView> = olds.iter().collect();
        let scales = plan::scale(
            &self.spec,
            new_view.as_ref(),
            &old_refs,
            self.status.replicas,
        );
        self.apply(scales).await?;
        if self.spec.paused {
            self.cleanup(new.as_deref()).await?;
        }
        self.write_status(new.as_deref(), false).await
    }

    /// Upstream's `rolloutRolling`.
    async fn rolling(&mut self) -> Result<Option<Duration>, ApiError> {
        let (new, _) = self.new_and_old(true).await?;
        let (new_view, olds) = self.split(new.as_deref());
        let all: Vec<&RsView> = olds.iter().chain(new_view.as_ref()).collect();
        if let Some(n) = &new_view
            && let Some(s) = plan::reconcile_new(&self.spec, &all, n)
        {
            self.apply(vec![s]).await?;
            return self.write_status(new.as_deref(), true).await;
        }
        let active = plan::active(olds.iter());
        let scales = plan::reconcile_old(&self.spec, &active, new_view.as_ref());
        if self.apply(scales).await? {
            return self.write_status(new.as_deref(), true).await;
        }
        if status::is_complete(&self.spec, &self.status) {
            self.cleanup(new.as_deref()).await?;
        }
        self.write_status(new.as_deref(), true).await
    }

    /// Upstream's `rolloutRecreate`.
    async fn recreate(&mut self) -> Result<Option<Duration>, ApiError> {
        let (mut new, _) = self.new_and_old(false).await?;
        let (_, olds) = self.split(new.as_deref());
        let down: Vec<Scale> = plan::active(olds.iter())
            .into_iter()
            .map(|r| Scale {
                name: r.name.clone(),
                replicas: 0,
            })
            .collect();
        if self.apply(down).await? {
            return self.write_status(new.as_deref(), true).await;
        }
        if self.old_pods_running(new.as_deref(), &olds).await? {
            return self.write_status(new.as_deref(), true).await;
        }
        if new.is_none() {
            new = self.new_and_old(true).await?.0;
        }
        if let Some(n) = &new {
            let (Some(view), _) = self.split(Some(n)) else {
                return self.write_status(new.as_deref(), true).await;
            };
            if view.replicas != self.spec.replicas {
                let s = Scale {
                    name: n.clone(),
                    replicas: self.spec.replicas,
                };
                self.apply(vec![s]).await?;
                return self.write_status(new.as_deref(), true).await;
            }
        }
        if status::is_complete(&self.spec, &self.status) {
            self.cleanup(new.as_deref()).await?;
        }
        self.write_status(new.as_deref(), true).await
    }

    /// Upstream's `oldPodsRunning`: old ReplicaSets still report Pods, or
    /// one of their Pods has not finished.
    async fn old_pods_running(&self, new: Option<&str>, olds: &[RsView]) -> Result<bool, ApiError> {
        if olds.iter().map(|r| r.status_replicas).sum::<i32>() > 0 {
            return Ok(true);
        }
        let old_uids: Vec<&str> = self
            .sets
            .iter()
            .filter(|rs| Some(object::name(rs)) != new)
            .map(object::uid)
            .collect();
        let pod_res = Sim::resource("", "v1", "pods")?;
        let pods = self
            .sim
            .registry
            .list(&pod_res, Some(&self.ns), &ListQuery::default())
            .await?
            .items;
        Ok(pods.iter().any(|p| {
            template::controller_uid(p).is_some_and(|u| old_uids.contains(&u))
                && !matches!(template::phase(p), "Succeeded" | "Failed")
        }))
    }

    /// Upstream's `cleanupDeployment`: delete old ReplicaSets beyond the
    /// revision history limit.
    async fn cleanup(&mut self, new: Option<&str>) -> Result<(), ApiError> {
        let (_, olds) = self.split(new);
        let refs: Vec<&RsView> = olds.iter().collect();
        for name in plan::history_to_delete(&self.spec, &refs) {
            match self
                .sim
                .registry
                .delete(&self.rs_res, &self.ns, &name, &DeleteOptions::default())
                .await
            {
                Ok(_) => self.sets.retain(|r| rs_key(r) != name),
                Err(e) if e.reason() == "NotFound" => {}
                Err(e) => return Err(e),
            }
        }
        Ok(())
    }

    /// Upstream's `syncRolloutStatus` (`rollout`) or `syncDeploymentStatus`
    /// (not `rollout`): writes the status when it changed; returns when to
    /// check the progress deadline again.
    async fn write_status(
        &mut self,
        new: Option<&str>,
        rollout: bool,
    ) -> Result<Option<Duration>, ApiError> {
        let (new_view, olds) = self.split(new);
        let all: Vec<&RsView> = olds.iter().chain(new_view.as_ref()).collect();
        let mut next = if rollout {
            status::rollout(&self.spec, &all, new_view.as_ref(), &self.status, self.now)
        } else {
            status::calculate(
                &self.spec,
                &all,
                new_view.as_ref(),
                &self.status,
                &status::rfc3339(self.now),
            )
        };
        if rollout {
            let mut objects: Vec<&Value> = Vec::new();
            objects.extend(self.sets.iter().filter(|r| Some(object::name(r)) == new));
            objects.extend(self.sets.iter().filter(|r| Some(object::name(r)) != new));
            match status::replica_failure(&objects) {
                Some(c) => next.set_condition(c),
                None => next.remove_condition(REPLICA_FAILURE),
            }
        }
        let recheck = if rollout {
            status::recheck_after(&self.spec, &next, &next, self.now)
        } else {
            None
        };
        if next != self.status {
            self.put_status(next).await?;
        }
        Ok(recheck)
    }

    /// Stores `next` as the Deployment's status.
    async fn put_status(&mut self, next: Status) -> Result<(), ApiError> {
        let name = object::name(&self.d).to_owned();
        let body = next.to_json();
        self.sim
            .registry
            .update_with(
                &self.d_res,
                &self.ns,
                &name,
                Target::Status,
                &Sim::opts(MANAGER),
                |cur| {
                    let mut updated = cur.clone();
                    if let Some(m) = updated.as_object_mut() {
                        m.insert("status".into(), body.clone());
                    }
                    Ok(updated)
                },
            )
            .await?;
        self.status = next;
        Ok(())
    }
}
