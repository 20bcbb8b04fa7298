//! The encoder: writes a `Value` as Go's encoding/json writes the Go struct
//! it stands for, under the [`Table`].
//!
//! - Known struct fields in Go order, then keys the table does not know,
//!   sorted (as for a Go map).
//! - Absent or `null` fields print Go's zero value unless `omitempty`
//!   (or a pointer with `omitempty`) leaves them out: `""`, `0`, `false`,
//!   `null` for nil slices, maps, pointers and `metav1.Time`, a zero-filled
//!   object for structs (never omitted).
//! - `omitempty` leaves out `""`, `0`, `false`, empty arrays and maps,
//!   and nil pointers; never a struct.
//! - Strings escape as Go does (`<`, `>`, `&`, U+2028, U+2029 as `\u…`);
//!   floats print as Go's `strconv.FormatFloat(f, 'g'-like, -1)` rules.
//!
//! Values whose shape does not fit the type print as untyped JSON.

use serde_json::{Map, Number, Value};

use super::types::{Kind, Struct, Table, TypeId};

/// Writes JSON into `out` under `table`.
pub struct Encoder<'a> {
    table: &'a Table,
    out: &'a mut Vec<u8>,
}

impl<'a> Encoder<'a> {
    /// An encoder appending to `out`.
    pub fn new(table: &'a Table, out: &'a mut Vec<u8>) -> Self {
        Encoder { table, out }
    }

    /// Bytes written as they are (punctuation of hand-built bodies).
    pub fn raw(&mut self, bytes: &[u8]) {
        self.out.extend_from_slice(bytes);
    }

    /// A JSON string, Go-escaped.
    pub fn string(&mut self, s: &str) {
        string(self.out, s);
    }

    /// An object, typed by its own `apiVersion` and `kind` when the table
    /// knows them, untyped otherwise. `skip_rv` leaves out
    /// `metadata.resourceVersion` (the storage form).
    pub fn object(&mut self, v: &Value, skip_rv: bool) {
        match (self.kind_of(v), v) {
            (Some(id), _) => self.typed_top(v, id, skip_rv),
            (None, Value::Object(map)) if skip_rv => {
                self.out.push(b'{');
                for (i, (k, item)) in map.iter().enumerate() {
                    if i > 0 {
                        self.out.push(b',');
                    }
                    string(self.out, k);
                    self.out.push(b':');
                    match item {
                        Value::Object(meta) if k == "metadata" => {
                            let rest: Map<String, Value> = meta
                                .iter()
                                .filter(|(k, _)| *k != "resourceVersion")
                                .map(|(k, v)| (k.clone(), v.clone()))
                                .collect();
                            self.untyped(&Value::Object(rest));
                        }
                        _ => self.untyped(item),
                    }
                }
                self.out.push(b'}');
            }
            (None, _) => self.untyped(v),
        }
    }

    /// The table's type of an object's `apiVersion`/`kind`.
    pub fn kind_of(&self, v: &Value) -> Option<TypeId> {
        let map = v.as_object()?;
        let av = map.get("apiVersion")?.as_str()?;
        let kind = map.get("kind")?.as_str()?;
        self.table.kind(av, kind)
    }

    fn typed_top(&mut self, v: &Value, id: TypeId, skip_rv: bool) {
        match (v, self.table.strukt(id)) {
            (Value::Object(map), Some(s)) if skip_rv => {
                let skip = Skip {
                    metadata_rv: true,
                    ..Skip::default()
                };
                self.fields(map, s, skip);
            }
            _ => self.typed(Some(v), id),
        }
    }

    /// A list item of type `id`: as upstream's typed list items, without
    /// `kind` and `apiVersion`; an item of no known type (a custom
    /// resource) keeps them, as upstream's unstructured lists.
    pub fn item(&mut self, v: &Value, id: Option<TypeId>) {
        let skip = Skip {
            type_meta: true,
            ..Skip::default()
        };
        match (v, id.and_then(|id| self.table.strukt(id))) {
            (Value::Object(map), Some(s)) => self.fields(map, s, skip),
            // Kinds without a Go type are custom resources: upstream's
            // UnstructuredList keeps each item's `apiVersion` and `kind`.
            (Value::Object(map), None) => {
                self.out.push(b'{');
                let mut first = true;
                for (k, item) in map {
                    if !first {
                        self.out.push(b',');
                    }
                    first = false;
                    string(self.out, k);
                    self.out.push(b':');
                    self.untyped(item);
                }
                self.out.push(b'}');
            }
            _ => self.untyped(v),
        }
    }

