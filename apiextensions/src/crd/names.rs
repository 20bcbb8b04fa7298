//! `spec.names` and `status.acceptedNames` (upstream
//! `ValidateCustomResourceDefinitionNames`).

use serde_json::{Value, json};
use skein_admission::{Cause, names::dns1035_label};

use super::json::{str_of, strings};
use super::path::{child, index};

/// Problems of `names` (a `CustomResourceDefinitionNames`) under `path`.
/// Empty names are not reported here (the spec requires them, the status
/// does not).
pub(crate) fn validate_names(names: &Value, path: &str) -> Vec<Cause> {
    let mut out = Vec::new();
    for field in ["plural", "singular"] {
        let value = str_of(names, field);
        let errs = dns1035_label(value);
        if !value.is_empty() && !errs.is_empty() {
            out.push(Cause::invalid(
                child(path, field),
                &json!(value),
                errs.join(","),
            ));
        }
    }
    for field in ["kind", "listKind"] {
        let value = str_of(names, field);
        let errs = dns1035_label(&value.to_lowercase());
        if !value.is_empty() && !errs.is_empty() {
            out.push(Cause::invalid(
                child(path, field),
                &json!(value),
                format!(
                    "may have mixed case, but should otherwise match: {}",
                    errs.join(",")
                ),
            ));
        }
    }
    for (i, short) in strings(names, "shortNames").into_iter().enumerate() {
        let errs = dns1035_label(short);
        if !errs.is_empty() {
            out.push(Cause::invalid(
                index(&child(path, "shortNames"), i),
                &json!(short),
                errs.join(","),
            ));
        }
    }
    let kind = str_of(names, "kind");
    let list_kind = str_of(names, "listKind");
    if !kind.is_empty() && kind == list_kind {
        out.push(Cause::invalid(
            child(path, "listKind"),
            &json!(list_kind),
            "kind and listKind may not be the same",
        ));
    }
    for (i, category) in strings(names, "categories").into_iter().enumerate() {
        let errs = dns1035_label(category);
        if !errs.is_empty() {
            out.push(Cause::invalid(
                index(&child(path, "categories"), i),
                &json!(category),
                errs.join(","),
            ));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn messages(names: Value) -> Vec<String> {
        validate_names(&names, "spec.names")
            .iter()
            .map(ToString::to_string)
            .collect()
    }

    #[test]
    fn valid_names() {
        assert!(
            messages(
                json!({"plural": "plural", "singular": "singular", "kind": "Plural",
            "listKind": "PluralList", "shortNames": ["p"], "categories": ["all"]})
            )
            .is_empty()
        );
        assert!(messages(json!({})).is_empty());
    }

    // Upstream validation_test.go "bad names 01" / "bad names 02".
    #[test]
    fn upstream_bad_names() {
        let got = messages(
            json!({"plural": "pl.ural", "singular": "singular", "kind": "Plural",
            "listKind": "PluralList"}),
        );
        assert_eq!(got.len(), 1);
        assert!(
            got[0].starts_with(r#"spec.names.plural: Invalid value: "pl.ural": a DNS-1035 label"#),
            "{got:?}"
        );
        let got = messages(
            json!({"plural": "plural", "singular": "singular", "kind": "Plural",
            "listKind": "Plural", "shortNames": ["s.p"], "categories": ["b a"]}),
        );
        let fields: Vec<&str> = got
            .iter()
            .map(|m| m.split(':').next().unwrap_or_default())
            .collect();
        assert_eq!(
            fields,
            [
                "spec.names.shortNames[0]",
                "spec.names.listKind",
                "spec.names.categories[0]"
            ]
        );
    }

    #[test]
    fn kind_message() {
        let got = messages(json!({"kind": "9Lives"}));
        assert!(got[0].starts_with(
            r#"spec.names.kind: Invalid value: "9Lives": may have mixed case, but should otherwise match: a DNS-1035 label"#
        ), "{got:?}");
    }
}
