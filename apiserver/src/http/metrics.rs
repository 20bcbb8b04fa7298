//! `GET /metrics` and the request-metrics middleware.
//!
//! [`instrument`] runs after authentication (as upstream's
//! `InstrumentRouteFunc` runs inside the handler chain, so a request
//! rejected with 401 is not counted) and records, per upstream's
//! `k8s.io/apiserver/pkg/endpoints/metrics`:
//!
//! - API resource requests whose resource is served (the resource table,
//!   plus `selfsubjectreviews`): `verb` as upstream reports it (`GET` vs
//!   `LIST` by scope, `WATCH` for `?watch=` not `0`/`false`, `APPLY` for
//!   an apply patch, `CONNECT` for `log`/`exec`/`attach`/`portforward`/
//!   `proxy`, `POST`, `PUT`, `PATCH`, `DELETE`), `scope` as the installer
//!   assigns it (`resource` for a named object or a POST, `namespace` for a
//!   namespaced collection, `cluster` otherwise), `dry_run`, `code`.
//!   405s for a verb a resource does not serve are not counted (upstream
//!   has no route for them).
//! - The health roots (`/healthz`, `/livez`, `/readyz`, `component=""`)
//!   and discovery (`/api`, `/apis`), with the path as `subresource`, as
//!   upstream's instrumented health and aggregated-discovery handlers.
//!
//! Watches (and other long-running requests) are counted in
//! `apiserver_longrunning_requests` while their body streams, each event
//! line (a data frame may join several) in `apiserver_watch_events_total`,
//! and in
//! `apiserver_request_total`/`_duration_seconds` when the stream ends,
//! with its whole duration, as upstream records a watch when its handler
//! returns. Every other request is in `apiserver_current_inflight_requests`
//! while its handler runs.

use std::sync::Arc;
use std::time::Instant;

use axum::body::Body;
use axum::extract::{Request, State};
use axum::http::{HeaderValue, Method, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use futures::StreamExt;

use super::AppState;
use super::access_log;
use super::authn::UserInfo;
use crate::instance::Instance;
use crate::metrics::{self, RequestLabels, WatchLabels};
use crate::registry::resource::Resources;

/// `GET /metrics`: the Prometheus text format (authenticated, like every
/// path that is not public).
pub async fn get(State(state): State<AppState>) -> Response {
    let mut response = state.registry.instance().metrics().render().into_response();
    response.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static(metrics::CONTENT_TYPE),
    );
    response
}

/// What the metrics layer learned about a request: its labels (when it is
/// instrumented) and the kind of the watched objects.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RequestInfo {
    /// The `apiserver_request_total` labels, `code` left 0.
    pub labels: RequestLabels,
    /// The kind (for `apiserver_watch_events_total`), empty if unknown.
    pub kind: &'static str,
    /// Watch or connect: counted while it streams, not as in flight.
    pub long_running: bool,
}

/// Upstream's reported verb for a request: what [`classify`] puts in
/// `verb`, and for requests it does not instrument, the method's verb
/// with GET/LIST told apart by the path (the access log's `verb`).
pub fn verb_of(
    resources: &Resources,
    method: &Method,
    path: &str,
    query: Option<&str>,
    content_type: Option<&HeaderValue>,
) -> &'static str {
    match classify(resources, method, path, query, content_type) {
        Some(info) => info.labels.verb,
        None => clean_verb(canonical_verb(method, ""), method, query, content_type, ""),
    }
}

const CONNECT_SUBRESOURCES: &[&str] = &["log", "exec", "attach", "portforward", "proxy"];

/// Subresources upstream v1.33 serves, as static label values.
fn static_subresource(s: &str) -> Option<&'static str> {
    const KNOWN: &[&str] = &[
        "status",
        "scale",
        "log",
        "exec",
        "attach",
        "portforward",
        "proxy",
        "binding",
        "eviction",
        "ephemeralcontainers",
        "resize",
        "token",
        "finalize",
        "approval",
    ];
    KNOWN.iter().find(|k| **k == s).copied()
}

