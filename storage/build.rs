//! Intentionally empty: see the comment on `protoc-bin-vendored` in Cargo.toml.
fn main() {
    println!("cargo:rerun-if-changed=build.rs");
}
