//! The fields an Update changes, in one walk over the two objects.
//!
//! # Contracts
//! - [`changed_paths`] returns exactly the sets of
//!   [`compare`](super::typed::compare)`(with_zero_fields(lhs),
//!   with_zero_fields(rhs))` (modified and added in one), each object read
//!   without the root's `metadata.managedFields` (what an Update's
//!   bookkeeping compares), restricted to the root keys the caller keeps.
//! - Neither object is copied: the zero fields that
//!   [`with_zero_fields`](super::typed::with_zero_fields) would add (empty
//!   value structs, null required fields) are read in place as [`View`]s,
//!   and only a leaf comparison involving such a virtual object
//!   materializes it (rare: a struct compared as a whole).
//! - The set is built bottom-up: a path element is allocated only for a
//!   path that is in the result.

use std::borrow::Cow;
use std::cmp::Ordering;

use serde_json::{Map, Value};

use super::fieldpath::{PathElement, Set, value_eq};
use super::typed::{
    MAX_FILL_DEPTH, Node, as_list, child_ty, fill_zero_fields, item_element, node,
    value_struct_fields,
};
use crate::schema::Schema;

/// A position's value as `with_zero_fields` (after the root's
/// `metadata.managedFields` is removed) would have it.
#[derive(Clone, Copy)]
enum View<'a> {
    /// The value as it is.
    Plain(&'a Value),
    /// A `null` added for a missing required field.
    Null,
    /// An object read with its zero fields.
    Object(Obj<'a>),
}

/// An object as `with_zero_fields` leaves it.
#[derive(Clone, Copy)]
struct Obj<'a> {
    /// Its fields (`None`: an empty object added, or a null replaced).
    map: Option<&'a Map<String, Value>>,
    /// The struct type whose zero fields it gets, and its level (`None`:
    /// none, as below the deepest level filled).
    fill: Option<(Schema<'a>, usize)>,
    /// Whether `managedFields` is hidden (the root's `metadata`).
    hide: bool,
    /// Whether this is the root (whose `metadata` hides `managedFields`).
    root: bool,
}

impl<'a> View<'a> {
    /// The value itself, with its zero fields (a copy only for objects
    /// with zero fields or hidden keys).
    fn materialize(self) -> Cow<'a, Value> {
        match self {
            View::Plain(v) => Cow::Borrowed(v),
            View::Null => Cow::Owned(Value::Null),
            View::Object(o) => {
                let mut m = o.map.cloned().unwrap_or_default();
                if o.hide {
                    m.remove("managedFields");
                }
                let mut v = Value::Object(m);
                if let Some((s, depth)) = o.fill {
                    fill_zero_fields(&mut v, s, depth);
                }
                Cow::Owned(v)
            }
        }
    }

    /// The list view: `Some(empty)` for null, `None` for a non-list.
    fn items(self) -> Option<&'a [Value]> {
        match self {
            View::Plain(v) => as_list(v),
            View::Null => Some(&[]),
            View::Object(_) => None,
        }
    }
}

/// Deep equality of two views (upstream `value.Equals`).
fn view_eq(a: View<'_>, b: View<'_>) -> bool {
    match (a, b) {
        (View::Plain(x), View::Plain(y)) => value_eq(x, y),
        _ => value_eq(&a.materialize(), &b.materialize()),
    }
}

/// The zero fields `with_zero_fields` gives a struct position (the same
/// on both sides of a comparison, so computed once per position).
struct Zero<'a> {
    /// The position's level.
    depth: usize,
    /// Required fields, null unless present.
    required: Vec<&'a str>,
    /// Value struct fields, empty objects unless present.
    structs: Vec<(&'static str, Schema<'a>)>,
}

