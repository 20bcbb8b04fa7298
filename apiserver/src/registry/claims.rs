//! Service address claims in the store, so that replicas sharing one store
//! never hand out the same cluster IP or node port.
//!
//! The in-memory allocator (`skein_admission::allocator`) picks candidates
//! and answers most conflicts at once; the store decides. Before a Service
//! write that holds a cluster IP or node port its previous version did not,
//! the registry claims it:
//! - a cluster IP by creating the `networking.k8s.io/v1` `IPAddress` named
//!   by the address, with `spec.parentRef` naming the Service, as
//!   kube-apiserver's IPAddress allocator (1.33, `MultiCIDRServiceAllocator`);
//! - a node port by creating the key [`NODE_PORTS`]`<port>` (upstream keeps
//!   a bitmap under `/registry/ranges/servicenodeports`; a key per port needs
//!   no compare-and-swap on one hot key). It lies outside `/registry/`, so no
//!   resource listing reads it.
//!
//! Contract:
//! - A claim that exists for another Service is a conflict: an address the
//!   allocator chose is replaced by another one (up to [`ATTEMPTS`] times);
//!   one the request asked for is upstream's 422 `provided IP is already
//!   allocated` / `provided port is already allocated`. A claim that already
//!   names this Service (a retried write) is kept.
//! - A write that fails after claiming gives its claims back
//!   ([`Registry::drop_claims`]); a committed update or delete releases what
//!   the old object held and the new one does not
//!   ([`Registry::release_claims`]), only where the claim names this
//!   Service.
//! - Dry runs claim nothing.

use std::collections::{BTreeMap, BTreeSet};

use serde_json::{Value, json};
use skein_admission::allocator::{self, InMemoryAllocator, ServiceAllocator};
use skein_storage::Error as StoreError;

use super::{Registry, WriteOptions, resource};
use crate::status::{ApiError, Cause};

/// The store prefix of node port claims.
pub const NODE_PORTS: &str = "/skein/servicenodeports/";

/// How often a chosen address is replaced after a conflict before the
/// write fails.
const ATTEMPTS: usize = 32;

/// The field manager of the IPAddress objects.
const MANAGER: &str = "kube-apiserver";

/// The outcome of one claim.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Claim {
    /// Created now for this Service.
    Created,
    /// It already named this Service (kept, not given back on failure).
    Ours,
    /// Another Service holds it.
    Taken,
}

/// What one write claimed (to give back if the write fails).
#[derive(Debug, Default)]
pub struct Claims {
    ips: Vec<String>,
    ports: Vec<u16>,
}

/// Whether a claim's owner is the Service `ns`/`name`.
fn names(parent: &Value, ns: &str, name: &str) -> bool {
    parent["namespace"] == ns && parent["name"] == name
}

impl Registry {
    /// Claims what `obj` (Service `ns`/`name`, about to be written) holds
    /// and `old` did not. `requested` is what the request itself asked
    /// for (before admission allocated): those are never replaced.
    /// Addresses the allocator chose that another Service claimed are
    /// replaced in `obj` by new ones.
    pub(super) async fn claim_service(
        &self,
        alloc: &InMemoryAllocator,
        ns: &str,
        name: &str,
        old: Option<&Value>,
        obj: &mut Value,
        requested: &allocator::Held,
    ) -> Result<Claims, ApiError> {
        let mut claims = Claims::default();
        let result = self
            .claim_into(alloc, ns, name, old, obj, requested, &mut claims)
            .await;
        match result {
            Ok(()) => Ok(claims),
            Err(e) => {
                self.drop_claims(alloc, ns, name, &claims).await;
                Err(e)
            }
        }
    }

