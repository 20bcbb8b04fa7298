//! The Go formatting that upstream's selector messages use:
//! `…/validation/field` (`field.Invalid(...).Error()`), `…/util/errors`
//! (aggregates) and `strconv.Quote`, because their text reaches users
//! verbatim. The string rules themselves are [`crate::names`].

/// `field.Invalid(path, value, detail).Error()` for a string value:
/// `<path>: Invalid value: "<value>": <detail>`.
pub fn invalid_string(path: &str, value: &str, detail: &str) -> String {
    invalid(path, &go_quote(value), detail)
}

/// `field.Invalid(path, values, detail).Error()` for a `[]string` value,
/// which Go prints with `%#v`: `[]string{"a", "b"}`, or `[]string(nil)`.
pub fn invalid_strings(path: &str, values: &[String], detail: &str) -> String {
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
pub fn aggregate(messages: Vec<String>) -> Option<String> {
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

/// Go's `strconv.Quote` (what `%q` prints): [`crate::gofmt::quote`].
pub use crate::gofmt::quote as go_quote;

#[cfg(test)]
mod tests {
    use super::*;
    // The shared string rules, held here to upstream's edge cases too.
    use crate::names::{
        label_value as label_value_errors, qualified_name as qualified_name_errors,
    };

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
