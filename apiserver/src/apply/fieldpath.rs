//! Field paths and field sets, and their FieldsV1 encoding.
//!
//! Follows `sigs.k8s.io/structured-merge-diff` `fieldpath/element.go`,
//! `fieldpath/set.go`, `fieldpath/serialize.go` and
//! `fieldpath/serialize-pe.go`.
//!
//! # Contracts
//! - A [`Set`] holds *members* (paths that are in the set) and *children*
//!   (subsets below a path element). A child node is never empty.
//! - Path elements order as upstream: field names, then keys, then values,
//!   then indexes; values order numbers < strings < booleans < lists < maps
//!   < null ([`value_cmp`]).
//! - [`Set::to_fields_v1`] writes upstream's key formats (`f:name`,
//!   `k:{"name":"app"}` with sorted key fields, `v:"x"`, `i:0`, and `.` for
//!   a member that also has children); [`Set::from_fields_v1`] reads them
//!   back, skipping unknown element types as upstream does, so
//!   `from(to(s)) == s` for every set.

use std::cmp::Ordering;
use std::collections::{BTreeMap, BTreeSet};
use std::fmt;

use serde_json::{Map, Value};

/// One step of a path.
#[derive(Debug, Clone)]
pub enum PathElement {
    /// A struct field or map key: `f:name`, printed `.name`.
    Field(String),
    /// An associative-list item by its key fields (sorted by name):
    /// `k:{"name":"app"}`, printed `[name="app"]`.
    Key(Vec<(String, Value)>),
    /// A set item: `v:"x"`, printed `[="x"]`.
    Value(Value),
    /// A list index: `i:0`, printed `[0]`.
    Index(i64),
}

impl PathElement {
    fn rank(&self) -> u8 {
        match self {
            PathElement::Field(_) => 0,
            PathElement::Key(_) => 1,
            PathElement::Value(_) => 2,
            PathElement::Index(_) => 3,
        }
    }

    /// The FieldsV1 key for this element.
    pub fn encode(&self) -> String {
        match self {
            PathElement::Field(name) => {
                let mut out = String::with_capacity(2 + name.len());
                out.push_str("f:");
                out.push_str(name);
                out
            }
            PathElement::Key(fields) => {
                let mut out = String::from("k:{");
                for (i, (name, value)) in fields.iter().enumerate() {
                    if i > 0 {
                        out.push(',');
                    }
                    go_json_string(name, &mut out);
                    out.push(':');
                    go_json(value, &mut out);
                }
                out.push('}');
                out
            }
            PathElement::Value(v) => {
                let mut out = String::from("v:");
                go_json(v, &mut out);
                out
            }
            PathElement::Index(i) => format!("i:{i}"),
        }
    }

    /// Parses a FieldsV1 key. `Ok(None)` for an unknown element type (which
    /// upstream skips).
    pub fn decode(s: &str) -> Result<Option<Self>, String> {
        let b = s.as_bytes();
        if b.len() < 2 {
            return Err("key must be 2 characters long:".to_owned());
        }
        if b[1] != b':' {
            return Err(format!("missing colon: {s}"));
        }
        let rest = s.get(2..).unwrap_or("");
        match b[0] {
            b'f' => Ok(Some(PathElement::Field(rest.to_owned()))),
            b'v' => {
                let v: Value = serde_json::from_str(rest).map_err(|e| e.to_string())?;
                Ok(Some(PathElement::Value(v)))
            }
            b'k' => {
                let v: Value = serde_json::from_str(rest).map_err(|e| e.to_string())?;
                let Value::Object(m) = v else {
                    return Err(format!("expected an object for key: {s}"));
                };
                // serde_json's map is sorted by name, as upstream sorts keys.
                Ok(Some(PathElement::Key(m.into_iter().collect())))
            }
            b'i' => rest
                .parse::<i64>()
                .map(|i| Some(PathElement::Index(i)))
                .map_err(|e| e.to_string()),
            _ => Ok(None),
        }
    }
}

