//! The subresources kube-apiserver serves by calling a node's kubelet:
//! `pods/log`, `pods/exec`, `pods/attach`, `pods/portforward` and
//! `nodes/proxy`.
//!
//! Everything upstream checks before it dials is checked here, with its
//! texts (`pkg/registry/core/pod/strategy.go`: `LogLocation`,
//! `streamLocation`, `PortForwardLocation`; `pkg/registry/core/node`:
//! `ResourceLocation`):
//! - a missing pod is 404; a container that is not the pod's is 400;
//! - an unscheduled pod: `log` is an empty 204 (upstream streams nothing
//!   when the pod has no host), `exec`/`attach`/`portforward` are 400
//!   `pod p1 does not have a host assigned`;
//! - a scheduled pod's Node must exist (404 `nodes "n1" not found`) and
//!   have an address (500 `no preferred addresses found; …`).
//!
//! Past that point upstream dials the kubelet. Skein runs none, so the
//! dial fails: 500 (reason unknown, as upstream's own dial failure)
//! `error dialing backend: …` naming the address it would have used —
//! never a 404.

use axum::http::{Method, StatusCode};
use axum::response::{IntoResponse, Response};

use super::super::AppState;
use super::super::api::Call;
use super::super::status::{ApiError, Cause};
use super::pod::{self, KubeletAddress};
use super::{allow, split_id};
use crate::registry::{ResourceInfo, resource};

/// Why a kubelet call fails in Skein: the same sentence everywhere.
const NO_KUBELET: &str = "no kubelet serves this node (Skein runs no kubelets)";

/// The 500 of an unreachable kubelet.
fn unreachable(what: String) -> ApiError {
    ApiError::new(StatusCode::INTERNAL_SERVER_ERROR, "", what)
}

/// The kubelet address of node `name` (404 if the Node is missing).
async fn node_address(state: &AppState, name: &str) -> Result<KubeletAddress, ApiError> {
    let nodes = resource::builtin("", "v1", "nodes").ok_or_else(ApiError::path_not_found)?;
    let node = state.registry.get(&nodes, "", name).await?;
    pod::kubelet_address(&node)
}

/// Upstream `ValidatePodLogOptions` on the query (422 `PodLogOptions`).
fn validate_log_options(call: &Call, name: &str) -> Result<(), ApiError> {
    let q = &call.query;
    for flag in [
        "follow",
        "previous",
        "timestamps",
        "insecureSkipTLSVerifyBackend",
    ] {
        q.bool(flag)?;
    }
    let tail = q.int("tailLines")?;
    let limit = q.int("limitBytes")?;
    let since = q.int("sinceSeconds")?;
    let since_time = q.get("sinceTime").filter(|s| !s.is_empty());
    let mut causes = Vec::new();
    if let Some(t) = tail.filter(|t| *t < 0) {
        causes.push(Cause::invalid(
            "tailLines",
            t.to_string(),
            "must be greater than or equal to 0",
        ));
    }
    if let Some(l) = limit.filter(|l| *l < 1) {
        causes.push(Cause::invalid(
            "limitBytes",
            l.to_string(),
            "must be greater than 0",
        ));
    }
    match (since, since_time) {
        (Some(_), Some(_)) => causes.push(Cause::forbidden(
            "",
            "at most one of `sinceTime` or `sinceSeconds` may be specified",
        )),
        (Some(s), None) if s < 1 => causes.push(Cause::invalid(
            "sinceSeconds",
            s.to_string(),
            "must be greater than 0",
        )),
        _ => {}
    }
    if causes.is_empty() {
        Ok(())
    } else {
        Err(ApiError::invalid("", "PodLogOptions", name, causes))
    }
}

/// `GET pods/{name}/log`.
pub(in crate::http) async fn log(
    state: &AppState,
    call: &Call,
    res: &ResourceInfo,
    ns: &str,
    name: &str,
) -> Result<Response, ApiError> {
    allow(call, &[Method::GET])?;
    validate_log_options(call, name)?;
    let p = state.registry.get(res, ns, name).await?;
    let container = pod::choose_container(&p, name, call.query.get("container").unwrap_or(""))?;
    let node = pod::node_name(&p);
    if node.is_empty() {
        // Upstream: no host, no location, a null stream → 204.
        return Ok(StatusCode::NO_CONTENT.into_response());
    }
    let at = node_address(state, node).await?.host_port();
    Err(unreachable(format!(
        "Get \"https://{at}/containerLogs/{ns}/{name}/{container}\": dial tcp {at}: {NO_KUBELET}"
    )))
}

/// `GET`/`POST pods/{name}/exec`, `…/attach`, `…/portforward` (the
/// upgrade request of kubectl's WebSocket and SPDY clients alike).
pub(in crate::http) async fn stream(
    state: &AppState,
    call: &Call,
    res: &ResourceInfo,
    ns: &str,
    name: &str,
    what: &str,
) -> Result<Response, ApiError> {
    allow(call, &[Method::GET, Method::POST])?;
    let p = state.registry.get(res, ns, name).await?;
    if what != "portforward" {
        pod::choose_container(&p, name, call.query.get("container").unwrap_or(""))?;
    }
    let node = pod::node_name(&p);
    if node.is_empty() {
        return Err(ApiError::bad_request(format!(
            "pod {name} does not have a host assigned"
        )));
    }
    let at = node_address(state, node).await?.host_port();
    Err(unreachable(format!(
        "error dialing backend: dial tcp {at}: {NO_KUBELET}"
    )))
}

/// Any method on `nodes/{name}/proxy[/path]` (`name` may be
/// `[scheme:]node[:port]`).
pub(in crate::http) async fn node_proxy(
    state: &AppState,
    call: &Call,
    _res: &ResourceInfo,
    id: &str,
) -> Result<Response, ApiError> {
    allow(call, super::proxy::METHODS)?;
    let (_, node, port) = split_id(id, "node")?;
    let mut at = node_address(state, node).await?;
    if let Ok(p) = port.parse::<i64>() {
        at.port = p;
    }
    Err(unreachable(format!(
        "error dialing backend: dial tcp {}: {NO_KUBELET}",
        at.host_port()
    )))
}
