//! Fuzz target: CustomResourceDefinitions and custom resources.
//!
//! The input is JSON: a whole CRD (an object with `spec`), a schema (any
//! other value, put into a template CRD as its `openAPIV3Schema`), or a
//! pair `[crd-or-schema, object]`. Each input goes through
//! `crd::set_defaults` (which must be idempotent), `prepare_for_create`,
//! `validate_create`, `validate_update` against itself and against the
//! template, and `validate_status`; a CRD that validates on create must
//! validate as an unchanged update too. Every version's schema is parsed
//! with `schema::Structural::parse` and `cel::compile`, then the object
//! (or the schema itself when none is given) is pruned, defaulted,
//! validated and checked against the rules: nothing may panic, pruning and
//! defaulting must be idempotent.

#![no_main]

use libfuzzer_sys::fuzz_target;
use serde_json::{Value, json};
use skein_apiextensions::{cel, crd, schema::Structural};

fn template(schema: Value) -> Value {
    json!({
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": "widgets.example.com"},
        "spec": {
            "group": "example.com",
            "scope": "Namespaced",
            "names": {"plural": "widgets", "kind": "Widget"},
            "versions": [{"name": "v1", "served": true, "storage": true,
                "schema": {"openAPIV3Schema": schema}, "subresources": {"status": {}}}],
        },
    })
}

fuzz_target!(|data: &[u8]| {
    let Ok(input) = serde_json::from_slice::<Value>(data) else {
        return;
    };
    let (first, object) = match input {
        Value::Array(mut pair) if pair.len() == 2 => {
            let object = pair.pop();
            (pair.pop().unwrap_or(Value::Null), object)
        }
        other => (other, None),
    };
    let mut c = if first.get("spec").is_some() {
        first
    } else {
        template(first)
    };

    crd::set_defaults(&mut c);
    let once = c.clone();
    crd::set_defaults(&mut c);
    assert_eq!(c, once, "set_defaults is idempotent");
    crd::prepare_for_create(&mut c);

    let created = crd::validate_create(&c);
    for cause in &created {
        let _ = cause.to_string();
    }
    let same = crd::validate_update(&c, &c);
    if created.is_empty() {
        assert!(same.is_empty(), "a valid CRD is a valid unchanged update: {same:?}");
    }
    let mut other = template(json!({"type": "object"}));
    crd::set_defaults(&mut other);
    crd::prepare_for_update(&mut other, &c);
    let _ = crd::validate_update(&other, &c);
    let _ = crd::validate_update(&c, &other);
    let _ = crd::validate_status(&c);

    let versions = c
        .pointer("/spec/versions")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    for version in versions.iter().take(4) {
        let Some(schema) = version.pointer("/schema/openAPIV3Schema") else {
            continue;
        };
        let mut obj = object.clone().unwrap_or_else(|| schema.clone());
        if let Ok(structural) = Structural::parse(schema) {
            structural.prune(&mut obj);
            structural.default(&mut obj);
            let settled = obj.clone();
            assert!(structural.prune(&mut obj).is_empty(), "prune is idempotent");
            structural.default(&mut obj);
            assert_eq!(obj, settled, "prune and default are idempotent");
            let _ = structural.validate(&obj);
            let _ = structural.validate_update(&obj, schema);
        }
        if let Ok(rules) = cel::compile(schema, "spec.versions[0].schema.openAPIV3Schema") {
            let _ = rules.validate(&obj, None);
            let _ = rules.validate(&obj, Some(schema));
        }
    }
});
