//! Fuzz target: request bodies through what create/update handlers do with
//! them: `http::body::parse_json` (JSON with duplicate-key detection), then
//! `http::body::admit_object` (apiVersion/kind check, normalization through
//! the k8s-openapi type, unknown-field detection) for configmaps,
//! deployments, pods, secrets and namespaces, under every
//! `fieldValidation`.
//!
//! Bodies that start with the protobuf magic `k8s\0` also go through
//! `http::body::decode` as `application/vnd.kubernetes.protobuf` and are
//! admitted as the resource their envelope names, if it is served.
//!
//! Checked on every input, besides "nothing panics":
//! - `Strict`, `Warn` and `Ignore` agree: the same error, or the same
//!   object, with `Strict` failing exactly when `Warn` warns and `Ignore`
//!   never warning;
//! - every duplicate key found by `parse_json` becomes a warning;
//! - an admitted object is a JSON object with the resource's
//!   `apiVersion`/`kind`, serializes, and admitting it again under `Strict`
//!   gives it back unchanged (normalization is a fixed point);
//! - errors are 400s and render as a `Status` body.

#![no_main]

use libfuzzer_sys::fuzz_target;
use serde_json::Value;
use skein_apiserver::http::body::{self, Decoded};
use skein_apiserver::http::query::FieldValidation;
use skein_apiserver::http::status::ApiError;
use skein_apiserver::registry::resource::Resources;
use skein_apiserver::registry::{ResourceInfo, resource};

/// (group, version, plural) of the resources every JSON body is tried as.
const RESOURCES: [(&str, &str, &str); 5] = [
    ("", "v1", "configmaps"),
    ("apps", "v1", "deployments"),
    ("", "v1", "pods"),
    ("", "v1", "secrets"),
    ("", "v1", "namespaces"),
];

const PROTOBUF_MAGIC: &[u8] = b"k8s\0";

fuzz_target!(|data: &[u8]| {
    match body::parse_json(data) {
        Ok(decoded) => {
            for (group, version, plural) in RESOURCES {
                let res = resource::builtin(group, version, plural).expect("resource is served");
                admit(&res, &decoded);
            }
        }
        Err(err) => check_error(&err),
    }
    if data.starts_with(PROTOBUF_MAGIC) {
        protobuf(data);
    }
});

/// A protobuf body: decoded as the HTTP layer does, admitted as its kind.
fn protobuf(data: &[u8]) {
    let decoded = match body::decode(body::PROTOBUF, data) {
        Ok(decoded) => decoded,
        Err(err) => return check_error(&err),
    };
    assert!(decoded.duplicates.is_empty());
    let api_version = decoded.raw.get("apiVersion").and_then(Value::as_str);
    let kind = decoded.raw.get("kind").and_then(Value::as_str);
    let (Some(api_version), Some(kind)) = (api_version, kind) else {
        panic!("protobuf object without apiVersion/kind: {}", decoded.raw);
    };
    let (group, version) = api_version.split_once('/').unwrap_or(("", api_version));
    if let Some(res) = Resources::new().by_kind(group, version, kind) {
        admit(&res, &decoded);
    }
}

fn copy(decoded: &Decoded) -> Decoded {
    Decoded {
        raw: decoded.raw.clone(),
        duplicates: decoded.duplicates.clone(),
    }
}

fn admit(res: &ResourceInfo, decoded: &Decoded) {
    let warn = body::admit_object(&Resources::new(), res, copy(decoded), FieldValidation::Warn);
    let strict = body::admit_object(&Resources::new(), res, copy(decoded), FieldValidation::Strict);
    let ignore = body::admit_object(&Resources::new(), res, copy(decoded), FieldValidation::Ignore);
    let (object, warnings) = match warn {
        Ok(ok) => ok,
        Err(err) => {
            check_error(&err);
            assert_eq!(strict.as_ref().err(), Some(&err), "{}", res.plural);
            assert_eq!(ignore.as_ref().err(), Some(&err), "{}", res.plural);
            return;
        }
    };

    // The three modes agree.
    assert_eq!(ignore.as_ref().ok(), Some(&(object.clone(), Vec::new())));
    if warnings.is_empty() {
        assert_eq!(strict.as_ref().ok(), Some(&(object.clone(), Vec::new())));
    } else {
        let err = strict.expect_err("Strict accepted a body Warn warned about");
        check_error(&err);
        assert!(
            err.message().starts_with("strict decoding error: "),
            "{}",
            err.message()
        );
    }
    let duplicates = warnings
        .iter()
        .filter(|w| w.starts_with("duplicate field "))
        .count();
    assert_eq!(duplicates, decoded.duplicates.len(), "{warnings:?}");

    // The admitted object.
    let Value::Object(map) = &object else {
        panic!("admitted {} is not an object: {object}", res.kind);
    };
    assert_eq!(
        map.get("apiVersion").and_then(Value::as_str),
        Some(res.api_version)
    );
    assert_eq!(map.get("kind").and_then(Value::as_str), Some(res.kind));
    serde_json::to_vec(&object).expect("admitted object serializes");

    // Normalizing a normalized object changes nothing and warns of nothing.
    let again = body::admit_object(
        &Resources::new(),
        res,
        Decoded {
            raw: object.clone(),
            duplicates: Vec::new(),
        },
        FieldValidation::Strict,
    );
    match again {
        Ok((second, second_warnings)) => {
            assert!(second_warnings.is_empty(), "{second_warnings:?}");
            assert_eq!(
                second, object,
                "normalization of {} is not a fixed point",
                res.kind
            );
        }
        Err(err) => panic!(
            "admitted {} is rejected when sent again: {}\n{object}",
            res.kind,
            err.message()
        ),
    }
}

fn check_error(err: &ApiError) {
    assert_eq!(err.code().as_u16(), 400, "{}", err.message());
    let status: Value = serde_json::from_slice(&err.to_json()).expect("Status renders as JSON");
    assert_eq!(status.get("kind").and_then(Value::as_str), Some("Status"));
}
