//! Patch documents applied to stored objects (see `strategic` for
//! `application/strategic-merge-patch+json`).

pub mod strategic;
