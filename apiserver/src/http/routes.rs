//! The router: [`app`] maps paths to handlers, behind authentication.
//!
//! The whole API is served twice: at the root (direct mode) and under
//! [`AGGREGATED_PREFIX`] (aggregated mode, DESIGN §1: a host cannot hand
//! its own `v1` or `apps/v1` to an aggregated server, so the federated
//! kubeconfig context names this prefix as its server and client-go
//! prefixes every path with it). Under the prefix the path is stripped
//! before routing, so handlers and metrics see the same request as in
//! direct mode; authentication (which treats the public paths under the
//! prefix as public), the aggregator and the access log see the prefix.

use axum::Router;
use axum::middleware;
use axum::response::IntoResponse;
use axum::routing::{any, get};

use super::status::ApiError;
use super::{
    AppState, aggregator, api, authn, authz, cluster_proxy, flowcontrol, health, metrics, version,
};
use crate::openapi;

/// The whole HTTP application, without TLS. Tests drive it with
/// `tower::ServiceExt::oneshot`, inserting an
/// [`authn::ClientCertUser`] extension to act as an authenticated client.
pub fn app(state: AppState) -> Router {
    let api = routes(&state);
    Router::new()
        .merge(api.clone())
        .nest(AGGREGATED_PREFIX, api)
        // Outside the nesting, so they see the path as sent. Inner to
        // outer: a request an APIService serves goes to its backend (a
        // host routes `.../federations/default/proxy/...` to the
        // APIService of `federation.skein.io/v1alpha1` when there is one);
        // before that, impersonation and authorization (of the path as
        // sent when it is proxied, else of the path under the prefix);
        // before that, API priority and fairness, and before that
        // impersonation; before that, the APIService is looked up.
        .layer(middleware::from_fn(aggregator::forward))
        .layer(middleware::from_fn(authz::authorize))
        // API priority and fairness: after impersonation (it classifies
        // the impersonated user), before authorization, as upstream.
        .layer(middleware::from_fn_with_state(
            state.registry.instance().clone(),
            flowcontrol::filter,
        ))
        .layer(middleware::from_fn(authz::impersonate))
        .layer(middleware::from_fn(aggregator::select))
        // Audit: `RequestReceived` once the user is known …
        .layer(middleware::from_fn(super::audit::received))
        // Last, so that it wraps the fallbacks too: an unauthenticated
        // client learns nothing about which paths exist.
        .layer(middleware::from_fn(authn::authenticate))
        // … and the response stages outside authentication, so 401s are
        // recorded too. Both do nothing without an `Arc<Auditor>`.
        .layer(middleware::from_fn(super::audit::record))
        .with_state(state)
}

/// The path under which the whole native API is served again, for the
/// federated context of aggregated mode (the `proxy` subresource of the
/// `default` Federation, which a host routes to Skein's APIService).
pub const AGGREGATED_PREFIX: &str = "/apis/federation.skein.io/v1alpha1/federations/default/proxy";

/// Every route, without authentication and state (`state` is for the
/// metrics layer).
fn routes(state: &AppState) -> Router<AppState> {
    Router::new()
        .route("/version", get(version::get))
        .route("/version/", get(version::get))
        .route("/healthz", get(health::healthz))
        .route("/healthz/{check}", get(health::healthz_check))
        .route("/livez", get(health::livez))
        .route("/livez/{check}", get(health::livez_check))
        .route("/readyz", get(health::readyz))
        .route("/readyz/{check}", get(health::readyz_check))
        .route("/api", any(api::handle))
        .route("/api/{*rest}", any(api::handle))
        .route("/apis", any(api::handle))
        .route("/apis/{*rest}", any(api::handle))
        .route(CLUSTER_PROXY[0], any(cluster_proxy::handle))
        .route(CLUSTER_PROXY[1], any(cluster_proxy::handle))
        .route(CLUSTER_PROXY[2], any(cluster_proxy::handle))
        .route("/openapi/v2", get(openapi::handler::v2))
        .route("/openapi/v3", get(openapi::handler::v3_index))
        .route("/openapi/v3/", get(openapi::handler::v3_index))
        .route("/openapi/v3/{*rest}", get(openapi::handler::v3_document))
        .route("/metrics", get(metrics::get))
        .route(
            "/.well-known/openid-configuration",
            get(authn::discovery::openid_configuration),
        )
        .route("/openid/v1/jwks", get(authn::discovery::jwks))
        .fallback(not_found)
        .method_not_allowed_fallback(method_not_allowed)
        // Inside authentication and the prefix: counts what reaches a
        // handler, as upstream.
        .layer(middleware::from_fn_with_state(
            state.registry.instance().clone(),
            metrics::instrument,
        ))
}

