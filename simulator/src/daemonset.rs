//! The DaemonSet controller, as kube-controller-manager v1.33's
//! (pkg/controller/daemon):
//! - One Pod per Node that should run it: the template's nodeSelector and
//!   required node affinity match the Node, and its NoSchedule/NoExecute
//!   taints are tolerated. Each Pod is pinned to its Node by a required
//!   node affinity `matchFields metadata.name In [<node>]` (the scheduler
//!   binds it there) and gets upstream's daemon tolerations
//!   (`node.kubernetes.io/not-ready`, `unreachable`, `disk-pressure`,
//!   `memory-pressure`, `pid-pressure`, `unschedulable`, and
//!   `network-unavailable` with hostNetwork).
//! - Pods on Nodes that should not run them, extra Pods on a Node, and
//!   failed Pods are deleted.
//! - Revisions are ControllerRevisions (shared with StatefulSets); Pods are
//!   labelled `controller-revision-hash` and `pod-template-generation`.
//!   `RollingUpdate` replaces old Pods keeping at most `maxUnavailable`
//!   Nodes unavailable, or with `maxSurge` starts the new Pod first and
//!   deletes the old one once the new one is available; `OnDelete` only
//!   gives new Pods the new template.
//! - Status: desired/current/updated NumberScheduled, numberReady,
//!   numberAvailable, numberUnavailable, numberMisscheduled,
//!   observedGeneration.

use std::collections::BTreeMap;
use std::time::Duration;

use serde_json::{Value, json};
use time::OffsetDateTime;

use super::Sim;
use super::owner_loop::{self, int};
use super::statefulset::history;
use super::template::{self, PodName};
use skein_apiserver::controllers::informer::ObjectKey;
use skein_apiserver::registry::object;
use skein_apiserver::status::ApiError;

const MANAGER: &str = "daemonset-controller";

/// The Pod label holding the DaemonSet's generation (deprecated upstream,
/// still set).
pub const TEMPLATE_GENERATION_LABEL: &str = "pod-template-generation";

/// What one sync of a DaemonSet does.
#[derive(Debug, Default)]
pub struct DaemonPlan {
    /// Pods to create.
    pub create: Vec<Value>,
    /// Names of Pods to delete.
    pub delete: Vec<String>,
    /// The new status.
    pub status: Value,
    /// Look again after this long (minReadySeconds).
    pub requeue: Option<Duration>,
}

fn strs(v: Option<&Value>) -> Vec<&str> {
    v.and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .collect()
}

/// Whether one node selector requirement holds for `value` (the label or
/// field, `None` when absent).
fn requirement_holds(req: &Value, value: Option<&str>) -> bool {
    let values = strs(req.get("values"));
    let num = |s: &str| s.parse::<i64>().ok();
    match req
        .get("operator")
        .and_then(Value::as_str)
        .unwrap_or_default()
    {
        "In" => value.is_some_and(|v| values.contains(&v)),
        "NotIn" => value.is_none_or(|v| !values.contains(&v)),
        "Exists" => value.is_some(),
        "DoesNotExist" => value.is_none(),
        "Gt" => {
            matches!((value.and_then(num), values.first().and_then(|s| num(s))), (Some(a), Some(b)) if a > b)
        }
        "Lt" => {
            matches!((value.and_then(num), values.first().and_then(|s| num(s))), (Some(a), Some(b)) if a < b)
        }
        _ => false,
    }
}

/// Whether a node selector term matches `node` (an empty term matches
/// nothing, as upstream).
fn term_matches(term: &Value, node: &Value) -> bool {
    let exprs = term.get("matchExpressions").and_then(Value::as_array);
    let fields = term.get("matchFields").and_then(Value::as_array);
    if exprs.is_none_or(Vec::is_empty) && fields.is_none_or(Vec::is_empty) {
        return false;
    }
    let labels = object::labels(node);
    exprs.into_iter().flatten().all(|r| {
        let key = r.get("key").and_then(Value::as_str).unwrap_or_default();
        requirement_holds(r, labels.get(key).map(String::as_str))
    }) && fields.into_iter().flatten().all(|r| {
        let key = r.get("key").and_then(Value::as_str).unwrap_or_default();
        let value = (key == "metadata.name").then(|| object::name(node));
        requirement_holds(r, value)
    })
}

