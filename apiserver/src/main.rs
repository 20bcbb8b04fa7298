//! The `skein` binary (placeholder).
fn main() {}
