//! Applying one cluster's `override.skein.io/<cluster>` to a rendered
//! copy: RFC 7386 merge, or RFC 6902 operations in order, each failure
//! worded for the user (the operation's index, what it did, why).

use json_patch::{PatchErrorKind, PatchOperation};
use serde_json::Value;
use skein_admission::placement::Override;

/// Applies `ov` to `doc`. On failure `doc` may hold the operations before
/// the failing one; the caller discards it.
///
/// # Errors
///
/// `operation [i] (<op> <path>): <why>` for the first operation that does
/// not apply.
pub(super) fn apply(doc: &mut Value, ov: &Override) -> Result<(), String> {
    match ov {
        Override::Merge(m) => {
            json_patch::merge(doc, &Value::Object(m.clone()));
            Ok(())
        }
        Override::Json(ops) => {
            for (i, raw) in ops.iter().enumerate() {
                let what = describe(raw);
                let op: PatchOperation = serde_json::from_value(raw.clone())
                    .map_err(|e| format!("operation [{i}] ({what}): {e}"))?;
                if let Err(e) = json_patch::patch(doc, std::slice::from_ref(&op)) {
                    return Err(format!(
                        "operation [{i}] ({what}): {}",
                        why(doc, raw, &e.kind)
                    ));
                }
            }
            Ok(())
        }
    }
}

/// `replace /spec/foo`, `move /a to /b`.
fn describe(op: &Value) -> String {
    let s = |k: &str| op.get(k).and_then(Value::as_str).unwrap_or_default();
    let path = if s("path").is_empty() {
        "\"\""
    } else {
        s("path")
    };
    match s("op") {
        name @ ("move" | "copy") => format!("{name} {} to {path}", s("from")),
        name => format!("{name} {path}"),
    }
}

/// Why an operation failed, in terms of the document it failed on.
fn why(doc: &Value, op: &Value, kind: &PatchErrorKind) -> String {
    let s = |k: &str| op.get(k).and_then(Value::as_str).unwrap_or_default();
    let path = s("path");
    match kind {
        PatchErrorKind::TestFailed => match doc.pointer(path) {
            Some(actual) => format!(
                "test failed: the value is {}, not {}",
                compact(actual),
                op.get("value").map(compact).unwrap_or_default()
            ),
            None => "test failed: path does not exist".to_owned(),
        },
        PatchErrorKind::InvalidFromPointer => {
            if doc.pointer(s("from")).is_none() {
                "\"from\" path does not exist".to_owned()
            } else {
                "\"from\" path is invalid".to_owned()
            }
        }
        PatchErrorKind::InvalidPointer => {
            let target = if s("op") == "add" || s("op") == "move" || s("op") == "copy" {
                parent(path)
            } else {
                Some(path)
            };
            match target {
                Some(p) if doc.pointer(p).is_none() => "path does not exist".to_owned(),
                _ => "path is invalid (an array index out of bounds?)".to_owned(),
            }
        }
        other => other.to_string(),
    }
}

fn parent(path: &str) -> Option<&str> {
    path.rfind('/').map(|i| &path[..i])
}

fn compact(v: &Value) -> String {
    serde_json::to_string(v).unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn ops(v: Value) -> Override {
        let Value::Array(a) = v else {
            panic!("not an array")
        };
        Override::Json(a)
    }

    #[test]
    fn failures_name_the_operation_and_the_reason() {
        let doc = json!({"spec": {"replicas": 3, "list": [1]}});
        let cases = [
            (
                json!([{"op": "add", "path": "/spec/a", "value": 1}, {"op": "replace", "path": "/spec/foo", "value": 1}]),
                "operation [1] (replace /spec/foo): path does not exist",
            ),
            (
                json!([{"op": "test", "path": "/spec/replicas", "value": 2}]),
                "operation [0] (test /spec/replicas): test failed: the value is 3, not 2",
            ),
            (
                json!([{"op": "add", "path": "/nope/x", "value": 2}]),
                "operation [0] (add /nope/x): path does not exist",
            ),
            (
                json!([{"op": "add", "path": "/spec/list/5", "value": 2}]),
                "operation [0] (add /spec/list/5): path is invalid (an array index out of bounds?)",
            ),
            (
                json!([{"op": "move", "from": "/x", "path": "/y"}]),
                "operation [0] (move /x to /y): \"from\" path does not exist",
            ),
            (
                json!([{"op": "remove", "path": "/spec/gone"}]),
                "operation [0] (remove /spec/gone): path does not exist",
            ),
        ];
        for (o, want) in cases {
            let mut d = doc.clone();
            assert_eq!(apply(&mut d, &ops(o)).unwrap_err(), want);
        }
    }

    #[test]
    fn operations_apply_in_order() {
        let mut d = json!({"spec": {"replicas": 3}});
        let o = ops(json!([
            {"op": "test", "path": "/spec/replicas", "value": 3},
            {"op": "replace", "path": "/spec/replicas", "value": 5},
            {"op": "copy", "from": "/spec/replicas", "path": "/spec/min"},
            {"op": "add", "path": "/metadata", "value": {"labels": {"a/b": "x"}}},
            {"op": "remove", "path": "/metadata/labels/a~1b"},
        ]));
        apply(&mut d, &o).unwrap();
        assert_eq!(
            d,
            json!({"spec": {"replicas": 5, "min": 5}, "metadata": {"labels": {}}})
        );
    }
}
