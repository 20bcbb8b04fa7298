//! Events about Pods, as kube-scheduler and the kubelet record them
//! (`kubectl describe pod` shows them): `Scheduled`, `FailedScheduling`,
//! `Pulled`, `Created`, `Started`, `BackOff`.
//!
//! Recording is best effort: a failed write is logged, never retried, and
//! never holds up the Pod.

use serde_json::Value;
use time::OffsetDateTime;

use crate::Sim;

use skein_apiserver::controllers::event;
use skein_apiserver::registry::object;

/// Who records an event: kube-scheduler, the kubelet of a Node, or the
/// cloud service controller.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Source<'a> {
    /// `default-scheduler`.
    Scheduler,
    /// `kubelet` on the named Node.
    Kubelet(&'a str),
    /// `service-controller` (load balancers).
    ServiceController,
}

/// A core/v1 Event about `pod` (or any object: its `kind` and
/// `apiVersion` are used when present; `type_` `Normal` or `Warning`),
/// named as client-go's recorder names them (`<name>.<nanoseconds in
/// hex>`).
pub fn event(
    pod: &Value,
    type_: &str,
    reason: &str,
    message: &str,
    source: Source<'_>,
    now: OffsetDateTime,
) -> Value {
    let (component, host) = match source {
        Source::Scheduler => ("default-scheduler", None),
        Source::Kubelet(node) => ("kubelet", Some(node)),
        Source::ServiceController => ("service-controller", None),
    };
    let kind = pod.get("kind").and_then(Value::as_str).unwrap_or("Pod");
    let api_version = pod
        .get("apiVersion")
        .and_then(Value::as_str)
        .unwrap_or("v1");
    event::event(
        &event::Involved::of(pod, api_version, kind),
        type_,
        reason,
        message,
        event::Source { component, host },
        &event::Stamp::at(now),
    )
}

/// The kubelet's events for a Pod whose containers just started.
pub fn started(pod: &Value, node: &str, now: OffsetDateTime) -> Vec<Value> {
    let mut out = Vec::new();
    let containers = pod
        .pointer("/spec/containers")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    for c in &containers {
        let name = c.get("name").and_then(Value::as_str).unwrap_or_default();
        let image = c.get("image").and_then(Value::as_str).unwrap_or_default();
        let kubelet = Source::Kubelet(node);
        out.push(event(
            pod,
            "Normal",
            "Pulled",
            &format!("Container image {image:?} already present on machine"),
            kubelet,
            now,
        ));
        out.push(event(
            pod,
            "Normal",
            "Created",
            &format!("Created container: {name}"),
            kubelet,
            now + time::Duration::nanoseconds(1),
        ));
        out.push(event(
            pod,
            "Normal",
            "Started",
            &format!("Started container {name}"),
            kubelet,
            now + time::Duration::nanoseconds(2),
        ));
    }
    out
}

/// The kubelet's event for a Pod whose containers crash-loop.
pub fn back_off(pod: &Value, node: &str, now: OffsetDateTime) -> Vec<Value> {
    let pod_ref = format!(
        "{}_{}({})",
        object::name(pod),
        object::namespace(pod),
        object::uid(pod)
    );
    pod.pointer("/spec/containers")
        .and_then(Value::as_array)
        .map(|cs| {
            cs.iter()
                .map(|c| {
                    let name = c.get("name").and_then(Value::as_str).unwrap_or_default();
                    event(
                        pod,
                        "Warning",
                        "BackOff",
                        &format!("Back-off restarting failed container {name} in pod {pod_ref}"),
                        Source::Kubelet(node),
                        now,
                    )
                })
                .collect()
        })
        .unwrap_or_default()
}

/// Creates `events` (best effort).
pub async fn record(sim: &Sim, events: Vec<Value>) {
    let Ok(res) = Sim::resource("", "v1", "events") else {
        return;
    };
    for e in events {
        let ns = object::namespace(&e).to_owned();
        if let Err(err) = sim
            .registry
            .create(&res, &ns, e, &Sim::opts("skein-sim-events"))
            .await
        {
            tracing::debug!(error = %err, "recording an event failed");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn events_point_at_their_pod() {
        let pod = json!({"metadata": {"name": "web", "namespace": "ns", "uid": "u1"},
            "spec": {"containers": [{"name": "c", "image": "nginx"}]}});
        let now = OffsetDateTime::UNIX_EPOCH + time::Duration::seconds(100);
        let e = event(
            &pod,
            "Warning",
            "FailedScheduling",
            "m",
            Source::Scheduler,
            now,
        );
        assert_eq!(e["involvedObject"]["uid"], "u1");
        assert_eq!(e["source"]["component"], "default-scheduler");
        assert_eq!(e["metadata"]["name"], "web.174876e800");
        let s = started(&pod, "sim-node-0", now);
        let reasons: Vec<&str> = s.iter().filter_map(|e| e["reason"].as_str()).collect();
        assert_eq!(reasons, ["Pulled", "Created", "Started"]);
        assert_eq!(s[2]["source"]["host"], "sim-node-0");
        let names: std::collections::HashSet<&str> = s
            .iter()
            .filter_map(|e| e["metadata"]["name"].as_str())
            .collect();
        assert_eq!(names.len(), 3, "distinct names");
    }
}
