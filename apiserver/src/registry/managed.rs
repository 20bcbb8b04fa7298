//! `metadata.managedFields` for Update operations (create, update, and
//! non-apply patches), through the server-side apply engine
//! ([`crate::apply`]).

use serde_json::Value;

use super::object::{now_rfc3339, set_meta};
use super::resource::ResourceInfo;
use crate::apply;

/// The apply request context of a write to `res`.
pub fn request<'a>(
    res: &'a ResourceInfo,
    manager: &'a str,
    subresource: Option<&'a str>,
    now: &'a str,
) -> apply::Request<'a> {
    apply::Request {
        schema: res.schema(),
        api_version: res.api_version,
        kind: res.kind,
        manager,
        subresource,
        status_subresource: res.status,
        now,
    }
}

/// Records an Update by `manager` on `obj` (`old` = the stored object, for
/// updates; `None` on create): see [`apply::update`] for the rules (client
/// managedFields honoured, Update managers capped, empty entries dropped).
///
/// Call it after defaulting and the strategy's prepare step, on the object
/// about to be stored. Never fails: should the engine report an error,
/// the stored managedFields are kept, as upstream's `UpdateNoErrors` does.
pub fn record_update(
    obj: &mut Value,
    old: Option<&Value>,
    res: &ResourceInfo,
    manager: &str,
    subresource: Option<&str>,
) {
    let now = now_rfc3339();
    let req = request(res, manager, subresource, &now);
    if apply::update(&req, old, obj).is_err() {
        let previous = old.and_then(|o| o.get("metadata")?.get("managedFields").cloned());
        set_meta(obj, "managedFields", previous);
    }
}
