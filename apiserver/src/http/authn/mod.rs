//! Authentication: who is making a request.
//!
//! Authenticators, tried in kube-apiserver's union order:
//!
//! 0. **Front proxy** ([`super::requestheader`]), when configured: the
//!    `X-Remote-*` headers of a connection whose certificate verified
//!    against the requestheader CA. The server adds an
//!    `axum::Extension(Arc<RequestHeader>)` layer; the headers are removed
//!    from every request whether trusted or not.
//! 1. **Client certificates.** The TLS layer puts a [`ClientCertUser`] on
//!    every request of a connection whose client certificate verified
//!    against the CA (CN is the user, each O a group).
//! 2. **Bearer tokens**, through the [`Authenticator`] the server layers
//!    over the router as an `axum::Extension(Arc<Authenticator>)`: static
//!    tokens from `--token-auth-file` ([`TokenAuthenticator`]), then
//!    ServiceAccount tokens Skein issued ([`serviceaccount`]), then OIDC
//!    JWTs (`--oidc-*`, [`jwt`]). The first that accepts the token wins; a
//!    token none accepts is a 401 on every path, as upstream (whose
//!    anonymous authenticator is `union.NewFailOnError`): a bad credential
//!    is never treated as no credential.
//! 3. **Anonymous** (`--anonymous-auth`, off by default): a request with no
//!    credential is `system:anonymous` in `system:unauthenticated`.
//!    Without it, such requests are 401 except on the public paths that
//!    kube-apiserver serves to everyone (its `system:public-info-viewer`
//!    role: `/healthz`, `/livez`, `/readyz`, `/version`).
//!
//! [`authenticate`] turns the first one that succeeds into the request's
//! [`UserInfo`] (adding `system:authenticated`, as kube's
//! `AuthenticatedGroupAdder` does), or answers 401.
//!
//! # The token file
//!
//! kube-apiserver's format (`tokenfile.NewCSV`): CSV read by Go's
//! `encoding/csv` with its defaults and `FieldsPerRecord = -1`, one record
//! per user, `token,user,uid[,"group1,group2"]`. [`TokenAuthenticator::parse`]
//! follows it rule by rule:
//!
//! - At least 3 columns (token, user name, uid), else a startup error;
//!   columns after the 4th are ignored. Nothing is trimmed (` alice` is a
//!   different user from `alice`), and a quote may only open a field (Go's
//!   `bare "` and `extraneous or missing "` errors).
//! - Empty lines are skipped. There are **no comments**: Go's reader has
//!   `Comment` unset, so `# note` is a one-column record and an error, as in
//!   kube-apiserver.
//! - The 4th column is split on `,` as is (`strings.Split`), so an empty
//!   4th column is one empty group name, as upstream.
//! - An empty token skips the record with a warning; a duplicate token
//!   replaces the earlier record with a warning (the last one wins).
//! - Quoted fields may contain `""` (a quote), commas and newlines; CRLF line
//!   ends are read as LF.
//!
//! Errors name the file and the line, which upstream's do not.
//!
//! # Comparing tokens
//!
//! Tokens are never kept or compared as they are: the table is keyed by the
//! SHA-256 digest of each token, and a presented token is hashed and looked
//! up. Whatever timing the hash-map lookup leaks is about digests, and
//! learning a prefix of a digest does not help to find a token that has it
//! (that would be a preimage attack on SHA-256), so the comparison needs no
//! constant-time loop. It also keeps the tokens themselves out of the
//! server's memory after startup and out of any `Debug` output.

pub mod discovery;
pub mod jwt;
pub mod keys;
pub mod serviceaccount;
pub mod setup;
mod token_file;

pub use token_file::{SyntaxError, TokenAuthenticator, TokenFileError, TokenFileWarning};

use std::sync::Arc;

use axum::extract::Request;
use axum::http::{HeaderMap, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};

use x509_parser::prelude::X509Certificate;

use super::requestheader::{FrontProxyPeer, RequestHeader};
use super::status::ApiError;
use crate::registry::Registry;
use crate::registry::object;

/// The user of a request, and the groups and name authentication gives:
/// the one user type, [`skein_admission::UserInfo`].
pub use skein_admission::{ANONYMOUS_USER, AUTHENTICATED_GROUP, UNAUTHENTICATED_GROUP, UserInfo};

/// The user named by a verified client certificate: CN is the name, each O
/// a group. Set by [`super::tls`] on every request of the connection.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ClientCertUser {
    /// The certificate's common name.
    pub name: String,
    /// The certificate's organizations.
    pub groups: Vec<String>,
}

impl ClientCertUser {
    /// Reads the user from an already verified certificate. `None` when it
    /// has no common name (kube ignores such certificates).
    pub fn from_certificate(cert: &X509Certificate<'_>) -> Option<Self> {
        let subject = cert.subject();
        let name = subject
            .iter_common_name()
            .find_map(|cn| cn.as_str().ok())
            .filter(|cn| !cn.is_empty())?
            .to_string();
        let groups = subject
            .iter_organization()
            .filter_map(|o| o.as_str().ok())
            .map(str::to_string)
            .collect();
        Some(ClientCertUser { name, groups })
    }

