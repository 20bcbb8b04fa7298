//! `events.k8s.io/v1` Event ⇄ core/v1 Event (the storage version), with
//! upstream's field mapping (pkg/apis/events/v1 conversion):
//!
//! | events.k8s.io/v1 | core/v1 |
//! |---|---|
//! | `regarding` | `involvedObject` |
//! | `note` | `message` |
//! | `reportingController` | `reportingComponent` |
//! | `deprecatedSource` | `source` |
//! | `deprecatedFirstTimestamp` | `firstTimestamp` |
//! | `deprecatedLastTimestamp` | `lastTimestamp` |
//! | `deprecatedCount` | `count` |
//!
//! `eventTime`, `series`, `action`, `reason`, `related`, `type` and
//! `reportingInstance` keep their names.

use serde_json::Value;

use super::{Conversion, rename, set_api_version};

/// The conversion of the `events.k8s.io/v1` row.
pub static EVENTS_V1: Conversion = Conversion {
    storage_group: "",
    storage_version: "v1",
    storage_plural: "events",
    to_storage,
    from_storage,
};

const PAIRS: &[(&str, &str)] = &[
    ("regarding", "involvedObject"),
    ("note", "message"),
    ("reportingController", "reportingComponent"),
    ("deprecatedSource", "source"),
    ("deprecatedFirstTimestamp", "firstTimestamp"),
    ("deprecatedLastTimestamp", "lastTimestamp"),
    ("deprecatedCount", "count"),
];

/// events.k8s.io/v1 → core/v1.
pub fn to_storage(mut obj: Value) -> Result<Value, String> {
    let Some(map) = obj.as_object_mut() else {
        return Err("the object must be a JSON object".into());
    };
    for (events, core) in PAIRS {
        rename(map, events, core);
    }
    set_api_version(&mut obj, "v1");
    Ok(obj)
}

/// core/v1 → events.k8s.io/v1.
pub fn from_storage(mut obj: Value) -> Value {
    if let Some(map) = obj.as_object_mut() {
        for (events, core) in PAIRS {
            rename(map, core, events);
        }
        // core/v1's `source` is a struct (always present as `{}` in Go);
        // events.k8s.io's `deprecatedSource` is the same struct.
    }
    set_api_version(&mut obj, "events.k8s.io/v1");
    obj
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn fields_map_as_upstream_and_round_trip() {
        let core = json!({
            "apiVersion": "v1", "kind": "Event",
            "metadata": {"name": "e", "namespace": "ns"},
            "involvedObject": {"kind": "Pod", "name": "p", "namespace": "ns"},
            "reason": "Started", "message": "started container",
            "source": {"component": "kubelet", "host": "n1"},
            "firstTimestamp": "2026-01-01T00:00:00Z", "lastTimestamp": "2026-01-01T00:00:01Z",
            "count": 2, "type": "Normal", "eventTime": null,
            "reportingComponent": "kubelet", "reportingInstance": "n1"
        });
        let ev = from_storage(core.clone());
        assert_eq!(ev["apiVersion"], "events.k8s.io/v1");
        assert_eq!(ev["regarding"]["name"], "p");
        assert_eq!(ev["note"], "started container");
        assert_eq!(ev["reportingController"], "kubelet");
        assert_eq!(ev["deprecatedSource"]["host"], "n1");
        assert_eq!(ev["deprecatedCount"], 2);
        assert!(ev.get("involvedObject").is_none() && ev.get("message").is_none());
        assert_eq!(to_storage(ev).unwrap(), core);
    }

    #[test]
    fn non_objects_are_rejected() {
        assert!(to_storage(json!([1])).is_err());
    }
}
