//! Delegated authorization: asking the host cluster, by a
//! `SubjectAccessReview`, whether a request its aggregator sent may
//! proceed, as k8s.io/apiserver's delegating authorizer (every aggregated
//! API server's: metrics-server, the custom-metrics adapters) does.
//!
//! Contract:
//! - It decides only the requests a host's aggregator sends to the root
//!   path (`http/host_view.rs` says which); the caller never asks it about
//!   anything else, which keeps Skein's own `--authorization-mode`.
//! - The order is upstream's union: `system:masters` is allowed; a
//!   non-resource request to one of `--authorization-always-allow-paths`
//!   (`/healthz,/readyz,/livez`; a trailing `*` is a prefix) is allowed;
//!   everything else is a `SubjectAccessReview` (`authorization.k8s.io/v1`)
//!   posted to the host with the request's user, uid, groups, extra and
//!   resource or non-resource attributes.
//! - Answers are cached by the review's spec for
//!   `--authorization-webhook-cache-authorized-ttl` (allowed) and
//!   `…-unauthorized-ttl` (denied), 10 s each by default, at most
//!   [`CACHE_SIZE`] entries; specs larger than upstream's limit are never
//!   cached.
//! - A review the host cannot answer is an [`DelegationError::Review`]
//!   (the HTTP layer answers upstream's 500): each attempt has a 10 s
//!   timeout (upstream's `ClientTimeout`), and only the transient failures
//!   upstream's `DefaultShouldRetry` names (connection reset, 500, 504 and
//!   `Timeout`, 429, a `Retry-After`) are retried, with upstream's backoff
//!   (500 ms, ×1.5, 20% jitter, 5 attempts). A refused connection or an
//!   unreachable host fails at once or after the timeout, never hangs.

use std::collections::HashMap;
use std::path::Path;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use super::{Attributes, Decision, MASTERS};
use crate::config::DelegationConfig;

/// The most reviews kept (upstream's LRU size).
pub const CACHE_SIZE: usize = 8192;
/// Requests whose own attributes are this large are not cached (upstream's
/// `maxControlledAttrCacheSize`).
const MAX_CACHED_ATTRIBUTES: usize = 10_000;
/// One review's deadline (upstream's `ClientTimeout`).
pub const TIMEOUT: Duration = Duration::from_secs(10);
/// The review endpoint on the host.
const PATH: &str = "/apis/authorization.k8s.io/v1/subjectaccessreviews";

/// Why delegated authorization could not be set up or could not decide.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum DelegationError {
    /// `--authorization-kubeconfig` (or the in-cluster configuration) is
    /// unusable: a start-up error.
    #[error("failed to get delegated authorization kubeconfig: {0}")]
    Config(String),
    /// The host did not answer a review (unreachable, timed out, refused
    /// the reviewer itself, or answered nonsense).
    #[error("{0}")]
    Review(String),
}

/// Upstream's webhook retry backoff.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Backoff {
    /// The first pause.
    pub initial: Duration,
    /// Each pause is this times the previous one.
    pub factor: f64,
    /// Up to this fraction is added at random to each pause.
    pub jitter: f64,
    /// Attempts in all.
    pub steps: u32,
}

impl Default for Backoff {
    fn default() -> Self {
        Backoff {
            initial: Duration::from_millis(500),
            factor: 1.5,
            jitter: 0.2,
            steps: 5,
        }
    }
}

impl Backoff {
    /// The pause before attempt `n + 1` (`n` from 0), before jitter.
    pub fn pause(&self, n: u32) -> Duration {
        let exponent = i32::try_from(n).unwrap_or(i32::MAX);
        self.initial.mul_f64(self.factor.powi(exponent))
    }
}

/// The host's reviewer: a client for its API and the cache of answers.
pub struct Delegated {
    client: kube::Client,
    /// The host's address, for error messages.
    server: String,
    authorized_ttl: Duration,
    unauthorized_ttl: Duration,
    always_allow_paths: Vec<String>,
    backoff: Backoff,
    timeout: Duration,
    cache: Mutex<ReviewCache>,
}

impl std::fmt::Debug for Delegated {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Delegated")
            .field("server", &self.server)
            .field("authorized_ttl", &self.authorized_ttl)
            .field("unauthorized_ttl", &self.unauthorized_ttl)
            .field("always_allow_paths", &self.always_allow_paths)
            .finish()
    }
}