impl<'a> Zero<'a> {
    /// The zero fields of the first of `views` that gets them.
    fn of(views: [Option<View<'a>>; 2]) -> Option<Self> {
        let (s, depth) = views.into_iter().find_map(|v| match v {
            Some(View::Object(o)) => o.fill,
            _ => None,
        })?;
        Some(Zero {
            depth,
            required: s.required(),
            structs: value_struct_fields(s),
        })
    }

    /// The schema of the value struct field `key`, if it is one.
    fn struct_field(&self, key: &str) -> Option<Schema<'a>> {
        self.structs
            .iter()
            .find_map(|(n, f)| (*n == key).then_some(*f))
    }
}

/// The fields of a struct or map view.
struct Fields<'a, 'z> {
    map: Option<&'a Map<String, Value>>,
    hide: bool,
    root: bool,
    /// The zero fields it gets, if any.
    zero: Option<&'z Zero<'a>>,
}

impl<'a, 'z> Fields<'a, 'z> {
    /// The map view of `v` (`zero`: the position's zero fields, for a view
    /// that gets them): empty for null, `None` for a non-map.
    fn open(v: View<'a>, zero: Option<&'z Zero<'a>>) -> Option<Self> {
        let plain = |map| Fields {
            map,
            hide: false,
            root: false,
            zero: None,
        };
        match v {
            View::Plain(Value::Object(m)) => Some(plain(Some(m))),
            View::Plain(Value::Null) | View::Null => Some(plain(None)),
            View::Plain(_) => None,
            View::Object(o) => Some(Fields {
                map: o.map,
                hide: o.hide,
                root: o.root,
                zero: zero.filter(|_| o.fill.is_some()),
            }),
        }
    }

    fn visible(&self) -> impl Iterator<Item = &'a String> + '_ {
        self.map
            .into_iter()
            .flat_map(|m| m.keys())
            .filter(|k| !(self.hide && *k == "managedFields"))
    }

    /// Whether zero fields are added (none can be empty lists).
    fn has_zero_fields(&self) -> bool {
        self.zero
            .is_some_and(|z| !z.required.is_empty() || !z.structs.is_empty())
    }

    fn is_empty(&self) -> bool {
        !self.has_zero_fields() && self.visible().next().is_none()
    }

    /// The keys, sorted (with their values when [`Fields::get`] would
    /// just read them from the map).
    fn keys(&self) -> Keys<'a> {
        if !self.hide && !self.root && !self.has_zero_fields() {
            return match self.map {
                Some(m) => Keys::Map(m.iter()),
                None => Keys::List(Vec::new().into_iter()),
            };
        }
        let mut keys: Vec<&'a str> = self.visible().map(String::as_str).collect();
        if let Some(z) = self.zero {
            keys.extend(z.required.iter().copied());
            keys.extend(z.structs.iter().map(|(n, _)| *n));
        }
        keys.sort_unstable();
        keys.dedup();
        Keys::List(keys.into_iter())
    }

    /// The value at `key` (with `with_zero_fields`' additions).
    fn get(&self, key: &str) -> Option<View<'a>> {
        if self.hide && key == "managedFields" {
            return None;
        }
        let actual = self.map.and_then(|m| m.get(key));
        let hide = self.root && key == "metadata";
        if let Some(z) = self.zero
            && let Some(f) = z.struct_field(key)
        {
            let depth = z.depth + 1;
            let fill = (depth <= MAX_FILL_DEPTH).then_some((f, depth));
            let obj = |map| {
                View::Object(Obj {
                    map,
                    fill,
                    hide,
                    root: false,
                })
            };
            return Some(match actual {
                None | Some(Value::Null) => obj(None),
                Some(Value::Object(m)) => obj(Some(m)),
                Some(v) => View::Plain(v),
            });
        }
        match actual {
            Some(Value::Object(m)) if hide => Some(View::Object(Obj {
                map: Some(m),
                fill: None,
                hide,
                root: false,
            })),
            Some(v) => Some(View::Plain(v)),
            None => self
                .zero
                .is_some_and(|z| z.required.contains(&key))
                .then_some(View::Null),
        }
    }
}

