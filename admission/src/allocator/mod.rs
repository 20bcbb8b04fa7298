//! Service cluster IP and node port allocation (upstream
//! `pkg/registry/core/service/storage/alloc.go`), as a mutating plugin
//! over an allocator the apiserver owns.
//!
//! Life cycle of an allocation, which the caller completes:
//! - [`ServiceAllocation`] (a mutator) allocates what a Service needs on
//!   create and on update and writes it into the object;
//! - if the write then fails (validation, conflict, storage), the caller
//!   hands back what was taken with [`rollback`];
//! - after a committed update or delete, the caller frees what the old
//!   object held and the new one does not with [`release`];
//! - dry runs take nothing, so neither is called for them.
//!
//! A periodic repair ([`InMemoryAllocator::repair`]) catches anything a
//! crash or a missed call leaked.

mod bitmap;
mod plugin;

use std::fmt;

use serde_json::Value;

pub use bitmap::InMemoryAllocator;
pub use plugin::ServiceAllocation;

/// Upstream's default service CIDR.
pub const DEFAULT_SERVICE_CIDR: &str = "10.96.0.0/12";
/// Upstream's default node port range.
pub const DEFAULT_NODE_PORTS: std::ops::RangeInclusive<u16> = 30000..=32767;

/// Why an address or port could not be had; `Display` is upstream's text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AllocError {
    /// `provided IP is already allocated`.
    IpAllocated,
    /// `the provided IP (…) is not in the valid range. The range of valid IPs is …`.
    IpNotInRange {
        /// The IP asked for.
        ip: String,
        /// The service CIDR.
        range: String,
    },
    /// `range is full` (no free service IP).
    IpRangeFull,
    /// The text is not an IP address.
    NotAnIp,
    /// `provided port is already allocated`.
    PortAllocated,
    /// `provided port is not in the valid range. The range of valid ports is …`.
    PortNotInRange {
        /// The node port range, `lo-hi`.
        range: String,
    },
    /// `range is full` (no free node port).
    PortRangeFull,
    /// The allocator itself failed.
    Internal(String),
}

impl fmt::Display for AllocError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            AllocError::IpAllocated => f.write_str("provided IP is already allocated"),
            AllocError::IpNotInRange { ip, range } => write!(
                f,
                "the provided IP ({ip}) is not in the valid range. The range of valid IPs is {range}"
            ),
            AllocError::IpRangeFull | AllocError::PortRangeFull => f.write_str("range is full"),
            AllocError::NotAnIp => f.write_str("not a valid IP address"),
            AllocError::PortAllocated => f.write_str("provided port is already allocated"),
            AllocError::PortNotInRange { range } => write!(
                f,
                "provided port is not in the valid range. The range of valid ports is {range}"
            ),
            AllocError::Internal(m) => f.write_str(m),
        }
    }
}

/// Where Service addresses and node ports come from. Implementations are
/// shared by all requests and must be internally synchronized.
///
/// Contract: with `dry_run` nothing is taken (allocate returns a currently
/// free value; reserve only checks). `release_*` of a value not held is a
/// no-op.
pub trait ServiceAllocator: Send + Sync {
    /// A free cluster IP, taken unless `dry_run`.
    ///
    /// # Errors
    ///
    /// [`AllocError::IpRangeFull`].
    fn allocate_cluster_ip(&self, dry_run: bool) -> Result<String, AllocError>;
    /// Takes the given cluster IP.
    ///
    /// # Errors
    ///
    /// Already allocated, not in range, not an IP.
    fn reserve_cluster_ip(&self, ip: &str, dry_run: bool) -> Result<(), AllocError>;
    /// Frees a cluster IP.
    fn release_cluster_ip(&self, ip: &str);
    /// A free node port, taken unless `dry_run`.
    ///
    /// # Errors
    ///
    /// [`AllocError::PortRangeFull`].
    fn allocate_node_port(&self, dry_run: bool) -> Result<u16, AllocError>;
    /// Takes the given node port.
    ///
    /// # Errors
    ///
    /// Already allocated, not in range.
    fn reserve_node_port(&self, port: u16, dry_run: bool) -> Result<(), AllocError>;
    /// Frees a node port.
    fn release_node_port(&self, port: u16);
    /// The service CIDR, for messages.
    fn service_cidr(&self) -> &str;
}

/// The cluster IPs and node ports a stored Service holds.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Held {
    /// `spec.clusterIPs` (or `spec.clusterIP`), without `None`.
    pub ips: Vec<String>,
    /// Every `spec.ports[].nodePort` and `spec.healthCheckNodePort`.
    pub ports: Vec<u16>,
}

/// What `service` holds; empty for anything that is not a Service object
/// with a spec.
pub fn held(service: &Value) -> Held {
    let mut out = Held::default();
    let Some(spec) = service.get("spec") else {
        return out;
    };
    let ips: Vec<String> = match spec.get("clusterIPs").and_then(Value::as_array) {
        Some(list) if !list.is_empty() => list
            .iter()
            .filter_map(Value::as_str)
            .map(str::to_owned)
            .collect(),
        _ => spec
            .get("clusterIP")
            .and_then(Value::as_str)
            .map(|s| vec![s.to_owned()])
            .unwrap_or_default(),
    };
    out.ips = ips
        .into_iter()
        .filter(|ip| !ip.is_empty() && ip != "None")
        .collect();
    for p in crate::json::arr(spec.as_object().unwrap_or(&serde_json::Map::new()), "ports") {
        if let Some(n) = p.get("nodePort").and_then(Value::as_u64)
            && let Ok(n) = u16::try_from(n)
            && n != 0
            && !out.ports.contains(&n)
        {
            out.ports.push(n);
        }
    }
    if let Some(n) = spec.get("healthCheckNodePort").and_then(Value::as_u64)
        && let Ok(n) = u16::try_from(n)
        && n != 0
        && !out.ports.contains(&n)
    {
        out.ports.push(n);
    }
    out
}

/// After a committed update (`new` = the stored result) or delete
/// (`new` = `None`): frees what `old` held and `new` does not.
pub fn release(allocator: &dyn ServiceAllocator, old: &Value, new: Option<&Value>) {
    free_difference(allocator, &held(old), &new.map(held).unwrap_or_default());
}

/// After a failed create (`old` = `None`) or update of a Service whose
/// admission succeeded: frees what admission took for `new` (what `new`
/// holds and `old` does not). Never call it for a dry run.
pub fn rollback(allocator: &dyn ServiceAllocator, old: Option<&Value>, new: &Value) {
    free_difference(allocator, &held(new), &old.map(held).unwrap_or_default());
}

fn free_difference(allocator: &dyn ServiceAllocator, from: &Held, keep: &Held) {
    for ip in from.ips.iter().filter(|ip| !keep.ips.contains(ip)) {
        allocator.release_cluster_ip(ip);
    }
    for port in from.ports.iter().filter(|p| !keep.ports.contains(p)) {
        allocator.release_node_port(*port);
    }
}
