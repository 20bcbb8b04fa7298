//! Strategic merge patch (`application/strategic-merge-patch+json`),
//! applied the way the upstream apiserver applies it:
//! `k8s.io/apimachinery/pkg/util/strategicpatch/patch.go`,
//! `StrategicMergeMapPatch` (i.e. `mergeMap` with `MergeParallelList` and
//! `IgnoreUnmatchedNulls`), with the patch metadata
//! (`x-kubernetes-patch-strategy`, `x-kubernetes-patch-merge-key`) read from
//! [`crate::schema`] instead of Go struct tags.
//!
//! # Contracts
//! - [`apply`] is pure and never panics; every failure is an [`Error`]
//!   whose `Display` is upstream's message and whose
//!   [`Error::status_code`] is the HTTP code upstream answers with
//!   (`apiserver/pkg/endpoints/handlers/patch.go`,
//!   `interpretStrategicMergePatchError`: 400, 422, or 500 for the rest).
//! - Without a schema, and below positions the schema does not type
//!   (`RawExtension`, unknown fields), objects merge key by key and lists
//!   are replaced, as upstream does for fields without patch metadata.
//! - Maps merge recursively and `null` deletes a key. Lists whose field has
//!   strategy `merge` merge: objects by the merge key, scalars as a set.
//!   Every other list, and every field with strategy `replace`, is replaced.
//! - Directives: `$patch: replace|delete` on objects, `$patch:
//!   delete|replace` in merging lists (`merge` is rejected there, as
//!   upstream), `$retainKeys`, `$setElementOrder/<field>` and
//!   `$deleteFromPrimitiveList/<field>`. Directive keys are consumed where
//!   upstream consumes them. Like upstream, a few places keep the patch
//!   value as sent, nested directives included: the whole list of a
//!   non-merging list field, a `$patch: replace` object, a field with
//!   strategy `replace`, and a new item appended to a merging list. A
//!   `$`-key that is no directive (`$foo`) is an ordinary field, as
//!   upstream; the typed conversion after patching reports or drops it.
//! - List order is upstream's, including `$setElementOrder` handling
//!   (`mergePatchIntoOriginal`, `normalizeElementOrder`, `mergeSortedSlice`)
//!   and Go's stable sort (see `gosort`).
//! - Upstream walks the patch in Go's random map order; this walks it in
//!   key order, so results are deterministic (they only differ from some
//!   upstream run where upstream itself is order-dependent, e.g. a value
//!   both added to and deleted from a primitive list in one patch).

mod gofmt;
mod gosort;
#[cfg(test)]
mod tests;

use serde_json::{Map, Value};

use crate::schema::{Schema, Shape};
use gofmt::GoType;

const DIRECTIVE_MARKER: &str = "$patch";
const DELETE_DIRECTIVE: &str = "delete";
const REPLACE_DIRECTIVE: &str = "replace";
const MERGE_DIRECTIVE: &str = "merge";
const RETAIN_KEYS_DIRECTIVE: &str = "$retainKeys";
const SET_ELEMENT_ORDER_PREFIX: &str = "$setElementOrder";
const DELETE_FROM_PRIMITIVE_LIST_PREFIX: &str = "$deleteFromPrimitiveList";

/// `reflect.TypeOf` of the typed nil map and slice upstream passes as the
/// "expected" side of `mergepatch.ErrBadArgType`.
const MAP_TYPE: &str = "map[string]interface {}";
const SLICE_TYPE: &str = "[]interface {}";

