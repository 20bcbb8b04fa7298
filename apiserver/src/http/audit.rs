//! Auditing's HTTP side: the two axum layers that produce events
//! ([`crate::audit`] holds the policy and the sink).
//!
//! - [`record`] is outside authentication (so 401s are seen): it gives the
//!   request an audit ID (`Audit-Id` response header) and a shared
//!   [`Context`], and after the response writes `ResponseComplete` (or
//!   `ResponseStarted` at once and `ResponseComplete` when the body ends,
//!   for watches). A request that authentication rejected gets one
//!   `ResponseStarted` event with an empty user, as upstream's
//!   failed-authentication audit.
//! - [`received`] is inside authentication: it sees the user, evaluates the
//!   policy, captures the request body at `Request` level and above, and
//!   writes `RequestReceived`.
//!
//! Secrets: a Secret's request or response body is recorded only when the
//! deciding rule names `secrets` explicitly; a catch-all `Request` or
//! `RequestResponse` rule records Secrets at `Metadata`.

use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::task::{Context as TaskContext, Poll};

use axum::body::{Body, Bytes, HttpBody};
use axum::extract::{ConnectInfo, Request};
use axum::http::{HeaderValue, Method, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use serde_json::{Map, Value, json};

use super::authn::UserInfo;
use super::path::{self, ApiPath};
use crate::audit::Auditor;
use crate::audit::policy::{Attributes, Decision, Level, ResourceAttributes, Stage};

/// Bodies bigger than this are not recorded (the event says so by their
/// absence); upstream records what it decoded, with no cap.
const MAX_BODY: usize = 3 * 1024 * 1024;

/// What one request's events share.
pub struct Context {
    audit_id: String,
    received: String,
    request_uri: String,
    verb: String,
    resource: Option<ResourceAttributes>,
    path: String,
    source_ips: Vec<String>,
    user_agent: Option<String>,
    state: Mutex<State>,
}

#[derive(Default)]
struct State {
    user: Option<UserInfo>,
    /// Upstream's audit annotations (`authorization.k8s.io/decision`, …),
    /// in events written after they were added.
    annotations: BTreeMap<String, String>,
    decision: Decision,
    request_object: Option<Value>,
    secret_bodies_allowed: bool,
}

/// Adds an audit annotation to the request's later events (upstream's
/// `audit.AddAuditAnnotation`); nothing when the request is not audited.
pub fn annotate(extensions: &axum::http::Extensions, key: &str, value: &str) {
    if let Some(ctx) = extensions.get::<Arc<Context>>() {
        ctx.lock()
            .annotations
            .insert(key.to_string(), value.to_string());
    }
}

/// The outer layer; see the module docs.
pub async fn record(mut req: Request, next: Next) -> Response {
    let Some(auditor) = req.extensions().get::<Arc<Auditor>>().cloned() else {
        return next.run(req).await;
    };
    let ctx = Arc::new(Context::new(&req));
    req.extensions_mut().insert(ctx.clone());
    let mut response = next.run(req).await;
    if let Ok(v) = HeaderValue::from_str(&ctx.audit_id) {
        response.headers_mut().insert("audit-id", v);
    }
    let authenticated = ctx.lock().user.is_some();
    if !authenticated {
        if response.status() == StatusCode::UNAUTHORIZED {
            // Upstream: one event, empty user, stage ResponseStarted.
            let attrs = ctx.attributes(None);
            let decision = auditor.policy.evaluate(&attrs);
            if decision.level > Level::None
                && !decision.omit_stages.contains(&Stage::ResponseStarted)
            {
                let status = json!({"metadata": {}, "status": "Failure", "message": "Unauthorized", "reason": "Unauthorized", "code": 401});
                let ev = ctx.line(&Event {
                    stage: Stage::ResponseStarted,
                    level: decision.level,
                    user: None,
                    status: Some(&status),
                    request_object: None,
                    response_object: None,
                    annotations: None,
                    stage_timestamp: &micro_time(),
                });
                auditor.write(ev).await;
            }
            return response;
        }
        // A public path without credentials: recorded as the anonymous user.
        let anon = UserInfo {
            name: "system:anonymous".into(),
            uid: None,
            groups: vec!["system:unauthenticated".into()],
            extra: Default::default(),
        };
        ctx.begin(&auditor, anon, None).await;
    }
    ctx.finish(&auditor, response).await
}

/// The inner layer; see the module docs.
pub async fn received(req: Request, next: Next) -> Response {
    let (Some(auditor), Some(ctx), Some(user)) = (
        req.extensions().get::<Arc<Auditor>>().cloned(),
        req.extensions().get::<Arc<Context>>().cloned(),
        req.extensions().get::<UserInfo>().cloned(),
    ) else {
        return next.run(req).await;
    };
    let attrs = ctx.attributes(Some(&user));
    let decision = auditor.policy.evaluate(&attrs);
    let wants_body = decision.level >= Level::Request
        && matches!(*req.method(), Method::POST | Method::PUT | Method::PATCH);
    if !wants_body {
        ctx.begin(&auditor, user, None).await;
        return next.run(req).await;
    }
    let (parts, body) = req.into_parts();
    let bytes = match axum::body::to_bytes(body, MAX_BODY).await {
        Ok(b) => b,
        Err(_) => {
            // Too big or broken: the handler sees the same failure.
            ctx.begin(&auditor, user, None).await;
            return crate::status::ApiError::too_large("the request body is too large")
                .into_response();
        }
    };
    let object = serde_json::from_slice::<Value>(&bytes).ok();
    ctx.begin(&auditor, user, object).await;
    next.run(Request::from_parts(parts, Body::from(bytes)))
        .await
}

impl Context {
    fn new(req: &Request) -> Context {
        let uri = req.uri();
        let request_uri = uri
            .path_and_query()
            .map(|p| p.as_str().to_string())
            .unwrap_or_else(|| uri.path().to_string());
        let watch = uri.query().is_some_and(|q| {
            form_urlencoded::parse(q.as_bytes())
                .any(|(k, v)| k == "watch" && (v == "true" || v == "1"))
        });
        let (verb, resource) = match path::parse(uri.path()) {
            Some(ApiPath::Resource(r)) => {
                let verb = resource_verb(req.method(), r.name.is_some(), watch);
                let attrs = ResourceAttributes {
                    group: r.group,
                    version: r.version,
                    resource: r.resource,
                    subresource: r.subresource.unwrap_or_default(),
                    namespace: r.namespace.unwrap_or_default(),
                    name: r.name.unwrap_or_default(),
                };
                (verb.to_string(), Some(attrs))
            }
            _ => (req.method().as_str().to_ascii_lowercase(), None),
        };
        let mut source_ips: Vec<String> = req
            .headers()
            .get("x-forwarded-for")
            .and_then(|v| v.to_str().ok())
            .map(|v| {
                v.split(',')
                    .map(|s| s.trim().to_string())
                    .filter(|s| !s.is_empty())
                    .collect()
            })
            .unwrap_or_default();
        if let Some(ConnectInfo(peer)) = req.extensions().get::<ConnectInfo<SocketAddr>>() {
            let ip = peer.ip().to_string();
            if !source_ips.contains(&ip) {
                source_ips.push(ip);
            }
        }
        Context {
            audit_id: uuid::Uuid::new_v4().to_string(),
            received: micro_time(),
            request_uri,
            verb,
            resource,
            path: uri.path().to_string(),
            source_ips,
            user_agent: req
                .headers()
                .get(header::USER_AGENT)
                .and_then(|v| v.to_str().ok())
                .map(str::to_string),
            state: Mutex::new(State::default()),
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        self.state
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    fn attributes(&self, user: Option<&UserInfo>) -> Attributes {
        Attributes {
            user: user.map(|u| u.name.clone()).unwrap_or_default(),
            groups: user.map(|u| u.groups.clone()).unwrap_or_default(),
            verb: self.verb.clone(),
            resource: self.resource.clone(),
            path: self.path.clone(),
        }
    }

    fn is_secret(&self) -> bool {
        self.resource
            .as_ref()
            .is_some_and(|r| r.group.is_empty() && r.resource == "secrets")
    }

    /// Records the user and decision, and writes `RequestReceived`.
    async fn begin(&self, auditor: &Auditor, user: UserInfo, object: Option<Value>) {
        let attrs = self.attributes(Some(&user));
        let decision = auditor.policy.evaluate(&attrs);
        let allowed = !self.is_secret() || auditor.policy.secrets_named_for(&attrs);
        let event = {
            let mut st = self.lock();
            st.secret_bodies_allowed = allowed;
            st.request_object = object.filter(|_| allowed);
            st.decision = decision.clone();
            st.user = Some(user);
            (decision.level > Level::None
                && !decision.omit_stages.contains(&Stage::RequestReceived))
            .then(|| self.event_from(&st, Stage::RequestReceived, None, None))
        };
        if let Some(ev) = event {
            auditor.write(ev).await;
        }
    }

    /// Writes the response stages; watches end with `ResponseComplete`
    /// when their body does.
    async fn finish(self: Arc<Self>, auditor: &Arc<Auditor>, response: Response) -> Response {
        let decision = self.lock().decision.clone();
        if decision.level == Level::None {
            return response;
        }
        let code = response.status().as_u16();
        let long_running = self.verb == "watch"
            || matches!(
                self.resource.as_ref().map(|r| r.subresource.as_str()),
                Some("proxy" | "exec" | "attach" | "portforward" | "log")
            );
        if long_running && (200..300).contains(&code) {
            if !decision.omit_stages.contains(&Stage::ResponseStarted) {
                let ev = {
                    let st = self.lock();
                    self.event_from(
                        &st,
                        Stage::ResponseStarted,
                        Some(status_of(code, None)),
                        None,
                    )
                };
                auditor.write(ev).await;
            }
            if decision.omit_stages.contains(&Stage::ResponseComplete) {
                return response;
            }
            let (parts, body) = response.into_parts();
            let tail = OnEnd {
                inner: body,
                pending: Some((auditor.clone(), self.clone(), status_of(code, None))),
            };
            return Response::from_parts(parts, Body::new(tail));
        }
        if decision.omit_stages.contains(&Stage::ResponseComplete) {
            return response;
        }
        let is_json = response
            .headers()
            .get(header::CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .is_some_and(|v| v.starts_with("application/json"));
        let want_response =
            decision.level >= Level::RequestResponse && self.lock().secret_bodies_allowed;
        let (response, body) = if want_response || (!(200..300).contains(&code) && is_json) {
            let (parts, body) = response.into_parts();
            match axum::body::to_bytes(body, MAX_BODY * 4).await {
                Ok(bytes) => {
                    let value = if is_json {
                        serde_json::from_slice::<Value>(&bytes).ok()
                    } else {
                        None
                    };
                    (Response::from_parts(parts, Body::from(bytes)), value)
                }
                Err(_) => (Response::from_parts(parts, Body::empty()), None),
            }
        } else {
            (response, None)
        };
        let failure = body
            .as_ref()
            .filter(|v| v["kind"] == "Status" && !(200..300).contains(&code));
        let status = status_of(code, failure);
        let response_object = body.filter(|_| want_response);
        let ev = {
            let st = self.lock();
            self.event_from(&st, Stage::ResponseComplete, Some(status), response_object)
        };
        auditor.write(ev).await;
        response
    }

    /// One event of this request as a JSON line, from what `st` holds.
    fn event_from(
        &self,
        st: &State,
        stage: Stage,
        status: Option<Value>,
        response: Option<Value>,
    ) -> Vec<u8> {
        let level = st.decision.level;
        let strip = st.decision.omit_managed_fields;
        let request = if level >= Level::Request {
            st.request_object
                .clone()
                .map(|v| without_managed_fields(v, strip))
        } else {
            None
        };
        let response = if level >= Level::RequestResponse {
            response.map(|v| without_managed_fields(v, strip))
        } else {
            None
        };
        self.line(&Event {
            stage,
            level,
            user: st.user.as_ref(),
            status: status.as_ref(),
            request_object: request.as_ref(),
            response_object: response.as_ref(),
            annotations: Some(&st.annotations),
            stage_timestamp: &micro_time(),
        })
    }

    /// `audit.k8s.io/v1` `Event` as one JSON line (without its newline),
    /// fields in upstream's order, serialized straight from borrowed parts.
    fn line(&self, ev: &Event<'_>) -> Vec<u8> {
        let user = UserRef {
            username: ev.user.map(|u| u.name.as_str()),
            uid: ev.user.and_then(|u| u.uid.as_deref()),
            groups: ev.user.map(|u| u.groups.as_slice()).unwrap_or_default(),
        };
        let object_ref = self.resource.as_ref().map(|r| ObjectRef {
            resource: &r.resource,
            namespace: &r.namespace,
            name: &r.name,
            api_group: &r.group,
            api_version: &r.version,
            subresource: &r.subresource,
        });
        let line = EventLine {
            kind: "Event",
            api_version: "audit.k8s.io/v1",
            level: ev.level.as_str(),
            audit_id: &self.audit_id,
            stage: ev.stage.as_str(),
            request_uri: &self.request_uri,
            verb: &self.verb,
            user,
            source_ips: &self.source_ips,
            user_agent: self.user_agent.as_deref(),
            object_ref,
            response_status: ev.status,
            request_object: ev.request_object,
            response_object: ev.response_object,
            request_received_timestamp: &self.received,
            stage_timestamp: ev.stage_timestamp,
            annotations: ev.annotations.filter(|a| !a.is_empty()),
        };
        serde_json::to_vec(&line).unwrap_or_default()
    }
}

/// What differs between the events of one request.
struct Event<'a> {
    stage: Stage,
    level: Level,
    user: Option<&'a UserInfo>,
    status: Option<&'a Value>,
    request_object: Option<&'a Value>,
    response_object: Option<&'a Value>,
    annotations: Option<&'a BTreeMap<String, String>>,
    stage_timestamp: &'a str,
}

/// The serialized event (upstream's field order and omitempty rules).
#[derive(serde::Serialize)]
#[serde(rename_all = "camelCase")]
struct EventLine<'a> {
    kind: &'static str,
    api_version: &'static str,
    level: &'static str,
    #[serde(rename = "auditID")]
    audit_id: &'a str,
    stage: &'static str,
    #[serde(rename = "requestURI")]
    request_uri: &'a str,
    verb: &'a str,
    user: UserRef<'a>,
    #[serde(rename = "sourceIPs")]
    source_ips: &'a [String],
    #[serde(skip_serializing_if = "Option::is_none")]
    user_agent: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    object_ref: Option<ObjectRef<'a>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    response_status: Option<&'a Value>,
    #[serde(skip_serializing_if = "Option::is_none")]
    request_object: Option<&'a Value>,
    #[serde(skip_serializing_if = "Option::is_none")]
    response_object: Option<&'a Value>,
    request_received_timestamp: &'a str,
    stage_timestamp: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    annotations: Option<&'a BTreeMap<String, String>>,
}

#[derive(serde::Serialize)]
struct UserRef<'a> {
    #[serde(skip_serializing_if = "Option::is_none")]
    username: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    uid: Option<&'a str>,
    #[serde(skip_serializing_if = "<[String]>::is_empty")]
    groups: &'a [String],
}

#[derive(serde::Serialize)]
#[serde(rename_all = "camelCase")]
struct ObjectRef<'a> {
    resource: &'a str,
    #[serde(skip_serializing_if = "str::is_empty")]
    namespace: &'a str,
    #[serde(skip_serializing_if = "str::is_empty")]
    name: &'a str,
    #[serde(skip_serializing_if = "str::is_empty")]
    api_group: &'a str,
    api_version: &'a str,
    #[serde(skip_serializing_if = "str::is_empty")]
    subresource: &'a str,
}

