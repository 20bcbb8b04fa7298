//! Tests of the `ConversionReview` checks; the tables follow upstream's
//! `webhook_converter_test.go` (facts, not code).

use proptest::prelude::*;
use serde_json::{Value, json};

use super::*;

fn widget(version: &str, name: &str) -> Value {
    json!({"apiVersion": format!("foo/{version}"), "kind": "Widget",
           "metadata": {"name": name, "namespace": "ns", "uid": "u-1"}, "spec": {"a": 1}})
}

fn review(version: ReviewVersion, objects: Vec<Value>) -> Review {
    let single = objects.len() == 1;
    Review {
        version,
        uid: "uid".into(),
        desired_api_version: "foo/v2".into(),
        gvk: objects.first().map(gvk_string).unwrap_or_default(),
        objects,
        single,
    }
}

fn answer(version: &str, uid: &str, status: &str, objects: Value) -> Vec<u8> {
    serde_json::to_vec(&json!({
        "apiVersion": format!("apiextensions.k8s.io/{version}"), "kind": "ConversionReview",
        "response": {"uid": uid, "result": {"status": status}, "convertedObjects": objects}
    }))
    .unwrap_or_default()
}

#[test]
fn pick_first_supported_review_version() {
    assert_eq!(ReviewVersion::pick(["vx"]), None);
    assert_eq!(
        ReviewVersion::pick(["v1", "v1beta1", "v2"]),
        Some(ReviewVersion::V1)
    );
    assert_eq!(
        ReviewVersion::pick(["v3", "v1beta1", "v1"]),
        Some(ReviewVersion::V1beta1)
    );
}

#[test]
fn request_body_shape() {
    let r = review(ReviewVersion::V1, vec![widget("v1", "a")]);
    let body: Value = serde_json::from_slice(&r.request_body()).unwrap_or_default();
    assert_eq!(body["apiVersion"], "apiextensions.k8s.io/v1");
    assert_eq!(body["kind"], "ConversionReview");
    assert_eq!(body["request"]["uid"], "uid");
    assert_eq!(body["request"]["desiredAPIVersion"], "foo/v2");
    assert_eq!(body["request"]["objects"][0]["metadata"]["name"], "a");
    assert_eq!(
        body["response"],
        json!({"uid": "", "convertedObjects": null, "result": {"metadata": {}}})
    );
}

#[test]
fn gvk_strings_as_go() {
    assert_eq!(gvk_string(&widget("v1", "a")), "foo/v1, Kind=Widget");
    assert_eq!(
        gvk_string(&json!({"apiVersion": "v1", "kind": "Pod"})),
        "/v1, Kind=Pod"
    );
    assert_eq!(gvk_string(&json!({})), "/, Kind=");
}

