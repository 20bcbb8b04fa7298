//! `override.skein.io/<cluster>`: a per-cluster change to the member copy,
//! either a JSON merge patch (RFC 7386, a JSON object) or a JSON patch
//! (RFC 6902, a JSON array of operations).

use serde_json::{Map, Value};

/// One cluster's override, checked for shape (not yet applied).
#[derive(Debug, Clone, PartialEq)]
pub enum Override {
    /// RFC 7386 merge patch: the object to merge.
    Merge(Map<String, Value>),
    /// RFC 6902 operations, in order.
    Json(Vec<Value>),
}

const OPS: [&str; 6] = ["add", "remove", "replace", "move", "copy", "test"];

/// Parses and checks the annotation value.
///
/// # Errors
///
/// The first problem, worded for the user.
pub fn parse(text: &str) -> Result<Override, String> {
    let v: Value = serde_json::from_str(text).map_err(|e| format!("must be valid JSON: {e}"))?;
    match v {
        Value::Object(m) => Ok(Override::Merge(m)),
        Value::Array(ops) => {
            for (i, op) in ops.iter().enumerate() {
                check_op(op).map_err(|e| format!("operation [{i}]: {e}"))?;
            }
            Ok(Override::Json(ops))
        }
        _ => Err(
            "must be a JSON object (a merge patch) or a JSON array (RFC 6902 operations)".into(),
        ),
    }
}

fn check_op(op: &Value) -> Result<(), String> {
    let Value::Object(m) = op else {
        return Err("must be an object".into());
    };
    let name = match m.get("op") {
        Some(Value::String(s)) => s.as_str(),
        None => return Err("\"op\" is required".into()),
        Some(_) => return Err("\"op\" must be a string".into()),
    };
    if !OPS.contains(&name) {
        return Err(format!(
            "unsupported \"op\" {name:?} (supported: \"add\", \"remove\", \"replace\", \"move\", \"copy\", \"test\")"
        ));
    }
    pointer(m, "path")?;
    if matches!(name, "add" | "replace" | "test") && !m.contains_key("value") {
        return Err(format!("\"value\" is required for {name:?}"));
    }
    if matches!(name, "move" | "copy") {
        pointer(m, "from")?;
    }
    Ok(())
}

/// A JSON pointer: `""` or `/`-prefixed, `~` only as `~0`/`~1`.
fn pointer(m: &Map<String, Value>, key: &str) -> Result<(), String> {
    let p = match m.get(key) {
        Some(Value::String(s)) => s,
        None => return Err(format!("{key:?} is required")),
        Some(_) => return Err(format!("{key:?} must be a string")),
    };
    if !p.is_empty() && !p.starts_with('/') {
        return Err(format!(
            "{key:?} {p:?} must be a JSON pointer starting with '/'"
        ));
    }
    let mut chars = p.chars();
    while let Some(c) = chars.next() {
        if c == '~' && !matches!(chars.next(), Some('0' | '1')) {
            return Err(format!(
                "{key:?} {p:?} has an invalid '~' escape (use ~0 or ~1)"
            ));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn accepts_both_forms() {
        assert!(matches!(
            parse(r#"{"spec":{"replicas":3}}"#),
            Ok(Override::Merge(_))
        ));
        let ok = r#"[{"op":"replace","path":"/spec/replicas","value":3},{"op":"remove","path":"/metadata/labels/a~1b"},{"op":"copy","from":"/a","path":"/b"}]"#;
        assert!(matches!(parse(ok), Ok(Override::Json(ops)) if ops.len() == 3));
    }

    #[test]
    fn rejects_malformed() {
        let cases = [
            ("3", "must be a JSON object (a merge patch) or a JSON array"),
            ("{", "must be valid JSON"),
            (r#"[{"path":"/a"}]"#, "operation [0]: \"op\" is required"),
            (
                r#"[{"op":"frob","path":"/a"}]"#,
                "unsupported \"op\" \"frob\"",
            ),
            (
                r#"[{"op":"add","path":"a","value":1}]"#,
                "must be a JSON pointer",
            ),
            (
                r#"[{"op":"add","path":"/a"}]"#,
                "\"value\" is required for \"add\"",
            ),
            (r#"[{"op":"move","path":"/a"}]"#, "\"from\" is required"),
            (r#"[{"op":"remove","path":"/a~2"}]"#, "invalid '~' escape"),
            (r#"[1]"#, "operation [0]: must be an object"),
        ];
        for (text, want) in cases {
            let err = parse(text).unwrap_err();
            assert!(err.contains(want), "{text}: {err}");
        }
    }
}