impl fmt::Display for PathElement {
    /// Upstream's `PathElement.String()`: `.name`, `[k=v,...]`, `[=v]`, `[i]`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            PathElement::Field(name) => write!(f, ".{name}"),
            PathElement::Key(fields) => {
                f.write_str("[")?;
                for (i, (name, value)) in fields.iter().enumerate() {
                    if i > 0 {
                        f.write_str(",")?;
                    }
                    write!(f, "{name}={}", value_to_string(value))?;
                }
                f.write_str("]")
            }
            PathElement::Value(v) => write!(f, "[={}]", value_to_string(v)),
            PathElement::Index(i) => write!(f, "[{i}]"),
        }
    }
}

impl PartialEq for PathElement {
    fn eq(&self, other: &Self) -> bool {
        self.cmp(other) == Ordering::Equal
    }
}
impl Eq for PathElement {}
impl PartialOrd for PathElement {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}
impl Ord for PathElement {
    fn cmp(&self, other: &Self) -> Ordering {
        match (self, other) {
            (PathElement::Field(a), PathElement::Field(b)) => a.cmp(b),
            (PathElement::Key(a), PathElement::Key(b)) => {
                for ((an, av), (bn, bv)) in a.iter().zip(b.iter()) {
                    let c = an.cmp(bn).then_with(|| value_cmp(av, bv));
                    if c != Ordering::Equal {
                        return c;
                    }
                }
                a.len().cmp(&b.len())
            }
            (PathElement::Value(a), PathElement::Value(b)) => value_cmp(a, b),
            (PathElement::Index(a), PathElement::Index(b)) => a.cmp(b),
            _ => self.rank().cmp(&other.rank()),
        }
    }
}

/// A path from the object root.
pub type Path = Vec<PathElement>;

/// Prints a path as upstream does (`.spec.containers[name="app"].image`).
pub fn path_string(path: &[PathElement]) -> String {
    path.iter().map(ToString::to_string).collect()
}

/// A set of paths (see the module docs).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Set {
    members: BTreeSet<PathElement>,
    children: BTreeMap<PathElement, Set>,
}

impl Set {
    /// The empty set.
    pub fn new() -> Self {
        Self::default()
    }

    /// Whether the set holds no path.
    pub fn is_empty(&self) -> bool {
        self.members.is_empty() && self.children.is_empty()
    }

    /// Adds a path (the empty path is ignored, as it names no field).
    pub fn insert(&mut self, path: &[PathElement]) {
        match path {
            [] => {}
            [last] => {
                if !self.members.contains(last) {
                    self.members.insert(last.clone());
                }
            }
            [first, rest @ ..] => match self.children.get_mut(first) {
                Some(child) => child.insert(rest),
                None => {
                    let mut child = Set::new();
                    child.insert(rest);
                    self.children.insert(first.clone(), child);
                }
            },
        }
    }

    /// Adds `pe` at this level: as a member when `member`, and with
    /// `child` below it (nothing when `child` is empty). `pe` must not be
    /// at this level yet (a set built bottom-up, one element at a time).
    pub fn add(&mut self, pe: PathElement, member: bool, child: Set) {
        match (member, child.is_empty()) {
            (false, true) => {}
            (true, true) => {
                self.members.insert(pe);
            }
            (false, false) => {
                self.children.insert(pe, child);
            }
            (true, false) => {
                self.members.insert(pe.clone());
                self.children.insert(pe, child);
            }
        }
    }

    /// Whether `path` is a member.
    pub fn has(&self, path: &[PathElement]) -> bool {
        match path {
            [] => false,
            [last] => self.members.contains(last),
            [first, rest @ ..] => self.children.get(first).is_some_and(|c| c.has(rest)),
        }
    }

    /// Whether the single element `pe` is a member at this level.
    pub fn has_member(&self, pe: &PathElement) -> bool {
        self.members.contains(pe)
    }

