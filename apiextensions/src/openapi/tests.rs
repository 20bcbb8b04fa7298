//! Cases from upstream's `builder_test.go` (TestNewBuilder,
//! TestBuildOpenAPIV2, TestBuildOpenAPIV3), compared as upstream does:
//! with the descriptions of `apiVersion`, `kind` and `metadata` wiped.

use proptest::prelude::*;
use serde_json::{Value, json};

use super::*;

fn v(s: &str) -> Value {
    serde_json::from_str(s).unwrap_or(Value::Null)
}

fn crd(schema: Option<&str>, version: &str) -> Value {
    let mut ver = json!({"name": version, "served": true, "storage": true});
    if let Some(s) = schema {
        ver["schema"] = json!({"openAPIV3Schema": v(s)});
    }
    json!({
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": "foos.bar.k8s.io"},
        "spec": {
            "group": "bar.k8s.io",
            "names": {"plural": "foos", "singular": "foo", "kind": "Foo", "listKind": "FooList"},
            "scope": "Namespaced",
            "versions": [ver],
        }
    })
}

/// The kind schema with the meta descriptions wiped (as upstream's test).
fn kind(schemas: &Map<String, Value>, name: &str) -> Value {
    let mut k = schemas.get(name).cloned().unwrap_or(Value::Null);
    if let Some(p) = k.get_mut("properties").and_then(Value::as_object_mut) {
        for f in ["apiVersion", "kind", "metadata"] {
            if let Some(m) = p.get_mut(f).and_then(Value::as_object_mut) {
                m.remove("description");
            }
        }
    }
    k
}

const GVK: &str =
    r#""x-kubernetes-group-version-kind":[{"group":"bar.k8s.io","kind":"Foo","version":"v1"}]"#;

fn want(body: &str) -> Value {
    v(&format!("{{{body},{GVK}}}"))
}

fn v2_kind(schema: Option<&str>) -> Value {
    let defs = v2_definitions(&crd(schema, "v1"), "v1").unwrap_or_default();
    kind(&defs, "io.k8s.bar.v1.Foo")
}

fn v3_kind(schema: Option<&str>) -> Value {
    let defs = v3_schemas(&crd(schema, "v1"), "v1").unwrap_or_default();
    kind(&defs, "io.k8s.bar.v1.Foo")
}

const META_V2: &str = r##""apiVersion":{"type":"string"},"kind":{"type":"string"},"metadata":{"$ref":"#/definitions/io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"}"##;
const META_V3: &str = r##""apiVersion":{"type":"string"},"kind":{"type":"string"},"metadata":{"allOf":[{"$ref":"#/components/schemas/io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"}]}"##;

#[test]
fn names_are_reversed_groups() {
    assert_eq!(
        definition_name("stable.example.com", "v1", "CronTab"),
        "com.example.stable.v1.CronTab"
    );
    assert_eq!(
        definition_name("cert-manager.io", "v1", "Certificate"),
        "io.cert-manager.v1.Certificate"
    );
}

