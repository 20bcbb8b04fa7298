//! The walk over a custom resource (upstream `Validator.validate`): rules
//! are evaluated at each node that has them, with `self` the node's value
//! and `oldSelf` its correlated old value; old values correlate through
//! object fields, map entries (map type unset, `granular`, `atomic`) and
//! map-list items by their keys, nothing else. Failures on a value an
//! update left unchanged are ratcheted into warnings, as with upstream's
//! `CRDValidationRatcheting` (on by default).

use cel::common::types::CelOptional;
use cel::{Context, Value as CelValue};
use serde_json::Value;
use skein_admission::Cause;

use super::Outcome;
use super::env::{self, is_no_such_overload, runtime_error};
use super::node::{ListType, Node};
use super::rule::{Reason, Rule};
use super::value::to_val;

/// Upstream's `MaxEvaluatedMessageExpressionSizeBytes`.
const MAX_MESSAGE_BYTES: usize = 5 * 1024;

/// The correlation of a node with the old object, for ratcheting
/// (upstream `ratchetingOptions`): the node's (new, old) pair when it has
/// one, else the nearest correlated ancestor's.
#[derive(Clone, Copy, Default)]
struct Ratchet<'a> {
    current: Option<(&'a Value, &'a Value)>,
    parent: Option<(&'a Value, &'a Value)>,
}

impl<'a> Ratchet<'a> {
    /// Whether failures here are ratcheted: the correlated value (or the
    /// nearest correlated ancestor) is unchanged.
    fn unchanged(&self) -> bool {
        match self.current.or(self.parent) {
            Some((new, old)) => new == old,
            None => false,
        }
    }

    /// Whether the nearest correlated ancestor is unchanged (how upstream
    /// ratchets failures of `allOf` rules).
    fn parent_unchanged(&self) -> bool {
        self.parent.is_some_and(|(new, old)| new == old)
    }

    /// The correlation of a child whose correlated old value is `old`.
    fn child(&self, new: &'a Value, old: Option<&'a Value>, field: Option<&str>) -> Self {
        let Some(current) = self.current else {
            return *self;
        };
        if self.parent.is_none() && matches!(field, Some("apiVersion" | "kind")) {
            return Self::default();
        }
        Self {
            current: old.map(|o| (new, o)),
            parent: Some(current),
        }
    }
}

/// Evaluates the rules of `root` over `new` (and `old`), into `out`.
pub(crate) fn validate(root: &Node, new: &Value, old: Option<&Value>, out: &mut Outcome) {
    let ratchet = Ratchet {
        current: old.map(|o| (new, o)),
        parent: None,
    };
    let mut path = String::new();
    walk(root, new, old, ratchet, &mut path, out);
}

fn walk<'a>(
    node: &Node,
    new: &'a Value,
    old: Option<&'a Value>,
    ratchet: Ratchet<'a>,
    path: &mut String,
    out: &mut Outcome,
) {
    if new.is_null() || !node.has_rules {
        return;
    }
    let old = old.filter(|o| !o.is_null());
    if !node.rules.is_empty() {
        evaluate(node, new, old, ratchet, path, out);
    }
    if !node.below {
        return;
    }
    match new {
        Value::Object(map) => {
            let old_map = old
                .and_then(Value::as_object)
                .filter(|_| node.map_correlatable);
            if let Some(additional) = node.additional.as_deref().filter(|n| n.has_rules) {
                for (k, v) in map {
                    let old_v = old_map.and_then(|m| m.get(k));
                    let len = path.len();
                    path.push('[');
                    path.push_str(k);
                    path.push(']');
                    walk(
                        additional,
                        v,
                        old_v,
                        ratchet.child(v, old_v, Some(k)),
                        path,
                        out,
                    );
                    path.truncate(len);
                }
            }
            if node.properties.is_empty() {
                return;
            }
            for (k, v) in map {
                let Some(prop) = node.properties.get(k).filter(|p| p.node.has_rules) else {
                    continue;
                };
                let old_v = old_map.and_then(|m| m.get(k));
                let len = path.len();
                if !path.is_empty() {
                    path.push('.');
                }
                path.push_str(k);
                walk(
                    &prop.node,
                    v,
                    old_v,
                    ratchet.child(v, old_v, Some(k)),
                    path,
                    out,
                );
                path.truncate(len);
            }
        }
        Value::Array(items) => {
            let Some(item_node) = node.items.as_deref().filter(|n| n.has_rules) else {
                return;
            };
            let old_items = old.and_then(Value::as_array);
            for (i, v) in items.iter().enumerate() {
                let old_v = match (&node.list_type, old_items) {
                    (ListType::Map(keys), Some(olds)) => correlate(keys, v, olds),
                    _ => None,
                };
                let len = path.len();
                path.push('[');
                path.push_str(&i.to_string());
                path.push(']');
                let child = match ratchet.current {
                    Some(_) => Ratchet {
                        current: old_v.map(|o| (v, o)),
                        parent: ratchet.current,
                    },
                    None => ratchet,
                };
                walk(item_node, v, old_v, child, path, out);
                path.truncate(len);
            }
        }
        _ => {}
    }
}

