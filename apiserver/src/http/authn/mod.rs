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

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use axum::extract::Request;
use axum::http::{HeaderMap, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use sha2::{Digest, Sha256};
use x509_parser::prelude::X509Certificate;

use super::requestheader::{FrontProxyPeer, RequestHeader};
use super::status::ApiError;
use crate::registry::Registry;
use crate::registry::object;

/// The group every authenticated user belongs to.
pub const AUTHENTICATED_GROUP: &str = "system:authenticated";

/// The group of unauthenticated requests; a user already in it does not get
/// [`AUTHENTICATED_GROUP`] added (as upstream's `AuthenticatedGroupAdder`).
pub const UNAUTHENTICATED_GROUP: &str = "system:unauthenticated";

/// The user of anonymous requests (`--anonymous-auth`).
pub const ANONYMOUS_USER: &str = "system:anonymous";

/// An authenticated user, as kube's `user.Info`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UserInfo {
    /// The user name.
    pub name: String,
    /// The user's uid: the token file's 3rd column, `None` when that is
    /// empty and for certificate users (kube leaves it empty for them).
    pub uid: Option<String>,
    /// The groups, always including [`AUTHENTICATED_GROUP`] (unless the
    /// user is in [`UNAUTHENTICATED_GROUP`]).
    pub groups: Vec<String>,
    /// Extra attributes (ServiceAccount tokens' credential id and bound
    /// Pod), as `user.Info.GetExtra`.
    pub extra: BTreeMap<String, Vec<String>>,
}

impl UserInfo {
    /// A user with `groups` plus [`AUTHENTICATED_GROUP`], which is added
    /// unless it, or [`UNAUTHENTICATED_GROUP`], is already there.
    pub fn authenticated(name: String, uid: Option<String>, mut groups: Vec<String>) -> Self {
        if !groups
            .iter()
            .any(|g| g == AUTHENTICATED_GROUP || g == UNAUTHENTICATED_GROUP)
        {
            groups.push(AUTHENTICATED_GROUP.to_string());
        }
        UserInfo {
            name,
            uid,
            groups,
            extra: BTreeMap::new(),
        }
    }

    /// The anonymous user: `system:anonymous` in `system:unauthenticated`.
    pub fn anonymous() -> Self {
        UserInfo {
            name: ANONYMOUS_USER.to_string(),
            uid: None,
            groups: vec![UNAUTHENTICATED_GROUP.to_string()],
            extra: BTreeMap::new(),
        }
    }

    /// The `user` of a TokenReview / `userInfo` of a SelfSubjectReview:
    /// `username`, `uid` (when set), `groups`, `extra` (when any).
    pub fn to_json(&self) -> serde_json::Value {
        let mut info = serde_json::json!({"username": self.name, "groups": self.groups});
        if let Some(uid) = self.uid.as_ref().filter(|u| !u.is_empty()) {
            info["uid"] = serde_json::json!(uid);
        }
        if !self.extra.is_empty() {
            info["extra"] = serde_json::json!(self.extra);
        }
        info
    }
}

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

/// The users of a `--token-auth-file`, keyed by the SHA-256 digest of their
/// token (see the [module docs](self) for why).
pub struct TokenAuthenticator {
    users: HashMap<[u8; 32], UserInfo>,
}

impl std::fmt::Debug for TokenAuthenticator {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TokenAuthenticator")
            .field("users", &self.users.len())
            .finish()
    }
}

fn digest(token: &[u8]) -> [u8; 32] {
    Sha256::digest(token).into()
}

impl TokenAuthenticator {
    /// Reads and parses the token file at `path`, logging each
    /// [`TokenFileWarning`]. Any error is fatal for startup.
    pub fn load(path: &Path) -> Result<Self, TokenFileError> {
        let text = std::fs::read_to_string(path).map_err(|source| TokenFileError::Read {
            path: path.to_path_buf(),
            source,
        })?;
        let (tokens, warnings) = Self::parse(&text).map_err(|error| TokenFileError::Syntax {
            path: path.to_path_buf(),
            error,
        })?;
        for w in warnings {
            tracing::warn!(file = %path.display(), "token file: {w}");
        }
        tracing::info!(file = %path.display(), users = tokens.len(), "loaded static bearer tokens");
        Ok(tokens)
    }