/// Why a strategic merge patch cannot be applied. `Display` is upstream's
/// message (`apimachinery/pkg/util/mergepatch/errors.go`, `patch.go`).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Error {
    /// The original object is not a JSON object (`ErrBadJSONDoc`).
    #[error("invalid JSON document")]
    BadJsonDoc,
    /// The patch is valid JSON but not an object: the apiserver's JSON
    /// decoding into a map fails with this message.
    #[error("json: cannot unmarshal {found} into Go value of type map[string]interface {{}}")]
    PatchNotAnObject {
        /// `array`, `string`, `number` or `bool`.
        found: &'static str,
    },
    /// A malformed `$deleteFromPrimitiveList/<field>` key.
    #[error("invalid patch format of primitive list")]
    BadPatchFormatForPrimitiveList,
    /// A `$retainKeys` that is not a list, or a patch field missing from it.
    #[error("invalid patch format of retainKeys")]
    BadPatchFormatForRetainKeys,
    /// A malformed `$setElementOrder/<field>` key.
    #[error("invalid patch format of setElementOrder list")]
    BadPatchFormatForSetElementOrderList,
    /// A merging list holds lists.
    #[error("lists of lists are not supported")]
    NoListOfLists,
    /// An unknown `$patch` value (`ErrBadPatchType`).
    #[error("unknown patch type: {directive} in map: {map}")]
    BadPatchType {
        /// The directive, printed with Go's `%s`.
        directive: String,
        /// The object holding it, printed with Go's `%v`.
        map: String,
    },
    /// `$patch: merge` inside a list.
    #[error("merging lists cannot yet be specified in the patch")]
    MergeDirectiveInList,
    /// An item of a list merged by key lacks the key (`ErrNoMergeKey`).
    #[error("map: {map} does not contain declared merge key: {key}")]
    NoMergeKey {
        /// The item, printed with Go's `%v`.
        map: String,
        /// The merge key.
        key: String,
    },
    /// A value has the wrong JSON type (`ErrBadArgType`).
    #[error("expected a {expected}, but received a {actual}")]
    BadArgType {
        /// The Go type upstream expected.
        expected: &'static str,
        /// The Go type it got.
        actual: &'static str,
    },
    /// A list of objects with strategy `merge` but no merge key.
    #[error("cannot merge lists without merge key for {type_name}")]
    NoMergeKeyForList {
        /// Upstream prints the Go kind of the element type (`struct`).
        type_name: &'static str,
    },
    /// The items of a merging list have different JSON types.
    #[error("list element types are not identical: {lists}")]
    ElementTypesDiffer {
        /// The lists, printed with Go's `fmt.Sprint`.
        lists: String,
    },
    /// A `$setElementOrder` list against an empty list.
    #[error("no elements in any of the given slices")]
    NoElements,
    /// A merging list whose first item is `null`: upstream dereferences a
    /// nil type here and the apiserver answers 500.
    #[error("runtime error: invalid memory address or nil pointer dereference")]
    NilListElement,
    /// A list searched by merge key holds a non-object at this index.
    #[error("value for key {index} is not a map")]
    NotAMap {
        /// The index of the offending item.
        index: usize,
    },
    /// The patch list's items are not in the `$setElementOrder` order.
    #[error("The order in patch list:\n{patch}\n doesn't match $setElementOrder list:\n{order}\n")]
    OrderMismatch {
        /// The patch list, printed with Go's `%v`.
        patch: String,
        /// The `$setElementOrder` list, printed with Go's `%v`.
        order: String,
    },
}

impl Error {
    /// The HTTP status upstream's apiserver answers with for this error.
    pub fn status_code(&self) -> u16 {
        match self {
            Self::BadJsonDoc
            | Self::PatchNotAnObject { .. }
            | Self::BadPatchFormatForPrimitiveList
            | Self::BadPatchFormatForRetainKeys
            | Self::BadPatchFormatForSetElementOrderList => 400,
            Self::NoListOfLists => 422,
            _ => 500,
        }
    }
}

type Result<T> = std::result::Result<T, Error>;

/// Applies the strategic merge patch `patch` to `original` (the live object
/// as JSON), reading patch metadata from `schema` (the object's type; `None`
/// for unknown types). A `null` patch changes nothing.
pub fn apply(original: &Value, patch: &Value, schema: Option<Schema<'_>>) -> Result<Value> {
    let patch = match patch {
        Value::Object(m) => m.clone(),
        Value::Null => Map::new(),
        Value::Array(_) => return Err(Error::PatchNotAnObject { found: "array" }),
        Value::String(_) => return Err(Error::PatchNotAnObject { found: "string" }),
        Value::Number(_) => return Err(Error::PatchNotAnObject { found: "number" }),
        Value::Bool(_) => return Err(Error::PatchNotAnObject { found: "bool" }),
    };
    let original = match original {
        Value::Object(m) => m.clone(),
        Value::Null => Map::new(),
        _ => return Err(Error::BadJsonDoc),
    };
    merge_map(original, patch, schema).map(Value::Object)
}

