//! Pod volumes (upstream `ValidateVolumes` and `validateVolumeSource` at
//! release-1.33), the sources charts use most: exactly one source per
//! volume, the names each source requires, projected/config map/secret
//! items and modes, host paths. A volume with an error is not available to
//! mounts, as upstream.

use serde_json::{Map, Value, json};

use super::container::Volumes;
use crate::Cause;
use crate::json::{arr, str_of};
use crate::names;
use crate::path::Path;

/// Every volume source field of a v1 `Volume`, in upstream's order of
/// checks.
const SOURCES: [&str; 30] = [
    "emptyDir",
    "hostPath",
    "gitRepo",
    "gcePersistentDisk",
    "awsElasticBlockStore",
    "secret",
    "nfs",
    "iscsi",
    "glusterfs",
    "flocker",
    "persistentVolumeClaim",
    "rbd",
    "cinder",
    "cephfs",
    "quobyte",
    "downwardAPI",
    "fc",
    "flexVolume",
    "configMap",
    "azureFile",
    "vsphereVolume",
    "photonPersistentDisk",
    "projected",
    "portworxVolume",
    "azureDisk",
    "scaleIO",
    "storageos",
    "csi",
    "ephemeral",
    "image",
];

const MODE_MSG: &str = "must be a number between 0 and 0777 (octal), both inclusive";

/// `ValidateVolumes`: the valid volumes by name (with whether each may
/// back a block device).
pub(super) fn volumes(spec: &Map<String, Value>, path: &Path, out: &mut Vec<Cause>) -> Volumes {
    let mut valid = Volumes::new();
    let mut names_seen = std::collections::BTreeSet::new();
    for (i, v) in arr(spec, "volumes").iter().enumerate() {
        let Some(v) = v.as_object() else { continue };
        let p = path.index(i);
        let name_path = p.child("name");
        let mut errs = Vec::new();
        source(v, &p, &mut errs);
        let name = str_of(v, "name");
        if name.is_empty() {
            errs.push(Cause::required(&name_path, ""));
        } else {
            for msg in names::dns1123_label(name) {
                errs.push(Cause::invalid(&name_path, &json!(name), msg));
            }
        }
        if names_seen.contains(name) {
            errs.push(Cause::duplicate(&name_path, &json!(name)));
        }
        if errs.is_empty() {
            names_seen.insert(name.to_owned());
            let block = ["persistentVolumeClaim", "ephemeral"]
                .iter()
                .any(|k| v.get(*k).is_some_and(|s| !s.is_null()));
            valid.insert(name.to_owned(), block);
        } else {
            out.extend(errs);
        }
    }
    valid
}

/// `validateVolumeSource`: one source, checked.
fn source(v: &Map<String, Value>, path: &Path, out: &mut Vec<Cause>) {
    let mut count = 0;
    for key in SOURCES {
        let Some(src) = v.get(key).filter(|s| !s.is_null()) else {
            continue;
        };
        let p = path.child(key);
        if count > 0 {
            out.push(Cause::forbidden(
                p,
                "may not specify more than 1 volume type",
            ));
            continue;
        }
        count += 1;
        let empty = Map::new();
        let src = src.as_object().unwrap_or(&empty);
        match key {
            "hostPath" => {
                if str_of(src, "path").is_empty() {
                    out.push(Cause::required(p.child("path"), ""));
                }
                let kind = str_of(src, "type");
                const TYPES: [&str; 8] = [
                    "",
                    "BlockDevice",
                    "CharDevice",
                    "Directory",
                    "DirectoryOrCreate",
                    "File",
                    "FileOrCreate",
                    "Socket",
                ];
                if !TYPES.contains(&kind) {
                    out.push(Cause::not_supported(p.child("type"), &json!(kind), &TYPES));
                }
            }
            "secret" => {
                if str_of(src, "secretName").is_empty() {
                    out.push(Cause::required(p.child("secretName"), ""));
                }
                mode(src, "defaultMode", &p, out);
                items(src, &p, out);
            }
            "configMap" => {
                if str_of(src, "name").is_empty() {
                    out.push(Cause::required(p.child("name"), ""));
                }
                mode(src, "defaultMode", &p, out);
                items(src, &p, out);
            }
            "persistentVolumeClaim" if str_of(src, "claimName").is_empty() => {
                out.push(Cause::required(p.child("claimName"), ""));
            }
            "downwardAPI" | "projected" => mode(src, "defaultMode", &p, out),
            "nfs" => {
                if str_of(src, "server").is_empty() {
                    out.push(Cause::required(p.child("server"), ""));
                }
                let nfs_path = str_of(src, "path");
                if nfs_path.is_empty() {
                    out.push(Cause::required(p.child("path"), ""));
                } else if !nfs_path.starts_with('/') {
                    out.push(Cause::invalid(
                        p.child("path"),
                        &json!(nfs_path),
                        "must be an absolute path",
                    ));
                }
            }
            "csi" if str_of(src, "driver").is_empty() => {
                out.push(Cause::required(p.child("driver"), ""));
            }
            "ephemeral" if src.get("volumeClaimTemplate").is_none_or(Value::is_null) => {
                out.push(Cause::required(p.child("volumeClaimTemplate"), ""));
            }
            _ => {}
        }
    }
    if count == 0 {
        out.push(Cause::required(path, "must specify a volume type"));
    }
}

