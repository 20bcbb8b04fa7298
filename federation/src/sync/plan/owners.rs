//! Who owns a field of a member object, from its `metadata.managedFields`
//! (FieldsV1: `f:name`, `k:{"name":"web"}`, `v:"x"`, `i:0`).
//!
//! List items are matched against the sets by value (the sets were
//! computed from this very object), so no schema is needed: `i:N` by
//! position, `v:` by equal value, `k:` by equal key fields (a key field
//! the item lacks, such as a defaulted `protocol`, matches).

use serde_json::Value;

use super::path::{FieldPath, Step};
use crate::sync::FIELD_MANAGER;
use skein_apiserver::apply::fieldpath::{PathElement, Set, value_eq};
use skein_apiserver::apply::managers::{Managed, Operation};

/// The first manager other than Skein ([`FIELD_MANAGER`]) that owns the
/// field at `path` of `observed`, or a position above it that is owned
/// whole (an atomic list or map). `None` when no other manager does (or
/// managedFields cannot be read).
pub fn field_owner(observed: &Value, path: &FieldPath) -> Option<String> {
    owner_in(&managed(observed)?, observed, path)
}

/// [`field_owner`] with `observed`'s managedFields already decoded.
pub(super) fn owner_in(managed: &Managed, observed: &Value, path: &FieldPath) -> Option<String> {
    owned_at(managed, observed, path).map(|(m, _)| m)
}

/// The first other manager owning `path` (or a position above it), and
/// how many steps of `path` lead to the position it owns.
pub(super) fn owned_at(
    managed: &Managed,
    observed: &Value,
    path: &FieldPath,
) -> Option<(String, usize)> {
    managed
        .entries
        .iter()
        .filter(|(id, _)| id.manager != FIELD_MANAGER)
        .find_map(|(id, e)| {
            owned_depth(&e.set, Some(observed), &path.0, 1).map(|d| (id.manager.clone(), d))
        })
}

/// Decoded `metadata.managedFields` of `observed` (`None`: unreadable).
pub(super) fn managed(observed: &Value) -> Option<Managed> {
    Managed::decode(observed.pointer("/metadata/managedFields")).ok()
}

/// Whether `set` owns `path` of `value` (or a position above it owned
/// whole); the number of steps to that position. `depth` counts the
/// current step.
fn owned_depth(set: &Set, value: Option<&Value>, path: &[Step], depth: usize) -> Option<usize> {
    let (step, rest) = path.split_first()?;
    let (candidates, next): (Vec<&PathElement>, Option<&Value>) = match step {
        Step::Field(name) => {
            let pe = PathElement::Field(name.clone());
            let found = set
                .members()
                .chain(set.children().map(|(pe, _)| pe))
                .filter(|e| **e == pe)
                .collect();
            (found, value.and_then(|v| v.get(name)))
        }
        Step::Item { index, .. } => {
            let item = value.and_then(Value::as_array).and_then(|a| a.get(*index));
            let found = set
                .members()
                .chain(set.children().map(|(pe, _)| pe))
                .filter(|e| item_matches(e, *index, item))
                .collect();
            (found, item)
        }
    };
    candidates.into_iter().find_map(|e| {
        if rest.is_empty() {
            return set.has_member(e).then_some(depth);
        }
        match set.child(e) {
            Some(child) => owned_depth(child, next, rest, depth + 1),
            // Owned whole: an atomic list, map or untyped value.
            None => set.has_member(e).then_some(depth),
        }
    })
}

fn item_matches(e: &PathElement, index: usize, item: Option<&Value>) -> bool {
    match e {
        PathElement::Index(i) => usize::try_from(*i).ok() == Some(index),
        PathElement::Value(v) => item.is_some_and(|it| value_eq(v, it)),
        PathElement::Key(fields) => item.is_some_and(|it| key_matches(fields, it)),
        PathElement::Field(_) => false,
    }
}

fn key_matches(fields: &[(String, Value)], item: &Value) -> bool {
    let Some(m) = item.as_object() else {
        return false;
    };
    let mut any = false;
    for (k, v) in fields {
        match m.get(k) {
            Some(iv) if value_eq(iv, v) => any = true,
            Some(_) => return false,
            None => {}
        }
    }
    any
}

/// Whether Skein's own apply on `observed` owns a field `desired` no
/// longer has (the template lost it: an apply removes it).
pub fn skein_owns_more(desired: &Value, observed: &Value) -> bool {
    let Some(m) = managed(observed) else {
        return false;
    };
    m.entries
        .iter()
        .filter(|(id, _)| {
            id.manager == FIELD_MANAGER
                && id.operation == Operation::Apply
                && id.subresource.is_empty()
        })
        .any(|(_, e)| !covers(&e.set, desired))
}

/// Whether every path of `set` exists in `v`.
fn covers(set: &Set, v: &Value) -> bool {
    set.members().all(|pe| resolve(pe, v).is_some())
        && set
            .children()
            .all(|(pe, child)| resolve(pe, v).is_some_and(|c| covers(child, c)))
}

fn resolve<'a>(pe: &PathElement, v: &'a Value) -> Option<&'a Value> {
    match pe {
        PathElement::Field(name) => v.as_object()?.get(name),
        PathElement::Key(fields) => v.as_array()?.iter().find(|it| key_matches(fields, it)),
        PathElement::Value(x) => v.as_array()?.iter().find(|it| value_eq(x, it)),
        PathElement::Index(i) => v.as_array()?.get(usize::try_from(*i).ok()?),
    }
}