impl Delegated {
    /// The reviewer the flags describe: `--authorization-kubeconfig`, else
    /// the in-cluster configuration when `in_cluster_default` (the server
    /// takes host requests at all) and Skein runs in a Pod, else `None`.
    /// An unreadable kubeconfig or a broken in-cluster configuration is an
    /// error, so a misconfigured server fails at start.
    pub async fn from_config(
        flags: &DelegationConfig,
        in_cluster_default: bool,
    ) -> Result<Option<Delegated>, DelegationError> {
        let config = match &flags.authorization_kubeconfig {
            Some(path) => from_kubeconfig(path).await?,
            None if in_cluster_default && in_a_pod() => {
                kube::Config::incluster().map_err(|e| DelegationError::Config(error_chain(&e)))?
            }
            None => return Ok(None),
        };
        Self::with_config(config, flags, Backoff::default(), TIMEOUT).map(Some)
    }

    /// A reviewer over an explicit client configuration.
    pub fn with_config(
        mut config: kube::Config,
        flags: &DelegationConfig,
        backoff: Backoff,
        timeout: Duration,
    ) -> Result<Delegated, DelegationError> {
        config.connect_timeout = Some(timeout);
        config.read_timeout = Some(timeout);
        config.write_timeout = Some(timeout);
        let server = config.cluster_url.to_string();
        let client =
            kube::Client::try_from(config).map_err(|e| DelegationError::Config(error_chain(&e)))?;
        Ok(Delegated {
            client,
            server: server.trim_end_matches('/').to_string(),
            authorized_ttl: flags.authorization_webhook_cache_authorized_ttl,
            unauthorized_ttl: flags.authorization_webhook_cache_unauthorized_ttl,
            always_allow_paths: flags.authorization_always_allow_paths.clone(),
            backoff,
            timeout,
            cache: Mutex::new(ReviewCache::default()),
        })
    }

    /// The host's address.
    pub fn server(&self) -> &str {
        &self.server
    }

    /// Decides `attrs` (see the module documentation); `uid` is the
    /// user's uid, when the authenticator knows one.
    pub async fn authorize(
        &self,
        attrs: &Attributes,
        uid: Option<&str>,
    ) -> Result<Decision, DelegationError> {
        if attrs.user.groups.iter().any(|g| g == MASTERS) {
            return Ok(Decision {
                allowed: true,
                reason: String::new(),
            });
        }
        if !attrs.resource_request && always_allowed(&self.always_allow_paths, &attrs.path) {
            return Ok(Decision {
                allowed: true,
                reason: String::new(),
            });
        }
        let spec = review_spec(attrs, uid);
        let key = spec.to_string();
        let now = Instant::now();
        if let Some(status) = self.cache_lock().get(&key, now) {
            return decision(&status);
        }
        let status = self.review(&spec).await?;
        if controlled_size(attrs) < MAX_CACHED_ATTRIBUTES {
            let ttl = if status.allowed {
                self.authorized_ttl
            } else {
                self.unauthorized_ttl
            };
            self.cache_lock()
                .put(key, status.clone(), Instant::now() + ttl);
        }
        decision(&status)
    }

    fn cache_lock(&self) -> std::sync::MutexGuard<'_, ReviewCache> {
        // A panic while holding the lock leaves a usable map.
        self.cache
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Posts the review, retrying transient failures with the backoff.
    async fn review(&self, spec: &Value) -> Result<ReviewStatus, DelegationError> {
        let body = json!({
            "kind": "SubjectAccessReview",
            "apiVersion": "authorization.k8s.io/v1",
            "metadata": {"creationTimestamp": null},
            "spec": spec,
            "status": {"allowed": false},
        })
        .to_string()
        .into_bytes();
        let steps = self.backoff.steps.max(1);
        let mut attempt = 0;
        loop {
            let request = axum::http::Request::post(format!(
                "{PATH}?timeout={}s",
                self.timeout.as_secs().max(1)
            ))
            .header(axum::http::header::CONTENT_TYPE, "application/json")
            .header(axum::http::header::ACCEPT, "application/json")
            .body(body.clone())
            .map_err(|e| DelegationError::Review(e.to_string()))?;
            let answer =
                tokio::time::timeout(self.timeout, self.client.request::<Value>(request)).await;
            let error = match answer {
                Ok(Ok(review)) => return ReviewStatus::from_review(&review),
                Ok(Err(e)) => e,
                Err(_) => return Err(self.failed(DEADLINE)),
            };
            attempt += 1;
            if timed_out(&error) {
                return Err(self.failed(DEADLINE));
            }
            if attempt >= steps || !should_retry(&error) {
                return Err(self.failed(&error_chain(&error)));
            }
            let pause = self.backoff.pause(attempt - 1);
            let jitter = pause.mul_f64(self.backoff.jitter * jitter_fraction());
            tracing::debug!(error = %error_chain(&error), ?pause, "retrying a SubjectAccessReview");
            tokio::time::sleep(pause + jitter).await;
        }
    }