    /// Parses a DER certificate (as rustls hands it over).
    pub fn from_der(der: &[u8]) -> Option<Self> {
        let (_, cert) = x509_parser::parse_x509_certificate(der).ok()?;
        Self::from_certificate(&cert)
    }

    /// The request's user.
    pub fn user_info(&self) -> UserInfo {
        UserInfo::authenticated(self.name.clone(), None, self.groups.clone())
    }
}

/// Whether `path` is served to unauthenticated clients.
pub fn is_public(path: &str) -> bool {
    let path = path
        .strip_prefix(super::routes::AGGREGATED_PREFIX)
        .unwrap_or(path);
    matches!(
        path,
        "/healthz" | "/livez" | "/readyz" | "/version" | "/version/"
    )
}

/// Middleware: attaches [`UserInfo`] to authenticated requests and rejects
/// unauthenticated ones with 401, except on [public](is_public) paths (or
/// everywhere as the anonymous user, with `--anonymous-auth`).
///
/// The client certificate is tried first, then the bearer token (when the
/// router carries an [`Authenticator`] extension), as kube-apiserver's
/// union authenticator does. A token that authenticates is removed from
/// the request, as upstream does; a token that does not is a 401 on every
/// path.
pub async fn authenticate(mut req: Request, next: Next) -> Response {
    let auth = req.extensions().get::<Arc<Authenticator>>().cloned();
    let front_proxy = req.extensions().get::<Arc<RequestHeader>>().cloned();
    let asserted = match (&front_proxy, req.extensions().get::<FrontProxyPeer>()) {
        (Some(config), Some(peer)) => config.user(peer, req.headers()),
        _ => None,
    };
    if let Some(config) = &front_proxy {
        // Trusted or not, the identity headers go no further.
        config.strip(req.headers_mut());
    }
    let user = match (asserted, req.extensions().get::<ClientCertUser>()) {
        (Some(user), _) => {
            req.extensions_mut().insert(super::host_view::FrontProxied);
            Some(user)
        }
        (None, Some(cert)) => Some(cert.user_info()),
        (None, None) => match (&auth, bearer_token(req.headers())) {
            (Some(auth), Some(token)) => match auth.authenticate_token(token, None).await {
                Ok(Some((user, _))) => {
                    req.headers_mut().remove(header::AUTHORIZATION);
                    Some(user)
                }
                Ok(None) => return ApiError::unauthorized().into_response(),
                Err(e) => {
                    tracing::debug!(error = %e, "bearer token rejected");
                    return ApiError::unauthorized().into_response();
                }
            },
            _ => None,
        },
    };
    match user {
        Some(user) => run_as(req, next, user).await,
        None if auth.as_ref().is_some_and(|a| a.anonymous) => {
            run_as(req, next, UserInfo::anonymous()).await
        }
        None if is_public(req.uri().path()) => next.run(req).await,
        None => ApiError::unauthorized().into_response(),
    }
}

/// Response extension: the authenticated user's name, for the access log
/// of responses that never reached the handlers' metrics layer (403s, 500s
/// of the authorization layer, requests forwarded to an APIService).
#[derive(Clone, Debug)]
pub struct Authenticated(pub String);

/// Runs the rest of the stack as `user`, naming it on the response for the
/// access log (only when the access log is on).
async fn run_as(mut req: Request, next: Next, user: UserInfo) -> Response {
    let name = super::access_log::enabled(&req).then(|| user.name.clone());
    req.extensions_mut().insert(user);
    let mut response = next.run(req).await;
    if let Some(name) = name {
        response.extensions_mut().insert(Authenticated(name));
    }
    response
}

/// Every bearer-token authenticator of the server, and `--anonymous-auth`.
#[derive(Default)]
pub struct Authenticator {
    /// `--token-auth-file`.
    pub tokens: Option<TokenAuthenticator>,
    /// ServiceAccount tokens, with the registry that bound objects are
    /// checked against.
    pub service_accounts: Option<(Arc<serviceaccount::ServiceAccountTokens>, Registry)>,
    /// `--oidc-*`.
    pub oidc: Option<jwt::OidcAuthenticator>,
    /// `--anonymous-auth`.
    pub anonymous: bool,
}

impl std::fmt::Debug for Authenticator {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Authenticator")
            .field("tokens", &self.tokens)
            .field(
                "service_accounts",
                &self.service_accounts.as_ref().map(|s| &s.0),
            )
            .field("oidc", &self.oidc)
            .field("anonymous", &self.anonymous)
            .finish()
    }
}

/// Why a bearer token was refused (for logs; clients see a bare 401).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct InvalidToken(pub String);

