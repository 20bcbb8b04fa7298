//! The federation as `skein join`/`unjoin` reach it: a `kube` client from
//! `--federation-kubeconfig`, else `$KUBECONFIG`, else
//! `<data-dir>/admin.kubeconfig`, and JSON reads and writes by path whose
//! failures are one-line messages.

use std::path::{Path, PathBuf};
use std::time::Duration;

use kube::config::{KubeConfigOptions, Kubeconfig};
use serde_json::Value;

use super::report::one_line;

/// How long one request to the federation may take.
const REQUEST_TIMEOUT: Duration = Duration::from_secs(30);

/// A failed request: the HTTP code when the server answered, and a
/// one-line message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Failure {
    /// The answer's status code; `None` when the request got no answer.
    pub code: Option<u16>,
    /// What went wrong (the Status message, or the transport error).
    pub message: String,
}

impl std::fmt::Display for Failure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message)
    }
}

/// A connected federation client.
pub struct Federation {
    client: kube::Client,
    /// The server URL, for messages.
    server: String,
}

/// Which kubeconfig reaches the federation: `explicit`, else `$KUBECONFIG`
/// (`None` means "the environment's"), else `<data_dir>/admin.kubeconfig`.
pub fn kubeconfig_source(
    explicit: Option<&Path>,
    env: Option<&std::ffi::OsStr>,
    data_dir: &Path,
) -> Option<PathBuf> {
    match (explicit, env.filter(|e| !e.is_empty())) {
        (Some(p), _) => Some(p.to_path_buf()),
        (None, Some(_)) => None,
        (None, None) => Some(data_dir.join("admin.kubeconfig")),
    }
}

impl Federation {
    /// Reads the federation's kubeconfig (see [`kubeconfig_source`]) and
    /// builds a client.
    ///
    /// # Errors
    ///
    /// A one-line message when the kubeconfig cannot be read or used.
    pub async fn connect(explicit: Option<&Path>, data_dir: &Path) -> Result<Federation, String> {
        let env = std::env::var_os("KUBECONFIG");
        let (kubeconfig, from) = match kubeconfig_source(explicit, env.as_deref(), data_dir) {
            Some(path) => (Kubeconfig::read_from(&path), path.display().to_string()),
            None => (
                Kubeconfig::from_env()
                    .and_then(|k| k.ok_or(kube::config::KubeconfigError::FindPath)),
                "$KUBECONFIG".to_owned(),
            ),
        };
        let kubeconfig = kubeconfig.map_err(|e| {
            format!(
                "cannot read the federation's kubeconfig {from}: {} (pass --federation-kubeconfig)",
                error_chain(&e)
            )
        })?;
        let mut config =
            kube::Config::from_custom_kubeconfig(kubeconfig, &KubeConfigOptions::default())
                .await
                .map_err(|e| {
                    format!(
                        "cannot use the federation's kubeconfig {from}: {}",
                        error_chain(&e)
                    )
                })?;
        config.connect_timeout = Some(Duration::from_secs(10));
        config.read_timeout = Some(REQUEST_TIMEOUT);
        let server = config.cluster_url.to_string();
        let client = kube::Client::try_from(config).map_err(|e| {
            format!(
                "cannot use the federation's kubeconfig {from}: {}",
                error_chain(&e)
            )
        })?;
        Ok(Federation { client, server })
    }

    /// GET `path`; `None` for 404.
    ///
    /// # Errors
    ///
    /// Any other failure.
    pub async fn get(&self, path: &str) -> Result<Option<Value>, Failure> {
        match self.send(axum::http::Method::GET, path, None).await {
            Ok(v) => Ok(Some(v)),
            Err(f) if f.code == Some(404) => Ok(None),
            Err(f) => Err(f),
        }
    }

    /// POST `body` to `path`.
    ///
    /// # Errors
    ///
    /// Any failure (409 for a name taken).
    pub async fn create(&self, path: &str, body: &Value) -> Result<Value, Failure> {
        self.send(axum::http::Method::POST, path, Some(body)).await
    }

