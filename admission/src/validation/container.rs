//! Container validation (upstream `pkg/apis/core/validation/validation.go`
//! at release-1.33: `validateContainerCommon`, `validateContainers`,
//! `validateInitContainers`, `validateEphemeralContainers`, `ValidateEnv`,
//! `ValidateEnvFrom`, `ValidateVolumeMounts`, `ValidateVolumeDevices`,
//! the probe and lifecycle handlers, `ValidateContainerResourceRequirements`
//! and `ValidateSecurityContext`). Feature gates are as a default 1.33
//! kube-apiserver has them: relaxed environment variable names, sleep
//! actions of zero seconds.

use std::collections::{BTreeMap, BTreeSet};

use serde_json::{Map, Value, json};

use super::quantity::Quantity;
use super::security;
use crate::Cause;
use crate::json::{arr, str_of};
use crate::names;
use crate::path::Path;

/// The pod's volumes by name, with whether each can back a block device
/// (a `persistentVolumeClaim` or `ephemeral` source).
pub(super) type Volumes = BTreeMap<String, bool>;

/// What containers of one pod spec share.
pub(super) struct PodContext<'a> {
    pub volumes: &'a Volumes,
    /// `spec.terminationGracePeriodSeconds`.
    pub grace_period: Option<i64>,
    /// `spec.restartPolicy`.
    pub restart_policy: &'a str,
}

const RESTART_INIT_MSG: &str = "may not be set for init containers without restartPolicy=Always";

/// `validateContainers`: the regular containers.
pub(super) fn containers(
    spec: &Map<String, Value>,
    path: &Path,
    ctx: &PodContext,
    out: &mut Vec<Cause>,
) {
    let list = arr(spec, "containers");
    if list.is_empty() {
        out.push(Cause::required(path, ""));
        return;
    }
    let mut names = BTreeSet::new();
    for (i, c) in list.iter().enumerate() {
        let Some(c) = c.as_object() else { continue };
        let p = path.index(i);
        common(c, &p, ctx, out);
        let name = str_of(c, "name");
        if !names.insert(name.to_owned()) {
            out.push(Cause::duplicate(p.child("name"), &json!(name)));
        }
        lifecycle(c, &p, ctx, out);
        probes(c, &p, ctx, out);
        if is_set(c, "restartPolicy") {
            out.push(Cause::forbidden(
                p.child("restartPolicy"),
                "may not be set for non-init containers",
            ));
        }
    }
    host_port_conflicts(list, path, out);
}

/// `validateInitContainers`: init containers, including sidecars
/// (`restartPolicy: Always`), whose names must not repeat a regular
/// container's.
pub(super) fn init_containers(
    spec: &Map<String, Value>,
    path: &Path,
    ctx: &PodContext,
    out: &mut Vec<Cause>,
) {
    let mut names: BTreeSet<String> = arr(spec, "containers")
        .iter()
        .map(|c| {
            c.get("name")
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_owned()
        })
        .collect();
    for (i, c) in arr(spec, "initContainers").iter().enumerate() {
        let Some(c) = c.as_object() else { continue };
        let p = path.index(i);
        common(c, &p, ctx, out);
        let mut sidecar = false;
        if let Some(policy) = c.get("restartPolicy").filter(|v| !v.is_null()) {
            if policy.as_str() == Some("Always") {
                sidecar = true;
            } else {
                out.push(Cause::not_supported(
                    p.child("restartPolicy"),
                    policy,
                    &["Always"],
                ));
            }
        }
        let name = str_of(c, "name");
        if names.contains(name) {
            out.push(Cause::duplicate(p.child("name"), &json!(name)));
        } else if !name.is_empty() {
            names.insert(name.to_owned());
        }
        host_port_conflicts(std::slice::from_ref(&Value::Object(c.clone())), path, out);
        if sidecar {
            lifecycle(c, &p, ctx, out);
            probes(c, &p, ctx, out);
        } else {
            for key in [
                "lifecycle",
                "livenessProbe",
                "readinessProbe",
                "startupProbe",
            ] {
                if is_set(c, key) {
                    out.push(Cause::forbidden(p.child(key), RESTART_INIT_MSG));
                }
            }
        }
    }
}

/// Fields an ephemeral container may not set (upstream
/// `allowedEphemeralContainerFields` marks them false).
const EPHEMERAL_FORBIDDEN: [&str; 7] = [
    "ports",
    "resources",
    "livenessProbe",
    "readinessProbe",
    "startupProbe",
    "lifecycle",
    "resizePolicy",
];

