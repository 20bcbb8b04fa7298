//! Pod and pod spec validation (upstream `pkg/apis/core/validation/
//! validation.go` at release-1.33: `ValidatePodCreate`, `ValidatePodUpdate`,
//! `ValidatePodTemplateSpec`, `ValidatePodSpec`, `ValidateVolumes` (names),
//! and the policy fields). Containers are in `container.rs`, scheduling
//! constraints in `affinity.rs`, security contexts in `security.rs`.

use std::collections::BTreeSet;

use serde_json::{Map, Value, json};

use super::container::{self, PodContext};
use super::{affinity, security};
use crate::Cause;
use crate::json::{arr, str_of};
use crate::names;
use crate::path::Path;
use crate::selector::validate_labels;

pub(super) const PROTOCOLS: [&str; 3] = ["SCTP", "TCP", "UDP"];

/// A Pod object on create (`old` is `None`) or update.
pub(super) fn pod(obj: &Value, old: Option<&Value>) -> Vec<Cause> {
    let mut out = Vec::new();
    let empty = Map::new();
    let spec = obj.get("spec").and_then(Value::as_object).unwrap_or(&empty);
    let path = Path::new("spec");
    pod_spec(spec, &path, &mut out);
    for key in ["containers", "initContainers"] {
        for (i, c) in arr(spec, key).iter().enumerate() {
            if let Some(c) = c.as_object() {
                container::only_for_pod(c, &path.child(key).index(i), &mut out);
            }
        }
    }
    match old {
        None => {
            if !arr(spec, "ephemeralContainers").is_empty() {
                out.push(Cause::forbidden(
                    path.child("ephemeralContainers"),
                    "cannot be set on create",
                ));
            }
            if !str_of(spec, "nodeName").is_empty() && !arr(spec, "schedulingGates").is_empty() {
                out.push(Cause::forbidden(
                    path.child("nodeName"),
                    "cannot be set until all schedulingGates have been cleared",
                ));
            }
        }
        Some(old) => {
            let old_spec = old.get("spec").and_then(Value::as_object).unwrap_or(&empty);
            super::pod_update::update(spec, old_spec, &path, &mut out);
        }
    }
    out
}

/// A `PodTemplateSpec` at `path` (upstream `ValidatePodTemplateSpec`):
/// template labels (at `<path>.labels`, as upstream prints the embedded
/// metadata), the pod spec, and no ephemeral containers.
pub(super) fn template(t: Option<&Value>, path: &Path) -> Vec<Cause> {
    let mut out = Vec::new();
    let empty = Map::new();
    let t = t.and_then(Value::as_object).unwrap_or(&empty);
    template_labels(t, path, &mut out);
    let spec = t.get("spec").and_then(Value::as_object).unwrap_or(&empty);
    let spec_path = path.child("spec");
    pod_spec(spec, &spec_path, &mut out);
    if !arr(spec, "ephemeralContainers").is_empty() {
        out.push(Cause::forbidden(
            spec_path.child("ephemeralContainers"),
            "ephemeral containers not allowed in pod template",
        ));
    }
    out
}

/// The labels of a pod template, validated at `<path>.labels`.
pub(super) fn template_labels(t: &Map<String, Value>, path: &Path, out: &mut Vec<Cause>) {
    if let Some(labels) = t
        .get("metadata")
        .and_then(|m| m.get("labels"))
        .and_then(Value::as_object)
    {
        out.extend(validate_labels(labels, &path.child("labels")));
    }
}

