//! The federation's Prometheus series, served by the federation's
//! `/metrics` after the API server's own (docs/operations.md lists them).
//!
//! Two halves:
//! - [`FederationMetrics`]: counters and histograms the workers record as
//!   they go (submit-to-applied per cluster, member requests, retries,
//!   watch restarts, scheduler decisions). Recording is an atomic
//!   operation on a series looked up by its labels.
//! - [`FleetCollector`]: gauges read at scrape time from the syncer's
//!   shared state and the Clusters informer (queue depth, copies per
//!   state, readiness), so nothing has to keep them current.
//!
//! Contract: names follow Prometheus conventions (`skein_federation_`
//! prefix, `_seconds` for durations, `_total` for counters); every
//! per-cluster series has a `cluster` label; nothing here blocks a worker
//! (the collector takes the syncer's locks only while copying counts).

use std::collections::BTreeMap;
use std::sync::{Arc, Weak};
use std::time::Duration;

use prometheus_client::collector::Collector;
use prometheus_client::encoding::{DescriptorEncoder, EncodeLabelSet, EncodeMetric};
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::ConstGauge;
use prometheus_client::metrics::histogram::Histogram;
use prometheus_client::registry::Registry;

use crate::sync::shared::Shared;

/// Buckets of the submit-to-applied histogram: 10 ms to 2 minutes.
const PROPAGATION_BUCKETS: [f64; 14] = [
    0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.0, 5.0, 10.0, 20.0, 30.0, 60.0, 120.0,
];

/// Buckets of member request latency: 1 ms to 10 s (the call timeout).
const REQUEST_BUCKETS: [f64; 13] = [
    0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0,
];

/// Labels of a per-cluster series.
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct ClusterLabels {
    /// The Cluster's name.
    pub cluster: String,
}

/// Labels of a member request.
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct RequestLabels {
    /// The Cluster's name.
    pub cluster: String,
    /// `GET`, `LIST`, `APPLY`, `PUT`, `PATCH`, `DELETE`.
    pub verb: &'static str,
    /// The HTTP status code, or `error` when the member did not answer.
    pub code: String,
}

/// Labels of a retried sync.
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct RetryLabels {
    /// The Cluster's name.
    pub cluster: String,
    /// Why: the member's Status reason (`Conflict`, `Invalid`...), or
    /// `Unreachable` when it did not answer.
    pub reason: String,
}

/// Labels of a member watch restart.
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct WatchLabels {
    /// The Cluster's name.
    pub cluster: String,
    /// The watched resource (`deployments.apps`, `configmaps`).
    pub resource: String,
}

/// Labels of a scheduler decision.
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct DecisionLabels {
    /// `Scheduled` (at least one cluster) or `Unschedulable`.
    pub result: &'static str,
}

/// Labels of a cluster left out of a decision.
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct ExclusionLabels {
    /// The exclusion's reason (`NotSelected`, `NotReady`, `Tainted`...).
    pub reason: &'static str,
}

type HistogramFamily<L> = Family<L, Histogram, fn() -> Histogram>;

fn propagation_histogram() -> Histogram {
    Histogram::new(PROPAGATION_BUCKETS)
}

fn request_histogram() -> Histogram {
    Histogram::new(REQUEST_BUCKETS)
}

/// The series workers record into. See the module documentation.
pub struct FederationMetrics {
    propagation: HistogramFamily<ClusterLabels>,
    member_requests: HistogramFamily<RequestLabels>,
    retries: Family<RetryLabels, Counter>,
    watch_restarts: Family<WatchLabels, Counter>,
    decisions: Family<DecisionLabels, Counter>,
    exclusions: Family<ExclusionLabels, Counter>,
}

impl Default for FederationMetrics {
    fn default() -> Self {
        FederationMetrics {
            propagation: Family::new_with_constructor(propagation_histogram),
            member_requests: Family::new_with_constructor(request_histogram),
            retries: Family::default(),
            watch_restarts: Family::default(),
            decisions: Family::default(),
            exclusions: Family::default(),
        }
    }
}

