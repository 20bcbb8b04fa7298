//! Simulated Nodes: `--sim-nodes N` Nodes named `sim-node-0`…, registered
//! at start as a kubelet registers (labels, capacity, addresses, node
//! info, the four conditions), with heartbeats every [`HEARTBEAT`]: the
//! conditions' `lastHeartbeatTime` and the Node's Lease in
//! `kube-node-lease` (upstream's kubelet renews its Lease every 10 s and
//! its status every 5 minutes when nothing changed; one 40 s beat keeps the
//! write load of many members low).
//!
//! Contract:
//! - Idempotent across restarts: an existing simulated Node is updated
//!   (labels the simulator owns, status), never recreated; simulated Nodes
//!   beyond `--sim-nodes` (from an earlier run with more) are deleted.
//! - A deleted simulated Node comes back at the next heartbeat, as a
//!   kubelet re-registers.
//! - Only Nodes carrying [`SIMULATED`] are touched; Nodes a user creates are
//!   left alone (and get no Pods running: no kubelet runs them).

use skein_apiserver::status::ErrorKind;
use std::net::Ipv4Addr;
use std::time::Duration;

use serde_json::{Map, Value, json};
use time::OffsetDateTime;

use super::Sim;
use crate::config::SimConfig;
use skein_apiserver::registry::{DeleteOptions, Target, object};
use skein_apiserver::status::ApiError;

/// The annotation that marks a Node as simulated (its Pods run).
pub const SIMULATED: &str = "sim.skein.io/node";

/// How often each simulated Node's conditions are refreshed (upstream's
/// kubelet reports every 10 s when something changed, else within its
/// 5-minute lease; 40 s is what the node lifecycle controller tolerates).
pub const HEARTBEAT: Duration = Duration::from_secs(40);

/// The field manager of the Nodes' writes.
const MANAGER: &str = "skein-sim-kubelet";

/// The reported kubelet version.
pub const KUBELET_VERSION: &str = "v1.33.0";

/// The instance type label of every simulated Node.
pub const INSTANCE_TYPE: &str = "sim.standard";

/// The name of simulated Node `index`.
pub fn name(index: u32) -> String {
    format!("sim-node-{index}")
}

/// The index of a simulated Node's name, if it is one.
pub fn index_of(name: &str) -> Option<u32> {
    name.strip_prefix("sim-node-")?.parse().ok()
}

/// Simulated Node `index`'s InternalIP (`10.89.0.0/16`, from `.2`).
pub fn internal_ip(index: u32) -> Ipv4Addr {
    Ipv4Addr::from(u32::from(Ipv4Addr::new(10, 89, 0, 2)).saturating_add(index))
}

/// Simulated Node `index`'s Pod CIDR, from `10.244.0.0`: a `/24` (the
/// controller manager's default node mask) unless the Node may hold more
/// Pods than a `/24` has addresses for, then the smallest block that
/// holds `pods` (the network, gateway and broadcast addresses excluded),
/// as an operator sizes `--node-cidr-mask-size` for `--max-pods`.
pub fn pod_cidr(index: u32, pods: u32) -> String {
    let host_bits = (8..=16)
        .find(|bits| (1u32 << bits) - 3 >= pods)
        .unwrap_or(16);
    let base = u32::from(Ipv4Addr::new(10, 244, 0, 0))
        .saturating_add(index.saturating_mul(1 << host_bits));
    format!("{}/{}", Ipv4Addr::from(base), 32 - host_bits)
}

/// Whether `node` is a simulated Node.
pub fn is_simulated(node: &Value) -> bool {
    node.pointer("/metadata/annotations")
        .and_then(|a| a.get(SIMULATED))
        .is_some()
}

/// `time`'s instant as Kubernetes writes timestamps (RFC 3339, seconds,
/// UTC).
pub fn timestamp(t: OffsetDateTime) -> String {
    skein_apiserver::registry::object::rfc3339(t)
}

/// The labels a kubelet (and the cloud provider) give simulated Node
/// `index`.
pub fn labels(config: &SimConfig, index: u32) -> Map<String, Value> {
    let name = name(index);
    let mut labels = Map::new();
    for (k, v) in [
        ("beta.kubernetes.io/arch", "amd64"),
        ("beta.kubernetes.io/os", "linux"),
        ("kubernetes.io/arch", "amd64"),
        ("kubernetes.io/hostname", name.as_str()),
        ("kubernetes.io/os", "linux"),
        ("node.kubernetes.io/instance-type", INSTANCE_TYPE),
        ("topology.kubernetes.io/region", config.region.as_str()),
    ] {
        labels.insert(k.into(), json!(v));
    }
    if !config.zones.is_empty() {
        let zone = &config.zones[(index as usize) % config.zones.len()];
        labels.insert("topology.kubernetes.io/zone".into(), json!(zone));
    }
    labels
}

