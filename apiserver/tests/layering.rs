//! The crate's layering rules, checked on its source: lower layers never
//! reach into higher ones, and upstream's string rules have one home.

use std::fs;
use std::path::{Path, PathBuf};

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let entries = fs::read_dir(dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display()));
    for entry in entries {
        let path = entry.expect("directory entry").path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

fn sources(rel: &str) -> Vec<(PathBuf, String)> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join(rel);
    let mut files = Vec::new();
    rust_files(&root, &mut files);
    assert!(!files.is_empty(), "no sources under {}", root.display());
    files
        .into_iter()
        .map(|p| {
            let text = fs::read_to_string(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()));
            (p, text)
        })
        .collect()
}

#[test]
fn the_registry_and_controllers_never_import_http() {
    for dir in ["src/registry", "src/controllers"] {
        for (path, text) in sources(dir) {
            for (i, line) in text.lines().enumerate() {
                assert!(
                    !line.contains("crate::http") && !line.contains("super::http"),
                    "{}:{}: a lower layer imports the HTTP layer: {line}",
                    path.display(),
                    i + 1
                );
            }
        }
    }
    // The error model the registry speaks lives below it.
    let status = fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("src/status.rs"))
        .expect("src/status.rs");
    assert!(status.contains("pub struct ApiError"));
    assert!(
        !status.contains("IntoResponse"),
        "rendering belongs to http/status.rs"
    );
}

/// `(folder, modules it must not import)`: the edges that would make a
/// cycle inside the crate. The metrics registry, the schema tables and the
/// audit policy sit below the registry, the store wiring and HTTP, which
/// record into them or read them; the registry is below auditing's HTTP
/// layer.
const NEVER_IMPORTS: &[(&str, &[&str])] = &[
    ("src/registry", &["http", "audit"]),
    ("src/controllers", &["http", "audit"]),
    (
        "src/metrics",
        &["registry", "http", "store", "controllers", "instance"],
    ),
    ("src/schema", &["registry", "http"]),
    ("src/audit", &["http", "registry"]),
];

#[test]
fn lower_modules_never_import_higher_ones() {
    for (dir, forbidden) in NEVER_IMPORTS {
        for (path, text) in sources(dir) {
            for (i, line) in text.lines().enumerate() {
                for module in *forbidden {
                    let imports = line.contains(&format!("crate::{module}::"))
                        || line.contains(&format!("crate::{module};"))
                        || line.contains(&format!("crate::{module}}}"));
                    assert!(
                        !imports,
                        "{}:{}: imports `crate::{module}`, a higher layer: {line}",
                        path.display(),
                        i + 1
                    );
                }
            }
        }
    }
}

#[test]
fn upstream_string_rules_have_one_home() {
    // The messages of apimachinery's IsDNS1123Subdomain/Label,
    // IsQualifiedName and IsValidLabelValue are written once, in
    // skein_admission::names; the apiserver only calls it.
    for needle in [
        "a lowercase RFC 1123 subdomain must consist",
        "a lowercase RFC 1123 label must consist",
        "name part must consist of alphanumeric characters",
        "a valid label must be an empty string",
    ] {
        for (path, text) in sources("src") {
            assert!(
                !text.contains(needle)
                    || path.to_string_lossy().contains("/tests")
                    || is_test_only(&text, needle),
                "{} spells out {needle:?}; use skein_admission::names",
                path.display()
            );
        }
    }
}

/// Whether every occurrence of `needle` is inside the file's
/// `#[cfg(test)]` module (tests may quote upstream's messages).
fn is_test_only(text: &str, needle: &str) -> bool {
    match text.find("#[cfg(test)]") {
        Some(start) => !text[..start].contains(needle),
        None => false,
    }
}