/// Upstream's `responseStatus`: `{metadata, code}` for success; the
/// failure's Status fields (status, message, reason, details) otherwise.
fn status_of(code: u16, failure: Option<&Value>) -> Value {
    let mut s = Map::new();
    s.insert("metadata".into(), json!({}));
    if let Some(f) = failure {
        for k in ["status", "message", "reason", "details"] {
            if let Some(v) = f.get(k) {
                s.insert(k.into(), v.clone());
            }
        }
    }
    s.insert("code".into(), json!(code));
    Value::Object(s)
}

fn without_managed_fields(mut v: Value, strip: bool) -> Value {
    if strip {
        if let Some(m) = v.get_mut("metadata").and_then(Value::as_object_mut) {
            m.remove("managedFields");
        }
        if let Some(items) = v.get_mut("items").and_then(Value::as_array_mut) {
            for item in items {
                if let Some(m) = item.get_mut("metadata").and_then(Value::as_object_mut) {
                    m.remove("managedFields");
                }
            }
        }
    }
    v
}

/// Upstream's RequestInfo verb of a resource request.
fn resource_verb(method: &Method, named: bool, watch: bool) -> &'static str {
    match *method {
        Method::GET | Method::HEAD if watch => "watch",
        Method::GET | Method::HEAD if named => "get",
        Method::GET | Method::HEAD => "list",
        Method::POST => "create",
        Method::PUT => "update",
        Method::PATCH => "patch",
        Method::DELETE if named => "delete",
        Method::DELETE => "deletecollection",
        _ => "unknown",
    }
}