/// The condition `type_` with upstream kubelet's reasons and messages,
/// keeping `lastTransitionTime` from `prev` when its status is unchanged.
fn condition(type_: &str, prev: Option<&Value>, now: &str) -> Value {
    let (status, reason, message) = match type_ {
        "MemoryPressure" => (
            "False",
            "KubeletHasSufficientMemory",
            "kubelet has sufficient memory available",
        ),
        "DiskPressure" => (
            "False",
            "KubeletHasNoDiskPressure",
            "kubelet has no disk pressure",
        ),
        "PIDPressure" => (
            "False",
            "KubeletHasSufficientPID",
            "kubelet has sufficient PID available",
        ),
        _ => ("True", "KubeletReady", "kubelet is posting ready status"),
    };
    let old = prev
        .and_then(|s| s.get("conditions"))
        .and_then(Value::as_array)
        .and_then(|cs| {
            cs.iter()
                .find(|c| c.get("type").and_then(Value::as_str) == Some(type_))
        });
    let since = old
        .filter(|c| c.get("status").and_then(Value::as_str) == Some(status))
        .and_then(|c| c.get("lastTransitionTime"))
        .and_then(Value::as_str)
        .unwrap_or(now);
    json!({
        "type": type_,
        "status": status,
        "lastHeartbeatTime": now,
        "lastTransitionTime": since,
        "reason": reason,
        "message": message,
    })
}

/// Simulated Node `index`'s status at `now`, as its kubelet reports it
/// (`prev` is the stored status, whose transition times are kept).
pub fn status(config: &SimConfig, index: u32, prev: Option<&Value>, now: OffsetDateTime) -> Value {
    let now = timestamp(now);
    let name = name(index);
    let resources = json!({
        "cpu": config.node_cpu,
        "ephemeral-storage": "100Gi",
        "hugepages-1Gi": "0",
        "hugepages-2Mi": "0",
        "memory": config.node_memory,
        "pods": config.node_pods.to_string(),
    });
    let id = format!("{:032x}", u128::from(index) + 0x5e1_0000);
    let conditions: Vec<Value> = ["MemoryPressure", "DiskPressure", "PIDPressure", "Ready"]
        .iter()
        .map(|t| condition(t, prev, &now))
        .collect();
    json!({
        "capacity": resources,
        "allocatable": resources,
        "conditions": conditions,
        "addresses": [
            {"type": "InternalIP", "address": internal_ip(index).to_string()},
            {"type": "Hostname", "address": name},
        ],
        "daemonEndpoints": {"kubeletEndpoint": {"Port": 10250}},
        "nodeInfo": {
            "machineID": id,
            "systemUUID": id,
            "bootID": id,
            "kernelVersion": "6.8.0-skein-sim",
            "osImage": "Skein simulated node",
            "containerRuntimeVersion": "containerd://1.7.27",
            "kubeletVersion": KUBELET_VERSION,
            "kubeProxyVersion": "",
            "operatingSystem": "linux",
            "architecture": "amd64",
        },
    })
}

pub use skein_apiserver::registry::object::micro_timestamp;

/// The Lease in `kube-node-lease` by which Node `node` (uid `uid`)
/// heartbeats at `now`, renewing `prev` (whose acquire time is kept).
pub fn lease(node: &str, uid: &str, prev: Option<&Value>, now: OffsetDateTime) -> Value {
    let renew = micro_timestamp(now);
    let mut lease = prev.cloned().unwrap_or_else(|| {
        json!({
            "apiVersion": "coordination.k8s.io/v1",
            "kind": "Lease",
            "metadata": {"name": node, "namespace": "kube-node-lease"},
        })
    });
    lease["metadata"]["ownerReferences"] = json!([{
        "apiVersion": "v1",
        "kind": "Node",
        "name": node,
        "uid": uid,
    }]);
    lease["spec"] = json!({
        "holderIdentity": node,
        "leaseDurationSeconds": HEARTBEAT.as_secs(),
        "renewTime": renew,
    });
    lease
}

/// Simulated Node `index` as its kubelet registers it at `now`.
pub fn node(config: &SimConfig, index: u32, now: OffsetDateTime) -> Value {
    let cidr = pod_cidr(index, config.node_pods);
    json!({
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {
            "name": name(index),
            "labels": labels(config, index),
            "annotations": {
                SIMULATED: "true",
                "node.alpha.kubernetes.io/ttl": "0",
                "volumes.kubernetes.io/controller-managed-attach-detach": "true",
            },
        },
        "spec": {"podCIDR": cidr, "podCIDRs": [cidr]},
        "status": status(config, index, None, now),
    })
}

