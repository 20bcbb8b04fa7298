//! Merging an applied configuration into a live object.
//!
//! Follows `sigs.k8s.io/structured-merge-diff` `typed/merge.go`: the
//! configuration wins at every leaf; granular maps and structs merge key by
//! key; associative lists merge item by item (by key, or by value for
//! sets), keeping the live order and placing the configuration's new items
//! where the configuration puts them relative to shared ones; atomic lists
//! and maps are replaced whole.
//!
//! # Contracts
//! - `merge(None, None)` is `None`; otherwise a present side is never lost.
//! - Duplicate keys in the configuration are an error; in the live object
//!   they are tolerated (each duplicate is kept unless the configuration
//!   names its key).

use std::collections::{BTreeMap, BTreeSet, VecDeque};

use serde_json::{Map, Value};

use super::fieldpath::{Path, PathElement, path_string};
use super::typed::{Node, TypedError, item_element, node};
use crate::schema::Schema;

/// Merges `rhs` (config) into `lhs` (live).
pub fn merge(
    lhs: Option<&Value>,
    rhs: Option<&Value>,
    ty: Option<Schema<'_>>,
) -> Result<Option<Value>, Vec<TypedError>> {
    let mut errs = Vec::new();
    let mut path = Vec::new();
    let out = walk(lhs, rhs, ty, &mut path, &mut errs);
    if errs.is_empty() { Ok(out) } else { Err(errs) }
}

fn keep_rhs(lhs: Option<&Value>, rhs: Option<&Value>) -> Option<Value> {
    rhs.or(lhs).cloned()
}

fn map_view(v: Option<&Value>) -> Result<Option<&Map<String, Value>>, ()> {
    match v {
        None | Some(Value::Null) => Ok(None),
        Some(Value::Object(m)) => Ok(Some(m)),
        Some(_) => Err(()),
    }
}

fn list_view(v: Option<&Value>) -> Result<Option<&[Value]>, ()> {
    match v {
        None | Some(Value::Null) => Ok(None),
        Some(Value::Array(a)) => Ok(Some(a)),
        Some(_) => Err(()),
    }
}

fn walk(
    lhs: Option<&Value>,
    rhs: Option<&Value>,
    ty: Option<Schema<'_>>,
    path: &mut Path,
    errs: &mut Vec<TypedError>,
) -> Option<Value> {
    if lhs.is_none() && rhs.is_none() {
        return None;
    }
    let n = node(ty);
    match &n {
        Node::Leaf => keep_rhs(lhs, rhs),
        Node::Struct(_) | Node::Map(_) => {
            let (Ok(lm), Ok(rm)) = (map_view(lhs), map_view(rhs)) else {
                return keep_rhs(lhs, rhs);
            };
            let empty = |m: Option<&Map<String, Value>>| m.is_none_or(Map::is_empty);
            if empty(lm) && empty(rm) {
                return keep_rhs(lhs, rhs);
            }
            let mut keys: BTreeSet<&String> = BTreeSet::new();
            keys.extend(lm.into_iter().flat_map(|m| m.keys()));
            keys.extend(rm.into_iter().flat_map(|m| m.keys()));
            let mut out = Map::new();
            for key in keys {
                let l = lm.and_then(|m| m.get(key));
                let r = rm.and_then(|m| m.get(key));
                let cty = match &n {
                    Node::Struct(s) => s.field(key),
                    Node::Map(v) => *v,
                    _ => None,
                };
                path.push(PathElement::Field(key.clone()));
                if let Some(v) = walk(l, r, cty, path, errs) {
                    out.insert(key.clone(), v);
                }
                path.pop();
            }
            (!out.is_empty()).then_some(Value::Object(out))
        }
        Node::List { item, keys } => {
            let (Ok(ll), Ok(rl)) = (list_view(lhs), list_view(rhs)) else {
                return keep_rhs(lhs, rhs);
            };
            let empty = |l: Option<&[Value]>| l.is_none_or(<[Value]>::is_empty);
            if empty(ll) && empty(rl) {
                return keep_rhs(lhs, rhs);
            }
            merge_items(
                ll.unwrap_or(&[]),
                rl.unwrap_or(&[]),
                *item,
                keys,
                path,
                errs,
            )
        }
    }
}

/// The path elements of a list's items, and each element's item (a
/// duplicated element maps to null when duplicates are allowed).
fn index_items<'v>(
    items: &'v [Value],
    item: Option<Schema<'_>>,
    keys: &[&str],
    allow_duplicates: bool,
    path: &Path,
    errs: &mut Vec<TypedError>,
) -> (Vec<PathElement>, BTreeMap<PathElement, &'v Value>) {
    static NULL: Value = Value::Null;
    let mut pes = Vec::with_capacity(items.len());
    let mut observed: BTreeMap<PathElement, &Value> = BTreeMap::new();
    for (i, child) in items.iter().enumerate() {
        let pe = match item_element(item, keys, child) {
            Ok(pe) => pe,
            Err(e) => {
                errs.push(TypedError {
                    path: path_string(path),
                    message: format!("element {i}: {e}"),
                });
                continue;
            }
        };
        if observed.contains_key(&pe) {
            if !allow_duplicates {
                errs.push(TypedError {
                    path: path_string(path),
                    message: format!("duplicate entries for key {pe}"),
                });
                continue;
            }
            observed.insert(pe.clone(), &NULL);
        } else {
            observed.insert(pe.clone(), child);
        }
        pes.push(pe);
    }
    (pes, observed)
}

