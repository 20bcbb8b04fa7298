//! The authorization layers, inside authentication: [`impersonate`], then
//! (after API priority and fairness) [`authorize`], the [`Authorizer`] for
//! the request's attributes.
//!
//! - The server puts an `axum::Extension(Arc<Authorizer>)` outside the
//!   router; without one (unit tests of the router) every request passes.
//! - Requests without a user (the public paths authentication lets
//!   through) and, for authenticated users, the public paths themselves
//!   (upstream's `system:public-info-viewer`) are not checked.
//! - Impersonation (`Impersonate-User`, `-Group`, `-Uid`,
//!   `Impersonate-Extra-<key>`), as upstream's `WithImpersonation`: each
//!   requested user, service account, group, extra value and uid needs the
//!   `impersonate` verb on `users`, `serviceaccounts`, `groups`,
//!   `userextras/<key>` or `uids`; the first one denied is a 403 with
//!   upstream's message. Groups, extras or a uid without a user are
//!   upstream's 500. Then the impersonated user replaces the [`UserInfo`]
//!   (with `system:authenticated` added, and a service account's groups
//!   when no group is asked for), its extras go in a [`UserExtra`], and
//!   the headers are removed.
//! - A host request (`http/host_view.rs`: front-proxied, outside the
//!   aggregated prefix) is marked [`host_view::HostView`] and, when the
//!   authorizer has a delegated reviewer, authorized by the host's
//!   `SubjectAccessReview` instead of Skein's modes; a review the host
//!   cannot answer is upstream's plain-text 500 ([`internal_error`]).
//! - A denied request gets upstream's 403 (`Attributes::forbidden`).

use std::collections::BTreeMap;
use std::sync::Arc;

use axum::extract::Request;
use axum::http::{HeaderMap, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};

use super::authn::{self, UserInfo};
use super::host_view;
use crate::authz::{Attributes, Authorizer};

/// The extra attributes of an impersonated user (`Impersonate-Extra-*`).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct UserExtra(pub BTreeMap<String, Vec<String>>);

const USER: &str = "impersonate-user";
const GROUP: &str = "impersonate-group";
const UID: &str = "impersonate-uid";
const EXTRA: &str = "impersonate-extra-";

/// The user as the authorizer and admission see it.
pub fn subject(user: &UserInfo, extra: Option<&UserExtra>) -> UserInfo {
    match extra {
        Some(e) => UserInfo {
            extra: e.0.clone(),
            ..user.clone()
        },
        None => user.clone(),
    }
}

/// Middleware, outer half: impersonation (see the module documentation).
/// Runs before API priority and fairness, which classifies the
/// impersonated user, as upstream's `WithImpersonation` runs before
/// `WithPriorityAndFairness`.
pub async fn impersonate(mut req: Request, next: Next) -> Response {
    let Some(authorizer) = req.extensions().get::<Arc<Authorizer>>().cloned() else {
        return next.run(req).await;
    };
    let Some(user) = req.extensions().get::<UserInfo>().cloned() else {
        return next.run(req).await;
    };
    match impersonation(&authorizer, &user, req.headers(), request_uri(req.uri())) {
        Ok(None) => {}
        Ok(Some((as_user, extra))) => {
            let headers = req.headers_mut();
            let names: Vec<_> = headers
                .keys()
                .filter(|k| {
                    let k = k.as_str();
                    k == USER || k == GROUP || k == UID || k.starts_with(EXTRA)
                })
                .cloned()
                .collect();
            for n in names {
                headers.remove(n);
            }
            let mut as_user = as_user;
            as_user.extra = extra.0.clone();
            req.extensions_mut().insert(as_user);
            req.extensions_mut().insert(extra);
        }
        Err(response) => return *response,
    }
    next.run(req).await
}

/// The path a request is judged by: under the aggregated prefix, what is
/// served here is the request below the prefix; what an APIService's
/// backend serves is judged as sent.
pub fn served_path(req: &Request) -> &str {
    let path = req.uri().path();
    match req.extensions().get::<super::aggregator::Selected>() {
        Some(_) => path,
        None => path
            .strip_prefix(super::routes::AGGREGATED_PREFIX)
            .filter(|p| p.starts_with('/'))
            .unwrap_or(path),
    }
}

