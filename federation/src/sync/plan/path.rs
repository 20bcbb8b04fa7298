//! Field paths in an object and the containment check (is every field of
//! the desired copy in the member's object, with the same value?).

use std::fmt;

use serde_json::Value;

use skein_apiserver::apply::fieldpath::value_eq;

/// One step of a [`FieldPath`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Step {
    /// A struct field or map key.
    Field(String),
    /// A list item, by position; `key` is how people name it
    /// (`name=web` for an item with a `name`).
    Item {
        /// The position in the list.
        index: usize,
        /// `name=<name>` when the item has a string `name`.
        key: Option<String>,
    },
}

/// A path from the object root, printed for people:
/// `spec.template.spec.containers[name=web].image`, `metadata.labels.app`,
/// `spec.ports[0].port`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FieldPath(pub Vec<Step>);

impl fmt::Display for FieldPath {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, step) in self.0.iter().enumerate() {
            match step {
                Step::Field(name) if i == 0 => f.write_str(name)?,
                Step::Field(name) => write!(f, ".{name}")?,
                Step::Item { key: Some(k), .. } => write!(f, "[{k}]")?,
                Step::Item { index, key: None } => write!(f, "[{index}]")?,
            }
        }
        Ok(())
    }
}

/// How an item is named in a path: `name=web` when it has a string `name`.
pub(super) fn item_key(item: Option<&Value>) -> Option<String> {
    item.and_then(|v| v.get("name"))
        .and_then(Value::as_str)
        .map(|n| format!("name={n}"))
}

/// Whether a desired value says nothing an absent field would not say:
/// null, false, 0, "", and objects and lists of such (what Go's
/// `omitempty` drops from the member's answer).
fn is_empty(v: &Value) -> bool {
    match v {
        Value::Null => true,
        Value::Bool(b) => !b,
        Value::Number(n) => n.as_f64() == Some(0.0),
        Value::String(s) => s.is_empty(),
        Value::Array(a) => a.is_empty(),
        Value::Object(m) => m.values().all(is_empty),
    }
}

/// Up to `limit` paths where `observed` does not contain `desired`, in
/// document order (desired's keys; list items by position, then extra or
/// missing items). Containment: every key of a desired object is in the
/// observed one with a contained value (an empty desired value may be
/// absent); lists have equal length and contain elementwise; scalars are
/// equal, numbers numerically.
pub fn differences(desired: &Value, observed: &Value, limit: usize) -> Vec<FieldPath> {
    let mut out = Vec::new();
    let mut path = Vec::new();
    diff(desired, Some(observed), &mut path, &mut out, limit);
    out
}

fn diff(
    d: &Value,
    o: Option<&Value>,
    path: &mut Vec<Step>,
    out: &mut Vec<FieldPath>,
    limit: usize,
) {
    if out.len() >= limit {
        return;
    }
    match (d, o) {
        (_, None | Some(Value::Null)) if is_empty(d) => {}
        (Value::Object(dm), Some(Value::Object(om))) => {
            for (k, dv) in dm {
                path.push(Step::Field(k.clone()));
                diff(dv, om.get(k), path, out, limit);
                path.pop();
            }
        }
        (Value::Array(da), Some(Value::Array(oa))) => {
            for (i, dv) in da.iter().enumerate() {
                let ov = oa.get(i);
                path.push(Step::Item {
                    index: i,
                    key: item_key(Some(dv)).or_else(|| item_key(ov)),
                });
                match ov {
                    Some(ov) => diff(dv, Some(ov), path, out, limit),
                    None if out.len() < limit => out.push(FieldPath(path.clone())),
                    None => {}
                }
                path.pop();
            }
            for (i, ov) in oa.iter().enumerate().skip(da.len()) {
                if out.len() >= limit {
                    return;
                }
                path.push(Step::Item {
                    index: i,
                    key: item_key(Some(ov)),
                });
                out.push(FieldPath(path.clone()));
                path.pop();
            }
        }
        (_, Some(o)) if scalar_eq(d, o) => {}
        _ => out.push(FieldPath(path.clone())),
    }
}

fn scalar_eq(d: &Value, o: &Value) -> bool {
    !d.is_object() && !d.is_array() && value_eq(d, o)
}
