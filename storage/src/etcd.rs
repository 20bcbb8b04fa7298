//! The etcd backend.
