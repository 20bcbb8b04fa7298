//! The mutating plugin that gives Services their cluster IPs, IP family
//! fields and node ports.

use std::sync::Arc;

use serde_json::{Map, Value, json};

use super::{AllocError, ServiceAllocator, held};
use crate::json::{arr, object_name, str_of};
use crate::{Attributes, Cause, Denial, Mutate, Operation};

const NAME: &str = "ServiceIPAllocation";

/// Allocates `spec.clusterIP`/`clusterIPs` from the service CIDR, fills
/// `ipFamilies`/`ipFamilyPolicy` (single-stack IPv4 cluster), and allocates
/// node ports (NodePort and LoadBalancer Services) and the health-check
/// node port (LoadBalancer with `externalTrafficPolicy: Local`), as
/// upstream's Service REST storage does. On update, values the client left
/// out are carried over from the stored object first (upstream
/// `patchAllocatedValues`), so `kubectl apply`/`replace` of a manifest
/// without them keeps them.
///
/// Register it after [`crate::defaults::Defaults`] (it relies on
/// `spec.type` being defaulted). See the module docs for
/// [`super::rollback`] and [`super::release`].
#[derive(Clone)]
pub struct ServiceAllocation {
    allocator: Arc<dyn ServiceAllocator>,
}

impl ServiceAllocation {
    /// The plugin over `allocator`.
    pub fn new(allocator: Arc<dyn ServiceAllocator>) -> Self {
        Self { allocator }
    }
}

impl Mutate for ServiceAllocation {
    fn name(&self) -> &str {
        NAME
    }

    fn handles(&self, op: Operation) -> bool {
        matches!(op, Operation::Create | Operation::Update)
    }

    fn admit(&self, attrs: &mut Attributes) -> Result<(), Denial> {
        if attrs.subresource.is_some() || !attrs.gvk.group.is_empty() || attrs.gvk.kind != "Service"
        {
            return Ok(());
        }
        let old = if attrs.operation == Operation::Update {
            attrs.old_object.clone()
        } else {
            None
        };
        let dry_run = attrs.dry_run;
        let gvk = attrs.gvk.clone();
        let fallback = attrs.name.clone();
        let Some(obj) = attrs.object.as_mut() else {
            return Ok(());
        };
        let name = object_name(obj, &fallback);
        let mut txn = Txn {
            allocator: self.allocator.as_ref(),
            dry_run,
            ips: Vec::new(),
            ports: Vec::new(),
        };
        let result = allocate(&mut txn, obj, old.as_ref());
        match result {
            Ok(()) => Ok(()),
            Err(e) => {
                txn.undo();
                Err(match e {
                    Failure::Invalid(cause) => Denial::invalid(&gvk, name, vec![cause]),
                    Failure::Internal(msg) => Denial::internal(NAME, msg),
                })
            }
        }
    }
}

enum Failure {
    Invalid(Cause),
    Internal(String),
}

/// What this request took, to give back if a later step fails.
struct Txn<'a> {
    allocator: &'a dyn ServiceAllocator,
    dry_run: bool,
    ips: Vec<String>,
    ports: Vec<u16>,
}

impl Txn<'_> {
    fn undo(&self) {
        if self.dry_run {
            return;
        }
        for ip in &self.ips {
            self.allocator.release_cluster_ip(ip);
        }
        for p in &self.ports {
            self.allocator.release_node_port(*p);
        }
    }

    fn node_port(&mut self) -> Result<u16, Failure> {
        // A dry run takes nothing, so avoid handing out one value twice.
        for _ in 0..16 {
            let p = self
                .allocator
                .allocate_node_port(self.dry_run)
                .map_err(|e| Failure::Internal(format!("failed to allocate a nodePort: {e}")))?;
            if !self.ports.contains(&p) {
                self.ports.push(p);
                return Ok(p);
            }
        }
        Err(Failure::Internal(
            "failed to allocate a nodePort: range is full".into(),
        ))
    }

    fn reserve_port(&mut self, port: u16, field: String) -> Result<(), Failure> {
        self.allocator
            .reserve_node_port(port, self.dry_run)
            .map_err(|e| Failure::Invalid(Cause::invalid(field, &json!(port), e.to_string())))?;
        self.ports.push(port);
        Ok(())
    }
}

