//! The core/v1 Events controllers record, built as client-go's event
//! recorder writes them: named `<object>.<unique hex>` (the nanoseconds of
//! the recording, as upstream's recorder), in the object's namespace (or
//! `default` for a cluster-scoped object), `count` 1, first and last
//! timestamps equal, `source.component` and `reportingComponent` the
//! controller. The one Event builder of every controller (the native ones,
//! the federation's and the simulator's).
//!
//! [`event`] is pure (time passed in as a [`Stamp`]); [`record`] writes one
//! through the registry, aggregated as upstream's recorder does: a repeat
//! (same source, involved object, type, reason and message) bumps the
//! first Event's `count` and `lastTimestamp` instead of creating another,
//! so its stored name is [`aggregation_name`] rather than the stamp's.

use serde_json::{Map, Value, json};

use crate::registry::object;
use crate::registry::{Registry, Target, WriteOptions, resource};
use crate::status::ApiError;

/// The object an Event is about (`involvedObject`).
#[derive(Clone, Copy, Debug)]
pub struct Involved<'a> {
    /// Its apiVersion.
    pub api_version: &'a str,
    /// Its kind.
    pub kind: &'a str,
    /// Its name.
    pub name: &'a str,
    /// Its namespace (empty for a cluster-scoped object: the Event then
    /// goes to `default` and names no namespace).
    pub namespace: &'a str,
    /// Its uid.
    pub uid: &'a str,
    /// Its resourceVersion when the Event should name one.
    pub resource_version: Option<&'a str>,
}

impl<'a> Involved<'a> {
    /// `obj` as an `api_version`/`kind`, with its resourceVersion (empty
    /// when it has none).
    pub fn of(obj: &'a Value, api_version: &'a str, kind: &'a str) -> Involved<'a> {
        Involved {
            api_version,
            kind,
            name: object::name(obj),
            namespace: object::namespace(obj),
            uid: object::uid(obj),
            resource_version: Some(object::meta_str(obj, "resourceVersion").unwrap_or_default()),
        }
    }

    /// The same object without its resourceVersion.
    pub fn without_resource_version(self) -> Involved<'a> {
        Involved {
            resource_version: None,
            ..self
        }
    }
}

/// Who records the Event (`source`, `reportingComponent`,
/// `reportingInstance`).
#[derive(Clone, Copy, Debug)]
pub struct Source<'a> {
    /// The controller (`source.component`, `reportingComponent`).
    pub component: &'a str,
    /// The node of a kubelet's Event (`source.host`, `reportingInstance`).
    pub host: Option<&'a str>,
}

impl<'a> Source<'a> {
    /// A controller that runs on no particular node.
    pub fn component(component: &'a str) -> Source<'a> {
        Source {
            component,
            host: None,
        }
    }
}

/// When an Event is recorded: its RFC 3339 timestamp and the nanoseconds
/// since the epoch that make its name unique.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Stamp {
    /// `firstTimestamp` and `lastTimestamp`.
    pub at: String,
    /// The name's suffix (printed in hex).
    pub unique: u128,
}

impl Stamp {
    /// At `t`.
    pub fn at(t: time::OffsetDateTime) -> Stamp {
        Stamp {
            at: object::rfc3339(t),
            unique: u128::try_from(t.unix_timestamp_nanos()).unwrap_or(0),
        }
    }

    /// Now.
    pub fn now() -> Stamp {
        Stamp::at(time::OffsetDateTime::now_utc())
    }
}

