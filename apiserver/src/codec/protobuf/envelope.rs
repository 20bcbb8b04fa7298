//! The `runtime.Unknown` envelope that follows the `k8s\0` prefix.
//!
//! Wire form (upstream `runtime/generated.proto`):
//! `Unknown{typeMeta{apiVersion=1, kind=2}=1, raw=2, contentEncoding=3, contentType=4}`.
//! As in Go's generated code, later occurrences of a field win, unknown
//! fields are skipped, and a known field with the wrong wire type is an
//! error. `contentType` is ignored as upstream does; a non-empty
//! `contentEncoding` is rejected because `raw` would then not be protobuf.

use super::error::{Failure, ProtobufError, Segment};
use super::wire::{Fields, Value};

/// The envelope's fields.
#[derive(Debug, Default, PartialEq, Eq)]
pub(super) struct Envelope<'a> {
    pub(super) api_version: String,
    pub(super) kind: String,
    /// The object's own message bytes (no prefix).
    pub(super) raw: &'a [u8],
}

impl<'a> Envelope<'a> {
    /// Parses the bytes after the prefix.
    pub(super) fn parse(bytes: &'a [u8]) -> Result<Self, ProtobufError> {
        Self::fields(bytes).map_err(|f| f.into_error("envelope".into()))
    }

    fn fields(bytes: &'a [u8]) -> Result<Self, Failure> {
        let mut out = Envelope::default();
        let mut encoding = String::new();
        for item in Fields::new(bytes) {
            match item? {
                (1, Value::Bytes(meta)) => {
                    for item in Fields::new(meta) {
                        let field = item.map_err(|e| e.at(Segment::Field("typeMeta".into())))?;
                        match field {
                            (1, value) => out.api_version = text(value, "apiVersion")?,
                            (2, value) => out.kind = text(value, "kind")?,
                            _ => {}
                        }
                    }
                }
                (2, Value::Bytes(raw)) => out.raw = raw,
                (3, value) => encoding = text(value, "contentEncoding")?,
                (4, value) => {
                    text(value, "contentType")?;
                }
                (n @ (1 | 2), value) => {
                    return Err(wrong_wire(value).at(Segment::Field(
                        if n == 1 { "typeMeta" } else { "raw" }.into(),
                    )));
                }
                _ => {}
            }
        }
        if !encoding.is_empty() {
            return Err(
                Failure::new(format!("content encoding {encoding:?} is not supported"))
                    .at(Segment::Field("contentEncoding".into())),
            );
        }
        Ok(out)
    }
}

fn text(value: Value<'_>, name: &str) -> Result<String, Failure> {
    match value {
        Value::Bytes(b) => Ok(String::from_utf8_lossy(b).into_owned()),
        other => Err(wrong_wire(other).at(Segment::Field(name.into()))),
    }
}

fn wrong_wire(value: Value<'_>) -> Failure {
    Failure::new(format!(
        "wrong wire type {} for a length-delimited field",
        value.wire_name()
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_type_meta_and_raw() {
        // typeMeta{apiVersion:"v1", kind:"Secret"}, raw:[0x0a,0x00], contentType:"x"
        let bytes = [
            0x0a, 0x0c, 0x0a, 0x02, b'v', b'1', 0x12, 0x06, b'S', b'e', b'c', b'r', b'e', b't',
            0x12, 0x02, 0x0a, 0x00, 0x22, 0x01, b'x',
        ];
        let env = Envelope::parse(&bytes).unwrap();
        assert_eq!(env.api_version, "v1");
        assert_eq!(env.kind, "Secret");
        assert_eq!(env.raw, &[0x0a, 0x00]);
    }

    #[test]
    fn rejects_content_encoding() {
        let bytes = [0x1a, 0x04, b'g', b'z', b'i', b'p'];
        let err = Envelope::parse(&bytes).unwrap_err().to_string();
        assert!(err.contains("content encoding \"gzip\""), "{err}");
    }

    #[test]
    fn rejects_wrong_wire_type() {
        let err = Envelope::parse(&[0x10, 0x01]).unwrap_err().to_string();
        assert_eq!(
            err,
            "invalid protobuf body for envelope at raw: wrong wire type varint for a length-delimited field"
        );
    }
}
