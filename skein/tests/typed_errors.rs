//! The federation and the simulator decide on typed errors
//! (`skein_apiserver::status::ErrorKind`), never by comparing HTTP status
//! codes or Status reason strings.

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

#[test]
fn controllers_match_on_error_kinds() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let forbidden = [
        ".code() ==",
        ".code() !=",
        "matches!(e.code()",
        "match e.code()",
        ".code().as_u16()",
        "StatusCode::",
        ".reason() ==",
        ".reason() !=",
        "matches!(e.reason()",
    ];
    let mut files = Vec::new();
    for krate in ["federation/src", "simulator/src"] {
        rust_files(&root.join(krate), &mut files);
    }
    assert!(files.len() > 50, "found only {} sources", files.len());
    for path in files {
        let text = fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        for (i, line) in text.lines().enumerate() {
            for needle in forbidden {
                assert!(
                    !line.contains(needle) || is_test_assertion(line),
                    "{}:{}: decide on ErrorKind, not {needle:?}: {line}",
                    path.display(),
                    i + 1
                );
            }
        }
    }
}

/// Tests may assert what a Status says.
fn is_test_assertion(line: &str) -> bool {
    line.trim_start().starts_with("assert")
}
