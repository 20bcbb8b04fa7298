//! Test harness (placeholder).
pub mod etcd;