/// A field's strategy, as `extractRetainKeysPatchStrategy` reduces it
/// (`retainKeys` only matters when patches are created).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum FieldStrategy {
    None,
    Merge,
    Replace,
}

/// The patch metadata of one field.
#[derive(Clone, Copy)]
struct FieldMeta<'a> {
    /// The field's position (its type), when known.
    schema: Option<Schema<'a>>,
    strategy: FieldStrategy,
    /// The merge key, `""` when none (as upstream).
    merge_key: &'a str,
}

impl<'a> FieldMeta<'a> {
    fn lookup(parent: Option<Schema<'a>>, key: &str) -> Self {
        let schema = parent.and_then(|p| p.child(key));
        let strategy = match schema.map(|s| s.patch_strategy()) {
            Some(s) if s.merge => FieldStrategy::Merge,
            Some(s) if s.replace => FieldStrategy::Replace,
            _ => FieldStrategy::None,
        };
        Self {
            schema,
            strategy,
            merge_key: schema.and_then(|s| s.patch_merge_key()).unwrap_or(""),
        }
    }

    /// The position of the list's items. Like upstream's struct lookup
    /// (`PatchMetaFromStruct.LookupPatchMetadataForSlice` on a pointer), an
    /// object-typed field used as a list has items of its own type.
    fn items(&self) -> Option<Schema<'a>> {
        self.schema
            .and_then(|s| s.items().or((s.shape() == Shape::Struct).then_some(s)))
    }

    /// `LookupPatchMeta.Name()` of the item type, for an error message.
    fn item_kind(&self) -> &'static str {
        match self.items().map(|s| s.shape()) {
            Some(Shape::Struct) => "struct",
            Some(Shape::Map) => "map",
            Some(Shape::List) => "slice",
            Some(Shape::Scalar) => "string",
            _ => "interface",
        }
    }
}

fn is_directive(v: &Value, directive: &str) -> bool {
    v.as_str() == Some(directive)
}

fn no_merge_key(m: &Map<String, Value>, key: &str) -> Error {
    Error::NoMergeKey {
        map: gofmt::v(&Value::Object(m.clone())),
        key: key.to_owned(),
    }
}

fn bad_arg(expected: &'static str, actual: &Value) -> Error {
    Error::BadArgType {
        expected,
        actual: GoType::of(actual).name(),
    }
}

/// `mergeMap`.
fn merge_map(
    mut original: Map<String, Value>,
    mut patch: Map<String, Value>,
    schema: Option<Schema<'_>>,
) -> Result<Map<String, Value>> {
    if let Some(directive) = patch.get(DIRECTIVE_MARKER) {
        // handleDirectiveInMergeMap
        if is_directive(directive, REPLACE_DIRECTIVE) {
            patch.remove(DIRECTIVE_MARKER);
            return Ok(patch);
        }
        if is_directive(directive, DELETE_DIRECTIVE) {
            return Ok(Map::new());
        }
        return Err(Error::BadPatchType {
            directive: gofmt::s(directive),
            map: gofmt::v(&Value::Object(patch)),
        });
    }

    apply_retain_keys(&mut original, &mut patch)?;
    merge_set_element_order(&mut original, &mut patch, schema)?;

    for (key, patch_v) in patch {
        let (key, delete_list) = if key.starts_with(DELETE_FROM_PRIMITIVE_LIST_PREFIX) {
            let field = extract_key(&key, DELETE_FROM_PRIMITIVE_LIST_PREFIX)?;
            if field.is_empty() {
                (key, true)
            } else {
                (field.to_owned(), true)
            }
        } else {
            (key, false)
        };

        if patch_v.is_null() {
            original.remove(&key);
            continue;
        }
        let Some(orig_v) = original.remove(&key) else {
            if !delete_list {
                insert_new(&mut original, key, patch_v);
            }
            continue;
        };
        if GoType::of(&orig_v) != GoType::of(&patch_v) {
            if delete_list {
                original.insert(key, orig_v);
            } else {
                insert_new(&mut original, key, patch_v);
            }
            continue;
        }
        let merged = match (orig_v, patch_v) {
            (Value::Object(o), Value::Object(p)) => {
                let meta = FieldMeta::lookup(schema, &key);
                if meta.strategy == FieldStrategy::Replace {
                    Value::Object(p)
                } else {
                    Value::Object(merge_map(o, p, meta.schema)?)
                }
            }
            (Value::Array(o), Value::Array(p)) => {
                let meta = FieldMeta::lookup(schema, &key);
                if meta.strategy == FieldStrategy::Merge || delete_list {
                    Value::Array(merge_slice(o, p, &meta, delete_list)?)
                } else {
                    Value::Array(p)
                }
            }
            (_, scalar) => scalar,
        };
        original.insert(key, merged);
    }
    Ok(original)
}

