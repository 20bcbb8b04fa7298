//! Hand-built wire bytes: Go's decoding rules at the edges, every error
//! path with its message, and property tests that `decode` never panics.

use proptest::prelude::*;
use serde_json::json;

use super::{decode, envelope, testdata};
use crate::codec::protobuf::{PREFIX, ProtobufError, kinds};

fn varint(mut v: u64) -> Vec<u8> {
    let mut out = Vec::new();
    while v >= 0x80 {
        out.push((v as u8) | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
    out
}

fn tag(n: u32, wire: u8) -> Vec<u8> {
    varint(u64::from(n) << 3 | u64::from(wire))
}

/// Field `n` as a varint.
fn v(n: u32, value: u64) -> Vec<u8> {
    [tag(n, 0), varint(value)].concat()
}

/// Field `n` as length-delimited bytes.
fn b(n: u32, bytes: &[u8]) -> Vec<u8> {
    [tag(n, 2), varint(bytes.len() as u64), bytes.to_vec()].concat()
}

fn err(api_version: &str, kind: &str, raw: &[u8]) -> String {
    decode(&envelope(api_version, kind, raw))
        .map(|d| d.object.to_string())
        .unwrap_err()
        .to_string()
}

fn ok(api_version: &str, kind: &str, raw: &[u8]) -> serde_json::Value {
    decode(&envelope(api_version, kind, raw))
        .unwrap_or_else(|e| panic!("{e}"))
        .object
}

#[test]
fn envelope_errors() {
    assert_eq!(decode(b""), Err(ProtobufError::MissingPrefix));
    assert_eq!(decode(b"k8s"), Err(ProtobufError::MissingPrefix));
    assert_eq!(
        decode(b"{\"kind\":\"Pod\"}"),
        Err(ProtobufError::MissingPrefix)
    );
    assert_eq!(decode(&PREFIX), Err(ProtobufError::EmptyBody));
    let no_kind = [PREFIX.to_vec(), b(1, &b(1, b"v1"))].concat();
    assert_eq!(
        decode(&no_kind),
        Err(ProtobufError::MissingTypeMeta("kind"))
    );
    let no_version = [PREFIX.to_vec(), b(1, &b(2, b"Pod"))].concat();
    assert_eq!(
        decode(&no_version),
        Err(ProtobufError::MissingTypeMeta("apiVersion"))
    );
    assert_eq!(
        err("example.com/v1", "Widget", &[]),
        "protobuf decoding of kind \"Widget\" in apiVersion \"example.com/v1\" is not supported"
    );
    assert_eq!(
        err("v1", "Deployment", &[]),
        "protobuf decoding of kind \"Deployment\" in apiVersion \"v1\" is not supported"
    );
    let truncated = [PREFIX.to_vec(), vec![0x0a, 0x10, 0x0a]].concat();
    assert!(
        decode(&truncated)
            .unwrap_err()
            .to_string()
            .contains("envelope")
    );
}

#[test]
fn errors_name_the_json_path() {
    // Deployment.spec(2).replicas(1) sent as bytes.
    assert_eq!(
        err("apps/v1", "Deployment", &b(2, &b(1, b"x"))),
        "invalid protobuf body for apps/v1 Deployment at spec.replicas: \
         wrong wire type length-delimited for a int32 field"
    );
    // Pod.spec(2).containers(2)[1].name(1) sent as a varint.
    let containers = [b(2, &b(1, b"a")), b(2, &v(1, 7))].concat();
    assert_eq!(
        err("v1", "Pod", &b(2, &containers)),
        "invalid protobuf body for v1 Pod at spec.containers[1].name: \
         wrong wire type varint for a string field"
    );
    // ResourceQuota.spec(2).hard(1)["cpu"] = Quantity{string(1): "lots"}.
    let entry = [b(1, b"cpu"), b(2, &b(1, b"lots"))].concat();
    assert_eq!(
        err("v1", "ResourceQuota", &b(2, &b(1, &entry))),
        "invalid protobuf body for v1 ResourceQuota at spec.hard[\"cpu\"]: \
         quantity \"lots\" does not match the quantity grammar"
    );
    // Service.spec(2).ports(1)[0].targetPort(4) = IntOrString{type: 7}.
    let port = b(4, &v(1, 7));
    assert_eq!(
        err("v1", "Service", &b(2, &b(1, &port))),
        "invalid protobuf body for v1 Service at spec.ports[0].targetPort: \
         IntOrString has unknown type 7"
    );
    // metadata(1).creationTimestamp(8) in the year 300000.
    let time = b(8, &v(1, 9_000_000_000_000));
    assert!(err("v1", "ConfigMap", &b(1, &time)).contains("at metadata.creationTimestamp: time"));
    // metadata(1).managedFields(17)[0].fieldsV1(7).Raw(1) that is not JSON.
    let fields = b(17, &b(7, &b(1, b"{not json")));
    assert!(
        err("v1", "ConfigMap", &b(1, &fields))
            .contains("at metadata.managedFields[0].fieldsV1: embedded object is not valid JSON")
    );
    // CRD spec(2).versions(7)[0].schema(4).openAPIV3Schema(1).maximum(9) = NaN.
    let nan = [tag(9, 1), f64::NAN.to_bits().to_le_bytes().to_vec()].concat();
    let crd = b(2, &b(7, &b(4, &b(1, &nan))));
    assert!(
        err("apiextensions.k8s.io/v1", "CustomResourceDefinition", &crd)
            .contains("cannot be represented in JSON")
    );
}

#[test]
fn deep_nesting_is_an_error_not_a_stack_overflow() {
    // JSONSchemaProps.not(28) nested 5000 deep.
    let mut props = Vec::new();
    for _ in 0..5000 {
        props = b(28, &props);
    }
    let crd = b(2, &b(7, &b(4, &b(1, &props))));
    let message = err("apiextensions.k8s.io/v1", "CustomResourceDefinition", &crd);
    assert!(message.contains("nested more than 100 levels"), "{message}");
    // RawExtension holding itself, over and over.
    let mut body = envelope("v1", "ConfigMap", &[]);
    for _ in 0..200 {
        body = envelope("apps/v1", "ControllerRevision", &b(2, &b(1, &body)));
    }
    assert!(decode(&body).is_err());
}

#[test]
fn go_decoding_rules() {
    // Unknown fields, including groups and every wire type, are skipped.
    let extras = [
        v(99, 1),
        b(98, b"zz"),
        tag(97, 1),
        vec![0; 8],
        tag(96, 5),
        vec![0; 4],
        tag(95, 3),
        v(1, 1),
        tag(95, 4),
    ]
    .concat();
    let meta = b(1, &b(1, b"cm"));
    assert_eq!(
        ok("v1", "ConfigMap", &[meta.clone(), extras].concat()),
        json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "cm"}})
    );
    // A singular message seen twice is merged; a scalar seen twice keeps the last.
    let twice = [b(1, &b(1, b"a")), b(1, &b(3, b"ns")), b(1, &b(1, b"b"))].concat();
    assert_eq!(
        ok("v1", "ConfigMap", &twice)["metadata"],
        json!({"name": "b", "namespace": "ns"})
    );
    // int32 keeps the low 32 bits; bool is any non-zero varint.
    let spec = [v(1, (1 << 32) + 5), v(7, 2)].concat();
    let json = ok("apps/v1", "Deployment", &b(2, &spec));
    assert_eq!(json["spec"]["replicas"], json!(5));
    assert_eq!(json["spec"]["paused"], json!(true));
    // Strings that are not UTF-8 get U+FFFD, as encoding/json does.
    assert_eq!(
        ok("v1", "ConfigMap", &b(1, &b(1, b"a\xffb")))["metadata"]["name"],
        json!("a\u{fffd}b")
    );
    // Map entries: missing key is "", later duplicates win, bytes are base64.
    let data = [b(2, &b(2, b"v")), b(2, &[b(1, b"k"), b(2, b"1")].concat())].concat();
    let binary = b(3, &[b(1, b"bin"), b(2, &[0, 255])].concat());
    let dup = b(2, &[b(1, b"k"), b(2, b"2")].concat());
    assert_eq!(
        ok("v1", "ConfigMap", &[data, binary, dup].concat()),
        json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {},
               "data": {"": "v", "k": "2"}, "binaryData": {"bin": "AP8="}})
    );
}

