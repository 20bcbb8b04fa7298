//! The `ServiceAccount` admission plugin (upstream
//! `plugin/pkg/admission/serviceaccount`, v1.33), on Pod creation:
//!
//! - `spec.serviceAccountName` defaults to `default`;
//! - the account must exist, else 403 `pods "x" is forbidden: error
//!   looking up service account ns/sa: serviceaccount "sa" not found`;
//! - unless `automountServiceAccountToken` is false (the Pod's value wins
//!   over the account's), the projected token volume
//!   `kube-api-access-<5 chars>` is added and mounted read-only at
//!   [`TOKEN_MOUNT_PATH`] in every init container and container that does
//!   not already mount something there ([`token`]);
//! - an empty `imagePullSecrets` is copied from the account;
//! - accounts annotated `kubernetes.io/enforce-mountable-secrets: "true"`
//!   limit the Secrets the Pod may reference ([`secrets`]);
//! - mirror Pods (`kubernetes.io/config.mirror`) are left alone but may not
//!   reference accounts, Secrets or token projections.
//!
//! The plugin is pure: the account comes from a [`ServiceAccountLookup`]
//! handed in by the apiserver (an informer cache with a live read on a
//! miss, as upstream's lister + client), and the volume name suffix from a
//! generator handed in with it.

mod secrets;
pub mod token;

use std::sync::Arc;

use serde_json::{Map, Value, json};

use crate::json::{empty_str, str_at, str_of};
use crate::{Attributes, Denial, Mutate, Operation, Validate};

/// The account a Pod without `serviceAccountName` runs as.
pub const DEFAULT_SERVICE_ACCOUNT: &str = "default";
/// Where the token volume is mounted.
pub const TOKEN_MOUNT_PATH: &str = "/var/run/secrets/kubernetes.io/serviceaccount";
/// Prefix of the token volume's name.
pub const TOKEN_VOLUME_PREFIX: &str = "kube-api-access-";
/// The annotation that marks a mirror Pod.
pub const MIRROR_POD_ANNOTATION: &str = "kubernetes.io/config.mirror";
/// The account annotation that turns on mountable-secret enforcement.
pub const ENFORCE_MOUNTABLE_SECRETS: &str = "kubernetes.io/enforce-mountable-secrets";

const PLUGIN: &str = "ServiceAccount";

/// The answer of a [`ServiceAccountLookup`].
#[derive(Debug, Clone, PartialEq)]
pub enum Lookup {
    /// The account, as stored.
    Found(Value),
    /// No such account (after whatever retries the lookup does).
    Missing,
    /// The namespace does not exist or is terminating: the plugin steps
    /// aside so that the namespace check answers, as upstream's
    /// `NamespaceLifecycle` (which runs first there) does.
    NamespaceUnusable,
    /// The account could not be read; the message is reported.
    Failed(String),
}

/// Where the plugin reads ServiceAccounts from.
pub trait ServiceAccountLookup: Send + Sync {
    /// The ServiceAccount `name` in `namespace`.
    fn service_account(&self, namespace: &str, name: &str) -> Lookup;
}

/// The plugin: a [`Mutate`] (defaults, token volume, pull secrets) and a
/// [`Validate`] (existence, mirror Pods, mountable secrets).
#[derive(Clone)]
pub struct ServiceAccountAdmission {
    accounts: Arc<dyn ServiceAccountLookup>,
    suffix: Arc<dyn Fn() -> String + Send + Sync>,
}

impl std::fmt::Debug for ServiceAccountAdmission {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(PLUGIN)
    }
}

impl ServiceAccountAdmission {
    /// A plugin reading accounts from `accounts`; `suffix` returns the 5
    /// random characters of a new token volume's name (upstream's
    /// `SimpleNameGenerator`).
    pub fn new(
        accounts: Arc<dyn ServiceAccountLookup>,
        suffix: Arc<dyn Fn() -> String + Send + Sync>,
    ) -> Self {
        ServiceAccountAdmission { accounts, suffix }
    }

    /// The account a Pod names, or the denial upstream answers with.
    /// `Ok(None)`: the namespace check will answer instead.
    fn account(&self, attrs: &Attributes, name: &str) -> Result<Option<Value>, Denial> {
        let ns = attrs.namespace.as_deref().unwrap_or_default();
        let why = match self.accounts.service_account(ns, name) {
            Lookup::Found(sa) => return Ok(Some(sa)),
            Lookup::NamespaceUnusable => return Ok(None),
            Lookup::Missing => format!("serviceaccount {name:?} not found"),
            Lookup::Failed(message) => message,
        };
        Err(Denial::forbidden(
            PLUGIN,
            format!("error looking up service account {ns}/{name}: {why}"),
        ))
    }
}

