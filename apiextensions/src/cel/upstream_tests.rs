//! Cases from upstream's `TestValidationExpressions`
//! (apiextensions-apiserver `pkg/apiserver/schema/cel/validation_test.go`,
//! v1.33): the data, the schema, rules that must hold and rules that must
//! fail with a given text. Facts, not code: the tables are rewritten as
//! JSON. Each rule sits alone at the root of the schema.

use serde_json::{Value, json};

use super::compile;

const INT: &str = r#"{"type": "integer"}"#;
const NUM: &str = r#"{"type": "number"}"#;
const STR: &str = r#"{"type": "string"}"#;

fn t(s: &str) -> Value {
    serde_json::from_str(s).unwrap_or(Value::Null)
}

/// `{"val1": a, "val2": b, ...}`.
fn objs(vals: &[Value]) -> Value {
    let mut m = serde_json::Map::new();
    for (i, v) in vals.iter().enumerate() {
        m.insert(format!("val{}", i + 1), v.clone());
    }
    Value::Object(m)
}

/// An object schema with properties `val1`, `val2`, ... of `types`.
fn schemas(types: &[Value]) -> Value {
    let mut m = serde_json::Map::new();
    for (i, v) in types.iter().enumerate() {
        m.insert(format!("val{}", i + 1), v.clone());
    }
    json!({"type": "object", "properties": m})
}

fn object(props: Value) -> Value {
    json!({"type": "object", "properties": props})
}

fn list(items: Value) -> Value {
    json!({"type": "array", "items": items})
}

/// Upstream's `ValsEqualThemselvesAndDataLiteral`.
fn vals_equal(a: &str, b: &str, lit: &str) -> String {
    format!("{a} == {lit} && {lit} == {a} && {a} == {b}")
}

/// Runs one table: every `valid` rule holds on `obj`, every `errors` rule
/// fails (to compile, or when evaluated) with a text containing its
/// expectation. Failures are collected, then reported together.
fn table(
    name: &str,
    schema: &Value,
    obj: &Value,
    old: Option<&Value>,
    valid: &[&str],
    errors: &[(&str, &str)],
) {
    let mut failures = Vec::new();
    let with_rule = |rule: &str| {
        let mut s = schema.clone();
        if let Some(m) = s.as_object_mut() {
            m.insert("x-kubernetes-validations".into(), json!([{"rule": rule}]));
        }
        s
    };
    for rule in valid {
        match compile(&with_rule(rule), "openAPIV3Schema") {
            Err(causes) => failures.push(format!("{rule}: compile: {causes:?}")),
            Ok(rules) => {
                let causes = rules.validate(obj, old);
                if !causes.is_empty() {
                    failures.push(format!("{rule}: {}", causes[0]));
                }
            }
        }
    }
    for (rule, want) in errors {
        let got: Vec<String> = match compile(&with_rule(rule), "openAPIV3Schema") {
            Err(causes) => causes.iter().map(ToString::to_string).collect(),
            Ok(rules) => rules
                .validate(obj, old)
                .iter()
                .map(ToString::to_string)
                .collect(),
        };
        if got.is_empty() || !got.iter().all(|g| g.contains(want)) {
            failures.push(format!("{rule}: want {want:?}, got {got:?}"));
        }
    }
    assert!(failures.is_empty(), "{name}:\n{}", failures.join("\n"));
}

#[test]
fn integers() {
    let max = i64::MAX;
    table(
        "integers",
        &schemas(&[t(INT), t(INT), t(INT), t(INT)]),
        &objs(&[json!(max), json!(max), json!(i32::MAX), json!(i32::MAX)]),
        None,
        &[
            &vals_equal("self.val1", "self.val2", &max.to_string()),
            &vals_equal("self.val3", "self.val4", &i32::MAX.to_string()),
            "type(self.val1) == int",
            &format!("self.val3 + 1 == {} + 1", i32::MAX),
        ],
        &[
            ("self.val1 + 1 == 0", "integer overflow"),
            ("1 / 0 == 1 / 0", "division by zero"),
            (
                "self.val1 == 'a'",
                "found no matching overload for '_==_' applied to '(int, string)'",
            ),
            (
                "self.val1 < 'a'",
                "found no matching overload for '_<_' applied to '(int, string)'",
            ),
        ],
    );
}

#[test]
fn numbers() {
    table(
        "numbers",
        &schemas(&[t(NUM), t(NUM), t(NUM)]),
        &objs(&[json!(f64::MAX), json!(f64::MAX), json!(1)]),
        None,
        &[
            "self.val1 == self.val2",
            "type(self.val1) == double",
            "type(self.val3) == double",
            "self.val3 == 1.0",
        ],
        &[],
    );
}

