//! One `x-kubernetes-validations` entry: its checks as a CRD field
//! (apiextensions `validation.go`) and its compiled programs
//! (`schema/cel/compilation.go`).

use cel::Program;
use serde_json::Value;
use skein_admission::{Cause, quote};

use super::env;
use super::field_path;
use super::node::Node;

/// Upstream's `FieldValueErrorReason`s a rule may give.
const REASONS: [&str; 4] = [
    "FieldValueDuplicate",
    "FieldValueForbidden",
    "FieldValueInvalid",
    "FieldValueRequired",
];

/// The field error type a failed rule reports.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Reason {
    /// `field.Invalid` (the default).
    Invalid,
    /// `field.Forbidden`.
    Forbidden,
    /// `field.Required`.
    Required,
    /// `field.Duplicate`.
    Duplicate,
}

/// A compiled rule.
pub(crate) struct Rule {
    /// The rule text, trimmed.
    pub source: String,
    /// The compiled rule.
    pub program: Program,
    /// `message`, trimmed (empty when unset).
    pub message: String,
    /// The compiled `messageExpression`, and its source.
    pub message_expression: Option<(Program, String)>,
    /// `reason`.
    pub reason: Reason,
    /// `fieldPath` as upstream normalizes it (`spec.x`, `m[key]`), to
    /// append to the node's path.
    pub field_path: Option<String>,
    /// Whether the rule reads `oldSelf` (a transition rule).
    pub uses_old_self: bool,
    /// `optionalOldSelf: true`: evaluated on create too, with `oldSelf`
    /// an optional.
    pub optional_old_self: bool,
    /// Whether the rule sits in an `allOf` entry of its node (upstream
    /// prints the entry's empty `type` in failures and ratchets them on
    /// the parent's correlation).
    pub in_all_of: bool,
}

impl std::fmt::Debug for Rule {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Rule")
            .field("source", &self.source)
            .finish()
    }
}

impl Rule {
    /// `failed rule: <rule>`, or the message (upstream
    /// `ruleMessageOrDefault`).
    pub(crate) fn message_or_default(&self) -> String {
        if self.message.is_empty() {
            format!("failed rule: {}", self.source)
        } else {
            self.message.clone()
        }
    }

    /// The message, or else the rule (upstream `ruleErrorString`).
    pub(crate) fn error_string(&self) -> &str {
        if self.message.is_empty() {
            &self.source
        } else {
            &self.message
        }
    }
}

/// Where a rule sits, for its compile checks.
pub(crate) struct Site<'a> {
    /// The path of the `x-kubernetes-validations[i]` entry.
    pub path: String,
    /// The node the rule sits on.
    pub node: &'a Node,
    /// The schema of that node (for `fieldPath`).
    pub schema: &'a Value,
    /// The first ancestor whose values cannot be correlated with old ones
    /// (items of a list that is not a map list), if any.
    pub uncorrelatable: Option<&'a str>,
}

