//! Runs the admission [`Chain`] inside the registry's write path.
//!
//! Order on every write (create, update, patch, apply), as upstream's
//! handlers and `BeforeCreate`/`BeforeUpdate` do it:
//!
//! ```text
//! decoded object → Chain::admit (defaulting, mutation)
//!                → strategy (system fields, generation, status split)
//!                → metadata validation → Chain::validate → storage
//! ```
//!
//! A [`Denial`] becomes the matching `metav1.Status` here and nowhere else.

use serde_json::Value;
use skein_admission::{
    Attributes, Chain, Denial, GroupVersionKind, GroupVersionResource, Operation,
};

use super::ResourceInfo;
use crate::status::ApiError;

/// What one admission pass is about.
pub(crate) struct Request<'a> {
    pub res: &'a ResourceInfo,
    pub operation: Operation,
    pub namespace: &'a str,
    pub name: &'a str,
    pub subresource: Option<&'a str>,
    pub old: Option<&'a Value>,
    pub dry_run: bool,
}

impl Request<'_> {
    fn attributes(&self, object: Value) -> Attributes {
        let res = self.res;
        let mut attrs = Attributes::new(
            self.operation,
            GroupVersionResource::new(res.group, res.version, res.plural),
            GroupVersionKind::new(res.group, res.version, res.kind),
            self.name,
        );
        attrs.namespace =
            (res.namespaced && !self.namespace.is_empty()).then(|| self.namespace.to_string());
        attrs.subresource = self.subresource.map(str::to_string);
        attrs.object = Some(object);
        attrs.old_object = self.old.cloned();
        attrs.dry_run = self.dry_run;
        attrs
    }
}

/// Runs the mutating plugins on `obj` in place.
pub(crate) fn mutate(chain: &Chain, req: &Request<'_>, obj: &mut Value) -> Result<(), ApiError> {
    if chain.mutators().is_empty() {
        return Ok(());
    }
    let mut attrs = req.attributes(std::mem::take(obj));
    let result = chain.admit(&mut attrs);
    let denial = result.err();
    *obj = attrs.object.take().unwrap_or(Value::Null);
    match denial {
        None => Ok(()),
        Some(d) => {
            attrs.object = Some(obj.clone());
            Err(to_api_error(&d, &attrs))
        }
    }
}

/// Runs the validating plugins on the object as it will be stored (moved
/// into the attributes and back, not copied).
pub(crate) fn validate(chain: &Chain, req: &Request<'_>, obj: &mut Value) -> Result<(), ApiError> {
    if chain.validators().is_empty() {
        return Ok(());
    }
    let mut attrs = req.attributes(std::mem::take(obj));
    let result = chain.validate(&attrs).map_err(|d| to_api_error(&d, &attrs));
    *obj = attrs.object.take().unwrap_or(Value::Null);
    result
}

/// A denial as the `metav1.Status` upstream sends for it.
pub(crate) fn to_api_error(denial: &Denial, attrs: &Attributes) -> ApiError {
    let message = denial.status_message(attrs);
    match denial {
        Denial::Invalid {
            group,
            kind,
            name,
            causes,
        } => {
            let mut err = ApiError::new(
                axum::http::StatusCode::UNPROCESSABLE_ENTITY,
                "Invalid",
                message,
            )
            .with_details(
                k8s_openapi::apimachinery::pkg::apis::meta::v1::StatusDetails {
                    name: (!name.is_empty()).then(|| name.clone()),
                    group: (!group.is_empty()).then(|| group.clone()),
                    kind: Some(kind.clone()),
                    ..Default::default()
                },
            );
            for c in causes {
                err = err.with_cause(&c.reason, &c.message, &c.field);
            }
            err
        }
        Denial::Forbidden { .. } => {
            let res = &attrs.gvr;
            ApiError::new(axum::http::StatusCode::FORBIDDEN, "Forbidden", message).with_details(
                k8s_openapi::apimachinery::pkg::apis::meta::v1::StatusDetails {
                    name: (!attrs.name.is_empty()).then(|| attrs.name.clone()),
                    group: (!res.group.is_empty()).then(|| res.group.clone()),
                    kind: Some(res.resource.clone()),
                    ..Default::default()
                },
            )
        }
        Denial::BadRequest { .. } => ApiError::bad_request(message),
        Denial::Internal { .. } => ApiError::internal(message),
    }
}
