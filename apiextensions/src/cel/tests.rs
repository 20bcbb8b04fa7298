//! Tests of compile and validate, many from upstream's validation_test.go
//! tables (facts: rules, data, expected paths and messages).

use serde_json::{Value, json};

use super::*;
use skein_admission::Cause;

fn obj(props: Value, rules: Value) -> Value {
    json!({"type": "object", "properties": props, "x-kubernetes-validations": rules})
}

fn messages(rules: &Rules, new: &Value, old: Option<&Value>) -> Vec<String> {
    rules
        .validate(new, old)
        .iter()
        .map(ToString::to_string)
        .collect()
}

#[test]
fn a_failed_rule_names_the_node_and_the_rule() {
    let schema = json!({"type": "object", "properties": {"spec": obj(
        json!({"x": {"type": "integer"}}),
        json!([{"rule": "self.x > 0"}])
    )}});
    let rules = compile(&schema, "spec.versions[0].schema.openAPIV3Schema").unwrap();
    assert!(!rules.is_empty());
    assert!(messages(&rules, &json!({"spec": {"x": 1}}), None).is_empty());
    assert_eq!(
        messages(&rules, &json!({"spec": {"x": 0}}), None),
        ["spec: Invalid value: \"object\": failed rule: self.x > 0"]
    );
}

fn with_rule(mut schema: Value, rule: Value) -> Value {
    if let Some(m) = schema.as_object_mut() {
        m.insert("x-kubernetes-validations".into(), json!([rule]));
    }
    schema
}

fn str_object() -> Value {
    json!({"type": "object", "properties": {"str": {"type": "string"}}})
}

