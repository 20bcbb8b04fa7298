//! The propagator: follows the federation's propagated objects, their
//! Namespaces and the Clusters, keeps one [`ClusterSyncer`] per usable
//! Cluster, and turns each object into a [`Plan`] (schedule, render) that
//! the cluster syncers carry out and the recorder reports.
//!
//! Contract:
//! - An object that propagates carries [`super::CLEANUP_FINALIZER`] before
//!   any copy of it is made (most get it as they are created, from
//!   [`super::finalizer`]; the propagator adds it to the others); the
//!   recorder removes it once no copy is left.
//! - Every change of an object, of its Namespace's defaults or of any
//!   Cluster re-plans the objects concerned; plans are pure functions of
//!   what the informers hold (plus the previous decision, for
//!   `rebalance: false` and the grace period).
//! - A deleted object's copies are deleted, or orphaned (markers stripped)
//!   when it was deleted with `propagationPolicy=Orphan`.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;
use std::time::Duration;

use serde_json::Value;
use skein_admission::placement::{self, Placement};

use super::cluster::ClusterSyncer;
use super::kinds;
use super::plan::Policy;
use super::render::{RenderInput, render};
use super::shared::{Desired, Kind, ObjId, Plan, Planned, Shared};
use crate::config::MemberConfig;
use crate::members::worker::secret_ref;
use crate::scheduler::{self, ClusterSnapshot, ScheduleInput};
use skein_apiserver::controllers::informer::{Informer, Notice, ObjectKey};
use skein_apiserver::controllers::queue::WorkQueue;
use skein_apiserver::member_client::credentials;
use skein_apiserver::registry::{ORPHAN_FINALIZER, Registry, object, resource};

/// The field manager of the propagator's writes on the federation.
pub use super::writes::MANAGER;

/// How long an unjoined Cluster waits for its copies to be removed.
const RELEASE_BOUND: time::Duration = time::Duration::minutes(2);

/// How many objects are planned at once.
const PLANNERS: usize = 8;

/// Starts the propagator (control-plane role); it runs until the runtime
/// shuts down.
pub fn spawn(registry: &Registry, config: &MemberConfig) {
    let (registry, config) = (registry.clone(), config.clone());
    tokio::spawn(async move { run(registry, config).await });
}

