//! API priority and fairness series (upstream's
//! `k8s.io/apiserver/pkg/util/flowcontrol/metrics`): names, labels, help
//! texts and buckets of kube-apiserver 1.33.
//!
//! Handles are taken once per FlowSchema and priority level when the
//! configuration is compiled ([`FlowMetrics::schema`],
//! [`FlowMetrics::level`]), so recording a request is a few atomic
//! operations and no label lookup.

use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::metrics::histogram::Histogram;
use prometheus_client::registry::Registry;

/// Upstream's `queueWaitHistogram` buckets.
const WAIT_BUCKETS: [f64; 13] = [
    0.0, 0.005, 0.02, 0.05, 0.1, 0.2, 0.5, 1.0, 2.0, 5.0, 10.0, 15.0, 30.0,
];

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct SchemaLabels {
    flow_schema: String,
    priority_level: String,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct RejectLabels {
    flow_schema: String,
    priority_level: String,
    reason: &'static str,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct WaitLabels {
    execute: &'static str,
    flow_schema: String,
    priority_level: String,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct LevelLabels {
    priority_level: String,
}

fn wait_histogram() -> Histogram {
    Histogram::new(WAIT_BUCKETS)
}

/// Why a request was rejected (the `reason` label).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RejectReason {
    /// Its queue was full.
    QueueFull,
    /// A `Reject` level had no free seat.
    ConcurrencyLimit,
    /// It waited in its queue longer than allowed.
    TimeOut,
    /// The client went away while it waited.
    Cancelled,
}

impl RejectReason {
    /// Upstream's label value.
    pub fn label(self) -> &'static str {
        match self {
            RejectReason::QueueFull => "queue-full",
            RejectReason::ConcurrencyLimit => "concurrency-limit",
            RejectReason::TimeOut => "time-out",
            RejectReason::Cancelled => "cancelled",
        }
    }
}

/// The series of one FlowSchema (and the level it names).
#[derive(Clone, Debug)]
pub struct SchemaMetrics {
    /// `apiserver_flowcontrol_dispatched_requests_total`.
    pub dispatched: Counter,
    /// `apiserver_flowcontrol_current_inqueue_requests`.
    pub inqueue: Gauge,
    /// `apiserver_flowcontrol_current_executing_requests`.
    pub executing: Gauge,
    /// `apiserver_flowcontrol_current_executing_seats`.
    pub executing_seats: Gauge,
    /// `apiserver_flowcontrol_request_wait_duration_seconds{execute="true"}`.
    pub waited_executed: Histogram,
    /// `…{execute="false"}`: the wait of a request then rejected.
    pub waited_rejected: Histogram,
    rejected: [Counter; 4],
}

impl SchemaMetrics {
    /// `apiserver_flowcontrol_rejected_requests_total` for `reason`.
    pub fn rejected(&self, reason: RejectReason) -> &Counter {
        &self.rejected[reason as usize]
    }
}

/// The series of one priority level.
#[derive(Clone, Debug)]
pub struct LevelMetrics {
    /// `apiserver_flowcontrol_nominal_limit_seats`.
    pub nominal_limit: Gauge,
    /// `apiserver_flowcontrol_current_limit_seats`.
    pub current_limit: Gauge,
}

/// Every flow-control family.
#[derive(Debug)]
pub struct FlowMetrics {
    dispatched: Family<SchemaLabels, Counter>,
    rejected: Family<RejectLabels, Counter>,
    inqueue: Family<SchemaLabels, Gauge>,
    executing: Family<SchemaLabels, Gauge>,
    executing_seats: Family<SchemaLabels, Gauge>,
    wait: Family<WaitLabels, Histogram, fn() -> Histogram>,
    nominal_limit: Family<LevelLabels, Gauge>,
    current_limit: Family<LevelLabels, Gauge>,
}

impl Default for FlowMetrics {
    fn default() -> Self {
        FlowMetrics::new()
    }
}