/// `validateEphemeralContainers`.
pub(super) fn ephemeral_containers(
    spec: &Map<String, Value>,
    path: &Path,
    ctx: &PodContext,
    out: &mut Vec<Cause>,
) {
    let list = arr(spec, "ephemeralContainers");
    if list.is_empty() {
        return;
    }
    let mut others = BTreeSet::new();
    for key in ["containers", "initContainers"] {
        for c in arr(spec, key) {
            others.insert(
                c.get("name")
                    .and_then(Value::as_str)
                    .unwrap_or_default()
                    .to_owned(),
            );
        }
    }
    let mut all = others.clone();
    for (i, c) in list.iter().enumerate() {
        let Some(c) = c.as_object() else { continue };
        let p = path.index(i);
        common(c, &p, ctx, out);
        only_for_pod(c, &p, out);
        let name = str_of(c, "name");
        if !all.insert(name.to_owned()) {
            out.push(Cause::duplicate(p.child("name"), &json!(name)));
        }
        let target = str_of(c, "targetContainerName");
        if !target.is_empty() && !others.contains(target) {
            out.push(Cause::not_found(
                p.child("targetContainerName"),
                &json!(target),
            ));
        }
        for key in EPHEMERAL_FORBIDDEN {
            let set = match c.get(key) {
                None | Some(Value::Null) => false,
                Some(Value::Array(a)) => !a.is_empty(),
                Some(Value::Object(m)) => !m.is_empty(),
                Some(_) => true,
            };
            if set {
                out.push(Cause::forbidden(
                    p.child(key),
                    "cannot be set for an Ephemeral Container",
                ));
            }
        }
        for (j, m) in arr(c, "volumeMounts").iter().enumerate() {
            for key in ["subPath", "subPathExpr"] {
                if m.get(key)
                    .and_then(Value::as_str)
                    .is_some_and(|s| !s.is_empty())
                {
                    out.push(Cause::forbidden(
                        p.child("volumeMounts").index(j).child(key),
                        "cannot be set for an Ephemeral Container",
                    ));
                }
            }
        }
    }
}

/// `validateContainerOnlyForPod`: images of Pods (not templates) may not
/// carry surrounding whitespace.
pub(super) fn only_for_pod(c: &Map<String, Value>, path: &Path, out: &mut Vec<Cause>) {
    let image = str_of(c, "image");
    if image.trim() != image {
        out.push(Cause::invalid(
            path.child("image"),
            &json!(image),
            "must not have leading or trailing whitespace",
        ));
    }
}

fn is_set(m: &Map<String, Value>, key: &str) -> bool {
    m.get(key).is_some_and(|v| !v.is_null())
}

/// `validateContainerCommon`, in upstream's order.
fn common(c: &Map<String, Value>, path: &Path, ctx: &PodContext, out: &mut Vec<Cause>) {
    let name = str_of(c, "name");
    let name_path = path.child("name");
    if name.is_empty() {
        out.push(Cause::required(&name_path, ""));
    } else {
        for msg in names::dns1123_label(name) {
            out.push(Cause::invalid(&name_path, &json!(name), msg));
        }
    }
    if str_of(c, "image").is_empty() {
        out.push(Cause::required(path.child("image"), ""));
    }
    enumerated(
        c,
        "terminationMessagePolicy",
        &["File", "FallbackToLogsOnError"],
        path,
        out,
    );
    ports(c, &path.child("ports"), out);
    env(c, &path.child("env"), out);
    env_from(c, &path.child("envFrom"), out);
    let mounts: BTreeMap<&str, &str> = arr(c, "volumeMounts")
        .iter()
        .map(|m| (str_field(m, "name"), str_field(m, "mountPath")))
        .collect();
    let devices: BTreeMap<&str, &str> = arr(c, "volumeDevices")
        .iter()
        .map(|d| (str_field(d, "name"), str_field(d, "devicePath")))
        .collect();
    volume_mounts(c, &devices, ctx.volumes, &path.child("volumeMounts"), out);
    volume_devices(c, &mounts, ctx.volumes, &path.child("volumeDevices"), out);
    enumerated(
        c,
        "imagePullPolicy",
        &["Always", "IfNotPresent", "Never"],
        path,
        out,
    );
    if let Some(r) = c.get("resources").and_then(Value::as_object) {
        resources(r, &path.child("resources"), out);
    }
    resize_policy(c, &path.child("resizePolicy"), ctx.restart_policy, out);
    if let Some(sc) = c.get("securityContext").and_then(Value::as_object) {
        security::container(sc, &path.child("securityContext"), out);
    }
}

