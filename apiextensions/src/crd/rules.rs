//! The bridge to [`crate::cel`]: compile errors of a schema's
//! `x-kubernetes-validations` rules as causes.

use serde_json::Value;
use skein_admission::Cause;

/// CEL compile errors of every rule in `schema`, under `path`
/// (`…openAPIV3Schema`). Called only for a structural schema whose OpenAPI
/// rules (including the static checks of each rule) passed: upstream skips
/// CEL for broken schemas, as their types would mislead the compiler.
/// (Upstream decides per schema node; Skein per schema.)
pub(crate) fn compile_errors(schema: &Value, path: &str) -> Vec<Cause> {
    match crate::cel::compile(schema, path) {
        Ok(_) => Vec::new(),
        Err(causes) => causes,
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn compile_errors_have_upstream_paths() {
        let schema = json!({"type": "object", "properties": {"spec": {"type": "object",
            "properties": {"n": {"type": "integer"}},
            "x-kubernetes-validations": [{"rule": "self.n >"}]}}});
        let errs = compile_errors(&schema, "spec.validation.openAPIV3Schema");
        assert_eq!(errs.len(), 1, "{errs:?}");
        assert_eq!(
            errs[0].field,
            "spec.validation.openAPIV3Schema.properties[spec].x-kubernetes-validations[0].rule"
        );
        assert!(errs[0].message.contains("compilation failed"), "{errs:?}");
        let ok = json!({"type": "object", "x-kubernetes-validations": [{"rule": "has(self.spec)"}],
            "properties": {"spec": {"type": "object"}}});
        assert!(compile_errors(&ok, "p").is_empty());
    }
}
