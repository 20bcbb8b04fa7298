//! `subresources` (upstream `ValidateCustomResourceDefinitionSubresources`).

use serde_json::{Value, json};
use skein_admission::Cause;

use super::columns::validate_simple_json_path;
use super::json::{obj, opt_str, str_of};
use super::path::child;

/// Problems of `subresources` (a `*CustomResourceSubresources`) under `path`.
pub(crate) fn validate_subresources(subresources: Option<&Value>, path: &str) -> Vec<Cause> {
    let mut out = Vec::new();
    let Some(scale) = subresources.and_then(|s| obj(s, "scale")) else {
        return out;
    };
    for (field, prefix, under) in [
        ("specReplicasPath", ".spec.", ".spec"),
        ("statusReplicasPath", ".status.", ".status"),
    ] {
        let p = child(path, &format!("scale.{field}"));
        let value = str_of(scale, field);
        if value.is_empty() {
            out.push(Cause::required(p, ""));
            continue;
        }
        let errs = validate_simple_json_path(value, &p);
        if !errs.is_empty() {
            out.extend(errs);
        } else if !value.starts_with(prefix) {
            out.push(Cause::invalid(
                p,
                &json!(value),
                format!("should be a json path under {under}"),
            ));
        }
    }
    if let Some(selector) = opt_str(scale, "labelSelectorPath").filter(|s| !s.is_empty()) {
        let p = child(path, "scale.labelSelectorPath");
        let errs = validate_simple_json_path(selector, &p);
        if !errs.is_empty() {
            out.extend(errs);
        } else if !selector.starts_with(".spec.") && !selector.starts_with(".status.") {
            out.push(Cause::invalid(
                p,
                &json!(selector),
                "should be a json path under either .spec or .status",
            ));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn messages(s: Value) -> Vec<String> {
        validate_subresources(Some(&s), "spec.subresources")
            .iter()
            .map(ToString::to_string)
            .collect()
    }

    #[test]
    fn scale_paths() {
        assert!(
            messages(
                json!({"status": {}, "scale": {"specReplicasPath": ".spec.replicas",
            "statusReplicasPath": ".status.replicas", "labelSelectorPath": ".status.selector"}})
            )
            .is_empty()
        );
        assert_eq!(
            messages(json!({"scale": {}})),
            [
                "spec.subresources.scale.specReplicasPath: Required value",
                "spec.subresources.scale.statusReplicasPath: Required value",
            ]
        );
        // Upstream validation_test.go: "invalid scale subresource paths".
        assert_eq!(
            messages(json!({"scale": {"specReplicasPath": "spec.replicas",
                "statusReplicasPath": ".spec.replicas", "labelSelectorPath": ".metadata.x"}})),
            [
                r#"spec.subresources.scale.specReplicasPath: Invalid value: "spec.replicas": must be a simple json path starting with ."#,
                r#"spec.subresources.scale.statusReplicasPath: Invalid value: ".spec.replicas": should be a json path under .status"#,
                r#"spec.subresources.scale.labelSelectorPath: Invalid value: ".metadata.x": should be a json path under either .spec or .status"#,
            ]
        );
        assert!(validate_subresources(None, "x").is_empty());
    }
}
