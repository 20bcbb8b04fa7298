//! Tests of [`super`]: apiextensions-apiserver `tableconvertor_test.go`
//! facts, the CRD handler's default column, and properties.

// Upstream's test table uses 3.14.
#![allow(clippy::approx_constant)]

use proptest::prelude::*;
use serde_json::{Value, json};

use super::super::{IncludeObject, ListMeta, WatchTables, timestamp};
use super::*;

fn now() -> OffsetDateTime {
    timestamp::parse("2025-06-01T12:00:00Z").unwrap_or(OffsetDateTime::UNIX_EPOCH)
}

fn cell(column_type: &str, value: Value) -> Value {
    cell_for_json_value(column_type, &value, now())
}

/// `Test_cellForJSONValue`.
#[test]
fn cell_for_json_value_table() {
    let cases = [
        ("integer", json!(42), json!(42)),
        ("integer", json!(3.14), json!(3)),
        ("integer", json!(true), Value::Null),
        ("integer", json!("foo"), Value::Null),
        ("number", json!(42), json!(42.0)),
        ("number", json!(3.14), json!(3.14)),
        ("number", json!(true), Value::Null),
        ("number", json!("foo"), Value::Null),
        ("boolean", json!(42), Value::Null),
        ("boolean", json!(3.14), Value::Null),
        ("boolean", json!(true), json!(true)),
        ("boolean", json!("foo"), Value::Null),
        ("string", json!(42), Value::Null),
        ("string", json!(3.14), Value::Null),
        ("string", json!(true), Value::Null),
        ("string", json!("foo"), json!("foo")),
        ("date", json!(42), Value::Null),
        ("date", json!(3.14), Value::Null),
        ("date", json!(true), Value::Null),
        ("date", json!("2025-05-31T23:30:00Z"), json!("12h")),
        ("date", json!("2025-06-02T00:30:00Z"), json!("<invalid>")),
        ("date", json!(""), json!("<unknown>")),
        ("unknown", json!("foo"), Value::Null),
    ];
    for (column_type, value, want) in cases {
        assert_eq!(
            cell(column_type, value.clone()),
            want,
            "{column_type} {value}"
        );
    }
    // The number column holds a float even for an integer.
    assert!(cell("number", json!(42)).is_f64());
}

#[test]
fn date_cells() {
    assert_eq!(cell("date", json!("null")), json!("<unknown>"));
    assert_eq!(
        cell("date", json!("0001-01-01T00:00:00Z")),
        json!("<unknown>")
    );
    assert_eq!(
        cell("date", json!("0001-01-01T00:00:00.000Z")),
        json!("<unknown>")
    );
    assert_eq!(cell("date", json!("yesterday")), json!("<invalid>"));
    assert_eq!(cell("date", json!("2025-06-01T11:55:00Z")), json!("5m"));
    assert_eq!(
        cell("date", json!("2025-06-01T13:55:00+02:00")),
        json!("5m")
    );
    assert_eq!(cell("date", json!("2025-06-01T11:59:59.5Z")), json!("0s"));
}

#[test]
fn integer_cells_truncate_like_go() {
    assert_eq!(cell("integer", json!(-3.9)), json!(-3));
    assert_eq!(cell("integer", json!(1e300)), json!(i64::MIN));
    assert_eq!(cell("integer", json!(u64::MAX)), json!(i64::MIN));
    assert_eq!(cell("integer", json!(i64::MAX)), json!(i64::MAX));
}

fn istio_servers() -> Value {
    json!({
        "apiVersion": "example.istio.io/v1alpha1",
        "kind": "Blah",
        "metadata": {"name": "blah"},
        "spec": {
            "servers": [{"hosts": ["foo"]}, {"hosts": ["bar", "baz"]}],
            "foo": [{"bar": [1]}, {"bar": [2, 3]}],
        },
    })
}

fn columns_of(column_type: &str, paths: &[(&str, &str)]) -> CustomColumns {
    let defs: Vec<Value> = paths
        .iter()
        .map(|(name, path)| json!({"name": name, "type": column_type, "jsonPath": path}))
        .collect();
    CustomColumns::new(&Value::Array(defs)).unwrap()
}

