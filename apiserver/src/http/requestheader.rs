//! Front-proxy (requestheader) authentication: the identity a trusted
//! proxy, such as a host cluster's kube-aggregator, asserts in headers.
//!
//! Aggregated mode (DESIGN §1) puts Skein behind a host's aggregator, which
//! authenticates the user itself and forwards the request with
//! `X-Remote-User`, `X-Remote-Group`, `X-Remote-Extra-<key>` (and, since
//! 1.32, `X-Remote-Uid`), presenting its front-proxy client certificate.
//! The contract, as upstream's `requestheader` authenticator
//! (`k8s.io/apiserver/pkg/authentication/request/headerrequest`):
//!
//! - The headers are trusted **only** on a connection whose client
//!   certificate verifies against the requestheader CA
//!   ([`FrontProxyPeer`], set by [`super::tls`]) and whose common name is
//!   one of the allowed names (any name when the list is empty).
//! - The first non-empty username header names the user; without one the
//!   authenticator does not apply and the next one is tried.
//! - Every value of every group header is a group; each
//!   `<prefix><key>` header is an extra, its key lowercased and
//!   percent-decoded (upstream's `unescapeExtraKey`).
//! - The same headers from anyone else are ignored, and once a request is
//!   authenticated they are removed, so nothing further down the stack can
//!   mistake them for the identity.
//!
//! The configuration comes from the `--requestheader-*` flags, or, when
//! `--requestheader-client-ca-file` is not given and
//! `--authentication-kubeconfig` is, from the host's
//! `kube-system/extension-apiserver-authentication` ConfigMap, as an
//! aggregated API server reads it.

use std::collections::BTreeMap;
use std::path::Path;

use axum::http::HeaderMap;
use axum::http::header::HeaderName;

use super::authn::UserInfo;
use crate::config::FrontProxyConfig;

/// The verified front-proxy certificate of a connection: set by the TLS
/// layer on every request of a connection whose client certificate
/// verified against the requestheader CA.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FrontProxyPeer {
    /// The certificate's common name (checked against the allowed names).
    pub common_name: String,
}

/// What the host's `extension-apiserver-authentication` ConfigMap holds
/// under these keys (each list a JSON array in a string).
const CONFIGMAP_KEYS: [&str; 6] = [
    "requestheader-client-ca-file",
    "requestheader-allowed-names",
    "requestheader-username-headers",
    "requestheader-uid-headers",
    "requestheader-group-headers",
    "requestheader-extra-headers-prefix",
];

/// The front-proxy authenticator's settings, resolved from flags or the
/// host's ConfigMap. Header names are kept lowercased.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RequestHeader {
    /// The requestheader CA bundle (PEM), for the TLS layer.
    pub ca_pem: Vec<u8>,
    /// Common names a front-proxy certificate may have; empty: any.
    pub allowed_names: Vec<String>,
    /// Headers naming the user, first non-empty one wins.
    pub username_headers: Vec<HeaderName>,
    /// Headers naming the user's uid, first non-empty one wins.
    pub uid_headers: Vec<HeaderName>,
    /// Headers whose every value is a group.
    pub group_headers: Vec<HeaderName>,
    /// Prefixes (lowercase) of the extra headers.
    pub extra_prefixes: Vec<String>,
}

/// Why the front-proxy configuration could not be read (a startup error).
#[derive(Debug, thiserror::Error)]
pub enum RequestHeaderError {
    /// The CA file could not be read.
    #[error("reading --requestheader-client-ca-file {path}: {source}")]
    ReadCa {
        /// The file.
        path: String,
        /// Why.
        source: std::io::Error,
    },
    /// A header name is not a valid HTTP header name.
    #[error("invalid header name {0:?} in the requestheader configuration")]
    HeaderName(String),
    /// The host could not be asked for its ConfigMap.
    #[error(
        "reading kube-system/extension-apiserver-authentication through {kubeconfig}: {reason}"
    )]
    Host {
        /// The `--authentication-kubeconfig`.
        kubeconfig: String,
        /// Why.
        reason: String,
    },
    /// A ConfigMap value is not what upstream writes there.
    #[error("kube-system/extension-apiserver-authentication: key {key}: {reason}")]
    ConfigMap {
        /// The data key.
        key: &'static str,
        /// Why.
        reason: String,
    },
}

