//! NetworkPolicy validation (upstream `pkg/apis/networking/validation`
//! at release-1.33: `ValidateNetworkPolicySpec`, `ValidateNetworkPolicyPort`,
//! `ValidateNetworkPolicyPeer`, `ValidateIPBlock`; strict CIDR checks are
//! an alpha gate, off by default in 1.33).

use std::net::IpAddr;

use serde_json::{Map, Value, json};

use crate::Cause;
use crate::json::{arr, str_of};
use crate::names;
use crate::path::Path;
use crate::selector::validate_label_selector;

pub(super) fn network_policy(obj: &Value) -> Vec<Cause> {
    let mut out = Vec::new();
    let empty = Map::new();
    let spec = obj.get("spec").and_then(Value::as_object).unwrap_or(&empty);
    let path = Path::new("spec");
    let selector = spec
        .get("podSelector")
        .cloned()
        .unwrap_or_else(|| json!({}));
    out.extend(validate_label_selector(
        &selector,
        &path.child("podSelector"),
    ));
    for (dir, peers) in [("ingress", "from"), ("egress", "to")] {
        for (i, rule) in arr(spec, dir).iter().enumerate() {
            let Some(rule) = rule.as_object() else {
                continue;
            };
            let rp = path.child(dir).index(i);
            for (j, port) in arr(rule, "ports").iter().enumerate() {
                if let Some(port) = port.as_object() {
                    policy_port(port, &rp.child("ports").index(j), &mut out);
                }
            }
            for (j, peer) in arr(rule, peers).iter().enumerate() {
                if let Some(peer) = peer.as_object() {
                    policy_peer(peer, &rp.child(peers).index(j), &mut out);
                }
            }
        }
    }
    let types = arr(spec, "policyTypes");
    let tp = path.child("policyTypes");
    if types.len() > 2 {
        out.push(Cause::invalid(
            tp,
            &Value::Array(types.to_vec()),
            "may not specify more than two policyTypes",
        ));
        return out;
    }
    for (i, t) in types.iter().enumerate() {
        let t = t.as_str().unwrap_or_default();
        if !["Ingress", "Egress"].contains(&t) {
            out.push(Cause::not_supported(
                tp.index(i),
                &json!(t),
                &["Ingress", "Egress"],
            ));
        }
    }
    out
}

/// `ValidateNetworkPolicyPort`.
fn policy_port(port: &Map<String, Value>, path: &Path, out: &mut Vec<Cause>) {
    if let Some(proto) = port.get("protocol").and_then(Value::as_str)
        && !["TCP", "UDP", "SCTP"].contains(&proto)
    {
        out.push(Cause::not_supported(
            path.child("protocol"),
            &json!(proto),
            &["TCP", "UDP", "SCTP"],
        ));
    }
    let end = port.get("endPort").and_then(Value::as_i64);
    match port.get("port").filter(|v| !v.is_null()) {
        Some(Value::String(name)) => {
            if let Some(end) = end {
                out.push(Cause::invalid(
                    path.child("endPort"),
                    &json!(end),
                    "may not be specified when `port` is non-numeric",
                ));
            }
            for msg in names::port_name(name) {
                out.push(Cause::invalid(path.child("port"), &json!(name), msg));
            }
        }
        Some(p) => {
            let n = p.as_i64().unwrap_or(0);
            if !names::valid_port(n) {
                out.push(Cause::invalid(
                    path.child("port"),
                    &json!(n),
                    names::PORT_RANGE_MSG,
                ));
            }
            if let Some(end) = end {
                if end < n {
                    out.push(Cause::invalid(
                        path.child("endPort"),
                        &json!(n),
                        "must be greater than or equal to `port`",
                    ));
                }
                if !names::valid_port(end) {
                    out.push(Cause::invalid(
                        path.child("endPort"),
                        &json!(end),
                        names::PORT_RANGE_MSG,
                    ));
                }
            }
        }
        None => {
            if let Some(end) = end {
                out.push(Cause::invalid(
                    path.child("endPort"),
                    &json!(end),
                    "may not be specified when `port` is not specified",
                ));
            }
        }
    }
}

/// `ValidateNetworkPolicyPeer`: exactly one kind of peer, except that pod
/// and namespace selectors combine.
fn policy_peer(peer: &Map<String, Value>, path: &Path, out: &mut Vec<Cause>) {
    let mut count = 0;
    for key in ["podSelector", "namespaceSelector"] {
        if let Some(sel) = peer.get(key).filter(|v| !v.is_null()) {
            count += 1;
            out.extend(validate_label_selector(sel, &path.child(key)));
        }
    }
    let ip_block = peer.get("ipBlock").and_then(Value::as_object);
    if let Some(b) = ip_block {
        count += 1;
        ip_block_rules(b, &path.child("ipBlock"), out);
    }
    if count == 0 {
        out.push(Cause::required(path, "must specify a peer"));
    } else if count > 1 && ip_block.is_some() {
        out.push(Cause::forbidden(
            path,
            "may not specify both ipBlock and another peer",
        ));
    }
}

