//! What a Pod may reference: the mountable-secrets rule of accounts that
//! enforce it, and the restrictions on mirror Pods (upstream texts).

use serde_json::{Map, Value};

use super::ENFORCE_MOUNTABLE_SECRETS;
use crate::json::{arr, str_at, str_of};

/// Whether the account enforces mountable secrets (its annotation parses
/// as a true Go `strconv.ParseBool`).
pub(super) fn enforced(sa: &Value) -> bool {
    let value = sa
        .pointer("/metadata/annotations")
        .and_then(|a| a.get(ENFORCE_MOUNTABLE_SECRETS))
        .and_then(Value::as_str)
        .unwrap_or_default();
    matches!(value, "1" | "t" | "T" | "true" | "TRUE" | "True")
}

fn names(sa: &Value, key: &str) -> Vec<String> {
    sa.get(key)
        .and_then(Value::as_array)
        .map(|a| a.iter().map(|r| str_at(r, "/name").to_owned()).collect())
        .unwrap_or_default()
}

/// Every Secret the pod `spec` references must be one of the account's
/// `secrets`, every pull secret one of its `imagePullSecrets`.
pub(super) fn limit_references(sa: &Value, spec: &Map<String, Value>) -> Result<(), String> {
    let account = str_at(sa, "/metadata/name");
    let mountable = names(sa, "secrets");
    let allowed = |name: &str| mountable.iter().any(|m| m == name);
    for volume in arr(spec, "volumes") {
        let Some(secret) = volume.get("secret") else {
            continue;
        };
        let name = str_at(secret, "/secretName");
        if !allowed(name) {
            return Err(format!(
                "volume with secret.secretName=\"{name}\" is not allowed because service account {account} does not reference that secret"
            ));
        }
    }
    for (key, what) in [
        ("initContainers", "init container"),
        ("containers", "container"),
    ] {
        for c in arr(spec, key) {
            let cname = str_at(c, "/name");
            for env in c.get("env").and_then(Value::as_array).into_iter().flatten() {
                let secret = str_at(env, "/valueFrom/secretKeyRef/name");
                if env.pointer("/valueFrom/secretKeyRef").is_some() && !allowed(secret) {
                    let ename = str_at(env, "/name");
                    return Err(format!(
                        "{what} {cname} with envVar {ename} referencing secret.secretName=\"{secret}\" is not allowed because service account {account} does not reference that secret"
                    ));
                }
            }
            for from in c
                .get("envFrom")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
            {
                let secret = str_at(from, "/secretRef/name");
                if from.get("secretRef").is_some() && !allowed(secret) {
                    return Err(format!(
                        "{what} {cname} with envFrom referencing secret.secretName=\"{secret}\" is not allowed because service account {account} does not reference that secret"
                    ));
                }
            }
        }
    }
    let pulls = names(sa, "imagePullSecrets");
    for (i, r) in arr(spec, "imagePullSecrets").iter().enumerate() {
        let name = str_at(r, "/name");
        if !pulls.iter().any(|p| p == name) {
            return Err(format!(
                "imagePullSecrets[{i}].name=\"{name}\" is not allowed because service account {account} does not reference that imagePullSecret"
            ));
        }
    }
    Ok(())
}

/// Whether the pod `spec` references a Secret anywhere upstream's
/// `VisitPodSecretNames` looks (volumes, projections, env, envFrom, pull
/// secrets).
fn references_secrets(spec: &Map<String, Value>) -> bool {
    if !arr(spec, "imagePullSecrets").is_empty() {
        return true;
    }
    for volume in arr(spec, "volumes") {
        let by_name = [
            "/secret/secretName",
            "/azureFile/secretName",
            "/cephfs/secretRef/name",
            "/cinder/secretRef/name",
            "/flexVolume/secretRef/name",
            "/rbd/secretRef/name",
            "/scaleIO/secretRef/name",
            "/iscsi/secretRef/name",
            "/storageos/secretRef/name",
            "/csi/nodePublishSecretRef/name",
        ];
        if by_name.iter().any(|p| !str_at(volume, p).is_empty()) {
            return true;
        }
        let projected = volume
            .pointer("/projected/sources")
            .and_then(Value::as_array)
            .into_iter()
            .flatten();
        if projected.into_iter().any(|s| s.get("secret").is_some()) {
            return true;
        }
    }
    for key in ["initContainers", "containers", "ephemeralContainers"] {
        for c in arr(spec, key) {
            let env = c.get("env").and_then(Value::as_array).into_iter().flatten();
            if env
                .into_iter()
                .any(|e| e.pointer("/valueFrom/secretKeyRef").is_some())
            {
                return true;
            }
            let from = c
                .get("envFrom")
                .and_then(Value::as_array)
                .into_iter()
                .flatten();
            if from.into_iter().any(|e| e.get("secretRef").is_some()) {
                return true;
            }
        }
    }
    false
}

/// Mirror Pods may not name an account, reference Secrets or project
/// tokens.
pub(super) fn mirror_pod(spec: &Map<String, Value>) -> Result<(), String> {
    if !str_of(spec, "serviceAccountName").is_empty() {
        return Err("a mirror pod may not reference service accounts".into());
    }
    if references_secrets(spec) {
        return Err("a mirror pod may not reference secrets".into());
    }
    for volume in arr(spec, "volumes") {
        let sources = volume
            .pointer("/projected/sources")
            .and_then(Value::as_array)
            .into_iter()
            .flatten();
        if sources
            .into_iter()
            .any(|s| s.get("serviceAccountToken").is_some())
        {
            return Err("a mirror pod may not use ServiceAccountToken volume projections".into());
        }
    }
    Ok(())
}
