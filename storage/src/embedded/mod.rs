//! The embedded backend (redb).