    /// Go's `*url.Error` text for a failed POST to the review endpoint.
    fn failed(&self, cause: &str) -> DelegationError {
        tracing::error!(server = %self.server, error = cause, "Failed to make webhook authorizer request");
        DelegationError::Review(format!(
            "Post \"{}{PATH}?timeout={}s\": {cause}",
            self.server,
            self.timeout.as_secs().max(1)
        ))
    }
}

async fn from_kubeconfig(path: &Path) -> Result<kube::Config, DelegationError> {
    let kubeconfig = kube::config::Kubeconfig::read_from(path)
        .map_err(|e| DelegationError::Config(format!("{}: {}", path.display(), error_chain(&e))))?;
    kube::Config::from_custom_kubeconfig(kubeconfig, &kube::config::KubeConfigOptions::default())
        .await
        .map_err(|e| DelegationError::Config(format!("{}: {}", path.display(), error_chain(&e))))
}

/// Whether this process runs in a Pod (client-go's `InClusterConfig`
/// test: both service variables set).
fn in_a_pod() -> bool {
    std::env::var_os("KUBERNETES_SERVICE_HOST").is_some_and(|v| !v.is_empty())
        && std::env::var_os("KUBERNETES_SERVICE_PORT").is_some_and(|v| !v.is_empty())
}

/// A pseudo-random fraction in [0, 1) for the backoff's jitter.
fn jitter_fraction() -> f64 {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.subsec_nanos())
        .unwrap_or(0);
    f64::from(nanos % 1000) / 1000.0
}

/// An error and its sources, joined with `: ` (what Go's wrapped errors
/// print).
fn error_chain(e: &dyn std::error::Error) -> String {
    let mut text = e.to_string();
    let mut source = e.source();
    while let Some(s) = source {
        let part = s.to_string();
        if !text.contains(&part) {
            text.push_str(": ");
            text.push_str(&part);
        }
        source = s.source();
    }
    text
}

/// Go's text for a request that ran out of its client timeout.
const DEADLINE: &str = "context deadline exceeded (Client.Timeout exceeded while awaiting headers)";

/// Whether `e` is the client's own timeout (connect, read or write).
fn timed_out(e: &kube::Error) -> bool {
    let mut source: Option<&dyn std::error::Error> = Some(e);
    while let Some(s) = source {
        if s.is::<tokio::time::error::Elapsed>()
            || s.downcast_ref::<std::io::Error>()
                .is_some_and(|io| io.kind() == std::io::ErrorKind::TimedOut)
        {
            return true;
        }
        source = s.source();
    }
    false
}

/// Upstream's `DefaultShouldRetry`: a reset connection, a 500 or 504 (or
/// reason `Timeout`), a 429, or an answer asking for a delay.
fn should_retry(e: &kube::Error) -> bool {
    match e {
        kube::Error::Api(status) => {
            matches!(status.code, 429 | 500 | 504)
                || matches!(
                    status.reason.as_str(),
                    "Timeout" | "InternalError" | "TooManyRequests"
                )
                || status
                    .details
                    .as_ref()
                    .is_some_and(|d| d.retry_after_seconds > 0)
        }
        other => {
            let mut source: Option<&dyn std::error::Error> = Some(other);
            while let Some(s) = source {
                if let Some(io) = s.downcast_ref::<std::io::Error>()
                    && io.kind() == std::io::ErrorKind::ConnectionReset
                {
                    return true;
                }
                source = s.source();
            }
            false
        }
    }
}

/// Whether a non-resource `path` is one of `--authorization-always-allow-
/// paths` (upstream's path authorizer: exact, or a prefix before `*`).
pub fn always_allowed(paths: &[String], path: &str) -> bool {
    paths.iter().any(|p| match p.strip_suffix('*') {
        Some(prefix) => path.starts_with(prefix),
        None => p == path,
    })
}

/// The `SubjectAccessReviewSpec` of `attrs` (upstream's webhook
/// authorizer: resource or non-resource attributes, never both).
pub fn review_spec(attrs: &Attributes, uid: Option<&str>) -> Value {
    let mut spec = serde_json::Map::new();
    if attrs.resource_request {
        spec.insert(
            "resourceAttributes".into(),
            json!({
                "namespace": attrs.namespace,
                "verb": attrs.verb,
                "group": attrs.api_group,
                "version": attrs.api_version,
                "resource": attrs.resource,
                "subresource": attrs.subresource,
                "name": attrs.name,
            }),
        );
    } else {
        spec.insert(
            "nonResourceAttributes".into(),
            json!({"path": attrs.path, "verb": attrs.verb}),
        );
    }
    spec.insert("user".into(), json!(attrs.user.name));
    if !attrs.user.groups.is_empty() {
        spec.insert("groups".into(), json!(attrs.user.groups));
    }
    if !attrs.user.extra.is_empty() {
        spec.insert("extra".into(), json!(attrs.user.extra));
    }
    if let Some(uid) = uid.filter(|u| !u.is_empty()) {
        spec.insert("uid".into(), json!(uid));
    }
    Value::Object(spec)
}

