//! The ReplicaSet controller, as kube-controller-manager v1.33's
//! (`pkg/controller/replicaset`): keep `spec.replicas` active Pods from the
//! template, adopting orphans that match the selector and releasing owned
//! Pods that no longer do; delete extras in upstream's order (unscheduled,
//! pending, not ready, doubled up on a node, recently ready, restarting,
//! newest first); report replicas, fullyLabeledReplicas, readyReplicas,
//! availableReplicas, observedGeneration, and `ReplicaFailure` when a
//! create or delete fails (e.g. admission refuses the Pod).
//!
//! Contract: it only creates and deletes Pods and reads their status
//! (simulated Pods get their node, phase and readiness elsewhere). Each
//! sync reads the ReplicaSet from the registry and its Pods from the
//! shared Pod informer; it creates or deletes only once that cache shows
//! its own previous creations and deletions ([`Expectations`]), so a
//! lagging cache never doubles them.

use skein_apiserver::status::ErrorKind;
use skein_workloads::expectations::Expectations as Tracker;
use std::cmp::Reverse;
use std::collections::{HashMap, HashSet};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::time::Instant;

use serde_json::{Value, json};
use time::OffsetDateTime;

use super::Sim;
use super::deployment::events;
use super::template::{self, PodName};
use skein_apiserver::controllers::informer::{Informer, Notice, ObjectKey};
use skein_apiserver::controllers::queue::WorkQueue;
use skein_apiserver::registry::{DeleteOptions, Target, object};
use skein_apiserver::selector::label::Selector;
use skein_apiserver::status::ApiError;

/// The field manager of this controller's writes.
const MANAGER: &str = "replicaset-controller";

/// Upstream's `BurstReplicas`: most Pods created or deleted in one sync.
const BURST: usize = 500;

/// `controller.kubernetes.io/pod-deletion-cost`.
const DELETION_COST: &str = "controller.kubernetes.io/pod-deletion-cost";

/// Runs the controller until the runtime shuts down.
pub async fn run(sim: Sim) {
    let (Ok(sets), Ok(pods)) = (
        sim.informer("apps", "v1", "replicasets"),
        sim.informer("", "v1", "pods"),
    ) else {
        tracing::error!("replicaset controller: resources not served");
        return;
    };
    let queue: WorkQueue<ObjectKey> = WorkQueue::new();
    spawn_set_notices(&sets, &queue);
    spawn_pod_notices(&pods, &sets, &queue);
    sets.synced().await;
    pods.synced().await;
    for rs in sets.list(|_| true) {
        queue.add(ObjectKey::of(&rs));
    }
    let ctx = Ctx {
        sim,
        sets,
        pods,
        expectations: Arc::default(),
    };
    for _ in 1..WORKERS {
        tokio::spawn(work(ctx.clone(), queue.clone()));
    }
    work(ctx, queue).await;
}

/// What every worker shares.
#[derive(Clone)]
struct Ctx {
    sim: Sim,
    sets: Informer,
    pods: Informer,
    expectations: Arc<Expectations>,
}

/// How many ReplicaSets are synced at once (the queue never hands one
/// key to two workers).
const WORKERS: usize = 4;

async fn work(ctx: Ctx, queue: WorkQueue<ObjectKey>) {
    loop {
        let item = queue.next().await;
        let now = OffsetDateTime::now_utc();
        match sync(&ctx, item.key(), now).await {
            Ok(Some(after)) => item.requeue_after(after),
            Ok(None) => drop(item),
            Err(e) => {
                tracing::debug!(replicaset = %item.key(), error = %e, "replicaset sync failed");
                item.retry();
            }
        }
    }
}

fn spawn_set_notices(sets: &Informer, queue: &WorkQueue<ObjectKey>) {
    let mut sub = sets.subscription();
    let (sets, queue) = (sets.clone(), queue.clone());
    tokio::spawn(async move {
        while let Some(n) = sub.next().await {
            match n {
                Notice::Applied(o) | Notice::Deleted(o) => queue.add(ObjectKey::of(&o)),
                Notice::Resync => sets
                    .list(|_| true)
                    .iter()
                    .for_each(|o| queue.add(ObjectKey::of(o))),
            }
        }
    });
}

