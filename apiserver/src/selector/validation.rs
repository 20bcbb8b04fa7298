//! Upstream's label key and value rules, and the Go formatting that its
//! error messages use.
//!
//! These mirror `k8s.io/apimachinery/pkg/util/validation` (`IsQualifiedName`,
//! `IsValidLabelValue`, `IsDNS1123Subdomain`), `…/validation/field`
//! (`field.Invalid(...).Error()`) and `…/util/errors` (aggregates), because
//! their text reaches users verbatim. Lengths are in bytes, as Go's `len`.

const QUALIFIED_NAME_FMT: &str = "([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]";
const QUALIFIED_NAME_ERR: &str = "must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character";
const QUALIFIED_NAME_MAX: usize = 63;
const LABEL_VALUE_FMT: &str = "(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?";
const LABEL_VALUE_ERR: &str = "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character";
const LABEL_VALUE_MAX: usize = 63;
const DNS1123_SUBDOMAIN_FMT: &str =
    "[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*";
const DNS1123_SUBDOMAIN_ERR: &str = "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character";
const DNS1123_SUBDOMAIN_MAX: usize = 253;

/// Upstream `validation.IsQualifiedName`: the rule for label keys.
/// Returns the reasons `value` is not one; empty when it is.
pub(crate) fn qualified_name_errors(value: &str) -> Vec<String> {
    let mut errs = Vec::new();
    let parts: Vec<&str> = value.split('/').collect();
    let name = match parts.as_slice() {
        [name] => *name,
        [prefix, name] => {
            if prefix.is_empty() {
                errs.push(format!("prefix part {}", empty_error()));
            } else {
                errs.extend(
                    dns1123_subdomain_errors(prefix)
                        .into_iter()
                        .map(|m| format!("prefix part {m}")),
                );
            }
            *name
        }
        _ => {
            return vec![format!(
                "a qualified name {} with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')",
                regex_error(
                    QUALIFIED_NAME_ERR,
                    QUALIFIED_NAME_FMT,
                    &["MyName", "my.name", "123-abc"]
                )
            )];
        }
    };
    if name.is_empty() {
        errs.push(format!("name part {}", empty_error()));
    } else if name.len() > QUALIFIED_NAME_MAX {
        errs.push(format!("name part {}", max_len_error(QUALIFIED_NAME_MAX)));
    }
    if !is_qualified_name_shape(name) {
        errs.push(format!(
            "name part {}",
            regex_error(
                QUALIFIED_NAME_ERR,
                QUALIFIED_NAME_FMT,
                &["MyName", "my.name", "123-abc"]
            )
        ));
    }
    errs
}

/// Upstream `validation.IsValidLabelValue`.
pub(crate) fn label_value_errors(value: &str) -> Vec<String> {
    let mut errs = Vec::new();
    if value.len() > LABEL_VALUE_MAX {
        errs.push(max_len_error(LABEL_VALUE_MAX));
    }
    if !(value.is_empty() || is_qualified_name_shape(value)) {
        errs.push(regex_error(
            LABEL_VALUE_ERR,
            LABEL_VALUE_FMT,
            &["MyValue", "my_value", "12345"],
        ));
    }
    errs
}

/// Upstream `validation.IsDNS1123Subdomain`.
fn dns1123_subdomain_errors(value: &str) -> Vec<String> {
    let mut errs = Vec::new();
    if value.len() > DNS1123_SUBDOMAIN_MAX {
        errs.push(max_len_error(DNS1123_SUBDOMAIN_MAX));
    }
    if !value.split('.').all(is_dns1123_label_shape) {
        errs.push(regex_error(
            DNS1123_SUBDOMAIN_ERR,
            DNS1123_SUBDOMAIN_FMT,
            &["example.com"],
        ));
    }
    errs
}

/// `^([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$`
fn is_qualified_name_shape(s: &str) -> bool {
    let b = s.as_bytes();
    match (b.first(), b.last()) {
        (Some(first), Some(last)) => {
            first.is_ascii_alphanumeric()
                && last.is_ascii_alphanumeric()
                && b.iter()
                    .all(|c| c.is_ascii_alphanumeric() || matches!(c, b'-' | b'_' | b'.'))
        }
        _ => false,
    }
}

