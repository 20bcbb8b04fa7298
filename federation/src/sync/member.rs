//! The syncer's calls to one member, through the `kube` client its
//! kubeconfig gives: GET, server-side apply (field manager
//! [`super::FIELD_MANAGER`]), PUT, merge patch, DELETE, and list + watch
//! of the copies Skein manages (label selector on [`super::MANAGED_BY`]).
//! Objects are `serde_json::Value`s, so every kind goes the same way.
//!
//! Contract: every call ends within [`CALL_TIMEOUT`] ([`LIST_TIMEOUT`] for
//! a list; watches excepted),
//! never panics, and turns failures into a [`CallError`].

use skein_apiserver::status::ErrorKind;
use std::time::Duration;

use axum::http::{Method, Request};
use futures::StreamExt;
use futures::stream::BoxStream;
use serde_json::Value;

use skein_apiserver::registry::ResourceInfo;

/// How long one call may take.
pub const CALL_TIMEOUT: Duration = Duration::from_secs(10);

/// How long a list of every copy of a kind may take: thousands of objects
/// from a member that a federation restart has every syncer list at once.
/// A list that times out lets its kind's syncs run without the cache
/// (create-only applies the member refuses, then reads), so giving up
/// early costs more requests than waiting.
pub const LIST_TIMEOUT: Duration = Duration::from_secs(30);

/// A failed call to a member.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CallError {
    /// The member answered with an error status.
    #[error("{message} ({code} {reason})")]
    Api {
        /// The HTTP status code.
        code: u16,
        /// The Status reason (`AlreadyExists`, `Conflict`, `Invalid`).
        reason: String,
        /// The Status message.
        message: String,
    },
    /// The member could not be reached, or answered nonsense.
    #[error("{0}")]
    Transport(String),
}

impl CallError {
    /// What the member's answer means ([`ErrorKind`], from its code and
    /// reason); `None` when it did not answer.
    pub fn kind(&self) -> Option<ErrorKind> {
        match self {
            CallError::Api { code, reason, .. } => Some(ErrorKind::of(*code, reason)),
            CallError::Transport(_) => None,
        }
    }

    fn of(err: kube::Error) -> CallError {
        match err {
            kube::Error::Api(s) => CallError::Api {
                code: s.code,
                reason: s.reason.clone(),
                message: s.message.clone(),
            },
            other => CallError::Transport(skein_apiserver::member_client::chain(&other)),
        }
    }
}

/// One member's API, as the syncer uses it. Cheap to clone.
#[derive(Clone)]
pub struct MemberApi {
    client: kube::Client,
    /// Where each call's latency is recorded, and as which cluster.
    observer: Option<(std::sync::Arc<crate::metrics::FederationMetrics>, String)>,
}

/// A watch event on a member.
#[derive(Debug, Clone)]
pub enum MemberEvent {
    /// Added or modified.
    Applied(Value),
    /// Deleted (its last state).
    Deleted(Value),
    /// A bookmark or progress: the resourceVersion to resume from.
    Progress(String),
}

/// The verb of a request as the member's metrics name it: `APPLY` for a
/// server-side apply patch, `LIST` for a GET of a collection.
fn verb_of(req: &Request<Vec<u8>>) -> &'static str {
    match *req.method() {
        Method::GET
            if req
                .uri()
                .query()
                .is_some_and(|q| q.contains("labelSelector=")) =>
        {
            "LIST"
        }
        Method::GET => "GET",
        Method::PUT => "PUT",
        Method::DELETE => "DELETE",
        Method::POST => "POST",
        Method::PATCH
            if req
                .headers()
                .get("content-type")
                .is_some_and(|v| v.as_bytes() == b"application/apply-patch+yaml") =>
        {
            "APPLY"
        }
        Method::PATCH => "PATCH",
        _ => "OTHER",
    }
}

/// The REST path of `res` objects in `ns` (all namespaces when empty or
/// cluster-scoped), with `/name` when given.
pub fn path(res: &ResourceInfo, ns: &str, name: Option<&str>) -> String {
    let mut p = if res.group.is_empty() {
        format!("/api/{}", res.version)
    } else {
        format!("/apis/{}/{}", res.group, res.version)
    };
    if res.namespaced && !ns.is_empty() {
        p.push_str("/namespaces/");
        p.push_str(ns);
    }
    p.push('/');
    p.push_str(res.plural);
    if let Some(n) = name {
        p.push('/');
        p.push_str(n);
    }
    p
}

fn request(
    method: Method,
    uri: &str,
    content_type: Option<&str>,
    body: Vec<u8>,
) -> Result<Request<Vec<u8>>, CallError> {
    let mut b = Request::builder().method(method).uri(uri);
    if let Some(ct) = content_type {
        b = b.header("content-type", ct);
    }
    b.body(body)
        .map_err(|e| CallError::Transport(format!("building the request: {e}")))
}

