//! `skein join`'s check that a member answers with the credentials it will
//! store: `/version` (reachable, TLS trusted), `/readyz` (ready), then
//! `/api` (which needs an authenticated user: a public path would let bad
//! credentials through, as anonymous requests).
//!
//! Messages are one line: `cannot reach member "eu-1" at https://…: <why>`,
//! `member "eu-1" rejected the credentials: Unauthorized`.

use std::time::Duration;

use axum::http::{Method, Request};

use super::federation::error_chain;
use super::report::one_line;
use skein_apiserver::member_client::credentials;

/// How long each check may take.
const CHECK_TIMEOUT: Duration = Duration::from_secs(10);

/// What a request to the member ended with.
enum Answer {
    /// 2xx with this body.
    Ok(String),
    /// An HTTP error answer.
    Status(u16, String),
}

/// Checks that the member `name` answers the kubeconfig `text` (already
/// checked by [`credentials::parse`]) at `server`; returns its
/// `gitVersion`.
///
/// # Errors
///
/// A one-line message saying why it does not.
pub async fn check(name: &str, text: &str, server: &str) -> Result<String, String> {
    let mut config = credentials::config(text, None)
        .await
        .map_err(|e| format!("the member's kubeconfig cannot be used: {e}"))?;
    config.connect_timeout = Some(CHECK_TIMEOUT);
    config.read_timeout = Some(CHECK_TIMEOUT);
    config.default_retry = false;
    let client = kube::Client::try_from(config).map_err(|e| {
        format!(
            "the member's kubeconfig cannot be used: {}",
            error_chain(&e)
        )
    })?;
    let get = |path: &'static str| {
        let client = client.clone();
        async move {
            let request = Request::builder()
                .method(Method::GET)
                .uri(path)
                .body(Vec::new())
                .map_err(|e| e.to_string())?;
            match tokio::time::timeout(CHECK_TIMEOUT, client.request_text(request)).await {
                Ok(Ok(body)) => Ok(Answer::Ok(body)),
                Ok(Err(kube::Error::Api(s))) => Ok(Answer::Status(s.code, one_line(&s.message))),
                Ok(Err(e)) => Err(error_chain(&e)),
                Err(_) => Err(format!("no answer within {}s", CHECK_TIMEOUT.as_secs())),
            }
        }
    };
    let unreachable = |why: String| format!("cannot reach member {name:?} at {server}: {why}");
    let rejected = |code: u16, message: &str| {
        let reason = match code {
            401 => "Unauthorized",
            403 => "Forbidden",
            _ => "",
        };
        if message.is_empty() || message == reason {
            format!("member {name:?} rejected the credentials: {reason}")
        } else {
            format!("member {name:?} rejected the credentials: {reason}: {message}")
        }
    };
    let version = match get("/version").await.map_err(unreachable)? {
        Answer::Ok(body) => serde_json::from_str::<serde_json::Value>(&body)
            .ok()
            .and_then(|v| v.get("gitVersion")?.as_str().map(str::to_owned))
            .unwrap_or_default(),
        Answer::Status(code @ (401 | 403), message) => return Err(rejected(code, &message)),
        Answer::Status(code, message) => {
            return Err(format!(
                "member {name:?} at {server} answered /version with {code}: {message}"
            ));
        }
    };
    match get("/readyz").await.map_err(unreachable)? {
        Answer::Ok(_) => {}
        Answer::Status(code @ (401 | 403), message) => return Err(rejected(code, &message)),
        Answer::Status(code, message) => {
            return Err(format!(
                "member {name:?} at {server} is not ready (/readyz answered {code}: {message})"
            ));
        }
    }
    match get("/api").await.map_err(unreachable)? {
        Answer::Ok(_) => Ok(version),
        Answer::Status(code @ (401 | 403), message) => Err(rejected(code, &message)),
        Answer::Status(code, message) => Err(format!(
            "member {name:?} at {server} answered /api with {code}: {message}"
        )),
    }
}