/// Sorted keys of a [`Fields`].
enum Keys<'a> {
    Map(serde_json::map::Iter<'a>),
    List(std::vec::IntoIter<&'a str>),
}

/// Where a side's value for a key is.
#[derive(Clone, Copy)]
enum Slot<'a> {
    /// Not on this side.
    Absent,
    /// This value, as it is.
    Here(&'a Value),
    /// To be read with [`Fields::get`].
    Get,
}

impl<'a> Iterator for Keys<'a> {
    type Item = (&'a str, Slot<'a>);

    fn next(&mut self) -> Option<Self::Item> {
        match self {
            Keys::Map(k) => k.next().map(|(k, v)| (k.as_str(), Slot::Here(v))),
            Keys::List(k) => k.next().map(|k| (k, Slot::Get)),
        }
    }
}

/// Calls `f` with every key of `a` or `b` (each sorted), in order, once,
/// with where each side has it.
fn merged<'a>(
    a: Option<Keys<'a>>,
    b: Option<Keys<'a>>,
    mut f: impl FnMut(&'a str, Slot<'a>, Slot<'a>),
) {
    let mut a = a.into_iter().flatten().peekable();
    let mut b = b.into_iter().flatten().peekable();
    loop {
        let (key, x, y) = match (a.peek(), b.peek()) {
            (None, None) => return,
            (Some(&(k, x)), None) => {
                a.next();
                (k, x, Slot::Absent)
            }
            (None, Some(&(k, y))) => {
                b.next();
                (k, Slot::Absent, y)
            }
            (Some(&(k, x)), Some(&(j, y))) => match k.cmp(j) {
                Ordering::Less => {
                    a.next();
                    (k, x, Slot::Absent)
                }
                Ordering::Greater => {
                    b.next();
                    (j, Slot::Absent, y)
                }
                Ordering::Equal => {
                    a.next();
                    b.next();
                    (k, x, y)
                }
            },
        };
        f(key, x, y);
    }
}

/// What an Update changed: [`Comparison`](super::typed::Comparison)'s
/// sets, with modified and added in one.
#[derive(Debug, Default)]
pub struct Changes {
    /// Paths modified or added.
    pub changed: Set,
    /// Paths removed.
    pub removed: Set,
}

impl Changes {
    fn is_empty(&self) -> bool {
        self.changed.is_empty() && self.removed.is_empty()
    }

    /// Adds `pe` with the position's own `flags` and its subsets `sub`.
    fn add(&mut self, pe: PathElement, flags: Flags, sub: Changes) {
        let in_changed = flags.changed || !sub.changed.is_empty();
        let in_removed = flags.removed || !sub.removed.is_empty();
        match (in_changed, in_removed) {
            (false, false) => {}
            (true, false) => self.changed.add(pe, flags.changed, sub.changed),
            (false, true) => self.removed.add(pe, flags.removed, sub.removed),
            (true, true) => {
                self.changed.add(pe.clone(), flags.changed, sub.changed);
                self.removed.add(pe, flags.removed, sub.removed);
            }
        }
    }
}

/// Whether a position itself is modified or added, or removed.
#[derive(Debug, Default, Clone, Copy)]
struct Flags {
    changed: bool,
    removed: bool,
}

impl Flags {
    const NONE: Flags = Flags {
        changed: false,
        removed: false,
    };
    const CHANGED: Flags = Flags {
        changed: true,
        removed: false,
    };
    const REMOVED: Flags = Flags {
        changed: false,
        removed: true,
    };
}

/// What `compare(with_zero_fields(lhs), with_zero_fields(rhs), ty)`
/// reports, both objects read without the root's `metadata.managedFields`;
/// only root keys for which `keep_root` holds are compared (see the module
/// docs).
pub fn changed_paths<'a>(
    lhs: &'a Value,
    rhs: &'a Value,
    ty: Option<Schema<'a>>,
    keep_root: &dyn Fn(&str) -> bool,
) -> Changes {
    let n = node(ty);
    let fill = match &n {
        Node::Struct(s) => Some((*s, 0)),
        _ => None,
    };
    let root = |v: &'a Value| match v {
        Value::Object(m) => View::Object(Obj {
            map: Some(m),
            fill,
            hide: false,
            root: true,
        }),
        v => View::Plain(v),
    };
    let mut out = Changes::default();
    walk_node(
        Some(root(lhs)),
        Some(root(rhs)),
        &n,
        &mut out,
        Some(keep_root),
    );
    out
}