fn tolerates(tolerations: &[Value], taint: &Value) -> bool {
    let key = taint.get("key").and_then(Value::as_str).unwrap_or_default();
    let value = taint
        .get("value")
        .and_then(Value::as_str)
        .unwrap_or_default();
    let effect = taint
        .get("effect")
        .and_then(Value::as_str)
        .unwrap_or_default();
    tolerations.iter().any(|t| {
        let t_key = t.get("key").and_then(Value::as_str).unwrap_or_default();
        let t_effect = t.get("effect").and_then(Value::as_str).unwrap_or_default();
        let exists = t.get("operator").and_then(Value::as_str) == Some("Exists");
        (t_effect.is_empty() || t_effect == effect)
            && (t_key == key || (t_key.is_empty() && exists))
            && (exists || t.get("value").and_then(Value::as_str).unwrap_or_default() == value)
    })
}

/// Whether a Pod with `spec` should run on `node`: nodeSelector, required
/// node affinity and NoSchedule/NoExecute taints (upstream's
/// `NodeShouldRunDaemonPod` predicates).
pub fn should_run(spec: &Value, node: &Value) -> bool {
    let labels = object::labels(node);
    let selector_ok = spec
        .get("nodeSelector")
        .and_then(Value::as_object)
        .into_iter()
        .flatten()
        .all(|(k, v)| labels.get(k).map(String::as_str) == v.as_str());
    let terms = spec
        .pointer("/affinity/nodeAffinity/requiredDuringSchedulingIgnoredDuringExecution/nodeSelectorTerms")
        .and_then(Value::as_array);
    let affinity_ok = terms.is_none_or(|ts| ts.iter().any(|t| term_matches(t, node)));
    let tolerations = spec
        .get("tolerations")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    let taints_ok = node
        .pointer("/spec/taints")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter(|t| {
            matches!(
                t.get("effect").and_then(Value::as_str),
                Some("NoSchedule" | "NoExecute")
            )
        })
        .all(|t| tolerates(&tolerations, t));
    selector_ok && affinity_ok && taints_ok
}

/// Upstream's `AddOrUpdateDaemonPodTolerations` and
/// `ReplaceDaemonSetPodNodeNameNodeAffinity` on a Pod spec for `node`.
pub fn pin_to_node(spec: &mut Value, node: &str) {
    let Some(s) = spec.as_object_mut() else {
        return;
    };
    let host_network = s.get("hostNetwork").and_then(Value::as_bool) == Some(true);
    let mut added = vec![
        ("node.kubernetes.io/not-ready", "NoExecute"),
        ("node.kubernetes.io/unreachable", "NoExecute"),
        ("node.kubernetes.io/disk-pressure", "NoSchedule"),
        ("node.kubernetes.io/memory-pressure", "NoSchedule"),
        ("node.kubernetes.io/pid-pressure", "NoSchedule"),
        ("node.kubernetes.io/unschedulable", "NoSchedule"),
    ];
    if host_network {
        added.push(("node.kubernetes.io/network-unavailable", "NoSchedule"));
    }
    let tolerations = s.entry("tolerations").or_insert_with(|| json!([]));
    if let Some(ts) = tolerations.as_array_mut() {
        for (key, effect) in added {
            ts.retain(|t| {
                !(t.get("key").and_then(Value::as_str) == Some(key)
                    && t.get("effect").and_then(Value::as_str) == Some(effect))
            });
            ts.push(json!({"key": key, "operator": "Exists", "effect": effect}));
        }
    }
    let term =
        json!({"matchFields": [{"key": "metadata.name", "operator": "In", "values": [node]}]});
    let affinity = s.entry("affinity").or_insert_with(|| json!({}));
    if let Some(a) = affinity.as_object_mut() {
        let na = a.entry("nodeAffinity").or_insert_with(|| json!({}));
        if let Some(na) = na.as_object_mut() {
            na.insert(
                "requiredDuringSchedulingIgnoredDuringExecution".into(),
                json!({"nodeSelectorTerms": [term]}),
            );
        }
    }
}