fn str_field<'a>(v: &'a Value, key: &str) -> &'a str {
    v.get(key).and_then(Value::as_str).unwrap_or_default()
}

fn enumerated(
    m: &Map<String, Value>,
    key: &str,
    allowed: &[&str],
    path: &Path,
    out: &mut Vec<Cause>,
) {
    let v = str_of(m, key);
    if v.is_empty() {
        out.push(Cause::required(path.child(key), ""));
    } else if !allowed.contains(&v) {
        out.push(Cause::not_supported(path.child(key), &json!(v), allowed));
    }
}

/// `validateContainerPorts`.
fn ports(c: &Map<String, Value>, path: &Path, out: &mut Vec<Cause>) {
    let mut seen = BTreeSet::new();
    for (i, port) in arr(c, "ports").iter().enumerate() {
        let Some(port) = port.as_object() else {
            continue;
        };
        let p = path.index(i);
        let name = str_of(port, "name");
        if !name.is_empty() {
            let msgs = names::port_name(name);
            if !msgs.is_empty() {
                for msg in msgs {
                    out.push(Cause::invalid(p.child("name"), &json!(name), msg));
                }
            } else if !seen.insert(name.to_owned()) {
                out.push(Cause::duplicate(p.child("name"), &json!(name)));
            }
        }
        match port.get("containerPort").and_then(Value::as_i64) {
            None | Some(0) => out.push(Cause::required(p.child("containerPort"), "")),
            Some(n) if !names::valid_port(n) => out.push(Cause::invalid(
                p.child("containerPort"),
                &json!(n),
                names::PORT_RANGE_MSG,
            )),
            _ => {}
        }
        if let Some(n) = port.get("hostPort").and_then(Value::as_i64)
            && n != 0
            && !names::valid_port(n)
        {
            out.push(Cause::invalid(
                p.child("hostPort"),
                &json!(n),
                names::PORT_RANGE_MSG,
            ));
        }
        super::pod::protocol(port, &p, out);
    }
}

/// `checkHostPortConflicts`: the same protocol/hostIP/hostPort twice.
fn host_port_conflicts(containers: &[Value], path: &Path, out: &mut Vec<Cause>) {
    let mut seen = BTreeSet::new();
    for (ci, c) in containers.iter().enumerate() {
        for (pi, port) in c
            .get("ports")
            .and_then(Value::as_array)
            .map(Vec::as_slice)
            .unwrap_or_default()
            .iter()
            .enumerate()
        {
            let host_port = port.get("hostPort").and_then(Value::as_i64).unwrap_or(0);
            if host_port == 0 {
                continue;
            }
            let key = format!(
                "{}/{}/{host_port}",
                str_field(port, "protocol"),
                str_field(port, "hostIP")
            );
            if !seen.insert(key.clone()) {
                out.push(Cause::duplicate(
                    path.index(ci).child("ports").index(pi).child("hostPort"),
                    &json!(key),
                ));
            }
        }
    }
}

/// Upstream `IsRelaxedEnvVarName` (RelaxedEnvironmentVariableValidation is
/// on by default in 1.33).
pub(super) fn env_var_name(name: &str) -> Vec<String> {
    let mut out = Vec::new();
    if name.is_empty() {
        out.push("environment variable name must be non-empty".to_owned());
    }
    if name
        .chars()
        .any(|c| !c.is_ascii() || c.is_ascii_control() || c == '=')
    {
        out.push(
            "a valid environment variable name must consist only of printable ASCII characters other than '='"
                .to_owned(),
        );
    }
    out
}

/// `ValidateEnv`.
fn env(c: &Map<String, Value>, path: &Path, out: &mut Vec<Cause>) {
    for (i, e) in arr(c, "env").iter().enumerate() {
        let Some(e) = e.as_object() else { continue };
        let p = path.index(i);
        let name = str_of(e, "name");
        if name.is_empty() {
            out.push(Cause::required(p.child("name"), ""));
        } else {
            for msg in env_var_name(name) {
                out.push(Cause::invalid(p.child("name"), &json!(name), msg));
            }
        }
        if let Some(from) = e.get("valueFrom").and_then(Value::as_object) {
            value_from(
                from,
                !str_of(e, "value").is_empty(),
                &p.child("valueFrom"),
                out,
            );
        }
    }
}

