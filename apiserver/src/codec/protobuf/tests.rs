//! End-to-end tests of [`super::decode`]: real kubectl bodies, bodies
//! encoded by the independent `k8s-pb` prost types, malformed input.

use std::path::{Path, PathBuf};

use serde_json::{Value as Json, json};

use super::*;

mod encoded;
mod malformed;

fn testdata() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("src/codec/testdata")
}

/// Pretty JSON of both sides, so a failing assertion shows a readable diff.
#[track_caller]
fn assert_json_eq(got: &Json, want: &Json, what: &str) {
    if got != want {
        panic!(
            "{what}: decoded JSON differs\n--- decoded\n{}\n--- expected\n{}",
            serde_json::to_string_pretty(got).unwrap(),
            serde_json::to_string_pretty(want).unwrap()
        );
    }
}

/// A `k8s\0` body around `raw`, as client-go's protobuf serializer writes it.
fn envelope(api_version: &str, kind: &str, raw: &[u8]) -> Vec<u8> {
    use prost::Message as _;
    let unknown = k8s_pb::apimachinery::pkg::runtime::Unknown {
        type_meta: Some(k8s_pb::apimachinery::pkg::runtime::TypeMeta {
            api_version: Some(api_version.into()),
            kind: Some(kind.into()),
        }),
        raw: Some(raw.to_vec()),
        content_encoding: Some(String::new()),
        content_type: Some(String::new()),
    };
    let mut out = PREFIX.to_vec();
    unknown.encode(&mut out).unwrap();
    out
}

/// Every body kubectl 1.32/1.35 and Helm 3.17/4.1 sent as protobuf in the
/// capture session (see testdata/README.md) decodes. Where kubectl also
/// printed the object (`<name>.json`, from `--dry-run=client -o json`: the
/// same Go struct through encoding/json) the decoded JSON equals it; the
/// rest are compared with reviewed `<name>.golden.json` files.
#[test]
fn captured_bodies_decode_to_client_json() {
    let mut compared = 0;
    for version in ["kubectl-1.32", "kubectl-1.35", "helm-3.17", "helm-4.1"] {
        let dir = testdata().join(version);
        let mut names: Vec<_> = std::fs::read_dir(&dir)
            .unwrap()
            .map(|e| e.unwrap().path())
            .filter(|p| p.extension().is_some_and(|e| e == "pb"))
            .collect();
        names.sort();
        assert!(!names.is_empty(), "{version}: no bodies");
        for pb in names {
            let what = format!("{version}/{}", pb.file_name().unwrap().to_string_lossy());
            let body = std::fs::read(&pb).unwrap();
            let decoded = decode(&body).unwrap_or_else(|e| panic!("{what}: {e}"));
            let printed = pb.with_extension("json");
            let golden = pb.with_extension("golden.json");
            let want: Json = if printed.exists() {
                compared += 1;
                let mut want = serde_json::from_slice(&std::fs::read(&printed).unwrap()).unwrap();
                drop_null_creation_timestamps(&mut want);
                want
            } else if std::env::var_os("CODEC_BLESS").is_some() {
                let text = serde_json::to_string_pretty(&decoded.object).unwrap();
                std::fs::write(&golden, text + "\n").unwrap();
                continue;
            } else {
                serde_json::from_slice(
                    &std::fs::read(&golden).unwrap_or_else(|e| panic!("{what}: {e}")),
                )
                .unwrap()
            };
            assert_eq!(decoded.api_version, want["apiVersion"], "{what}");
            assert_eq!(decoded.kind, want["kind"], "{what}");
            assert_json_eq(&decoded.object, &want, &what);
        }
    }
    assert!(
        compared >= 40,
        "compared with kubectl's own JSON: {compared}"
    );
}

