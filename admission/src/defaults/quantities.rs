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

/// A LimitRange: each limit's bounds and defaults.
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
        });
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

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
