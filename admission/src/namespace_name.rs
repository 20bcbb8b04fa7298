//! The `kubernetes.io/metadata.name` label of Namespaces: upstream sets it
//! to the Namespace's name in defaulting and again in the namespace
//! strategy's `Canonicalize`, on every create and update, so it always
//! equals the name and users cannot change or remove it.

use serde_json::{Map, Value, json};

use crate::json::{ensure_obj, str_at};
use crate::{Attributes, Denial, Mutate, Operation};

/// The label's key.
pub const LABEL: &str = "kubernetes.io/metadata.name";

/// Sets the label on Namespace writes (any subresource: the status and
/// finalize strategies canonicalize too).
#[derive(Debug, Clone, Copy, Default)]
pub struct NamespaceName;

/// Sets `metadata.labels[LABEL]` of the Namespace `obj` to `name` (the
/// object's own name, else `fallback`). Nothing happens without a name.
pub fn label(obj: &mut Value, fallback: &str) {
    let name = match str_at(obj, "/metadata/name") {
        "" => fallback.to_owned(),
        n => n.to_owned(),
    };
    if name.is_empty() {
        return;
    }
    let Some(meta) = obj.as_object_mut().and_then(|o| ensure_obj(o, "metadata")) else {
        return;
    };
    if !matches!(meta.get("labels"), Some(Value::Object(_))) {
        meta.insert("labels".into(), Value::Object(Map::new()));
    }
    if let Some(labels) = meta.get_mut("labels").and_then(Value::as_object_mut) {
        labels.insert(LABEL.into(), json!(name));
    }
}

impl Mutate for NamespaceName {
    fn name(&self) -> &str {
        "NamespaceMetadataName"
    }

    fn handles(&self, op: Operation) -> bool {
        matches!(op, Operation::Create | Operation::Update)
    }

    fn admit(&self, attrs: &mut Attributes) -> Result<(), Denial> {
        if !(attrs.gvr.group.is_empty() && attrs.gvr.resource == "namespaces") {
            return Ok(());
        }
        let fallback = attrs.name.clone();
        if let Some(obj) = attrs.object.as_mut().filter(|o| o.is_object()) {
            label(obj, &fallback);
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{GroupVersionKind, GroupVersionResource};

    fn attrs(op: Operation, obj: Value) -> Attributes {
        let mut a = Attributes::new(
            op,
            GroupVersionResource::new("", "v1", "namespaces"),
            GroupVersionKind::new("", "v1", "Namespace"),
            "team-a",
        );
        a.object = Some(obj);
        a
    }

    #[test]
    fn create_sets_the_label() {
        let mut a = attrs(Operation::Create, json!({"metadata": {"name": "team-a"}}));
        NamespaceName.admit(&mut a).unwrap();
        assert_eq!(
            a.object.unwrap()["metadata"]["labels"],
            json!({"kubernetes.io/metadata.name": "team-a"})
        );
    }

    #[test]
    fn update_cannot_change_or_drop_it() {
        let mut a = attrs(
            Operation::Update,
            json!({"metadata": {"name": "team-a", "labels": {"kubernetes.io/metadata.name": "x", "a": "b"}}}),
        );
        NamespaceName.admit(&mut a).unwrap();
        assert_eq!(
            a.object.unwrap()["metadata"]["labels"],
            json!({"kubernetes.io/metadata.name": "team-a", "a": "b"})
        );
        let mut a = attrs(Operation::Update, json!({"metadata": {"labels": null}}));
        NamespaceName.admit(&mut a).unwrap();
        assert_eq!(
            a.object.unwrap()["metadata"]["labels"],
            json!({"kubernetes.io/metadata.name": "team-a"})
        );
    }

    #[test]
    fn other_resources_are_untouched() {
        let mut a = attrs(Operation::Create, json!({"metadata": {"name": "x"}}));
        a.gvr = GroupVersionResource::new("", "v1", "configmaps");
        NamespaceName.admit(&mut a).unwrap();
        assert_eq!(a.object.unwrap(), json!({"metadata": {"name": "x"}}));
    }
}
