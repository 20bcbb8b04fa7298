//! `additionalPrinterColumns` (upstream `ValidateCustomResourceColumnDefinition`)
//! and the simple JSON paths of columns and scale subresources
//! (`validateSimpleJSONPath`).

use serde_json::{Value, json};
use skein_admission::Cause;

use super::json::str_of;
use super::path::child;

/// Printer column types, sorted as upstream lists them.
const TYPES: [&str; 5] = ["boolean", "date", "integer", "number", "string"];
/// Printer column formats, sorted as upstream lists them.
const FORMATS: [&str; 8] = [
    "byte",
    "date",
    "date-time",
    "double",
    "float",
    "int32",
    "int64",
    "password",
];

/// Problems of one printer column `col` under `path`.
pub(crate) fn validate_column(col: &Value, path: &str) -> Vec<Cause> {
    let mut out = Vec::new();
    if str_of(col, "name").is_empty() {
        out.push(Cause::required(child(path, "name"), ""));
    }
    let types = format!("must be one of {}", TYPES.join(","));
    let ty = str_of(col, "type");
    if ty.is_empty() {
        out.push(Cause::required(child(path, "type"), &types));
    } else if !TYPES.contains(&ty) {
        out.push(Cause::invalid(child(path, "type"), &json!(ty), &types));
    }
    let format = str_of(col, "format");
    if !format.is_empty() && !FORMATS.contains(&format) {
        out.push(Cause::invalid(
            child(path, "format"),
            &json!(format),
            format!("must be one of {}", FORMATS.join(",")),
        ));
    }
    // The internal type's field is `JSONPath`, and so is upstream's path.
    let json_path = str_of(col, "jsonPath");
    if json_path.is_empty() {
        out.push(Cause::required(child(path, "JSONPath"), ""));
    } else {
        out.extend(validate_simple_json_path(
            json_path,
            &child(path, "JSONPath"),
        ));
    }
    out
}

/// Upstream `validateSimpleJSONPath`: non-empty and starting with `.`.
/// (Upstream checks no more at CRD validation; a column whose path does not
/// parse as JSONPath fails when the table is built.)
pub(crate) fn validate_simple_json_path(s: &str, path: &str) -> Vec<Cause> {
    if s.is_empty() {
        vec![Cause::invalid(path, &json!(s), "must not be empty")]
    } else if !s.starts_with('.') {
        vec![Cause::invalid(
            path,
            &json!(s),
            "must be a simple json path starting with .",
        )]
    } else {
        Vec::new()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn messages(col: Value) -> Vec<String> {
        validate_column(&col, "spec.additionalPrinterColumns[0]")
            .iter()
            .map(ToString::to_string)
            .collect()
    }

    #[test]
    fn valid_column() {
        assert!(
            messages(
                json!({"name": "Age", "type": "date", "jsonPath": ".metadata.creationTimestamp"})
            )
            .is_empty()
        );
        assert!(
            messages(
                json!({"name": "N", "type": "integer", "format": "int32", "jsonPath": ".spec.n"})
            )
            .is_empty()
        );
    }

    #[test]
    fn upstream_messages() {
        assert_eq!(
            messages(json!({})),
            [
                "spec.additionalPrinterColumns[0].name: Required value",
                "spec.additionalPrinterColumns[0].type: Required value: must be one of boolean,date,integer,number,string",
                "spec.additionalPrinterColumns[0].JSONPath: Required value",
            ]
        );
        assert_eq!(
            messages(json!({"name": "x", "type": "bool", "format": "uuid", "jsonPath": "spec"})),
            [
                r#"spec.additionalPrinterColumns[0].type: Invalid value: "bool": must be one of boolean,date,integer,number,string"#,
                r#"spec.additionalPrinterColumns[0].format: Invalid value: "uuid": must be one of byte,date,date-time,double,float,int32,int64,password"#,
                r#"spec.additionalPrinterColumns[0].JSONPath: Invalid value: "spec": must be a simple json path starting with ."#,
            ]
        );
    }
}