/// Downward API field paths an env var may name (upstream
/// `validEnvDownwardAPIFieldPathExpressions`, sorted as `sets.List`).
const ENV_FIELD_PATHS: [&str; 9] = [
    "metadata.name",
    "metadata.namespace",
    "metadata.uid",
    "spec.nodeName",
    "spec.serviceAccountName",
    "status.hostIP",
    "status.hostIPs",
    "status.podIP",
    "status.podIPs",
];

/// Field labels the v1 downward API conversion accepts
/// (`ConvertDownwardAPIFieldLabel`).
const DOWNWARD_LABELS: [&str; 14] = [
    "metadata.annotations",
    "metadata.labels",
    "metadata.name",
    "metadata.namespace",
    "metadata.uid",
    "spec.nodeName",
    "spec.restartPolicy",
    "spec.serviceAccountName",
    "spec.schedulerName",
    "status.phase",
    "status.hostIP",
    "status.hostIPs",
    "status.podIP",
    "status.podIPs",
];

const RESOURCE_FIELD_PATHS: [&str; 6] = [
    "limits.cpu",
    "limits.ephemeral-storage",
    "limits.memory",
    "requests.cpu",
    "requests.ephemeral-storage",
    "requests.memory",
];

/// `validateEnvVarValueFrom`.
fn value_from(from: &Map<String, Value>, has_value: bool, path: &Path, out: &mut Vec<Cause>) {
    let mut sources = 0;
    if let Some(f) = from.get("fieldRef").and_then(Value::as_object) {
        sources += 1;
        field_ref(f, &path.child("fieldRef"), out);
    }
    if let Some(r) = from.get("resourceFieldRef").and_then(Value::as_object) {
        sources += 1;
        let p = path.child("resourceFieldRef");
        let resource = str_of(r, "resource");
        if resource.is_empty() {
            out.push(Cause::required(p.child("resource"), ""));
        } else if !RESOURCE_FIELD_PATHS.contains(&resource)
            && !resource.starts_with("requests.hugepages-")
            && !resource.starts_with("limits.hugepages-")
        {
            out.push(Cause::not_supported(
                p.child("resource"),
                &json!(resource),
                &RESOURCE_FIELD_PATHS,
            ));
        }
    }
    for key in ["configMapKeyRef", "secretKeyRef"] {
        if let Some(s) = from.get(key).and_then(Value::as_object) {
            sources += 1;
            let p = path.child(key);
            let name = str_of(s, "name");
            for msg in names::dns1123_subdomain(name) {
                out.push(Cause::invalid(p.child("name"), &json!(name), msg));
            }
            let k = str_of(s, "key");
            if k.is_empty() {
                out.push(Cause::required(p.child("key"), ""));
            } else {
                for msg in names::config_key(k) {
                    out.push(Cause::invalid(p.child("key"), &json!(k), msg));
                }
            }
        }
    }
    let blank = json!("");
    if sources == 0 {
        out.push(Cause::invalid(
            path,
            &blank,
            "must specify one of: `fieldRef`, `resourceFieldRef`, `configMapKeyRef` or `secretKeyRef`",
        ));
    } else if has_value {
        out.push(Cause::invalid(
            path,
            &blank,
            "may not be specified when `value` is not empty",
        ));
    } else if sources > 1 {
        out.push(Cause::invalid(
            path,
            &blank,
            "may not have more than one field specified at a time",
        ));
    }
}

/// `validateObjectFieldSelector` for env vars.
fn field_ref(f: &Map<String, Value>, path: &Path, out: &mut Vec<Cause>) {
    let version = str_of(f, "apiVersion");
    let field_path = str_of(f, "fieldPath");
    if version.is_empty() {
        out.push(Cause::required(path.child("apiVersion"), ""));
        return;
    }
    if field_path.is_empty() {
        out.push(Cause::required(path.child("fieldPath"), ""));
        return;
    }
    let (base, subscript) = match field_path.split_once('[') {
        Some((b, rest)) => (b, rest.strip_suffix(']')),
        None => (field_path, None),
    };
    if !DOWNWARD_LABELS.contains(&base) || (field_path.contains('[') && subscript.is_none()) {
        out.push(Cause::invalid(
            path.child("fieldPath"),
            &json!(field_path),
            format!("error converting fieldPath: field label not supported: {field_path}"),
        ));
        return;
    }
    if let Some(sub) = subscript {
        let key = sub.trim_matches('\'');
        match base {
            "metadata.annotations" => {
                for msg in names::qualified_name(&key.to_lowercase()) {
                    out.push(Cause::invalid(path, &json!(key.to_lowercase()), msg));
                }
            }
            "metadata.labels" => {
                for msg in names::qualified_name(key) {
                    out.push(Cause::invalid(path, &json!(key), msg));
                }
            }
            other => out.push(Cause::invalid(
                path,
                &json!(other),
                "does not support subscript",
            )),
        }
    } else if !ENV_FIELD_PATHS.contains(&base) {
        out.push(Cause::not_supported(
            path.child("fieldPath"),
            &json!(base),
            &ENV_FIELD_PATHS,
        ));
    }
}

