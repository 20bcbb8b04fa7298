//! A member's credentials: the kubeconfig held in the Secret a Cluster's
//! `spec.kubeconfigSecretRef` names, turned into a `kube` client.
//!
//! Contract: only self-contained kubeconfigs are accepted. Client
//! certificates and keys, bearer tokens, basic auth, CA data and
//! `insecure-skip-tls-verify` work; anything that would make the federation
//! read its own file system or run a program (file paths for certificates,
//! keys, CAs or tokens, `exec` plugins, `auth-provider`s) is refused with a
//! [`CredentialError::Unsupported`] naming the field, so the Cluster's
//! status can say why. Parsing never panics on any input.

use base64::Engine;
use kube::config::{KubeConfigOptions, Kubeconfig};
use serde_json::Value;

/// Why a member's kubeconfig cannot be turned into a client.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CredentialError {
    /// The Secret has no such key, or its value is not base64 / UTF-8.
    #[error("{0}")]
    Secret(String),
    /// The kubeconfig is not valid YAML, or names a context, cluster or
    /// user it does not define.
    #[error("the kubeconfig is malformed: {0}")]
    Malformed(String),
    /// The kubeconfig needs something the federation will not do.
    #[error("the kubeconfig is not supported: {0}")]
    Unsupported(String),
}

/// The kubeconfig text stored under `key` in `secret` (a Secret object as
/// JSON, `data` base64-encoded as on the wire).
///
/// # Errors
///
/// [`CredentialError::Secret`] when the key is missing or not base64 UTF-8.
pub fn from_secret(secret: &Value, key: &str) -> Result<String, CredentialError> {
    let name = secret
        .pointer("/metadata/name")
        .and_then(Value::as_str)
        .unwrap_or_default();
    let encoded = secret
        .get("data")
        .and_then(|d| d.get(key))
        .and_then(Value::as_str)
        .ok_or_else(|| CredentialError::Secret(format!("secret {name:?} has no key {key:?}")))?;
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(encoded)
        .map_err(|e| {
            CredentialError::Secret(format!("secret {name:?} key {key:?} is not base64: {e}"))
        })?;
    String::from_utf8(bytes).map_err(|_| {
        CredentialError::Secret(format!("secret {name:?} key {key:?} is not UTF-8 text"))
    })
}

/// Parses `text` and checks that the context it would use (`context`, else
/// its current-context) is self-contained.
///
/// # Errors
///
/// [`CredentialError::Malformed`] or [`CredentialError::Unsupported`].
pub fn parse(text: &str, context: Option<&str>) -> Result<Kubeconfig, CredentialError> {
    let config =
        Kubeconfig::from_yaml(text).map_err(|e| CredentialError::Malformed(e.to_string()))?;
    check(&config, context)?;
    Ok(config)
}

/// The `kube` client configuration for `text` (see [`parse`]).
///
/// # Errors
///
/// As [`parse`], and [`CredentialError::Malformed`] when `kube` cannot load
/// it (a bad server URL or PEM data).
pub async fn config(text: &str, context: Option<&str>) -> Result<kube::Config, CredentialError> {
    let kubeconfig = parse(text, context)?;
    let options = KubeConfigOptions {
        context: context.map(str::to_owned),
        ..KubeConfigOptions::default()
    };
    kube::Config::from_custom_kubeconfig(kubeconfig, &options)
        .await
        .map_err(|e| CredentialError::Malformed(e.to_string()))
}

/// A `kube` client for `text` (see [`config`]), without `kube`'s own
/// retries of 429, 503 and 504: a caller sees the member's answer (its
/// `Status` and message) at once and retries on its own queue's backoff,
/// instead of a call that retries inside until its deadline and reports a
/// timeout.
///
/// # Errors
///
/// As [`config`], and [`CredentialError::Malformed`] when the TLS settings
/// cannot be built.
pub async fn client(text: &str, context: Option<&str>) -> Result<kube::Client, CredentialError> {
    let config = config(text, context).await?;
    multiplexed(config)
}