async fn run(registry: Registry, config: MemberConfig) {
    let (clusters_res, secrets_res, placements, cluster_placements, crds_res) = loop {
        match (
            registry
                .resources()
                .find("federation.skein.io", "v1alpha1", "clusters"),
            resource::builtin("", "v1", "secrets"),
            registry
                .resources()
                .find("federation.skein.io", "v1alpha1", "placements"),
            registry
                .resources()
                .find("federation.skein.io", "v1alpha1", "clusterplacements"),
            resource::builtin("apiextensions.k8s.io", "v1", "customresourcedefinitions"),
        ) {
            (Some(c), Some(s), Some(p), Some(cp), Some(crd)) => break (c, s, p, cp, crd),
            _ => tokio::time::sleep(Duration::from_secs(1)).await,
        }
    };
    let crds = Informer::start(&registry, crds_res);
    crds.synced().await;
    // Built-in resources first, then the custom resources already served
    // (so a restart finds their copies like any other).
    let mut kinds: Vec<Kind> = kinds::PROPAGATED
        .iter()
        .filter_map(|(g, v, p)| registry.resources().find(g, v, p))
        .map(|res| Kind {
            informer: Informer::start(&registry, res.clone()),
            res,
        })
        .collect();
    for res in custom_resources(&crds) {
        if !kinds
            .iter()
            .any(|k| k.res.group == res.group && k.res.plural == res.plural)
        {
            kinds.push(Kind {
                informer: Informer::start(&registry, res.clone()),
                res,
            });
        }
    }
    let kinds = super::shared::Kinds::new(kinds);
    let clusters = Informer::start(&registry, clusters_res);
    let secrets = Informer::start(&registry, secrets_res);
    let placements = [
        Informer::start(&registry, placements),
        Informer::start(&registry, cluster_placements),
    ];
    let shared = Arc::new(Shared {
        registry,
        config,
        kinds,
        clusters: clusters.clone(),
        plans: Default::default(),
        copies: Default::default(),
        syncers: Default::default(),
        objects: WorkQueue::new(),
        records: WorkQueue::new(),
        placements,
        snapshots: Default::default(),
        metrics: Arc::default(),
        pending: Default::default(),
        plan_seq: Default::default(),
    });
    let fleet = crate::metrics::FleetCollector::new(&shared);
    shared
        .registry
        .instance()
        .metrics()
        .attach(shared.metrics.registry(fleet));
    let mut cluster_notices = clusters.subscription();
    let mut secret_notices = secrets.subscription();
    let mut crd_notices = crds.subscription();
    for k in shared.kinds.all() {
        k.informer.synced().await;
    }
    clusters.synced().await;
    secrets.synced().await;
    for p in &shared.placements {
        p.synced().await;
    }
    for kind in 0..shared.kinds.len() {
        let sh = shared.clone();
        tokio::spawn(async move { follow_kind(sh, kind).await });
    }
    for _ in 0..PLANNERS {
        let sh = shared.clone();
        tokio::spawn(async move { plan_loop(sh).await });
    }
    super::record::spawn(&shared);
    reconcile_syncers(&shared, &secrets).await;
    enqueue_all(&shared);
    let mut fingerprints: BTreeMap<String, String> = shared
        .clusters
        .list(|_| true)
        .iter()
        .map(|c| (object::name(c).to_owned(), scheduling_fingerprint(c)))
        .collect();
    let mut tick = tokio::time::interval(Duration::from_secs(1));
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Skip);
    loop {
        tokio::select! {
            _ = tick.tick() => release_clusters(&shared).await,
            n = cluster_notices.next() => match n {
                Some(n) => {
                    reconcile_syncers(&shared, &secrets).await;
                    // Probes rewrite a Cluster's status every period: only
                    // what the scheduler reads re-plans every object.
                    let changed = match &n {
                        Notice::Applied(c) => {
                            let name = object::name(c).to_owned();
                            let print = scheduling_fingerprint(c);
                            let changed = fingerprints.insert(name, print.clone()) != Some(print);
                            if changed {
                                replan_from_now(&shared, shared.syncer(object::name(c)));
                            }
                            changed
                        }
                        Notice::Deleted(c) => {
                            fingerprints.remove(object::name(c));
                            shared.forget_cluster(object::name(c));
                            true
                        }
                        Notice::Resync => {
                            for s in shared.all_syncers() {
                                replan_from_now(&shared, Some(s));
                            }
                            true
                        }
                    };
                    // After the syncer was told to wait for the re-plan: a
                    // member coming back must not be sent what was planned
                    // while it was away.
                    match &n {
                        Notice::Applied(c) => tell_reachability(&shared, c),
                        Notice::Deleted(_) => {}
                        Notice::Resync => {
                            for c in shared.clusters.list(|_| true) {
                                tell_reachability(&shared, &c);
                            }
                        }
                    }
                    if changed {
                        enqueue_all(&shared);
                    }
                }
                None => return,
            },
            n = secret_notices.next() => match n {
                Some(_) => reconcile_syncers(&shared, &secrets).await,
                None => return,
            },
            n = crd_notices.next() => match n {
                Some(_) => follow_custom_resources(&shared, &crds),
                None => return,
            },
        }
    }
}

/// Makes the plans made so far stale for `syncer` (it skips them): its
/// Cluster changed in a way that re-plans every object, and the re-plan,
/// queued right after, sends it the plans to carry out.
fn replan_from_now(shared: &Shared, syncer: Option<Arc<ClusterSyncer>>) {
    if let Some(s) = syncer {
        let seq = shared
            .plan_seq
            .fetch_add(1, std::sync::atomic::Ordering::SeqCst)
            + 1;
        s.replan_from(seq);
    }
}

/// Tells the syncer of `cluster` whether it is Ready, so the syncer of an
/// unreachable member waits instead of retrying.
fn tell_reachability(shared: &Shared, cluster: &Value) {
    if let Some(s) = shared.syncer(object::name(cluster)) {
        s.set_reachable(crate::scheduler::snapshot::cluster_ready(cluster));
    }
}