const CIDR_MSG: &str = "must be a valid CIDR value, (e.g. 10.9.8.0/24 or 2001:db8::/64)";

/// A CIDR as Go's `ParseCIDR` reads it: the network address and prefix
/// length, with the address's bit width.
fn parse_cidr(s: &str) -> Option<(u128, u32, u32)> {
    let (ip, len) = s.split_once('/')?;
    let len: u32 = if len.is_empty() || !len.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    } else {
        len.parse().ok()?
    };
    let (bits, width) = match ip.parse::<IpAddr>().ok()? {
        IpAddr::V4(a) => (u128::from(u32::from(a)), 32),
        IpAddr::V6(a) => (u128::from(a), 128),
    };
    if len > width {
        return None;
    }
    let host_bits = width - len;
    let network = if host_bits >= 128 {
        0
    } else {
        (bits >> host_bits) << host_bits
    };
    Some((network, len, width))
}

/// `ValidateIPBlock`.
fn ip_block_rules(b: &Map<String, Value>, path: &Path, out: &mut Vec<Cause>) {
    let cidr = str_of(b, "cidr");
    if cidr.is_empty() {
        out.push(Cause::required(path.child("cidr"), ""));
        return;
    }
    let Some((net, len, width)) = parse_cidr(cidr) else {
        out.push(Cause::invalid(path.child("cidr"), &json!(cidr), CIDR_MSG));
        return;
    };
    for (i, except) in arr(b, "except").iter().enumerate() {
        let except = except.as_str().unwrap_or_default();
        let p = path.child("except").index(i);
        let Some((ex_net, ex_len, ex_width)) = parse_cidr(except) else {
            out.push(Cause::invalid(&p, &json!(except), CIDR_MSG));
            continue;
        };
        let host_bits = width - len;
        let contains =
            ex_width == width && (host_bits >= 128 || (ex_net >> host_bits) << host_bits == net);
        if !contains || len >= ex_len {
            out.push(Cause::invalid(
                &p,
                &json!(except),
                "must be a strict subset of `cidr`",
            ));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(spec: Value) -> Vec<String> {
        network_policy(&json!({"spec": spec}))
            .iter()
            .map(ToString::to_string)
            .collect()
    }

    #[test]
    fn ports_peers_and_cidrs() {
        let ok = json!({"podSelector": {"matchLabels": {"app": "db"}},
            "ingress": [{"from": [{"podSelector": {}, "namespaceSelector": {"matchLabels": {"team": "a"}}},
                                  {"ipBlock": {"cidr": "10.0.0.0/8", "except": ["10.1.0.0/16"]}}],
                         "ports": [{"protocol": "TCP", "port": 5432}, {"port": "http"}, {"port": 8000, "endPort": 9000}]}],
            "policyTypes": ["Ingress"]});
        assert!(check(ok).is_empty());
        let bad = json!({"podSelector": {},
            "ingress": [{"from": [{}, {"ipBlock": {"cidr": "10.0.0.0/33"}},
                                  {"ipBlock": {"cidr": "10.0.0.0/16", "except": ["10.0.0.0/8", "192.168.0.0/24"]}, "podSelector": {}}],
                         "ports": [{"protocol": "ICMP", "port": 0}, {"port": "http", "endPort": 90}, {"port": 90, "endPort": 80}]}],
            "egress": [{"to": [{"ipBlock": {}}]}],
            "policyTypes": ["Ingress", "Sideways"]});
        assert_eq!(
            check(bad),
            [
                r#"spec.ingress[0].ports[0].protocol: Unsupported value: "ICMP": supported values: "TCP", "UDP", "SCTP""#,
                "spec.ingress[0].ports[0].port: Invalid value: 0: must be between 1 and 65535, inclusive",
                "spec.ingress[0].ports[1].endPort: Invalid value: 90: may not be specified when `port` is non-numeric",
                "spec.ingress[0].ports[2].endPort: Invalid value: 90: must be greater than or equal to `port`",
                "spec.ingress[0].from[0]: Required value: must specify a peer",
                r#"spec.ingress[0].from[1].ipBlock.cidr: Invalid value: "10.0.0.0/33": must be a valid CIDR value, (e.g. 10.9.8.0/24 or 2001:db8::/64)"#,
                r#"spec.ingress[0].from[2].ipBlock.except[0]: Invalid value: "10.0.0.0/8": must be a strict subset of `cidr`"#,
                r#"spec.ingress[0].from[2].ipBlock.except[1]: Invalid value: "192.168.0.0/24": must be a strict subset of `cidr`"#,
                "spec.ingress[0].from[2]: Forbidden: may not specify both ipBlock and another peer",
                "spec.egress[0].to[0].ipBlock.cidr: Required value",
                r#"spec.policyTypes[1]: Unsupported value: "Sideways": supported values: "Ingress", "Egress""#,
            ]
        );
    }
}