/// The length of what the requester controls (upstream's `shouldCache`).
fn controlled_size(attrs: &Attributes) -> usize {
    [
        &attrs.namespace,
        &attrs.verb,
        &attrs.api_group,
        &attrs.api_version,
        &attrs.resource,
        &attrs.subresource,
        &attrs.name,
        &attrs.path,
    ]
    .iter()
    .map(|s| s.len())
    .sum()
}

/// A review's answer.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ReviewStatus {
    /// `status.allowed`.
    pub allowed: bool,
    /// `status.denied`.
    pub denied: bool,
    /// `status.reason`.
    pub reason: String,
}

impl ReviewStatus {
    /// The status of a `SubjectAccessReview` the host answered.
    pub fn from_review(review: &Value) -> Result<ReviewStatus, DelegationError> {
        if review.get("kind").and_then(Value::as_str) != Some("SubjectAccessReview") {
            return Err(DelegationError::Review(format!(
                "the host answered a SubjectAccessReview with {}",
                review
                    .get("kind")
                    .and_then(Value::as_str)
                    .map_or_else(|| "no kind".to_string(), |k| format!("a {k}"))
            )));
        }
        let status = review.get("status").unwrap_or(&Value::Null);
        Ok(ReviewStatus {
            allowed: status.get("allowed").and_then(Value::as_bool) == Some(true),
            denied: status.get("denied").and_then(Value::as_bool) == Some(true),
            reason: status
                .get("reason")
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_string(),
        })
    }
}

/// Upstream's reading of a review: both allowed and denied is an error;
/// neither is "no opinion", which the delegating union turns into a
/// denial.
pub fn decision(status: &ReviewStatus) -> Result<Decision, DelegationError> {
    if status.allowed && status.denied {
        return Err(DelegationError::Review(
            "webhook subject access review returned both allow and deny response".into(),
        ));
    }
    Ok(Decision {
        allowed: status.allowed,
        reason: status.reason.clone(),
    })
}

/// Answers by review spec, each until its deadline.
#[derive(Debug, Default)]
pub struct ReviewCache {
    entries: HashMap<String, (ReviewStatus, Instant)>,
}

impl ReviewCache {
    /// The cached answer for `key`, if it has not expired at `now`.
    pub fn get(&mut self, key: &str, now: Instant) -> Option<ReviewStatus> {
        match self.entries.get(key) {
            Some((status, until)) if *until > now => Some(status.clone()),
            Some(_) => {
                self.entries.remove(key);
                None
            }
            None => None,
        }
    }

    /// Keeps `status` for `key` until `until`. When full, expired entries
    /// go first, then the one closest to expiring.
    pub fn put(&mut self, key: String, status: ReviewStatus, until: Instant) {
        if self.entries.len() >= CACHE_SIZE && !self.entries.contains_key(&key) {
            let now = Instant::now();
            self.entries.retain(|_, (_, u)| *u > now);
            if self.entries.len() >= CACHE_SIZE
                && let Some(first) = self
                    .entries
                    .iter()
                    .min_by_key(|(_, (_, u))| *u)
                    .map(|(k, _)| k.clone())
            {
                self.entries.remove(&first);
            }
        }
        self.entries.insert(key, (status, until));
    }

    /// How many answers are kept.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// Whether nothing is kept.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use axum::http::Method;
    use skein_admission::UserInfo;

    use super::*;

    fn user(name: &str, groups: &[&str]) -> UserInfo {
        UserInfo {
            name: name.into(),
            uid: None,
            groups: groups.iter().map(|g| (*g).to_string()).collect(),
            extra: Default::default(),
        }
    }