/// Whether the plugin looks at this request: a Pod create (no
/// subresource) with an object.
fn applies(attrs: &Attributes) -> bool {
    attrs.operation == Operation::Create
        && attrs.gvr.group.is_empty()
        && attrs.gvr.resource == "pods"
        && attrs.subresource.is_none()
        && attrs.object.as_ref().is_some_and(Value::is_object)
}

fn is_mirror(pod: &Value) -> bool {
    pod.pointer("/metadata/annotations")
        .and_then(Value::as_object)
        .is_some_and(|a| a.contains_key(MIRROR_POD_ANNOTATION))
}

/// `automountServiceAccountToken`: the Pod's choice, else the account's,
/// else true.
fn automount(pod: &Map<String, Value>, sa: &Value) -> bool {
    pod.get("automountServiceAccountToken")
        .and_then(Value::as_bool)
        .or_else(|| {
            sa.get("automountServiceAccountToken")
                .and_then(Value::as_bool)
        })
        .unwrap_or(true)
}

impl Mutate for ServiceAccountAdmission {
    fn name(&self) -> &str {
        PLUGIN
    }

    fn handles(&self, op: Operation) -> bool {
        op == Operation::Create
    }

    fn admit(&self, attrs: &mut Attributes) -> Result<(), Denial> {
        if !applies(attrs) {
            return Ok(());
        }
        let Some(pod) = attrs.object.as_ref() else {
            return Ok(());
        };
        if is_mirror(pod) {
            return self.validate(attrs);
        }
        let Some(spec) = attrs
            .object
            .as_mut()
            .and_then(Value::as_object_mut)
            .and_then(|o| crate::json::ensure_obj(o, "spec"))
        else {
            return Ok(());
        };
        if empty_str(spec, "serviceAccountName") {
            spec.insert("serviceAccountName".into(), json!(DEFAULT_SERVICE_ACCOUNT));
            // The v1 conversion mirrors it into the deprecated field.
            spec.insert("serviceAccount".into(), json!(DEFAULT_SERVICE_ACCOUNT));
        }
        let name = str_of(spec, "serviceAccountName").to_owned();
        let Some(sa) = self.account(attrs, &name)? else {
            return Ok(());
        };
        let Some(spec) = attrs
            .object
            .as_mut()
            .and_then(Value::as_object_mut)
            .and_then(|o| crate::json::ensure_obj(o, "spec"))
        else {
            return Ok(());
        };
        if automount(spec, &sa) {
            token::mount(spec, &|| (self.suffix)());
        }
        let pod_pulls = spec
            .get("imagePullSecrets")
            .and_then(Value::as_array)
            .is_some_and(|a| !a.is_empty());
        if !pod_pulls {
            let names: Vec<Value> = sa
                .get("imagePullSecrets")
                .and_then(Value::as_array)
                .map(|a| {
                    a.iter()
                        .map(|r| json!({"name": str_at(r, "/name")}))
                        .collect()
                })
                .unwrap_or_default();
            if !names.is_empty() {
                spec.insert("imagePullSecrets".into(), Value::Array(names));
            }
        }
        self.validate(attrs)
    }
}

impl Validate for ServiceAccountAdmission {
    fn name(&self) -> &str {
        PLUGIN
    }

    fn handles(&self, op: Operation) -> bool {
        op == Operation::Create
    }

    fn validate(&self, attrs: &Attributes) -> Result<(), Denial> {
        if !applies(attrs) {
            return Ok(());
        }
        let Some(pod) = attrs.object.as_ref() else {
            return Ok(());
        };
        let empty = Map::new();
        let spec = pod.get("spec").and_then(Value::as_object).unwrap_or(&empty);
        if is_mirror(pod) {
            return secrets::mirror_pod(spec).map_err(|m| Denial::forbidden(PLUGIN, m));
        }
        let name = str_of(spec, "serviceAccountName");
        if name.is_empty() {
            let ns = attrs.namespace.as_deref().unwrap_or_default();
            let pod_name = str_at(pod, "/metadata/name");
            return Err(Denial::forbidden(
                PLUGIN,
                format!("no service account specified for pod {ns}/{pod_name}"),
            ));
        }
        let Some(sa) = self.account(attrs, name)? else {
            return Ok(());
        };
        if secrets::enforced(&sa) {
            secrets::limit_references(&sa, spec).map_err(|m| Denial::forbidden(PLUGIN, m))?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests;
