//! The simulated kubelet: runs the Pods bound to simulated Nodes through
//! [`lifecycle::step`] — Running (IPs, container statuses), Ready after
//! `--sim-pod-ready-delay`, never-ready, failing and Job Pods — and
//! deletes Pods being deleted once no finalizer holds them.
//!
//! Contract:
//! - Only Pods whose `spec.nodeName` is a simulated Node are run; of the
//!   others, only a Pod being deleted that no finalizer holds (deleted at
//!   once) and a Pod bound to a Node that does not exist (below) are
//!   touched.
//! - Each Pod has at most one pending transition: the work queue keeps
//!   one timer per Pod (`add_after`), and every write re-decides from the
//!   stored Pod (a stale cache never writes an older state).
//! - The simulation annotations are read from the Pod, then from its
//!   controller (ReplicaSet, StatefulSet, DaemonSet, Job,
//!   ReplicationController).
//! - A Pod bound to a Node that does not exist is deleted after
//!   [`lifecycle::ORPHAN_QUARANTINE`] (upstream's PodGC).
//! - Pod IPs come from the Node's Pod CIDR (`.2` up), unique among the
//!   Node's live Pods; a finished or deleted Pod's address is free again.
//!   A `hostNetwork` Pod has its Node's InternalIP.

pub mod addresses;
pub mod events;
pub mod lifecycle;

use skein_apiserver::status::ErrorKind;
use std::collections::HashMap;
use std::net::Ipv4Addr;

use serde_json::{Value, json};
use time::OffsetDateTime;

use super::template::{self, FAIL, NEVER_READY};
use super::{Sim, nodes};
use addresses::Addresses;
use lifecycle::{Facts, Step};
use skein_apiserver::controllers::informer::{Informer, Notice, ObjectKey};
use skein_apiserver::controllers::queue::{Item, WorkQueue};
use skein_apiserver::registry::{DeleteOptions, Target, object};
use skein_apiserver::status::ApiError;

/// The field manager of the kubelet's writes.
const MANAGER: &str = "skein-sim-kubelet";

/// Sets condition `type_` on `pod`'s status: `lastTransitionTime` is `now`
/// when the status changes (or the condition is new), else kept;
/// `reason` and `message` are replaced (`None` removes them).
pub fn set_condition(
    pod: &mut Value,
    type_: &str,
    status: &str,
    reason: Option<&str>,
    message: Option<&str>,
    now: OffsetDateTime,
) {
    let now = nodes::timestamp(now);
    if !pod.get("status").is_some_and(Value::is_object) {
        pod["status"] = json!({});
    }
    let Some(s) = pod.get_mut("status").and_then(Value::as_object_mut) else {
        return;
    };
    if !s.get("conditions").is_some_and(Value::is_array) {
        s.insert("conditions".into(), json!([]));
    }
    let Some(list) = s.get_mut("conditions").and_then(Value::as_array_mut) else {
        return;
    };
    let old = list
        .iter()
        .position(|c| c.get("type").and_then(Value::as_str) == Some(type_));
    let since = old
        .and_then(|i| list.get(i))
        .filter(|c| c.get("status").and_then(Value::as_str) == Some(status))
        .and_then(|c| c.get("lastTransitionTime").cloned())
        .unwrap_or_else(|| json!(now));
    let mut c = json!({
        "type": type_,
        "status": status,
        "lastProbeTime": null,
        "lastTransitionTime": since,
    });
    if let Some(r) = reason {
        c["reason"] = json!(r);
    }
    if let Some(m) = message {
        c["message"] = json!(m);
    }
    match old.and_then(|i| list.get_mut(i)) {
        Some(slot) => *slot = c,
        None => list.push(c),
    }
}

/// The resource of a Pod controller kind whose annotations count.
fn owner_resource(kind: &str) -> Option<(&'static str, &'static str, &'static str)> {
    Some(match kind {
        "ReplicaSet" => ("apps", "v1", "replicasets"),
        "StatefulSet" => ("apps", "v1", "statefulsets"),
        "DaemonSet" => ("apps", "v1", "daemonsets"),
        "Job" => ("batch", "v1", "jobs"),
        "ReplicationController" => ("", "v1", "replicationcontrollers"),
        _ => return None,
    })
}

/// `pod`'s controller ownerReference, if any.
fn controller_ref(pod: &Value) -> Option<Value> {
    object::owner_refs(pod)
        .into_iter()
        .find(|r| r.get("controller").and_then(Value::as_bool) == Some(true))
}

/// A Node's InternalIP.
fn host_ip(node: &Value) -> String {
    node.pointer("/status/addresses")
        .and_then(Value::as_array)
        .and_then(|a| {
            a.iter()
                .find(|x| x.get("type").and_then(Value::as_str) == Some("InternalIP"))
        })
        .and_then(|x| x.get("address"))
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_owned()
}

