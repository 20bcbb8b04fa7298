//! Tests from upstream tables and properties.
