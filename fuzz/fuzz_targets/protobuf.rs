//! Fuzz target: arbitrary bytes into the Kubernetes protobuf body decoder,
//! `codec::protobuf::decode`.
//!
//! Every input is decoded as is and, unless it already starts with the
//! `k8s\0` magic, once more with the magic prepended, so the fuzzer spends
//! its time past the prefix check. On every input: nothing panics, errors
//! render, and a decoded object is a JSON object carrying the envelope's
//! `apiVersion`/`kind` that serializes to JSON (compact and pretty) and
//! parses back.

#![no_main]

use libfuzzer_sys::fuzz_target;
use serde_json::Value;

// Compiled from source rather than depending on skein-apiserver: the codec
// is self-contained (base64, serde, serde_json, thiserror, time and the
// embedded schema.json), so this target builds without the server.
#[path = "../../apiserver/src/codec/protobuf/mod.rs"]
#[allow(dead_code, missing_docs, unused_imports)]
mod protobuf;

fuzz_target!(|data: &[u8]| {
    check(data);
    if !data.starts_with(&protobuf::PREFIX) {
        let mut prefixed = Vec::with_capacity(data.len() + protobuf::PREFIX.len());
        prefixed.extend_from_slice(&protobuf::PREFIX);
        prefixed.extend_from_slice(data);
        check(&prefixed);
    }
});

fn check(body: &[u8]) {
    let decoded = match protobuf::decode(body) {
        Ok(decoded) => decoded,
        Err(err) => {
            // The HTTP layer puts this text into the Status message.
            let _ = err.to_string();
            return;
        }
    };
    assert!(!body.is_empty());
    let Value::Object(map) = &decoded.object else {
        panic!("decoded object is not a JSON object: {:?}", decoded.object);
    };
    assert_eq!(
        map.get("apiVersion").and_then(Value::as_str),
        Some(decoded.api_version.as_str())
    );
    assert_eq!(
        map.get("kind").and_then(Value::as_str),
        Some(decoded.kind.as_str())
    );
    // What the HTTP layer does next: serialize (stored objects, responses).
    let text = serde_json::to_string(&decoded.object).expect("decoded object serializes");
    let pretty = serde_json::to_vec_pretty(&decoded.object).expect("decoded object serializes");
    let again: Value = serde_json::from_str(&text).expect("serialized object parses");
    let again_pretty: Value = serde_json::from_slice(&pretty).expect("pretty object parses");
    // Not compared with `decoded.object`: without serde_json's
    // `float_roundtrip` a printed f64 (JSONSchemaProps.maximum, …) may parse
    // back one ulp off. Both texts print the same numbers, though.
    assert_eq!(again, again_pretty);
}
