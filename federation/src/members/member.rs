//! Calls to one member, through the `kube` client its kubeconfig gives
//! (the client a real cluster would get): `/readyz`, the Node and Pod
//! lists, `/version` and legacy discovery (`/api`, `/apis`, then each
//! group/version — members may be as old as v1.20, without aggregated
//! discovery).
//!
//! Contract: every call ends within the probe timeout it was built with
//! (discovery within twice that), never panics, and turns failures into
//! a [`Failure`] with a message for people ([`classify`], pure).

use std::time::Duration;

use axum::http::Request;
use futures::StreamExt;
use serde_json::Value;

use super::health::{Failure, Outcome};
use skein_apiserver::member_client::credentials::{self, CredentialError};

/// How many discovery requests run at once.
const DISCOVERY_CONCURRENCY: usize = 8;

/// A member reached with its kubeconfig.
#[derive(Clone)]
pub struct Member {
    client: kube::Client,
    timeout: Duration,
}

/// A failed call: its kind and message.
pub type CallError = (Failure, String);

impl Member {
    /// A client for `kubeconfig` (`context`, else its current-context)
    /// whose connections give up after `timeout`, without the client's own
    /// retries (a probe must answer for itself).
    ///
    /// # Errors
    ///
    /// The kubeconfig cannot be used (see [`credentials::config`]).
    pub async fn connect(
        kubeconfig: &str,
        context: Option<&str>,
        timeout: Duration,
    ) -> Result<Member, CredentialError> {
        let mut config = credentials::config(kubeconfig, context).await?;
        // The probe's own deadline (`timeout` per call) speaks first, with
        // a clear message; this only bounds a connect left behind by it.
        config.connect_timeout = Some(timeout.saturating_mul(2));
        config.default_retry = false;
        let client = credentials::multiplexed(config)?;
        Ok(Member { client, timeout })
    }

    /// `GET /readyz`.
    pub async fn readyz(&self) -> Outcome {
        match self.get_text("/readyz", self.timeout).await {
            Ok(_) => Outcome::Ready,
            Err((failure, message)) => Outcome::Failed { failure, message },
        }
    }

    /// The member's Nodes and Pods (all namespaces), read from its cache
    /// (`resourceVersion=0`) concurrently.
    ///
    /// # Errors
    ///
    /// The first failed list.
    pub async fn nodes_and_pods(&self) -> Result<(Vec<Value>, Vec<Value>), CallError> {
        let (nodes, pods) = tokio::join!(
            self.list("/api/v1/nodes?resourceVersion=0"),
            self.list("/api/v1/pods?resourceVersion=0"),
        );
        Ok((nodes?, pods?))
    }

    /// `/version`'s `gitVersion`.
    ///
    /// # Errors
    ///
    /// The call failed or the answer has no `gitVersion`.
    pub async fn version(&self) -> Result<String, CallError> {
        let v = self.get_json("/version", self.timeout).await?;
        v.get("gitVersion")
            .and_then(Value::as_str)
            .map(str::to_owned)
            .ok_or_else(|| (Failure::NotReady, "/version has no gitVersion".to_owned()))
    }