fn needs_cluster_ip(spec: &Map<String, Value>) -> bool {
    str_of(spec, "type") != "ExternalName"
}

fn needs_node_port(spec: &Map<String, Value>) -> bool {
    matches!(str_of(spec, "type"), "NodePort" | "LoadBalancer")
}

fn needs_health_check_port(spec: &Map<String, Value>) -> bool {
    str_of(spec, "type") == "LoadBalancer" && str_of(spec, "externalTrafficPolicy") == "Local"
}

fn port_number(v: Option<&Value>) -> u16 {
    v.and_then(Value::as_u64)
        .and_then(|n| u16::try_from(n).ok())
        .unwrap_or(0)
}

fn cluster_ips(spec: &Map<String, Value>) -> Vec<String> {
    arr(spec, "clusterIPs")
        .iter()
        .filter_map(Value::as_str)
        .map(str::to_owned)
        .collect()
}

fn allocate(txn: &mut Txn<'_>, obj: &mut Value, old: Option<&Value>) -> Result<(), Failure> {
    let old_spec = old.and_then(|o| o.get("spec")).and_then(Value::as_object);
    let Some(spec) = obj.get_mut("spec").and_then(Value::as_object_mut) else {
        return Ok(());
    };
    if let Some(old_spec) = old_spec {
        drop_type_dependent(spec, old_spec);
        patch_allocated(spec, old_spec);
    }
    normalize_cluster_ips(spec, old_spec);
    if !needs_cluster_ip(spec) {
        return Ok(());
    }
    ip_families(spec, old_spec)?;
    let old_held = old.map(held).unwrap_or_default();

    // Cluster IPs.
    let ips = cluster_ips(spec);
    match ips.first().map(String::as_str) {
        None | Some("") => {
            let ip = txn
                .allocator
                .allocate_cluster_ip(txn.dry_run)
                .map_err(|e| Failure::Internal(format!("failed to allocate a serviceIP: {e}")))?;
            txn.ips.push(ip.clone());
            spec.insert("clusterIP".into(), json!(ip));
            spec.insert("clusterIPs".into(), json!([ip]));
        }
        Some("None") => {}
        Some(_) => {
            for (i, ip) in ips.iter().enumerate() {
                if old_held.ips.contains(ip) {
                    continue;
                }
                match txn.allocator.reserve_cluster_ip(ip, txn.dry_run) {
                    Ok(()) => txn.ips.push(ip.clone()),
                    Err(AllocError::NotAnIp) => {
                        return Err(Failure::Invalid(Cause::invalid(
                            format!("spec.clusterIPs[{i}]"),
                            &json!(ip),
                            "must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)",
                        )));
                    }
                    Err(e) => {
                        return Err(Failure::Invalid(Cause::invalid(
                            "spec.clusterIPs",
                            &json!(ips),
                            format!("failed to allocate IP {ip}: {e}"),
                        )));
                    }
                }
            }
            if crate::json::empty_str(spec, "clusterIP") {
                spec.insert("clusterIP".into(), json!(ips[0]));
            }
        }
    }

    // Node ports.
    let allocate_new = match str_of(spec, "type") {
        "NodePort" => true,
        "LoadBalancer" => {
            spec.get("allocateLoadBalancerNodePorts")
                .and_then(Value::as_bool)
                != Some(false)
        }
        _ => false,
    };
    if needs_node_port(spec) {
        let mut seen: Vec<u16> = Vec::new();
        let count = arr(spec, "ports").len();
        for i in 0..count {
            let current = port_number(
                spec.get("ports")
                    .and_then(|p| p.get(i))
                    .and_then(|p| p.get("nodePort")),
            );
            if current != 0 {
                if !seen.contains(&current) && !old_held.ports.contains(&current) {
                    txn.reserve_port(current, format!("spec.ports[{i}].nodePort"))?;
                }
                seen.push(current);
            } else if allocate_new {
                let p = txn.node_port()?;
                seen.push(p);
                if let Some(port) = spec
                    .get_mut("ports")
                    .and_then(|p| p.get_mut(i))
                    .and_then(Value::as_object_mut)
                {
                    port.insert("nodePort".into(), json!(p));
                }
            }
        }
    }
    if needs_health_check_port(spec) {
        let current = port_number(spec.get("healthCheckNodePort"));
        if current == 0 {
            let p = txn.node_port()?;
            spec.insert("healthCheckNodePort".into(), json!(p));
        } else if !old_held.ports.contains(&current) {
            txn.reserve_port(current, "spec.healthCheckNodePort".into())?;
        }
    }
    Ok(())
}