/// `ValidateEnvFrom`.
fn env_from(c: &Map<String, Value>, path: &Path, out: &mut Vec<Cause>) {
    for (i, e) in arr(c, "envFrom").iter().enumerate() {
        let Some(e) = e.as_object() else { continue };
        let p = path.index(i);
        let prefix = str_of(e, "prefix");
        if !prefix.is_empty() {
            for msg in env_var_name(prefix) {
                out.push(Cause::invalid(p.child("prefix"), &json!(prefix), msg));
            }
        }
        let mut sources = 0;
        for key in ["configMapRef", "secretRef"] {
            if let Some(r) = e.get(key).and_then(Value::as_object) {
                sources += 1;
                let name = str_of(r, "name");
                let np = p.child(key).child("name");
                if name.is_empty() {
                    out.push(Cause::required(np, ""));
                } else {
                    for msg in names::dns1123_subdomain(name) {
                        out.push(Cause::invalid(&np, &json!(name), msg));
                    }
                }
            }
        }
        let blank = json!("");
        if sources == 0 {
            out.push(Cause::invalid(
                path,
                &blank,
                "must specify one of: `configMapRef` or `secretRef`",
            ));
        } else if sources > 1 {
            out.push(Cause::invalid(
                path,
                &blank,
                "may not have more than one field specified at a time",
            ));
        }
    }
}

/// `validateLocalDescendingPath`: relative, without `..` elements.
fn local_descending_path(p: &str, path: &Path, out: &mut Vec<Cause>) {
    if p.starts_with('/') {
        out.push(Cause::invalid(path, &json!(p), "must be a relative path"));
    }
    if p.split(['/', '\\']).any(|part| part == "..") {
        out.push(Cause::invalid(path, &json!(p), "must not contain '..'"));
    }
}

/// `ValidateVolumeMounts`. `volumes` are the pod's volumes, plus for a
/// StatefulSet's own checks its claim templates.
fn volume_mounts(
    c: &Map<String, Value>,
    devices: &BTreeMap<&str, &str>,
    volumes: &Volumes,
    path: &Path,
    out: &mut Vec<Cause>,
) {
    let mut mount_points = BTreeSet::new();
    for (i, m) in arr(c, "volumeMounts").iter().enumerate() {
        let p = path.index(i);
        let name = str_field(m, "name");
        let mount_path = str_field(m, "mountPath");
        if name.is_empty() {
            out.push(Cause::required(p.child("name"), ""));
        }
        if !volumes.contains_key(name) {
            out.push(Cause::not_found(p.child("name"), &json!(name)));
        }
        if mount_path.is_empty() {
            out.push(Cause::required(p.child("mountPath"), ""));
        }
        if !mount_points.insert(mount_path) {
            out.push(Cause::invalid(
                p.child("mountPath"),
                &json!(mount_path),
                "must be unique",
            ));
        }
        if devices.contains_key(name) {
            out.push(Cause::invalid(
                p.child("name"),
                &json!(name),
                "must not already exist in volumeDevices",
            ));
        }
        if devices.values().any(|d| *d == mount_path) {
            out.push(Cause::invalid(
                p.child("mountPath"),
                &json!(mount_path),
                "must not already exist as a path in volumeDevices",
            ));
        }
        let sub_path = str_field(m, "subPath");
        let sub_expr = str_field(m, "subPathExpr");
        if !sub_path.is_empty() {
            local_descending_path(sub_path, &path.child("subPath"), out);
        }
        if !sub_expr.is_empty() {
            if !sub_path.is_empty() {
                out.push(Cause::invalid(
                    p.child("subPathExpr"),
                    &json!(sub_expr),
                    "subPathExpr and subPath are mutually exclusive",
                ));
            }
            local_descending_path(sub_expr, &path.child("subPathExpr"), out);
        }
        if let Some(prop) = m.get("mountPropagation").and_then(Value::as_str)
            && !["Bidirectional", "HostToContainer", "None"].contains(&prop)
        {
            out.push(Cause::not_supported(
                path.child("mountPropagation"),
                &json!(prop),
                &["Bidirectional", "HostToContainer", "None"],
            ));
        }
    }
}

