//! A member's health: the `Ready` condition as a pure state machine over
//! probe outcomes (no I/O, time passed in).
//!
//! Contract of [`observe`] (KubeFed's thresholded cluster health, with
//! upstream condition semantics):
//! - One success makes the member `True` (reason `ClusterReady`).
//! - A member that is `True` stays `True` until `threshold` consecutive
//!   probes fail; the last failure's reason and message then make it
//!   `False`.
//! - A member that is not `True` (`Unknown` before its first result, or
//!   already `False`) takes a failure's reason and message at once, so a
//!   Cluster joined with bad credentials says so on its first probe.
//! - A failure that is not the member's doing but its configuration's
//!   ([`Failure::InvalidCredentials`]) never waits for the threshold.
//! - `last_transition` changes exactly when the status changes.

use std::fmt;

/// The status of a condition.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Status {
    /// Reached and ready.
    True,
    /// Unreachable, refused or not ready.
    False,
    /// Not probed yet.
    Unknown,
}

impl Status {
    /// The condition's `status` text.
    pub fn as_str(self) -> &'static str {
        match self {
            Status::True => "True",
            Status::False => "False",
            Status::Unknown => "Unknown",
        }
    }

    /// Parses a condition's `status` text (`Unknown` for anything else).
    pub fn parse(s: &str) -> Status {
        match s {
            "True" => Status::True,
            "False" => Status::False,
            _ => Status::Unknown,
        }
    }
}

/// The reason of a `True` Ready condition.
pub const READY_REASON: &str = "ClusterReady";
/// Its message.
pub const READY_MESSAGE: &str = "the member's /readyz answered ok";
/// The reason of an `Unknown` Ready condition (not probed yet).
pub const PENDING_REASON: &str = "Pending";

/// Why a probe failed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Failure {
    /// No connection, a TLS failure or no answer within the timeout.
    Unreachable,
    /// The member answered 401 or 403.
    Unauthorized,
    /// `/readyz` answered something other than 200.
    NotReady,
    /// The kubeconfig (or its Secret) cannot be used at all.
    InvalidCredentials,
}

impl Failure {
    /// The condition's `reason`.
    pub fn reason(self) -> &'static str {
        match self {
            Failure::Unreachable => "Unreachable",
            Failure::Unauthorized => "Unauthorized",
            Failure::NotReady => "NotReady",
            Failure::InvalidCredentials => "InvalidCredentials",
        }
    }

    /// Whether a `True` member waits for the failure threshold before this
    /// failure makes it `False` (probe failures may be transient; a
    /// configuration error is not).
    pub fn waits_for_threshold(self) -> bool {
        !matches!(self, Failure::InvalidCredentials)
    }
}

impl fmt::Display for Failure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.reason())
    }
}

/// What one probe found.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Outcome {
    /// `/readyz` answered 200.
    Ready,
    /// The probe failed; `message` says how, for people.
    Failed {
        /// The kind of failure.
        failure: Failure,
        /// The details.
        message: String,
    },
}

/// The Ready condition plus what the state machine needs to remember.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Health {
    /// The condition's status.
    pub status: Status,
    /// Its reason.
    pub reason: String,
    /// Its message.
    pub message: String,
    /// When the status last changed (RFC 3339); `None` before any result.
    pub last_transition: Option<String>,
    /// Consecutive failed probes up to now.
    pub failures: u32,
}

impl Health {
    /// Before the first result: `Unknown`.
    pub fn unknown() -> Health {
        Health {
            status: Status::Unknown,
            reason: PENDING_REASON.into(),
            message: "the member has not been probed yet".into(),
            last_transition: None,
            failures: 0,
        }
    }

    /// The health a stored Ready condition describes (a restarted
    /// controller goes on from it with no failures counted).
    pub fn from_condition(condition: &serde_json::Value) -> Health {
        let text = |k: &str| condition.get(k).and_then(serde_json::Value::as_str);
        let status = text("status").map_or(Status::Unknown, Status::parse);
        if status == Status::Unknown {
            return Health {
                last_transition: text("lastTransitionTime").map(str::to_owned),
                ..Health::unknown()
            };
        }
        Health {
            status,
            reason: text("reason").unwrap_or_default().to_owned(),
            message: text("message").unwrap_or_default().to_owned(),
            last_transition: text("lastTransitionTime").map(str::to_owned),
            failures: 0,
        }
    }
}

