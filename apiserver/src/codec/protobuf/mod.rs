//! `application/vnd.kubernetes.protobuf` request bodies, decoded to the
//! Kubernetes JSON the rest of the server works with.
//!
//! # Wire format
//! The magic prefix `6b 38 73 00` ("k8s\0"), then a protobuf
//! `runtime.Unknown{typeMeta{apiVersion, kind}, raw, contentEncoding,
//! contentType}` whose `raw` is the `generated.proto` message of that kind
//! (upstream `apimachinery/pkg/runtime/serializer/protobuf/protobuf.go`).
//!
//! # Contract
//! [`decode`] returns the JSON that Go's `encoding/json` prints for the Go
//! struct upstream's protobuf decoder would produce from the same bytes,
//! i.e. what the same client sends when it speaks JSON: JSON field names
//! from the Go tags (`x-kubernetes-preserve-unknown-fields`, `$ref`, …),
//! `omitempty` honoured, zero values kept behind pointers (`replicas: 0`),
//! `[]byte` as base64, `IntOrString` as number or string, `Quantity` as
//! its string, `Time` as `2024-01-02T03:04:05Z` (and `null` when zero, as
//! in `"creationTimestamp": null`), `MicroTime` with six fractional digits,
//! `Duration` as a Go duration string, embedded `RawExtension`/`FieldsV1`
//! as JSON, and `apiVersion`/`kind` from the envelope.
//!
//! Any input, however malformed, yields `Ok` or a [`ProtobufError`]; the
//! decoder never panics and bounds its recursion (see
//! `message::MAX_DEPTH`). Unknown field numbers are skipped, like upstream
//! does; everything the schema names is checked.
//!
//! # Coverage
//! Every kind in `schema.json`: all group/versions of the Kubernetes
//! releases it was generated from (see `generate_schema.py`; currently
//! v1.33, v1.35 and v1.36 unioned, a superset of k8s-openapi's `v1_33`),
//! plus, in every group/version, the option kinds that client-go registers
//! there (`DeleteOptions`, …) and `meta.k8s.io/v1` itself. Typed clients
//! send `DeleteOptions` under the group/version of the resource, e.g.
//! `apps/v1 DeleteOptions`.
//!
//! # Design
//! A schema-driven decoder rather than generated code: one table
//! (`schema.json`, ~420 KB) describes all messages, and ~900 lines of
//! Rust walk the wire format against it. The `.proto` files alone cannot
//! describe the JSON (they lack Go's JSON names, pointers, `omitempty`,
//! inline embedding and named slices), so the table joins them with the Go
//! types at generation time. Adding a Kubernetes release means rerunning
//! the generator, not writing code.

mod envelope;
mod error;
mod message;
mod object;
mod schema;
mod special;
mod wire;

#[cfg(test)]
mod tests;

pub use error::ProtobufError;

/// The media type of Kubernetes protobuf bodies.
pub const MEDIA_TYPE: &str = "application/vnd.kubernetes.protobuf";

/// The four bytes every Kubernetes protobuf body starts with: "k8s\0".
pub const PREFIX: [u8; 4] = [0x6b, 0x38, 0x73, 0x00];

/// A decoded protobuf body.
#[derive(Debug, Clone, PartialEq)]
pub struct Decoded {
    /// `typeMeta.apiVersion` of the envelope, e.g. `apps/v1`.
    pub api_version: String,
    /// `typeMeta.kind` of the envelope, e.g. `Deployment`.
    pub kind: String,
    /// The object as Kubernetes JSON, `apiVersion` and `kind` included.
    pub object: serde_json::Value,
}

/// Decodes a whole `application/vnd.kubernetes.protobuf` request body.
///
/// Safe to call on arbitrary bytes (fuzz targets call this).
pub fn decode(body: &[u8]) -> Result<Decoded, ProtobufError> {
    let Some(rest) = body.strip_prefix(&PREFIX) else {
        return Err(ProtobufError::MissingPrefix);
    };
    object::decode_object(rest, 0)
}

/// Whether a `Content-Type` header value names Kubernetes protobuf,
/// parameters and case aside (`application/vnd.kubernetes.protobuf;
/// charset=…`). The streaming variant (`;stream=watch`) is not a request
/// body type and is rejected.
pub fn is_media_type(content_type: &str) -> bool {
    let mut parts = content_type.split(';');
    let essence = parts.next().unwrap_or_default().trim();
    essence.eq_ignore_ascii_case(MEDIA_TYPE)
        && parts.all(|p| {
            !p.trim()
                .split_once('=')
                .is_some_and(|(k, _)| k.trim().eq_ignore_ascii_case("stream"))
        })
}

/// Every `(apiVersion, kind)` that [`decode`] accepts.
pub fn kinds() -> Result<Vec<(String, String)>, ProtobufError> {
    let schema = schema::schema().map_err(ProtobufError::Schema)?;
    Ok(schema
        .kinds()
        .map(|(a, k)| (a.to_owned(), k.to_owned()))
        .collect())
}

/// The upstream Kubernetes releases (`k8s.io/api` tags) whose union the
/// schema is, oldest first.
pub fn releases() -> Result<Vec<String>, ProtobufError> {
    let schema = schema::schema().map_err(ProtobufError::Schema)?;
    Ok(schema.releases.clone())
}