/// A file mode: 0..=0o777.
fn mode(src: &Map<String, Value>, key: &str, path: &Path, out: &mut Vec<Cause>) {
    if let Some(m) = src.get(key).and_then(Value::as_i64)
        && !(0..=0o777).contains(&m)
    {
        out.push(Cause::invalid(path.child(key), &json!(m), MODE_MSG));
    }
}

/// `validateKeyToPath` of each item: key and path required, the path
/// relative without `..` elements, the mode in range.
fn items(src: &Map<String, Value>, path: &Path, out: &mut Vec<Cause>) {
    for (i, item) in arr(src, "items").iter().enumerate() {
        let Some(item) = item.as_object() else {
            continue;
        };
        let p = path.child("items").index(i);
        if str_of(item, "key").is_empty() {
            out.push(Cause::required(p.child("key"), ""));
        }
        let item_path = str_of(item, "path");
        if item_path.is_empty() {
            out.push(Cause::required(p.child("path"), ""));
        } else {
            if item_path.starts_with('/') {
                out.push(Cause::invalid(
                    p.child("path"),
                    &json!(item_path),
                    "must be a relative path",
                ));
            }
            if item_path.split('/').any(|s| s == "..") {
                out.push(Cause::invalid(
                    p.child("path"),
                    &json!(item_path),
                    "must not contain '..'",
                ));
            }
            if item_path.starts_with("..") {
                out.push(Cause::invalid(
                    p.child("path"),
                    &json!(item_path),
                    "must not start with '..'",
                ));
            }
        }
        mode(item, "mode", &p, out);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(vols: Value) -> (Vec<String>, Vec<String>) {
        let spec = json!({"volumes": vols});
        let mut out = Vec::new();
        let valid = volumes(
            spec.as_object().unwrap_or(&Map::new()),
            &Path::new("spec.volumes"),
            &mut out,
        );
        (
            out.iter().map(ToString::to_string).collect(),
            valid.keys().cloned().collect(),
        )
    }

    #[test]
    fn sources() {
        let (errs, valid) = check(json!([
            {"name": "cfg", "configMap": {"name": "app", "items": [{"key": "a", "path": "a.conf"}]}},
            {"name": "both", "emptyDir": {}, "secret": {"secretName": "s"}},
            {"name": "sec", "secret": {"defaultMode": 1000}},
            {"name": "claim", "persistentVolumeClaim": {}},
            {"name": "items", "configMap": {"name": "c", "items": [{"key": "", "path": "../x"}]}},
            {"name": "Bad_Name", "emptyDir": {}},
        ]));
        assert_eq!(
            errs,
            [
                "spec.volumes[1].secret: Forbidden: may not specify more than 1 volume type",
                "spec.volumes[2].secret.secretName: Required value",
                "spec.volumes[2].secret.defaultMode: Invalid value: 1000: must be a number between 0 and 0777 (octal), both inclusive",
                "spec.volumes[3].persistentVolumeClaim.claimName: Required value",
                "spec.volumes[4].configMap.items[0].key: Required value",
                r#"spec.volumes[4].configMap.items[0].path: Invalid value: "../x": must not contain '..'"#,
                r#"spec.volumes[4].configMap.items[0].path: Invalid value: "../x": must not start with '..'"#,
                "spec.volumes[5].name: Invalid value: \"Bad_Name\": a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')",
            ]
        );
        assert_eq!(valid, ["cfg"]);
    }
}