/// What of a Cluster the scheduler and the syncers read (labels, taints,
/// readiness and its transition time, served resources, deletion and
/// finalizers, the kubeconfig reference), so a probe's status write that
/// changes none of it re-plans nothing. Available capacity is read at each
/// object's next plan but does not by itself re-plan everything.
fn scheduling_fingerprint(cluster: &Value) -> String {
    let ready = cluster
        .pointer("/status/conditions")
        .and_then(Value::as_array)
        .and_then(|cs| {
            cs.iter()
                .find(|c| c.get("type").and_then(Value::as_str) == Some("Ready"))
        })
        .map(|c| {
            (
                c.get("status").cloned(),
                c.get("lastTransitionTime").cloned(),
            )
        });
    serde_json::json!([
        cluster.pointer("/metadata/uid"),
        cluster.pointer("/metadata/labels"),
        cluster.pointer("/metadata/deletionTimestamp"),
        cluster.pointer("/metadata/finalizers"),
        cluster.get("spec"),
        ready,
        cluster.pointer("/status/servedResources"),
    ])
    .to_string()
}

/// Queues every object of one kind as it changes; a Namespace's change
/// re-plans the objects whose defaults it holds.
async fn follow_kind(shared: Arc<Shared>, kind: usize) {
    let Some(k) = shared.kinds.get(kind) else {
        return;
    };
    let mut notices = k.informer.subscription();
    let namespaces = shared.kind_of("", "namespaces");
    loop {
        let notice = notices.next().await;
        // The kind was given another informer (a new version of a custom
        // resource): its own follower takes over.
        if !shared
            .kinds
            .get(kind)
            .is_some_and(|now| now.informer.is(&k.informer))
        {
            return;
        }
        match notice {
            Some(Notice::Applied(o)) => {
                let id = ObjId {
                    kind,
                    key: ObjectKey::of(&o),
                };
                // A status write (the recorder's own, mostly) changes no
                // plan, and nothing the recorder has not seen.
                if shared
                    .plan(&id)
                    .and_then(|p| p.source.clone())
                    .is_some_and(|planned| {
                        object::uid(&planned) == object::uid(&o)
                            && super::plan::status_only_change(&planned, &o)
                    })
                {
                    continue;
                }
                if Some(kind) == namespaces {
                    enqueue_namespace(&shared, &id.key.name);
                }
                shared.objects.add(id);
            }
            Some(Notice::Deleted(o)) => {
                let key = ObjectKey::of(&o);
                if Some(kind) == namespaces {
                    enqueue_namespace(&shared, &key.name);
                }
                shared.objects.add(ObjId { kind, key });
            }
            Some(Notice::Resync) => {
                for key in k.informer.keys() {
                    shared.objects.add(ObjId { kind, key });
                }
            }
            None => return,
        }
    }
}

/// The storage versions of users' custom resources that propagate: those
/// of every established CRD that is not being deleted, except Skein's own
/// group (the federation API stays on the federation).
fn custom_resources(crds: &Informer) -> Vec<Arc<skein_apiserver::registry::ResourceInfo>> {
    crds.list(|crd| !object::is_deleting(crd) && established(crd))
        .iter()
        .filter_map(|crd| {
            let group = crd.pointer("/spec/group")?.as_str()?;
            if group == skein_apiserver::registry::custom::FEDERATION_GROUP {
                return None;
            }
            let plural = crd.pointer("/spec/names/plural")?.as_str()?;
            let version = crd
                .pointer("/spec/versions")?
                .as_array()?
                .iter()
                .find(|v| v.get("storage").and_then(Value::as_bool) == Some(true))?
                .get("name")?
                .as_str()?;
            crds.registry().resources().find(group, version, plural)
        })
        .collect()
}

/// Whether a CRD's `Established` condition is `True`.
fn established(crd: &Value) -> bool {
    object::condition_true(crd, "Established")
}

