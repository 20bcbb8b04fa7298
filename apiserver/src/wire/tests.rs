//! Encoder tests: bodies as kube-apiserver v1.33 (Go encoding/json over
//! the v1.33 structs) prints them.

use serde_json::json;

use super::*;

fn text(bytes: Vec<u8>) -> String {
    String::from_utf8(bytes).unwrap()
}

#[test]
fn service_status_and_key_order() {
    let svc = json!({
        "apiVersion": "v1", "kind": "Service",
        "metadata": {"name": "web", "namespace": "default", "uid": "u1",
            "resourceVersion": "7", "creationTimestamp": "2025-01-02T03:04:05Z"},
        "spec": {"ports": [{"port": 80, "protocol": "TCP", "targetPort": 8080}],
            "type": "ClusterIP", "clusterIP": "10.0.0.7", "sessionAffinity": "None"}
    });
    assert_eq!(
        text(to_vec(&svc)),
        concat!(
            r#"{"kind":"Service","apiVersion":"v1","metadata":{"name":"web","namespace":"default","uid":"u1","resourceVersion":"7","creationTimestamp":"2025-01-02T03:04:05Z"},"#,
            r#""spec":{"ports":[{"protocol":"TCP","port":80,"targetPort":8080}],"clusterIP":"10.0.0.7","type":"ClusterIP","sessionAffinity":"None"},"#,
            r#""status":{"loadBalancer":{}}}"#,
            "\n"
        )
    );
}

#[test]
fn replication_controller_status_prints_zero_replicas() {
    let rc = json!({"kind": "ReplicationController", "apiVersion": "v1",
        "metadata": {"name": "rc"},
        "spec": {"replicas": 1, "selector": {"a": "b"},
            "template": {"metadata": {"labels": {"a": "b"}},
                "spec": {"containers": [{"name": "c", "image": "nginx"}]}}}});
    assert_eq!(
        text(to_vec(&rc)),
        concat!(
            r#"{"kind":"ReplicationController","apiVersion":"v1","metadata":{"name":"rc","creationTimestamp":null},"#,
            r#""spec":{"replicas":1,"selector":{"a":"b"},"template":{"metadata":{"creationTimestamp":null,"labels":{"a":"b"}},"#,
            r#""spec":{"containers":[{"name":"c","image":"nginx","resources":{}}]}}},"status":{"replicas":0}}"#,
            "\n"
        )
    );
}

#[test]
fn deployment_fields_in_go_order() {
    let d = json!({"apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": {"name": "d", "labels": {"app": "d"}, "generation": 1, "uid": "x",
            "namespace": "ns", "creationTimestamp": "2025-01-02T03:04:05Z"},
        "spec": {"selector": {"matchLabels": {"app": "d"}}, "replicas": 2,
            "strategy": {"type": "RollingUpdate",
                "rollingUpdate": {"maxUnavailable": "25%", "maxSurge": "25%"}},
            "template": {"metadata": {"labels": {"app": "d"}},
                "spec": {"restartPolicy": "Always", "initContainers": [{"name": "i", "image": "busybox"}],
                    "containers": [{"name": "c", "image": "nginx", "ports": [{"containerPort": 80}]}],
                    "volumes": [{"name": "v", "emptyDir": {}}]}}}});
    assert_eq!(
        text(to_vec(&d)),
        concat!(
            r#"{"kind":"Deployment","apiVersion":"apps/v1","metadata":{"name":"d","namespace":"ns","uid":"x","generation":1,"creationTimestamp":"2025-01-02T03:04:05Z","labels":{"app":"d"}},"#,
            r#""spec":{"replicas":2,"selector":{"matchLabels":{"app":"d"}},"template":{"metadata":{"creationTimestamp":null,"labels":{"app":"d"}},"#,
            r#""spec":{"volumes":[{"name":"v","emptyDir":{}}],"initContainers":[{"name":"i","image":"busybox","resources":{}}],"#,
            r#""containers":[{"name":"c","image":"nginx","ports":[{"containerPort":80}],"resources":{}}],"restartPolicy":"Always"}},"#,
            r#""strategy":{"type":"RollingUpdate","rollingUpdate":{"maxUnavailable":"25%","maxSurge":"25%"}}},"status":{}}"#,
            "\n"
        )
    );
}

