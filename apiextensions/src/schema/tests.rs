//! Upstream's test tables (apiextensions `pkg/apiserver/validation`
//! `TestValidateCustomResource`, the integration tests' expected texts) and
//! properties of the whole pipeline.

use std::collections::BTreeSet;

use proptest::prelude::*;
use serde_json::{Value, json};

use super::Structural;

fn schema(v: Value) -> Structural {
    match Structural::parse(&v) {
        Ok(s) => s,
        Err(e) => panic!("schema: {e}"),
    }
}

fn errors(s: &Structural, obj: &Value) -> BTreeSet<String> {
    s.validate(obj).iter().map(ToString::to_string).collect()
}

fn field(v: Value) -> Structural {
    schema(json!({"type": "object", "properties": {"field": v}}))
}

/// `TestValidateCustomResource`: each case's passing objects validate, and
/// each failing object gives exactly upstream's errors.
#[test]
fn upstream_validate_custom_resource_table() {
    type Case = (Structural, Vec<Value>, Vec<(Value, Vec<&'static str>)>);
    let cases: Vec<Case> = vec![
        (
            field(json!({"type": "object"})),
            vec![json!({}), json!({"field": {}})],
            vec![
                (
                    json!({"field": "foo"}),
                    vec![
                        r#"field: Invalid value: "string": field in body must be of type object: "string""#,
                    ],
                ),
                (
                    json!({"field": 42}),
                    vec![
                        r#"field: Invalid value: "integer": field in body must be of type object: "integer""#,
                    ],
                ),
                (
                    json!({"field": true}),
                    vec![
                        r#"field: Invalid value: "boolean": field in body must be of type object: "boolean""#,
                    ],
                ),
                (
                    json!({"field": 1.2}),
                    vec![
                        r#"field: Invalid value: "number": field in body must be of type object: "number""#,
                    ],
                ),
                (
                    json!({"field": []}),
                    vec![
                        r#"field: Invalid value: "array": field in body must be of type object: "array""#,
                    ],
                ),
                (
                    json!({"field": null}),
                    vec![
                        r#"field: Invalid value: "null": field in body must be of type object: "null""#,
                    ],
                ),
            ],
        ),
        (
            field(json!({"type": "object", "nullable": true})),
            vec![json!({}), json!({"field": null}), json!({"field": {}})],
            vec![(
                json!({"field": 42}),
                vec![
                    r#"field: Invalid value: "integer": field in body must be of type object: "integer""#,
                ],
            )],
        ),
        (
            field(json!({"x-kubernetes-int-or-string": true})),
            vec![json!({}), json!({"field": 42}), json!({"field": "foo"})],
            vec![
                (
                    json!({"field": null}),
                    vec![
                        r#"field: Invalid value: "null": field in body must be of type integer,string: "null""#,
                    ],
                ),
                (
                    json!({"field": true}),
                    vec![
                        r#"field: Invalid value: "boolean": field in body must be of type integer,string: "boolean""#,
                    ],
                ),
                (
                    json!({"field": 1.2}),
                    vec![
                        r#"field: Invalid value: "number": field in body must be of type integer,string: "number""#,
                    ],
                ),
                (
                    json!({"field": {}}),
                    vec![
                        r#"field: Invalid value: "object": field in body must be of type integer,string: "object""#,
                    ],
                ),
            ],
        ),
        (
            field(json!({"x-kubernetes-int-or-string": true, "nullable": true,
                "anyOf": [{"type": "integer"}, {"type": "string"}]})),
            vec![
                json!({}),
                json!({"field": null}),
                json!({"field": 42}),
                json!({"field": "foo"}),
            ],
            vec![
                (
                    json!({"field": true}),
                    vec![
                        r#"<nil>: Invalid value: "": "field" must validate at least one schema (anyOf)"#,
                        r#"field: Invalid value: "boolean": field in body must be of type integer,string: "boolean""#,
                        r#"field: Invalid value: "boolean": field in body must be of type integer: "boolean""#,
                    ],
                ),
                (
                    json!({"field": []}),
                    vec![
                        r#"<nil>: Invalid value: "": "field" must validate at least one schema (anyOf)"#,
                        r#"field: Invalid value: "array": field in body must be of type integer,string: "array""#,
                        r#"field: Invalid value: "array": field in body must be of type integer: "array""#,
                    ],
                ),
            ],
        ),
        (
            field(json!({"x-kubernetes-int-or-string": true, "nullable": true,
                "allOf": [{"anyOf": [{"type": "integer"}, {"type": "string"}]}]})),
            vec![
                json!({}),
                json!({"field": null}),
                json!({"field": 42}),
                json!({"field": "foo"}),
            ],
            vec![(
                json!({"field": 1.2}),
                vec![
                    r#"<nil>: Invalid value: "": "field" must validate all the schemas (allOf). None validated"#,
                    r#"<nil>: Invalid value: "": "field" must validate at least one schema (anyOf)"#,
                    r#"field: Invalid value: "number": field in body must be of type integer,string: "number""#,
                    r#"field: Invalid value: "number": field in body must be of type integer: "number""#,
                ],
            )],
        ),
        (
            schema(
                json!({"type": "object", "required": ["field"], "properties": {
                "field": {"type": "object", "required": ["nested"], "properties": {"nested": {}}}}}),
            ),
            vec![json!({"field": {"nested": 1}})],
            vec![
                (json!({"test": "a"}), vec!["field: Required value"]),
                (json!({"field": {}}), vec!["field.nested: Required value"]),
            ],
        ),
        (
            field(
                json!({"type": "object", "required": ["nestedint", "nestedstring"], "properties": {
                "nestedint": {"type": "integer", "enum": [1, 2]},
                "nestedstring": {"type": "string", "enum": ["a", "b"]}}}),
            ),
            vec![json!({"field": {"nestedint": 2, "nestedstring": "a"}})],
            vec![
                (
                    json!({"field": {}}),
                    vec![
                        "field.nestedint: Required value",
                        "field.nestedstring: Required value",
                    ],
                ),
                (
                    json!({"field": {"nestedint": "x", "nestedstring": true}}),
                    vec![
                        r#"field.nestedint: Invalid value: "string": field.nestedint in body must be of type integer: "string""#,
                        r#"field.nestedint: Unsupported value: "x": supported values: "1", "2""#,
                        r#"field.nestedstring: Invalid value: "boolean": field.nestedstring in body must be of type string: "boolean""#,
                        r#"field.nestedstring: Unsupported value: true: supported values: "a", "b""#,
                    ],
                ),
            ],
        ),
        (
            schema(
                json!({"type": "object", "properties": {"fieldX": {"type": "object", "maxProperties": 2}}}),
            ),
            vec![json!({"fieldX": {"a": true}})],
            vec![(
                json!({"fieldX": {"a": true, "b": true, "c": true}}),
                vec!["fieldX: Too many: 3: must have at most 2 items"],
            )],
        ),
        (
            schema(
                json!({"type": "object", "properties": {"fieldX": {"type": "array", "maxItems": 2}}}),
            ),
            vec![json!({"fieldX": ["a"]})],
            vec![(
                json!({"fieldX": ["a", "b", "c"]}),
                vec!["fieldX: Too many: 3: must have at most 2 items"],
            )],
        ),
        (
            schema(
                json!({"type": "object", "properties": {"fieldX": {"type": "string", "maxLength": 2}}}),
            ),
            vec![json!({"fieldX": "ab"}), json!({"fieldX": "éé"})],
            vec![(
                json!({"fieldX": "abc"}),
                vec!["fieldX: Too long: may not be more than 2 bytes"],
            )],
        ),
    ];
    for (i, (s, passing, failing)) in cases.iter().enumerate() {
        for obj in passing {
            assert_eq!(errors(s, obj), BTreeSet::new(), "case {i}: {obj}");
        }
        for (obj, want) in failing {
            let want: BTreeSet<String> = want.iter().map(|s| (*s).to_owned()).collect();
            assert_eq!(errors(s, obj), want, "case {i}: {obj}");
        }
    }
}

/// `TestCustomResourceValidationErrors` (integration): the noxu schema.
#[test]
fn upstream_noxu_validation_errors() {
    let s = schema(json!({
        "type": "object",
        "required": ["alpha", "beta"],
        "properties": {
            "alpha": {"description": "Alphanumeric property", "type": "string", "pattern": "^[a-zA-Z0-9_]*$"},
            "beta": {"description": "Minimum value of beta is 10", "type": "number", "minimum": 10},
            "gamma": {"description": "Gamma is either foo, bar or baz", "type": "string", "enum": ["foo", "bar", "baz"]},
            "delta": {"description": "Delta is a string with a maximum length of 5 or a number with a minimum value of 0",
                      "anyOf": [{"type": "string", "maxLength": 5}, {"type": "number", "minimum": 0}]}
        }
    }));
    let base = json!({"apiVersion": "mygroup.example.com/v1beta1", "kind": "WishIHadChosenNoxu",
        "metadata": {"namespace": "not-the-default", "name": "foo"},
        "alpha": "foo_123", "beta": 10, "gamma": "bar", "delta": "hello"});
    assert!(s.validate(&base).is_empty());
    let with = |k: &str, v: Value| {
        let mut o = base.clone();
        o[k] = v;
        o
    };
    let cases = [
        (
            with("alpha", json!("foo_123!")),
            r#"alpha: Invalid value: "foo_123!": alpha in body should match '^[a-zA-Z0-9_]*$'"#,
        ),
        (
            with("beta", json!(5)),
            "beta: Invalid value: 5: beta in body should be greater than or equal to 10",
        ),
        (
            with("gamma", json!("qux")),
            r#"gamma: Unsupported value: "qux": supported values: "foo", "bar", "baz""#,
        ),
    ];
    for (obj, want) in cases {
        assert_eq!(errors(&s, &obj), BTreeSet::from([want.to_owned()]));
    }
    // anyOf reports the branch that matched most (upstream's MatchCount).
    assert_eq!(
        errors(&s, &with("delta", json!("hello world"))),
        BTreeSet::from([
            r#"<nil>: Invalid value: "": "delta" must validate at least one schema (anyOf)"#
                .to_owned(),
            "delta: Too long: may not be more than 5 bytes".to_owned(),
        ])
    );
    assert_eq!(
        errors(&s, &with("delta", json!(-1))),
        BTreeSet::from([
            r#"<nil>: Invalid value: "": "delta" must validate at least one schema (anyOf)"#
                .to_owned(),
            "delta: Invalid value: -1: delta in body should be greater than or equal to 0"
                .to_owned(),
        ])
    );
    let mut absent = base.clone();
    if let Some(m) = absent.as_object_mut() {
        m.remove("alpha");
        m.remove("beta");
    }
    assert_eq!(
        errors(&s, &absent),
        BTreeSet::from([
            "alpha: Required value".to_owned(),
            "beta: Required value".to_owned()
        ])
    );
}

/// `TestZeroValueDefaulting`-style round trip (integration `zeros`): zero
/// values and nulls survive prune, default and validate as upstream stores
/// them.
#[test]
fn upstream_zero_values_and_nulls() {
    let mut props = serde_json::Map::new();
    for (t, zero, items) in [
        ("string", json!(""), None),
        ("boolean", json!(false), None),
        ("number", json!(0.0), None),
        ("integer", json!(0), None),
        ("array", json!([]), Some(json!({"type": "string"}))),
        ("object", json!({}), None),
    ] {
        let mut plain = json!({"type": t});
        if let Some(items) = &items {
            plain["items"] = items.clone();
        }
        if t == "object" {
            plain["properties"] = json!({"a": {"type": "string"}});
        }
        let mut defaulted = plain.clone();
        defaulted["default"] = zero;
        let mut nullable = plain.clone();
        nullable["nullable"] = json!(true);
        props.insert(t.to_owned(), plain);
        props.insert(format!("{t}_default"), defaulted);
        props.insert(format!("{t}_null"), nullable);
    }
    let s = schema(json!({"type": "object", "properties": props}));
    let mut obj = json!({
        "apiVersion": "tests.example.com/v1", "kind": "Zero", "metadata": {"name": "myzero"},
        "string": "", "string_null": null, "boolean": false, "boolean_null": null,
        "number": 0, "number_null": null, "integer": 0, "integer_null": null,
        "array": [], "array_null": null, "object": {}, "object_null": null
    });
    assert!(s.prune(&mut obj).is_empty());
    s.default(&mut obj);
    assert!(s.validate(&obj).is_empty(), "{:?}", s.validate(&obj));
    assert_eq!(obj["string_default"], json!(""));
    assert_eq!(obj["number_default"], json!(0.0));
    assert_eq!(obj["array_default"], json!([]));
    assert_eq!(obj["object_default"], json!({}));
    assert_eq!(obj["object_null"], Value::Null);
}

#[test]
fn prune_reports_metadata_first_then_sorted_paths() {
    let s = schema(json!({"type": "object", "properties": {
        "spec": {"type": "object", "properties": {
            "template": {"type": "object", "x-kubernetes-embedded-resource": true,
                         "x-kubernetes-preserve-unknown-fields": true}}}}}));
    let mut obj = json!({"apiVersion": "a/v1", "kind": "K",
        "metadata": {"name": "x", "zzz": 1},
        "spec": {"b": 1, "a": 2, "template": {"apiVersion": "v1", "kind": "Pod",
                 "metadata": {"name": "p", "bogus": true}, "spec": {}}}});
    assert_eq!(
        s.prune(&mut obj),
        [
            "metadata.zzz",
            "spec.a",
            "spec.b",
            "spec.template.metadata.bogus"
        ]
    );
}

#[test]
fn nulls_are_pruned_unless_defaulted_then_defaulted() {
    let s = field(json!({"type": "object", "properties": {
        "a": {"type": "string"}, "b": {"type": "string", "default": "B"}}}));
    let mut obj = json!({"field": {"a": null, "b": null}});
    assert!(s.prune(&mut obj).is_empty());
    s.default(&mut obj);
    assert_eq!(obj, json!({"field": {"b": "B"}}));
}

#[test]
fn defaults_are_pruned_by_their_schema() {
    let s = field(json!({"type": "object", "default": {"a": 1, "unknown": 2},
        "properties": {"a": {"type": "integer"}}}));
    let mut obj = json!({});
    s.default(&mut obj);
    assert_eq!(obj, json!({"field": {"a": 1}}));
}

#[test]
fn formats_and_bounds_read_as_upstream() {
    let s = schema(json!({"type": "object", "properties": {
        "id": {"type": "string", "format": "uuid"},
        "n": {"type": "integer", "format": "int32", "minimum": 1, "maximum": 10, "exclusiveMaximum": true, "multipleOf": 3},
        "f": {"type": "number", "minimum": 0.5},
        "s": {"type": "string", "minLength": 2, "pattern": "^a+$"},
        "l": {"type": "array", "minItems": 2, "uniqueItems": true, "items": {"type": "integer"}},
        "o": {"type": "object", "minProperties": 1},
        "k": {"type": "string", "format": "kubernetes-name-that-is-unknown"}
    }}));
    let obj =
        json!({"id": "nope", "n": 10, "f": 0.25, "s": "b", "l": [1, 1], "o": {}, "k": "anything"});
    let want: BTreeSet<String> = [
        r#"id: Invalid value: "nope": id in body must be of type uuid: "nope""#,
        "n: Invalid value: 10: n in body should be a multiple of 3",
        "n: Invalid value: 10: n in body should be less than 10",
        "f: Invalid value: 0.25: f in body should be greater than or equal to 0.5",
        r#"s: Invalid value: "b": s in body should be at least 2 chars long"#,
        r#"l: Invalid value: "": l in body shouldn't contain duplicates"#,
        "o: Invalid value: 0: o in body should have at least 1 properties",
    ]
    .iter()
    .map(|s| (*s).to_owned())
    .collect();
    assert_eq!(errors(&s, &obj), want);
    let obj = json!({"s": "bb", "l": [1]});
    assert_eq!(
        errors(&s, &obj),
        BTreeSet::from([
            r#"s: Invalid value: "bb": s in body should match '^a+$'"#.to_owned(),
            "l: Invalid value: 1: l in body should have at least 2 items".to_owned(),
        ])
    );
}

#[test]
fn ratcheting_drops_errors_of_unchanged_values() {
    let s = schema(json!({"type": "object", "properties": {
        "a": {"type": "string", "maxLength": 2},
        "b": {"type": "string", "maxLength": 2},
        "m": {"type": "array", "x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["k"],
              "items": {"type": "object", "properties": {"k": {"type": "string"}, "v": {"type": "integer", "maximum": 1}}}}
    }}));
    let old = json!({"a": "toolong", "b": "ok", "m": [{"k": "x", "v": 5}, {"k": "y", "v": 0}]});
    assert_eq!(s.validate(&old).len(), 2);
    assert!(s.validate_update(&old, &old).is_empty());
    // A changed field is validated; an unchanged one ratchets, reordering a map list included.
    let new = json!({"a": "toolong", "b": "bad!", "m": [{"k": "y", "v": 0}, {"k": "x", "v": 5}]});
    let got: Vec<String> = s
        .validate_update(&new, &old)
        .iter()
        .map(ToString::to_string)
        .collect();
    assert_eq!(got, ["b: Too long: may not be more than 2 bytes"]);
    let new = json!({"a": "toolong", "b": "ok", "m": [{"k": "x", "v": 6}]});
    let got: Vec<String> = s
        .validate_update(&new, &old)
        .iter()
        .map(ToString::to_string)
        .collect();
    assert_eq!(
        got,
        ["m[0].v: Invalid value: 6: m[0].v in body should be less than or equal to 1"]
    );
}

#[test]
fn list_types_checked_on_update_only_if_old_was_clean() {
    let s = field(
        json!({"type": "array", "x-kubernetes-list-type": "set", "items": {"type": "string"}}),
    );
    let dup = json!({"field": ["a", "a"]});
    assert_eq!(
        errors(&s, &dup),
        BTreeSet::from([r#"field[1]: Duplicate value: "a""#.to_owned()])
    );
    assert!(s.validate_update(&dup, &dup).is_empty());
    assert_eq!(s.validate_update(&dup, &json!({"field": ["a"]})).len(), 1);
}

#[test]
fn bad_patterns_fail_validation_not_parsing() {
    let s = field(json!({"type": "string", "pattern": "+"}));
    let got = errors(&s, &json!({"field": "foo"}));
    assert_eq!(got.len(), 1);
    let first = got.iter().next().map(String::as_str).unwrap_or("");
    assert!(
        first.starts_with(r#"field: Invalid value: "foo": field in body should match '+, but pattern is invalid: error parsing regexp: "#),
        "{first}"
    );
}

#[test]
fn metadata_name_constraints_from_the_schema() {
    let s = schema(json!({"type": "object", "properties": {
        "metadata": {"type": "object", "properties": {
            "name": {"type": "string", "maxLength": 5, "pattern": "^[a-z]+$"},
            "generateName": {"type": "string", "maxLength": 3}}}}}));
    let mut obj = json!({"apiVersion": "g/v1", "kind": "K",
        "metadata": {"name": "abcdefg", "generateName": "abcd", "labels": {"x": "y"}}});
    assert!(
        s.prune(&mut obj).is_empty(),
        "labels stay: metadata is ObjectMeta"
    );
    assert_eq!(
        errors(&s, &obj),
        BTreeSet::from([
            "metadata.generateName: Too long: may not be more than 3 bytes".to_owned(),
            "metadata.name: Too long: may not be more than 5 bytes".to_owned(),
        ])
    );
    let ok = json!({"metadata": {"name": "abc"}});
    assert!(s.validate(&ok).is_empty());
    let bad = json!({"metadata": {"name": "ab1"}});
    assert_eq!(
        errors(&s, &bad),
        BTreeSet::from([
            r#"metadata.name: Invalid value: "ab1": metadata.name in body should match '^[a-z]+$'"#
                .to_owned()
        ])
    );
}

#[test]
fn structural_is_shareable() {
    fn assert_send_sync<T: Send + Sync + Clone>() {}
    assert_send_sync::<Structural>();
}

#[test]
fn deep_bodies_get_one_error() {
    let s = field(json!({"type": "object", "x-kubernetes-preserve-unknown-fields": true}));
    let mut deep = json!(1);
    for _ in 0..(super::MAX_BODY_DEPTH + 5) {
        deep = json!([deep]);
    }
    let obj = json!({"field": {"x": deep}});
    let got: Vec<String> = s.validate(&obj).iter().map(ToString::to_string).collect();
    assert_eq!(
        got,
        [r#"<nil>: Invalid value: "": nesting exceeds 512 levels"#]
    );
    assert_eq!(super::nesting_depth(&json!({"a": [[]]})), 3);
}

#[test]
fn status_updates_validate_status_only_with_relative_messages() {
    let s = schema(json!({"type": "object", "properties": {
        "spec": {"type": "object", "properties": {"n": {"type": "integer", "maximum": 1}}},
        "status": {"type": "object", "properties": {
            "phase": {"type": "string", "enum": ["A", "B"]},
            "count": {"type": "integer", "minimum": 0}}}}}));
    let old = json!({"spec": {"n": 5}, "status": {"phase": "A"}});
    let new = json!({"spec": {"n": 5}, "status": {"phase": "C", "count": -1}});
    let got: BTreeSet<String> = s
        .validate_status_update(&new, &old)
        .iter()
        .map(ToString::to_string)
        .collect();
    assert_eq!(
        got,
        BTreeSet::from([
            r#"status.phase: Unsupported value: "C": supported values: "A", "B""#.to_owned(),
            "status.count: Invalid value: -1: count in body should be greater than or equal to 0"
                .to_owned(),
        ])
    );
}

/// Arbitrary JSON, a few levels deep.
fn json_value() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::from),
        any::<i64>().prop_map(Value::from),
        (-1e6f64..1e6).prop_map(Value::from),
        "[a-z]{0,6}".prop_map(Value::from),
    ];
    leaf.prop_recursive(4, 32, 5, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..5).prop_map(Value::from),
            prop::collection::btree_map(
                "[a-z]{1,4}|spec|metadata|kind|apiVersion|items|type|properties",
                inner,
                0..5
            )
            .prop_map(|m| Value::Object(m.into_iter().collect())),
        ]
    })
}