/// `ValidateVolumeDevices`.
fn volume_devices(
    c: &Map<String, Value>,
    mounts: &BTreeMap<&str, &str>,
    volumes: &Volumes,
    path: &Path,
    out: &mut Vec<Cause>,
) {
    let mut paths = BTreeSet::new();
    let mut seen = BTreeSet::new();
    for (i, d) in arr(c, "volumeDevices").iter().enumerate() {
        let p = path.index(i);
        let name = str_field(d, "name");
        let dev_path = str_field(d, "devicePath");
        if name.is_empty() {
            out.push(Cause::required(p.child("name"), ""));
        }
        if seen.contains(name) {
            out.push(Cause::invalid(
                p.child("name"),
                &json!(name),
                "must be unique",
            ));
        }
        match volumes.get(name) {
            Some(false) => out.push(Cause::invalid(
                p.child("name"),
                &json!(name),
                "can only use volume source type of PersistentVolumeClaim or Ephemeral for block mode",
            )),
            Some(true) => {}
            None => out.push(Cause::not_found(p.child("name"), &json!(name))),
        }
        if dev_path.is_empty() {
            out.push(Cause::required(p.child("devicePath"), ""));
        }
        if paths.contains(dev_path) {
            out.push(Cause::invalid(
                p.child("devicePath"),
                &json!(dev_path),
                "must be unique",
            ));
        }
        if !dev_path.is_empty() && dev_path.split('/').any(|part| part == "..") {
            out.push(Cause::invalid(
                p.child("devicePath"),
                &json!(dev_path),
                "can not contain backsteps ('..')",
            ));
        } else {
            paths.insert(dev_path);
        }
        if mounts.contains_key(name) {
            out.push(Cause::invalid(
                p.child("name"),
                &json!(name),
                "must not already exist in volumeMounts",
            ));
        }
        if mounts.values().any(|m| *m == dev_path) {
            out.push(Cause::invalid(
                p.child("devicePath"),
                &json!(dev_path),
                "must not already exist as a path in volumeMounts",
            ));
        }
        if !name.is_empty() {
            seen.insert(name);
        }
    }
}

/// `validateLifecycle`.
fn lifecycle(c: &Map<String, Value>, path: &Path, ctx: &PodContext, out: &mut Vec<Cause>) {
    let Some(lc) = c.get("lifecycle").and_then(Value::as_object) else {
        return;
    };
    let p = path.child("lifecycle");
    for hook in ["postStart", "preStop"] {
        if let Some(h) = lc.get(hook).and_then(Value::as_object) {
            handler(h, false, &p.child(hook), ctx, out);
        }
    }
}

/// `validateLivenessProbe`, `validateReadinessProbe`, `validateStartupProbe`.
fn probes(c: &Map<String, Value>, path: &Path, ctx: &PodContext, out: &mut Vec<Cause>) {
    for key in ["livenessProbe", "readinessProbe", "startupProbe"] {
        let Some(probe) = c.get(key).and_then(Value::as_object) else {
            continue;
        };
        let p = path.child(key);
        handler(probe, true, &p, ctx, out);
        for field in [
            "initialDelaySeconds",
            "timeoutSeconds",
            "periodSeconds",
            "successThreshold",
            "failureThreshold",
        ] {
            super::non_negative(probe.get(field), &p.child(field), out);
        }
        let grace = probe
            .get("terminationGracePeriodSeconds")
            .and_then(Value::as_i64);
        if let Some(g) = grace
            && g <= 0
        {
            out.push(Cause::invalid(
                p.child("terminationGracePeriodSeconds"),
                &json!(g),
                "must be greater than 0",
            ));
        }
        if key == "readinessProbe" {
            if let Some(g) = grace {
                out.push(Cause::invalid(
                    p.child("terminationGracePeriodSeconds"),
                    &json!(g),
                    "must not be set for readinessProbes",
                ));
            }
        } else {
            let success = probe
                .get("successThreshold")
                .and_then(Value::as_i64)
                .unwrap_or(0);
            if success != 1 {
                out.push(Cause::invalid(
                    p.child("successThreshold"),
                    &json!(success),
                    "must be 1",
                ));
            }
        }
    }
}

