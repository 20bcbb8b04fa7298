//! Authentication: who is making a request.
//!
//! The TLS layer puts a [`ClientCertUser`] on every request of a connection
//! whose client certificate verified against the CA. [`authenticate`] turns
//! it into the request's [`UserInfo`], or answers 401 — except on the public
//! paths that kube-apiserver serves to everyone (its
//! `system:public-info-viewer` role): `/healthz`, `/livez`, `/readyz` and
//! `/version`.

use axum::extract::Request;
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use x509_parser::prelude::X509Certificate;

use super::status::ApiError;

/// The group every authenticated user belongs to.
pub const AUTHENTICATED_GROUP: &str = "system:authenticated";

/// An authenticated user, as kube's `user.Info`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UserInfo {
    /// The user name.
    pub name: String,
    /// The groups, always including [`AUTHENTICATED_GROUP`].
    pub groups: Vec<String>,
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
}

/// Whether `path` is served to unauthenticated clients.
pub fn is_public(path: &str) -> bool {
    matches!(
        path,
        "/healthz" | "/livez" | "/readyz" | "/version" | "/version/"
    )
}

/// Middleware: attaches [`UserInfo`] to authenticated requests and rejects
/// unauthenticated ones with 401, except on [public](is_public) paths.
pub async fn authenticate(mut req: Request, next: Next) -> Response {
    let user = req.extensions().get::<ClientCertUser>().map(|c| {
        let mut groups = c.groups.clone();
        if !groups.iter().any(|g| g == AUTHENTICATED_GROUP) {
            groups.push(AUTHENTICATED_GROUP.to_string());
        }
        UserInfo {
            name: c.name.clone(),
            groups,
        }
    });
    match user {
        Some(user) => {
            req.extensions_mut().insert(user);
            next.run(req).await
        }
        None if is_public(req.uri().path()) => next.run(req).await,
        None => ApiError::unauthorized().into_response(),
    }
}

#[cfg(test)]
mod tests {
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
    }
}