#[test]
fn numeric_comparisons() {
    table(
        "numeric comparisons",
        &schemas(&[t(INT), t(INT), t(INT), t(NUM), t(NUM)]),
        &objs(&[json!(5), json!(10), json!(15), json!(10.0), json!(10)]),
        None,
        &[
            "double(self.val1) < self.val4",
            "double(self.val2) == self.val4",
            "self.val1 < int(self.val4)",
            "self.val2 == int(self.val5)",
            "self.val1 < self.val4",
            "self.val3 > self.val5",
            "self.val1 < 10.0",
            "5 < 10.0",
        ],
        &[],
    );
}

#[test]
fn unicode_strings() {
    table(
        "unicode strings",
        &schemas(&[t(STR), t(STR)]),
        &objs(&[json!("Rook takes 👑"), json!("Rook takes 👑")]),
        None,
        &[
            &vals_equal("self.val1", "self.val2", "'Rook takes 👑'"),
            "self.val1.startsWith('Rook')",
            "!self.val1.startsWith('knight')",
            "self.val1.contains('takes')",
            "self.val1.endsWith('👑')",
            "self.val1.matches('^[^0-9]*$')",
            "!self.val1.matches('^[0-9]*$')",
            "type(self.val1) == string",
            "size(self.val1) == 12",
            "self.val1.charAt(3) == 'k'",
            "self.val1.indexOf('o') == 1",
            "self.val1.indexOf('o', 2) == 2",
            "self.val1.replace(' ', 'x') == 'Rookxtakesx👑'",
            "self.val1.replace(' ', 'x', 1) == 'Rookxtakes 👑'",
            "self.val1.split(' ') == ['Rook', 'takes', '👑']",
            "self.val1.split(' ', 2) == ['Rook', 'takes 👑']",
            "self.val1.substring(5) == 'takes 👑'",
            "self.val1.substring(0, 4) == 'Rook'",
            "self.val1.substring(4, 10).trim() == 'takes'",
            "self.val1.upperAscii() == 'ROOK TAKES 👑'",
            "self.val1.lowerAscii() == 'rook takes 👑'",
        ],
        &[(
            "self.val1.matches(')')",
            "compilation failed: ERROR: <input>:1:19: invalid matches argument",
        )],
    );
}

#[test]
fn bytes_booleans_and_formats() {
    table(
        "bytes",
        &schemas(&[
            json!({"type": "string", "format": "byte"}),
            json!({"type": "string", "format": "byte"}),
        ]),
        &objs(&[json!("QUI="), json!("QUI=")]),
        None,
        &[
            "self.val1 == self.val2",
            "self.val1 == b'AB'",
            "self.val1 == bytes('AB')",
            "type(self.val1) == bytes",
            "size(self.val1) == 2",
        ],
        &[],
    );
    table(
        "booleans",
        &schemas(&[
            json!({"type": "boolean"}),
            json!({"type": "boolean"}),
            json!({"type": "boolean"}),
        ]),
        &objs(&[json!(true), json!(true), json!(false)]),
        None,
        &[
            &vals_equal("self.val1", "self.val2", "true"),
            "self.val1 != self.val3",
            "type(self.val1) == bool",
        ],
        &[],
    );
    let duration = json!({"type": "string", "format": "duration"});
    table(
        "duration format",
        &schemas(&[duration.clone(), duration]),
        &objs(&[json!("1h2m3s4ms"), json!("1h2m3s4ms")]),
        None,
        &[
            &vals_equal("self.val1", "self.val2", "duration('1h2m3s4ms')"),
            "self.val1 == duration('1h2m') + duration('3s4ms')",
            "self.val1.getHours() == 1",
            "self.val1.getMinutes() == 62",
            "self.val1.getSeconds() == 3723",
            "self.val1.getMilliseconds() == 3723004",
        ],
        &[
            (
                "duration('1')",
                "compilation failed: ERROR: <input>:1:10: invalid duration argument",
            ),
            (
                "duration('1d')",
                "compilation failed: ERROR: <input>:1:10: invalid duration argument",
            ),
            (
                "duration('1us') < duration('1nns')",
                "compilation failed: ERROR: <input>:1:28: invalid duration argument",
            ),
        ],
    );
    let date = json!({"type": "string", "format": "date"});
    table(
        "date format",
        &schemas(&[date.clone(), date]),
        &objs(&[json!("1997-07-16"), json!("1997-07-16")]),
        None,
        &[
            &vals_equal(
                "self.val1",
                "self.val2",
                "timestamp('1997-07-16T00:00:00.000Z')",
            ),
            "self.val1.getDate() == 16",
            "self.val1.getMonth() == 06",
            "self.val1.getFullYear() == 1997",
        ],
        &[],
    );
    let dt = json!({"type": "string", "format": "date-time"});
    table(
        "date-time format",
        &schemas(&[dt.clone(), dt]),
        &objs(&[
            json!("2011-08-18T19:03:37.010000000+01:00"),
            json!("2011-08-18T19:03:37.010000000+01:00"),
        ]),
        None,
        &[
            &vals_equal(
                "self.val1",
                "self.val2",
                "timestamp('2011-08-18T19:03:37.010+01:00')",
            ),
            "self.val1 == timestamp('2011-08-18T00:00:00.000+01:00') + duration('19h3m37s10ms')",
            "self.val1.getDate('01:00') == 18",
            "self.val1.getHours('UTC') == 18",
        ],
        &[
            (
                "timestamp('1000-00-00T00:00:00Z')",
                "compilation failed: ERROR: <input>:1:11: invalid timestamp",
            ),
            (
                "timestamp('1000-01-01T00:00:00ZZ')",
                "compilation failed: ERROR: <input>:1:11: invalid timestamp",
            ),
        ],
    );
}