/// `ValidatePodSpec`, in upstream's order.
pub(super) fn pod_spec(spec: &Map<String, Value>, path: &Path, out: &mut Vec<Cause>) {
    let grace_period = spec
        .get("terminationGracePeriodSeconds")
        .and_then(Value::as_i64);
    if grace_period.is_none() {
        out.push(Cause::required(
            path.child("terminationGracePeriodSeconds"),
            "",
        ));
    }
    let volumes = super::volume::volumes(spec, &path.child("volumes"), out);
    let ctx = PodContext {
        volumes: &volumes,
        grace_period,
        restart_policy: str_of(spec, "restartPolicy"),
    };
    container::containers(spec, &path.child("containers"), &ctx, out);
    container::init_containers(spec, &path.child("initContainers"), &ctx, out);
    container::ephemeral_containers(spec, &path.child("ephemeralContainers"), &ctx, out);
    host_network_deps(spec, path, out);
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
    if let Some(ns) = spec.get("nodeSelector").and_then(Value::as_object) {
        out.extend(validate_labels(ns, &path.child("nodeSelector")));
    }
    if let Some(sc) = spec.get("securityContext").and_then(Value::as_object) {
        security::pod(sc, &path.child("securityContext"), out);
    }
    // v1 keeps hostPID and shareProcessNamespace on the spec; upstream
    // checks them inside the internal security context, and names that.
    if spec.get("hostPID").and_then(Value::as_bool) == Some(true)
        && spec.get("shareProcessNamespace").and_then(Value::as_bool) == Some(true)
    {
        out.push(Cause::invalid(
            path.child("securityContext").child("shareProcessNamespace"),
            &json!(true),
            "ShareProcessNamespace and HostPID cannot both be enabled",
        ));
    }
    if let Some(a) = spec.get("affinity").and_then(Value::as_object) {
        affinity::affinity(a, &path.child("affinity"), out);
    }
    if dns == "None" && spec.get("dnsConfig").is_none_or(Value::is_null) {
        out.push(Cause::required(
            path.child("dnsConfig"),
            "must provide `dnsConfig` when `dnsPolicy` is None",
        ));
    }
    for (i, gate) in arr(spec, "readinessGates").iter().enumerate() {
        let ct = gate
            .get("conditionType")
            .and_then(Value::as_str)
            .unwrap_or_default();
        for msg in names::qualified_name(ct) {
            out.push(Cause::invalid(
                path.child("readinessGates").index(i).child("conditionType"),
                &json!(ct),
                msg,
            ));
        }
    }
    let mut gates = BTreeSet::new();
    for (i, gate) in arr(spec, "schedulingGates").iter().enumerate() {
        let name = gate.get("name").and_then(Value::as_str).unwrap_or_default();
        let p = path.child("schedulingGates").index(i);
        for msg in names::qualified_name(name) {
            out.push(Cause::invalid(&p, &json!(name), msg));
        }
        if !gates.insert(name) {
            out.push(Cause::duplicate(&p, &json!(name)));
        }
    }
    affinity::topology_spread(
        arr(spec, "topologySpreadConstraints"),
        &path.child("topologySpreadConstraints"),
        out,
    );
    for key in ["serviceAccountName", "nodeName"] {
        let v = str_of(spec, key);
        if !v.is_empty() {
            for msg in names::dns1123_subdomain(v) {
                out.push(Cause::invalid(path.child(key), &json!(v), msg));
            }
        }
    }
    if let Some(n) = spec.get("activeDeadlineSeconds").and_then(Value::as_i64)
        && !(1..=2_147_483_647).contains(&n)
    {
        out.push(Cause::invalid(
            path.child("activeDeadlineSeconds"),
            &json!(n),
            "must be between 1 and 2147483647, inclusive",
        ));
    }
    for key in ["hostname", "subdomain"] {
        let v = str_of(spec, key);
        if !v.is_empty() {
            for msg in names::dns1123_label(v) {
                out.push(Cause::invalid(path.child(key), &json!(v), msg));
            }
        }
    }
    affinity::tolerations(arr(spec, "tolerations"), &path.child("tolerations"), out);
    let pc = str_of(spec, "priorityClassName");
    if !pc.is_empty() {
        for msg in names::dns1123_subdomain(pc) {
            out.push(Cause::invalid(
                path.child("priorityClassName"),
                &json!(pc),
                msg,
            ));
        }
    }
    if let Some(pp) = spec.get("preemptionPolicy").and_then(Value::as_str)
        && !["PreemptLowerPriority", "Never"].contains(&pp)
    {
        out.push(Cause::not_supported(
            path.child("preemptionPolicy"),
            &json!(pp),
            &["PreemptLowerPriority", "Never"],
        ));
    }
    if let Some(os) = spec.get("os").and_then(Value::as_object) {
        let name = str_of(os, "name");
        if name.is_empty() {
            out.push(Cause::required(path.child("os").child("name"), ""));
        } else if !["linux", "windows"].contains(&name) {
            out.push(Cause::not_supported(
                path.child("os").child("name"),
                &json!(name),
                &["linux", "windows"],
            ));
        }
    }
}

/// `validatePodHostNetworkDeps`: with `hostNetwork`, a set `hostPort`
/// must equal the `containerPort`.
fn host_network_deps(spec: &Map<String, Value>, path: &Path, out: &mut Vec<Cause>) {
    if spec.get("hostNetwork").and_then(Value::as_bool) != Some(true) {
        return;
    }
    for (i, c) in arr(spec, "containers").iter().enumerate() {
        for (j, port) in c
            .get("ports")
            .and_then(Value::as_array)
            .map(Vec::as_slice)
            .unwrap_or_default()
            .iter()
            .enumerate()
        {
            let hp = port.get("hostPort").and_then(Value::as_i64).unwrap_or(0);
            let cp = port
                .get("containerPort")
                .and_then(Value::as_i64)
                .unwrap_or(0);
            if hp != 0 && hp != cp {
                out.push(Cause::invalid(
                    path.child("containers")
                        .index(i)
                        .child("ports")
                        .index(j)
                        .child("hostPort"),
                    &json!(hp),
                    "must match `containerPort` when `hostNetwork` is true",
                ));
            }
        }
    }
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
