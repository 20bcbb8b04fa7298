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
//! user; it is off unless `--simulate-workloads` is given.

use crate::config::SimConfig;
use crate::registry::Registry;

/// Starts every simulator controller; they run until the runtime shuts
/// down.
pub fn spawn_all(_registry: &Registry, _config: &SimConfig) {}
