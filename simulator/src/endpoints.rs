//! EndpointSlices and legacy Endpoints for Services with a selector, as
//! kube-controller-manager's endpointslice and endpoints controllers write
//! them ([`desired`] computes them).
//!
//! Contract:
//! - A Service is reconciled whenever it or a Pod of its namespace
//!   changes; slices are read from the registry (not a cache) before they
//!   are written, so a slice is never created twice.
//! - Only slices labelled `endpointslice.kubernetes.io/managed-by:
//!   endpointslice-controller.k8s.io` for the Service are touched; they
//!   are owned by the Service (the garbage collector removes them with
//!   it). The Endpoints object is deleted with its Service.
//! - Writes happen only when something changed.

pub mod desired;

use skein_apiserver::status::ErrorKind;
use std::collections::HashMap;

use serde_json::Value;

use super::Sim;
use skein_apiserver::controllers::informer::{Informer, Notice, ObjectKey};
use skein_apiserver::controllers::queue::WorkQueue;
use skein_apiserver::registry::list::ListQuery;
use skein_apiserver::registry::{DeleteOptions, Target, object};
use skein_apiserver::status::ApiError;

/// The field manager of the slices' writes.
const SLICE_MANAGER: &str = "endpointslice-controller";

/// The field manager of the Endpoints' writes.
const ENDPOINTS_MANAGER: &str = "endpoint-controller";

struct Controller {
    sim: Sim,
    services: Informer,
    pods: Informer,
    nodes: Informer,
}

impl Controller {
    fn zones(&self) -> HashMap<String, String> {
        self.nodes
            .list(|_| true)
            .iter()
            .filter_map(|n| {
                let zone = n
                    .pointer("/metadata/labels")?
                    .get("topology.kubernetes.io/zone")?
                    .as_str()?;
                Some((object::name(n).to_owned(), zone.to_owned()))
            })
            .collect()
    }

    async fn sync(&self, key: &ObjectKey) -> Result<(), ApiError> {
        let service = self.services.get(key);
        match service {
            Some(s) if desired::is_managed(&s) => {
                let pods = self.pods.list_namespace(&key.namespace);
                let refs: Vec<&Value> = pods.iter().map(AsRef::as_ref).collect();
                self.sync_slices(key, &s, &refs).await?;
                self.sync_legacy(key, &s, &refs).await
            }
            Some(_) => Ok(()),
            None => self.delete_legacy(key).await,
        }
    }

    async fn sync_slices(
        &self,
        key: &ObjectKey,
        service: &Value,
        pods: &[&Value],
    ) -> Result<(), ApiError> {
        let res = Sim::resource("discovery.k8s.io", "v1", "endpointslices")?;
        let opts = Sim::opts(SLICE_MANAGER);
        let page = self
            .sim
            .registry
            .list(&res, Some(&key.namespace), &ListQuery::default())
            .await?;
        let mut existing: Vec<Value> = page
            .items
            .into_iter()
            .filter(|s| {
                let labels = object::labels(s);
                labels.get(desired::SERVICE_NAME).map(String::as_str) == Some(key.name.as_str())
                    && labels.get(desired::MANAGED_BY_LABEL).map(String::as_str)
                        == Some(desired::MANAGED_BY)
            })
            .collect();
        let wanted = desired::slices(service, pods, &self.zones());
        // Pair each wanted slice with an existing one of the same ports,
        // then with any left over.
        let mut plan: Vec<(Vec<Value>, Vec<Value>, Option<Value>)> = Vec::new();
        let mut unmatched = Vec::new();
        for (ports, eps) in wanted {
            let same_ports = existing.iter().position(|s| {
                s.get("ports").cloned().unwrap_or(Value::Array(Vec::new()))
                    == Value::Array(ports.clone())
            });
            match same_ports {
                Some(i) => plan.push((ports, eps, Some(existing.remove(i)))),
                None => unmatched.push((ports, eps)),
            }
        }
        for (ports, eps) in unmatched {
            let reuse = (!existing.is_empty()).then(|| existing.remove(0));
            plan.push((ports, eps, reuse));
        }
        for (ports, eps, current) in plan {
            let next = desired::slice(service, &ports, &eps, current.as_ref());
            match current {
                Some(cur) if desired::same_slice(&cur, &next) => {}
                Some(cur) => {
                    let name = object::name(&cur).to_owned();
                    let result = self
                        .sim
                        .registry
                        .update_with(&res, &key.namespace, &name, Target::Main, &opts, |c| {
                            let mut n = desired::slice(service, &ports, &eps, Some(c));
                            object::set_meta(&mut n, "resourceVersion", None);
                            Ok(n)
                        })
                        .await;
                    ignore_not_found(result)?;
                }
                None => {
                    let result = self
                        .sim
                        .registry
                        .create(&res, &key.namespace, next, &opts)
                        .await;
                    ignore_not_found(result)?;
                }
            }
        }
        for stale in existing {
            let result = self
                .sim
                .registry
                .delete(
                    &res,
                    &key.namespace,
                    object::name(&stale),
                    &DeleteOptions::default(),
                )
                .await;
            ignore_not_found(result)?;
        }
        Ok(())
    }

