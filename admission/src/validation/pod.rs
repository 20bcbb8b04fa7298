//! Pod spec validation (upstream `pkg/apis/core/validation/validation.go`:
//! `ValidatePodSpec`, `validateContainers`, `validateContainerPorts`,
//! `ValidatePodTemplateSpec`), a subset: containers, ports, volumes and
//! their mounts, and the enumerated policy fields.

use std::collections::BTreeSet;

use serde_json::{Map, Value, json};

use crate::Cause;
use crate::json::{arr, str_of};
use crate::names;
use crate::path::Path;
use crate::selector::validate_labels;

pub(super) const PROTOCOLS: [&str; 3] = ["SCTP", "TCP", "UDP"];

/// A Pod object.
pub(super) fn pod(obj: &Value, _old: Option<&Value>) -> Vec<Cause> {
    let mut out = Vec::new();
    match obj.get("spec").and_then(Value::as_object) {
        Some(spec) => pod_spec(spec, &Path::new("spec"), &mut out),
        None => out.push(Cause::required("spec.containers", "")),
    }
    out
}

/// A `PodTemplateSpec` at `path` (upstream `ValidatePodTemplateSpec`):
/// template labels, then the pod spec.
pub(super) fn template(t: Option<&Value>, path: &Path) -> Vec<Cause> {
    let mut out = Vec::new();
    let empty = Map::new();
    let t = t.and_then(Value::as_object).unwrap_or(&empty);
    if let Some(labels) = t
        .get("metadata")
        .and_then(|m| m.get("labels"))
        .and_then(Value::as_object)
    {
        out.extend(validate_labels(
            labels,
            &path.child("metadata").child("labels"),
        ));
    }
    let spec = t.get("spec").and_then(Value::as_object).unwrap_or(&empty);
    pod_spec(spec, &path.child("spec"), &mut out);
    out
}

pub(super) fn pod_spec(spec: &Map<String, Value>, path: &Path, out: &mut Vec<Cause>) {
    let volumes = volumes(spec, &path.child("volumes"), out);
    let mut names = BTreeSet::new();
    let containers = arr(spec, "containers");
    if containers.is_empty() {
        out.push(Cause::required(path.child("containers"), ""));
    }
    for key in ["initContainers", "containers"] {
        for (i, c) in arr(spec, key).iter().enumerate() {
            if let Some(c) = c.as_object() {
                container(c, &path.child(key).index(i), &volumes, &mut names, out);
            }
        }
    }
    let restart = str_of(spec, "restartPolicy");
    if restart.is_empty() {
        out.push(Cause::required(path.child("restartPolicy"), ""));
    } else if !["Always", "OnFailure", "Never"].contains(&restart) {
        out.push(Cause::not_supported(
            path.child("restartPolicy"),
            &json!(restart),
            &["Always", "OnFailure", "Never"],
        ));
    }
    let dns = str_of(spec, "dnsPolicy");
    if dns.is_empty() {
        out.push(Cause::required(path.child("dnsPolicy"), ""));
    } else if !["ClusterFirstWithHostNet", "ClusterFirst", "Default", "None"].contains(&dns) {
        out.push(Cause::not_supported(
            path.child("dnsPolicy"),
            &json!(dns),
            &["ClusterFirstWithHostNet", "ClusterFirst", "Default", "None"],
        ));
    }
    super::non_negative(
        spec.get("terminationGracePeriodSeconds"),
        &path.child("terminationGracePeriodSeconds"),
        out,
    );
    if let Some(n) = spec.get("activeDeadlineSeconds").and_then(Value::as_i64)
        && n <= 0
    {
        out.push(Cause::invalid(
            path.child("activeDeadlineSeconds"),
            &json!(n),
            "must be between 1 and 2147483647, inclusive",
        ));
    }
}

fn volumes(spec: &Map<String, Value>, path: &Path, out: &mut Vec<Cause>) -> BTreeSet<String> {
    let mut seen = BTreeSet::new();
    for (i, v) in arr(spec, "volumes").iter().enumerate() {
        let name = v.get("name").and_then(Value::as_str).unwrap_or_default();
        let p = path.index(i).child("name");
        if name.is_empty() {
            out.push(Cause::required(p, ""));
            continue;
        }
        for msg in names::dns1123_label(name) {
            out.push(Cause::invalid(&p, &json!(name), msg));
        }
        if !seen.insert(name.to_owned()) {
            out.push(Cause::duplicate(p, &json!(name)));
        }
    }
    seen
}

fn container(
    c: &Map<String, Value>,
    path: &Path,
    volumes: &BTreeSet<String>,
    seen: &mut BTreeSet<String>,
    out: &mut Vec<Cause>,
) {
    let name = str_of(c, "name");
    let name_path = path.child("name");
    if name.is_empty() {
        out.push(Cause::required(&name_path, ""));
    } else {
        for msg in names::dns1123_label(name) {
            out.push(Cause::invalid(&name_path, &json!(name), msg));
        }
        if !seen.insert(name.to_owned()) {
            out.push(Cause::duplicate(&name_path, &json!(name)));
        }
    }
    if str_of(c, "image").trim().is_empty() {
        out.push(Cause::required(path.child("image"), ""));
    }
    let mut port_names = BTreeSet::new();
    for (i, port) in arr(c, "ports").iter().enumerate() {
        let Some(port) = port.as_object() else {
            continue;
        };
        let p = path.child("ports").index(i);
        let pname = str_of(port, "name");
        if !pname.is_empty() {
            let msgs = names::port_name(pname);
            if msgs.is_empty() {
                if !port_names.insert(pname.to_owned()) {
                    out.push(Cause::duplicate(p.child("name"), &json!(pname)));
                }
            } else {
                for msg in msgs {
                    out.push(Cause::invalid(p.child("name"), &json!(pname), msg));
                }
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
        protocol(port, &p, out);
    }
    for (i, m) in arr(c, "volumeMounts").iter().enumerate() {
        let p = path.child("volumeMounts").index(i);
        let vname = m.get("name").and_then(Value::as_str).unwrap_or_default();
        if vname.is_empty() {
            out.push(Cause::required(p.child("name"), ""));
        } else if !volumes.contains(vname) {
            out.push(Cause::not_found(p.child("name"), &json!(vname)));
        }
        if m.get("mountPath")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .is_empty()
        {
            out.push(Cause::required(p.child("mountPath"), ""));
        }
    }
    enumerated(
        c,
        "imagePullPolicy",
        &["Always", "IfNotPresent", "Never"],
        path,
        out,
    );
    enumerated(
        c,
        "terminationMessagePolicy",
        &["File", "FallbackToLogsOnError"],
        path,
        out,
    );
}

/// `protocol` of a port: required, one of SCTP/TCP/UDP.
pub(super) fn protocol(port: &Map<String, Value>, path: &Path, out: &mut Vec<Cause>) {
    let proto = str_of(port, "protocol");
    if proto.is_empty() {
        out.push(Cause::required(path.child("protocol"), ""));
    } else if !PROTOCOLS.contains(&proto) {
        out.push(Cause::not_supported(
            path.child("protocol"),
            &json!(proto),
            &PROTOCOLS,
        ));
    }
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
