//! Upstream `cel.ValidFieldPath`: a CEL-rule `fieldPath` or a
//! `selectableFields[].jsonPath` (`.spec.a`, `.spec['b.c']`) resolved
//! against a schema's `properties` and `additionalProperties`.

use serde_json::Value;

use super::json::{map, obj};

/// The schema `path` points at (`None` when it ends inside
/// `additionalProperties: true`), or upstream's error text.
/// `allow_array` permits the `['key']` notation.
pub(crate) fn resolve<'a>(
    path: &str,
    schema: &'a Value,
    allow_array: bool,
) -> Result<Option<&'a Value>, String> {
    let invalid = || "does not refer to a valid field".to_owned();
    let mut current = Some(schema);
    let mut tokens = tokens(path).into_iter();
    // Steps into `name` of the current schema.
    let step = |current: Option<&'a Value>, name: &str| -> Result<Option<&'a Value>, String> {
        let s = current.ok_or_else(invalid)?;
        if let Some(props) = map(s, "properties").filter(|p| !p.is_empty()) {
            return props.get(name).map(Some).ok_or_else(invalid);
        }
        match s.get("additionalProperties") {
            None | Some(Value::Null) => Err(invalid()),
            Some(_) => Ok(obj(s, "additionalProperties")),
        }
    };
    while let Some(tok) = tokens.next() {
        match tok.as_str() {
            "[" => {
                if !allow_array {
                    return Err("array notation is not allowed".into());
                }
                let tok = tokens.next().ok_or("unexpected end of JSON path")?;
                if tok.len() < 2 || !tok.starts_with('\'') || !tok.ends_with('\'') {
                    return Err(format!("expected single quoted string but got {tok}"));
                }
                let name = unescape(&tok[1..tok.len() - 1])
                    .map_err(|e| format!("invalid string literal: {e}"))?;
                current = step(current, &name)?;
                let close = tokens.next().ok_or("unexpected end of JSON path")?;
                if close != "]" {
                    return Err(format!("expected ] but got {close}"));
                }
            }
            "." => {
                let name = tokens.next().ok_or("unexpected end of JSON path")?;
                current = step(current, &name)?;
            }
            other => return Err(format!("expected [ or . but got: {other}")),
        }
    }
    Ok(current)
}

/// The scanner of upstream: `.`, `[`, `]` alone; quoted strings whole.
fn tokens(path: &str) -> Vec<String> {
    let b = path.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'\'' {
            let mut j = i + 1;
            while j < b.len() && !(b[j] == b'\'' && b[j - 1] != b'\\') {
                j += 1;
            }
            let end = (j + 1).min(b.len());
            out.push(String::from_utf8_lossy(&b[i..end]).into_owned());
            i = end;
        } else if matches!(b[i], b'.' | b'[' | b']') {
            out.push((b[i] as char).to_string());
            i += 1;
        } else {
            let mut j = i;
            while j < b.len() && !matches!(b[j], b'.' | b'[' | b']') {
                j += 1;
            }
            out.push(String::from_utf8_lossy(&b[i..j]).into_owned());
            i = j;
        }
    }
    out
}

fn unescape(s: &str) -> Result<String, String> {
    let mut out = String::new();
    let mut chars = s.chars();
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        let Some(d) = chars.next() else {
            out.push('\\');
            break;
        };
        out.push(match d {
            'a' => '\u{7}',
            'b' => '\u{8}',
            'f' => '\u{c}',
            'n' => '\n',
            'r' => '\r',
            't' => '\t',
            'v' => '\u{b}',
            '\'' => '\'',
            '\\' => '\\',
            other => return Err(format!("invalid escape char \\{other}")),
        });
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn resolves() {
        let s = json!({"type": "object", "properties": {"spec": {"type": "object", "properties": {
            "a.b": {"type": "string"}, "m": {"type": "object", "additionalProperties": {"type": "integer"}}}}}});
        assert_eq!(
            resolve(".spec['a.b']", &s, true),
            Ok(Some(&json!({"type": "string"})))
        );
        assert_eq!(
            resolve(".spec.m.x", &s, true),
            Ok(Some(&json!({"type": "integer"})))
        );
        assert_eq!(
            resolve(".spec.nope", &s, true),
            Err("does not refer to a valid field".into())
        );
        assert_eq!(
            resolve(".spec['a.b']", &s, false),
            Err("array notation is not allowed".into())
        );
        assert_eq!(
            resolve("spec", &s, true),
            Err("expected [ or . but got: spec".into())
        );
        assert_eq!(
            resolve(".spec[", &s, true),
            Err("unexpected end of JSON path".into())
        );
    }
}
