//! The Cluster controller's supervisor: follows Clusters and Secrets with
//! informers and keeps exactly one [`worker`] task per Cluster.
//!
//! Contract:
//! - A Cluster gets a worker once both informers have synced; the worker
//!   is aborted when the Cluster is deleted (or marked for deletion) and
//!   restarted when its [`worker::Spec`] changes: a new uid or
//!   generation, or a different kubeconfig in its Secret (a Secret created
//!   late, changed or deleted). The worker's own status writes change
//!   neither, so they never restart it.
//! - A restarted worker goes on from the Ready condition the Cluster's
//!   stored status holds (no duplicate Events after a federation restart).
//! - Lagging behind an informer (a resync) re-examines every Cluster.

use std::collections::{BTreeSet, HashMap};
use std::sync::Arc;
use std::time::Duration;

use serde_json::Value;
use tokio::task::JoinHandle;

use super::health::Health;
use super::status::ready_condition;
use super::worker::{self, Spec, secret_ref};
use crate::config::MemberConfig;
use skein_apiserver::controllers::informer::{Informer, Notice, ObjectKey};
use skein_apiserver::registry::{Registry, ResourceInfo, object, resource};

/// A running worker; dropping it aborts the task.
struct Running {
    spec: Spec,
    task: JoinHandle<()>,
}

impl Drop for Running {
    fn drop(&mut self) {
        self.task.abort();
    }
}

/// The supervisor's state.
struct Supervisor {
    registry: Registry,
    config: MemberConfig,
    res: Arc<ResourceInfo>,
    clusters: Informer,
    secrets: Informer,
    workers: HashMap<String, Running>,
}

/// Runs the supervisor until the runtime shuts down.
pub async fn run(registry: Registry, config: MemberConfig) {
    // The federation CRDs are installed before controllers start; wait
    // anyway rather than fail if the row is not there yet.
    let (res, secrets_res) = loop {
        match (
            registry
                .resources()
                .find("federation.skein.io", "v1alpha1", "clusters"),
            resource::builtin("", "v1", "secrets"),
        ) {
            (Some(c), Some(s)) => break (c, s),
            _ => tokio::time::sleep(Duration::from_secs(1)).await,
        }
    };
    let clusters = Informer::start(&registry, res.clone());
    let secrets = Informer::start(&registry, secrets_res);
    let mut cluster_notices = clusters.subscription();
    let mut secret_notices = secrets.subscription();
    clusters.synced().await;
    secrets.synced().await;
    let mut s = Supervisor {
        registry,
        config,
        res,
        clusters,
        secrets,
        workers: HashMap::new(),
    };
    s.reconcile_all();
    loop {
        tokio::select! {
            notice = cluster_notices.next() => match notice {
                Some(Notice::Applied(o) | Notice::Deleted(o)) => s.reconcile(object::name(&o)),
                Some(Notice::Resync) => s.reconcile_all(),
                None => return,
            },
            notice = secret_notices.next() => match notice {
                Some(Notice::Applied(o) | Notice::Deleted(o)) => {
                    for name in s.clusters_using(&o) {
                        s.reconcile(&name);
                    }
                }
                Some(Notice::Resync) => s.reconcile_all(),
                None => return,
            },
        }
    }
}

impl Supervisor {
    fn reconcile_all(&mut self) {
        let mut names: BTreeSet<String> = self
            .clusters
            .list(|_| true)
            .iter()
            .map(|c| object::name(c).to_owned())
            .collect();
        names.extend(self.workers.keys().cloned());
        for name in names {
            self.reconcile(&name);
        }
    }

    /// The Clusters whose `kubeconfigSecretRef` names `secret`.
    fn clusters_using(&self, secret: &Value) -> Vec<String> {
        let (ns, name) = (object::namespace(secret), object::name(secret));
        self.clusters
            .list(|c| secret_ref(c).is_some_and(|(n, m, _)| n == ns && m == name))
            .iter()
            .map(|c| object::name(c).to_owned())
            .collect()
    }

    fn reconcile(&mut self, name: &str) {
        let cluster = self
            .clusters
            .get(&ObjectKey::new("", name))
            .filter(|c| !object::is_deleting(c));
        let Some(cluster) = cluster else {
            if self.workers.remove(name).is_some() {
                tracing::debug!(cluster = name, "cluster worker stopped");
            }
            return;
        };
        let secret = secret_ref(&cluster)
            .and_then(|(ns, secret, _)| self.secrets.get(&ObjectKey::new(ns, secret)));
        let spec = Spec::of(&cluster, secret.as_deref());
        if self.workers.get(name).is_some_and(|w| w.spec == spec) {
            return;
        }
        let seed = ready_condition(cluster.get("status"))
            .map_or_else(Health::unknown, Health::from_condition);
        let task = tokio::spawn(worker::run(
            self.registry.clone(),
            self.res.clone(),
            spec.clone(),
            seed,
            self.config.clone(),
        ));
        tracing::debug!(
            cluster = name,
            generation = spec.generation,
            "cluster worker started"
        );
        // Replacing the entry drops (aborts) the previous worker.
        self.workers.insert(name.to_owned(), Running { spec, task });
    }
}