/// The Node a DaemonSet Pod is for: its `spec.nodeName`, else the node of
/// its `matchFields metadata.name In [<node>]` affinity.
pub fn node_of(pod: &Value) -> Option<&str> {
    if let Some(n) = pod
        .pointer("/spec/nodeName")
        .and_then(Value::as_str)
        .filter(|n| !n.is_empty())
    {
        return Some(n);
    }
    pod.pointer("/spec/affinity/nodeAffinity/requiredDuringSchedulingIgnoredDuringExecution/nodeSelectorTerms")?
        .as_array()?
        .iter()
        .flat_map(|t| t.get("matchFields").and_then(Value::as_array).into_iter().flatten())
        .find(|r| {
            r.get("key").and_then(Value::as_str) == Some("metadata.name")
                && r.get("operator").and_then(Value::as_str) == Some("In")
        })
        .and_then(|r| r.get("values").and_then(Value::as_array)?.first()?.as_str())
}

/// A Pod of `ds` for `node`, of the revision whose hash is `hash`.
pub fn new_pod(ds: &Value, node: &str, hash: &str) -> Value {
    let empty = json!({});
    let template = ds.pointer("/spec/template").unwrap_or(&empty);
    let generation = int(ds, "/metadata/generation", 1).to_string();
    let mut pod = template::pod_from_template(
        template,
        object::namespace(ds),
        &PodName::Generate(format!("{}-", object::name(ds))),
        template::controller_ref(ds, "apps/v1", "DaemonSet"),
        &[
            (history::REVISION_LABEL, hash),
            (TEMPLATE_GENERATION_LABEL, &generation),
        ],
    );
    if let Some(spec) = pod.get_mut("spec") {
        pin_to_node(spec, node);
    }
    pod
}

/// An int-or-percent of `total` (percentages round up, as upstream).
pub fn scaled(v: Option<&Value>, total: i64, default: i64) -> i64 {
    match v {
        Some(Value::Number(n)) => n.as_i64().unwrap_or(default),
        Some(Value::String(s)) => match s.strip_suffix('%').and_then(|p| p.parse::<i64>().ok()) {
            Some(p) => (p * total + 99) / 100,
            None => s.parse().unwrap_or(default),
        },
        _ => default,
    }
}

fn creation(pod: &Value) -> (String, String) {
    (
        pod.pointer("/metadata/creationTimestamp")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_owned(),
        object::name(pod).to_owned(),
    )
}

fn hash_of(pod: &Value) -> &str {
    pod.pointer("/metadata/labels")
        .and_then(|l| l.get(history::REVISION_LABEL))
        .and_then(Value::as_str)
        .unwrap_or_default()
}