/// Upstream's `TestGetConvertedObjectsFromResponse` cases, as the whole
/// error text Skein returns for a single object.
#[test]
fn response_envelope_checks() {
    let obj = widget("v1", "a");
    let v1 = review(ReviewVersion::V1, vec![obj.clone()]);
    let beta = review(ReviewVersion::V1beta1, vec![obj.clone()]);
    let converted = json!([widget("v2", "a")]);
    let prefix = "conversion webhook for foo/v1, Kind=Widget failed: ";
    let cases: Vec<(&Review, Vec<u8>, &str)> = vec![
        (&v1, answer("v1", "", "Success", converted.clone()), r#"expected response.uid="uid", got """#),
        (&v1, answer("v1", "other", "Success", converted.clone()), r#"expected response.uid="uid", got "other""#),
        (
            &v1,
            br#"{"response":{"uid":"uid","result":{"status":"Success"}}}"#.to_vec(),
            "expected webhook response of apiextensions.k8s.io/v1, Kind=ConversionReview, got /, Kind=",
        ),
        (
            &v1,
            answer("v1beta1", "uid", "Success", converted.clone()),
            "expected webhook response of apiextensions.k8s.io/v1, Kind=ConversionReview, got apiextensions.k8s.io/v1beta1, Kind=ConversionReview",
        ),
        (&v1, answer("v1", "uid", "", converted.clone()), "response.result.status was '', not 'Success'"),
        (&v1, answer("v1", "uid", "Failure", converted.clone()), "response.result.status was 'Failure', not 'Success'"),
        (
            &v1,
            br#"{"apiVersion":"apiextensions.k8s.io/v1","kind":"ConversionReview","response":{"uid":"uid","result":{"status":"Failure","message":"some failure message"}}}"#.to_vec(),
            "some failure message",
        ),
        (&v1, br#"{"apiVersion":"apiextensions.k8s.io/v1","kind":"ConversionReview"}"#.to_vec(), "no response provided"),
        (&beta, br#"{"kind":"ConversionReview"}"#.to_vec(), "no response provided"),
        (&beta, answer("v1beta1", "", "Failure", converted.clone()), "response.result.status was 'Failure', not 'Success'"),
    ];
    for (r, body, want) in cases {
        assert_eq!(
            check_response(r, &body),
            Err(format!("{prefix}{want}")),
            "{}",
            String::from_utf8_lossy(&body)
        );
    }
    let bad_json = check_response(&v1, b"not json").unwrap_err();
    assert!(bad_json.starts_with(prefix), "{bad_json}");
    // v1beta1 checks neither the uid nor the kind.
    let ok = check_response(
        &beta,
        br#"{"response":{"result":{"status":"Success"},"convertedObjects":[{"apiVersion":"foo/v2","kind":"Widget","metadata":{"name":"a","namespace":"ns","uid":"u-1"}}]}}"#,
    );
    assert_eq!(ok.map(|v| v.len()), Ok(1));
}

#[test]
fn converted_objects_checks_single() {
    let r = review(ReviewVersion::V1, vec![widget("v1", "a")]);
    let with = |f: &dyn Fn(&mut Value)| {
        let mut o = widget("v2", "a");
        f(&mut o);
        answer("v1", "uid", "Success", json!([o]))
    };
    let p = "conversion webhook for foo/v1, Kind=Widget";
    let cases: Vec<(Vec<u8>, String)> = vec![
        (
            answer("v1", "uid", "Success", json!([])),
            format!("{p} returned 0 objects, expected 1"),
        ),
        (
            answer(
                "v1",
                "uid",
                "Success",
                json!([widget("v2", "a"), widget("v2", "a")]),
            ),
            format!("{p} returned 2 objects, expected 1"),
        ),
        (
            with(&|o| o["apiVersion"] = json!("foo/v3")),
            format!(
                "{p} returned invalid object at index 0: invalid groupVersion (expected foo/v2, received foo/v3)"
            ),
        ),
        (
            with(&|o| o["kind"] = json!("Gadget")),
            format!(
                "{p} returned invalid object at index 0: invalid kind (expected Widget, received Gadget)"
            ),
        ),
        (
            with(&|o| o["metadata"]["name"] = json!("b")),
            format!("{p} returned invalid object: must have the same name: a != b"),
        ),
        (
            with(&|o| o["metadata"]["namespace"] = json!("other")),
            format!("{p} returned invalid object: must have the same namespace: ns != other"),
        ),
        (
            with(&|o| o["metadata"]["uid"] = json!("u-2")),
            format!("{p} returned invalid object: must have the same UID: u-1 != u-2"),
        ),
        (
            with(&|o| o["metadata"]["labels"] = json!({"some/non-qualified/label": "x"})),
            format!(
                "{p} returned invalid metadata: metadata.labels: Invalid value: \"some/non-qualified/label\": {}",
                names::qualified_name("some/non-qualified/label").join("")
            ),
        ),
    ];
    for (body, want) in cases {
        assert_eq!(check_response(&r, &body), Err(want));
    }
    let no_kind = answer("v1", "uid", "Success", json!([{"apiVersion": "foo/v2"}]));
    assert_eq!(
        check_response(&r, &no_kind),
        Err(r#"Object 'Kind' is missing in '{"apiVersion":"foo/v2"}'"#.to_string())
    );
}

#[test]
fn converted_objects_checks_list() {
    let r = review(
        ReviewVersion::V1,
        vec![widget("v1", "a"), widget("v1", "b")],
    );
    let p = "conversion webhook for foo/v1, Kind=Widget";
    let mut second = widget("v2", "b");
    second["kind"] = json!("Gadget");
    let body = answer("v1", "uid", "Success", json!([widget("v2", "a"), second]));
    assert_eq!(
        check_response(&r, &body),
        Err(format!(
            "{p} returned invalid converted object at index 1: invalid kind (expected Widget, received Gadget)"
        ))
    );
    let body = answer(
        "v1",
        "uid",
        "Success",
        json!([widget("v2", "b"), widget("v2", "a")]),
    );
    assert_eq!(
        check_response(&r, &body),
        Err(format!(
            "{p} returned invalid converted object at index 0: must have the same name: a != b"
        ))
    );
    let mut bad = widget("v2", "b");
    bad["metadata"]["annotations"] = json!({"a": 1});
    let body = answer("v1", "uid", "Success", json!([widget("v2", "a"), bad]));
    assert_eq!(
        check_response(&r, &body),
        Err(format!(
            "{p} returned invalid metadata in object at index 1: metadata.annotations[a] must be a string, but is int64 in converted object"
        ))
    );
}

#[test]
fn success_keeps_original_metadata_but_labels_and_annotations() {
    let mut original = widget("v1", "a");
    original["metadata"]["resourceVersion"] = json!("7");
    original["metadata"]["labels"] = json!({"x": "1"});
    let r = review(ReviewVersion::V1, vec![original]);
    let mut conv = widget("v2", "a");
    conv["metadata"]["resourceVersion"] = json!("999");
    conv["metadata"]["labels"] = json!({"x": "2"});
    conv["metadata"]["annotations"] = json!({"converted-by": "hook"});
    conv["spec"] = json!({"b": 2});
    let out = check_response(&r, &answer("v1", "uid", "Success", json!([conv])));
    assert_eq!(
        out,
        Ok(vec![json!({
            "apiVersion": "foo/v2", "kind": "Widget",
            "metadata": {"name": "a", "namespace": "ns", "uid": "u-1", "resourceVersion": "7",
                         "labels": {"x": "2"}, "annotations": {"converted-by": "hook"}},
            "spec": {"b": 2}
        })])
    );
}

/// Upstream's `TestRestoreObjectMeta` table.
#[test]
fn restore_object_meta_table() {
    let full =
        json!({"foo": "bar", "labels": {"a": "A", "b": "B"}, "annotations": {"a": "1", "b": "2"}});
    let changed = json!({"foo": "abc", "labels": {"a": "AA", "b": "B"}, "annotations": {"a": "1", "b": "22"}});
    let restored = json!({"foo": "bar", "labels": {"a": "AA", "b": "B"}, "annotations": {"a": "1", "b": "22"}});
    let cases: Vec<(&str, Value, Value, Result<Value, ()>)> = vec![
        (
            "no converted metadata",
            json!({"metadata": {}, "spec": {}}),
            json!({"spec": {}}),
            Err(()),
        ),
        (
            "invalid converted metadata",
            json!({"metadata": {}, "spec": {}}),
            json!({"metadata": ["foo"]}),
            Err(()),
        ),
        (
            "no original metadata",
            json!({"spec": {}}),
            json!({"metadata": {}, "spec": {}}),
            Ok(json!({"metadata": {}, "spec": {}})),
        ),
        (
            "invalid original metadata",
            json!({"metadata": ["foo"]}),
            json!({"metadata": {}, "spec": {}}),
            Err(()),
        ),
        (
            "changed label, annotations and non-label",
            json!({"metadata": full.clone(), "spec": {}}),
            json!({"metadata": changed.clone(), "spec": {}}),
            Ok(json!({"metadata": restored.clone(), "spec": {}})),
        ),
        (
            "added labels and annotations",
            json!({"metadata": {"foo": "bar"}, "spec": {}}),
            json!({"metadata": changed.clone(), "spec": {}}),
            Ok(json!({"metadata": restored.clone(), "spec": {}})),
        ),
        (
            "added, with nil before",
            json!({"metadata": {"foo": "bar", "labels": null, "annotations": null}, "spec": {}}),
            json!({"metadata": changed.clone(), "spec": {}}),
            Ok(json!({"metadata": restored.clone(), "spec": {}})),
        ),
        (
            "removed labels and annotations",
            json!({"metadata": restored.clone(), "spec": {}}),
            json!({"metadata": {"foo": "abc"}, "spec": {}}),
            Ok(json!({"metadata": {"foo": "bar"}, "spec": {}})),
        ),
        (
            "nil'ed labels and annotations",
            json!({"metadata": restored.clone(), "spec": {}}),
            json!({"metadata": {"foo": "abc", "labels": null, "annotations": null}, "spec": {}}),
            Ok(json!({"metadata": {"foo": "bar"}, "spec": {}})),
        ),
        (
            "nil values",
            json!({"metadata": {"foo": "bar"}, "spec": {}}),
            json!({"metadata": {"labels": {"a": null, "b": "B"}, "annotations": {"a": null, "b": "22"}}, "spec": {}}),
            Err(()),
        ),
        (
            "invalid label key",
            json!({"metadata": {}}),
            json!({"metadata": {"labels": {"some/non-qualified/label": "x"}}}),
            Err(()),
        ),
        (
            "invalid annotation key",
            json!({"metadata": {}}),
            json!({"metadata": {"annotations": {"some/non-qualified/label": "x"}}}),
            Err(()),
        ),
        (
            "invalid label value",
            json!({"metadata": {}}),
            json!({"metadata": {"labels": {"foo": "üäö"}}}),
            Err(()),
        ),
        (
            "too big label value",
            json!({"metadata": {}}),
            json!({"metadata": {"labels": {"foo": "x".repeat(64)}}}),
            Err(()),
        ),
        (
            "too big annotation value",
            json!({"metadata": {}}),
            json!({"metadata": {"annotations": {"foo": "x".repeat(256 * 1024 + 1)}}}),
            Err(()),
        ),
    ];
    for (name, original, mut converted, want) in cases {
        let got = restore_object_meta(&original, &mut converted);
        match want {
            Ok(expected) => {
                assert_eq!(got, Ok(()), "{name}");
                assert_eq!(converted, expected, "{name}");
            }
            Err(()) => assert!(got.is_err(), "{name}: {converted}"),
        }
    }
}

#[test]
fn annotation_errors_use_upstream_path() {
    let mut m = Map::new();
    m.insert("foo".into(), json!("x".repeat(256 * 1024 + 1)));
    assert_eq!(
        aggregate(&annotation_errors(&m)),
        "metadata.annotation: Too long: may not be more than 262144 bytes"
    );
}

proptest! {
    /// Any response body is answered with objects or an error, never a
    /// panic.
    #[test]
    fn never_panics_on_any_body(body in proptest::collection::vec(any::<u8>(), 0..256)) {
        let r = review(ReviewVersion::V1, vec![widget("v1", "a")]);
        let _ = check_response(&r, &body);
    }

    /// Any JSON shaped as a successful review with arbitrary objects is
    /// handled without panic; what passes has the desired version and the
    /// original's name.
    #[test]
    fn successful_shapes_keep_identity(
        name in "[a-z]{1,5}",
        api in prop_oneof![Just("foo/v2"), Just("foo/v1"), Just("v2"), Just("")],
        labels in proptest::collection::btree_map("[a-z/.]{0,6}", "[a-z]{0,4}", 0..3),
        meta_kind in 0..3u8,
    ) {
        let r = review(ReviewVersion::V1, vec![widget("v1", "a")]);
        let meta = match meta_kind {
            0 => json!({"name": name, "namespace": "ns", "uid": "u-1", "labels": labels}),
            1 => json!(null),
            _ => json!([name]),
        };
        let body = answer("v1", "uid", "Success",
            json!([{"apiVersion": api, "kind": "Widget", "metadata": meta}]));
        if let Ok(objs) = check_response(&r, &body) {
            prop_assert_eq!(objs.len(), 1);
            prop_assert_eq!(&objs[0]["apiVersion"], "foo/v2");
            prop_assert_eq!(&objs[0]["metadata"]["name"], "a");
        }
    }
}