/// A realistic schema exercising every keyword.
fn sample_schema() -> Structural {
    schema(json!({"type": "object", "properties": {
        "spec": {"type": "object", "required": ["a"], "properties": {
            "a": {"type": "string", "default": "x", "maxLength": 3, "pattern": "^[a-z]*$", "enum": ["x", "ab", "c"]},
            "n": {"type": "integer", "nullable": true, "minimum": 0, "maximum": 9, "default": 1},
            "f": {"type": "number", "multipleOf": 0.5},
            "io": {"x-kubernetes-int-or-string": true, "anyOf": [{"type": "integer"}, {"type": "string", "format": "duration"}]},
            "l": {"type": "array", "x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["k"], "maxItems": 3,
                  "items": {"type": "object", "required": ["k"], "properties": {"k": {"type": "string"}, "v": {"type": "integer", "default": 0}}}},
            "s": {"type": "array", "x-kubernetes-list-type": "set", "items": {"type": "string", "format": "ipv4"}},
            "m": {"type": "object", "additionalProperties": {"type": "object", "properties": {"x": {"type": "boolean", "default": true}}}},
            "free": {"type": "object", "x-kubernetes-preserve-unknown-fields": true, "properties": {"known": {"type": "string", "default": "k"}}},
            "t": {"type": "object", "x-kubernetes-embedded-resource": true, "x-kubernetes-preserve-unknown-fields": true},
            "one": {"type": "object", "oneOf": [{"required": ["p"]}, {"required": ["q"]}], "not": {"required": ["r"]},
                    "properties": {"p": {"type": "string"}, "q": {"type": "string"}, "r": {"type": "string"}}}
        }},
        "status": {"type": "object", "x-kubernetes-preserve-unknown-fields": true}
    }}))
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    /// Any schema text parses or fails; never panics.
    #[test]
    fn parse_never_panics(v in json_value()) {
        let _ = Structural::parse(&v);
    }

    /// Any body: prune, default, validate never panic; prune and default are
    /// idempotent; validating twice gives the same answer.
    #[test]
    fn pipeline_properties(spec in json_value(), extra in json_value()) {
        let s = sample_schema();
        let mut obj = json!({"apiVersion": "g/v1", "kind": "K", "metadata": {"name": "n"}, "spec": spec, "extra": extra});
        let _ = s.prune(&mut obj);
        s.default(&mut obj);
        let pruned_once = obj.clone();
        prop_assert!(s.prune(&mut obj).is_empty(), "prune twice reports nothing");
        prop_assert_eq!(&obj, &pruned_once);
        s.default(&mut obj);
        prop_assert_eq!(&obj, &pruned_once, "default is idempotent");
        let first = s.validate(&obj);
        prop_assert_eq!(&first, &s.validate(&obj));
        let _ = s.validate_update(&obj, &pruned_once);
        // Ratcheting only ever removes errors (values it cannot correlate,
        // such as a null item of a map list, keep theirs, as upstream).
        let ratcheted = s.validate_update(&obj, &obj);
        prop_assert!(ratcheted.iter().all(|c| first.contains(c)), "{:?} vs {:?}", ratcheted, first);
    }

    /// Arbitrary schemas against arbitrary bodies never panic.
    #[test]
    fn arbitrary_schemas_never_panic(schema in json_value(), body in json_value()) {
        if let Ok(s) = Structural::parse(&schema) {
            let mut b = body.clone();
            let _ = s.prune(&mut b);
            s.default(&mut b);
            let _ = s.validate(&b);
            let _ = s.validate_update(&b, &body);
        }
    }
}
