//! Cases from upstream `fields/selector_test.go` (v1.33), plus the exact
//! error texts.

use std::collections::BTreeMap;

use super::*;

fn getter(pairs: &[(&str, &str)]) -> impl Fn(&str) -> Option<String> {
    let map: BTreeMap<String, String> = pairs
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    move |k: &str| map.get(k).cloned()
}

fn matches(selector: &str, pairs: &[(&str, &str)]) -> bool {
    Selector::parse(selector)
        .unwrap_or_else(|e| panic!("{selector}: {e}"))
        .matches(getter(pairs))
}

type Split<'a> = Option<(&'a str, Operator, &'a str)>;
type Rewrite = Box<dyn Fn(&str, &str) -> Result<(String, String)>>;

fn err(input: &str) -> String {
    Selector::parse(input).unwrap_err().to_string()
}

#[test]
fn split_terms_cases() {
    let cases: &[(&str, &[&str])] = &[
        ("a", &["a"]),
        ("a=avalue", &["a=avalue"]),
        ("a=avalue,b=bvalue", &["a=avalue", "b=bvalue"]),
        (
            "a=avalue,b==bvalue,c!=cvalue",
            &["a=avalue", "b==bvalue", "c!=cvalue"],
        ),
        ("", &[]),
        ("a=a,", &["a=a", ""]),
        (",a=a", &["", "a=a"]),
        (r"k=\,,k2=v2", &[r"k=\,", "k2=v2"]),
        (r"k=\\,k2=v2", &[r"k=\\", "k2=v2"]),
        (r"k=\\\,,k2=v2", &[r"k=\\\,", "k2=v2"]),
        (r"k=\a\b\", &[r"k=\a\b\"]),
        (r"k=\", &[r"k=\"]),
        ("함=수,목=록", &["함=수", "목=록"]),
    ];
    for (input, want) in cases {
        assert_eq!(split_terms(input), *want, "{input}");
    }
}

#[test]
fn split_term_cases() {
    let cases: &[(&str, Split)] = &[
        ("a=value", Some(("a", Operator::Equals, "value"))),
        ("b==value", Some(("b", Operator::Equals, "value"))),
        ("c!=value", Some(("c", Operator::NotEquals, "value"))),
        ("", None),
        ("a", None),
        (r"k=\,", Some(("k", Operator::Equals, r"\,"))),
        (r"k=\=", Some(("k", Operator::Equals, r"\="))),
        (
            r"k=\\\a\b\=\,\",
            Some(("k", Operator::Equals, r"\\\a\b\=\,\")),
        ),
        ("함=수", Some(("함", Operator::Equals, "수"))),
        ("a=!b", Some(("a", Operator::Equals, "!b"))),
        ("a!b=c", Some(("a!b", Operator::Equals, "c"))),
    ];
    for (input, want) in cases {
        assert_eq!(split_term(input), *want, "{input}");
    }
}

#[test]
fn escape_and_unescape() {
    for (raw, escaped) in [
        ("", ""),
        ("a", "a"),
        ("=", r"\="),
        (",", r"\,"),
        (r"\", r"\\"),
        (r"\=\,\", r"\\\=\\\,\\"),
    ] {
        assert_eq!(escape_value(raw), escaped);
        assert_eq!(unescape_value(escaped).unwrap(), raw);
    }
    for (bad, message) in [
        (r"\", r"invalid field selector: invalid escape sequence: \"),
        (
            r"\\\",
            r"invalid field selector: invalid escape sequence: \",
        ),
        (
            r"\a",
            r"invalid field selector: invalid escape sequence: \a",
        ),
        (
            r"\ä",
            r"invalid field selector: invalid escape sequence: \ä",
        ),
        (
            "a=b",
            "invalid field selector: unescaped character in value: 61",
        ),
        (
            "a,b",
            "invalid field selector: unescaped character in value: 44",
        ),
    ] {
        assert_eq!(
            unescape_value(bad).unwrap_err().to_string(),
            message,
            "{bad}"
        );
    }
}

#[test]
fn selector_parse() {
    for good in ["x=a,y=b,z=c", "", "x!=a,y=b", r"x=a||y\=b", r"x=a\=\=b"] {
        let parsed = Selector::parse(good).unwrap_or_else(|e| panic!("{good}: {e}"));
        assert_eq!(parsed.to_string(), good);
    }
    for bad in [
        "x=a||y=b",
        "x==a==b",
        "x=a,b",
        "x in (a)",
        "x in (a,b,c)",
        "x",
    ] {
        assert!(Selector::parse(bad).is_err(), "{bad}");
    }
}

#[test]
fn parse_error_messages() {
    assert_eq!(err("x"), "invalid selector: 'x'; can't understand 'x'");
    assert_eq!(
        err("x=a,b"),
        "invalid selector: 'x=a,b'; can't understand 'b'"
    );
    assert_eq!(
        err("x in (a,b,c)"),
        "invalid selector: 'x in (a,b,c)'; can't understand 'b'"
    );
    assert_eq!(
        err("x=a||y=b"),
        "invalid field selector: unescaped character in value: 61"
    );
    assert_eq!(
        err(r"x=a\b"),
        r"invalid field selector: invalid escape sequence: \b"
    );
    assert!(matches!(Selector::parse("x"), Err(SelectorError::Field(_))));
}

#[test]
fn deterministic_parse() {
    let a = Selector::parse("x=a,a=x").unwrap();
    let b = Selector::parse("a=x,x=a").unwrap();
    assert_eq!(a.to_string(), b.to_string());
    assert_eq!(a.to_string(), "a=x,x=a");
}

#[test]
fn double_equals_prints_as_equals() {
    assert_eq!(Selector::parse("a==b").unwrap().to_string(), "a=b");
    assert_eq!(
        Selector::parse("metadata.name==x").unwrap(),
        Selector::parse("metadata.name=x").unwrap()
    );
}

#[test]
fn empty_terms_are_dropped() {
    for input in ["", ",", "=", "!=", ",=,", "==", "=,,!="] {
        assert!(Selector::parse(input).unwrap().is_empty(), "{input:?}");
    }
    let s = Selector::parse("=x,a=").unwrap();
    assert_eq!(s.to_string(), "=x,a=");
    assert_eq!(s.requirements().len(), 2);
}

#[test]
fn everything() {
    assert!(Selector::everything().matches(getter(&[("x", "y")])));
    assert!(Selector::everything().is_empty());
}

#[test]
fn selector_matches() {
    assert!(matches("", &[("x", "y")]));
    assert!(matches("x=y", &[("x", "y")]));
    assert!(matches("x=y,z=w", &[("x", "y"), ("z", "w")]));
    assert!(matches("x!=y,z!=w", &[("x", "z"), ("z", "a")]));
    assert!(matches("notin=in", &[("notin", "in")]));
    assert!(!matches("x=y", &[("x", "z")]));
    assert!(!matches("x=y,z=w", &[("x", "w"), ("z", "w")]));
    assert!(!matches("x!=y,z!=w", &[("x", "z"), ("z", "w")]));

    let fieldset = [("foo", "bar"), ("baz", "blah"), ("complex", r"=value\,\")];
    assert!(matches("foo=bar", &fieldset));
    assert!(matches("baz=blah", &fieldset));
    assert!(matches("foo=bar,baz=blah", &fieldset));
    assert!(matches(
        r"foo=bar,baz=blah,complex=\=value\\\,\\",
        &fieldset
    ));
    assert!(!matches("foo=blah", &fieldset));
    assert!(!matches("baz=bar", &fieldset));
    assert!(!matches("foo=bar,foobar=bar,baz=blah", &fieldset));
}

#[test]
fn missing_fields_read_as_empty() {
    assert!(matches("x=", &[]));
    assert!(!matches("x=a", &[]));
    assert!(matches("x!=a", &[]));
}

#[test]
fn requires_exact_match() {
    let req = |field: &str, operator, value: &str| Requirement {
        field: field.into(),
        operator,
        value: value.into(),
    };
    use Operator::*;
    let cases = [
        (vec![], "test", None),
        (vec![req("", Equals, "")], "test", None),
        (vec![req("a", Equals, "b")], "test", None),
        (vec![req("test", Equals, "b")], "test", Some("b")),
        (vec![req("test", Equals, "")], "test", Some("")),
        (vec![req("test", NotEquals, "b")], "test", None),
        (vec![req("test", NotEquals, "")], "test", None),
        (
            vec![req("", Equals, ""), req("test", Equals, "b")],
            "test",
            Some("b"),
        ),
    ];
    for (reqs, field, want) in cases {
        assert_eq!(
            Selector::from_requirements(reqs).requires_exact_match(field),
            want
        );
    }
    assert_eq!(
        Selector::parse("metadata.name=x,metadata.namespace=y")
            .unwrap()
            .requires_exact_match("metadata.name"),
        Some("x")
    );
}

#[test]
fn transform() {
    let identity =
        |f: &str, v: &str| -> Result<(String, String)> { Ok((f.to_string(), v.to_string())) };
    let cases: Vec<(&str, Rewrite, &str)> = vec![
        ("", Box::new(identity), ""),
        ("a=b,c=d", Box::new(identity), "a=b,c=d"),
        (
            "a=b,c=d",
            Box::new(|f: &str, v: &str| {
                Ok(if f == "a" {
                    ("e".into(), "f".into())
                } else {
                    (f.into(), v.into())
                })
            }),
            "e=f,c=d",
        ),
        (
            "a=b",
            Box::new(|_: &str, _: &str| Ok((String::new(), String::new()))),
            "",
        ),
        (
            "a=b,c=d,e=f",
            Box::new(|f: &str, v: &str| {
                Ok(if f == "c" {
                    (String::new(), String::new())
                } else {
                    (f.into(), v.into())
                })
            }),
            "a=b,e=f",
        ),
    ];
    for (input, f, want) in cases {
        let out = Selector::parse(input).unwrap().transform(f).unwrap();
        assert_eq!(out.to_string(), want);
        assert_eq!(out.is_empty(), want.is_empty());
    }
    let failing = Selector::parse("a=1,b=2,c=3")
        .unwrap()
        .transform(|f, v| {
            if f == "a" {
                Ok((f.into(), v.into()))
            } else {
                Err(SelectorError::UnsupportedField(format!("no {f}")))
            }
        })
        .unwrap_err();
    assert_eq!(failing.to_string(), "no b");
}
