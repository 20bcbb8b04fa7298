//! `clusters/proxy`: `/apis/federation.skein.io/v1alpha1/clusters/NAME/proxy[/<path>]`
//! forwards the request to member cluster NAME with the credentials in the
//! Secret its `spec.kubeconfigSecretRef` names, so a kubeconfig whose
//! server is that URL lets kubectl read the member directly.
//!
//! Contract:
//! - It is an ordinary subresource under the server's authorizer
//!   (`http/authz.rs`: verb by method on `clusters/proxy`), which runs
//!   before anything is read. Without an authorizer (router unit tests)
//!   only users in `system:masters` may use it; anyone else gets
//!   upstream's RBAC denial, 403 `clusters.federation.skein.io "NAME" is
//!   forbidden: User "u" cannot get resource "clusters/proxy" in API group
//!   "federation.skein.io" at the cluster scope`.
//! - An unknown Cluster is 404 `clusters.federation.skein.io "NAME" not
//!   found`; credentials that are missing or unusable, and a member that
//!   cannot be reached, are 503 ServiceUnavailable with the reason.
//! - The method, the path after `proxy` (`/` when there is none), the query
//!   and the body go to the member, with the request headers except the
//!   caller's credentials (`Authorization`, cookies, impersonation and
//!   authenticating-proxy headers) and hop-by-hop headers. Whatever the
//!   member answers (status, headers except hop-by-hop ones, body) is passed
//!   back, streamed as it arrives (watches, `logs -f`), and ends when the
//!   server shuts down.
//! - `kube` clients are cached per Cluster, keyed by the Secret's uid and
//!   resourceVersion (and the key and context used), so a rotated
//!   kubeconfig takes effect at the next request. They never retry: a
//!   member's 429 or 503 reaches the caller as the member sent it.
//!
//! Deviations: request bodies are read whole (at most
//! [`super::body::MAX_BODY`]) before they are forwarded; upgrades
//! (`exec`, `attach`, `port-forward` through the proxy) are not proxied.
//! A server that does not serve `federation.skein.io` (`--role=member`)
//! answers these paths with Go's plain `404 page not found`.

use std::collections::HashMap;
use std::sync::Mutex;

use axum::body::Body;
use axum::extract::{Request, State};
use axum::http::{HeaderMap, Method, StatusCode, header};
use axum::response::{IntoResponse, Response};
use futures::StreamExt;
use http_body_util::BodyExt;
use serde_json::Value;

use super::AppState;
use super::authn::UserInfo;
use super::status::ApiError;
use crate::member_client::credentials;
use crate::registry::{Registry, resource};

/// The API group of `clusters`.
pub const GROUP: &str = "federation.skein.io";
/// The served version of `clusters`.
pub const VERSION: &str = "v1alpha1";
/// The path prefix up to a Cluster's name.
pub const PREFIX: &str = "/apis/federation.skein.io/v1alpha1/clusters/";
/// The group whose members may use the proxy.
pub const ADMIN_GROUP: &str = "system:masters";

/// Request headers never forwarded: the caller's credentials and identity
/// claims, and hop-by-hop headers (plus `Host` and `Content-Length`, which
/// the client sets for the member).
const DROPPED_REQUEST: &[&str] = &[
    "authorization",
    "proxy-authorization",
    "cookie",
    "host",
    "content-length",
    "x-remote-user",
    "x-remote-group",
];
/// Header name prefixes never forwarded (impersonation, authenticating
/// proxy extras).
const DROPPED_REQUEST_PREFIXES: &[&str] = &["impersonate-", "x-remote-extra-"];
/// Hop-by-hop headers (RFC 9110 §7.6.1), dropped both ways.
const HOP_BY_HOP: &[&str] = &[
    "connection",
    "keep-alive",
    "proxy-connection",
    "te",
    "trailer",
    "transfer-encoding",
    "upgrade",
];