/// `validateHandler`: exactly one action. Probes may use `grpc`, hooks
/// `sleep`.
fn handler(
    h: &Map<String, Value>,
    probe: bool,
    path: &Path,
    ctx: &PodContext,
    out: &mut Vec<Cause>,
) {
    let kinds: &[&str] = if probe {
        &["exec", "httpGet", "tcpSocket", "grpc"]
    } else {
        &["exec", "httpGet", "tcpSocket", "sleep"]
    };
    let mut count = 0;
    for kind in kinds {
        let Some(action) = h.get(*kind).and_then(Value::as_object) else {
            continue;
        };
        let p = path.child(kind);
        if count > 0 {
            out.push(Cause::forbidden(
                p,
                "may not specify more than 1 handler type",
            ));
            continue;
        }
        count += 1;
        match *kind {
            "exec" => {
                if arr(action, "command").is_empty() {
                    out.push(Cause::required(p.child("command"), ""));
                }
            }
            "httpGet" => {
                if str_of(action, "path").is_empty() {
                    out.push(Cause::required(p.child("path"), ""));
                }
                port_num_or_name(action.get("port"), &p.child("port"), out);
                let scheme = str_of(action, "scheme");
                if !["HTTP", "HTTPS"].contains(&scheme) {
                    out.push(Cause::not_supported(
                        p.child("scheme"),
                        &json!(scheme),
                        &["HTTP", "HTTPS"],
                    ));
                }
                for header in arr(action, "httpHeaders") {
                    let name = str_field(header, "name");
                    let ok = !name.is_empty()
                        && name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-');
                    if !ok {
                        out.push(Cause::invalid(
                            p.child("httpHeaders"),
                            &json!(name),
                            "a valid HTTP header must consist of alphanumeric characters or '-' (e.g. 'X-Header-Name', regex used for validation is '[-A-Za-z0-9]+')",
                        ));
                    }
                }
            }
            "tcpSocket" => port_num_or_name(action.get("port"), &p.child("port"), out),
            "grpc" => {
                let port = action.get("port").and_then(Value::as_i64).unwrap_or(0);
                if !names::valid_port(port) {
                    out.push(Cause::invalid(
                        p.child("port"),
                        &json!(port),
                        names::PORT_RANGE_MSG,
                    ));
                }
            }
            _ => {
                let seconds = action.get("seconds").and_then(Value::as_i64).unwrap_or(0);
                if let Some(grace) = ctx.grace_period
                    && (seconds < 0 || seconds > grace)
                {
                    out.push(Cause::invalid(
                        &p,
                        &json!(seconds),
                        format!("must be non-negative and less than terminationGracePeriodSeconds ({grace})"),
                    ));
                }
            }
        }
    }
    if count == 0 {
        out.push(Cause::required(path, "must specify a handler type"));
    }
}

/// `ValidatePortNumOrName` of an int-or-string port.
pub(super) fn port_num_or_name(port: Option<&Value>, path: &Path, out: &mut Vec<Cause>) {
    match port {
        Some(Value::String(name)) => {
            for msg in names::port_name(name) {
                out.push(Cause::invalid(path, &json!(name), msg));
            }
        }
        other => {
            let n = other.and_then(Value::as_i64).unwrap_or(0);
            if !names::valid_port(n) {
                out.push(Cause::invalid(path, &json!(n), names::PORT_RANGE_MSG));
            }
        }
    }
}

/// `validateResizePolicy`.
fn resize_policy(c: &Map<String, Value>, path: &Path, restart: &str, out: &mut Vec<Cause>) {
    let mut seen = BTreeSet::new();
    for (i, p) in arr(c, "resizePolicy").iter().enumerate() {
        let name = str_field(p, "resourceName");
        let policy = str_field(p, "restartPolicy");
        if !seen.insert(name) {
            out.push(Cause::duplicate(path.index(i), &json!(name)));
        }
        match name {
            "cpu" | "memory" => {}
            "" => out.push(Cause::required(path, "")),
            other => out.push(Cause::not_supported(
                path,
                &json!(other),
                &["cpu", "memory"],
            )),
        }
        match policy {
            "NotRequired" | "RestartContainer" => {}
            "" => out.push(Cause::required(path, "")),
            other => out.push(Cause::not_supported(
                path,
                &json!(other),
                &["NotRequired", "RestartContainer"],
            )),
        }
        if restart == "Never" && policy != "NotRequired" {
            out.push(Cause::invalid(
                path,
                &json!(policy),
                "must be 'NotRequired' when `restartPolicy` is 'Never'",
            ));
        }
    }
}

/// Resources whose requests must equal their limits: everything that is
/// not cpu, memory, ephemeral-storage (upstream `IsOvercommitAllowed`:
/// native resources except hugepages may be overcommitted).
fn overcommit_allowed(name: &str) -> bool {
    is_native(name) && !name.starts_with("hugepages-")
}