/// `^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`
fn is_dns1123_label_shape(s: &str) -> bool {
    let b = s.as_bytes();
    let alnum = |c: &u8| c.is_ascii_lowercase() || c.is_ascii_digit();
    match (b.first(), b.last()) {
        (Some(first), Some(last)) => {
            alnum(first) && alnum(last) && b.iter().all(|c| alnum(c) || *c == b'-')
        }
        _ => false,
    }
}

fn empty_error() -> &'static str {
    "must be non-empty"
}

fn max_len_error(length: usize) -> String {
    format!("must be no more than {length} characters")
}

/// Upstream `validation.RegexError`, double spaces included.
fn regex_error(msg: &str, fmt: &str, examples: &[&str]) -> String {
    let mut out = String::from(msg);
    out.push_str(" (e.g. ");
    for (i, example) in examples.iter().enumerate() {
        if i > 0 {
            out.push_str(" or ");
        }
        out.push('\'');
        out.push_str(example);
        out.push_str("', ");
    }
    out.push_str("regex used for validation is '");
    out.push_str(fmt);
    out.push_str("')");
    out
}

/// `field.Invalid(path, value, detail).Error()` for a string value:
/// `<path>: Invalid value: "<value>": <detail>`.
pub(crate) fn invalid_string(path: &str, value: &str, detail: &str) -> String {
    invalid(path, &go_quote(value), detail)
}

/// `field.Invalid(path, values, detail).Error()` for a `[]string` value,
/// which Go prints with `%#v`: `[]string{"a", "b"}`, or `[]string(nil)`.
pub(crate) fn invalid_strings(path: &str, values: &[String], detail: &str) -> String {
    let shown = if values.is_empty() {
        "[]string(nil)".to_string()
    } else {
        let quoted: Vec<String> = values.iter().map(|v| go_quote(v)).collect();
        format!("[]string{{{}}}", quoted.join(", "))
    };
    invalid(path, &shown, detail)
}

fn invalid(path: &str, shown: &str, detail: &str) -> String {
    if detail.is_empty() {
        format!("{path}: Invalid value: {shown}")
    } else {
        format!("{path}: Invalid value: {shown}: {detail}")
    }
}

/// `ErrorList.ToAggregate().Error()`: duplicates dropped, one message as is,
/// several as `[a, b]`. `None` for no messages.
pub(crate) fn aggregate(messages: Vec<String>) -> Option<String> {
    let mut unique: Vec<String> = Vec::with_capacity(messages.len());
    for m in messages {
        if !unique.contains(&m) {
            unique.push(m);
        }
    }
    match unique.len() {
        0 => None,
        1 => unique.pop(),
        _ => Some(format!("[{}]", unique.join(", "))),
    }
}

/// Go's `strconv.Quote` (what `%q` prints).
///
/// Printable characters stay as they are; Go's `unicode.IsPrint` is
/// approximated by excluding control, format, separator, private-use and
/// noncharacter code points. Unassigned code points, which Go would escape,
/// are printed as they are.
pub(crate) fn go_quote(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\u{7}' => out.push_str("\\a"),
            '\u{8}' => out.push_str("\\b"),
            '\u{c}' => out.push_str("\\f"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '\u{b}' => out.push_str("\\v"),
            c if (c as u32) < 0x20 || c == '\u{7f}' => {
                out.push_str(&format!("\\x{:02x}", c as u32));
            }
            c if is_go_print(c) => out.push(c),
            c if (c as u32) < 0x10000 => out.push_str(&format!("\\u{:04x}", c as u32)),
            c => out.push_str(&format!("\\U{:08x}", c as u32)),
        }
    }
    out.push('"');
    out
}

