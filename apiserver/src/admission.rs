//! The admission chain kube-apiserver-compatible writes run through, and
//! the Service address allocator it needs.
//!
//! Chain (order matters):
//! - mutators: [`Defaults`] (upstream defaulting), then
//!   [`ServiceAllocation`] (cluster IPs, IP families, node ports; relies
//!   on the defaulted `spec.type`);
//! - validators: [`Validation`] (per-kind field rules), then
//!   [`PlacementValidation`] (placement annotations).
//!
//! The registry calls `chain.admit` before its strategy and
//! `chain.validate` after it. For Services it must also complete each
//! allocation (see `skein_admission::allocator`): [`service_write_failed`]
//! when a create/update that passed `admit` is not stored, and
//! [`service_stored`] after a stored update or a completed delete. Neither
//! is called for dry runs. [`seed`] marks what stored Services hold at
//! startup; calling it again periodically repairs leaks.

use std::ops::RangeInclusive;
use std::sync::Arc;

use serde_json::Value;
use skein_admission::Chain;
use skein_admission::allocator::{
    self, DEFAULT_NODE_PORTS, DEFAULT_SERVICE_CIDR, InMemoryAllocator, ServiceAllocation,
};
use skein_admission::defaults::Defaults;
use skein_admission::namespace_name::NamespaceName;
use skein_admission::placement::PlacementValidation;
use skein_admission::serviceaccount::{ServiceAccountAdmission, ServiceAccountLookup};
use skein_admission::validation::Validation;

/// What the admission plugins are configured with (kube-apiserver's
/// `--service-cluster-ip-range` and `--service-node-port-range`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AdmissionConfig {
    /// IPv4 CIDR Service cluster IPs come from; default `10.96.0.0/12`.
    pub service_cidr: String,
    /// Inclusive node port range; default `30000-32767`.
    pub node_ports: RangeInclusive<u16>,
}

impl Default for AdmissionConfig {
    fn default() -> Self {
        Self {
            service_cidr: DEFAULT_SERVICE_CIDR.to_owned(),
            node_ports: DEFAULT_NODE_PORTS,
        }
    }
}

/// The chain and the allocator it shares with the registry.
#[derive(Clone)]
pub struct Admission {
    /// What the registry runs on every write.
    pub chain: Chain,
    /// Service cluster IPs and node ports (seed it at startup).
    pub services: Arc<InMemoryAllocator>,
}

impl std::fmt::Debug for Admission {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Admission")
            .field("chain", &self.chain)
            .field("service_cidr", &self.services.cidr())
            .finish()
    }
}

/// Builds the chain over a fresh allocator.
///
/// # Errors
///
/// A message when the service CIDR or node port range is unusable.
pub fn build(config: &AdmissionConfig) -> Result<Admission, String> {
    let services = Arc::new(InMemoryAllocator::new(
        &config.service_cidr,
        config.node_ports.clone(),
    )?);
    let chain = Chain::new()
        .with_mutator(Arc::new(Defaults))
        .with_mutator(Arc::new(NamespaceName))
        .with_mutator(Arc::new(ServiceAllocation::new(services.clone())))
        .with_validator(Arc::new(Validation))
        .with_validator(Arc::new(PlacementValidation));
    Ok(Admission { chain, services })
}

/// Adds the `ServiceAccount` plugin (mutator after the others, validator
/// after the others), reading accounts from `accounts`.
pub fn with_service_accounts(
    mut admission: Admission,
    accounts: Arc<dyn ServiceAccountLookup>,
) -> Admission {
    let suffix: Arc<dyn Fn() -> String + Send + Sync> = Arc::new(name_suffix);
    let plugin = Arc::new(ServiceAccountAdmission::new(accounts, suffix));
    admission.chain = admission
        .chain
        .with_mutator(plugin.clone())
        .with_validator(plugin);
    admission
}

/// Upstream's `SimpleNameGenerator` suffix: 5 characters from its
/// alphabet (no vowels, no look-alikes).
fn name_suffix() -> String {
    const ALPHABET: &[u8] = b"bcdfghjklmnpqrstvwxz2456789";
    uuid::Uuid::new_v4()
        .as_bytes()
        .iter()
        .take(5)
        .map(|b| char::from(ALPHABET[usize::from(*b) % ALPHABET.len()]))
        .collect()
}

