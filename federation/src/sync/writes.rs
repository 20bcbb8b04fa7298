//! The syncer's writes on the federation, through the registry as field
//! manager [`MANAGER`]: the cleanup finalizer and status. A write to an
//! object that is gone is no error (its informer will say so).

use serde_json::Value;
use skein_apiserver::status::ErrorKind;

use skein_apiserver::registry::{Registry, ResourceInfo, Target, WriteOptions, object};
use skein_apiserver::status::ApiError;

/// The field manager of the syncer's writes on the federation.
pub const MANAGER: &str = "skein-syncer";

/// Write options for the syncer's writes.
pub fn options() -> WriteOptions {
    WriteOptions {
        field_manager: MANAGER.into(),
        ..WriteOptions::default()
    }
}

fn gone_is_done(result: Result<Value, ApiError>) -> Result<(), ApiError> {
    match result {
        Ok(_) => Ok(()),
        Err(e) if e.kind() == ErrorKind::NotFound => Ok(()),
        Err(e) => Err(e),
    }
}

/// Adds (`present`) or removes [`super::CLEANUP_FINALIZER`]; an object
/// being deleted gets no new finalizer.
pub async fn set_finalizer(
    registry: &Registry,
    res: &ResourceInfo,
    ns: &str,
    name: &str,
    present: bool,
) -> Result<(), ApiError> {
    let result = registry
        .update_with(res, ns, name, Target::Main, &options(), |cur| {
            let mut next = cur.clone();
            let mut f = object::finalizers(cur);
            let has = f.iter().any(|x| x == super::CLEANUP_FINALIZER);
            if present && !has && !object::is_deleting(cur) {
                f.push(super::CLEANUP_FINALIZER.to_owned());
            } else if !present && has {
                f.retain(|x| x != super::CLEANUP_FINALIZER);
            } else {
                return Ok(next);
            }
            object::set_finalizers(&mut next, &f);
            Ok(next)
        })
        .await;
    gone_is_done(result)
}

/// Replaces the object's `status`.
pub async fn set_status(
    registry: &Registry,
    res: &ResourceInfo,
    ns: &str,
    name: &str,
    status: &Value,
) -> Result<(), ApiError> {
    let result = registry
        .update_with(res, ns, name, Target::Status, &options(), |cur| {
            let mut next = cur.clone();
            if let Some(m) = next.as_object_mut() {
                m.insert("status".into(), status.clone());
            }
            Ok(next)
        })
        .await;
    gone_is_done(result)
}