    /// `v` (absent: `None`) as Go type `id`.
    pub fn typed(&mut self, v: Option<&Value>, id: TypeId) {
        let v = v.filter(|v| !v.is_null());
        let kind = self.table.ty(id).kind;
        match (kind, v) {
            (Kind::Ptr(t), Some(v)) => self.typed(Some(v), t),
            (Kind::Struct(s), Some(Value::Object(map))) => {
                if let Some(s) = self.table.structs.get(s as usize) {
                    self.fields(map, s, Skip::default());
                }
            }
            (Kind::Struct(s), None) => {
                if let Some(s) = self.table.structs.get(s as usize) {
                    self.fields(&Map::new(), s, Skip::default());
                }
            }
            (Kind::Slice(t), Some(Value::Array(items))) => {
                self.out.push(b'[');
                for (i, item) in items.iter().enumerate() {
                    if i > 0 {
                        self.out.push(b',');
                    }
                    self.typed(Some(item), t);
                }
                self.out.push(b']');
            }
            (Kind::Map(t), Some(Value::Object(map))) => {
                self.out.push(b'{');
                for (i, (k, item)) in map.iter().enumerate() {
                    if i > 0 {
                        self.out.push(b',');
                    }
                    string(self.out, k);
                    self.out.push(b':');
                    self.typed(Some(item), t);
                }
                self.out.push(b'}');
            }
            (Kind::RawExtension, Some(v)) => self.object(v, false),
            (Kind::PropsOrBool(t), Some(v @ Value::Object(_))) => self.typed(Some(v), t),
            (Kind::PropsOrArray(t), Some(Value::Array(items))) => {
                self.out.push(b'[');
                for (i, item) in items.iter().enumerate() {
                    if i > 0 {
                        self.out.push(b',');
                    }
                    self.typed(Some(item), t);
                }
                self.out.push(b']');
            }
            (Kind::PropsOrArray(t) | Kind::PropsOrStringArray(t), Some(v @ Value::Object(_))) => {
                self.typed(Some(v), t);
            }
            (_, Some(v)) => self.untyped(v),
            (kind, None) => self.out.extend_from_slice(zero(kind)),
        }
    }

    /// A struct's fields from `map`.
    fn fields(&mut self, map: &Map<String, Value>, s: &Struct, skip: Skip) {
        self.out.push(b'{');
        let mut first = true;
        let mut known = 0;
        for f in &s.fields {
            let v = map.get(&*f.json);
            if v.is_some() {
                known += 1;
            }
            if f.omitempty && self.empty(v, f.ty)
                || skip.rv && &*f.json == "resourceVersion"
                || skip.type_meta && (&*f.json == "kind" || &*f.json == "apiVersion")
            {
                continue;
            }
            if !first {
                self.out.push(b',');
            }
            first = false;
            self.out.extend_from_slice(&f.key);
            match v {
                Some(Value::Object(meta)) if skip.metadata_rv && &*f.json == "metadata" => {
                    let rv = Skip {
                        rv: true,
                        ..Skip::default()
                    };
                    match self.table.strukt(f.ty) {
                        Some(ms) => self.fields(meta, ms, rv),
                        None => self.typed(v, f.ty),
                    }
                }
                _ => self.typed(v, f.ty),
            }
        }
        if known < map.len() {
            for (k, v) in map {
                if s.field(k).is_some() {
                    continue;
                }
                if !first {
                    self.out.push(b',');
                }
                first = false;
                string(self.out, k);
                self.out.push(b':');
                self.untyped(v);
            }
        }
        self.out.push(b'}');
    }

    /// Go's `isEmptyValue` for `omitempty`, on an absent-or-present value.
    fn empty(&self, v: Option<&Value>, id: TypeId) -> bool {
        let v = v.filter(|v| !v.is_null());
        match self.table.ty(id).kind {
            Kind::Ptr(_) | Kind::Any => v.is_none(),
            Kind::Str | Kind::Bytes => v.is_none_or(|v| v.as_str() == Some("")),
            Kind::Bool => v.is_none_or(|v| v.as_bool() == Some(false)),
            Kind::I32 | Kind::I64 | Kind::U64 | Kind::Float => {
                v.is_none_or(|v| v.as_f64() == Some(0.0))
            }
            Kind::Slice(_) => v.is_none_or(|v| v.as_array().is_some_and(Vec::is_empty)),
            Kind::Map(_) => v.is_none_or(|v| v.as_object().is_some_and(Map::is_empty)),
            _ => false,
        }
    }

    /// Any JSON as Go prints an `interface{}` holding it: map keys sorted.
    pub fn untyped(&mut self, v: &Value) {
        match v {
            Value::Null => self.out.extend_from_slice(b"null"),
            Value::Bool(true) => self.out.extend_from_slice(b"true"),
            Value::Bool(false) => self.out.extend_from_slice(b"false"),
            Value::Number(n) => number(self.out, n),
            Value::String(s) => string(self.out, s),
            Value::Array(items) => {
                self.out.push(b'[');
                for (i, item) in items.iter().enumerate() {
                    if i > 0 {
                        self.out.push(b',');
                    }
                    self.untyped(item);
                }
                self.out.push(b']');
            }
            Value::Object(map) => {
                self.out.push(b'{');
                for (i, (k, item)) in map.iter().enumerate() {
                    if i > 0 {
                        self.out.push(b',');
                    }
                    string(self.out, k);
                    self.out.push(b':');
                    self.untyped(item);
                }
                self.out.push(b'}');
            }
        }
    }
}

/// Keys a struct leaves out.
#[derive(Clone, Copy, Default)]
struct Skip {
    /// `kind` and `apiVersion` (list items).
    type_meta: bool,
    /// `metadata.resourceVersion` (the storage form).
    metadata_rv: bool,
    /// `resourceVersion` (inside that `metadata`).
    rv: bool,
}