/// `metav1.MicroTime` now: `2006-01-02T15:04:05.000000Z`.
fn micro_time() -> String {
    let t = time::OffsetDateTime::now_utc();
    format!(
        "{:04}-{:02}-{:02}T{:02}:{:02}:{:02}.{:06}Z",
        t.year(),
        u8::from(t.month()),
        t.day(),
        t.hour(),
        t.minute(),
        t.second(),
        t.microsecond()
    )
}

/// A response body that writes its `ResponseComplete` event when it ends
/// or is dropped (the client went away).
struct OnEnd {
    inner: Body,
    pending: Option<(Arc<Auditor>, Arc<Context>, Value)>,
}

impl OnEnd {
    fn emit(&mut self) {
        if let Some((auditor, ctx, status)) = self.pending.take() {
            let ev = {
                let st = ctx.lock();
                ctx.event_from(&st, Stage::ResponseComplete, Some(status), None)
            };
            auditor.write_nowait(ev);
        }
    }
}

impl HttpBody for OnEnd {
    type Data = Bytes;
    type Error = axum::Error;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut TaskContext<'_>,
    ) -> Poll<Option<Result<http_body::Frame<Bytes>, Self::Error>>> {
        let polled = Pin::new(&mut self.inner).poll_frame(cx);
        if matches!(polled, Poll::Ready(None) | Poll::Ready(Some(Err(_)))) {
            self.emit();
        }
        polled
    }

    fn is_end_stream(&self) -> bool {
        self.inner.is_end_stream()
    }

    fn size_hint(&self) -> http_body::SizeHint {
        self.inner.size_hint()
    }
}

impl Drop for OnEnd {
    fn drop(&mut self) {
        self.emit();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn verbs_are_upstreams() {
        assert_eq!(resource_verb(&Method::GET, true, false), "get");
        assert_eq!(resource_verb(&Method::GET, false, false), "list");
        assert_eq!(resource_verb(&Method::GET, false, true), "watch");
        assert_eq!(
            resource_verb(&Method::DELETE, false, false),
            "deletecollection"
        );
        assert_eq!(resource_verb(&Method::PATCH, true, false), "patch");
    }

    #[test]
    fn micro_time_shape() {
        let t = micro_time();
        assert_eq!(t.len(), "2006-01-02T15:04:05.000000Z".len(), "{t}");
        assert!(t.ends_with('Z'));
    }
}