/// Starts propagating the custom resources of CRDs established since the
/// last call: an informer and a follower each, a watch of the copies on
/// every member, and a plan for every object they already hold. A
/// resource, once followed, stays followed (its CRD's deletion deletes its
/// objects first, and those deletions propagate); a CRD created again with
/// another storage version swaps the resource's version and informer in
/// place (the members' watches relist in the new version).
fn follow_custom_resources(shared: &Arc<Shared>, crds: &Informer) {
    for res in custom_resources(crds) {
        let kind = match shared.kinds.position(res.group, res.plural) {
            Some(kind) => {
                let Some(old) = shared.kinds.get(kind) else {
                    continue;
                };
                if old.res.version == res.version
                    || !shared.kinds.replace(
                        kind,
                        Kind {
                            informer: Informer::start(&shared.registry, res.clone()),
                            res: res.clone(),
                        },
                    )
                {
                    continue;
                }
                tracing::info!(
                    group = res.group,
                    resource = res.plural,
                    version = res.version,
                    "propagating a custom resource in its new storage version"
                );
                kind
            }
            None => {
                let Some(kind) = shared.kinds.add(res.group, res.plural, || Kind {
                    informer: Informer::start(&shared.registry, res.clone()),
                    res: res.clone(),
                }) else {
                    continue;
                };
                tracing::info!(
                    group = res.group,
                    resource = res.plural,
                    "propagating a custom resource"
                );
                for s in shared.all_syncers() {
                    s.follow_kinds(shared);
                }
                kind
            }
        };
        let sh = shared.clone();
        tokio::spawn(async move { follow_kind(sh, kind).await });
        // Once listed, every object it already holds is planned (without
        // holding up the propagator's loop meanwhile).
        if let Some(k) = shared.kinds.get(kind) {
            let sh = shared.clone();
            tokio::spawn(async move {
                k.informer.synced().await;
                for key in k.informer.keys() {
                    sh.objects.add(ObjId { kind, key });
                }
            });
        }
    }
}

fn enqueue_namespace(shared: &Shared, ns: &str) {
    for (kind, k) in shared.kinds.all().into_iter().enumerate() {
        let keys = if k.res.namespaced {
            k.informer.keys_in(ns)
        } else {
            k.informer
                .list(|o| scheduler::effective::defaults_namespace(o) == Some(ns))
                .iter()
                .map(|o| ObjectKey::of(o))
                .collect()
        };
        for key in keys {
            shared.objects.add(ObjId { kind, key });
        }
    }
}

fn enqueue_all(shared: &Shared) {
    for (kind, k) in shared.kinds.all().into_iter().enumerate() {
        for key in k.informer.keys() {
            shared.objects.add(ObjId { kind, key });
        }
    }
    // Copies whose object is gone (strays) are planned too.
    for s in shared.all_syncers() {
        for kind in 0..shared.kinds.len() {
            for id in s.copies_of_kind(kind) {
                shared.objects.add(id);
            }
        }
    }
}

/// A Cluster's syncer fingerprint, kubeconfig context and kubeconfig text.
type Credentials = (String, Option<String>, String);

/// Starts, restarts and stops cluster syncers to match the Clusters.
async fn reconcile_syncers(shared: &Arc<Shared>, secrets: &Informer) {
    let mut wanted: BTreeMap<String, Credentials> = BTreeMap::new();
    for c in shared.clusters.list(|c| !object::is_deleting(c)) {
        let Some((ns, name, key)) = secret_ref(&c) else {
            continue;
        };
        let Some(secret) = secrets.get(&ObjectKey::new(ns, name)) else {
            continue;
        };
        let Ok(text) = credentials::from_secret(&secret, &key) else {
            continue;
        };
        let context = c
            .pointer("/spec/context")
            .and_then(Value::as_str)
            .filter(|s| !s.is_empty())
            .map(str::to_owned);
        let fingerprint = format!(
            "{}/{}",
            object::uid(&c),
            hex(&skein_apiserver::registry::sha256(
                format!("{text}\0{context:?}").as_bytes()
            ))
        );
        wanted.insert(object::name(&c).to_owned(), (fingerprint, context, text));
    }
    let missing: Vec<(String, Credentials)> = {
        let mut syncers = shared
            .syncers
            .write()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        // A Cluster being deleted keeps its syncer (and the client it
        // already has) until its copies are removed.
        let leaving: BTreeSet<String> = shared
            .clusters
            .list(object::is_deleting)
            .iter()
            .map(|c| object::name(c).to_owned())
            .collect();
        syncers.retain(|name, s| {
            leaving.contains(name)
                || wanted
                    .get(name)
                    .is_some_and(|(f, _, _)| *f == s.fingerprint)
        });
        wanted
            .into_iter()
            .filter(|(n, _)| !syncers.contains_key(n))
            .collect()
    };
    for (name, (fingerprint, context, text)) in missing {
        match credentials::client(&text, context.as_deref()).await {
            Ok(client) => {
                let s = ClusterSyncer::start(shared, &name, fingerprint, client);
                shared
                    .syncers
                    .write()
                    .unwrap_or_else(std::sync::PoisonError::into_inner)
                    .insert(name.clone(), s);
                // Unjoining waits until the copies are gone.
                let res = shared.clusters.resource().clone();
                let id = ObjectKey::new("", name.clone());
                if let Err(e) = add_finalizer_at(shared, &res, &id).await {
                    tracing::debug!(cluster = name, error = %e, "cannot mark the Cluster for cleanup");
                }
            }
            Err(e) => tracing::debug!(cluster = name, error = %e, "no client for the cluster"),
        }
    }
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().take(8).map(|b| format!("{b:02x}")).collect()
}

