//! Records build facts for `/version` as compile-time environment
//! variables:
//!
//! - `SKEIN_RUSTC_VERSION`: the compiler's version.
//! - `SKEIN_GIT_COMMIT`: `git rev-parse HEAD` of the checkout (40 hex
//!   digits), or empty outside a git checkout (or without git).
//! - `SKEIN_GIT_TREE_STATE`: `clean` or `dirty` as upstream's
//!   `hack/lib/version.sh` decides it (`git status --porcelain` prints
//!   nothing / something, untracked files included), or empty outside a
//!   checkout.
//! - `SKEIN_BUILD_DATE`: when this script ran, as `YYYY-MM-DDTHH:MM:SSZ`
//!   (UTC), or `SOURCE_DATE_EPOCH` when set (reproducible builds).
//!
//! Each can be forced by setting the same variable in the build
//! environment (packagers building from a tarball).
//!
//! The script reruns when HEAD, the branch it points at, the index, or a
//! source of the binary (the `apiserver`, `storage` and `admission` crates,
//! the workspace manifest and lock file) changes — changes that rebuild the
//! binary anyway — so the stamp follows commits, checkouts and edits
//! without rebuilding the server for changes elsewhere in the tree (a
//! change only under `test/` or `docs/` is noticed by the next rebuild).

use std::path::{Path, PathBuf};
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
    for var in [
        "SKEIN_GIT_COMMIT",
        "SKEIN_GIT_TREE_STATE",
        "SKEIN_BUILD_DATE",
        "SOURCE_DATE_EPOCH",
    ] {
        println!("cargo:rerun-if-env-changed={var}");
    }

    let manifest_dir = PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").unwrap_or_default());
    let git = Git { dir: &manifest_dir };
    let commit = env_or("SKEIN_GIT_COMMIT", || git.commit().unwrap_or_default());
    let tree_state = env_or("SKEIN_GIT_TREE_STATE", || {
        if commit.is_empty() {
            String::new()
        } else {
            git.tree_state().unwrap_or_default()
        }
    });
    let build_date = env_or("SKEIN_BUILD_DATE", build_date);
    println!("cargo:rustc-env=SKEIN_GIT_COMMIT={commit}");
    println!("cargo:rustc-env=SKEIN_GIT_TREE_STATE={tree_state}");
    println!("cargo:rustc-env=SKEIN_BUILD_DATE={build_date}");

    for path in git.watched_files() {
        println!("cargo:rerun-if-changed={}", path.display());
    }
    let workspace = manifest_dir.parent().unwrap_or(&manifest_dir);
    for rel in [
        "apiserver/src",
        "apiserver/Cargo.toml",
        "storage/src",
        "storage/Cargo.toml",
        "admission/src",
        "admission/Cargo.toml",
        "Cargo.toml",
        "Cargo.lock",
    ] {
        let p = workspace.join(rel);
        if p.exists() {
            println!("cargo:rerun-if-changed={}", p.display());
        }
    }
}

/// The environment's value of `var` when set, else `compute()`.
fn env_or(var: &str, compute: impl FnOnce() -> String) -> String {
    match std::env::var(var) {
        Ok(v) => v,
        Err(_) => compute(),
    }
}

/// `git` run in the crate's directory.
struct Git<'a> {
    dir: &'a Path,
}

impl Git<'_> {
    /// Stdout of a successful `git <args>`, trimmed; `None` otherwise.
    fn run(&self, args: &[&str]) -> Option<String> {
        let out = Command::new("git")
            // Never take the index lock or rewrite the index: that would
            // change a file this script watches and rebuild forever.
            .arg("--no-optional-locks")
            .args(args)
            .current_dir(self.dir)
            .output()
            .ok()?;
        if !out.status.success() {
            return None;
        }
        Some(String::from_utf8(out.stdout).ok()?.trim().to_string())
    }

    fn commit(&self) -> Option<String> {
        let c = self.run(&["rev-parse", "--verify", "HEAD"])?;
        (c.len() == 40 && c.bytes().all(|b| b.is_ascii_hexdigit())).then_some(c)
    }

    fn tree_state(&self) -> Option<String> {
        let status = self.run(&["status", "--porcelain"])?;
        Some(if status.is_empty() { "clean" } else { "dirty" }.to_string())
    }

    /// HEAD, the branch ref it points at (loose and packed) and the index.
    fn watched_files(&self) -> Vec<PathBuf> {
        let mut files = Vec::new();
        let Some(git_dir) = self.run(&["rev-parse", "--absolute-git-dir"]) else {
            return files;
        };
        let git_dir = PathBuf::from(git_dir);
        let common = self
            .run(&["rev-parse", "--git-common-dir"])
            .map(|c| {
                let c = PathBuf::from(c);
                if c.is_absolute() { c } else { self.dir.join(c) }
            })
            .unwrap_or_else(|| git_dir.clone());
        files.push(git_dir.join("HEAD"));
        files.push(git_dir.join("index"));
        files.push(common.join("packed-refs"));
        if let Some(branch) = self.run(&["symbolic-ref", "-q", "HEAD"]) {
            files.push(common.join(branch));
        }
        // A missing file would make cargo rerun the script on every build.
        files.retain(|f| f.exists());
        files
    }
}

/// Now (or `SOURCE_DATE_EPOCH`) as `YYYY-MM-DDTHH:MM:SSZ`.
fn build_date() -> String {
    let secs = std::env::var("SOURCE_DATE_EPOCH")
        .ok()
        .and_then(|s| s.trim().parse::<i64>().ok())
        .unwrap_or_else(|| {
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map(|d| d.as_secs() as i64)
                .unwrap_or(0)
        });
    rfc3339(secs)
}

/// Unix seconds → `YYYY-MM-DDTHH:MM:SSZ` (proleptic Gregorian, UTC).
fn rfc3339(secs: i64) -> String {
    let days = secs.div_euclid(86_400);
    let rem = secs.rem_euclid(86_400);
    // Days since 1970-01-01 → civil date (Howard Hinnant's algorithm).
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!(
        "{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}Z",
        rem / 3600,
        rem % 3600 / 60,
        rem % 60
    )
}
