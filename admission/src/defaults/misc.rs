//! Defaults for Secret, PersistentVolumeClaim, HorizontalPodAutoscaler,
//! NetworkPolicy and IngressClass (upstream `pkg/apis/core/v1/defaults.go`,
//! `pkg/apis/autoscaling/v2/defaults.go`, `pkg/apis/networking/v1/defaults.go`).

use serde_json::{Map, Value, json};

use crate::json::{default, default_str, ensure_obj, obj_mut};

/// `SetDefaults_Secret` (type Opaque) and the v1 conversion that folds
/// `stringData` into `data` (base64) and never stores `stringData`.
pub(crate) fn secret(obj: &mut Map<String, Value>) {
    default_str(obj, "type", "Opaque");
    let Some(Value::Object(string_data)) = obj.remove("stringData") else {
        return;
    };
    if string_data.is_empty() {
        return;
    }
    if let Some(data) = ensure_obj(obj, "data") {
        for (k, v) in string_data {
            let text = v.as_str().unwrap_or_default();
            data.insert(k, Value::String(base64(text.as_bytes())));
        }
    }
}

/// Standard base64 with padding.
fn base64(bytes: &[u8]) -> String {
    const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::with_capacity(bytes.len().div_ceil(3) * 4);
    for chunk in bytes.chunks(3) {
        let b = [
            chunk[0],
            chunk.get(1).copied().unwrap_or(0),
            chunk.get(2).copied().unwrap_or(0),
        ];
        let n = (u32::from(b[0]) << 16) | (u32::from(b[1]) << 8) | u32::from(b[2]);
        for i in 0..4 {
            if i <= chunk.len() {
                out.push(char::from(ALPHABET[((n >> (18 - 6 * i)) & 63) as usize]));
            } else {
                out.push('=');
            }
        }
    }
    out
}

/// A PVC inside a StatefulSet's `volumeClaimTemplates`: spec defaults,
/// `status.phase: Pending` and the zero creation timestamp, as stored.
pub(crate) fn pvc(obj: &mut Map<String, Value>) {
    if let Some(meta) = ensure_obj(obj, "metadata") {
        meta.entry("creationTimestamp").or_insert(Value::Null);
    }
    pvc_spec(obj);
    if let Some(status) = ensure_obj(obj, "status") {
        default_str(status, "phase", "Pending");
    }
}

/// `SetDefaults_PersistentVolumeClaimSpec`: `volumeMode: Filesystem`.
pub(crate) fn pvc_spec(obj: &mut Map<String, Value>) {
    if let Some(spec) = ensure_obj(obj, "spec") {
        default_str(spec, "volumeMode", "Filesystem");
        super::quantities::requirements(spec, "resources");
    }
}

/// A PersistentVolumeClaim: `SetDefaults_PersistentVolumeClaim` (status
/// phase `Pending`) and the spec defaults.
pub(crate) fn persistent_volume_claim(obj: &mut Map<String, Value>) {
    pvc_spec(obj);
    if let Some(status) = ensure_obj(obj, "status") {
        default_str(status, "phase", "Pending");
    }
}

/// `SetDefaults_PersistentVolume`: reclaim policy `Retain` (only the
/// dynamic provisioner, which Skein does not run, writes `Delete`),
/// `volumeMode: Filesystem`, status phase `Pending`.
pub(crate) fn persistent_volume(obj: &mut Map<String, Value>) {
    if let Some(spec) = ensure_obj(obj, "spec") {
        default_str(spec, "persistentVolumeReclaimPolicy", "Retain");
        default_str(spec, "volumeMode", "Filesystem");
        super::quantities::list(spec, "capacity");
    }
    if let Some(status) = ensure_obj(obj, "status") {
        default_str(status, "phase", "Pending");
    }
}