async fn plan_loop(shared: Arc<Shared>) {
    loop {
        let item = shared.objects.next().await;
        let id = item.key().clone();
        match plan_object(&shared, &id).await {
            Ok(()) => drop(item),
            Err(e) => {
                tracing::debug!(object = %id.key, error = %e, "planning failed; retrying");
                item.retry();
            }
        }
    }
}

/// The clusters that hold a copy of `id` or are working on one.
fn holders(shared: &Shared, id: &ObjId) -> BTreeSet<String> {
    let mut out: BTreeSet<String> = shared
        .all_syncers()
        .iter()
        .filter(|s| s.holds(id))
        .map(|s| s.name.clone())
        .collect();
    // A cluster of the previous plan counts while it is still a Cluster:
    // one released (unjoined while unreachable) keeps its copies and has
    // no syncer to remove them, so nothing waits for it.
    if let Some(p) = shared.plan(id) {
        out.extend(
            p.copies
                .keys()
                .filter(|c| {
                    shared.syncer(c).is_some()
                        || shared
                            .clusters
                            .get(&ObjectKey::new("", c.as_str()))
                            .is_some()
                })
                .cloned(),
        );
    }
    out
}

/// The Placement's previous decision: replicas (or `None` for a whole
/// copy) by cluster.
fn previous_decision(shared: &Shared, id: &ObjId) -> BTreeMap<String, Option<i64>> {
    if let Some(p) = shared.plan(id)
        && p.decision.is_some()
    {
        return p.assigned.clone();
    }
    let Some(p) = shared.placement(id) else {
        return BTreeMap::new();
    };
    p.pointer("/status/decision/clusters")
        .and_then(Value::as_array)
        .map(|cs| {
            cs.iter()
                .filter_map(|c| {
                    let name = c.get("name")?.as_str()?.to_owned();
                    Some((name, c.get("replicas").and_then(Value::as_i64)))
                })
                .collect()
        })
        .unwrap_or_default()
}