impl MemberApi {
    /// The member behind `client`.
    pub fn new(client: kube::Client) -> MemberApi {
        MemberApi {
            client,
            observer: None,
        }
    }

    /// The same, recording every call (watches excepted) into `metrics`
    /// as `cluster`'s.
    pub fn observed(
        self,
        metrics: std::sync::Arc<crate::metrics::FederationMetrics>,
        cluster: &str,
    ) -> MemberApi {
        MemberApi {
            observer: Some((metrics, cluster.to_owned())),
            ..self
        }
    }

    async fn call(&self, req: Request<Vec<u8>>) -> Result<Value, CallError> {
        self.call_within(req, CALL_TIMEOUT).await
    }

    /// [`MemberApi::call`] with its own timeout.
    async fn call_within(
        &self,
        req: Request<Vec<u8>>,
        limit: Duration,
    ) -> Result<Value, CallError> {
        let verb = verb_of(&req);
        let started = std::time::Instant::now();
        let result = match tokio::time::timeout(limit, self.client.request::<Value>(req)).await {
            Ok(r) => r.map_err(CallError::of),
            Err(_) => Err(CallError::Transport(format!(
                "the member did not answer within {}s",
                limit.as_secs()
            ))),
        };
        if let Some((metrics, cluster)) = &self.observer {
            let code = match &result {
                Ok(_) => Some(200),
                Err(CallError::Api { code, .. }) => Some(*code),
                Err(CallError::Transport(_)) => None,
            };
            metrics.member_request(cluster, verb, code, started.elapsed());
        }
        result
    }

    /// The object, or `None` when the member has none.
    pub async fn get(
        &self,
        res: &ResourceInfo,
        ns: &str,
        name: &str,
    ) -> Result<Option<Value>, CallError> {
        let req = request(Method::GET, &path(res, ns, Some(name)), None, Vec::new())?;
        match self.call(req).await {
            Ok(v) => Ok(Some(v)),
            Err(e) if e.kind() == Some(ErrorKind::NotFound) => Ok(None),
            Err(e) => Err(e),
        }
    }

    /// Server-side apply of `body` (field manager `skein`; `force` takes
    /// fields other managers own). Returns the member's object.
    pub async fn apply(
        &self,
        res: &ResourceInfo,
        body: &Value,
        force: bool,
    ) -> Result<Value, CallError> {
        let ns = skein_apiserver::registry::object::namespace(body);
        let name = skein_apiserver::registry::object::name(body);
        let uri = format!(
            "{}?fieldManager={}{}",
            path(res, ns, Some(name)),
            super::FIELD_MANAGER,
            if force { "&force=true" } else { "" }
        );
        let bytes = serde_json::to_vec(body).map_err(|e| CallError::Transport(e.to_string()))?;
        self.call(request(
            Method::PATCH,
            &uri,
            Some("application/apply-patch+yaml"),
            bytes,
        )?)
        .await
    }

    /// Create-only server-side apply of `body`: the body names
    /// `guard_uid` (the federated object's uid, which no member object
    /// has) as its `metadata.uid`. A create takes no uid from its body, so
    /// a member without the object creates it as [`MemberApi::apply`]
    /// would; a member with one refuses the apply (uid is immutable: 422,
    /// or 409 as a precondition) and writes nothing. One request where
    /// a read and an apply were two.
    pub async fn apply_new(
        &self,
        res: &ResourceInfo,
        body: &Value,
        guard_uid: &str,
    ) -> Result<Value, CallError> {
        let mut guarded = body.clone();
        if let Some(m) = guarded.get_mut("metadata").and_then(Value::as_object_mut) {
            m.insert("uid".into(), Value::from(guard_uid));
        }
        self.apply(res, &guarded, false).await
    }

    /// PUT of `body` (which carries the resourceVersion it replaces).
    pub async fn replace(&self, res: &ResourceInfo, body: &Value) -> Result<Value, CallError> {
        let ns = skein_apiserver::registry::object::namespace(body);
        let name = skein_apiserver::registry::object::name(body);
        let uri = format!(
            "{}?fieldManager={}",
            path(res, ns, Some(name)),
            super::FIELD_MANAGER
        );
        let bytes = serde_json::to_vec(body).map_err(|e| CallError::Transport(e.to_string()))?;
        self.call(request(Method::PUT, &uri, Some("application/json"), bytes)?)
            .await
    }

    /// JSON merge patch.
    pub async fn merge_patch(
        &self,
        res: &ResourceInfo,
        ns: &str,
        name: &str,
        patch: &Value,
    ) -> Result<Value, CallError> {
        let uri = format!(
            "{}?fieldManager={}",
            path(res, ns, Some(name)),
            super::FIELD_MANAGER
        );
        let bytes = serde_json::to_vec(patch).map_err(|e| CallError::Transport(e.to_string()))?;
        self.call(request(
            Method::PATCH,
            &uri,
            Some("application/merge-patch+json"),
            bytes,
        )?)
        .await
    }

