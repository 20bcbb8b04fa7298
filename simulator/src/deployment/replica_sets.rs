//! The Deployment worker's ReplicaSet side (upstream's `sync.go`):
//! claiming ReplicaSets, finding or creating the new one (revisions,
//! annotations, hash collisions), the Deployment's revision annotation,
//! and scaling writes.

use serde_json::{Map, Value, json};
use skein_apiserver::status::ErrorKind;

use super::plan::{self, REVISION, RsView, Scale};
use super::status::{self, Condition, PROGRESSING};
use super::{MANAGER, Sync, events, revision, rs_key};
use crate::Sim;
use skein_apiserver::registry::{Target, object};
use skein_apiserver::status::ApiError;
use skein_workloads::template;

impl Sync<'_> {
    /// Upstream's `ClaimReplicaSets`: the ReplicaSets this Deployment
    /// controls, adopting matching orphans and releasing those that no
    /// longer match.
    pub(super) async fn claim(
        &self,
        selector: &skein_apiserver::selector::label::Selector,
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
                        let released = self
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
                        if let Ok(rs) = released {
                            self.rs_cache.expect(&rs);
                        }
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
                        self.rs_cache.expect(&rs);
                        owned.push(rs);
                    }
                }
                _ => {}
            }
        }
        owned
    }

    pub(super) fn views(&self) -> Vec<RsView> {
        self.sets.iter().map(RsView::of).collect()
    }

    pub(super) fn template(&self) -> Value {
        self.d
            .pointer("/spec/template")
            .cloned()
            .unwrap_or(Value::Null)
    }

    pub(super) fn d_annotations(&self) -> Map<String, Value> {
        self.d
            .pointer("/metadata/annotations")
            .and_then(Value::as_object)
            .cloned()
            .unwrap_or_default()
    }

    /// Upstream's `getAllReplicaSetsAndSyncRevision`: the new ReplicaSet's
    /// name (created when `create` and missing) and the old ones' names.
    pub(super) async fn new_and_old(
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
    pub(super) async fn sync_existing_new(
        &mut self,
        name: &str,
        next_revision: i64,
    ) -> Result<(), ApiError> {
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
    pub(super) async fn create_new(
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
            Ok(rs) => {
                self.rs_cache.expect(&rs);
                (rs, false)
            }
            Err(e) if e.kind() == ErrorKind::AlreadyExists => {
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
    pub(super) async fn set_deployment_revision(&mut self, revision: &str) -> Result<(), ApiError> {
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

    /// Puts a ReplicaSet this sync wrote in place of its earlier state.
    pub(super) fn replace_set(&mut self, rs: Value) {
        self.rs_cache.expect(&rs);
        let name = rs_key(&rs);
        match self.sets.iter_mut().find(|r| rs_key(r) == name) {
            Some(slot) => *slot = rs,
            None => self.sets.push(rs),
        }
    }

    /// Applies `scales` (upstream's `scaleReplicaSet`: size and replica
    /// annotations); whether anything was written.
    pub(super) async fn apply(&mut self, scales: Vec<Scale>) -> Result<bool, ApiError> {
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

    pub(super) fn split(&self, new: Option<&str>) -> (Option<RsView>, Vec<RsView>) {
        let views = self.views();
        let new_view = new.and_then(|n| views.iter().find(|v| v.name == n).cloned());
        let olds = views
            .into_iter()
            .filter(|v| Some(v.name.as_str()) != new)
            .collect();
        (new_view, olds)
    }
}