/// A Node's Pod CIDR (`spec.podCIDR`): its first address and how many
/// addresses it spans.
fn pod_cidr(node: &Value) -> Option<(Ipv4Addr, u32)> {
    let cidr = node.pointer("/spec/podCIDR").and_then(Value::as_str)?;
    let (ip, len) = cidr.split_once('/')?;
    let len: u32 = len.parse().ok().filter(|l| (8..=30).contains(l))?;
    Some((ip.parse().ok()?, 1 << (32 - len)))
}

/// How long a Pod that got no address waits before it asks again.
const NO_ADDRESS_RETRY: std::time::Duration = std::time::Duration::from_secs(5);

struct Kubelet {
    sim: Sim,
    pods: Informer,
    nodes: Informer,
    owners: HashMap<&'static str, Informer>,
    /// When this process started each Pod: key → (uid, instant).
    started: HashMap<ObjectKey, (String, OffsetDateTime)>,
    /// The addresses in use on each Node.
    addresses: Addresses,
    /// Pods bound to a Node that does not exist: key → (uid, since).
    missing: HashMap<ObjectKey, (String, std::time::Instant)>,
}

impl Kubelet {
    /// Whether the annotation `key` is on `pod` or its controller.
    async fn flag(&mut self, pod: &Value, key: &str) -> bool {
        if template::has_flag(pod, key) {
            return true;
        }
        let Some(owner) = controller_ref(pod) else {
            return false;
        };
        let kind = owner.get("kind").and_then(Value::as_str).unwrap_or("");
        let Some((group, version, plural)) = owner_resource(kind) else {
            return false;
        };
        let informer = match self.owners.get(plural) {
            Some(i) => i.clone(),
            None => match self.sim.informer(group, version, plural) {
                Ok(i) => {
                    i.synced().await;
                    self.owners.insert(plural, i.clone());
                    i
                }
                Err(_) => return false,
            },
        };
        let name = owner.get("name").and_then(Value::as_str).unwrap_or("");
        let uid = owner.get("uid").and_then(Value::as_str).unwrap_or("");
        informer
            .get(&ObjectKey::new(object::namespace(pod), name))
            .is_some_and(|o| object::uid(&o) == uid && template::has_flag(&o, key))
    }

    /// The Pod's address: the one it has, the one handed out, or the
    /// lowest free one of its Node.
    fn ip_for(&mut self, key: &ObjectKey, pod: &Value, node: &Value) -> Option<String> {
        let uid = object::uid(pod);
        let node_name = object::name(node);
        if let Some(ip) = pod.pointer("/status/podIP").and_then(Value::as_str)
            && !ip.is_empty()
        {
            if let Ok(addr) = ip.parse() {
                self.addresses
                    .hold(key.clone(), uid.to_owned(), node_name, addr);
            }
            return Some(ip.to_owned());
        }
        if !self.addresses.seeded(node_name) {
            // Once per Node: what its live Pods hold (stored before this
            // process started, or by Pods it has not synced yet).
            let live = self.pods.list(|p| {
                p.pointer("/spec/nodeName").and_then(Value::as_str) == Some(node_name)
                    && !matches!(template::phase(p), "Succeeded" | "Failed")
            });
            self.addresses.seed(
                node_name,
                live.iter().filter_map(|p| {
                    let ip = p.pointer("/status/podIP").and_then(Value::as_str)?;
                    Some((
                        ObjectKey::of(p),
                        object::uid(p).to_owned(),
                        ip.parse().ok()?,
                    ))
                }),
            );
        }
        let (base, size) = pod_cidr(node)?;
        let ip = self.addresses.take(key, uid, node_name, base, size)?;
        Some(ip.to_string())
    }