fn spawn_pod_notices(pods: &Informer, sets: &Informer, queue: &WorkQueue<ObjectKey>) {
    let mut sub = pods.subscription();
    let (sets, queue) = (sets.clone(), queue.clone());
    tokio::spawn(async move {
        while let Some(n) = sub.next().await {
            match n {
                Notice::Applied(pod) | Notice::Deleted(pod) => {
                    for key in sets_of_pod(&sets, &pod) {
                        queue.add(key);
                    }
                }
                Notice::Resync => sets
                    .list(|_| true)
                    .iter()
                    .for_each(|o| queue.add(ObjectKey::of(o))),
            }
        }
    });
}

/// The ReplicaSets a Pod change concerns: its controller, or (an orphan)
/// every ReplicaSet of its namespace whose selector matches it.
fn sets_of_pod(sets: &Informer, pod: &Value) -> Vec<ObjectKey> {
    let ns = object::namespace(pod);
    if let Some(owner) = controller_of_kind(pod, "ReplicaSet") {
        return vec![ObjectKey::new(ns, owner)];
    }
    if template::controller_uid(pod).is_some() {
        return Vec::new();
    }
    sets.list_namespace(ns)
        .iter()
        .filter(|rs| selector_of(rs).is_some_and(|s| s.matches_object(pod)))
        .map(|rs| ObjectKey::of(rs))
        .collect()
}

/// The name of `obj`'s controller owner when it is of `kind`.
pub(crate) fn controller_of_kind<'a>(obj: &'a Value, kind: &str) -> Option<&'a str> {
    obj.pointer("/metadata/ownerReferences")
        .and_then(Value::as_array)?
        .iter()
        .find(|r| r.get("controller").and_then(Value::as_bool) == Some(true))
        .filter(|r| r.get("kind").and_then(Value::as_str) == Some(kind))
        .and_then(|r| r.get("name"))
        .and_then(Value::as_str)
}

/// A workload's `spec.selector` as a selector (`None` when malformed).
pub(crate) fn selector_of(obj: &Value) -> Option<Selector> {
    Selector::from_label_selector_value(obj.pointer("/spec/selector").unwrap_or(&Value::Null)).ok()
}

fn int(v: Option<&Value>) -> i64 {
    v.and_then(Value::as_i64).unwrap_or(0)
}