    /// PUT `body` to `path`.
    ///
    /// # Errors
    ///
    /// Any failure.
    pub async fn replace(&self, path: &str, body: &Value) -> Result<Value, Failure> {
        self.send(axum::http::Method::PUT, path, Some(body)).await
    }

    /// DELETE `path`; `false` for 404.
    ///
    /// # Errors
    ///
    /// Any other failure.
    pub async fn delete(&self, path: &str) -> Result<bool, Failure> {
        self.delete_with(path, None).await
    }

    /// DELETE `path` with a `DeleteOptions` body; `Ok(false)` when there
    /// was nothing to delete.
    pub async fn delete_with(&self, path: &str, options: Option<&Value>) -> Result<bool, Failure> {
        match self.send(axum::http::Method::DELETE, path, options).await {
            Ok(_) => Ok(true),
            Err(f) if f.code == Some(404) => Ok(false),
            Err(f) => Err(f),
        }
    }

    async fn send(
        &self,
        method: axum::http::Method,
        path: &str,
        body: Option<&Value>,
    ) -> Result<Value, Failure> {
        let bytes = body.map(Value::to_string).unwrap_or_default().into_bytes();
        let mut request = axum::http::Request::builder().method(method).uri(path);
        if body.is_some() {
            request = request.header(axum::http::header::CONTENT_TYPE, "application/json");
        }
        let request = request
            .header(axum::http::header::ACCEPT, "application/json")
            .body(bytes)
            .map_err(|e| Failure {
                code: None,
                message: format!("bad request {path}: {e}"),
            })?;
        let call = self.client.request::<Value>(request);
        match tokio::time::timeout(REQUEST_TIMEOUT, call).await {
            Ok(Ok(v)) => Ok(v),
            Ok(Err(kube::Error::Api(status))) => Err(Failure {
                code: Some(status.code),
                message: one_line(&status.message),
            }),
            Ok(Err(e)) => Err(Failure {
                code: None,
                message: format!(
                    "cannot reach the federation at {}: {}",
                    self.server,
                    error_chain(&e)
                ),
            }),
            Err(_) => Err(Failure {
                code: None,
                message: format!(
                    "the federation at {} did not answer within {}s",
                    self.server,
                    REQUEST_TIMEOUT.as_secs()
                ),
            }),
        }
    }
}

/// `e` and its sources as one line (the federation's own wording of
/// connection errors, [`skein_apiserver::member_client::chain`]).
pub fn error_chain(e: &dyn std::error::Error) -> String {
    one_line(&skein_apiserver::member_client::chain(e))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_kubeconfig_is_chosen_as_documented() {
        let dir = Path::new("/data");
        assert_eq!(
            kubeconfig_source(Some(Path::new("/f")), Some("/e".as_ref()), dir),
            Some(PathBuf::from("/f"))
        );
        assert_eq!(kubeconfig_source(None, Some("/e".as_ref()), dir), None);
        assert_eq!(
            kubeconfig_source(None, Some("".as_ref()), dir),
            Some(PathBuf::from("/data/admin.kubeconfig"))
        );
        assert_eq!(
            kubeconfig_source(None, None, dir),
            Some(PathBuf::from("/data/admin.kubeconfig"))
        );
    }

    #[derive(Debug)]
    struct E(&'static str, Option<Box<E>>);
    impl std::fmt::Display for E {
        fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            f.write_str(self.0)
        }
    }
    impl std::error::Error for E {
        fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
            self.1.as_deref().map(|e| e as _)
        }
    }

    #[test]
    fn chains_are_one_line_without_repeats() {
        let e = E(
            "ServiceError: client error (Connect)",
            Some(Box::new(E(
                "tcp connect error",
                Some(Box::new(E("tcp connect error", None))),
            ))),
        );
        assert_eq!(error_chain(&e), "client error (Connect): tcp connect error");
    }
}
