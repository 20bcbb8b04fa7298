//! Objects read through a schema: field sets, comparisons, removal.
//!
//! Follows `sigs.k8s.io/structured-merge-diff` `typed/tofieldset.go`,
//! `typed/compare.go`, `typed/remove.go`, `typed/helpers.go` and
//! `fieldpath/set.go` (`EnsureNamedFieldsAreMembers`).
//!
//! # Contracts
//! - A position without a schema (untyped, `RawExtension`, unknown fields
//!   of a live object) is atomic: owned and compared as one value.
//! - A value whose JSON type does not fit its schema is treated as an
//!   atomic value in lenient walks and is an error in strict ones.
//! - Associative-list keys missing from an item take the key field's
//!   default (`protocol: TCP` for container and service ports), as
//!   kube-openapi publishes it.
//! - Every walk is bounded by the value's depth (JSON from serde is at most
//!   128 levels deep), and nothing here panics.

use std::collections::BTreeMap;

use serde_json::{Map, Value};

use super::fieldpath::{Path, PathElement, Set, path_string, value_eq};
use crate::schema::{ListType, Schema, Shape};

/// A position's merge semantics.
#[derive(Debug, Clone)]
pub enum Node<'a> {
    /// Owned and replaced as a whole: scalars, atomic lists and maps,
    /// untyped positions.
    Leaf,
    /// A struct with declared fields.
    Struct(Schema<'a>),
    /// A granular map whose keys are data.
    Map(Option<Schema<'a>>),
    /// An associative list: keyed by these fields, or a set when empty.
    List {
        /// The item schema.
        item: Option<Schema<'a>>,
        /// The key fields (empty: a set of scalars).
        keys: Vec<&'a str>,
    },
}

/// The node for a position.
pub fn node(ty: Option<Schema<'_>>) -> Node<'_> {
    let Some(s) = ty else {
        return Node::Leaf;
    };
    match s.shape() {
        Shape::Struct if s.is_atomic_map() => Node::Leaf,
        Shape::Struct => Node::Struct(s),
        Shape::Map if s.is_atomic_map() => Node::Leaf,
        Shape::Map => Node::Map(s.values()),
        Shape::List => match s.list_type() {
            ListType::Atomic => Node::Leaf,
            ListType::Set => Node::List {
                item: s.items(),
                keys: Vec::new(),
            },
            ListType::Map(keys) => Node::List {
                item: s.items(),
                keys,
            },
        },
        Shape::Scalar | Shape::Untyped => Node::Leaf,
    }
}

/// The schema of a struct field or map value (`None`: untyped).
pub(super) fn child_ty<'a>(n: &Node<'a>, key: &str) -> Option<Schema<'a>> {
    match n {
        Node::Struct(s) => s.field(key),
        Node::Map(v) => *v,
        _ => None,
    }
}

/// Whether `key` is a declared field of a struct node.
fn is_declared(n: &Node<'_>, key: &str) -> bool {
    matches!(n, Node::Struct(s) if s.field(key).is_some())
}

/// The default of an associative-list key field that kube-openapi
/// publishes (`+default` markers). The vendored definitions omit
/// `default`, so the few that key lists are listed here.
fn key_default(item: Option<Schema<'_>>, field: &str) -> Option<Value> {
    match (item?.type_name()?, field) {
        ("io.k8s.api.core.v1.ContainerPort", "protocol")
        | ("io.k8s.api.core.v1.ServicePort", "protocol") => Some(Value::String("TCP".to_owned())),
        _ => None,
    }
}

