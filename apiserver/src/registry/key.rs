//! Storage keys: `/registry/<group>/<resource>/<namespace>/<name>`, with
//! group `core` for the legacy group and no namespace segment for
//! cluster-scoped resources.

use super::resource::ResourceInfo;

/// The prefix holding every object of `res` (`ns = None`) or of one namespace.
pub fn prefix(res: &ResourceInfo, ns: Option<&str>) -> String {
    let group = if res.group.is_empty() {
        "core"
    } else {
        res.group
    };
    match ns {
        Some(ns) if res.namespaced => format!("/registry/{group}/{}/{ns}/", res.plural),
        _ => format!("/registry/{group}/{}/", res.plural),
    }
}

/// The key of one object.
pub fn object(res: &ResourceInfo, ns: &str, name: &str) -> String {
    if res.namespaced {
        format!("{}{name}", prefix(res, Some(ns)))
    } else {
        format!("{}{name}", prefix(res, None))
    }
}

/// The prefix of every object of every resource.
pub const ALL: &str = "/registry/";
