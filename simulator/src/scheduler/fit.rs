//! Where a Pod fits: kube-scheduler's default filters that matter without
//! volumes — NodeUnschedulable, TaintToleration, NodeAffinity (nodeSelector
//! and required node affinity, `matchFields` on `metadata.name` included,
//! whose PreFilter narrows a DaemonSet Pod to its Node)
//! and NodeResourcesFit (requests and the Pod limit); a Node that is not
//! Ready carries the `node.kubernetes.io/not-ready:NoSchedule` taint, as
//! upstream's node lifecycle controller puts it there — then the feasible
//! Node with the most room (least allocated; ties by fewest Pods, then
//! name). When nothing fits, kube-scheduler's FitError message, preemption
//! included (every Pod has the same priority, so there are no victims).

use std::collections::{BTreeMap, HashMap};

use serde_json::Value;
use skein_admission::quantity::Quantity;

/// Resource amounts in units of 10⁻⁹ (a resource.Quantity's nano value).
pub type Amounts = BTreeMap<String, i128>;

const NANO: i128 = 1_000_000_000;

/// What upstream counts for a container without requests when scoring
/// (100m CPU, 200Mi memory).
const DEFAULT_CPU: i128 = NANO / 10;
const DEFAULT_MEMORY: i128 = 200 * 1024 * 1024 * NANO;

/// Nothing fits: the `PodScheduled` condition's message.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Unschedulable {
    /// kube-scheduler's message, e.g. `0/3 nodes are available: 3
    /// Insufficient cpu. preemption: …`.
    pub message: String,
}

/// Why a Node was filtered out: its reasons, and whether preemption could
/// help (upstream's Unschedulable vs UnschedulableAndUnresolvable).
#[derive(Clone, Debug, PartialEq, Eq)]
struct Rejection {
    reasons: Vec<String>,
    resolvable: bool,
}

fn amounts(v: Option<&Value>) -> Amounts {
    v.and_then(Value::as_object)
        .map(|m| {
            m.iter()
                .filter_map(|(k, q)| Some((k.clone(), Quantity::parse(q.as_str()?)?.nanos())))
                .collect()
        })
        .unwrap_or_default()
}

fn add(into: &mut Amounts, from: &Amounts) {
    for (k, v) in from {
        *into.entry(k.clone()).or_insert(0) += v;
    }
}

fn max_into(into: &mut Amounts, from: &Amounts) {
    for (k, v) in from {
        let e = into.entry(k.clone()).or_insert(0);
        *e = (*e).max(*v);
    }
}

fn container_requests(c: &Value) -> Amounts {
    amounts(c.pointer("/resources/requests"))
}

/// A Pod's effective requests (upstream `resourcehelper.PodRequests`): the
/// containers' sum (with restartable init containers, "sidecars", running
/// alongside), or the largest init container's if more (each init
/// container also needs the sidecars started before it), plus the Pod's
/// overhead.
pub fn requests(pod: &Value) -> Amounts {
    let spec = pod.get("spec");
    let list = |field: &str| {
        spec.and_then(|s| s.get(field))
            .and_then(Value::as_array)
            .cloned()
            .unwrap_or_default()
    };
    let mut total = Amounts::new();
    for c in list("containers") {
        add(&mut total, &container_requests(&c));
    }
    let mut sidecars = Amounts::new();
    let mut init_peak = Amounts::new();
    for c in list("initContainers") {
        let r = container_requests(&c);
        if c.get("restartPolicy").and_then(Value::as_str) == Some("Always") {
            add(&mut sidecars, &r);
            max_into(&mut init_peak, &sidecars);
        } else {
            let mut need = sidecars.clone();
            add(&mut need, &r);
            max_into(&mut init_peak, &need);
        }
    }
    add(&mut total, &sidecars);
    max_into(&mut total, &init_peak);
    add(&mut total, &amounts(spec.and_then(|s| s.get("overhead"))));
    total
}

/// A Node's allocatable resources (`pods` as a count in nano units too).
pub fn allocatable(node: &Value) -> Amounts {
    amounts(node.pointer("/status/allocatable"))
}