    /// Advances one Pod; `Some(delay)` when it must be looked at again.
    async fn sync(&mut self, key: &ObjectKey) -> Result<Option<std::time::Duration>, ApiError> {
        let Some(pod) = self.pods.get(key) else {
            self.addresses.release(key);
            self.missing.remove(key);
            self.started.remove(key);
            return Ok(None);
        };
        let uid = object::uid(&pod).to_owned();
        if matches!(template::phase(&pod), "Succeeded" | "Failed") {
            self.addresses.release(key);
            self.started.remove(key);
        }
        let node_name = pod
            .pointer("/spec/nodeName")
            .and_then(Value::as_str)
            .unwrap_or("");
        let node = self.nodes.get(&ObjectKey::new("", node_name));
        let on_simulated_node = node.as_deref().is_some_and(nodes::is_simulated);
        let res = Sim::resource("", "v1", "pods")?;
        if node.is_none() && !node_name.is_empty() {
            // Bound to a Node that does not exist: PodGC's business.
            let since = self
                .missing
                .entry(key.clone())
                .or_insert_with(|| (uid.clone(), std::time::Instant::now()));
            if since.0 != uid {
                *since = (uid.clone(), std::time::Instant::now());
            }
            return match lifecycle::orphaned(since.1.elapsed()) {
                Step::Wait(d) => Ok(Some(d)),
                _ => {
                    tracing::info!(pod = %key, node = node_name, "deleting a pod whose node is gone");
                    self.missing.remove(key);
                    self.delete(key, &uid).await?;
                    Ok(None)
                }
            };
        }
        self.missing.remove(key);
        if !on_simulated_node {
            // No kubelet runs it; only a deletion can still complete.
            if object::is_deleting(&pod) && object::finalizers(&pod).is_empty() {
                self.delete(key, &uid).await?;
            }
            return Ok(None);
        }
        let Some(node) = node else { return Ok(None) };
        let host_network = pod.pointer("/spec/hostNetwork").and_then(Value::as_bool) == Some(true);
        let pod_ip = if host_network {
            // A host-network Pod has its Node's address.
            host_ip(&node)
        } else if template::phase(&pod) == "Pending" || template::phase(&pod).is_empty() {
            match self.ip_for(key, &pod, &node) {
                Some(ip) => ip,
                None => {
                    // As a kubelet whose sandbox gets no address: try
                    // again later (another Pod may have finished).
                    tracing::warn!(pod = %key, node = node_name, "no free pod address on the node");
                    return Ok(Some(NO_ADDRESS_RETRY));
                }
            }
        } else {
            String::new()
        };
        let facts = Facts {
            host_ip: host_ip(&node),
            pod_ip,
            never_ready: self.flag(&pod, NEVER_READY).await,
            fail: self.flag(&pod, FAIL).await,
            job: controller_ref(&pod)
                .is_some_and(|r| r.get("kind").and_then(Value::as_str) == Some("Job")),
            started: self
                .started
                .get(key)
                .filter(|(u, _)| *u == uid)
                .map(|(_, t)| *t)
                .or_else(|| lifecycle::start_time(&pod)),
            ready_delay: self.sim.config.pod_ready_delay,
            job_duration: self.sim.config.job_duration,
        };
        let now = OffsetDateTime::now_utc();
        match lifecycle::step(&pod, &facts, now) {
            Step::Idle => Ok(None),
            Step::Wait(d) => Ok(Some(d)),
            Step::Delete => {
                self.delete(key, &uid).await?;
                Ok(None)
            }
            Step::Write(_) => {
                let starting = lifecycle::start_time(&pod).is_none();
                let result = self
                    .sim
                    .registry
                    .update_with(
                        &res,
                        &key.namespace,
                        &key.name,
                        Target::Status,
                        &Sim::opts(MANAGER),
                        |cur| {
                            if object::uid(cur) != uid {
                                return Ok(cur.clone());
                            }
                            Ok(match lifecycle::step(cur, &facts, now) {
                                Step::Write(next) => next,
                                _ => cur.clone(),
                            })
                        },
                    )
                    .await;
                match result {
                    Ok(written) => {
                        if starting {
                            self.started.insert(key.clone(), (uid, now));
                        }
                        let restarts = |p: &Value| {
                            p.pointer("/status/containerStatuses/0/restartCount")
                                .and_then(Value::as_u64)
                                .unwrap_or(0)
                        };
                        let recorded = if starting && lifecycle::start_time(&written).is_some() {
                            events::started(&written, node_name, now)
                        } else if restarts(&written) > restarts(&pod) {
                            events::back_off(&written, node_name, now)
                        } else {
                            Vec::new()
                        };
                        events::record(&self.sim, recorded).await;
                        Ok(None)
                    }
                    Err(e) if e.kind() == ErrorKind::NotFound => Ok(None),
                    Err(e) => Err(e),
                }
            }
        }
    }

    async fn delete(&self, key: &ObjectKey, uid: &str) -> Result<(), ApiError> {
        let res = Sim::resource("", "v1", "pods")?;
        let opts = DeleteOptions {
            precondition_uid: Some(uid.to_owned()),
            ..DeleteOptions::default()
        };
        match self
            .sim
            .registry
            .delete(&res, &key.namespace, &key.name, &opts)
            .await
        {
            Err(e) if !matches!(e.kind(), ErrorKind::NotFound | ErrorKind::Conflict) => Err(e),
            _ => Ok(()),
        }
    }
}

/// Whether the kubelet cares about `pod` (bound, or being deleted).
fn interesting(pod: &Value) -> bool {
    object::is_deleting(pod)
        || pod
            .pointer("/spec/nodeName")
            .and_then(Value::as_str)
            .is_some_and(|n| !n.is_empty())
}