/// One sync of `ds` over `nodes` with its Pods, `hash` being the current
/// template's revision hash. Pure.
pub fn plan(
    ds: &Value,
    nodes: &[Value],
    pods: &[Value],
    hash: &str,
    now: OffsetDateTime,
) -> DaemonPlan {
    let mut out = DaemonPlan::default();
    let empty = json!({});
    let spec = ds.pointer("/spec/template/spec").unwrap_or(&empty);
    let min_ready = int(ds, "/spec/minReadySeconds", 0);
    let rolling = ds
        .pointer("/spec/updateStrategy/type")
        .and_then(Value::as_str)
        != Some("OnDelete");
    let mut by_node: BTreeMap<&str, Vec<&Value>> = BTreeMap::new();
    for p in pods.iter().filter(|p| !object::is_deleting(p)) {
        if matches!(template::phase(p), "Failed") {
            out.delete.push(object::name(p).to_owned());
            continue;
        }
        if let Some(n) = node_of(p) {
            by_node.entry(n).or_default().push(p);
        } else {
            out.delete.push(object::name(p).to_owned());
        }
    }
    for list in by_node.values_mut() {
        list.sort_by_key(|p| creation(p));
    }
    let available = |p: &Value| template::is_available(p, min_ready, now);
    let (mut desired, mut current, mut misscheduled, mut ready, mut avail, mut updated) =
        (0i64, 0i64, 0i64, 0i64, 0i64, 0i64);
    let mut to_update: Vec<(&str, Vec<&Value>)> = Vec::new();
    let mut unavailable_nodes = 0i64;
    let node_names: Vec<&str> = nodes.iter().map(object::name).collect();
    for node in nodes {
        let name = object::name(node);
        let run = should_run(spec, node);
        let here = by_node.get(name).cloned().unwrap_or_default();
        if !run {
            if !here.is_empty() {
                misscheduled += 1;
                out.delete
                    .extend(here.iter().map(|p| object::name(p).to_owned()));
            }
            continue;
        }
        desired += 1;
        if here.is_empty() {
            out.create.push(new_pod(ds, name, hash));
            unavailable_nodes += 1;
            continue;
        }
        current += 1;
        let first = here[0];
        if template::is_ready(first) {
            ready += 1;
        }
        if available(first) {
            avail += 1;
        } else {
            unavailable_nodes += 1;
            if template::is_ready(first) && min_ready > 0 {
                out.requeue = Some(Duration::from_secs(1));
            }
        }
        if hash_of(first) == hash {
            updated += 1;
        }
        let new: Vec<&Value> = here
            .iter()
            .copied()
            .filter(|p| hash_of(p) == hash)
            .collect();
        let old: Vec<&Value> = here
            .iter()
            .copied()
            .filter(|p| hash_of(p) != hash)
            .collect();
        // Duplicates: keep the oldest of each revision (a surge keeps both).
        for extra in new.iter().skip(1).chain(old.iter().skip(1)) {
            out.delete.push(object::name(extra).to_owned());
        }
        match (new.first(), old.first()) {
            (Some(_), Some(o)) if !rolling => out.delete.push(object::name(o).to_owned()),
            (Some(n), Some(o)) if available(n) => {
                out.delete.push(object::name(o).to_owned());
            }
            (None, Some(_)) if rolling => to_update.push((name, old)),
            _ => {}
        }
    }
    // Pods for Nodes that no longer exist.
    for (n, list) in &by_node {
        if !node_names.contains(n) {
            out.delete
                .extend(list.iter().map(|p| object::name(p).to_owned()));
        }
    }
    // Rolling update of Nodes whose only Pods are old.
    let ru = ds.pointer("/spec/updateStrategy/rollingUpdate");
    let max_surge = scaled(ru.and_then(|r| r.get("maxSurge")), desired, 0);
    let mut max_unavailable = scaled(ru.and_then(|r| r.get("maxUnavailable")), desired, 1);
    if max_surge == 0 && max_unavailable == 0 {
        max_unavailable = 1;
    }
    let mut budget = max_unavailable - unavailable_nodes;
    let mut surge_budget = max_surge
        - by_node
            .values()
            .filter(|l| {
                l.iter().any(|p| hash_of(p) == hash) && l.iter().any(|p| hash_of(p) != hash)
            })
            .count() as i64;
    for (node, old) in to_update {
        let old_pod = old[0];
        if !available(old_pod) {
            // Already unavailable: replacing it costs nothing.
            out.delete.push(object::name(old_pod).to_owned());
            continue;
        }
        if max_surge > 0 {
            if surge_budget > 0 {
                surge_budget -= 1;
                out.create.push(new_pod(ds, node, hash));
            }
        } else if budget > 0 {
            budget -= 1;
            out.delete.push(object::name(old_pod).to_owned());
        }
    }
    out.delete.sort();
    out.delete.dedup();
    let mut status = json!({
        "currentNumberScheduled": current,
        "desiredNumberScheduled": desired,
        "numberMisscheduled": misscheduled,
        "numberReady": ready,
        "observedGeneration": int(ds, "/metadata/generation", 0),
    });
    for (k, v) in [
        ("updatedNumberScheduled", updated),
        ("numberAvailable", avail),
        ("numberUnavailable", desired - avail),
    ] {
        if v != 0 {
            status[k] = json!(v);
        }
    }
    let cc = int(ds, "/status/collisionCount", 0);
    if cc != 0 {
        status["collisionCount"] = json!(cc);
    }
    out.status = status;
    out
}