/// Go's zero value of a kind, as printed.
fn zero(kind: Kind) -> &'static [u8] {
    match kind {
        Kind::Str => b"\"\"",
        Kind::Bool => b"false",
        Kind::I32 | Kind::I64 | Kind::U64 | Kind::Float | Kind::IntOrString => b"0",
        Kind::Duration => b"\"0s\"",
        Kind::Quantity => b"\"0\"",
        Kind::PropsOrBool(_) => b"false",
        _ => b"null",
    }
}

/// A number as Go prints it: integers in full, floats as
/// `strconv.AppendFloat(f, 'f' or 'e', -1, 64)` with Go's exponent form.
pub fn number(out: &mut Vec<u8>, n: &Number) {
    if let Some(i) = n.as_i64() {
        if i < 0 {
            out.push(b'-');
        }
        unsigned(out, i.unsigned_abs());
    } else if let Some(u) = n.as_u64() {
        unsigned(out, u);
    } else if let Some(f) = n.as_f64() {
        float(out, f);
    }
}

/// Decimal digits of `u`.
fn unsigned(out: &mut Vec<u8>, mut u: u64) {
    let mut buf = [0u8; 20];
    let mut i = buf.len();
    loop {
        i -= 1;
        buf[i] = b'0' + (u % 10) as u8;
        u /= 10;
        if u == 0 {
            break;
        }
    }
    out.extend_from_slice(&buf[i..]);
}

/// Go's float64 encoding (encoding/json `floatEncoder`).
pub fn float(out: &mut Vec<u8>, f: f64) {
    use std::io::Write;
    if !f.is_finite() {
        // Go fails to encode these; serde_json never holds them.
        out.extend_from_slice(b"null");
        return;
    }
    let abs = f.abs();
    if abs == 0.0 || (1e-6..1e21).contains(&abs) {
        let _ = write!(out, "{f}");
        return;
    }
    // Shortest digits in exponent form: Rust prints `1.5e-7`, Go `1.5e-07`
    // cleaned up to `1.5e-7`, and `1e+21` with an explicit plus.
    let text = format!("{f:e}");
    match text.split_once('e') {
        Some((mantissa, exp)) => {
            out.extend_from_slice(mantissa.as_bytes());
            out.push(b'e');
            if let Some(neg) = exp.strip_prefix('-') {
                out.push(b'-');
                out.extend_from_slice(neg.as_bytes());
            } else {
                out.push(b'+');
                if exp.len() < 2 {
                    out.push(b'0');
                }
                out.extend_from_slice(exp.as_bytes());
            }
        }
        None => out.extend_from_slice(text.as_bytes()),
    }
}

/// Bytes that end a run of plain string bytes: control characters, `"`,
/// `\\`, Go's HTML escapes `<`, `>`, `&`, and 0xE2 (U+2028/U+2029 start).
static SPECIAL: [bool; 256] = {
    let mut t = [false; 256];
    let mut i = 0;
    while i < 0x20 {
        t[i] = true;
        i += 1;
    }
    t[b'"' as usize] = true;
    t[b'\\' as usize] = true;
    t[b'<' as usize] = true;
    t[b'>' as usize] = true;
    t[b'&' as usize] = true;
    t[0xe2] = true;
    t
};

/// A string as Go's encoding/json writes it (HTML-safe escaping).
pub fn string(out: &mut Vec<u8>, s: &str) {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    out.reserve(s.len() + 2);
    out.push(b'"');
    let bytes = s.as_bytes();
    let mut start = 0;
    let mut i = 0;
    while i < bytes.len() {
        let b = bytes[i];
        if !SPECIAL[usize::from(b)] {
            i += 1;
            continue;
        }
        let escape: &[u8] = match b {
            b'"' => b"\\\"",
            b'\\' => b"\\\\",
            b'\n' => b"\\n",
            b'\r' => b"\\r",
            b'\t' => b"\\t",
            0x08 => b"\\b",
            0x0c => b"\\f",
            0xe2 => {
                if bytes.get(i + 1) == Some(&0x80) && matches!(bytes.get(i + 2), Some(0xa8 | 0xa9))
                {
                    out.extend_from_slice(&bytes[start..i]);
                    out.extend_from_slice(if bytes[i + 2] == 0xa8 {
                        b"\\u2028"
                    } else {
                        b"\\u2029"
                    });
                    i += 3;
                    start = i;
                } else {
                    i += 1;
                }
                continue;
            }
            _ => {
                out.extend_from_slice(&bytes[start..i]);
                out.extend_from_slice(&[
                    b'\\',
                    b'u',
                    b'0',
                    b'0',
                    HEX[usize::from(b >> 4)],
                    HEX[usize::from(b & 0xf)],
                ]);
                i += 1;
                start = i;
                continue;
            }
        };
        out.extend_from_slice(&bytes[start..i]);
        out.extend_from_slice(escape);
        i += 1;
        start = i;
    }
    out.extend_from_slice(&bytes[start..]);
    out.push(b'"');
}