#[test]
fn lists_and_maps() {
    table(
        "lists",
        &schemas(&[list(t(INT)), list(t(INT))]),
        &objs(&[json!([1, 2, 3]), json!([1, 2, 3])]),
        None,
        &[
            &vals_equal("self.val1", "self.val2", "[1, 2, 3]"),
            "1 in self.val1",
            "self.val2[0] in self.val1",
            "!(0 in self.val1)",
            "self.val1 + self.val2 == [1, 2, 3, 1, 2, 3]",
            "self.val1 + [4, 5] == [1, 2, 3, 4, 5]",
        ],
        &[],
    );
    table(
        "string lists",
        &schemas(&[list(t(STR))]),
        &objs(&[json!(["a", "b", "c"])]),
        None,
        &[
            "self.val1.join('-') == 'a-b-c'",
            "self.val1.join() == 'abc'",
        ],
        &[],
    );
    let map = json!({"type": "object", "additionalProperties": {"type": "string"}});
    table(
        "maps",
        &schemas(&[map.clone(), map]),
        &objs(&[json!({"k1": "a", "k2": "b"}), json!({"k2": "b", "k1": "a"})]),
        None,
        &[
            "self.val1 == self.val2",
            "'k1' in self.val1",
            "!('k3' in self.val1)",
            "self.val1 == {'k1': 'a', 'k2': 'b'}",
        ],
        &[],
    );
    table(
        "map access",
        &object(json!({"val": {"type": "object", "additionalProperties": {"type": "integer"}}})),
        &json!({"val": {"b": 1, "d": 2}}),
        None,
        &[
            "!('a' in self.val)",
            "'b' in self.val",
            "!has(self.val.a)",
            "has(self.val.b)",
            "self.val.all(k, self.val[k] > 0)",
            "self.val.exists(k, self.val[k] > 1)",
            "self.val.exists_one(k, self.val[k] == 2)",
            "!self.val.exists(k, self.val[k] > 2)",
            "!self.val.exists_one(k, self.val[k] > 0)",
            "size(self.val) == 2",
            "self.val.map(k, self.val[k]).exists(v, v == 1)",
            "size(self.val.filter(k, self.val[k] > 1)) == 1",
        ],
        // Upstream evaluates two-variable comprehensions (`all(k, v, ...)`,
        // `existsOne`, `transformMap`, ...); the `cel` crate cannot, so
        // Skein refuses them at compile time, saying so.
        &[
            ("self.val['c'] == 1", "no such key: c"),
            (
                "self.val.all(k, v, v > 0)",
                "ERROR: <input>:1:13: two-variable comprehension 'all' is not supported by Skein",
            ),
            (
                "self.val.transformMap(k, v, v + 1).size() == 2",
                "two-variable comprehension 'transformMap' is not supported by Skein",
            ),
        ],
    );
    table(
        "map keys are not escaped",
        &object(json!({"m": {"type": "object", "additionalProperties": {"type": "integer"}}})),
        &json!({"m": {"@": 1, "9": 2, "int": 3, "./-": 4, "👑": 5}}),
        None,
        &[
            "self.m['@'] == 1",
            "self.m['9'] == 2",
            "self.m['int'] == 3",
            "self.m['./-'] == 4",
            "self.m['👑'] == 5",
        ],
        &[],
    );
}

