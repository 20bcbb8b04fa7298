//! A whole Kubernetes object: envelope, kind lookup, message, type meta.

use serde_json::Value as Json;

use super::Decoded;
use super::envelope::Envelope;
use super::error::{Failure, ProtobufError};
use super::message::message_json;
use super::schema::{Schema, schema};

/// Decodes the bytes after the `k8s\0` prefix at nesting `depth`.
pub(super) fn decode_object(bytes: &[u8], depth: usize) -> Result<Decoded, ProtobufError> {
    if bytes.is_empty() {
        return Err(ProtobufError::EmptyBody);
    }
    let schema = schema().map_err(ProtobufError::Schema)?;
    let envelope = Envelope::parse(bytes)?;
    if envelope.api_version.is_empty() {
        return Err(ProtobufError::MissingTypeMeta("apiVersion"));
    }
    if envelope.kind.is_empty() {
        return Err(ProtobufError::MissingTypeMeta("kind"));
    }
    let object = object_json(
        schema,
        &envelope.api_version,
        &envelope.kind,
        envelope.raw,
        depth,
    )?;
    Ok(Decoded {
        api_version: envelope.api_version,
        kind: envelope.kind,
        object,
    })
}

/// The JSON of the `kind` object in `raw`, with `apiVersion` and `kind` set.
pub(super) fn object_json(
    schema: &Schema,
    api_version: &str,
    kind: &str,
    raw: &[u8],
    depth: usize,
) -> Result<Json, ProtobufError> {
    let message = schema
        .kind(api_version, kind)
        .ok_or_else(|| ProtobufError::UnknownKind {
            api_version: api_version.to_owned(),
            kind: kind.to_owned(),
        })?;
    let name = || format!("{api_version} {kind}");
    let json = message_json(schema, message, raw, depth).map_err(|f| f.into_error(name()))?;
    let Json::Object(mut fields) = json else {
        return Err(Failure::new("the kind's message is not an object").into_error(name()));
    };
    fields.insert("apiVersion".into(), Json::String(api_version.to_owned()));
    fields.insert("kind".into(), Json::String(kind.to_owned()));
    Ok(Json::Object(fields))
}