/// The health after `outcome`, observed at `now` (RFC 3339), when
/// `threshold` consecutive failures make a `True` member `False` (0 counts
/// as 1). See the module documentation.
pub fn observe(prev: &Health, outcome: &Outcome, now: &str, threshold: u32) -> Health {
    let (status, reason, message, failures) = match outcome {
        Outcome::Ready => (Status::True, READY_REASON, READY_MESSAGE, 0),
        Outcome::Failed { failure, message } => {
            let failures = prev.failures.saturating_add(1);
            let holds = prev.status == Status::True
                && failure.waits_for_threshold()
                && failures < threshold.max(1);
            if holds {
                return Health {
                    failures,
                    ..prev.clone()
                };
            }
            (Status::False, failure.reason(), message.as_str(), failures)
        }
    };
    let last_transition = if status == prev.status {
        prev.last_transition.clone()
    } else {
        Some(now.to_owned())
    };
    Health {
        status,
        reason: reason.to_owned(),
        message: message.to_owned(),
        last_transition,
        failures,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn failed(failure: Failure) -> Outcome {
        Outcome::Failed {
            failure,
            message: format!("{failure} details"),
        }
    }

    #[test]
    fn one_success_makes_ready() {
        let h = observe(&Health::unknown(), &Outcome::Ready, "t1", 3);
        assert_eq!(h.status, Status::True);
        assert_eq!(h.reason, "ClusterReady");
        assert_eq!(h.last_transition.as_deref(), Some("t1"));
        let again = observe(&h, &Outcome::Ready, "t2", 3);
        assert_eq!(
            again.last_transition.as_deref(),
            Some("t1"),
            "no transition"
        );
    }

    #[test]
    fn a_ready_member_fails_after_the_threshold() {
        let ready = observe(&Health::unknown(), &Outcome::Ready, "t0", 3);
        let one = observe(&ready, &failed(Failure::Unreachable), "t1", 3);
        let two = observe(&one, &failed(Failure::Unreachable), "t2", 3);
        assert_eq!((one.status, two.status), (Status::True, Status::True));
        assert_eq!(two.reason, "ClusterReady");
        assert_eq!(two.failures, 2);
        let three = observe(&two, &failed(Failure::Unreachable), "t3", 3);
        assert_eq!(three.status, Status::False);
        assert_eq!(three.reason, "Unreachable");
        assert_eq!(three.message, "Unreachable details");
        assert_eq!(three.last_transition.as_deref(), Some("t3"));
        // A success in between resets the count.
        let back = observe(&two, &Outcome::Ready, "t3", 3);
        assert_eq!(back.failures, 0);
        assert_eq!(back.last_transition.as_deref(), Some("t0"));
    }

    #[test]
    fn a_member_not_yet_ready_fails_at_once() {
        let h = observe(&Health::unknown(), &failed(Failure::Unauthorized), "t1", 3);
        assert_eq!(h.status, Status::False);
        assert_eq!(h.reason, "Unauthorized");
        assert_eq!(h.last_transition.as_deref(), Some("t1"));
        // Still False, with the newest reason; no transition.
        let h2 = observe(&h, &failed(Failure::NotReady), "t2", 3);
        assert_eq!(h2.reason, "NotReady");
        assert_eq!(h2.last_transition.as_deref(), Some("t1"));
    }

    #[test]
    fn invalid_credentials_do_not_wait() {
        let ready = observe(&Health::unknown(), &Outcome::Ready, "t0", 3);
        let h = observe(&ready, &failed(Failure::InvalidCredentials), "t1", 3);
        assert_eq!(h.status, Status::False);
        assert_eq!(h.reason, "InvalidCredentials");
    }

    #[test]
    fn stored_conditions_seed_the_machine() {
        let c = serde_json::json!({"type": "Ready", "status": "True", "reason": "ClusterReady",
            "message": "m", "lastTransitionTime": "t0"});
        let h = Health::from_condition(&c);
        assert_eq!(h.status, Status::True);
        assert_eq!(h.last_transition.as_deref(), Some("t0"));
        assert_eq!(
            Health::from_condition(&serde_json::json!({})),
            Health::unknown()
        );
    }

    fn outcome() -> impl Strategy<Value = Outcome> {
        prop_oneof![
            Just(Outcome::Ready),
            Just(failed(Failure::Unreachable)),
            Just(failed(Failure::Unauthorized)),
            Just(failed(Failure::NotReady)),
            Just(failed(Failure::InvalidCredentials)),
        ]
    }

    proptest! {
        /// Over any sequence of outcomes: the transition time moves exactly
        /// when the status changes; `threshold` failures in a row always end
        /// `False`; a success always ends `True`; fewer failures than the
        /// threshold never turn a `True` member `False` unless the
        /// credentials are invalid.
        #[test]
        fn condition_semantics(outcomes in proptest::collection::vec(outcome(), 1..40), threshold in 1u32..5) {
            let mut h = Health::unknown();
            let mut run = 0u32;
            for (i, o) in outcomes.iter().enumerate() {
                let now = format!("t{i}");
                let next = observe(&h, o, &now, threshold);
                if next.status == h.status {
                    prop_assert_eq!(&next.last_transition, &h.last_transition);
                } else {
                    prop_assert_eq!(next.last_transition.as_deref(), Some(now.as_str()));
                }
                match o {
                    Outcome::Ready => {
                        run = 0;
                        prop_assert_eq!(next.status, Status::True);
                        prop_assert_eq!(next.failures, 0);
                    }
                    Outcome::Failed { failure, .. } => {
                        run += 1;
                        prop_assert_eq!(next.failures, run);
                        if run >= threshold || !failure.waits_for_threshold() {
                            prop_assert_eq!(next.status, Status::False);
                            prop_assert_eq!(next.reason.as_str(), failure.reason());
                        }
                        if h.status == Status::True && run < threshold && failure.waits_for_threshold() {
                            prop_assert_eq!(next.status, Status::True);
                        }
                    }
                }
                prop_assert!(next.status != Status::Unknown);
                h = next;
            }
        }
    }
}
