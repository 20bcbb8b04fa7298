//! Request bodies: media types, JSON with duplicate-field detection,
//! protobuf, and unknown-field detection against the kind's type.
//!
//! An object is normalized by decoding it into its k8s-openapi type and
//! encoding it again, exactly as kube-apiserver decodes into Go structs:
//! unknown fields are dropped. A value of the wrong JSON type is reported
//! in Go's words (`json: cannot unmarshal bool into Go struct field …`,
//! [`crate::wire::typecheck`]). Comparing the body with the normalized
//! object names the unknown fields for `fieldValidation`.

use std::cell::RefCell;
use std::fmt;

use axum::http::HeaderMap;
use serde::de::{DeserializeSeed, MapAccess, SeqAccess, Visitor};
use serde_json::{Map, Value};

use super::query::FieldValidation;
use super::status::ApiError;
use crate::registry::ResourceInfo;
use crate::registry::resource::Resources;

/// Largest accepted request body (kube-apiserver's 3 MiB).
pub const MAX_BODY: usize = 3 * 1024 * 1024;

/// The protobuf media type.
pub const PROTOBUF: &str = "application/vnd.kubernetes.protobuf";

/// The media type of the body, without parameters, lowercased.
pub fn content_type(headers: &HeaderMap) -> String {
    headers
        .get(axum::http::header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .map(|v| {
            v.split(';')
                .next()
                .unwrap_or("")
                .trim()
                .to_ascii_lowercase()
        })
        .unwrap_or_default()
}

/// A decoded body and the warnings its validation produced.
#[derive(Debug)]
pub struct Decoded {
    /// The object as sent (after protobuf → JSON, if needed).
    pub raw: Value,
    /// Fields named twice in the JSON.
    pub duplicates: Vec<String>,
}

/// Parses JSON, recording duplicate keys by path. Malformed JSON is 400.
pub fn parse_json(bytes: &[u8]) -> Result<Decoded, ApiError> {
    let dups = RefCell::new(Vec::new());
    let mut de = serde_json::Deserializer::from_slice(bytes);
    let raw = Seed {
        path: String::new(),
        dups: &dups,
    }
    .deserialize(&mut de)
    .and_then(|v| de.end().map(|()| v))
    .map_err(|e| ApiError::bad_request(format!("json: {e}")))?;
    Ok(Decoded {
        raw,
        duplicates: dups.into_inner(),
    })
}

/// Decodes a body of `content_type` into JSON. Protobuf is converted by
/// [`crate::codec`]; other types are 415.
pub fn decode(content_type: &str, bytes: &[u8]) -> Result<Decoded, ApiError> {
    if bytes.len() > MAX_BODY {
        return Err(ApiError::body_too_large(MAX_BODY));
    }
    match content_type {
        "application/json" | "" => parse_json(bytes),
        "application/yaml" => Err(ApiError::unsupported_media_type(&[
            "application/json",
            PROTOBUF,
        ])),
        PROTOBUF => {
            let raw = protobuf_object(bytes)?;
            Ok(Decoded {
                raw,
                duplicates: Vec::new(),
            })
        }
        _ => Err(ApiError::unsupported_media_type(&[
            "application/json",
            "application/yaml",
            PROTOBUF,
        ])),
    }
}

/// A protobuf body as JSON (see [`crate::codec`]). Malformed bodies are 400.
fn protobuf_object(bytes: &[u8]) -> Result<Value, ApiError> {
    crate::codec::decode(bytes)
        .map(|d| d.object)
        .map_err(|e| ApiError::bad_request(format!("error decoding protobuf body: {e}")))
}

/// [`admit_object`] for a request body that *is* the object (create and
/// update): decoding failures read as upstream's `transformDecodeError`,
/// `Deployment in version "v1" cannot be handled as a Deployment: …`.
pub fn admit_body(
    resources: &Resources,
    res: &ResourceInfo,
    decoded: Decoded,
    validation: FieldValidation,
) -> Result<(Value, Vec<String>), ApiError> {
    admit_object(resources, res, decoded, validation).map_err(|e| {
        if e.message().starts_with("strict decoding error") {
            ApiError::bad_request(format!(
                "{} in version \"{}\" cannot be handled as a {}: {}",
                res.kind,
                res.version,
                res.kind,
                e.message()
            ))
        } else {
            e
        }
    })
}

/// Checks `apiVersion`/`kind` against the URL's resource (and the
/// instance's `resources`, upstream's scheme), normalizes the object, and
/// applies `fieldValidation`. Returns the normalized object and the
/// warnings to send.
pub fn admit_object(
    resources: &Resources,
    res: &ResourceInfo,
    decoded: Decoded,
    validation: FieldValidation,
) -> Result<(Value, Vec<String>), ApiError> {
    let mut raw = decoded.raw;
    let Some(map) = raw.as_object_mut() else {
        return Err(ApiError::bad_request(format!(
            "{} in version \"{}\" cannot be handled as a {}: the object must be a JSON object",
            res.kind, res.version, res.kind
        )));
    };
    let api_version = map
        .get("apiVersion")
        .and_then(Value::as_str)
        .unwrap_or("")
        .to_string();
    let kind = map
        .get("kind")
        .and_then(Value::as_str)
        .unwrap_or("")
        .to_string();
    if kind.is_empty() {
        map.insert("kind".into(), Value::String(res.kind.into()));
    } else if kind != res.kind {
        // A missing apiVersion defaults to the URL's, as upstream's decoder does.
        let body_version = if api_version.is_empty() {
            res.api_version
        } else {
            &api_version
        };
        return Err(kind_mismatch(resources, res, body_version, &kind));
    }
    if api_version.is_empty() {
        map.insert("apiVersion".into(), Value::String(res.api_version.into()));
    } else if api_version != res.api_version {
        let (group, version) = api_version.split_once('/').unwrap_or(("", &api_version));
        if resources.by_kind(group, version, res.kind).is_none() {
            // Not in the scheme: decoding fails before the version check.
            return Err(kind_mismatch(resources, res, &api_version, res.kind));
        }
        return Err(ApiError::bad_request(format!(
            "the API version in the data ({api_version}) does not match the expected API version ({})",
            res.api_version
        )));
    }
    let normalized = res.normalize(raw.clone()).map_err(|e| {
        // Go's own words for a value of the wrong JSON type; serde's
        // message for anything else the typed decode rejects.
        let why = crate::wire::typecheck::type_error(&raw, res.api_version, res.kind)
            .unwrap_or_else(|| e.to_string());
        ApiError::bad_request(format!(
            "{} in version \"{}\" cannot be handled as a {}: {why}",
            res.kind, res.version, res.kind
        ))
    })?;
    let mut unknown = Vec::new();
    unknown_fields(&raw, &normalized, "", &mut unknown);
    let mut problems: Vec<String> = decoded
        .duplicates
        .iter()
        .map(|f| format!("duplicate field \"{f}\""))
        .collect();
    problems.extend(unknown.iter().map(|f| format!("unknown field \"{f}\"")));
    match validation {
        FieldValidation::Strict if !problems.is_empty() => Err(ApiError::bad_request(format!(
            "strict decoding error: {}",
            problems.join(", ")
        ))),
        FieldValidation::Warn => Ok((normalized, problems)),
        _ => Ok((normalized, Vec::new())),
    }
}

/// A body whose kind is not the URL's: upstream's codec fails to decode it
/// into the URL's type. A registered kind cannot be converted (`Secret in
/// version "v1" cannot be handled as a ConfigMap: converting (v1.Secret) to
/// (core.ConfigMap): unknown conversion`); an unregistered one (a
/// lower-case `service`) is not in the scheme.
fn kind_mismatch(
    resources: &Resources,
    res: &ResourceInfo,
    api_version: &str,
    kind: &str,
) -> ApiError {
    let (group, version) = match api_version.split_once('/') {
        Some((g, v)) => (g, v),
        None => ("", api_version),
    };
    let why = if resources.by_kind(group, version, kind).is_some() {
        // Internal packages are named after the group's first label.
        let internal = match res.group.split('.').next() {
            Some("") | None => "core",
            Some(first) => first,
        };
        format!(
            "converting ({version}.{kind}) to ({internal}.{}): unknown conversion",
            res.kind
        )
    } else {
        format!(
            "no kind \"{kind}\" is registered for version \"{api_version}\" in scheme \"pkg/api/legacyscheme/scheme.go:30\""
        )
    };
    ApiError::bad_request(format!(
        "{kind} in version \"{version}\" cannot be handled as a {}: {why}",
        res.kind
    ))
}

/// Paths present in `raw` but dropped by normalization.
fn unknown_fields(raw: &Value, normalized: &Value, path: &str, out: &mut Vec<String>) {
    match (raw, normalized) {
        (Value::Object(r), Value::Object(n)) => {
            for (k, v) in r {
                if v.is_null() {
                    continue;
                }
                let p = if path.is_empty() {
                    k.clone()
                } else {
                    format!("{path}.{k}")
                };
                match n.get(k) {
                    None => out.push(p),
                    Some(nv) => unknown_fields(v, nv, &p, out),
                }
            }
        }
        (Value::Array(r), Value::Array(n)) => {
            for (i, (rv, nv)) in r.iter().zip(n.iter()).enumerate() {
                unknown_fields(rv, nv, &format!("{path}[{i}]"), out);
            }
        }
        _ => {}
    }
}

/// Builds a `Value`, recording keys seen twice in one object.
struct Seed<'a> {
    path: String,
    dups: &'a RefCell<Vec<String>>,
}

