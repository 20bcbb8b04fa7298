//! The access log: one `tracing` event per request at INFO, target
//! [`TARGET`], with upstream's httplog fields (`verb` as upstream reports
//! it, `URI`, `latency`, `userAgent`, `srcIP`, `resp`) plus `user`:
//!
//! ```text
//! INFO skein::access: HTTP verb="LIST" URI="/api/v1/namespaces/default/pods?limit=500"
//!     user="skein-admin" latency=1.9ms userAgent="kubectl/v1.35.2 (linux/amd64) kubernetes/…"
//!     srcIP=127.0.0.1:40312 resp=200
//! ```
//!
//! Switched off with `skein serve --access-log=false` (the layer is then
//! not installed at all), or with a log filter such as
//! `RUST_LOG=info,skein::access=off`. `latency` is the time to the
//! response head, so a watch is logged when it starts, with `resp=200`
//! (upstream logs it when it ends; its whole duration is in the metrics).
//!
//! Lines go through `crate::log_writer` (a buffered background writer), so
//! the request path pays for formatting and a channel send, not a write to
//! stderr.
//!
//! `user` and `verb` come from the metrics layer inside authentication
//! ([`super::metrics::Observed`]); a request that never reached it (a 403,
//! a request forwarded to an APIService) names the authenticated user
//! ([`super::authn::Authenticated`]); a request rejected with 401 has no
//! user, and a verb computed here.

use std::time::Instant;

use axum::extract::{ConnectInfo, Request};
use axum::http::header;
use axum::middleware::Next;
use axum::response::Response;

use super::metrics::{Observed, verb_of};

/// The `tracing` target of access-log events.
pub const TARGET: &str = "skein::access";

/// Request extension: the access log is on for this request (its layer,
/// [`log`], is installed unless `--access-log=false`). Inner layers keep
/// what it prints only when they see it.
#[derive(Clone, Copy, Debug)]
pub struct Enabled;

/// Whether the access log is on for `req`.
pub fn enabled<B>(req: &axum::http::Request<B>) -> bool {
    req.extensions().get::<Enabled>().is_some()
}

/// Middleware (outermost): logs one line per request once the response
/// head is ready. Its state is the server's [`crate::instance::Instance`]
/// (one `Arc` cloned per request, not the whole `AppState`).
pub async fn log(
    axum::extract::State(instance): axum::extract::State<std::sync::Arc<crate::instance::Instance>>,
    mut req: Request,
    next: Next,
) -> Response {
    if !tracing::enabled!(target: TARGET, tracing::Level::INFO) {
        return next.run(req).await;
    }
    req.extensions_mut().insert(Enabled);
    let start = Instant::now();
    let method = req.method().clone();
    let uri = req.uri().clone();
    let agent = req.headers().get(header::USER_AGENT).cloned();
    let peer = req
        .extensions()
        .get::<ConnectInfo<std::net::SocketAddr>>()
        .map(|c| c.0);
    let response = next.run(req).await;
    let latency = start.elapsed();
    let observed = response.extensions().get::<Observed>();
    let verb = observed.map_or_else(
        || verb_of(instance.resources(), &method, uri.path(), uri.query(), None),
        |o| o.verb,
    );
    // The metrics layer's user is the one the handlers saw (impersonated
    // or not); a request refused or forwarded before it has the
    // authenticated one.
    let user = observed
        .and_then(|o| o.user.as_deref())
        .or_else(|| {
            response
                .extensions()
                .get::<super::authn::Authenticated>()
                .map(|a| a.0.as_str())
        })
        .unwrap_or("");
    let agent = agent.as_ref().and_then(|a| a.to_str().ok()).unwrap_or("");
    let uri = uri.path_and_query().map_or("/", |p| p.as_str());
    match peer {
        Some(peer) => tracing::info!(
            target: TARGET,
            verb,
            URI = uri,
            user,
            ?latency,
            userAgent = agent,
            srcIP = %peer,
            resp = response.status().as_u16(),
            "HTTP"
        ),
        None => tracing::info!(
            target: TARGET,
            verb,
            URI = uri,
            user,
            ?latency,
            userAgent = agent,
            resp = response.status().as_u16(),
            "HTTP"
        ),
    }
    response
}
