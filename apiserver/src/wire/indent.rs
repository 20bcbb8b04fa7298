//! Go's `json.Indent` with prefix `""` and indent `"  "`: what upstream's
//! pretty serializer (`json.MarshalIndent`) prints. Empty objects and
//! arrays stay `{}`/`[]`, `": "` after keys, no trailing newline.

/// Indents compact JSON (whitespace outside strings is dropped first).
pub fn indent(compact: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(compact.len() * 3 / 2);
    let mut depth = 0usize;
    let mut need_indent = false;
    let mut in_string = false;
    let mut escaped = false;
    for &c in compact {
        if in_string {
            out.push(c);
            if escaped {
                escaped = false;
            } else if c == b'\\' {
                escaped = true;
            } else if c == b'"' {
                in_string = false;
            }
            continue;
        }
        if matches!(c, b' ' | b'\t' | b'\n' | b'\r') {
            continue;
        }
        if need_indent && c != b'}' && c != b']' {
            need_indent = false;
            depth += 1;
            newline(&mut out, depth);
        }
        match c {
            b'"' => {
                in_string = true;
                out.push(c);
            }
            b'{' | b'[' => {
                need_indent = true;
                out.push(c);
            }
            b',' => {
                out.push(c);
                newline(&mut out, depth);
            }
            b':' => {
                out.push(c);
                out.push(b' ');
            }
            b'}' | b']' => {
                if need_indent {
                    need_indent = false;
                } else {
                    depth = depth.saturating_sub(1);
                    newline(&mut out, depth);
                }
                out.push(c);
            }
            _ => out.push(c),
        }
    }
    out
}

fn newline(out: &mut Vec<u8>, depth: usize) {
    out.push(b'\n');
    for _ in 0..depth {
        out.extend_from_slice(b"  ");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn indents_as_go_marshal_indent() {
        // json.MarshalIndent(map[string]any{"a":[]any{1,map[string]any{}},"b":"x:{,}","c":[]any{}}, "", "  ")
        let got = indent(br#"{"a":[1,{}],"b":"x:{,}\"","c":[]}"#.as_slice());
        assert_eq!(
            String::from_utf8(got).unwrap(),
            "{\n  \"a\": [\n    1,\n    {}\n  ],\n  \"b\": \"x:{,}\\\"\",\n  \"c\": []\n}"
        );
        assert_eq!(indent(b"{}\n"), b"{}");
    }
}
