//! Service and Ingress: the union of the members' load balancers. Pure.
//!
//! `status.loadBalancer.ingress` is the union of every member's entries
//! (`{ip, hostname, ipMode, ports}`), equal entries once, sorted by
//! `ip`, then `hostname`, then the whole entry, so a client reaches the
//! object through any member and the result does not depend on the
//! members' order. Helm 3's `serviceReady` waits for a non-empty list on
//! a `LoadBalancer` Service; it is non-empty as soon as one member has a
//! load balancer (the per-member truth is in the Placement).

use serde_json::{Value, json};

use super::MemberCopy;

/// The federated `status` of a Service or an Ingress:
/// `{"loadBalancer": {"ingress": [...]}}`, or `{"loadBalancer": {}}`
/// when no member has an ingress (as a cluster writes it).
pub fn load_balancer(copies: &[&MemberCopy<'_>]) -> Value {
    let ingress = union(copies);
    if ingress.is_empty() {
        json!({"loadBalancer": {}})
    } else {
        json!({"loadBalancer": {"ingress": ingress}})
    }
}

/// The deduplicated, sorted union of the copies'
/// `status.loadBalancer.ingress` entries.
pub fn union(copies: &[&MemberCopy<'_>]) -> Vec<Value> {
    let mut all: Vec<(String, String, String, &Value)> = copies
        .iter()
        .filter_map(|c| c.status()?.pointer("/loadBalancer/ingress")?.as_array())
        .flatten()
        .map(|e| {
            let s = |k: &str| {
                e.get(k)
                    .and_then(Value::as_str)
                    .unwrap_or_default()
                    .to_owned()
            };
            (s("ip"), s("hostname"), e.to_string(), e)
        })
        .collect();
    all.sort_by(|a, b| (&a.0, &a.1, &a.2).cmp(&(&b.0, &b.1, &b.2)));
    let mut out: Vec<Value> = Vec::with_capacity(all.len());
    for (_, _, _, e) in all {
        if !out.contains(e) {
            out.push(e.clone());
        }
    }
    out
}
