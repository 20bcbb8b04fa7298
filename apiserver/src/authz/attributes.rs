//! What is being asked: upstream's `authorizer.Attributes`, read from a
//! request as its `RequestInfoFactory` reads it, and the 403 upstream
//! answers when it is denied (`responsewriters.Forbidden`).

use std::borrow::Cow;

use axum::http::{Method, StatusCode};
use skein_admission::UserInfo;
use skein_admission::gofmt::quote as go_quote;

use crate::status::ApiError;

/// A request as the authorizer sees it.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Attributes {
    /// Who asks.
    pub user: UserInfo,
    /// `get`, `list`, `watch`, `create`, `update`, `patch`, `delete`,
    /// `deletecollection` for resources (or `impersonate`, `bind`, …);
    /// the lower-cased method for non-resource paths.
    pub verb: String,
    /// Whether this addresses a resource (else [`Attributes::path`]).
    pub resource_request: bool,
    /// The URL path (non-resource requests).
    pub path: String,
    /// API group ("" for core).
    pub api_group: String,
    /// API version.
    pub api_version: String,
    /// Plural resource.
    pub resource: String,
    /// Subresource, "" if none.
    pub subresource: String,
    /// Namespace, "" if none.
    pub namespace: String,
    /// Object name, "" if none.
    pub name: String,
}

/// Upstream's `namespaceSubresources`: `namespaces/{name}/status` and
/// `/finalize` address the Namespace itself.
const NAMESPACE_SUBRESOURCES: &[&str] = &["status", "finalize"];

/// What a request addresses, borrowed from its path: upstream's
/// `RequestInfo` without the user. [`Attributes::from_request`] owns a
/// copy; the priority-and-fairness filter reads it as is, so classifying a
/// request allocates nothing (a `metadata.name=` field selector aside).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Target<'a> {
    /// See [`Attributes::verb`].
    pub verb: Cow<'static, str>,
    /// See [`Attributes::resource_request`].
    pub resource_request: bool,
    /// The URL path.
    pub path: &'a str,
    /// API group ("" for core).
    pub api_group: &'a str,
    /// API version.
    pub api_version: &'a str,
    /// Plural resource.
    pub resource: &'a str,
    /// Subresource, "" if none.
    pub subresource: &'a str,
    /// Namespace, "" if none.
    pub namespace: &'a str,
    /// Object name, "" if none.
    pub name: Cow<'a, str>,
}

/// The most path segments [`Target::parse`] looks at
/// (`apis/{group}/{version}/namespaces/{ns}/{resource}/{name}/{sub}`).
const MAX_SEGMENTS: usize = 8;

impl<'a> Target<'a> {
    /// Upstream's `RequestInfoFactory.NewRequestInfo`: `/api/v1/…` and
    /// `/apis/{group}/{version}/…` with at least a resource are resource
    /// requests, everything else (discovery roots, `/openapi`, `/metrics`,
    /// health) is a non-resource request whose verb is the lower-cased
    /// method. GET without a name is `list` (or `watch` with `?watch=`),
    /// DELETE without a name `deletecollection`; a GET list with a
    /// `metadata.name=` field selector names that object.
    pub fn parse(method: &Method, path: &'a str, query: Option<&str>) -> Target<'a> {
        let mut target = Target {
            verb: lower_method(method),
            path,
            ..Target::default()
        };
        let mut parts = [""; MAX_SEGMENTS];
        let mut count = 0;
        for (i, part) in path.trim_matches('/').split('/').enumerate() {
            if let Some(slot) = parts.get_mut(i) {
                *slot = part;
            }
            count = i + 1;
        }
        let parts = &parts[..count.min(MAX_SEGMENTS)];
        if count < 3 {
            return target;
        }
        let rest = match parts[0] {
            "api" => &parts[1..],
            "apis" if count >= 4 => {
                target.api_group = parts[1];
                &parts[2..]
            }
            _ => return target,
        };
        target.resource_request = true;
        target.api_version = rest[0];
        let mut rest = &rest[1..];
        target.verb = Cow::Borrowed(match *method {
            Method::POST => "create",
            Method::GET | Method::HEAD => "get",
            Method::PUT => "update",
            Method::PATCH => "patch",
            Method::DELETE => "delete",
            _ => "",
        });
        if rest.first() == Some(&"namespaces")
            && let Some(ns) = rest.get(1)
        {
            target.namespace = ns;
            if rest.len() > 2 && !NAMESPACE_SUBRESOURCES.contains(&rest[2]) {
                rest = &rest[2..];
            }
        }
        if let Some(s) = rest.get(2) {
            target.subresource = s;
        }
        if let Some(n) = rest.get(1) {
            target.name = Cow::Borrowed(n);
        }
        if let Some(r) = rest.first() {
            target.resource = r;
        }
        if target.name.is_empty() && target.verb == "get" {
            let (watch, name) = list_options(query);
            target.verb = Cow::Borrowed(if watch { "watch" } else { "list" });
            if let Some(name) = name {
                target.name = Cow::Owned(name);
            }
        }
        if target.name.is_empty() && target.verb == "delete" {
            target.verb = Cow::Borrowed("deletecollection");
        }
        target
    }
}

/// The lower-cased method, without allocating for the standard ones.
fn lower_method(method: &Method) -> Cow<'static, str> {
    Cow::Borrowed(match *method {
        Method::GET => "get",
        Method::POST => "post",
        Method::PUT => "put",
        Method::PATCH => "patch",
        Method::DELETE => "delete",
        Method::HEAD => "head",
        Method::OPTIONS => "options",
        Method::CONNECT => "connect",
        Method::TRACE => "trace",
        _ => return Cow::Owned(method.as_str().to_ascii_lowercase()),
    })
}