#[test]
fn repeated_scalars_packed_or_not() {
    // Job.spec(2).podFailurePolicy(11).rules(1)[0].onExitCodes(2).values(3)
    let job = |codes: Vec<u8>| b(2, &b(11, &b(1, &b(2, &codes))));
    let unpacked = [v(3, 1), v(3, 2), v(3, u64::MAX)].concat();
    let packed = b(3, &[varint(1), varint(2), varint(u64::MAX)].concat());
    let mixed = [v(3, 1), b(3, &[varint(2), varint(u64::MAX)].concat())].concat();
    for codes in [unpacked, packed, mixed] {
        let json = ok("batch/v1", "Job", &job(codes));
        assert_eq!(
            json["spec"]["podFailurePolicy"]["rules"][0]["onExitCodes"]["values"],
            json!([1, 2, -1])
        );
    }
    let broken = b(3, &[0x80]);
    assert!(err("batch/v1", "Job", &job(broken)).contains("varint"));
}

#[test]
fn every_truncation_of_a_real_body_is_handled() {
    for name in ["deployment", "certificate-approve", "ingress", "quota"] {
        let body = std::fs::read(testdata().join(format!("kubectl-1.35/{name}.pb"))).unwrap();
        for end in 0..body.len() {
            let _ = decode(&body[..end]);
        }
    }
}

