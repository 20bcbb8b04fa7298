//! The recorder: for each federated object, writes what the plan and the
//! cluster syncers know where users look — its Placement (or
//! ClusterPlacement) status, its own native status (folded by
//! [`crate::status::aggregate`]), Events on its per-cluster
//! transitions — and removes [`super::CLEANUP_FINALIZER`] once no copy
//! is left of an object being deleted.
//!
//! Contract: writes only what changed (a record of an unchanged object
//! writes nothing); every write goes through the registry as field
//! manager [`super::propagator::MANAGER`].

use std::collections::{BTreeMap, HashMap};
use std::sync::{Arc, Mutex};

use serde_json::{Map, Value, json};

use super::shared::{Desired, ObjId, Shared, State};
use crate::status::{self, MemberCopy};
use skein_apiserver::controllers::event;
use skein_apiserver::registry::{Registry, ResourceInfo, WriteOptions, object};
use skein_apiserver::status::ErrorKind;

/// How many objects are recorded at once.
const RECORDERS: usize = 8;

/// The name of the Placement of a `kind` object named `name`.
pub fn placement_name(kind: &str, name: &str) -> String {
    let mut n = format!("{}-{}", kind.to_ascii_lowercase(), name);
    n.truncate(253);
    n
}

/// Starts the recorders.
pub fn spawn(shared: &Arc<Shared>) {
    let memory = Arc::new(Memory::default());
    for _ in 0..RECORDERS {
        let (sh, m) = (shared.clone(), memory.clone());
        tokio::spawn(async move {
            loop {
                let item = sh.records.next().await;
                let id = item.key().clone();
                match record(&sh, &id, &m).await {
                    Ok(()) => drop(item),
                    Err(e) => {
                        tracing::debug!(object = %id.key, error = %e, "recording failed; retrying");
                        item.retry();
                    }
                }
            }
        });
    }
}

/// Per cluster, the state and generation an Event was last emitted for.
type ClusterStates = HashMap<String, (State, i64)>;

/// What Events were last emitted for: per object, its clusters' states
/// and its decision (its [`decision_summary`]). An object's entries go
/// when it is gone from the federation (bounded by the objects there).
#[derive(Default)]
struct Memory {
    states: Mutex<HashMap<ObjId, ClusterStates>>,
    decisions: Mutex<HashMap<ObjId, String>>,
}

impl Memory {
    /// Forgets `id` (gone from the federation).
    fn forget(&self, id: &ObjId) {
        self.states
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .remove(id);
        self.decisions
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .remove(id);
    }
}

/// The clusters of a `status.decision`, for people: `eu (4), us (2)` or
/// `eu, us`; empty when none.
fn decision_summary(decision: &Value) -> String {
    decision
        .get("clusters")
        .and_then(Value::as_array)
        .map(|cs| {
            cs.iter()
                .filter_map(|c| {
                    let name = c.get("name")?.as_str()?;
                    Some(match c.get("replicas").and_then(Value::as_i64) {
                        Some(n) => format!("{name} ({n})"),
                        None => name.to_owned(),
                    })
                })
                .collect::<Vec<_>>()
                .join(", ")
        })
        .unwrap_or_default()
}

/// The `source.component` of the syncer's Events.
const SYNCER: &str = "skein-syncer";

fn opts() -> WriteOptions {
    super::writes::options()
}

/// One cluster's line in the Placement.
struct Line {
    state: State,
    message: String,
    applied: Option<i64>,
}