    /// The subset below `pe` (upstream `WithPrefix`), if any.
    pub fn child(&self, pe: &PathElement) -> Option<&Set> {
        self.children.get(pe)
    }

    /// Members at this level.
    pub fn members(&self) -> impl Iterator<Item = &PathElement> {
        self.members.iter()
    }

    /// Children at this level.
    pub fn children(&self) -> impl Iterator<Item = (&PathElement, &Set)> {
        self.children.iter()
    }

    /// Inserts `pe` as a member at this level.
    pub fn insert_member(&mut self, pe: PathElement) {
        self.members.insert(pe);
    }

    /// Replaces (or, when empty, removes) the subset below `pe`.
    pub fn set_child(&mut self, pe: PathElement, child: Set) {
        if child.is_empty() {
            self.children.remove(&pe);
        } else {
            self.children.insert(pe, child);
        }
    }

    /// Removes `pe` as a member and its subset.
    pub fn remove_element(&mut self, pe: &PathElement) {
        self.members.remove(pe);
        self.children.remove(pe);
    }

    /// Removes and returns the subset below `pe`, if any.
    pub fn take_child(&mut self, pe: &PathElement) -> Option<Set> {
        self.children.remove(pe)
    }

    /// Every path in the set, as upstream iterates: members of a level
    /// first, then each child's paths, in element order.
    pub fn paths(&self) -> Vec<Path> {
        let mut out = Vec::new();
        self.collect_paths(&mut Vec::new(), &mut out);
        out
    }

    fn collect_paths(&self, prefix: &mut Path, out: &mut Vec<Path>) {
        for m in &self.members {
            let mut p = prefix.clone();
            p.push(m.clone());
            out.push(p);
        }
        for (pe, child) in &self.children {
            prefix.push(pe.clone());
            child.collect_paths(prefix, out);
            prefix.pop();
        }
    }

    /// Paths in either set.
    pub fn union(&self, other: &Set) -> Set {
        let mut out = self.clone();
        out.members.extend(other.members.iter().cloned());
        for (pe, child) in &other.children {
            let merged = match out.children.get(pe) {
                Some(mine) => mine.union(child),
                None => child.clone(),
            };
            out.children.insert(pe.clone(), merged);
        }
        out
    }

    /// Adds every path of `other` (an in-place [`Set::union`]).
    pub fn union_with(&mut self, other: Set) {
        if self.is_empty() {
            *self = other;
            return;
        }
        if self.members.is_empty() {
            self.members = other.members;
        } else {
            self.members.extend(other.members);
        }
        for (pe, child) in other.children {
            match self.children.get_mut(&pe) {
                Some(mine) => mine.union_with(child),
                None => {
                    self.children.insert(pe, child);
                }
            }
        }
    }

    /// Removes the paths of `other` (an in-place [`Set::difference`]:
    /// exact paths only).
    pub fn subtract(&mut self, other: &Set) {
        if self.members.len() <= other.members.len() {
            self.members.retain(|m| !other.members.contains(m));
        } else {
            for m in &other.members {
                self.members.remove(m);
            }
        }
        if self.children.is_empty() || other.children.is_empty() {
            return;
        }
        let mut emptied = Vec::new();
        for (pe, theirs) in &other.children {
            if let Some(mine) = self.children.get_mut(pe) {
                mine.subtract(theirs);
                if mine.is_empty() {
                    emptied.push(pe);
                }
            }
        }
        for pe in emptied {
            self.children.remove(pe);
        }
    }

    /// Paths in both sets.
    pub fn intersection(&self, other: &Set) -> Set {
        let mut out = Set::new();
        out.members = self.members.intersection(&other.members).cloned().collect();
        for (pe, child) in &self.children {
            if let Some(theirs) = other.children.get(pe) {
                out.set_child(pe.clone(), child.intersection(theirs));
            }
        }
        out
    }