/// Upstream `dropTypeDependentFields`: on update, a field the new `type`
/// does not use is cleared when the client left it as it was (a value the
/// client changed is left for validation to judge). Cleared node ports and
/// cluster IPs are released with the write.
fn drop_type_dependent(spec: &mut Map<String, Value>, old: &Map<String, Value>) {
    let same = |spec: &Map<String, Value>, key: &str| spec.get(key) == old.get(key);
    if needs_cluster_ip(old) && !needs_cluster_ip(spec) {
        if str_of(spec, "clusterIP") == str_of(old, "clusterIP")
            && cluster_ips(spec) == cluster_ips(old)
        {
            spec.remove("clusterIP");
            spec.remove("clusterIPs");
        }
        if same(spec, "ipFamilies") {
            spec.remove("ipFamilies");
        }
        if str_of(spec, "ipFamilyPolicy") == str_of(old, "ipFamilyPolicy") {
            spec.remove("ipFamilyPolicy");
        }
    }
    let node_ports = |s: &Map<String, Value>| -> Vec<u16> {
        arr(s, "ports")
            .iter()
            .map(|p| port_number(p.get("nodePort")))
            .filter(|p| *p != 0)
            .collect()
    };
    if needs_node_port(old) && !needs_node_port(spec) {
        // Ports may be added, removed or changed, as long as no node port
        // is new.
        let before = node_ports(old);
        if node_ports(spec).iter().all(|p| before.contains(p)) {
            crate::json::each_obj_mut(spec, "ports", |p| {
                p.remove("nodePort");
            });
        }
    }
    if needs_health_check_port(old)
        && !needs_health_check_port(spec)
        && port_number(spec.get("healthCheckNodePort"))
            == port_number(old.get("healthCheckNodePort"))
    {
        spec.remove("healthCheckNodePort");
    }
    let load_balancer = |s: &Map<String, Value>| str_of(s, "type") == "LoadBalancer";
    if load_balancer(old) && !load_balancer(spec) {
        let allocate = "allocateLoadBalancerNodePorts";
        if spec.get(allocate).is_some_and(|v| !v.is_null())
            && old.get(allocate).is_some_and(|v| !v.is_null())
            && same(spec, allocate)
        {
            spec.remove(allocate);
        }
        if same(spec, "loadBalancerClass") {
            spec.remove("loadBalancerClass");
        }
    }
}