/// The path element of a list item (upstream `listItemToPathElement`).
pub fn item_element(
    item_ty: Option<Schema<'_>>,
    keys: &[&str],
    child: &Value,
) -> Result<PathElement, String> {
    if keys.is_empty() {
        return match child {
            Value::Object(_) => {
                Err("associative list without keys has an element that's a map type".to_owned())
            }
            Value::Array(_) => {
                Err("not supported: associative list with lists as elements".to_owned())
            }
            Value::Null => Err(
                "associative list without keys has an element that's an explicit null".to_owned(),
            ),
            v => Ok(PathElement::Value(v.clone())),
        };
    }
    let m = match child {
        Value::Null => return Err("associative list with keys may not have a null element".into()),
        Value::Object(m) => m,
        _ => return Err("associative list with keys may not have non-map elements".into()),
    };
    let mut fields = Vec::new();
    for k in keys {
        if let Some(v) = m.get(*k) {
            fields.push(((*k).to_owned(), v.clone()));
        } else if let Some(d) = key_default(item_ty, k) {
            fields.push(((*k).to_owned(), d));
        }
    }
    if fields.is_empty() {
        return Err(format!(
            "associative list with keys has an element that omits all key fields {:?} (and doesn't have default values for any key fields)",
            keys
        ));
    }
    fields.sort_by(|a, b| a.0.cmp(&b.0));
    Ok(PathElement::Key(fields))
}

/// A validation error at a path (upstream `ValidationError`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TypedError {
    /// The path, printed as upstream prints paths.
    pub path: String,
    /// What is wrong.
    pub message: String,
}

/// Formats errors as upstream's `ValidationErrors.Error()`.
pub fn errors_string(errs: &[TypedError]) -> String {
    let one = |e: &TypedError| format!("{}: {}", e.path, e.message);
    match errs {
        [e] => one(e),
        _ => {
            let mut lines = vec!["errors:".to_owned()];
            lines.extend(errs.iter().map(|e| format!("  {}", one(e))));
            lines.join("\n")
        }
    }
}

fn json_type(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "bool",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "list",
        Value::Object(_) => "map",
    }
}

/// How a walk treats problems.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// Report unknown fields, type mismatches and duplicate keys (an applied
    /// configuration).
    Strict,
    /// Tolerate them (a stored object).
    Lenient,
}

/// The map view of a struct/map value: `Some(empty)` for null, `None` when
/// the value is not a map.
fn as_map(v: &Value) -> Option<std::borrow::Cow<'_, Map<String, Value>>> {
    match v {
        Value::Object(m) => Some(std::borrow::Cow::Borrowed(m)),
        Value::Null => Some(std::borrow::Cow::Owned(Map::new())),
        _ => None,
    }
}

/// The list view of a list value: `Some(empty)` for null.
pub(super) fn as_list(v: &Value) -> Option<&[Value]> {
    match v {
        Value::Array(a) => Some(a),
        Value::Null => Some(&[]),
        _ => None,
    }
}

/// The field set of `v` (upstream `ToFieldSet`). In [`Mode::Strict`] the
/// value is validated and the errors are returned instead.
pub fn to_field_set(v: &Value, ty: Option<Schema<'_>>, mode: Mode) -> Result<Set, Vec<TypedError>> {
    let mut set = Set::new();
    let mut errs = Vec::new();
    let mut path = Vec::new();
    walk_set(v, ty, mode, &mut path, &mut set, &mut errs);
    if errs.is_empty() { Ok(set) } else { Err(errs) }
}