    #[test]
    fn resource_requests_review_their_resource_attributes() {
        let attrs = Attributes::from_request(
            user(
                "system:serviceaccount:kube-system:generic-garbage-collector",
                &["system:serviceaccounts", "system:authenticated"],
            ),
            &Method::GET,
            "/apis/federation.skein.io/v1alpha1/federations",
            Some("watch=true"),
        );
        let spec = review_spec(&attrs, Some("u-1"));
        assert_eq!(
            spec,
            json!({
                "resourceAttributes": {"namespace": "", "verb": "watch", "group": "federation.skein.io",
                    "version": "v1alpha1", "resource": "federations", "subresource": "", "name": ""},
                "user": "system:serviceaccount:kube-system:generic-garbage-collector",
                "groups": ["system:serviceaccounts", "system:authenticated"],
                "uid": "u-1",
            })
        );
    }

    #[test]
    fn non_resource_requests_review_path_and_verb() {
        let attrs = Attributes::from_request(
            user("system:aggregator", &[]),
            &Method::GET,
            "/openapi/v2",
            None,
        );
        assert_eq!(
            review_spec(&attrs, None),
            json!({"nonResourceAttributes": {"path": "/openapi/v2", "verb": "get"}, "user": "system:aggregator"})
        );
    }

    #[test]
    fn always_allow_paths_are_exact_or_prefixes() {
        let paths = vec!["/healthz".to_string(), "/debug/*".to_string()];
        assert!(always_allowed(&paths, "/healthz"));
        assert!(!always_allowed(&paths, "/healthz/etcd"));
        assert!(always_allowed(&paths, "/debug/pprof"));
        assert!(!always_allowed(&paths, "/apis"));
    }

    #[test]
    fn answers_read_as_upstream() {
        let allowed = ReviewStatus::from_review(&json!({"kind": "SubjectAccessReview",
            "status": {"allowed": true, "reason": "RBAC: allowed by ClusterRoleBinding \"x\""}}))
        .expect("a review");
        assert_eq!(
            decision(&allowed),
            Ok(Decision {
                allowed: true,
                reason: "RBAC: allowed by ClusterRoleBinding \"x\"".into()
            })
        );
        let none = ReviewStatus::from_review(
            &json!({"kind": "SubjectAccessReview", "status": {"allowed": false}}),
        )
        .expect("a review");
        assert_eq!(decision(&none).map(|d| d.allowed), Ok(false));
        let both = ReviewStatus {
            allowed: true,
            denied: true,
            reason: String::new(),
        };
        assert!(decision(&both).is_err());
        let status = ReviewStatus::from_review(&json!({"kind": "Status", "code": 403}));
        assert_eq!(
            status,
            Err(DelegationError::Review(
                "the host answered a SubjectAccessReview with a Status".into()
            ))
        );
    }

    #[test]
    fn the_cache_forgets_at_the_deadline_and_stays_bounded() {
        let mut cache = ReviewCache::default();
        let now = Instant::now();
        let yes = ReviewStatus {
            allowed: true,
            ..ReviewStatus::default()
        };
        cache.put("a".into(), yes.clone(), now + Duration::from_secs(10));
        assert_eq!(
            cache.get("a", now + Duration::from_secs(9)),
            Some(yes.clone())
        );
        assert_eq!(cache.get("a", now + Duration::from_secs(10)), None);
        assert!(cache.is_empty());
        for i in 0..CACHE_SIZE + 10 {
            cache.put(
                format!("k{i}"),
                yes.clone(),
                now + Duration::from_secs(60) + Duration::from_millis(i as u64),
            );
        }
        assert_eq!(cache.len(), CACHE_SIZE);
        // The entries closest to expiring went first.
        assert_eq!(cache.get("k0", now), None);
        assert!(cache.get(&format!("k{}", CACHE_SIZE + 9), now).is_some());
    }

    #[test]
    fn the_backoff_is_upstreams() {
        let b = Backoff::default();
        let pauses: Vec<u128> = (0..4).map(|n| b.pause(n).as_millis()).collect();
        assert_eq!(pauses, vec![500, 750, 1125, 1687]);
    }

    #[test]
    fn retries_only_transient_failures() {
        let status = |code: u16, reason: &str| {
            kube::Error::Api(Box::new(kube::core::Status {
                code,
                reason: reason.into(),
                ..Default::default()
            }))
        };
        assert!(should_retry(&status(500, "InternalError")));
        assert!(should_retry(&status(429, "TooManyRequests")));
        assert!(should_retry(&status(504, "Timeout")));
        assert!(!should_retry(&status(403, "Forbidden")));
        assert!(!should_retry(&status(401, "Unauthorized")));
        let reset =
            kube::Error::ReadEvents(std::io::Error::from(std::io::ErrorKind::ConnectionReset));
        assert!(should_retry(&reset));
        let refused =
            kube::Error::ReadEvents(std::io::Error::from(std::io::ErrorKind::ConnectionRefused));
        assert!(!should_retry(&refused));
    }
}
