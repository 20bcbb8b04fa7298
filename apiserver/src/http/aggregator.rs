//! Skein as a host for aggregated API servers, as kube-aggregator: an
//! `apiregistration.k8s.io/v1` `APIService` with a `spec.service` takes
//! over its group/version, and requests for it are proxied to the
//! Service's endpoints with the caller's identity in front-proxy headers.
//!
//! Contract:
//! - [`select`] and [`forward`] are middlewares inside authentication,
//!   around authorization. A request for `/apis/<group>/<version>[/...]`
//!   whose `<version>.<group>` APIService names a Service is authorized as
//!   sent (a request under the aggregated prefix is then `federations/
//!   proxy`, as a kube-apiserver host sees it) and goes to that Service;
//!   everything else goes on to Skein's own handlers. Lookups are in memory (an informer of
//!   APIServices, EndpointSlices and Services), never a store read.
//! - The backend is chosen as kube-apiserver's
//!   `--enable-aggregator-routing`: the Service port whose `port` is the
//!   APIService's `spec.service.port` (default 443), then a ready address
//!   of an EndpointSlice of that Service with the port of the same name.
//! - TLS to the backend is verified against `spec.caBundle` for the name
//!   `<service>.<namespace>.svc`, unless `spec.insecureSkipTLSVerify`.
//!   Skein presents its front-proxy client certificate
//!   ([`crate::pki::FrontProxyPki`]) and sends `X-Remote-User`,
//!   `X-Remote-Group` and `X-Remote-Extra-<key>` for the caller; the
//!   caller's own credentials, impersonation and `X-Remote-*` headers are
//!   never forwarded.
//! - Responses stream (watches, logs) until the server shuts down. A
//!   backend that cannot be reached is 503 ServiceUnavailable, with
//!   upstream's `error trying to reach service` message.
//! - [`publish_authentication`] writes `kube-system/
//!   extension-apiserver-authentication` as kube-apiserver does, so an
//!   aggregated server (Skein with `--authentication-kubeconfig`) trusts
//!   the front-proxy certificate.
//! - [`spawn_availability`] keeps each APIService's `Available` condition
//!   true while `GET /apis/<group>/<version>` on its backend answers 2xx
//!   (`Passed`), false otherwise (`ServiceNotFound`,
//!   `EndpointsNotFound`/`MissingEndpoints`, `FailedDiscoveryCheck`), and
//!   `Local` for APIServices without a Service.
//!
//! - Request and response bodies stream both ways; the backend client
//!   ([`backend`]) speaks HTTP/2 when the backend offers it, so the short
//!   proxied requests to one backend share one connection, and gives each
//!   long-running one (a watch, a log) an HTTP/1.1 connection.
//!
//! Not yet: the host's discovery (`/apis`, aggregated discovery and
//! OpenAPI) does not merge the backends' groups; upgrades are not proxied.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::body::Body;
use axum::extract::Request;
use axum::http::{HeaderName, HeaderValue, StatusCode};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use futures::StreamExt;
use http_body_util::BodyExt;
use serde_json::{Value, json};

mod backend;

use self::backend::BackendClient;
use super::AppState;
use super::authn::UserInfo;
use super::cluster_proxy::{request_headers, response_headers};
use super::status::ApiError;
use crate::controllers::informer::{Informer, ObjectKey};
use crate::pki::{CertKey, FRONT_PROXY_CLIENT, FrontProxyPki};
use crate::registry::{Target, WriteOptions, resource};

/// The aggregator's state: the informers it routes from, the front-proxy
/// client identity and the backend clients.
pub struct Aggregator {
    state: AppState,
    apiservices: Informer,
    services: Informer,
    slices: Informer,
    client_cert: CertKey,
    clients: Mutex<HashMap<Backend, BackendClient>>,
    /// Each APIService's backend and client as last resolved, with the
    /// informers' generations they were resolved at.
    resolved: Mutex<HashMap<String, ([u64; 3], Resolved)>>,
}

/// A backend and its client, or why a request cannot reach one (the 503's
/// message).
type Resolved = Result<(Arc<Backend>, BackendClient), String>;

/// Where an APIService's requests go.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
struct Backend {
    /// `https://address:port`.
    url: String,
    /// `<service>.<namespace>.svc`, the name TLS verifies.
    server_name: String,
    /// PEM of `spec.caBundle`, when given.
    ca_pem: Option<String>,
    /// `spec.insecureSkipTLSVerify`.
    insecure: bool,
}