fn walk_set(
    v: &Value,
    ty: Option<Schema<'_>>,
    mode: Mode,
    path: &mut Path,
    set: &mut Set,
    errs: &mut Vec<TypedError>,
) {
    let n = node(ty);
    let err = |errs: &mut Vec<TypedError>, path: &Path, message: String| {
        if mode == Mode::Strict {
            errs.push(TypedError {
                path: path_string(path),
                message,
            });
        }
    };
    match &n {
        Node::Leaf => {
            if mode == Mode::Strict
                && let Some(s) = ty
                && matches!(s.shape(), Shape::Scalar)
                && matches!(v, Value::Object(_) | Value::Array(_))
            {
                err(errs, path, format!("expected scalar, got {}", json_type(v)));
            }
            set.insert(path);
        }
        Node::Struct(_) | Node::Map(_) => {
            let Some(m) = as_map(v) else {
                err(errs, path, format!("expected map, got {}", json_type(v)));
                set.insert(path);
                return;
            };
            for (key, val) in m.iter() {
                let declared = is_declared(&n, key);
                if mode == Mode::Strict && matches!(n, Node::Struct(_)) && !declared {
                    path.push(PathElement::Field(key.clone()));
                    err(errs, path, "field not declared in schema".to_owned());
                    path.pop();
                    continue;
                }
                path.push(PathElement::Field(key.clone()));
                walk_set(val, child_ty(&n, key), mode, path, set, errs);
                let empty =
                    matches!(val, Value::Null) || matches!(val, Value::Object(o) if o.is_empty());
                if empty || !declared {
                    set.insert(path);
                }
                path.pop();
            }
        }
        Node::List { item, keys } => {
            let Some(items) = as_list(v) else {
                err(errs, path, format!("expected list, got {}", json_type(v)));
                set.insert(path);
                return;
            };
            let mut pes = Vec::with_capacity(items.len());
            let mut seen: BTreeMap<PathElement, usize> = BTreeMap::new();
            for (i, child) in items.iter().enumerate() {
                match item_element(*item, keys, child) {
                    Ok(pe) => {
                        *seen.entry(pe.clone()).or_default() += 1;
                        pes.push(Some(pe));
                    }
                    Err(e) => {
                        err(errs, path, format!("element {i}: {e}"));
                        pes.push(None);
                    }
                }
            }
            for (pe, count) in &seen {
                if *count > 1 {
                    err(errs, path, format!("duplicate entries for key {pe}"));
                    path.push(pe.clone());
                    set.insert(path);
                    path.pop();
                }
            }
            for (child, pe) in items.iter().zip(pes) {
                let Some(pe) = pe else { continue };
                if seen.get(&pe).copied().unwrap_or(0) > 1 {
                    continue;
                }
                path.push(pe);
                walk_set(child, *item, mode, path, set, errs);
                set.insert(path);
                path.pop();
            }
        }
    }
}

/// What changed between two objects (upstream `typed.Comparison`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Comparison {
    /// Paths only in the old object.
    pub removed: Set,
    /// Leaves whose values differ.
    pub modified: Set,
    /// Paths only in the new object.
    pub added: Set,
}

impl Comparison {
    /// Whether nothing changed.
    pub fn is_same(&self) -> bool {
        self.removed.is_empty() && self.modified.is_empty() && self.added.is_empty()
    }

    /// Applies a filter to all three sets.
    pub fn filter(mut self, f: &dyn Fn(Set) -> Set) -> Self {
        self.removed = f(self.removed);
        self.modified = f(self.modified);
        self.added = f(self.added);
        self
    }
}

/// Compares `lhs` (old) with `rhs` (new) under the schema (upstream
/// `Compare`). Either may be absent, not both.
pub fn compare(lhs: Option<&Value>, rhs: Option<&Value>, ty: Option<Schema<'_>>) -> Comparison {
    let mut out = Comparison::default();
    let mut path = Vec::new();
    walk_compare(lhs, rhs, ty, &mut path, &mut out);
    out
}

fn leaf_compare(lhs: Option<&Value>, rhs: Option<&Value>, path: &Path, out: &mut Comparison) {
    match (lhs, rhs) {
        (None, Some(_)) => out.added.insert(path),
        (Some(_), None) => out.removed.insert(path),
        (Some(l), Some(r)) if !value_eq(l, r) => out.modified.insert(path),
        _ => {}
    }
}