#[test]
fn unknown_keys_follow_sorted_and_unknown_kinds_are_sorted() {
    let cm = json!({"kind": "ConfigMap", "apiVersion": "v1", "metadata": {"name": "x", "zz": 1, "aa": 2},
        "data": {"b": "1", "a": "2"}});
    assert_eq!(
        text(to_vec(&cm)),
        "{\"kind\":\"ConfigMap\",\"apiVersion\":\"v1\",\"metadata\":{\"name\":\"x\",\"creationTimestamp\":null,\"aa\":2,\"zz\":1},\"data\":{\"a\":\"2\",\"b\":\"1\"}}\n"
    );
    let cr = json!({"kind": "Widget", "apiVersion": "example.com/v1", "spec": {"b": 1, "a": 2.0}});
    assert_eq!(
        text(to_vec(&cr)),
        "{\"apiVersion\":\"example.com/v1\",\"kind\":\"Widget\",\"spec\":{\"a\":2,\"b\":1}}\n"
    );
}

#[test]
fn omitempty_drops_empty_maps_lists_and_strings() {
    let cm = json!({"kind": "ConfigMap", "apiVersion": "v1",
        "metadata": {"name": "x", "labels": {}, "finalizers": [], "namespace": "", "generation": 0},
        "data": {}, "immutable": false});
    // `immutable` is a *bool: a present false prints.
    assert_eq!(
        text(to_vec(&cm)),
        "{\"kind\":\"ConfigMap\",\"apiVersion\":\"v1\",\"metadata\":{\"name\":\"x\",\"creationTimestamp\":null},\"immutable\":false}\n"
    );
}

#[test]
fn status_details_in_go_order() {
    let st = json!({"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
        "message": "x", "reason": "Invalid", "code": 422,
        "details": {"uid": "u", "kind": "Pod", "name": "p", "group": "",
            "retryAfterSeconds": 0,
            "causes": [{"field": "spec", "message": "m", "reason": "FieldValueRequired"}]}});
    assert_eq!(
        text(to_vec(&st)),
        "{\"kind\":\"Status\",\"apiVersion\":\"v1\",\"metadata\":{},\"status\":\"Failure\",\"message\":\"x\",\"reason\":\"Invalid\",\"details\":{\"name\":\"p\",\"kind\":\"Pod\",\"uid\":\"u\",\"causes\":[{\"reason\":\"FieldValueRequired\",\"message\":\"m\",\"field\":\"spec\"}]},\"code\":422}\n"
    );
}

