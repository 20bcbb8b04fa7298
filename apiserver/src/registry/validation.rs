//! Object metadata validation with upstream's messages
//! (`apimachinery/pkg/util/validation`, `api/validation/objectmeta.go`).

use serde_json::Value;

use crate::status::Cause;

/// Which name rule a kind uses.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NameRule {
    /// RFC 1123 subdomain (most kinds).
    Subdomain,
    /// RFC 1123 label (Namespace).
    Label,
    /// RFC 1035 label (Service).
    Dns1035,
    /// Any path segment (RBAC kinds).
    PathSegment,
}

const SUBDOMAIN_MSG: &str = "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')";
const LABEL_MSG: &str = "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')";
const DNS1035_MSG: &str = "a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character (e.g. 'my-name',  or 'abc-123', regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?')";
const QUALIFIED_NAME_MSG: &str = "name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')";
const LABEL_VALUE_MSG: &str = "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')";

/// Total size limit of annotations (256 KiB).
pub const ANNOTATIONS_MAX: usize = 256 * 1024;

/// `[a-z0-9]([-a-z0-9]*[a-z0-9])?`, any length.
fn label_format(s: &str) -> bool {
    let b = s.as_bytes();
    !b.is_empty()
        && b.iter()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || *c == b'-')
        && b[0] != b'-'
        && b[b.len() - 1] != b'-'
}

/// The subdomain regex (parts are labels of any length).
fn subdomain_format(s: &str) -> bool {
    s.split('.').all(label_format)
}

fn is_subdomain(s: &str) -> bool {
    s.len() <= 253 && subdomain_format(s)
}

fn quoted(s: &str) -> String {
    serde_json::to_string(s).unwrap_or_else(|_| format!("\"{s}\""))
}

/// Errors of `name` under `rule`, at `field`.
pub fn name_errors(rule: NameRule, name: &str, field: &str) -> Vec<Cause> {
    let mut out = Vec::new();
    let v = quoted(name);
    match rule {
        NameRule::Subdomain => {
            if name.len() > 253 {
                out.push(Cause::invalid(
                    field,
                    &v,
                    "must be no more than 253 characters",
                ));
            }
            if !subdomain_format(name) {
                out.push(Cause::invalid(field, &v, SUBDOMAIN_MSG));
            }
        }
        NameRule::Label => {
            if name.len() > 63 {
                out.push(Cause::invalid(
                    field,
                    &v,
                    "must be no more than 63 characters",
                ));
            }
            if !label_format(name) {
                out.push(Cause::invalid(field, &v, LABEL_MSG));
            }
        }
        NameRule::Dns1035 => {
            if name.len() > 63 {
                out.push(Cause::invalid(
                    field,
                    &v,
                    "must be no more than 63 characters",
                ));
            }
            let ok =
                label_format(name) && name.as_bytes().first().is_some_and(u8::is_ascii_lowercase);
            if !ok {
                out.push(Cause::invalid(field, &v, DNS1035_MSG));
            }
        }
        NameRule::PathSegment => {
            if name == "." || name == ".." {
                out.push(Cause::invalid(field, &v, format!("may not be '{name}'")));
            }
            for bad in ["/", "%"] {
                if name.contains(bad) {
                    out.push(Cause::invalid(
                        field,
                        &v,
                        format!("may not contain '{bad}'"),
                    ));
                }
            }
        }
    }
    out
}

/// `([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]`, any length.
fn is_qualified_name_part(s: &str) -> bool {
    let b = s.as_bytes();
    !b.is_empty()
        && b.iter()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, b'-' | b'_' | b'.'))
        && b[0].is_ascii_alphanumeric()
        && b[b.len() - 1].is_ascii_alphanumeric()
}

/// Errors of a label or annotation key (`IsQualifiedName`).
pub fn qualified_name_errors(key: &str, field: &str) -> Vec<Cause> {
    let v = quoted(key);
    let (prefix, name) = match key.split_once('/') {
        Some((p, n)) => (Some(p), n),
        None => (None, key),
    };
    let mut out = Vec::new();
    if let Some(p) = prefix {
        if p.is_empty() {
            out.push(Cause::invalid(field, &v, "prefix part must be non-empty"));
        } else if !is_subdomain(p) {
            out.push(Cause::invalid(
                field,
                &v,
                format!("prefix part {SUBDOMAIN_MSG}"),
            ));
        }
        if name.contains('/') {
            out.push(Cause::invalid(field, &v, "a qualified name must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]') with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')"));
            return out;
        }
    }
    if name.is_empty() {
        out.push(Cause::invalid(field, &v, "name part must be non-empty"));
    } else {
        if name.len() > 63 {
            out.push(Cause::invalid(
                field,
                &v,
                "name part must be no more than 63 characters",
            ));
        }
        if !is_qualified_name_part(name) {
            out.push(Cause::invalid(field, &v, QUALIFIED_NAME_MSG));
        }
    }
    out
}