fn walk_compare(
    lhs: Option<&Value>,
    rhs: Option<&Value>,
    ty: Option<Schema<'_>>,
    path: &mut Path,
    out: &mut Comparison,
) {
    if lhs.is_none() && rhs.is_none() {
        return;
    }
    let n = node(ty);
    let leaf = match &n {
        Node::Leaf => true,
        Node::Struct(_) | Node::Map(_) => {
            let lm = lhs.map(as_map);
            let rm = rhs.map(as_map);
            match (lm, rm) {
                (Some(None), _) | (_, Some(None)) => true,
                (lm, rm) => {
                    let lm = lm.flatten();
                    let rm = rm.flatten();
                    let l_empty = lm.as_ref().is_none_or(|m| m.is_empty());
                    let r_empty = rm.as_ref().is_none_or(|m| m.is_empty());
                    if l_empty && r_empty {
                        true
                    } else {
                        let mut keys: Vec<&String> = Vec::new();
                        if let Some(m) = &lm {
                            keys.extend(m.keys());
                        }
                        if let Some(m) = &rm {
                            keys.extend(m.keys());
                        }
                        keys.sort();
                        keys.dedup();
                        for key in keys {
                            let l = lm.as_ref().and_then(|m| m.get(key));
                            let r = rm.as_ref().and_then(|m| m.get(key));
                            path.push(PathElement::Field(key.clone()));
                            walk_compare(l, r, child_ty(&n, key), path, out);
                            path.pop();
                        }
                        false
                    }
                }
            }
        }
        Node::List { item, keys } => {
            let ll = lhs.map(as_list);
            let rl = rhs.map(as_list);
            match (ll, rl) {
                (Some(None), _) | (_, Some(None)) => true,
                (ll, rl) => {
                    let ll = ll.flatten().unwrap_or(&[]);
                    let rl = rl.flatten().unwrap_or(&[]);
                    if ll.is_empty() && rl.is_empty() {
                        true
                    } else {
                        compare_items(ll, rl, *item, keys, path, out);
                        false
                    }
                }
            }
        }
    };
    if leaf {
        leaf_compare(lhs, rhs, path, out);
    } else if lhs.is_none() {
        out.added.insert(path);
    } else if rhs.is_none() {
        out.removed.insert(path);
    }
}

fn group_items<'v>(
    items: &'v [Value],
    item: Option<Schema<'_>>,
    keys: &[&str],
    order: &mut Vec<PathElement>,
) -> BTreeMap<PathElement, Vec<&'v Value>> {
    let mut out: BTreeMap<PathElement, Vec<&Value>> = BTreeMap::new();
    for child in items {
        let Ok(pe) = item_element(item, keys, child) else {
            continue;
        };
        let e = out.entry(pe.clone()).or_default();
        if e.is_empty() {
            order.push(pe);
        }
        e.push(child);
    }
    out
}

fn compare_items(
    lhs: &[Value],
    rhs: &[Value],
    item: Option<Schema<'_>>,
    keys: &[&str],
    path: &mut Path,
    out: &mut Comparison,
) {
    let mut order = Vec::new();
    let lv = group_items(lhs, item, keys, &mut order);
    let rv = group_items(rhs, item, keys, &mut order);
    order.sort();
    order.dedup();
    for pe in order {
        let l = lv.get(&pe).map(Vec::as_slice).unwrap_or(&[]);
        let r = rv.get(&pe).map(Vec::as_slice).unwrap_or(&[]);
        path.push(pe);
        match (l.len(), r.len()) {
            (0, 0) => {}
            (a, b) if a <= 1 && b <= 1 => {
                walk_compare(l.first().copied(), r.first().copied(), item, path, out);
            }
            (a, b) if a >= 2 && b >= 2 => {
                let equal = a == b && l.iter().zip(r).all(|(x, y)| value_eq(x, y));
                if !equal {
                    out.modified.insert(path);
                }
            }
            (a, _) if a >= 2 => {
                if let Some(first) = r.first() {
                    walk_compare(None, Some(first), item, path, out);
                }
                out.removed.insert(path);
            }
            _ => {
                if let Some(first) = l.first() {
                    walk_compare(Some(first), None, item, path, out);
                }
                out.added.insert(path);
            }
        }
        path.pop();
    }
}

/// `v` without the paths in `set` (upstream `RemoveItems`). `None` when
/// nothing is left (upstream: a null value).
pub fn remove_items(v: &Value, set: &Set, ty: Option<Schema<'_>>) -> Option<Value> {
    let n = node(ty);
    match &n {
        Node::Leaf => Some(v.clone()),
        Node::Struct(_) | Node::Map(_) => {
            let Value::Object(m) = v else {
                return Some(v.clone());
            };
            if m.is_empty() {
                return None;
            }
            let mut out = Map::new();
            for (k, val) in m {
                let pe = PathElement::Field(k.clone());
                if set.has_member(&pe) {
                    continue;
                }
                match set.child(&pe) {
                    Some(sub) => {
                        let r = remove_items(val, sub, child_ty(&n, k));
                        out.insert(k.clone(), r.unwrap_or(Value::Null));
                    }
                    None => {
                        out.insert(k.clone(), val.clone());
                    }
                }
            }
            (!out.is_empty()).then_some(Value::Object(out))
        }
        Node::List { item, keys } => {
            let Value::Array(items) = v else {
                return Some(v.clone());
            };
            if items.is_empty() {
                return None;
            }
            let mut out = Vec::new();
            for child in items {
                let pe = match item_element(*item, keys, child) {
                    Ok(pe) => pe,
                    Err(_) => {
                        out.push(child.clone());
                        continue;
                    }
                };
                if set.has_member(&pe) {
                    continue;
                }
                match set.child(&pe) {
                    Some(sub) => out.push(remove_items(child, sub, *item).unwrap_or(Value::Null)),
                    None => out.push(child.clone()),
                }
            }
            (!out.is_empty()).then_some(Value::Array(out))
        }
    }
}