#[test]
fn v2_cases() {
    assert_eq!(v2_kind(None), want(r#""type":"object""#));
    assert_eq!(
        v2_kind(Some(
            r#"{"type":"object","properties":{"spec":{"type":"object"},"status":{"type":"object"}}}"#
        )),
        want(&format!(
            r#""type":"object","properties":{{{META_V2},"spec":{{"type":"object"}},"status":{{"type":"object"}}}}"#
        ))
    );
    assert_eq!(
        v2_kind(Some(r#"{"type":"object"}"#)),
        want(&format!(r#""type":"object","properties":{{{META_V2}}}"#))
    );
    assert_eq!(
        v2_kind(Some(
            r#"{"type":"object","x-kubernetes-preserve-unknown-fields":true}"#
        )),
        want(r#""type":"object""#)
    );
    assert_eq!(
        v2_kind(Some(
            r#"{"type":"object","properties":{"spec":{"type":"bug"},"status":{"type":"object"}}}"#
        )),
        want(r#""type":"object""#)
    );
    assert_eq!(
        v2_kind(Some(
            r#"{"type":"object","properties":{"foo":{"type":"array"}}}"#
        )),
        want(r#""type":"object""#)
    );
    assert_eq!(
        v2_kind(Some(
            r#"{"type":"object","properties":{"foo":{"type":"string","oneOf":[{"pattern":"a"},{"pattern":"b"}]}}}"#
        )),
        want(&format!(
            r#""type":"object","properties":{{{META_V2},"foo":{{"type":"string"}}}}"#
        ))
    );
}

#[test]
fn v2_spec_preserve_unknown_fields() {
    let mut c = crd(
        Some(r#"{"type":"object","properties":{"foo":{"type":"string"}}}"#),
        "v1",
    );
    c["spec"]["preserveUnknownFields"] = json!(true);
    let defs = v2_definitions(&c, "v1").unwrap_or_default();
    assert_eq!(kind(&defs, "io.k8s.bar.v1.Foo"), want(r#""type":"object""#));
    // v3 is unaffected.
    let defs = v3_schemas(&c, "v1").unwrap_or_default();
    assert_eq!(
        kind(&defs, "io.k8s.bar.v1.Foo"),
        want(&format!(
            r#""type":"object","properties":{{{META_V3},"foo":{{"type":"string"}}}}"#
        ))
    );
}

#[test]
fn v2_extensions() {
    // TestNewBuilder "with extensions".
    let got = v2_kind(Some(
        r#"{"type":"object","properties":{
        "int-or-string-1":{"x-kubernetes-int-or-string":true,"anyOf":[{"type":"integer"},{"type":"string"}]},
        "int-or-string-4":{"x-kubernetes-int-or-string":true,"anyOf":[{"minimum":42.0}]},
        "int-or-string-6":{"x-kubernetes-int-or-string":true},
        "preserve-unknown-fields":{"x-kubernetes-preserve-unknown-fields":true},
        "embedded-object":{"x-kubernetes-embedded-resource":true,"x-kubernetes-preserve-unknown-fields":true,"type":"object"}}}"#,
    ));
    assert_eq!(
        got,
        want(&format!(
            r#""type":"object","properties":{{{META_V2},
            "int-or-string-1":{{"x-kubernetes-int-or-string":true}},
            "int-or-string-4":{{"x-kubernetes-int-or-string":true}},
            "int-or-string-6":{{"x-kubernetes-int-or-string":true}},
            "preserve-unknown-fields":{{"x-kubernetes-preserve-unknown-fields":true}},
            "embedded-object":{{"x-kubernetes-embedded-resource":true,"x-kubernetes-preserve-unknown-fields":true}}}}"#
        ))
    );
}

#[test]
fn v3_cases() {
    assert_eq!(v3_kind(None), want(r#""type":"object""#));
    assert_eq!(
        v3_kind(Some(
            r#"{"type":"object","properties":{"spec":{"type":"object", "nullable": true},"status":{"type":"object"}}}"#
        )),
        want(&format!(
            r#""type":"object","properties":{{{META_V3},"spec":{{"type":"object","nullable":true}},"status":{{"type":"object"}}}}"#
        ))
    );
    assert_eq!(
        v3_kind(Some(
            r#"{"type":"object","properties":{"spec":{"type":"object","properties":{"field":{"type":"string","default":"foo"}}}}}"#
        )),
        want(&format!(
            r#""type":"object","properties":{{{META_V3},"spec":{{"type":"object","properties":{{"field":{{"type":"string","default":"foo"}}}}}}}}"#
        ))
    );
}

#[test]
fn selectable_fields() {
    let mut c = crd(
        Some(
            r#"{"type":"object","properties":{"spec":{"type":"object","properties":{"field":{"type":"string"}}}}}"#,
        ),
        "v1",
    );
    c["spec"]["versions"][0]["selectableFields"] = json!([{"jsonPath": ".spec.field"}]);
    for defs in [v3_schemas(&c, "v1"), v2_definitions(&c, "v1")] {
        let defs = defs.unwrap_or_default();
        for name in ["io.k8s.bar.v1.Foo", "io.k8s.bar.v1.FooList"] {
            assert_eq!(
                defs.get(name)
                    .and_then(|d| d.get("x-kubernetes-selectable-fields")),
                Some(&json!([{"fieldPath": "spec.field"}])),
                "{name}"
            );
        }
    }
}

#[test]
fn list_kind() {
    let defs = v3_schemas(&crd(None, "v1"), "v1").unwrap_or_default();
    let list = defs
        .get("io.k8s.bar.v1.FooList")
        .cloned()
        .unwrap_or(Value::Null);
    assert_eq!(list["required"], json!(["items"]));
    assert_eq!(list["description"], json!("FooList is a list of Foo"));
    assert_eq!(
        list["properties"]["items"]["items"],
        json!({"$ref": "#/components/schemas/io.k8s.bar.v1.Foo"})
    );
    assert_eq!(
        list["properties"]["metadata"]["allOf"],
        json!([{"$ref": "#/components/schemas/io.k8s.apimachinery.pkg.apis.meta.v1.ListMeta"}])
    );
    assert_eq!(list["properties"]["apiVersion"]["type"], json!("string"));
    assert_eq!(
        list["x-kubernetes-group-version-kind"],
        json!([{"group": "bar.k8s.io", "kind": "FooList", "version": "v1"}])
    );
    let defs = v2_definitions(&crd(None, "v1"), "v1").unwrap_or_default();
    assert_eq!(
        defs["io.k8s.bar.v1.FooList"]["properties"]["metadata"]["$ref"],
        json!("#/definitions/io.k8s.apimachinery.pkg.apis.meta.v1.ListMeta")
    );
}

#[test]
fn embedded_resources_get_type_meta_and_metadata() {
    let s = r#"{"type":"object","properties":{
        "tpl":{"type":"object","x-kubernetes-embedded-resource":true,"properties":{"spec":{"type":"object"}}},
        "raw":{"type":"object","x-kubernetes-embedded-resource":true,"x-kubernetes-preserve-unknown-fields":true}}}"#;
    let v3 = v3_schemas(&crd(Some(s), "v1"), "v1").unwrap_or_default();
    let tpl = &v3["io.k8s.bar.v1.Foo"]["properties"]["tpl"];
    assert_eq!(tpl["required"], json!(["kind", "apiVersion"]));
    assert_eq!(
        tpl["properties"]["metadata"]["allOf"][0]["$ref"],
        json!("#/components/schemas/io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta")
    );
    assert!(
        tpl["properties"]["kind"]["description"]
            .as_str()
            .is_some_and(|d| d.starts_with("kind is a string value"))
    );
    assert!(v3["io.k8s.bar.v1.Foo"]["properties"]["raw"]["properties"]["metadata"].is_object());
    // v2 skips nodes that preserve unknown fields.
    let v2 = v2_definitions(&crd(Some(s), "v1"), "v1").unwrap_or_default();
    assert!(
        v2["io.k8s.bar.v1.Foo"]["properties"]["raw"]
            .get("properties")
            .is_none()
    );
    assert_eq!(
        v2["io.k8s.bar.v1.Foo"]["properties"]["tpl"]["properties"]["metadata"]["$ref"],
        json!("#/definitions/io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta")
    );
}

#[test]
fn extensions_are_kept() {
    let s = r#"{"type":"object","properties":{"spec":{"type":"object","properties":{
        "ports":{"type":"array","x-kubernetes-list-type":"map","x-kubernetes-list-map-keys":["name"],
                 "items":{"type":"object","required":["name"],"properties":{"name":{"type":"string"}}}},
        "sel":{"type":"object","x-kubernetes-map-type":"atomic","additionalProperties":{"type":"string"}}},
        "x-kubernetes-validations":[{"rule":"self.ports.size() < 3","message":"m"}]}}}"#;
    for form in [Form::V3, Form::V2, Form::Source] {
        let c = CrdVersion::read(&crd(Some(s), "v1"), "v1").map(|c| c.kind_schema(form));
        let k = c.unwrap_or(Value::Null);
        let spec = &k["properties"]["spec"];
        assert_eq!(
            spec["properties"]["ports"]["x-kubernetes-list-map-keys"],
            json!(["name"])
        );
        assert_eq!(
            spec["properties"]["sel"]["x-kubernetes-map-type"],
            json!("atomic")
        );
        assert_eq!(
            spec["x-kubernetes-validations"][0]["rule"],
            json!("self.ports.size() < 3")
        );
    }
}

#[test]
fn apply_schema_uses_plain_refs() {
    let s = apply_schema(&crd(Some(r#"{"type":"object"}"#), "v1"), "v1").unwrap_or(Value::Null);
    assert_eq!(
        s["properties"]["metadata"]["$ref"],
        json!("#/$defs/io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta")
    );
}

#[test]
fn errors() {
    assert!(v3_schemas(&json!({}), "v1").is_err());
    assert!(v3_schemas(&crd(None, "v1"), "v2").is_err());
}

/// Arbitrary JSON, schema-ish keys favoured.
fn arb_json() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i32>().prop_map(|i| json!(i)),
        prop_oneof![
            Just("object"),
            Just("array"),
            Just("string"),
            Just("integer"),
            Just("x")
        ]
        .prop_map(|s| json!(s)),
    ];
    leaf.prop_recursive(6, 64, 6, |inner| {
        let key = prop_oneof![
            Just("type"),
            Just("properties"),
            Just("items"),
            Just("additionalProperties"),
            Just("anyOf"),
            Just("allOf"),
            Just("not"),
            Just("nullable"),
            Just("default"),
            Just("required"),
            Just("x-kubernetes-preserve-unknown-fields"),
            Just("x-kubernetes-embedded-resource"),
            Just("x-kubernetes-int-or-string"),
            Just("metadata"),
            Just("a"),
        ];
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..4).prop_map(Value::Array),
            prop::collection::btree_map(key.prop_map(str::to_owned), inner, 0..5)
                .prop_map(|m| Value::Object(m.into_iter().collect())),
        ]
    })
}

proptest! {
    #[test]
    fn never_panics_and_always_marks_the_kind(schema in arb_json()) {
        let mut c = crd(None, "v1");
        c["spec"]["versions"][0]["schema"] = json!({"openAPIV3Schema": schema});
        for defs in [v3_schemas(&c, "v1"), v2_definitions(&c, "v1")] {
            let defs = defs.unwrap_or_default();
            let k = defs.get("io.k8s.bar.v1.Foo").cloned().unwrap_or(Value::Null);
            prop_assert!(k.get("x-kubernetes-group-version-kind").is_some());
        }
    }

    #[test]
    fn publishing_is_idempotent(schema in arb_json()) {
        if let Some(once) = structural::published(&schema) {
            prop_assert_eq!(structural::published(&once), Some(once.clone()));
        }
    }
}