async fn record(
    shared: &Shared,
    id: &ObjId,
    memory: &Memory,
) -> Result<(), skein_apiserver::status::ApiError> {
    let Some(kind) = shared.kinds.get(id.kind) else {
        return Ok(());
    };
    let Some(obj) = shared.object(id) else {
        memory.forget(id);
        return Ok(());
    };
    let Some(plan) = shared.plan(id) else {
        return Ok(());
    };
    if plan.uid != object::uid(&obj) {
        return Ok(());
    }
    let generation = plan.generation;
    let mut lines: BTreeMap<String, Line> = BTreeMap::new();
    let mut copies: Vec<(String, Option<Arc<Value>>, bool)> = Vec::new();
    let mut holding = 0usize;
    for (cluster, desired) in &plan.copies {
        let st = shared.copy_state(id, cluster).filter(|s| s.uid == plan.uid);
        let member = shared.syncer(cluster).and_then(|s| s.copy_of(id));
        if member.is_some() {
            holding += 1;
        }
        match desired {
            Desired::Copy(_) | Desired::Unrenderable(_) => {
                let current = st.as_ref().and_then(|s| s.applied_generation) == Some(generation);
                let mut line = match &st {
                    Some(s) => Line {
                        state: s.state,
                        message: s.message.clone(),
                        applied: s.applied_generation,
                    },
                    None => Line {
                        state: State::Pending,
                        message: String::new(),
                        applied: None,
                    },
                };
                if line.state == State::Applied
                    && current
                    && member.as_deref().is_some_and(status::is_ready)
                {
                    line.state = State::Ready;
                }
                copies.push((cluster.clone(), member, current));
                lines.insert(cluster.clone(), line);
            }
            Desired::Absent | Desired::Orphaned => {
                if member.is_some() || st.is_some() {
                    let message = st.map(|s| s.message).unwrap_or_default();
                    lines.insert(
                        cluster.clone(),
                        Line {
                            state: State::Deleting,
                            message,
                            applied: None,
                        },
                    );
                }
            }
        }
    }
    let res = kind.res.clone();
    // Before the Placement is written: after a restart, what it holds is
    // what was already announced.
    let decision = plan.decision.as_ref().map(super::shared::Planned::status);
    if let Some(d) = &decision {
        decision_event(shared, id, &obj, d, memory).await;
    }
    // What the Placement reported before this record writes it: after a
    // restart, what was already announced.
    let reported = reported_states(shared, id, generation);
    // A federation without members keeps no Placements (nothing to say).
    let has_clusters = !shared.clusters.list(|_| true).is_empty();
    if (plan.decision.is_some() && has_clusters) || !lines.is_empty() {
        write_placement(shared, &res, &obj, &decision, &lines, generation).await?;
    }
    let member_copies: Vec<MemberCopy<'_>> = copies
        .iter()
        .map(|(c, m, cur)| MemberCopy {
            cluster: c,
            object: m.as_deref(),
            current: *cur,
        })
        .collect();
    // An object placed nowhere keeps the status it has (a federation
    // without members is a plain API server).
    let placed = plan.decision.is_some() && !copies.is_empty();
    let aggregated = if placed {
        status::aggregate(&obj, &member_copies)
    } else {
        None
    };
    if let Some(new_status) = &aggregated
        && obj.get("status") != Some(new_status)
        && res.status
    {
        let ns = object::namespace(&obj).to_owned();
        super::writes::set_status(&shared.registry, &res, &ns, object::name(&obj), new_status)
            .await?;
    }
    if res.group == "apps"
        && res.kind == "Deployment"
        && let Some(agg) = &aggregated
        && let Err(e) = history_status(shared, &obj, agg).await
    {
        tracing::warn!(object = %id.key, error = %e, "updating the history ReplicaSets' statuses failed");
    }
    events(shared, id, &obj, &lines, generation, &reported, memory).await;
    if plan.releasing && holding == 0 && lines.is_empty() {
        remove_finalizer(&shared.registry, &res, &obj).await?;
        delete_placement(shared, &res, &obj).await?;
    }
    Ok(())
}

