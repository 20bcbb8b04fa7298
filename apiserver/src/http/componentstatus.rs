//! `core/v1` `componentstatuses`: read-only, computed on request, never
//! stored (upstream's `pkg/registry/core/componentstatus`).
//!
//! Skein reports one component, `etcd-0`: its storage (the embedded store
//! or etcd, whichever is configured), probed as `/livez/etcd` probes it.
//! Upstream also lists `scheduler` and `controller-manager`, which are
//! separate processes with health endpoints there; Skein has neither (its
//! controllers run in-process and are covered by `/livez`), so it does not
//! invent their rows.
//!
//! As upstream: `get` and `list` only (anything else is 405
//! MethodNotAllowed; `?watch` is 405 `watch is not supported…`), label and
//! field selectors filter the list, Table output for `kubectl get cs`, and
//! every response on those routes carries the deprecation warning
//! [`WARNING`] and sets `apiserver_requested_deprecated_apis`. Deviation:
//! an unknown name is 404 NotFound (upstream answers 500 `Component not
//! found: <name>`).

use std::time::Duration;

use axum::http::{HeaderValue, Method, StatusCode};
use axum::response::{IntoResponse, Response};
use serde_json::{Value, json};

use super::AppState;
use super::api::{include_object, object_response, wants_table};
use super::query::Query;
use super::status::ApiError;
use crate::registry::{Filter, ResourceInfo};

/// The `Warning` header value of every componentstatuses response
/// (apiserver's deprecation warning for a type deprecated in 1.19 with
/// no removal release and no replacement).
pub const WARNING: &str = "299 - \"v1 ComponentStatus is deprecated in v1.19+\"";

/// How long the storage probe may take.
const PROBE_TIMEOUT: Duration = Duration::from_secs(5);

/// The one component Skein reports.
const STORAGE: &str = "etcd-0";

/// Serves `/api/v1/componentstatuses[/{name}]`.
pub async fn handle(
    state: &AppState,
    res: &ResourceInfo,
    method: &Method,
    name: Option<&str>,
    query: &Query,
    headers: &axum::http::HeaderMap,
) -> Response {
    if *method != Method::GET {
        return ApiError::method_not_allowed().into_response();
    }
    state
        .registry
        .instance()
        .metrics()
        .deprecated_api_requested(res.group, res.version, res.plural);
    let mut response = match serve(state, res, name, query, headers).await {
        Ok(r) => r,
        Err(e) => e.into_response(),
    };
    response
        .headers_mut()
        .append("warning", HeaderValue::from_static(WARNING));
    response
}

async fn serve(
    state: &AppState,
    res: &ResourceInfo,
    name: Option<&str>,
    query: &Query,
    headers: &axum::http::HeaderMap,
) -> Result<Response, ApiError> {
    let table = wants_table(headers);
    let include = include_object(query)?;
    let now = time::OffsetDateTime::now_utc();
    match name {
        Some(name) => {
            if name != STORAGE {
                return Err(ApiError::not_found(res.group, res.plural, name));
            }
            let obj = storage_status(state).await;
            if table {
                let t = crate::table::object_table(res.group, res.kind, &obj, include, now);
                return Ok(object_response(StatusCode::OK, &t, &[]));
            }
            Ok(object_response(StatusCode::OK, &obj, &[]))
        }
        None => {
            if query.bool("watch")?.unwrap_or(false) {
                return Err(ApiError::verb_not_supported("watch", res.plural));
            }
            let filter =
                Filter::parse(res, query.get("labelSelector"), query.get("fieldSelector"))?;
            let items: Vec<Value> = [storage_status(state).await]
                .into_iter()
                .filter(|o| filter.matches(res, o))
                .collect();
            if table {
                let meta = crate::table::ListMeta::default();
                let t = crate::table::table(res.group, res.kind, &items, &meta, include, now);
                return Ok(object_response(StatusCode::OK, &t, &[]));
            }
            let list = json!({
                "kind": res.list_kind,
                "apiVersion": res.api_version,
                "metadata": {},
                "items": items,
            });
            Ok(object_response(StatusCode::OK, &list, &[]))
        }
    }
}

/// The storage component's status, probed now.
async fn storage_status(state: &AppState) -> Value {
    let probe = tokio::time::timeout(PROBE_TIMEOUT, state.store.current_revision()).await;
    let error = match probe {
        Ok(Ok(_)) => None,
        Ok(Err(e)) => Some(e.to_string()),
        Err(_) => Some(format!("no answer within {PROBE_TIMEOUT:?}")),
    };
    component(STORAGE, error.as_deref())
}

/// A `ComponentStatus` with one `Healthy` condition: `True` with message
/// `ok`, or `False` with the probe's error, as upstream's probes report.
pub fn component(name: &str, error: Option<&str>) -> Value {
    let condition = match error {
        None => json!({"type": "Healthy", "status": "True", "message": "ok"}),
        Some(e) => json!({"type": "Healthy", "status": "False", "error": e}),
    };
    json!({
        "kind": "ComponentStatus",
        "apiVersion": "v1",
        "metadata": {"name": name, "creationTimestamp": null},
        "conditions": [condition],
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn healthy_and_unhealthy_objects() {
        assert_eq!(
            component("etcd-0", None),
            json!({"kind": "ComponentStatus", "apiVersion": "v1",
                   "metadata": {"name": "etcd-0", "creationTimestamp": null},
                   "conditions": [{"type": "Healthy", "status": "True", "message": "ok"}]})
        );
        assert_eq!(
            component("etcd-0", Some("down"))["conditions"][0],
            json!({"type": "Healthy", "status": "False", "error": "down"})
        );
    }

    #[test]
    fn warning_is_a_valid_header() {
        assert!(HeaderValue::from_str(WARNING).is_ok());
    }
}