/// One sync of the ReplicaSet at `key`; `Some(delay)` asks to look again.
async fn sync(
    ctx: &Ctx,
    key: &ObjectKey,
    now: OffsetDateTime,
) -> Result<Option<Duration>, ApiError> {
    let sim = &ctx.sim;
    let rs_res = Sim::resource("apps", "v1", "replicasets")?;
    let pod_res = Sim::resource("", "v1", "pods")?;
    let rs = match sim.registry.get(&rs_res, &key.namespace, &key.name).await {
        Ok(rs) => rs,
        Err(e) if e.kind() == ErrorKind::NotFound => {
            ctx.expectations.forget(key);
            return Ok(None);
        }
        Err(e) => return Err(e),
    };
    let Some(selector) = selector_of(&rs) else {
        return Ok(None);
    };
    let uid = object::uid(&rs).to_owned();
    let deleting = object::is_deleting(&rs);
    // Decide only on a Pod cache that shows this controller's own last
    // creations and deletions (upstream's expectations).
    let settled = ctx.expectations.satisfied(key, |name| {
        ctx.pods.get(&ObjectKey::new(key.namespace.clone(), name))
    });
    // The Pods it may own: those it controls and the namespace's orphans.
    let mut all: Vec<Arc<Value>> = ctx.pods.controlled_by(&uid);
    all.extend(ctx.pods.orphans(&key.namespace));
    let opts = Sim::opts(MANAGER);

    // Claim: adopt matching orphans, release owned Pods that stopped matching.
    let mut owned: Vec<Arc<Value>> = Vec::new();
    for pod in all.iter().filter(|p| template::is_active(p)) {
        let matches = selector.matches_object(pod);
        match template::controller_uid(pod) {
            Some(u) if u == uid => {
                if matches {
                    owned.push(pod.clone());
                } else if !deleting {
                    release(sim, &pod_res, pod, &uid).await;
                }
            }
            Some(_) => {}
            None if matches && !deleting => {
                let owner = template::controller_ref(&rs, "apps/v1", "ReplicaSet");
                let name = object::name(pod).to_owned();
                let adopted = sim
                    .registry
                    .update_with(
                        &pod_res,
                        &key.namespace,
                        &name,
                        Target::Main,
                        &opts,
                        |cur| {
                            let mut next = cur.clone();
                            if template::controller_uid(cur).is_some() {
                                return Err(ApiError::conflict(
                                    "",
                                    "pods",
                                    &name,
                                    "already controlled",
                                ));
                            }
                            add_owner(&mut next, owner.clone());
                            Ok(next)
                        },
                    )
                    .await;
                if let Ok(p) = adopted {
                    owned.push(Arc::new(p));
                }
            }
            None => {}
        }
    }

    let want = usize::try_from(int(rs.pointer("/spec/replicas")).max(0)).unwrap_or(0);
    let mut failure: Option<(&str, String)> = None;
    if !settled {
        // Looked at again when the cache shows them, or after a while.
    } else if !deleting {
        if owned.len() < want {
            let n = (want - owned.len()).min(BURST);
            if let Err(e) = create_pods(ctx, key, &rs, n).await {
                failure = Some(("FailedCreate", e.message().to_owned()));
            }
        } else if owned.len() > want {
            let n = (owned.len() - want).min(BURST);
            let related = related_pods(&ctx.sets, &ctx.pods, &rs);
            let related: Vec<&Value> = related.iter().map(|p| &**p).collect();
            let owned_refs: Vec<&Value> = owned.iter().map(|p| &**p).collect();
            for pod in pods_to_delete(&owned_refs, &related, n, now) {
                let name = object::name(pod);
                ctx.expectations.deleting(key, name);
                match sim
                    .registry
                    .delete(&pod_res, &key.namespace, name, &DeleteOptions::default())
                    .await
                {
                    Ok(_) => {
                        let msg = format!("Deleted pod: {name}");
                        events::emit(
                            sim,
                            &rs,
                            events::REPLICA_SET,
                            "Normal",
                            "SuccessfulDelete",
                            msg,
                        )
                        .await;
                    }
                    Err(e) if e.kind() == ErrorKind::NotFound => {}
                    Err(e) => {
                        ctx.expectations.not_deleted(key, name);
                        let msg = format!("Error deleting: {}", e.message());
                        events::emit(
                            sim,
                            &rs,
                            events::REPLICA_SET,
                            "Warning",
                            "FailedDelete",
                            msg,
                        )
                        .await;
                        failure = Some(("FailedDelete", e.message().to_owned()));
                        break;
                    }
                }
            }
        }
    }

    let owned_refs: Vec<&Value> = owned.iter().map(|p| &**p).collect();
    let status = calculate_status(
        &rs,
        &owned_refs,
        failure.as_ref().map(|(r, m)| (*r, m.as_str())),
        now,
    );
    let stored = rs
        .get("status")
        .and_then(super::deployment::revision::strip_zero);
    if stored != super::deployment::revision::strip_zero(&status) {
        sim.registry
            .update_with(
                &rs_res,
                &key.namespace,
                &key.name,
                Target::Status,
                &opts,
                |cur| {
                    let mut next = cur.clone();
                    if let Some(m) = next.as_object_mut() {
                        m.insert("status".into(), status.clone());
                    }
                    Ok(next)
                },
            )
            .await?;
    }
    if let Some((_, message)) = failure {
        return Err(ApiError::internal(message));
    }
    let min_ready = int(rs.pointer("/spec/minReadySeconds"));
    let replicas = int(rs.pointer("/spec/replicas"));
    if min_ready > 0
        && int(status.get("readyReplicas")) == replicas
        && int(status.get("availableReplicas")) != replicas
    {
        return Ok(Some(Duration::from_secs(min_ready.unsigned_abs())));
    }
    Ok((!settled).then_some(UNSETTLED_RECHECK))
}

/// How soon a ReplicaSet whose Pod cache lags is looked at again (its
/// Pods' notices usually wake it first).
const UNSETTLED_RECHECK: Duration = Duration::from_secs(1);

fn add_owner(pod: &mut Value, owner: Value) {
    if let Some(meta) = pod.get_mut("metadata").and_then(Value::as_object_mut) {
        let refs = meta.entry("ownerReferences").or_insert_with(|| json!([]));
        if let Some(refs) = refs.as_array_mut() {
            refs.push(owner);
        }
    }
}