/// The Cluster name and the member path of a request path under
/// [`PREFIX`]: `…/clusters/eu-1/proxy` → `("eu-1", "/")`,
/// `…/clusters/eu-1/proxy/api/v1/pods` → `("eu-1", "/api/v1/pods")`.
/// `None` for any other path.
pub fn split(path: &str) -> Option<(&str, &str)> {
    let rest = path.strip_prefix(PREFIX)?;
    let (name, rest) = rest.split_once('/')?;
    let member = rest.strip_prefix("proxy")?;
    if name.is_empty() || !(member.is_empty() || member.starts_with('/')) {
        return None;
    }
    Some((name, if member.is_empty() { "/" } else { member }))
}

/// The authorization verb of a proxy request (upstream's RequestInfo).
pub fn verb(method: &Method) -> &'static str {
    match *method {
        Method::POST => "create",
        Method::PUT => "update",
        Method::PATCH => "patch",
        Method::DELETE => "delete",
        _ => "get",
    }
}

/// Whether `user` may use the proxy.
pub fn allowed(user: Option<&UserInfo>) -> bool {
    user.is_some_and(|u| u.groups.iter().any(|g| g == ADMIN_GROUP))
}

/// Upstream's RBAC denial of `clusters/proxy` for `user`.
pub fn forbidden(user: &str, method: &Method, name: &str) -> ApiError {
    ApiError::forbidden(
        GROUP,
        "clusters",
        name,
        &format!(
            "User {user:?} cannot {} resource \"clusters/proxy\" in API group {GROUP:?} at the cluster scope",
            verb(method)
        ),
    )
}

/// The request headers forwarded to the member.
pub fn request_headers(headers: &HeaderMap) -> HeaderMap {
    filtered(headers, |name| {
        !DROPPED_REQUEST.contains(&name)
            && !DROPPED_REQUEST_PREFIXES.iter().any(|p| name.starts_with(p))
    })
}

/// The member's response headers passed back.
pub fn response_headers(headers: &HeaderMap) -> HeaderMap {
    filtered(headers, |_| true)
}

fn filtered(headers: &HeaderMap, keep: impl Fn(&str) -> bool) -> HeaderMap {
    // Headers named in `Connection` are hop-by-hop too.
    let listed: Vec<String> = headers
        .get_all(header::CONNECTION)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(','))
        .map(|s| s.trim().to_ascii_lowercase())
        .collect();
    let mut out = HeaderMap::new();
    for (name, value) in headers {
        let n = name.as_str();
        if HOP_BY_HOP.contains(&n) || listed.iter().any(|l| l == n) || !keep(n) {
            continue;
        }
        out.append(name.clone(), value.clone());
    }
    out
}

/// The 503 of a Cluster that cannot be reached (`why` says how).
fn unavailable(name: &str, why: &str) -> ApiError {
    ApiError::new(
        StatusCode::SERVICE_UNAVAILABLE,
        "ServiceUnavailable",
        format!("error trying to reach cluster {name:?}: {why}"),
    )
}

/// A cached client and what it was built from.
struct Cached {
    key: String,
    client: kube::Client,
    server: String,
}

/// Clients per Cluster name, one map per server instance.
type Clients = std::sync::Arc<Mutex<HashMap<String, Cached>>>;

fn clients(registry: &Registry) -> Clients {
    registry
        .instance()
        .shared("cluster-proxy-clients", |_| false, Clients::default)
}

/// Any method on `clusters/NAME/proxy[/<path>]`.
pub async fn handle(State(state): State<AppState>, req: Request) -> Response {
    match proxy(&state, req).await {
        Ok(r) => r,
        Err(e) => e.into_response(),
    }
}

