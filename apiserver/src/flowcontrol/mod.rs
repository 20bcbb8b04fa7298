//! API priority and fairness (`flowcontrol.apiserver.k8s.io/v1`), as
//! kube-apiserver enforces it: every authenticated request is classified
//! by the FlowSchemas into a priority level and a flow, then runs at once,
//! waits in one of the level's queues, or is rejected with 429.
//!
//! - [`defaults`]: upstream's mandatory and suggested objects, created at
//!   start.
//! - [`classifier`]: FlowSchema matching and flow distinguishers.
//! - [`queueset`]: one level's seats, shuffle-sharded queues and dispatch.
//! - [`borrowing`]: nominal seats from shares, and lending/borrowing.
//! - [`controller`]: keeps the [`FlowControl`] of an instance current
//!   from the stored objects, and rebalances seats every second.
//!
//! [`FlowControl`] is per server instance (in `Instance`); its
//! configuration is an immutable snapshot swapped whole on every change,
//! so classifying reads no lock. The HTTP filter is
//! `http::flowcontrol::filter`.
//!
//! **Architecture Invariant:** only requests that come in over HTTP pass
//! through here. In-process controllers (the native controllers, the
//! federation's scheduler, syncer, status and member probes) call the
//! registry directly and are never classified, queued or rejected, so a
//! flood of user requests cannot starve them of seats.

pub mod borrowing;
pub mod classifier;
pub mod controller;
pub mod defaults;
pub mod queueset;

use std::collections::HashMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::Duration;

use arc_swap::ArcSwap;
use axum::http::HeaderValue;
use serde_json::Value;
use skein_admission::UserInfo;

use crate::authz::attributes::Target;
use crate::metrics::Metrics;
use crate::metrics::flowcontrol::{RejectReason, SchemaMetrics};
use classifier::Schema;
use queueset::{Begin, Kind, Level, Queuing, Seat};

/// The server's concurrency in seats when not configured: upstream's
/// `--max-requests-inflight` (400) plus `--max-mutating-requests-inflight`
/// (200).
pub const DEFAULT_SEATS: usize = 600;

/// The longest a request waits in a queue: upstream's request timeout
/// (60 s) over 4.
pub const QUEUE_WAIT: Duration = Duration::from_secs(15);

/// One compiled level and what [`borrowing`] needs of it.
struct LevelEntry {
    level: Arc<Level>,
    kind: Kind,
    shares: u64,
    lendable_percent: u64,
    borrowing_percent: Option<u64>,
    nominal: usize,
}

/// A compiled FlowSchema with its level and series.
struct SchemaEntry {
    schema: Schema,
    level: Arc<Level>,
    metrics: Arc<SchemaMetrics>,
}

/// One configuration snapshot.
#[derive(Default)]
struct Config {
    /// Sorted by precedence, then name; only schemas whose level exists.
    schemas: Vec<SchemaEntry>,
    levels: Vec<LevelEntry>,
    /// The stored FlowSchemas and PriorityLevelConfigurations compiled.
    stored: (Vec<Arc<Value>>, Vec<Arc<Value>>),
}

/// One server instance's API priority and fairness. See the module
/// documentation.
pub struct FlowControl {
    enabled: AtomicBool,
    total: AtomicUsize,
    config: ArcSwap<Config>,
    metrics: Arc<Metrics>,
}

impl std::fmt::Debug for FlowControl {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("FlowControl")
            .field("enabled", &self.enabled)
            .field("total", &self.total)
            .finish_non_exhaustive()
    }
}

/// Where a request was classified, and what became of it.
pub struct Decision {
    /// The matched FlowSchema's uid (`X-Kubernetes-PF-FlowSchema-UID`).
    pub flow_schema_uid: Option<HeaderValue>,
    /// Its priority level's uid (`X-Kubernetes-PF-PriorityLevel-UID`).
    pub priority_level_uid: Option<HeaderValue>,
    begin: Begin,
    metrics: Arc<SchemaMetrics>,
}

impl Decision {
    /// The seat to execute in (held until the request's response is
    /// ready), after waiting in a queue at most `limit`; or why not.
    pub async fn admit(self, limit: Duration) -> Result<Seat, RejectReason> {
        let result = match self.begin {
            Begin::Run(seat) => Ok(seat),
            Begin::Reject(why) => Err(why),
            Begin::Wait(ticket) => ticket.wait(limit).await,
        };
        if let Err(why) = result {
            self.metrics.rejected(why).inc();
        }
        result
    }
}