/// Adds what changed below this position to `out` (its subsets) and
/// returns how the position itself changed (upstream `compare`'s walk).
/// `keep_root` is set at the root only: the root keys compared (the root's
/// own change names no path and is not computed).
fn walk<'a>(
    l: Option<View<'a>>,
    r: Option<View<'a>>,
    ty: Option<Schema<'a>>,
    out: &mut Changes,
    keep_root: Option<&dyn Fn(&str) -> bool>,
) -> Flags {
    if l.is_none() && r.is_none() {
        return Flags::NONE;
    }
    if is_scalar(l) && is_scalar(r) {
        return leaf(l, r);
    }
    walk_node(l, r, &node(ty), out, keep_root)
}

/// [`walk`] at a position of node `n` (computed once for a list's items).
fn walk_node<'a>(
    l: Option<View<'a>>,
    r: Option<View<'a>>,
    n: &Node<'a>,
    out: &mut Changes,
    keep_root: Option<&dyn Fn(&str) -> bool>,
) -> Flags {
    if is_scalar(l) && is_scalar(r) {
        return leaf(l, r);
    }
    let leaf = match n {
        Node::Leaf => true,
        Node::Struct(_) | Node::Map(_) => {
            let zero = Zero::of([l, r]);
            let open = |v| Fields::open(v, zero.as_ref());
            match (l.map(open), r.map(open)) {
                (Some(None), _) | (_, Some(None)) => true,
                (lf, rf) => {
                    let (lf, rf) = (lf.flatten(), rf.flatten());
                    let l_empty = lf.as_ref().is_none_or(Fields::is_empty);
                    let r_empty = rf.as_ref().is_none_or(Fields::is_empty);
                    if l_empty && r_empty {
                        true
                    } else {
                        let (lk, rk) =
                            (lf.as_ref().map(Fields::keys), rf.as_ref().map(Fields::keys));
                        merged(lk, rk, |key, ls, rs| {
                            if keep_root.is_some_and(|keep| !keep(key)) {
                                return;
                            }
                            let at = |slot, fields: &Option<Fields<'a, '_>>| match slot {
                                Slot::Absent => None,
                                Slot::Here(v) => Some(View::Plain(v)),
                                Slot::Get => fields.as_ref().and_then(|f| f.get(key)),
                            };
                            let (lc, rc) = (at(ls, &lf), at(rs, &rf));
                            let mut sub = Changes::default();
                            let flags = if is_scalar(lc) && is_scalar(rc) {
                                leaf(lc, rc)
                            } else {
                                // A value struct's type is known already (the
                                // zero fields are the position's own type's).
                                let ty = zero
                                    .as_ref()
                                    .and_then(|z| z.struct_field(key))
                                    .or_else(|| child_ty(n, key));
                                walk(lc, rc, ty, &mut sub, None)
                            };
                            if flags.changed || flags.removed || !sub.is_empty() {
                                out.add(PathElement::Field(key.to_owned()), flags, sub);
                            }
                        });
                        false
                    }
                }
            }
        }
        Node::List { item, keys } => match (l.map(View::items), r.map(View::items)) {
            (Some(None), _) | (_, Some(None)) => true,
            (ll, rl) => {
                let ll = ll.flatten().unwrap_or(&[]);
                let rl = rl.flatten().unwrap_or(&[]);
                if ll.is_empty() && rl.is_empty() {
                    true
                } else {
                    items(ll, rl, *item, keys, out);
                    false
                }
            }
        },
    };
    if keep_root.is_some() {
        return Flags::NONE;
    }
    match (l, r) {
        (Some(_), Some(_)) if !leaf => Flags::NONE,
        _ => self::leaf(l, r),
    }
}

