//! Service validation (upstream `ValidateService` and
//! `ValidateServiceUpdate` in `pkg/apis/core/validation/validation.go`).

use std::collections::BTreeSet;

use serde_json::{Map, Value, json};

use super::pod::protocol;
use crate::Cause;
use crate::json::{arr, str_of};
use crate::names::{self, PORT_RANGE_MSG};
use crate::path::Path;
use crate::selector::validate_labels;

const TYPES: [&str; 4] = ["ClusterIP", "ExternalName", "LoadBalancer", "NodePort"];

fn cluster_ips(spec: &Map<String, Value>) -> Vec<&str> {
    arr(spec, "clusterIPs")
        .iter()
        .filter_map(Value::as_str)
        .collect()
}

pub(super) fn service(obj: &Value, old: Option<&Value>) -> Vec<Cause> {
    let mut out = Vec::new();
    let empty = Map::new();
    let spec = obj.get("spec").and_then(Value::as_object).unwrap_or(&empty);
    let path = Path::new("spec");
    if let Some(old) = old {
        let old_spec = old.get("spec").and_then(Value::as_object).unwrap_or(&empty);
        update(spec, old_spec, &path, &mut out);
    }
    let ty = str_of(spec, "type");
    let ips = cluster_ips(spec);
    let headless = ips.first() == Some(&"None") || str_of(spec, "clusterIP") == "None";
    let ports = arr(spec, "ports");
    if ports.is_empty() && !headless && ty != "ExternalName" {
        out.push(Cause::required(path.child("ports"), ""));
    }
    match ty {
        "LoadBalancer" | "NodePort" if headless => out.push(Cause::invalid(
            path.child("clusterIPs").index(0),
            &json!("None"),
            format!("may not be set to 'None' for {ty} services"),
        )),
        "ExternalName" => {
            if !ips.is_empty() || !str_of(spec, "clusterIP").is_empty() {
                out.push(Cause::forbidden(
                    path.child("clusterIPs"),
                    "may not be set for ExternalName services",
                ));
            }
            if !arr(spec, "ipFamilies").is_empty() {
                out.push(Cause::forbidden(
                    path.child("ipFamilies"),
                    "may not be set for ExternalName services",
                ));
            }
            if spec.get("ipFamilyPolicy").is_some_and(|v| !v.is_null()) {
                out.push(Cause::forbidden(
                    path.child("ipFamilyPolicy"),
                    "may not be set for ExternalName services",
                ));
            }
            let cname = str_of(spec, "externalName").trim_end_matches('.');
            if cname.is_empty() {
                out.push(Cause::required(path.child("externalName"), ""));
            } else {
                for msg in names::dns1123_subdomain(cname) {
                    out.push(Cause::invalid(
                        path.child("externalName"),
                        &json!(cname),
                        msg,
                    ));
                }
            }
        }
        _ => {}
    }
    let mut port_names = BTreeSet::new();
    for (i, port) in ports.iter().enumerate() {
        let Some(port) = port.as_object() else {
            continue;
        };
        let p = path.child("ports").index(i);
        let name = str_of(port, "name");
        if ports.len() > 1 && name.is_empty() {
            out.push(Cause::required(p.child("name"), ""));
        } else if !name.is_empty() {
            for msg in names::dns1123_label(name) {
                out.push(Cause::invalid(p.child("name"), &json!(name), msg));
            }
            if !port_names.insert(name) {
                out.push(Cause::duplicate(p.child("name"), &json!(name)));
            }
        }
        let number = port.get("port").and_then(Value::as_i64).unwrap_or(0);
        if !names::valid_port(number) {
            out.push(Cause::invalid(
                p.child("port"),
                &json!(number),
                PORT_RANGE_MSG,
            ));
        }
        protocol(port, &p, &mut out);
        match port.get("targetPort") {
            Some(Value::Number(n)) => {
                let n = n.as_i64().unwrap_or(0);
                if !names::valid_port(n) {
                    out.push(Cause::invalid(
                        p.child("targetPort"),
                        &json!(n),
                        PORT_RANGE_MSG,
                    ));
                }
            }
            Some(Value::String(s)) => {
                for msg in names::port_name(s) {
                    out.push(Cause::invalid(p.child("targetPort"), &json!(s), msg));
                }
            }
            _ => {}
        }
    }
    if let Some(sel) = spec.get("selector").and_then(Value::as_object) {
        out.extend(validate_labels(sel, &path.child("selector")));
    }
    let affinity = str_of(spec, "sessionAffinity");
    if affinity.is_empty() {
        out.push(Cause::required(path.child("sessionAffinity"), ""));
    } else if !["ClientIP", "None"].contains(&affinity) {
        out.push(Cause::not_supported(
            path.child("sessionAffinity"),
            &json!(affinity),
            &["ClientIP", "None"],
        ));
    }
    if ty.is_empty() {
        out.push(Cause::required(path.child("type"), ""));
    } else if !TYPES.contains(&ty) {
        out.push(Cause::not_supported(path.child("type"), &json!(ty), &TYPES));
    }
    if ty == "ClusterIP" {
        for (i, port) in ports.iter().enumerate() {
            if port
                .get("nodePort")
                .and_then(Value::as_i64)
                .is_some_and(|n| n != 0)
            {
                out.push(Cause::forbidden(
                    path.child("ports").index(i).child("nodePort"),
                    "may not be used when `type` is 'ClusterIP'",
                ));
            }
        }
    }
    let mut node_ports = BTreeSet::new();
    let mut keys = BTreeSet::new();
    for (i, port) in ports.iter().enumerate() {
        let proto = port
            .get("protocol")
            .and_then(Value::as_str)
            .unwrap_or_default();
        let p = path.child("ports").index(i);
        if let Some(np) = port
            .get("nodePort")
            .and_then(Value::as_i64)
            .filter(|n| *n != 0)
            && !node_ports.insert((proto, np))
        {
            out.push(Cause::duplicate(p.child("nodePort"), &json!(np)));
        }
        let number = port.get("port").and_then(Value::as_i64).unwrap_or(0);
        if !keys.insert((proto, number)) {
            out.push(Cause::duplicate_rendered(
                p,
                &format!(
                    "core.ServicePort{{Name:\"\", Protocol:{}, AppProtocol:(*string)(nil), Port:{number}, TargetPort:intstr.IntOrString{{Type:0, IntVal:0, StrVal:\"\"}}, NodePort:0}}",
                    crate::quote(proto)
                ),
            ));
        }
    }
    out
}

/// `ValidateServiceUpdate`: the primary cluster IP may not change once set
/// (except to or from ExternalName).
fn update(spec: &Map<String, Value>, old: &Map<String, Value>, path: &Path, out: &mut Vec<Cause>) {
    let (ty, old_ty) = (str_of(spec, "type"), str_of(old, "type"));
    if ty == "ExternalName" || old_ty == "ExternalName" {
        return;
    }
    let (ips, old_ips) = (cluster_ips(spec), cluster_ips(old));
    if let Some(first) = old_ips.first() {
        match ips.first() {
            None => out.push(Cause::required(
                path.child("clusterIPs").index(0),
                "primary clusterIP can not be unset",
            )),
            Some(new_first) if new_first != first => out.push(Cause::invalid(
                path.child("clusterIPs").index(0),
                &json!(ips),
                "may not change once set",
            )),
            _ => {}
        }
    }
}
