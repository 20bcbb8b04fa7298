//! The workload simulator (`skein serve --role=member
//! --simulate-workloads`), KWOK-like: controllers that make a member behave
//! like a cluster whose workloads run, without a kubelet. Simulated Nodes
//! with capacity; Pods bound to them, Running and Ready after a delay;
//! Deployments, ReplicaSets, StatefulSets, DaemonSets, Jobs and CronJobs
//! managed as kube-controller-manager does; EndpointSlices and
//! LoadBalancer addresses for Services.
//!
//! **Architecture Invariant:** like the garbage collector, every simulator
//! controller reads and writes only through the [`Registry`] as a system
//! user; it is off unless `--simulate-workloads` is given. Decisions are
//! pure functions (time passed in); the controllers around them are thin.

pub mod config;
pub mod cronjob;
pub mod daemonset;
pub mod deployment;
pub mod endpoints;
pub mod job;
pub mod loadbalancer;
pub mod nodes;
pub mod owner_loop;
pub mod pods;
pub mod replicaset;
pub mod scheduler;
pub mod statefulset;
pub use skein_workloads::template;

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

pub use crate::config::SimConfig;
use skein_apiserver::controllers::informer::Informer;
use skein_apiserver::registry::{Registry, ResourceInfo, WriteOptions, resource};
use skein_apiserver::status::ApiError;

/// The shared informers by (group, version, plural).
type Informers = HashMap<(String, String, String), Informer>;

/// What every simulator controller shares: the registry, the flags, and
/// one informer per resource (created on first use, shared by all).
#[derive(Clone)]
pub struct Sim {
    /// The registry every read and write goes through.
    pub registry: Registry,
    /// The `--sim-*` flags.
    pub config: Arc<SimConfig>,
    informers: Arc<Mutex<Informers>>,
}

impl Sim {
    /// The shared context of the simulator of `registry`.
    pub fn new(registry: &Registry, config: &SimConfig) -> Sim {
        Sim {
            registry: registry.clone(),
            config: Arc::new(config.clone()),
            informers: Arc::default(),
        }
    }

    /// The served resource `group`/`version`/`plural`.
    ///
    /// # Errors
    ///
    /// Internal when it is not served (a built-in always is).
    pub fn resource(
        group: &str,
        version: &str,
        plural: &str,
    ) -> Result<Arc<ResourceInfo>, ApiError> {
        resource::builtin(group, version, plural)
            .ok_or_else(|| ApiError::internal(format!("{plural}.{group}/{version} is not served")))
    }

    /// The shared informer of `group`/`version`/`plural`, started on first
    /// use.
    ///
    /// # Errors
    ///
    /// As [`Sim::resource`].
    pub fn informer(&self, group: &str, version: &str, plural: &str) -> Result<Informer, ApiError> {
        let key = (group.to_owned(), version.to_owned(), plural.to_owned());
        let mut informers = self
            .informers
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if let Some(i) = informers.get(&key) {
            return Ok(i.clone());
        }
        let informer = Informer::start(&self.registry, Sim::resource(group, version, plural)?);
        informers.insert(key, informer.clone());
        Ok(informer)
    }

    /// The shared informers of two resources (each `(group, version,
    /// plural)`), or `None` after logging `disabled` when one is not served
    /// (the controller then does not run).
    pub fn informer_pair(
        &self,
        a: (&str, &str, &str),
        b: (&str, &str, &str),
        disabled: &str,
    ) -> Option<(Informer, Informer)> {
        match (self.informer(a.0, a.1, a.2), self.informer(b.0, b.1, b.2)) {
            (Ok(a), Ok(b)) => Some((a, b)),
            (Err(e), _) | (_, Err(e)) => {
                tracing::error!(error = %e, "{disabled}");
                None
            }
        }
    }

    /// Write options for the controller named `manager` (its field
    /// manager, as kube-controller-manager's controllers have).
    pub fn opts(manager: &str) -> WriteOptions {
        WriteOptions {
            field_manager: manager.to_owned(),
            ..WriteOptions::default()
        }
    }
}

/// Starts every simulator controller; they run until the runtime shuts
/// down.
pub fn spawn_all(registry: &Registry, config: &SimConfig) {
    let sim = Sim::new(registry, config);
    let rt =
        runtime(config.nice).map_or_else(tokio::runtime::Handle::current, |rt| rt.handle().clone());
    rt.spawn(nodes::run(sim.clone()));
    rt.spawn(scheduler::run(sim.clone()));
    rt.spawn(pods::run(sim.clone()));
    rt.spawn(endpoints::run(sim.clone()));
    rt.spawn(loadbalancer::run(sim.clone()));
    rt.spawn(replicaset::run(sim.clone()));
    rt.spawn(deployment::run(sim.clone()));
    rt.spawn(statefulset::run(sim.clone()));
    rt.spawn(daemonset::run(sim.clone()));
    rt.spawn(job::run(sim.clone()));
    rt.spawn(cronjob::run(sim.clone()));
}

/// The simulator's own runtime when `nice` is above 0 (`--sim-nice`):
/// two worker threads that lower their priority to `nice` as they start,
/// built once and kept for the life of the process. `None` at 0, or when
/// it cannot be built (the controllers then run on the caller's runtime).
fn runtime(nice: i32) -> Option<&'static tokio::runtime::Runtime> {
    static RUNTIME: std::sync::OnceLock<Option<tokio::runtime::Runtime>> =
        std::sync::OnceLock::new();
    if nice <= 0 {
        return None;
    }
    RUNTIME
        .get_or_init(|| {
            tokio::runtime::Builder::new_multi_thread()
                .worker_threads(2)
                .thread_name("skein-sim")
                .enable_all()
                .on_thread_start(move || {
                    // On Linux a thread id names one thread: only the
                    // simulator's threads are reniced.
                    let me = rustix::thread::gettid();
                    if let Err(e) = rustix::process::setpriority_process(Some(me), nice) {
                        tracing::warn!(error = %e, nice, "cannot lower the simulator's priority");
                    }
                })
                .build()
                .map_err(|e| tracing::warn!(error = %e, "no runtime of its own for the simulator"))
                .ok()
        })
        .as_ref()
}
