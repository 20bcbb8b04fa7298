//! Whole-object tests: cases of upstream `validation_test.go` (facts,
//! restated as v1 objects), the paths a v1.33 server prints, and
//! properties over arbitrary JSON.

use proptest::prelude::*;
use serde_json::{Value, json};

use super::*;

/// A valid single-version CRD, as kubectl would send it.
fn crd() -> Value {
    json!({
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": "plural.group.com"},
        "spec": {
            "group": "group.com",
            "scope": "Namespaced",
            "names": {"plural": "plural", "singular": "singular", "kind": "Plural", "listKind": "PluralList"},
            "versions": [{"name": "version", "served": true, "storage": true,
                "schema": {"openAPIV3Schema": {"type": "object"}}}],
        },
    })
}

/// `c` with `value` at `pointer`, the last segment created when missing.
fn with(mut c: Value, pointer: &str, value: Value) -> Value {
    let (parent, last) = pointer.rsplit_once('/').unwrap_or(("", pointer));
    match c.pointer_mut(parent) {
        Some(Value::Object(m)) => {
            m.insert(last.to_owned(), value);
        }
        Some(Value::Array(a)) => {
            if let Some(slot) = last.parse::<usize>().ok().and_then(|i| a.get_mut(i)) {
                *slot = value;
            }
        }
        _ => {}
    }
    c
}

fn created(mut c: Value) -> Vec<String> {
    set_defaults(&mut c);
    prepare_for_create(&mut c);
    validate_create(&c)
        .iter()
        .map(ToString::to_string)
        .collect()
}

/// The `field: reason` of each cause, for upstream's `validationMatch` tables.
fn matches(mut c: Value) -> Vec<String> {
    set_defaults(&mut c);
    prepare_for_create(&mut c);
    validate_create(&c)
        .iter()
        .map(|e| format!("{} {}", e.reason, e.field))
        .collect()
}

#[test]
fn valid_crd() {
    assert_eq!(created(crd()), Vec::<String>::new());
}

#[test]
fn single_version_schema_is_reported_as_spec_validation() {
    let c = with(
        crd(),
        "/spec/versions/0/schema/openAPIV3Schema",
        json!({"type": "object",
        "properties": {"spec": {"type": "object", "properties": {"foo": {}}}}}),
    );
    assert_eq!(
        created(c),
        [
            "spec.validation.openAPIV3Schema.properties[spec].properties[foo].type: Required value: must not be empty for specified object fields"
        ]
    );
}

#[test]
fn differing_version_schemas_are_reported_per_version() {
    let c = with(
        crd(),
        "/spec/versions",
        json!([
            {"name": "v1", "served": true, "storage": true, "schema": {"openAPIV3Schema": {"type": "object",
                "properties": {"spec": {"type": "object", "properties": {"foo": {}}}}}}},
            {"name": "v2", "served": true, "storage": false, "schema": {"openAPIV3Schema": {"type": "object"}}},
        ]),
    );
    assert_eq!(
        created(c),
        [
            "spec.versions[0].schema.openAPIV3Schema.properties[spec].properties[foo].type: Required value: must not be empty for specified object fields"
        ]
    );
}

// Upstream "no_storage_version" / "multiple_storage_version".
#[test]
fn storage_versions() {
    let versions = |a: bool, b: bool| {
        json!([{"name": "version", "served": true, "storage": a, "schema": {"openAPIV3Schema": {"type": "object"}}},
               {"name": "version2", "served": true, "storage": b, "schema": {"openAPIV3Schema": {"type": "object"}}}])
    };
    let none = created(with(crd(), "/spec/versions", versions(false, false)));
    assert_eq!(none.len(), 2, "{none:?}");
    assert!(none[0].starts_with("spec.versions: Invalid value: []apiextensions.CustomResourceDefinitionVersion{apiextensions.CustomResourceDefinitionVersion{Name:\"version\", Served:true, Storage:false,"));
    assert!(none[0].ends_with(": must have exactly one version marked as storage version"));
    assert_eq!(
        none[1],
        "status.storedVersions: Invalid value: []string(nil): must have at least one stored version"
    );
    let mut two = with(crd(), "/spec/versions", versions(true, true));
    two["status"] = json!({"storedVersions": ["version"]});
    set_defaults(&mut two);
    let got: Vec<String> = validate_create(&two)
        .iter()
        .map(|e| format!("{} {}", e.reason, e.field))
        .collect();
    assert_eq!(
        got,
        [
            "FieldValueInvalid spec.versions",
            "FieldValueInvalid status.storedVersions"
        ]
    );
}