fn merge_items(
    lhs: &[Value],
    rhs: &[Value],
    item: Option<Schema<'_>>,
    keys: &[&str],
    path: &mut Path,
    errs: &mut Vec<TypedError>,
) -> Option<Value> {
    let before = errs.len();
    let (rhs_pes, observed_rhs) = index_items(rhs, item, keys, false, path, errs);
    let (lhs_pes, observed_lhs) = index_items(lhs, item, keys, true, path, errs);
    if errs.len() != before {
        return None;
    }
    let mut shared: VecDeque<&PathElement> = rhs_pes
        .iter()
        .filter(|pe| observed_lhs.contains_key(*pe))
        .collect();
    let mut next_shared = shared.pop_front();
    let mut merged_rhs: BTreeSet<&PathElement> = BTreeSet::new();
    let mut out = Vec::with_capacity(lhs_pes.len().max(rhs_pes.len()));
    let (l_len, r_len) = (lhs_pes.len(), rhs_pes.len());
    let (mut li, mut ri) = (0, 0);
    let mut push_item = |pe: &PathElement,
                         l: Option<&Value>,
                         r: Option<&Value>,
                         path: &mut Path,
                         errs: &mut Vec<TypedError>| {
        path.push(pe.clone());
        if let Some(v) = walk(l, r, item, path, errs) {
            out.push(v);
        }
        path.pop();
    };
    while li < l_len || ri < r_len {
        if li < l_len && ri < r_len {
            let pe = &lhs_pes[li];
            if *pe == rhs_pes[ri] {
                merged_rhs.insert(pe);
                push_item(
                    pe,
                    observed_lhs.get(pe).copied(),
                    observed_rhs.get(pe).copied(),
                    path,
                    errs,
                );
                li += 1;
                ri += 1;
                next_shared = shared.pop_front();
                continue;
            }
            if observed_rhs.contains_key(pe) && next_shared.is_some_and(|s| s != pe) {
                li += 1;
                continue;
            }
        }
        if li < l_len {
            let pe = &lhs_pes[li];
            if !observed_rhs.contains_key(pe) {
                push_item(pe, lhs.get(li), None, path, errs);
                li += 1;
                continue;
            } else if merged_rhs.contains(pe) {
                li += 1;
            }
        }
        if ri < r_len {
            let pe = &rhs_pes[ri];
            merged_rhs.insert(pe);
            push_item(
                pe,
                observed_lhs.get(pe).copied(),
                observed_rhs.get(pe).copied(),
                path,
                errs,
            );
            ri += 1;
            if next_shared.is_some_and(|s| s == pe) {
                next_shared = shared.pop_front();
            }
        }
    }
    (!out.is_empty()).then_some(Value::Array(out))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::schema::definitions;
    use serde_json::json;

    fn deployment() -> Option<Schema<'static>> {
        definitions().for_gvk("apps", "v1", "Deployment")
    }

    fn containers(names: &[&str]) -> Value {
        let items: Vec<Value> = names.iter().map(|n| json!({"name": n})).collect();
        json!({"spec": {"template": {"spec": {"containers": items}}}})
    }

    fn names(v: &Value) -> Vec<String> {
        v["spec"]["template"]["spec"]["containers"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| c["name"].as_str().unwrap().to_owned())
            .collect()
    }

    #[test]
    fn list_order_follows_upstream() {
        let m = |l: &[&str], r: &[&str]| {
            names(
                &merge(Some(&containers(l)), Some(&containers(r)), deployment())
                    .unwrap()
                    .unwrap(),
            )
        };
        assert_eq!(m(&["a", "b"], &["c"]), ["a", "b", "c"]);
        assert_eq!(m(&["a", "b", "c"], &["c", "a"]), ["b", "c", "a"]);
        assert_eq!(m(&["a", "b"], &["x", "b"]), ["a", "x", "b"]);
        assert_eq!(m(&[], &["a"]), ["a"]);
    }

    #[test]
    fn leaves_maps_and_atomic_values() {
        let live = json!({"spec": {"replicas": 1, "selector": {"matchLabels": {"a": "1"}},
            "template": {"metadata": {"labels": {"a": "1"}}}}});
        let cfg = json!({"spec": {"replicas": 3, "selector": {"matchLabels": {"b": "2"}},
            "template": {"metadata": {"labels": {"b": "2"}}}}});
        let out = merge(Some(&live), Some(&cfg), deployment())
            .unwrap()
            .unwrap();
        assert_eq!(out["spec"]["replicas"], 3);
        assert_eq!(out["spec"]["selector"], json!({"matchLabels": {"b": "2"}}));
        assert_eq!(
            out["spec"]["template"]["metadata"]["labels"],
            json!({"a": "1", "b": "2"})
        );
    }

    #[test]
    fn duplicate_keys_in_config_are_errors() {
        let cfg = containers(&["a", "a"]);
        assert!(merge(None, Some(&cfg), deployment()).is_err());
        // Tolerated in the live object.
        assert!(merge(Some(&cfg), Some(&containers(&["b"])), deployment()).is_ok());
    }
}
