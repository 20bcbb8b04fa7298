//! Go's `%#v` of the internal `[]apiextensions.CustomResourceDefinitionVersion`
//! and `apiextensions.JSONSchemaProps`, which upstream prints as the bad
//! value of `spec.versions` errors ("must have exactly one version marked
//! as storage version") and of root schemas a status subresource forbids. A non-nil
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

/// Go's `%#v` of a value held in an `interface{}` (`apiextensions.JSON`).
fn interface(v: &Value, depth: usize) -> String {
    if depth > super::structural::MAX_DEPTH {
        return "interface {}(nil)".to_owned();
    }
    match v {
        Value::Null => "interface {}(nil)".to_owned(),
        Value::Bool(b) => b.to_string(),
        Value::Number(n) => n.to_string(),
        Value::String(s) => quote(s),
        Value::Array(a) => {
            let parts: Vec<String> = a.iter().map(|x| interface(x, depth + 1)).collect();
            format!("[]interface {{}}{{{}}}", parts.join(", "))
        }
        Value::Object(m) => {
            let parts: Vec<String> = m
                .iter()
                .map(|(k, x)| format!("{}:{}", quote(k), interface(x, depth + 1)))
                .collect();
            format!("map[string]interface {{}}{{{}}}", parts.join(", "))
        }
    }
}

fn strings_of(v: Option<&Value>) -> String {
    match v.and_then(Value::as_array) {
        None => "[]string(nil)".to_owned(),
        Some(a) => {
            let parts: Vec<String> = a
                .iter()
                .map(|s| quote(s.as_str().unwrap_or_default()))
                .collect();
            format!("[]string{{{}}}", parts.join(", "))
        }
    }
}

fn schema_list(v: Option<&Value>, depth: usize) -> String {
    const TY: &str = "[]apiextensions.JSONSchemaProps";
    match v.and_then(Value::as_array) {
        None => format!("{TY}(nil)"),
        Some(a) => {
            let parts: Vec<String> = a.iter().map(|s| schema_props_at(s, depth + 1)).collect();
            format!("{TY}{{{}}}", parts.join(", "))
        }
    }
}

fn schema_map(ty: &str, v: Option<&Value>, depth: usize) -> String {
    match v.and_then(Value::as_object) {
        None => format!("{ty}(nil)"),
        Some(m) => {
            let parts: Vec<String> = m
                .iter()
                .map(|(k, s)| format!("{}:{}", quote(k), schema_props_at(s, depth + 1)))
                .collect();
            format!("{ty}{{{}}}", parts.join(", "))
        }
    }
}

fn rules(v: Option<&Value>) -> String {
    const TY: &str = "apiextensions.ValidationRules";
    match v.and_then(Value::as_array) {
        None => format!("{TY}(nil)"),
        Some(a) => {
            let parts: Vec<String> = a
                .iter()
                .map(|r| {
                    format!(
                        "apiextensions.ValidationRule{{Rule:{}, Message:{}, MessageExpression:{}, Reason:{}, FieldPath:{}, OptionalOldSelf:{}}}",
                        quote(str_of(r, "rule")),
                        quote(str_of(r, "message")),
                        quote(str_of(r, "messageExpression")),
                        pointer("apiextensions.FieldValueErrorReason", set(r, "reason")),
                        quote(str_of(r, "fieldPath")),
                        pointer("bool", set(r, "optionalOldSelf")),
                    )
                })
                .collect();
            format!("{TY}{{{}}}", parts.join(", "))
        }
    }
}

fn set(v: &Value, key: &str) -> bool {
    v.get(key).is_some_and(|x| !x.is_null())
}

/// Go's `%#v` of the internal `apiextensions.JSONSchemaProps` that `schema`
/// (a v1 `JSONSchemaProps` as JSON) converts to; pointers print as the
/// stand-in address.
pub(crate) fn schema_props(schema: &Value) -> String {
    schema_props_at(schema, 0)
}

