//! Events of the Deployment and ReplicaSet controllers, as upstream's
//! event recorder writes them (core v1 Events in the object's namespace,
//! named `<object>.<unique hex>`, `source.component` the controller):
//! `ScalingReplicaSet`, `ReplicaSetCreateError`, `SuccessfulCreate`,
//! `SuccessfulDelete`, `FailedCreate`, `FailedDelete`.
//!
//! Best effort: a failed write is logged, never returned.

use serde_json::Value;

use crate::Sim;
use skein_apiserver::controllers::event;

/// What an Event is about: the kind of object and the controller.
#[derive(Clone, Copy, Debug)]
pub struct About {
    /// The object's apiVersion.
    pub api_version: &'static str,
    /// The object's kind.
    pub kind: &'static str,
    /// The reporting controller.
    pub component: &'static str,
}

/// Events of the Deployment controller.
pub const DEPLOYMENT: About = About {
    api_version: "apps/v1",
    kind: "Deployment",
    component: "deployment-controller",
};

/// Events of the ReplicaSet controller.
pub const REPLICA_SET: About = About {
    api_version: "apps/v1",
    kind: "ReplicaSet",
    component: "replicaset-controller",
};

/// The Event about `obj` at `now` (RFC 3339); `unique` (nanoseconds since
/// the epoch, as upstream's recorder) makes the name unique.
pub fn event(
    obj: &Value,
    about: About,
    type_: &str,
    reason: &str,
    message: String,
    (now, unique): (&str, u128),
) -> Value {
    let About {
        api_version,
        kind,
        component,
    } = about;
    let stamp = event::Stamp {
        at: now.to_owned(),
        unique,
    };
    event::event(
        &event::Involved::of(obj, api_version, kind),
        type_,
        reason,
        &message,
        event::Source::component(component),
        &stamp,
    )
}

/// The time stamp and unique suffix of an Event recorded now.
pub fn stamp() -> (String, u128) {
    let event::Stamp { at, unique } = event::Stamp::now();
    (at, unique)
}

/// Records `event` (see the module documentation).
pub async fn record(sim: &Sim, event: Value) {
    let Ok(events) = Sim::resource("", "v1", "events") else {
        return;
    };
    let ns = event
        .pointer("/metadata/namespace")
        .and_then(Value::as_str)
        .unwrap_or("default")
        .to_owned();
    let component = event
        .pointer("/source/component")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_owned();
    if let Err(e) = sim
        .registry
        .create(&events, &ns, event, &Sim::opts(&component))
        .await
    {
        tracing::debug!(error = %e, "recording an event failed");
    }
}

/// Records an Event about `obj` now.
pub async fn emit(
    sim: &Sim,
    obj: &Value,
    about: About,
    type_: &str,
    reason: &str,
    message: String,
) {
    let (now, unique) = stamp();
    record(
        sim,
        event(obj, about, type_, reason, message, (&now, unique)),
    )
    .await;
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn events_name_their_object_and_controller() {
        let d = json!({"metadata": {"name": "web", "namespace": "ns", "uid": "u1", "resourceVersion": "7"}});
        let e = event(
            &d,
            DEPLOYMENT,
            "Normal",
            "ScalingReplicaSet",
            "Scaled up replica set web-5d4f from 0 to 3".into(),
            ("2026-01-01T00:00:00Z", 255),
        );
        assert_eq!(e["metadata"], json!({"name": "web.ff", "namespace": "ns"}));
        assert_eq!(e["involvedObject"]["kind"], "Deployment");
        assert_eq!(e["involvedObject"]["uid"], "u1");
        assert_eq!(e["involvedObject"]["resourceVersion"], "7");
        assert_eq!(e["source"]["component"], "deployment-controller");
        assert_eq!(e["count"], 1);
    }
}
