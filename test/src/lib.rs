//! Test harness (placeholder).