#[test]
fn object_access() {
    table(
        "object access",
        &object(json!({
            "a": {"type": "object", "properties": {"b": {"type": "integer"}, "c": {"type": "integer"}, "d": {"type": "integer", "nullable": true}}},
            "a1": {"type": "object", "properties": {
                "b1": {"type": "object", "properties": {"c1": {"type": "integer"}}},
                "d2": {"type": "object", "properties": {"e2": {"type": "integer"}}}
            }}
        })),
        &json!({"a": {"b": 1, "d": null}, "a1": {"b1": {"c1": 4}}, "a3": {}}),
        None,
        &[
            "has(self.a.b)",
            "!has(self.a.c)",
            "!has(self.a.d)",
            "has(self.a1.b1.c1)",
            "!(has(self.a1.d2) && has(self.a1.d2.e2))",
            "!has(self.a1.d2)",
        ],
        &[
            ("has(self.a.z)", "undefined field 'z'"),
            ("has(self.a1.d2.e2)", "no such key: d2"),
        ],
    );
    table(
        "listMap access",
        &object(json!({"listMap": {
            "type": "array", "x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["k"],
            "items": {"type": "object", "properties": {"k": {"type": "string"}, "v": {"type": "string"}, "v2": {"type": "string"}}}
        }})),
        &json!({"listMap": [{"k": "a1", "v": "b1"}, {"k": "a2", "v": "b2"}, {"k": "a3", "v": "b3", "v2": "z"}]}),
        None,
        &[
            "has(self.listMap[0].v)",
            "self.listMap.all(m, m.k.startsWith('a'))",
            "self.listMap.all(m, !has(m.v2) || m.v2 == 'z')",
            "self.listMap.exists(m, m.k.endsWith('1'))",
            "self.listMap.exists_one(m, m.k == 'a3')",
            "!self.listMap.all(m, m.k.endsWith('1'))",
            "!self.listMap.exists(m, m.v == 'x')",
            "!self.listMap.exists_one(m, m.k.startsWith('a'))",
            "size(self.listMap.filter(m, m.k == 'a1')) == 1",
            "self.listMap.exists(m, m.k == 'a1' && m.v == 'b1')",
            "self.listMap.map(m, m.v).exists(v, v == 'b1')",
            "self.listMap.exists(m, has(m.v2) && m.v2 == 'z')",
            "self.listMap.map(m, has(m.v2) && m.v2 == 'z', m.v2).size() == 1",
        ],
        &[],
    );
    let meta = json!({
        "kind": {"type": "string"}, "apiVersion": {"type": "string"},
        "metadata": {"type": "object", "properties": {"name": {"type": "string"}, "generateName": {"type": "string"}}},
        "spec": {"type": "object", "properties": {"field1": {"type": "string"}}}
    });
    table(
        "typemeta and objectmeta access",
        &object(meta),
        &json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "foo", "generateName": "pickItForMe", "namespace": "xyz"}, "spec": {"field1": "a"}}),
        None,
        &[
            "self.kind == 'Pod'",
            "self.apiVersion == 'v1'",
            "self.metadata.name == 'foo'",
            "self.metadata.generateName == 'pickItForMe'",
            "self.spec.field1 == 'a'",
        ],
        &[(
            "has(self.metadata.namespace)",
            "undefined field 'namespace'",
        )],
    );
    table(
        "embedded object",
        &object(
            json!({"embedded": {"type": "object", "x-kubernetes-embedded-resource": true, "x-kubernetes-preserve-unknown-fields": true}}),
        ),
        &json!({"embedded": {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "foo", "generateName": "pickItForMe", "namespace": "xyz"}}}),
        None,
        &[
            "self.embedded.kind == 'Pod'",
            "self.embedded.apiVersion == 'v1'",
            "self.embedded.metadata.name == 'foo'",
            "self.embedded.metadata.generateName == 'pickItForMe'",
            "has(self.embedded)",
        ],
        &[(
            "has(self.embedded.metadata.namespace)",
            "undefined field 'namespace'",
        )],
    );
}

#[test]
fn nulls() {
    let nullable = json!({"type": "string", "nullable": true});
    table(
        "field nullability",
        &object(json!({
            "unsetPlainStr": t(STR), "unsetNullableStr": nullable,
            "setPlainStr": t(STR), "setNullableStr": nullable, "setToNullNullableStr": nullable,
        })),
        &json!({"setPlainStr": "v1", "setNullableStr": "v3", "setToNullNullableStr": null}),
        None,
        &[
            "!has(self.unsetPlainStr)",
            "!has(self.unsetNullableStr)",
            "has(self.setPlainStr) && self.setPlainStr == 'v1'",
            "has(self.setNullableStr) && self.setNullableStr == 'v3'",
            "type(self.setNullableStr) != null_type",
            "!has(self.setToNullNullableStr)",
        ],
        &[
            (
                "self.unsetPlainStr == null",
                "no matching overload for '_==_' applied to '(string, null)'",
            ),
            (
                "self.unsetNullableStr == null",
                "no matching overload for '_==_' applied to '(string, null)'",
            ),
            (
                "self.setPlainStr != null",
                "no matching overload for '_!=_' applied to '(string, null)'",
            ),
        ],
    );
    table(
        "null values in container types",
        &object(json!({
            "m": {"type": "object", "additionalProperties": nullable},
            "l": list(nullable.clone()),
            "s": {"type": "array", "x-kubernetes-list-type": "set", "items": nullable},
        })),
        &json!({"m": {"a": null, "b": "not-nil"}, "l": [null, "not-nil"], "s": [null, "not-nil"]}),
        None,
        &[
            "self.m.size() == 2",
            "'a' in self.m",
            "type(self.m['a']) == null_type",
            "self.l.size() == 2",
            "type(self.l[0]) == null_type",
            "self.s.size() == 2",
            "type(self.s[0]) == null_type",
        ],
        &[],
    );
}

