//! `pattern`: a Go RE2 regular expression, compiled once with the `regex`
//! crate. Go's `\d`, `\w`, `\s` (and their negations) are ASCII-only while
//! the crate's are Unicode, so they are rewritten to ASCII classes first;
//! matching is unanchored, as Go's `MatchString`.

use regex::Regex;

/// Largest compiled program accepted for one pattern.
const SIZE_LIMIT: usize = 1 << 20;

/// A schema's `pattern`, compiled (or the reason it does not compile).
#[derive(Debug, Clone)]
pub(crate) struct Pattern {
    /// The pattern as written in the schema (quoted in messages).
    pub source: String,
    /// The compiled expression, or the compile error.
    pub regex: Result<Regex, String>,
}

impl Pattern {
    /// Compiles `source`.
    pub(crate) fn new(source: &str) -> Pattern {
        let regex = regex::RegexBuilder::new(&ascii_classes(source))
            .size_limit(SIZE_LIMIT)
            .build()
            .map_err(|e| go_error(&e.to_string()));
        Pattern {
            source: source.to_owned(),
            regex,
        }
    }
}

/// A one-line error in the shape of Go's `regexp.Compile` errors
/// (`error parsing regexp: <what>`); the description is the `regex`
/// crate's, not RE2's wording.
fn go_error(rust: &str) -> String {
    let what = rust
        .lines()
        .rev()
        .find_map(|l| l.trim().strip_prefix("error: "))
        .unwrap_or_else(|| rust.lines().next().unwrap_or(rust));
    format!("error parsing regexp: {what}")
}

/// Rewrites the Perl classes RE2 defines as ASCII into explicit classes.
fn ascii_classes(source: &str) -> String {
    let mut out = String::with_capacity(source.len() + 8);
    let mut chars = source.chars();
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        match chars.next() {
            Some('d') => out.push_str("[0-9]"),
            Some('D') => out.push_str("[^0-9]"),
            Some('w') => out.push_str("[0-9A-Za-z_]"),
            Some('W') => out.push_str("[^0-9A-Za-z_]"),
            Some('s') => out.push_str("[\\t\\n\\f\\r ]"),
            Some('S') => out.push_str("[^\\t\\n\\f\\r ]"),
            Some(other) => {
                out.push('\\');
                out.push(other);
            }
            None => out.push('\\'),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn perl_classes_are_ascii_as_in_go() {
        let p = Pattern::new(r"^\d+$");
        let re = p.regex.unwrap();
        assert!(re.is_match("123"));
        assert!(!re.is_match("١٢٣"), "Arabic-Indic digits are not \\d in Go");
        let p = Pattern::new(r"^[\w.-]+$").regex.unwrap();
        assert!(p.is_match("a_b.c-d"));
        assert!(!p.is_match("é"));
        let p = Pattern::new(r"^a\\d$").regex.unwrap();
        assert!(p.is_match(r"a\d"), "an escaped backslash stays literal");
    }

    #[test]
    fn invalid_patterns_keep_the_error() {
        let err = Pattern::new("(").regex.unwrap_err();
        assert!(err.starts_with("error parsing regexp: "), "{err}");
        assert!(!err.contains('\n'));
        assert!(
            Pattern::new("a+").regex.unwrap().is_match("xaay"),
            "unanchored"
        );
    }
}
