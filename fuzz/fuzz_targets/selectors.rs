//! Fuzz target: arbitrary UTF-8 into the label and field selector parsers.
//!
//! Checks, on every input, that nothing panics, that a parsed selector's
//! printed form parses back to the same selector, and that matching and
//! per-kind field validation run on whatever was parsed.

#![no_main]

use std::collections::BTreeMap;

use libfuzzer_sys::fuzz_target;
use serde_json::json;

// Compiled from source rather than depending on skein-apiserver, so the
// fuzzer builds without the server's heavy dependency tree.
#[path = "../../apiserver/src/selector/mod.rs"]
#[allow(dead_code, missing_docs, unused_imports)]
mod selector;

use selector::{field, fields, label};

fuzz_target!(|data: &[u8]| {
    let Ok(input) = std::str::from_utf8(data) else {
        return;
    };
    check_label(input);
    check_field(input);
    if let Ok(value) = serde_json::from_str::<serde_json::Value>(input) {
        if let Ok(selector) = label::Selector::from_label_selector_value(&value) {
            let printed = selector.to_string();
            if !selector.matches_nothing() && printed.len() < 4096 {
                // Label selectors from JSON keep duplicate values, which
                // the text form drops; compare what they print.
                let again = label::Selector::parse(&printed).expect("printed selector parses");
                assert_eq!(again.to_string(), printed);
            }
        }
    }
});

fn check_label(input: &str) {
    let Ok(selector) = label::Selector::parse(input) else {
        return;
    };
    let printed = selector.to_string();
    let again = label::Selector::parse(&printed).expect("printed label selector parses");
    assert_eq!(again, selector, "{printed:?}");

    // A label set built from the selector's own keys and values.
    let labels: BTreeMap<String, String> = selector
        .requirements()
        .iter()
        .map(|r| {
            (
                r.key().to_string(),
                r.values().first().cloned().unwrap_or_default(),
            )
        })
        .collect();
    let direct = selector.matches(&labels);
    let object = json!({"metadata": {"labels": labels}});
    assert_eq!(selector.matches_object(&object), direct);
    assert!(!selector.is_empty() || selector.matches(&BTreeMap::new()));
}

fn check_field(input: &str) {
    let Ok(selector) = field::Selector::parse(input) else {
        return;
    };
    let printed = selector.to_string();
    let again = field::Selector::parse(&printed).expect("printed field selector parses");
    let key = |r: &field::Requirement| {
        (
            r.field.clone(),
            r.value.clone(),
            r.operator == field::Operator::Equals,
        )
    };
    let mut a: Vec<_> = selector.requirements().iter().map(key).collect();
    let mut b: Vec<_> = again.requirements().iter().map(key).collect();
    a.sort();
    b.sort();
    assert_eq!(a, b, "{printed:?}");

    // Exercise matching; the empty selector must match anything.
    let pinned = selector.matches(|f| {
        selector
            .requirements()
            .iter()
            .find(|r| r.field == f && r.operator == field::Operator::Equals)
            .map(|r| r.value.clone())
    });
    assert!(pinned || !selector.is_empty());

    let pod = json!({"metadata": {"name": "p", "namespace": "n"}, "spec": {"nodeName": "x"}});
    for (group, version, kind) in [
        ("", "v1", "Pod"),
        ("", "v1", "Event"),
        ("events.k8s.io", "v1", "Event"),
        ("batch", "v1", "Job"),
        ("resource.k8s.io", "v1beta1", "ResourceSlice"),
        ("apps", "v1", "Deployment"),
    ] {
        if let Ok(converted) = fields::convert(group, version, kind, &selector) {
            let _ = fields::matches(group, kind, &converted, &pod);
        }
    }
}