    /// DELETE (background propagation); a missing object is success.
    pub async fn delete(&self, res: &ResourceInfo, ns: &str, name: &str) -> Result<(), CallError> {
        let body =
            br#"{"kind":"DeleteOptions","apiVersion":"v1","propagationPolicy":"Background"}"#
                .to_vec();
        let req = request(
            Method::DELETE,
            &path(res, ns, Some(name)),
            Some("application/json"),
            body,
        )?;
        match self.call(req).await {
            Ok(_) => Ok(()),
            Err(e) if e.kind() == Some(ErrorKind::NotFound) => Ok(()),
            Err(e) => Err(e),
        }
    }

    /// Every object of `res` (all namespaces) matching `selector`, each
    /// with the list's `apiVersion` and `kind`, and the list's
    /// resourceVersion.
    pub async fn list(
        &self,
        res: &ResourceInfo,
        selector: &str,
    ) -> Result<(Vec<Value>, String), CallError> {
        let uri = format!(
            "{}?labelSelector={}",
            path(res, "", None),
            urlencode(selector)
        );
        let mut list = self
            .call_within(request(Method::GET, &uri, None, Vec::new())?, LIST_TIMEOUT)
            .await?;
        let rv = list
            .pointer("/metadata/resourceVersion")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_owned();
        let mut items = match list.get_mut("items").map(Value::take) {
            Some(Value::Array(items)) => items,
            _ => Vec::new(),
        };
        // A list's items carry no apiVersion and kind (as upstream): give
        // them the list's, so a listed copy compares equal to the rendered
        // one and to the same copy seen by a watch.
        for item in &mut items {
            if let Some(m) = item.as_object_mut() {
                m.entry("apiVersion")
                    .or_insert_with(|| Value::from(res.api_version));
                m.entry("kind").or_insert_with(|| Value::from(res.kind));
            }
        }
        Ok((items, rv))
    }

    /// Whether the member's current version of `res` (a list of at most
    /// one object matching `selector`) is below `rv`: its store went back
    /// (replaced while away). Unknown (no answer, versions not numbers)
    /// reads as not behind.
    pub async fn behind(&self, res: &ResourceInfo, selector: &str, rv: &str) -> bool {
        let uri = format!(
            "{}?labelSelector={}&limit=1",
            path(res, "", None),
            urlencode(selector)
        );
        let Ok(req) = request(Method::GET, &uri, None, Vec::new()) else {
            return false;
        };
        let Ok(list) = self.call(req).await else {
            return false;
        };
        let now = list
            .pointer("/metadata/resourceVersion")
            .and_then(Value::as_str)
            .and_then(|v| v.parse::<u64>().ok());
        matches!((now, rv.parse::<u64>().ok()), (Some(now), Some(ours)) if now < ours)
    }

    /// Watches `res` (all namespaces) matching `selector` from `rv`, with
    /// bookmarks. The stream ends when the member closes it.
    pub async fn watch(
        &self,
        res: &ResourceInfo,
        selector: &str,
        rv: &str,
    ) -> Result<BoxStream<'static, Result<MemberEvent, CallError>>, CallError> {
        let uri = format!(
            "{}?watch=true&allowWatchBookmarks=true&timeoutSeconds=290&labelSelector={}&resourceVersion={}",
            path(res, "", None),
            urlencode(selector),
            urlencode(rv)
        );
        let req = request(Method::GET, &uri, None, Vec::new())?;
        let events = tokio::time::timeout(CALL_TIMEOUT, self.client.request_events::<Value>(req))
            .await
            .map_err(|_| CallError::Transport("the member did not start the watch in time".into()))?
            .map_err(CallError::of)?;
        let events = StreamExt::map(
            events,
            |e: Result<kube::api::WatchEvent<Value>, kube::Error>| {
                e.map_err(CallError::of).and_then(|ev| match ev {
                    kube::api::WatchEvent::Added(o) | kube::api::WatchEvent::Modified(o) => {
                        Ok(MemberEvent::Applied(o))
                    }
                    kube::api::WatchEvent::Deleted(o) => Ok(MemberEvent::Deleted(o)),
                    kube::api::WatchEvent::Bookmark(b) => {
                        Ok(MemberEvent::Progress(b.metadata.resource_version))
                    }
                    kube::api::WatchEvent::Error(s) => Err(CallError::Api {
                        code: s.code,
                        reason: s.reason.clone(),
                        message: s.message.clone(),
                    }),
                })
            },
        );
        Ok(events.boxed())
    }
}

/// Percent-encodes a query value.
fn urlencode(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for b in s.bytes() {
        if b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.' | b'~') {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}