fn header_names(names: &[String]) -> Result<Vec<HeaderName>, RequestHeaderError> {
    names
        .iter()
        .map(|n| n.trim())
        .filter(|n| !n.is_empty())
        .map(|n| {
            HeaderName::from_bytes(n.to_ascii_lowercase().as_bytes())
                .map_err(|_| RequestHeaderError::HeaderName(n.to_string()))
        })
        .collect()
}

impl RequestHeader {
    /// The configuration the flags describe: `None` when front-proxy
    /// authentication is off (neither `--requestheader-client-ca-file` nor
    /// `--authentication-kubeconfig`).
    pub async fn load(flags: &FrontProxyConfig) -> Result<Option<Self>, RequestHeaderError> {
        if let Some(path) = &flags.requestheader_client_ca_file {
            let ca_pem = std::fs::read(path).map_err(|source| RequestHeaderError::ReadCa {
                path: path.display().to_string(),
                source,
            })?;
            return Self::from_lists(
                ca_pem,
                flags.requestheader_allowed_names.clone(),
                &flags.requestheader_username_headers,
                &flags.requestheader_uid_headers,
                &flags.requestheader_group_headers,
                &flags.requestheader_extra_headers_prefix,
            )
            .map(Some);
        }
        match &flags.authentication_kubeconfig {
            Some(kubeconfig) => Self::from_host(kubeconfig).await.map(Some),
            None => Ok(None),
        }
    }

    fn from_lists(
        ca_pem: Vec<u8>,
        allowed_names: Vec<String>,
        username: &[String],
        uid: &[String],
        group: &[String],
        extra: &[String],
    ) -> Result<Self, RequestHeaderError> {
        Ok(RequestHeader {
            ca_pem,
            allowed_names: allowed_names
                .into_iter()
                .filter(|n| !n.is_empty())
                .collect(),
            username_headers: header_names(username)?,
            uid_headers: header_names(uid)?,
            group_headers: header_names(group)?,
            extra_prefixes: extra
                .iter()
                .map(|p| p.trim().to_ascii_lowercase())
                .filter(|p| !p.is_empty())
                .collect(),
        })
    }

    /// Reads the host's `kube-system/extension-apiserver-authentication`
    /// ConfigMap through `kubeconfig`.
    async fn from_host(kubeconfig: &Path) -> Result<Self, RequestHeaderError> {
        let host = |reason: String| RequestHeaderError::Host {
            kubeconfig: kubeconfig.display().to_string(),
            reason,
        };
        let config =
            kube::config::Kubeconfig::read_from(kubeconfig).map_err(|e| host(e.to_string()))?;
        let options = kube::config::KubeConfigOptions::default();
        let config = kube::Config::from_custom_kubeconfig(config, &options)
            .await
            .map_err(|e| host(e.to_string()))?;
        let client = kube::Client::try_from(config).map_err(|e| host(e.to_string()))?;
        let api: kube::Api<k8s_openapi::api::core::v1::ConfigMap> =
            kube::Api::namespaced(client, "kube-system");
        let cm = api
            .get("extension-apiserver-authentication")
            .await
            .map_err(|e| host(e.to_string()))?;
        Self::from_configmap(&cm.data.unwrap_or_default())
    }