/// Upstream `IsNativeResource`: no domain, or a `kubernetes.io` one.
fn is_native(name: &str) -> bool {
    match name.split_once('/') {
        None => true,
        Some((domain, _)) => domain == "kubernetes.io" || domain.ends_with(".kubernetes.io"),
    }
}

/// Upstream `IsIntegerResourceName`: extended resources (and the
/// attachable-volume and device kinds) take whole numbers only.
fn is_integer_resource(name: &str) -> bool {
    !is_native(name) && !name.starts_with("requests.")
}

/// `validateContainerResourceName`.
fn resource_name(name: &str, path: &Path, out: &mut Vec<Cause>) {
    let msgs = names::qualified_name(name);
    let valid = msgs.is_empty();
    for msg in msgs {
        out.push(Cause::invalid(path, &json!(name), msg));
    }
    if !valid {
        return;
    }
    if !name.contains('/') {
        let standard = ["cpu", "memory", "ephemeral-storage"].contains(&name)
            || name.starts_with("hugepages-");
        if !standard {
            out.push(Cause::invalid(
                path,
                &json!(name),
                "must be a standard resource for containers",
            ));
        }
    } else if !is_native(name) && name.starts_with("requests.") {
        out.push(Cause::invalid(
            path,
            &json!(name),
            "doesn't follow extended resource name standard",
        ));
    }
}

/// The quantities of a `limits`/`requests` map, parsed; entries that do
/// not parse are left to the decoder.
fn quantities(m: Option<&Value>) -> BTreeMap<String, Quantity> {
    m.and_then(Value::as_object)
        .map(|m| {
            m.iter()
                .filter_map(|(k, v)| {
                    let q = match v {
                        Value::String(s) => Quantity::parse(s),
                        Value::Number(n) => Quantity::parse(&n.to_string()),
                        _ => None,
                    }?;
                    Some((k.clone(), q))
                })
                .collect()
        })
        .unwrap_or_default()
}

/// `ValidateResourceQuantityValue`.
fn quantity_value(name: &str, q: &Quantity, path: &Path, out: &mut Vec<Cause>) {
    if q.is_negative() {
        out.push(Cause::invalid(
            path,
            &json!(q.canonical()),
            names::NEGATIVE_MSG,
        ));
    }
    if is_integer_resource(name) && !q.is_integer() {
        out.push(Cause::invalid(
            path,
            &json!(q.canonical()),
            "must be an integer",
        ));
    }
}

/// `ValidateContainerResourceRequirements` (upstream
/// `validateResourceRequirements`); the map order is sorted where Go's is
/// random.
pub(super) fn resources(r: &Map<String, Value>, path: &Path, out: &mut Vec<Cause>) {
    let lim_path = path.child("limits");
    let req_path = path.child("requests");
    let limits = quantities(r.get("limits"));
    let requests = quantities(r.get("requests"));
    let mut lim_hugepages = false;
    let mut lim_cpu_mem = false;
    for (name, q) in &limits {
        let p = lim_path.key(name);
        resource_name(name, &p, out);
        quantity_value(name, q, &p, out);
        if name.starts_with("hugepages-") {
            lim_hugepages = true;
        }
        if name == "cpu" || name == "memory" {
            lim_cpu_mem = true;
        }
    }
    let mut req_hugepages = false;
    let mut req_cpu_mem = false;
    for (name, q) in &requests {
        let p = req_path.key(name);
        resource_name(name, &p, out);
        quantity_value(name, q, &p, out);
        match limits.get(name) {
            Some(limit) => {
                if q != limit && !overcommit_allowed(name) {
                    out.push(Cause::invalid(
                        &req_path,
                        &json!(q.canonical()),
                        format!("must be equal to {name} limit of {}", limit.canonical()),
                    ));
                } else if q > limit {
                    out.push(Cause::invalid(
                        &req_path,
                        &json!(q.canonical()),
                        format!(
                            "must be less than or equal to {name} limit of {}",
                            limit.canonical()
                        ),
                    ));
                }
            }
            None if !overcommit_allowed(name) => out.push(Cause::required(
                &lim_path,
                "Limit must be set for non overcommitable resources",
            )),
            None => {}
        }
        if name.starts_with("hugepages-") {
            req_hugepages = true;
        }
        if name == "cpu" || name == "memory" {
            req_cpu_mem = true;
        }
    }
    if !lim_cpu_mem && !req_cpu_mem && (lim_hugepages || req_hugepages) {
        out.push(Cause::forbidden(path, "HugePages require cpu or memory"));
    }
}