async fn plan_object(shared: &Shared, id: &ObjId) -> Result<(), skein_apiserver::status::ApiError> {
    let Some(kind) = shared.kinds.get(id.kind) else {
        return Ok(());
    };
    // Read before anything the plan is made from.
    let seq = shared.plan_seq.load(std::sync::atomic::Ordering::SeqCst);
    let holders = holders(shared, id);
    let Some(obj) = shared.object(id) else {
        // Gone from the federation: any copy left is a stray.
        if holders.is_empty() {
            shared.forget(id);
            // The recorder forgets what it remembered for it.
            shared.record(id);
            return Ok(());
        }
        let plan = Plan {
            seq,
            uid: String::new(),
            source: None,
            generation: 0,
            policy: default_policy(),
            copies: holders
                .iter()
                .map(|c| (c.clone(), removal(shared, c, false)))
                .collect(),
            decision: None,
            assigned: BTreeMap::new(),
            releasing: true,
        };
        dispatch(shared, id, plan);
        return Ok(());
    };
    let res = &kind.res;
    let generation = obj
        .pointer("/metadata/generation")
        .and_then(Value::as_i64)
        .unwrap_or(0);
    let uid = object::uid(&obj).to_owned();
    let namespace = scheduler::effective::defaults_namespace(&obj).and_then(|ns| {
        let k = shared.kind_of("", "namespaces")?;
        shared.kinds.get(k)?.informer.get(&ObjectKey::new("", ns))
    });
    let placement = scheduler::effective::effective(&obj, namespace.as_deref());
    let policy = Policy {
        conflict: placement.effective_conflict_resolution(),
        drift: placement.effective_drift(),
    };
    let deleting = object::is_deleting(&obj);
    if res.plural == "namespaces" {
        // A Namespace goes where its objects go (the cluster syncers
        // create it there); its copies follow its labels and annotations.
        let copies = holders
            .iter()
            .map(|c| {
                // A cluster that leaves keeps the Namespace (and whatever
                // else its own users put there), without Skein's markers.
                let leaving = shared
                    .clusters
                    .get(&ObjectKey::new("", c.as_str()))
                    .is_none_or(|k| object::is_deleting(&k));
                let d = if leaving {
                    Desired::Orphaned
                } else if deleting {
                    Desired::Absent
                } else {
                    render_for(&obj, c, None, None, &placement)
                };
                (c.clone(), d)
            })
            .collect();
        let plan = Plan {
            seq,
            uid,
            source: Some(obj.clone()),
            generation,
            policy,
            copies,
            decision: None,
            assigned: BTreeMap::new(),
            releasing: false,
        };
        dispatch(shared, id, plan);
        return Ok(());
    }
    let stays = kinds::stays_on_federation(res.group, res.plural, &obj).is_some()
        || placement.control_plane_only == Some(true);
    if stays
        && !deleting
        && holders.is_empty()
        && !object::finalizers(&obj)
            .iter()
            .any(|f| f == super::CLEANUP_FINALIZER)
        && !shared
            .placement_key(id)
            .is_some_and(|(informer, key)| informer.contains(&key))
    {
        // It stays here, no member holds a copy, and nothing of the
        // federation's is left on it (no finalizer, no Placement): nothing
        // to sync, record or keep. A flood of writes to a control-plane-only
        // Namespace then costs a lookup each, not a plan and a record each.
        shared.forget(id);
        return Ok(());
    }
    if stays || deleting {
        let orphan = deleting
            && object::finalizers(&obj)
                .iter()
                .any(|f| f == ORPHAN_FINALIZER);
        let plan = Plan {
            seq,
            uid,
            source: Some(obj.clone()),
            generation,
            policy,
            copies: holders
                .iter()
                .map(|c| (c.clone(), removal(shared, c, orphan)))
                .collect(),
            decision: None,
            assigned: BTreeMap::new(),
            releasing: true,
        };
        dispatch(shared, id, plan);
        return Ok(());
    }
    let previous = previous_decision(shared, id);
    let divided = kinds::divided(res.group, res.kind);
    let now = time::OffsetDateTime::now_utc();
    let grace = shared.config.grace_period;
    let mut snapshots = shared.cluster_snapshots(now, grace);
    if res.custom.is_some()
        && let Some(crds) = shared.kind_of("apiextensions.k8s.io", "customresourcedefinitions")
    {
        // What a member serves through its copy of the resource's CRD
        // (named `<plural>.<group>`) counts as soon as the member reports
        // it Established, not at its next discovery.
        let crd = ObjId {
            kind: crds,
            key: ObjectKey::new("", format!("{}.{}", res.plural, res.group)),
        };
        for snapshot in &mut snapshots {
            let copy = shared.syncer(&snapshot.name).and_then(|s| s.copy_of(&crd));
            if let Some(copy) = copy.filter(|c| established(c)) {
                for (gv, plural) in super::cluster::served_versions(&copy) {
                    snapshot.also_serves(&gv, &plural);
                }
            }
        }
    }
    let gvr = scheduler::Gvr {
        group: res.group.to_owned(),
        version: res.version.to_owned(),
        resource: res.plural.to_owned(),
    };
    let current: BTreeMap<String, i64> = previous
        .iter()
        .filter_map(|(k, v)| Some((k.clone(), (*v)?)))
        .collect();
    let capacity = scheduler::capacity::capacity_map(&obj, &snapshots);
    let previous_set: BTreeSet<String> = previous.keys().cloned().collect();
    let key = scheduler::object_key(&obj);
    let total = divided.map(|d| kinds::total_replicas(d, &obj));
    let input = ScheduleInput {
        gvr: &gvr,
        object_key: &key,
        placement: &placement,
        replicas: total,
        clusters: &snapshots,
        current: &current,
        capacity: &capacity,
        previous: &previous_set,
    };
    let decision = scheduler::schedule(&input);
    shared.metrics.decided(
        !decision.is_unschedulable(),
        decision.excluded.values().map(scheduler::Exclusion::reason),
    );
    let scheduling = scheduler::record::scheduling_of(&placement, total);
    // Job completions are split like parallelism.
    let completions: BTreeMap<String, i64> =
        match (divided, kinds::job_completions(&obj), scheduling) {
            (Some(kinds::Divided::Job), Some(c), "Divided") => {
                let eligible: Vec<String> = decision.assignments.keys().cloned().collect();
                scheduler::divide(
                    c,
                    &placement.effective_replica_preferences(),
                    &eligible,
                    &BTreeMap::new(),
                    &BTreeMap::new(),
                    &key,
                )
                .replicas
            }
            _ => BTreeMap::new(),
        };
    if !decision.assignments.is_empty()
        && !object::finalizers(&obj)
            .iter()
            .any(|f| f == super::CLEANUP_FINALIZER)
    {
        add_finalizer(shared, res, id).await?;
    }
    let mut copies: BTreeMap<String, Desired> = BTreeMap::new();
    let mut assigned = BTreeMap::new();
    // A copy is a function of its replicas, completions and override only:
    // clusters without an override that get the same share get the same
    // copy, rendered once and shared (a Duplicated object on 100 clusters
    // is one copy in memory, not 100).
    let mut shared_renders: Vec<(Share, Desired)> = Vec::new();
    for (cluster, a) in &decision.assignments {
        let replicas = match a {
            scheduler::Assignment::Replicas(n) => Some(*n),
            scheduler::Assignment::Whole => None,
        };
        assigned.insert(cluster.clone(), replicas);
        let share = (replicas, completions.get(cluster).copied());
        let copy = if placement.overrides.contains_key(cluster) {
            render_for(&obj, cluster, share.0, share.1, &placement)
        } else if let Some((_, d)) = shared_renders.iter().find(|(k, _)| *k == share) {
            d.clone()
        } else {
            let d = render_for(&obj, cluster, share.0, share.1, &placement);
            shared_renders.push((share, d.clone()));
            d
        };
        copies.insert(cluster.clone(), copy);
    }
    for c in holders {
        let d = removal(shared, &c, false);
        copies.entry(c).or_insert(d);
    }
    if copies.is_empty() && shared.clusters.keys().is_empty() {
        // A federation without members is a plain API server: nothing to
        // record, and nothing kept per object (a Cluster's arrival
        // re-plans every object).
        shared.forget(id);
        return Ok(());
    }
    // A cluster kept while not Ready is re-planned when its grace ends:
    // only a Divided object's share moves then (a Duplicated copy stays
    // past the grace period, so its plan would not change).
    let grace_end = snapshots
        .iter()
        .filter(|_| scheduling == "Divided")
        .filter(|c| decision.assignments.contains_key(&c.name))
        .filter_map(|c| c.grace_ends(grace))
        .min();
    if let Some(end) = grace_end {
        let wait = (end - now).max(time::Duration::ZERO);
        let millis = u64::try_from(wait.whole_milliseconds()).unwrap_or(0);
        shared
            .objects
            .add_after(id.clone(), Duration::from_millis(millis + 100));
    }
    let plan = Plan {
        seq,
        uid,
        source: Some(obj.clone()),
        generation,
        policy,
        copies,
        decision: Some(Planned {
            decision,
            scheduling,
            time: object::now_rfc3339(),
        }),
        assigned,
        releasing: false,
    };
    dispatch(shared, id, plan);
    Ok(())
}

