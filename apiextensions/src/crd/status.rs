//! `status` rules: `acceptedNames` and `storedVersions` (upstream
//! `ValidateCustomResourceDefinitionStatus`,
//! `ValidateCustomResourceDefinitionStoredVersions`).

use serde_json::{Value, json};
use skein_admission::{Cause, render_value};

use super::names::validate_names;
use super::view::Version;

/// Problems of `status.acceptedNames`.
pub(crate) fn validate_status(crd: &Value) -> Vec<Cause> {
    let names = crd
        .pointer("/status/acceptedNames")
        .cloned()
        .unwrap_or(Value::Null);
    validate_names(&names, "status.acceptedNames")
}

/// Problems of `status.storedVersions` against `spec.versions`.
pub(crate) fn validate_stored_versions(crd: &Value, versions: &[Version<'_>]) -> Vec<Cause> {
    let path = "status.storedVersions";
    let raw = crd
        .pointer("/status/storedVersions")
        .and_then(Value::as_array);
    let stored: Vec<&str> = raw
        .map(|l| l.iter().map(|v| v.as_str().unwrap_or_default()).collect())
        .unwrap_or_default();
    // Go prints a nil slice as `[]string(nil)`.
    let rendered = match raw {
        Some(_) => render_value(&json!(stored)),
        None => "[]string(nil)".to_owned(),
    };
    if stored.is_empty() {
        return vec![Cause::invalid_rendered(
            path,
            &rendered,
            "must have at least one stored version",
        )];
    }
    let mut out = Vec::new();
    // Upstream keeps the last index of each name.
    let mut remaining: Vec<(usize, &str)> = Vec::new();
    for (i, v) in stored.iter().enumerate() {
        remaining.retain(|(_, n)| n != v);
        remaining.push((i, v));
    }
    for v in versions {
        let found = remaining.iter().any(|(_, n)| *n == v.name);
        if v.storage && !found {
            out.push(Cause::invalid_rendered(
                path,
                &rendered,
                format!("must have the storage version {}", v.name),
            ));
        }
        remaining.retain(|(_, n)| *n != v.name);
    }
    remaining.sort();
    for (i, v) in remaining {
        out.push(Cause::invalid(
            format!("{path}[{i}]"),
            &json!(v),
            format!("missing from spec.versions; {v} was previously a storage version, and must remain in spec.versions until a storage migration ensures no data remains persisted in {v} and removes {v} from status.storedVersions"),
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::crd::view::Spec;

    fn check(crd: Value) -> Vec<String> {
        let spec = Spec::of(&crd);
        validate_stored_versions(&crd, &spec.versions)
            .iter()
            .map(ToString::to_string)
            .collect()
    }

    #[test]
    fn stored_versions() {
        let versions = json!([{"name": "v1", "storage": false}, {"name": "v2", "storage": true}]);
        assert!(
            check(
                json!({"spec": {"versions": versions}, "status": {"storedVersions": ["v1", "v2"]}})
            )
            .is_empty()
        );
        assert_eq!(
            check(json!({"spec": {"versions": versions}})),
            [
                "status.storedVersions: Invalid value: []string(nil): must have at least one stored version"
            ]
        );
        assert_eq!(
            check(
                json!({"spec": {"versions": versions}, "status": {"storedVersions": ["v1", "v0"]}})
            ),
            [
                r#"status.storedVersions: Invalid value: []string{"v1", "v0"}: must have the storage version v2"#,
                r#"status.storedVersions[1]: Invalid value: "v0": missing from spec.versions; v0 was previously a storage version, and must remain in spec.versions until a storage migration ensures no data remains persisted in v0 and removes v0 from status.storedVersions"#,
            ]
        );
    }

    #[test]
    fn accepted_names() {
        let got = validate_status(&json!({"status": {"acceptedNames": {"plural": "A.b"}}}));
        assert_eq!(got.len(), 1);
        assert_eq!(got[0].field, "status.acceptedNames.plural");
        assert!(validate_status(&json!({})).is_empty());
    }
}