fn name(obj: &Value) -> &str {
    obj.pointer("/metadata/name")
        .and_then(Value::as_str)
        .unwrap_or_default()
}

fn label<'a>(node: &'a Value, key: &str) -> Option<&'a str> {
    node.pointer("/metadata/labels")
        .and_then(|l| l.get(key))
        .and_then(Value::as_str)
}

fn strings(v: Option<&Value>) -> Vec<&str> {
    v.and_then(Value::as_array)
        .map(|a| a.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default()
}

/// One NodeSelectorRequirement against `value` (the label or field).
fn requirement_matches(req: &Value, value: Option<&str>) -> bool {
    let values = strings(req.get("values"));
    match req.get("operator").and_then(Value::as_str).unwrap_or("") {
        "In" => value.is_some_and(|v| values.contains(&v)),
        "NotIn" => !value.is_some_and(|v| values.contains(&v)),
        "Exists" => value.is_some(),
        "DoesNotExist" => value.is_none(),
        op @ ("Gt" | "Lt") => {
            let (Some(actual), Some(bound)) = (
                value.and_then(|v| v.parse::<i64>().ok()),
                values.first().and_then(|v| v.parse::<i64>().ok()),
            ) else {
                return false;
            };
            if op == "Gt" {
                actual > bound
            } else {
                actual < bound
            }
        }
        _ => false,
    }
}

/// A NodeSelectorTerm: all its expressions and fields match; an empty
/// term matches nothing.
fn term_matches(term: &Value, node: &Value) -> bool {
    let exprs = term
        .get("matchExpressions")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    let fields = term
        .get("matchFields")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    if exprs.is_empty() && fields.is_empty() {
        return false;
    }
    exprs.iter().all(|r| {
        let key = r.get("key").and_then(Value::as_str).unwrap_or("");
        requirement_matches(r, label(node, key))
    }) && fields.iter().all(|r| {
        let key = r.get("key").and_then(Value::as_str).unwrap_or("");
        let value = (key == "metadata.name").then(|| name(node));
        requirement_matches(r, value)
    })
}

/// NodeAffinity's filter: `spec.nodeSelector` and the required node
/// affinity terms (any term).
pub fn affinity_matches(pod: &Value, node: &Value) -> bool {
    let selector_ok = pod
        .pointer("/spec/nodeSelector")
        .and_then(Value::as_object)
        .is_none_or(|m| {
            m.iter()
                .all(|(k, v)| label(node, k).is_some() && label(node, k) == v.as_str())
        });
    let terms = pod.pointer(
        "/spec/affinity/nodeAffinity/requiredDuringSchedulingIgnoredDuringExecution/nodeSelectorTerms",
    );
    let affinity_ok = match terms.and_then(Value::as_array) {
        None => true,
        Some(terms) => terms.iter().any(|t| term_matches(t, node)),
    };
    selector_ok && affinity_ok
}

/// NodeAffinity's PreFilter: the only Nodes a Pod can go to when every
/// required term names Nodes (`matchFields` `metadata.name` `In`, as a
/// DaemonSet's Pods do); `None` when any Node may do. The other Nodes are
/// not filtered at all (upstream reports them as not satisfying the
/// plugin).
pub fn named_nodes(pod: &Value) -> Option<std::collections::HashSet<String>> {
    let terms = pod
        .pointer(
            "/spec/affinity/nodeAffinity/requiredDuringSchedulingIgnoredDuringExecution/nodeSelectorTerms",
        )
        .and_then(Value::as_array)?;
    let mut names = std::collections::HashSet::new();
    for term in terms {
        let mut term_names: Option<std::collections::HashSet<String>> = None;
        let fields = term
            .get("matchFields")
            .and_then(Value::as_array)
            .cloned()
            .unwrap_or_default();
        for r in &fields {
            let by_name = r.get("key").and_then(Value::as_str) == Some("metadata.name")
                && r.get("operator").and_then(Value::as_str) == Some("In");
            if !by_name {
                continue;
            }
            let values: std::collections::HashSet<String> = strings(r.get("values"))
                .into_iter()
                .map(str::to_owned)
                .collect();
            term_names = Some(match term_names {
                None => values,
                Some(t) => t.intersection(&values).cloned().collect(),
            });
        }
        names.extend(term_names?);
    }
    Some(names)
}

/// Whether `toleration` tolerates `taint` (upstream `ToleratesTaint`).
fn tolerates(toleration: &Value, taint: &Value) -> bool {
    let s = |v: &Value, f: &str| v.get(f).and_then(Value::as_str).unwrap_or("").to_owned();
    let effect = s(toleration, "effect");
    if !effect.is_empty() && effect != s(taint, "effect") {
        return false;
    }
    let key = s(toleration, "key");
    if !key.is_empty() && key != s(taint, "key") {
        return false;
    }
    match s(toleration, "operator").as_str() {
        "Exists" => true,
        "" | "Equal" => s(toleration, "value") == s(taint, "value"),
        _ => false,
    }
}

/// Whether `node`'s `Ready` condition is True.
pub fn is_node_ready(node: &Value) -> bool {
    skein_apiserver::registry::object::condition_true(node, "Ready")
}

/// `node`'s taints, with the `node.kubernetes.io/not-ready:NoSchedule`
/// taint upstream's node lifecycle controller puts on a Node that is not
/// Ready (a Node without a kubelet never is).
fn taints(node: &Value) -> Vec<Value> {
    let mut taints = node
        .pointer("/spec/taints")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    let not_ready = "node.kubernetes.io/not-ready";
    if !is_node_ready(node)
        && !taints
            .iter()
            .any(|t| t.get("key").and_then(Value::as_str) == Some(not_ready))
    {
        taints.push(serde_json::json!({"key": not_ready, "effect": "NoSchedule"}));
    }
    taints
}

/// The first NoSchedule/NoExecute taint of `node` that `pod` does not
/// tolerate.
fn untolerated_taint(pod: &Value, node: &Value) -> Option<Value> {
    let tolerations = pod
        .pointer("/spec/tolerations")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    taints(node)
        .into_iter()
        .filter(|t| {
            matches!(
                t.get("effect").and_then(Value::as_str),
                Some("NoSchedule" | "NoExecute")
            )
        })
        .find(|t| !tolerations.iter().any(|tol| tolerates(tol, t)))
}

/// The resources and Pods already placed on one Node.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Usage {
    /// The sum of the placed Pods' requests.
    pub requested: Amounts,
    /// The sum of the placed Pods' CPU and memory requests for scoring
    /// (upstream's non-zero defaults for Pods that request none).
    pub scored: Amounts,
    /// How many Pods are placed.
    pub pods: usize,
}

