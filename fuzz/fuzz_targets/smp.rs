//! Fuzz target: strategic merge patch application,
//! `patch::strategic::apply`, on arbitrary (original, patch) JSON pairs
//! with the Deployment, Pod and Service schemas and without a schema.
//!
//! The input is either a JSON array whose first two items are the original
//! and the patch, or two JSON documents separated by the first newline.
//! On every input: nothing panics; errors render (a non-empty message) with
//! one of upstream's status codes (400, 422, 500); a result is a JSON
//! object that serializes, and applying an empty patch to it changes
//! nothing.

#![no_main]

use libfuzzer_sys::fuzz_target;
use serde_json::{Value, json};

// Compiled from source rather than depending on skein-apiserver: the patch
// code needs only the schema module (which embeds the vendored
// definitions), serde_json and thiserror.
#[path = "../../apiserver/src/schema/mod.rs"]
#[allow(dead_code, missing_docs)]
mod schema;

#[path = "../../apiserver/src/patch"]
#[allow(dead_code, missing_docs)]
mod patch {
    pub mod strategic;
}

use patch::strategic;

/// (group, version, kind) of the schemas every pair is applied with.
const KINDS: [(&str, &str, &str); 3] = [
    ("apps", "v1", "Deployment"),
    ("", "v1", "Pod"),
    ("", "v1", "Service"),
];

fuzz_target!(|data: &[u8]| {
    let Some((original, patch)) = split(data) else {
        return;
    };
    check(&original, &patch, None);
    for (group, version, kind) in KINDS {
        let schema = schema::definitions().for_gvk(group, version, kind);
        assert!(schema.is_some(), "{kind} has a schema");
        check(&original, &patch, schema);
    }
});

fn split(data: &[u8]) -> Option<(Value, Value)> {
    if let Ok(Value::Array(mut items)) = serde_json::from_slice::<Value>(data) {
        if items.len() >= 2 {
            let patch = items.swap_remove(1);
            let original = items.swap_remove(0);
            return Some((original, patch));
        }
        return None;
    }
    let cut = data.iter().position(|b| *b == b'\n')?;
    let original = serde_json::from_slice(&data[..cut]).ok()?;
    let patch = serde_json::from_slice(&data[cut + 1..]).ok()?;
    Some((original, patch))
}

fn check(original: &Value, patch: &Value, schema: Option<schema::Schema<'_>>) {
    match strategic::apply(original, patch, schema) {
        Ok(out) => {
            assert!(out.is_object(), "result is not an object: {out}");
            let text = serde_json::to_string(&out).expect("result serializes");
            let _: Value = serde_json::from_str(&text).expect("result parses back");
            let again = strategic::apply(&out, &json!({}), schema).expect("empty patch applies");
            assert_eq!(again, out, "an empty patch changed the result");
        }
        Err(err) => {
            assert!(!err.to_string().is_empty());
            assert!(matches!(err.status_code(), 400 | 422 | 500));
        }
    }
}
