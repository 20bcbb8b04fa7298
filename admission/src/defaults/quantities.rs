//! Quantities stored as upstream stores them: `resource.Quantity`
//! round-trips through its canonical text, so `cpu: 0.5` is kept as
//! `500m` and `memory: 1024Mi` as `1Gi`. Text that does not parse is
//! left for the decoder and validation.

use serde_json::{Map, Value};

use crate::json::obj_mut;
use crate::validation::quantity::canonical;

/// Canonicalizes every quantity of the map at `key` (a `ResourceList`).
pub(crate) fn list(m: &mut Map<String, Value>, key: &str) {
    if let Some(list) = obj_mut(m, key) {
        for v in list.values_mut() {
            one(v);
        }
    }
}

/// Canonicalizes one quantity value in place (strings only: numbers are
/// the decoder's to convert).
pub(crate) fn one(v: &mut Value) {
    if let Value::String(s) = v {
        let c = canonical(s.trim());
        if c != *s {
            *s = c;
        }
    }
}

/// `limits` and `requests` of a `ResourceRequirements` at `key`.
pub(crate) fn requirements(m: &mut Map<String, Value>, key: &str) {
    if let Some(r) = obj_mut(m, key) {
        list(r, "limits");
        list(r, "requests");
    }
}

/// A ResourceQuota: `spec.hard`.
pub(crate) fn resource_quota(obj: &mut Map<String, Value>) {
    if let Some(spec) = obj_mut(obj, "spec") {
        list(spec, "hard");
    }
}

/// A LimitRange: each limit's quantities, and `SetDefaults_LimitRangeItem`
/// for Container limits (the default limit falls back to `max`, the
/// default request to the default limit, then to `min`).
pub(crate) fn limit_range(obj: &mut Map<String, Value>) {
    if let Some(spec) = obj_mut(obj, "spec") {
        crate::json::each_obj_mut(spec, "limits", |l| {
            for key in [
                "max",
                "min",
                "default",
                "defaultRequest",
                "maxLimitRequestRatio",
            ] {
                list(l, key);
            }
            if crate::json::str_of(l, "type") == "Container" {
                fill(l, "default", "max");
                fill(l, "defaultRequest", "default");
                fill(l, "defaultRequest", "min");
            }
        });
    }
}

/// Copies entries of `from` missing in `into`; an empty result stays
/// absent (Go omits the empty map).
fn fill(l: &mut Map<String, Value>, into: &str, from: &str) {
    let Some(source) = l.get(from).and_then(Value::as_object).cloned() else {
        return;
    };
    if source.is_empty() {
        return;
    }
    if !l.get(into).is_some_and(Value::is_object) {
        l.insert(into.to_owned(), Value::Object(Map::new()));
    }
    if let Some(target) = obj_mut(l, into) {
        for (k, v) in source {
            target.entry(k).or_insert(v);
        }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn limit_range_defaults() {
        let mut lr = json!({"spec": {"limits": [
            {"type": "Container", "max": {"cpu": "2", "memory": "1Gi"}, "min": {"cpu": "100m"},
             "default": {"cpu": "1"}},
            {"type": "Pod", "max": {"cpu": "4"}},
        ]}});
        limit_range(lr.as_object_mut().unwrap());
        assert_eq!(
            lr["spec"]["limits"][0],
            json!({"type": "Container", "max": {"cpu": "2", "memory": "1Gi"}, "min": {"cpu": "100m"},
                   "default": {"cpu": "1", "memory": "1Gi"},
                   "defaultRequest": {"cpu": "1", "memory": "1Gi"}})
        );
        assert_eq!(
            lr["spec"]["limits"][1],
            json!({"type": "Pod", "max": {"cpu": "4"}})
        );
    }

    #[test]
    fn canonical_in_place() {
        let mut c = json!({"resources": {"limits": {"cpu": "1000m", "memory": "1024Mi"},
            "requests": {"cpu": "0.5", "memory": "bad"}}});
        let m = c.as_object_mut().unwrap();
        requirements(m, "resources");
        assert_eq!(
            c,
            json!({"resources": {"limits": {"cpu": "1", "memory": "1Gi"},
                "requests": {"cpu": "500m", "memory": "bad"}}})
        );
    }
}