    /// Paths in `self` that are not in `other` (exact paths only: removing
    /// `a` keeps `a.b`).
    pub fn difference(&self, other: &Set) -> Set {
        let mut out = Set::new();
        out.members = self.members.difference(&other.members).cloned().collect();
        for (pe, child) in &self.children {
            let c = match other.children.get(pe) {
                Some(theirs) => child.difference(theirs),
                None => child.clone(),
            };
            out.set_child(pe.clone(), c);
        }
        out
    }

    /// Paths in `self` that are neither in `other` nor below a member of
    /// `other` (upstream `RecursiveDifference`).
    pub fn recursive_difference(&self, other: &Set) -> Set {
        let mut out = Set::new();
        out.members = self.members.difference(&other.members).cloned().collect();
        for (pe, child) in &self.children {
            if other.members.contains(pe) {
                continue;
            }
            let c = match other.children.get(pe) {
                Some(theirs) => child.recursive_difference(theirs),
                None => child.clone(),
            };
            out.set_child(pe.clone(), c);
        }
        out
    }

    /// The FieldsV1 JSON object of this set.
    pub fn to_fields_v1(&self) -> Value {
        Value::Object(self.emit(false))
    }

    fn emit(&self, include_self: bool) -> Map<String, Value> {
        let mut out = Map::new();
        if include_self && !self.is_empty() {
            out.insert(".".to_owned(), Value::Object(Map::new()));
        }
        for m in &self.members {
            if !self.children.contains_key(m) {
                out.insert(m.encode(), Value::Object(Map::new()));
            }
        }
        for (pe, child) in &self.children {
            let is_member = self.members.contains(pe);
            out.insert(pe.encode(), Value::Object(child.emit(is_member)));
        }
        out
    }

    /// Reads a FieldsV1 JSON object.
    pub fn from_fields_v1(v: &Value) -> Result<Set, String> {
        let Value::Object(m) = v else {
            return Err("FieldsV1 must be a JSON object".to_owned());
        };
        Ok(Self::read(m, 0)?.0.unwrap_or_default())
    }

    /// Returns the children read from `m` (None when none were found) and
    /// whether the node itself is a member.
    fn read(m: &Map<String, Value>, depth: usize) -> Result<(Option<Set>, bool), String> {
        if depth > 512 {
            return Err("FieldsV1 nested too deeply".to_owned());
        }
        let mut children: Option<Set> = None;
        let mut is_member = false;
        for (key, val) in m {
            if key == "." {
                is_member = true;
                continue;
            }
            let Some(pe) = PathElement::decode(key)? else {
                continue;
            };
            let (grand, child_member) = match val {
                Value::Object(inner) => Self::read(inner, depth + 1)?,
                // Upstream's reader treats a non-object as a leaf.
                _ => (None, true),
            };
            let set = children.get_or_insert_with(Set::new);
            let (member, child) = match grand.filter(|g| !g.is_empty()) {
                Some(g) if child_member => (Some(pe.clone()), Some((pe, g))),
                Some(g) => (None, Some((pe, g))),
                None if child_member => (Some(pe), None),
                None => (None, None),
            };
            if let Some(pe) = member {
                set.members.insert(pe);
            }
            if let Some((pe, g)) = child {
                match set.children.get_mut(&pe) {
                    Some(prev) => prev.union_with(g),
                    None => {
                        set.children.insert(pe, g);
                    }
                }
            }
        }
        if children.is_none() {
            is_member = true;
        }
        Ok((children, is_member))
    }
}

