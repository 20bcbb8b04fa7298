//! The simulator's scheduler: binds Pending Pods that have no
//! `spec.nodeName` (default scheduler, no scheduling gates) to a Ready Node
//! with room ([`fit::fit`]), through `pods/binding` as kube-scheduler does
//! (which sets `PodScheduled` True). When nothing fits the Pod stays
//! Pending with `PodScheduled` False, reason `Unschedulable` and
//! kube-scheduler's message.
//!
//! Contract:
//! - One worker, one Pod at a time; a Pod just bound counts on its Node
//!   ("assumed", as upstream's scheduler cache) until the informer shows
//!   it bound, so two Pods never share the last room on a Node.
//! - Unschedulable Pods are tried again whenever a Node changes or a Pod
//!   is deleted, bound or finishes (room may have freed up); only the Pods
//!   found unschedulable are queued again then, not every Pod.
//! - Node usage comes from a [`ledger::Ledger`] kept in step with the Pod
//!   cache, so an attempt reads only the Pods that changed since the last.
//! - The Unschedulable condition is written only when its message
//!   changes, so retries do not churn.

pub mod fit;
mod ledger;

use skein_apiserver::status::ErrorKind;
use std::collections::{HashMap, HashSet};
use std::sync::{Arc, Mutex};

use serde_json::{Value, json};
use time::OffsetDateTime;

use super::Sim;
use super::pods::events::{self, Source};
use super::pods::set_condition;
use super::template;
use skein_apiserver::controllers::informer::{Informer, Notice, ObjectKey};
use skein_apiserver::controllers::queue::WorkQueue;
use skein_apiserver::registry::{Target, object};
use skein_apiserver::status::ApiError;

/// The field manager of the scheduler's writes.
const MANAGER: &str = "skein-sim-scheduler";

/// Whether `pod` waits for this scheduler.
pub fn needs_scheduling(pod: &Value) -> bool {
    let node = pod
        .pointer("/spec/nodeName")
        .and_then(Value::as_str)
        .unwrap_or("");
    let scheduler = pod
        .pointer("/spec/schedulerName")
        .and_then(Value::as_str)
        .unwrap_or("default-scheduler");
    let gated = pod
        .pointer("/spec/schedulingGates")
        .and_then(Value::as_array)
        .is_some_and(|g| !g.is_empty());
    node.is_empty()
        && !object::is_deleting(pod)
        && scheduler == "default-scheduler"
        && !gated
        && !matches!(template::phase(pod), "Succeeded" | "Failed")
}

/// `pod` with the Unschedulable `PodScheduled` condition, or `None` when it
/// already says `message`.
pub fn unschedulable(pod: &Value, message: &str, now: OffsetDateTime) -> Option<Value> {
    let current = template::condition(pod, "PodScheduled");
    let same = current.is_some_and(|c| {
        c.get("status").and_then(Value::as_str) == Some("False")
            && c.get("reason").and_then(Value::as_str) == Some("Unschedulable")
            && c.get("message").and_then(Value::as_str) == Some(message)
    });
    if same {
        return None;
    }
    let mut next = pod.clone();
    set_condition(
        &mut next,
        "PodScheduled",
        "False",
        Some("Unschedulable"),
        Some(message),
        now,
    );
    Some(next)
}

struct Scheduler {
    sim: Sim,
    pods: Informer,
    nodes: Informer,
    /// Pods bound by this scheduler that the informer may not show bound
    /// yet: key → (uid, the Pod as bound).
    assumed: HashMap<ObjectKey, (String, Value)>,
    /// Node usage of the cached Pods.
    ledger: ledger::Ledger,
    /// Pods found unschedulable, tried again when room may have freed up.
    waiting: Waiting,
}

/// The Pods found unschedulable, shared with [`feed`].
type Waiting = Arc<Mutex<HashSet<ObjectKey>>>;

fn lock(w: &Waiting) -> std::sync::MutexGuard<'_, HashSet<ObjectKey>> {
    w.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