impl Attributes {
    /// [`Target::parse`], owned, for `user`.
    pub fn from_request(user: UserInfo, method: &Method, path: &str, query: Option<&str>) -> Self {
        let t = Target::parse(method, path, query);
        Attributes {
            user,
            verb: t.verb.into_owned(),
            resource_request: t.resource_request,
            path: path.to_string(),
            api_group: t.api_group.to_string(),
            api_version: t.api_version.to_string(),
            resource: t.resource.to_string(),
            subresource: t.subresource.to_string(),
            namespace: t.namespace.to_string(),
            name: t.name.into_owned(),
        }
    }

    /// Upstream's `forbiddenMessage`.
    pub fn forbidden_message(&self) -> String {
        let user = go_quote(&self.user.name);
        if !self.resource_request {
            return format!(
                "User {user} cannot {} path {}",
                self.verb,
                go_quote(&self.path)
            );
        }
        let resource = if self.subresource.is_empty() {
            self.resource.clone()
        } else {
            format!("{}/{}", self.resource, self.subresource)
        };
        let head = format!(
            "User {user} cannot {} resource {} in API group {}",
            self.verb,
            go_quote(&resource),
            go_quote(&self.api_group)
        );
        if self.namespace.is_empty() {
            format!("{head} at the cluster scope")
        } else {
            format!("{head} in the namespace {}", go_quote(&self.namespace))
        }
    }

    /// Upstream's `responsewriters.Forbidden`: `apierrors.NewForbidden` for
    /// the group and resource (no subresource) with the message above and
    /// the authorizer's reason after `: `.
    pub fn forbidden(&self, reason: &str) -> ApiError {
        let mut why = self.forbidden_message();
        if !reason.is_empty() {
            why = format!("{why}: {reason}");
        }
        if self.resource.is_empty() {
            return ApiError::new(
                StatusCode::FORBIDDEN,
                "Forbidden",
                format!("forbidden: {why}"),
            )
            .with_details(Default::default());
        }
        ApiError::forbidden(&self.api_group, &self.resource, &self.name, &why)
    }
}