impl FederationMetrics {
    /// A registry holding these series and `collector`'s gauges.
    pub fn registry(&self, collector: FleetCollector) -> Registry {
        let mut r = Registry::default();
        r.register(
            "skein_federation_propagation_duration_seconds",
            "Time from the federation planning a copy of an object's current generation to \
             the member accepting it, by cluster",
            self.propagation.clone(),
        );
        r.register(
            "skein_federation_member_request_duration_seconds",
            "Latency of the syncer's requests to member API servers by cluster, verb and HTTP \
             code (error: no answer); watches are not counted",
            self.member_requests.clone(),
        );
        r.register(
            "skein_federation_sync_retries",
            "Syncs of a copy that failed and were queued again, by cluster and reason",
            self.retries.clone(),
        );
        r.register(
            "skein_federation_member_watch_restarts",
            "Watches of a member's copies that ended and were opened again, by cluster and \
             resource",
            self.watch_restarts.clone(),
        );
        r.register(
            "skein_federation_scheduler_decisions",
            "Scheduling decisions made, by result",
            self.decisions.clone(),
        );
        r.register(
            "skein_federation_scheduler_exclusions",
            "Clusters left out of a scheduling decision, by reason",
            self.exclusions.clone(),
        );
        r.register_collector(Box::new(collector));
        r
    }

    /// A copy was accepted `elapsed` after it was planned.
    pub fn propagated(&self, cluster: &str, elapsed: Duration) {
        self.propagation
            .get_or_create(&ClusterLabels {
                cluster: cluster.to_owned(),
            })
            .observe(elapsed.as_secs_f64());
    }

    /// One request to a member ended (`code` `None`: no answer).
    pub fn member_request(
        &self,
        cluster: &str,
        verb: &'static str,
        code: Option<u16>,
        elapsed: Duration,
    ) {
        let code = code.map_or_else(|| "error".to_owned(), |c| c.to_string());
        self.member_requests
            .get_or_create(&RequestLabels {
                cluster: cluster.to_owned(),
                verb,
                code,
            })
            .observe(elapsed.as_secs_f64());
    }

    /// A sync of a copy on `cluster` failed for `reason` and is retried.
    pub fn retried(&self, cluster: &str, reason: &str) {
        self.retries
            .get_or_create(&RetryLabels {
                cluster: cluster.to_owned(),
                reason: reason.to_owned(),
            })
            .inc();
    }

    /// A watch of `resource` on `cluster` is opened again.
    pub fn watch_restarted(&self, cluster: &str, resource: String) {
        self.watch_restarts
            .get_or_create(&WatchLabels {
                cluster: cluster.to_owned(),
                resource,
            })
            .inc();
    }

    /// The scheduler decided; `excluded` are the reasons of the clusters
    /// it left out.
    pub fn decided(&self, scheduled: bool, excluded: impl Iterator<Item = &'static str>) {
        let result = if scheduled {
            "Scheduled"
        } else {
            "Unschedulable"
        };
        self.decisions
            .get_or_create(&DecisionLabels { result })
            .inc();
        for reason in excluded {
            self.exclusions
                .get_or_create(&ExclusionLabels { reason })
                .inc();
        }
    }
}

/// Gauges read at scrape time from the syncer's state (see the module
/// documentation). Holds the state weakly: once the federation stops,
/// it reports nothing.
pub struct FleetCollector {
    shared: Weak<Shared>,
}

impl FleetCollector {
    /// A collector of `shared`.
    pub fn new(shared: &Arc<Shared>) -> FleetCollector {
        FleetCollector {
            shared: Arc::downgrade(shared),
        }
    }
}

impl std::fmt::Debug for FleetCollector {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("FleetCollector")
    }
}

