//! What a member holds, computed from its lists: node count, region and
//! zones, allocatable and available resources, and the resources its
//! discovery serves. Pure (no I/O): the worker fetches, this module counts.
//!
//! Contract:
//! - `allocatable` is the sum of the Nodes' `status.allocatable`, per
//!   resource name; `available` is allocatable minus the requests of the
//!   scheduled Pods (`spec.nodeName` set, phase neither `Succeeded` nor
//!   `Failed`), never below zero; for `pods` each such Pod counts one.
//! - A Pod's request is upstream's `resourcehelper.PodRequests` (1.33,
//!   without pod-level resources): the larger of the sum of its containers
//!   (restartable init containers, i.e. sidecars, included) and of each
//!   init container's request plus the sidecars started before it, plus
//!   `spec.overhead`.
//! - Sums keep upstream's quantity formats (`Quantity.Add`), so the
//!   canonical text is upstream's (`64Gi`, `7750m`).
//! - Region: `spec.region`, else the `topology.kubernetes.io/region` label
//!   (its beta `failure-domain` form on old members) most Nodes carry (ties
//!   to the first in name order). Zones: `spec.zones` when not empty, else
//!   the zone labels of the Nodes, sorted, each once.
//! - Quantities that do not parse are ignored.

use std::collections::BTreeMap;

use serde_json::Value;
use skein_admission::quantity::Quantity;

/// A resource list: resource name → quantity.
pub type Resources = BTreeMap<String, Quantity>;

/// The region label.
pub const REGION_LABEL: &str = "topology.kubernetes.io/region";
/// The zone label.
pub const ZONE_LABEL: &str = "topology.kubernetes.io/zone";
const BETA_REGION_LABEL: &str = "failure-domain.beta.kubernetes.io/region";
const BETA_ZONE_LABEL: &str = "failure-domain.beta.kubernetes.io/zone";

/// A Cluster's own statements that win over what the Nodes say.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Overrides {
    /// `spec.region`.
    pub region: Option<String>,
    /// `spec.zones`.
    pub zones: Vec<String>,
}

impl Overrides {
    /// The overrides of a Cluster object.
    pub fn of(cluster: &Value) -> Overrides {
        let spec = cluster.get("spec");
        Overrides {
            region: spec
                .and_then(|s| s.get("region"))
                .and_then(Value::as_str)
                .filter(|r| !r.is_empty())
                .map(str::to_owned),
            zones: spec
                .and_then(|s| s.get("zones"))
                .and_then(Value::as_array)
                .map(|z| {
                    z.iter()
                        .filter_map(Value::as_str)
                        .map(str::to_owned)
                        .collect()
                })
                .unwrap_or_default(),
        }
    }
}

/// What the Node and Pod lists say.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Inventory {
    /// How many Nodes.
    pub nodes: usize,
    /// The region, if any.
    pub region: Option<String>,
    /// The zones, sorted.
    pub zones: Vec<String>,
    /// Sum of the Nodes' allocatable resources.
    pub allocatable: Resources,
    /// Allocatable minus the scheduled Pods' requests.
    pub available: Resources,
}

/// The inventory of a member with `nodes` and `pods` (list items as JSON).
pub fn inventory(overrides: &Overrides, nodes: &[Value], pods: &[Value]) -> Inventory {
    let mut allocatable = Resources::new();
    for node in nodes {
        add_into(
            &mut allocatable,
            &resources(node.pointer("/status/allocatable")),
        );
    }
    let mut used = Resources::new();
    let mut scheduled: i128 = 0;
    for pod in pods.iter().filter(|p| is_scheduled(p)) {
        add_into(&mut used, &pod_requests(pod));
        scheduled += 1;
    }
    if let Some(count) = Quantity::parse(&scheduled.to_string()) {
        used.insert("pods".into(), count);
    }
    let available = allocatable
        .iter()
        .map(|(name, total)| {
            let left = match used.get(name) {
                Some(u) => total.checked_sub(u).unwrap_or(*total),
                None => *total,
            };
            let left = if left.nanos() < 0 {
                zero_like(total)
            } else {
                left
            };
            (name.clone(), left)
        })
        .collect();
    Inventory {
        nodes: nodes.len(),
        region: overrides
            .region
            .clone()
            .or_else(|| most_common(nodes, REGION_LABEL, BETA_REGION_LABEL)),
        zones: if overrides.zones.is_empty() {
            zones(nodes)
        } else {
            let mut z = overrides.zones.clone();
            z.sort();
            z.dedup();
            z
        },
        allocatable,
        available,
    }
}

