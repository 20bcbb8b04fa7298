//! Defaults of cluster-level kinds as upstream v1.33 sets them
//! (`SetDefaults_*` in pkg/apis/{scheduling,storage,flowcontrol}/v1).

use serde_json::{Map, Value, json};

use crate::json::{default, default_str, ensure_obj, obj_mut};

/// PriorityClass: `preemptionPolicy: PreemptLowerPriority`.
pub(crate) fn priority_class(obj: &mut Map<String, Value>) {
    default_str(obj, "preemptionPolicy", "PreemptLowerPriority");
}

/// StorageClass: `reclaimPolicy: Delete`, `volumeBindingMode: Immediate`.
pub(crate) fn storage_class(obj: &mut Map<String, Value>) {
    default_str(obj, "reclaimPolicy", "Delete");
    default_str(obj, "volumeBindingMode", "Immediate");
}

/// CSIDriver spec: attach required, no pod info on mount, no storage
/// capacity, `ReadWriteOnceWithFSType`, `Persistent` volumes, no
/// republish, and (SELinuxMountReadWriteOncePod is on in 1.33) no
/// SELinux mount.
pub(crate) fn csi_driver(obj: &mut Map<String, Value>) {
    let Some(spec) = ensure_obj(obj, "spec") else {
        return;
    };
    default(spec, "attachRequired", json!(true));
    default(spec, "podInfoOnMount", json!(false));
    default(spec, "storageCapacity", json!(false));
    default_str(spec, "fsGroupPolicy", "ReadWriteOnceWithFSType");
    let modes_empty = spec
        .get("volumeLifecycleModes")
        .and_then(Value::as_array)
        .is_none_or(Vec::is_empty);
    if modes_empty {
        spec.insert("volumeLifecycleModes".into(), json!(["Persistent"]));
    }
    default(spec, "requiresRepublish", json!(false));
    default(spec, "seLinuxMount", json!(false));
}

/// FlowSchema: `matchingPrecedence: 1000`.
pub(crate) fn flow_schema(obj: &mut Map<String, Value>) {
    if let Some(spec) = obj_mut(obj, "spec") {
        let zero = spec
            .get("matchingPrecedence")
            .and_then(Value::as_i64)
            .is_none_or(|p| p == 0);
        if zero {
            spec.insert("matchingPrecedence".into(), json!(1000));
        }
    }
}

/// PriorityLevelConfiguration: limited levels get 30 nominal shares, 0%
/// lendable and, when queuing, 64 queues of hand size 8 and length 50;
/// exempt levels 0 shares and 0% lendable.
pub(crate) fn priority_level(obj: &mut Map<String, Value>) {
    let Some(spec) = obj_mut(obj, "spec") else {
        return;
    };
    if let Some(limited) = obj_mut(spec, "limited") {
        default(limited, "nominalConcurrencyShares", json!(30));
        default(limited, "lendablePercent", json!(0));
        if let Some(response) = obj_mut(limited, "limitResponse")
            && response.get("type").and_then(Value::as_str) == Some("Queue")
            && let Some(queuing) = ensure_obj(response, "queuing")
        {
            for (key, value) in [("handSize", 8), ("queues", 64), ("queueLengthLimit", 50)] {
                let zero = queuing
                    .get(key)
                    .and_then(Value::as_i64)
                    .is_none_or(|v| v == 0);
                if zero {
                    queuing.insert(key.into(), json!(value));
                }
            }
        }
    }
    if let Some(exempt) = obj_mut(spec, "exempt") {
        default(exempt, "nominalConcurrencyShares", json!(0));
        default(exempt, "lendablePercent", json!(0));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn map(v: Value) -> Map<String, Value> {
        v.as_object().cloned().unwrap_or_default()
    }

    #[test]
    fn cluster_kinds_get_upstream_defaults() {
        let mut pc = map(json!({"value": 1}));
        priority_class(&mut pc);
        assert_eq!(pc["preemptionPolicy"], "PreemptLowerPriority");

        let mut sc = map(json!({"provisioner": "x"}));
        storage_class(&mut sc);
        assert_eq!(
            (sc["reclaimPolicy"].clone(), sc["volumeBindingMode"].clone()),
            (json!("Delete"), json!("Immediate"))
        );

        let mut csi = map(json!({"spec": {}}));
        csi_driver(&mut csi);
        assert_eq!(
            csi["spec"],
            json!({"attachRequired": true, "podInfoOnMount": false, "storageCapacity": false,
                "fsGroupPolicy": "ReadWriteOnceWithFSType", "volumeLifecycleModes": ["Persistent"],
                "requiresRepublish": false, "seLinuxMount": false})
        );

        let mut plc = map(
            json!({"spec": {"type": "Limited", "limited": {"limitResponse": {"type": "Queue"}}}}),
        );
        priority_level(&mut plc);
        assert_eq!(
            plc["spec"]["limited"],
            json!({"nominalConcurrencyShares": 30, "lendablePercent": 0,
                "limitResponse": {"type": "Queue", "queuing": {"handSize": 8, "queues": 64, "queueLengthLimit": 50}}})
        );

        let mut fs = map(json!({"spec": {"priorityLevelConfiguration": {"name": "x"}}}));
        flow_schema(&mut fs);
        assert_eq!(fs["spec"]["matchingPrecedence"], 1000);
    }
}