/// A patch value for a key the original lacks (or holds with another
/// type): nulls dropped, directives removed (`discardNullValuesFromPatch`,
/// `removeDirectives`).
fn insert_new(original: &mut Map<String, Value>, key: String, mut value: Value) {
    discard_nulls(&mut value);
    if let Some(v) = remove_directives(value) {
        original.insert(key, v);
    }
}

/// `discardNullValuesFromPatch`: drops null members of objects, recursively
/// (nulls directly inside lists stay).
fn discard_nulls(value: &mut Value) {
    match value {
        Value::Object(m) => {
            m.retain(|_, v| !v.is_null());
            m.values_mut().for_each(discard_nulls);
        }
        Value::Array(a) => a.iter_mut().for_each(discard_nulls),
        _ => {}
    }
}

/// `removeDirectives`: an object with `$patch` disappears (from its parent
/// object or list); other directive keys stay, as upstream.
fn remove_directives(value: Value) -> Option<Value> {
    match value {
        Value::Object(m) => {
            if m.contains_key(DIRECTIVE_MARKER) {
                return None;
            }
            Some(Value::Object(
                m.into_iter()
                    .filter_map(|(k, v)| remove_directives(v).map(|v| (k, v)))
                    .collect(),
            ))
        }
        Value::Array(a) => Some(Value::Array(remove_directives_list(a))),
        other => Some(other),
    }
}

fn remove_directives_list(list: Vec<Value>) -> Vec<Value> {
    list.into_iter().filter_map(remove_directives).collect()
}

/// `extractKey`: the field named after `<prefix>/`.
fn extract_key<'k>(key: &'k str, prefix: &str) -> Result<&'k str> {
    match key.split_once('/') {
        Some((head, field)) if head == prefix => Ok(field),
        _ if prefix == DELETE_FROM_PRIMITIVE_LIST_PREFIX => {
            Err(Error::BadPatchFormatForPrimitiveList)
        }
        _ => Err(Error::BadPatchFormatForSetElementOrderList),
    }
}

/// `applyRetainKeysDirective`: clears the original's keys missing from
/// `$retainKeys`, after checking the patch sets no other key.
fn apply_retain_keys(
    original: &mut Map<String, Value>,
    patch: &mut Map<String, Value>,
) -> Result<()> {
    let Some(retain) = patch.remove(RETAIN_KEYS_DIRECTIVE) else {
        return Ok(());
    };
    let Value::Array(retain) = retain else {
        return Err(Error::BadPatchFormatForRetainKeys);
    };
    let retained = |k: &str| retain.iter().any(|v| v.as_str() == Some(k));
    for (k, v) in patch.iter() {
        if v.is_null()
            || k.starts_with(DELETE_FROM_PRIMITIVE_LIST_PREFIX)
            || k.starts_with(SET_ELEMENT_ORDER_PREFIX)
        {
            continue;
        }
        if !retained(k) {
            return Err(Error::BadPatchFormatForRetainKeys);
        }
    }
    original.retain(|k, _| retained(k));
    Ok(())
}