/// The Event of `type_` (`Normal`, `Warning`) and `reason` about
/// `involved`, from `source`, at `stamp`.
pub fn event(
    involved: &Involved<'_>,
    type_: &str,
    reason: &str,
    message: &str,
    source: Source<'_>,
    stamp: &Stamp,
) -> Value {
    let mut about = Map::new();
    about.insert("apiVersion".into(), json!(involved.api_version));
    about.insert("kind".into(), json!(involved.kind));
    about.insert("name".into(), json!(involved.name));
    if !involved.namespace.is_empty() {
        about.insert("namespace".into(), json!(involved.namespace));
    }
    about.insert("uid".into(), json!(involved.uid));
    if let Some(rv) = involved.resource_version {
        about.insert("resourceVersion".into(), json!(rv));
    }
    let mut src = json!({"component": source.component});
    if let Some(host) = source.host {
        src["host"] = json!(host);
    }
    let namespace = match involved.namespace {
        "" => "default",
        ns => ns,
    };
    json!({
        "apiVersion": "v1",
        "kind": "Event",
        "metadata": {
            "name": format!("{}.{:x}", involved.name, stamp.unique),
            "namespace": namespace,
        },
        "involvedObject": about,
        "reason": reason,
        "message": message,
        "source": src,
        "firstTimestamp": stamp.at,
        "lastTimestamp": stamp.at,
        "count": 1,
        "type": type_,
        "reportingComponent": source.component,
        "reportingInstance": source.host.unwrap_or_default(),
    })
}

/// Records `event` in its namespace as `field_manager`, aggregated as
/// upstream's recorder does (client-go `EventLogger`): an Event equal to
/// one recorded before in source, involved object, type, reason and
/// message is not created again; the first one gets `count` + 1 and the
/// new `lastTimestamp`. The Event is therefore named after that key
/// (`<object>.<hash of the key>`, [`aggregation_name`]), so repeats find it
/// by name, across restarts and replicas. An Event that expires
/// (`--event-ttl`) or is deleted between the create and the bump is
/// created again, with `count` 1.
///
/// # Errors
///
/// The registry's, e.g. when the namespace is being deleted; callers log
/// it and go on (an Event is best effort, as with upstream's recorder).
pub async fn record(
    registry: &Registry,
    mut event: Value,
    field_manager: &str,
) -> Result<(), ApiError> {
    let Some(events) = resource::builtin("", "v1", "events") else {
        return Ok(());
    };
    let namespace = object::namespace(&event).to_owned();
    let name = aggregation_name(&event);
    event["metadata"]["name"] = json!(name);
    let last = event.get("lastTimestamp").cloned().unwrap_or(Value::Null);
    let opts = WriteOptions {
        field_manager: field_manager.into(),
        ..WriteOptions::default()
    };
    let mut attempt = 1;
    loop {
        let err = match registry
            .create(&events, &namespace, event.clone(), &opts)
            .await
        {
            Ok(_) => return Ok(()),
            Err(e) if e.kind() == crate::status::ErrorKind::AlreadyExists => {
                let bumped = registry
                    .update_with(&events, &namespace, &name, Target::Main, &opts, |current| {
                        let mut next = current.clone();
                        let count = current.get("count").and_then(Value::as_i64).unwrap_or(1);
                        next["count"] = json!(count.saturating_add(1));
                        next["lastTimestamp"] = last.clone();
                        Ok(next)
                    })
                    .await;
                match bumped {
                    Ok(_) => return Ok(()),
                    Err(e) => e,
                }
            }
            Err(e) => return Err(e),
        };
        // Gone between the create and the bump: expired (`--event-ttl`)
        // or deleted. Record it afresh, as client-go's recorder creates
        // the Event again when its patch finds none.
        if err.kind() != crate::status::ErrorKind::NotFound || attempt == RECORD_ATTEMPTS {
            return Err(err);
        }
        attempt += 1;
    }
}

/// Creates (or bumps) tried by [`record`] while its Event keeps vanishing
/// between the two.
const RECORD_ATTEMPTS: usize = 3;