#[test]
fn preserve_unknown_fields() {
    let unknown_object = json!({"type": "object", "x-kubernetes-preserve-unknown-fields": true});
    let anyval = json!({"x-kubernetes-preserve-unknown-fields": true});
    table(
        "preserve unknown fields",
        &object(json!({
            "withUnknown": unknown_object,
            "withUnknownList": list(unknown_object.clone()),
            "withUnknownFieldList": list(object(json!({"fieldOfUnknownType": anyval}))),
            "anyvalList": list(anyval.clone()),
            "anyvalMap": {"type": "object", "additionalProperties": anyval},
            "anyvalField1": anyval,
            "anyvalField2": anyval,
        })),
        &json!({
            "withUnknown": {"field1": "a", "field2": "b"},
            "withUnknownList": [{"field1": "a", "field2": "b"}, {"field1": "x", "field2": "y"}, {"field1": "x", "field2": "y"}, {}, {}],
            "withUnknownFieldList": [{"fieldOfUnknownType": "a"}, {"fieldOfUnknownType": 1}, {"fieldOfUnknownType": 1}],
            "anyvalList": ["a", 2], "anyvalMap": {"k": "1"}, "anyvalField1": 1, "anyvalField2": "a",
        }),
        None,
        &[
            "has(self.withUnknown)",
            "self.withUnknownList.size() == 5",
            "self.withUnknownList[0] != self.withUnknownList[1]",
            "self.withUnknownList[1] == self.withUnknownList[2]",
            "self.withUnknownList[3] == self.withUnknownList[4]",
            "self.withUnknownFieldList[0] != self.withUnknownFieldList[1]",
            "self.withUnknownFieldList[1] == self.withUnknownFieldList[2]",
        ],
        &[
            ("has(self.withUnknown.field1)", "undefined field 'field1'"),
            ("has(self.anyvalList)", "undefined field 'anyvalList'"),
            ("has(self.anyvalMap)", "undefined field 'anyvalMap'"),
            ("has(self.anyvalField1)", "undefined field 'anyvalField1'"),
            ("has(self.anyvalField2)", "undefined field 'anyvalField2'"),
        ],
    );
}

#[test]
fn int_or_string() {
    let ios = json!({"x-kubernetes-int-or-string": true});
    let rules_for_string = [
        "self.something == '25%'",
        "self.something != 1",
        "self.something == 1 || self.something == '25%'",
        "self.something == '25%' || self.something == 1",
        "type(self.something) == string && self.something == '25%'",
        "type(self.something) == int ? self.something == 1 : self.something == '25%'",
        "self.something != ['anything']",
    ];
    table(
        "string in intOrString",
        &object(json!({"something": ios})),
        &json!({"something": "25%"}),
        None,
        &rules_for_string,
        &[],
    );
    table(
        "int in intOrString",
        &object(json!({"something": ios})),
        &json!({"something": 1}),
        None,
        &[
            "self.something == 1",
            "self.something != 'some string'",
            "type(self.something) == int && self.something == 1",
        ],
        &[],
    );
    table(
        "percent comparison using intOrString",
        &object(
            json!({"min": ios, "current": {"type": "integer"}, "available": {"type": "integer"}}),
        ),
        &json!({"min": "50%", "current": 5, "available": 10}),
        None,
        &[
            r"type(self.min) == string && self.min.matches(r'(\d+(\.\d+)?%)')",
            "type(self.min) == int ? self.current <= self.min : double(self.current) / double(self.available) >= double(self.min.replace('%', '')) / 100.0",
        ],
        &[],
    );
}

