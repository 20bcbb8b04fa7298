//! The error a protobuf body is rejected with, and the path it carries.

use std::fmt;

/// Why a protobuf request body could not be turned into JSON.
///
/// Every variant is the client's fault (or names a kind this server does
/// not decode), so the HTTP layer renders all of them as 400 BadRequest
/// with [`ProtobufError`]'s `Display` text as the Status message.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ProtobufError {
    /// The body does not start with `6b 38 73 00` ("k8s\0").
    #[error(
        "body is not a Kubernetes protobuf message: it does not start with the prefix 6b 38 73 00 (\"k8s\\0\")"
    )]
    MissingPrefix,
    /// Nothing follows the prefix.
    #[error("protobuf body is empty after the \"k8s\\0\" prefix")]
    EmptyBody,
    /// The `runtime.Unknown` envelope lacks `typeMeta.apiVersion` or `typeMeta.kind`.
    #[error("protobuf envelope has no {0} in its typeMeta")]
    MissingTypeMeta(&'static str),
    /// The envelope names a kind that has no protobuf schema here.
    #[error("protobuf decoding of kind {kind:?} in apiVersion {api_version:?} is not supported")]
    UnknownKind {
        /// `typeMeta.apiVersion` of the envelope.
        api_version: String,
        /// `typeMeta.kind` of the envelope.
        kind: String,
    },
    /// The bytes are not a valid encoding of the message the envelope names.
    #[error("invalid protobuf body for {object} at {path}: {reason}")]
    Invalid {
        /// `apiVersion kind` of the object, or `envelope` for the wrapper.
        object: String,
        /// JSON path of the offending field, `.` for the object itself.
        path: String,
        /// What is wrong there.
        reason: String,
    },
    /// The embedded schema table failed to load: a build defect, not the client's.
    #[error("protobuf schema table is unusable: {0}")]
    Schema(String),
}

/// A decoding failure deep in a message, before it knows which object it is in.
///
/// Frames push their path segment while the error unwinds, so the success
/// path pays nothing for error context.
#[derive(Debug)]
pub(super) struct Failure {
    reason: String,
    /// Innermost segment first.
    path: Vec<Segment>,
}

/// One step of a JSON path.
#[derive(Debug)]
pub(super) enum Segment {
    Field(String),
    Index(usize),
    Key(String),
}

impl Failure {
    pub(super) fn new(reason: impl Into<String>) -> Self {
        Self {
            reason: reason.into(),
            path: Vec::new(),
        }
    }

    /// Adds the segment of the frame the error is unwinding through.
    pub(super) fn at(mut self, segment: Segment) -> Self {
        self.path.push(segment);
        self
    }

    /// Names the object the failure happened in.
    pub(super) fn into_error(self, object: String) -> ProtobufError {
        ProtobufError::Invalid {
            object,
            path: PathDisplay(&self.path).to_string(),
            reason: self.reason,
        }
    }
}

struct PathDisplay<'a>(&'a [Segment]);

impl fmt::Display for PathDisplay<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.0.is_empty() {
            return f.write_str(".");
        }
        let mut first = true;
        for segment in self.0.iter().rev() {
            match segment {
                Segment::Field(name) if first => f.write_str(name)?,
                Segment::Field(name) => write!(f, ".{name}")?,
                Segment::Index(i) => write!(f, "[{i}]")?,
                Segment::Key(k) => write!(f, "[{k:?}]")?,
            }
            first = false;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn path_reads_outermost_first() {
        let err = Failure::new("bad")
            .at(Segment::Field("image".into()))
            .at(Segment::Index(2))
            .at(Segment::Field("containers".into()))
            .at(Segment::Key("a".into()))
            .at(Segment::Field("spec".into()))
            .into_error("v1 Pod".into());
        assert_eq!(
            err.to_string(),
            "invalid protobuf body for v1 Pod at spec[\"a\"].containers[2].image: bad"
        );
    }

    #[test]
    fn empty_path_is_a_dot() {
        let err = Failure::new("bad").into_error("envelope".into());
        assert_eq!(
            err.to_string(),
            "invalid protobuf body for envelope at .: bad"
        );
    }
}
