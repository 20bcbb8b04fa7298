//! Cases from upstream `labels/selector_test.go` (v1.33), plus the exact
//! error texts.

use std::collections::BTreeMap;

use serde_json::json;

use super::*;

fn set(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
    pairs
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
}

fn req(key: &str, op: Operator, values: &[&str]) -> Requirement {
    Requirement::new(key, op, values.iter().map(|v| v.to_string()).collect()).unwrap()
}

fn sel(reqs: Vec<Requirement>) -> Selector {
    Selector::from_unsorted(reqs)
}

fn err(input: &str) -> String {
    Selector::parse(input).unwrap_err().to_string()
}

#[test]
fn selector_parse_round_trips_without_spaces() {
    for good in [
        "x=a,y=b,z=c",
        "",
        "x!=a,y=b",
        "x=",
        "x= ",
        "x=,z= ",
        "x= ,z= ",
        "!x",
        "x>1",
        "x>1,z<5",
    ] {
        let parsed = Selector::parse(good).unwrap_or_else(|e| panic!("{good}: {e}"));
        assert_eq!(parsed.to_string(), good.replace(' ', ""), "{good}");
    }
    for bad in ["x=a||y=b", "x==a==b", "!x=a", "x<a"] {
        assert!(Selector::parse(bad).is_err(), "{bad}");
    }
}

#[test]
fn deterministic_parse() {
    let a = Selector::parse("x=a,a=x").unwrap();
    let b = Selector::parse("a=x,x=a").unwrap();
    assert_eq!(a.to_string(), b.to_string());
    assert_eq!(a, b);
}

#[test]
fn selector_matches() {
    let yes = [
        ("", set(&[("x", "y")])),
        ("x=y", set(&[("x", "y")])),
        ("x=y,z=w", set(&[("x", "y"), ("z", "w")])),
        ("x!=y,z!=w", set(&[("x", "z"), ("z", "a")])),
        ("notin=in", set(&[("notin", "in")])),
        ("x", set(&[("x", "z")])),
        ("!x", set(&[("y", "z")])),
        ("x>1", set(&[("x", "2")])),
        ("x<1", set(&[("x", "0")])),
        ("foo=bar", set(&[("foo", "bar"), ("baz", "blah")])),
        ("baz=blah", set(&[("foo", "bar"), ("baz", "blah")])),
        ("foo=bar,baz=blah", set(&[("foo", "bar"), ("baz", "blah")])),
    ];
    for (s, labels) in yes {
        assert!(Selector::parse(s).unwrap().matches(&labels), "{s}");
    }
    let no = [
        ("x=z", set(&[])),
        ("x=y", set(&[("x", "z")])),
        ("x=y,z=w", set(&[("x", "w"), ("z", "w")])),
        ("x!=y,z!=w", set(&[("x", "z"), ("z", "w")])),
        ("x", set(&[("y", "z")])),
        ("!x", set(&[("x", "z")])),
        ("x>1", set(&[("x", "0")])),
        ("x<1", set(&[("x", "2")])),
        ("foo=blah", set(&[("foo", "bar"), ("baz", "blah")])),
        ("baz=bar", set(&[("foo", "bar"), ("baz", "blah")])),
        (
            "foo=bar,foobar=bar,baz=blah",
            set(&[("foo", "bar"), ("baz", "blah")]),
        ),
    ];
    for (s, labels) in no {
        assert!(!Selector::parse(s).unwrap().matches(&labels), "{s}");
    }
}

#[test]
fn everything_and_nothing() {
    assert!(Selector::everything().matches(&set(&[("x", "y")])));
    assert!(Selector::everything().is_empty());
    assert!(!Selector::nothing().matches(&set(&[])));
    assert!(!Selector::nothing().is_empty());
    assert!(Selector::nothing().matches_nothing());
    assert_eq!(Selector::nothing().to_string(), "");
    for s in [
        "",
        "a",
        "!a",
        "a=b",
        "a!=b",
        "a in (b)",
        "a notin (b)",
        "a,!a",
    ] {
        assert!(!Selector::parse(s).unwrap().matches_nothing(), "{s}");
    }
}

