//! A rule's `fieldPath` (upstream `ValidFieldPath`): a JSON path of field
//! (`.name`, `['name']`) and map-key accessors that must name something
//! the schema declares; normalized into a field path (`a.b`, `m[key]`).

use serde_json::Value;

/// The normalized path of `json_path` under `schema`, or why it is not
/// valid (upstream's error texts).
pub(crate) fn normalize(json_path: &str, schema: &Value) -> Result<String, String> {
    let tokens = tokenize(json_path);
    let mut out = String::new();
    let mut schema = schema;
    let mut i = 0;
    while i < tokens.len() {
        let name: String = match tokens[i] {
            "[" => {
                let tok = tokens.get(i + 1).ok_or("unexpected end of JSON path")?;
                if tok.len() < 2 || !tok.starts_with('\'') || !tok.ends_with('\'') {
                    return Err(format!("expected single quoted string but got {tok}"));
                }
                let name = unescape(&tok[1..tok.len() - 1])
                    .map_err(|e| format!("invalid string literal: {e}"))?;
                match tokens.get(i + 2) {
                    None => return Err("unexpected end of JSON path".to_owned()),
                    Some(&"]") => {}
                    Some(t) => return Err(format!("expected ] but got {t}")),
                }
                i += 3;
                name
            }
            "." => {
                let tok = tokens.get(i + 1).ok_or("unexpected end of JSON path")?;
                i += 2;
                (*tok).to_owned()
            }
            tok => return Err(format!("expected [ or . but got: {tok}")),
        };
        schema = step(schema, &name, &mut out)?;
    }
    Ok(out)
}

/// Appends `name` to `out` as a field or a map key and returns the schema
/// it leads to.
fn step<'s>(schema: &'s Value, name: &str, out: &mut String) -> Result<&'s Value, String> {
    let invalid = || "does not refer to a valid field".to_owned();
    if let Some(props) = schema.get("properties").and_then(Value::as_object) {
        if !out.is_empty() {
            out.push('.');
        }
        out.push_str(name);
        return props.get(name).ok_or_else(invalid);
    }
    match schema.get("additionalProperties") {
        Some(additional) if additional.is_object() => {
            out.push('[');
            out.push_str(name);
            out.push(']');
            Ok(additional)
        }
        _ => Err(invalid()),
    }
}

/// Splits on `.`, `[` and `]` (each its own token), keeping single-quoted
/// strings whole, as upstream's scanner.
fn tokenize(path: &str) -> Vec<&str> {
    let mut tokens = Vec::new();
    let bytes = path.as_bytes();
    let mut start = 0;
    while start < bytes.len() {
        if bytes[start] == b'\'' {
            let mut end = start + 1;
            let mut closed = false;
            while end < bytes.len() {
                if bytes[end] == b'\'' && bytes[end - 1] != b'\\' {
                    closed = true;
                    break;
                }
                end += 1;
            }
            let stop = if closed { end + 1 } else { bytes.len() };
            tokens.push(&path[start..stop]);
            start = stop;
            continue;
        }
        if matches!(bytes[start], b'.' | b'[' | b']') {
            tokens.push(&path[start..start + 1]);
            start += 1;
            continue;
        }
        let mut end = start;
        while end < bytes.len() && !matches!(bytes[end], b'.' | b'[' | b']') {
            end += 1;
        }
        tokens.push(&path[start..end]);
        start = end;
    }
    tokens
}

/// Upstream's `unescapeSingleQuote`.
fn unescape(s: &str) -> Result<String, String> {
    let mut out = String::with_capacity(s.len());
    let mut chars = s.chars();
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        match chars.next() {
            Some('a') => out.push('\u{7}'),
            Some('b') => out.push('\u{8}'),
            Some('f') => out.push('\u{c}'),
            Some('n') => out.push('\n'),
            Some('r') => out.push('\r'),
            Some('t') => out.push('\t'),
            Some('v') => out.push('\u{b}'),
            Some('\'') => out.push('\''),
            Some('\\') => out.push('\\'),
            Some(other) => return Err(format!("invalid escape char \\{other}")),
            None => out.push('\\'),
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::normalize;

    fn schema() -> serde_json::Value {
        json!({"type": "object", "properties": {
            "foo": {"type": "object", "properties": {"bar": {"type": "string"}, "a.b": {"type": "string"}}},
            "m": {"type": "object", "additionalProperties": {"type": "object", "properties": {"x": {"type": "integer"}}}},
            "l": {"type": "array", "items": {"type": "string"}}
        }})
    }

    /// Cases from upstream's TestValidFieldPath (facts).
    #[test]
    fn upstream_cases() {
        let s = schema();
        assert_eq!(normalize(".foo.bar", &s).as_deref(), Ok("foo.bar"));
        assert_eq!(normalize(".foo['a.b']", &s).as_deref(), Ok("foo.a.b"));
        assert_eq!(normalize(".m['k'].x", &s).as_deref(), Ok("m[k].x"));
        assert_eq!(normalize(".m.k.x", &s).as_deref(), Ok("m[k].x"));
        assert_eq!(
            normalize(".foo.baz", &s),
            Err("does not refer to a valid field".into())
        );
        assert_eq!(
            normalize(".l.x", &s),
            Err("does not refer to a valid field".into())
        );
        assert_eq!(
            normalize("foo", &s),
            Err("expected [ or . but got: foo".into())
        );
        assert_eq!(
            normalize(".foo.", &s),
            Err("unexpected end of JSON path".into())
        );
        assert_eq!(
            normalize(".foo[bar]", &s),
            Err("expected single quoted string but got bar".into())
        );
        assert_eq!(
            normalize(".foo['bar'", &s),
            Err("unexpected end of JSON path".into())
        );
    }
}