/// Errors of a label value.
pub fn label_value_errors(value: &str, field: &str) -> Vec<Cause> {
    let v = quoted(value);
    let mut out = Vec::new();
    if value.len() > 63 {
        out.push(Cause::invalid(
            field,
            &v,
            "must be no more than 63 characters",
        ));
    }
    if !value.is_empty() && !is_qualified_name_part(value) {
        out.push(Cause::invalid(field, &v, LABEL_VALUE_MSG));
    }
    out
}

/// Validates `metadata` of an object about to be stored: name (per rule),
/// generateName, labels and annotations.
pub fn object_meta(obj: &Value, rule: NameRule) -> Vec<Cause> {
    let mut out = Vec::new();
    let meta = obj.get("metadata");
    let name = meta
        .and_then(|m| m.get("name"))
        .and_then(Value::as_str)
        .unwrap_or("");
    if name.is_empty() {
        out.push(Cause::required(
            "metadata.name",
            "name or generateName is required",
        ));
    } else {
        out.extend(name_errors(rule, name, "metadata.name"));
    }
    if let Some(labels) = meta
        .and_then(|m| m.get("labels"))
        .and_then(Value::as_object)
    {
        for (k, v) in labels {
            out.extend(qualified_name_errors(k, "metadata.labels"));
            match v.as_str() {
                Some(s) => out.extend(label_value_errors(s, "metadata.labels")),
                None => out.push(Cause::invalid(
                    "metadata.labels",
                    v.to_string(),
                    "must be a string",
                )),
            }
        }
    }
    if let Some(annotations) = meta
        .and_then(|m| m.get("annotations"))
        .and_then(Value::as_object)
    {
        let mut total = 0;
        for (k, v) in annotations {
            out.extend(qualified_name_errors(
                &k.to_ascii_lowercase(),
                "metadata.annotations",
            ));
            total += k.len() + v.as_str().map_or(0, str::len);
        }
        if total > ANNOTATIONS_MAX {
            out.push(Cause {
                reason: "FieldValueTooLong",
                field: "metadata.annotations".into(),
                value: None,
                detail: format!("must have at most {ANNOTATIONS_MAX} bytes"),
            });
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names() {
        assert!(name_errors(NameRule::Subdomain, "my.app-1", "f").is_empty());
        assert_eq!(
            name_errors(NameRule::Subdomain, "Bad_Name", "metadata.name")[0].text(),
            format!("metadata.name: Invalid value: \"Bad_Name\": {SUBDOMAIN_MSG}")
        );
        assert!(!name_errors(NameRule::Subdomain, &"a".repeat(254), "f").is_empty());
        assert!(name_errors(NameRule::Label, "ns-1", "f").is_empty());
        assert!(!name_errors(NameRule::Label, "a.b", "f").is_empty());
        assert!(!name_errors(NameRule::Dns1035, "1abc", "f").is_empty());
        assert!(name_errors(NameRule::PathSegment, "system:admin", "f").is_empty());
        assert!(!name_errors(NameRule::PathSegment, "a/b", "f").is_empty());
    }

    #[test]
    fn labels_and_annotations() {
        let obj = serde_json::json!({"metadata":{"name":"x","labels":{"app.kubernetes.io/name":"ok","bad key":"v","k":"-bad"}}});
        let errs = object_meta(&obj, NameRule::Subdomain);
        assert_eq!(errs.len(), 2, "{errs:?}");
        let big = "x".repeat(ANNOTATIONS_MAX);
        let obj = serde_json::json!({"metadata":{"name":"x","annotations":{"a":big}}});
        assert_eq!(
            object_meta(&obj, NameRule::Subdomain)[0].text(),
            "metadata.annotations: Too long: must have at most 262144 bytes"
        );
    }
}