async fn write_placement(
    shared: &Shared,
    res: &ResourceInfo,
    obj: &Value,
    decision: &Option<Value>,
    lines: &BTreeMap<String, Line>,
    generation: i64,
) -> Result<(), skein_apiserver::status::ApiError> {
    let (plural, kind, idx) = if res.namespaced {
        ("placements", "Placement", 0)
    } else {
        ("clusterplacements", "ClusterPlacement", 1)
    };
    let Some(pres) = shared
        .registry
        .resources()
        .find("federation.skein.io", "v1alpha1", plural)
    else {
        return Ok(());
    };
    let ns = object::namespace(obj).to_owned();
    let name = placement_name(res.kind, object::name(obj));
    let existing = shared.placements[idx].get(
        &skein_apiserver::controllers::informer::ObjectKey::new(ns.clone(), name.clone()),
    );
    let old_status = existing
        .as_ref()
        .and_then(|p| p.get("status").cloned())
        .unwrap_or(Value::Null);
    let now = object::now_rfc3339();
    let status = placement_status(&old_status, decision, lines, generation, &now);
    if existing.is_some() && old_status == status {
        return Ok(());
    }
    if existing.is_none() {
        let placement = json!({
            "apiVersion": "federation.skein.io/v1alpha1",
            "kind": kind,
            "metadata": {
                "name": name,
                "namespace": if res.namespaced { Value::from(ns.clone()) } else { Value::Null },
                "ownerReferences": [{
                    "apiVersion": res.api_version, "kind": res.kind,
                    "name": object::name(obj), "uid": object::uid(obj),
                }],
            },
            "spec": {"resourceRef": {
                "apiVersion": res.api_version, "kind": res.kind,
                "name": object::name(obj), "uid": object::uid(obj),
            }},
            "status": status,
        });
        let mut placement = placement;
        if let Some(m) = placement
            .pointer_mut("/metadata")
            .and_then(Value::as_object_mut)
        {
            m.retain(|_, v| !v.is_null());
        }
        let placement = pres
            .normalize(placement)
            .map_err(|e| skein_apiserver::status::ApiError::internal(e.to_string()))?;
        // Created with its status: one write, not a create and a status
        // update.
        let create = WriteOptions {
            keep_status: true,
            ..opts()
        };
        match shared.registry.create(&pres, &ns, placement, &create).await {
            Ok(_) => return Ok(()),
            // Made by an earlier record the informer has not shown yet.
            Err(e) if matches!(e.kind(), ErrorKind::AlreadyExists | ErrorKind::Conflict) => {}
            Err(e) => return Err(e),
        }
    }
    super::writes::set_status(&shared.registry, &pres, &ns, &name, &status).await
}