/// kubectl before 1.34 (apimachinery < 0.34) prints a zero
/// `creationTimestamp` as `null`; since then `omitzero` drops it, and the
/// decoder follows the newer tags. That is the one difference between the
/// versions' JSON for the same bytes, so it is normalised away here.
fn drop_null_creation_timestamps(json: &mut Json) {
    match json {
        Json::Object(map) => {
            if map.get("creationTimestamp") == Some(&Json::Null) {
                map.remove("creationTimestamp");
            }
            map.values_mut().for_each(drop_null_creation_timestamps);
        }
        Json::Array(items) => items.iter_mut().for_each(drop_null_creation_timestamps),
        _ => {}
    }
}

#[test]
fn secret_data_is_base64_and_pointers_keep_zero() {
    let body = std::fs::read(testdata().join("kubectl-1.35/secret-generic.pb")).unwrap();
    let decoded = decode(&body).unwrap();
    assert_eq!(decoded.object["data"], json!({"a": "Yg==", "empty": ""}));
    assert_eq!(decoded.object["metadata"], json!({"name": "s1"}));
    let body = std::fs::read(testdata().join("kubectl-1.35/deployment.pb")).unwrap();
    let decoded = decode(&body).unwrap();
    assert_eq!(decoded.object["spec"]["replicas"], json!(0));
}

/// Helm stores `base64(gzip(release JSON))` as the bytes of
/// `data.release`; JSON carries those bytes base64-encoded once more.
#[test]
fn helm_release_payload_survives() {
    use base64::Engine as _;
    let engine = base64::engine::general_purpose::STANDARD;
    for version in ["helm-3.17", "helm-4.1"] {
        let body = std::fs::read(testdata().join(version).join("release-update.pb")).unwrap();
        let decoded = decode(&body).unwrap();
        assert_eq!(decoded.object["type"], json!("helm.sh/release.v1"));
        let outer = decoded.object["data"]["release"].as_str().unwrap();
        let inner = engine.decode(engine.decode(outer).unwrap()).unwrap();
        assert_eq!(&inner[..2], &[0x1f, 0x8b], "{version}: gzip magic");
    }
}

#[test]
fn every_kind_decodes_from_an_empty_message() {
    let kinds = kinds().unwrap();
    assert!(kinds.len() > 600, "{}", kinds.len());
    for (api_version, kind) in kinds {
        let decoded = decode(&envelope(&api_version, &kind, &[]))
            .unwrap_or_else(|e| panic!("{api_version} {kind}: {e}"));
        assert_eq!(decoded.object["kind"], json!(kind));
        assert_eq!(decoded.object["apiVersion"], json!(api_version));
    }
}

/// Every kind of k8s-openapi's `v1_33` feature (list in testdata,
/// extracted from the crate's `Resource` impls) has a schema.
#[test]
fn covers_every_k8s_openapi_v1_33_kind() {
    let text = std::fs::read_to_string(testdata().join("k8s-openapi-v1_33-kinds.txt")).unwrap();
    let have = kinds().unwrap();
    let mut count = 0;
    for line in text
        .lines()
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
    {
        let (api_version, kind) = line.split_once(' ').unwrap();
        assert!(
            have.iter().any(|(a, k)| a == api_version && k == kind),
            "{api_version} {kind} has no protobuf schema"
        );
        count += 1;
    }
    assert!(count >= 90, "{count}");
}

#[test]
fn delete_options_decode_in_every_group_version() {
    for api_version in [
        "v1",
        "apps/v1",
        "batch/v1",
        "meta.k8s.io/v1",
        "autoscaling/v2",
    ] {
        assert!(
            kinds()
                .unwrap()
                .contains(&(api_version.to_owned(), "DeleteOptions".to_owned())),
            "{api_version}"
        );
    }
}

#[test]
fn media_type() {
    assert!(is_media_type("application/vnd.kubernetes.protobuf"));
    assert!(is_media_type(
        "Application/VND.Kubernetes.Protobuf ; charset=utf-8"
    ));
    assert!(!is_media_type(
        "application/vnd.kubernetes.protobuf;stream=watch"
    ));
    assert!(!is_media_type("application/json"));
    assert!(!is_media_type("application/vnd.kubernetes.protobuf+json"));
}