impl Scheduler {
    /// Every Node's usage, with assumed bindings counted.
    fn usage(&mut self) -> HashMap<String, fit::Usage> {
        self.ledger.sync(&self.pods.list(|_| true));
        // Forget assumptions the cache has caught up with.
        let pods = &self.pods;
        self.assumed.retain(|key, (uid, _)| match pods.get(key) {
            Some(p) => object::uid(&p) == uid && needs_scheduling(&p),
            None => false,
        });
        // An assumed Pod is cached unbound, so the ledger counts it nowhere.
        let mut usage = self.ledger.nodes().clone();
        for (_, bound) in self.assumed.values() {
            if let Some((node, share)) = fit::placement(bound) {
                usage.entry(node).or_default().add_share(&share);
            }
        }
        usage
    }

    async fn schedule(&mut self, key: &ObjectKey) -> Result<(), ApiError> {
        let Some(pod) = self.pods.get(key) else {
            self.assumed.remove(key);
            lock(&self.waiting).remove(key);
            return Ok(());
        };
        if !needs_scheduling(&pod) {
            lock(&self.waiting).remove(key);
            return Ok(());
        }
        if self
            .assumed
            .get(key)
            .is_some_and(|(uid, _)| uid == object::uid(&pod))
        {
            return Ok(());
        }
        let usage = self.usage();
        let nodes: Vec<Arc<Value>> = self.nodes.list(|_| true);
        let refs: Vec<&Value> = nodes.iter().map(AsRef::as_ref).collect();
        let res = Sim::resource("", "v1", "pods")?;
        let opts = Sim::opts(MANAGER);
        let fits = fit::fit(&pod, &refs, &usage);
        {
            let mut waiting = lock(&self.waiting);
            if fits.is_ok() {
                waiting.remove(key);
            } else {
                waiting.insert(key.clone());
            }
        }
        match fits {
            Ok(node) => {
                let uid = object::uid(&pod).to_owned();
                let result = self
                    .sim
                    .registry
                    .update_subresource(&res, &key.namespace, &key.name, "binding", &opts, |p| {
                        if object::uid(p) != uid || !needs_scheduling(p) {
                            return Err(ApiError::conflict(
                                "",
                                "pods/binding",
                                &key.name,
                                "the pod changed",
                            ));
                        }
                        let mut next = p.clone();
                        next["spec"]["nodeName"] = json!(node);
                        set_condition(
                            &mut next,
                            "PodScheduled",
                            "True",
                            None,
                            None,
                            OffsetDateTime::now_utc(),
                        );
                        Ok(next)
                    })
                    .await;
                match result {
                    Ok(bound) => {
                        tracing::debug!(pod = %key, node, "scheduled");
                        let message = format!("Successfully assigned {key} to {node}");
                        let now = OffsetDateTime::now_utc();
                        let e = events::event(
                            &bound,
                            "Normal",
                            "Scheduled",
                            &message,
                            Source::Scheduler,
                            now,
                        );
                        events::record(&self.sim, vec![e]).await;
                        self.assumed.insert(key.clone(), (uid, bound));
                        Ok(())
                    }
                    Err(e) if matches!(e.kind(), ErrorKind::NotFound | ErrorKind::Conflict) => {
                        Ok(())
                    }
                    Err(e) => Err(e),
                }
            }
            Err(why) => {
                if unschedulable(&pod, &why.message, OffsetDateTime::now_utc()).is_none() {
                    return Ok(());
                }
                let uid = object::uid(&pod).to_owned();
                let result = self
                    .sim
                    .registry
                    .update_with(
                        &res,
                        &key.namespace,
                        &key.name,
                        Target::Status,
                        &opts,
                        |p| {
                            if object::uid(p) != uid || !needs_scheduling(p) {
                                return Ok(p.clone());
                            }
                            Ok(unschedulable(p, &why.message, OffsetDateTime::now_utc())
                                .unwrap_or_else(|| p.clone()))
                        },
                    )
                    .await;
                match result {
                    Err(e) if e.kind() != ErrorKind::NotFound => Err(e),
                    Err(_) => Ok(()),
                    Ok(written) => {
                        let now = OffsetDateTime::now_utc();
                        let e = events::event(
                            &written,
                            "Warning",
                            "FailedScheduling",
                            &why.message,
                            Source::Scheduler,
                            now,
                        );
                        events::record(&self.sim, vec![e]).await;
                        Ok(())
                    }
                }
            }
        }
    }
}