    /// The configuration in a host's `extension-apiserver-authentication`
    /// data, as kube-apiserver's ClusterAuthenticationTrust controller
    /// writes it.
    pub fn from_configmap(data: &BTreeMap<String, String>) -> Result<Self, RequestHeaderError> {
        let [ca_key, names_key, user_key, uid_key, group_key, extra_key] = CONFIGMAP_KEYS;
        let ca = data.get(ca_key).filter(|v| !v.trim().is_empty()).ok_or(
            RequestHeaderError::ConfigMap {
                key: ca_key,
                reason: "missing: the host has no front-proxy CA".into(),
            },
        )?;
        let list = |key: &'static str| -> Result<Vec<String>, RequestHeaderError> {
            match data.get(key) {
                None => Ok(Vec::new()),
                Some(v) if v.trim().is_empty() => Ok(Vec::new()),
                Some(v) => serde_json::from_str(v).map_err(|e| RequestHeaderError::ConfigMap {
                    key,
                    reason: format!("not a JSON list of strings: {e}"),
                }),
            }
        };
        Self::from_lists(
            ca.as_bytes().to_vec(),
            list(names_key)?,
            &list(user_key)?,
            &list(uid_key)?,
            &list(group_key)?,
            &list(extra_key)?,
        )
    }

    /// The user the headers assert, when `peer` may assert one: `None` when
    /// the certificate's name is not allowed or no username header is set
    /// (the request is then authenticated, or not, by the others).
    pub fn user(&self, peer: &FrontProxyPeer, headers: &HeaderMap) -> Option<UserInfo> {
        if !self.allowed_names.is_empty() && !self.allowed_names.contains(&peer.common_name) {
            tracing::debug!(cn = %peer.common_name, "front-proxy certificate not in --requestheader-allowed-names");
            return None;
        }
        let first = |names: &[HeaderName]| {
            names.iter().find_map(|n| {
                headers
                    .get_all(n)
                    .iter()
                    .filter_map(|v| v.to_str().ok())
                    .find(|v| !v.is_empty())
                    .map(str::to_string)
            })
        };
        let name = first(&self.username_headers)?;
        let uid = first(&self.uid_headers);
        let groups = self
            .group_headers
            .iter()
            .flat_map(|n| headers.get_all(n).iter())
            .filter_map(|v| v.to_str().ok())
            .map(str::to_string)
            .collect();
        let mut extra: BTreeMap<String, Vec<String>> = BTreeMap::new();
        for (header, value) in headers {
            let Some(key) = self
                .extra_prefixes
                .iter()
                .find_map(|p| header.as_str().strip_prefix(p.as_str()))
            else {
                continue;
            };
            let (Ok(value), Some(key)) = (value.to_str(), unescape_extra_key(key)) else {
                continue;
            };
            extra.entry(key).or_default().push(value.to_string());
        }
        let mut user = UserInfo::authenticated(name, uid, groups);
        user.extra = extra;
        Some(user)
    }

    /// Removes every header this configuration reads, so that a request
    /// carries its identity only in its extensions.
    pub fn strip(&self, headers: &mut HeaderMap) {
        for n in self
            .username_headers
            .iter()
            .chain(&self.uid_headers)
            .chain(&self.group_headers)
        {
            headers.remove(n);
        }
        let extras: Vec<HeaderName> = headers
            .keys()
            .filter(|h| {
                self.extra_prefixes
                    .iter()
                    .any(|p| h.as_str().starts_with(p.as_str()))
            })
            .cloned()
            .collect();
        for h in extras {
            headers.remove(h);
        }
    }
}

/// Upstream's `unescapeExtraKey`: percent-decoding, lowercased; `None`
/// for a key that is not valid percent-encoding of UTF-8.
fn unescape_extra_key(key: &str) -> Option<String> {
    let bytes = key.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' {
            let hex = bytes.get(i + 1..i + 3)?;
            let hex = std::str::from_utf8(hex).ok()?;
            out.push(u8::from_str_radix(hex, 16).ok()?);
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    String::from_utf8(out).ok().map(|s| s.to_lowercase())
}

#[cfg(test)]
mod tests {
    use super::*;
    use axum::http::HeaderValue;

    fn config(allowed: &[&str]) -> RequestHeader {
        RequestHeader::from_lists(
            b"ca".to_vec(),
            allowed.iter().map(|s| s.to_string()).collect(),
            &["X-Remote-User".into()],
            &["X-Remote-Uid".into()],
            &["X-Remote-Group".into()],
            &["X-Remote-Extra-".into()],
        )
        .expect("valid")
    }