    #[allow(clippy::too_many_arguments)]
    async fn claim_into(
        &self,
        alloc: &InMemoryAllocator,
        ns: &str,
        name: &str,
        old: Option<&Value>,
        obj: &mut Value,
        requested: &allocator::Held,
        claims: &mut Claims,
    ) -> Result<(), ApiError> {
        let old_held = old.map(allocator::held).unwrap_or_default();
        let held = allocator::held(obj);
        for (i, ip) in held.ips.iter().enumerate() {
            if old_held.ips.contains(ip) {
                continue;
            }
            let mut ip = ip.clone();
            let mut attempts = 0;
            loop {
                match self.claim_ip(ns, name, &ip).await? {
                    Claim::Created => {
                        claims.ips.push(ip);
                        break;
                    }
                    Claim::Ours => break,
                    Claim::Taken => {}
                }
                // Held by another Service (another replica took it).
                if requested.ips.contains(&ip) {
                    return Err(ApiError::invalid(
                        "",
                        "Service",
                        name,
                        vec![Cause::invalid(
                            "spec.clusterIPs",
                            skein_admission::render_value(&json!(held.ips)),
                            format!(
                                "failed to allocate IP {ip}: {}",
                                allocator::AllocError::IpAllocated
                            ),
                        )],
                    ));
                }
                attempts += 1;
                if attempts >= ATTEMPTS {
                    return Err(ApiError::internal(format!(
                        "failed to allocate a serviceIP: {ATTEMPTS} addresses in a row were taken by other servers"
                    )));
                }
                ip = alloc.allocate_cluster_ip(false).map_err(|e| {
                    ApiError::internal(format!("failed to allocate a serviceIP: {e}"))
                })?;
                replace_ip(obj, i, &ip);
            }
        }
        for port in &held.ports {
            if old_held.ports.contains(port) {
                continue;
            }
            let mut port = *port;
            let mut attempts = 0;
            loop {
                match self.claim_port(ns, name, port).await? {
                    Claim::Created => {
                        claims.ports.push(port);
                        break;
                    }
                    Claim::Ours => break,
                    Claim::Taken => {}
                }
                if requested.ports.contains(&port) {
                    return Err(ApiError::invalid(
                        "",
                        "Service",
                        name,
                        vec![Cause::invalid(
                            "spec.ports[*].nodePort",
                            skein_admission::render_value(&json!(port)),
                            allocator::AllocError::PortAllocated.to_string(),
                        )],
                    ));
                }
                attempts += 1;
                if attempts >= ATTEMPTS {
                    return Err(ApiError::internal(format!(
                        "failed to allocate a nodePort: {ATTEMPTS} ports in a row were taken by other servers"
                    )));
                }
                let next = alloc.allocate_node_port(false).map_err(|e| {
                    ApiError::internal(format!("failed to allocate a nodePort: {e}"))
                })?;
                replace_port(obj, port, next);
                port = next;
            }
        }
        Ok(())
    }

    /// Creates the IPAddress `ip` for Service `ns`/`name`.
    async fn claim_ip(&self, ns: &str, name: &str, ip: &str) -> Result<Claim, ApiError> {
        let res = resource::builtin("networking.k8s.io", "v1", "ipaddresses")
            .ok_or_else(|| ApiError::internal("networking.k8s.io/v1 ipaddresses is not served"))?;
        let opts = WriteOptions {
            field_manager: MANAGER.into(),
            ..WriteOptions::default()
        };
        match Box::pin(self.create(&res, "", ip_address(ns, name, ip), &opts)).await {
            Ok(_) => Ok(Claim::Created),
            Err(e) if e.code().as_u16() == 409 => match self.get(&res, "", ip).await {
                Ok(existing) if names(&existing["spec"]["parentRef"], ns, name) => Ok(Claim::Ours),
                Ok(_) => Ok(Claim::Taken),
                // Released meanwhile: try again once.
                Err(e) if e.code().as_u16() == 404 => {
                    let again = self.create(&res, "", ip_address(ns, name, ip), &opts);
                    Ok(match Box::pin(again).await {
                        Ok(_) => Claim::Created,
                        Err(_) => Claim::Taken,
                    })
                }
                Err(e) => Err(e),
            },
            Err(e) => Err(e),
        }
    }

    /// Creates the claim of node port `port` for Service `ns`/`name`.
    async fn claim_port(&self, ns: &str, name: &str, port: u16) -> Result<Claim, ApiError> {
        let key = format!("{NODE_PORTS}{port}");
        let value = json!({"namespace": ns, "name": name}).to_string();
        match self.store.create(&key, value.as_bytes()).await {
            Ok(_) => Ok(Claim::Created),
            Err(StoreError::AlreadyExists { .. }) => match self.store.get(&key).await {
                Ok(kv) => Ok(
                    if serde_json::from_slice::<Value>(&kv.value)
                        .is_ok_and(|owner| names(&owner, ns, name))
                    {
                        Claim::Ours
                    } else {
                        Claim::Taken
                    },
                ),
                Err(StoreError::NotFound { .. }) => {
                    Ok(match self.store.create(&key, value.as_bytes()).await {
                        Ok(_) => Claim::Created,
                        Err(_) => Claim::Taken,
                    })
                }
                Err(e) => Err(super::store_error(e)),
            },
            Err(e) => Err(super::store_error(e)),
        }
    }

    /// Gives back what a failed write claimed: the claims and the
    /// allocator's memory of them.
    pub(super) async fn drop_claims(
        &self,
        alloc: &InMemoryAllocator,
        ns: &str,
        name: &str,
        claims: &Claims,
    ) {
        for ip in &claims.ips {
            self.unclaim_ip(ns, name, ip).await;
            alloc.release_cluster_ip(ip);
        }
        for port in &claims.ports {
            self.unclaim_port(ns, name, *port).await;
            alloc.release_node_port(*port);
        }
    }