/// How often an HTTP/2 connection to a member is pinged, and how long a
/// ping may go unanswered before the connection (and every call and watch
/// on it) is given up: a black-holed member is noticed in under a minute,
/// not when a read times out.
const PING_INTERVAL: std::time::Duration = std::time::Duration::from_secs(20);
const PING_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(20);

/// A `kube` client for `config` that speaks HTTP/2 when the member offers
/// it (ALPN `h2`, as every kube-apiserver does), as client-go does: one
/// connection per member carries every call and watch. `kube`'s own
/// client is HTTP/1.1 only, a connection per call in flight and per watch:
/// at 100 members that was over a thousand TLS connections and their
/// buffers (about 110 KiB each) in the federation. A member that answers
/// only HTTP/1.1 (ALPN without `h2`) gets that, with pooled connections.
/// `kube`'s own retries of 429, 503 and 504 are off (see [`client`]);
/// `proxy-url` is refused by [`parse`], so none is honoured here.
///
/// # Errors
///
/// [`CredentialError::Malformed`] when the TLS settings, the
/// `tls-server-name` or the credentials cannot be used.
pub fn multiplexed(config: kube::Config) -> Result<kube::Client, CredentialError> {
    use kube::client::ConfigExt as _;
    let malformed = |e: kube::Error| CredentialError::Malformed(e.to_string());
    let tls = config.rustls_client_config().map_err(malformed)?;
    let mut http = hyper_util::client::legacy::connect::HttpConnector::new();
    http.enforce_http(false);
    http.set_nodelay(true);
    http.set_connect_timeout(config.connect_timeout);
    let mut https = hyper_rustls::HttpsConnectorBuilder::new()
        .with_tls_config(tls)
        .https_or_http();
    if let Some(name) = &config.tls_server_name {
        let name = rustls::pki_types::ServerName::try_from(name.clone()).map_err(|e| {
            CredentialError::Malformed(format!("tls-server-name {name:?} is invalid: {e}"))
        })?;
        https = https.with_server_name_resolver(hyper_rustls::FixedServerNameResolver::new(name));
    }
    let https = https.enable_all_versions().wrap_connector(http);
    let client = hyper_util::client::legacy::Client::builder(hyper_util::rt::TokioExecutor::new())
        .timer(hyper_util::rt::TokioTimer::new())
        .pool_timer(hyper_util::rt::TokioTimer::new())
        .http2_keep_alive_interval(PING_INTERVAL)
        .http2_keep_alive_timeout(PING_TIMEOUT)
        .http2_keep_alive_while_idle(true)
        .http2_adaptive_window(true)
        .build::<_, kube::client::Body>(https);
    let service = tower::ServiceBuilder::new()
        .layer(config.base_uri_layer())
        .option_layer(config.auth_layer().map_err(malformed)?)
        .layer(config.extra_headers_layer().map_err(malformed)?)
        .map_err(|e: hyper_util::client::legacy::Error| -> tower::BoxError { Box::new(e) })
        .service(client);
    Ok(kube::Client::new(service, config.default_namespace))
}

