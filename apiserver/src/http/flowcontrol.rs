//! The API priority and fairness filter (upstream's
//! `WithPriorityAndFairness`), between impersonation and authorization:
//! it classifies the request's (impersonated) user and target
//! ([`crate::flowcontrol`]), then runs it in a seat, holds it in a queue,
//! or answers 429.
//!
//! - Requests without a user (public paths before authentication found
//!   one) and long-running requests other than watches (`exec`, `attach`,
//!   `portforward`, `log`, `proxy`, as upstream's long-running check) are
//!   not limited.
//! - A watch holds its seat only until its response head is ready, not
//!   while its events stream (upstream releases it after the initial
//!   phase); every other request until its handler returns.
//! - Every classified response carries `X-Kubernetes-PF-FlowSchema-UID`
//!   and `X-Kubernetes-PF-PriorityLevel-UID`.
//! - A rejected request gets 429 with `Retry-After: 1` and a
//!   `metav1.Status` (reason `TooManyRequests`, upstream's message;
//!   upstream writes the message as plain text, Skein keeps its rule that
//!   every error body is a Status).

use std::sync::Arc;

use axum::extract::{Request, State};
use axum::http::{HeaderName, HeaderValue, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};

use super::authn::UserInfo;
use crate::authz::attributes::Target;
use crate::flowcontrol::QUEUE_WAIT;
use crate::instance::Instance;
use crate::status::ApiError;

/// `X-Kubernetes-PF-FlowSchema-UID`.
pub const FLOW_SCHEMA_UID: HeaderName = HeaderName::from_static("x-kubernetes-pf-flowschema-uid");

/// `X-Kubernetes-PF-PriorityLevel-UID`.
pub const PRIORITY_LEVEL_UID: HeaderName =
    HeaderName::from_static("x-kubernetes-pf-prioritylevel-uid");

/// Upstream's message.
pub const TOO_MANY: &str = "Too many requests, please try again later.";

/// Subresources upstream treats as long-running.
const LONG_RUNNING: &[&str] = &["attach", "exec", "proxy", "log", "portforward"];

/// Middleware: see the module documentation.
pub async fn filter(State(instance): State<Arc<Instance>>, req: Request, next: Next) -> Response {
    let fc = instance.flowcontrol();
    if !fc.is_enabled() {
        return next.run(req).await;
    }
    let decision = {
        let Some(user) = req.extensions().get::<UserInfo>() else {
            return next.run(req).await;
        };
        let path = super::authz::served_path(&req);
        let target = Target::parse(req.method(), path, req.uri().query());
        if target.resource_request && LONG_RUNNING.contains(&target.subresource) {
            return next.run(req).await;
        }
        match fc.begin(&target, user) {
            Some(d) => d,
            None => return next.run(req).await,
        }
    };
    let (fs, pl) = (
        decision.flow_schema_uid.clone(),
        decision.priority_level_uid.clone(),
    );
    let mut response = match decision.admit(QUEUE_WAIT).await {
        Ok(seat) => {
            let response = next.run(req).await;
            drop(seat);
            response
        }
        Err(_) => {
            let mut r = ApiError::too_many_requests(TOO_MANY, 1).into_response();
            r.headers_mut()
                .insert(header::RETRY_AFTER, HeaderValue::from_static("1"));
            r
        }
    };
    let headers = response.headers_mut();
    if let Some(fs) = fs {
        headers.insert(FLOW_SCHEMA_UID, fs);
    }
    if let Some(pl) = pl {
        headers.insert(PRIORITY_LEVEL_UID, pl);
    }
    response
}