    /// After a committed update (`new` = the stored object) or delete
    /// (`new` = `None`) of Service `ns`/`name`: deletes the claims of what
    /// `old` held and `new` does not.
    pub(super) async fn release_claims(
        &self,
        ns: &str,
        name: &str,
        old: &Value,
        new: Option<&Value>,
    ) {
        let before = allocator::held(old);
        let after = new.map(allocator::held).unwrap_or_default();
        for ip in before.ips.iter().filter(|ip| !after.ips.contains(ip)) {
            self.unclaim_ip(ns, name, ip).await;
        }
        for port in before.ports.iter().filter(|p| !after.ports.contains(p)) {
            self.unclaim_port(ns, name, *port).await;
        }
    }

    /// Deletes the IPAddress `ip` if it names Service `ns`/`name`
    /// (failures are logged: the repair removes what is left).
    async fn unclaim_ip(&self, ns: &str, name: &str, ip: &str) {
        let Some(res) = resource::builtin("networking.k8s.io", "v1", "ipaddresses") else {
            return;
        };
        let key = super::key::object(&res, "", ip);
        let Ok(kv) = self.store.get(&key).await else {
            return;
        };
        let ours = serde_json::from_slice::<Value>(&kv.value)
            .is_ok_and(|a| names(&a["spec"]["parentRef"], ns, name));
        if ours && let Err(e) = self.store.delete(&key, Some(kv.mod_revision)).await {
            tracing::warn!(ip, error = %e, "releasing the IPAddress failed");
        }
    }

    /// Deletes the claim of node port `port` if it names Service `ns`/`name`.
    async fn unclaim_port(&self, ns: &str, name: &str, port: u16) {
        let key = format!("{NODE_PORTS}{port}");
        let Ok(kv) = self.store.get(&key).await else {
            return;
        };
        let ours =
            serde_json::from_slice::<Value>(&kv.value).is_ok_and(|owner| names(&owner, ns, name));
        if ours && let Err(e) = self.store.delete(&key, Some(kv.mod_revision)).await {
            tracing::warn!(port, error = %e, "releasing the node port claim failed");
        }
    }
}

/// Claims found on one repair pass that no stored Service holds; deleted
/// when the next pass finds them still unheld (a write between its claim
/// and its store write is never mistaken for a leak).
#[derive(Debug, Default)]
pub struct Suspects {
    ips: BTreeSet<String>,
    ports: BTreeSet<u16>,
}

/// What one repair pass did.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Repaired {
    /// Claims created for what stored Services held without one.
    pub created: usize,
    /// Leaked claims deleted.
    pub deleted: usize,
}