#[test]
fn escaping() {
    let names = [
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
        "int",
        "uint",
        "double",
        "bool",
        "string",
        "bytes",
        "list",
        "map",
        "null_type",
        "type",
        "self",
        "getDate",
        "all",
        "_true",
        "dot.dot",
        "dash-dash",
        "slash/slash",
        "underscore_underscore",
        "doubleunderscore__doubleunderscore",
    ];
    let mut props = serde_json::Map::new();
    let mut data = serde_json::Map::new();
    for (i, n) in names.iter().enumerate() {
        props.insert((*n).to_owned(), t(INT));
        data.insert((*n).to_owned(), json!(i + 1));
    }
    let rules: Vec<String> = names
        .iter()
        .enumerate()
        .filter_map(|(i, n)| {
            let cel = super::escape::escape(n)?;
            Some(format!("self.{cel} == {}", i + 1))
        })
        .collect();
    let rules: Vec<&str> = rules.iter().map(String::as_str).collect();
    table(
        "escaping",
        &object(Value::Object(props)),
        &Value::Object(data),
        None,
        &rules,
        // cel-go: "mismatched input 'true' expecting IDENTIFIER"; the cel
        // crate's parser words this syntax error differently.
        &[(
            "self.true == 1",
            "compilation failed: ERROR: <input>:1:6: Syntax error:",
        )],
    );
}

#[test]
fn stdlib_list_functions() {
    let duration = json!({"type": "string", "format": "duration"});
    let date = json!({"type": "string", "format": "date"});
    table(
        "stdlib list functions",
        &object(json!({
            "ints": list(t(INT)), "unsortedInts": list(t(INT)), "emptyInts": list(t(INT)),
            "doubles": list(t(NUM)), "unsortedDoubles": list(t(NUM)), "emptyDoubles": list(t(NUM)),
            "durations": list(duration.clone()), "unsortedDurations": list(duration.clone()), "emptyDurations": list(duration),
            "strings": list(t(STR)), "unsortedStrings": list(t(STR)), "emptyStrings": list(t(STR)),
            "dates": list(date.clone()), "unsortedDates": list(date),
            "objs": list(object(json!({"f1": t(STR), "f2": t(STR)}))),
        })),
        &json!({
            "ints": [1, 2, 2, 3], "unsortedInts": [2, 1], "emptyInts": [],
            "doubles": [1, 2, 2, 3], "unsortedDoubles": [2, 1], "emptyDoubles": [],
            "durations": ["1s", "1m", "1m", "1h"], "unsortedDurations": ["1m", "1s"], "emptyDurations": [],
            "strings": ["a", "b", "b", "c"], "unsortedStrings": ["b", "a"], "emptyStrings": [],
            "dates": ["2000-01-01", "2000-02-01", "2000-02-01", "2010-01-01"], "unsortedDates": ["2000-02-01", "2000-01-01"],
            "objs": [{"f1": "a", "f2": "a"}, {"f1": "a", "f2": "b"}, {"f1": "a", "f2": "b"}, {"f1": "a", "f2": "c"}],
        }),
        None,
        &[
            "self.ints.sum() == 8",
            "self.ints.min() == 1",
            "self.ints.max() == 3",
            "self.emptyInts.sum() == 0",
            "self.ints.isSorted()",
            "self.emptyInts.isSorted()",
            "self.unsortedInts.isSorted() == false",
            "self.ints.indexOf(2) == 1",
            "self.ints.lastIndexOf(2) == 2",
            "self.ints.indexOf(10) == -1",
            "self.doubles.sum() == 8.0",
            "self.doubles.min() == 1.0",
            "self.doubles.max() == 3.0",
            "self.doubles.isSorted()",
            "self.unsortedDoubles.isSorted() == false",
            "self.doubles.indexOf(2.0) == 1",
            "self.durations.sum() == duration('1h2m1s')",
            "self.durations.min() == duration('1s')",
            "self.durations.max() == duration('1h')",
            "self.durations.isSorted()",
            "self.unsortedDurations.isSorted() == false",
            "self.durations.indexOf(duration('1m')) == 1",
            "self.strings.min() == 'a'",
            "self.strings.max() == 'c'",
            "self.strings.isSorted()",
            "self.unsortedStrings.isSorted() == false",
            "self.strings.lastIndexOf('b') == 2",
            "self.dates.min() == timestamp('2000-01-01T00:00:00.000Z')",
            "self.dates.max() == timestamp('2010-01-01T00:00:00.000Z')",
            "self.dates.isSorted()",
            "self.unsortedDates.isSorted() == false",
            "[[1], [2]].indexOf([1]) == 0",
            "[{'a': 1}, {'b': 2}].lastIndexOf({'b': 2}) == 1",
            "self.objs.indexOf(self.objs[1]) == 1",
            "self.objs.lastIndexOf(self.objs[1]) == 2",
            "([0] + self.emptyInts).min() == 0",
            "dyn([]).sum() == 0",
            "dyn([1, 2]).sum() == 3",
            "dyn([1.0, 2.0]).sum() == 3.0",
            "[].sum() == 0",
        ],
        &[
            ("self.emptyInts.min() == 1", "min called on empty list"),
            ("self.emptyInts.max() == 3", "max called on empty list"),
            ("self.emptyStrings.min() == 'a'", "min called on empty list"),
        ],
    );
}

