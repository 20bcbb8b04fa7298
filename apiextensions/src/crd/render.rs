//! Go's `%#v` of the internal `[]apiextensions.CustomResourceDefinitionVersion`,
//! which upstream prints as the bad value of `spec.versions` errors
//! ("must have exactly one version marked as storage version"). A non-nil
//! pointer prints as its address in Go, which is different on every run;
//! Skein prints a fixed stand-in address.

use serde_json::Value;
use skein_admission::quote;

use super::json::{bool_of, str_of};
use super::view::Version;

const ADDRESS: &str = "0xc000a1e000";

fn pointer(ty: &str, set: bool) -> String {
    if set {
        format!("(*{ty})({ADDRESS})")
    } else {
        format!("(*{ty})(nil)")
    }
}

fn column(c: &Value) -> String {
    format!(
        "apiextensions.CustomResourceColumnDefinition{{Name:{}, Type:{}, Format:{}, Description:{}, Priority:{}, JSONPath:{}}}",
        quote(str_of(c, "name")),
        quote(str_of(c, "type")),
        quote(str_of(c, "format")),
        quote(str_of(c, "description")),
        c.get("priority").and_then(Value::as_i64).unwrap_or(0),
        quote(str_of(c, "jsonPath")),
    )
}

fn list(ty: &str, items: Option<&Vec<Value>>, each: impl Fn(&Value) -> String) -> String {
    match items {
        None => format!("[]{ty}(nil)"),
        Some(items) => {
            let parts: Vec<String> = items.iter().map(each).collect();
            format!("[]{ty}{{{}}}", parts.join(", "))
        }
    }
}

fn version(v: &Version<'_>) -> String {
    format!(
        "apiextensions.CustomResourceDefinitionVersion{{Name:{}, Served:{}, Storage:{}, Deprecated:{}, DeprecationWarning:{}, Schema:{}, Subresources:{}, AdditionalPrinterColumns:{}, SelectableFields:{}}}",
        quote(v.name),
        bool_of(v.raw, "served"),
        v.storage,
        v.deprecated,
        pointer("string", v.deprecation_warning.is_some()),
        pointer("apiextensions.CustomResourceValidation", v.schema.is_some()),
        pointer(
            "apiextensions.CustomResourceSubresources",
            v.subresources.is_some()
        ),
        list(
            "apiextensions.CustomResourceColumnDefinition",
            v.columns,
            column
        ),
        list("apiextensions.SelectableField", v.selectable_fields, |f| {
            format!(
                "apiextensions.SelectableField{{JSONPath:{}}}",
                quote(str_of(f, "jsonPath"))
            )
        }),
    )
}

/// `%#v` of the versions; `present` is false when the CRD has no
/// `versions` at all (a nil slice).
pub(crate) fn versions(versions: &[Version<'_>], present: bool) -> String {
    const TY: &str = "apiextensions.CustomResourceDefinitionVersion";
    if !present {
        return format!("[]{TY}(nil)");
    }
    let parts: Vec<String> = versions.iter().map(version).collect();
    format!("[]{TY}{{{}}}", parts.join(", "))
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::crd::view::Spec;

    #[test]
    fn go_syntax() {
        let crd = json!({"spec": {"versions": [{"name": "v1", "served": true, "storage": false,
            "schema": {"openAPIV3Schema": {"type": "object"}}}]}});
        let spec = Spec::of(&crd);
        assert_eq!(
            versions(&spec.versions, true),
            r#"[]apiextensions.CustomResourceDefinitionVersion{apiextensions.CustomResourceDefinitionVersion{Name:"v1", Served:true, Storage:false, Deprecated:false, DeprecationWarning:(*string)(nil), Schema:(*apiextensions.CustomResourceValidation)(nil), Subresources:(*apiextensions.CustomResourceSubresources)(nil), AdditionalPrinterColumns:[]apiextensions.CustomResourceColumnDefinition(nil), SelectableFields:[]apiextensions.SelectableField(nil)}}"#
        );
        assert_eq!(
            versions(&[], false),
            "[]apiextensions.CustomResourceDefinitionVersion(nil)"
        );
        assert_eq!(
            versions(&[], true),
            "[]apiextensions.CustomResourceDefinitionVersion{}"
        );
    }
}
