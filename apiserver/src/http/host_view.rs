//! What a host cluster sees of Skein at the root path (aggregated mode).
//!
//! A host registers Skein with an `APIService` for
//! `v1alpha1.federation.skein.io`, so its aggregator sends everything under
//! `/apis/federation.skein.io/v1alpha1` to Skein, and the host's own
//! controllers then treat that group version as part of the host: the
//! namespace controller deletes every namespaced resource it advertises
//! from each host namespace being deleted, the garbage collector and the
//! quota controller list and watch every resource it advertises. Skein's
//! namespaces are not the host's, so a `Placement` in Skein's `team-a`
//! must never be deleted because the host deleted its own `team-a`.
//!
//! **The rule.** A *host request* is one authenticated by the front proxy
//! (the host's aggregator, [`FrontProxied`]) to a path that is not under
//! [`AGGREGATED_PREFIX`](super::routes::AGGREGATED_PREFIX). For host
//! requests Skein shows only the cluster-scoped `federations` of
//! `federation.skein.io/v1alpha1` (with its `status` and `proxy`
//! subresources in discovery and OpenAPI): discovery lists nothing else,
//! every other resource, group and the core API are 404, and nothing is
//! namespaced, so nothing the host does to its namespaces reaches Skein's.
//! Host requests are authorized by the host (`authz::delegated`) when
//! delegation is configured. Everything else Skein serves, its namespaced
//! types included, is reached through the prefix (the `federations/proxy`
//! subresource, which the host authorizes; Skein then applies its own
//! RBAC to the user the host names) or directly.
//!
//! Invariant: the router marks a request with [`HostView`] (in
//! `http/authz.rs`) before any handler runs; handlers that serve the root
//! path consult [`HostView`] and nothing else to decide.

use super::routes::AGGREGATED_PREFIX;

/// The federation's API group.
pub const GROUP: &str = crate::controllers::crd::FEDERATION_GROUP;
/// The only version of it.
pub const VERSION: &str = crate::controllers::crd::FEDERATION_VERSION;
/// The one resource a host sees.
pub const RESOURCE: &str = "federations";

/// Request extension: the identity came from the front-proxy headers of an
/// allowed front-proxy certificate (set by authentication).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FrontProxied;

/// Request extension: a host request (see the module documentation).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct HostView;

/// Whether a request to `path` (as sent) by a front-proxied user is a host
/// request: anything but the prefix path and what lies below it.
pub fn is_host_request(front_proxied: bool, path: &str) -> bool {
    if !front_proxied {
        return false;
    }
    match path.strip_prefix(AGGREGATED_PREFIX) {
        Some(rest) => !(rest.is_empty() || rest.starts_with('/')),
        None => true,
    }
}

/// Whether a host sees `group/version` (discovery, the group list).
pub fn shows_group_version(group: &str, version: &str) -> bool {
    group == GROUP && version == VERSION
}

/// Whether a host sees resource `plural` of `group/version`.
pub fn shows_resource(group: &str, version: &str, plural: &str) -> bool {
    shows_group_version(group, version) && plural == RESOURCE
}

/// Whether a host sees the OpenAPI path `path` (v2 paths, or v3 paths of
/// the group version's document).
pub fn shows_openapi_path(path: &str) -> bool {
    let base = format!("/apis/{GROUP}/{VERSION}/");
    path == base
        || path
            .strip_prefix(&base)
            .is_some_and(|rest| rest == RESOURCE || rest.starts_with(&format!("{RESOURCE}/")))
        || path
            .strip_prefix(&format!("/apis/{GROUP}/{VERSION}/watch/"))
            .is_some_and(|rest| rest == RESOURCE || rest.starts_with(&format!("{RESOURCE}/")))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_front_proxied_requests_outside_the_prefix_are_host_requests() {
        let root = "/apis/federation.skein.io/v1alpha1/placements";
        assert!(is_host_request(true, root));
        assert!(is_host_request(true, "/apis"));
        assert!(is_host_request(true, "/openapi/v2"));
        assert!(!is_host_request(false, root));
        let under = format!("{AGGREGATED_PREFIX}/api/v1/namespaces");
        assert!(!is_host_request(true, &under));
        assert!(!is_host_request(true, AGGREGATED_PREFIX));
        // A longer name is not the prefix.
        let other = format!("{AGGREGATED_PREFIX}x/api");
        assert!(is_host_request(true, &other));
    }

    #[test]
    fn a_host_sees_only_federations() {
        assert!(shows_resource(GROUP, VERSION, "federations"));
        for plural in ["clusters", "placements", "clusterplacements"] {
            assert!(!shows_resource(GROUP, VERSION, plural), "{plural}");
        }
        assert!(!shows_resource("apps", "v1", "federations"));
        assert!(!shows_group_version("", "v1"));
    }

    #[test]
    fn openapi_paths_of_federations_only() {
        for p in [
            "/apis/federation.skein.io/v1alpha1/",
            "/apis/federation.skein.io/v1alpha1/federations",
            "/apis/federation.skein.io/v1alpha1/federations/{name}",
            "/apis/federation.skein.io/v1alpha1/federations/{name}/status",
            "/apis/federation.skein.io/v1alpha1/watch/federations",
        ] {
            assert!(shows_openapi_path(p), "{p}");
        }
        for p in [
            "/apis/federation.skein.io/v1alpha1/namespaces/{namespace}/placements",
            "/apis/federation.skein.io/v1alpha1/clusters",
            "/apis/federation.skein.io/v1alpha1/federationsx",
            "/api/v1/namespaces",
        ] {
            assert!(!shows_openapi_path(p), "{p}");
        }
    }
}