#[test]
fn regex_url_quantity_ip_format() {
    table(
        "stdlib regex functions",
        &object(json!({"str": t(STR)})),
        &json!({"str": "this is a 123 string 456"}),
        None,
        &[
            "self.str.find('[0-9]+') == '123'",
            "self.str.find('[0-9]+') != '456'",
            "self.str.find('xyz') == ''",
            "self.str.findAll('[0-9]+') == ['123', '456']",
            "self.str.findAll('[0-9]+', 0) == []",
            "self.str.findAll('[0-9]+', 1) == ['123']",
            "self.str.findAll('[0-9]+', 2) == ['123', '456']",
            "self.str.findAll('[0-9]+', 3) == ['123', '456']",
            "self.str.findAll('[0-9]+', -1) == ['123', '456']",
            "self.str.findAll('xyz') == []",
            "self.str.findAll('xyz', 1) == []",
        ],
        &[],
    );
    table(
        "URL parsing",
        &object(json!({"url": t(STR)})),
        &json!({"url": "https://user:pass@kubernetes.io:80/docs/home?k1=a&k2=b&k2=c#anchor"}),
        None,
        &[
            "url('/path').getScheme() == ''",
            "url('https://example.com/').getScheme() == 'https'",
            "url('https://example.com:80/').getHost() == 'example.com:80'",
            "url('https://example.com/').getHost() == 'example.com'",
            "url('https://[::1]:80/').getHost() == '[::1]:80'",
            "url('https://[::1]/').getHost() == '[::1]'",
            "url('/path').getHost() == ''",
            "url('https://example.com:80/').getHostname() == 'example.com'",
            "url('https://127.0.0.1/').getHostname() == '127.0.0.1'",
            "url('https://[::1]/').getHostname() == '::1'",
            "url('/path').getHostname() == ''",
            "url('https://example.com:80/').getPort() == '80'",
            "url('https://example.com/').getPort() == ''",
            "url('/path').getPort() == ''",
            "url('https://example.com/path').getEscapedPath() == '/path'",
            "url('https://example.com').getEscapedPath() == ''",
            "url('https://example.com/path?k1=a&k2=b&k2=c').getQuery() == { 'k1': ['a'], 'k2': ['b', 'c']}",
            "url('https://example.com/path?').getQuery() == {}",
            "url('https://example.com/path').getQuery() == {}",
            "url(self.url).getScheme() == 'https'",
            "url(self.url).getHost() == 'kubernetes.io:80'",
            "url(self.url).getHostname() == 'kubernetes.io'",
            "url(self.url).getPort() == '80'",
            "isURL('https://user:pass@example.com:80/path?query=val#fragment')",
            "isURL('/path') == true",
            "isURL('https://a:b:c/') == false",
            "isURL('../relative-path') == false",
        ],
        &[],
    );
    let two = schemas(&[t(STR), t(STR)]);
    let data = objs(&[json!("20"), json!("200M")]);
    table(
        "quantity",
        &two,
        &data,
        None,
        &[
            "isQuantity(self.val1)",
            "isQuantity(self.val2)",
            r#"isQuantity("20Mi")"#,
            r#"quantity(self.val2) == quantity("0.2G") && quantity("0.2G") == quantity("200M")"#,
            r#"quantity("2M") == quantity("0.002G") && quantity("2000k") == quantity("2M") && quantity("0.002G") == quantity("2000k")"#,
            r#"quantity(self.val1).isLessThan(quantity("100M"))"#,
            r#"quantity(self.val2).isGreaterThan(quantity("50M"))"#,
            r#"quantity(self.val2).compareTo(quantity("0.2G")) == 0"#,
            r#"quantity("50k").add(quantity(self.val1)) == quantity("50.02k")"#,
            r#"quantity("50k").sub(quantity(self.val1)) == quantity("49980")"#,
            "quantity(self.val1).isInteger()",
        ],
        &[],
    );
    table(
        "IP and CIDR",
        &two,
        &data,
        None,
        &[
            r#"isIP("192.168.0.1")"#,
            r#"ip.isCanonical("127.0.0.1")"#,
            r#"ip("192.168.0.1").family() > 0"#,
            r#"ip("0.0.0.0").isUnspecified()"#,
            r#"ip("127.0.0.1").isLoopback()"#,
            r#"ip("224.0.0.1").isLinkLocalMulticast()"#,
            r#"ip("192.168.0.1").isGlobalUnicast()"#,
            r#"cidr("192.168.0.0/24").containsIP(ip("192.168.0.1"))"#,
            r#"cidr("192.168.0.0/24").containsCIDR("192.168.0.0/25")"#,
            r#"cidr("2001:db8::/32").containsCIDR(cidr("2001:db8::/33"))"#,
            "cidr('192.168.0.0/24') == cidr('192.168.0.0/24').masked()",
            "cidr('192.168.0.0/16').prefixLength() == 16",
            "cidr('::1/128').ip().family() == 6",
        ],
        &[],
    );
    table(
        "format",
        &two,
        &data,
        None,
        &[
            r#"format.dns1123Label().validate("my-label-name") == optional.none()"#,
            r#"format.dns1123Subdomain().validate("apiextensions.k8s.io") == optional.none()"#,
            r#"format.qualifiedName().validate("apiextensions.k8s.io/v1beta1") == optional.none()"#,
            r#"format.dns1123LabelPrefix().validate("my-label-prefix-") == optional.none()"#,
            r#"format.dns1123SubdomainPrefix().validate("mysubdomain.prefix.-") == optional.none()"#,
            r#"format.dns1035LabelPrefix().validate("my-label-prefix-") == optional.none()"#,
            r#"format.uri().validate("http://example.com") == optional.none()"#,
            r#"format.uuid().validate("123e4567-e89b-12d3-a456-426614174000") == optional.none()"#,
            r#"format.byte().validate("aGVsbG8=") == optional.none()"#,
            r#"format.date().validate("2021-01-01") == optional.none()"#,
            r#"format.datetime().validate("2021-01-01T00:00:00Z") == optional.none()"#,
            r#"format.named("dns1123Label").value().validate("my-name") == optional.none()"#,
            r#"format.dns1123Label().validate("contains a space").value()[0] == "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')""#,
            r#"!format.named("unknown").hasValue()"#,
        ],
        &[],
    );
}