/// Upstream's total order on values (`value.Compare`): numbers (ints and
/// floats compared numerically) < strings < booleans < lists < maps < null.
pub fn value_cmp(a: &Value, b: &Value) -> Ordering {
    fn rank(v: &Value) -> u8 {
        match v {
            Value::Number(_) => 0,
            Value::String(_) => 1,
            Value::Bool(_) => 2,
            Value::Array(_) => 3,
            Value::Object(_) => 4,
            Value::Null => 5,
        }
    }
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => match (x.as_i64(), y.as_i64()) {
            (Some(i), Some(j)) => i.cmp(&j),
            _ => {
                let (f, g) = (x.as_f64().unwrap_or(0.0), y.as_f64().unwrap_or(0.0));
                f.partial_cmp(&g).unwrap_or(Ordering::Equal)
            }
        },
        (Value::String(x), Value::String(y)) => x.cmp(y),
        (Value::Bool(x), Value::Bool(y)) => x.cmp(y),
        (Value::Array(x), Value::Array(y)) => {
            for (p, q) in x.iter().zip(y.iter()) {
                let c = value_cmp(p, q);
                if c != Ordering::Equal {
                    return c;
                }
            }
            x.len().cmp(&y.len())
        }
        (Value::Object(x), Value::Object(y)) => {
            for ((pk, pv), (qk, qv)) in x.iter().zip(y.iter()) {
                let c = pk.cmp(qk).then_with(|| value_cmp(pv, qv));
                if c != Ordering::Equal {
                    return c;
                }
            }
            x.len().cmp(&y.len())
        }
        (Value::Null, Value::Null) => Ordering::Equal,
        _ => rank(a).cmp(&rank(b)),
    }
}

/// Deep equality with ints and floats compared numerically (upstream
/// `value.Equals`).
pub fn value_eq(a: &Value, b: &Value) -> bool {
    value_cmp(a, b) == Ordering::Equal
}

/// Upstream's `value.ToString`, used when printing keys in paths: strings
/// Go-quoted, lists `[a, b]`, maps `{k=v, ...}`.
pub fn value_to_string(v: &Value) -> String {
    match v {
        Value::Null => "null".to_owned(),
        Value::Bool(b) => b.to_string(),
        Value::Number(n) => n.to_string(),
        Value::String(s) => go_quote(s),
        Value::Array(a) => format!(
            "[{}]",
            a.iter().map(value_to_string).collect::<Vec<_>>().join(", ")
        ),
        Value::Object(m) => format!(
            "{{{}}}",
            m.iter()
                .map(|(k, v)| format!("{k}={}", value_to_string(v)))
                .collect::<Vec<_>>()
                .join(", ")
        ),
    }
}

/// Go's `%q` for a string ([`skein_admission::gofmt::quote`]).
pub use skein_admission::gofmt::quote as go_quote;

/// Writes `v` as Go's `encoding/json` would (HTML-safe escaping, sorted map
/// keys), as upstream writes values into FieldsV1 keys.
pub fn go_json(v: &Value, out: &mut String) {
    match v {
        Value::Null => out.push_str("null"),
        Value::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
        Value::Number(n) => out.push_str(&n.to_string()),
        Value::String(s) => go_json_string(s, out),
        Value::Array(a) => {
            out.push('[');
            for (i, item) in a.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                go_json(item, out);
            }
            out.push(']');
        }
        Value::Object(m) => {
            out.push('{');
            for (i, (k, item)) in m.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                go_json_string(k, out);
                out.push(':');
                go_json(item, out);
            }
            out.push('}');
        }
    }
}

