//! The projected service-account token volume, as upstream 1.33's
//! `mountServiceAccountToken` and `TokenVolumeSource` build it.

use serde_json::{Map, Value, json};

use super::{TOKEN_MOUNT_PATH, TOKEN_VOLUME_PREFIX};

/// `expirationSeconds` of the token projection (upstream's
/// `WarnOnlyBoundTokenExpirationSeconds`, one hour and seven seconds).
pub const TOKEN_EXPIRATION_SECONDS: i64 = 3607;

/// The volume source: token, the `kube-root-ca.crt` CA bundle and the
/// namespace, mode 0644.
pub fn volume_source() -> Value {
    json!({
        "defaultMode": 420,
        "sources": [
            {"serviceAccountToken": {
                "expirationSeconds": TOKEN_EXPIRATION_SECONDS,
                "path": "token",
            }},
            {"configMap": {
                "items": [{"key": "ca.crt", "path": "ca.crt"}],
                "name": "kube-root-ca.crt",
            }},
            {"downwardAPI": {
                "items": [{
                    "fieldRef": {"apiVersion": "v1", "fieldPath": "metadata.namespace"},
                    "path": "namespace",
                }],
            }},
        ],
    })
}

/// Mounts the token volume into every init container and container of the
/// pod `spec` that mounts nothing at [`TOKEN_MOUNT_PATH`], adding the
/// volume when one needs it. An existing `kube-api-access-*` volume is
/// reused, so mounting twice changes nothing. `suffix` names a new volume.
pub fn mount(spec: &mut Map<String, Value>, suffix: &dyn Fn() -> String) {
    let existing = spec
        .get("volumes")
        .and_then(Value::as_array)
        .and_then(|vols| {
            vols.iter()
                .filter_map(|v| v.get("name").and_then(Value::as_str))
                .find(|n| n.starts_with(TOKEN_VOLUME_PREFIX))
                .map(str::to_owned)
        });
    let has_volume = existing.is_some();
    let volume = existing.unwrap_or_else(|| format!("{TOKEN_VOLUME_PREFIX}{}", suffix()));
    let mount = json!({"mountPath": TOKEN_MOUNT_PATH, "name": volume, "readOnly": true});
    let mut needed = false;
    for key in ["initContainers", "containers"] {
        let Some(containers) = spec.get_mut(key).and_then(Value::as_array_mut) else {
            continue;
        };
        for c in containers.iter_mut().filter_map(Value::as_object_mut) {
            let mounts = c
                .entry("volumeMounts")
                .or_insert_with(|| Value::Array(Vec::new()));
            if mounts.is_null() {
                *mounts = Value::Array(Vec::new());
            }
            let Some(mounts) = mounts.as_array_mut() else {
                continue;
            };
            let taken = mounts
                .iter()
                .any(|m| m.get("mountPath").and_then(Value::as_str) == Some(TOKEN_MOUNT_PATH));
            if !taken {
                mounts.push(mount.clone());
                needed = true;
            }
        }
    }
    if needed && !has_volume {
        let volumes = spec
            .entry("volumes")
            .or_insert_with(|| Value::Array(Vec::new()));
        if volumes.is_null() {
            *volumes = Value::Array(Vec::new());
        }
        if let Some(volumes) = volumes.as_array_mut() {
            volumes.push(json!({"name": volume, "projected": volume_source()}));
        }
    }
}