async fn release(
    sim: &Sim,
    pod_res: &skein_apiserver::registry::ResourceInfo,
    pod: &Value,
    uid: &str,
) {
    let name = object::name(pod).to_owned();
    let _ = sim
        .registry
        .update_with(
            pod_res,
            object::namespace(pod),
            &name,
            Target::Main,
            &Sim::opts(MANAGER),
            |cur| {
                let mut next = cur.clone();
                if let Some(refs) = next
                    .pointer_mut("/metadata/ownerReferences")
                    .and_then(Value::as_array_mut)
                {
                    refs.retain(|r| r.get("uid").and_then(Value::as_str) != Some(uid));
                }
                Ok(next)
            },
        )
        .await;
}

/// Creates `n` Pods from the template in slow-start batches (1, 2, 4, …),
/// stopping at the first error.
async fn create_pods(ctx: &Ctx, key: &ObjectKey, rs: &Value, n: usize) -> Result<(), ApiError> {
    let sim = &ctx.sim;
    let pod_res = Sim::resource("", "v1", "pods")?;
    let owner = template::controller_ref(rs, "apps/v1", "ReplicaSet");
    let ns = object::namespace(rs);
    let pod = template::pod_from_template(
        rs.pointer("/spec/template").unwrap_or(&Value::Null),
        ns,
        &PodName::Generate(format!("{}-", object::name(rs))),
        owner,
        &[],
    );
    let opts = Sim::opts(MANAGER);
    let mut left = n;
    let mut batch = 1;
    while left > 0 {
        let size = batch.min(left);
        let creates = (0..size).map(|_| sim.registry.create(&pod_res, ns, pod.clone(), &opts));
        let results = futures::future::join_all(creates).await;
        let mut failed = None;
        for r in results {
            if let Ok(p) = &r {
                ctx.expectations.created(key, object::name(p));
            }
            let (type_, reason, message) = match &r {
                Ok(p) => (
                    "Normal",
                    "SuccessfulCreate",
                    format!("Created pod: {}", object::name(p)),
                ),
                Err(e) => (
                    "Warning",
                    "FailedCreate",
                    format!("Error creating: {}", e.message()),
                ),
            };
            events::emit(sim, rs, events::REPLICA_SET, type_, reason, message).await;
            if let Err(e) = r {
                failed.get_or_insert(e);
            }
        }
        if let Some(e) = failed {
            return Err(e);
        }
        left -= size;
        batch *= 2;
    }
    Ok(())
}

/// Pods of the ReplicaSets that share `rs`'s controller owner (its own
/// when it has none): who else is on a node, for the deletion ranking.
fn related_pods(sets: &Informer, pods: &Informer, rs: &Value) -> Vec<Arc<Value>> {
    let uids: HashSet<String> = match template::controller_uid(rs) {
        Some(owner) => sets
            .controlled_by(owner)
            .iter()
            .map(|s| object::uid(s).to_owned())
            .chain(std::iter::once(object::uid(rs).to_owned()))
            .collect(),
        None => std::iter::once(object::uid(rs).to_owned()).collect(),
    };
    uids.iter()
        .flat_map(|uid| pods.controlled_by(uid))
        .filter(|p| template::is_active(p))
        .collect()
}