/// `set` plus, as members, every declared struct field that has children
/// (upstream `EnsureNamedFieldsAreMembers`).
pub fn ensure_named_fields_are_members(set: &Set, ty: Option<Schema<'_>>) -> Set {
    let n = node(ty);
    let mut out = Set::new();
    for m in set.members() {
        out.insert_member(m.clone());
    }
    for (pe, child) in set.children() {
        let cty = match (pe, &n) {
            (PathElement::Field(name), Node::Struct(_) | Node::Map(_)) => {
                if is_declared(&n, name) {
                    out.insert_member(pe.clone());
                }
                child_ty(&n, name)
            }
            (PathElement::Key(_), Node::List { item, .. }) => *item,
            _ => None,
        };
        out.set_child(pe.clone(), ensure_named_fields_are_members(child, cty));
    }
    out
}

/// Struct fields that Go's zero value of a built-in type serializes as
/// `{}` (non-pointer structs), so that a freshly created object's changes
/// are attributed as upstream attributes them: a pointer field set on
/// create owns its own path (`.`), a value field does not.
const VALUE_STRUCT_FIELDS: &[&str] = &[
    "metadata",
    "spec",
    "status",
    "template",
    "jobTemplate",
    "strategy",
    "updateStrategy",
];

/// `v` with the value struct fields of [`VALUE_STRUCT_FIELDS`] that it
/// lacks added as empty objects, and missing required fields as null,
/// recursively along those fields: what a
/// round trip through the Go types does, so that comparisons attribute
/// `.` (a field's own path) as upstream does.
pub fn with_zero_fields(v: &Value, ty: Option<Schema<'_>>) -> Value {
    let mut out = v.clone();
    if let Some(s) = ty
        && matches!(node(Some(s)), Node::Struct(_))
    {
        fill_zero_fields(&mut out, s, 0);
    }
    out
}

/// Deepest level [`with_zero_fields`] fills (the root is level 0).
pub(super) const MAX_FILL_DEPTH: usize = 8;

/// [`with_zero_fields`] of the struct `v` of type `s` at level `depth`.
pub(super) fn fill_zero_fields(v: &mut Value, s: Schema<'_>, depth: usize) {
    let Value::Object(m) = v else { return };
    if depth > MAX_FILL_DEPTH {
        return;
    }
    // Required fields have no `omitempty`: Go writes them as null.
    for name in s.required() {
        m.entry(name.to_owned()).or_insert(Value::Null);
    }
    for (name, f) in value_struct_fields(s) {
        let child = m
            .entry(name.to_owned())
            .or_insert_with(|| Value::Object(Map::new()));
        if child.is_null() {
            *child = Value::Object(Map::new());
        }
        fill_zero_fields(child, f, depth + 1);
    }
}

/// The fields of struct type `s` that are [`VALUE_STRUCT_FIELDS`] of a
/// struct type, in that list's order.
pub(super) fn value_struct_fields<'a>(s: Schema<'a>) -> Vec<(&'static str, Schema<'a>)> {
    VALUE_STRUCT_FIELDS
        .iter()
        .filter_map(|name| {
            let f = s.field(name)?;
            matches!(node(Some(f)), Node::Struct(_)).then_some((*name, f))
        })
        .collect()
}