#[test]
fn from_set() {
    let labels = set(&[("foo", "bar"), ("baz", "blah")]);
    for sub in [
        set(&[]),
        set(&[("foo", "bar")]),
        set(&[("baz", "blah")]),
        labels.clone(),
    ] {
        assert!(Selector::from_set(&sub).unwrap().matches(&labels));
    }
    assert_eq!(Selector::from_set(&set(&[])).unwrap().to_string(), "");
    assert_eq!(
        Selector::from_set(&set(&[("app", "foo"), ("a", "b")]))
            .unwrap()
            .to_string(),
        "a=b,app=foo"
    );
    let long = "axahm2EJ8Phiephe2eixohbee9eGeiyees1thuozi1xoh0GiuH3diewi8iem7Nui";
    assert_eq!(
        Selector::from_set(&set(&[("Key", long)]))
            .unwrap_err()
            .to_string(),
        format!("values[0][Key]: Invalid value: \"{long}\": must be no more than 63 characters")
    );
}

/// Upstream `TestLexer` / `TestLexerSequence`.
#[test]
fn lexer() {
    let single = [
        ("", Token::EndOfString),
        (",", Token::Comma),
        ("notin", Token::NotIn),
        ("in", Token::In),
        ("=", Token::Equals),
        ("==", Token::DoubleEquals),
        (">", Token::GreaterThan),
        ("<", Token::LessThan),
        ("!", Token::DoesNotExist),
        ("!=", Token::NotEquals),
        ("(", Token::OpenPar),
        (")", Token::ClosedPar),
        ("~", Token::Identifier),
        ("||", Token::Identifier),
    ];
    for (s, want) in single {
        let (token, literal) = Lexer { s, pos: 0 }.lex();
        assert_eq!(token, want, "{s}");
        assert_eq!(literal, s);
    }
    use Token::*;
    let sequences: &[(&str, &[Token])] = &[
        (
            "key in ( value )",
            &[Identifier, In, OpenPar, Identifier, ClosedPar],
        ),
        (
            "key notin ( value )",
            &[Identifier, NotIn, OpenPar, Identifier, ClosedPar],
        ),
        (
            "key in ( value1, value2 )",
            &[
                Identifier, In, OpenPar, Identifier, Comma, Identifier, ClosedPar,
            ],
        ),
        ("key", &[Identifier]),
        ("!key", &[DoesNotExist, Identifier]),
        ("()", &[OpenPar, ClosedPar]),
        (
            "x in (),y",
            &[Identifier, In, OpenPar, ClosedPar, Comma, Identifier],
        ),
        (
            "== != (), = notin",
            &[
                DoubleEquals,
                NotEquals,
                OpenPar,
                ClosedPar,
                Comma,
                Equals,
                NotIn,
            ],
        ),
        ("key>2", &[Identifier, GreaterThan, Identifier]),
        ("key<1", &[Identifier, LessThan, Identifier]),
    ];
    for (s, want) in sequences {
        let parser = Parser::new(s);
        let got: Vec<Token> = parser.items.iter().map(|(t, _)| *t).collect();
        let mut want = want.to_vec();
        want.push(EndOfString);
        assert_eq!(got, want, "{s}");
    }
}

/// Upstream `TestParseOperator`.
#[test]
fn parse_operator() {
    for ok in ["in", "=", "==", ">", "<", "notin", "!="] {
        assert!(Parser::new(ok).parse_operator().is_ok(), "{ok}");
    }
    let expected = ", expected: in, notin, =, ==, !=, gt, lt";
    for (s, found) in [("!", "!"), ("exists", "exists"), ("(", "(")] {
        assert_eq!(
            Parser::new(s).parse_operator().unwrap_err(),
            format!("found '{found}'{expected}")
        );
    }
}