/// The `clusters/proxy` routes (`http/cluster_proxy.rs`): they take the raw
/// request, so the proxied path, query and body reach the member as sent.
const CLUSTER_PROXY: [&str; 3] = [
    "/apis/federation.skein.io/v1alpha1/clusters/{name}/proxy",
    "/apis/federation.skein.io/v1alpha1/clusters/{name}/proxy/",
    "/apis/federation.skein.io/v1alpha1/clusters/{name}/proxy/{*path}",
];

async fn not_found() -> impl IntoResponse {
    super::not_found::page_not_found()
}

async fn method_not_allowed() -> impl IntoResponse {
    ApiError::method_not_allowed()
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;
    use std::sync::atomic::{AtomicBool, Ordering};

    use async_trait::async_trait;
    use axum::body::Body;
    use axum::http::{Method, Request, StatusCode, header};
    use http_body_util::BodyExt;
    use skein_storage::{
        Error as StoreError, KeyValue, ListOptions, ListResult, Result as StoreResult, Revision,
        Store, WatchStream,
    };
    use tower::ServiceExt;

    use super::*;
    use crate::http::authn::ClientCertUser;

    /// A store whose only working method is `current_revision`, and that
    /// can be switched to failing.
    #[derive(Default)]
    struct FakeStore {
        down: AtomicBool,
    }

    fn unavailable<T>() -> StoreResult<T> {
        Err(StoreError::Unavailable("fake".to_string()))
    }

    #[async_trait]
    impl Store for FakeStore {
        async fn get(&self, _: &str) -> StoreResult<KeyValue> {
            unavailable()
        }
        async fn list(&self, _: &str, _: ListOptions) -> StoreResult<ListResult> {
            unavailable()
        }
        async fn create(&self, _: &str, _: &[u8]) -> StoreResult<KeyValue> {
            unavailable()
        }
        async fn update(&self, _: &str, _: &[u8], _: Revision) -> StoreResult<KeyValue> {
            unavailable()
        }
        async fn delete(&self, _: &str, _: Option<Revision>) -> StoreResult<(KeyValue, Revision)> {
            unavailable()
        }
        async fn watch(&self, _: &str, _: Revision) -> StoreResult<WatchStream> {
            unavailable()
        }
        async fn compact(&self, _: Revision) -> StoreResult<()> {
            unavailable()
        }
        async fn current_revision(&self) -> StoreResult<Revision> {
            if self.down.load(Ordering::SeqCst) {
                unavailable()
            } else {
                Ok(1)
            }
        }
        async fn close(&self) {}
    }

    fn state() -> (AppState, Arc<FakeStore>) {
        let store = Arc::new(FakeStore::default());
        (AppState::new(store.clone()), store)
    }

    fn admin() -> ClientCertUser {
        ClientCertUser {
            name: "skein-admin".to_string(),
            groups: vec!["system:masters".to_string()],
        }
    }

    async fn call(
        state: &AppState,
        method: Method,
        uri: &str,
        user: Option<ClientCertUser>,
    ) -> (StatusCode, String, String) {
        let mut req = Request::builder()
            .method(method)
            .uri(uri)
            .body(Body::empty())
            .expect("request");
        if let Some(user) = user {
            req.extensions_mut().insert(user);
        }
        let resp = app(state.clone()).oneshot(req).await.expect("infallible");
        let code = resp.status();
        let ctype = resp
            .headers()
            .get(header::CONTENT_TYPE)
            .map(|v| v.to_str().expect("ascii").to_string())
            .unwrap_or_default();
        let body = resp.into_body().collect().await.expect("body").to_bytes();
        (code, ctype, String::from_utf8(body.to_vec()).expect("utf8"))
    }

    // json.Encoder's trailing newline, as upstream.
    const UNAUTHORIZED: &str = "{\"kind\":\"Status\",\"apiVersion\":\"v1\",\"metadata\":{},\"status\":\"Failure\",\"message\":\"Unauthorized\",\"reason\":\"Unauthorized\",\"code\":401}\n";

    #[tokio::test]
    async fn unauthenticated_requests_get_401_status() {
        let (s, _) = state();
        for path in ["/api", "/apis", "/no/such/path", "/healthz/etcd"] {
            let (code, ctype, body) = call(&s, Method::GET, path, None).await;
            assert_eq!(code, StatusCode::UNAUTHORIZED, "{path}");
            assert_eq!(ctype, "application/json");
            assert_eq!(body, UNAUTHORIZED, "{path}");
        }
    }

    #[tokio::test]
    async fn unknown_path_is_plain_404() {
        let (s, _) = state();
        let (code, ctype, body) = call(&s, Method::GET, "/no/such/path", Some(admin())).await;
        assert_eq!(code, StatusCode::NOT_FOUND);
        assert_eq!(ctype, "text/plain; charset=utf-8");
        assert_eq!(body, "404 page not found\n");
        // An unknown group and an unserved version of a known group: the
        // same plain 404; an unknown resource of a served version: a Status.
        for path in [
            "/apis/no.such.group/v1/things",
            "/apis/apps/v9/deployments",
            "/apis/no.such.group",
        ] {
            let (code, ctype, body) = call(&s, Method::GET, path, Some(admin())).await;
            assert_eq!(
                (code, ctype.as_str(), body.as_str()),
                (
                    StatusCode::NOT_FOUND,
                    "text/plain; charset=utf-8",
                    "404 page not found\n"
                ),
                "{path}"
            );
        }
        let (code, ctype, body) =
            call(&s, Method::GET, "/apis/apps/v1/nothings", Some(admin())).await;
        assert_eq!(code, StatusCode::NOT_FOUND);
        assert_eq!(ctype, "application/json");
        let v: serde_json::Value = serde_json::from_str(&body).expect("json");
        assert_eq!(v["kind"], "Status");
        assert_eq!(
            v["message"],
            "the server could not find the requested resource"
        );
    }

    #[tokio::test]
    async fn wrong_method_is_405_status() {
        let (s, _) = state();
        let (code, _, body) = call(&s, Method::POST, "/version", Some(admin())).await;
        assert_eq!(code, StatusCode::METHOD_NOT_ALLOWED);
        let v: serde_json::Value = serde_json::from_str(&body).expect("json");
        assert_eq!(v["reason"], "MethodNotAllowed");
    }

    #[tokio::test]
    async fn version_is_public() {
        let (s, _) = state();
        for path in ["/version", "/version/"] {
            let (code, ctype, body) = call(&s, Method::GET, path, None).await;
            assert_eq!(code, StatusCode::OK);
            assert_eq!(ctype, "application/json");
            let v: serde_json::Value = serde_json::from_str(&body).expect("json");
            assert_eq!(v["major"], "1");
            assert_eq!(v["minor"], "33");
        }
    }

    #[tokio::test]
    async fn health_endpoints_are_public_and_ok() {
        let (s, _) = state();
        for path in ["/healthz", "/livez", "/readyz"] {
            let (code, ctype, body) = call(&s, Method::GET, path, None).await;
            assert_eq!((code, body.as_str()), (StatusCode::OK, "ok"), "{path}");
            assert_eq!(ctype, "text/plain; charset=utf-8");
        }
    }

    #[tokio::test]
    async fn verbose_lists_checks() {
        let (s, _) = state();
        let (code, _, body) = call(&s, Method::GET, "/readyz?verbose", None).await;
        assert_eq!(code, StatusCode::OK);
        assert_eq!(
            body,
            "[+]ping ok\n[+]etcd ok\n[+]shutdown ok\nreadyz check passed\n"
        );
    }

    #[tokio::test]
    async fn store_down_fails_health() {
        let (s, store) = state();
        store.down.store(true, Ordering::SeqCst);
        let (code, _, body) = call(&s, Method::GET, "/livez", None).await;
        assert_eq!(code, StatusCode::INTERNAL_SERVER_ERROR);
        assert_eq!(
            body,
            "[+]ping ok\n[-]etcd failed: reason withheld\nlivez check failed\n"
        );
        let (code, _, _) = call(&s, Method::GET, "/livez?exclude=etcd", None).await;
        assert_eq!(code, StatusCode::OK);
        let (code, _, _) = call(&s, Method::GET, "/livez/etcd", Some(admin())).await;
        assert_eq!(code, StatusCode::INTERNAL_SERVER_ERROR);
        let (code, _, body) = call(&s, Method::GET, "/livez/ping", Some(admin())).await;
        assert_eq!((code, body.as_str()), (StatusCode::OK, "ok"));
    }

    #[tokio::test]
    async fn shutdown_fails_readyz_only() {
        let (s, _) = state();
        s.begin_shutdown();
        let (code, _, body) = call(&s, Method::GET, "/readyz", None).await;
        assert_eq!(code, StatusCode::INTERNAL_SERVER_ERROR);
        assert!(body.contains("[-]shutdown failed"), "{body}");
        let (code, _, _) = call(&s, Method::GET, "/livez", None).await;
        assert_eq!(code, StatusCode::OK);
    }

    #[tokio::test]
    async fn unknown_single_check_is_404() {
        let (s, _) = state();
        let (code, _, _) = call(&s, Method::GET, "/readyz/nope", Some(admin())).await;
        assert_eq!(code, StatusCode::NOT_FOUND);
    }
}