/// The checks of [`parse`], on a parsed kubeconfig.
fn check(config: &Kubeconfig, context: Option<&str>) -> Result<(), CredentialError> {
    let context_name = match context.filter(|c| !c.is_empty()) {
        Some(c) => c.to_owned(),
        None => config
            .current_context
            .clone()
            .filter(|c| !c.is_empty())
            .ok_or_else(|| {
                CredentialError::Malformed("it has no current-context and none was named".into())
            })?,
    };
    let ctx = config
        .contexts
        .iter()
        .find(|c| c.name == context_name)
        .and_then(|c| c.context.as_ref())
        .ok_or_else(|| CredentialError::Malformed(format!("context {context_name:?} not found")))?;
    let cluster = config
        .clusters
        .iter()
        .find(|c| c.name == ctx.cluster)
        .and_then(|c| c.cluster.as_ref())
        .ok_or_else(|| {
            CredentialError::Malformed(format!("cluster {:?} not found", ctx.cluster))
        })?;
    if cluster.server.as_deref().is_none_or(str::is_empty) {
        return Err(CredentialError::Malformed(format!(
            "cluster {:?} has no server",
            ctx.cluster
        )));
    }
    if cluster.certificate_authority.is_some() {
        return Err(file_path("certificate-authority"));
    }
    if cluster.proxy_url.is_some() {
        return Err(CredentialError::Unsupported(
            "proxy-url is not supported; the federation dials the member directly".into(),
        ));
    }
    let Some(user_name) = ctx.user.as_deref() else {
        return Ok(());
    };
    let user = config
        .auth_infos
        .iter()
        .find(|u| u.name == user_name)
        .ok_or_else(|| CredentialError::Malformed(format!("user {user_name:?} not found")))?;
    let Some(auth) = user.auth_info.as_ref() else {
        return Ok(());
    };
    if auth.exec.is_some() {
        return Err(CredentialError::Unsupported(
            "user uses an exec plugin; store a kubeconfig with a client certificate or a token instead".into(),
        ));
    }
    if auth.auth_provider.is_some() {
        return Err(CredentialError::Unsupported(
            "user uses an auth-provider; store a kubeconfig with a client certificate or a token instead".into(),
        ));
    }
    if auth.client_certificate.is_some() {
        return Err(file_path("client-certificate"));
    }
    if auth.client_key.is_some() {
        return Err(file_path("client-key"));
    }
    if auth.token_file.is_some() {
        return Err(file_path("tokenFile"));
    }
    Ok(())
}

fn file_path(field: &str) -> CredentialError {
    CredentialError::Unsupported(format!(
        "{field} names a file; store the kubeconfig with the data inlined ({field}-data, or `kubectl config view --flatten --minify`)"
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    const TOKEN: &str = r"
apiVersion: v1
kind: Config
current-context: m
clusters:
- name: c
  cluster:
    server: https://127.0.0.1:6443
    insecure-skip-tls-verify: true
users:
- name: u
  user:
    token: abc
contexts:
- name: m
  context: {cluster: c, user: u}
";

    #[test]
    fn a_token_kubeconfig_is_accepted() {
        assert!(parse(TOKEN, None).is_ok());
        assert!(parse(TOKEN, Some("m")).is_ok());
    }

    #[test]
    fn a_missing_context_is_malformed() {
        let e = parse(TOKEN, Some("other")).err();
        assert_eq!(
            e,
            Some(CredentialError::Malformed(
                "context \"other\" not found".into()
            ))
        );
    }

    #[test]
    fn exec_plugins_and_file_paths_are_refused() {
        let exec = TOKEN.replace(
            "    token: abc",
            "    exec: {apiVersion: client.authentication.k8s.io/v1, command: aws}",
        );
        assert!(matches!(
            parse(&exec, None),
            Err(CredentialError::Unsupported(m)) if m.contains("exec plugin")
        ));
        let file = TOKEN.replace("    token: abc", "    client-certificate: /etc/cert.pem");
        assert!(matches!(
            parse(&file, None),
            Err(CredentialError::Unsupported(m)) if m.starts_with("client-certificate names a file")
        ));
        let ca = TOKEN.replace(
            "    insecure-skip-tls-verify: true",
            "    certificate-authority: /ca.crt",
        );
        assert!(matches!(
            parse(&ca, None),
            Err(CredentialError::Unsupported(m)) if m.starts_with("certificate-authority names a file")
        ));
    }

    #[test]
    fn secrets_are_decoded() {
        let secret = serde_json::json!({
            "metadata": {"name": "s"},
            "data": {"kubeconfig": base64::engine::general_purpose::STANDARD.encode(TOKEN)},
        });
        assert_eq!(
            from_secret(&secret, "kubeconfig").ok().as_deref(),
            Some(TOKEN)
        );
        assert_eq!(
            from_secret(&secret, "other"),
            Err(CredentialError::Secret(
                "secret \"s\" has no key \"other\"".into()
            ))
        );
    }

    proptest::proptest! {
        #[test]
        fn parse_never_panics(text in "\\PC{0,200}") {
            let _ = parse(&text, None);
        }
    }
}