/// `current` with the simulator's labels and marker set, or `None` when it
/// already has them.
fn relabelled(config: &SimConfig, index: u32, current: &Value) -> Option<Value> {
    let want = labels(config, index);
    let have = current
        .pointer("/metadata/labels")
        .and_then(Value::as_object)
        .cloned()
        .unwrap_or_default();
    if want.iter().all(|(k, v)| have.get(k) == Some(v)) && is_simulated(current) {
        return None;
    }
    let mut next = current.clone();
    let mut merged = have;
    merged.extend(want);
    object::set_meta(&mut next, "labels", Some(Value::Object(merged)));
    let mut annotations = current
        .pointer("/metadata/annotations")
        .and_then(Value::as_object)
        .cloned()
        .unwrap_or_default();
    annotations.insert(SIMULATED.into(), json!("true"));
    object::set_meta(&mut next, "annotations", Some(Value::Object(annotations)));
    Some(next)
}

/// Registers (or refreshes) simulated Node `index`.
async fn ensure(sim: &Sim, index: u32) -> Result<(), ApiError> {
    let res = Sim::resource("", "v1", "nodes")?;
    let name = name(index);
    let opts = Sim::opts(MANAGER);
    let current = match sim.registry.get(&res, "", &name).await {
        Ok(c) => c,
        Err(e) if e.kind() == ErrorKind::NotFound => {
            let node = node(&sim.config, index, OffsetDateTime::now_utc());
            return match sim.registry.create(&res, "", node, &opts).await {
                Ok(created) => renew_lease(sim, &name, object::uid(&created)).await,
                Err(e) if e.kind() == ErrorKind::AlreadyExists => Ok(()),
                Err(e) => Err(e),
            };
        }
        Err(e) => return Err(e),
    };
    if relabelled(&sim.config, index, &current).is_some() {
        sim.registry
            .update_with(&res, "", &name, Target::Main, &opts, |cur| {
                Ok(relabelled(&sim.config, index, cur).unwrap_or_else(|| cur.clone()))
            })
            .await?;
    }
    sim.registry
        .update_with(&res, "", &name, Target::Status, &opts, |cur| {
            let mut next = cur.clone();
            next["status"] = status(
                &sim.config,
                index,
                cur.get("status"),
                OffsetDateTime::now_utc(),
            );
            Ok(next)
        })
        .await?;
    renew_lease(sim, &name, object::uid(&current)).await
}

/// Creates or renews Node `name`'s Lease.
async fn renew_lease(sim: &Sim, name: &str, uid: &str) -> Result<(), ApiError> {
    let res = Sim::resource("coordination.k8s.io", "v1", "leases")?;
    let opts = Sim::opts(MANAGER);
    let ns = "kube-node-lease";
    let result = sim
        .registry
        .update_with(&res, ns, name, Target::Main, &opts, |cur| {
            let mut next = lease(name, uid, Some(cur), OffsetDateTime::now_utc());
            object::set_meta(&mut next, "resourceVersion", None);
            Ok(next)
        })
        .await;
    match result {
        Err(e) if e.kind() == ErrorKind::NotFound => {
            let fresh = lease(name, uid, None, OffsetDateTime::now_utc());
            match sim.registry.create(&res, ns, fresh, &opts).await {
                Err(e) if e.kind() != ErrorKind::AlreadyExists => Err(e),
                _ => Ok(()),
            }
        }
        other => other.map(|_| ()),
    }
}

/// Deletes simulated Nodes numbered `--sim-nodes` and above.
async fn remove_extra(sim: &Sim) -> Result<(), ApiError> {
    let res = Sim::resource("", "v1", "nodes")?;
    let page = sim
        .registry
        .list(
            &res,
            None,
            &skein_apiserver::registry::list::ListQuery::default(),
        )
        .await?;
    for node in &page.items {
        let name = object::name(node);
        if is_simulated(node) && index_of(name).is_none_or(|i| i >= sim.config.nodes) {
            match sim
                .registry
                .delete(&res, "", name, &DeleteOptions::default())
                .await
            {
                Err(e) if e.kind() != ErrorKind::NotFound => return Err(e),
                _ => {}
            }
        }
    }
    Ok(())
}