impl FlowControl {
    /// Enabled, [`DEFAULT_SEATS`] seats, configured with the default
    /// objects until [`FlowControl::configure`] is given the stored ones.
    pub fn new(metrics: Arc<Metrics>) -> FlowControl {
        let fc = FlowControl {
            enabled: AtomicBool::new(true),
            total: AtomicUsize::new(DEFAULT_SEATS),
            config: ArcSwap::from_pointee(Config::default()),
            metrics,
        };
        fc.configure(&[], &[]);
        fc
    }

    /// Turns enforcement on or off (`--enable-priority-and-fairness`).
    pub fn set_enabled(&self, enabled: bool) {
        self.enabled.store(enabled, Ordering::Relaxed);
    }

    /// Whether requests are classified and limited.
    pub fn is_enabled(&self) -> bool {
        self.enabled.load(Ordering::Relaxed)
    }

    /// Sets the server's concurrency in seats and recomputes every level's
    /// nominal seats.
    pub fn set_total(&self, seats: usize) {
        self.total.store(seats, Ordering::Relaxed);
        let current = self.config.load_full();
        self.configure(&current.stored.0, &current.stored.1);
    }

    /// Compiles the stored FlowSchemas and PriorityLevelConfigurations
    /// (the mandatory defaults stand in for missing `exempt` and
    /// `catch-all` objects, as upstream) and swaps the configuration in.
    /// A level whose name and uid are unchanged keeps its seats and queues
    /// (its waiting requests stay queued).
    pub fn configure(&self, schemas_in: &[Arc<Value>], levels_in: &[Arc<Value>]) {
        let (schemas, levels) = (schemas_in, levels_in);
        let old = self.config.load_full();
        let mut level_objs: Vec<Value> = levels.iter().map(|v| (**v).clone()).collect();
        let mut schema_objs: Vec<Value> = schemas.iter().map(|v| (**v).clone()).collect();
        for (objs, plural) in [
            (&mut level_objs, "prioritylevelconfigurations"),
            (&mut schema_objs, "flowschemas"),
        ] {
            for (default, mandatory) in defaults::all(plural) {
                let name = crate::registry::object::name(&default);
                let present = objs
                    .iter()
                    .any(|o| crate::registry::object::name(o) == name);
                if !present && (mandatory || levels.is_empty() && schemas.is_empty()) {
                    objs.push(default);
                }
            }
        }
        let mut entries: Vec<LevelEntry> = Vec::new();
        for obj in &level_objs {
            let name = crate::registry::object::name(obj);
            let uid = obj
                .pointer("/metadata/uid")
                .and_then(Value::as_str)
                .and_then(|u| HeaderValue::from_str(u).ok());
            let (kind, shares, lendable_percent, borrowing_percent) = parse_level(obj);
            let reused = old
                .levels
                .iter()
                .find(|e| {
                    e.level.name == name
                        && e.level.uid == uid
                        && (e.kind == Kind::Exempt) == (kind == Kind::Exempt)
                })
                .map(|e| e.level.clone());
            let level = match reused {
                Some(level) => {
                    level.reconfigure(kind);
                    level
                }
                None => Arc::new(Level::new(
                    name,
                    uid,
                    kind,
                    0,
                    self.metrics.flowcontrol().level(name),
                )),
            };
            entries.push(LevelEntry {
                level,
                kind,
                shares,
                lendable_percent,
                borrowing_percent,
                nominal: 0,
            });
        }
        let by_name: HashMap<&str, &Arc<Level>> = entries
            .iter()
            .map(|e| (e.level.name.as_str(), &e.level))
            .collect();
        let mut compiled: Vec<Schema> = schema_objs.iter().map(Schema::parse).collect();
        classifier::sort(&mut compiled);
        let schemas = compiled
            .into_iter()
            .filter_map(|schema| {
                let level = (*by_name.get(schema.level.as_str())?).clone();
                let metrics = Arc::new(
                    self.metrics
                        .flowcontrol()
                        .schema(&schema.name, &schema.level),
                );
                Some(SchemaEntry {
                    schema,
                    level,
                    metrics,
                })
            })
            .collect();
        let mut config = Config {
            schemas,
            levels: entries,
            stored: (schemas_in.to_vec(), levels_in.to_vec()),
        };
        let fresh: Vec<bool> = config
            .levels
            .iter()
            .map(|e| !old.levels.iter().any(|o| Arc::ptr_eq(&o.level, &e.level)))
            .collect();
        self.compute_nominal(&mut config);
        for (e, fresh) in config.levels.iter().zip(fresh) {
            if fresh {
                e.level.set_limit(e.nominal);
            }
        }
        self.config.store(Arc::new(config));
        self.rebalance();
    }