/// A cluster's replicas and completions: with no override, what its copy
/// is rendered from besides the object.
type Share = (Option<i64>, Option<i64>);

fn default_policy() -> Policy {
    Policy {
        conflict: placement::ConflictResolution::Abort,
        drift: placement::Drift::Enforce,
    }
}

fn render_for(
    obj: &Value,
    cluster: &str,
    replicas: Option<i64>,
    completions: Option<i64>,
    placement: &Placement,
) -> Desired {
    let input = RenderInput {
        template: obj,
        cluster,
        replicas,
        completions,
        retain_replicas: placement.retain_replicas == Some(true),
        override_: placement.overrides.get(cluster),
        federation: super::FEDERATION_NAME,
    };
    match render(&input) {
        Ok(v) => Desired::Copy(Arc::new(v)),
        Err(e) => Desired::Unrenderable(e.to_string()),
    }
}

/// Stores the plan and queues the object on every cluster it concerns.
fn dispatch(shared: &Shared, id: &ObjId, plan: Plan) {
    let clusters: Vec<String> = plan.copies.keys().cloned().collect();
    shared.planned(id, &plan);
    shared.set_plan(id, plan);
    for c in clusters {
        if let Some(s) = shared.syncer(&c) {
            s.enqueue(id.clone());
        }
    }
    shared.record(id);
}