/// The Placement's status: the decision, one line per cluster (keeping
/// `lastTransitionTime` where the state did not change), the summary and
/// the conditions.
fn placement_status(
    old: &Value,
    decision: &Option<Value>,
    lines: &BTreeMap<String, Line>,
    generation: i64,
    now: &str,
) -> Value {
    let old_line = |name: &str| -> Option<&Value> {
        old.get("clusters")?
            .as_array()?
            .iter()
            .find(|c| c.get("name").and_then(Value::as_str) == Some(name))
    };
    let clusters: Vec<Value> = lines
        .iter()
        .map(|(name, l)| {
            let prev = old_line(name);
            let since = match prev {
                Some(p) if p.get("state").and_then(Value::as_str) == Some(l.state.as_str()) => p
                    .get("lastTransitionTime")
                    .cloned()
                    .unwrap_or_else(|| json!(now)),
                _ => json!(now),
            };
            let mut m = Map::new();
            m.insert("name".into(), json!(name));
            m.insert("state".into(), json!(l.state.as_str()));
            if !l.message.is_empty() {
                m.insert("message".into(), json!(l.message));
            }
            if let Some(g) = l.applied {
                m.insert("appliedGeneration".into(), json!(g));
            }
            m.insert("lastTransitionTime".into(), since);
            Value::Object(m)
        })
        .collect();
    let placed = lines
        .values()
        .filter(|l| l.state != State::Deleting)
        .count();
    let ready = lines.values().filter(|l| l.state == State::Ready).count();
    let synced = lines
        .values()
        .filter(|l| {
            matches!(l.state, State::Applied | State::Ready) && l.applied == Some(generation)
        })
        .count();
    // The decision keeps its time while it does not change.
    let decision = match (decision, old.get("decision")) {
        (Some(d), Some(o)) if without_time(d) == without_time(o) => Some(o.clone()),
        (d, _) => d.clone(),
    };
    let condition = |t: &str, ok: bool, reason: &str, message: String| {
        let status = if ok { "True" } else { "False" };
        let prev = old
            .get("conditions")
            .and_then(Value::as_array)
            .and_then(|cs| {
                cs.iter()
                    .find(|c| c.get("type").and_then(Value::as_str) == Some(t))
            });
        let since = match prev {
            Some(p) if p.get("status").and_then(Value::as_str) == Some(status) => p
                .get("lastTransitionTime")
                .cloned()
                .unwrap_or_else(|| json!(now)),
            _ => json!(now),
        };
        json!({"type": t, "status": status, "reason": reason, "message": message,
               "observedGeneration": generation, "lastTransitionTime": since})
    };
    let scheduled = decision
        .as_ref()
        .and_then(|d| d.get("clusters"))
        .and_then(Value::as_array)
        .is_some_and(|c| !c.is_empty());
    let conditions = vec![
        condition(
            "Scheduled",
            scheduled,
            if scheduled {
                "Scheduled"
            } else {
                "Unschedulable"
            },
            if scheduled {
                format!("placed on {placed} cluster(s)")
            } else {
                "no cluster is eligible".into()
            },
        ),
        condition(
            "Synced",
            synced == placed && placed > 0,
            if synced == placed {
                "Synced"
            } else {
                "Syncing"
            },
            format!("{synced} of {placed} copies applied at generation {generation}"),
        ),
        condition(
            "Ready",
            ready == placed && placed > 0,
            if ready == placed { "Ready" } else { "NotReady" },
            format!("{ready} of {placed} copies ready"),
        ),
    ];
    let mut m = Map::new();
    m.insert("observedGeneration".into(), json!(generation));
    if let Some(d) = decision {
        m.insert("decision".into(), d);
    }
    m.insert("clusters".into(), Value::Array(clusters));
    m.insert(
        "summary".into(),
        json!({"clusters": placed, "ready": ready, "synced": synced}),
    );
    m.insert("conditions".into(), Value::Array(conditions));
    Value::Object(m)
}

fn without_time(v: &Value) -> Value {
    let mut v = v.clone();
    if let Some(m) = v.as_object_mut() {
        m.remove("time");
    }
    v
}

/// `Scheduled` when an object first gets a decision, `Rescheduled` when
/// its clusters or their replicas change. After a restart the memory is
/// seeded from the Placement, so an unchanged decision says nothing.
async fn decision_event(
    shared: &Shared,
    id: &ObjId,
    obj: &Value,
    decision: &Value,
    memory: &Memory,
) {
    let now = decision_summary(decision);
    let before = {
        let mut m = memory
            .decisions
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let before = m.get(id).cloned().or_else(|| {
            let p = shared.placement(id)?;
            p.pointer("/status/decision").map(decision_summary)
        });
        m.insert(id.clone(), now.clone());
        before
    };
    let (reason, message) = match before {
        Some(b) if b == now => return,
        Some(b) if now.is_empty() => (
            "Rescheduled",
            format!("no cluster is eligible any more (was {b})"),
        ),
        Some(b) if b.is_empty() => ("Scheduled", format!("scheduled to clusters {now}")),
        Some(b) => (
            "Rescheduled",
            format!("rescheduled to clusters {now} (was {b})"),
        ),
        None if now.is_empty() => return,
        None => ("Scheduled", format!("scheduled to clusters {now}")),
    };
    if let Some(kind) = shared.kinds.get(id.kind) {
        emit(&shared.registry, &kind.res, obj, reason, "Normal", &message).await;
    }
}

