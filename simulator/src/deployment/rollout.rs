//! The Deployment worker's rollouts (upstream's `sync.go`, `rolling.go`,
//! `recreate.go`, `progress.go`): scaling events and pauses, RollingUpdate,
//! Recreate, history cleanup, and status writes.

use skein_apiserver::status::ErrorKind;
use std::time::Duration;

use serde_json::Value;

use super::plan::{self, RsView, Scale};
use super::status::{self, REPLICA_FAILURE, Status};
use super::{MANAGER, Sync, rs_key};
use crate::Sim;
use skein_apiserver::registry::list::ListQuery;
use skein_apiserver::registry::{DeleteOptions, Target, object};
use skein_apiserver::status::ApiError;
use skein_workloads::template;

impl Sync<'_> {
    /// Upstream's `sync`: a scaling event or a paused Deployment.
    pub(super) async fn sync_scale(&mut self) -> Result<Option<Duration>, ApiError> {
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
    pub(super) async fn rolling(&mut self) -> Result<Option<Duration>, ApiError> {
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
    pub(super) async fn recreate(&mut self) -> Result<Option<Duration>, ApiError> {
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
    pub(super) async fn old_pods_running(
        &self,
        new: Option<&str>,
        olds: &[RsView],
    ) -> Result<bool, ApiError> {
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
    pub(super) async fn cleanup(&mut self, new: Option<&str>) -> Result<(), ApiError> {
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
                Err(e) if e.kind() == ErrorKind::NotFound => {}
                Err(e) => return Err(e),
            }
        }
        Ok(())
    }

    /// Upstream's `syncRolloutStatus` (`rollout`) or `syncDeploymentStatus`
    /// (not `rollout`): writes the status when it changed; returns when to
    /// check the progress deadline again.
    pub(super) async fn write_status(
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
    pub(super) async fn put_status(&mut self, next: Status) -> Result<(), ApiError> {
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