impl FlowMetrics {
    /// Every family, empty.
    pub fn new() -> FlowMetrics {
        FlowMetrics {
            dispatched: Family::default(),
            rejected: Family::default(),
            inqueue: Family::default(),
            executing: Family::default(),
            executing_seats: Family::default(),
            wait: Family::new_with_constructor(wait_histogram),
            nominal_limit: Family::default(),
            current_limit: Family::default(),
        }
    }

    /// Declares every family in `registry`.
    pub fn register(&self, registry: &mut Registry) {
        let m = self;
        registry.register(
            "apiserver_flowcontrol_rejected_requests",
            "[BETA] Number of requests rejected by API Priority and Fairness subsystem",
            m.rejected.clone(),
        );
        registry.register(
            "apiserver_flowcontrol_dispatched_requests",
            "[BETA] Number of requests executed by API Priority and Fairness subsystem",
            m.dispatched.clone(),
        );
        registry.register(
            "apiserver_flowcontrol_current_inqueue_requests",
            "[BETA] Number of requests currently pending in queues of the API Priority and \
             Fairness subsystem",
            m.inqueue.clone(),
        );
        registry.register(
            "apiserver_flowcontrol_current_executing_requests",
            "[BETA] Number of requests in initial (for a WATCH) or any (for a non-WATCH) \
             execution stage in the API Priority and Fairness subsystem",
            m.executing.clone(),
        );
        registry.register(
            "apiserver_flowcontrol_current_executing_seats",
            "[BETA] Concurrency (number of seats) occupied by the currently executing (initial \
             stage for a WATCH, any stage otherwise) requests in the API Priority and Fairness \
             subsystem",
            m.executing_seats.clone(),
        );
        registry.register(
            "apiserver_flowcontrol_request_wait_duration_seconds",
            "[BETA] Length of time a request spent waiting in its queue",
            m.wait.clone(),
        );
        registry.register(
            "apiserver_flowcontrol_nominal_limit_seats",
            "[BETA] Nominal number of execution seats configured for each priority level",
            m.nominal_limit.clone(),
        );
        registry.register(
            "apiserver_flowcontrol_current_limit_seats",
            "[ALPHA] current derived number of execution seats available to each priority level",
            m.current_limit.clone(),
        );
    }

    /// The handles of FlowSchema `schema` (of priority level `level`).
    pub fn schema(&self, schema: &str, level: &str) -> SchemaMetrics {
        let labels = SchemaLabels {
            flow_schema: schema.to_owned(),
            priority_level: level.to_owned(),
        };
        let wait = |execute| WaitLabels {
            execute,
            flow_schema: schema.to_owned(),
            priority_level: level.to_owned(),
        };
        let rejected = |reason: RejectReason| {
            self.rejected.get_or_create_owned(&RejectLabels {
                flow_schema: schema.to_owned(),
                priority_level: level.to_owned(),
                reason: reason.label(),
            })
        };
        SchemaMetrics {
            dispatched: self.dispatched.get_or_create_owned(&labels),
            inqueue: self.inqueue.get_or_create_owned(&labels),
            executing: self.executing.get_or_create_owned(&labels),
            executing_seats: self.executing_seats.get_or_create_owned(&labels),
            waited_executed: self.wait.get_or_create_owned(&wait("true")),
            waited_rejected: self.wait.get_or_create_owned(&wait("false")),
            rejected: [
                rejected(RejectReason::QueueFull),
                rejected(RejectReason::ConcurrencyLimit),
                rejected(RejectReason::TimeOut),
                rejected(RejectReason::Cancelled),
            ],
        }
    }

    /// The handles of priority level `level`.
    pub fn level(&self, level: &str) -> LevelMetrics {
        let labels = LevelLabels {
            priority_level: level.to_owned(),
        };
        LevelMetrics {
            nominal_limit: self.nominal_limit.get_or_create_owned(&labels),
            current_limit: self.current_limit.get_or_create_owned(&labels),
        }
    }
}
