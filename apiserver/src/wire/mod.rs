//! JSON as kube-apiserver writes it: Go's encoding/json over the v1.33 Go
//! structs, driven by a table generated from upstream's types
//! (`generate_types.py` → `types.json`).
//!
//! Objects stay `serde_json::Value`s (sorted maps) inside the server; only
//! the bytes follow Go: struct fields in declaration order (`kind`,
//! `apiVersion`, `metadata`, `spec`, `status`, …), Go's zero values for
//! absent non-`omitempty` fields (`"status":{}`, `"creationTimestamp":null`
//! in pod templates), Go's string escaping and float format. Kinds the
//! table does not know print as Go prints a `map[string]interface{}`
//! (sorted keys). Compact bodies end with a newline (`json.Encoder`);
//! pretty ones are `json.MarshalIndent` output, without one.
//!
//! Pure: no I/O, no panics on any input.

mod encode;
mod indent;
pub mod item;
pub mod typecheck;
pub mod types;

use serde_json::Value;

pub use encode::Encoder;
pub use indent::indent;
pub use item::Item;
pub use types::Table;

/// An object's response body: compact, typed by its own kind, with
/// `json.Encoder`'s trailing newline.
pub fn to_vec(obj: &Value) -> Vec<u8> {
    let mut out = Vec::with_capacity(512);
    Encoder::new(Table::get(), &mut out).object(obj, false);
    out.push(b'\n');
    out
}

/// An object as stored: [`to_vec`] without `metadata.resourceVersion`
/// (the store's revision is the resource version).
pub fn storage_bytes(obj: &Value) -> Vec<u8> {
    let mut out = Vec::with_capacity(512);
    Encoder::new(Table::get(), &mut out).object(obj, true);
    out.push(b'\n');
    out
}

/// A list body `{"kind","apiVersion","metadata","items"}` of `kind`
/// (`ConfigMapList`) in `api_version`; `metadata` is a `ListMeta` and each
/// item an object of `item_kind` (items carry no kind of their own, as
/// upstream's typed lists).
pub fn list(
    kind: &str,
    api_version: &str,
    metadata: &Value,
    items: &[Value],
    item_kind: &str,
) -> Vec<u8> {
    let table = Table::get();
    let mut out = Vec::with_capacity(256 + items.len() * 512);
    let item_type = table.kind(api_version, item_kind);
    let meta_type = table.list_meta();
    let mut e = Encoder::new(table, &mut out);
    e.raw(b"{\"kind\":");
    e.string(kind);
    e.raw(b",\"apiVersion\":");
    e.string(api_version);
    e.raw(b",\"metadata\":");
    match meta_type {
        Some(t) => e.typed(Some(metadata), t),
        None => e.untyped(metadata),
    }
    e.raw(b",\"items\":[");
    for (i, item) in items.iter().enumerate() {
        if i > 0 {
            e.raw(b",");
        }
        e.item(item, item_type);
    }
    out.extend_from_slice(b"]}\n");
    out
}

/// One item of a [`list`] of `item_kind` objects in `api_version`, as
/// [`list`] writes it: the watch cache keeps these bytes so that later lists
/// splice them ([`list_spliced`]).
pub fn list_item(api_version: &str, item_kind: &str, item: &Value) -> Vec<u8> {
    let table = Table::get();
    let mut out = Vec::with_capacity(512);
    let item_type = table.kind(api_version, item_kind);
    Encoder::new(table, &mut out).item(item, item_type);
    out
}

/// The same body as [`list`], from items already encoded by [`list_item`].
pub fn list_spliced(kind: &str, api_version: &str, metadata: &Value, items: &[Item]) -> Vec<u8> {
    let table = Table::get();
    let size: usize = items.iter().map(|i| i.len() + 1).sum();
    let mut out = Vec::with_capacity(256 + size);
    let meta_type = table.list_meta();
    let mut e = Encoder::new(table, &mut out);
    e.raw(b"{\"kind\":");
    e.string(kind);
    e.raw(b",\"apiVersion\":");
    e.string(api_version);
    e.raw(b",\"metadata\":");
    match meta_type {
        Some(t) => e.typed(Some(metadata), t),
        None => e.untyped(metadata),
    }
    e.raw(b",\"items\":[");
    for (i, item) in items.iter().enumerate() {
        if i > 0 {
            out.push(b',');
        }
        item.write_to(&mut out);
    }
    out.extend_from_slice(b"]}\n");
    out
}

/// One watch event line: `{"type":…,"object":…}` and a newline.
pub fn event(kind: &str, object: &Value) -> Vec<u8> {
    let mut out = Vec::with_capacity(512);
    let mut e = Encoder::new(Table::get(), &mut out);
    e.raw(b"{\"type\":");
    e.string(kind);
    e.raw(b",\"object\":");
    e.object(object, false);
    out.extend_from_slice(b"}\n");
    out
}

/// Whether a response is indented, as upstream's negotiation decides:
/// the media type's `pretty=1` parameter, else a non-empty `pretty` query
/// parameter parsed as Go's `strconv.ParseBool` (invalid is false), else a
/// `curl`, `Wget` or `Mozilla/5.0` user agent.
pub fn pretty_requested(
    raw_query: Option<&str>,
    accept: Option<&str>,
    user_agent: Option<&str>,
) -> bool {
    let accept_pretty = accept.is_some_and(|a| {
        a.split(',').any(|clause| {
            clause
                .split(';')
                .skip(1)
                .any(|p| p.trim().replace(' ', "") == "pretty=1")
        })
    });
    if accept_pretty {
        return true;
    }
    if let Some(q) = raw_query.filter(|q| q.contains("pretty"))
        && let Some((_, v)) = form_urlencoded::parse(q.as_bytes()).find(|(k, _)| k == "pretty")
        && !v.is_empty()
    {
        return matches!(&*v, "1" | "t" | "T" | "TRUE" | "true" | "True");
    }
    user_agent.is_some_and(|ua| {
        ua.starts_with("curl") || ua.starts_with("Wget") || ua.starts_with("Mozilla/5.0")
    })
}

#[cfg(test)]
mod tests;
