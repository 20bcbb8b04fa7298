//! HorizontalPodAutoscaler, PodDisruptionBudget and Ingress validation
//! (upstream `pkg/apis/autoscaling/validation`, `pkg/apis/policy/validation`,
//! `pkg/apis/networking/validation`), the commonly hit rules.

use serde_json::{Map, Value, json};

use super::int_or_percent;
use crate::Cause;
use crate::json::{arr, str_of};
use crate::names;
use crate::path::Path;
use crate::selector::validate_label_selector;

fn spec(obj: &Value) -> Map<String, Value> {
    obj.get("spec")
        .and_then(Value::as_object)
        .cloned()
        .unwrap_or_default()
}

pub(super) fn hpa(obj: &Value) -> Vec<Cause> {
    let mut out = Vec::new();
    let spec = spec(obj);
    let path = Path::new("spec");
    let min = spec.get("minReplicas").and_then(Value::as_i64);
    let max = spec.get("maxReplicas").and_then(Value::as_i64).unwrap_or(0);
    if let Some(min) = min
        && min < 1
    {
        out.push(Cause::invalid(
            path.child("minReplicas"),
            &json!(min),
            "must be greater than or equal to 1",
        ));
    }
    if max < 1 {
        out.push(Cause::invalid(
            path.child("maxReplicas"),
            &json!(max),
            "must be greater than 0",
        ));
    }
    if let Some(min) = min
        && max < min
    {
        out.push(Cause::invalid(
            path.child("maxReplicas"),
            &json!(max),
            "must be greater than or equal to `minReplicas`",
        ));
    }
    let target = spec
        .get("scaleTargetRef")
        .and_then(Value::as_object)
        .cloned()
        .unwrap_or_default();
    object_reference(&target, &path.child("scaleTargetRef"), &mut out);
    if let Some(metrics) = spec.get("metrics").and_then(Value::as_array) {
        super::metrics::metrics(metrics, min, &path.child("metrics"), &mut out);
    }
    if let Some(b) = spec.get("behavior").and_then(Value::as_object) {
        super::metrics::behavior(b, &path.child("behavior"), &mut out);
    }
    out
}

/// `ValidateCrossVersionObjectReference`: kind and name required, both
/// valid path segments.
pub(super) fn object_reference(target: &Map<String, Value>, tp: &Path, out: &mut Vec<Cause>) {
    for key in ["kind", "name"] {
        let v = str_of(target, key);
        if v.is_empty() {
            out.push(Cause::required(tp.child(key), ""));
        } else {
            for msg in super::rbac::path_segment(v) {
                out.push(Cause::invalid(tp.child(key), &json!(v), msg));
            }
        }
    }
}

pub(super) fn pdb(obj: &Value) -> Vec<Cause> {
    let mut out = Vec::new();
    let spec = spec(obj);
    let path = Path::new("spec");
    let (min, max) = (
        spec.get("minAvailable").filter(|v| !v.is_null()),
        spec.get("maxUnavailable").filter(|v| !v.is_null()),
    );
    if min.is_some() && max.is_some() {
        out.push(Cause::invalid(
            &path,
            &Value::Object(spec.clone()),
            "minAvailable and maxUnavailable cannot be both set",
        ));
    }
    int_or_percent(min, &path.child("minAvailable"), &mut out);
    int_or_percent(max, &path.child("maxUnavailable"), &mut out);
    if let Some(sel) = spec.get("selector").filter(|v| !v.is_null()) {
        out.extend(validate_label_selector(sel, &path.child("selector")));
    }
    let policy = str_of(&spec, "unhealthyPodEvictionPolicy");
    if !policy.is_empty() && !["AlwaysAllow", "IfHealthyBudget"].contains(&policy) {
        out.push(Cause::not_supported(
            path.child("unhealthyPodEvictionPolicy"),
            &json!(policy),
            &["AlwaysAllow", "IfHealthyBudget"],
        ));
    }
    out
}