impl From<jwt::JwtError> for InvalidToken {
    fn from(e: jwt::JwtError) -> Self {
        InvalidToken(e.0)
    }
}

/// Seconds since the Unix epoch.
pub fn unix_now() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0)
}

impl Authenticator {
    /// The user of `token` and the audiences it was accepted for:
    /// `Ok(None)` when no authenticator recognizes it, an error when one
    /// does and refuses it. `audiences` are a TokenReview's (the API
    /// audiences when `None`).
    pub async fn authenticate_token(
        &self,
        token: &[u8],
        audiences: Option<&[String]>,
    ) -> Result<Option<(UserInfo, Vec<String>)>, InvalidToken> {
        if let Some(user) = self
            .tokens
            .as_ref()
            .and_then(|t| t.authenticate_token(token))
        {
            let auds = audiences.map(<[String]>::to_vec).unwrap_or_default();
            return Ok(Some((user.clone(), auds)));
        }
        let Ok(token) = std::str::from_utf8(token) else {
            return Ok(None);
        };
        let now = unix_now();
        if let Some((sa, registry)) = &self.service_accounts
            && let Some(t) = sa.verify(token, now, audiences)?
        {
            let auds = t.audiences.clone();
            return Ok(Some((check_bound(registry, t).await?, auds)));
        }
        if let Some(oidc) = &self.oidc
            && let Some(user) = oidc.authenticate(token, now)?
        {
            // OIDC tokens name one audience, the client id.
            let auds = audiences.map(<[String]>::to_vec).unwrap_or_default();
            return Ok(Some((user, auds)));
        }
        Ok(None)
    }
}

/// Checks a verified ServiceAccount token against the store: the account
/// and the bound object exist, have the token's uids and are not being
/// deleted. Returns the account's user (upstream's name, groups, extra).
async fn check_bound(
    registry: &Registry,
    t: serviceaccount::SaToken,
) -> Result<UserInfo, InvalidToken> {
    let ns = &t.namespace;
    let live = |plural: &'static str, r: serviceaccount::Ref| async move {
        let res = crate::registry::resource::builtin("", "v1", plural)
            .ok_or_else(|| InvalidToken(format!("no {plural} resource")))?;
        let obj = registry
            .get(&res, ns, &r.name)
            .await
            .map_err(|_| InvalidToken(format!("{plural} {ns}/{} has been deleted", r.name)))?;
        let uid = object::meta_str(&obj, "uid").unwrap_or("");
        if uid != r.uid {
            return Err(InvalidToken(format!(
                "{plural} UID ({uid}) does not match claim ({})",
                r.uid
            )));
        }
        if obj
            .pointer("/metadata/deletionTimestamp")
            .is_some_and(|d| !d.is_null())
        {
            return Err(InvalidToken(format!(
                "{plural} {ns}/{} is being deleted",
                r.name
            )));
        }
        Ok(())
    };
    live("serviceaccounts", t.account.clone()).await?;
    if let Some(s) = &t.secret {
        live("secrets", s.clone()).await?;
    }
    if let Some(p) = &t.pod {
        live("pods", p.clone()).await?;
    }
    let mut user = UserInfo::authenticated(
        format!("system:serviceaccount:{ns}:{}", t.account.name),
        Some(t.account.uid.clone()),
        vec![
            "system:serviceaccounts".to_string(),
            format!("system:serviceaccounts:{ns}"),
        ],
    );
    if !t.jti.is_empty() {
        user.extra.insert(
            serviceaccount::EXTRA_CREDENTIAL_ID.into(),
            vec![format!("JTI={}", t.jti)],
        );
    }
    if let Some(p) = &t.pod {
        user.extra
            .insert(serviceaccount::EXTRA_POD_NAME.into(), vec![p.name.clone()]);
        user.extra
            .insert(serviceaccount::EXTRA_POD_UID.into(), vec![p.uid.clone()]);
    }
    if let Some(n) = &t.node {
        user.extra
            .insert(serviceaccount::EXTRA_NODE_NAME.into(), vec![n.clone()]);
    }
    Ok(user)
}

/// The token of an `Authorization: Bearer <token>` header, read as
/// upstream's `bearertoken` authenticator does: the value trimmed, split on
/// single spaces, the scheme matched case-insensitively, the second part
/// the token (anything after a further space is ignored). `None` for no
/// header, another scheme, or an empty token (`Bearer  x`).
pub fn bearer_token(headers: &HeaderMap) -> Option<&[u8]> {
    let value = headers.get(header::AUTHORIZATION)?.as_bytes().trim_ascii();
    let mut parts = value.splitn(3, |b| *b == b' ');
    let scheme = parts.next()?;
    let token = parts.next()?;
    (scheme.eq_ignore_ascii_case(b"bearer") && !token.is_empty()).then_some(token)
}

#[cfg(test)]
mod tests;