impl Usage {
    /// Counts `pod` as placed.
    pub fn add(&mut self, pod: &Value) {
        self.add_share(&Share::of(requests(pod)));
    }

    /// Counts a placed Pod's share.
    pub fn add_share(&mut self, share: &Share) {
        add(&mut self.scored, &share.scored);
        add(&mut self.requested, &share.requested);
        self.pods += 1;
    }

    /// Stops counting a Pod's share counted before with
    /// [`Usage::add_share`].
    pub fn remove_share(&mut self, share: &Share) {
        for (into, from) in [
            (&mut self.scored, &share.scored),
            (&mut self.requested, &share.requested),
        ] {
            for (k, v) in from {
                if let Some(e) = into.get_mut(k) {
                    *e -= v;
                    if *e == 0 {
                        into.remove(k);
                    }
                }
            }
        }
        self.pods = self.pods.saturating_sub(1);
    }
}

/// What one placed Pod adds to its Node's [`Usage`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Share {
    /// Its effective requests.
    pub requested: Amounts,
    /// Its CPU and memory requests for scoring.
    pub scored: Amounts,
}

impl Share {
    fn of(requested: Amounts) -> Share {
        Share {
            scored: non_zero(&requested),
            requested,
        }
    }
}

/// The Node `pod` holds room on and its [`Share`]; `None` for a Pod that
/// is not bound or has finished (Succeeded or Failed Pods hold nothing).
pub fn placement(pod: &Value) -> Option<(String, Share)> {
    let node = pod
        .pointer("/spec/nodeName")
        .and_then(Value::as_str)
        .unwrap_or("");
    let phase = pod
        .pointer("/status/phase")
        .and_then(Value::as_str)
        .unwrap_or("");
    if node.is_empty() || matches!(phase, "Succeeded" | "Failed") {
        return None;
    }
    Some((node.to_owned(), Share::of(requests(pod))))
}