/// Upstream `patchAllocatedValues`: on update, values the client omitted
/// are restored from the stored object.
fn patch_allocated(spec: &mut Map<String, Value>, old: &Map<String, Value>) {
    if needs_cluster_ip(old) && needs_cluster_ip(spec) {
        if crate::json::empty_str(spec, "clusterIP")
            && let Some(ip) = old.get("clusterIP")
        {
            spec.insert("clusterIP".into(), ip.clone());
        }
        if cluster_ips(spec).is_empty()
            && let Some(ips) = old
                .get("clusterIPs")
                .filter(|v| v.as_array().is_some_and(|a| !a.is_empty()))
        {
            spec.insert("clusterIPs".into(), ips.clone());
        }
        for key in ["ipFamilies", "ipFamilyPolicy"] {
            if crate::json::unset(spec, key)
                && let Some(v) = old.get(key)
            {
                spec.insert(key.into(), v.clone());
            }
        }
    }
    if needs_node_port(old) && needs_node_port(spec) {
        let used: Vec<u16> = arr(spec, "ports")
            .iter()
            .map(|p| port_number(p.get("nodePort")))
            .collect();
        let by_name: Vec<(String, u16)> = arr(old, "ports")
            .iter()
            .map(|p| {
                (
                    p.get("name")
                        .and_then(Value::as_str)
                        .unwrap_or_default()
                        .to_owned(),
                    port_number(p.get("nodePort")),
                )
            })
            .collect();
        crate::json::each_obj_mut(spec, "ports", |p| {
            if port_number(p.get("nodePort")) != 0 {
                return;
            }
            let name = str_of(p, "name");
            if let Some((_, old_port)) = by_name.iter().rev().find(|(n, _)| n == name)
                && *old_port != 0
                && !used.contains(old_port)
            {
                p.insert("nodePort".into(), json!(old_port));
            }
        });
    }
    if needs_health_check_port(old)
        && needs_health_check_port(spec)
        && port_number(spec.get("healthCheckNodePort")) == 0
        && let Some(v) = old.get("healthCheckNodePort")
    {
        spec.insert("healthCheckNodePort".into(), v.clone());
    }
}

/// Upstream `normalizeClusterIPs`: keeps the singular and plural fields in
/// step for clients that only know one of them.
fn normalize_cluster_ips(spec: &mut Map<String, Value>, old: Option<&Map<String, Value>>) {
    let ip = str_of(spec, "clusterIP").to_owned();
    let ips = cluster_ips(spec);
    let Some(old) = old else {
        if !ip.is_empty() && ips.is_empty() {
            spec.insert("clusterIPs".into(), json!([ip]));
        }
        return;
    };
    let old_ip = str_of(old, "clusterIP");
    let old_ips = cluster_ips(old);
    if !old_ips.is_empty() && ips.is_empty() && old_ip == ip {
        spec.insert("clusterIPs".into(), json!(old_ips));
    }
    if old_ip != ip {
        let same = cluster_ips(spec) == old_ips;
        if !old_ip.is_empty() && ip.is_empty() {
            if same {
                spec.remove("clusterIPs");
            }
        } else if same {
            spec.insert("clusterIPs".into(), json!([ip]));
        }
    }
}

/// `ipFamilyPolicy`/`ipFamilies` on a single-stack IPv4 cluster (upstream
/// `initIPFamilyFields`): headless Services without a selector default to
/// RequireDualStack (every family the cluster has), others to SingleStack.
fn ip_families(
    spec: &mut Map<String, Value>,
    _old: Option<&Map<String, Value>>,
) -> Result<(), Failure> {
    let headless = cluster_ips(spec).first().map(String::as_str) == Some("None");
    let selectorless = spec
        .get("selector")
        .and_then(Value::as_object)
        .is_none_or(Map::is_empty);
    for (i, fam) in arr(spec, "ipFamilies").iter().enumerate() {
        if fam.as_str() != Some("IPv4") {
            return Err(Failure::Invalid(Cause::invalid(
                format!("spec.ipFamilies[{i}]"),
                fam,
                "not configured on this cluster",
            )));
        }
    }
    if crate::json::unset(spec, "ipFamilyPolicy") {
        let policy = if headless && selectorless {
            "RequireDualStack"
        } else {
            "SingleStack"
        };
        spec.insert("ipFamilyPolicy".into(), json!(policy));
    } else if str_of(spec, "ipFamilyPolicy") == "RequireDualStack" && !(headless && selectorless) {
        return Err(Failure::Invalid(Cause::invalid(
            "spec.ipFamilyPolicy",
            &json!("RequireDualStack"),
            "this cluster is not configured for dual-stack services",
        )));
    }
    let no_families = spec
        .get("ipFamilies")
        .and_then(Value::as_array)
        .is_none_or(Vec::is_empty);
    if no_families {
        spec.insert("ipFamilies".into(), json!(["IPv4"]));
    }
    Ok(())
}

#[cfg(test)]
#[path = "plugin/tests.rs"]
mod tests;
