//! `x-kubernetes-validations`: CEL rules on CRD schemas, as
//! apiextensions-apiserver v1.33 compiles (`pkg/apiserver/schema/cel/
//! compilation.go`, the rule checks of `pkg/apis/apiextensions/validation`)
//! and evaluates them (`validation.go`), with the Kubernetes CEL libraries
//! of the 1.33 environment.
//!
//! [`compile`] turns one version's `openAPIV3Schema` into [`Rules`] once;
//! [`Rules::validate`] evaluates them against a custom resource (and its
//! old version on update). The `cel` crate (0.15) parses and interprets;
//! this module gives it typed data, Kubernetes' functions and upstream's
//! paths and messages.
//!
//! - `node.rs`: the schema tree the rules sit on (CEL types, list types,
//!   correlation); `escape.rs`: CEL names of properties (`a__dash__b`);
//!   `rule.rs`: one rule's checks and compilation; `field_path.rs`:
//!   `fieldPath`; `check.rs`: static checks standing in for cel-go's type
//!   checker (undefined fields, undeclared names, mismatched comparisons,
//!   bad literals); `env.rs`: the shared environment and cel-go's error
//!   texts; `value.rs`: JSON as typed CEL values, strings borrowed;
//!   `eval.rs`: the walk over a resource (correlation of old values,
//!   ratcheting); `library/`: lists, sets, regex, quantity, URLs, IP/CIDR,
//!   format, semver.
//!
//! Known differences from upstream: no cost estimation or runtime cost
//! limits; two-variable comprehensions are refused at compile time; set
//! and map lists compare in order (upstream ignores order); the parser's
//! syntax-error texts are ANTLR's (as cel-go's) but may word some cases
//! differently.

mod check;
mod env;
mod escape;
mod eval;
mod field_path;
mod library;
mod node;
mod rule;
mod value;

use serde_json::Value;
use skein_admission::Cause;

use node::{ListType, MAX_DEPTH, Node};
use rule::{Site, compile_rule};

/// Every rule of one CRD version's schema, compiled once. `Send + Sync`:
/// share it between requests.
#[derive(Debug)]
pub struct Rules {
    root: Node,
}

/// What [`Rules::validate_with_warnings`] found.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Outcome {
    /// Failed rules and evaluation errors, with upstream's paths.
    pub causes: Vec<Cause>,
    /// Failures ratcheted on update (the value did not change), which
    /// upstream returns as warnings: `field: message` texts.
    pub warnings: Vec<String>,
}

/// Compiles every rule of `schema` (an `openAPIV3Schema`); `field_prefix`
/// is the path of that schema in the CRD (e.g.
/// `spec.versions[0].schema.openAPIV3Schema`), to which upstream's error
/// paths are relative: `<prefix>.properties[spec].x-kubernetes-validations[0].rule:
/// Invalid value: apiextensions.ValidationRule{...}: compilation failed: ERROR: <input>:1:9: Syntax error: ...`.
/// The errors are those of the rules' own checks (empty rule, message,
/// `reason`, `fieldPath`), of compilation (rule and `messageExpression`),
/// and of `oldSelf` below a list that is not a map list.
pub fn compile(schema: &Value, field_prefix: &str) -> Result<Rules, Vec<Cause>> {
    let mut causes = Vec::new();
    let root = build(schema, field_prefix, None, 0, &mut causes);
    if causes.is_empty() {
        Ok(Rules { root })
    } else {
        Err(causes)
    }
}

