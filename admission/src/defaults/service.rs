//! `SetDefaults_Service` (upstream `pkg/apis/core/v1/defaults.go`). IP
//! families, cluster IPs and node ports are the allocator's
//! ([`crate::allocator::ServiceAllocation`]).

use serde_json::{Map, Value, json};

use crate::json::{default, default_str, each_obj_mut, ensure_obj, str_of};

pub(crate) fn service(obj: &mut Map<String, Value>) {
    let Some(spec) = ensure_obj(obj, "spec") else {
        return;
    };
    default_str(spec, "sessionAffinity", "None");
    match str_of(spec, "sessionAffinity") {
        "None" => {
            spec.remove("sessionAffinityConfig");
        }
        "ClientIP" => {
            if let Some(cfg) = ensure_obj(spec, "sessionAffinityConfig")
                && let Some(ip) = ensure_obj(cfg, "clientIP")
            {
                default(ip, "timeoutSeconds", json!(10800));
            }
        }
        _ => {}
    }
    default_str(spec, "type", "ClusterIP");
    each_obj_mut(spec, "ports", |p| {
        default_str(p, "protocol", "TCP");
        let unset_target = match p.get("targetPort") {
            None | Some(Value::Null) => true,
            Some(Value::Number(n)) => n.as_i64() == Some(0),
            Some(Value::String(s)) => s.is_empty(),
            _ => false,
        };
        if unset_target && let Some(port) = p.get("port").cloned() {
            p.insert("targetPort".into(), port);
        }
    });
    let ty = str_of(spec, "type").to_owned();
    let has_external_ips = spec
        .get("externalIPs")
        .and_then(Value::as_array)
        .is_some_and(|a| !a.is_empty());
    let externally_accessible = matches!(ty.as_str(), "LoadBalancer" | "NodePort")
        || (ty == "ClusterIP" && has_external_ips);
    if externally_accessible {
        default_str(spec, "externalTrafficPolicy", "Cluster");
    }
    if matches!(ty.as_str(), "NodePort" | "LoadBalancer" | "ClusterIP") {
        default(spec, "internalTrafficPolicy", json!("Cluster"));
    }
    if ty == "LoadBalancer" {
        default(spec, "allocateLoadBalancerNodePorts", json!(true));
    }
}