impl<'de> DeserializeSeed<'de> for Seed<'_> {
    type Value = Value;
    fn deserialize<D: serde::Deserializer<'de>>(self, d: D) -> Result<Value, D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for Seed<'_> {
    type Value = Value;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("any JSON value")
    }
    fn visit_bool<E>(self, v: bool) -> Result<Value, E> {
        Ok(Value::Bool(v))
    }
    fn visit_i64<E>(self, v: i64) -> Result<Value, E> {
        Ok(Value::from(v))
    }
    fn visit_u64<E>(self, v: u64) -> Result<Value, E> {
        Ok(Value::from(v))
    }
    fn visit_f64<E>(self, v: f64) -> Result<Value, E> {
        Ok(Value::from(v))
    }
    fn visit_str<E>(self, v: &str) -> Result<Value, E> {
        Ok(Value::String(v.to_string()))
    }
    fn visit_string<E>(self, v: String) -> Result<Value, E> {
        Ok(Value::String(v))
    }
    fn visit_unit<E>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }
    fn visit_none<E>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Value, A::Error> {
        let mut out = Vec::new();
        loop {
            let path = format!("{}[{}]", self.path, out.len());
            match seq.next_element_seed(Seed {
                path,
                dups: self.dups,
            })? {
                Some(v) => out.push(v),
                None => return Ok(Value::Array(out)),
            }
        }
    }
    fn visit_map<A: MapAccess<'de>>(self, mut access: A) -> Result<Value, A::Error> {
        let mut out = Map::new();
        while let Some(key) = access.next_key::<String>()? {
            let path = if self.path.is_empty() {
                key.clone()
            } else {
                format!("{}.{key}", self.path)
            };
            let value = access.next_value_seed(Seed {
                path: path.clone(),
                dups: self.dups,
            })?;
            if out.contains_key(&key) {
                self.dups.borrow_mut().push(path);
            }
            out.insert(key, value);
        }
        Ok(Value::Object(out))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn duplicates_are_found_with_paths() {
        let d = parse_json(br#"{"a":1,"b":{"c":1,"c":2},"a":3,"l":[{"x":1,"x":1}]}"#).unwrap();
        assert_eq!(d.duplicates, vec!["b.c", "a", "l[0].x"]);
        assert_eq!(d.raw["a"], 3);
        assert!(parse_json(b"{").is_err());
        assert!(parse_json(b"{} x").is_err());
    }

    #[test]
    fn type_errors_read_as_go() {
        let res = crate::registry::resource::builtin("apps", "v1", "deployments").unwrap();
        let d = parse_json(br#"{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"d"},"spec":{"selector":{"matchLabels":{"a":"b"}},"template":{"metadata":{"labels":{"a":true}},"spec":{"containers":[{"name":"c","image":"i"}]}}}}"#).unwrap();
        let err = admit_object(&Resources::new(), &res, d, FieldValidation::Strict).unwrap_err();
        assert_eq!(err.code(), 400);
        assert_eq!(
            err.message(),
            "Deployment in version \"v1\" cannot be handled as a Deployment: json: cannot unmarshal bool into Go struct field ObjectMeta.spec.template.metadata.labels of type string"
        );
    }

    #[test]
    fn unknown_fields_by_path() {
        let res = crate::registry::resource::builtin("", "v1", "configmaps").unwrap();
        let d = parse_json(br#"{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"x","bogus":1,"creationTimestamp":null},"data":{"a":"b"},"extra":true}"#).unwrap();
        let (obj, warnings) =
            admit_object(&Resources::new(), &res, d, FieldValidation::Warn).unwrap();
        assert_eq!(
            warnings,
            vec![
                "unknown field \"extra\"",
                "unknown field \"metadata.bogus\""
            ]
        );
        assert!(obj.get("extra").is_none());
        let d = parse_json(
            br#"{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"x"},"extra":true}"#,
        )
        .unwrap();
        let err = admit_object(&Resources::new(), &res, d, FieldValidation::Strict).unwrap_err();
        assert_eq!(
            err.message(),
            "strict decoding error: unknown field \"extra\""
        );
        let d =
            parse_json(br#"{"apiVersion":"v1","kind":"Secret","metadata":{"name":"x"}}"#).unwrap();
        assert_eq!(
            admit_object(&Resources::new(), &res, d, FieldValidation::Ignore)
                .unwrap_err()
                .code(),
            400
        );
    }
}
