//! Parsing API paths into what they address (upstream's `RequestInfo`).
//!
//! ```text
//! /api/v1/namespaces/{ns}/{resource}[/{name}[/{subresource}]]
//! /apis/{group}/{version}/namespaces/{ns}/{resource}[/{name}[/{subresource}]]
//! /api/v1/{resource}[/{name}[/{subresource}]]           (cluster-scoped, or all namespaces)
//! ```
//! `namespaces/{name}/status` and `/finalize` address the Namespace itself.

/// A resource path.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ResourcePath {
    /// API group ("" for `/api`).
    pub group: String,
    /// Version.
    pub version: String,
    /// Namespace from the path, if any.
    pub namespace: Option<String>,
    /// Plural resource.
    pub resource: String,
    /// Object name, if any.
    pub name: Option<String>,
    /// Subresource, if any.
    pub subresource: Option<String>,
}

/// What a path under `/api` or `/apis` addresses.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ApiPath {
    /// `/api`.
    LegacyRoot,
    /// `/apis`.
    GroupsRoot,
    /// `/apis/{group}`.
    Group(String),
    /// `/api/v1` or `/apis/{group}/{version}`.
    GroupVersion(String, String),
    /// A resource, collection or subresource.
    Resource(ResourcePath),
}

/// Parses `path`; `None` if it is not an API path.
pub fn parse(path: &str) -> Option<ApiPath> {
    let parts: Vec<&str> = path.trim_matches('/').split('/').collect();
    if parts.iter().any(|p| p.is_empty()) {
        return None;
    }
    let (group, version, rest) = match parts.as_slice() {
        ["api"] => return Some(ApiPath::LegacyRoot),
        ["apis"] => return Some(ApiPath::GroupsRoot),
        ["apis", g] => return Some(ApiPath::Group((*g).to_string())),
        ["api", v, rest @ ..] => ("", *v, rest),
        ["apis", g, v, rest @ ..] => (*g, *v, rest),
        _ => return None,
    };
    if rest.is_empty() {
        return Some(ApiPath::GroupVersion(
            group.to_string(),
            version.to_string(),
        ));
    }
    let mut rest = rest;
    let mut namespace = None;
    if rest[0] == "namespaces" && rest.len() > 2 && !matches!(rest[2], "status" | "finalize") {
        namespace = Some(rest[1].to_string());
        rest = &rest[2..];
    }
    let (resource, name, subresource) = match rest {
        [r] => (*r, None, None),
        [r, n] => (*r, Some(*n), None),
        [r, n, s] => (*r, Some(*n), Some(*s)),
        // `…/{name}/proxy/{path…}`: the proxied path is not needed, as no
        // backend is ever reached (see `subresource::proxy`).
        [r, n, "proxy", ..] => (*r, Some(*n), Some("proxy")),
        _ => return None,
    };
    Some(ApiPath::Resource(ResourcePath {
        group: group.to_string(),
        version: version.to_string(),
        namespace,
        resource: resource.to_string(),
        name: name.map(str::to_string),
        subresource: subresource.map(str::to_string),
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn res(
        g: &str,
        ns: Option<&str>,
        r: &str,
        n: Option<&str>,
        s: Option<&str>,
    ) -> Option<ApiPath> {
        Some(ApiPath::Resource(ResourcePath {
            group: g.into(),
            version: "v1".into(),
            namespace: ns.map(Into::into),
            resource: r.into(),
            name: n.map(Into::into),
            subresource: s.map(Into::into),
        }))
    }

    #[test]
    fn paths() {
        assert_eq!(parse("/api"), Some(ApiPath::LegacyRoot));
        assert_eq!(
            parse("/apis/apps/v1"),
            Some(ApiPath::GroupVersion("apps".into(), "v1".into()))
        );
        assert_eq!(
            parse("/api/v1/namespaces"),
            res("", None, "namespaces", None, None)
        );
        assert_eq!(
            parse("/api/v1/namespaces/default"),
            res("", None, "namespaces", Some("default"), None)
        );
        assert_eq!(
            parse("/api/v1/namespaces/x/status"),
            res("", None, "namespaces", Some("x"), Some("status"))
        );
        assert_eq!(
            parse("/api/v1/namespaces/x/pods"),
            res("", Some("x"), "pods", None, None)
        );
        assert_eq!(
            parse("/apis/apps/v1/namespaces/x/deployments/web/scale"),
            res("apps", Some("x"), "deployments", Some("web"), Some("scale"))
        );
        assert_eq!(parse("/api/v1/pods"), res("", None, "pods", None, None));
        assert_eq!(parse("/api/v1/a/b/c/d"), None);
        assert_eq!(
            parse("/api/v1/namespaces/x/services/web:80/proxy/healthz/deep"),
            res("", Some("x"), "services", Some("web:80"), Some("proxy"))
        );
        assert_eq!(
            parse("/api/v1/nodes/n1/proxy/metrics"),
            res("", None, "nodes", Some("n1"), Some("proxy"))
        );
        assert_eq!(parse("/api//v1"), None);
    }
}