/// The old item of a map list with the same key values as `item`.
fn correlate<'a>(keys: &[String], item: &Value, olds: &'a [Value]) -> Option<&'a Value> {
    if keys.is_empty() {
        return None;
    }
    olds.iter()
        .find(|o| keys.iter().all(|k| o.get(k) == item.get(k)))
}

/// The field path of an error at `path` (`<nil>` for the root, as
/// upstream's nil `field.Path` prints).
fn field_of(path: &str, extra: Option<&str>) -> String {
    match (path.is_empty(), extra) {
        (true, None) => "<nil>".to_owned(),
        (true, Some(e)) => e.to_owned(),
        (false, None) => path.to_owned(),
        (false, Some(e)) if e.starts_with('[') => format!("{path}{e}"),
        (false, Some(e)) => format!("{path}.{e}"),
    }
}

/// Evaluates the rules of one node.
fn evaluate(
    node: &Node,
    new: &Value,
    old: Option<&Value>,
    ratchet: Ratchet<'_>,
    path: &str,
    out: &mut Outcome,
) {
    // Built only when a rule fails.
    let type_value = || Value::from(node.type_name.as_str());
    let env = match env::env() {
        Ok(env) => env,
        Err(e) => {
            out.causes.push(Cause::invalid(
                field_of(path, None),
                &type_value(),
                format!("rule compiler initialization error: {e}"),
            ));
            return;
        }
    };
    let uses_old = node.rules.iter().any(|r| r.uses_old_self);
    let mut ctx = Context::with_env(env.clone());
    ctx.add_variable_as_val("self", to_val(new, node, 0));
    if uses_old && let Some(o) = old {
        ctx.add_variable_as_val("oldSelf", to_val(o, node, 0));
    }
    let mut optional_ctx: Option<Context<'_, '_>> = None;
    for rule in &node.rules {
        if rule.uses_old_self && old.is_none() && !rule.optional_old_self {
            continue;
        }
        let result = if rule.optional_old_self {
            let c = optional_ctx.get_or_insert_with(|| {
                let mut c = Context::with_env(env.clone());
                c.add_variable_as_val("self", to_val(new, node, 0));
                let opt = match old {
                    Some(o) => CelOptional::of(to_val(o, node, 0)),
                    None => CelOptional::none(),
                };
                c.add_variable_as_val("oldSelf", Box::new(opt));
                c
            });
            rule.program.execute(c)
        } else {
            rule.program.execute(&ctx)
        };
        match result {
            Ok(CelValue::Bool(true)) => {}
            Ok(_) => {
                let at = field_of(path, rule.field_path.as_deref());
                let message = match &rule.message_expression {
                    Some((program, _)) => message_from(program.execute(&ctx))
                        .unwrap_or_else(|| rule.message_or_default()),
                    None => rule.message_or_default(),
                };
                let shown = if rule.in_all_of {
                    Value::from("")
                } else {
                    type_value()
                };
                let cause = match rule.reason {
                    Reason::Invalid => Cause::invalid(at, &shown, message),
                    Reason::Forbidden => Cause::forbidden(at, message),
                    Reason::Required => Cause::required(at, message),
                    Reason::Duplicate => Cause::duplicate(at, &shown),
                };
                let ratcheted = if rule.in_all_of {
                    ratchet.parent_unchanged()
                } else {
                    ratchet.unchanged()
                };
                if !rule.uses_old_self && ratcheted {
                    out.warnings.push(cause.to_string());
                } else {
                    out.causes.push(cause);
                }
            }
            Err(error) => out.causes.push(runtime_cause(
                &field_of(path, None),
                &type_value(),
                rule,
                &error,
            )),
        }
    }
}

/// A `messageExpression` result as upstream accepts it (a non-empty string
/// of at most 5 KiB with no line breaks, trimmed), or `None` for the
/// default message.
fn message_from(result: Result<CelValue, cel::ExecutionError>) -> Option<String> {
    let CelValue::String(s) = result.ok()? else {
        return None;
    };
    let trimmed = s.trim();
    if trimmed.is_empty() || trimmed.len() > MAX_MESSAGE_BYTES || trimmed.contains('\n') {
        return None;
    }
    Some(trimmed.to_owned())
}

/// An evaluation error, worded as upstream.
fn runtime_cause(
    here: &str,
    type_value: &Value,
    rule: &Rule,
    error: &cel::ExecutionError,
) -> Cause {
    let detail = if is_no_such_overload(error) {
        format!(
            "'no such overload': call arguments did not match a supported operator, function or macro signature for rule: {}",
            rule.error_string()
        )
    } else {
        format!(
            "{} evaluating rule: {}",
            runtime_error(error),
            rule.error_string()
        )
    };
    Cause::invalid(here, type_value, detail)
}