/// Marks the cluster IPs and node ports the stored `services` hold
/// (objects as stored, any namespace). Call at startup, before serving,
/// with every Service; calling it again later (e.g. every few minutes) is
/// the repair loop: an allocation no stored Service holds is freed after
/// two consecutive calls that do not see it.
pub fn seed<'a>(allocator: &InMemoryAllocator, services: impl IntoIterator<Item = &'a Value>) {
    let mut ips = Vec::new();
    let mut ports = Vec::new();
    for svc in services {
        let held = allocator::held(svc);
        ips.extend(held.ips);
        ports.extend(held.ports);
    }
    allocator.repair(ips.iter().map(String::as_str), ports);
}

/// A Service create (`old` = `None`) or update that passed admission was
/// not stored (validation, conflict, storage error): give back what
/// admission took for `new` (the object as `admit` left it). Not for dry
/// runs.
pub fn service_write_failed(allocator: &InMemoryAllocator, old: Option<&Value>, new: &Value) {
    allocator::rollback(allocator, old, new);
}

/// A Service update was stored (`new` = the stored object) or a Service
/// was deleted from storage (`new` = `None`): free what `old` held that
/// `new` does not. Not for dry runs.
pub fn service_stored(allocator: &InMemoryAllocator, old: &Value, new: Option<&Value>) {
    allocator::release(allocator, old, new);
}

#[cfg(test)]
mod tests {
    use serde_json::json;
    use skein_admission::{Attributes, GroupVersionKind, GroupVersionResource, Operation};

    use super::*;

    fn service_attrs(obj: Value) -> Attributes {
        let mut a = Attributes::new(
            Operation::Create,
            GroupVersionResource::new("", "v1", "services"),
            GroupVersionKind::new("", "v1", "Service"),
            "web",
        );
        a.namespace = Some("default".into());
        a.object = Some(obj);
        a
    }

    #[test]
    fn chain_defaults_allocates_and_validates() {
        let adm = build(&AdmissionConfig::default()).unwrap();
        assert_eq!(
            format!("{:?}", adm.chain),
            r#"Chain { mutators: ["Defaults", "NamespaceMetadataName", "ServiceIPAllocation"], validators: ["Validation", "PlacementAnnotations"] }"#
        );
        let mut a =
            service_attrs(json!({"metadata": {"name": "web"}, "spec": {"ports": [{"port": 80}]}}));
        adm.chain.admit(&mut a).unwrap();
        adm.chain.validate(&a).unwrap();
        let obj = a.object.clone().unwrap();
        assert_eq!(obj["spec"]["type"], "ClusterIP");
        assert!(obj["spec"]["clusterIP"].is_string());
        assert_eq!(adm.services.used(), (1, 0));
        service_write_failed(&adm.services, None, &obj);
        assert_eq!(adm.services.used(), (0, 0));
    }

    #[test]
    fn seed_marks_stored_services() {
        let adm = build(&AdmissionConfig::default()).unwrap();
        let stored = [
            json!({"spec": {"clusterIP": "10.96.0.1", "clusterIPs": ["10.96.0.1"]}}),
            json!({"spec": {"type": "NodePort", "clusterIPs": ["10.96.7.7"], "ports": [{"port": 80, "nodePort": 30080}]}}),
            json!({"spec": {"clusterIP": "None"}}),
        ];
        seed(&adm.services, stored.iter());
        assert_eq!(adm.services.used(), (2, 1));
        let mut a = service_attrs(
            json!({"metadata": {"name": "x"}, "spec": {"clusterIP": "10.96.7.7", "ports": [{"port": 80}]}}),
        );
        let err = adm.chain.admit(&mut a).unwrap_err();
        assert_eq!(
            err.to_string(),
            r#"Service "x" is invalid: spec.clusterIPs: Invalid value: []string{"10.96.7.7"}: failed to allocate IP 10.96.7.7: provided IP is already allocated"#
        );
        service_stored(&adm.services, &stored[1], None);
        assert_eq!(adm.services.used(), (1, 0));
    }

    #[test]
    fn bad_config_is_reported() {
        let cfg = AdmissionConfig {
            service_cidr: "fd00::/108".into(),
            ..AdmissionConfig::default()
        };
        assert!(build(&cfg).is_err());
    }
}