/// The status of `rs` with `pods` (its active Pods) at `now`, and the
/// `ReplicaFailure` condition set by `failure` (reason, message) or
/// cleared without one (upstream `calculateStatus`).
pub fn calculate_status(
    rs: &Value,
    pods: &[&Value],
    failure: Option<(&str, &str)>,
    now: OffsetDateTime,
) -> Value {
    let template_labels = rs
        .pointer("/spec/template/metadata/labels")
        .and_then(Value::as_object);
    let fully_labeled = pods
        .iter()
        .filter(|p| {
            template_labels.is_none_or(|want| {
                want.iter()
                    .all(|(k, v)| p.pointer("/metadata/labels").and_then(|l| l.get(k)) == Some(v))
            })
        })
        .count();
    let min_ready = int(rs.pointer("/spec/minReadySeconds"));
    let ready = pods.iter().filter(|p| template::is_ready(p)).count();
    let available = pods
        .iter()
        .filter(|p| template::is_available(p, min_ready, now))
        .count();
    let mut conditions: Vec<Value> = rs
        .pointer("/status/conditions")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    let has_failure = conditions
        .iter()
        .any(|c| c.get("type").and_then(Value::as_str) == Some("ReplicaFailure"));
    match failure {
        Some((reason, message)) if !has_failure => conditions.push(json!({
            "type": "ReplicaFailure",
            "status": "True",
            "lastTransitionTime": super::deployment::status::rfc3339(now),
            "reason": reason,
            "message": message,
        })),
        None if has_failure => {
            conditions.retain(|c| c.get("type").and_then(Value::as_str) != Some("ReplicaFailure"));
        }
        _ => {}
    }
    let mut status = serde_json::Map::new();
    status.insert("replicas".into(), json!(pods.len()));
    for (k, v) in [
        ("fullyLabeledReplicas", fully_labeled),
        ("readyReplicas", ready),
        ("availableReplicas", available),
    ] {
        if v > 0 {
            status.insert(k.into(), json!(v));
        }
    }
    let generation = int(rs.pointer("/metadata/generation"));
    if generation > 0 {
        status.insert("observedGeneration".into(), json!(generation));
    }
    if !conditions.is_empty() {
        status.insert("conditions".into(), Value::Array(conditions));
    }
    Value::Object(status)
}

/// The `n` Pods to delete first among `pods`, in upstream's order
/// (`ActivePodsWithRanks` with `LogarithmicScaleDown`), where a Pod's
/// rank is how many `related` Pods share its node.
pub fn pods_to_delete<'a>(
    pods: &[&'a Value],
    related: &[&Value],
    n: usize,
    now: OffsetDateTime,
) -> Vec<&'a Value> {
    if n >= pods.len() {
        return pods.to_vec();
    }
    let mut on_node: HashMap<&str, usize> = HashMap::new();
    for p in related {
        let node = node_name(p);
        if !node.is_empty() {
            *on_node.entry(node).or_default() += 1;
        }
    }
    let mut ranked: Vec<(&Value, usize)> = pods
        .iter()
        .map(|p| (*p, on_node.get(node_name(p)).copied().unwrap_or(0)))
        .collect();
    ranked.sort_by_cached_key(|(p, rank)| delete_key(p, *rank, now));
    ranked.into_iter().take(n).map(|(p, _)| p).collect()
}

fn node_name(p: &Value) -> &str {
    p.pointer("/spec/nodeName")
        .and_then(Value::as_str)
        .unwrap_or_default()
}

fn phase_rank(p: &Value) -> u8 {
    match template::phase(p) {
        "Pending" => 0,
        "Unknown" => 1,
        "Running" => 2,
        // Go's map lookup of any other phase is 0.
        _ => 0,
    }
}

fn deletion_cost(p: &Value) -> i64 {
    p.pointer("/metadata/annotations")
        .and_then(|a| a.get(DELETION_COST))
        .and_then(Value::as_str)
        .and_then(|s| s.parse::<i32>().ok())
        .map_or(0, i64::from)
}

fn parse_time(s: Option<&str>) -> Option<OffsetDateTime> {
    OffsetDateTime::parse(s?, &time::format_description::well_known::Rfc3339).ok()
}

fn ready_since(p: &Value) -> Option<OffsetDateTime> {
    template::condition(p, "Ready")
        .filter(|c| c.get("status").and_then(Value::as_str) == Some("True"))
        .and_then(|c| parse_time(c.get("lastTransitionTime").and_then(Value::as_str)))
}

fn max_restarts(p: &Value) -> i64 {
    p.pointer("/status/containerStatuses")
        .and_then(Value::as_array)
        .map(|cs| {
            cs.iter()
                .map(|c| int(c.get("restartCount")))
                .max()
                .unwrap_or(0)
        })
        .unwrap_or(0)
}

/// Upstream's `logarithmicRankDiff`: compares ⌊log2(age in ns)⌋.
fn log_rank(t: OffsetDateTime, now: OffsetDateTime) -> i64 {
    let d = (now - t).whole_nanoseconds();
    if d <= 0 {
        return -1;
    }
    #[allow(clippy::cast_precision_loss, clippy::cast_possible_truncation)]
    let r = (d as f64).log2().floor() as i64;
    r
}