    fn compute_nominal(&self, config: &mut Config) {
        let total = self.total.load(Ordering::Relaxed);
        let sum: u64 = config.levels.iter().map(|e| e.shares).sum();
        for e in &mut config.levels {
            e.nominal = borrowing::nominal(total, e.shares, sum);
            e.level.metrics.nominal_limit.set(e.nominal as i64);
        }
    }

    /// Sets every limited level's current seats from its demand since the
    /// last call ([`borrowing::allocate`]).
    pub fn rebalance(&self) {
        let config = self.config.load();
        let total = self.total.load(Ordering::Relaxed);
        let limited: Vec<&LevelEntry> = config
            .levels
            .iter()
            .filter(|e| e.kind != Kind::Exempt)
            .collect();
        let demands: Vec<borrowing::Demand> = limited
            .iter()
            .map(|e| borrowing::Demand {
                nominal: e.nominal,
                lendable: borrowing::percent_of(e.nominal, e.lendable_percent),
                borrowing: e
                    .borrowing_percent
                    .map(|p| borrowing::percent_of(e.nominal, p)),
                wanted: e.level.take_demand(),
            })
            .collect();
        for (e, limit) in limited.iter().zip(borrowing::allocate(total, &demands)) {
            e.level.set_limit(limit);
        }
    }

    /// Classifies a request and begins it: `None` when enforcement is off
    /// or no schema matches (cannot happen while `catch-all` is in
    /// effect).
    pub fn begin(&self, target: &Target<'_>, user: &UserInfo) -> Option<Decision> {
        if !self.is_enabled() {
            return None;
        }
        let config = self.config.load();
        let entry = config
            .schemas
            .iter()
            .find(|e| e.schema.matches(target, user))?;
        let hash = entry.schema.flow_hash(target, user);
        Some(Decision {
            flow_schema_uid: entry.schema.uid.clone(),
            priority_level_uid: entry.level.uid.clone(),
            begin: entry.level.begin(hash, &entry.metrics),
            metrics: entry.metrics.clone(),
        })
    }

    /// Seats taken and requests waiting at level `name`.
    pub fn load(&self, name: &str) -> Option<(usize, usize)> {
        let config = self.config.load();
        let e = config.levels.iter().find(|e| e.level.name == name)?;
        Some(e.level.load())
    }
}

/// A PriorityLevelConfiguration's kind, shares, lendable and borrowing
/// percents (upstream's defaults for unset fields).
fn parse_level(obj: &Value) -> (Kind, u64, u64, Option<u64>) {
    let spec = obj.get("spec").unwrap_or(&Value::Null);
    let u = |v: &Value, p: &str| v.pointer(p).and_then(Value::as_u64);
    if spec.get("type").and_then(Value::as_str) == Some("Exempt") {
        return (
            Kind::Exempt,
            u(spec, "/exempt/nominalConcurrencyShares").unwrap_or(0),
            u(spec, "/exempt/lendablePercent").unwrap_or(0),
            None,
        );
    }
    let limited = spec.get("limited").unwrap_or(&Value::Null);
    let queuing = (limited
        .pointer("/limitResponse/type")
        .and_then(Value::as_str)
        == Some("Queue"))
    .then(|| Queuing {
        queues: u(limited, "/limitResponse/queuing/queues").unwrap_or(64) as usize,
        hand: u(limited, "/limitResponse/queuing/handSize").unwrap_or(8) as usize,
        length_limit: u(limited, "/limitResponse/queuing/queueLengthLimit").unwrap_or(50) as usize,
    });
    (
        Kind::Limited(queuing),
        u(limited, "/nominalConcurrencyShares").unwrap_or(30),
        u(limited, "/lendablePercent").unwrap_or(0),
        u(limited, "/borrowingLimitPercent"),
    )
}

#[cfg(test)]
mod tests;