    /// Parses a token file's contents (format in the [module docs](self)).
    /// Records that upstream skips or overrides come back as warnings.
    pub fn parse(text: &str) -> Result<(Self, Vec<TokenFileWarning>), SyntaxError> {
        let mut users = HashMap::new();
        let mut seen: HashMap<[u8; 32], usize> = HashMap::new();
        let mut warnings = Vec::new();
        for Record { line, fields } in read_csv(text)? {
            if fields.len() < 3 {
                return Err(SyntaxError {
                    line,
                    reason: format!(
                        "must have at least 3 columns (token, user name, user uid), found {}",
                        fields.len()
                    ),
                });
            }
            let groups = fields
                .get(3)
                .map(|g| g.split(',').map(str::to_string).collect())
                .unwrap_or_default();
            // At least 3 fields, so the defaults are never used.
            let mut fields = fields.into_iter();
            let token = fields.next().unwrap_or_default();
            let name = fields.next().unwrap_or_default();
            let uid = fields.next().unwrap_or_default();
            if token.is_empty() {
                warnings.push(TokenFileWarning::EmptyToken { line });
                continue;
            }
            let key = digest(token.as_bytes());
            if let Some(earlier) = seen.insert(key, line) {
                warnings.push(TokenFileWarning::DuplicateToken { line, earlier });
            }
            let uid = (!uid.is_empty()).then_some(uid);
            users.insert(key, UserInfo::authenticated(name, uid, groups));
        }
        Ok((TokenAuthenticator { users }, warnings))
    }

    /// The user whose token is `token`, if any.
    pub fn authenticate_token(&self, token: &[u8]) -> Option<&UserInfo> {
        self.users.get(&digest(token))
    }

    /// How many tokens there are.
    pub fn len(&self) -> usize {
        self.users.len()
    }

    /// Whether there are no tokens at all (every bearer token is then
    /// rejected, as upstream does with an empty file).
    pub fn is_empty(&self) -> bool {
        self.users.is_empty()
    }
}

/// Why `--token-auth-file` could not be loaded.
#[derive(Debug, thiserror::Error)]
pub enum TokenFileError {
    /// The file could not be read (missing, unreadable, not UTF-8).
    #[error("cannot read --token-auth-file {}: {source}", path.display())]
    Read {
        /// The file.
        path: PathBuf,
        /// The underlying error.
        #[source]
        source: std::io::Error,
    },
    /// The file is not a valid token file.
    #[error("invalid --token-auth-file {}: {error}", path.display())]
    Syntax {
        /// The file.
        path: PathBuf,
        /// Where and what.
        error: SyntaxError,
    },
}

/// A malformed token file: the (1-based) line and what is wrong there.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("line {line}: {reason}")]
pub struct SyntaxError {
    /// The line.
    pub line: usize,
    /// What is wrong.
    pub reason: String,
}

/// A token-file record that is accepted but not used as written.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum TokenFileWarning {
    /// The token column is empty; the record is skipped.
    EmptyToken {
        /// The record's line.
        line: usize,
    },
    /// The token was already used on `earlier`; this record replaces that.
    DuplicateToken {
        /// The record's line.
        line: usize,
        /// The line of the record it replaces.
        earlier: usize,
    },
}

impl std::fmt::Display for TokenFileWarning {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            TokenFileWarning::EmptyToken { line } => {
                write!(f, "line {line}: empty token; the record is skipped")
            }
            TokenFileWarning::DuplicateToken { line, earlier } => write!(
                f,
                "line {line}: duplicate token (also on line {earlier}); line {line} wins"
            ),
        }
    }
}

/// One CSV record and the (1-based) line it starts on.
#[derive(Debug, PartialEq, Eq)]
struct Record {
    line: usize,
    fields: Vec<String>,
}

/// One physical line as Go's `csv.Reader.readLine` returns it: the text
/// without its line end (a `\r\n` end, or a `\r` before end of file, is
/// dropped), and whether a `\n` ended it.
struct Line<'a> {
    text: &'a str,
    newline: bool,
}

fn lines(text: &str) -> Vec<Line<'_>> {
    text.split_inclusive('\n')
        .map(|seg| match seg.strip_suffix('\n') {
            Some(body) => Line {
                text: body.strip_suffix('\r').unwrap_or(body),
                newline: true,
            },
            None => Line {
                text: seg.strip_suffix('\r').unwrap_or(seg),
                newline: false,
            },
        })
        .collect()
}