#[test]
fn strings_escape_as_go() {
    let cm = json!({"kind": "ConfigMap", "apiVersion": "v1", "metadata": {"name": "x"},
        "data": {"k": "<a href=\"x\">&\u{2028}\u{2029}\u{1}\u{8}\u{c}\n\t\\é\u{7f}"}});
    let out = text(to_vec(&cm));
    assert!(
        out.contains(r#""k":"\u003ca href=\"x\"\u003e\u0026\u2028\u2029\u0001\b\f\n\t\\é"#),
        "{out}"
    );
}

#[test]
fn floats_as_go() {
    let mut out = Vec::new();
    for f in [
        1.0,
        0.5,
        1e21,
        1e20,
        1.5e-7,
        1e-6,
        123456789.125,
        -2.5e100,
        0.0,
    ] {
        encode::float(&mut out, f);
        out.push(b' ');
    }
    assert_eq!(
        text(out),
        "1 0.5 1e+21 100000000000000000000 1.5e-7 0.000001 123456789.125 -2.5e+100 0 "
    );
}

#[test]
fn storage_form_has_no_resource_version() {
    let cm = json!({"kind": "ConfigMap", "apiVersion": "v1",
        "metadata": {"name": "x", "resourceVersion": "5", "uid": "u"}});
    assert_eq!(
        text(storage_bytes(&cm)),
        "{\"kind\":\"ConfigMap\",\"apiVersion\":\"v1\",\"metadata\":{\"name\":\"x\",\"uid\":\"u\",\"creationTimestamp\":null}}\n"
    );
    let only =
        json!({"kind": "ConfigMap", "apiVersion": "v1", "metadata": {"resourceVersion": "5"}});
    assert_eq!(
        text(storage_bytes(&only)),
        "{\"kind\":\"ConfigMap\",\"apiVersion\":\"v1\",\"metadata\":{\"creationTimestamp\":null}}\n"
    );
}

#[test]
fn storage_form_of_an_unknown_kind_has_no_resource_version() {
    let cr = json!({"kind": "Widget", "apiVersion": "example.com/v1",
        "metadata": {"name": "w", "resourceVersion": "5"}, "spec": {"z": 1}});
    assert_eq!(
        text(storage_bytes(&cr)),
        "{\"apiVersion\":\"example.com/v1\",\"kind\":\"Widget\",\"metadata\":{\"name\":\"w\"},\"spec\":{\"z\":1}}\n"
    );
}

#[test]
fn every_served_kind_and_list_kind_is_in_the_table() {
    let table = Table::get();
    for res in crate::registry::resource::builtins() {
        assert!(
            table.kind(res.api_version, res.kind).is_some(),
            "{} {}",
            res.api_version,
            res.kind
        );
        assert!(
            table.kind(res.api_version, res.list_kind).is_some(),
            "{} {}",
            res.api_version,
            res.list_kind
        );
    }
}

#[test]
fn lists_and_watch_events() {
    let items = [json!({"metadata": {"name": "a"}, "data": {"k": "v"}})];
    assert_eq!(
        text(list(
            "ConfigMapList",
            "v1",
            &json!({"resourceVersion": "9", "continue": "c"}),
            &items,
            "ConfigMap"
        )),
        "{\"kind\":\"ConfigMapList\",\"apiVersion\":\"v1\",\"metadata\":{\"resourceVersion\":\"9\",\"continue\":\"c\"},\"items\":[{\"metadata\":{\"name\":\"a\",\"creationTimestamp\":null},\"data\":{\"k\":\"v\"}}]}\n"
    );
    let bookmark = json!({"kind": "Pod", "apiVersion": "v1",
        "metadata": {"resourceVersion": "12", "creationTimestamp": null}});
    assert_eq!(
        text(event("BOOKMARK", &bookmark)),
        "{\"type\":\"BOOKMARK\",\"object\":{\"kind\":\"Pod\",\"apiVersion\":\"v1\",\"metadata\":{\"resourceVersion\":\"12\",\"creationTimestamp\":null},\"spec\":{\"containers\":null},\"status\":{}}}\n"
    );
}

#[test]
fn table_rows_embed_objects_by_their_kind() {
    let t = json!({"kind": "Table", "apiVersion": "meta.k8s.io/v1", "metadata": {"resourceVersion": "3"},
        "columnDefinitions": [{"name": "Name", "type": "string", "format": "name", "description": "d", "priority": 0}],
        "rows": [{"cells": ["a", 1.0], "object": {"kind": "PartialObjectMetadata",
            "apiVersion": "meta.k8s.io/v1", "metadata": {"name": "a", "uid": "u"}}}]});
    assert_eq!(
        text(to_vec(&t)),
        concat!(
            r#"{"kind":"Table","apiVersion":"meta.k8s.io/v1","metadata":{"resourceVersion":"3"},"#,
            r#""columnDefinitions":[{"name":"Name","type":"string","format":"name","description":"d","priority":0}],"#,
            r#""rows":[{"cells":["a",1],"object":{"kind":"PartialObjectMetadata","apiVersion":"meta.k8s.io/v1","metadata":{"name":"a","uid":"u","creationTimestamp":null}}}]}"#,
            "\n"
        )
    );
}

#[test]
fn pretty_is_indented_without_newline() {
    let cm = json!({"kind": "ConfigMap", "apiVersion": "v1", "metadata": {"name": "x", "creationTimestamp": "2025-01-02T03:04:05Z"}, "data": {}});
    assert_eq!(
        text(indent(&to_vec(&cm))),
        "{\n  \"kind\": \"ConfigMap\",\n  \"apiVersion\": \"v1\",\n  \"metadata\": {\n    \"name\": \"x\",\n    \"creationTimestamp\": \"2025-01-02T03:04:05Z\"\n  }\n}"
    );
}

#[test]
fn pretty_rule_as_upstream_negotiation() {
    assert!(pretty_requested(Some("pretty=true"), None, None));
    assert!(pretty_requested(
        Some("a=b&pretty=1"),
        None,
        Some("kubectl/v1.35")
    ));
    assert!(!pretty_requested(
        Some("pretty=false"),
        None,
        Some("curl/8.5.0")
    ));
    assert!(!pretty_requested(Some("pretty=yes"), None, None));
    assert!(pretty_requested(Some("pretty="), None, Some("curl/8.5.0")));
    assert!(pretty_requested(None, None, Some("curl/8.5.0")));
    assert!(pretty_requested(None, None, Some("Wget/1.21")));
    assert!(pretty_requested(None, None, Some("Mozilla/5.0 (X11)")));
    assert!(!pretty_requested(None, None, Some("wget/1.21")));
    assert!(!pretty_requested(
        None,
        None,
        Some("kubectl/v1.35.2 (linux/amd64)")
    ));
    assert!(pretty_requested(
        None,
        Some("application/json;pretty=1"),
        Some("kubectl")
    ));
}

mod properties {
    use proptest::prelude::*;
    use serde_json::{Map, Value};

    use super::super::*;

    fn json_value() -> impl Strategy<Value = Value> {
        let key = prop_oneof![
            Just("metadata".to_string()),
            Just("spec".to_string()),
            Just("status".to_string()),
            Just("name".to_string()),
            Just("labels".to_string()),
            Just("containers".to_string()),
            Just("ports".to_string()),
            Just("template".to_string()),
            Just("replicas".to_string()),
            Just("creationTimestamp".to_string()),
            "[a-z<&>\u{2028}]{0,4}",
        ];
        let leaf = prop_oneof![
            Just(Value::Null),
            any::<bool>().prop_map(Value::Bool),
            any::<i64>().prop_map(Value::from),
            // Values serde_json reads back exactly (without its
            // `float_roundtrip` feature, long mantissas and exponents past
            // 22 come back as a neighbouring float).
            (-1_000_000i32..1_000_000).prop_map(|i| Value::from(f64::from(i) / 64.0)),
            prop::sample::select(vec![1e21, 1.5e-7, 2.5e-10, 2e22, -4e-8]).prop_map(Value::from),
            "[ -~\u{1}\u{7f}é\u{2029}]{0,6}".prop_map(Value::String),
        ];
        leaf.prop_recursive(5, 64, 6, move |inner| {
            prop_oneof![
                prop::collection::vec(inner.clone(), 0..4).prop_map(Value::Array),
                prop::collection::vec((key.clone(), inner), 0..6)
                    .prop_map(|kv| Value::Object(kv.into_iter().collect::<Map<_, _>>())),
            ]
        })
    }

    fn numbers_as_f64(v: &Value) -> Value {
        match v {
            Value::Number(n) => n.as_f64().map_or(Value::Null, Value::from),
            Value::Array(a) => Value::Array(a.iter().map(numbers_as_f64).collect()),
            Value::Object(m) => Value::Object(
                m.iter()
                    .map(|(k, v)| (k.clone(), numbers_as_f64(v)))
                    .collect(),
            ),
            other => other.clone(),
        }
    }

    proptest! {
        /// Whatever the shape, the encoder writes valid JSON, a second
        /// round trip changes nothing (as Go's decode/encode is stable),
        /// and kinds the table does not know keep every value.
        #[test]
        fn encoding_is_valid_and_stable(
            body in json_value(),
            kind in prop::sample::select(vec!["ConfigMap", "Pod", "Deployment", "Service", "Widget"]),
        ) {
            let mut obj = match body {
                Value::Object(m) => Value::Object(m),
                other => serde_json::json!({"spec": other}),
            };
            let api_version = if kind == "Deployment" { "apps/v1" } else { "v1" };
            obj["kind"] = Value::from(kind);
            obj["apiVersion"] = Value::from(api_version);
            let once = to_vec(&obj);
            prop_assert_eq!(once.last(), Some(&b'\n'));
            let parsed: Value = serde_json::from_slice(&once).expect("valid JSON");
            prop_assert_eq!(to_vec(&parsed), once.clone());
            if kind == "Widget" {
                // Go prints 2.0 as 2: compare numbers by value.
                prop_assert_eq!(numbers_as_f64(&parsed), numbers_as_f64(&obj));
            }
            let pretty = indent(&once);
            let reparsed: Value = serde_json::from_slice(&pretty).expect("valid JSON");
            prop_assert_eq!(reparsed, parsed);
        }
    }
}