/// `Test_convertor_ConvertToTable`: "additional column containing multiple
/// string values" and the integer variants.
#[test]
fn multiple_values_print_the_first() {
    let obj = istio_servers();
    let strings = columns_of(
        "string",
        &[
            ("valueOnly", ".spec.servers[0].hosts[0]"),
            ("single1", ".spec.servers[0].hosts"),
            ("single2", ".spec.servers[1].hosts"),
            ("multi", ".spec.servers[*].hosts"),
        ],
    );
    assert_eq!(
        strings.row(&obj, now()),
        vec![
            json!("blah"),
            json!("foo"),
            json!(r#"["foo"]"#),
            json!(r#"["bar","baz"]"#),
            json!(r#"["foo"]"#),
        ]
    );
    let paths = [
        ("valueOnly", ".spec.foo[0].bar[0]"),
        ("single1", ".spec.foo[0].bar"),
        ("single2", ".spec.foo[1].bar"),
        ("multi", ".spec.foo[*].bar"),
    ];
    assert_eq!(
        columns_of("string", &paths).row(&obj, now()),
        vec![
            json!("blah"),
            json!("1"),
            json!("[1]"),
            json!("[2,3]"),
            json!("[1]")
        ]
    );
    assert_eq!(
        columns_of("integer", &paths).row(&obj, now()),
        vec![
            json!("blah"),
            json!(1),
            Value::Null,
            Value::Null,
            Value::Null
        ]
    );
}

#[test]
fn column_definitions() {
    let columns = CustomColumns::new(&json!([
        {"name": "Replicas", "type": "integer", "jsonPath": ".spec.replicas", "description": "Desired"},
        {"name": "Phase", "type": "string", "format": "name", "priority": 1, "jsonPath": ".status.phase"},
    ]))
    .unwrap();
    let defs = serde_json::to_value(columns.columns()).unwrap();
    assert_eq!(
        defs,
        json!([
            {"name": "Name", "type": "string", "format": "name", "description": doc::META_NAME, "priority": 0},
            {"name": "Replicas", "type": "integer", "format": "", "description": "Desired", "priority": 0},
            {"name": "Phase", "type": "string", "format": "name",
             "description": "Custom resource definition column (in JSONPath format): .status.phase",
             "priority": 1},
        ])
    );
    let obj = json!({"metadata": {"name": "a"}, "spec": {"replicas": 2}});
    // A missing value is a null cell (kubectl prints `<none>`).
    assert_eq!(
        columns.row(&obj, now()),
        vec![json!("a"), json!(2), Value::Null]
    );
}

/// `GetColumnsForVersion`'s `serveDefaultColumnsIfEmpty`.
#[test]
fn default_age_column() {
    for empty in [Value::Null, json!([])] {
        let columns = CustomColumns::new(&empty).unwrap();
        let defs = serde_json::to_value(columns.columns()).unwrap();
        assert_eq!(
            defs,
            json!([
                {"name": "Name", "type": "string", "format": "name", "description": doc::META_NAME, "priority": 0},
                {"name": "Age", "type": "date", "format": "", "description": doc::META_CREATION_TIMESTAMP, "priority": 0},
            ])
        );
        let obj = json!({"metadata": {"name": "a", "creationTimestamp": "2025-06-01T11:00:00Z"}});
        assert_eq!(columns.row(&obj, now()), vec![json!("a"), json!("60m")]);
        // No timestamp: no value, a null cell.
        let bare = json!({"metadata": {"name": "b"}});
        assert_eq!(columns.row(&bare, now()), vec![json!("b"), Value::Null]);
    }
}

/// `getScaleColumnsForVersion`.
#[test]
fn scale_columns() {
    let names = |c: &CustomColumns| -> Vec<String> {
        c.columns().iter().map(|c| c.name.to_string()).collect()
    };
    let full = CustomColumns::scale(&json!({
        "specReplicasPath": ".spec.size",
        "statusReplicasPath": ".status.size",
    }));
    assert_eq!(names(&full), ["Name", "Desired", "Available", "Age"]);
    assert_eq!(full.columns()[1].description, "Number of desired replicas");
    assert_eq!(full.columns()[2].description, "Number of actual replicas");
    let scale = json!({
        "kind": "Scale",
        "apiVersion": "autoscaling/v1",
        "metadata": {"name": "w", "creationTimestamp": "2025-06-01T11:00:00Z"},
        "spec": {"replicas": 3},
        "status": {"replicas": 2, "selector": "app=w"},
    });
    assert_eq!(
        full.row(&scale, now()),
        vec![json!("w"), json!(3), json!(2), json!("60m")]
    );
    let spec_only = CustomColumns::scale(&json!({"specReplicasPath": ".spec.size"}));
    assert_eq!(names(&spec_only), ["Name", "Desired", "Age"]);
    assert_eq!(names(&CustomColumns::scale(&Value::Null)), ["Name", "Age"]);
}

#[test]
fn bad_definitions() {
    let defs = json!([
        {"name": "Good", "type": "string", "jsonPath": ".spec.good"},
        {"name": "Bad", "type": "string", "jsonPath": ".spec[bad"},
        {"name": "Later", "type": "string", "jsonPath": ".spec.later"},
    ]);
    assert_eq!(
        CustomColumns::new(&defs).map(|_| ()),
        Err(r#"unrecognized column definition ".spec[bad""#.to_owned())
    );
    // kube-apiserver keeps serving the columns before the bad one.
    let lenient = CustomColumns::lenient(&defs);
    let names: Vec<&str> = lenient.columns().iter().map(|c| c.name.as_ref()).collect();
    assert_eq!(names, ["Name", "Good"]);
    assert!(CustomColumns::new(&json!({"name": "x"})).is_err());
    assert_eq!(CustomColumns::lenient(&json!("x")).columns().len(), 1);
    // Items that are not objects are columns with empty fields; `{}`
    // selects the whole object.
    let odd = CustomColumns::new(&json!([7])).unwrap();
    assert_eq!(
        odd.row(&json!({"metadata": {"name": "n"}}), now()),
        vec![json!("n"), Value::Null]
    );
}

#[test]
fn string_cells_print_as_upstream() {
    let columns = columns_of("string", &[("v", ".v")]);
    let text = |v: Value| columns.row(&json!({"v": v}), now())[1].clone();
    assert_eq!(text(json!("plain")), json!("plain"));
    assert_eq!(text(json!(7)), json!("7"));
    assert_eq!(text(json!(-7)), json!("-7"));
    assert_eq!(text(json!(0.5)), json!("0.5"));
    assert_eq!(text(json!(1e6)), json!("1e+06"));
    assert_eq!(text(json!(true)), json!("true"));
    assert_eq!(text(Value::Null), json!("<no value>"));
    assert_eq!(
        text(json!({"b": "<x>", "a": [1, 2.5]})),
        json!(r#"{"a":[1,2.5],"b":"\u003cx\u003e"}"#)
    );
}

#[test]
fn go_floats() {
    let cases = [
        (3.14, "3.14"),
        (1.0, "1"),
        (-2.5, "-2.5"),
        (123_456.0, "123456"),
        (1e6, "1e+06"),
        (1_234_567.0, "1.234567e+06"),
        (0.0001, "0.0001"),
        (0.000_015, "1.5e-05"),
        (1e21, "1e+21"),
        (1e-300, "1e-300"),
        (0.0, "0"),
        (-0.0, "-0"),
    ];
    for (f, want) in cases {
        assert_eq!(go_format_float(f), want, "{f}");
    }
}

fn widget(name: &str, rv: &str) -> Value {
    json!({
        "apiVersion": "example.com/v1",
        "kind": "Widget",
        "metadata": {"name": name, "resourceVersion": rv, "creationTimestamp": "2025-06-01T11:58:00Z"},
        "spec": {"size": 3},
    })
}

#[test]
fn list_and_object_tables() {
    let columns = CustomColumns::new(&json!([
        {"name": "Size", "type": "integer", "jsonPath": ".spec.size"},
    ]))
    .unwrap();
    let meta = ListMeta {
        resource_version: "9".into(),
        continue_token: "c".into(),
        remaining_item_count: Some(4),
    };
    let list = custom_table(
        &columns,
        &[widget("a", "5"), widget("b", "6")],
        &meta,
        IncludeObject::Metadata,
        now(),
    );
    assert_eq!(list["kind"], "Table");
    assert_eq!(list["apiVersion"], "meta.k8s.io/v1");
    assert_eq!(
        list["metadata"],
        json!({"resourceVersion": "9", "continue": "c", "remainingItemCount": 4})
    );
    assert_eq!(list["columnDefinitions"][1]["name"], "Size");
    assert_eq!(list["rows"][0]["cells"], json!(["a", 3]));
    assert_eq!(list["rows"][1]["cells"], json!(["b", 3]));
    assert_eq!(list["rows"][0]["object"]["kind"], "PartialObjectMetadata");
    assert_eq!(list["rows"][0]["object"]["metadata"]["name"], "a");
    assert!(list["rows"][0].get("conditions").is_none());

    // An empty list has `"rows": []`, unlike the default table's null.
    let empty = custom_table(
        &columns,
        &[],
        &ListMeta::default(),
        IncludeObject::None,
        now(),
    );
    assert_eq!(empty["rows"], json!([]));
    assert_eq!(empty["metadata"], json!({}));

    let one = custom_object_table(&columns, &widget("a", "5"), IncludeObject::Object, now());
    assert_eq!(one["metadata"], json!({"resourceVersion": "5"}));
    assert_eq!(one["rows"][0]["object"], widget("a", "5"));
    let none = custom_object_table(&columns, &widget("a", "5"), IncludeObject::None, now());
    assert_eq!(none["rows"][0]["object"], Value::Null);
}

#[test]
fn watch_tables() {
    let columns = Arc::new(CustomColumns::new(&Value::Null).unwrap());
    let mut watch = WatchTables::custom(columns, IncludeObject::Metadata);
    let first = watch.event_object(&widget("a", "5"), now());
    assert_eq!(first["columnDefinitions"][1]["name"], "Age");
    assert_eq!(first["rows"][0]["cells"], json!(["a", "2m"]));
    let second = watch.event_object(&widget("b", "6"), now());
    assert_eq!(second["columnDefinitions"], Value::Null);
    assert_eq!(second["metadata"], json!({"resourceVersion": "6"}));
    let status = json!({"kind": "Status", "apiVersion": "v1", "code": 410});
    assert_eq!(watch.event_object(&status, now()), status);
}

#[test]
fn shareable_across_threads() {
    fn send_sync<T: Send + Sync>() {}
    send_sync::<CustomColumns>();
    send_sync::<WatchTables>();
}

fn arb_json() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(Value::from),
        any::<u64>().prop_map(Value::from),
        any::<f64>().prop_map(Value::from),
        "[a-z0-9:.TZ+-]{0,24}".prop_map(Value::String),
    ];
    leaf.prop_recursive(4, 32, 4, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..4).prop_map(Value::Array),
            prop::collection::btree_map(
                prop_oneof![
                    Just("metadata".to_owned()),
                    Just("name".to_owned()),
                    Just("creationTimestamp".to_owned()),
                    Just("spec".to_owned()),
                    "[a-z]{1,2}"
                ],
                inner,
                0..4
            )
            .prop_map(|m| Value::Object(m.into_iter().collect())),
        ]
    })
}