/// Middleware, inner half: authorization of the (impersonated) user (see
/// the module documentation).
pub async fn authorize(mut req: Request, next: Next) -> Response {
    let Some(authorizer) = req.extensions().get::<Arc<Authorizer>>().cloned() else {
        return next.run(req).await;
    };
    let Some(user) = req.extensions().get::<UserInfo>().cloned() else {
        return next.run(req).await;
    };
    if authn::is_public(req.uri().path()) {
        return next.run(req).await;
    }
    let host = host_view::is_host_request(
        req.extensions().get::<host_view::FrontProxied>().is_some(),
        req.uri().path(),
    );
    if host {
        req.extensions_mut().insert(host_view::HostView);
    }
    let path = served_path(&req);
    let attrs = Attributes::from_request(
        subject(&user, req.extensions().get::<UserExtra>()),
        req.method(),
        path,
        req.uri().query(),
    );
    // A host request is the host's to authorize, when it can be asked.
    let decision = match authorizer.delegated().filter(|_| host) {
        Some(delegated) => match delegated.authorize(&attrs, user.uid.as_deref()).await {
            Ok(decision) => decision,
            Err(e) => {
                // As upstream's WithAuthorization on an authorizer error.
                super::audit::annotate(req.extensions(), REASON_ANNOTATION, "internal error");
                let uri = request_uri(req.uri());
                return internal_error(&uri, &e.to_string());
            }
        },
        None => authorizer.authorize(&attrs),
    };
    // As upstream's WithAuthorization, for the audit log.
    let verdict = if decision.allowed { "allow" } else { "forbid" };
    super::audit::annotate(req.extensions(), DECISION_ANNOTATION, verdict);
    super::audit::annotate(req.extensions(), REASON_ANNOTATION, &decision.reason);
    if !decision.allowed {
        return attrs.forbidden(&decision.reason).into_response();
    }
    next.run(req).await
}

/// Go's `http.Request.RequestURI`: the path and query as sent (an HTTP/2
/// request's URI also carries the scheme and authority).
fn request_uri(uri: &axum::http::Uri) -> String {
    uri.path_and_query()
        .map_or_else(|| uri.path().to_string(), |p| p.as_str().to_string())
}

/// Upstream's `responsewriters.InternalError`: a plain-text 500 naming the
/// request URI (Go-quoted) and the error, HTML-escaped as its sanitizer
/// does.
pub fn internal_error(uri: &str, error: &str) -> Response {
    let text = format!(
        "Internal Server Error: {}: {error}\n",
        crate::authz::rbac::go_quote(uri)
    )
    .replace('&', "&amp;")
    .replace('<', "&lt;")
    .replace('>', "&gt;");
    let mut resp = (StatusCode::INTERNAL_SERVER_ERROR, text).into_response();
    resp.headers_mut().insert(
        header::CONTENT_TYPE,
        header::HeaderValue::from_static("text/plain; charset=utf-8"),
    );
    resp.headers_mut().insert(
        header::X_CONTENT_TYPE_OPTIONS,
        header::HeaderValue::from_static("nosniff"),
    );
    resp
}

/// Upstream's audit annotation keys of the authorization filter.
const DECISION_ANNOTATION: &str = "authorization.k8s.io/decision";
const REASON_ANNOTATION: &str = "authorization.k8s.io/reason";

/// One thing asked for (upstream's `ObjectReference` per request).
struct Wanted {
    kind: &'static str,
    namespace: String,
    name: String,
    api_version: &'static str,
    field_path: String,
}

impl Wanted {
    /// Go's `%v` of the `ObjectReference` (its seven fields).
    fn go_value(&self) -> String {
        format!(
            "{{{} {} {}  {}  {}}}",
            self.kind, self.namespace, self.name, self.api_version, self.field_path
        )
    }
}

fn header_values<'h>(headers: &'h HeaderMap, name: &str) -> Vec<&'h str> {
    headers
        .get_all(name)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .collect()
}

/// `system:serviceaccount:<ns>:<name>` → (ns, name).
fn service_account(user: &str) -> Option<(&str, &str)> {
    let (ns, name) = user
        .strip_prefix("system:serviceaccount:")?
        .split_once(':')?;
    (!ns.is_empty() && !name.is_empty() && !name.contains(':')).then_some((ns, name))
}

/// Go's `url.PathUnescape`: `None` for a bad `%` escape or non-UTF-8.
fn path_unescape(s: &str) -> Option<String> {
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' {
            let hex = s.get(i + 1..i + 3)?;
            out.push(u8::from_str_radix(hex, 16).ok()?);
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    String::from_utf8(out).ok()
}

type Impersonated = (UserInfo, UserExtra);

