//! Controllers that make the native API behave like a cluster's control
//! plane: what kube-apiserver creates by itself (bootstrap objects, the
//! `kubernetes` Service), and kube-controller-manager's namespace
//! lifecycle, ServiceAccount, root CA publisher, ClusterRole aggregation
//! and garbage collector.
//!
//! **Architecture Invariant:** controllers go through the
//! [`crate::registry::Registry`] as a system user; they never touch storage
//! or HTTP.

pub mod account_cache;
pub mod aggregation;
pub mod bootstrap;
pub mod crd;
pub mod event;
pub mod gc;
pub mod informer;
pub mod kubernetes_service;
pub mod leadership;
pub mod namespace;
mod per_namespace;
pub mod queue;
pub mod rootca;
pub mod service_addresses;
pub mod serviceaccount;

use std::sync::Arc;

use crate::registry::Registry;

/// Starts the controllers every replica runs (kube-apiserver's own: the
/// CRD controller, which also installs the served resources of every
/// replica, and API priority and fairness's configuration); they run until the runtime shuts down.
pub fn spawn_shared(registry: &Registry) {
    tokio::spawn(crd::run(registry.clone()));
    if registry.instance().flowcontrol().is_enabled() {
        tokio::spawn(crate::flowcontrol::controller::run(registry.clone()));
    }
}

/// Starts the controllers only one replica runs, the leader when leader
/// election is on (kube-controller-manager's, and the `kubernetes`
/// Service's reconciler): namespace lifecycle, garbage collector,
/// ServiceAccounts, root CA publisher, ClusterRole aggregation, the repair
/// of Service address claims, and, given
/// the cluster facts, the `kubernetes` Service. They run until the runtime
/// shuts down.
pub fn spawn_leader(registry: &Registry, cluster: Option<&Cluster>) {
    tokio::spawn(namespace::run(registry.clone()));
    tokio::spawn(gc::run(registry.clone()));
    tokio::spawn(aggregation::run(registry.clone()));
    tokio::spawn(service_addresses::run_claims(registry.clone()));
    if let Some(cluster) = cluster {
        tokio::spawn(kubernetes_service::run(
            registry.clone(),
            cluster.endpoint.clone(),
        ));
        tokio::spawn(serviceaccount::run(registry.clone()));
        tokio::spawn(rootca::run(registry.clone(), cluster.ca_pem.clone()));
    }
}

/// What the cluster-level controllers need to know about this server.
#[derive(Clone, Debug)]
pub struct Cluster {
    /// The `kubernetes` Service's address and endpoint.
    pub endpoint: kubernetes_service::Endpoint,
    /// The CA certificate (PEM) published as `kube-root-ca.crt`.
    pub ca_pem: String,
    /// The ServiceAccount cache the admission plugin reads.
    pub accounts: Arc<account_cache::AccountCache>,
}

impl Cluster {
    /// The cluster facts of a server whose Service range is `service_cidr`,
    /// bound to `bind`, listening on `port`, with CA `ca_pem`.
    ///
    /// # Errors
    ///
    /// The Service range has no first address.
    pub fn new(
        service_cidr: &str,
        bind: std::net::IpAddr,
        port: u16,
        ca_pem: &str,
        accounts: Arc<account_cache::AccountCache>,
    ) -> Result<Cluster, String> {
        let cluster_ip = kubernetes_service::first_address(service_cidr)
            .ok_or_else(|| format!("{service_cidr:?} has no first address"))?;
        Ok(Cluster {
            endpoint: kubernetes_service::Endpoint {
                cluster_ip,
                address: kubernetes_service::advertise_address(bind),
                port,
            },
            ca_pem: ca_pem.to_owned(),
            accounts,
        })
    }
}

/// Reconciles the `kubernetes` Service once and gives the system
/// namespaces their `default` ServiceAccount and `kube-root-ca.crt` (a
/// failure is logged, not fatal: the controllers retry), and starts the
/// ServiceAccount cache. Every replica does this at startup (the writes
/// are idempotent); the controllers that keep these objects are
/// [`spawn_leader`]'s.
pub async fn prepare_cluster(registry: &Registry, cluster: &Cluster) {
    cluster.accounts.attach(registry.clone());
    tokio::spawn(cluster.accounts.clone().run());
    if let Err(e) = kubernetes_service::reconcile(registry, &cluster.endpoint).await {
        tracing::warn!(error = %e, "creating the kubernetes service failed; retrying");
    }
    // The system namespaces have their account and CA bundle before the
    // first request (the controllers keep them from then on).
    for ns in bootstrap::SYSTEM_NAMESPACES {
        if let Err(e) = serviceaccount::ensure(registry, ns).await {
            tracing::warn!(namespace = ns, error = %e, "creating the default ServiceAccount failed");
        }
        if let Err(e) = rootca::ensure(registry, ns, &cluster.ca_pem).await {
            tracing::warn!(namespace = ns, error = %e, "publishing kube-root-ca.crt failed");
        }
    }
}