/// Runs the DaemonSet controller until the runtime shuts down.
pub async fn run(sim: Sim) {
    let informers = (
        sim.informer("apps", "v1", "daemonsets"),
        sim.informer("", "v1", "pods"),
        sim.informer("", "v1", "nodes"),
    );
    let (sets, pods, nodes) = match informers {
        (Ok(s), Ok(p), Ok(n)) => (s, p, n),
        (Err(e), _, _) | (_, Err(e), _) | (_, _, Err(e)) => {
            tracing::error!(error = %e, "daemonset controller cannot start");
            return;
        }
    };
    let related = vec![
        (pods, owner_loop::controller_of("DaemonSet")),
        (nodes.clone(), owner_loop::every_owner()),
    ];
    owner_loop::drive("daemonset", sets, related, Duration::from_secs(10), |key| {
        let sim = sim.clone();
        let nodes = nodes.clone();
        async move {
            let nodes: Vec<Value> = nodes.list(|_| true).iter().map(|n| (**n).clone()).collect();
            sync(&sim, &key, &nodes).await
        }
    })
    .await;
}

async fn sync(sim: &Sim, key: &ObjectKey, nodes: &[Value]) -> Result<Option<Duration>, ApiError> {
    let sets = Sim::resource("apps", "v1", "daemonsets")?;
    let pods_res = Sim::resource("", "v1", "pods")?;
    let Some(ds) = owner_loop::fresh(sim, &sets, key).await? else {
        return Ok(None);
    };
    if object::is_deleting(&ds) {
        return Ok(None);
    }
    let pods = owner_loop::owned(sim, &pods_res, &key.namespace, object::uid(&ds)).await?;
    let in_use: Vec<String> = pods
        .iter()
        .map(|p| format!("{}-{}", object::name(&ds), hash_of(p)))
        .collect();
    let revs = history::sync(sim, &ds, "apps/v1", "DaemonSet", &in_use).await?;
    let hash = revs
        .update
        .pointer("/metadata/labels")
        .and_then(|l| l.get(history::HASH_LABEL))
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_owned();
    let mut plan = plan(&ds, nodes, &pods, &hash, owner_loop::now());
    if revs.collision_count != 0 {
        plan.status["collisionCount"] = json!(revs.collision_count);
    }
    let ev = |reason: &str, message: String| {
        owner_loop::event(
            &ds,
            "apps/v1",
            "DaemonSet",
            "Normal",
            reason,
            &message,
            MANAGER,
            owner_loop::now(),
        )
    };
    let mut events = Vec::new();
    let mut result = Ok(());
    for name in &plan.delete {
        result = owner_loop::delete(sim, &pods_res, &key.namespace, name, None).await;
        if result.is_err() {
            break;
        }
        events.push(ev("SuccessfulDelete", format!("Deleted pod: {name}")));
    }
    if result.is_ok() {
        for pod in plan.create {
            match owner_loop::create(sim, &pods_res, &key.namespace, pod, MANAGER).await {
                Ok(Some(p)) => {
                    events.push(ev(
                        "SuccessfulCreate",
                        format!("Created pod: {}", object::name(&p)),
                    ));
                }
                Ok(None) => {}
                Err(e) => {
                    result = Err(e);
                    break;
                }
            }
        }
    }
    owner_loop::record(sim, events).await;
    result?;
    owner_loop::write_status(sim, &sets, &ds, plan.status, MANAGER).await?;
    Ok(plan.requeue)
}

