//! Whether a schema `pattern` compiles as a Go regular expression, and
//! Go's `regexp/syntax` error text when not (`error parsing regexp:
//! missing closing ): `(a``), from `regex-syntax`'s error kinds. The two
//! dialects are both RE2's; where they differ (Go's `\Q…\E`, its 1000
//! repeat limit) Skein follows the Rust parser.

use regex_syntax::ast::ErrorKind as Ast;
use regex_syntax::hir::ErrorKind as Hir;

/// `None` when `pattern` compiles, else Go's error text.
pub(crate) fn compile_error(pattern: &str) -> Option<String> {
    let mut parser = regex_syntax::ParserBuilder::new().build();
    let err = parser.parse(pattern).err()?;
    let (code, expr) = match &err {
        regex_syntax::Error::Parse(e) => {
            let span = e.span();
            let text = pattern
                .get(span.start.offset..span.end.offset)
                .unwrap_or_default();
            match e.kind() {
                Ast::GroupUnclosed => ("missing closing )", pattern),
                Ast::GroupUnopened => ("unexpected )", pattern),
                Ast::ClassUnclosed => (
                    "missing closing ]",
                    pattern.get(span.start.offset..).unwrap_or_default(),
                ),
                Ast::ClassRangeInvalid | Ast::ClassRangeLiteral => {
                    ("invalid character class range", text)
                }
                Ast::EscapeUnexpectedEof => ("trailing backslash at end of expression", ""),
                Ast::ClassEscapeInvalid
                | Ast::EscapeUnrecognized
                | Ast::EscapeHexEmpty
                | Ast::EscapeHexInvalid
                | Ast::EscapeHexInvalidDigit
                | Ast::UnsupportedBackreference => ("invalid escape sequence", text),
                Ast::RepetitionMissing => (
                    "missing argument to repetition operator",
                    operator_at(pattern, span.start.offset),
                ),
                Ast::RepetitionCountInvalid
                | Ast::RepetitionCountDecimalEmpty
                | Ast::RepetitionCountUnclosed
                | Ast::DecimalEmpty
                | Ast::DecimalInvalid => ("invalid repeat count", text),
                Ast::GroupNameDuplicate { .. } => ("duplicate capture group name", text),
                Ast::GroupNameEmpty | Ast::GroupNameInvalid | Ast::GroupNameUnexpectedEof => {
                    ("invalid named capture", text)
                }
                Ast::NestLimitExceeded(_) => ("expression nests too deeply", pattern),
                _ => ("invalid or unsupported Perl syntax", text),
            }
        }
        regex_syntax::Error::Translate(e) => {
            let span = e.span();
            let text = pattern
                .get(span.start.offset..span.end.offset)
                .unwrap_or_default();
            match e.kind() {
                Hir::UnicodePropertyNotFound | Hir::UnicodePropertyValueNotFound => {
                    ("invalid character class range", text)
                }
                Hir::InvalidUtf8 => ("invalid UTF-8", text),
                _ => ("invalid or unsupported Perl syntax", text),
            }
        }
        _ => ("regexp/syntax: internal error", ""),
    };
    Some(format!("error parsing regexp: {code}: `{expr}`"))
}

/// The repetition operator at `at` (`*`, `+?`, `{2,3}`), as Go quotes it.
fn operator_at(pattern: &str, at: usize) -> &str {
    let rest = pattern.get(at..).unwrap_or_default();
    let mut end = match rest.chars().next() {
        Some('{') => rest.find('}').map_or(rest.len(), |i| i + 1),
        Some(c) => c.len_utf8(),
        None => 0,
    };
    if rest.get(end..).is_some_and(|r| r.starts_with('?')) {
        end += 1;
    }
    rest.get(..end).unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    // Go's regexp/syntax error texts for these inputs.
    #[test]
    fn go_texts() {
        for ok in [
            "^[a-z]+$",
            r"\d{1,3}(\.\d{1,3}){3}",
            "(?i)abc",
            r"\p{L}+",
            "[[:alpha:]]",
        ] {
            assert_eq!(compile_error(ok), None, "{ok}");
        }
        let cases = [
            ("(a", "missing closing ): `(a`"),
            ("a)", "unexpected ): `a)`"),
            ("x[a-z", "missing closing ]: `[a-z`"),
            ("[z-a]", "invalid character class range: `z-a`"),
            (r"a\", "trailing backslash at end of expression: ``"),
            (r"\q", r"invalid escape sequence: `\q`"),
            ("*a", "missing argument to repetition operator: `*`"),
            ("+?", "missing argument to repetition operator: `+?`"),
            ("(?=a)", "invalid or unsupported Perl syntax: `(?=`"),
        ];
        for (pattern, want) in cases {
            assert_eq!(
                compile_error(pattern).as_deref(),
                Some(format!("error parsing regexp: {want}").as_str()),
                "{pattern}"
            );
        }
    }
}
