//! kube-openapi's validation errors (`pkg/validation/errors`) and their
//! translation into field errors (apiextensions
//! `kubeOpenAPIResultToFieldErrors`), with upstream's exact texts.

use std::collections::HashSet;

use serde_json::Value;
use skein_admission::Cause;

use super::gofmt;

/// `field.ErrorTypeTypeInvalid` (`FieldValueTypeInvalid`), the cause type of
/// a wrong JSON type or format, which `Cause` has no constant for.
pub const FIELD_VALUE_TYPE_INVALID: &str = "FieldValueTypeInvalid";

/// What kind of kube-openapi error, where it changes the field error.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Kind {
    /// `RequiredFailCode` → `Required value`.
    Required,
    /// `EnumFailCode` → `Unsupported value`, with the allowed values.
    Enum(Vec<Value>),
    /// `TooLongFailCode` → `Too long`, with the maximum.
    TooLong(i64),
    /// `MaxItemsFailCode` / `TooManyPropertiesCode` → `Too many`.
    TooMany {
        /// How many there are.
        actual: i64,
        /// The maximum.
        max: i64,
    },
    /// `InvalidTypeCode` → `FieldValueTypeInvalid`.
    InvalidType,
    /// Any other `*errors.Validation` → `Invalid value`.
    Invalid,
    /// A plain `errors.New` (junctors): `Invalid value: ""` at the root
    /// path, which upstream prints as `<nil>`.
    Composite,
}

/// One kube-openapi error.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Failure {
    /// Its kind.
    pub kind: Kind,
    /// `Validation.Name`: the dotted path (`spec.replicas`, `.spec` for a
    /// root `required`).
    pub name: String,
    /// `Validation.Value` (`None` is Go's nil).
    pub value: Option<Value>,
    /// `Error()`: the kube-openapi message.
    pub message: String,
}

impl Failure {
    /// An error of `kind` at `name` about `value` saying `message`.
    pub(crate) fn new(kind: Kind, name: &str, value: Option<Value>, message: String) -> Failure {
        Failure {
            kind,
            name: name.to_owned(),
            value,
            message,
        }
    }

    /// `%s in body must be of type %s: %q` (`errors.InvalidType` with a
    /// string value).
    pub(crate) fn invalid_type(name: &str, type_name: &str, value: &str) -> Failure {
        Failure::new(
            Kind::InvalidType,
            name,
            Some(Value::String(value.to_owned())),
            format!(
                "{name} in body must be of type {type_name}: {}",
                gofmt::quote(value)
            ),
        )
    }

    /// A composite (`errors.New`) message.
    pub(crate) fn composite(message: String) -> Failure {
        Failure::new(Kind::Composite, "", None, message)
    }

    /// The field error upstream makes of it, the path rooted at the object.
    pub(crate) fn to_cause(&self) -> Cause {
        self.to_cause_under(None)
    }

    /// The field error when validation ran on a sub-schema rooted at
    /// `prefix` (upstream's `fldPath`, e.g. `status` for the status
    /// subresource): fields are `prefix.name`, root errors `prefix`.
    pub(crate) fn to_cause_under(&self, prefix: Option<&str>) -> Cause {
        let trimmed = self.name.strip_prefix('.').unwrap_or(&self.name);
        let field = match (prefix, self.kind == Kind::Composite || trimmed.is_empty()) {
            (None, true) => "<nil>".to_owned(),
            (Some(p), true) => p.to_owned(),
            (None, false) => trimmed.to_owned(),
            (Some(p), false) => format!("{p}.{trimmed}"),
        };
        let or_empty = || {
            self.value
                .clone()
                .unwrap_or_else(|| Value::String(String::new()))
        };
        match &self.kind {
            Kind::Required => Cause::new(field, Cause::FIELD_VALUE_REQUIRED, "Required value"),
            Kind::Enum(values) => {
                let supported: Vec<String> = values
                    .iter()
                    .map(|v| match v {
                        Value::String(s) => gofmt::quote(s),
                        other => gofmt::quote(&gofmt::json(other)),
                    })
                    .collect();
                let mut message = format!(
                    "Unsupported value: {}",
                    gofmt::error_value(self.value.as_ref())
                );
                if !supported.is_empty() {
                    message.push_str(&format!(": supported values: {}", supported.join(", ")));
                }
                Cause::new(field, Cause::FIELD_VALUE_NOT_SUPPORTED, message)
            }
            Kind::TooLong(max) => {
                let detail = if *max >= 0 {
                    format!("may not be more than {max} bytes")
                } else {
                    "value is too long".to_owned()
                };
                Cause::new(
                    field,
                    Cause::FIELD_VALUE_TOO_LONG,
                    format!("Too long: {detail}"),
                )
            }
            Kind::TooMany { actual, max } => {
                let head = if *actual >= 0 {
                    format!("Too many: {actual}")
                } else {
                    "Too many".to_owned()
                };
                let detail = if *max >= 0 {
                    format!("must have at most {max} items")
                } else {
                    "has too many items".to_owned()
                };
                Cause::new(
                    field,
                    Cause::FIELD_VALUE_TOO_MANY,
                    format!("{head}: {detail}"),
                )
            }
            Kind::InvalidType => Cause::new(
                field,
                FIELD_VALUE_TYPE_INVALID,
                format!(
                    "Invalid value: {}: {}",
                    gofmt::error_value(Some(&or_empty())),
                    self.message
                ),
            ),
            Kind::Invalid | Kind::Composite => Cause::new(
                field,
                Cause::FIELD_VALUE_INVALID,
                format!(
                    "Invalid value: {}: {}",
                    gofmt::error_value(Some(&or_empty())),
                    self.message
                ),
            ),
        }
    }
}