    async fn sync_legacy(
        &self,
        key: &ObjectKey,
        service: &Value,
        pods: &[&Value],
    ) -> Result<(), ApiError> {
        let res = Sim::resource("", "v1", "endpoints")?;
        let opts = Sim::opts(ENDPOINTS_MANAGER);
        let current = match self.sim.registry.get(&res, &key.namespace, &key.name).await {
            Ok(c) => Some(c),
            Err(e) if e.kind() == ErrorKind::NotFound => None,
            Err(e) => return Err(e),
        };
        let next = desired::legacy(service, pods, current.as_ref());
        match current {
            Some(cur) if desired::same_legacy(&cur, &next) => Ok(()),
            Some(_) => {
                let result = self
                    .sim
                    .registry
                    .update_with(&res, &key.namespace, &key.name, Target::Main, &opts, |c| {
                        let mut n = desired::legacy(service, pods, Some(c));
                        object::set_meta(&mut n, "resourceVersion", None);
                        Ok(n)
                    })
                    .await;
                ignore_not_found(result)
            }
            None => {
                let result = self
                    .sim
                    .registry
                    .create(&res, &key.namespace, next, &opts)
                    .await;
                match result {
                    Err(e) if e.kind() == ErrorKind::AlreadyExists => Ok(()),
                    other => ignore_not_found(other),
                }
            }
        }
    }

    async fn delete_legacy(&self, key: &ObjectKey) -> Result<(), ApiError> {
        let res = Sim::resource("", "v1", "endpoints")?;
        // Only an Endpoints object this controller wrote goes.
        let current = match self.sim.registry.get(&res, &key.namespace, &key.name).await {
            Ok(c) => c,
            Err(e) if e.kind() == ErrorKind::NotFound => return Ok(()),
            Err(e) => return Err(e),
        };
        let ours = current
            .pointer("/metadata/managedFields")
            .and_then(Value::as_array)
            .is_some_and(|m| {
                m.iter()
                    .any(|f| f.get("manager").and_then(Value::as_str) == Some(ENDPOINTS_MANAGER))
            });
        if !ours {
            return Ok(());
        }
        let opts = DeleteOptions {
            precondition_uid: Some(object::uid(&current).to_owned()),
            ..DeleteOptions::default()
        };
        let result = self
            .sim
            .registry
            .delete(&res, &key.namespace, &key.name, &opts)
            .await;
        match result {
            Err(e) if e.kind() == ErrorKind::Conflict => Ok(()),
            other => ignore_not_found(other),
        }
    }
}

/// `Ok` for a result that failed only because the object is gone.
fn ignore_not_found<T>(result: Result<T, ApiError>) -> Result<(), ApiError> {
    match result {
        Err(e) if e.kind() != ErrorKind::NotFound => Err(e),
        _ => Ok(()),
    }
}

/// Queues every Service of `namespace`.
fn queue_namespace(services: &Informer, queue: &WorkQueue<ObjectKey>, namespace: &str) {
    for s in services.list_namespace(namespace) {
        queue.add(ObjectKey::of(&s));
    }
}

/// Feeds the queue until the informers end.
async fn feed(services: Informer, pods: Informer, nodes: Informer, queue: WorkQueue<ObjectKey>) {
    let mut service_notices = services.subscription();
    let mut pod_notices = pods.subscription();
    let mut node_notices = nodes.subscription();
    let all = |queue: &WorkQueue<ObjectKey>| {
        for s in services.list(|_| true) {
            queue.add(ObjectKey::of(&s));
        }
    };
    loop {
        tokio::select! {
            notice = service_notices.next() => match notice {
                Some(Notice::Applied(s) | Notice::Deleted(s)) => queue.add(ObjectKey::of(&s)),
                Some(Notice::Resync) => all(&queue),
                None => return,
            },
            notice = pod_notices.next() => match notice {
                Some(Notice::Applied(p) | Notice::Deleted(p)) => {
                    queue_namespace(&services, &queue, object::namespace(&p));
                }
                Some(Notice::Resync) => all(&queue),
                None => return,
            },
            notice = node_notices.next() => match notice {
                // Only a zone change matters; Nodes rarely change it.
                Some(Notice::Resync) => all(&queue),
                Some(_) => {}
                None => return,
            },
        }
    }
}

/// Runs the endpoints controllers until the runtime shuts down.
pub async fn run(sim: Sim) {
    let informers = (
        sim.informer("", "v1", "services"),
        sim.informer("", "v1", "pods"),
        sim.informer("", "v1", "nodes"),
    );
    let (services, pods, nodes) = match informers {
        (Ok(s), Ok(p), Ok(n)) => (s, p, n),
        (Err(e), _, _) | (_, Err(e), _) | (_, _, Err(e)) => {
            tracing::error!(error = %e, "simulated endpoints disabled");
            return;
        }
    };
    let queue: WorkQueue<ObjectKey> = WorkQueue::new();
    tokio::spawn(feed(
        services.clone(),
        pods.clone(),
        nodes.clone(),
        queue.clone(),
    ));
    services.synced().await;
    pods.synced().await;
    nodes.synced().await;
    for s in services.list(|_| true) {
        queue.add(ObjectKey::of(&s));
    }
    let controller = Controller {
        sim,
        services,
        pods,
        nodes,
    };
    loop {
        let item = queue.next().await;
        let key = item.key().clone();
        if let Err(e) = controller.sync(&key).await {
            tracing::warn!(service = %key, error = %e, "endpoints sync failed");
            item.retry();
        }
    }
}
