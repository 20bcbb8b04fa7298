//! kube-controller-manager's ServiceAccount controller: every Active
//! namespace has the `default` ServiceAccount, recreated when deleted.

use serde_json::json;

use super::per_namespace::{self, Kept};
use crate::registry::{Registry, WriteOptions, resource};
use crate::status::ApiError;

/// The account every namespace gets.
pub const DEFAULT: &str = "default";

/// The field manager upstream's controllers write as.
pub const MANAGER: &str = "kube-controller-manager";

/// Runs forever.
pub async fn run(registry: Registry) {
    let Some(res) = resource::builtin("", "v1", "serviceaccounts") else {
        return;
    };
    let kept = Kept {
        what: "serviceaccount",
        res,
        name: DEFAULT,
        sync: move |registry: Registry, ns: String| async move { ensure(&registry, &ns).await },
    };
    per_namespace::run(registry, kept).await;
}

/// Creates the `default` ServiceAccount in `ns` when it is missing.
///
/// # Errors
///
/// Reading or creating failed (see [`per_namespace::settled`] for the
/// failures that need no retry).
pub async fn ensure(registry: &Registry, ns: &str) -> Result<(), ApiError> {
    let Some(res) = resource::builtin("", "v1", "serviceaccounts") else {
        return Ok(());
    };
    match registry.get(&res, ns, DEFAULT).await {
        Ok(_) => return Ok(()),
        Err(e) if e.reason() == "NotFound" => {}
        Err(e) => return Err(e),
    }
    let obj = json!({"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": DEFAULT, "namespace": ns}});
    let obj = res
        .normalize(obj)
        .map_err(|e| ApiError::internal(e.to_string()))?;
    let opts = WriteOptions {
        field_manager: MANAGER.into(),
        ..WriteOptions::default()
    };
    registry.create(&res, ns, obj, &opts).await?;
    tracing::debug!(namespace = ns, "created the default ServiceAccount");
    Ok(())
}