/// A `validate.Result`: errors (deduplicated by message, as `AddErrors`
/// does) and the match count the junctors rank failures by. Cheap to
/// create: nothing is allocated until an error is added.
#[derive(Debug, Default)]
pub(crate) struct Outcome {
    /// The errors, in the order found.
    pub errors: Vec<Failure>,
    /// Messages seen, once there are too many errors to scan.
    seen: Option<HashSet<String>>,
    /// `MatchCount`.
    pub matches: usize,
}

/// Up to this many errors, duplicates are found by scanning.
const SCAN_LIMIT: usize = 16;

impl Outcome {
    /// `AddErrors`: appends `f` unless an error with its message is there.
    pub(crate) fn add(&mut self, f: Failure) {
        if let Some(seen) = &mut self.seen {
            if seen.insert(f.message.clone()) {
                self.errors.push(f);
            }
            return;
        }
        if self.errors.iter().any(|e| e.message == f.message) {
            return;
        }
        self.errors.push(f);
        if self.errors.len() > SCAN_LIMIT {
            self.seen = Some(self.errors.iter().map(|e| e.message.clone()).collect());
        }
    }

    /// `Merge`: adds `other`'s errors and match count.
    pub(crate) fn merge(&mut self, other: Outcome) {
        for f in other.errors {
            self.add(f);
        }
        self.matches += other.matches;
    }

    /// `IsValid`.
    pub(crate) fn is_valid(&self) -> bool {
        self.errors.is_empty()
    }

    /// `MergeAsWarnings` into an empty result: the errors are dropped (a
    /// ratcheted, unchanged value), the match count kept.
    pub(crate) fn ratchet(&mut self) {
        self.errors.clear();
        self.seen = None;
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn causes_read_as_upstream() {
        let cases = [
            (
                Failure::invalid_type("spec.replicas", "integer", "string"),
                r#"spec.replicas: Invalid value: "string": spec.replicas in body must be of type integer: "string""#,
            ),
            (
                Failure::new(
                    Kind::Required,
                    ".spec",
                    None,
                    ".spec in body is required".into(),
                ),
                "spec: Required value",
            ),
            (
                Failure::new(
                    Kind::Enum(vec![json!("foo"), json!("bar"), json!(1)]),
                    "gamma",
                    Some(json!("qux")),
                    String::new(),
                ),
                r#"gamma: Unsupported value: "qux": supported values: "foo", "bar", "1""#,
            ),
            (
                Failure::new(
                    Kind::TooLong(5),
                    "spec.s",
                    Some(json!("abcdefg")),
                    String::new(),
                ),
                "spec.s: Too long: may not be more than 5 bytes",
            ),
            (
                Failure::new(
                    Kind::TooMany { actual: 4, max: 3 },
                    "spec.l",
                    None,
                    String::new(),
                ),
                "spec.l: Too many: 4: must have at most 3 items",
            ),
            (
                Failure::new(
                    Kind::Invalid,
                    "beta",
                    Some(json!(5)),
                    "beta in body should be greater than or equal to 10".into(),
                ),
                "beta: Invalid value: 5: beta in body should be greater than or equal to 10",
            ),
            (
                Failure::composite(r#""spec.a" must validate at least one schema (anyOf)"#.into()),
                r#"<nil>: Invalid value: "": "spec.a" must validate at least one schema (anyOf)"#,
            ),
        ];
        for (failure, want) in cases {
            assert_eq!(failure.to_cause().to_string(), want);
        }
    }

    #[test]
    fn outcome_deduplicates_by_message() {
        let mut o = Outcome::default();
        o.add(Failure::composite("a".into()));
        o.add(Failure::composite("a".into()));
        assert_eq!(o.errors.len(), 1);
        for i in 0..40 {
            o.add(Failure::composite(format!("m{}", i % 20)));
        }
        assert_eq!(o.errors.len(), 21, "deduplicated past the scan limit too");
    }
}