/// Upstream `TestRequirementConstructor`, with the full messages.
#[test]
fn requirement_constructor() {
    let s = |v: &[&str]| v.iter().map(|x| x.to_string()).collect::<Vec<_>>();
    let cases: Vec<(String, Operator, Vec<String>, Option<String>)> = vec![
        (
            "x1".into(),
            Operator::In,
            vec![],
            Some("values: Invalid value: []string(nil): for 'in', 'notin' operators, values set can't be empty".into()),
        ),
        ("x3".into(), Operator::In, s(&["foo"]), None),
        ("x4".into(), Operator::NotIn, s(&["foo"]), None),
        (
            "x5".into(),
            Operator::Equals,
            s(&["bar", "foo"]),
            Some(r#"values: Invalid value: []string{"bar", "foo"}: exact-match compatibility requires one single value"#.into()),
        ),
        ("x6".into(), Operator::Exists, vec![], None),
        ("x7".into(), Operator::DoesNotExist, vec![], None),
        (
            "x8".into(),
            Operator::Exists,
            s(&["foo"]),
            Some(r#"values: Invalid value: []string{"foo"}: values set must be empty for exists and does not exist"#.into()),
        ),
        ("x11".into(), Operator::GreaterThan, s(&["1"]), None),
        ("x12".into(), Operator::LessThan, s(&["6"]), None),
        (
            "x13".into(),
            Operator::GreaterThan,
            vec![],
            Some("values: Invalid value: []string(nil): for 'Gt', 'Lt' operators, exactly one value is required".into()),
        ),
        (
            "x14".into(),
            Operator::GreaterThan,
            s(&["bar"]),
            Some(r#"values[0]: Invalid value: "bar": for 'Gt', 'Lt' operators, the value must be an integer"#.into()),
        ),
        (
            "x15".into(),
            Operator::LessThan,
            s(&["bar"]),
            Some(r#"values[0]: Invalid value: "bar": for 'Gt', 'Lt' operators, the value must be an integer"#.into()),
        ),
        (
            "a".repeat(254),
            Operator::Exists,
            vec![],
            Some(format!("key: Invalid value: \"{}\": name part must be no more than 63 characters", "a".repeat(254))),
        ),
        (
            "x16".into(),
            Operator::Equals,
            vec!["a".repeat(254)],
            Some(format!("values[0][x16]: Invalid value: \"{}\": must be no more than 63 characters", "a".repeat(254))),
        ),
        (
            "x17".into(),
            Operator::Equals,
            s(&["a b"]),
            Some(r#"values[0][x17]: Invalid value: "a b": a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')"#.into()),
        ),
    ];
    for (key, op, values, want) in cases {
        let got = Requirement::new(key.clone(), op, values)
            .err()
            .map(|e| e.to_string());
        assert_eq!(got, want, "{key}");
    }
}

/// Upstream `TestToString`.
#[test]
fn to_string() {
    use Operator::*;
    let cases = [
        (
            vec![
                req("x", In, &["abc", "def"]),
                req("y", NotIn, &["jkl"]),
                req("z", Exists, &[]),
            ],
            "x in (abc,def),y notin (jkl),z",
        ),
        (
            vec![
                req("x", NotIn, &["abc", "def"]),
                req("y", NotEquals, &["jkl"]),
                req("z", DoesNotExist, &[]),
            ],
            "x notin (abc,def),y!=jkl,!z",
        ),
        (
            vec![
                req("x", NotIn, &["abc"]),
                req("y", In, &["jkl", "mno"]),
                req("z", NotIn, &[""]),
            ],
            "x notin (abc),y in (jkl,mno),z notin ()",
        ),
        (
            vec![
                req("x", Equals, &["abc"]),
                req("y", DoubleEquals, &["jkl"]),
                req("z", NotEquals, &["a"]),
                req("z", Exists, &[]),
            ],
            "x=abc,y==jkl,z!=a,z",
        ),
        (
            vec![
                req("x", GreaterThan, &["2"]),
                req("y", LessThan, &["8"]),
                req("z", Exists, &[]),
            ],
            "x>2,y<8,z",
        ),
        (
            vec![req("environment", NotIn, &["dev"])],
            "environment notin (dev)",
        ),
        (vec![req("x", In, &["b", "a", "c"])], "x in (a,b,c)"),
    ];
    for (reqs, want) in cases {
        assert_eq!(sel(reqs).to_string(), want);
    }
}

/// Upstream `TestRequirementSelectorMatching`.
#[test]
fn requirement_selector_matching() {
    use Operator::*;
    let cases = [
        (
            set(&[("x", "foo"), ("y", "baz")]),
            vec![req("x", In, &["foo"]), req("y", NotIn, &["alpha"])],
            true,
        ),
        (
            set(&[("x", "foo"), ("y", "baz")]),
            vec![req("x", In, &["foo"]), req("y", In, &["alpha"])],
            false,
        ),
        (
            set(&[("y", "")]),
            vec![req("x", NotIn, &[""]), req("y", Exists, &[])],
            true,
        ),
        (
            set(&[("y", "")]),
            vec![req("x", DoesNotExist, &[]), req("y", Exists, &[])],
            true,
        ),
        (
            set(&[("y", "")]),
            vec![req("x", NotIn, &[""]), req("y", DoesNotExist, &[])],
            false,
        ),
        (set(&[("y", "baz")]), vec![req("x", In, &[""])], false),
        (
            set(&[("z", "2")]),
            vec![req("z", GreaterThan, &["1"])],
            true,
        ),
        (
            set(&[("z", "v2")]),
            vec![req("z", GreaterThan, &["1"])],
            false,
        ),
    ];
    for (labels, reqs, want) in cases {
        let s = sel(reqs);
        assert_eq!(s.matches(&labels), want, "{s}");
    }
}

/// Upstream `TestSetSelectorParser` (v1.33).
#[test]
fn set_selector_parser() {
    use Operator::*;
    let good: Vec<(&str, Vec<Requirement>)> = vec![
        ("", vec![]),
        ("\rx", vec![req("x", Exists, &[])]),
        (
            "this-is-a-dns.domain.com/key-with-dash",
            vec![req("this-is-a-dns.domain.com/key-with-dash", Exists, &[])],
        ),
        (
            "this-is-another-dns.domain.com/key-with-dash in (so,what)",
            vec![req(
                "this-is-another-dns.domain.com/key-with-dash",
                In,
                &["so", "what"],
            )],
        ),
        (
            "0.1.2.domain/99 notin (10.10.100.1, tick.tack.clock)",
            vec![req(
                "0.1.2.domain/99",
                NotIn,
                &["10.10.100.1", "tick.tack.clock"],
            )],
        ),
        ("foo  in\t (abc)", vec![req("foo", In, &["abc"])]),
        ("x notin\n (abc)", vec![req("x", NotIn, &["abc"])]),
        (
            "x  notin\t\t\t(abc,def)",
            vec![req("x", NotIn, &["abc", "def"])],
        ),
        ("x in (abc,def)", vec![req("x", In, &["abc", "def"])]),
        ("x in (abc,)", vec![req("x", In, &["", "abc"])]),
        ("x in ()", vec![req("x", In, &[""])]),
        (
            "x notin (abc,,def),bar,z in (),w",
            vec![
                req("bar", Exists, &[]),
                req("w", Exists, &[]),
                req("x", NotIn, &["", "abc", "def"]),
                req("z", In, &[""]),
            ],
        ),
        (
            "x,y in (a)",
            vec![req("x", Exists, &[]), req("y", In, &["a"])],
        ),
        ("x=a", vec![req("x", Equals, &["a"])]),
        ("x>1", vec![req("x", GreaterThan, &["1"])]),
        ("x<7", vec![req("x", LessThan, &["7"])]),
        (
            "x=a,y!=b",
            vec![req("x", Equals, &["a"]), req("y", NotEquals, &["b"])],
        ),
        (
            "x=a,y!=b,z in (h,i,j)",
            vec![
                req("x", Equals, &["a"]),
                req("y", NotEquals, &["b"]),
                req("z", In, &["h", "i", "j"]),
            ],
        ),
        ("x notin ( )", vec![req("x", NotIn, &[""])]),
        ("x notin (, a)", vec![req("x", NotIn, &["", "a"])]),
        ("a ", vec![req("a", Exists, &[])]),
        (
            "a in (x,y,notin, z,in)",
            vec![req("a", In, &["in", "notin", "x", "y", "z"])],
        ),
    ];
    for (input, want) in good {
        assert_eq!(Selector::parse(input).unwrap(), sel(want), "{input:?}");
    }
    for bad in [
        "x=a||y=b",
        "x,,y",
        ",x,y",
        "x nott in (y)",
        "a in (xyz),",
        "a in (xyz)b notin ()",
        "a in (xyz abc)",
        "a notin(",
        "a (",
        "(",
    ] {
        assert!(Selector::parse(bad).is_err(), "{bad}");
    }
}

#[test]
fn parse_error_messages() {
    let value_regex = "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')";
    let name_regex = "name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')";
    let cases = [
        ("x,,y", "found ',', expected: identifier after ','".to_string()),
        (",x,y", "found ',', expected: !, identifier, or 'end of string'".into()),
        ("(", "found '(', expected: !, identifier, or 'end of string'".into()),
        ("x,", "found '', expected: identifier after ','".into()),
        ("!", "unable to parse requirement: found '', expected: identifier".into()),
        (
            "x nott in (y)",
            "unable to parse requirement: found 'nott', expected: in, notin, =, ==, !=, gt, lt".into(),
        ),
        ("!x=a", "found '=', expected: ',' or 'end of string'".into()),
        ("a in (xyz)b notin ()", "found 'b', expected: ',' or 'end of string'".into()),
        (
            "a in (xyz abc)",
            "unable to parse requirement: found 'abc', expected: ',' or ')'".into(),
        ),
        ("a notin(", "unable to parse requirement: found '', expected: ',', ')' or identifier".into()),
        ("a (", "unable to parse requirement: found '(', expected: in, notin, =, ==, !=, gt, lt".into()),
        ("a in b", "unable to parse requirement: found 'b' expected: '('".into()),
        ("a in (b", "unable to parse requirement: found '', expected: ',' or ')'".into()),
        ("a in (b,", "unable to parse requirement: found '', expected: ',', or identifier".into()),
        ("a in (=)", "unable to parse requirement: found '=', expected: ',', ')' or identifier".into()),
        ("a==(", "unable to parse requirement: found '(', expected: identifier".into()),
        // v1.33: a second comma is swallowed, so the list cannot end there.
        ("x in (a,,)", "unable to parse requirement: found ')', expected: ',', or identifier".into()),
        (
            "x=a||y=b",
            format!("unable to parse requirement: values[0][x]: Invalid value: \"a||y\": {value_regex}"),
        ),
        (
            "x<a",
            "unable to parse requirement: values[0]: Invalid value: \"a\": for 'Gt', 'Lt' operators, the value must be an integer".into(),
        ),
        (
            "x>-1",
            format!("unable to parse requirement: values[0][x]: Invalid value: \"-1\": {value_regex}"),
        ),
        (
            "x>a_",
            format!("unable to parse requirement: [values[0]: Invalid value: \"a_\": for 'Gt', 'Lt' operators, the value must be an integer, values[0][x]: Invalid value: \"a_\": {value_regex}]"),
        ),
        (
            "Foo Bar",
            "unable to parse requirement: found 'Bar', expected: in, notin, =, ==, !=, gt, lt".into(),
        ),
        (
            "a/b/c",
            "unable to parse requirement: <nil>: Invalid value: \"a/b/c\": a qualified name must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]') with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')".into(),
        ),
        (
            "-x=y",
            format!("unable to parse requirement: <nil>: Invalid value: \"-x\": {name_regex}"),
        ),
        (
            "Example.com/x",
            "unable to parse requirement: <nil>: Invalid value: \"Example.com/x\": prefix part a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')".into(),
        ),
        (
            "é=1",
            format!("unable to parse requirement: <nil>: Invalid value: \"é\": {name_regex}"),
        ),
        (
            "x=\u{1}",
            format!("unable to parse requirement: values[0][x]: Invalid value: \"\\x01\": {value_regex}"),
        ),
    ];
    for (input, want) in cases {
        assert_eq!(err(input), want, "{input:?}");
    }
}

#[test]
fn nul_bytes_behave_like_the_go_lexer() {
    // A NUL ends an identifier and is skipped...
    assert_eq!(Selector::parse("a\0=b").unwrap().to_string(), "a=b");
    assert_eq!(Selector::parse("a=\0b").unwrap().to_string(), "a=b");
    assert_eq!(
        err("a\0b"),
        "unable to parse requirement: found 'b', expected: in, notin, =, ==, !=, gt, lt"
    );
    // ...but where a token would start, it ends the input.
    assert_eq!(Selector::parse("\0a=b").unwrap(), Selector::everything());
    assert_eq!(
        Selector::parse("a=b, \0c").unwrap_err().to_string(),
        "found '', expected: identifier after ','"
    );
}

#[test]
fn keywords_are_values_in_value_position() {
    let s = Selector::parse("in=notin,notin in (in, notin)").unwrap();
    assert_eq!(s.to_string(), "in=notin,notin in (in,notin)");
    assert!(s.matches(&set(&[("in", "notin"), ("notin", "in")])));
}

#[test]
fn requires_exact_match() {
    use Operator::*;
    let cases = [
        (vec![req("key", In, &["value"])], "key", Some("value")),
        (vec![req("key", In, &["value", "value2"])], "key", None),
        (
            vec![
                req("key", In, &["value", "value1"]),
                req("key2", In, &["value2"]),
            ],
            "key2",
            Some("value2"),
        ),
        (vec![req("key", Equals, &["value"])], "key", Some("value")),
        (
            vec![req("key", DoubleEquals, &["value"])],
            "key",
            Some("value"),
        ),
        (vec![req("key", NotEquals, &["value"])], "key", None),
        (
            vec![req("key", In, &["value"]), req("key2", In, &["value2"])],
            "key",
            Some("value"),
        ),
    ];
    for (reqs, key, want) in cases {
        assert_eq!(sel(reqs).requires_exact_match(key), want);
    }
}

#[test]
fn matches_object_reads_metadata_labels() {
    let s = Selector::parse("app=web,tier notin (db),!legacy").unwrap();
    assert!(s.matches_object(&json!({"metadata": {"labels": {"app": "web", "tier": "fe"}}})));
    assert!(!s.matches_object(&json!({"metadata": {"labels": {"app": "web", "legacy": ""}}})));
    assert!(!s.matches_object(&json!({"metadata": {}})));
    assert!(!s.matches_object(&json!({"metadata": {"labels": {"app": 1}}})));
    assert!(Selector::parse("!app").unwrap().matches_object(&json!({})));
    assert!(Selector::everything().matches_object(&json!(null)));
}

#[test]
fn greater_and_less_than_compare_integers() {
    let s = Selector::parse("n>9,n<100").unwrap();
    assert!(s.matches(&set(&[("n", "10")])));
    assert!(s.matches(&set(&[("n", "099")])));
    assert!(!s.matches(&set(&[("n", "9")])));
    assert!(!s.matches(&set(&[("n", "100")])));
    assert!(!s.matches(&set(&[("n", "x")])));
    assert!(!s.matches(&set(&[])));
    assert!(
        !Selector::parse("n>1")
            .unwrap()
            .matches(&set(&[("n", "99999999999999999999")]))
    );
}

#[test]
fn from_label_selector() {
    let s = Selector::from_label_selector_value(&json!({
        "matchLabels": {"app": "web", "a": "b"},
        "matchExpressions": [
            {"key": "tier", "operator": "In", "values": ["fe", "be"]},
            {"key": "env", "operator": "NotIn", "values": ["dev"]},
            {"key": "ready", "operator": "Exists"},
            {"key": "legacy", "operator": "DoesNotExist"},
        ]
    }))
    .unwrap();
    assert_eq!(
        s.to_string(),
        "a=b,app=web,env notin (dev),!legacy,ready,tier in (be,fe)"
    );
    assert!(s.matches(&set(&[
        ("a", "b"),
        ("app", "web"),
        ("tier", "fe"),
        ("ready", "1")
    ])));
    assert!(!s.matches(&set(&[("a", "b"), ("app", "web"), ("tier", "fe")])));

    assert!(
        Selector::from_label_selector_value(&json!({}))
            .unwrap()
            .is_empty()
    );
    assert!(
        Selector::from_label_selector_value(&json!(null))
            .unwrap()
            .matches_nothing()
    );
    assert!(
        Selector::from_label_selector_value(&json!(17)).is_err(),
        "not a LabelSelector"
    );

    let e = |v: serde_json::Value| {
        Selector::from_label_selector_value(&v)
            .unwrap_err()
            .to_string()
    };
    assert_eq!(
        e(json!({"matchExpressions": [{"key": "a", "operator": "Gt", "values": ["1"]}]})),
        "\"Gt\" is not a valid label selector operator"
    );
    assert_eq!(
        e(json!({"matchExpressions": [{"key": "a", "operator": "In", "values": []}]})),
        "values: Invalid value: []string(nil): for 'in', 'notin' operators, values set can't be empty"
    );
    assert_eq!(
        e(json!({"matchExpressions": [{"key": "a", "operator": "Exists", "values": ["x"]}]})),
        "values: Invalid value: []string{\"x\"}: values set must be empty for exists and does not exist"
    );
    assert!(
        e(json!({"matchLabels": {"a b": "c"}}))
            .starts_with("key: Invalid value: \"a b\": name part must consist")
    );
    assert!(e(json!({"matchLabels": "x"})).starts_with("invalid label selector: "));
    assert!(matches!(
        Selector::from_label_selector_value(&json!({"matchLabels": {"a": "-"}})),
        Err(SelectorError::LabelSelector(_))
    ));
}

#[test]
fn label_selector_values_keep_duplicates_but_print_sorted() {
    let s = Selector::from_label_selector_value(&json!({
        "matchExpressions": [{"key": "a", "operator": "In", "values": ["y", "x", "y"]}]
    }))
    .unwrap();
    assert_eq!(s.requirements()[0].values(), ["y", "x", "y"]);
    assert_eq!(s.to_string(), "a in (x,y,y)");
}
