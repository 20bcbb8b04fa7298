//! Security contexts (upstream `validatePodSpecSecurityContext`,
//! `ValidateSecurityContext`, `validateSeccompProfileField`,
//! `ValidateAppArmorProfileField`, `validateSysctls`).

use std::collections::BTreeSet;

use serde_json::{Map, Value, json};

use crate::Cause;
use crate::json::{arr, str_of};
use crate::path::Path;

const ID_RANGE_MSG: &str = "must be between 0 and 2147483647, inclusive";

fn id(m: &Map<String, Value>, key: &str, path: &Path, out: &mut Vec<Cause>) {
    if let Some(n) = m.get(key).and_then(Value::as_i64)
        && !(0..=2_147_483_647).contains(&n)
    {
        out.push(Cause::invalid(path.child(key), &json!(n), ID_RANGE_MSG));
    }
}

/// A container's `securityContext`.
pub(super) fn container(sc: &Map<String, Value>, path: &Path, out: &mut Vec<Cause>) {
    id(sc, "runAsUser", path, out);
    id(sc, "runAsGroup", path, out);
    let host_users = true;
    if let Some(pm) = sc.get("procMount").and_then(Value::as_str) {
        if !["Default", "Unmasked"].contains(&pm) {
            out.push(Cause::not_supported(
                path.child("procMount"),
                &json!(pm),
                &["Default", "Unmasked"],
            ));
        }
        if host_users && pm == "Unmasked" {
            out.push(Cause::invalid(
                path.child("procMount"),
                &json!(pm),
                "`hostUsers` must be false to use `Unmasked`",
            ));
        }
    }
    seccomp(sc, path, out);
    if sc.get("allowPrivilegeEscalation").and_then(Value::as_bool) == Some(false) {
        let whole = Value::Object(sc.clone());
        if sc.get("privileged").and_then(Value::as_bool) == Some(true) {
            out.push(Cause::invalid(
                path,
                &whole,
                "cannot set `allowPrivilegeEscalation` to false and `privileged` to true",
            ));
        }
        if let Some(caps) = sc.get("capabilities").and_then(Value::as_object) {
            for cap in arr(caps, "add") {
                if cap.as_str() == Some("CAP_SYS_ADMIN") {
                    out.push(Cause::invalid(
                        path,
                        &whole,
                        "cannot set `allowPrivilegeEscalation` to false and `capabilities.Add` CAP_SYS_ADMIN",
                    ));
                }
            }
        }
    }
    app_armor(sc, path, out);
}

/// The pod's `securityContext`.
pub(super) fn pod(sc: &Map<String, Value>, path: &Path, out: &mut Vec<Cause>) {
    id(sc, "fsGroup", path, out);
    id(sc, "runAsUser", path, out);
    id(sc, "runAsGroup", path, out);
    for (i, g) in arr(sc, "supplementalGroups").iter().enumerate() {
        if let Some(n) = g.as_i64()
            && !(0..=2_147_483_647).contains(&n)
        {
            out.push(Cause::invalid(
                path.child("supplementalGroups").index(i),
                &json!(n),
                ID_RANGE_MSG,
            ));
        }
    }
    let sysctls = arr(sc, "sysctls");
    let mut names = BTreeSet::new();
    for (i, s) in sysctls.iter().enumerate() {
        let p = path.child("sysctls").index(i).child("name");
        let name = s.get("name").and_then(Value::as_str).unwrap_or_default();
        if name.is_empty() {
            out.push(Cause::required(p, ""));
        } else if !sysctl_name(name) {
            out.push(Cause::invalid(
                p,
                &json!(name),
                "must have at most 253 characters and match regex ^([a-z0-9]([-_a-z0-9]*[a-z0-9])?[\\./])*[a-z0-9]([-_a-z0-9]*[a-z0-9])?$",
            ));
        } else if names.contains(name) {
            out.push(Cause::duplicate(p, &json!(name)));
        }
        names.insert(name);
    }
    if let Some(policy) = sc.get("fsGroupChangePolicy").and_then(Value::as_str)
        && !["Always", "OnRootMismatch"].contains(&policy)
    {
        out.push(Cause::not_supported(
            path.child("fsGroupChangePolicy"),
            &json!(policy),
            &["Always", "OnRootMismatch"],
        ));
    }
    seccomp(sc, path, out);
    app_armor(sc, path, out);
    if let Some(policy) = sc.get("supplementalGroupsPolicy").and_then(Value::as_str)
        && !["Merge", "Strict"].contains(&policy)
    {
        out.push(Cause::not_supported(
            path.child("supplementalGroupsPolicy"),
            &json!(policy),
            &["Merge", "Strict"],
        ));
    }
    if let Some(policy) = sc.get("seLinuxChangePolicy").and_then(Value::as_str)
        && !["MountOption", "Recursive"].contains(&policy)
    {
        out.push(Cause::not_supported(
            path.child("seLinuxChangePolicy"),
            &json!(policy),
            &["MountOption", "Recursive"],
        ));
    }
}