/// `?watch=` (true unless `0`/`false`) and a `metadata.name=` field
/// selector that is a valid path segment.
fn list_options(query: Option<&str>) -> (bool, Option<String>) {
    let Some(q) = query else {
        return (false, None);
    };
    let mut watch = false;
    let mut name = None;
    for (k, v) in form_urlencoded::parse(q.as_bytes()) {
        match &*k {
            "watch" => {
                let v = v.to_ascii_lowercase();
                watch = v != "0" && v != "false";
            }
            "fieldSelector" => {
                let terms: Vec<&str> = v.split(',').collect();
                if let [one] = terms.as_slice()
                    && let Some(n) = one
                        .strip_prefix("metadata.name==")
                        .or_else(|| one.strip_prefix("metadata.name="))
                    && !n.is_empty()
                    && n != "."
                    && n != ".."
                    && !n.contains(['/', '%'])
                {
                    name = Some(n.to_string());
                }
            }
            _ => {}
        }
    }
    (watch, name)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn u() -> UserInfo {
        UserInfo {
            name: "u".into(),
            ..UserInfo::default()
        }
    }

    fn attrs(method: Method, path: &str, query: Option<&str>) -> Attributes {
        Attributes::from_request(u(), &method, path, query)
    }

    #[test]
    fn request_info_as_upstream() {
        let a = attrs(Method::GET, "/apis/apps/v1/namespaces/ns/deployments", None);
        assert_eq!(
            (
                a.verb.as_str(),
                a.api_group.as_str(),
                a.resource.as_str(),
                a.namespace.as_str()
            ),
            ("list", "apps", "deployments", "ns")
        );
        let a = attrs(Method::GET, "/api/v1/pods", Some("watch=true"));
        assert_eq!((a.verb.as_str(), a.namespace.as_str()), ("watch", ""));
        let a = attrs(
            Method::GET,
            "/api/v1/namespaces/ns/pods",
            Some("watch=0&fieldSelector=metadata.name%3Dp"),
        );
        assert_eq!((a.verb.as_str(), a.name.as_str()), ("list", "p"));
        let a = attrs(Method::DELETE, "/api/v1/namespaces/ns/pods", None);
        assert_eq!(a.verb, "deletecollection");
        let a = attrs(
            Method::PATCH,
            "/apis/apps/v1/namespaces/ns/deployments/web/scale",
            None,
        );
        assert_eq!(
            (a.verb.as_str(), a.name.as_str(), a.subresource.as_str()),
            ("patch", "web", "scale")
        );
        // A Namespace is in itself.
        let a = attrs(Method::GET, "/api/v1/namespaces/x", None);
        assert_eq!(
            (
                a.verb.as_str(),
                a.resource.as_str(),
                a.name.as_str(),
                a.namespace.as_str()
            ),
            ("get", "namespaces", "x", "x")
        );
        let a = attrs(Method::PUT, "/api/v1/namespaces/x/finalize", None);
        assert_eq!(
            (a.resource.as_str(), a.subresource.as_str()),
            ("namespaces", "finalize")
        );
        let a = attrs(Method::GET, "/api/v1/namespaces/x/pods/p/log", None);
        assert_eq!((a.verb.as_str(), a.subresource.as_str()), ("get", "log"));
        let a = attrs(
            Method::GET,
            "/api/v1/namespaces/x/services/s:80/proxy/a/b",
            None,
        );
        assert_eq!((a.name.as_str(), a.subresource.as_str()), ("s:80", "proxy"));
        // Discovery and other paths are non-resource requests.
        for path in [
            "/api",
            "/api/v1",
            "/apis",
            "/apis/apps",
            "/apis/apps/v1",
            "/openapi/v3",
            "/healthz",
        ] {
            let a = attrs(Method::GET, path, None);
            assert!(!a.resource_request, "{path}");
            assert_eq!(a.verb, "get");
        }
        assert_eq!(attrs(Method::POST, "/metrics", None).verb, "post");
    }

    #[test]
    fn forbidden_messages_as_upstream() {
        let a = attrs(Method::GET, "/apis/apps/v1/namespaces/ns/deployments", None);
        let e = a.forbidden("");
        assert_eq!(e.code(), StatusCode::FORBIDDEN);
        assert_eq!(
            e.message(),
            "deployments.apps is forbidden: User \"u\" cannot list resource \"deployments\" in API group \"apps\" in the namespace \"ns\""
        );
        let a = attrs(Method::GET, "/api/v1/nodes/n1/proxy/metrics", None);
        assert_eq!(
            a.forbidden("").message(),
            "nodes \"n1\" is forbidden: User \"u\" cannot get resource \"nodes/proxy\" in API group \"\" at the cluster scope"
        );
        let a = attrs(Method::GET, "/metrics", None);
        assert_eq!(
            a.forbidden("").message(),
            "forbidden: User \"u\" cannot get path \"/metrics\""
        );
        let a = attrs(Method::GET, "/api/v1/namespaces/ns/pods", None);
        assert_eq!(
            a.forbidden("RBAC: role.rbac.authorization.k8s.io \"r\" not found")
                .message(),
            "pods is forbidden: User \"u\" cannot list resource \"pods\" in API group \"\" in the namespace \"ns\": RBAC: role.rbac.authorization.k8s.io \"r\" not found"
        );
    }
}