fn gauge<L: EncodeLabelSet>(
    encoder: &mut DescriptorEncoder,
    name: &str,
    help: &str,
    series: impl IntoIterator<Item = (L, i64)>,
) -> Result<(), std::fmt::Error> {
    let mut family = encoder.encode_descriptor(
        name,
        help,
        None,
        prometheus_client::metrics::MetricType::Gauge,
    )?;
    for (labels, value) in series {
        let g = ConstGauge::new(value);
        g.encode(family.encode_family(&labels)?)?;
    }
    Ok(())
}

/// Labels of the copies gauge.
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct CopyLabels {
    cluster: String,
    state: &'static str,
}

impl Collector for FleetCollector {
    fn encode(&self, mut encoder: DescriptorEncoder) -> Result<(), std::fmt::Error> {
        let Some(shared) = self.shared.upgrade() else {
            return Ok(());
        };
        let clusters = shared.clusters.list(|_| true);
        gauge(
            &mut encoder,
            "skein_federation_cluster_ready",
            "Whether the Cluster's Ready condition is True (1) or not (0).",
            clusters.iter().map(|c| {
                (
                    ClusterLabels {
                        cluster: skein_apiserver::registry::object::name(c).to_owned(),
                    },
                    i64::from(crate::scheduler::snapshot::cluster_ready(c)),
                )
            }),
        )?;
        let syncers = shared.all_syncers();
        gauge(
            &mut encoder,
            "skein_federation_sync_queue_depth",
            "Objects waiting in a cluster syncer's work queue.",
            syncers.iter().map(|s| {
                (
                    ClusterLabels {
                        cluster: s.name.clone(),
                    },
                    i64::try_from(s.queue_len()).unwrap_or(i64::MAX),
                )
            }),
        )?;
        let mut counts: BTreeMap<(String, &'static str), i64> = BTreeMap::new();
        {
            let copies = crate::sync::shared::lock(&shared.copies);
            for states in copies.values() {
                for (cluster, s) in states {
                    *counts
                        .entry((cluster.clone(), s.state.as_str()))
                        .or_default() += 1;
                }
            }
        }
        gauge(
            &mut encoder,
            "skein_federation_copies",
            "Member copies of federated objects, by cluster and state (the Placement's \
             states: Pending, Applied, Ready, Failed, Conflict, Drifted, Deleting).",
            counts
                .into_iter()
                .map(|((cluster, state), n)| (CopyLabels { cluster, state }, n)),
        )?;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn series_render_with_conventional_names() {
        let m = FederationMetrics::default();
        m.propagated("eu", Duration::from_millis(30));
        m.member_request("eu", "APPLY", Some(200), Duration::from_millis(3));
        m.member_request("us", "GET", None, Duration::from_secs(10));
        m.retried("us", "Unreachable");
        m.watch_restarted("eu", "configmaps".into());
        m.decided(true, ["NotSelected", "NotReady"].into_iter());
        let mut r = Registry::default();
        r.register(
            "skein_federation_propagation_duration_seconds",
            "h",
            m.propagation.clone(),
        );
        r.register("skein_federation_sync_retries", "h", m.retries.clone());
        r.register(
            "skein_federation_member_request_duration_seconds",
            "h",
            m.member_requests.clone(),
        );
        let mut out = String::new();
        prometheus_client::encoding::prometheus_text::encode(&mut out, &r)
            .expect("encoding to a String");
        assert!(out.contains(
            "skein_federation_propagation_duration_seconds_bucket{cluster=\"eu\",le=\"0.05\"} 1"
        ));
        assert!(out.contains(
            "skein_federation_sync_retries_total{cluster=\"us\",reason=\"Unreachable\"} 1"
        ));
        assert!(out.contains(
            "skein_federation_member_request_duration_seconds_count{cluster=\"us\",verb=\"GET\",code=\"error\"} 1"
        ));
    }
}