/// The node of `schema` at `path`, its children and rules.
fn build(
    schema: &Value,
    path: &str,
    uncorrelatable: Option<&str>,
    depth: usize,
    causes: &mut Vec<Cause>,
) -> Node {
    let mut node = Node::shape(schema);
    // The root is a resource: `apiVersion`, `kind`, `metadata.name`.
    node.resource |= depth == 0;
    if depth >= MAX_DEPTH {
        return node;
    }
    if let Some(props) = schema.get("properties").and_then(Value::as_object) {
        let below = if node.map_correlatable {
            uncorrelatable
        } else {
            uncorrelatable.or(Some(path))
        };
        for (name, sub) in props {
            let child = build(
                sub,
                &format!("{path}.properties[{name}]"),
                below,
                depth + 1,
                causes,
            );
            node.below |= child.has_rules;
            let (k, p) = Node::property(name, child);
            node.properties.insert(k, p);
        }
    }
    if let Some(sub) = schema.get("additionalProperties").filter(|s| s.is_object()) {
        let child = build(
            sub,
            &format!("{path}.additionalProperties"),
            uncorrelatable,
            depth + 1,
            causes,
        );
        node.below |= child.has_rules;
        node.additional = Some(Box::new(child));
    }
    if let Some(sub) = schema.get("items").filter(|s| s.is_object()) {
        let below = if matches!(node.list_type, ListType::Map(_)) {
            uncorrelatable
        } else {
            uncorrelatable.or(Some(path))
        };
        let child = build(sub, &format!("{path}.items"), below, depth + 1, causes);
        node.below |= child.has_rules;
        node.items = Some(Box::new(child));
    }
    if let Some(rules) = schema
        .get("x-kubernetes-validations")
        .and_then(Value::as_array)
    {
        let mut compiled = Vec::with_capacity(rules.len());
        for (i, raw) in rules.iter().enumerate() {
            let site = Site {
                path: format!("{path}.x-kubernetes-validations[{i}]"),
                node: &node,
                schema,
                uncorrelatable,
            };
            match compile_rule(raw, &site) {
                Ok(Some(rule)) => compiled.push(rule),
                Ok(None) => {}
                Err(mut errs) => causes.append(&mut errs),
            }
        }
        node.rules = compiled;
    }
    // Rules of `allOf` entries apply to the same value, after the node's
    // own (upstream's AllOfValidators); `anyOf`, `oneOf` and `not` rules
    // are ignored, as upstream.
    if let Some(all_of) = schema.get("allOf").and_then(Value::as_array) {
        for (a, entry) in all_of.iter().enumerate() {
            let Some(rules) = entry
                .get("x-kubernetes-validations")
                .and_then(Value::as_array)
            else {
                continue;
            };
            for (i, raw) in rules.iter().enumerate() {
                let site = Site {
                    path: format!("{path}.allOf[{a}].x-kubernetes-validations[{i}]"),
                    node: &node,
                    schema,
                    uncorrelatable,
                };
                match compile_rule(raw, &site) {
                    Ok(Some(mut rule)) => {
                        rule.in_all_of = true;
                        node.rules.push(rule);
                    }
                    Ok(None) => {}
                    Err(mut errs) => causes.append(&mut errs),
                }
            }
        }
    }
    node.has_rules = node.below || !node.rules.is_empty();
    node
}

/// Upstream skips CEL rules when schema validation already found a
/// "blocking" error (types `FieldValueNotSupported`, `Required`,
/// `TooLong`, `TooMany`, `TypeInvalid`: the rules would run on data of
/// the wrong shape) and adds this cause instead (`hasBlockingErr` in the
/// custom resource strategy). `None` when the rules should run.
pub fn blocking_cause(schema_causes: &[Cause]) -> Option<Cause> {
    let blocking = [
        Cause::FIELD_VALUE_NOT_SUPPORTED,
        Cause::FIELD_VALUE_REQUIRED,
        Cause::FIELD_VALUE_TOO_LONG,
        Cause::FIELD_VALUE_TOO_MANY,
        "FieldValueTypeInvalid",
    ];
    schema_causes
        .iter()
        .any(|c| blocking.contains(&c.reason.as_str()))
        .then(|| {
            Cause::invalid_rendered(
                "<nil>",
                "\"null\"",
                "some validation rules were not checked because the object was invalid; correct the existing errors to complete validation",
            )
        })
}

impl Rules {
    /// Whether the schema has no rules (validation has nothing to do).
    pub fn is_empty(&self) -> bool {
        !self.root.has_rules
    }

    /// Evaluates every rule where it sits on `new` (`self` is the value
    /// of that node; `oldSelf` the correlated old value on update, and
    /// transition rules run only where one exists). The causes have
    /// upstream's paths (the node's, or the rule's `fieldPath`; `<nil>`
    /// for the root), types (`reason`) and messages (`message`,
    /// `messageExpression` or `failed rule: <rule>`). Failures on values
    /// an update did not change are ratcheted (dropped here; see
    /// [`Rules::validate_with_warnings`]).
    pub fn validate(&self, new: &Value, old: Option<&Value>) -> Vec<Cause> {
        self.validate_with_warnings(new, old).causes
    }

    /// As [`Rules::validate`], also returning the ratcheted failures as
    /// the warnings upstream sends.
    pub fn validate_with_warnings(&self, new: &Value, old: Option<&Value>) -> Outcome {
        let mut outcome = Outcome::default();
        if self.root.has_rules {
            eval::validate(&self.root, new, old, &mut outcome);
        }
        outcome
    }
}

#[cfg(test)]
mod tests;
#[cfg(test)]
mod upstream_tests;