fn fixtures() -> Vec<Vec<u8>> {
    let dir = testdata().join("kubectl-1.35");
    let mut out: Vec<_> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "pb"))
        .map(|p| std::fs::read(p).unwrap())
        .collect();
    out.sort();
    out
}

/// Random but well-formed wire messages: nested fields with small numbers,
/// so they hit known fields of every type with every wire type.
fn wire_message() -> impl Strategy<Value = Vec<u8>> {
    let leaf = prop_oneof![
        (1u32..12, any::<u64>()).prop_map(|(n, x)| v(n, x)),
        (1u32..12, proptest::collection::vec(any::<u8>(), 0..12)).prop_map(|(n, x)| b(n, &x)),
        (1u32..12, any::<u64>()).prop_map(|(n, x)| [tag(n, 1), x.to_le_bytes().to_vec()].concat()),
        (1u32..12, any::<u32>()).prop_map(|(n, x)| [tag(n, 5), x.to_le_bytes().to_vec()].concat()),
        (1u32..12).prop_map(|n| b(n, br#"{"a":1}"#)),
        (1u32..12).prop_map(|n| b(n, b"100m")),
    ];
    leaf.prop_recursive(4, 64, 8, |inner| {
        (1u32..12, proptest::collection::vec(inner, 0..6))
            .prop_map(|(n, parts)| b(n, &parts.concat()))
    })
    .prop_map(|m| m.to_vec())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn never_panics_on_arbitrary_bytes(bytes in proptest::collection::vec(any::<u8>(), 0..256)) {
        let _ = decode(&bytes);
    }

    #[test]
    fn never_panics_after_the_prefix(bytes in proptest::collection::vec(any::<u8>(), 0..256)) {
        let _ = decode(&[PREFIX.to_vec(), bytes].concat());
    }

    #[test]
    fn never_panics_on_random_messages_of_every_kind(
        kind in any::<proptest::sample::Index>(),
        parts in proptest::collection::vec(wire_message(), 0..8),
    ) {
        let kinds = kinds().unwrap();
        let (api_version, kind) = kind.get(&kinds);
        let _ = decode(&envelope(api_version, kind, &parts.concat()));
    }

    #[test]
    fn never_panics_on_mutated_kubectl_bodies(
        fixture in any::<proptest::sample::Index>(),
        edits in proptest::collection::vec((any::<proptest::sample::Index>(), any::<u8>()), 1..6),
    ) {
        let fixtures = fixtures();
        let mut body = fixture.get(&fixtures).clone();
        for (at, byte) in edits {
            let i = at.index(body.len());
            body[i] = byte;
        }
        let _ = decode(&body);
    }
}