    /// Legacy discovery: `(groupVersion, resource names)` for `/api/<v>`
    /// and every `/apis/<g>/<v>`, in discovery's order. A group/version
    /// whose own document fails (an unavailable aggregated API) is left
    /// out, as kubectl does.
    ///
    /// # Errors
    ///
    /// `/api` or `/apis` failed.
    pub async fn discovery(&self) -> Result<Vec<(String, Vec<String>)>, CallError> {
        let t = self.timeout;
        let (core, groups) = tokio::join!(self.get_json("/api", t), self.get_json("/apis", t));
        let (core, groups) = (core?, groups?);
        let mut paths: Vec<(String, String)> = strings(&core, "/versions")
            .into_iter()
            .map(|v| (v.clone(), format!("/api/{v}")))
            .collect();
        for group in groups
            .get("groups")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            for v in group
                .get("versions")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
            {
                if let Some(gv) = v.get("groupVersion").and_then(Value::as_str) {
                    paths.push((gv.to_owned(), format!("/apis/{gv}")));
                }
            }
        }
        let docs: Vec<Option<(String, Vec<String>)>> = futures::stream::iter(paths)
            .map(|(gv, path)| async move {
                match self.get_json(&path, t).await {
                    Ok(doc) => {
                        let names = doc
                            .get("resources")
                            .and_then(Value::as_array)
                            .into_iter()
                            .flatten()
                            .filter_map(|r| r.get("name").and_then(Value::as_str))
                            .map(str::to_owned)
                            .collect();
                        Some((gv, names))
                    }
                    Err((_, e)) => {
                        tracing::debug!(group_version = gv, error = e, "member discovery skipped");
                        None
                    }
                }
            })
            .buffered(DISCOVERY_CONCURRENCY)
            .collect()
            .await;
        Ok(docs.into_iter().flatten().collect())
    }

    async fn list(&self, path: &str) -> Result<Vec<Value>, CallError> {
        let mut list = self.get_json(path, self.timeout).await?;
        match list.get_mut("items").map(Value::take) {
            Some(Value::Array(items)) => Ok(items),
            Some(Value::Null) | None => Ok(Vec::new()),
            Some(_) => Err((Failure::NotReady, format!("{path}: items is not a list"))),
        }
    }

    async fn get_json(&self, path: &str, timeout: Duration) -> Result<Value, CallError> {
        let text = self.get_text(path, timeout).await?;
        serde_json::from_str(&text)
            .map_err(|e| (Failure::NotReady, format!("{path}: not JSON: {e}")))
    }

    async fn get_text(&self, path: &str, timeout: Duration) -> Result<String, CallError> {
        let request = Request::get(path)
            .body(Vec::new())
            .map_err(|e| (Failure::Unreachable, e.to_string()))?;
        match tokio::time::timeout(timeout, self.client.request_text(request)).await {
            Ok(Ok(text)) => Ok(text),
            Ok(Err(e)) => Err(classify(path, &e)),
            Err(_) => Err((
                Failure::Unreachable,
                format!("{path}: no answer within {}", humanize(timeout)),
            )),
        }
    }
}

/// What a failed call means for the member's health: 401/403 →
/// `Unauthorized`, any other HTTP answer → `NotReady`, no answer (connect,
/// TLS, I/O) → `Unreachable`; the message names the path and the cause.
pub fn classify(path: &str, err: &kube::Error) -> CallError {
    match err {
        kube::Error::Api(status) => {
            let failure = match status.code {
                401 | 403 => Failure::Unauthorized,
                _ => Failure::NotReady,
            };
            let mut message = status.message.trim().to_owned();
            if message.len() > 512 {
                message = message.chars().take(512).collect::<String>() + "...";
            }
            let what = if message.is_empty() {
                status.reason.clone()
            } else {
                message
            };
            (failure, format!("{path} answered {}: {what}", status.code))
        }
        other => (Failure::Unreachable, format!("{path}: {}", chain(other))),
    }
}

pub use skein_apiserver::member_client::chain;

/// `3s`, `500ms`.
fn humanize(d: Duration) -> String {
    if d.subsec_millis() == 0 {
        format!("{}s", d.as_secs())
    } else {
        format!("{}ms", d.as_millis())
    }
}

fn strings(v: &Value, pointer: &str) -> Vec<String> {
    v.pointer(pointer)
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .map(str::to_owned)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn api(code: u16, message: &str) -> kube::Error {
        kube::Error::Api(
            kube::core::Status::failure(message, "Unauthorized")
                .with_code(code)
                .boxed(),
        )
    }

    #[test]
    fn classification() {
        assert_eq!(
            classify("/readyz", &api(401, "Unauthorized")),
            (
                Failure::Unauthorized,
                "/readyz answered 401: Unauthorized".to_owned()
            )
        );
        assert_eq!(
            classify("/readyz", &api(403, "no")).0,
            Failure::Unauthorized
        );
        assert_eq!(
            classify("/readyz", &api(500, "[-]etcd failed")),
            (
                Failure::NotReady,
                "/readyz answered 500: [-]etcd failed".to_owned()
            )
        );
        let io = kube::Error::ReadEvents(std::io::Error::other("refused"));
        assert_eq!(classify("/x", &io).0, Failure::Unreachable);
        assert!(classify("/x", &io).1.contains("refused"));
    }

    #[test]
    fn durations_read_well() {
        assert_eq!(humanize(Duration::from_secs(3)), "3s");
        assert_eq!(humanize(Duration::from_millis(1500)), "1500ms");
    }
}