/// The labels of an instrumented request, `None` for requests upstream
/// does not count (unknown paths and resources, `/version`, `/metrics`,
/// `/openapi`, per-check health paths, legacy discovery documents).
pub fn classify(
    resources: &Resources,
    method: &Method,
    path: &str,
    query: Option<&str>,
    content_type: Option<&HeaderValue>,
) -> Option<RequestInfo> {
    let non_resource = |subresource: &'static str, component: &'static str| {
        (*method == Method::GET).then_some(RequestInfo {
            labels: RequestLabels {
                code: 0,
                component,
                dry_run: "",
                group: "",
                resource: "",
                scope: "",
                subresource,
                verb: "GET",
                version: "",
            },
            kind: "",
            long_running: false,
        })
    };
    match path {
        "/healthz" => return non_resource("/healthz", ""),
        "/livez" => return non_resource("/livez", ""),
        "/readyz" => return non_resource("/readyz", ""),
        "/api" | "/api/" => return non_resource("/api", "apiserver"),
        "/apis" | "/apis/" => return non_resource("/apis", "apiserver"),
        _ => {}
    }
    let p = ResourcePath::parse(path)?;
    let (group, version, plural, kind, namespaced) =
        match resources.find(p.group, p.version, p.resource) {
            Some(r) => (r.group, r.version, r.plural, r.kind, r.namespaced),
            None => {
                let r = super::review::find(p.group, p.version, p.resource)?;
                (r.group, r.version, r.plural, r.kind, r.namespaced)
            }
        };
    let subresource = match p.subresource {
        None => "",
        Some(s) => static_subresource(s)?,
    };
    let scope = if p.name.is_some() || *method == Method::POST {
        "resource"
    } else if namespaced && p.namespace {
        "namespace"
    } else {
        "cluster"
    };
    let verb = clean_verb(
        canonical_verb(method, scope),
        method,
        query,
        content_type,
        subresource,
    );
    Some(RequestInfo {
        labels: RequestLabels {
            code: 0,
            component: "apiserver",
            dry_run: dry_run(query),
            group,
            resource: plural,
            scope,
            subresource,
            verb,
            version,
        },
        kind,
        long_running: verb == "WATCH" || verb == "CONNECT",
    })
}

/// Upstream's `CanonicalVerb`: GET and HEAD are LIST unless they address
/// one object (or a non-resource path).
fn canonical_verb(method: &Method, scope: &str) -> &'static str {
    match *method {
        Method::GET | Method::HEAD if scope != "resource" && !scope.is_empty() => "LIST",
        Method::GET | Method::HEAD => "GET",
        Method::POST => "POST",
        Method::PUT => "PUT",
        Method::PATCH => "PATCH",
        Method::DELETE => "DELETE",
        _ => "other",
    }
}

/// Upstream's `CleanVerb` and `cleanVerb`: WATCH, APPLY and CONNECT, and
/// `other` for anything outside its list of verbs.
fn clean_verb(
    verb: &'static str,
    method: &Method,
    query: Option<&str>,
    content_type: Option<&HeaderValue>,
    subresource: &str,
) -> &'static str {
    let mut reported = verb;
    if *method == Method::GET && is_watch(query) {
        reported = "WATCH";
    }
    if verb == "PATCH"
        && content_type.is_some_and(|c| c.as_bytes() == b"application/apply-patch+yaml")
    {
        reported = "APPLY";
    }
    if CONNECT_SUBRESOURCES.contains(&subresource) {
        reported = "CONNECT";
    }
    reported
}

/// `?watch=`: the first value, lower-cased, is neither `0` nor `false`.
fn is_watch(query: Option<&str>) -> bool {
    let Some(q) = query.filter(|q| q.contains("watch")) else {
        return false;
    };
    form_urlencoded::parse(q.as_bytes())
        .find(|(k, _)| k == "watch")
        .is_some_and(|(_, v)| {
            let v = v.to_ascii_lowercase();
            v != "0" && v != "false"
        })
}