const BARE_QUOTE: &str = "bare \" in non-quoted-field";
const BAD_QUOTE: &str = "extraneous or missing \" in quoted-field";

fn parse_error(record: usize, line: usize, column: usize, what: &str) -> SyntaxError {
    let reason = if record == line {
        format!("column {column}: {what}")
    } else {
        format!("column {column}: {what} (in the record that starts on line {record})")
    };
    SyntaxError { line, reason }
}

/// Go's `encoding/csv` reader with its defaults (comma `,`, no comment
/// character, no space trimming, strict quotes) and any number of fields
/// per record; a port of its `readRecord`, column numbers included (1-based
/// bytes).
fn read_csv(text: &str) -> Result<Vec<Record>, SyntaxError> {
    let lines = lines(text);
    let mut next = 0;
    let mut records = Vec::new();
    while let Some(first) = lines.get(next) {
        next += 1;
        if first.text.is_empty() {
            continue; // Empty lines are skipped.
        }
        let record_line = next;
        let (mut line, mut newline, mut line_no) = (first.text, first.newline, next);
        let mut column = 1;
        let mut fields = Vec::new();
        'fields: loop {
            if !line.starts_with('"') {
                let (field, rest) = match line.split_once(',') {
                    Some((field, rest)) => (field, Some(rest)),
                    None => (line, None),
                };
                if let Some(q) = field.find('"') {
                    return Err(parse_error(record_line, line_no, column + q, BARE_QUOTE));
                }
                fields.push(field.to_string());
                match rest {
                    Some(rest) => {
                        column += field.len() + 1;
                        line = rest;
                    }
                    None => break 'fields,
                }
                continue;
            }
            // A quoted field: `""` is a quote; it may span lines.
            line = &line[1..];
            column += 1;
            let mut field = String::new();
            loop {
                if let Some(q) = line.find('"') {
                    field.push_str(&line[..q]);
                    line = &line[q + 1..];
                    column += q + 1;
                    if let Some(rest) = line.strip_prefix('"') {
                        field.push('"');
                        line = rest;
                        column += 1;
                    } else if let Some(rest) = line.strip_prefix(',') {
                        fields.push(field);
                        line = rest;
                        column += 1;
                        continue 'fields;
                    } else if line.is_empty() {
                        fields.push(field);
                        break 'fields;
                    } else {
                        return Err(parse_error(record_line, line_no, column - 1, BAD_QUOTE));
                    }
                } else if !line.is_empty() || newline {
                    field.push_str(line);
                    if newline {
                        field.push('\n');
                    }
                    column += line.len() + usize::from(newline);
                    match lines.get(next) {
                        Some(l) => {
                            next += 1;
                            (line, newline) = (l.text, l.newline);
                            if !line.is_empty() || newline {
                                line_no += 1;
                                column = 1;
                            }
                        }
                        None => (line, newline) = ("", false),
                    }
                } else {
                    // End of file inside the quotes.
                    return Err(parse_error(record_line, line_no, column, BAD_QUOTE));
                }
            }
        }
        records.push(Record {
            line: record_line,
            fields,
        });
    }
    Ok(records)
}

#[cfg(test)]
mod tests {
    use axum::Router;
    use axum::body::Body;
    use axum::http::{HeaderValue, StatusCode};
    use axum::routing::get;
    use http_body_util::BodyExt;
    use tower::ServiceExt;

    use super::*;

    #[test]
    fn public_paths_are_exact() {
        for p in ["/healthz", "/livez", "/readyz", "/version", "/version/"] {
            assert!(is_public(p), "{p}");
        }
        for p in ["/", "/api", "/healthz/etcd", "/versions", "/apis"] {
            assert!(!is_public(p), "{p}");
        }
    }

    #[test]
    fn user_from_admin_certificate() {
        let dir = tempfile::tempdir().expect("tempdir");
        let pki =
            crate::pki::Pki::load_or_create(dir.path(), &["localhost".to_string()]).expect("pki");
        let (_, pem) =
            x509_parser::pem::parse_x509_pem(pki.admin.cert_pem.as_bytes()).expect("pem");
        let user = ClientCertUser::from_der(&pem.contents).expect("user");
        assert_eq!(user.name, "skein-admin");
        assert_eq!(user.groups, ["system:masters"]);
        assert_eq!(
            user.user_info(),
            UserInfo {
                name: "skein-admin".into(),
                uid: None,
                groups: vec!["system:masters".into(), AUTHENTICATED_GROUP.into()],
                extra: BTreeMap::new(),
            }
        );
    }

