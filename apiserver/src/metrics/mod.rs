//! The server's Prometheus metrics: upstream kube-apiserver 1.33's names,
//! labels, help texts and buckets, in one registry per server instance
//! (upstream's `legacyregistry`), rendered as the Prometheus text format 0.0.4.
//!
//! Who records what:
//! - `http::metrics::instrument` (HTTP middleware, after authentication):
//!   `apiserver_request_total`, `apiserver_request_duration_seconds`,
//!   `apiserver_current_inflight_requests`, `apiserver_longrunning_requests`
//!   and `apiserver_watch_events_total`.
//! - `store::metrics::MetricsStore` (a decorator around the `Store`, for
//!   both backends): `etcd_request_duration_seconds`.
//! - `store::objects` (a periodic task):
//!   `apiserver_storage_objects`.
//! - [`process`] (read at each scrape): `process_*`.
//! - `http::componentstatus`: `apiserver_requested_deprecated_apis`.
//! - `flowcontrol` (API priority and fairness, through handles taken
//!   once per FlowSchema and priority level, [`flowcontrol`]):
//!   `apiserver_flowcontrol_*`.
//! - `registry::cache` (each watch cache, through a [`WatchCacheMetrics`]
//!   handle taken once per cache): upstream's cacher series
//!   `apiserver_watch_cache_events_received_total`,
//!   `apiserver_watch_cache_events_dispatched_total`,
//!   `apiserver_watch_cache_initializations_total`,
//!   `apiserver_watch_cache_resource_version`, `watch_cache_capacity` (sic:
//!   upstream's name has no `apiserver_` prefix),
//!   `apiserver_watch_cache_read_wait_seconds` and
//!   `apiserver_terminated_watchers_total`, labelled `group`, `resource`.
//!
//! Label values are `&'static str` (from the resource table or fixed
//! strings), so recording allocates nothing; label sets are declared with
//! their fields in alphabetical order because Go's client sorts labels and
//! scrapers' golden files expect that order.
//!
//! **Invariant:** recording never panics and never blocks on I/O. This
//! module imports nothing of the registry, the store wiring or HTTP: they
//! record into it.

pub mod flowcontrol;
pub mod process;

use std::time::Duration;

use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::metrics::histogram::Histogram;
use prometheus_client::registry::Registry;

/// The `Content-Type` of `/metrics`.
pub const CONTENT_TYPE: &str = prometheus_client::encoding::prometheus_text::CONTENT_TYPE;

/// `apiserver_request_duration_seconds` and `etcd_request_duration_seconds`
/// buckets (upstream's `requestLatencies` / `etcdRequestLatency`).
pub const LATENCY_BUCKETS: [f64; 23] = [
    0.005, 0.025, 0.05, 0.1, 0.2, 0.4, 0.6, 0.8, 1.0, 1.25, 1.5, 2.0, 3.0, 4.0, 5.0, 6.0, 8.0,
    10.0, 15.0, 20.0, 30.0, 45.0, 60.0,
];

/// Labels of `apiserver_request_total`.
#[derive(Clone, Copy, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct RequestLabels {
    /// HTTP status code.
    pub code: u16,
    /// `apiserver` for API requests, empty for health checks.
    pub component: &'static str,
    /// `All` for a dry run, empty otherwise (`invalid` for bad values).
    pub dry_run: &'static str,
    /// API group (empty for core and non-resource requests).
    pub group: &'static str,
    /// Plural resource.
    pub resource: &'static str,
    /// `resource`, `namespace`, `cluster`, or empty for non-resource paths.
    pub scope: &'static str,
    /// Subresource, or the path of a non-resource request (`/healthz`).
    pub subresource: &'static str,
    /// Upstream's reported verb (`GET`, `LIST`, `WATCH`, `POST`, `APPLY`…).
    pub verb: &'static str,
    /// API version.
    pub version: &'static str,
}

/// Labels of `apiserver_request_duration_seconds` (the request labels
/// without `code`).
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct DurationLabels {
    component: &'static str,
    dry_run: &'static str,
    group: &'static str,
    resource: &'static str,
    scope: &'static str,
    subresource: &'static str,
    verb: &'static str,
    version: &'static str,
}

/// Labels of `apiserver_longrunning_requests`.
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct LongRunningLabels {
    component: &'static str,
    group: &'static str,
    resource: &'static str,
    scope: &'static str,
    subresource: &'static str,
    verb: &'static str,
    version: &'static str,
}

/// Labels of `apiserver_current_inflight_requests`.
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct KindLabels {
    request_kind: &'static str,
}

