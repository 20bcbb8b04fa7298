//! Subresources other than `status` and `scale` (those stay in `api.rs` and
//! `scale.rs`): one small module per family, dispatched by [`handle`].
//!
//! Which subresources exist comes from [`crate::registry::subresource`], the
//! table discovery and OpenAPI also read; a name outside it never reaches
//! this module.
//!
//! Skein runs no kubelets and has no network path to workloads, so the
//! subresources that would reach a node or a pod answer as kube-apiserver
//! does when it cannot: upstream's own errors before the dial (`pod p1 does
//! not have a host assigned`, `nodes "n1" not found`, `address not
//! allowed`, `no endpoints available for service "s"`), then a 500 or 503
//! naming the unreachable backend ([`kubelet`], [`proxy`]).

pub mod approval;
pub mod binding;
pub mod ephemeral;
pub mod eviction;
pub mod finalize;
pub mod kubelet;
pub mod pod;
pub mod proxy;
pub mod resize;
pub mod token;

use axum::http::{HeaderValue, Method, StatusCode, header};
use axum::response::{IntoResponse, Response};
use serde_json::{Value, json};

use super::AppState;
use super::api::Call;
use super::status::ApiError;
use crate::registry::ResourceInfo;

/// Serves `subresource` of object `name` of `res` (already known to exist
/// in the subresource table). `ns` is the URL's namespace.
pub(in crate::http) async fn handle(
    state: &AppState,
    call: &Call,
    res: &ResourceInfo,
    ns: Option<&str>,
    name: &str,
    subresource: &str,
) -> Result<Response, ApiError> {
    let ns = match (res.namespaced, ns) {
        (true, Some(ns)) => ns,
        (true, None) => return Err(ApiError::path_not_found()),
        (false, _) => "",
    };
    match (res.group, res.plural, subresource) {
        ("", "pods", "log") => kubelet::log(state, call, res, ns, name).await,
        ("", "pods", s @ ("exec" | "attach" | "portforward")) => {
            kubelet::stream(state, call, res, ns, name, s).await
        }
        ("", "nodes", "proxy") => kubelet::node_proxy(state, call, res, name).await,
        ("", "pods", "proxy") => proxy::pod(state, call, res, ns, name).await,
        ("", "services", "proxy") => proxy::service(state, call, res, ns, name).await,
        ("", "pods", "binding") => binding::pod(state, call, res, ns, name).await,
        ("", "pods", "eviction") => eviction::create(state, call, res, ns, name).await,
        ("", "pods", "ephemeralcontainers") => ephemeral::handle(state, call, res, ns, name).await,
        ("", "pods", "resize") => resize::handle(state, call, res, ns, name).await,
        ("", "serviceaccounts", "token") => token::create(state, call, res, ns, name).await,
        ("", "namespaces", "finalize") => finalize::update(state, call, res, name).await,
        ("certificates.k8s.io", "certificatesigningrequests", "approval") => {
            approval::handle(state, call, res, name).await
        }
        _ => Err(ApiError::path_not_found()),
    }
}

/// Fails with 405 unless the request's method is one of `allowed`.
pub(super) fn allow(call: &Call, allowed: &[Method]) -> Result<(), ApiError> {
    if allowed.contains(&call.method) {
        Ok(())
    } else {
        Err(ApiError::method_not_allowed())
    }
}

/// The `Success` Status a subresource create answers (upstream's create
/// handler fills in the 201 as `code`).
pub(super) fn created_success() -> Response {
    let body = json!({"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Success", "code": 201});
    super::api::object_response(StatusCode::CREATED, &body, &[])
}

/// An error response with upstream's `Retry-After` header when the Status
/// carries `retryAfterSeconds` (`responsewriters.ErrorNegotiated`).
pub(super) fn error_response(e: ApiError) -> Response {
    let retry = e
        .status()
        .details
        .as_ref()
        .and_then(|d| d.retry_after_seconds)
        .filter(|s| *s > 0);
    let mut response = e.into_response();
    if let Some(s) = retry
        && let Ok(v) = HeaderValue::from_str(&s.to_string())
    {
        response.headers_mut().insert(header::RETRY_AFTER, v);
    }
    response
}

/// The `metadata.name` of a decoded body ("" if absent).
pub(super) fn body_name(v: &Value) -> &str {
    v.pointer("/metadata/name")
        .and_then(Value::as_str)
        .unwrap_or("")
}

/// Upstream `rest.EnsureObjectNamespaceMatchesRequestNamespace` for a body
/// posted to a namespaced subresource: an empty namespace is the URL's.
pub(super) fn check_body_namespace(v: &Value, ns: &str) -> Result<(), ApiError> {
    match v.pointer("/metadata/namespace").and_then(Value::as_str) {
        None | Some("") => Ok(()),
        Some(n) if n == ns => Ok(()),
        Some(_) => Err(ApiError::bad_request(
            "the namespace of the provided object does not match the namespace sent on the request",
        )),
    }
}

/// `[scheme:]name[:port]` of a proxy URL (upstream `SplitSchemeNamePort`),
/// else 400 `invalid <what> request "<id>"`.
pub(super) fn split_id<'a>(
    id: &'a str,
    what: &str,
) -> Result<(&'a str, &'a str, &'a str), ApiError> {
    pod::split_scheme_name_port(id)
        .ok_or_else(|| ApiError::bad_request(format!("invalid {what} request {id:?}")))
}