async fn proxy(state: &AppState, req: Request) -> Result<Response, ApiError> {
    if state
        .registry
        .resources()
        .find(GROUP, VERSION, "clusters")
        .is_none()
    {
        return Ok(super::not_found::page_not_found());
    }
    // A host's aggregator sees no Clusters at the root path
    // (`http/host_view.rs`); users reach them through the prefix.
    if req
        .extensions()
        .get::<super::host_view::HostView>()
        .is_some()
    {
        return Err(ApiError::path_not_found());
    }
    let (parts, body) = req.into_parts();
    let Some((name, member_path)) = split(parts.uri.path()) else {
        return Err(ApiError::path_not_found());
    };
    let user = parts.extensions.get::<UserInfo>();
    let authorized = parts
        .extensions
        .get::<std::sync::Arc<crate::authz::Authorizer>>()
        .is_some();
    if !authorized && !allowed(user) {
        let who = user.map_or("system:anonymous", |u| u.name.as_str());
        return Err(forbidden(who, &parts.method, name));
    }
    if !super::subresource::proxy::METHODS.contains(&parts.method) {
        return Err(ApiError::method_not_allowed());
    }
    let (client, server) = client_for(&state.registry, name).await?;
    let body = axum::body::to_bytes(body, super::body::MAX_BODY)
        .await
        .map_err(|_| ApiError::body_too_large(super::body::MAX_BODY))?;
    let target = match parts.uri.query() {
        Some(q) => format!("{member_path}?{q}"),
        None => member_path.to_owned(),
    };
    let mut request = axum::http::Request::builder()
        .method(parts.method.clone())
        .uri(&target)
        .body(kube::client::Body::from(body))
        .map_err(|e| ApiError::bad_request(format!("invalid proxy path {target:?}: {e}")))?;
    *request.headers_mut() = request_headers(&parts.headers);
    let response = client.send(request).await.map_err(|e| {
        unavailable(
            name,
            &format!("{server}: {}", crate::member_client::chain(&e)),
        )
    })?;
    let (mut head, body) = response.into_parts();
    head.headers = response_headers(&head.headers);
    head.extensions = Default::default();
    let stream = body
        .into_data_stream()
        .take_until(Box::pin(state.shutdown_signal()));
    Ok(Response::from_parts(head, Body::from_stream(stream)))
}

/// The member client of Cluster `name` and its server URL (cached).
async fn client_for(registry: &Registry, name: &str) -> Result<(kube::Client, String), ApiError> {
    let clusters = registry
        .resources()
        .find(GROUP, VERSION, "clusters")
        .ok_or_else(ApiError::path_not_found)?;
    let cluster = match registry.get(&clusters, "", name).await {
        Ok(c) => c,
        Err(e) => {
            if e.reason() == "NotFound"
                && let Ok(mut cache) = clients(registry).lock()
            {
                cache.remove(name);
            }
            return Err(e);
        }
    };
    let field = |k: &str| {
        cluster
            .pointer(&format!("/spec/kubeconfigSecretRef/{k}"))
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_owned()
    };
    let (namespace, secret_name) = (field("namespace"), field("name"));
    let key = Some(field("key"))
        .filter(|k| !k.is_empty())
        .unwrap_or_else(|| "kubeconfig".to_owned());
    let context = cluster
        .pointer("/spec/context")
        .and_then(Value::as_str)
        .filter(|c| !c.is_empty())
        .map(str::to_owned);
    let secrets = resource::builtin("", "v1", "secrets").ok_or_else(ApiError::path_not_found)?;
    let secret = registry
        .get(&secrets, &namespace, &secret_name)
        .await
        .map_err(|e| match e.reason() {
            "NotFound" => unavailable(
                name,
                &format!("its kubeconfig secret {namespace}/{secret_name} does not exist"),
            ),
            _ => e,
        })?;
    let meta = |k: &str| {
        secret
            .pointer(&format!("/metadata/{k}"))
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_owned()
    };
    let cache_key = format!(
        "{}/{}/{key}/{}",
        meta("uid"),
        meta("resourceVersion"),
        context.as_deref().unwrap_or("")
    );
    if let Ok(cache) = clients(registry).lock()
        && let Some(c) = cache.get(name)
        && c.key == cache_key
    {
        return Ok((c.client.clone(), c.server.clone()));
    }
    let bad = |e: credentials::CredentialError| {
        unavailable(
            name,
            &format!("its kubeconfig secret {namespace}/{secret_name} cannot be used: {e}"),
        )
    };
    let text = credentials::from_secret(&secret, &key).map_err(bad)?;
    let mut config = credentials::config(&text, context.as_deref())
        .await
        .map_err(bad)?;
    // The caller sees the member's 429/503 (and decides to retry), as
    // through any proxy.
    config.default_retry = false;
    let server = config.cluster_url.to_string();
    let client = kube::Client::try_from(config).map_err(|e| {
        unavailable(
            name,
            &format!(
                "its kubeconfig secret {namespace}/{secret_name} cannot be used: {}",
                crate::member_client::chain(&e)
            ),
        )
    })?;
    if let Ok(mut cache) = clients(registry).lock() {
        cache.insert(
            name.to_owned(),
            Cached {
                key: cache_key,
                client: client.clone(),
                server: server.clone(),
            },
        );
    }
    Ok((client, server))
}