impl Registry {
    /// Makes the claims agree with the stored Services (upstream's repair
    /// controllers): creates the claims a stored Service's addresses and
    /// ports lack (Services stored before claims existed, or written by a
    /// crashed server), and deletes claims that no stored Service holds on
    /// two consecutive passes.
    pub async fn repair_claims(&self, suspects: &mut Suspects) -> Result<Repaired, ApiError> {
        let (Some(services), Some(addresses)) = (
            resource::builtin("", "v1", "services"),
            resource::builtin("networking.k8s.io", "v1", "ipaddresses"),
        ) else {
            return Ok(Repaired::default());
        };
        let mut ips: BTreeMap<String, (String, String)> = BTreeMap::new();
        let mut ports: BTreeMap<u16, (String, String)> = BTreeMap::new();
        for svc in self.all_of(&services).await? {
            let owner = (
                super::object::namespace(&svc).to_owned(),
                super::object::name(&svc).to_owned(),
            );
            let held = allocator::held(&svc);
            for ip in held.ips {
                ips.insert(ip, owner.clone());
            }
            for port in held.ports {
                ports.insert(port, owner.clone());
            }
        }
        let mut done = Repaired::default();
        let mut claimed_ips = BTreeSet::new();
        for a in self.all_of(&addresses).await? {
            if a["metadata"]["labels"]["ipaddress.kubernetes.io/managed-by"] != "ipallocator.k8s.io"
            {
                continue;
            }
            let ip = super::object::name(&a).to_owned();
            let parent = &a["spec"]["parentRef"];
            let held = ips.get(&ip).is_some_and(|(ns, n)| names(parent, ns, n));
            if held {
                suspects.ips.remove(&ip);
                claimed_ips.insert(ip);
            } else if suspects.ips.remove(&ip) {
                let ns = parent["namespace"].as_str().unwrap_or_default();
                let name = parent["name"].as_str().unwrap_or_default();
                self.unclaim_ip(ns, name, &ip).await;
                done.deleted += 1;
            } else {
                suspects.ips.insert(ip);
            }
        }
        let listed = self
            .store
            .list(NODE_PORTS, skein_storage::ListOptions::default())
            .await
            .map_err(super::store_error)?;
        let mut claimed_ports = BTreeSet::new();
        for kv in listed.items {
            let Some(port) = kv
                .key
                .strip_prefix(NODE_PORTS)
                .and_then(|p| p.parse::<u16>().ok())
            else {
                continue;
            };
            let owner: Value = serde_json::from_slice(&kv.value).unwrap_or_default();
            let held = ports.get(&port).is_some_and(|(ns, n)| names(&owner, ns, n));
            if held {
                suspects.ports.remove(&port);
                claimed_ports.insert(port);
            } else if suspects.ports.remove(&port) {
                let ns = owner["namespace"].as_str().unwrap_or_default();
                let name = owner["name"].as_str().unwrap_or_default();
                self.unclaim_port(ns, name, port).await;
                done.deleted += 1;
            } else {
                suspects.ports.insert(port);
            }
        }
        for (ip, (ns, name)) in &ips {
            if claimed_ips.contains(ip) {
                continue;
            }
            match self.claim_ip(ns, name, ip).await? {
                Claim::Created => done.created += 1,
                Claim::Ours => {}
                Claim::Taken => {
                    tracing::warn!(ip, service = %format!("{ns}/{name}"), "two Services hold one cluster IP")
                }
            }
        }
        for (port, (ns, name)) in &ports {
            if claimed_ports.contains(port) {
                continue;
            }
            match self.claim_port(ns, name, *port).await? {
                Claim::Created => done.created += 1,
                Claim::Ours => {}
                Claim::Taken => {
                    tracing::warn!(port, service = %format!("{ns}/{name}"), "two Services hold one node port")
                }
            }
        }
        Ok(done)
    }
}

/// The IPAddress object of `ip` held by Service `ns`/`name`, as
/// kube-apiserver's allocator writes it.
fn ip_address(ns: &str, name: &str, ip: &str) -> Value {
    let family = if ip.contains(':') { "IPv6" } else { "IPv4" };
    json!({
        "apiVersion": "networking.k8s.io/v1",
        "kind": "IPAddress",
        "metadata": {
            "name": ip,
            "labels": {
                "ipaddress.kubernetes.io/ip-family": family,
                "ipaddress.kubernetes.io/managed-by": "ipallocator.k8s.io",
            },
        },
        "spec": {"parentRef": {"resource": "services", "namespace": ns, "name": name}},
    })
}

/// Puts `ip` at `spec.clusterIPs[i]` (and `spec.clusterIP` for the first).
fn replace_ip(obj: &mut Value, i: usize, ip: &str) {
    if let Some(slot) = obj
        .pointer_mut("/spec/clusterIPs")
        .and_then(Value::as_array_mut)
        .and_then(|a| a.get_mut(i))
    {
        *slot = json!(ip);
    }
    if i == 0 {
        obj["spec"]["clusterIP"] = json!(ip);
    }
}

/// Replaces node port `old` by `new` wherever the Service uses it.
fn replace_port(obj: &mut Value, old: u16, new: u16) {
    if let Some(ports) = obj.pointer_mut("/spec/ports").and_then(Value::as_array_mut) {
        for p in ports {
            if p["nodePort"] == old {
                p["nodePort"] = json!(new);
            }
        }
    }
    if obj["spec"]["healthCheckNodePort"] == old {
        obj["spec"]["healthCheckNodePort"] = json!(new);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn replacing_an_address_or_port_touches_only_it() {
        let mut svc = json!({"spec": {
            "clusterIP": "10.0.0.5", "clusterIPs": ["10.0.0.5"],
            "ports": [{"port": 80, "nodePort": 30001}, {"port": 81, "nodePort": 30002}],
            "healthCheckNodePort": 30001,
        }});
        replace_ip(&mut svc, 0, "10.0.0.9");
        replace_port(&mut svc, 30001, 30007);
        assert_eq!(svc["spec"]["clusterIP"], "10.0.0.9");
        assert_eq!(svc["spec"]["clusterIPs"], json!(["10.0.0.9"]));
        assert_eq!(svc["spec"]["ports"][0]["nodePort"], 30007);
        assert_eq!(svc["spec"]["ports"][1]["nodePort"], 30002);
        assert_eq!(svc["spec"]["healthCheckNodePort"], 30007);
    }
}