pub(super) fn ingress(obj: &Value) -> Vec<Cause> {
    let mut out = Vec::new();
    let spec = spec(obj);
    let path = Path::new("spec");
    let rules = arr(&spec, "rules");
    if rules.is_empty() && spec.get("defaultBackend").is_none_or(Value::is_null) {
        out.push(Cause::invalid(
            &path,
            &json!(rules),
            "either `defaultBackend` or `rules` must be specified",
        ));
    }
    if let Some(b) = spec.get("defaultBackend").and_then(Value::as_object) {
        backend(b, &path.child("defaultBackend"), &mut out);
    }
    for (i, rule) in rules.iter().enumerate() {
        let rp = path.child("rules").index(i);
        let host = rule.get("host").and_then(Value::as_str).unwrap_or_default();
        if !host.is_empty() {
            let check = host.strip_prefix("*.").unwrap_or(host);
            let msgs = names::dns1123_subdomain(check);
            if host.contains('*') && !host.starts_with("*.") || check.contains('*') {
                out.push(Cause::invalid(
                    rp.child("host"),
                    &json!(host),
                    "a wildcard DNS-1123 subdomain must start with '*.', followed by a valid DNS subdomain, which must consist of lower case alphanumeric characters, '-' or '.' and end with an alphanumeric character (e.g. '*.example.com', regex used for validation is '\\*\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')",
                ));
            } else {
                for msg in msgs {
                    out.push(Cause::invalid(rp.child("host"), &json!(host), msg));
                }
            }
        }
        let Some(http) = rule.get("http").and_then(Value::as_object) else {
            continue;
        };
        let hp = rp.child("http");
        let paths = arr(http, "paths");
        if paths.is_empty() {
            out.push(Cause::required(hp.child("paths"), ""));
        }
        for (j, p) in paths.iter().enumerate() {
            let Some(p) = p.as_object() else { continue };
            let pp = hp.child("paths").index(j);
            let path_type = str_of(p, "pathType");
            let value = str_of(p, "path");
            match path_type {
                "" => out.push(Cause::required(
                    pp.child("pathType"),
                    "pathType must be specified",
                )),
                "Exact" | "Prefix" => {
                    if !value.starts_with('/') {
                        out.push(Cause::invalid(
                            pp.child("path"),
                            &json!(value),
                            "must be an absolute path",
                        ));
                    }
                }
                "ImplementationSpecific" => {
                    if !value.is_empty() && !value.starts_with('/') {
                        out.push(Cause::invalid(
                            pp.child("path"),
                            &json!(value),
                            "must be an absolute path",
                        ));
                    }
                }
                other => out.push(Cause::not_supported(
                    pp.child("pathType"),
                    &json!(other),
                    &["Exact", "ImplementationSpecific", "Prefix"],
                )),
            }
            match p.get("backend").and_then(Value::as_object) {
                Some(b) => backend(b, &pp.child("backend"), &mut out),
                None => out.push(Cause::required(pp.child("backend"), "")),
            }
        }
    }
    out
}

fn backend(b: &Map<String, Value>, path: &Path, out: &mut Vec<Cause>) {
    let service = b.get("service").and_then(Value::as_object);
    let resource = b.get("resource").filter(|v| !v.is_null());
    match (service, resource) {
        (Some(_), Some(_)) => out.push(Cause::invalid(
            path,
            &json!(""),
            "cannot set both resource and service backends",
        )),
        (None, None) => out.push(Cause::invalid(
            path,
            &json!(""),
            "resource or service backend is required",
        )),
        (Some(s), None) => {
            let sp = path.child("service");
            let name = str_of(s, "name");
            if name.is_empty() {
                out.push(Cause::required(sp.child("name"), ""));
            } else {
                // Service names are DNS-1035 labels.
                let ok = name.len() <= 63
                    && name.as_bytes()[0].is_ascii_lowercase()
                    && name
                        .bytes()
                        .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == b'-')
                    && !name.ends_with('-');
                if !ok {
                    out.push(Cause::invalid(
                        sp.child("name"),
                        &json!(name),
                        "a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character (e.g. 'my-name',  or 'abc-123', regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?')",
                    ));
                }
            }
            let port = s
                .get("port")
                .and_then(Value::as_object)
                .cloned()
                .unwrap_or_default();
            let pp = sp.child("port");
            let pname = str_of(&port, "name");
            let number = port.get("number").and_then(Value::as_i64).unwrap_or(0);
            if !pname.is_empty() && number != 0 {
                out.push(Cause::invalid(
                    &pp,
                    &Value::Object(port.clone()),
                    "cannot set both port name & port number",
                ));
            } else if !pname.is_empty() {
                for msg in names::port_name(pname) {
                    out.push(Cause::invalid(pp.child("name"), &json!(pname), msg));
                }
            } else if number != 0 {
                if !names::valid_port(number) {
                    out.push(Cause::invalid(
                        pp.child("number"),
                        &json!(number),
                        names::PORT_RANGE_MSG,
                    ));
                }
            } else {
                out.push(Cause::required(&pp, "port name or number is required"));
            }
        }
        (None, Some(_)) => {}
    }
}