/// `mergePatchIntoOriginal`: merges every list that has a
/// `$setElementOrder/<field>` directive and orders it by the directive.
fn merge_set_element_order(
    original: &mut Map<String, Value>,
    patch: &mut Map<String, Value>,
    schema: Option<Schema<'_>>,
) -> Result<()> {
    let keys: Vec<String> = patch
        .keys()
        .filter(|k| k.starts_with(SET_ELEMENT_ORDER_PREFIX))
        .cloned()
        .collect();
    for key in keys {
        let Some(order) = patch.remove(&key) else {
            continue;
        };
        let Value::Array(order) = order else {
            return Err(bad_arg(SLICE_TYPE, &order));
        };
        let field = extract_key(&key, SET_ELEMENT_ORDER_PREFIX)?.to_owned();
        let orig_list = match original.get(&field) {
            None => None,
            Some(Value::Array(a)) => Some(a.clone()),
            Some(other) => return Err(bad_arg(SLICE_TYPE, other)),
        };
        let patch_list = match patch.get(&field) {
            None => None,
            Some(Value::Array(a)) => Some(a.clone()),
            Some(other) => return Err(bad_arg(SLICE_TYPE, other)),
        };
        let meta = FieldMeta::lookup(schema, &field);
        let merge_key = meta.merge_key;
        validate_with_order(patch_list.as_deref().unwrap_or(&[]), &order, merge_key)?;

        // The live list as upstream's slice header sees it after merging.
        let mut live = GoSlice::new(orig_list.clone().unwrap_or_default());
        let merged = match (&orig_list, &patch_list) {
            (Some(o), None) => o.clone(),
            (None, Some(p)) => remove_directives_list(p.clone()),
            (Some(_), Some(p)) => {
                if meta.strategy == FieldStrategy::Merge {
                    merge_slice_tracked(&mut live, p.clone(), &meta, false)?
                } else {
                    p.clone()
                }
            }
            (None, None) => continue,
        };

        let (patch_items, server_only) = if merge_key.is_empty() {
            partition_primitives(merged, &order)
        } else {
            partition_maps(merged, &order, merge_key)?
        };
        let orig_list = live.backing;
        let kind = element_type(&[&orig_list, patch_list.as_deref().unwrap_or(&[])])?;
        let both = normalize_element_order(
            patch_items,
            server_only,
            &order,
            &orig_list,
            merge_key,
            kind,
        )?;
        original.insert(field.clone(), Value::Array(both));
        patch.remove(&field);
    }
    Ok(())
}

/// `validatePatchWithSetOrderList`: the patch list's items (deletions and
/// directives aside) must appear in the `$setElementOrder` list, in order.
fn validate_with_order(patch_list: &[Value], order: &[Value], merge_key: &str) -> Result<()> {
    if order.is_empty() || patch_list.is_empty() {
        return Ok(());
    }
    let non_delete = if merge_key.is_empty() {
        patch_list.to_vec()
    } else {
        extract_to_delete(patch_list.to_vec())?.0
    };
    let (mut pi, mut oi) = (0, 0);
    while let (Some(item), Some(ordered)) = (non_delete.get(pi), order.get(oi)) {
        if item.get(DIRECTIVE_MARKER).is_some() {
            pi += 1;
            continue;
        }
        if merge_key_value_equal(item, ordered, merge_key)? {
            pi += 1;
        }
        oi += 1;
    }
    if pi < non_delete.len() && oi >= order.len() {
        return Err(Error::OrderMismatch {
            patch: gofmt::v(&Value::Array(patch_list.to_vec())),
            order: gofmt::v(&Value::Array(order.to_vec())),
        });
    }
    Ok(())
}

/// `mergeKeyValueEqual`.
fn merge_key_value_equal(left: &Value, right: &Value, merge_key: &str) -> Result<bool> {
    if merge_key.is_empty() {
        return Ok(left == right);
    }
    let Value::Object(l) = left else {
        return Err(bad_arg(MAP_TYPE, left));
    };
    let Value::Object(r) = right else {
        return Err(bad_arg(MAP_TYPE, right));
    };
    let lv = l.get(merge_key).ok_or_else(|| no_merge_key(l, merge_key))?;
    let rv = r.get(merge_key).ok_or_else(|| no_merge_key(r, merge_key))?;
    Ok(lv == rv)
}

/// `extractToDeleteItems`: splits items with `$patch: delete` off (every
/// item must be an object).
fn extract_to_delete(list: Vec<Value>) -> Result<(Vec<Value>, Vec<Value>)> {
    let mut keep = Vec::new();
    let mut delete = Vec::new();
    for v in list {
        let Value::Object(m) = &v else {
            return Err(bad_arg(MAP_TYPE, &v));
        };
        if m.get(DIRECTIVE_MARKER)
            .is_some_and(|d| is_directive(d, DELETE_DIRECTIVE))
        {
            delete.push(v);
        } else {
            keep.push(v);
        }
    }
    Ok((keep, delete))
}