    #[test]
    fn authenticated_group_is_added_once() {
        let g = |groups: &[&str]| {
            UserInfo::authenticated(
                "u".into(),
                None,
                groups.iter().map(|g| g.to_string()).collect(),
            )
            .groups
        };
        assert_eq!(g(&[]), ["system:authenticated"]);
        assert_eq!(g(&["a"]), ["a", "system:authenticated"]);
        assert_eq!(
            g(&["system:authenticated", "a"]),
            ["system:authenticated", "a"]
        );
        // As upstream's AuthenticatedGroupAdder.
        assert_eq!(g(&["system:unauthenticated"]), ["system:unauthenticated"]);
    }

    // ---- the token file ----

    fn user(name: &str, uid: Option<&str>, groups: &[&str]) -> UserInfo {
        UserInfo {
            name: name.into(),
            uid: uid.map(str::to_string),
            groups: groups.iter().map(|g| g.to_string()).collect(),
            extra: BTreeMap::new(),
        }
    }

    /// Parses `text` and returns each (token, user), sorted by token.
    fn users_of(text: &str, tokens: &[&str]) -> Vec<(String, Option<UserInfo>)> {
        let (auth, _) = TokenAuthenticator::parse(text)
            .unwrap_or_else(|e| panic!("{text:?} should parse: {e}"));
        tokens
            .iter()
            .map(|t| {
                (
                    t.to_string(),
                    auth.authenticate_token(t.as_bytes()).cloned(),
                )
            })
            .collect()
    }

    #[test]
    fn valid_token_files() {
        let alice = |groups: &[&str]| Some(user("alice", Some("1001"), groups));
        #[allow(clippy::type_complexity)]
        let cases: &[(&str, &str, &[(&str, Option<UserInfo>)])] = &[
            (
                "three columns",
                "tok,alice,1001\n",
                &[("tok", alice(&["system:authenticated"]))],
            ),
            (
                "quoted groups",
                "tok,alice,1001,\"dev,ops\"\n",
                &[("tok", alice(&["dev", "ops", "system:authenticated"]))],
            ),
            (
                "one unquoted group",
                "tok,alice,1001,dev",
                &[("tok", alice(&["dev", "system:authenticated"]))],
            ),
            (
                "columns after the 4th are ignored",
                "tok,alice,1001,dev,extra,more\n",
                &[("tok", alice(&["dev", "system:authenticated"]))],
            ),
            (
                "an empty 4th column is one empty group, as strings.Split",
                "tok,alice,1001,\n",
                &[("tok", alice(&["", "system:authenticated"]))],
            ),
            (
                "system:authenticated is not doubled",
                "tok,alice,1001,system:authenticated\n",
                &[("tok", alice(&["system:authenticated"]))],
            ),
            (
                "an empty uid is no uid",
                "tok,bob,\n",
                &[("tok", Some(user("bob", None, &["system:authenticated"])))],
            ),
            (
                "nothing is trimmed",
                "tok, alice ,1001, dev\n",
                &[
                    (
                        "tok",
                        Some(user(
                            " alice ",
                            Some("1001"),
                            &[" dev", "system:authenticated"],
                        )),
                    ),
                    (" tok", None),
                ],
            ),
            (
                "blank lines, CRLF and a missing final newline",
                "\n\r\na,alice,1\r\n\nb,bob,2",
                &[
                    (
                        "a",
                        Some(user("alice", Some("1"), &["system:authenticated"])),
                    ),
                    ("b", Some(user("bob", Some("2"), &["system:authenticated"]))),
                ],
            ),
            (
                "quotes: escaped quote, quoted token, newline inside quotes",
                "\"t\"\"k\",\"al,ice\",1,\"a\nb\"\n",
                &[(
                    "t\"k",
                    Some(user("al,ice", Some("1"), &["a\nb", "system:authenticated"])),
                )],
            ),
            (
                "an empty token is skipped",
                ",nobody,0\ntok,alice,1001\n",
                &[("", None), ("tok", alice(&["system:authenticated"]))],
            ),
            (
                "the last duplicate wins",
                "tok,mallory,6\ntok,alice,1001\n",
                &[("tok", alice(&["system:authenticated"]))],
            ),
            ("an empty file", "", &[("tok", None)]),
            (
                "tokens are case sensitive",
                "Tok,alice,1001\n",
                &[("tok", None), ("Tok", alice(&["system:authenticated"]))],
            ),
        ];
        for (name, text, want) in cases {
            let tokens: Vec<&str> = want.iter().map(|(t, _)| *t).collect();
            let got = users_of(text, &tokens);
            let want: Vec<(String, Option<UserInfo>)> = want
                .iter()
                .map(|(t, u)| (t.to_string(), u.clone()))
                .collect();
            assert_eq!(got, want, "{name}");
        }
    }

