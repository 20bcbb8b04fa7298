//! Query parameters of API requests, validated as upstream does.

use std::collections::HashMap;

use super::status::ApiError;

/// Parsed query parameters (last value wins, as Go's `url.Values.Get`).
#[derive(Clone, Debug, Default)]
pub struct Query(HashMap<String, String>);

impl Query {
    /// Parses a raw query string.
    pub fn parse(raw: Option<&str>) -> Query {
        let mut map = HashMap::new();
        if let Some(raw) = raw {
            for (k, v) in form_urlencoded::parse(raw.as_bytes()) {
                map.insert(k.into_owned(), v.into_owned());
            }
        }
        Query(map)
    }

    /// A parameter's value.
    pub fn get(&self, key: &str) -> Option<&str> {
        self.0.get(key).map(String::as_str)
    }

    /// A boolean parameter (`true`/`1`/`false`/`0`); others are 400.
    pub fn bool(&self, key: &str) -> Result<Option<bool>, ApiError> {
        match self.get(key) {
            None | Some("") => Ok(None),
            Some("true" | "1" | "True" | "TRUE" | "t" | "T") => Ok(Some(true)),
            Some("false" | "0" | "False" | "FALSE" | "f" | "F") => Ok(Some(false)),
            Some(other) => Err(ApiError::bad_request(format!(
                "invalid value for {key}: strconv.ParseBool: parsing {other:?}: invalid syntax"
            ))),
        }
    }

    /// A non-negative integer parameter; others are 400.
    pub fn int(&self, key: &str) -> Result<Option<i64>, ApiError> {
        match self.get(key) {
            None | Some("") => Ok(None),
            Some(v) => v.parse::<i64>().map(Some).map_err(|_| {
                ApiError::bad_request(format!(
                    "invalid value for {key}: strconv.ParseInt: parsing {v:?}: invalid syntax"
                ))
            }),
        }
    }

    /// `dryRun`: only `All` is valid. `options` is the options kind named
    /// in the error (`CreateOptions`, `UpdateOptions`, `PatchOptions`,
    /// `DeleteOptions`).
    pub fn dry_run(&self, options: &str) -> Result<bool, ApiError> {
        match self.get("dryRun") {
            None | Some("") => Ok(false),
            Some("All") => Ok(true),
            Some(other) => Err(ApiError::invalid(
                "meta.k8s.io",
                options,
                "",
                vec![super::status::Cause {
                    reason: "FieldValueNotSupported",
                    field: "dryRun".into(),
                    // Upstream shows the []string it parsed.
                    value: Some(format!("[]string{{{other:?}}}")),
                    detail: "supported values: \"All\"".into(),
                }],
            )),
        }
    }

    /// `fieldValidation`: Strict, Warn (the default) or Ignore. Anything
    /// else is upstream's `ValidateFieldValidation` 422, naming `options`
    /// (`CreateOptions`, `UpdateOptions`, `PatchOptions`).
    pub fn field_validation(&self, options: &str) -> Result<FieldValidation, ApiError> {
        match self.get("fieldValidation") {
            None | Some("") | Some("Warn") => Ok(FieldValidation::Warn),
            Some("Strict") => Ok(FieldValidation::Strict),
            Some("Ignore") => Ok(FieldValidation::Ignore),
            Some(other) => Err(ApiError::invalid(
                "meta.k8s.io",
                options,
                "",
                vec![super::status::Cause {
                    reason: "FieldValueNotSupported",
                    field: "fieldValidation".into(),
                    value: Some(format!("{other:?}")),
                    detail: r#"supported values: "", "Ignore", "Strict", "Warn""#.into(),
                }],
            )),
        }
    }
}

/// How to treat unknown and duplicate fields in request bodies.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FieldValidation {
    /// Reject with 400.
    Strict,
    /// Accept, with a `Warning` header per field.
    Warn,
    /// Accept silently.
    Ignore,
}
