//! Leader election through a `coordination.k8s.io/v1` Lease, as client-go's
//! `leaderelection` with a `LeaseLock` (kube-controller-manager's
//! `--leader-elect`): several Skein replicas on one etcd all serve the API,
//! and the controllers run on one of them.
//!
//! Contract:
//! - A candidate tries every retry period to create the Lease, or to take it
//!   once the holder named in it has not renewed it for the lease duration,
//!   measured on this process's clock from when this process last saw the
//!   record change (client-go's observed time: holders' clocks need not
//!   agree). Every write is compare-and-swap on the Lease's
//!   resourceVersion, so two candidates never both win.
//! - Once it holds the Lease, [`Elector::run`] calls `on_elected` once, then
//!   renews every retry period. If no renewal succeeded for the renew
//!   deadline (shorter than the lease duration, so it stops acting before
//!   anyone may take over) leadership is lost: `run` returns
//!   [`Outcome::Lost`] and the caller must stop the controllers it started
//!   (`skein serve` shuts down and exits non-zero, as kube-controller-manager
//!   does, and is restarted as a candidate).
//! - [`Elector::release`] (graceful shutdown) empties the holder and sets a
//!   one-second duration, so that another replica takes over at once.
//! - `leader_election_master_status{name}` is 1 while this process leads.
//!
//! [`step`] is the pure decision; the [`Elector`] around it does the I/O.

use std::time::Duration;

use serde_json::{Value, json};
use time::OffsetDateTime;
use tokio::time::Instant;

use crate::registry::object::micro_timestamp;
use crate::registry::{Registry, Target, WriteOptions, object, resource};
use crate::status::ApiError;

/// The field manager of the Lease's writes.
const MANAGER: &str = "skein-leader-election";

/// The leader election's settings (kube-controller-manager's flags).
#[derive(Clone, Debug)]
pub struct LeaderElection {
    /// The Lease's name.
    pub name: String,
    /// The Lease's namespace.
    pub namespace: String,
    /// How long a Lease holds after its last renewal.
    pub lease_duration: Duration,
    /// How long the leader keeps trying to renew before it gives up.
    pub renew_deadline: Duration,
    /// How often candidates try and the leader renews.
    pub retry_period: Duration,
    /// This process's identity (hostname and a random suffix).
    pub identity: String,
}

/// A Lease as the election reads it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Record {
    /// `spec.holderIdentity` ("" when released).
    pub holder: String,
    /// `spec.leaseDurationSeconds`.
    pub duration: Duration,
    /// `spec.leaseTransitions`.
    pub transitions: i64,
    /// `spec.acquireTime`, as written.
    pub acquired: Option<String>,
}

impl Record {
    /// The record in a Lease object.
    pub fn of(lease: &Value) -> Record {
        let spec = &lease["spec"];
        Record {
            holder: spec["holderIdentity"]
                .as_str()
                .unwrap_or_default()
                .to_owned(),
            duration: Duration::from_secs(
                spec["leaseDurationSeconds"]
                    .as_u64()
                    .unwrap_or_default()
                    .min(u64::from(u32::MAX)),
            ),
            transitions: spec["leaseTransitions"].as_i64().unwrap_or_default(),
            acquired: spec["acquireTime"].as_str().map(str::to_owned),
        }
    }
}

/// What a candidate or leader does next.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Step {
    /// No Lease: create it, holding it.
    Create,
    /// Write the Lease as held by `me` with these transitions (renewing
    /// when it already names `me`, taking it over otherwise).
    Write {
        /// `spec.leaseTransitions` to write.
        transitions: i64,
        /// Whether `me` already held it (the acquire time is kept).
        renew: bool,
    },
    /// Another holder's Lease is still valid: wait.
    Wait,
}

/// The decision of `me` on the Lease `seen` (`None`: there is none), which
/// this process saw change `since` ago. Pure.
pub fn step(me: &str, seen: Option<&Record>, since: Duration) -> Step {
    let Some(r) = seen else {
        return Step::Create;
    };
    if r.holder == me {
        return Step::Write {
            transitions: r.transitions,
            renew: true,
        };
    }
    if !r.holder.is_empty() && since < r.duration {
        return Step::Wait;
    }
    Step::Write {
        transitions: r.transitions.saturating_add(1),
        renew: false,
    }
}

/// What one round of the election found.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Round {
    /// This process holds the Lease (written just now).
    Held,
    /// Another holder's Lease is valid.
    Waiting,
    /// The Lease changed between the read and the write.
    Raced,
}

/// How [`Elector::run`] ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Outcome {
    /// Renewals failed for the renew deadline: stop acting as leader.
    Lost,
}