/// Feeds the queue from the Pod and Node informers until they end.
async fn feed(pods: Informer, nodes: Informer, queue: WorkQueue<ObjectKey>) {
    let mut pod_notices = pods.subscription();
    let mut node_notices = nodes.subscription();
    let all = |queue: &WorkQueue<ObjectKey>| {
        for p in pods.list(interesting) {
            queue.add(ObjectKey::of(&p));
        }
    };
    loop {
        tokio::select! {
            notice = pod_notices.next() => match notice {
                Some(Notice::Applied(p)) if interesting(&p) => queue.add(ObjectKey::of(&p)),
                Some(Notice::Deleted(p)) => queue.add(ObjectKey::of(&p)),
                Some(Notice::Resync) => all(&queue),
                Some(Notice::Applied(_)) => {}
                None => return,
            },
            notice = node_notices.next() => match notice {
                Some(Notice::Applied(n)) => {
                    let name = object::name(&n).to_owned();
                    for p in pods.list(|p| {
                        p.pointer("/spec/nodeName").and_then(Value::as_str) == Some(name.as_str())
                            && lifecycle::start_time(p).is_none()
                    }) {
                        queue.add(ObjectKey::of(&p));
                    }
                }
                Some(Notice::Resync) => all(&queue),
                Some(Notice::Deleted(n)) => {
                    // Its Pods are orphans now (unless it comes back).
                    let name = object::name(&n).to_owned();
                    for p in pods.list(|p| {
                        p.pointer("/spec/nodeName").and_then(Value::as_str) == Some(name.as_str())
                    }) {
                        queue.add(ObjectKey::of(&p));
                    }
                }
                None => return,
            },
        }
    }
}

/// Finishes one queue item: look again after `delay`, retry on error.
fn finish(item: Item<ObjectKey>, result: Result<Option<std::time::Duration>, ApiError>) {
    match result {
        Ok(Some(delay)) => item.requeue_after(delay),
        Ok(None) => {}
        Err(e) => {
            tracing::warn!(pod = %item.key(), error = %e, "simulated kubelet failed");
            item.retry();
        }
    }
}

/// Runs the simulated kubelet until the runtime shuts down.
pub async fn run(sim: Sim) {
    let Some((pods, nodes)) = sim.informer_pair(
        ("", "v1", "pods"),
        ("", "v1", "nodes"),
        "simulated kubelet disabled",
    ) else {
        return;
    };
    let queue: WorkQueue<ObjectKey> = WorkQueue::new();
    tokio::spawn(feed(pods.clone(), nodes.clone(), queue.clone()));
    pods.synced().await;
    nodes.synced().await;
    for p in pods.list(interesting) {
        queue.add(ObjectKey::of(&p));
    }
    let mut kubelet = Kubelet {
        sim,
        pods,
        nodes,
        owners: HashMap::new(),
        started: HashMap::new(),
        addresses: Addresses::default(),
        missing: HashMap::new(),
    };
    loop {
        let item = queue.next().await;
        let key = item.key().clone();
        let result = kubelet.sync(&key).await;
        finish(item, result);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn conditions_keep_their_transition_time_until_the_status_changes() {
        let t0 = OffsetDateTime::UNIX_EPOCH;
        let t1 = t0 + time::Duration::seconds(5);
        let mut pod = json!({"status": {}});
        set_condition(
            &mut pod,
            "Ready",
            "False",
            Some("ContainersNotReady"),
            Some("m"),
            t0,
        );
        set_condition(
            &mut pod,
            "Ready",
            "False",
            Some("ContainersNotReady"),
            Some("m2"),
            t1,
        );
        let c = template::condition(&pod, "Ready").expect("ready");
        assert_eq!(c["lastTransitionTime"], "1970-01-01T00:00:00Z");
        assert_eq!(c["message"], "m2");
        set_condition(&mut pod, "Ready", "True", None, None, t1);
        let c = template::condition(&pod, "Ready").expect("ready");
        assert_eq!(c["lastTransitionTime"], "1970-01-01T00:00:05Z");
        assert!(c.get("reason").is_none());
        assert_eq!(
            pod["status"]["conditions"].as_array().map(Vec::len),
            Some(1)
        );
    }

    #[test]
    fn pod_cidrs_are_read_from_the_node() {
        let node = serde_json::json!({"spec": {"podCIDR": "10.244.4.0/22"}});
        assert_eq!(pod_cidr(&node), Some((Ipv4Addr::new(10, 244, 4, 0), 1024)));
        assert_eq!(
            pod_cidr(&serde_json::json!({"spec": {"podCIDR": "x/99"}})),
            None
        );
    }
}