/// Upstream's TestMessageExpression (facts): the message shown for the
/// always-failing rule `false`.
#[test]
fn message_expressions() {
    let cases: [(&str, &str, &str); 7] = [
        ("", r#""static string""#, "static string"),
        (
            "invisible",
            r#""this is messageExpression""#,
            "this is messageExpression",
        ),
        ("", r#""str1 " + self.str"#, "str1 a string"),
        (
            "message not messageExpression",
            r#""str1 " + ["a", "b", "c", "d"][4]"#,
            "message not messageExpression",
        ),
        (
            "",
            r#""str1 " + ["a", "b", "c", "d"][4]"#,
            "failed rule: false",
        ),
        (
            "message not messageExpression",
            "\"str with \\na newline\"",
            "message not messageExpression",
        ),
        (
            "message not messageExpression",
            r#"string("     ")"#,
            "message not messageExpression",
        ),
    ];
    for (message, expression, want) in cases {
        let mut rule = json!({"rule": "false", "messageExpression": expression});
        if !message.is_empty() {
            rule["message"] = json!(message);
        }
        let schema =
            json!({"type": "object", "properties": {"root": with_rule(str_object(), rule)}});
        let rules = compile(&schema, "s").unwrap();
        let got = messages(&rules, &json!({"root": {"str": "a string"}}), None);
        assert_eq!(got.len(), 1, "{expression}");
        assert!(got[0].contains(want), "{expression}: {got:?}");
    }
    // Upstream's validator falls back to the default message for a
    // messageExpression that is not a string; the CRD is refused first.
    let schema = with_rule(
        str_object(),
        json!({"rule": "false", "messageExpression": "true"}),
    );
    let Err(causes) = compile(&schema, "s") else {
        panic!("compiled");
    };
    assert!(
        causes[0]
            .to_string()
            .ends_with(": messageExpression must evaluate to a string")
    );
    let long = format!("\"{}\"", "a".repeat(5121));
    let schema = with_rule(
        str_object(),
        json!({"rule": "false", "message": "m", "messageExpression": long}),
    );
    assert_eq!(
        messages(&compile(&schema, "s").unwrap(), &json!({}), None),
        ["<nil>: Invalid value: \"object\": m"]
    );
}

/// Upstream's TestReasonAndFldPath (facts): reasons pick the error type,
/// `fieldPath` is appended to the node's path.
#[test]
fn reasons_and_field_paths() {
    let schema = json!({"type": "object", "properties": {
        "f": {"type": "object", "properties": {"m": {"type": "integer"}},
              "x-kubernetes-validations": [{"rule": "self.m == 2", "reason": "FieldValueForbidden", "fieldPath": ".m"}]},
        "field1": {"type": "string"}, "field2": {"type": "string"}, "field3": {"type": "string"}
    }, "x-kubernetes-validations": [
        {"rule": "self.field2 != \"value2\"", "reason": "FieldValueDuplicate", "fieldPath": ".field2"},
        {"rule": "self.field3 != \"value3\"", "reason": "FieldValueRequired", "fieldPath": ".field3"},
        {"rule": "self.field1 != \"value1\"", "reason": "FieldValueForbidden", "fieldPath": ".field1"}
    ]});
    let rules = compile(&schema, "s").unwrap();
    let causes = rules.validate(
        &json!({"f": {"m": 1}, "field1": "value1", "field2": "value2", "field3": "value3"}),
        None,
    );
    let got: Vec<(String, String)> = causes
        .iter()
        .map(|c| (c.field.clone(), c.reason.clone()))
        .collect();
    assert_eq!(
        got,
        [
            ("field2".to_owned(), "FieldValueDuplicate".to_owned()),
            ("field3".to_owned(), "FieldValueRequired".to_owned()),
            ("field1".to_owned(), "FieldValueForbidden".to_owned()),
            ("f.m".to_owned(), "FieldValueForbidden".to_owned()),
        ]
    );
    assert_eq!(causes[0].to_string(), "field2: Duplicate value: \"object\"");
    assert_eq!(
        causes[1].to_string(),
        "field3: Required value: failed rule: self.field3 != \"value3\""
    );
    assert_eq!(
        causes[3].to_string(),
        "f.m: Forbidden: failed rule: self.m == 2"
    );
}

#[test]
fn paths_through_maps_and_lists() {
    let item = json!({"type": "object", "properties": {"name": {"type": "string"}, "port": {"type": "integer"}},
        "x-kubernetes-validations": [{"rule": "self.port > 0", "message": "port must be positive"}]});
    let schema = json!({"type": "object", "properties": {"spec": {"type": "object", "properties": {
        "ports": {"type": "array", "items": item},
        "byName": {"type": "object", "additionalProperties": item},
    }}}});
    let rules = compile(&schema, "s").unwrap();
    let got = messages(
        &rules,
        &json!({"spec": {"ports": [{"name": "a", "port": 1}, {"name": "b", "port": 0}], "byName": {"x": {"port": -1}}}}),
        None,
    );
    assert_eq!(
        got,
        [
            "spec.byName[x]: Invalid value: \"object\": port must be positive",
            "spec.ports[1]: Invalid value: \"object\": port must be positive",
        ]
    );
}

#[test]
fn runtime_errors_read_as_upstream() {
    let schema = with_rule(
        json!({"type": "object", "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}}}),
        json!({"rule": "self.a > self.b"}),
    );
    let rules = compile(&schema, "s").unwrap();
    assert_eq!(
        messages(&rules, &json!({"a": 1}), None),
        ["<nil>: Invalid value: \"object\": no such key: b evaluating rule: self.a > self.b"]
    );
    let ios = with_rule(
        json!({"type": "object", "properties": {"v": {"x-kubernetes-int-or-string": true}}}),
        json!({"rule": "self.v > 1", "message": "too small"}),
    );
    let rules = compile(&ios, "s").unwrap();
    assert_eq!(
        messages(&rules, &json!({"v": "x"}), None),
        [
            "<nil>: Invalid value: \"object\": 'no such overload': call arguments did not match a supported operator, function or macro signature for rule: too small"
        ]
    );
}

#[test]
fn compile_errors_name_the_rule_as_upstream() {
    let prefix = "spec.versions[0].schema.openAPIV3Schema";
    let schema = json!({"type": "object", "properties": {"spec": {"type": "object",
        "properties": {"x": {"type": "integer"}},
        "x-kubernetes-validations": [{"rule": "self.x >"}]}}});
    let Err(causes) = compile(&schema, prefix) else {
        panic!("compiled");
    };
    assert_eq!(causes.len(), 1);
    let text = causes[0].to_string();
    assert!(
        text.starts_with(
            "spec.versions[0].schema.openAPIV3Schema.properties[spec].x-kubernetes-validations[0].rule: Invalid value: apiextensions.ValidationRule{Rule:\"self.x >\", Message:\"\", MessageExpression:\"\", Reason:(*apiextensions.FieldValueErrorReason)(nil), FieldPath:\"\", OptionalOldSelf:(*bool)(nil)}: compilation failed: ERROR: <input>:1:9: Syntax error: mismatched input '<EOF>' expecting"
        ),
        "{text}"
    );
    assert!(text.ends_with("\n | self.x >\n | ........^"), "{text}");

    let bad = |rule: Value| -> Vec<String> {
        let schema = json!({"type": "object", "properties": {
            "l": {"type": "array", "items": {"type": "object", "properties": {"x": {"type": "integer"}}, "x-kubernetes-validations": [rule.clone()]}},
            "o": {"type": "object", "properties": {"x": {"type": "integer"}}, "x-kubernetes-validations": [rule]}
        }});
        match compile(&schema, "p") {
            Ok(_) => Vec::new(),
            Err(causes) => causes.iter().map(ToString::to_string).collect(),
        }
    };
    assert_eq!(
        bad(json!({"rule": "  "})),
        [
            "p.properties[l].items.x-kubernetes-validations[0].rule: Required value: rule is not specified",
            "p.properties[o].x-kubernetes-validations[0].rule: Required value: rule is not specified",
        ]
    );
    assert_eq!(
        bad(json!({"rule": "self.x > 0", "reason": "Bogus"}))[1],
        "p.properties[o].x-kubernetes-validations[0].reason: Unsupported value: \"Bogus\": supported values: \"FieldValueDuplicate\", \"FieldValueForbidden\", \"FieldValueInvalid\", \"FieldValueRequired\""
    );
    assert_eq!(
        bad(json!({"rule": "self.x > 0", "fieldPath": ".y"}))[1],
        "p.properties[o].x-kubernetes-validations[0].fieldPath: Invalid value: \".y\": fieldPath must be a valid path"
    );
    assert_eq!(
        bad(json!({"rule": "self.x > 0", "message": "a\nb"}))[1],
        "p.properties[o].x-kubernetes-validations[0].message: Invalid value: \"a\\nb\": message must not contain line breaks"
    );
    assert_eq!(
        bad(json!({"rule": "self.x >\n 0"}))[1],
        "p.properties[o].x-kubernetes-validations[0].message: Required value: message must be specified if rule contains line breaks"
    );
    assert_eq!(
        bad(json!({"rule": "self.x == oldSelf.x"})),
        [
            "p.properties[l].items.x-kubernetes-validations[0].rule: Invalid value: \"self.x == oldSelf.x\": oldSelf cannot be used on the uncorrelatable portion of the schema within p.properties[l]"
        ]
    );
    assert_eq!(
        bad(json!({"rule": "self.x > 0", "optionalOldSelf": true}))[1],
        "p.properties[o].x-kubernetes-validations[0].optionalOldSelf: Invalid value: true: may not be set if oldSelf is not used in rule"
    );
    let msg = bad(json!({"rule": "self.x > 0", "messageExpression": "'a' +"}));
    assert!(
        msg[1].contains(
            "messageExpression: Invalid value: apiextensions.ValidationRule{Rule:\"self.x > 0\""
        ),
        "{msg:?}"
    );
    assert!(
        msg[1]
            .contains(": messageExpression compilation failed: ERROR: <input>:1:6: Syntax error:"),
        "{msg:?}"
    );
    assert_eq!(
        bad(json!({"rule": "self.y > 0"}))[1],
        "p.properties[o].x-kubernetes-validations[0].rule: Invalid value: apiextensions.ValidationRule{Rule:\"self.y > 0\", Message:\"\", MessageExpression:\"\", Reason:(*apiextensions.FieldValueErrorReason)(nil), FieldPath:\"\", OptionalOldSelf:(*bool)(nil)}: compilation failed: ERROR: <input>:1:5: undefined field 'y'\n | self.y > 0\n | ....^"
    );
    assert!(bad(json!({"rule": "1"}))[1].ends_with(": cel expression must evaluate to a bool"));
    // A map list's items correlate: oldSelf is allowed there.
    let schema = json!({"type": "array", "x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["k"],
        "items": {"type": "object", "properties": {"k": {"type": "string"}},
        "x-kubernetes-validations": [{"rule": "self.k == oldSelf.k"}]}});
    assert!(compile(&schema, "p").is_ok());
}

/// Transition rules see the correlated old value: object fields, map
/// entries, map-list items by key; elsewhere they are skipped.
#[test]
fn transition_rules_correlate_as_upstream() {
    let immutable = json!([{"rule": "self == oldSelf", "message": "is immutable"}]);
    let schema = json!({"type": "object", "properties": {
        "name": {"type": "string", "x-kubernetes-validations": immutable},
        "items": {"type": "array", "x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["k"],
            "items": {"type": "object", "properties": {"k": {"type": "string"}, "v": {"type": "string", "x-kubernetes-validations": immutable}}}},
        "labels": {"type": "object", "additionalProperties": {"type": "string", "x-kubernetes-validations": immutable}}
    }});
    let rules = compile(&schema, "s").unwrap();
    let old = json!({"name": "a", "items": [{"k": "x", "v": "1"}, {"k": "y", "v": "2"}], "labels": {"l": "1"}});
    let new = json!({"name": "b", "items": [{"k": "y", "v": "2"}, {"k": "x", "v": "9"}, {"k": "z", "v": "3"}], "labels": {"l": "2", "m": "3"}});
    assert_eq!(
        messages(&rules, &new, Some(&old)),
        [
            "items[1].v: Invalid value: \"string\": is immutable",
            "labels[l]: Invalid value: \"string\": is immutable",
            "name: Invalid value: \"string\": is immutable",
        ]
    );
    assert!(messages(&rules, &new, None).is_empty());
}

/// Upstream's TestRatcheting (facts): failures on unchanged values are
/// warnings on update; transition rules are never ratcheted.
#[test]
fn ratcheting() {
    let schema = json!({"type": "object", "properties": {
        "foo": {"type": "string", "x-kubernetes-validations": [{"rule": "self == \"bar\"", "message": "gotta be baz"}]},
        "stringField": {"type": "string"},
        "setArray": {"type": "array", "x-kubernetes-list-type": "set",
            "items": {"type": "number", "x-kubernetes-validations": [{"rule": "int(self) % 2 == 1", "message": "gotta be odd"}]}}
    }});
    let rules = compile(&schema, "s").unwrap();
    let old = json!({"foo": "baz", "stringField": "foo", "setArray": [1, 3, 2]});
    let new = json!({"foo": "baz", "stringField": "changed but ratcheted", "setArray": [1, 3, 2]});
    let outcome = rules.validate_with_warnings(&new, Some(&old));
    assert!(outcome.causes.is_empty(), "{:?}", outcome.causes);
    assert_eq!(
        outcome.warnings,
        [
            "foo: Invalid value: \"string\": gotta be baz",
            "setArray[2]: Invalid value: \"number\": gotta be odd",
        ]
    );
    let changed = json!({"foo": "qux", "setArray": [1, 3, 4]});
    assert_eq!(
        messages(&rules, &changed, Some(&old)),
        [
            "foo: Invalid value: \"string\": gotta be baz",
            "setArray[2]: Invalid value: \"number\": gotta be odd",
        ]
    );
    // On create nothing is ratcheted.
    assert_eq!(messages(&rules, &new, None).len(), 2);
}

/// Upstream's TestOptionalOldSelf (facts).
#[test]
fn optional_old_self() {
    let rules_for = |rule: &str| {
        compile(
            &with_rule(
                json!({"type": "object", "properties": {"foo": {"type": "string"}}}),
                json!({"rule": rule, "optionalOldSelf": true}),
            ),
            "s",
        )
        .unwrap()
    };
    let r = rules_for("self.foo == 'not bar' || !oldSelf.hasValue()");
    assert!(messages(&r, &json!({"foo": "bar"}), None).is_empty());
    let r = rules_for("self.foo == 'valid' || !oldSelf.hasValue()");
    assert_eq!(
        messages(&r, &json!({"foo": "invalid"}), Some(&json!({"foo": "bar"}))).len(),
        1
    );
    let r =
        rules_for("self.foo == 'valid' || (oldSelf.hasValue() && oldSelf.value().foo != 'valid')");
    assert!(
        messages(
            &r,
            &json!({"foo": "invalid again"}),
            Some(&json!({"foo": "invalid"}))
        )
        .is_empty()
    );
    assert_eq!(
        messages(
            &r,
            &json!({"foo": "invalid"}),
            Some(&json!({"foo": "valid"}))
        )
        .len(),
        1
    );
    let r = rules_for("self.foo == 'valid' || oldSelf.foo.orValue('') != 'valid'");
    assert!(
        messages(
            &r,
            &json!({"foo": "invalid again"}),
            Some(&json!({"foo": "invalid"}))
        )
        .is_empty()
    );
}

/// Upstream's "allOf rule" case (TestValidationExpressionsAtSchemaLevels):
/// rules of `allOf` entries apply to the node's value; `anyOf` ones are
/// ignored.
#[test]
fn all_of_rules() {
    let schema = json!({"type": "object", "properties": {"key": {"type": "string"}, "key2": {"type": "string"}},
        "allOf": [
            {"x-kubernetes-validations": [{"rule": "self.key == 'value' && self.key2 == 'value2'", "message": "key must be 'value' and key2 must be 'value2'"}]},
            {"x-kubernetes-validations": [{"rule": "self.key != self.key2", "message": "key must not be equal to key2"}]}
        ],
        "anyOf": [{"x-kubernetes-validations": [{"rule": "false"}]}]});
    let rules = compile(&schema, "s").unwrap();
    assert_eq!(
        messages(&rules, &json!({"key": "value", "key2": "value"}), None),
        [
            "<nil>: Invalid value: \"\": key must be 'value' and key2 must be 'value2'",
            "<nil>: Invalid value: \"\": key must not be equal to key2",
        ]
    );
    let bad =
        json!({"type": "object", "allOf": [{"x-kubernetes-validations": [{"rule": "self >"}]}]});
    let Err(causes) = compile(&bad, "s") else {
        panic!("compiled");
    };
    assert_eq!(
        causes[0].field,
        "s.allOf[0].x-kubernetes-validations[0].rule"
    );
}

#[test]
fn blocking_schema_errors_skip_the_rules() {
    assert_eq!(
        blocking_cause(&[Cause::invalid("spec.x", &json!(1), "bad")]),
        None
    );
    let cause = blocking_cause(&[Cause::required("spec.x", "")]).unwrap();
    assert_eq!(
        cause.to_string(),
        "<nil>: Invalid value: \"null\": some validation rules were not checked because the object was invalid; correct the existing errors to complete validation"
    );
}

#[test]
fn rules_are_shareable_and_empty_schemas_have_none() {
    fn shareable<T: Send + Sync>() {}
    shareable::<Rules>();
    let rules = compile(
        &json!({"type": "object", "properties": {"a": {"type": "string"}}}),
        "s",
    )
    .unwrap();
    assert!(rules.is_empty());
    assert!(rules.validate(&json!({"a": "x"}), None).is_empty());
}

mod never_panics {
    use proptest::prelude::*;
    use serde_json::{Value, json};

    use super::super::compile;

    fn json_value() -> impl Strategy<Value = Value> {
        let leaf = prop_oneof![
            Just(Value::Null),
            any::<bool>().prop_map(Value::from),
            any::<i64>().prop_map(Value::from),
            any::<f64>()
                .prop_filter("finite", |f| f.is_finite())
                .prop_map(Value::from),
            "[a-z0-9%./: -]{0,8}".prop_map(Value::from),
        ];
        leaf.prop_recursive(4, 24, 4, |inner| {
            prop_oneof![
                prop::collection::vec(inner.clone(), 0..4).prop_map(Value::from),
                prop::collection::btree_map("[a-z]{1,3}", inner, 0..4)
                    .prop_map(|m| Value::Object(m.into_iter().collect())),
            ]
        })
    }

    const RULES: [&str; 12] = [
        "self.a > 0",
        "has(self.b) && self.b.startsWith('x')",
        "self.l.all(x, x.matches('^[a-z]+$'))",
        "size(self.m) < 3 && self.m.exists(k, self.m[k] == 'v')",
        "quantity(self.q).isLessThan(quantity('1Gi'))",
        "self.a / (self.a - self.a) == 1",
        "url(self.b).getHost() != ''",
        "cidr(self.b).containsIP(self.b)",
        "self.l.sum() == self.l.max()",
        "self == oldSelf",
        "self.?b.orValue('') == 'x'",
        "format.dns1123Label().validate(self.b).hasValue()",
    ];

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(128))]

        /// Any data, any rule text: compile and validate return, never
        /// panic.
        #[test]
        fn on_any_data(new in json_value(), old in json_value(), which in 0..RULES.len(), noise in "[ -~]{0,24}") {
            let schema = json!({"type": "object", "properties": {
                "a": {"type": "integer"}, "b": {"type": "string"}, "q": {"type": "string"},
                "l": {"type": "array", "items": {"type": "string"}},
                "m": {"type": "object", "additionalProperties": {"type": "string"}}
            }, "x-kubernetes-validations": [{"rule": RULES[which]}, {"rule": noise}]});
            if let Ok(rules) = compile(&schema, "s") {
                let _ = rules.validate(&new, Some(&old));
                let _ = rules.validate(&new, None);
            }
            let schema = json!({"type": "object", "properties": {
                "a": {"type": "integer"}, "b": {"type": "string"}, "q": {"type": "string"},
                "l": {"type": "array", "items": {"type": "string"}},
                "m": {"type": "object", "additionalProperties": {"type": "string"}}
            }, "x-kubernetes-validations": [{"rule": RULES[which]}]});
            let rules = compile(&schema, "s").ok();
            prop_assert!(rules.is_some());
            if let Some(rules) = rules {
                let _ = rules.validate(&new, Some(&old));
                let _ = rules.validate(&new, None);
            }
        }

        /// Any schema (as JSON): compiling never panics.
        #[test]
        fn on_any_schema(schema in json_value(), data in json_value()) {
            if let Ok(rules) = compile(&schema, "s") {
                let _ = rules.validate(&data, None);
            }
        }
    }

    #[test]
    fn deep_rules_and_data_are_refused_or_evaluated() {
        let deep = format!("{}true{}", "(".repeat(500), ")".repeat(500));
        let schema = json!({"type": "object", "x-kubernetes-validations": [{"rule": deep}]});
        assert!(compile(&schema, "s").is_err());
        let mut data = json!(1);
        for _ in 0..100 {
            data = json!({"x": data});
        }
        let schema = json!({"type": "object", "x-kubernetes-preserve-unknown-fields": true,
            "x-kubernetes-validations": [{"rule": "self == self"}]});
        let rules = compile(&schema, "s").unwrap();
        assert!(rules.validate(&data, None).is_empty());
    }
}

/// The benchmark's shape (`hack/bench` `custom.rs`): a 1 KiB custom
/// resource, ten rules on `spec`. Run with `--ignored --nocapture` (in
/// release) to print the cost of one validation and of each rule alone.
#[test]
#[ignore = "timing, not a check"]
fn timing_ten_rules() {
    const RULES: [&str; 10] = [
        "self.replicas >= 0",
        "self.minReplicas <= self.maxReplicas",
        "self.replicas <= self.maxReplicas",
        "self.image.size() > 0",
        "!self.image.startsWith('http')",
        "!has(self.ports) || self.ports.all(p, p > 0 && p < 65536)",
        "self.tier in ['web', 'db', 'cache']",
        "!self.paused || self.replicas == 0",
        "!has(self.owner) || self.owner.matches('^[a-z][a-z0-9-]*$')",
        "!has(self.note) || self.note.size() <= 2048",
    ];
    let schema_with = |rules: &[&str]| {
        let rules: Vec<Value> = rules
            .iter()
            .map(|r| json!({"rule": r, "message": "m"}))
            .collect();
        json!({"type": "object", "properties": {"spec": {"type": "object",
        "x-kubernetes-validations": rules,
        "properties": {
            "image": {"type": "string"}, "replicas": {"type": "integer"},
            "minReplicas": {"type": "integer"}, "maxReplicas": {"type": "integer"},
            "tier": {"type": "string"}, "paused": {"type": "boolean"},
            "ports": {"type": "array", "items": {"type": "integer"}},
            "owner": {"type": "string"}, "note": {"type": "string"}
        }}}})
    };
    let obj = json!({"apiVersion": "bench.skein.io/v1", "kind": "BenchWidget",
        "metadata": {"name": "c-0000000001", "namespace": "ns", "labels": {"app": "bench"}},
        "spec": {"image": "registry.example/bench:1.0", "replicas": 3, "minReplicas": 1,
            "maxReplicas": 5, "ports": [80, 443], "owner": "bench", "note": "n".repeat(700),
            "tier": "web", "paused": false}});
    let n = 20_000;
    let time = |rules: &Rules| {
        let start = std::time::Instant::now();
        for _ in 0..n {
            assert!(rules.validate(&obj, None).is_empty());
        }
        start.elapsed() / n
    };
    let all = compile(&schema_with(&RULES), "s").unwrap();
    println!("one validation with 10 rules: {:?}", time(&all));
    for rule in RULES {
        let one = compile(&schema_with(&[rule]), "s").unwrap();
        println!("{rule}: {:?}", time(&one));
    }
}

/// Compiles every schema in `$CEL_SCHEMAS_DIR` (JSON `openAPIV3Schema`s
/// extracted from CRD manifests) and prints the errors.
#[test]
#[ignore = "needs CEL_SCHEMAS_DIR"]
fn real_schemas_compile() {
    let Ok(dir) = std::env::var("CEL_SCHEMAS_DIR") else {
        return;
    };
    let mut failed = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        let schema: Value = serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
        if let Err(causes) = compile(&schema, "openAPIV3Schema") {
            failed.push(format!("{}: {causes:#?}", path.display()));
        }
    }
    assert!(failed.is_empty(), "{}", failed.join("\n"));
}

/// Validates `$CEL_PAIRS_DIR/N.obj.json` against `N.schema.json` (valid
/// examples shipped with real CRDs) and prints what fails.
#[test]
#[ignore = "needs CEL_PAIRS_DIR"]
fn real_examples_validate() {
    let Ok(dir) = std::env::var("CEL_PAIRS_DIR") else {
        return;
    };
    let mut failed = Vec::new();
    for n in 0.. {
        let read = |suffix: &str| -> Option<Value> {
            let bytes = std::fs::read(format!("{dir}/{n}.{suffix}.json")).ok()?;
            serde_json::from_slice(&bytes).ok()
        };
        let (Some(schema), Some(mut obj)) = (read("schema"), read("obj")) else {
            break;
        };
        // As the registry does before validation.
        if let Ok(structural) = crate::schema::Structural::parse(&schema) {
            structural.default(&mut obj);
        }
        let rules = compile(&schema, "openAPIV3Schema").unwrap();
        for cause in rules.validate(&obj, None) {
            failed.push(format!("{n} {}: {cause}", obj["metadata"]["name"]));
        }
    }
    assert!(failed.is_empty(), "{}", failed.join("\n"));
}