async fn add_finalizer(
    shared: &Shared,
    res: &skein_apiserver::registry::ResourceInfo,
    id: &ObjId,
) -> Result<(), skein_apiserver::status::ApiError> {
    add_finalizer_at(shared, res, &id.key).await
}

/// Removes the cleanup finalizer of Clusters being deleted whose copies
/// are gone (or that have no syncer to remove them).
async fn release_clusters(shared: &Shared) {
    let res = shared.clusters.resource().clone();
    let leaving = shared.clusters.list(|c| {
        object::is_deleting(c)
            && object::finalizers(c)
                .iter()
                .any(|f| f == super::CLEANUP_FINALIZER)
    });
    for c in leaving {
        let name = object::name(&c);
        // A member that cannot be reached keeps its copies: the Cluster
        // goes anyway (after a bound, if it stopped answering meanwhile).
        let reachable = ClusterSnapshot::from_cluster(&c).ready;
        let overdue = object::meta_str(&c, "deletionTimestamp")
            .and_then(|t| {
                time::OffsetDateTime::parse(t, &time::format_description::well_known::Rfc3339).ok()
            })
            .is_some_and(|t| time::OffsetDateTime::now_utc() - t > RELEASE_BOUND);
        if reachable && !overdue && shared.syncer(name).is_some_and(|s| !s.settled()) {
            continue;
        }
        if !reachable || overdue {
            tracing::warn!(
                cluster = name,
                "unjoined cluster released with its copies left in place (not reachable)"
            );
        }
        let done = super::writes::set_finalizer(&shared.registry, &res, "", name, false).await;
        if let Err(e) = done {
            tracing::debug!(cluster = name, error = %e, "cannot release the Cluster");
        }
    }
}

/// What a cluster that should no longer hold a copy gets: Orphaned when
/// the object or the Cluster is deleted with `propagationPolicy=Orphan`.
fn removal(shared: &Shared, cluster: &str, orphan_object: bool) -> Desired {
    let orphan_cluster = shared
        .clusters
        .get(&ObjectKey::new("", cluster))
        .is_some_and(|c| {
            object::is_deleting(&c) && object::finalizers(&c).iter().any(|f| f == ORPHAN_FINALIZER)
        });
    if orphan_object || orphan_cluster {
        Desired::Orphaned
    } else {
        Desired::Absent
    }
}

async fn add_finalizer_at(
    shared: &Shared,
    res: &skein_apiserver::registry::ResourceInfo,
    key: &ObjectKey,
) -> Result<(), skein_apiserver::status::ApiError> {
    super::writes::set_finalizer(&shared.registry, res, &key.namespace, &key.name, true).await
}