/// Whether a Pod holds its requests on a Node: bound and not terminated.
fn is_scheduled(pod: &Value) -> bool {
    let bound = pod
        .pointer("/spec/nodeName")
        .and_then(Value::as_str)
        .is_some_and(|n| !n.is_empty());
    let phase = pod
        .pointer("/status/phase")
        .and_then(Value::as_str)
        .unwrap_or_default();
    bound && phase != "Succeeded" && phase != "Failed"
}

/// A Pod's effective requests (see the module documentation).
pub fn pod_requests(pod: &Value) -> Resources {
    let spec = pod.get("spec");
    let containers = |field: &str| {
        spec.and_then(|s| s.get(field))
            .and_then(Value::as_array)
            .cloned()
            .unwrap_or_default()
    };
    let requests_of = |c: &Value| resources(c.pointer("/resources/requests"));
    let mut reqs = Resources::new();
    for c in containers("containers") {
        add_into(&mut reqs, &requests_of(&c));
    }
    let mut sidecars = Resources::new();
    let mut init = Resources::new();
    for c in containers("initContainers") {
        let own = requests_of(&c);
        let effective = if c.get("restartPolicy").and_then(Value::as_str) == Some("Always") {
            add_into(&mut reqs, &own);
            add_into(&mut sidecars, &own);
            sidecars.clone()
        } else {
            let mut with_sidecars = own;
            add_into(&mut with_sidecars, &sidecars);
            with_sidecars
        };
        max_into(&mut init, &effective);
    }
    max_into(&mut reqs, &init);
    add_into(&mut reqs, &resources(spec.and_then(|s| s.get("overhead"))));
    reqs
}

/// A resource list from JSON (quantities as strings or numbers).
fn resources(list: Option<&Value>) -> Resources {
    let Some(Value::Object(map)) = list else {
        return Resources::new();
    };
    map.iter()
        .filter_map(|(k, v)| {
            let text = match v {
                Value::String(s) => s.clone(),
                Value::Number(n) => n.to_string(),
                _ => return None,
            };
            Some((k.clone(), Quantity::parse(&text)?))
        })
        .collect()
}

/// `into += other`, per resource.
fn add_into(into: &mut Resources, other: &Resources) {
    for (name, q) in other {
        match into.get_mut(name) {
            Some(cur) => {
                if let Some(sum) = cur.checked_add(q) {
                    *cur = sum;
                }
            }
            None => {
                into.insert(name.clone(), *q);
            }
        }
    }
}

/// `into = max(into, other)`, per resource.
fn max_into(into: &mut Resources, other: &Resources) {
    for (name, q) in other {
        match into.get_mut(name) {
            Some(cur) if *q > *cur => *cur = *q,
            Some(_) => {}
            None => {
                into.insert(name.clone(), *q);
            }
        }
    }
}

/// Zero in `like`'s format.
fn zero_like(like: &Quantity) -> Quantity {
    like.checked_sub(like).unwrap_or(*like)
}

fn label<'a>(node: &'a Value, key: &str, beta: &str) -> Option<&'a str> {
    let labels = node.pointer("/metadata/labels")?;
    labels
        .get(key)
        .or_else(|| labels.get(beta))
        .and_then(Value::as_str)
        .filter(|v| !v.is_empty())
}

/// The label value most Nodes carry (ties to the smallest value).
fn most_common(nodes: &[Value], key: &str, beta: &str) -> Option<String> {
    let mut counts: BTreeMap<&str, usize> = BTreeMap::new();
    for node in nodes {
        if let Some(v) = label(node, key, beta) {
            *counts.entry(v).or_default() += 1;
        }
    }
    let best = counts.values().copied().max()?;
    counts
        .into_iter()
        .find(|(_, n)| *n == best)
        .map(|(v, _)| v.to_owned())
}