/// Where a Pod goes in the deletion order (smallest first): upstream's
/// `ActivePodsWithRanks.Less` with `LogarithmicScaleDown` as a key, so the
/// order is total (Go's sort tolerates its intransitive uid tie-breaks;
/// Rust's may not). 1. unassigned first; 2. Pending, Unknown, Running;
/// 3. not ready first; 4. lower deletion cost; 5. more related Pods on
/// its node; 6. ready for less time (log2 buckets; unknown first);
/// 7. more restarts; 8. newer (log2 buckets; unknown first); then uid.
type DeleteKey = (
    bool,
    u8,
    bool,
    i64,
    Reverse<usize>,
    Option<i64>,
    Reverse<i64>,
    Option<i64>,
    String,
);

fn delete_key(p: &Value, rank: usize, now: OffsetDateTime) -> DeleteKey {
    let ready = template::is_ready(p);
    let created = parse_time(
        p.pointer("/metadata/creationTimestamp")
            .and_then(Value::as_str),
    );
    (
        !node_name(p).is_empty(),
        phase_rank(p),
        ready,
        deletion_cost(p),
        Reverse(rank),
        if ready {
            ready_since(p).map(|t| log_rank(t, now))
        } else {
            None
        },
        Reverse(max_restarts(p)),
        created.map(|t| log_rank(t, now)),
        object::uid(p).to_owned(),
    )
}

/// Upstream's controller expectations, by name: the Pods a ReplicaSet's
/// syncs created or deleted that the shared Pod cache does not show yet.
/// A sync acts (creates or deletes) only when they are all shown, so a
/// lagging cache never makes it create or delete twice; after
/// [`EXPECTATIONS_TTL`] it acts anyway (a Pod deleted before the cache saw
/// it is never shown).
pub struct Expectations {
    pending: Mutex<Tracker<ObjectKey, Write>>,
}

impl Default for Expectations {
    fn default() -> Self {
        Expectations {
            pending: Mutex::new(Tracker::new(EXPECTATIONS_TTL)),
        }
    }
}

/// How long expectations are waited for (upstream's is 5 minutes).
pub const EXPECTATIONS_TTL: Duration = Duration::from_secs(30);

/// A write the Pod cache must show.
#[derive(Debug, PartialEq, Eq)]
enum Write {
    Created(String),
    Deleted(String),
}

impl Expectations {
    fn lock(&self) -> std::sync::MutexGuard<'_, Tracker<ObjectKey, Write>> {
        self.pending
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// The sync of `key` created Pod `name`.
    pub fn created(&self, key: &ObjectKey, name: &str) {
        let now = Instant::now().into_std();
        self.lock().add(key, Write::Created(name.to_owned()), now);
    }

    /// The sync of `key` is deleting Pod `name`.
    pub fn deleting(&self, key: &ObjectKey, name: &str) {
        let now = Instant::now().into_std();
        self.lock().add(key, Write::Deleted(name.to_owned()), now);
    }

    /// Deleting Pod `name` failed: not to be waited for.
    pub fn not_deleted(&self, key: &ObjectKey, name: &str) {
        self.lock()
            .drop_where(key, |w| matches!(w, Write::Deleted(n) if n == name));
    }

    /// Drops what `key` waited for (it is gone).
    pub fn forget(&self, key: &ObjectKey) {
        self.lock().forget(key);
    }

