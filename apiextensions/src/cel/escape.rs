//! Property names as CEL sees them (k8s.io/apiserver `pkg/cel/escaping.go`):
//! `foo-bar` is `self.foo__dash__bar`, `namespace` is `self.__namespace__`;
//! a name that cannot be escaped is not reachable from CEL.

use std::borrow::Cow;

/// CEL's reserved words, escaped as `__word__`.
const RESERVED: [&str; 21] = [
    "true",
    "false",
    "null",
    "in",
    "as",
    "break",
    "const",
    "continue",
    "else",
    "for",
    "function",
    "if",
    "import",
    "let",
    "loop",
    "package",
    "namespace",
    "return",
    "var",
    "void",
    "while",
];

/// The CEL field name of property `name`, or `None` when upstream's
/// `Escape` refuses it (empty, starts with a digit, or holds a character
/// other than ASCII letters, digits, `_`, `-`, `.` and `/`).
pub(crate) fn escape(name: &str) -> Option<Cow<'_, str>> {
    let first = *name.as_bytes().first()?;
    if first.is_ascii_digit() {
        return None;
    }
    if RESERVED.contains(&name) {
        return Some(Cow::Owned(format!("__{name}__")));
    }
    if !name
        .bytes()
        .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'-' | b'.' | b'/'))
    {
        return None;
    }
    if !name.contains(['-', '.', '/']) && !name.contains("__") {
        return Some(Cow::Borrowed(name));
    }
    let mut out = String::with_capacity(name.len() + 8);
    let bytes = name.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'_' if bytes.get(i + 1) == Some(&b'_') => {
                out.push_str("__underscores__");
                i += 2;
                continue;
            }
            b'.' => out.push_str("__dot__"),
            b'-' => out.push_str("__dash__"),
            b'/' => out.push_str("__slash__"),
            b => out.push(char::from(b)),
        }
        i += 1;
    }
    Some(Cow::Owned(out))
}

#[cfg(test)]
mod tests {
    use super::escape;

    /// Upstream's escaping_test.go table (facts).
    #[test]
    fn upstream_table() {
        let cases = [
            ("camelCase", Some("camelCase")),
            ("_leading", Some("_leading")),
            ("trailing_", Some("trailing_")),
            ("a__b", Some("a__underscores__b")),
            ("a-b", Some("a__dash__b")),
            ("a.b", Some("a__dot__b")),
            ("a/b", Some("a__slash__b")),
            ("__", Some("__underscores__")),
            ("namespace", Some("__namespace__")),
            ("if", Some("__if__")),
            ("x-kubernetes-int", Some("x__dash__kubernetes__dash__int")),
            ("1a", None),
            ("", None),
            ("a:b", None),
            ("a b", None),
            ("ñ", None),
        ];
        for (input, want) in cases {
            assert_eq!(escape(input).as_deref(), want, "{input}");
        }
    }
}
