//! `GET /version`: the `version.Info` of Kubernetes v1.33, with the
//! binary's own build facts (git commit, tree state, build date) stamped by
//! `apiserver/build.rs`.

use axum::Json;
use k8s_openapi::apimachinery::pkg::version::Info;

/// The Kubernetes minor version Skein serves.
pub const KUBE_MINOR: &str = "33";

/// `git rev-parse HEAD` of the checkout the binary was built from (40 hex
/// digits), empty when it was not built in a git checkout (`build.rs`).
pub const GIT_COMMIT: &str = env!("SKEIN_GIT_COMMIT");

/// `clean` or `dirty` (upstream's rule: `git status --porcelain` is empty or
/// not), empty outside a git checkout.
pub const GIT_TREE_STATE: &str = env!("SKEIN_GIT_TREE_STATE");

/// When the build script last ran (`YYYY-MM-DDTHH:MM:SSZ`, UTC), or
/// `SOURCE_DATE_EPOCH`.
pub const BUILD_DATE: &str = env!("SKEIN_BUILD_DATE");

/// The version reported to clients. `gitVersion` is valid semver: the
/// Kubernetes version with Skein's own version as build metadata
/// (`v1.33.0+skein-0.1.0`), the way distributions such as k3s do.
pub fn info() -> Info {
    Info {
        major: "1".to_string(),
        minor: KUBE_MINOR.to_string(),
        emulation_major: Some("1".to_string()),
        emulation_minor: Some(KUBE_MINOR.to_string()),
        min_compatibility_major: Some("1".to_string()),
        min_compatibility_minor: Some("32".to_string()),
        git_version: format!("v1.{KUBE_MINOR}.0+skein-{}", env!("CARGO_PKG_VERSION")),
        git_commit: GIT_COMMIT.to_string(),
        git_tree_state: GIT_TREE_STATE.to_string(),
        build_date: BUILD_DATE.to_string(),
        go_version: format!("rust{}", env!("SKEIN_RUSTC_VERSION")),
        compiler: "rustc".to_string(),
        platform: format!(
            "{}/{}",
            std::env::consts::OS,
            go_arch(std::env::consts::ARCH)
        ),
    }
}

/// Go's name for a Rust target architecture (`GOARCH`).
fn go_arch(arch: &str) -> &str {
    match arch {
        "x86_64" => "amd64",
        "x86" => "386",
        "aarch64" => "arm64",
        "powerpc64" => "ppc64le",
        "loongarch64" => "loong64",
        other => other,
    }
}

/// The handler.
pub async fn get() -> Json<Info> {
    Json(info())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn body() {
        let v = serde_json::to_value(info()).expect("json");
        assert_eq!(v["major"], "1");
        assert_eq!(v["minor"], "33");
        assert_eq!(v["emulationMinor"], "33");
        let state = v["gitTreeState"].as_str().expect("gitTreeState");
        assert!(["clean", "dirty", ""].contains(&state), "{state}");
        let commit = v["gitCommit"].as_str().expect("gitCommit");
        assert!(
            commit.is_empty()
                || (commit.len() == 40 && commit.bytes().all(|b| b.is_ascii_hexdigit())),
            "{commit}"
        );
        assert_eq!(commit.is_empty(), state.is_empty());
        let date = v["buildDate"].as_str().expect("buildDate");
        let shape = date.bytes().enumerate().all(|(i, b)| match i {
            4 | 7 => b == b'-',
            10 => b == b'T',
            13 | 16 => b == b':',
            19 => b == b'Z',
            _ => b.is_ascii_digit(),
        });
        assert!(date.len() == 20 && shape, "{date}");
        assert_eq!(v["compiler"], "rustc");
        assert_eq!(
            v["gitVersion"],
            format!("v1.33.0+skein-{}", env!("CARGO_PKG_VERSION"))
        );
        let go = v["goVersion"].as_str().expect("goVersion");
        assert!(go.starts_with("rust1."), "{go}");
        let platform = v["platform"].as_str().expect("platform");
        assert!(platform.starts_with("linux/"), "{platform}");
        assert!(!platform.contains("x86_64"), "{platform}");
    }

    /// The gitVersion must parse as semver (`vMAJOR.MINOR.PATCH` with
    /// optional pre-release and build metadata), or kubectl and Helm choke.
    #[test]
    fn git_version_is_semver() {
        let v = info().git_version;
        let rest = v.strip_prefix('v').expect("leading v");
        let (core, build) = rest.split_once('+').expect("build metadata");
        assert!(
            !core.contains('-'),
            "no pre-release: it would sort before 1.33.0"
        );
        let parts: Vec<_> = core.split('.').collect();
        assert_eq!(parts.len(), 3);
        assert!(
            parts
                .iter()
                .all(|p| !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit()))
        );
        assert!(
            build
                .split('.')
                .all(|id| !id.is_empty()
                    && id.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-'))
        );
    }
}
