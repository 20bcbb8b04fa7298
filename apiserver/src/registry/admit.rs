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
    /// The authenticated user behind the write (none for the server's own).
    pub requester: Option<&'a skein_admission::UserInfo>,
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
        if let Some(r) = self.requester {
            attrs.user.name.clone_from(&r.name);
            attrs.user.groups.clone_from(&r.groups);
        }
        attrs
    }
}

/// Runs the mutating plugins on `obj` in place.
pub(crate) fn mutate(chain: &Chain, req: &Request<'_>, obj: &mut Value) -> Result<(), ApiError> {
    if is_crd(req.res) && req.subresource.is_none() {
        skein_apiextensions::crd::set_defaults(obj);
    }
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
    let causes = schema_causes(req, obj);
    if !causes.is_empty() {
        let attrs = req.attributes(obj.clone());
        let gvk = GroupVersionKind::new(req.res.group, req.res.version, req.res.kind);
        return Err(to_api_error(
            &Denial::invalid(&gvk, req.name, causes),
            &attrs,
        ));
    }
    if chain.validators().is_empty() {
        return Ok(());
    }
    let mut attrs = req.attributes(std::mem::take(obj));
    let result = chain.validate(&attrs).map_err(|d| to_api_error(&d, &attrs));
    *obj = attrs.object.take().unwrap_or(Value::Null);
    result
}

/// Whether `res` is `customresourcedefinitions.apiextensions.k8s.io`.
pub(crate) fn is_crd(res: &ResourceInfo) -> bool {
    res.group == super::custom::GROUP && res.plural == "customresourcedefinitions"
}

/// The schema-driven checks of a write: a custom resource against its CRD
/// version's structural schema and CEL rules; a CRD against upstream's CRD
/// validation.
fn schema_causes(req: &Request<'_>, obj: &Value) -> Vec<skein_admission::Cause> {
    let status = req.subresource == Some("status");
    if let Some(custom) = &req.res.custom {
        let (causes, _warnings) = match (status, req.old) {
            (true, Some(old)) => custom.validate_status(obj, old),
            _ => custom.validate(obj, req.old),
        };
        return causes;
    }
    if is_crd(req.res) {
        use skein_apiextensions::crd;
        return match (status, req.old) {
            (true, _) => crd::validate_status(obj),
            (false, Some(old)) => crd::validate_update(obj, old),
            (false, None) => crd::validate_create(obj),
        };
    }
    Vec::new()
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
