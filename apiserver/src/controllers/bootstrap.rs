//! Objects that exist from the first start: the `default`, `kube-system`,
//! `kube-public` and `kube-node-lease` namespaces.

use serde_json::json;

use crate::status::ApiError;
use crate::registry::{Registry, WriteOptions, resource};

/// The namespaces every cluster has.
pub const SYSTEM_NAMESPACES: &[&str] =
    &["default", "kube-system", "kube-public", "kube-node-lease"];

/// Creates the system namespaces that are missing. Idempotent.
pub async fn ensure(registry: &Registry) -> Result<(), ApiError> {
    let Some(namespaces) = resource::find("", "v1", "namespaces") else {
        return Ok(());
    };
    let opts = WriteOptions {
        dry_run: false,
        field_manager: "skein".into(),
        ..WriteOptions::default()
    };
    for name in SYSTEM_NAMESPACES {
        let obj = json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}});
        let obj = (namespaces.normalize)(obj).map_err(|e| ApiError::internal(e.to_string()))?;
        match registry.create(namespaces, "", obj, &opts).await {
            Ok(_) => tracing::info!(namespace = name, "created system namespace"),
            Err(e) if e.reason() == "AlreadyExists" => {}
            Err(e) => return Err(e),
        }
    }
    Ok(())
}