/// Each cluster's state and applied generation as the object's Placement
/// reports them now (empty without a Placement).
fn reported_states(shared: &Shared, id: &ObjId, generation: i64) -> HashMap<String, (State, i64)> {
    let Some(placement) = shared.placement(id) else {
        return HashMap::new();
    };
    placement
        .pointer("/status/clusters")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(|line| {
            let name = line.get("name")?.as_str()?;
            let state = match line.get("state")?.as_str()? {
                "Applied" => State::Applied,
                "Ready" => State::Ready,
                "Failed" => State::Failed,
                "Conflict" => State::Conflict,
                "Drifted" => State::Drifted,
                "Deleting" => State::Deleting,
                _ => State::Pending,
            };
            let applied = line
                .get("appliedGeneration")
                .and_then(Value::as_i64)
                .unwrap_or(generation);
            Some((name.to_owned(), (state, applied)))
        })
        .collect()
}

/// Emits the Events on the federated object for each cluster's state
/// change since the last record (one `Applied` Event naming every cluster
/// the record found newly applied; one Event per cluster for the others),
/// known from this
/// process's memory, else what the Placement reported before this record:
/// `reported`).
async fn events(
    shared: &Shared,
    id: &ObjId,
    obj: &Value,
    lines: &BTreeMap<String, Line>,
    generation: i64,
    reported: &HashMap<String, (State, i64)>,
    memory: &Memory,
) {
    let mut due = Vec::new();
    let mut applied: Vec<&str> = Vec::new();
    {
        let mut all = memory
            .states
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let m = all.entry(id.clone()).or_default();
        for (cluster, l) in lines {
            let prev = m
                .get(cluster)
                .copied()
                .or_else(|| reported.get(cluster).copied());
            m.insert(cluster.clone(), (l.state, generation));
            let was_applied = prev.is_some_and(|(st, g)| {
                matches!(st, State::Applied | State::Ready) && g == generation
            });
            let same = prev.map(|p| p.0) == Some(l.state);
            let (reason, kind, text) = match l.state {
                State::Applied | State::Ready if !was_applied => {
                    applied.push(cluster);
                    continue;
                }
                State::Failed if !same => (
                    "Failed",
                    "Warning",
                    format!("cluster {cluster}: {}", l.message),
                ),
                State::Conflict if !same => (
                    "Conflict",
                    "Warning",
                    format!("cluster {cluster}: {}", l.message),
                ),
                State::Drifted if !same => (
                    "Drifted",
                    "Warning",
                    format!("cluster {cluster}: {}", l.message),
                ),
                _ => continue,
            };
            due.push((reason, kind, text));
        }
    }
    // The clusters a record found applied make one Event (with ten
    // members, one write instead of ten per rollout step).
    match applied.as_slice() {
        [] => {}
        [one] => due.push((
            "Applied",
            "Normal",
            format!("applied generation {generation} to cluster {one}"),
        )),
        many => due.push((
            "Applied",
            "Normal",
            format!(
                "applied generation {generation} to clusters {}",
                many.join(", ")
            ),
        )),
    }
    for (reason, kind, text) in due {
        if let Some(k) = shared.kinds.get(id.kind) {
            emit(&shared.registry, &k.res, obj, reason, kind, &text).await;
        }
    }
}

