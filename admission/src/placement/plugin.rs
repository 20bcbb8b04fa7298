//! The admission plugin that rejects malformed placement annotations.

use serde_json::Value;

use crate::json::object_name;
use crate::{Attributes, Denial, Operation, Validate};

/// Validates the placement annotations (DESIGN.md §3) of every object of
/// every kind on create and update of the main resource (subresources keep
/// the stored metadata). A malformed one is a 422 naming the annotation.
#[derive(Debug, Default, Clone, Copy)]
pub struct PlacementValidation;

impl Validate for PlacementValidation {
    fn name(&self) -> &str {
        "PlacementAnnotations"
    }

    fn handles(&self, op: Operation) -> bool {
        matches!(op, Operation::Create | Operation::Update)
    }

    fn validate(&self, attrs: &Attributes) -> Result<(), Denial> {
        if attrs.subresource.is_some() {
            return Ok(());
        }
        let Some(obj) = attrs.object.as_ref() else {
            return Ok(());
        };
        let Some(annotations) = obj
            .pointer("/metadata/annotations")
            .and_then(Value::as_object)
        else {
            return Ok(());
        };
        super::parse(annotations, &attrs.gvk.kind)
            .map(|_| ())
            .map_err(|causes| Denial::invalid(&attrs.gvk, object_name(obj, &attrs.name), causes))
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::{GroupVersionKind, GroupVersionResource};

    #[test]
    fn rejects_with_the_upstream_shape() {
        let mut attrs = Attributes::new(
            Operation::Create,
            GroupVersionResource::new("apps", "v1", "deployments"),
            GroupVersionKind::new("apps", "v1", "Deployment"),
            "web",
        );
        attrs.object = Some(
            json!({"metadata": {"name": "web", "annotations": {"skein.io/drift": "Sometimes"}}}),
        );
        let d = PlacementValidation.validate(&attrs).unwrap_err();
        assert_eq!(d.code(), 422);
        assert_eq!(
            d.to_string(),
            r#"Deployment.apps "web" is invalid: metadata.annotations[skein.io/drift]: Unsupported value: "Sometimes": supported values: "Enforce", "Report", "Ignore""#
        );
        attrs.object =
            Some(json!({"metadata": {"name": "web", "annotations": {"skein.io/drift": "Report"}}}));
        assert!(PlacementValidation.validate(&attrs).is_ok());
        attrs.subresource = Some("status".into());
        attrs.object = Some(json!({"metadata": {"annotations": {"skein.io/drift": "x"}}}));
        assert!(PlacementValidation.validate(&attrs).is_ok());
    }
}