/// Why an APIService has no usable backend: the `Available` condition's
/// reason and message.
#[derive(Debug)]
struct NoBackend {
    reason: &'static str,
    message: String,
}

impl Aggregator {
    /// Starts the informers; `None` when the resources are not served.
    pub fn start(state: &AppState, front_proxy: &FrontProxyPki) -> Option<Arc<Aggregator>> {
        let apiservices = resource::builtin("apiregistration.k8s.io", "v1", "apiservices")?;
        let services = resource::builtin("", "v1", "services")?;
        let slices = resource::builtin("discovery.k8s.io", "v1", "endpointslices")?;
        Some(Arc::new(Aggregator {
            state: state.clone(),
            apiservices: Informer::start(&state.registry, apiservices),
            services: Informer::start(&state.registry, services),
            slices: Informer::start(&state.registry, slices),
            client_cert: front_proxy.client.clone(),
            clients: Mutex::new(HashMap::new()),
            resolved: Mutex::new(HashMap::new()),
        }))
    }

    /// The APIService that serves `path`, when one with a Service does.
    fn apiservice_for(&self, path: &str) -> Option<Arc<Value>> {
        let mut parts = path.strip_prefix("/apis/")?.split('/');
        let (group, version) = (parts.next()?, parts.next()?);
        if group.is_empty() || version.is_empty() {
            return None;
        }
        let found = self
            .apiservices
            .get(&ObjectKey::new("", format!("{version}.{group}")))?;
        found.pointer("/spec/service").filter(|s| s.is_object())?;
        Some(found)
    }

    /// The backend of `apiservice` (see the module docs).
    fn backend(&self, apiservice: &Value) -> Result<Backend, NoBackend> {
        let spec = |k: &str| apiservice.pointer(&format!("/spec/service/{k}"));
        let ns = spec("namespace").and_then(Value::as_str).unwrap_or("");
        let name = spec("name").and_then(Value::as_str).unwrap_or("");
        let port = spec("port").and_then(Value::as_i64).unwrap_or(443);
        let Some(service) = self.services.get(&ObjectKey::new(ns, name)) else {
            return Err(NoBackend {
                reason: "ServiceNotFound",
                message: format!("service/{name} in \"{ns}\" is not present"),
            });
        };
        let service_port = service
            .pointer("/spec/ports")
            .and_then(Value::as_array)
            .and_then(|ports| {
                ports
                    .iter()
                    .find(|p| p.get("port").and_then(Value::as_i64) == Some(port))
            })
            .ok_or_else(|| NoBackend {
                reason: "ServicePortError",
                message: format!("service/{name} in \"{ns}\" is not listening on port {port}"),
            })?;
        let port_name = service_port
            .get("name")
            .and_then(Value::as_str)
            .unwrap_or("");
        let mut any_slice = false;
        for slice in self.slices.list_namespace(ns) {
            let owned = slice
                .pointer("/metadata/labels/kubernetes.io~1service-name")
                .and_then(Value::as_str)
                == Some(name);
            if !owned {
                continue;
            }
            any_slice = true;
            let Some(target_port) = slice
                .get("ports")
                .and_then(Value::as_array)
                .and_then(|ports| {
                    ports
                        .iter()
                        .find(|p| p.get("name").and_then(Value::as_str).unwrap_or("") == port_name)
                })
                .and_then(|p| p.get("port"))
                .and_then(Value::as_i64)
            else {
                continue;
            };
            let ready = slice
                .get("endpoints")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
                .filter(|e| e.pointer("/conditions/ready") != Some(&Value::Bool(false)))
                .find_map(|e| e.pointer("/addresses/0").and_then(Value::as_str));
            if let Some(address) = ready {
                let host = if address.contains(':') {
                    format!("[{address}]")
                } else {
                    address.to_string()
                };
                let ca_pem = apiservice
                    .pointer("/spec/caBundle")
                    .and_then(Value::as_str)
                    .filter(|b| !b.is_empty())
                    .and_then(|b| {
                        use base64::Engine as _;
                        base64::engine::general_purpose::STANDARD.decode(b).ok()
                    })
                    .and_then(|b| String::from_utf8(b).ok());
                return Ok(Backend {
                    url: format!("https://{host}:{target_port}"),
                    server_name: format!("{name}.{ns}.svc"),
                    ca_pem,
                    insecure: apiservice.pointer("/spec/insecureSkipTLSVerify")
                        == Some(&Value::Bool(true)),
                });
            }
        }
        Err(NoBackend {
            reason: if any_slice {
                "MissingEndpoints"
            } else {
                "EndpointsNotFound"
            },
            message: format!("cannot find endpoints for service/{name} in \"{ns}\""),
        })
    }

