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

/// The prefix of every Event: core/v1 Events, which events.k8s.io/v1
/// Events are stored as. No other resource's keys start with it (a CRD's
/// group has a dot, so it is never `core`). What `--event-ttl` expires.
pub const EVENTS: &str = "/registry/core/events/";

#[cfg(test)]
mod tests {
    use super::*;
    use crate::registry::resource::Resources;

    #[test]
    fn events_prefix_is_the_core_events_prefix() {
        let resources = Resources::new();
        let events = resources.find("", "v1", "events").expect("core/v1 events");
        assert_eq!(prefix(&events, None), EVENTS);
        let configmaps = resources.find("", "v1", "configmaps").expect("configmaps");
        assert!(!object(&configmaps, "default", "x").starts_with(EVENTS));
    }
}