/// The checks of `validation.go` and the compilation of `compilation.go`
/// for one rule `raw`: the rule, or the causes against it.
pub(crate) fn compile_rule(raw: &Value, site: &Site<'_>) -> Result<Option<Rule>, Vec<Cause>> {
    let mut causes = Vec::new();
    let text = |k: &str| raw.get(k).and_then(Value::as_str).unwrap_or("");
    let (rule, message, message_expression, field_path) = (
        text("rule"),
        text("message"),
        text("messageExpression"),
        text("fieldPath"),
    );
    let reason = raw.get("reason").and_then(Value::as_str);
    let optional_old_self = raw.get("optionalOldSelf").and_then(Value::as_bool);
    let at = |child: &str| format!("{}.{child}", site.path);
    let trimmed_rule = rule.trim();
    let trimmed_message = message.trim();
    if trimmed_rule.is_empty() {
        causes.push(Cause::required(at("rule"), "rule is not specified"));
    } else if !message.is_empty() && trimmed_message.is_empty() {
        causes.push(Cause::invalid(
            at("message"),
            &Value::from(message),
            "message must be non-empty if specified",
        ));
    } else if trimmed_message.contains('\n') {
        causes.push(Cause::invalid(
            at("message"),
            &Value::from(message),
            "message must not contain line breaks",
        ));
    } else if trimmed_rule.contains('\n') && trimmed_message.is_empty() {
        causes.push(Cause::required(
            at("message"),
            "message must be specified if rule contains line breaks",
        ));
    }
    if !message_expression.is_empty() && message_expression.trim().is_empty() {
        causes.push(Cause::required(
            at("messageExpression"),
            "messageExpression must be non-empty if specified",
        ));
    }
    let reason = match reason {
        None => Reason::Invalid,
        Some("FieldValueForbidden") => Reason::Forbidden,
        Some("FieldValueRequired") => Reason::Required,
        Some("FieldValueDuplicate") => Reason::Duplicate,
        Some("FieldValueInvalid") => Reason::Invalid,
        Some(other) => {
            causes.push(Cause::not_supported(
                at("reason"),
                &Value::from(other),
                &REASONS,
            ));
            Reason::Invalid
        }
    };
    if !field_path.is_empty() && field_path.trim().is_empty() {
        causes.push(Cause::invalid(
            at("fieldPath"),
            &Value::from(field_path),
            "fieldPath must be non-empty if specified",
        ));
    }
    if field_path.contains('\n') {
        causes.push(Cause::invalid(
            at("fieldPath"),
            &Value::from(field_path),
            "fieldPath must not contain line breaks",
        ));
    }
    let normalized_path = if field_path.is_empty() {
        None
    } else {
        match field_path::normalize(field_path, site.schema) {
            Ok(path) => Some(path),
            Err(_) => {
                causes.push(Cause::invalid(
                    at("fieldPath"),
                    &Value::from(field_path),
                    "fieldPath must be a valid path",
                ));
                None
            }
        }
    };
    // Upstream compiles only when the schema checks above passed.
    if !causes.is_empty() {
        return Err(causes);
    }
    let rendered = render_rule(raw);
    let program = match env::compile(rule) {
        Ok(p) => p,
        Err(issues) => {
            return Err(vec![Cause::invalid_rendered(
                at("rule"),
                &rendered,
                format!("compilation failed: {issues}"),
            )]);
        }
    };
    if let Some(detail) = super::check::check_rule(&program, site.node, rule) {
        return Err(vec![Cause::invalid_rendered(at("rule"), &rendered, detail)]);
    }
    let uses_old_self = program.references().has_variable("oldSelf");
    let mut compiled_message = None;
    if !message_expression.is_empty() {
        match env::compile(message_expression) {
            Ok(p) => {
                if let Some(detail) =
                    super::check::check_message_expression(&p, site.node, message_expression)
                {
                    causes.push(Cause::invalid_rendered(
                        at("messageExpression"),
                        &rendered,
                        detail,
                    ));
                } else {
                    compiled_message = Some((p, message_expression.to_owned()));
                }
            }
            Err(issues) => causes.push(Cause::invalid_rendered(
                at("messageExpression"),
                &rendered,
                format!("messageExpression compilation failed: {issues}"),
            )),
        }
    }
    if uses_old_self {
        if let Some(path) = site.uncorrelatable {
            causes.push(Cause::invalid(
                at("rule"),
                &Value::from(rule),
                format!(
                    "oldSelf cannot be used on the uncorrelatable portion of the schema within {path}"
                ),
            ));
        }
    } else if let Some(flag) = optional_old_self {
        causes.push(Cause::invalid(
            at("optionalOldSelf"),
            &Value::from(flag),
            "may not be set if oldSelf is not used in rule",
        ));
    }
    if !causes.is_empty() {
        return Err(causes);
    }
    Ok(Some(Rule {
        source: trimmed_rule.to_owned(),
        program,
        message: trimmed_message.to_owned(),
        message_expression: compiled_message,
        reason,
        field_path: normalized_path,
        uses_old_self,
        optional_old_self: optional_old_self.unwrap_or(false),
        in_all_of: false,
    }))
}

/// The rule as Go's `%#v` prints the internal `apiextensions.ValidationRule`
/// in field errors. A set `reason` or `optionalOldSelf` is a pointer, which
/// Go prints as an address: a fixed placeholder stands in for it.
pub(crate) fn render_rule(raw: &Value) -> String {
    let text = |k: &str| quote(raw.get(k).and_then(Value::as_str).unwrap_or(""));
    let reason = if raw.get("reason").is_some_and(|r| !r.is_null()) {
        "(*apiextensions.FieldValueErrorReason)(0xc000000000)"
    } else {
        "(*apiextensions.FieldValueErrorReason)(nil)"
    };
    let optional = if raw.get("optionalOldSelf").is_some_and(|r| !r.is_null()) {
        "(*bool)(0xc000000000)"
    } else {
        "(*bool)(nil)"
    };
    format!(
        "apiextensions.ValidationRule{{Rule:{}, Message:{}, MessageExpression:{}, Reason:{reason}, FieldPath:{}, OptionalOldSelf:{optional}}}",
        text("rule"),
        text("message"),
        text("messageExpression"),
        text("fieldPath"),
    )
}