/// The I/O around [`step`] for one process.
#[derive(Clone)]
pub struct Elector {
    registry: Registry,
    config: LeaderElection,
    /// The last record read and when it was first seen as it is.
    observed: Option<(String, Instant)>,
}

impl Elector {
    /// An elector of `config` writing through `registry`.
    pub fn new(registry: Registry, config: LeaderElection) -> Elector {
        Elector {
            registry,
            config,
            observed: None,
        }
    }

    /// Waits until this process holds the Lease, calls `on_elected`, then
    /// renews until renewing fails for the renew deadline.
    pub async fn run(&mut self, on_elected: impl FnOnce()) -> Outcome {
        let gauge = self
            .registry
            .instance()
            .metrics()
            .leader_status(&self.config.name);
        gauge.set(0);
        loop {
            match self.try_acquire_or_renew().await {
                Ok(Round::Held) => break,
                Ok(Round::Waiting | Round::Raced) => {}
                Err(e) => {
                    tracing::warn!(lease = %self.lease_name(), error = %e, "leader election: reading or writing the Lease failed")
                }
            }
            tokio::time::sleep(jittered(self.config.retry_period)).await;
        }
        tracing::info!(lease = %self.lease_name(), identity = %self.config.identity, "became leader");
        gauge.set(1);
        on_elected();
        let mut renewed = Instant::now();
        loop {
            tokio::time::sleep(self.config.retry_period).await;
            let attempt = tokio::time::timeout(
                self.config.renew_deadline.saturating_sub(renewed.elapsed()),
                self.try_acquire_or_renew(),
            )
            .await;
            match attempt {
                Ok(Ok(Round::Held)) => renewed = Instant::now(),
                Ok(Ok(Round::Waiting)) => {
                    tracing::error!(lease = %self.lease_name(), "another holder took the Lease");
                    break;
                }
                // The Lease changed between read and write: read again.
                Ok(Ok(Round::Raced)) => {}
                Ok(Err(e)) => {
                    tracing::warn!(lease = %self.lease_name(), error = %e, "renewing the Lease failed")
                }
                Err(_) => {}
            }
            if renewed.elapsed() >= self.config.renew_deadline {
                tracing::error!(lease = %self.lease_name(), "failed to renew the Lease within the renew deadline");
                break;
            }
        }
        gauge.set(0);
        Outcome::Lost
    }

    /// Hands the Lease back if this process holds it: the holder is
    /// emptied and the duration set to one second, so that a candidate
    /// takes over at once.
    pub async fn release(&self) {
        let Some(res) = resource::builtin("coordination.k8s.io", "v1", "leases") else {
            return;
        };
        let c = &self.config;
        let Ok(mut lease) = self.registry.get(&res, &c.namespace, &c.name).await else {
            return;
        };
        if Record::of(&lease).holder != c.identity {
            return;
        }
        let now = micro_timestamp(OffsetDateTime::now_utc());
        lease["spec"]["holderIdentity"] = json!("");
        lease["spec"]["leaseDurationSeconds"] = json!(1);
        lease["spec"]["renewTime"] = json!(now);
        let written = self
            .registry
            .update(&res, &c.namespace, &c.name, lease, Target::Main, &opts())
            .await;
        match written {
            Ok(_) => tracing::info!(lease = %self.lease_name(), "released the Lease"),
            Err(e) => {
                tracing::warn!(lease = %self.lease_name(), error = %e, "releasing the Lease failed")
            }
        }
        self.registry
            .instance()
            .metrics()
            .leader_status(&c.name)
            .set(0);
    }