    /// Whether the Pod cache (`cached` by name) shows every creation and
    /// deletion of `key`'s syncs, or they are older than the TTL.
    pub fn satisfied(&self, key: &ObjectKey, cached: impl Fn(&str) -> Option<Arc<Value>>) -> bool {
        let now = Instant::now().into_std();
        self.lock().satisfied(key, now, |w| match w {
            Write::Created(n) => cached(n).is_some(),
            Write::Deleted(n) => cached(n).is_none_or(|pod| object::is_deleting(&pod)),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn t(s: &str) -> OffsetDateTime {
        parse_time(Some(s)).unwrap_or(OffsetDateTime::UNIX_EPOCH)
    }

    const NOW: &str = "2026-01-01T01:00:00Z";

    fn pod(name: &str, node: &str, phase: &str, ready_at: Option<&str>, created: &str) -> Value {
        let mut conditions = vec![];
        if let Some(at) = ready_at {
            conditions.push(json!({"type": "Ready", "status": "True", "lastTransitionTime": at}));
        }
        json!({
            "metadata": {"name": name, "uid": name, "creationTimestamp": created, "labels": {"app": "web"}},
            "spec": {"nodeName": node},
            "status": {"phase": phase, "conditions": conditions},
        })
    }

    fn names(v: &[&Value]) -> Vec<String> {
        v.iter().map(|p| object::name(p).to_owned()).collect()
    }

    #[test]
    fn extras_go_unscheduled_then_pending_then_unready_first() {
        let old = "2026-01-01T00:00:00Z";
        let ready = pod("ready", "n1", "Running", Some(old), old);
        let unready = pod("unready", "n1", "Running", None, old);
        let pending = pod("pending", "n1", "Pending", None, old);
        let unscheduled = pod("unscheduled", "", "Pending", None, old);
        let pods = [&ready, &unready, &pending, &unscheduled];
        let order = pods_to_delete(&pods, &[], 3, t(NOW));
        assert_eq!(names(&order), ["unscheduled", "pending", "unready"]);
    }

    #[test]
    fn deletion_cost_then_doubled_up_then_newest() {
        let old = "2026-01-01T00:00:00Z";
        let mut cheap = pod("cheap", "n1", "Running", Some(old), old);
        cheap["metadata"]["annotations"] = json!({DELETION_COST: "-5"});
        let a = pod("a", "n1", "Running", Some(old), old);
        let b = pod("b", "n2", "Running", Some(old), old);
        let c = pod("c", "n2", "Running", Some(old), old);
        let related = [&a, &b, &c];
        // cheap first (cost), then b/c (two on n2) before a.
        let order = pods_to_delete(&[&a, &b, &c, &cheap], &related, 3, t(NOW));
        assert_eq!(names(&order), ["cheap", "b", "c"]);
        // Ready for less time goes first (different log buckets).
        let young = pod("young", "n3", "Running", Some("2026-01-01T00:59:58Z"), old);
        let aged = pod("aged", "n4", "Running", Some(old), old);
        assert_eq!(
            names(&pods_to_delete(&[&aged, &young], &[], 1, t(NOW))),
            ["young"]
        );
        // Newest first when everything else ties.
        let newer = pod("newer", "n5", "Pending", None, "2026-01-01T00:59:59Z");
        let older = pod("older", "n6", "Pending", None, old);
        assert_eq!(
            names(&pods_to_delete(&[&older, &newer], &[], 1, t(NOW))),
            ["newer"]
        );
    }

    proptest::proptest! {
        /// Any mix of Pods gives exactly the asked-for number of distinct
        /// Pods to delete, never a panic (the order is total).
        #[test]
        fn deletion_order_is_total(
            pods in proptest::collection::vec(
                (0u8..3, 0u8..3, proptest::bool::ANY, 0u32..4000, 0u32..4000, 0i64..3, -2i32..2),
                1..30,
            ),
            n in 0usize..30,
        ) {
            let phases = ["Pending", "Running", "Unknown"];
            let values: Vec<Value> = pods.iter().enumerate().map(|(i, (node, phase, ready, r, c, restarts, cost))| {
                let at = |secs: u32| super::super::deployment::status::rfc3339(t(NOW) - time::Duration::seconds(secs.into()));
                let mut p = pod(&format!("p{i}"), if *node == 0 { "" } else { "n" }, phases[usize::from(*phase)],
                    ready.then(|| at(*r)).as_deref(), &at(*c));
                p["status"]["containerStatuses"] = json!([{"restartCount": restarts}]);
                p["metadata"]["annotations"] = json!({DELETION_COST: cost.to_string()});
                p
            }).collect();
            let refs: Vec<&Value> = values.iter().collect();
            let out = pods_to_delete(&refs, &refs, n, t(NOW));
            proptest::prop_assert_eq!(out.len(), n.min(values.len()));
            let names: HashSet<&str> = out.iter().map(|p| object::name(p)).collect();
            proptest::prop_assert_eq!(names.len(), out.len());
        }
    }

    #[test]
    fn restarts_break_ties_before_age() {
        let old = "2026-01-01T00:00:00Z";
        let mut crashy = pod("crashy", "n1", "Running", None, old);
        crashy["status"]["containerStatuses"] = json!([{"restartCount": 4}]);
        let calm = pod("calm", "n2", "Running", None, "2026-01-01T00:59:00Z");
        assert_eq!(
            names(&pods_to_delete(&[&calm, &crashy], &[], 1, t(NOW))),
            ["crashy"]
        );
    }

    #[test]
    fn status_counts_labeled_ready_and_available_pods() {
        let rs = json!({
            "metadata": {"generation": 3},
            "spec": {"replicas": 3, "minReadySeconds": 30,
                     "template": {"metadata": {"labels": {"app": "web", "tier": "fe"}}}},
        });
        let mut a = pod("a", "n1", "Running", Some("2026-01-01T00:00:00Z"), NOW);
        a["metadata"]["labels"] = json!({"app": "web", "tier": "fe"});
        let b = pod("b", "n1", "Running", Some("2026-01-01T00:59:50Z"), NOW);
        let c = pod("c", "n1", "Pending", None, NOW);
        let status = calculate_status(&rs, &[&a, &b, &c], None, t(NOW));
        assert_eq!(
            status,
            json!({"replicas": 3, "fullyLabeledReplicas": 1, "readyReplicas": 2,
                   "availableReplicas": 1, "observedGeneration": 3})
        );
    }

    #[test]
    fn create_failures_set_and_success_clears_replica_failure() {
        let rs = json!({"metadata": {"generation": 1}, "spec": {"replicas": 1}});
        let failed = calculate_status(
            &rs,
            &[],
            Some(("FailedCreate", "pods \"x-\" is forbidden")),
            t(NOW),
        );
        assert_eq!(failed["replicas"], 0);
        assert_eq!(failed["conditions"][0]["type"], "ReplicaFailure");
        assert_eq!(failed["conditions"][0]["reason"], "FailedCreate");
        assert_eq!(
            failed["conditions"][0]["message"],
            "pods \"x-\" is forbidden"
        );
        let mut rs2 = rs.clone();
        rs2["status"] = failed;
        let again = calculate_status(&rs2, &[], Some(("FailedCreate", "other")), t(NOW));
        assert_eq!(
            again["conditions"][0]["message"], "pods \"x-\" is forbidden",
            "kept as is"
        );
        let ok = calculate_status(&rs2, &[], None, t(NOW));
        assert!(ok.get("conditions").is_none());
    }

    #[test]
    fn expectations_wait_for_the_cache_to_show_creations_and_deletions() {
        let e = Expectations::default();
        let key = ObjectKey::new("ns", "web-1");
        let cache: std::cell::RefCell<HashMap<String, Arc<Value>>> = std::cell::RefCell::default();
        let look = |n: &str| cache.borrow().get(n).cloned();
        assert!(e.satisfied(&key, look), "nothing expected");
        e.created(&key, "a");
        e.created(&key, "b");
        assert!(!e.satisfied(&key, look));
        cache.borrow_mut().insert("a".into(), Arc::new(json!({})));
        cache.borrow_mut().insert("b".into(), Arc::new(json!({})));
        assert!(e.satisfied(&key, look), "both shown");
        e.deleting(&key, "a");
        assert!(!e.satisfied(&key, look), "still in the cache");
        cache.borrow_mut().insert(
            "a".into(),
            Arc::new(json!({"metadata": {"deletionTimestamp": "2026-01-01T00:00:00Z"}})),
        );
        assert!(e.satisfied(&key, look), "shown as deleting");
        e.deleting(&key, "b");
        e.not_deleted(&key, "b");
        assert!(e.satisfied(&key, look), "a failed delete is not waited for");
        e.created(&key, "c");
        e.forget(&key);
        assert!(e.satisfied(&key, look));
    }

    #[tokio::test(start_paused = true)]
    async fn expectations_expire() {
        let e = Expectations::default();
        let key = ObjectKey::new("ns", "web-1");
        e.created(&key, "never-seen");
        assert!(!e.satisfied(&key, |_| None));
        tokio::time::advance(EXPECTATIONS_TTL + Duration::from_secs(1)).await;
        assert!(e.satisfied(&key, |_| None));
    }

    #[test]
    fn orphan_pods_name_their_owner_only_when_controlled_by_a_replica_set() {
        let p = json!({"metadata": {"ownerReferences": [
            {"kind": "ReplicaSet", "name": "web-1", "uid": "u", "controller": true}]}});
        assert_eq!(controller_of_kind(&p, "ReplicaSet"), Some("web-1"));
        assert_eq!(controller_of_kind(&p, "Job"), None);
    }
}
