//! `/healthz`, `/livez` and `/readyz`, answered the way kube-apiserver does.
//!
//! Each endpoint runs named checks. Plain success is `200 ok`. With
//! `?verbose`, or on any failure (then with status 500), the body lists
//! every check:
//!
//! ```text
//! [+]ping ok
//! [-]etcd failed: reason withheld
//! readyz check failed
//! ```
//!
//! Failure reasons are withheld from the (unauthenticated) client and
//! logged instead. `?exclude=<check>` skips a check, and
//! `/<endpoint>/<check>` runs a single one (this needs authentication,
//! as in kube).

use std::fmt::Write;
use std::time::Duration;

use axum::extract::State;
use axum::http::{StatusCode, Uri, header};
use axum::response::{IntoResponse, Response};

use super::AppState;
use super::status::ApiError;

/// How long the storage check may take before it counts as failed.
pub const STORE_CHECK_TIMEOUT: Duration = Duration::from_secs(2);

/// The three health endpoints.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Endpoint {
    /// `/healthz` (deprecated in kube, still used by tools).
    Healthz,
    /// `/livez`: restart me if this fails.
    Livez,
    /// `/readyz`: send me traffic only if this passes.
    Readyz,
}

impl Endpoint {
    fn name(self) -> &'static str {
        match self {
            Endpoint::Healthz => "healthz",
            Endpoint::Livez => "livez",
            Endpoint::Readyz => "readyz",
        }
    }

    fn checks(self) -> &'static [Check] {
        match self {
            Endpoint::Healthz | Endpoint::Livez => &[Check::Ping, Check::Etcd],
            Endpoint::Readyz => &[Check::Ping, Check::Etcd, Check::Shutdown],
        }
    }
}

/// One named check.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Check {
    /// Always passes: the server answers.
    Ping,
    /// The store answers `current_revision` in time. Named `etcd` as in
    /// kube, whichever backend is in use.
    Etcd,
    /// Fails once shutdown has begun.
    Shutdown,
}

impl Check {
    fn name(self) -> &'static str {
        match self {
            Check::Ping => "ping",
            Check::Etcd => "etcd",
            Check::Shutdown => "shutdown",
        }
    }

    /// `Err(reason)` when the check fails.
    async fn run(self, state: &AppState) -> Result<(), String> {
        match self {
            Check::Ping => Ok(()),
            Check::Etcd => {
                match tokio::time::timeout(STORE_CHECK_TIMEOUT, state.store.current_revision())
                    .await
                {
                    Ok(Ok(_)) => Ok(()),
                    Ok(Err(e)) => Err(e.to_string()),
                    Err(_) => Err(format!("no answer within {STORE_CHECK_TIMEOUT:?}")),
                }
            }
            Check::Shutdown if state.is_shutting_down() => {
                Err("the server is shutting down".to_string())
            }
            Check::Shutdown => Ok(()),
        }
    }
}

/// Query flags: `verbose` (present or not) and `exclude` (repeatable).
fn parse_query(query: Option<&str>) -> (bool, Vec<String>) {
    let mut verbose = false;
    let mut exclude = Vec::new();
    for pair in query.unwrap_or("").split('&').filter(|p| !p.is_empty()) {
        let (key, value) = pair.split_once('=').unwrap_or((pair, ""));
        match key {
            "verbose" => verbose = true,
            "exclude" => exclude.push(value.to_string()),
            _ => {}
        }
    }
    (verbose, exclude)
}

fn text(code: StatusCode, body: String) -> Response {
    (
        code,
        [
            (header::CONTENT_TYPE, "text/plain; charset=utf-8"),
            (header::X_CONTENT_TYPE_OPTIONS, "nosniff"),
        ],
        body,
    )
        .into_response()
}

/// Runs the endpoint's checks (minus excluded ones) and renders the report.
pub async fn report(state: &AppState, endpoint: Endpoint, uri: &Uri) -> Response {
    let (verbose, exclude) = parse_query(uri.query());
    let mut body = String::new();
    let mut failed = false;
    for check in endpoint.checks() {
        if exclude.iter().any(|e| e == check.name()) {
            let _ = writeln!(body, "[+]{} excluded: ok", check.name());
            continue;
        }
        match check.run(state).await {
            Ok(()) => {
                let _ = writeln!(body, "[+]{} ok", check.name());
            }
            Err(reason) => {
                failed = true;
                tracing::warn!(endpoint = endpoint.name(), check = check.name(), %reason, "health check failed");
                let _ = writeln!(body, "[-]{} failed: reason withheld", check.name());
            }
        }
    }
    if failed {
        let _ = writeln!(body, "{} check failed", endpoint.name());
        text(StatusCode::INTERNAL_SERVER_ERROR, body)
    } else if verbose {
        let _ = writeln!(body, "{} check passed", endpoint.name());
        text(StatusCode::OK, body)
    } else {
        text(StatusCode::OK, "ok".to_string())
    }
}

/// `/<endpoint>/<check>`: a single check, `ok` or 500.
pub async fn single(state: &AppState, endpoint: Endpoint, uri: &Uri) -> Response {
    let wanted = uri.path().rsplit('/').next().unwrap_or("");
    let Some(check) = endpoint.checks().iter().find(|c| c.name() == wanted) else {
        return ApiError::path_not_found().into_response();
    };
    match check.run(state).await {
        Ok(()) => text(StatusCode::OK, "ok".to_string()),
        Err(reason) => {
            tracing::warn!(endpoint = endpoint.name(), check = check.name(), %reason, "health check failed");
            text(
                StatusCode::INTERNAL_SERVER_ERROR,
                format!("internal server error: {} check failed\n", check.name()),
            )
        }
    }
}

macro_rules! handlers {
    ($($all:ident, $one:ident => $endpoint:expr;)*) => {$(
        /// The endpoint's handler.
        pub async fn $all(State(state): State<AppState>, uri: Uri) -> Response {
            report(&state, $endpoint, &uri).await
        }
        /// The endpoint's single-check handler.
        pub async fn $one(State(state): State<AppState>, uri: Uri) -> Response {
            single(&state, $endpoint, &uri).await
        }
    )*};
}

handlers! {
    healthz, healthz_check => Endpoint::Healthz;
    livez, livez_check => Endpoint::Livez;
    readyz, readyz_check => Endpoint::Readyz;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn query_flags() {
        assert_eq!(parse_query(None), (false, vec![]));
        assert_eq!(parse_query(Some("verbose")), (true, vec![]));
        assert_eq!(
            parse_query(Some("verbose=1&exclude=etcd&exclude=ping")),
            (true, vec!["etcd".to_string(), "ping".to_string()])
        );
    }
}
