//! Object metadata validation with upstream's messages
//! (`apimachinery/pkg/util/validation`, `api/validation/objectmeta.go`).

use serde_json::Value;
use skein_admission::names;

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

/// Total size limit of annotations (256 KiB).
pub const ANNOTATIONS_MAX: usize = 256 * 1024;

/// Each upstream error detail of `value` as a `FieldValueInvalid` cause.
fn invalid(field: &str, value: &str, details: Vec<String>) -> Vec<Cause> {
    let shown = skein_admission::gofmt::quote(value);
    details
        .into_iter()
        .map(|d| Cause::invalid(field, &shown, d))
        .collect()
}

/// Errors of `name` under `rule`, at `field`. The string rules are the
/// admission crate's ([`skein_admission::names`]), the one home of them.
pub fn name_errors(rule: NameRule, name: &str, field: &str) -> Vec<Cause> {
    match rule {
        NameRule::Subdomain => invalid(field, name, names::dns1123_subdomain(name)),
        NameRule::Label => invalid(field, name, names::dns1123_label(name)),
        NameRule::Dns1035 => invalid(field, name, names::dns1035_label(name)),
        NameRule::PathSegment => {
            let mut details = Vec::new();
            if name == "." || name == ".." {
                details.push(format!("may not be '{name}'"));
            }
            for bad in ["/", "%"] {
                if name.contains(bad) {
                    details.push(format!("may not contain '{bad}'"));
                }
            }
            invalid(field, name, details)
        }
    }
}

/// Errors of a label or annotation key (`IsQualifiedName`).
pub fn qualified_name_errors(key: &str, field: &str) -> Vec<Cause> {
    invalid(field, key, names::qualified_name(key))
}

/// Errors of a label value (`IsValidLabelValue`).
pub fn label_value_errors(value: &str, field: &str) -> Vec<Cause> {
    invalid(field, value, names::label_value(value))
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
                detail: format!("may not be more than {ANNOTATIONS_MAX} bytes"),
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
            format!(
                "metadata.name: Invalid value: \"Bad_Name\": {}",
                names::DNS1123_SUBDOMAIN_MSG
            )
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
            "metadata.annotations: Too long: may not be more than 262144 bytes"
        );
    }
}