#[test]
fn sets_and_optionals() {
    table(
        "listSets",
        &schemas(&[list(t(STR))]),
        &objs(&[json!(["a", "b", "c"])]),
        None,
        &[
            "sets.contains(['a', 'b'], [])",
            "sets.contains(['a', 'b'], ['b'])",
            "!sets.contains(['a', 'b'], ['c'])",
            "sets.equivalent([], [])",
            "sets.equivalent(['c', 'b', 'a'], ['b', 'c', 'a'])",
            "!sets.equivalent(['a', 'b'], ['b', 'c'])",
            "sets.intersects(['a', 'b'], ['b', 'c'])",
            "!sets.intersects([], [])",
            "!sets.intersects(['a', 'b'], ['c', 'd'])",
            "sets.contains([{'a': 1}, {'b': 2}], [{'b': 2}])",
            "sets.contains([duration('1h'), duration('2h')], [duration('2h')])",
        ],
        &[],
    );
    table(
        "optionals",
        &object(json!({
            "presentObj": object(json!({"presentStr": t(STR)})),
            "absentObj": object(json!({"absentStr": t(STR)})),
            "m": {"type": "object", "additionalProperties": t(STR)},
            "l": list(t(STR)),
        })),
        &json!({"presentObj": {"presentStr": "value"}, "m": {"k": "v"}, "l": ["a"]}),
        None,
        &[
            "self.?presentObj.?presentStr == optional.of('value')",
            "self.presentObj.?presentStr == optional.of('value')",
            "self.presentObj.?presentStr.or(optional.of('nope')) == optional.of('value')",
            "self.presentObj.?presentStr.orValue('') == 'value'",
            "self.presentObj.?presentStr.hasValue() == true",
            "self.?absentObj.?absentStr == optional.none()",
            "self.?absentObj.?absentStr.orValue('nope') == 'nope'",
            "self.m[?'k'] == optional.of('v')",
            "self.m[?'k'].orValue('') == 'v'",
            "self.m[?'x'] == optional.none()",
            "self.m[?'x'].orValue('nope') == 'nope'",
            "self.l[?0] == optional.of('a')",
            "self.l[?1] == optional.none()",
            "self.l[?1].orValue('nope') == 'nope'",
            "['a', ?optional.none(), 'c'] == ['a', 'c']",
            "['a', ?optional.of('v'), 'c'] == ['a', 'v', 'c']",
        ],
        &[(
            "self.absentObj.?absentStr == optional.none()",
            "no such key: absentObj",
        )],
    );
}

#[test]
fn transition_rules() {
    table(
        "transition rules",
        &object(json!({"v": t(STR)})),
        &json!({"v": "new"}),
        Some(&json!({"v": "old"})),
        &[
            "oldSelf.v != self.v",
            "oldSelf.v == 'old' && self.v == 'new'",
        ],
        &[],
    );
    // Skipped without an old object (they would fail otherwise).
    table(
        "skipped transition rule",
        &object(json!({"f": t(STR)})),
        &json!({"f": "exists"}),
        None,
        &["oldSelf.f != self.f"],
        &[],
    );
}