    /// The backend of `apiservice` and its client, resolved again only when
    /// an APIService, Service or EndpointSlice changed since the last time.
    fn resolve(&self, apiservice: &Value) -> Resolved {
        let name = crate::registry::object::name(apiservice);
        let generations = [
            self.apiservices.generation(),
            self.services.generation(),
            self.slices.generation(),
        ];
        if let Ok(resolved) = self.resolved.lock()
            && let Some((at, found)) = resolved.get(name)
            && *at == generations
        {
            return found.clone();
        }
        let found = self
            .backend(apiservice)
            .map_err(|e| e.message)
            .and_then(|backend| {
                let client = self.client(&backend)?;
                Ok((Arc::new(backend), client))
            });
        if let Ok(mut resolved) = self.resolved.lock() {
            resolved.insert(name.to_string(), (generations, found.clone()));
        }
        found
    }

    /// A client for `backend` (cached by its settings).
    fn client(&self, backend: &Backend) -> Result<BackendClient, String> {
        if let Ok(clients) = self.clients.lock()
            && let Some(c) = clients.get(backend)
        {
            return Ok(c.clone());
        }
        let client = BackendClient::new(
            &backend.server_name,
            backend.ca_pem.as_deref(),
            backend.insecure,
            &self.client_cert,
        )?;
        if let Ok(mut clients) = self.clients.lock() {
            // Settings that no longer apply go with their connections.
            clients.retain(|b, _| b.url != backend.url);
            clients.insert(backend.clone(), client.clone());
        }
        Ok(client)
    }
}

/// The 503 of an APIService whose Service cannot be reached.
fn unreachable(why: &str) -> ApiError {
    ApiError::new(
        StatusCode::SERVICE_UNAVAILABLE,
        "ServiceUnavailable",
        format!("error trying to reach service: {why}"),
    )
}

/// The APIService that serves a request, put on it by [`select`].
#[derive(Clone, Debug)]
pub struct Selected(pub Arc<Value>);

/// Middleware (outer): marks a request for an aggregated group/version
/// with its [`Selected`] APIService, so that authorization checks the path
/// as sent and [`forward`] proxies it.
pub async fn select(mut req: Request, next: Next) -> Response {
    let found = req
        .extensions()
        .get::<Arc<Aggregator>>()
        .and_then(|a| a.apiservice_for(req.uri().path()));
    if let Some(apiservice) = found {
        req.extensions_mut().insert(Selected(apiservice));
    }
    next.run(req).await
}

/// Middleware (inner, after authorization): proxies a [`Selected`]
/// request to its APIService's backend; passes every other request on.
pub async fn forward(req: Request, next: Next) -> Response {
    let (Some(aggregator), Some(Selected(apiservice))) = (
        req.extensions().get::<Arc<Aggregator>>().cloned(),
        req.extensions().get::<Selected>().cloned(),
    ) else {
        return next.run(req).await;
    };
    match proxy(&aggregator, &apiservice, req).await {
        Ok(r) => r,
        Err(e) => e.into_response(),
    }
}

async fn proxy(
    aggregator: &Aggregator,
    apiservice: &Value,
    req: Request,
) -> Result<Response, ApiError> {
    let (backend, client) = aggregator
        .resolve(apiservice)
        .map_err(|e| unreachable(&e))?;
    let (parts, body) = req.into_parts();
    let user = parts.extensions.get::<UserInfo>().cloned();
    let target = match parts.uri.query() {
        Some(q) => format!("{}{}?{q}", backend.url, parts.uri.path()),
        None => format!("{}{}", backend.url, parts.uri.path()),
    };
    let mut request = axum::http::Request::builder()
        .method(parts.method.clone())
        .uri(&target)
        .body(body)
        .map_err(|e| ApiError::bad_request(format!("invalid path {target:?}: {e}")))?;
    let mut headers = request_headers(&parts.headers);
    if let Some(user) = &user {
        identity_headers(user, &mut headers);
    }
    *request.headers_mut() = headers;
    let response = client.send(request).await.map_err(|e| unreachable(&e))?;
    let (mut head, body) = response.into_parts();
    head.headers = response_headers(&head.headers);
    head.extensions = Default::default();
    let stream = body
        .into_data_stream()
        .take_until(Box::pin(aggregator.state.shutdown_signal()));
    Ok(Response::from_parts(head, Body::from_stream(stream)))
}