/// Upstream's `cleanDryRun`: empty without `dryRun`, `invalid` for any
/// value but `All`, else the sorted distinct values joined by `,` (`All`).
fn dry_run(query: Option<&str>) -> &'static str {
    let Some(q) = query.filter(|q| q.contains("dryRun")) else {
        return "";
    };
    let mut any = false;
    for (k, v) in form_urlencoded::parse(q.as_bytes()) {
        if k == "dryRun" {
            if v != "All" {
                return "invalid";
            }
            any = true;
        }
    }
    if any { "All" } else { "" }
}

/// A resource path, borrowed from the URL (no allocation): the same
/// rules as `http::path::parse`.
#[derive(Debug, PartialEq, Eq)]
struct ResourcePath<'a> {
    group: &'a str,
    version: &'a str,
    namespace: bool,
    resource: &'a str,
    name: Option<&'a str>,
    subresource: Option<&'a str>,
}

impl<'a> ResourcePath<'a> {
    fn parse(path: &'a str) -> Option<Self> {
        let mut parts = path.trim_matches('/').split('/');
        let (group, version) = match parts.next()? {
            "api" => ("", parts.next()?),
            "apis" => (parts.next()?, parts.next()?),
            _ => return None,
        };
        let mut rest: [&str; 5] = [""; 5];
        let mut n = 0;
        for part in parts {
            if part.is_empty() || n == rest.len() {
                return None;
            }
            rest[n] = part;
            n += 1;
        }
        let mut rest = &rest[..n];
        let mut namespace = false;
        if rest.len() > 2 && rest[0] == "namespaces" && !matches!(rest[2], "status" | "finalize") {
            namespace = true;
            rest = &rest[2..];
        }
        let (resource, name, subresource) = match *rest {
            [r] => (r, None, None),
            [r, n] => (r, Some(n), None),
            [r, n, s] => (r, Some(n), Some(s)),
            _ => return None,
        };
        Some(ResourcePath {
            group,
            version,
            namespace,
            resource,
            name,
            subresource,
        })
    }
}

/// What [`instrument`] tells the access log (a response extension, only
/// set when the access log is on).
#[derive(Clone, Debug)]
pub struct Observed {
    /// Upstream's reported verb.
    pub verb: &'static str,
    /// The authenticated user, if any.
    pub user: Option<String>,
}

/// Middleware: records the request metrics (see the module docs).
///
/// Its state is the server's [`Instance`] (one `Arc` cloned per request:
/// cloning the whole `AppState`, a dozen shared reference counts, cost
/// GETs about 15% on two CPUs).
pub async fn instrument(
    State(instance): State<Arc<Instance>>,
    req: Request,
    next: Next,
) -> Response {
    let start = Instant::now();
    let method = req.method().clone();
    let resources = instance.resources();
    let metrics = instance.metrics().clone();
    let info = classify(
        resources,
        &method,
        req.uri().path(),
        req.uri().query(),
        req.headers().get(header::CONTENT_TYPE),
    );
    let observed = access_log::enabled(&req).then(|| Observed {
        verb: info.map_or_else(
            || {
                verb_of(
                    resources,
                    &method,
                    req.uri().path(),
                    req.uri().query(),
                    None,
                )
            },
            |i| i.labels.verb,
        ),
        user: req.extensions().get::<UserInfo>().map(|u| u.name.clone()),
    });
    let long_running = info.is_some_and(|i| i.long_running);
    let inflight =
        (!long_running).then(|| metrics.inflight(!matches!(method, Method::GET | Method::HEAD)));
    let mut response = next.run(req).await;
    drop(inflight);
    if let Some(mut info) = info {
        info.labels.code = response.status().as_u16();
        if long_running && response.status() == StatusCode::OK {
            response = stream_tracked(response, info, start, metrics);
        } else if response.status() != StatusCode::METHOD_NOT_ALLOWED {
            metrics.record_request(&info.labels, start.elapsed());
        }
    }
    if let Some(o) = observed {
        response.extensions_mut().insert(o);
    }
    response
}