/// Queues every Pod waiting to be scheduled.
fn queue_pending(pods: &Informer, queue: &WorkQueue<ObjectKey>) {
    for p in pods.list(needs_scheduling) {
        queue.add(ObjectKey::of(&p));
    }
}

/// Queues the Pods found unschedulable again.
fn queue_waiting(waiting: &Waiting, queue: &WorkQueue<ObjectKey>) {
    for key in lock(waiting).iter() {
        queue.add(key.clone());
    }
}

/// Feeds the queue from the Pod and Node informers until they end.
async fn feed(pods: Informer, nodes: Informer, queue: WorkQueue<ObjectKey>, waiting: Waiting) {
    let mut pod_notices = pods.subscription();
    let mut node_notices = nodes.subscription();
    loop {
        tokio::select! {
            notice = pod_notices.next() => match notice {
                Some(Notice::Applied(p)) => {
                    if needs_scheduling(&p) {
                        queue.add(ObjectKey::of(&p));
                    } else {
                        // Bound or finished: room may have changed.
                        queue_waiting(&waiting, &queue);
                    }
                }
                Some(Notice::Deleted(_)) => queue_waiting(&waiting, &queue),
                Some(Notice::Resync) => queue_pending(&pods, &queue),
                None => return,
            },
            notice = node_notices.next() => match notice {
                Some(Notice::Resync) => queue_pending(&pods, &queue),
                Some(_) => queue_waiting(&waiting, &queue),
                None => return,
            },
        }
    }
}

/// Runs the scheduler until the runtime shuts down.
pub async fn run(sim: Sim) {
    let Some((pods, nodes)) = sim.informer_pair(
        ("", "v1", "pods"),
        ("", "v1", "nodes"),
        "simulated scheduler disabled",
    ) else {
        return;
    };
    let queue: WorkQueue<ObjectKey> = WorkQueue::new();
    let waiting = Waiting::default();
    tokio::spawn(feed(
        pods.clone(),
        nodes.clone(),
        queue.clone(),
        waiting.clone(),
    ));
    pods.synced().await;
    nodes.synced().await;
    queue_pending(&pods, &queue);
    let mut scheduler = Scheduler {
        sim,
        pods,
        nodes,
        assumed: HashMap::new(),
        ledger: ledger::Ledger::default(),
        waiting,
    };
    loop {
        let item = queue.next().await;
        let key = item.key().clone();
        if let Err(e) = scheduler.schedule(&key).await {
            tracing::warn!(pod = %key, error = %e, "scheduling failed");
            item.retry();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_unbound_live_default_scheduler_pods_wait() {
        let p = json!({"metadata": {"name": "p"}, "spec": {"containers": []}, "status": {"phase": "Pending"}});
        assert!(needs_scheduling(&p));
        let mut bound = p.clone();
        bound["spec"]["nodeName"] = json!("n");
        assert!(!needs_scheduling(&bound));
        let mut other = p.clone();
        other["spec"]["schedulerName"] = json!("custom");
        assert!(!needs_scheduling(&other));
        let mut gated = p.clone();
        gated["spec"]["schedulingGates"] = json!([{"name": "g"}]);
        assert!(!needs_scheduling(&gated));
        let mut deleting = p;
        deleting["metadata"]["deletionTimestamp"] = json!("2026-01-01T00:00:00Z");
        assert!(!needs_scheduling(&deleting));
    }

    #[test]
    fn the_unschedulable_condition_is_written_once_per_message() {
        let now = OffsetDateTime::UNIX_EPOCH;
        let p = json!({"metadata": {"name": "p"}, "status": {"phase": "Pending"}});
        let once =
            unschedulable(&p, "0/1 nodes are available: 1 Too many pods.", now).expect("written");
        let c = template::condition(&once, "PodScheduled").expect("condition");
        assert_eq!(c["status"], "False");
        assert_eq!(c["reason"], "Unschedulable");
        assert!(unschedulable(&once, "0/1 nodes are available: 1 Too many pods.", now).is_none());
        assert!(unschedulable(&once, "other", now).is_some());
    }
}