/// CPU and memory of `requests`, with upstream's scoring defaults for
/// zero.
fn non_zero(requests: &Amounts) -> Amounts {
    [("cpu", DEFAULT_CPU), ("memory", DEFAULT_MEMORY)]
        .into_iter()
        .map(|(k, d)| {
            let v = requests.get(k).copied().filter(|v| *v > 0).unwrap_or(d);
            (k.to_owned(), v)
        })
        .collect()
}

/// Each Node's [`Usage`] from the Pods bound to it (by `spec.nodeName`;
/// Pods that finished, Succeeded or Failed, hold nothing).
pub fn usage<'a>(pods: impl IntoIterator<Item = &'a Value>) -> HashMap<String, Usage> {
    let mut by_node: HashMap<String, Usage> = HashMap::new();
    for (node, share) in pods.into_iter().filter_map(placement) {
        by_node.entry(node).or_default().add_share(&share);
    }
    by_node
}

/// The filters, in kube-scheduler's order; the first that fails decides.
fn filter(pod: &Value, want: &Amounts, node: &Value, used: &Usage) -> Result<(), Rejection> {
    let unresolvable = |reason: String| Rejection {
        reasons: vec![reason],
        resolvable: false,
    };
    if node.pointer("/spec/unschedulable").and_then(Value::as_bool) == Some(true) {
        let taint =
            serde_json::json!({"key": "node.kubernetes.io/unschedulable", "effect": "NoSchedule"});
        let tolerated = pod
            .pointer("/spec/tolerations")
            .and_then(Value::as_array)
            .is_some_and(|ts| ts.iter().any(|t| tolerates(t, &taint)));
        if !tolerated {
            return Err(unresolvable("node(s) were unschedulable".into()));
        }
    }
    if let Some(taint) = untolerated_taint(pod, node) {
        let s = |f: &str| taint.get(f).and_then(Value::as_str).unwrap_or("");
        return Err(unresolvable(format!(
            "node(s) had untolerated taint {{{}: {}}}",
            s("key"),
            s("value")
        )));
    }
    if !affinity_matches(pod, node) {
        return Err(unresolvable(
            "node(s) didn't match Pod's node affinity/selector".into(),
        ));
    }
    let free = allocatable(node);
    let mut reasons = Vec::new();
    let max_pods = free.get("pods").copied().unwrap_or(0) / NANO;
    if i128::try_from(used.pods).unwrap_or(i128::MAX) + 1 > max_pods {
        reasons.push("Too many pods".to_owned());
    }
    for (resource, amount) in want {
        if *amount == 0 || resource == "pods" {
            continue;
        }
        let have = free.get(resource).copied().unwrap_or(0);
        let taken = used.requested.get(resource).copied().unwrap_or(0);
        if have - taken < *amount {
            reasons.push(format!("Insufficient {resource}"));
        }
    }
    if reasons.is_empty() {
        Ok(())
    } else {
        Err(Rejection {
            reasons,
            resolvable: true,
        })
    }
}

/// The least-allocated score (0–100) of `node` once `want` is added,
/// counting upstream's defaults for Pods that request no CPU or memory.
fn score(want: &Amounts, node: &Value, used: &Usage) -> i128 {
    let free = allocatable(node);
    let want = non_zero(want);
    let mut total = 0;
    for resource in ["cpu", "memory"] {
        let have = free.get(resource).copied().unwrap_or(0);
        if have <= 0 {
            continue;
        }
        let taken = used.scored.get(resource).copied().unwrap_or(0)
            + want.get(resource).copied().unwrap_or(0);
        total += ((have - taken).max(0) * 100) / have;
    }
    total / 2
}