/// Counts a streaming response while its body is alive: the long-running
/// gauge, one watch event per line, and the request itself when the
/// body ends or is dropped.
fn stream_tracked(
    response: Response,
    info: RequestInfo,
    start: Instant,
    metrics: Arc<metrics::Metrics>,
) -> Response {
    let (parts, body) = response.into_parts();
    let tracker = StreamTracker {
        _gauge: metrics.longrunning(&info.labels),
        events: (info.labels.verb == "WATCH").then(|| {
            metrics.watch_events(&WatchLabels {
                group: info.labels.group,
                kind: info.kind,
                version: info.labels.version,
            })
        }),
        labels: info.labels,
        start,
        metrics,
    };
    let stream = body.into_data_stream().map(move |frame| {
        if let Ok(bytes) = &frame
            && let Some(events) = &tracker.events
        {
            // One JSON line per event; a frame may join several.
            let lines = bytes.iter().filter(|b| **b == b'\n').count();
            events.inc_by(u64::try_from(lines).unwrap_or(u64::MAX));
        }
        frame
    });
    Response::from_parts(parts, Body::from_stream(stream))
}

/// Lives as long as a streaming body (see [`stream_tracked`]).
struct StreamTracker {
    _gauge: metrics::InflightGuard,
    events: Option<prometheus_client::metrics::counter::Counter>,
    labels: RequestLabels,
    start: Instant,
    metrics: Arc<metrics::Metrics>,
}

