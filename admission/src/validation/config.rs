//! ConfigMap and Secret validation (upstream `ValidateConfigMap`,
//! `ValidateConfigMapUpdate`, `ValidateSecret`, `ValidateSecretUpdate`).

use serde_json::{Map, Value, json};

use crate::Cause;
use crate::names::{self, IMMUTABLE_MSG};
use crate::path::Path;

/// `core.MaxSecretSize`: 1 MiB, for Secrets and ConfigMaps alike.
const MAX_SIZE: usize = 1024 * 1024;
const IMMUTABLE_SET: &str = "field is immutable when `immutable` is set";

fn sorted(m: &Map<String, Value>) -> Vec<(&String, &Value)> {
    let mut v: Vec<_> = m.iter().collect();
    v.sort_by(|a, b| a.0.cmp(b.0));
    v
}

fn map<'a>(obj: &'a Value, key: &str) -> Option<&'a Map<String, Value>> {
    obj.get(key).and_then(Value::as_object)
}

/// Decoded length of a base64 string (what upstream counts for `[]byte`).
fn decoded_len(s: &str) -> usize {
    let pad = s.bytes().rev().take_while(|&b| b == b'=').count();
    (s.len() / 4) * 3 - pad.min(2)
}

fn immutable_checks(obj: &Value, old: Option<&Value>, fields: &[&str], out: &mut Vec<Cause>) {
    let Some(old) = old else { return };
    if old.get("immutable").and_then(Value::as_bool) != Some(true) {
        return;
    }
    if obj.get("immutable").and_then(Value::as_bool) != Some(true) {
        out.push(Cause::forbidden("immutable", IMMUTABLE_SET));
    }
    for f in fields {
        let norm = |v: Option<&Value>| {
            v.and_then(Value::as_object)
                .filter(|m| !m.is_empty())
                .cloned()
        };
        if norm(obj.get(*f)) != norm(old.get(*f)) {
            out.push(Cause::forbidden(*f, IMMUTABLE_SET));
        }
    }
}

pub(super) fn config_map(obj: &Value, old: Option<&Value>) -> Vec<Cause> {
    let mut out = Vec::new();
    immutable_checks(obj, old, &["data", "binaryData"], &mut out);
    let empty = Map::new();
    let data = map(obj, "data").unwrap_or(&empty);
    let binary = map(obj, "binaryData").unwrap_or(&empty);
    let mut total = 0;
    for (own, other, name, other_name, binary_values) in [
        (data, binary, "data", "binaryData", false),
        (binary, data, "binaryData", "data", true),
    ] {
        for (k, v) in sorted(own) {
            let p = Path::new(name).key(k);
            for msg in names::config_key(k) {
                out.push(Cause::invalid(&p, &json!(k), msg));
            }
            if other.contains_key(k) {
                out.push(Cause::invalid(
                    &p,
                    &json!(k),
                    format!("duplicate of key present in {other_name}"),
                ));
            }
            let s = v.as_str().unwrap_or_default();
            total += if binary_values {
                decoded_len(s)
            } else {
                s.len()
            };
        }
    }
    if total > MAX_SIZE {
        out.push(Cause::too_long("[]", MAX_SIZE));
    }
    out
}

pub(super) fn secret(obj: &Value, old: Option<&Value>) -> Vec<Cause> {
    let mut out = Vec::new();
    if let Some(old) = old {
        let (ty, old_ty) = (
            obj.get("type").and_then(Value::as_str).unwrap_or_default(),
            old.get("type").and_then(Value::as_str).unwrap_or_default(),
        );
        if ty != old_ty {
            out.push(Cause::invalid("type", &json!(ty), IMMUTABLE_MSG));
        }
    }
    immutable_checks(obj, old, &["data"], &mut out);
    let empty = Map::new();
    let data = map(obj, "data").unwrap_or(&empty);
    let data_path = Path::new("data");
    let mut total = 0;
    for (k, v) in sorted(data) {
        for msg in names::config_key(k) {
            out.push(Cause::invalid(data_path.key(k), &json!(k), msg));
        }
        total += decoded_len(v.as_str().unwrap_or_default());
    }
    if total > MAX_SIZE {
        out.push(Cause::too_long(&data_path, MAX_SIZE));
    }
    let has = |k: &str| data.contains_key(k);
    match obj.get("type").and_then(Value::as_str).unwrap_or_default() {
        "kubernetes.io/service-account-token" => {
            let sa = crate::json::str_at(
                obj,
                "/metadata/annotations/kubernetes.io~1service-account.name",
            );
            if sa.is_empty() {
                out.push(Cause::required(
                    Path::new("metadata")
                        .child("annotations")
                        .key("kubernetes.io/service-account.name"),
                    "",
                ));
            }
        }
        "kubernetes.io/dockercfg" if !has(".dockercfg") => {
            out.push(Cause::required(data_path.key(".dockercfg"), ""));
        }
        "kubernetes.io/dockerconfigjson" if !has(".dockerconfigjson") => {
            out.push(Cause::required(data_path.key(".dockerconfigjson"), ""));
        }
        "kubernetes.io/basic-auth" if !has("username") && !has("password") => {
            out.push(Cause::required(data_path.key("username"), ""));
            out.push(Cause::required(data_path.key("password"), ""));
        }
        "kubernetes.io/ssh-auth"
            if data
                .get("ssh-privatekey")
                .and_then(Value::as_str)
                .unwrap_or_default()
                .is_empty() =>
        {
            out.push(Cause::required(data_path.key("ssh-privatekey"), ""));
        }
        "kubernetes.io/tls" => {
            for k in ["tls.crt", "tls.key"] {
                if !has(k) {
                    out.push(Cause::required(data_path.key(k), ""));
                }
            }
        }
        _ => {}
    }
    out
}