fn arb_columns() -> impl Strategy<Value = Value> {
    let column = (
        prop_oneof![
            Just("string"),
            Just("integer"),
            Just("number"),
            Just("boolean"),
            Just("date"),
            Just("other")
        ],
        prop_oneof![
            Just(".metadata.name".to_owned()),
            Just(".metadata.creationTimestamp".to_owned()),
            Just(".spec..name".to_owned()),
            Just(".spec[*]".to_owned()),
            Just(".spec[?(@.a==1)]".to_owned()),
            r#"[.a-z0-9\[\]\(\)\?@*:,'"=<>!-]{0,16}"#,
        ],
        any::<i64>(),
    )
        .prop_map(|(t, path, priority)| {
            json!({"name": "c", "type": t, "jsonPath": path, "priority": priority})
        });
    prop_oneof![
        Just(Value::Null),
        arb_json(),
        prop::collection::vec(column, 0..5).prop_map(Value::Array),
    ]
}

proptest! {
    /// Any column definitions and any objects give a table with one cell
    /// per column, without panicking.
    #[test]
    fn never_panics(defs in arb_columns(), objects in prop::collection::vec(arb_json(), 0..4)) {
        let columns = CustomColumns::lenient(&defs);
        let _ = CustomColumns::new(&defs);
        let table = custom_table(&columns, &objects, &ListMeta::default(), IncludeObject::Metadata, now());
        let rows = table["rows"].as_array().cloned().unwrap_or_default();
        prop_assert_eq!(rows.len(), objects.len());
        for row in rows {
            prop_assert_eq!(row["cells"].as_array().map(Vec::len), Some(columns.columns().len()));
        }
        for object in &objects {
            let _ = custom_object_table(&columns, object, IncludeObject::Object, now());
        }
    }
}