/// `sliceElementType`: the common Go type of the items of all `lists`.
fn element_type(lists: &[&[Value]]) -> Result<GoType> {
    let mut prev = None;
    for item in lists.iter().flat_map(|l| l.iter()) {
        let t = GoType::of(item);
        match prev {
            None => {
                if t == GoType::Nil {
                    return Err(Error::NilListElement);
                }
                if t == GoType::Slice {
                    return Err(Error::NoListOfLists);
                }
                prev = Some(t);
            }
            Some(p) if p != t => {
                return Err(Error::ElementTypesDiffer {
                    lists: gofmt::lists(lists),
                });
            }
            Some(_) => {}
        }
    }
    prev.ok_or(Error::NoElements)
}

/// `mergeSlice`: merges a list field with strategy `merge` (or any
/// `$deleteFromPrimitiveList` list).
fn merge_slice(
    original: Vec<Value>,
    patch: Vec<Value>,
    meta: &FieldMeta<'_>,
    delete_list: bool,
) -> Result<Vec<Value>> {
    merge_slice_tracked(&mut GoSlice::new(original), patch, meta, delete_list)
}

/// A Go slice over a backing array whose first `window` items the caller
/// still sees (its own slice header).
///
/// Upstream's `mergeSlice` deletes from and appends to the live list in
/// place, and `mergePatchIntoOriginal` then orders the merged list by that
/// same, now rewritten, live list: deletions shift items left and the
/// first appended items land in the freed tail. Order results depend on
/// it, so it is reproduced here. (Appends past the caller's window depend
/// on the backing array's capacity, but the caller never sees them.)
struct GoSlice {
    /// The caller's window of the backing array.
    backing: Vec<Value>,
    /// The current slice's length.
    len: usize,
    /// Items appended past the window.
    extra: Vec<Value>,
}

impl GoSlice {
    fn new(list: Vec<Value>) -> Self {
        Self {
            len: list.len(),
            backing: list,
            extra: Vec::new(),
        }
    }

    /// The current slice's items.
    fn items(&self) -> Vec<Value> {
        let window = self.len.min(self.backing.len());
        let mut out = self.backing[..window].to_vec();
        out.extend(self.extra.iter().cloned());
        out
    }

    /// `append(s[:k], s[k+1:]...)`.
    fn remove(&mut self, k: usize) {
        let mut all = self.items();
        if k < all.len() {
            all.remove(k);
        }
        let window = self.backing.len();
        for (i, v) in all.iter().enumerate().take(window) {
            self.backing[i] = v.clone();
        }
        self.extra = all.iter().skip(window).cloned().collect();
        self.len = all.len();
    }

    /// `append(s, v)`.
    fn push(&mut self, v: Value) {
        if self.len < self.backing.len() {
            self.backing[self.len] = v;
        } else {
            self.extra.push(v);
        }
        self.len += 1;
    }

    /// `s[k] = v`.
    fn set(&mut self, k: usize, v: Value) {
        if let Some(slot) = self.backing.get_mut(k) {
            *slot = v;
        } else if let Some(slot) = self.extra.get_mut(k - self.backing.len()) {
            *slot = v;
        }
    }
}

/// [`merge_slice`] on a live list given as a [`GoSlice`], which it leaves
/// as upstream leaves the caller's slice.
fn merge_slice_tracked(
    live: &mut GoSlice,
    patch: Vec<Value>,
    meta: &FieldMeta<'_>,
    delete_list: bool,
) -> Result<Vec<Value>> {
    let original = live.items();
    if original.is_empty() && patch.is_empty() {
        return Ok(original);
    }
    let kind = element_type(&[&original, &patch])?;
    if kind != GoType::Map {
        if delete_list {
            return Ok(original
                .into_iter()
                .filter(|v| !patch.contains(v))
                .collect());
        }
        let mut both = original.clone();
        both.extend(patch.iter().cloned());
        let merged = deduplicate_scalars(both);
        let (patch_items, server_only) = partition_primitives(merged, &patch);
        return normalize_element_order(patch_items, server_only, &patch, &original, "", kind);
    }

    let merge_key = meta.merge_key;
    if merge_key.is_empty() {
        return Err(Error::NoMergeKeyForList {
            type_name: meta.item_kind(),
        });
    }
    let (replacement, patch) = merge_special_elements(live, patch, merge_key)?;
    let mut fresh;
    let target = match replacement {
        // `$patch: replace`: the new list is a fresh slice.
        Some(list) => {
            fresh = GoSlice::new(list);
            &mut fresh
        }
        None => live,
    };
    // mergeSlice's own slice header, before the appends.
    let original = target.items();
    merge_plain_elements(target, &patch, merge_key, meta.items())?;
    let merged = target.items();
    let (patch_items, server_only) = partition_maps(merged, &patch, merge_key)?;
    normalize_element_order(patch_items, server_only, &patch, &original, merge_key, kind)
}