    fn headers(pairs: &[(&str, &str)]) -> HeaderMap {
        let mut h = HeaderMap::new();
        for (k, v) in pairs {
            h.append(
                HeaderName::from_bytes(k.as_bytes()).expect("name"),
                HeaderValue::from_str(v).expect("value"),
            );
        }
        h
    }

    fn peer(cn: &str) -> FrontProxyPeer {
        FrontProxyPeer {
            common_name: cn.into(),
        }
    }

    #[test]
    fn headers_name_the_user_groups_uid_and_extra() {
        let h = headers(&[
            ("x-remote-user", "alice"),
            ("x-remote-uid", "u-1"),
            ("x-remote-group", "dev"),
            ("x-remote-group", "ops"),
            ("x-remote-extra-scopes", "a"),
            ("x-remote-extra-scopes", "b"),
            ("x-remote-extra-example.com%2fKey", "v"),
        ]);
        let user = config(&[])
            .user(&peer("front-proxy-client"), &h)
            .expect("a user");
        assert_eq!(user.name, "alice");
        assert_eq!(user.uid.as_deref(), Some("u-1"));
        assert_eq!(user.groups, ["dev", "ops", "system:authenticated"]);
        assert_eq!(user.extra["scopes"], ["a", "b"]);
        assert_eq!(user.extra["example.com/key"], ["v"]);
    }

    #[test]
    fn a_name_outside_the_allowed_list_asserts_nothing() {
        let h = headers(&[("x-remote-user", "alice")]);
        let c = config(&["aggregator"]);
        assert!(c.user(&peer("someone-else"), &h).is_none());
        assert_eq!(
            c.user(&peer("aggregator"), &h).map(|u| u.name),
            Some("alice".into())
        );
    }

    #[test]
    fn without_a_username_header_the_authenticator_does_not_apply() {
        let h = headers(&[("x-remote-group", "system:masters"), ("x-remote-user", "")]);
        assert!(config(&[]).user(&peer("p"), &h).is_none());
    }

    #[test]
    fn strip_removes_every_identity_header_and_nothing_else() {
        let mut h = headers(&[
            ("x-remote-user", "alice"),
            ("x-remote-group", "g"),
            ("x-remote-extra-k", "v"),
            ("x-remote-uid", "u"),
            ("accept", "application/json"),
        ]);
        config(&[]).strip(&mut h);
        assert_eq!(h.len(), 1);
        assert!(h.contains_key("accept"));
    }

    #[test]
    fn configmap_lists_are_json() {
        let data: BTreeMap<String, String> = [
            ("requestheader-client-ca-file", "PEM"),
            ("requestheader-allowed-names", r#"["front-proxy-client"]"#),
            ("requestheader-username-headers", r#"["X-Remote-User"]"#),
            ("requestheader-group-headers", r#"["X-Remote-Group"]"#),
            (
                "requestheader-extra-headers-prefix",
                r#"["X-Remote-Extra-"]"#,
            ),
        ]
        .into_iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
        let c = RequestHeader::from_configmap(&data).expect("valid");
        assert_eq!(c.allowed_names, ["front-proxy-client"]);
        assert_eq!(
            c.username_headers,
            [HeaderName::from_static("x-remote-user")]
        );
        assert!(c.uid_headers.is_empty());
        assert_eq!(c.extra_prefixes, ["x-remote-extra-"]);

        let mut bad = data.clone();
        bad.insert(
            "requestheader-group-headers".into(),
            "X-Remote-Group".into(),
        );
        let e = RequestHeader::from_configmap(&bad).expect_err("not JSON");
        assert!(e.to_string().contains("requestheader-group-headers"), "{e}");
        bad.remove("requestheader-client-ca-file");
        assert!(RequestHeader::from_configmap(&bad).is_err());
    }

    #[test]
    fn extra_keys_are_unescaped_and_lowercased() {
        assert_eq!(unescape_extra_key("a%2Fb").as_deref(), Some("a/b"));
        assert_eq!(unescape_extra_key("Scopes").as_deref(), Some("scopes"));
        assert_eq!(unescape_extra_key("bad%zz"), None);
        assert_eq!(unescape_extra_key("cut%2"), None);
    }
}