/// The impersonated user, `None` without impersonation headers, or the
/// response refusing it.
fn impersonation(
    authorizer: &Authorizer,
    requestor: &UserInfo,
    headers: &HeaderMap,
    uri: String,
) -> Result<Option<Impersonated>, Box<Response>> {
    let mut wanted = Vec::new();
    let requested_user = headers
        .get(USER)
        .and_then(|v| v.to_str().ok())
        .unwrap_or("");
    if !requested_user.is_empty() {
        wanted.push(match service_account(requested_user) {
            Some((ns, name)) => Wanted {
                kind: "ServiceAccount",
                namespace: ns.into(),
                name: name.into(),
                api_version: "",
                field_path: String::new(),
            },
            None => Wanted {
                kind: "User",
                namespace: String::new(),
                name: requested_user.into(),
                api_version: "",
                field_path: String::new(),
            },
        });
    }
    for g in header_values(headers, GROUP) {
        wanted.push(Wanted {
            kind: "Group",
            namespace: String::new(),
            name: g.into(),
            api_version: "",
            field_path: String::new(),
        });
    }
    let mut extra_keys: Vec<&str> = headers
        .keys()
        .map(|k| k.as_str())
        .filter(|k| k.starts_with(EXTRA))
        .collect();
    extra_keys.dedup();
    for k in extra_keys {
        let raw = &k[EXTRA.len()..];
        let key = path_unescape(raw).unwrap_or_else(|| raw.to_string());
        for v in header_values(headers, k) {
            wanted.push(Wanted {
                kind: "UserExtra",
                namespace: String::new(),
                name: v.into(),
                api_version: "authentication.k8s.io/v1",
                field_path: key.clone(),
            });
        }
    }
    let uid = headers.get(UID).and_then(|v| v.to_str().ok()).unwrap_or("");
    if !uid.is_empty() {
        wanted.push(Wanted {
            kind: "UID",
            namespace: String::new(),
            name: uid.into(),
            api_version: "authentication.k8s.io/v1",
            field_path: String::new(),
        });
    }
    if wanted.is_empty() {
        return Ok(None);
    }
    if requested_user.is_empty() {
        let list: Vec<String> = wanted.iter().map(Wanted::go_value).collect();
        let reason = format!(
            "requested [{}] without impersonating a user",
            list.join(" ")
        );
        return Err(Box::new(internal_error(&uri, &reason)));
    }
    let groups_given = wanted.iter().any(|w| w.kind == "Group");
    let mut name = String::new();
    let mut groups = Vec::new();
    let mut extra: BTreeMap<String, Vec<String>> = BTreeMap::new();
    let mut as_uid = None;
    let acting = subject(requestor, None);
    for w in &wanted {
        let mut attrs = Attributes {
            user: acting.clone(),
            verb: "impersonate".into(),
            resource_request: true,
            api_version: "v1".into(),
            namespace: w.namespace.clone(),
            name: w.name.clone(),
            ..Attributes::default()
        };
        match w.kind {
            "ServiceAccount" => {
                attrs.resource = "serviceaccounts".into();
                name = format!("system:serviceaccount:{}:{}", w.namespace, w.name);
                if !groups_given {
                    groups = vec![
                        "system:serviceaccounts".to_string(),
                        format!("system:serviceaccounts:{}", w.namespace),
                    ];
                }
            }
            "User" => {
                attrs.resource = "users".into();
                name.clone_from(&w.name);
            }
            "Group" => {
                attrs.resource = "groups".into();
                groups.push(w.name.clone());
            }
            "UserExtra" => {
                attrs.api_group = "authentication.k8s.io".into();
                attrs.resource = "userextras".into();
                attrs.subresource.clone_from(&w.field_path);
                extra
                    .entry(w.field_path.clone())
                    .or_default()
                    .push(w.name.clone());
            }
            _ => {
                attrs.api_group = "authentication.k8s.io".into();
                attrs.resource = "uids".into();
                as_uid = Some(w.name.clone());
            }
        }
        let decision = authorizer.authorize(&attrs);
        if !decision.allowed {
            return Err(Box::new(attrs.forbidden(&decision.reason).into_response()));
        }
    }
    let user = if name == "system:anonymous" {
        if !groups.iter().any(|g| g == authn::UNAUTHENTICATED_GROUP) {
            groups.push(authn::UNAUTHENTICATED_GROUP.to_string());
        }
        UserInfo {
            name,
            uid: as_uid,
            groups,
            extra: Default::default(),
        }
    } else {
        UserInfo::authenticated(name, as_uid, groups)
    };
    Ok(Some((user, UserExtra(extra))))
}

#[cfg(test)]
mod tests {
    use axum::Router;
    use axum::body::Body;
    use axum::http::{Method, Request};
    use axum::routing::any;
    use http_body_util::BodyExt;
    use tower::ServiceExt;

    use super::*;