/// `deduplicateScalars`, including its habit of moving the last item into
/// a duplicate's place.
fn deduplicate_scalars(mut s: Vec<Value>) -> Vec<Value> {
    let mut length = s.len().saturating_sub(1);
    let mut i = 0;
    while i < length {
        let mut j = i + 1;
        while j <= length {
            if s[i] == s[j] {
                s.swap(j, length);
                s.truncate(length);
                length -= 1;
            } else {
                j += 1;
            }
        }
        i += 1;
    }
    s
}

/// `mergeSliceWithSpecialElements`: applies the `$patch` items of a list
/// merged by key to the live list (deletions happen in place); returns the
/// replacement list if there is a `$patch: replace`, and the plain items.
fn merge_special_elements(
    live: &mut GoSlice,
    patch: Vec<Value>,
    merge_key: &str,
) -> Result<(Option<Vec<Value>>, Vec<Value>)> {
    let mut plain = Vec::new();
    let mut replace = false;
    for v in patch {
        let Some(directive) = v.get(DIRECTIVE_MARKER) else {
            plain.push(v);
            continue;
        };
        let Value::Object(m) = &v else {
            continue;
        };
        if is_directive(directive, DELETE_DIRECTIVE) {
            let Some(key_value) = m.get(merge_key) else {
                return Err(no_merge_key(m, merge_key));
            };
            while let Some(idx) = find_by_key(&live.items(), merge_key, key_value)? {
                live.remove(idx);
            }
        } else if is_directive(directive, REPLACE_DIRECTIVE) {
            replace = true;
        } else if is_directive(directive, MERGE_DIRECTIVE) {
            return Err(Error::MergeDirectiveInList);
        } else {
            return Err(Error::BadPatchType {
                directive: gofmt::s(directive),
                map: gofmt::v(&v),
            });
        }
    }
    if replace {
        Ok((Some(plain), Vec::new()))
    } else {
        Ok((None, plain))
    }
}

/// `mergeSliceWithoutSpecialElements`: merges each patch item into the
/// item with the same key, or appends it (in place, as upstream).
fn merge_plain_elements(
    target: &mut GoSlice,
    patch: &[Value],
    merge_key: &str,
    items: Option<Schema<'_>>,
) -> Result<()> {
    for v in patch {
        let Value::Object(m) = v else {
            return Err(bad_arg(MAP_TYPE, v));
        };
        let Some(key_value) = m.get(merge_key) else {
            return Err(no_merge_key(m, merge_key));
        };
        let current = target.items();
        match find_by_key(&current, merge_key, key_value)? {
            Some(idx) => {
                if let Some(Value::Object(o)) = current.get(idx) {
                    let merged = merge_map(o.clone(), m.clone(), items)?;
                    target.set(idx, Value::Object(merged));
                }
            }
            None => target.push(v.clone()),
        }
    }
    Ok(())
}

/// `findMapInSliceBasedOnKeyValue`.
fn find_by_key(list: &[Value], key: &str, value: &Value) -> Result<Option<usize>> {
    for (index, item) in list.iter().enumerate() {
        let Value::Object(m) = item else {
            return Err(Error::NotAMap { index });
        };
        if m.get(key) == Some(value) {
            return Ok(Some(index));
        }
    }
    Ok(None)
}