/// A JSON string literal with Go's escaping (`<`, `>`, `&`, U+2028 and
/// U+2029 as `\u` escapes).
pub fn go_json_string(s: &str, out: &mut String) {
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '<' | '>' | '&' | '\u{2028}' | '\u{2029}' => {
                out.push_str(&format!("\\u{:04x}", c as u32));
            }
            c if (c as u32) < 0x20 => out.push_str(&format!("\\u{:04x}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('"');
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use serde_json::json;

    fn f(name: &str) -> PathElement {
        PathElement::Field(name.to_owned())
    }

    #[test]
    fn encodes_members_children_and_dot() {
        let mut s = Set::new();
        let key = PathElement::Key(vec![("name".into(), json!("app"))]);
        let containers = vec![f("spec"), f("containers")];
        let mut item = containers.clone();
        item.push(key.clone());
        s.insert(&item);
        let mut image = item.clone();
        image.push(f("image"));
        s.insert(&image);
        s.insert(&[f("spec"), f("replicas")]);
        assert_eq!(
            s.to_fields_v1(),
            json!({"f:spec": {"f:containers": {"k:{\"name\":\"app\"}": {".": {}, "f:image": {}}}, "f:replicas": {}}})
        );
        assert_eq!(Set::from_fields_v1(&s.to_fields_v1()).unwrap(), s);
    }

    #[test]
    fn key_and_value_formats() {
        let k = PathElement::Key(vec![
            ("containerPort".into(), json!(80)),
            ("protocol".into(), json!("TCP")),
        ]);
        assert_eq!(k.encode(), r#"k:{"containerPort":80,"protocol":"TCP"}"#);
        assert_eq!(k.to_string(), r#"[containerPort=80,protocol="TCP"]"#);
        let v = PathElement::Value(json!("a<b"));
        assert_eq!(v.encode(), r#"v:"a\u003cb""#);
        assert_eq!(v.to_string(), r#"[="a<b"]"#);
        assert_eq!(PathElement::decode(&v.encode()).unwrap(), Some(v));
        assert_eq!(PathElement::decode("x:1").unwrap(), None);
        assert!(PathElement::decode("f").is_err());
        assert!(PathElement::decode("fx").is_err());
    }

    #[test]
    fn unknown_elements_are_skipped_and_empty_nodes_are_members() {
        let s = Set::from_fields_v1(&json!({"f:a": {"z:q": {}}, "f:b": {}})).unwrap();
        assert!(s.has(&[f("a")]));
        assert!(s.has(&[f("b")]));
    }

    #[test]
    fn set_algebra() {
        let mut a = Set::new();
        a.insert(&[f("a"), f("b")]);
        a.insert(&[f("a")]);
        a.insert(&[f("c")]);
        let mut b = Set::new();
        b.insert(&[f("a")]);
        assert!(a.difference(&b).has(&[f("a"), f("b")]));
        assert!(!a.difference(&b).has(&[f("a")]));
        assert!(!a.recursive_difference(&b).has(&[f("a"), f("b")]));
        assert_eq!(a.intersection(&b), b);
        assert_eq!(b.union(&a), a);
        assert_eq!(a.paths().len(), 3);
    }

    fn arb_value() -> impl Strategy<Value = Value> {
        prop_oneof![
            any::<i32>().prop_map(|i| json!(i)),
            "[a-z<>&\"\\\\ ]{0,6}".prop_map(Value::String),
            any::<bool>().prop_map(Value::Bool),
        ]
    }

    fn arb_pe() -> impl Strategy<Value = PathElement> {
        prop_oneof![
            "[a-zA-Z.:{}\"]{0,8}".prop_map(PathElement::Field),
            proptest::collection::btree_map("[a-z]{1,5}", arb_value(), 1..3)
                .prop_map(|m| PathElement::Key(m.into_iter().collect())),
            arb_value().prop_map(PathElement::Value),
            (0i64..100).prop_map(PathElement::Index),
        ]
    }

    proptest! {
        #[test]
        fn fields_v1_round_trips(paths in proptest::collection::vec(proptest::collection::vec(arb_pe(), 1..5), 0..12)) {
            let mut s = Set::new();
            for p in &paths {
                s.insert(p);
            }
            let encoded = s.to_fields_v1();
            let decoded = Set::from_fields_v1(&encoded).unwrap();
            prop_assert_eq!(&decoded, &s);
            // And through text, as stored.
            let text = serde_json::to_string(&encoded).unwrap();
            let again = Set::from_fields_v1(&serde_json::from_str(&text).unwrap()).unwrap();
            prop_assert_eq!(again, s);
        }
    }
}