    #[test]
    fn invalid_token_files() {
        let cases: &[(&str, &str, &str)] = &[
            (
                "too few columns",
                "a,alice,1\nb,bob\n",
                "line 2: must have at least 3 columns (token, user name, user uid), found 2",
            ),
            (
                "one column",
                "justatoken\n",
                "line 1: must have at least 3 columns (token, user name, user uid), found 1",
            ),
            (
                "no comments, as upstream",
                "# tokens\na,alice,1\n",
                "line 1: must have at least 3 columns (token, user name, user uid), found 1",
            ),
            (
                "a comment with commas is a record, and 3 columns is not checked later",
                "\n\n# a, b\n",
                "line 3: must have at least 3 columns (token, user name, user uid), found 2",
            ),
            (
                "too few columns is checked before the empty token",
                ",alice\n",
                "line 1: must have at least 3 columns (token, user name, user uid), found 2",
            ),
            (
                "a whitespace-only line is a record",
                "a,alice,1\n   \n",
                "line 2: must have at least 3 columns (token, user name, user uid), found 1",
            ),
            (
                "a bare quote",
                "a,al\"ice,1\n",
                "line 1: column 5: bare \" in non-quoted-field",
            ),
            (
                "a space before the opening quote",
                "a,alice,1, \"dev,ops\"\n",
                "line 1: column 12: bare \" in non-quoted-field",
            ),
            (
                "text after the closing quote",
                "a,alice,1,\"dev\"x\n",
                "line 1: column 15: extraneous or missing \" in quoted-field",
            ),
            (
                "an unterminated quote",
                "a,alice,1,\"dev\nb,bob,2\n",
                // Where Go's reader reports it: the end of the last line.
                "line 2: column 9: extraneous or missing \" in quoted-field \
                 (in the record that starts on line 1)",
            ),
        ];
        for (name, text, want) in cases {
            let err = TokenAuthenticator::parse(text)
                .map(|(a, _)| a)
                .expect_err(name);
            assert_eq!(err.to_string(), *want, "{name}");
        }
    }

    #[test]
    fn warnings_for_empty_and_duplicate_tokens() {
        let (auth, warnings) =
            TokenAuthenticator::parse("a,alice,1\n,nobody,0\n\nb,bob,2\na,mallory,3\n")
                .expect("parses");
        assert_eq!(auth.len(), 2);
        assert_eq!(
            warnings,
            [
                TokenFileWarning::EmptyToken { line: 2 },
                TokenFileWarning::DuplicateToken {
                    line: 5,
                    earlier: 1
                },
            ]
        );
        assert_eq!(
            warnings[1].to_string(),
            "line 5: duplicate token (also on line 1); line 5 wins"
        );
        assert_eq!(
            auth.authenticate_token(b"a").map(|u| u.name.as_str()),
            Some("mallory")
        );
    }

    #[test]
    fn debug_does_not_show_tokens() {
        let (auth, _) = TokenAuthenticator::parse("s3cret,alice,1\n").expect("parses");
        assert_eq!(format!("{auth:?}"), "TokenAuthenticator { users: 1 }");
    }