/// `partitionPrimitivesByPresentInList`: (items in `by`, the rest).
fn partition_primitives(items: Vec<Value>, by: &[Value]) -> (Vec<Value>, Vec<Value>) {
    items.into_iter().partition(|v| by.contains(v))
}

/// `partitionMapsByPresentInList`: (items whose key is in `by`, the rest).
fn partition_maps(
    items: Vec<Value>,
    by: &[Value],
    merge_key: &str,
) -> Result<(Vec<Value>, Vec<Value>)> {
    let mut present = Vec::new();
    let mut absent = Vec::new();
    for v in items {
        let Value::Object(m) = &v else {
            return Err(bad_arg(MAP_TYPE, &v));
        };
        let Some(key_value) = m.get(merge_key) else {
            return Err(no_merge_key(m, merge_key));
        };
        if find_by_key(by, merge_key, key_value)?.is_some() {
            present.push(v);
        } else {
            absent.push(v);
        }
    }
    Ok((present, absent))
}

/// `normalizeElementOrder`: sorts the patch items by `patch_order` and the
/// server-only items by `server_order`, then interleaves them.
fn normalize_element_order(
    patch: Vec<Value>,
    server_only: Vec<Value>,
    patch_order: &[Value],
    server_order: &[Value],
    merge_key: &str,
    kind: GoType,
) -> Result<Vec<Value>> {
    let patch = normalize_slice_order(patch, patch_order, merge_key, kind)?;
    let server_only = normalize_slice_order(server_only, server_order, merge_key, kind)?;
    Ok(merge_sorted(
        server_only,
        patch,
        server_order,
        merge_key,
        kind,
    ))
}

/// `index`: the position of `item` in `list`, comparing merge-key values
/// for objects and whole values otherwise.
fn index_of(list: &[Value], item: &Value, merge_key: &str, kind: GoType) -> Option<usize> {
    if kind == GoType::Map {
        let key_of = |v: &Value| -> Value {
            match v {
                Value::Object(m) => m.get(merge_key).cloned().unwrap_or(Value::Null),
                _ => Value::Null,
            }
        };
        let wanted = key_of(item);
        list.iter().position(|v| key_of(v) == wanted)
    } else {
        list.iter().position(|v| v == item)
    }
}

/// `normalizeSliceOrder`: sorts `to_sort` by `order` (Go's stable sort with
/// upstream's comparator); `$patch: delete` items go last.
fn normalize_slice_order(
    mut to_sort: Vec<Value>,
    order: &[Value],
    merge_key: &str,
    kind: GoType,
) -> Result<Vec<Value>> {
    let mut to_delete = Vec::new();
    if kind == GoType::Map {
        for v in to_sort.iter().chain(order.iter()) {
            let Value::Object(m) = v else {
                return Err(bad_arg(MAP_TYPE, v));
            };
            if !m.contains_key(merge_key) {
                return Err(no_merge_key(m, merge_key));
            }
        }
        (to_sort, to_delete) = extract_to_delete(to_sort)?;
    }
    let less = |a: &Value, b: &Value| match (
        index_of(order, a, merge_key, kind),
        index_of(order, b, merge_key, kind),
    ) {
        (Some(i), Some(j)) => i < j,
        _ => true,
    };
    gosort::slice_stable(&mut to_sort, &less);
    to_sort.extend(to_delete);
    Ok(to_sort)
}

/// `mergeSortedSlice`: inserts the server-only items (`left`) among the
/// patch items (`right`) by their positions in the live list.
fn merge_sorted(
    left: Vec<Value>,
    right: Vec<Value>,
    server_order: &[Value],
    merge_key: &str,
    kind: GoType,
) -> Vec<Value> {
    let mut out = Vec::with_capacity(left.len() + right.len());
    let mut left = left.into_iter().peekable();
    let mut right = right.into_iter().peekable();
    loop {
        let take_left = match (left.peek(), right.peek()) {
            (None, None) => break,
            (Some(_), None) => true,
            (None, Some(_)) => false,
            (Some(l), Some(r)) => matches!(
                (
                    index_of(server_order, l, merge_key, kind),
                    index_of(server_order, r, merge_key, kind),
                ),
                (Some(li), Some(ri)) if li < ri
            ),
        };
        let next = if take_left { left.next() } else { right.next() };
        out.extend(next);
    }
    out
}
