//! `GET /version`: the `version.Info` of Kubernetes v1.33.

use axum::Json;
use k8s_openapi::apimachinery::pkg::version::Info;

/// The Kubernetes minor version Skein serves.
pub const KUBE_MINOR: &str = "33";

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
        git_commit: option_env!("SKEIN_GIT_COMMIT").unwrap_or("").to_string(),
        git_tree_state: "clean".to_string(),
        // kube's own default when the build does not stamp a date.
        build_date: option_env!("SKEIN_BUILD_DATE")
            .unwrap_or("1970-01-01T00:00:00Z")
            .to_string(),
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
        assert_eq!(v["gitTreeState"], "clean");
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