    #[test]
    fn load_names_the_file_and_line() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("tokens.csv");
        std::fs::write(&path, "a,alice,1\nb\n").expect("write");
        let err = TokenAuthenticator::load(&path).expect_err("malformed");
        assert_eq!(
            err.to_string(),
            format!(
                "invalid --token-auth-file {}: line 2: must have at least 3 columns \
                 (token, user name, user uid), found 1",
                path.display()
            )
        );
        let missing = dir.path().join("missing.csv");
        let err = TokenAuthenticator::load(&missing).expect_err("missing");
        assert!(
            err.to_string().starts_with(&format!(
                "cannot read --token-auth-file {}: ",
                missing.display()
            )),
            "{err}"
        );
        std::fs::write(&path, "a,alice,1\n").expect("write");
        assert_eq!(TokenAuthenticator::load(&path).expect("valid").len(), 1);
    }

    #[test]
    fn bearer_header_parsing() {
        let cases: &[(&str, Option<&str>)] = &[
            ("Bearer tok", Some("tok")),
            ("bearer tok", Some("tok")),
            ("BEARER tok", Some("tok")),
            ("  Bearer tok  ", Some("tok")),
            ("Bearer tok extra", Some("tok")),
            ("Bearer  tok", None),
            ("Bearer", None),
            ("Bearer ", None),
            ("Basic dXNlcjpwYXNz", None),
            ("Bearertok", None),
            ("", None),
        ];
        for (value, want) in cases {
            let mut headers = HeaderMap::new();
            headers.insert(
                header::AUTHORIZATION,
                HeaderValue::from_str(value).expect("header"),
            );
            assert_eq!(bearer_token(&headers), want.map(str::as_bytes), "{value:?}");
        }
        assert_eq!(bearer_token(&HeaderMap::new()), None);
    }

    // ---- the middleware ----

    // json.Encoder's trailing newline, as upstream.
    const UNAUTHORIZED: &str = "{\"kind\":\"Status\",\"apiVersion\":\"v1\",\"metadata\":{},\"status\":\"Failure\",\"message\":\"Unauthorized\",\"reason\":\"Unauthorized\",\"code\":401}\n";

    /// A router whose handlers echo the user and whether the Authorization
    /// header reached them, behind [`authenticate`], with `tokens` (if any)
    /// layered outside it as `server::run` does.
    fn router(tokens: Option<&str>) -> Router {
        async fn echo(req: Request) -> String {
            let user = req.extensions().get::<UserInfo>().map(|u| {
                format!(
                    "{} uid={} groups={}",
                    u.name,
                    u.uid.as_deref().unwrap_or("-"),
                    u.groups.join("|")
                )
            });
            let auth = req.headers().contains_key(header::AUTHORIZATION);
            format!(
                "{} authorization={auth}",
                user.as_deref().unwrap_or("anonymous")
            )
        }
        let app = Router::new()
            .route("/api", get(echo))
            .route("/healthz", get(echo))
            .layer(axum::middleware::from_fn(authenticate));
        match tokens {
            Some(text) => {
                let (tokens, _) = TokenAuthenticator::parse(text).expect("token file");
                let auth = Authenticator {
                    tokens: Some(tokens),
                    ..Authenticator::default()
                };
                app.layer(axum::Extension(Arc::new(auth)))
            }
            None => app,
        }
    }

    const TOKENS: &str = "good,alice,1001,\"dev,ops\"\nplain,bob,\n";

    async fn call(
        app: &Router,
        path: &str,
        authorization: Option<&str>,
        cert: Option<ClientCertUser>,
    ) -> (StatusCode, String) {
        let mut req = axum::http::Request::builder().uri(path);
        if let Some(value) = authorization {
            req = req.header(header::AUTHORIZATION, value);
        }
        let mut req = req.body(Body::empty()).expect("request");
        if let Some(cert) = cert {
            req.extensions_mut().insert(cert);
        }
        let resp = app.clone().oneshot(req).await.expect("infallible");
        let code = resp.status();
        let body = resp.into_body().collect().await.expect("body").to_bytes();
        (code, String::from_utf8(body.to_vec()).expect("utf8"))
    }

    fn admin() -> ClientCertUser {
        ClientCertUser {
            name: "skein-admin".into(),
            groups: vec!["system:masters".into()],
        }
    }

    #[tokio::test]
    async fn valid_token_authenticates_and_is_removed() {
        let app = router(Some(TOKENS));
        let (code, body) = call(&app, "/api", Some("Bearer good"), None).await;
        assert_eq!(code, StatusCode::OK);
        assert_eq!(
            body,
            "alice uid=1001 groups=dev|ops|system:authenticated authorization=false"
        );
        let (code, body) = call(&app, "/api", Some("bearer plain"), None).await;
        assert_eq!(code, StatusCode::OK);
        assert_eq!(
            body,
            "bob uid=- groups=system:authenticated authorization=false"
        );
    }

    #[tokio::test]
    async fn bad_token_is_401_even_on_public_paths() {
        let app = router(Some(TOKENS));
        for path in ["/api", "/healthz"] {
            for value in ["Bearer wrong", "Bearer Good", "Bearer good2", "Bearer goo"] {
                let (code, body) = call(&app, path, Some(value), None).await;
                assert_eq!(code, StatusCode::UNAUTHORIZED, "{path} {value}");
                assert_eq!(body, UNAUTHORIZED, "{path} {value}");
            }
        }
    }

    #[tokio::test]
    async fn no_token_is_unauthenticated_not_rejected() {
        let app = router(Some(TOKENS));
        for value in [None, Some("Basic dXNlcjpwYXNz"), Some("Bearer  good")] {
            let (code, body) = call(&app, "/api", value, None).await;
            assert_eq!(code, StatusCode::UNAUTHORIZED, "{value:?}");
            assert_eq!(body, UNAUTHORIZED, "{value:?}");
            let (code, body) = call(&app, "/healthz", value, None).await;
            assert_eq!(code, StatusCode::OK, "{value:?}");
            assert!(body.starts_with("anonymous"), "{value:?}: {body}");
        }
    }

    #[tokio::test]
    async fn client_certificate_wins_over_the_token() {
        let app = router(Some(TOKENS));
        let want = "skein-admin uid=- groups=system:masters|system:authenticated";
        for value in [None, Some("Bearer good"), Some("Bearer wrong")] {
            let (code, body) = call(&app, "/api", value, Some(admin())).await;
            assert_eq!(code, StatusCode::OK, "{value:?}");
            // The token is not looked at, so it is not removed either.
            assert_eq!(
                body,
                format!("{want} authorization={}", value.is_some()),
                "{value:?}"
            );
        }
    }

    #[tokio::test]
    async fn without_a_token_file_bearer_tokens_are_ignored() {
        let app = router(None);
        let (code, body) = call(&app, "/api", Some("Bearer good"), None).await;
        assert_eq!(
            (code, body.as_str()),
            (StatusCode::UNAUTHORIZED, UNAUTHORIZED)
        );
        let (code, _) = call(&app, "/healthz", Some("Bearer good"), None).await;
        assert_eq!(code, StatusCode::OK);
        let (code, body) = call(&app, "/api", None, Some(admin())).await;
        assert_eq!(code, StatusCode::OK);
        assert!(body.starts_with("skein-admin "), "{body}");
    }

    #[tokio::test]
    async fn anonymous_auth_serves_unauthenticated_requests_as_system_anonymous() {
        let auth = Authenticator {
            anonymous: true,
            ..Authenticator::default()
        };
        let app = Router::new()
            .route(
                "/api",
                get(|req: Request| async move {
                    let u = req.extensions().get::<UserInfo>().cloned();
                    u.map(|u| format!("{} {}", u.name, u.groups.join("|")))
                        .unwrap_or_default()
                }),
            )
            .layer(axum::middleware::from_fn(authenticate))
            .layer(axum::Extension(Arc::new(auth)));
        let (code, body) = call(&app, "/api", None, None).await;
        assert_eq!(code, StatusCode::OK);
        assert_eq!(body, "system:anonymous system:unauthenticated");
        let (code, body) = call(&app, "/api", None, Some(admin())).await;
        assert_eq!(code, StatusCode::OK);
        assert_eq!(body, "skein-admin system:masters|system:authenticated");
        // A bad token is never treated as no token.
        let (code, body) = call(&app, "/api", Some("Bearer x"), None).await;
        assert_eq!(
            (code, body.as_str()),
            (StatusCode::UNAUTHORIZED, UNAUTHORIZED)
        );
    }

    #[tokio::test]
    async fn an_empty_token_file_rejects_every_token() {
        let app = router(Some(""));
        let (code, _) = call(&app, "/api", Some("Bearer good"), None).await;
        assert_eq!(code, StatusCode::UNAUTHORIZED);
        let (code, _) = call(&app, "/healthz", Some("Bearer good"), None).await;
        assert_eq!(code, StatusCode::UNAUTHORIZED);
    }
}