/// Whether `name` is a header [`request_headers`] forwards (for tests).
#[cfg(test)]
fn forwards(name: &str) -> bool {
    let mut h = HeaderMap::new();
    if let Ok(n) = axum::http::HeaderName::from_bytes(name.as_bytes()) {
        h.insert(n, axum::http::HeaderValue::from_static("x"));
    }
    !request_headers(&h).is_empty()
}

#[cfg(test)]
mod tests {
    use axum::http::{HeaderName, HeaderValue};

    use super::*;

    #[test]
    fn paths() {
        let p = |rest: &str| format!("{PREFIX}{rest}");
        assert_eq!(split(&p("eu-1/proxy")), Some(("eu-1", "/")));
        assert_eq!(split(&p("eu-1/proxy/")), Some(("eu-1", "/")));
        assert_eq!(
            split(&p("eu-1/proxy/api/v1/namespaces/a/pods")),
            Some(("eu-1", "/api/v1/namespaces/a/pods"))
        );
        assert_eq!(split(&p("eu-1/proxyx")), None);
        assert_eq!(split(&p("eu-1/status")), None);
        assert_eq!(split(&p("/proxy")), None);
        assert_eq!(split("/apis/apps/v1/clusters/x/proxy"), None);
    }

    #[test]
    fn only_masters_may_proxy() {
        let user = |groups: &[&str]| UserInfo {
            name: "u".into(),
            uid: None,
            groups: groups.iter().map(|g| (*g).to_owned()).collect(),
            extra: Default::default(),
        };
        assert!(allowed(Some(&user(&[
            "system:masters",
            "system:authenticated"
        ]))));
        assert!(!allowed(Some(&user(&["system:authenticated"]))));
        assert!(!allowed(None));
        let e = forbidden("u", &Method::GET, "eu-1");
        assert_eq!(e.code(), StatusCode::FORBIDDEN);
        assert_eq!(
            e.message(),
            "clusters.federation.skein.io \"eu-1\" is forbidden: User \"u\" cannot get resource \"clusters/proxy\" in API group \"federation.skein.io\" at the cluster scope"
        );
        assert_eq!(e.reason(), "Forbidden");
        assert!(
            forbidden("u", &Method::POST, "x")
                .message()
                .contains("cannot create resource")
        );
    }

    #[test]
    fn credentials_and_hop_by_hop_headers_stay_here() {
        for dropped in [
            "authorization",
            "Proxy-Authorization",
            "cookie",
            "impersonate-user",
            "Impersonate-Group",
            "x-remote-user",
            "connection",
            "transfer-encoding",
            "upgrade",
            "host",
        ] {
            assert!(!forwards(dropped), "{dropped}");
        }
        for kept in [
            "accept",
            "content-type",
            "user-agent",
            "accept-encoding",
            "kubectl-command",
        ] {
            assert!(forwards(kept), "{kept}");
        }
        let mut h = HeaderMap::new();
        h.insert(
            header::CONNECTION,
            HeaderValue::from_static("close, x-private"),
        );
        h.insert("x-private", HeaderValue::from_static("1"));
        h.insert(
            header::CONTENT_TYPE,
            HeaderValue::from_static("application/json"),
        );
        h.insert(header::CONTENT_LENGTH, HeaderValue::from_static("7"));
        let back = response_headers(&h);
        assert_eq!(
            back.keys().map(HeaderName::as_str).collect::<Vec<_>>(),
            vec!["content-type", "content-length"]
        );
    }

    proptest::proptest! {
        #[test]
        fn split_never_panics_and_keeps_the_member_path_absolute(rest in "[a-z0-9/._-]{0,30}") {
            if let Some((name, member)) = split(&format!("{PREFIX}{rest}")) {
                proptest::prop_assert!(!name.is_empty() && !name.contains('/'));
                proptest::prop_assert!(member.starts_with('/'));
            }
        }
    }
}