    fn router() -> Router {
        async fn echo(req: Request<Body>) -> String {
            let u = req.extensions().get::<UserInfo>().cloned();
            let e = req
                .extensions()
                .get::<UserExtra>()
                .cloned()
                .unwrap_or_default();
            let still = req.headers().contains_key(USER);
            format!("{u:?} {:?} {still}", e.0)
        }
        Router::new()
            .route("/{*rest}", any(echo))
            .layer(axum::middleware::from_fn(authorize))
            .layer(axum::middleware::from_fn(impersonate))
            // An authorizer that allows only masters (RBAC without objects).
            .layer(axum::Extension(Arc::new(Authorizer::new(
                vec![crate::authz::Mode::Rbac],
                None,
            ))))
    }

    async fn call(
        user: UserInfo,
        method: Method,
        uri: &str,
        headers: &[(&str, &str)],
    ) -> (StatusCode, String) {
        let mut req = Request::builder().method(method).uri(uri);
        for (k, v) in headers {
            req = req.header(*k, *v);
        }
        let mut req = req.body(Body::empty()).expect("request");
        req.extensions_mut().insert(user);
        let resp = router().oneshot(req).await.expect("infallible");
        let code = resp.status();
        let body = resp.into_body().collect().await.expect("body").to_bytes();
        (code, String::from_utf8_lossy(&body).into_owned())
    }

    fn bob() -> UserInfo {
        UserInfo::authenticated("bob".into(), None, vec![])
    }

    fn admin() -> UserInfo {
        UserInfo::authenticated("admin".into(), None, vec!["system:masters".into()])
    }

    #[tokio::test]
    async fn denied_requests_get_upstreams_403() {
        let (code, body) = call(bob(), Method::GET, "/api/v1/namespaces/ns/pods", &[]).await;
        assert_eq!(code, StatusCode::FORBIDDEN);
        let v: serde_json::Value = serde_json::from_str(&body).expect("json");
        assert_eq!(
            v["message"],
            "pods is forbidden: User \"bob\" cannot list resource \"pods\" in API group \"\" in the namespace \"ns\""
        );
        assert_eq!(v["reason"], "Forbidden");
        assert_eq!(v["details"], serde_json::json!({"kind": "pods"}));
        let (code, _) = call(bob(), Method::GET, "/healthz", &[]).await;
        assert_eq!(code, StatusCode::OK);
        let (code, _) = call(admin(), Method::GET, "/api/v1/pods", &[]).await;
        assert_eq!(code, StatusCode::OK);
    }

    #[tokio::test]
    async fn impersonation_needs_the_verb() {
        let (code, body) = call(bob(), Method::GET, "/api", &[("Impersonate-User", "carol")]).await;
        assert_eq!(code, StatusCode::FORBIDDEN);
        let v: serde_json::Value = serde_json::from_str(&body).expect("json");
        assert_eq!(
            v["message"],
            "users \"carol\" is forbidden: User \"bob\" cannot impersonate resource \"users\" in API group \"\" at the cluster scope"
        );
        assert_eq!(
            v["details"],
            serde_json::json!({"kind": "users", "name": "carol"})
        );
        let (code, body) = call(
            admin(),
            Method::GET,
            "/api",
            &[
                ("Impersonate-User", "system:serviceaccount:ns:sa"),
                ("Impersonate-Extra-Scopes%2Fa", "x"),
            ],
        )
        .await;
        assert_eq!(
            code,
            StatusCode::FORBIDDEN,
            "the impersonated account has no rights: {body}"
        );
        let (code, body) = call(
            admin(),
            Method::GET,
            "/healthz",
            &[
                ("Impersonate-User", "carol"),
                ("Impersonate-Group", "devs"),
                ("Impersonate-Extra-Scopes%2Fa", "x"),
            ],
        )
        .await;
        assert_eq!(code, StatusCode::OK);
        assert!(body.contains("name: \"carol\""), "{body}");
        assert!(
            body.contains("[\"devs\", \"system:authenticated\"]"),
            "{body}"
        );
        assert!(body.contains("{\"scopes/a\": [\"x\"]} false"), "{body}");
    }

    #[tokio::test]
    async fn groups_without_a_user_are_upstreams_500() {
        let (code, body) = call(
            admin(),
            Method::GET,
            "/api",
            &[("Impersonate-Group", "devs")],
        )
        .await;
        assert_eq!(code, StatusCode::INTERNAL_SERVER_ERROR);
        assert_eq!(
            body,
            "Internal Server Error: \"/api\": requested [{Group  devs    }] without impersonating a user\n"
        );
    }
}