fn is_go_print(c: char) -> bool {
    let u = c as u32;
    if u < 0x80 {
        return (0x20..0x7f).contains(&u);
    }
    if c.is_control() || c.is_whitespace() {
        return false;
    }
    const FORMAT: &[(u32, u32)] = &[
        (0x00ad, 0x00ad),
        (0x0600, 0x0605),
        (0x061c, 0x061c),
        (0x06dd, 0x06dd),
        (0x070f, 0x070f),
        (0x0890, 0x0891),
        (0x08e2, 0x08e2),
        (0x180e, 0x180e),
        (0x200b, 0x200f),
        (0x2028, 0x202e),
        (0x2060, 0x2064),
        (0x2066, 0x206f),
        (0xfeff, 0xfeff),
        (0xfff9, 0xfffb),
        (0x110bd, 0x110bd),
        (0x110cd, 0x110cd),
        (0x13430, 0x1343f),
        (0x1bca0, 0x1bca3),
        (0x1d173, 0x1d17a),
        (0xe0001, 0xe0001),
        (0xe0020, 0xe007f),
        // private use
        (0xe000, 0xf8ff),
        (0xf0000, 0xffffd),
        (0x100000, 0x10fffd),
        // noncharacters
        (0xfdd0, 0xfdef),
    ];
    if u & 0xfffe == 0xfffe {
        return false;
    }
    !FORMAT.iter().any(|&(lo, hi)| (lo..=hi).contains(&u))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn qualified_names() {
        for ok in [
            "a",
            "A",
            "1",
            "a.b_c-d",
            "example.com/MyName",
            "0.1.2.domain/99",
            "this-is-a-dns.domain.com/key-with-dash",
        ] {
            assert!(qualified_name_errors(ok).is_empty(), "{ok}");
        }
        for bad in ["", "-a", "a-", "a b", "/a", "a/", "a/b/c", "A.com/x", "ä"] {
            assert!(!qualified_name_errors(bad).is_empty(), "{bad}");
        }
        assert!(qualified_name_errors(&"a".repeat(63)).is_empty());
        assert_eq!(
            qualified_name_errors(&"a".repeat(64)),
            vec!["name part must be no more than 63 characters".to_string()]
        );
        let prefix = format!("{}/a", "a".repeat(254));
        assert_eq!(
            qualified_name_errors(&prefix),
            vec!["prefix part must be no more than 253 characters".to_string()]
        );
    }

    #[test]
    fn empty_name_part_reports_both_reasons() {
        assert_eq!(
            qualified_name_errors("a/"),
            vec![
                "name part must be non-empty".to_string(),
                "name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')".to_string(),
            ]
        );
    }

    #[test]
    fn label_values() {
        for ok in ["", "a", "MyValue", "my_value", "12345", "a.b-c_d"] {
            assert!(label_value_errors(ok).is_empty(), "{ok}");
        }
        for bad in ["-", "a b", "_a", "a_", "é"] {
            assert_eq!(label_value_errors(bad).len(), 1, "{bad}");
        }
        assert_eq!(label_value_errors(&"a".repeat(64)).len(), 1);
        assert_eq!(label_value_errors(&format!("{}-", "a".repeat(64))).len(), 2);
    }

    #[test]
    fn quoting_matches_go() {
        assert_eq!(go_quote("abc"), r#""abc""#);
        assert_eq!(go_quote("a\"b\\c"), r#""a\"b\\c""#);
        assert_eq!(go_quote("\u{1}\u{7f}\n\t"), r#""\x01\x7f\n\t""#);
        assert_eq!(go_quote("héllo ☃"), "\"héllo ☃\"");
        assert_eq!(go_quote("\u{a0}\u{200b}"), r#""\u00a0\u200b""#);
        assert_eq!(go_quote("\u{10fffd}"), r#""\U0010fffd""#);
    }

    #[test]
    fn aggregates() {
        assert_eq!(aggregate(vec![]), None);
        assert_eq!(aggregate(vec!["a".into()]), Some("a".into()));
        assert_eq!(
            aggregate(vec!["a".into(), "b".into(), "a".into()]),
            Some("[a, b]".into())
        );
    }

    #[test]
    fn string_slices_print_like_go() {
        assert_eq!(
            invalid_strings("values", &[], "d"),
            "values: Invalid value: []string(nil): d"
        );
        assert_eq!(
            invalid_strings("values", &["a".into(), "b".into()], "d"),
            r#"values: Invalid value: []string{"a", "b"}: d"#
        );
    }
}