/// Adds the caller's identity as front-proxy headers (extra keys
/// percent-escaped, as upstream's `escapeExtraKey`).
fn identity_headers(user: &UserInfo, headers: &mut axum::http::HeaderMap) {
    let value = |v: &str| HeaderValue::from_str(v).ok();
    if let Some(v) = value(&user.name) {
        headers.insert(HeaderName::from_static("x-remote-user"), v);
    }
    for g in &user.groups {
        if let Some(v) = value(g) {
            headers.append(HeaderName::from_static("x-remote-group"), v);
        }
    }
    for (key, values) in &user.extra {
        let Ok(name) =
            HeaderName::from_bytes(format!("x-remote-extra-{}", escape_extra_key(key)).as_bytes())
        else {
            continue;
        };
        for v in values.iter().filter_map(|v| value(v)) {
            headers.append(name.clone(), v);
        }
    }
}

/// Upstream's `escapeExtraKey`: every byte outside unreserved URL
/// characters percent-encoded.
fn escape_extra_key(key: &str) -> String {
    let mut out = String::with_capacity(key.len());
    for b in key.bytes() {
        if b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_' | b'~') {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

/// Writes `kube-system/extension-apiserver-authentication` with Skein's
/// client CA and its front-proxy settings (kube-apiserver's
/// ClusterAuthenticationTrust controller).
pub async fn publish_authentication(
    state: &AppState,
    client_ca_pem: &str,
    front_proxy: &FrontProxyPki,
) -> Result<(), ApiError> {
    let res = resource::builtin("", "v1", "configmaps").ok_or_else(ApiError::path_not_found)?;
    let list = |v: &[&str]| json!(v).to_string();
    let data = json!({
        "client-ca-file": client_ca_pem,
        "requestheader-client-ca-file": front_proxy.ca.cert_pem,
        "requestheader-allowed-names": list(&[FRONT_PROXY_CLIENT]),
        "requestheader-username-headers": list(&["X-Remote-User"]),
        "requestheader-group-headers": list(&["X-Remote-Group"]),
        "requestheader-extra-headers-prefix": list(&["X-Remote-Extra-"]),
        "requestheader-uid-headers": list(&[]),
    });
    let name = "extension-apiserver-authentication";
    let opts = WriteOptions {
        field_manager: "kube-apiserver".into(),
        ..WriteOptions::default()
    };
    match state.registry.get(&res, "kube-system", name).await {
        Ok(current) if current.get("data") == Some(&data) => Ok(()),
        Ok(_) => {
            state
                .registry
                .update_with(&res, "kube-system", name, Target::Main, &opts, |cur| {
                    let mut next = cur.clone();
                    next["data"] = data.clone();
                    Ok(next)
                })
                .await?;
            Ok(())
        }
        Err(e) if e.reason() == "NotFound" => {
            let obj = json!({
                "apiVersion": "v1",
                "kind": "ConfigMap",
                "metadata": {"name": name, "namespace": "kube-system"},
                "data": data,
            });
            state
                .registry
                .create(&res, "kube-system", obj, &opts)
                .await?;
            Ok(())
        }
        Err(e) => Err(e),
    }
}

/// How often every APIService's availability is checked (and at once
/// when one changes).
const AVAILABILITY_PERIOD: Duration = Duration::from_secs(5);

/// Keeps the `Available` condition of every APIService true to what its
/// backend answers (see the module docs).
pub fn spawn_availability(aggregator: Arc<Aggregator>) {
    tokio::spawn(async move {
        let mut changes = aggregator.apiservices.subscribe();
        aggregator.apiservices.synced().await;
        loop {
            for apiservice in aggregator.apiservices.list(|_| true) {
                let (status, reason, message) = availability(&aggregator, &apiservice).await;
                if let Err(e) =
                    set_available(&aggregator, &apiservice, status, reason, &message).await
                {
                    tracing::debug!(error = %e, "writing an APIService's Available condition");
                }
            }
            // Again after the period, or at once when an APIService
            // changes (a new one is checked within moments; the status
            // writes above only happen on a change, so this settles).
            tokio::select! {
                () = tokio::time::sleep(AVAILABILITY_PERIOD) => {}
                changed = changes.recv() => {
                    if let Err(tokio::sync::broadcast::error::RecvError::Closed) = changed {
                        tokio::time::sleep(AVAILABILITY_PERIOD).await;
                    }
                }
            }
        }
    });
}

async fn availability(aggregator: &Aggregator, apiservice: &Value) -> (bool, &'static str, String) {
    if !apiservice
        .pointer("/spec/service")
        .is_some_and(Value::is_object)
    {
        return (
            true,
            "Local",
            "Local APIServices are always available".into(),
        );
    }
    let backend = match aggregator.backend(apiservice) {
        Ok(b) => b,
        Err(e) => return (false, e.reason, e.message),
    };
    let spec = |k: &str| {
        apiservice
            .pointer(&format!("/spec/{k}"))
            .and_then(Value::as_str)
            .unwrap_or("")
    };
    let path = format!("/apis/{}/{}", spec("group"), spec("version"));
    let failed = |why: String| {
        (
            false,
            "FailedDiscoveryCheck",
            format!(
                "failing or missing response from {}{path}: {why}",
                backend.url
            ),
        )
    };
    let client = match aggregator.client(&backend) {
        Ok(c) => c,
        Err(e) => return failed(e),
    };
    let request = axum::http::Request::builder()
        .uri(format!("{}{path}", backend.url))
        .header("x-remote-user", "system:kube-aggregator")
        .header("x-remote-group", "system:masters")
        .body(Body::empty());
    let Ok(request) = request else {
        return failed("invalid group or version".into());
    };
    match tokio::time::timeout(Duration::from_secs(5), client.send(request)).await {
        Ok(Ok(r)) if r.status().is_success() => (true, "Passed", "all checks passed".into()),
        Ok(Ok(r)) => failed(format!(
            "bad status from {}{path}: {}",
            backend.url,
            r.status().as_u16()
        )),
        Ok(Err(e)) => failed(e),
        Err(_) => failed("timed out".into()),
    }
}

async fn set_available(
    aggregator: &Aggregator,
    apiservice: &Value,
    status: bool,
    reason: &'static str,
    message: &str,
) -> Result<(), ApiError> {
    let status = if status { "True" } else { "False" };
    let current = apiservice
        .pointer("/status/conditions")
        .and_then(Value::as_array)
        .and_then(|c| {
            c.iter()
                .find(|c| c.get("type").and_then(Value::as_str) == Some("Available"))
        });
    let same = |k: &str, v: &str| current.and_then(|c| c.get(k)).and_then(Value::as_str) == Some(v);
    if same("status", status) && same("reason", reason) && same("message", message) {
        return Ok(());
    }
    let res = resource::builtin("apiregistration.k8s.io", "v1", "apiservices")
        .ok_or_else(ApiError::path_not_found)?;
    let name = crate::registry::object::name(apiservice).to_string();
    let now = crate::registry::object::now_rfc3339();
    let opts = WriteOptions {
        field_manager: "kube-aggregator".into(),
        ..WriteOptions::default()
    };
    let condition = json!({
        "type": "Available",
        "status": status,
        "lastTransitionTime": now,
        "reason": reason,
        "message": message,
    });
    aggregator
        .state
        .registry
        .update_with(&res, "", &name, Target::Status, &opts, |cur| {
            let mut next = cur.clone();
            let mut condition = condition.clone();
            let conditions = next
                .pointer("/status/conditions")
                .and_then(Value::as_array)
                .cloned()
                .unwrap_or_default();
            if let Some(old) = conditions
                .iter()
                .find(|c| c.get("type").and_then(Value::as_str) == Some("Available"))
                && old.get("status") == condition.get("status")
                && let Some(t) = old.get("lastTransitionTime")
            {
                condition["lastTransitionTime"] = t.clone();
            }
            let mut kept: Vec<Value> = conditions
                .into_iter()
                .filter(|c| c.get("type").and_then(Value::as_str) != Some("Available"))
                .collect();
            kept.push(condition);
            next["status"] = json!({"conditions": kept});
            Ok(next)
        })
        .await?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn extra_keys_are_escaped_as_upstream() {
        assert_eq!(escape_extra_key("scopes"), "scopes");
        assert_eq!(escape_extra_key("example.com/org"), "example.com%2Forg");
        assert_eq!(escape_extra_key("a b"), "a%20b");
    }

    #[test]
    fn identity_goes_into_front_proxy_headers() {
        let mut user = UserInfo::authenticated("alice".into(), None, vec!["dev".into()]);
        user.extra
            .insert("example.com/org".into(), vec!["acme".into()]);
        let mut headers = axum::http::HeaderMap::new();
        identity_headers(&user, &mut headers);
        assert_eq!(headers["x-remote-user"], "alice");
        let groups: Vec<_> = headers.get_all("x-remote-group").iter().collect();
        assert_eq!(groups, ["dev", "system:authenticated"]);
        assert_eq!(headers["x-remote-extra-example.com%2Forg"], "acme");
    }
}