/// Labels of `apiserver_watch_events_total` (upstream 1.33: the watched
/// kind, not the resource; 1.34 switched to `resource`).
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct WatchLabels {
    /// API group of the watched kind.
    pub group: &'static str,
    /// Kind (`Deployment`).
    pub kind: &'static str,
    /// API version.
    pub version: &'static str,
}

/// Labels of `apiserver_storage_objects`.
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct ResourceLabels {
    resource: &'static str,
}

/// Labels of `etcd_request_duration_seconds`.
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct EtcdLabels {
    operation: &'static str,
    #[prometheus(flatten)]
    kind: EtcdType,
}

/// A `name` label.
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct NameLabels {
    name: String,
}

/// The `type` label (a Rust keyword, hence the wrapper).
#[derive(Clone, Debug, Hash, PartialEq, Eq)]
struct EtcdType(&'static str);

impl EncodeLabelSet for EtcdType {
    fn encode(
        &self,
        encoder: &mut prometheus_client::encoding::LabelSetEncoder<'_>,
    ) -> Result<(), std::fmt::Error> {
        use prometheus_client::encoding::EncodeLabel;
        ("type", self.0).encode(encoder.encode_label())
    }
}

/// Labels of `apiserver_requested_deprecated_apis`.
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct DeprecatedLabels {
    group: &'static str,
    removed_release: &'static str,
    resource: &'static str,
    subresource: &'static str,
    version: &'static str,
}

/// Labels of the watch cache series (upstream's `group`, `resource`; the
/// core group is empty). Owned strings: a handle is made once per cache.
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct CacheLabels {
    group: String,
    resource: String,
}

/// Buckets of `apiserver_watch_cache_read_wait_seconds` (upstream's).
const READ_WAIT_BUCKETS: [f64; 13] = [
    0.005, 0.025, 0.05, 0.1, 0.2, 0.4, 0.6, 0.8, 1.0, 1.25, 1.5, 2.0, 3.0,
];

fn read_wait_histogram() -> Histogram {
    Histogram::new(READ_WAIT_BUCKETS)
}

/// The series of one watch cache (one resource). Cheap to clone; recording
/// is an atomic operation.
#[derive(Clone, Debug)]
pub struct WatchCacheMetrics {
    /// Events the cache received from its store watch.
    pub events_received: Counter,
    /// Events the cache offered to its watchers.
    pub events_dispatched: Counter,
    /// Lists that (re)filled the cache.
    pub initializations: Counter,
    /// The revision the cache reflects (modulo 10^15, as upstream).
    pub resource_version: Gauge,
    /// Events the cache's window holds at most.
    pub capacity: Gauge,
    /// Time reads waited for the cache to become fresh.
    pub read_wait: Histogram,
    /// Watchers closed because they did not keep up.
    pub terminated_watchers: Counter,
}

type HistogramFamily<L> = Family<L, Histogram, fn() -> Histogram>;

fn latency_histogram() -> Histogram {
    Histogram::new(LATENCY_BUCKETS)
}

/// Every metric of the server.
pub struct Metrics {
    registry: Registry,
    requests: Family<RequestLabels, Counter>,
    durations: HistogramFamily<DurationLabels>,
    inflight: Family<KindLabels, Gauge>,
    longrunning: Family<LongRunningLabels, Gauge>,
    watch_events: Family<WatchLabels, Counter>,
    storage_objects: Family<ResourceLabels, Gauge>,
    etcd: HistogramFamily<EtcdLabels>,
    deprecated: Family<DeprecatedLabels, Gauge>,
    cache_received: Family<CacheLabels, Counter>,
    cache_dispatched: Family<CacheLabels, Counter>,
    cache_initializations: Family<CacheLabels, Counter>,
    cache_revision: Family<CacheLabels, Gauge>,
    cache_capacity: Family<CacheLabels, Gauge>,
    cache_read_wait: HistogramFamily<CacheLabels>,
    cache_terminated: Family<CacheLabels, Counter>,
    storage_watches: Family<EtcdType, Gauge>,
    leader: Family<NameLabels, Gauge>,
    /// Registries of the parts above the API server (the federation's),
    /// rendered after this one ([`Metrics::attach`]).
    attached: std::sync::RwLock<Vec<Registry>>,
    flowcontrol: flowcontrol::FlowMetrics,
}

impl Default for Metrics {
    fn default() -> Self {
        Metrics::new()
    }
}

impl Metrics {
    /// A new registry with every family declared; one per server
    /// instance (the `Instance` holds it).
    pub fn new() -> Self {
        let m = Metrics {
            registry: Registry::default(),
            requests: Family::default(),
            durations: Family::new_with_constructor(latency_histogram),
            inflight: Family::default(),
            longrunning: Family::default(),
            watch_events: Family::default(),
            storage_objects: Family::default(),
            etcd: Family::new_with_constructor(latency_histogram),
            deprecated: Family::default(),
            cache_received: Family::default(),
            cache_dispatched: Family::default(),
            cache_initializations: Family::default(),
            cache_revision: Family::default(),
            cache_capacity: Family::default(),
            cache_read_wait: Family::new_with_constructor(read_wait_histogram),
            cache_terminated: Family::default(),
            storage_watches: Family::default(),
            leader: Family::default(),
            attached: std::sync::RwLock::default(),
            flowcontrol: flowcontrol::FlowMetrics::default(),
        };
        // Both kinds are always reported, as upstream sets both each time.
        for kind in [MUTATING, READ_ONLY] {
            let _ = m.inflight.get_or_create(&KindLabels { request_kind: kind });
        }
        let mut registry = Registry::default();
        // Help texts are upstream's, with their stability prefix; the
        // registry appends the final period itself.
        registry.register(
            "apiserver_request",
            "[STABLE] Counter of apiserver requests broken out for each verb, dry run value, \
             group, version, resource, scope, component, and HTTP response code",
            m.requests.clone(),
        );
        registry.register(
            "apiserver_request_duration_seconds",
            "[STABLE] Response latency distribution in seconds for each verb, dry run value, \
             group, version, resource, subresource, scope and component",
            m.durations.clone(),
        );
        registry.register(
            "apiserver_current_inflight_requests",
            "[STABLE] Maximal number of currently used inflight request limit of this \
             apiserver per request kind in last second",
            m.inflight.clone(),
        );
        registry.register(
            "apiserver_longrunning_requests",
            "[STABLE] Gauge of all active long-running apiserver requests broken out by verb, \
             group, version, resource, scope and component. Not all requests are tracked this \
             way",
            m.longrunning.clone(),
        );
        registry.register(
            "apiserver_watch_events",
            "[ALPHA] Number of events sent in watch clients",
            m.watch_events.clone(),
        );
        registry.register(
            "apiserver_storage_objects",
            "[STABLE] Number of stored objects at the time of last check split by kind. In case \
             of a fetching error, the value will be -1",
            m.storage_objects.clone(),
        );
        registry.register(
            "etcd_request_duration_seconds",
            "[ALPHA] Etcd request latency in seconds for each operation and object type",
            m.etcd.clone(),
        );
        registry.register(
            "apiserver_requested_deprecated_apis",
            "[STABLE] Gauge of deprecated APIs that have been requested, broken out by API \
             group, version, resource, subresource, and removed_release",
            m.deprecated.clone(),
        );
        registry.register(
            "apiserver_watch_cache_events_received",
            "[ALPHA] Counter of events received in watch cache broken by resource type",
            m.cache_received.clone(),
        );
        registry.register(
            "apiserver_watch_cache_events_dispatched",
            "[ALPHA] Counter of events dispatched in watch cache broken by resource type",
            m.cache_dispatched.clone(),
        );
        registry.register(
            "apiserver_watch_cache_initializations",
            "[ALPHA] Counter of watch cache initializations broken by resource type",
            m.cache_initializations.clone(),
        );
        registry.register(
            "apiserver_watch_cache_resource_version",
            "[ALPHA] Current resource version of watch cache broken by resource type. This is \
             truncated to the 15 least significant digits",
            m.cache_revision.clone(),
        );
        registry.register(
            "watch_cache_capacity",
            "[ALPHA] Total capacity of watch cache broken by resource type",
            m.cache_capacity.clone(),
        );
        registry.register(
            "apiserver_watch_cache_read_wait_seconds",
            "[ALPHA] Histogram of time spent waiting for a watch cache to become fresh",
            m.cache_read_wait.clone(),
        );
        registry.register(
            "leader_election_master_status",
            "[ALPHA] Gauge of if the reporting system is master of the relevant lease, 0 \
             indicates backup, 1 indicates master. 'name' is the string used to identify the \
             lease. Please make sure to group by name",
            m.leader.clone(),
        );
        registry.register(
            "apiserver_terminated_watchers",
            "[ALPHA] Counter of watchers closed due to unresponsiveness broken by resource type",
            m.cache_terminated.clone(),
        );
        registry.register(
            "skein_storage_watches",
            "Number of watches open on the storage backend (etcd or the embedded store) \
             broken out by the type of the watched prefix (empty for a watch of every resource)",
            m.storage_watches.clone(),
        );
        m.flowcontrol.register(&mut registry);
        registry.register_collector(Box::new(process::ProcessCollector::new()));
        Metrics { registry, ..m }
    }

    /// The API priority and fairness series.
    pub fn flowcontrol(&self) -> &flowcontrol::FlowMetrics {
        &self.flowcontrol
    }

    /// The whole registry in the Prometheus text format 0.0.4.
    pub fn render(&self) -> String {
        let mut out = String::with_capacity(64 * 1024);
        // Writing to a String cannot fail.
        let _ = prometheus_client::encoding::prometheus_text::encode(&mut out, &self.registry);
        let attached = self
            .attached
            .read()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        for r in attached.iter() {
            let _ = prometheus_client::encoding::prometheus_text::encode(&mut out, r);
        }
        out
    }

    /// Serves `registry`'s series too, after the server's own: how a part
    /// above the API server (the federation) adds its metrics without this
    /// crate knowing them. Its names must not clash with the server's.
    pub fn attach(&self, registry: Registry) {
        self.attached
            .write()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .push(registry);
    }

    /// One finished request: `apiserver_request_total` and
    /// `apiserver_request_duration_seconds`.
    pub fn record_request(&self, labels: &RequestLabels, elapsed: Duration) {
        self.requests.get_or_create(labels).inc();
        self.durations
            .get_or_create(&DurationLabels {
                component: labels.component,
                dry_run: labels.dry_run,
                group: labels.group,
                resource: labels.resource,
                scope: labels.scope,
                subresource: labels.subresource,
                verb: labels.verb,
                version: labels.version,
            })
            .observe(elapsed.as_secs_f64());
    }

    /// Counts a request as in flight until the guard drops
    /// (`apiserver_current_inflight_requests`; long-running requests are
    /// not counted, as upstream).
    pub fn inflight(&self, mutating: bool) -> InflightGuard {
        let kind = if mutating { MUTATING } else { READ_ONLY };
        let gauge = self
            .inflight
            .get_or_create_owned(&KindLabels { request_kind: kind });
        gauge.inc();
        InflightGuard { gauge }
    }

    /// Counts a long-running request until the guard drops
    /// (`apiserver_longrunning_requests`).
    pub fn longrunning(&self, labels: &RequestLabels) -> InflightGuard {
        let gauge = self.longrunning.get_or_create_owned(&LongRunningLabels {
            component: labels.component,
            group: labels.group,
            resource: labels.resource,
            scope: labels.scope,
            subresource: labels.subresource,
            verb: labels.verb,
            version: labels.version,
        });
        gauge.inc();
        InflightGuard { gauge }
    }

    /// The `apiserver_watch_events_total` counter of one kind.
    pub fn watch_events(&self, labels: &WatchLabels) -> Counter {
        self.watch_events.get_or_create_owned(labels)
    }

    /// The series of the watch cache of `group` (empty for core) and
    /// `resource`.
    pub fn watch_cache(&self, group: &str, resource: &str) -> WatchCacheMetrics {
        let labels = CacheLabels {
            group: group.to_owned(),
            resource: resource.to_owned(),
        };
        WatchCacheMetrics {
            events_received: self.cache_received.get_or_create_owned(&labels),
            events_dispatched: self.cache_dispatched.get_or_create_owned(&labels),
            initializations: self.cache_initializations.get_or_create_owned(&labels),
            resource_version: self.cache_revision.get_or_create_owned(&labels),
            capacity: self.cache_capacity.get_or_create_owned(&labels),
            read_wait: self.cache_read_wait.get_or_create_owned(&labels),
            terminated_watchers: self.cache_terminated.get_or_create_owned(&labels),
        }
    }

    /// Sets `apiserver_storage_objects{resource}` (-1 after a failed count).
    pub fn set_storage_objects(&self, resource: &'static str, count: i64) {
        self.storage_objects
            .get_or_create(&ResourceLabels { resource })
            .set(count);
    }

    /// Observes one storage request (`etcd_request_duration_seconds`).
    pub fn observe_storage(&self, operation: &'static str, kind: &'static str, elapsed: Duration) {
        self.etcd
            .get_or_create(&EtcdLabels {
                operation,
                kind: EtcdType(kind),
            })
            .observe(elapsed.as_secs_f64());
    }

    /// `leader_election_master_status{name}`: 1 while this process holds
    /// the leader Lease `name`, 0 while it waits (client-go's series).
    pub fn leader_status(&self, name: &str) -> Gauge {
        self.leader
            .get_or_create(&NameLabels {
                name: name.to_owned(),
            })
            .clone()
    }

    /// The gauge of open store watches of `kind` (a storage `type` label).
    pub fn storage_watches(&self, kind: &'static str) -> Gauge {
        self.storage_watches.get_or_create(&EtcdType(kind)).clone()
    }

    /// Marks a deprecated API as requested
    /// (`apiserver_requested_deprecated_apis`, value 1).
    pub fn deprecated_api_requested(
        &self,
        group: &'static str,
        version: &'static str,
        resource: &'static str,
    ) {
        self.deprecated
            .get_or_create(&DeprecatedLabels {
                group,
                removed_release: "",
                resource,
                subresource: "",
                version,
            })
            .set(1);
    }
}

const MUTATING: &str = "mutating";
const READ_ONLY: &str = "readOnly";

/// Decrements its gauge when dropped.
#[derive(Debug)]
pub struct InflightGuard {
    gauge: Gauge,
}

impl Drop for InflightGuard {
    fn drop(&mut self) {
        self.gauge.dec();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn labels(verb: &'static str, code: u16) -> RequestLabels {
        RequestLabels {
            code,
            component: "apiserver",
            dry_run: "",
            group: "apps",
            resource: "deployments",
            scope: "namespace",
            subresource: "",
            verb,
            version: "v1",
        }
    }

    #[test]
    fn request_series_have_upstream_names_and_sorted_labels() {
        let m = Metrics::new();
        m.record_request(&labels("LIST", 200), Duration::from_millis(30));
        m.record_request(&labels("LIST", 200), Duration::from_millis(30));
        let text = m.render();
        assert!(
            text.contains(
                "apiserver_request_total{code=\"200\",component=\"apiserver\",dry_run=\"\",\
                 group=\"apps\",resource=\"deployments\",scope=\"namespace\",subresource=\"\",\
                 verb=\"LIST\",version=\"v1\"} 2\n"
            ),
            "{text}"
        );
        assert!(
            text.contains("# TYPE apiserver_request_total counter\n"),
            "{text}"
        );
        assert!(
            text.contains("# HELP apiserver_request_total [STABLE] Counter of apiserver requests"),
            "{text}"
        );
        // 30 ms falls in the 0.05 bucket, not in 0.025.
        assert!(text.contains(
            "apiserver_request_duration_seconds_bucket{component=\"apiserver\",dry_run=\"\",\
             group=\"apps\",resource=\"deployments\",scope=\"namespace\",subresource=\"\",\
             verb=\"LIST\",version=\"v1\",le=\"0.025\"} 0\n"
        ));
        assert!(text.contains(
            "apiserver_request_duration_seconds_bucket{component=\"apiserver\",dry_run=\"\",\
             group=\"apps\",resource=\"deployments\",scope=\"namespace\",subresource=\"\",\
             verb=\"LIST\",version=\"v1\",le=\"0.05\"} 2\n"
        ));
        assert!(
            text.contains("le=\"1\"} 2\n"),
            "Go formats whole bounds without .0"
        );
        assert!(text.contains("le=\"+Inf\"} 2\n"));
    }

    #[test]
    fn inflight_kinds_are_always_present_and_guards_decrement() {
        let m = Metrics::new();
        let text = m.render();
        assert!(
            text.contains("apiserver_current_inflight_requests{request_kind=\"mutating\"} 0\n")
        );
        assert!(
            text.contains("apiserver_current_inflight_requests{request_kind=\"readOnly\"} 0\n")
        );
        let g = m.inflight(true);
        assert!(
            m.render()
                .contains("apiserver_current_inflight_requests{request_kind=\"mutating\"} 1\n")
        );
        drop(g);
        assert!(
            m.render()
                .contains("apiserver_current_inflight_requests{request_kind=\"mutating\"} 0\n")
        );
    }

    #[test]
    fn storage_and_watch_series() {
        let m = Metrics::new();
        m.observe_storage("get", "deployments.apps", Duration::from_millis(1));
        m.set_storage_objects("deployments.apps", 3);
        m.watch_events(&WatchLabels {
            group: "apps",
            kind: "Deployment",
            version: "v1",
        })
        .inc();
        let text = m.render();
        assert!(
            text.contains(
                "etcd_request_duration_seconds_bucket{operation=\"get\",type=\"deployments.apps\",le=\"0.005\"} 1\n"
            ),
            "{text}"
        );
        assert!(text.contains("apiserver_storage_objects{resource=\"deployments.apps\"} 3\n"));
        assert!(text.contains(
            "apiserver_watch_events_total{group=\"apps\",kind=\"Deployment\",version=\"v1\"} 1\n"
        ));
        assert!(
            text.contains("# TYPE process_cpu_seconds_total counter\n"),
            "{text}"
        );
        assert!(text.contains("process_start_time_seconds "), "{text}");
    }
}