// Upstream "missing values" (a v1 object gets the conversion default).
#[test]
fn missing_values() {
    let got = matches(json!({"metadata": {"name": "plural.group.com"}}));
    assert_eq!(
        got,
        [
            "FieldValueInvalid metadata.name",
            "FieldValueRequired spec.group",
            "FieldValueRequired spec.scope",
            "FieldValueInvalid spec.versions",
            "FieldValueRequired spec.names.plural",
            "FieldValueRequired spec.names.singular",
            "FieldValueRequired spec.names.kind",
            "FieldValueRequired spec.names.listKind",
            "FieldValueInvalid status.storedVersions",
        ]
    );
}

// Upstream "mismatched name" and group rules.
#[test]
fn name_and_group() {
    let c = with(crd(), "/metadata/name", json!("plural.not.group.com"));
    assert_eq!(
        created(c),
        [
            r#"metadata.name: Invalid value: "plural.not.group.com": must be spec.names.plural+"."+spec.group"#
        ]
    );
    let c = with(
        with(crd(), "/spec/group", json!("group")),
        "/metadata/name",
        json!("plural.group"),
    );
    assert_eq!(
        created(c),
        [r#"spec.group: Invalid value: "group": should be a domain with at least one dot"#]
    );
    let c = with(
        with(crd(), "/spec/group", json!("Group.com")),
        "/metadata/name",
        json!("plural.Group.com"),
    );
    assert_eq!(matches(c), ["FieldValueInvalid spec.group"]);
    let c = with(crd(), "/spec/scope", json!("Global"));
    assert_eq!(
        created(c),
        [r#"spec.scope: Unsupported value: "Global": supported values: "Cluster", "Namespaced""#]
    );
}

#[test]
fn version_names() {
    let c = with(crd(), "/spec/versions/0/name", json!("V1"));
    let got = matches(c);
    assert_eq!(
        got,
        [
            "FieldValueInvalid spec.versions[0].name",
            "FieldValueInvalid spec.version",
        ]
    );
    let c = with(
        crd(),
        "/spec/versions",
        json!([
            {"name": "v1", "served": true, "storage": true, "schema": {"openAPIV3Schema": {"type": "object"}}},
            {"name": "v1", "served": true, "storage": false, "schema": {"openAPIV3Schema": {"type": "object"}}},
        ]),
    );
    let got = created(c);
    assert_eq!(got.len(), 1);
    assert!(
        got[0].ends_with("must contain unique version names"),
        "{got:?}"
    );
}

// Upstream "schema is required".
#[test]
fn schema_is_required() {
    let c = with(crd(), "/spec/versions/0/schema", Value::Null);
    assert_eq!(
        created(c),
        ["spec.versions[0].schema.openAPIV3Schema: Required value: schemas are required"]
    );
}

// Upstream "preserveUnknownFields: true" (v1 forbids setting it).
#[test]
fn preserve_unknown_fields() {
    let c = with(crd(), "/spec/preserveUnknownFields", json!(true));
    assert_eq!(
        created(c),
        [
            "spec.preserveUnknownFields: Invalid value: true: cannot set to true, set x-kubernetes-preserve-unknown-fields to true in spec.versions[*].schema instead"
        ]
    );
}

// Upstream "x-kubernetes-embedded-resource with pruning and empty properties".
#[test]
fn embedded_resource_needs_properties() {
    let c = with(
        crd(),
        "/spec/versions/0/schema/openAPIV3Schema",
        json!({"type": "object",
        "x-kubernetes-preserve-unknown-fields": true, "properties": {
            "nil": {"type": "object", "x-kubernetes-embedded-resource": true},
            "empty": {"type": "object", "x-kubernetes-embedded-resource": true, "properties": {}}}}),
    );
    assert_eq!(
        matches(c),
        [
            "FieldValueRequired spec.validation.openAPIV3Schema.properties[empty].properties",
            "FieldValueRequired spec.validation.openAPIV3Schema.properties[nil].properties",
        ]
    );
}

// Upstream "x-kubernetes-embedded-resource inside resource meta".
#[test]
fn embedded_resource_inside_meta() {
    let foo = json!({"type": "object", "x-kubernetes-embedded-resource": true, "x-kubernetes-preserve-unknown-fields": true});
    let c = with(
        crd(),
        "/spec/versions/0/schema/openAPIV3Schema",
        json!({"type": "object", "properties": {
        "embedded": {"type": "object", "x-kubernetes-embedded-resource": true, "properties": {
            "metadata": foo,
            "apiVersion": {"type": "string", "properties": {"foo": foo}},
            "kind": {"type": "string", "properties": {"foo": foo}}}}}}),
    );
    let p = "spec.validation.openAPIV3Schema.properties[embedded]";
    assert_eq!(
        matches(c),
        [
            format!(
                "FieldValueForbidden {p}.properties[apiVersion].properties[foo].x-kubernetes-embedded-resource"
            ),
            format!(
                "FieldValueForbidden {p}.properties[kind].properties[foo].x-kubernetes-embedded-resource"
            ),
            format!("FieldValueForbidden {p}.properties[metadata].x-kubernetes-embedded-resource"),
        ]
    );
}

// Upstream "labelSelectorPath outside of .spec and .status", per version.
#[test]
fn subresources_and_columns_per_version() {
    let schema = json!({"openAPIV3Schema": {"type": "object"}});
    let c = with(
        crd(),
        "/spec/versions",
        json!([
            {"name": "v1", "served": true, "storage": true, "schema": schema,
             "subresources": {"scale": {"specReplicasPath": ".spec.replicas", "statusReplicasPath": ".status.replicas",
                "labelSelectorPath": ".foo"}},
             "additionalPrinterColumns": [{"name": "n", "type": "string", "jsonPath": "spec"}]},
            {"name": "v2", "served": true, "storage": false, "schema": schema},
        ]),
    );
    assert_eq!(
        created(c),
        [
            r#"spec.versions[0].subresources.scale.labelSelectorPath: Invalid value: ".foo": should be a json path under either .spec or .status"#,
            r#"spec.versions[0].additionalPrinterColumns[0].JSONPath: Invalid value: "spec": must be a simple json path starting with ."#,
        ]
    );
    // The same on every version: reported at the top level.
    let c = with(
        crd(),
        "/spec/versions/0/additionalPrinterColumns",
        json!([{"name": "n", "type": "str", "jsonPath": ".spec"}]),
    );
    assert_eq!(
        created(c),
        [
            r#"spec.additionalPrinterColumns[0].type: Invalid value: "str": must be one of boolean,date,integer,number,string"#
        ]
    );
}

#[test]
fn status_subresource_root_type() {
    let c = with(
        with(
            crd(),
            "/spec/versions/0/subresources",
            json!({"status": {}}),
        ),
        "/spec/versions/0/schema/openAPIV3Schema",
        json!({"type": "object", "additionalProperties": {"type": "string"}}),
    );
    let got = matches(c);
    assert_eq!(
        got,
        [
            "FieldValueInvalid spec.validation.openAPIV3Schema",
            "FieldValueForbidden spec.validation.openAPIV3Schema.additionalProperties",
        ]
    );
}

#[test]
fn webhook_conversion() {
    let c = with(
        crd(),
        "/spec/conversion",
        json!({"strategy": "Webhook", "webhook": {
        "clientConfig": {"url": "http://example.com/convert"}, "conversionReviewVersions": ["v1"]}}),
    );
    assert_eq!(
        created(c),
        [
            r#"spec.conversion.webhookClientConfig.url: Invalid value: "http": 'https' is the only allowed URL scheme; desired format: https://host[/path]"#
        ]
    );
    let c = with(
        crd(),
        "/spec/conversion",
        json!({"strategy": "Webhook", "webhook": {
        "clientConfig": {"service": {"name": "conv", "namespace": "default", "path": "/convert"}},
        "conversionReviewVersions": ["v1", "v1beta1"]}}),
    );
    assert_eq!(created(c), Vec::<String>::new());
}

#[test]
fn defaults_and_deprecation() {
    let c = with(crd(), "/spec/versions/0/deprecationWarning", json!("old"));
    assert_eq!(
        created(c),
        [
            r#"spec.versions[0].deprecationWarning: Invalid value: "old": can only be set for deprecated versions"#
        ]
    );
    let c = with(
        crd(),
        "/spec/versions/0/schema/openAPIV3Schema",
        json!({"type": "object",
        "properties": {"metadata": {"type": "object", "default": {"name": "x"}}, "spec": {"type": "object",
            "properties": {"n": {"type": "integer", "default": 1}}}}}),
    );
    assert_eq!(
        created(c),
        [
            "spec.validation.openAPIV3Schema.properties[metadata].default: Forbidden: must not be set in top-level metadata"
        ]
    );
}

#[test]
fn cel_compile_errors() {
    let c = with(
        crd(),
        "/spec/versions/0/schema/openAPIV3Schema",
        json!({"type": "object",
        "properties": {"spec": {"type": "object", "properties": {"replicas": {"type": "integer"}},
            "x-kubernetes-validations": [{"rule": "self.replicas >"}]}}}),
    );
    let got = created(c);
    assert_eq!(got.len(), 1, "{got:?}");
    assert!(
        got[0].starts_with("spec.validation.openAPIV3Schema.properties[spec].x-kubernetes-validations[0].rule: Invalid value: "),
        "{got:?}"
    );
    // A schema with OpenAPI errors is not compiled, as upstream.
    let c = with(
        crd(),
        "/spec/versions/0/schema/openAPIV3Schema",
        json!({"type": "object", "uniqueItems": true,
        "x-kubernetes-validations": [{"rule": "self.x >"}]}),
    );
    assert_eq!(
        created(c),
        [
            "spec.validation.openAPIV3Schema.uniqueItems: Forbidden: uniqueItems cannot be set to true since the runtime complexity becomes quadratic"
        ]
    );
}

// Upstream "contradicting meta field types".
#[test]
fn contradicting_meta_field_types() {
    let meta = |ty: &str| {
        json!({"type": ty, "properties": {"name": {"type": "string", "pattern": "abc"},
            "generateName": {"type": "string", "pattern": "abc"},
            "generation": {"type": "integer", "minimum": 42.0}}})
    };
    let bad = json!({"type": "object", "x-kubernetes-embedded-resource": true, "properties": {
        "apiVersion": {"type": "number"}, "kind": {"type": "number"}, "metadata": meta("number")}});
    let mut root_meta = meta("number");
    root_meta["properties"]["generation"] = json!({"type": "integer"});
    let c = with(
        crd(),
        "/spec/versions/0/schema/openAPIV3Schema",
        json!({"type": "object", "properties": {
            "apiVersion": {"type": "number"}, "kind": {"type": "number"}, "metadata": root_meta,
            "valid": {"type": "object", "x-kubernetes-embedded-resource": true, "properties": {
                "apiVersion": {"type": "string"}, "kind": {"type": "string"}, "metadata": meta("object")}},
            "invalid": bad,
            "nested": {"type": "object", "x-kubernetes-embedded-resource": true, "properties": {"invalid": bad}},
            "noEmbeddedObject": {"type": "object", "properties": {
                "apiVersion": {"type": "number"}, "kind": {"type": "number"}, "metadata": {"type": "number"}}},
        }}),
    );
    let mut got = matches(c);
    got.sort();
    let p = "spec.validation.openAPIV3Schema";
    let mut want = vec![
        format!("FieldValueForbidden {p}.properties[metadata]"),
        format!("FieldValueInvalid {p}.properties[apiVersion].type"),
        format!("FieldValueInvalid {p}.properties[kind].type"),
        format!("FieldValueInvalid {p}.properties[metadata].type"),
        format!("FieldValueInvalid {p}.properties[invalid].properties[apiVersion].type"),
        format!("FieldValueInvalid {p}.properties[invalid].properties[kind].type"),
        format!("FieldValueInvalid {p}.properties[invalid].properties[metadata].type"),
        format!(
            "FieldValueInvalid {p}.properties[nested].properties[invalid].properties[apiVersion].type"
        ),
        format!(
            "FieldValueInvalid {p}.properties[nested].properties[invalid].properties[kind].type"
        ),
        format!(
            "FieldValueInvalid {p}.properties[nested].properties[invalid].properties[metadata].type"
        ),
    ];
    want.sort();
    assert_eq!(got, want);
}

/// Upstream's `validValidationSchema` (`items` under `spec`) or
/// `validUnstructuralValidationSchema` (untyped fields, `items` at the root).
fn upstream_schema(structural: bool) -> Value {
    let mut s = json!({"description": "This is a description", "type": "object", "format": "date-time",
        "title": "This is a title", "maximum": 10.0, "exclusiveMaximum": true, "minimum": 5.0,
        "exclusiveMinimum": true, "maxLength": 10, "minLength": 5, "pattern": "^[a-z]$", "maxItems": 10,
        "minItems": 5, "multipleOf": 3.0, "required": ["spec", "status"],
        "externalDocs": {"description": "This is an external documentation description"},
        "example": {"foo": "bar"}});
    if structural {
        s["properties"] = json!({"spec": {"type": "object", "items": {
            "description": "This is a schema nested under Items", "type": "string"}},
            "status": {"type": "object"}});
    } else {
        s["items"] = json!({"description": "This is a schema nested under Items"});
        s["properties"] = json!({"spec": {}, "status": {}});
    }
    s
}

fn two_versions(a: Value, b: Value) -> Value {
    with(
        crd(),
        "/spec/versions",
        json!([
            {"name": "version", "served": true, "storage": true, "schema": {"openAPIV3Schema": a}},
            {"name": "version2", "served": true, "storage": false, "schema": {"openAPIV3Schema": b}},
        ]),
    )
}

// Upstream "preserveUnknownFields with unstructural global schema" / "… in one version".
#[test]
fn unstructural_schemas() {
    assert_eq!(
        created(two_versions(upstream_schema(true), upstream_schema(true))),
        Vec::<String>::new()
    );
    let mut got = matches(two_versions(upstream_schema(false), upstream_schema(false)));
    got.sort();
    assert_eq!(
        got,
        [
            "FieldValueRequired spec.validation.openAPIV3Schema.items.type",
            "FieldValueRequired spec.validation.openAPIV3Schema.properties[spec].type",
            "FieldValueRequired spec.validation.openAPIV3Schema.properties[status].type",
        ]
    );
    let mut got = matches(two_versions(upstream_schema(true), upstream_schema(false)));
    got.sort();
    assert_eq!(
        got,
        [
            "FieldValueRequired spec.versions[1].schema.openAPIV3Schema.items.type",
            "FieldValueRequired spec.versions[1].schema.openAPIV3Schema.properties[spec].type",
            "FieldValueRequired spec.versions[1].schema.openAPIV3Schema.properties[status].type",
        ]
    );
    // Upstream "preserveUnknownFields with no schema in one version".
    let c = with(
        two_versions(upstream_schema(true), json!(null)),
        "/spec/versions/1/schema",
        Value::Null,
    );
    assert_eq!(
        matches(c),
        ["FieldValueRequired spec.versions[1].schema.openAPIV3Schema"]
    );
}

#[test]
fn update_rules() {
    let mut old = crd();
    set_defaults(&mut old);
    prepare_for_create(&mut old);
    old["status"]["conditions"] = json!([{"type": "Established", "status": "True"}]);
    assert!(is_established(&old));
    let mut new = with(
        with(old.clone(), "/spec/scope", json!("Cluster")),
        "/spec/names/kind",
        json!("Other"),
    );
    new = with(
        with(new, "/spec/group", json!("other.com")),
        "/spec/names/plural",
        json!("others"),
    );
    set_defaults(&mut new);
    prepare_for_update(&mut new, &old);
    let got: Vec<String> = validate_update(&new, &old)
        .iter()
        .map(ToString::to_string)
        .collect();
    assert_eq!(
        got,
        [
            r#"spec.scope: Invalid value: "Cluster": field is immutable"#,
            r#"spec.names.kind: Invalid value: "Other": field is immutable"#,
            r#"spec.group: Invalid value: "other.com": field is immutable"#,
            r#"spec.names.plural: Invalid value: "others": field is immutable"#,
        ]
    );
    // Before it is established, scope and kind may change.
    old["status"]["conditions"] = json!([]);
    let new = with(old.clone(), "/spec/scope", json!("Cluster"));
    assert!(validate_update(&new, &old).is_empty());
}

#[test]
fn update_ratchets_what_old_already_breaks() {
    // An old CRD stored with a type an older server let through may keep it.
    let mut old = with(
        crd(),
        "/spec/versions/0/schema/openAPIV3Schema",
        json!({"type": "object",
        "properties": {"a": {"type": "bogus"}, "s": {"type": "array", "x-kubernetes-list-type": "set",
            "items": {"type": "object"}}}}),
    );
    set_defaults(&mut old);
    prepare_for_create(&mut old);
    assert!(!validate_create(&old).is_empty());
    let mut new = with(old.clone(), "/spec/names/shortNames", json!(["p"]));
    prepare_for_update(&mut new, &old);
    assert_eq!(validate_update(&new, &old), Vec::new());
}

#[test]
fn status_writes() {
    let c = json!({"status": {"acceptedNames": {"plural": "plural", "kind": "Plural", "listKind": "Plural"}}});
    assert_eq!(
        validate_status(&c)
            .iter()
            .map(ToString::to_string)
            .collect::<Vec<_>>(),
        [
            r#"status.acceptedNames.listKind: Invalid value: "Plural": kind and listKind may not be the same"#
        ]
    );
}

fn arb_json() -> impl Strategy<Value = Value> {
    let keys = prop_oneof![
        Just("spec"),
        Just("names"),
        Just("kind"),
        Just("plural"),
        Just("versions"),
        Just("name"),
        Just("storage"),
        Just("served"),
        Just("schema"),
        Just("openAPIV3Schema"),
        Just("type"),
        Just("properties"),
        Just("items"),
        Just("additionalProperties"),
        Just("anyOf"),
        Just("allOf"),
        Just("not"),
        Just("x-kubernetes-list-type"),
        Just("x-kubernetes-list-map-keys"),
        Just("x-kubernetes-embedded-resource"),
        Just("x-kubernetes-int-or-string"),
        Just("x-kubernetes-preserve-unknown-fields"),
        Just("x-kubernetes-validations"),
        Just("metadata"),
        Just("default"),
        Just("subresources"),
        Just("scale"),
        Just("status"),
        Just("conversion"),
        Just("webhook"),
        Just("clientConfig"),
        Just("url"),
        Just("fieldPath"),
        Just("rule"),
        Just("selectableFields"),
        Just("jsonPath"),
        Just("additionalPrinterColumns"),
        Just("group"),
    ]
    .prop_map(str::to_owned);
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(|n| json!(n)),
        prop_oneof![
            Just("object".to_owned()),
            Just("array".to_owned()),
            Just("string".to_owned()),
            Just("map".to_owned()),
            Just("set".to_owned()),
            Just(".spec.x".to_owned()),
            Just("https://h/".to_owned()),
            "\\PC{0,8}"
        ]
        .prop_map(Value::String),
    ];
    leaf.prop_recursive(8, 96, 6, move |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..4).prop_map(Value::Array),
            prop::collection::btree_map(keys.clone(), inner, 0..6)
                .prop_map(|m| Value::Object(m.into_iter().collect())),
        ]
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn never_panics(mut a in arb_json(), b in arb_json()) {
        set_defaults(&mut a);
        let mut new = b;
        prepare_for_update(&mut new, &a);
        let _ = validate_create(&a);
        let _ = validate_update(&new, &a);
        let _ = validate_status(&new);
    }

    #[test]
    fn valid_create_is_valid_unchanged_update(schema in arb_json()) {
        let mut c = with(crd(), "/spec/versions/0/schema/openAPIV3Schema", schema);
        set_defaults(&mut c);
        prepare_for_create(&mut c);
        if validate_create(&c).is_empty() {
            prop_assert_eq!(validate_update(&c, &c), Vec::new());
        }
    }

    #[test]
    fn never_panics_on_schemas(schema in arb_json()) {
        let c = with(crd(), "/spec/versions/0/schema/openAPIV3Schema", schema);
        let _ = created(c);
    }
}
