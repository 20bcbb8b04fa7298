//! Events on a Cluster's Ready transitions: core v1 Events in namespace
//! `default` (where upstream's recorder puts the events of cluster-scoped
//! objects) whose `involvedObject` is the Cluster, so `kubectl describe
//! cluster NAME` lists them.
//!
//! [`transition_event`] is pure (time passed in); [`record`] writes one
//! through the registry and only logs a failure (an Event is best effort,
//! as upstream's recorder).

use serde_json::Value;

use super::health::{Health, Status};
use skein_apiserver::controllers::event;
use skein_apiserver::registry::Registry;

/// The `source.component` and `reportingComponent` of the Events.
pub const COMPONENT: &str = "skein-cluster-controller";
/// The reason of the Event when a Cluster becomes Ready.
pub const READY: &str = "ClusterReady";
/// The reason of the Event when a Cluster stops being Ready.
pub const NOT_READY: &str = "ClusterNotReady";

/// The Cluster an Event is about.
#[derive(Clone, Debug)]
pub struct Involved<'a> {
    /// Its name.
    pub name: &'a str,
    /// Its uid.
    pub uid: &'a str,
}

/// The Event for a change from `prev` to `next`, or `None` when the Ready
/// status did not change or became nothing a person needs told (`Unknown`).
/// `now` is RFC 3339; `unique` (nanoseconds since the epoch, as upstream's
/// recorder) makes the name unique.
pub fn transition_event(
    cluster: &Involved<'_>,
    prev: &Health,
    next: &Health,
    now: &str,
    unique: u128,
) -> Option<Value> {
    if prev.status == next.status {
        return None;
    }
    let (kind, reason, message) = match next.status {
        Status::True => (
            "Normal",
            READY,
            format!("cluster {} is ready", cluster.name),
        ),
        Status::False => (
            "Warning",
            NOT_READY,
            format!(
                "cluster {} is not ready: {}: {}",
                cluster.name, next.reason, next.message
            ),
        ),
        Status::Unknown => return None,
    };
    let involved = event::Involved {
        api_version: "federation.skein.io/v1alpha1",
        kind: "Cluster",
        name: cluster.name,
        namespace: "",
        uid: cluster.uid,
        resource_version: None,
    };
    let stamp = event::Stamp {
        at: now.to_owned(),
        unique,
    };
    Some(event::event(
        &involved,
        kind,
        reason,
        &message,
        event::Source::component(COMPONENT),
        &stamp,
    ))
}

/// Creates `event` in its namespace; a failure is logged, not returned.
pub async fn record(registry: &Registry, event: Value) {
    if let Err(e) = event::record(registry, event, COMPONENT).await {
        tracing::warn!(error = %e, "recording a Cluster event failed");
    }
}

#[cfg(test)]
mod tests {
    use super::super::health::{Failure, Outcome, observe};
    use super::*;

    #[test]
    fn transitions_make_events() {
        let c = Involved {
            name: "eu-1",
            uid: "u1",
        };
        let unknown = Health::unknown();
        let ready = observe(&unknown, &Outcome::Ready, "t1", 3);
        let e = transition_event(&c, &unknown, &ready, "t1", 255).expect("an event");
        assert_eq!(e["metadata"]["name"], "eu-1.ff");
        assert_eq!(e["metadata"]["namespace"], "default");
        assert_eq!(e["reason"], "ClusterReady");
        assert_eq!(e["type"], "Normal");
        assert_eq!(e["involvedObject"]["kind"], "Cluster");
        assert_eq!(e["involvedObject"]["uid"], "u1");
        assert_eq!(e["source"]["component"], "skein-cluster-controller");
        assert!(transition_event(&c, &ready, &ready, "t2", 1).is_none());
        let down = observe(
            &ready,
            &Outcome::Failed {
                failure: Failure::Unreachable,
                message: "connection refused".into(),
            },
            "t2",
            1,
        );
        let e = transition_event(&c, &ready, &down, "t2", 2).expect("an event");
        assert_eq!(e["reason"], "ClusterNotReady");
        assert_eq!(e["type"], "Warning");
        assert_eq!(
            e["message"],
            "cluster eu-1 is not ready: Unreachable: connection refused"
        );
    }
}
