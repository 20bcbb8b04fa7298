//! Request body codecs beyond JSON.
//!
//! The server stores and reasons about objects as Kubernetes JSON. Codecs
//! here turn other wire formats into that JSON at the edge, so nothing
//! behind the HTTP layer ever sees them.
//!
//! - [`protobuf`]: `application/vnd.kubernetes.protobuf` request bodies,
//!   which kubectl 1.32+, client-go typed clients and Helm send for
//!   built-in kinds (api-contract §10).

pub mod protobuf;

pub use protobuf::{Decoded, ProtobufError, decode};