    /// One round: read the Lease, decide, write.
    async fn try_acquire_or_renew(&mut self) -> Result<Round, ApiError> {
        let res = resource::builtin("coordination.k8s.io", "v1", "leases").ok_or_else(|| {
            ApiError::internal("the coordination.k8s.io/v1 leases resource is not served")
        })?;
        let c = self.config.clone();
        let current = match self.registry.get(&res, &c.namespace, &c.name).await {
            Ok(l) => Some(l),
            Err(e) if e.code().as_u16() == 404 => None,
            Err(e) => return Err(e),
        };
        let now = Instant::now();
        let since = match &current {
            None => Duration::ZERO,
            Some(l) => {
                let rv = object::meta_str(l, "resourceVersion")
                    .unwrap_or_default()
                    .to_owned();
                match &self.observed {
                    Some((seen, at)) if *seen == rv => now.duration_since(*at),
                    _ => {
                        self.observed = Some((rv, now));
                        Duration::ZERO
                    }
                }
            }
        };
        let record = current.as_ref().map(Record::of);
        let stamp = micro_timestamp(OffsetDateTime::now_utc());
        let duration = self.config.lease_duration.as_secs().max(1);
        let written = match step(&c.identity, record.as_ref(), since) {
            Step::Wait => return Ok(Round::Waiting),
            Step::Create => {
                let lease = json!({
                    "apiVersion": "coordination.k8s.io/v1",
                    "kind": "Lease",
                    "metadata": {"name": c.name, "namespace": c.namespace},
                    "spec": {
                        "holderIdentity": c.identity,
                        "leaseDurationSeconds": duration,
                        "acquireTime": stamp,
                        "renewTime": stamp,
                        "leaseTransitions": 0,
                    },
                });
                self.registry
                    .create(&res, &c.namespace, lease, &opts())
                    .await
            }
            Step::Write { transitions, renew } => {
                let mut lease = current.unwrap_or_default();
                let acquired = match (renew, record.and_then(|r| r.acquired)) {
                    (true, Some(at)) => at,
                    _ => stamp.clone(),
                };
                lease["spec"] = json!({
                    "holderIdentity": c.identity,
                    "leaseDurationSeconds": duration,
                    "acquireTime": acquired,
                    "renewTime": stamp,
                    "leaseTransitions": transitions,
                });
                self.registry
                    .update(&res, &c.namespace, &c.name, lease, Target::Main, &opts())
                    .await
            }
        };
        match written {
            Ok(lease) => {
                let rv = object::meta_str(&lease, "resourceVersion").unwrap_or_default();
                self.observed = Some((rv.to_owned(), now));
                Ok(Round::Held)
            }
            // Someone else wrote first (create or compare-and-swap).
            Err(e) if e.code().as_u16() == 409 => Ok(Round::Raced),
            Err(e) => Err(e),
        }
    }

    fn lease_name(&self) -> String {
        format!("{}/{}", self.config.namespace, self.config.name)
    }
}

fn opts() -> WriteOptions {
    WriteOptions {
        field_manager: MANAGER.into(),
        ..WriteOptions::default()
    }
}

/// `period` plus up to 20% (client-go's `JitterFactor` of 1.2 on retries),
/// so that candidates started together do not try in lockstep.
fn jittered(period: Duration) -> Duration {
    let r = uuid::Uuid::new_v4().as_u128() % 1000;
    period + period.mul_f64(0.2 * r as f64 / 1000.0)
}

/// This process's identity: the hostname and a random suffix, as client-go
/// (`<hostname>_<uuid>`).
pub fn identity() -> String {
    let host = std::fs::read_to_string("/proc/sys/kernel/hostname")
        .map(|h| h.trim().to_owned())
        .ok()
        .filter(|h| !h.is_empty())
        .unwrap_or_else(|| "skein".to_owned());
    format!("{host}_{}", uuid::Uuid::new_v4())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn held(by: &str, secs: u64, transitions: i64) -> Record {
        Record {
            holder: by.into(),
            duration: Duration::from_secs(secs),
            transitions,
            acquired: Some("2026-01-01T00:00:00.000000Z".into()),
        }
    }

    #[test]
    fn no_lease_is_created() {
        assert_eq!(step("a", None, Duration::ZERO), Step::Create);
    }

    #[test]
    fn the_holder_renews_and_keeps_its_transitions() {
        let r = held("a", 15, 3);
        for since in [Duration::ZERO, Duration::from_secs(60)] {
            assert_eq!(
                step("a", Some(&r), since),
                Step::Write {
                    transitions: 3,
                    renew: true
                }
            );
        }
    }

    #[test]
    fn another_holder_is_waited_for_until_its_lease_expires_on_our_clock() {
        let r = held("b", 15, 3);
        assert_eq!(step("a", Some(&r), Duration::from_secs(14)), Step::Wait);
        assert_eq!(
            step("a", Some(&r), Duration::from_secs(15)),
            Step::Write {
                transitions: 4,
                renew: false
            }
        );
    }

    #[test]
    fn a_released_lease_is_taken_at_once() {
        let r = held("", 1, 7);
        assert_eq!(
            step("a", Some(&r), Duration::ZERO),
            Step::Write {
                transitions: 8,
                renew: false
            }
        );
    }

    #[test]
    fn a_record_reads_from_a_lease() {
        let lease = json!({"spec": {"holderIdentity": "h_1", "leaseDurationSeconds": 15,
            "leaseTransitions": 2, "acquireTime": "2026-01-01T00:00:00.000000Z"}});
        assert_eq!(Record::of(&lease), held("h_1", 15, 2));
        assert_eq!(
            Record::of(&json!({})),
            Record {
                holder: String::new(),
                duration: Duration::ZERO,
                transitions: 0,
                acquired: None,
            }
        );
    }

    #[test]
    fn jitter_stays_within_a_fifth() {
        for _ in 0..100 {
            let j = jittered(Duration::from_secs(2));
            assert!(
                j >= Duration::from_secs(2) && j <= Duration::from_millis(2400),
                "{j:?}"
            );
        }
    }
}