/// The statuses of the federation's ReplicaSets of a Deployment (kept by
/// [`crate::history`]), from the members' counts
/// ([`status::workload::history_replica_sets`]): the current template's
/// holds the updated replicas, so clients that read the new ReplicaSet
/// (Helm 3's `--wait`) see the truth; the previous one the rest while a
/// rollout goes on; older ones none. Only changed statuses are written.
async fn history_status(
    shared: &Shared,
    deployment: &Value,
    agg: &Value,
) -> Result<(), skein_apiserver::status::ApiError> {
    let Some(k) = shared
        .kind_of("apps", "replicasets")
        .and_then(|kind| shared.kinds.get(kind))
    else {
        return Ok(());
    };
    let revision_of = |o: &Value| {
        o.pointer("/metadata/annotations/deployment.kubernetes.io~1revision")
            .and_then(Value::as_str)
            .and_then(|r| r.parse::<i64>().ok())
    };
    let Some(current) = revision_of(deployment) else {
        return Ok(());
    };
    let uid = object::uid(deployment);
    let ns = object::namespace(deployment);
    let owned: Vec<(Arc<Value>, i64)> = k
        .informer
        .controlled_by(uid)
        .into_iter()
        .filter_map(|rs| {
            let revision = revision_of(&rs)?;
            Some((rs, revision))
        })
        .collect();
    let sets: Vec<status::workload::HistoryReplicaSet> = owned
        .iter()
        .map(|(rs, revision)| status::workload::HistoryReplicaSet {
            revision: *revision,
            generation: rs
                .pointer("/metadata/generation")
                .and_then(Value::as_i64)
                .unwrap_or(1),
        })
        .collect();
    let wanted = status::workload::history_replica_sets(agg, current, &sets);
    for ((rs, _), want) in owned.iter().zip(wanted) {
        if rs.get("status") == Some(&want) {
            continue;
        }
        super::writes::set_status(&shared.registry, &k.res, ns, object::name(rs), &want).await?;
    }
    Ok(())
}

/// Records one core/v1 Event about the federated object.
pub async fn emit(
    registry: &Registry,
    res: &ResourceInfo,
    obj: &Value,
    reason: &str,
    kind: &str,
    message: &str,
) {
    let involved = event::Involved::of(obj, res.api_version, res.kind).without_resource_version();
    let event = event::event(
        &involved,
        kind,
        reason,
        message,
        event::Source::component(SYNCER),
        &event::Stamp::now(),
    );
    if let Err(e) = event::record(registry, event, &opts().field_manager).await {
        tracing::warn!(error = %e, "recording an event failed");
    }
}

/// Deletes the object's Placement (it stays on the federation, or it is
/// being deleted and its copies are gone or orphaned).
async fn delete_placement(
    shared: &Shared,
    res: &ResourceInfo,
    obj: &Value,
) -> Result<(), skein_apiserver::status::ApiError> {
    let (plural, idx) = if res.namespaced {
        ("placements", 0)
    } else {
        ("clusterplacements", 1)
    };
    let ns = object::namespace(obj);
    let name = placement_name(res.kind, object::name(obj));
    if shared.placements[idx]
        .get(&skein_apiserver::controllers::informer::ObjectKey::new(
            ns,
            name.clone(),
        ))
        .is_none()
    {
        return Ok(());
    }
    let Some(pres) = shared
        .registry
        .resources()
        .find("federation.skein.io", "v1alpha1", plural)
    else {
        return Ok(());
    };
    match shared
        .registry
        .delete(
            &pres,
            ns,
            &name,
            &skein_apiserver::registry::DeleteOptions::default(),
        )
        .await
    {
        Ok(_) => Ok(()),
        Err(e) if e.kind() == ErrorKind::NotFound => Ok(()),
        Err(e) => Err(e),
    }
}

async fn remove_finalizer(
    registry: &Registry,
    res: &ResourceInfo,
    obj: &Value,
) -> Result<(), skein_apiserver::status::ApiError> {
    if !object::finalizers(obj)
        .iter()
        .any(|f| f == super::CLEANUP_FINALIZER)
    {
        return Ok(());
    }
    super::writes::set_finalizer(
        registry,
        res,
        object::namespace(obj),
        object::name(obj),
        false,
    )
    .await
}