/// Registers the simulated Nodes, then heartbeats them (re-registering
/// any that was deleted) until the runtime shuts down.
pub async fn run(sim: Sim) {
    if let Err(e) = remove_extra(&sim).await {
        tracing::warn!(error = %e, "removing extra simulated nodes failed");
    }
    let nodes = match sim.informer("", "v1", "nodes") {
        Ok(i) => i,
        Err(e) => {
            tracing::error!(error = %e, "simulated nodes disabled");
            return;
        }
    };
    let mut notices = nodes.subscription();
    loop {
        for index in 0..sim.config.nodes {
            if let Err(e) = ensure(&sim, index).await {
                tracing::warn!(node = name(index), error = %e, "simulated node heartbeat failed");
            }
        }
        // Wait for the next heartbeat, or re-register a deleted Node at once.
        let deadline = tokio::time::Instant::now() + HEARTBEAT;
        loop {
            tokio::select! {
                () = tokio::time::sleep_until(deadline) => break,
                notice = notices.next() => match notice {
                    Some(skein_apiserver::controllers::informer::Notice::Deleted(n))
                        if index_of(object::name(&n)).is_some_and(|i| i < sim.config.nodes) => break,
                    Some(_) => {}
                    None => return,
                },
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(s: &str) -> OffsetDateTime {
        OffsetDateTime::parse(s, &time::format_description::well_known::Rfc3339).expect("time")
    }

    #[test]
    fn nodes_spread_over_zones_and_carry_capacity() {
        let config = SimConfig {
            zones: vec!["a".into(), "b".into()],
            ..SimConfig::default()
        };
        let now = at("2026-01-01T00:00:00Z");
        let zones: Vec<Value> = (0..3)
            .map(|i| {
                node(&config, i, now)["metadata"]["labels"]["topology.kubernetes.io/zone"].clone()
            })
            .collect();
        assert_eq!(zones, vec![json!("a"), json!("b"), json!("a")]);
        let n = node(&config, 1, now);
        assert_eq!(n["metadata"]["name"], "sim-node-1");
        assert_eq!(
            n["metadata"]["labels"]["kubernetes.io/hostname"],
            "sim-node-1"
        );
        assert_eq!(
            n["metadata"]["labels"]["topology.kubernetes.io/region"],
            "sim-region"
        );
        assert_eq!(n["status"]["capacity"]["cpu"], "8");
        assert_eq!(n["status"]["allocatable"]["pods"], "110");
        assert_eq!(n["status"]["addresses"][0]["address"], "10.89.0.3");
        assert_eq!(n["spec"]["podCIDR"], "10.244.1.0/24");
        // A Node that may hold more Pods than a /24 has addresses gets a
        // block that holds them all.
        assert_eq!(pod_cidr(1, 253), "10.244.1.0/24");
        assert_eq!(pod_cidr(1, 254), "10.244.2.0/23");
        assert_eq!(pod_cidr(3, 1000), "10.244.12.0/22");
        assert_eq!(n["status"]["nodeInfo"]["kubeletVersion"], KUBELET_VERSION);
        assert!(is_simulated(&n));
        assert_eq!(index_of("sim-node-12"), Some(12));
        assert_eq!(index_of("other"), None);
    }

    #[test]
    fn heartbeats_keep_transition_times() {
        let config = SimConfig::default();
        let first = status(&config, 0, None, at("2026-01-01T00:00:00Z"));
        let next = status(&config, 0, Some(&first), at("2026-01-01T00:00:40Z"));
        let ready = &next["conditions"][3];
        assert_eq!(ready["type"], "Ready");
        assert_eq!(ready["status"], "True");
        assert_eq!(ready["reason"], "KubeletReady");
        assert_eq!(ready["lastHeartbeatTime"], "2026-01-01T00:00:40Z");
        assert_eq!(ready["lastTransitionTime"], "2026-01-01T00:00:00Z");
    }

    #[test]
    fn leases_renew_and_point_at_their_node() {
        let now = at("2026-01-01T00:00:00.250Z");
        let l = lease("sim-node-0", "u0", None, now);
        assert_eq!(l["metadata"]["namespace"], "kube-node-lease");
        assert_eq!(l["spec"]["renewTime"], "2026-01-01T00:00:00.250000Z");
        assert_eq!(l["spec"]["holderIdentity"], "sim-node-0");
        assert_eq!(l["metadata"]["ownerReferences"][0]["uid"], "u0");
        let later = lease("sim-node-0", "u0", Some(&l), at("2026-01-01T00:00:40Z"));
        assert_eq!(later["spec"]["renewTime"], "2026-01-01T00:00:40.000000Z");
    }

    #[test]
    fn relabelling_is_idempotent() {
        let config = SimConfig::default();
        let now = at("2026-01-01T00:00:00Z");
        let mut n = node(&config, 0, now);
        assert!(relabelled(&config, 0, &n).is_none());
        n["metadata"]["labels"] = json!({"extra": "kept"});
        let fixed = relabelled(&config, 0, &n).expect("relabelled");
        assert_eq!(fixed["metadata"]["labels"]["extra"], "kept");
        assert!(relabelled(&config, 0, &fixed).is_none());
    }
}
