//! Records build facts for `/version`: the compiler version (as
//! `SKEIN_RUSTC_VERSION`) and, when set, `SKEIN_GIT_COMMIT` and
//! `SKEIN_BUILD_DATE` from the build environment.

use std::process::Command;

fn main() {
    let rustc = std::env::var("RUSTC").unwrap_or_else(|_| "rustc".to_string());
    let version = Command::new(rustc)
        .arg("--version")
        .output()
        .ok()
        .and_then(|o| String::from_utf8(o.stdout).ok())
        .and_then(|s| s.split_whitespace().nth(1).map(str::to_string))
        .unwrap_or_else(|| "unknown".to_string());
    println!("cargo:rustc-env=SKEIN_RUSTC_VERSION={version}");
    println!("cargo:rerun-if-changed=build.rs");
    println!("cargo:rerun-if-env-changed=SKEIN_GIT_COMMIT");
    println!("cargo:rerun-if-env-changed=SKEIN_BUILD_DATE");
}