/// autoscaling/v2 `SetDefaults_HorizontalPodAutoscaler`: one replica
/// minimum, 80% CPU when no metric is given, and a given `behavior`
/// completed with the default scaling rules.
pub(crate) fn hpa_v2(obj: &mut Map<String, Value>) {
    let Some(spec) = ensure_obj(obj, "spec") else {
        return;
    };
    default(spec, "minReplicas", json!(1));
    let no_metrics = spec
        .get("metrics")
        .and_then(Value::as_array)
        .is_none_or(Vec::is_empty);
    if no_metrics {
        spec.insert(
            "metrics".into(),
            json!([{
                "type": "Resource",
                "resource": {
                    "name": "cpu",
                    "target": {"type": "Utilization", "averageUtilization": 80},
                },
            }]),
        );
    }
    crate::json::each_obj_mut(spec, "metrics", |m| {
        for source in [
            "object",
            "pods",
            "resource",
            "containerResource",
            "external",
        ] {
            if let Some(src) = obj_mut(m, source)
                && let Some(target) = obj_mut(src, "target")
            {
                for key in ["value", "averageValue"] {
                    if let Some(q) = target.get_mut(key) {
                        super::quantities::one(q);
                    }
                }
            }
        }
    });
    if let Some(behavior) = obj_mut(spec, "behavior") {
        rules(
            behavior,
            "scaleUp",
            0,
            json!([
                {"type": "Pods", "value": 4, "periodSeconds": 15},
                {"type": "Percent", "value": 100, "periodSeconds": 15},
            ]),
        );
        rules(
            behavior,
            "scaleDown",
            300,
            json!([{"type": "Percent", "value": 100, "periodSeconds": 15}]),
        );
    }
}

/// `GenerateHPAScaleUpRules`/`GenerateHPAScaleDownRules`.
fn rules(behavior: &mut Map<String, Value>, key: &str, window: i64, policies: Value) {
    if let Some(r) = ensure_obj(behavior, key) {
        default(r, "stabilizationWindowSeconds", json!(window));
        default_str(r, "selectPolicy", "Max");
        default(r, "policies", policies);
    }
}

/// autoscaling/v1: `minReplicas: 1`.
pub(crate) fn hpa_v1(obj: &mut Map<String, Value>) {
    if let Some(spec) = ensure_obj(obj, "spec") {
        default(spec, "minReplicas", json!(1));
    }
}

/// `SetDefaults_NetworkPolicy` (policyTypes from the rules present) and
/// `SetDefaults_NetworkPolicyPort` (protocol TCP).
pub(crate) fn network_policy(obj: &mut Map<String, Value>) {
    let Some(spec) = ensure_obj(obj, "spec") else {
        return;
    };
    for dir in ["ingress", "egress"] {
        crate::json::each_obj_mut(spec, dir, |rule| {
            crate::json::each_obj_mut(rule, "ports", |p| default_str(p, "protocol", "TCP"));
        });
    }
    let no_types = spec
        .get("policyTypes")
        .and_then(Value::as_array)
        .is_none_or(Vec::is_empty);
    if no_types {
        let has_egress = spec
            .get("egress")
            .and_then(Value::as_array)
            .is_some_and(|e| !e.is_empty());
        let types = if has_egress {
            json!(["Ingress", "Egress"])
        } else {
            json!(["Ingress"])
        };
        spec.insert("policyTypes".into(), types);
    }
}

/// rbac/v1 `SetDefaults_RoleBinding`, `SetDefaults_ClusterRoleBinding`
/// (`roleRef.apiGroup`) and `SetDefaults_Subject` (User and Group
/// subjects in the RBAC group, ServiceAccounts in the core group).
pub(crate) fn role_binding(obj: &mut Map<String, Value>) {
    const GROUP: &str = "rbac.authorization.k8s.io";
    if let Some(r) = obj_mut(obj, "roleRef") {
        default_str(r, "apiGroup", GROUP);
    }
    crate::json::each_obj_mut(obj, "subjects", |s| {
        let kind = crate::json::str_of(s, "kind");
        if (kind == "User" || kind == "Group") && crate::json::empty_str(s, "apiGroup") {
            s.insert("apiGroup".into(), json!(GROUP));
        }
    });
}

/// `SetDefaults_IngressClass`: parameters scope Cluster.
pub(crate) fn ingress_class(obj: &mut Map<String, Value>) {
    if let Some(spec) = obj_mut(obj, "spec")
        && let Some(params) = obj_mut(spec, "parameters")
    {
        default_str(params, "scope", "Cluster");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn base64_matches_rfc4648() {
        let cases = [
            ("", ""),
            ("f", "Zg=="),
            ("fo", "Zm8="),
            ("foo", "Zm9v"),
            ("foobar", "Zm9vYmFy"),
        ];
        for (plain, want) in cases {
            assert_eq!(base64(plain.as_bytes()), want);
        }
    }
}