/// An approximation of the JSON of a type's Go zero value (see
/// [`with_zero_fields`]).
pub fn zero_object(ty: Option<Schema<'_>>) -> Value {
    with_zero_fields(&Value::Object(Map::new()), ty)
}

/// Removes `null` values from maps and lists, recursively (what a round
/// trip through the Go types does to the result of a merge).
pub fn strip_nulls(v: &mut Value) {
    match v {
        Value::Object(m) => {
            m.retain(|_, x| !x.is_null());
            for x in m.values_mut() {
                strip_nulls(x);
            }
        }
        Value::Array(a) => {
            a.retain(|x| !x.is_null());
            for x in a.iter_mut() {
                strip_nulls(x);
            }
        }
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::schema::definitions;
    use serde_json::json;

    fn deployment() -> Option<Schema<'static>> {
        definitions().for_gvk("apps", "v1", "Deployment")
    }

    #[test]
    fn deployment_field_set_matches_a_real_cluster() {
        let obj = json!({
            "apiVersion": "apps/v1", "kind": "Deployment",
            "metadata": {"name": "web"},
            "spec": {"replicas": 2, "selector": {"matchLabels": {"app": "web"}},
                "template": {"metadata": {"labels": {"app": "web"}},
                    "spec": {"containers": [{"name": "app", "image": "nginx",
                        "ports": [{"containerPort": 80}]}]}}}
        });
        let set = to_field_set(&obj, deployment(), Mode::Strict).unwrap();
        assert_eq!(
            set.to_fields_v1(),
            json!({
                "f:apiVersion": {}, "f:kind": {},
                "f:metadata": {"f:name": {}},
                "f:spec": {"f:replicas": {}, "f:selector": {},
                    "f:template": {"f:metadata": {"f:labels": {"f:app": {}}},
                        "f:spec": {"f:containers": {"k:{\"name\":\"app\"}": {
                            ".": {}, "f:image": {}, "f:name": {},
                            "f:ports": {"k:{\"containerPort\":80,\"protocol\":\"TCP\"}": {
                                ".": {}, "f:containerPort": {}}}}}}}}
            })
        );
    }

    #[test]
    fn strict_mode_rejects_unknown_fields_and_duplicates() {
        let obj = json!({"spec": {"nope": 1, "template": {"spec": {"containers": [
            {"name": "a"}, {"name": "a"}]}}}});
        let errs = to_field_set(&obj, deployment(), Mode::Strict).unwrap_err();
        let text = errors_string(&errs);
        assert!(
            text.contains(".spec.nope: field not declared in schema"),
            "{text}"
        );
        assert!(
            text.contains(".spec.template.spec.containers: duplicate entries for key [name=\"a\"]"),
            "{text}"
        );
        assert!(to_field_set(&obj, deployment(), Mode::Lenient).is_ok());
    }

    #[test]
    fn compare_marks_new_pointer_structs_and_items() {
        let old = zero_object(deployment());
        let new = with_zero_fields(
            &json!({"metadata": {"labels": {"a": "b"}},
                "spec": {"strategy": {"rollingUpdate": {"maxSurge": 1}}}}),
            deployment(),
        );
        let c = compare(Some(&old), Some(&new), deployment());
        assert_eq!(
            c.added.to_fields_v1(),
            json!({"f:metadata": {"f:labels": {".": {}, "f:a": {}}},
                "f:spec": {"f:strategy": {"f:rollingUpdate": {".": {}, "f:maxSurge": {}}}}})
        );
        assert!(c.removed.is_empty() && c.modified.is_empty());
    }

    #[test]
    fn remove_and_named_fields() {
        let obj = json!({"spec": {"replicas": 1, "paused": true}});
        let mut set = Set::new();
        set.insert(&[
            PathElement::Field("spec".into()),
            PathElement::Field("replicas".into()),
        ]);
        assert_eq!(
            remove_items(&obj, &set, deployment()),
            Some(json!({"spec": {"paused": true}}))
        );
        let named = ensure_named_fields_are_members(&set, deployment());
        assert!(named.has(&[PathElement::Field("spec".into())]));
        assert_eq!(remove_items(&obj, &named, deployment()), None);
    }
}