impl Drop for StreamTracker {
    fn drop(&mut self) {
        self.metrics
            .record_request(&self.labels, self.start.elapsed());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn info(method: Method, uri: &str) -> Option<RequestLabels> {
        info_ct(method, uri, None)
    }

    fn info_ct(method: Method, uri: &str, ct: Option<&'static str>) -> Option<RequestLabels> {
        let (path, query) = match uri.split_once('?') {
            Some((p, q)) => (p, Some(q)),
            None => (uri, None),
        };
        let ct = ct.map(HeaderValue::from_static);
        classify(&Resources::new(), &method, path, query, ct.as_ref()).map(|i| i.labels)
    }

    fn vs(l: &RequestLabels) -> (&str, &str, &str, &str, &str, &str, &str) {
        (
            l.verb,
            l.group,
            l.version,
            l.resource,
            l.subresource,
            l.scope,
            l.dry_run,
        )
    }

    /// (verb, group, version, resource, subresource, scope, dry_run).
    type Want = (
        &'static str,
        &'static str,
        &'static str,
        &'static str,
        &'static str,
        &'static str,
        &'static str,
    );

    /// Method, URI, content type, expected labels.
    type Case = (Method, &'static str, Option<&'static str>, Want);

    #[test]
    fn verbs_and_scopes_as_upstream() {
        let cases: &[Case] = &[
            (
                Method::GET,
                "/api/v1/namespaces/default/pods",
                None,
                ("LIST", "", "v1", "pods", "", "namespace", ""),
            ),
            (
                Method::GET,
                "/api/v1/pods",
                None,
                ("LIST", "", "v1", "pods", "", "cluster", ""),
            ),
            (
                Method::GET,
                "/api/v1/namespaces/default/pods/p",
                None,
                ("GET", "", "v1", "pods", "", "resource", ""),
            ),
            (
                Method::GET,
                "/api/v1/namespaces",
                None,
                ("LIST", "", "v1", "namespaces", "", "cluster", ""),
            ),
            (
                Method::GET,
                "/api/v1/namespaces/default",
                None,
                ("GET", "", "v1", "namespaces", "", "resource", ""),
            ),
            (
                Method::PUT,
                "/api/v1/namespaces/x/finalize",
                None,
                ("PUT", "", "v1", "namespaces", "finalize", "resource", ""),
            ),
            (
                Method::GET,
                "/apis/apps/v1/namespaces/d/deployments?watch=true",
                None,
                ("WATCH", "apps", "v1", "deployments", "", "namespace", ""),
            ),
            (
                Method::GET,
                "/apis/apps/v1/deployments?watch=1&resourceVersion=4",
                None,
                ("WATCH", "apps", "v1", "deployments", "", "cluster", ""),
            ),
            (
                Method::GET,
                "/apis/apps/v1/deployments?watch=false",
                None,
                ("LIST", "apps", "v1", "deployments", "", "cluster", ""),
            ),
            (
                Method::GET,
                "/apis/apps/v1/deployments?watch=FALSE",
                None,
                ("LIST", "apps", "v1", "deployments", "", "cluster", ""),
            ),
            (
                Method::POST,
                "/apis/apps/v1/namespaces/d/deployments?dryRun=All",
                None,
                ("POST", "apps", "v1", "deployments", "", "resource", "All"),
            ),
            (
                Method::POST,
                "/apis/apps/v1/namespaces/d/deployments?dryRun=Some",
                None,
                (
                    "POST",
                    "apps",
                    "v1",
                    "deployments",
                    "",
                    "resource",
                    "invalid",
                ),
            ),
            (
                Method::PATCH,
                "/apis/apps/v1/namespaces/d/deployments/w",
                Some("application/apply-patch+yaml"),
                ("APPLY", "apps", "v1", "deployments", "", "resource", ""),
            ),
            (
                Method::PATCH,
                "/apis/apps/v1/namespaces/d/deployments/w/scale",
                Some("application/merge-patch+json"),
                (
                    "PATCH",
                    "apps",
                    "v1",
                    "deployments",
                    "scale",
                    "resource",
                    "",
                ),
            ),
            (
                Method::DELETE,
                "/api/v1/namespaces/d/configmaps",
                None,
                ("DELETE", "", "v1", "configmaps", "", "namespace", ""),
            ),
            (
                Method::GET,
                "/api/v1/namespaces/d/pods/p/log",
                None,
                ("CONNECT", "", "v1", "pods", "log", "resource", ""),
            ),
            (
                Method::POST,
                "/apis/authentication.k8s.io/v1/selfsubjectreviews",
                None,
                (
                    "POST",
                    "authentication.k8s.io",
                    "v1",
                    "selfsubjectreviews",
                    "",
                    "resource",
                    "",
                ),
            ),
            (
                Method::GET,
                "/healthz",
                None,
                ("GET", "", "", "", "/healthz", "", ""),
            ),
            (
                Method::GET,
                "/apis",
                None,
                ("GET", "", "", "", "/apis", "", ""),
            ),
        ];
        for (m, uri, ct, want) in cases {
            let got = info_ct(m.clone(), uri, *ct)
                .unwrap_or_else(|| panic!("{m} {uri} not instrumented"));
            assert_eq!(vs(&got), *want, "{m} {uri}");
        }
        assert_eq!(info(Method::GET, "/healthz").map(|l| l.component), Some(""));
        assert_eq!(
            info(Method::GET, "/api").map(|l| l.component),
            Some("apiserver")
        );
    }

    #[test]
    fn uninstrumented_paths() {
        for uri in [
            "/version",
            "/metrics",
            "/openapi/v2",
            "/healthz/etcd",
            "/api/v1",
            "/apis/apps",
            "/apis/nope/v1/things",
            "/api/v1/namespaces/d/pods/p/bogus",
            "/api/v1/a/b/c/d/e/f/g",
            "/api//v1/pods",
        ] {
            assert_eq!(info(Method::GET, uri), None, "{uri}");
        }
        assert_eq!(info(Method::POST, "/healthz"), None);
    }

    #[test]
    fn long_running_and_kind() {
        let i = classify(
            &Resources::new(),
            &Method::GET,
            "/apis/apps/v1/deployments",
            Some("watch=1"),
            None,
        )
        .expect("watch");
        assert!(i.long_running);
        assert_eq!(i.kind, "Deployment");
        let i = classify(
            &Resources::new(),
            &Method::GET,
            "/apis/apps/v1/deployments",
            None,
            None,
        )
        .expect("list");
        assert!(!i.long_running);
    }

    #[test]
    fn access_log_verbs_of_uninstrumented_requests() {
        assert_eq!(
            verb_of(&Resources::new(), &Method::GET, "/version", None, None),
            "GET"
        );
        assert_eq!(
            verb_of(&Resources::new(), &Method::OPTIONS, "/version", None, None),
            "other"
        );
        assert_eq!(
            verb_of(&Resources::new(), &Method::GET, "/api/v1/pods", None, None),
            "LIST"
        );
    }
}
