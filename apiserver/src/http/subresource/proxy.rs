//! `pods/proxy` and `services/proxy`: kube-apiserver resolves the backend
//! (upstream `pod.ResourceLocation`, the Service registry's
//! `ResourceLocation`) and proxies to it.
//!
//! Resolution is upstream's, with its errors: a pod without an IP is 400
//! `address not allowed`; a Service port number it does not declare is 503
//! `no service port 81 found for service "web"`; a Service without ready
//! endpoint addresses is 503 `no endpoints available for service "web"`.
//! A resolved backend cannot be reached: Skein has no network path to
//! workloads, so that is 503 `error trying to reach service: …` (upstream's
//! prefix for a failed proxy dial).
//!
//! Deviation: Skein runs no endpoints controller, so a Service whose
//! Endpoints object does not exist reads as one without endpoints (503),
//! where upstream, whose controller would have created an empty one,
//! answers the same 503; a missing Service is 404 `services "x" not found`.

use axum::http::{Method, StatusCode};
use axum::response::Response;
use serde_json::Value;

use super::super::AppState;
use super::super::api::Call;
use super::super::status::ApiError;
use super::{allow, split_id};
use crate::registry::{ResourceInfo, resource};

/// The methods upstream proxies (`proxyMethods`, plus PATCH).
pub const METHODS: &[Method] = &[
    Method::GET,
    Method::POST,
    Method::PUT,
    Method::PATCH,
    Method::DELETE,
    Method::HEAD,
    Method::OPTIONS,
];

/// The 503 of a backend that resolved but cannot be reached.
fn unreachable(host_port: &str) -> ApiError {
    ApiError::new(
        StatusCode::SERVICE_UNAVAILABLE,
        "ServiceUnavailable",
        format!(
            "error trying to reach service: dial tcp {host_port}: Skein has no network path to workloads"
        ),
    )
}

fn join_host_port(host: &str, port: &str) -> String {
    match (host.contains(':'), port.is_empty()) {
        (true, true) => format!("[{host}]"),
        (true, false) => format!("[{host}]:{port}"),
        (false, true) => host.to_string(),
        (false, false) => format!("{host}:{port}"),
    }
}

/// Upstream's check of the pod IP: it must parse and be global unicast.
fn allowed_address(ip: &str) -> bool {
    match ip.parse::<std::net::IpAddr>() {
        Ok(std::net::IpAddr::V4(v4)) => {
            !(v4.is_unspecified()
                || v4.is_loopback()
                || v4.is_multicast()
                || v4.is_link_local()
                || v4.is_broadcast())
        }
        Ok(std::net::IpAddr::V6(v6)) => {
            let link_local = (v6.segments()[0] & 0xffc0) == 0xfe80;
            !(v6.is_unspecified() || v6.is_loopback() || v6.is_multicast() || link_local)
        }
        Err(_) => false,
    }
}

/// Any method on `pods/{[scheme:]name[:port]}/proxy[/path]`.
pub(in crate::http) async fn pod(
    state: &AppState,
    call: &Call,
    res: &ResourceInfo,
    ns: &str,
    id: &str,
) -> Result<Response, ApiError> {
    allow(call, METHODS)?;
    let (_, name, port) = split_id(id, "pod")?;
    let p = state.registry.get(res, ns, name).await?;
    let port = if port.is_empty() {
        p.pointer("/spec/containers")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .find_map(|c| c.pointer("/ports/0/containerPort").and_then(Value::as_i64))
            .map(|p| p.to_string())
            .unwrap_or_default()
    } else {
        port.to_string()
    };
    let ip = p
        .pointer("/status/podIPs/0/ip")
        .and_then(Value::as_str)
        .unwrap_or("");
    if !allowed_address(ip) {
        return Err(ApiError::bad_request("address not allowed"));
    }
    Err(unreachable(&join_host_port(ip, &port)))
}

/// Any method on `services/{[scheme:]name[:port]}/proxy[/path]`.
pub(in crate::http) async fn service(
    state: &AppState,
    call: &Call,
    res: &ResourceInfo,
    ns: &str,
    id: &str,
) -> Result<Response, ApiError> {
    allow(call, METHODS)?;
    let (_, name, port) = split_id(id, "service")?;
    let svc = state.registry.get(res, ns, name).await?;
    let mut port_name = port.to_string();
    if let Ok(number) = port.parse::<i64>() {
        let declared = svc
            .pointer("/spec/ports")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .find(|p| p.get("port").and_then(Value::as_i64) == Some(number));
        match declared {
            Some(p) => {
                port_name = p
                    .get("name")
                    .and_then(Value::as_str)
                    .unwrap_or("")
                    .to_string();
            }
            None => {
                return Err(ApiError::new(
                    StatusCode::SERVICE_UNAVAILABLE,
                    "ServiceUnavailable",
                    format!("no service port {number} found for service {name:?}"),
                ));
            }
        }
    }
    let no_endpoints = || {
        ApiError::new(
            StatusCode::SERVICE_UNAVAILABLE,
            "ServiceUnavailable",
            format!("no endpoints available for service {name:?}"),
        )
    };
    let endpoints_res =
        resource::builtin("", "v1", "endpoints").ok_or_else(ApiError::path_not_found)?;
    let eps = match state.registry.get(&endpoints_res, ns, name).await {
        Ok(e) => e,
        Err(e) if e.reason() == "NotFound" => return Err(no_endpoints()),
        Err(e) => return Err(e),
    };
    let subsets = eps
        .get("subsets")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    for ss in &subsets {
        let Some(address) = ss.pointer("/addresses/0/ip").and_then(Value::as_str) else {
            continue;
        };
        let ports = ss.get("ports").and_then(Value::as_array);
        let matching = ports
            .into_iter()
            .flatten()
            .find(|p| p.get("name").and_then(Value::as_str).unwrap_or("") == port_name);
        if let Some(p) = matching {
            let number = p.get("port").and_then(Value::as_i64).unwrap_or(0);
            return Err(unreachable(&join_host_port(address, &number.to_string())));
        }
    }
    Err(no_endpoints())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pod_addresses_must_be_global_unicast() {
        assert!(allowed_address("10.244.1.7"));
        assert!(allowed_address("fd00::7"));
        assert!(!allowed_address(""));
        assert!(!allowed_address("127.0.0.1"));
        assert!(!allowed_address("169.254.1.1"));
        assert!(!allowed_address("fe80::1"));
        assert!(!allowed_address("not-an-ip"));
    }

    #[test]
    fn host_ports_as_go_joins_them() {
        assert_eq!(join_host_port("10.0.0.1", "80"), "10.0.0.1:80");
        assert_eq!(join_host_port("fd00::1", "80"), "[fd00::1]:80");
        assert_eq!(join_host_port("10.0.0.1", ""), "10.0.0.1");
    }
}