fn zones(nodes: &[Value]) -> Vec<String> {
    let mut z: Vec<String> = nodes
        .iter()
        .filter_map(|n| label(n, ZONE_LABEL, BETA_ZONE_LABEL))
        .map(str::to_owned)
        .collect();
    z.sort();
    z.dedup();
    z
}

/// The resources of one group/version a member serves.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Served {
    /// As discovery spells it: `v1`, `apps/v1`.
    pub group_version: String,
    /// Plural resource names, subresources excluded, sorted, each once.
    pub resources: Vec<String>,
}

/// The served resources from discovery's `(groupVersion, resource names)`
/// pairs (`/api/<v>` then `/apis/<g>/<v>`, in discovery's order): names
/// with a `/` (subresources) dropped; a group/version listed twice keeps
/// its first place with the union of its names.
pub fn served(lists: Vec<(String, Vec<String>)>) -> Vec<Served> {
    let mut out: Vec<Served> = Vec::new();
    for (group_version, names) in lists {
        let idx = match out.iter().position(|s| s.group_version == group_version) {
            Some(i) => i,
            None => {
                out.push(Served {
                    group_version,
                    resources: Vec::new(),
                });
                out.len() - 1
            }
        };
        if let Some(entry) = out.get_mut(idx) {
            entry
                .resources
                .extend(names.into_iter().filter(|n| !n.contains('/')));
            entry.resources.sort();
            entry.resources.dedup();
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use serde_json::json;

    fn node(name: &str, zone: &str, cpu: &str, memory: &str) -> Value {
        json!({
            "metadata": {"name": name, "labels": {REGION_LABEL: "eu", ZONE_LABEL: zone}},
            "status": {"allocatable": {"cpu": cpu, "memory": memory, "pods": "110"}},
        })
    }

    fn pod(node: &str, phase: &str, cpu: &str, memory: &str) -> Value {
        json!({
            "spec": {"nodeName": node, "containers": [
                {"name": "c", "resources": {"requests": {"cpu": cpu, "memory": memory}}}
            ]},
            "status": {"phase": phase},
        })
    }

    fn text(r: &Resources) -> BTreeMap<&str, String> {
        r.iter().map(|(k, v)| (k.as_str(), v.canonical())).collect()
    }

    #[test]
    fn allocatable_and_available() {
        let nodes = [
            node("a", "eu-a", "4", "16Gi"),
            node("b", "eu-b", "4", "16Gi"),
        ];
        let pods = [
            pod("a", "Running", "250m", "512Mi"),
            pod("b", "Pending", "1", "1Gi"),
            pod("", "Pending", "8", "1Gi"),
            pod("a", "Succeeded", "2", "1Gi"),
            pod("b", "Failed", "2", "1Gi"),
        ];
        let inv = inventory(&Overrides::default(), &nodes, &pods);
        assert_eq!(inv.nodes, 2);
        assert_eq!(inv.region.as_deref(), Some("eu"));
        assert_eq!(inv.zones, ["eu-a", "eu-b"]);
        let alloc = text(&inv.allocatable);
        assert_eq!(alloc["cpu"], "8");
        assert_eq!(alloc["memory"], "32Gi");
        assert_eq!(alloc["pods"], "220");
        let avail = text(&inv.available);
        assert_eq!(avail["cpu"], "6750m");
        assert_eq!(avail["memory"], "31232Mi");
        assert_eq!(avail["pods"], "218");
    }

    #[test]
    fn available_never_goes_below_zero() {
        let nodes = [node("a", "z", "1", "1Gi")];
        let pods = [pod("a", "Running", "2", "2Gi")];
        let inv = inventory(&Overrides::default(), &nodes, &pods);
        assert_eq!(text(&inv.available)["cpu"], "0");
        assert_eq!(text(&inv.available)["memory"], "0");
    }

    #[test]
    fn overrides_win() {
        let nodes = [node("a", "eu-a", "1", "1Gi")];
        let o = Overrides {
            region: Some("us".into()),
            zones: vec!["z2".into(), "z1".into()],
        };
        let inv = inventory(&o, &nodes, &[]);
        assert_eq!(inv.region.as_deref(), Some("us"));
        assert_eq!(inv.zones, ["z1", "z2"]);
        let o = Overrides::of(&json!({"spec": {"region": "ap", "zones": ["x"]}}));
        assert_eq!(o.region.as_deref(), Some("ap"));
        assert_eq!(o.zones, ["x"]);
    }

    #[test]
    fn no_nodes_no_region() {
        let inv = inventory(&Overrides::default(), &[], &[]);
        assert_eq!(inv.nodes, 0);
        assert_eq!(inv.region, None);
        assert!(inv.zones.is_empty() && inv.allocatable.is_empty());
    }

    #[test]
    fn beta_labels_and_majorities() {
        let beta = |name: &str, region: &str| json!({"metadata": {"name": name, "labels": {BETA_REGION_LABEL: region, BETA_ZONE_LABEL: "old"}}});
        let nodes = [beta("a", "r2"), beta("b", "r1"), beta("c", "r2")];
        let inv = inventory(&Overrides::default(), &nodes, &[]);
        assert_eq!(inv.region.as_deref(), Some("r2"));
        assert_eq!(inv.zones, ["old"]);
    }

    #[test]
    fn pod_requests_as_upstream() {
        // max(sum of containers, largest init container) + overhead.
        let p = json!({"spec": {
            "containers": [
                {"resources": {"requests": {"cpu": "100m", "memory": "100Mi"}}},
                {"resources": {"requests": {"cpu": "200m"}}},
            ],
            "initContainers": [
                {"resources": {"requests": {"cpu": "1", "memory": "50Mi"}}},
            ],
            "overhead": {"cpu": "10m"},
        }});
        let reqs = pod_requests(&p);
        let r = text(&reqs);
        assert_eq!(r["cpu"], "1010m");
        assert_eq!(r["memory"], "100Mi");
        // A sidecar adds to the containers and to every later init
        // container.
        let p = json!({"spec": {
            "containers": [{"resources": {"requests": {"cpu": "100m"}}}],
            "initContainers": [
                {"restartPolicy": "Always", "resources": {"requests": {"cpu": "200m"}}},
                {"resources": {"requests": {"cpu": "250m"}}},
            ],
        }});
        assert_eq!(text(&pod_requests(&p))["cpu"], "450m");
        let none = pod_requests(&json!({"spec": {"containers": [{"name": "c"}]}}));
        assert!(none.is_empty());
    }

    #[test]
    fn served_drops_subresources() {
        let s = served(vec![
            (
                "v1".into(),
                vec!["pods".into(), "pods/log".into(), "nodes".into()],
            ),
            (
                "apps/v1".into(),
                vec!["deployments".into(), "deployments/scale".into()],
            ),
            ("v1".into(), vec!["pods".into(), "services".into()]),
        ]);
        assert_eq!(
            s,
            vec![
                Served {
                    group_version: "v1".into(),
                    resources: vec!["nodes".into(), "pods".into(), "services".into()],
                },
                Served {
                    group_version: "apps/v1".into(),
                    resources: vec!["deployments".into()],
                },
            ]
        );
    }

    proptest! {
        /// Whatever the Pods: available never exceeds allocatable nor goes
        /// below zero, and with no scheduled Pods it equals allocatable.
        #[test]
        fn available_is_bounded(
            cpus in proptest::collection::vec(0u32..64_000, 0..5),
            reqs in proptest::collection::vec((0u32..10_000, proptest::bool::ANY), 0..20),
        ) {
            let nodes: Vec<Value> = cpus.iter().enumerate()
                .map(|(i, c)| node(&format!("n{i}"), "z", &format!("{c}m"), "1Gi"))
                .collect();
            let pods: Vec<Value> = reqs.iter()
                .map(|(c, bound)| pod(if *bound { "n0" } else { "" }, "Running", &format!("{c}m"), "1Mi"))
                .collect();
            let inv = inventory(&Overrides::default(), &nodes, &pods);
            for (name, total) in &inv.allocatable {
                let left = inv.available.get(name).map(Quantity::nanos);
                prop_assert!(left.is_some());
                let left = left.unwrap_or_default();
                prop_assert!(left >= 0 && left <= total.nanos());
            }
            let idle = inventory(&Overrides::default(), &nodes, &[]);
            prop_assert_eq!(&idle.available, &idle.allocatable);
        }
    }
}