fn schema_props_at(s: &Value, depth: usize) -> String {
    if depth > super::structural::MAX_DEPTH {
        return "apiextensions.JSONSchemaProps{}".to_owned();
    }
    let p = |ty: &str, key: &str| pointer(ty, set(s, key));
    let enum_values = match s.get("enum").and_then(Value::as_array) {
        None => "[]apiextensions.JSON(nil)".to_owned(),
        Some(a) => {
            let parts: Vec<String> = a.iter().map(|x| interface(x, depth + 1)).collect();
            format!("[]apiextensions.JSON{{{}}}", parts.join(", "))
        }
    };
    let dependencies = match s.get("dependencies").and_then(Value::as_object) {
        None => "apiextensions.JSONSchemaDependencies(nil)".to_owned(),
        Some(m) => {
            let parts: Vec<String> = m
                .iter()
                .map(|(k, d)| {
                    let (schema, property) = match d {
                        Value::Array(_) => (false, strings_of(Some(d))),
                        _ => (true, "[]string(nil)".to_owned()),
                    };
                    format!(
                        "{}:apiextensions.JSONSchemaPropsOrStringArray{{Schema:{}, Property:{property}}}",
                        quote(k),
                        pointer("apiextensions.JSONSchemaProps", schema),
                    )
                })
                .collect();
            format!(
                "apiextensions.JSONSchemaDependencies{{{}}}",
                parts.join(", ")
            )
        }
    };
    let fields = [
        ("ID", quote(str_of(s, "id"))),
        ("Schema", quote(str_of(s, "$schema"))),
        ("Ref", p("string", "$ref")),
        ("Description", quote(str_of(s, "description"))),
        ("Type", quote(str_of(s, "type"))),
        ("Nullable", bool_of(s, "nullable").to_string()),
        ("Format", quote(str_of(s, "format"))),
        ("Title", quote(str_of(s, "title"))),
        ("Default", p("apiextensions.JSON", "default")),
        ("Maximum", p("float64", "maximum")),
        (
            "ExclusiveMaximum",
            bool_of(s, "exclusiveMaximum").to_string(),
        ),
        ("Minimum", p("float64", "minimum")),
        (
            "ExclusiveMinimum",
            bool_of(s, "exclusiveMinimum").to_string(),
        ),
        ("MaxLength", p("int64", "maxLength")),
        ("MinLength", p("int64", "minLength")),
        ("Pattern", quote(str_of(s, "pattern"))),
        ("MaxItems", p("int64", "maxItems")),
        ("MinItems", p("int64", "minItems")),
        ("UniqueItems", bool_of(s, "uniqueItems").to_string()),
        ("MultipleOf", p("float64", "multipleOf")),
        ("Enum", enum_values),
        ("MaxProperties", p("int64", "maxProperties")),
        ("MinProperties", p("int64", "minProperties")),
        ("Required", strings_of(s.get("required"))),
        ("Items", p("apiextensions.JSONSchemaPropsOrArray", "items")),
        ("AllOf", schema_list(s.get("allOf"), depth)),
        ("OneOf", schema_list(s.get("oneOf"), depth)),
        ("AnyOf", schema_list(s.get("anyOf"), depth)),
        ("Not", p("apiextensions.JSONSchemaProps", "not")),
        (
            "Properties",
            schema_map(
                "map[string]apiextensions.JSONSchemaProps",
                s.get("properties"),
                depth,
            ),
        ),
        (
            "AdditionalProperties",
            p(
                "apiextensions.JSONSchemaPropsOrBool",
                "additionalProperties",
            ),
        ),
        (
            "PatternProperties",
            schema_map(
                "map[string]apiextensions.JSONSchemaProps",
                s.get("patternProperties"),
                depth,
            ),
        ),
        ("Dependencies", dependencies),
        (
            "AdditionalItems",
            p("apiextensions.JSONSchemaPropsOrBool", "additionalItems"),
        ),
        (
            "Definitions",
            schema_map(
                "apiextensions.JSONSchemaDefinitions",
                s.get("definitions"),
                depth,
            ),
        ),
        (
            "ExternalDocs",
            p("apiextensions.ExternalDocumentation", "externalDocs"),
        ),
        ("Example", p("apiextensions.JSON", "example")),
        (
            "XPreserveUnknownFields",
            p("bool", "x-kubernetes-preserve-unknown-fields"),
        ),
        (
            "XEmbeddedResource",
            bool_of(s, "x-kubernetes-embedded-resource").to_string(),
        ),
        (
            "XIntOrString",
            bool_of(s, "x-kubernetes-int-or-string").to_string(),
        ),
        (
            "XListMapKeys",
            strings_of(s.get("x-kubernetes-list-map-keys")),
        ),
        ("XListType", p("string", "x-kubernetes-list-type")),
        ("XMapType", p("string", "x-kubernetes-map-type")),
        ("XValidations", rules(s.get("x-kubernetes-validations"))),
    ];
    let parts: Vec<String> = fields.iter().map(|(k, v)| format!("{k}:{v}")).collect();
    format!("apiextensions.JSONSchemaProps{{{}}}", parts.join(", "))
}

#[cfg(test)]
mod schema_tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn schema_props_go_syntax() {
        let got = schema_props(
            &json!({"type": "object", "required": ["a"], "enum": ["x", 1],
            "properties": {"a": {"type": "string"}}, "x-kubernetes-validations": [{"rule": "true"}]}),
        );
        assert!(got.starts_with(r#"apiextensions.JSONSchemaProps{ID:"", Schema:"", Ref:(*string)(nil), Description:"", Type:"object", Nullable:false,"#), "{got}");
        assert!(
            got.contains(r#"Enum:[]apiextensions.JSON{"x", 1}, MaxProperties:(*int64)(nil)"#),
            "{got}"
        );
        assert!(
            got.contains(
                r#"Required:[]string{"a"}, Items:(*apiextensions.JSONSchemaPropsOrArray)(nil)"#
            ),
            "{got}"
        );
        assert!(got.contains(r#"Properties:map[string]apiextensions.JSONSchemaProps{"a":apiextensions.JSONSchemaProps{ID:"","#), "{got}");
        assert!(got.ends_with(r#"XValidations:apiextensions.ValidationRules{apiextensions.ValidationRule{Rule:"true", Message:"", MessageExpression:"", Reason:(*apiextensions.FieldValueErrorReason)(nil), FieldPath:"", OptionalOldSelf:(*bool)(nil)}}}"#), "{got}");
    }
}