/// `<involved object name>.<16 hex digits>`: FNV-1a over what makes two
/// Events the same to upstream's recorder (source component and host,
/// involved object, type, reason, message). Stable across processes.
pub fn aggregation_name(event: &Value) -> String {
    let text = |v: Option<&Value>| v.map(Value::to_string).unwrap_or_default();
    let key = [
        text(event.get("source")),
        text(event.get("involvedObject")),
        text(event.get("type")),
        text(event.get("reason")),
        text(event.get("message")),
    ]
    .join("\u{0}");
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    for b in key.bytes() {
        hash ^= u64::from(b);
        hash = hash.wrapping_mul(0x0100_0000_01b3);
    }
    let involved = event
        .pointer("/involvedObject/name")
        .and_then(Value::as_str)
        .unwrap_or("event");
    format!("{involved}.{hash:016x}")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn stamp() -> Stamp {
        Stamp::at(time::OffsetDateTime::UNIX_EPOCH + time::Duration::seconds(100))
    }

    #[test]
    fn an_event_names_its_object_and_controller() {
        let pod = json!({"metadata": {"name": "web", "namespace": "ns", "uid": "u1",
            "resourceVersion": "7"}});
        let e = event(
            &Involved::of(&pod, "v1", "Pod"),
            "Warning",
            "BackOff",
            "m",
            Source {
                component: "kubelet",
                host: Some("node-1"),
            },
            &stamp(),
        );
        assert_eq!(e["metadata"]["name"], "web.174876e800");
        assert_eq!(e["metadata"]["namespace"], "ns");
        assert_eq!(
            e["involvedObject"],
            json!({"apiVersion": "v1", "kind": "Pod", "name": "web", "namespace": "ns",
                "uid": "u1", "resourceVersion": "7"})
        );
        assert_eq!(
            e["source"],
            json!({"component": "kubelet", "host": "node-1"})
        );
        assert_eq!(e["reportingComponent"], "kubelet");
        assert_eq!(e["reportingInstance"], "node-1");
        assert_eq!(e["firstTimestamp"], "1970-01-01T00:01:40Z");
        assert_eq!(e["lastTimestamp"], e["firstTimestamp"]);
        assert_eq!(e["count"], 1);
        assert_eq!(e["type"], "Warning");
        assert_eq!(e["reason"], "BackOff");
    }

    #[test]
    fn repeats_share_a_name_and_differences_do_not() {
        let pod = json!({"metadata": {"name": "web", "namespace": "ns", "uid": "u1"}});
        let make = |reason: &str, message: &str, t: i64| {
            event(
                &Involved::of(&pod, "v1", "Pod").without_resource_version(),
                "Warning",
                reason,
                message,
                Source::component("kubelet"),
                &Stamp::at(time::OffsetDateTime::UNIX_EPOCH + time::Duration::seconds(t)),
            )
        };
        let first = aggregation_name(&make("BackOff", "m", 1));
        assert!(first.starts_with("web."), "{first}");
        assert_eq!(first, aggregation_name(&make("BackOff", "m", 2)));
        assert_ne!(first, aggregation_name(&make("BackOff", "other", 1)));
        assert_ne!(first, aggregation_name(&make("Failed", "m", 1)));
    }

    #[test]
    fn a_cluster_scoped_object_gets_its_event_in_default() {
        let cluster = json!({"metadata": {"name": "eu-1", "uid": "u2"}});
        let e = event(
            &Involved::of(&cluster, "federation.skein.io/v1alpha1", "Cluster")
                .without_resource_version(),
            "Normal",
            "ClusterReady",
            "cluster eu-1 is ready",
            Source::component("skein-cluster-controller"),
            &stamp(),
        );
        assert_eq!(e["metadata"]["namespace"], "default");
        assert_eq!(
            e["involvedObject"],
            json!({"apiVersion": "federation.skein.io/v1alpha1", "kind": "Cluster",
                "name": "eu-1", "uid": "u2"})
        );
        assert_eq!(
            e["source"],
            json!({"component": "skein-cluster-controller"})
        );
        assert_eq!(e["reportingInstance"], "");
    }
}