/// Whether a position holds nothing, null or a scalar: then it compares
/// as a leaf whatever its schema (a null struct, map or list is empty;
/// a scalar is not a map or list).
fn is_scalar(v: Option<View<'_>>) -> bool {
    match v {
        None | Some(View::Null) => true,
        Some(View::Plain(v)) => !matches!(v, Value::Object(_) | Value::Array(_)),
        Some(View::Object(_)) => false,
    }
}

/// How a leaf changed.
fn leaf(l: Option<View<'_>>, r: Option<View<'_>>) -> Flags {
    match (l, r) {
        (Some(a), Some(b)) if !view_eq(a, b) => Flags::CHANGED,
        (Some(_), Some(_)) | (None, None) => Flags::NONE,
        (None, Some(_)) => Flags::CHANGED,
        (Some(_), None) => Flags::REMOVED,
    }
}

/// The items of two associative lists, by element (upstream
/// `compareListItems`, duplicates included).
fn items<'a>(
    lhs: &'a [Value],
    rhs: &'a [Value],
    item: Option<Schema<'a>>,
    keys: &[&str],
    out: &mut Changes,
) {
    // Items by element, in list order within an element (a stable sort).
    let group = |list: &'a [Value]| {
        let mut v: Vec<(PathElement, &'a Value)> = list
            .iter()
            .filter_map(|c| item_element(item, keys, c).ok().map(|pe| (pe, c)))
            .collect();
        v.sort_by(|a, b| a.0.cmp(&b.0));
        v
    };
    let n = node(item);
    let mut lv = group(lhs);
    let mut rv = group(rhs);
    let run = |v: &[(PathElement, &Value)], i: usize| {
        let first = &v[i].0;
        i + v[i..].iter().take_while(|(pe, _)| pe == first).count()
    };
    let (mut i, mut j) = (0, 0);
    loop {
        let ord = match (lv.get(i), rv.get(j)) {
            (Some(a), Some(b)) => a.0.cmp(&b.0),
            (Some(_), None) => Ordering::Less,
            (None, Some(_)) => Ordering::Greater,
            (None, None) => return,
        };
        let i_end = if ord == Ordering::Greater {
            i
        } else {
            run(&lv, i)
        };
        let j_end = if ord == Ordering::Less {
            j
        } else {
            run(&rv, j)
        };
        let (l, r) = (&lv[i..i_end], &rv[j..j_end]);
        let plain = |x: &(PathElement, &'a Value)| View::Plain(x.1);
        let mut sub = Changes::default();
        let flags = match (l.len(), r.len()) {
            (a, b) if a <= 1 && b <= 1 => walk_node(
                l.first().map(plain),
                r.first().map(plain),
                &n,
                &mut sub,
                None,
            ),
            (a, b) if a >= 2 && b >= 2 => {
                if a == b && l.iter().zip(r).all(|(x, y)| value_eq(x.1, y.1)) {
                    Flags::NONE
                } else {
                    Flags::CHANGED
                }
            }
            (a, _) if a >= 2 => {
                // Several on the left: the right one is added, the
                // element itself removed.
                let added = match r.first() {
                    Some(first) => walk_node(None, Some(plain(first)), &n, &mut sub, None),
                    None => Flags::NONE,
                };
                Flags {
                    changed: added.changed,
                    removed: true,
                }
            }
            _ => {
                let removed = match l.first() {
                    Some(first) => walk_node(Some(plain(first)), None, &n, &mut sub, None),
                    None => Flags::NONE,
                };
                Flags {
                    changed: true,
                    removed: removed.removed,
                }
            }
        };
        if flags.changed || flags.removed || !sub.is_empty() {
            let slot = if i < i_end {
                &mut lv[i].0
            } else {
                &mut rv[j].0
            };
            let pe = std::mem::replace(slot, PathElement::Index(0));
            out.add(pe, flags, sub);
        }
        i = i_end;
        j = j_end;
    }
}