/// Upstream `IsValidSysctlName`.
fn sysctl_name(name: &str) -> bool {
    let segment = |s: &str| {
        let b = s.as_bytes();
        !b.is_empty()
            && b.iter()
                .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || *c == b'-' || *c == b'_')
            && b[0].is_ascii_alphanumeric()
            && b[b.len() - 1].is_ascii_alphanumeric()
    };
    name.len() <= 253 && name.split(['.', '/']).all(segment)
}

/// `validateSeccompProfileField`.
fn seccomp(sc: &Map<String, Value>, path: &Path, out: &mut Vec<Cause>) {
    let Some(sp) = sc.get("seccompProfile").and_then(Value::as_object) else {
        return;
    };
    let p = path.child("seccompProfile");
    let kind = str_of(sp, "type");
    match kind {
        "Localhost" | "RuntimeDefault" | "Unconfined" => {}
        "" => out.push(Cause::required(
            p.child("type"),
            "type is required when seccompProfile is set",
        )),
        other => out.push(Cause::not_supported(
            p.child("type"),
            &json!(other),
            &["Localhost", "RuntimeDefault", "Unconfined"],
        )),
    }
    let profile = sp.get("localhostProfile").and_then(Value::as_str);
    if kind == "Localhost" {
        match profile {
            None => out.push(Cause::required(
                p.child("localhostProfile"),
                "must be set when seccomp type is Localhost",
            )),
            Some(lp) => {
                if lp.starts_with('/') {
                    out.push(Cause::invalid(
                        p.child("localhostProfile"),
                        &json!(lp),
                        "must be a relative path",
                    ));
                }
                if lp.split('/').any(|s| s == "..") {
                    out.push(Cause::invalid(
                        p.child("localhostProfile"),
                        &json!(lp),
                        "must not contain '..'",
                    ));
                }
            }
        }
    } else if profile.is_some() {
        out.push(Cause::invalid(
            p.child("localhostProfile"),
            &Value::Object(sp.clone()),
            "can only be set when seccomp type is Localhost",
        ));
    }
}

/// `ValidateAppArmorProfileField`.
fn app_armor(sc: &Map<String, Value>, path: &Path, out: &mut Vec<Cause>) {
    let Some(ap) = sc.get("appArmorProfile").and_then(Value::as_object) else {
        return;
    };
    let p = path.child("appArmorProfile");
    let profile = ap.get("localhostProfile").and_then(Value::as_str);
    match str_of(ap, "type") {
        "Localhost" => match profile {
            None => out.push(Cause::required(
                p.child("localhostProfile"),
                "must be set when AppArmor type is Localhost",
            )),
            Some(lp) if lp.trim() != lp => out.push(Cause::invalid(
                p.child("localhostProfile"),
                &json!(lp),
                "must not be padded with whitespace",
            )),
            Some("") => out.push(Cause::required(
                p.child("localhostProfile"),
                "must be set when AppArmor type is Localhost",
            )),
            Some(_) => {}
        },
        "RuntimeDefault" | "Unconfined" => {
            if let Some(lp) = profile {
                out.push(Cause::invalid(
                    p.child("localhostProfile"),
                    &json!(lp),
                    "can only be set when AppArmor type is Localhost",
                ));
            }
        }
        "" => out.push(Cause::required(
            p.child("type"),
            "type is required when appArmorProfile is set",
        )),
        other => out.push(Cause::not_supported(
            p.child("type"),
            &json!(other),
            &["Localhost", "RuntimeDefault", "Unconfined"],
        )),
    }
}