/// kube-scheduler's FitError text for `rejections` (one per Node).
fn message(rejections: &[Rejection]) -> String {
    let n = rejections.len();
    if n == 0 {
        return "no nodes available to schedule pods".to_owned();
    }
    let histogram = |reasons: Vec<String>| {
        let mut counts: BTreeMap<String, usize> = BTreeMap::new();
        for r in reasons {
            *counts.entry(r).or_insert(0) += 1;
        }
        let mut lines: Vec<String> = counts
            .into_iter()
            .map(|(r, c)| format!("{c} {r}"))
            .collect();
        lines.sort();
        lines.join(", ")
    };
    let filters = histogram(rejections.iter().flat_map(|r| r.reasons.clone()).collect());
    let preemption = histogram(
        rejections
            .iter()
            .map(|r| {
                if r.resolvable {
                    "No preemption victims found for incoming pod".to_owned()
                } else {
                    "Preemption is not helpful for scheduling".to_owned()
                }
            })
            .collect(),
    );
    format!(
        "0/{n} nodes are available: {filters}. preemption: 0/{n} nodes are available: {preemption}."
    )
}

/// Where `pod` fits among `nodes`, given each Node's [`Usage`]: the
/// chosen Node's name, or why none fits.
///
/// # Errors
///
/// [`Unschedulable`] with kube-scheduler's message when no Node passes
/// every filter.
pub fn fit(
    pod: &Value,
    nodes: &[&Value],
    usage: &HashMap<String, Usage>,
) -> Result<String, Unschedulable> {
    let want = requests(pod);
    let empty = Usage::default();
    let mut rejections = Vec::new();
    let mut best: Option<(i128, usize, &str)> = None;
    let only = named_nodes(pod);
    for node in nodes {
        let node_name = name(node);
        let used = usage.get(node_name).unwrap_or(&empty);
        if only
            .as_ref()
            .is_some_and(|names| !names.contains(node_name))
        {
            rejections.push(Rejection {
                reasons: vec!["node(s) didn't satisfy plugin(s) [NodeAffinity]".to_owned()],
                resolvable: false,
            });
            continue;
        }
        match filter(pod, &want, node, used) {
            Err(r) => rejections.push(r),
            Ok(()) => {
                let s = score(&want, node, used);
                let better = match best {
                    None => true,
                    Some((bs, bp, bn)) => {
                        (
                            s,
                            std::cmp::Reverse(used.pods),
                            std::cmp::Reverse(node_name),
                        ) > (bs, std::cmp::Reverse(bp), std::cmp::Reverse(bn))
                    }
                };
                if better {
                    best = Some((s, used.pods, node_name));
                }
            }
        }
    }
    match best {
        Some((_, _, n)) => Ok(n.to_owned()),
        None => Err(Unschedulable {
            message: message(&rejections),
        }),
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn node(name: &str, cpu: &str, pods: u32) -> Value {
        json!({
            "metadata": {"name": name, "labels": {"kubernetes.io/hostname": name, "zone": "z1"}},
            "status": {
                "allocatable": {"cpu": cpu, "memory": "32Gi", "pods": pods.to_string()},
                "conditions": [{"type": "Ready", "status": "True"}],
            },
        })
    }

    fn pod(cpu: &str) -> Value {
        json!({"metadata": {"name": "p"}, "spec": {"containers": [
            {"name": "c", "resources": {"requests": {"cpu": cpu}}}
        ]}})
    }

    fn bound(p: &Value, node: &str) -> Value {
        let mut p = p.clone();
        p["spec"]["nodeName"] = json!(node);
        p
    }

    #[test]
    fn requests_take_the_larger_of_containers_and_init_plus_overhead() {
        let p = json!({"spec": {
            "containers": [
                {"resources": {"requests": {"cpu": "100m", "memory": "1Gi"}}},
                {"resources": {"requests": {"cpu": "200m"}}},
            ],
            "initContainers": [
                {"resources": {"requests": {"cpu": "1", "memory": "10Mi"}}},
            ],
            "overhead": {"cpu": "10m"},
        }});
        let r = requests(&p);
        assert_eq!(r["cpu"], NANO + NANO / 100);
        assert_eq!(r["memory"], 1024 * 1024 * 1024 * NANO);
    }

    #[test]
    fn sidecars_add_to_the_containers() {
        let p = json!({"spec": {
            "containers": [{"resources": {"requests": {"cpu": "100m"}}}],
            "initContainers": [
                {"restartPolicy": "Always", "resources": {"requests": {"cpu": "200m"}}},
                {"resources": {"requests": {"cpu": "250m"}}},
            ],
        }});
        assert_eq!(requests(&p)["cpu"], NANO * 45 / 100);
    }

    #[test]
    fn too_big_everywhere_is_the_upstream_message() {
        let nodes = [
            node("a", "2", 110),
            node("b", "2", 110),
            node("c", "2", 110),
        ];
        let refs: Vec<&Value> = nodes.iter().collect();
        let err = fit(&pod("3"), &refs, &HashMap::new()).expect_err("does not fit");
        assert_eq!(
            err.message,
            "0/3 nodes are available: 3 Insufficient cpu. preemption: 0/3 nodes are available: 3 No preemption victims found for incoming pod."
        );
    }

    #[test]
    fn no_nodes_at_all() {
        let err = fit(&pod("1"), &[], &HashMap::new()).expect_err("no nodes");
        assert_eq!(err.message, "no nodes available to schedule pods");
    }

    #[test]
    fn capacity_counts_placed_pods_and_spreads() {
        let nodes = [node("a", "2", 110), node("b", "2", 110)];
        let refs: Vec<&Value> = nodes.iter().collect();
        let placed = [bound(&pod("1500m"), "a")];
        let u = usage(placed.iter());
        assert_eq!(fit(&pod("1"), &refs, &u), Ok("b".to_owned()));
        let placed = [bound(&pod("1500m"), "a"), bound(&pod("1500m"), "b")];
        let u = usage(placed.iter());
        let err = fit(&pod("1"), &refs, &u).expect_err("full");
        assert!(
            err.message
                .starts_with("0/2 nodes are available: 2 Insufficient cpu.")
        );
        // Finished Pods hold nothing.
        let mut done = bound(&pod("1500m"), "a");
        done["status"] = json!({"phase": "Succeeded"});
        let placed = [done, bound(&pod("1500m"), "b")];
        assert_eq!(
            fit(&pod("1"), &refs, &usage(placed.iter())),
            Ok("a".to_owned())
        );
    }

    #[test]
    fn pod_limit_and_mixed_reasons() {
        let nodes = [node("a", "8", 1), node("b", "1", 110)];
        let refs: Vec<&Value> = nodes.iter().collect();
        let placed = [bound(&pod("0"), "a")];
        let err = fit(&pod("2"), &refs, &usage(placed.iter())).expect_err("full");
        assert_eq!(
            err.message,
            "0/2 nodes are available: 1 Insufficient cpu, 1 Too many pods. preemption: 0/2 nodes are available: 2 No preemption victims found for incoming pod."
        );
    }

    #[test]
    fn selectors_affinity_fields_and_taints() {
        let mut tainted = node("a", "8", 110);
        tainted["spec"] = json!({"taints": [{"key": "k", "value": "v", "effect": "NoSchedule"}]});
        let nodes = [tainted, node("b", "8", 110), node("c", "8", 110)];
        let refs: Vec<&Value> = nodes.iter().collect();
        let none = HashMap::new();
        // DaemonSet style: matchFields metadata.name.
        let mut p = pod("1");
        p["spec"]["affinity"] = json!({"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {
            "nodeSelectorTerms": [{"matchFields": [{"key": "metadata.name", "operator": "In", "values": ["c"]}]}]
        }}});
        assert_eq!(fit(&p, &refs, &none), Ok("c".to_owned()));
        p["spec"]["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]["nodeSelectorTerms"]
            [0]["matchFields"][0]["values"] = json!(["a"]);
        let err = fit(&p, &refs, &none).expect_err("tainted");
        assert_eq!(
            err.message,
            "0/3 nodes are available: 1 node(s) had untolerated taint {k: v}, 2 node(s) didn't satisfy plugin(s) [NodeAffinity]. preemption: 0/3 nodes are available: 3 Preemption is not helpful for scheduling."
        );
        p["spec"]["tolerations"] = json!([{"key": "k", "operator": "Exists"}]);
        assert_eq!(fit(&p, &refs, &none), Ok("a".to_owned()));
        // A term without names lets every Node through the PreFilter.
        let mut either = pod("1");
        either["spec"]["affinity"] = json!({"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {
            "nodeSelectorTerms": [
                {"matchFields": [{"key": "metadata.name", "operator": "In", "values": ["c"]}]},
                {"matchExpressions": [{"key": "zone", "operator": "In", "values": ["z1"]}]},
            ]
        }}});
        assert!(named_nodes(&either).is_none());
        let mut q = pod("1");
        q["spec"]["nodeSelector"] = json!({"kubernetes.io/hostname": "b"});
        assert_eq!(fit(&q, &refs, &none), Ok("b".to_owned()));
        q["spec"]["nodeSelector"] = json!({"zone": "nowhere"});
        assert!(fit(&q, &refs, &none).is_err());
    }

    #[test]
    fn nodes_that_are_not_ready_repel_pods() {
        let mut down = node("a", "8", 110);
        down["status"]["conditions"] = json!([]);
        let refs = [&down];
        let err = fit(&pod("1"), &refs, &HashMap::new()).expect_err("not ready");
        assert_eq!(
            err.message,
            "0/1 nodes are available: 1 node(s) had untolerated taint {node.kubernetes.io/not-ready: }. preemption: 0/1 nodes are available: 1 Preemption is not helpful for scheduling."
        );
        let mut tolerant = pod("1");
        tolerant["spec"]["tolerations"] = json!([{"operator": "Exists"}]);
        assert_eq!(fit(&tolerant, &refs, &HashMap::new()), Ok("a".to_owned()));
    }

    #[test]
    fn cordoned_nodes_are_skipped() {
        let mut cordoned = node("a", "8", 110);
        cordoned["spec"] = json!({"unschedulable": true});
        let nodes = [cordoned, node("b", "1", 110)];
        let refs: Vec<&Value> = nodes.iter().collect();
        assert_eq!(
            fit(&pod("100m"), &refs, &HashMap::new()),
            Ok("b".to_owned())
        );
    }

    proptest::proptest! {
        /// Whatever is placed, a chosen Node has room for the Pod.
        #[test]
        fn a_chosen_node_has_room(placed in proptest::collection::vec((0usize..3, 0u32..4000), 0..12), want in 0u32..4000) {
            let nodes = [node("a", "4", 110), node("b", "4", 110), node("c", "4", 110)];
            let refs: Vec<&Value> = nodes.iter().collect();
            let pods: Vec<Value> = placed
                .iter()
                .map(|(n, m)| bound(&pod(&format!("{m}m")), ["a", "b", "c"][*n]))
                .collect();
            let u = usage(pods.iter());
            let p = pod(&format!("{want}m"));
            let room = |n: &str| 4 * NANO - u.get(n).map_or(0, |x| x.requested.get("cpu").copied().unwrap_or(0));
            match fit(&p, &refs, &u) {
                Ok(n) => proptest::prop_assert!(room(&n) >= requests(&p)["cpu"]),
                Err(_) => proptest::prop_assert!(["a", "b", "c"].iter().all(|n| room(n) < requests(&p)["cpu"])),
            }
        }
    }
}
