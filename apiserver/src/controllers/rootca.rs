//! kube-controller-manager's root CA publisher: every Active namespace has
//! the `kube-root-ca.crt` ConfigMap holding the CA that verifies Skein's
//! serving certificate (`ca.crt`), described by upstream's annotation;
//! recreated when deleted and set back when changed.

use std::sync::Arc;

use serde_json::{Value, json};

use super::per_namespace::{self, Kept};
use super::serviceaccount::MANAGER;
use crate::registry::{Registry, Target, WriteOptions, resource};
use crate::status::ApiError;

/// The ConfigMap's name.
pub const NAME: &str = "kube-root-ca.crt";
/// The annotation describing it.
pub const DESCRIPTION_ANNOTATION: &str = "kubernetes.io/description";
/// Upstream's description.
pub const DESCRIPTION: &str = "Contains a CA bundle that can be used to verify the kube-apiserver when using internal endpoints such as the internal service IP or kubernetes.default.svc. No other usage is guaranteed across distributions of Kubernetes clusters.";

/// Runs forever, publishing `ca_pem`.
pub async fn run(registry: Registry, ca_pem: String) {
    let Some(res) = resource::builtin("", "v1", "configmaps") else {
        return;
    };
    let ca: Arc<str> = ca_pem.into();
    let kept = Kept {
        what: "root-ca-cert-publisher",
        res,
        name: NAME,
        sync: move |registry: Registry, ns: String| {
            let ca = ca.clone();
            async move { ensure(&registry, &ns, &ca).await }
        },
    };
    per_namespace::run(registry, kept).await;
}

fn opts() -> WriteOptions {
    WriteOptions {
        field_manager: MANAGER.into(),
        ..WriteOptions::default()
    }
}

/// Whether `cm` already holds exactly `ca_pem` and the description.
fn current(cm: &Value, ca_pem: &str) -> bool {
    let described = cm
        .pointer("/metadata/annotations")
        .and_then(|a| a.get(DESCRIPTION_ANNOTATION))
        .and_then(Value::as_str)
        .is_some_and(|d| !d.is_empty());
    cm.get("data") == Some(&json!({"ca.crt": ca_pem})) && described
}

/// Creates or corrects `kube-root-ca.crt` in `ns`.
///
/// # Errors
///
/// Reading or writing failed.
pub async fn ensure(registry: &Registry, ns: &str, ca_pem: &str) -> Result<(), ApiError> {
    let Some(res) = resource::builtin("", "v1", "configmaps") else {
        return Ok(());
    };
    match registry.get(&res, ns, NAME).await {
        Ok(cm) if current(&cm, ca_pem) => Ok(()),
        Ok(_) => {
            registry
                .update_with(&res, ns, NAME, Target::Main, &opts(), |cm| {
                    let mut next = cm.clone();
                    if let Some(map) = next.as_object_mut() {
                        map.insert("data".into(), json!({"ca.crt": ca_pem}));
                    }
                    if let Some(meta) = next.get_mut("metadata").and_then(Value::as_object_mut) {
                        let annotations = meta.entry("annotations").or_insert_with(|| json!({}));
                        if !annotations.is_object() {
                            *annotations = json!({});
                        }
                        if let Some(a) = annotations.as_object_mut() {
                            a.insert(DESCRIPTION_ANNOTATION.into(), json!(DESCRIPTION));
                        }
                    }
                    Ok(next)
                })
                .await?;
            Ok(())
        }
        Err(e) if e.reason() == "NotFound" => {
            let obj = json!({
                "apiVersion": "v1",
                "kind": "ConfigMap",
                "metadata": {
                    "name": NAME,
                    "namespace": ns,
                    "annotations": {DESCRIPTION_ANNOTATION: DESCRIPTION},
                },
                "data": {"ca.crt": ca_pem},
            });
            let obj = res
                .normalize(obj)
                .map_err(|e| ApiError::internal(e.to_string()))?;
            registry.create(&res, ns, obj, &opts()).await?;
            Ok(())
        }
        Err(e) => Err(e),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn current_needs_the_data_and_the_description() {
        let ok = json!({"metadata": {"annotations": {DESCRIPTION_ANNOTATION: DESCRIPTION}}, "data": {"ca.crt": "PEM"}});
        assert!(current(&ok, "PEM"));
        assert!(!current(&ok, "OTHER"));
        let extra = json!({"metadata": {"annotations": {DESCRIPTION_ANNOTATION: "x"}}, "data": {"ca.crt": "PEM", "b": "c"}});
        assert!(!current(&extra, "PEM"));
        let bare = json!({"data": {"ca.crt": "PEM"}});
        assert!(!current(&bare, "PEM"));
    }
}