#[cfg(test)]
mod tests {
    use super::*;

    const NOW: &str = "2026-01-01T00:01:00Z";

    fn now() -> OffsetDateTime {
        owner_loop::parse_time(NOW).expect("time")
    }

    fn node(name: &str, labels: Value) -> Value {
        json!({"metadata": {"name": name, "labels": labels}, "spec": {}})
    }

    fn ds(extra: Value) -> Value {
        let mut d = json!({"metadata": {"name": "fluentd", "namespace": "ns", "uid": "d1", "generation": 1},
            "spec": {"selector": {"matchLabels": {"app": "f"}},
                "updateStrategy": {"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": 1, "maxSurge": 0}},
                "template": {"metadata": {"labels": {"app": "f"}},
                    "spec": {"containers": [{"name": "c", "image": "fluentd"}]}}}});
        if let (Some(a), Value::Object(b)) = (d["spec"].as_object_mut(), extra) {
            a.extend(b);
        }
        d
    }

    fn pod(name: &str, node: &str, hash: &str, ready: bool) -> Value {
        json!({"metadata": {"name": name, "creationTimestamp": "2026-01-01T00:00:00Z",
                "labels": {history::REVISION_LABEL: hash}},
            "spec": {"nodeName": node},
            "status": {"phase": "Running", "conditions": [{"type": "Ready",
                "status": if ready { "True" } else { "False" }, "lastTransitionTime": "2026-01-01T00:00:00Z"}]}})
    }

    fn nodes3() -> Vec<Value> {
        vec![
            node("n1", json!({"disk": "ssd"})),
            node("n2", json!({})),
            node("n3", json!({"disk": "ssd"})),
        ]
    }

    #[test]
    fn one_pod_per_node_pinned_by_affinity_with_daemon_tolerations() {
        let p = plan(&ds(json!({})), &nodes3(), &[], "h1", now());
        assert_eq!(p.create.len(), 3);
        let pod = &p.create[1];
        assert_eq!(node_of(pod), Some("n2"));
        assert_eq!(pod["metadata"]["generateName"], "fluentd-");
        assert_eq!(pod["metadata"]["labels"][history::REVISION_LABEL], "h1");
        assert_eq!(pod["metadata"]["labels"][TEMPLATE_GENERATION_LABEL], "1");
        let tols = pod["spec"]["tolerations"].as_array().expect("tolerations");
        assert_eq!(tols.len(), 6);
        assert_eq!(
            tols[0],
            json!({"key": "node.kubernetes.io/not-ready", "operator": "Exists", "effect": "NoExecute"})
        );
        assert_eq!(p.status["desiredNumberScheduled"], 3);
        assert_eq!(p.status["currentNumberScheduled"], 0);
        assert_eq!(p.status["numberUnavailable"], 3);
    }

    #[test]
    fn node_selector_and_affinity_choose_nodes_and_misscheduled_pods_go() {
        let d = ds(json!({"template": {"metadata": {"labels": {"app": "f"}},
            "spec": {"nodeSelector": {"disk": "ssd"}, "containers": [{"name": "c"}]}}}));
        let pods = [pod("a", "n2", "h1", true)];
        let p = plan(&d, &nodes3(), &pods, "h1", now());
        assert_eq!(p.create.len(), 2);
        assert_eq!(p.delete, ["a"]);
        assert_eq!(p.status["numberMisscheduled"], 1);
        assert_eq!(p.status["desiredNumberScheduled"], 2);
        let spec = json!({"affinity": {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution":
            {"nodeSelectorTerms": [{"matchExpressions": [{"key": "disk", "operator": "NotIn", "values": ["ssd"]}]}]}}}});
        let chosen: Vec<bool> = nodes3().iter().map(|n| should_run(&spec, n)).collect();
        assert_eq!(chosen, [false, true, false]);
    }

    #[test]
    fn taints_need_tolerations() {
        let tainted = json!({"metadata": {"name": "n"}, "spec": {"taints": [
            {"key": "dedicated", "value": "gpu", "effect": "NoSchedule"}]}});
        assert!(!should_run(&json!({}), &tainted));
        let tol =
            json!({"tolerations": [{"key": "dedicated", "operator": "Equal", "value": "gpu"}]});
        assert!(should_run(&tol, &tainted));
        let any = json!({"tolerations": [{"operator": "Exists"}]});
        assert!(should_run(&any, &tainted));
    }

    #[test]
    fn rolling_update_respects_max_unavailable() {
        let pods = [
            pod("a", "n1", "h1", true),
            pod("b", "n2", "h1", true),
            pod("c", "n3", "h1", true),
        ];
        let p = plan(&ds(json!({})), &nodes3(), &pods, "h2", now());
        assert_eq!(p.delete, ["a"]);
        assert!(p.create.is_empty());
        assert_eq!(p.status["updatedNumberScheduled"], json!(null));
        // n1 replaced by a new, not yet ready Pod: no more deletions.
        let pods = [
            pod("a2", "n1", "h2", false),
            pod("b", "n2", "h1", true),
            pod("c", "n3", "h1", true),
        ];
        let p = plan(&ds(json!({})), &nodes3(), &pods, "h2", now());
        assert!(p.delete.is_empty());
        assert_eq!(p.status["updatedNumberScheduled"], 1);
        assert_eq!(p.status["numberUnavailable"], 1);
        // maxUnavailable 100%: all at once.
        let d = ds(
            json!({"updateStrategy": {"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": "100%", "maxSurge": 0}}}),
        );
        let pods = [
            pod("a", "n1", "h1", true),
            pod("b", "n2", "h1", true),
            pod("c", "n3", "h1", true),
        ];
        assert_eq!(plan(&d, &nodes3(), &pods, "h2", now()).delete.len(), 3);
    }

    #[test]
    fn surge_starts_the_new_pod_before_deleting_the_old() {
        let d = ds(
            json!({"updateStrategy": {"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": 0, "maxSurge": 1}}}),
        );
        let pods = [
            pod("a", "n1", "h1", true),
            pod("b", "n2", "h1", true),
            pod("c", "n3", "h1", true),
        ];
        let p = plan(&d, &nodes3(), &pods, "h2", now());
        assert_eq!(p.create.len(), 1);
        assert!(p.delete.is_empty());
        let pods = [
            pod("a", "n1", "h1", true),
            pod("a2", "n1", "h2", true),
            pod("b", "n2", "h1", true),
            pod("c", "n3", "h1", true),
        ];
        let p = plan(&d, &nodes3(), &pods, "h2", now());
        assert_eq!(p.delete, ["a"]);
    }

    #[test]
    fn settled_status_counts_everything() {
        let pods = [
            pod("a", "n1", "h1", true),
            pod("b", "n2", "h1", true),
            pod("c", "n3", "h1", true),
        ];
        let p = plan(&ds(json!({})), &nodes3(), &pods, "h1", now());
        assert!(p.create.is_empty() && p.delete.is_empty());
        assert_eq!(
            p.status,
            json!({"currentNumberScheduled": 3, "desiredNumberScheduled": 3,
            "numberMisscheduled": 0, "numberReady": 3, "observedGeneration": 1,
            "updatedNumberScheduled": 3, "numberAvailable": 3})
        );
        assert_eq!(scaled(Some(&json!("25%")), 3, 1), 1);
        assert_eq!(scaled(Some(&json!("50%")), 3, 1), 2);
    }
}
