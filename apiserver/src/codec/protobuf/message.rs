//! A protobuf message turned into the JSON Go's encoding/json prints for it.
//!
//! Contract: for a message of the schema, [`message_json`] returns what
//! `json.Marshal` prints for the Go struct that gogo-protobuf's generated
//! `Unmarshal` would fill from the same bytes. That pins down the details:
//!
//! - a field absent from the wire holds Go's zero value: `nil` for
//!   pointers, slices and maps, `""`/`0`/`false` for scalars, and the zero
//!   struct (printed in full) for non-pointer message fields;
//! - `omitempty` drops `nil`, zero scalars and empty slices/maps, never a
//!   struct; a pointer to a zero scalar is kept (`replicas: 0`);
//! - `omitzero` (only on `metadata.creationTimestamp`, since v1.34) drops
//!   a zero time;
//! - repeated scalars may be packed or not; a singular scalar seen twice
//!   keeps the last value, a singular message seen twice is merged;
//! - unknown field numbers are skipped, a known field with the wrong wire
//!   type is an error;
//! - strings that are not UTF-8 get U+FFFD, as encoding/json does;
//! - messages nest at most [`MAX_DEPTH`] deep, so hostile input cannot
//!   exhaust the stack.

use std::borrow::Cow;

use base64::Engine as _;
use serde_json::{Map, Value as Json};

use super::error::{Failure, Segment};
use super::schema::{Field, Label, Message, Schema, Special, Type};
use super::special;
use super::wire::{Fields, Value, read_varint};

/// Deepest message nesting accepted. Deep enough for any real object
/// (JSON schemas in CRDs included); shallow enough for a 2 MiB stack.
pub(super) const MAX_DEPTH: usize = 100;

/// Occurrences of each schema field in one message, in wire order.
pub(super) type Slots<'a> = Vec<Vec<Value<'a>>>;

/// The JSON of `message` encoded as `bytes`.
pub(super) fn message_json(
    schema: &Schema,
    message: &Message,
    bytes: &[u8],
    depth: usize,
) -> Result<Json, Failure> {
    if depth > MAX_DEPTH {
        return Err(Failure::new(format!(
            "messages are nested more than {MAX_DEPTH} levels deep"
        )));
    }
    match message.special {
        None => struct_json(schema, message, bytes, depth).map(Json::Object),
        Some(kind) => special::json(schema, message, kind, bytes, depth),
    }
}

/// Reads the wire fields of `message` into one slot per schema field,
/// checking that each known field has a wire type its type allows.
pub(super) fn collect<'a>(message: &Message, bytes: &'a [u8]) -> Result<Slots<'a>, Failure> {
    let mut slots: Slots<'a> = vec![Vec::new(); message.fields.len()];
    for item in Fields::new(bytes) {
        let (number, value) = item?;
        let Some((index, field)) = message.field(number) else {
            continue;
        };
        if !wire_allowed(field, &value) {
            return Err(Failure::new(format!(
                "wrong wire type {} for a {} field",
                value.wire_name(),
                type_name(field)
            ))
            .at(segment(field)));
        }
        slots[index].push(value);
    }
    Ok(slots)
}

fn struct_json(
    schema: &Schema,
    message: &Message,
    bytes: &[u8],
    depth: usize,
) -> Result<Map<String, Json>, Failure> {
    let slots = collect(message, bytes)?;
    let mut out = Map::new();
    let mut inline = Vec::new();
    for (field, values) in message.fields.iter().zip(&slots) {
        if field.inline {
            inline.push((field, values));
            continue;
        }
        let json = field_json(schema, field, values, depth).map_err(|e| e.at(segment(field)))?;
        if let (Some(key), Some(json)) = (&field.json, json) {
            out.insert(key.clone(), json);
        }
    }
    // encoding/json lets a struct's own keys shadow those of embedded ones.
    for (field, values) in inline {
        match field_json(schema, field, values, depth)? {
            None | Some(Json::Null) => {}
            Some(Json::Object(inner)) => {
                for (key, value) in inner {
                    out.entry(key).or_insert(value);
                }
            }
            Some(_) => {
                return Err(Failure::new("inline field is not an object").at(segment(field)));
            }
        }
    }
    Ok(out)
}

/// The JSON of one field, or `None` when encoding/json omits it.
pub(super) fn field_json(
    schema: &Schema,
    field: &Field,
    values: &[Value<'_>],
    depth: usize,
) -> Result<Option<Json>, Failure> {
    match field.label {
        Label::Single => single_json(schema, field, values, depth),
        Label::Repeated if values.is_empty() => Ok(nil(field)),
        Label::Repeated => repeated_json(schema, field.ty, values, depth).map(Some),
        Label::Map if values.is_empty() => Ok(nil(field)),
        Label::Map => map_json(schema, field.ty, values, depth).map(Some),
    }
}

/// A `nil` pointer, slice or map: omitted under `omitempty`, else `null`.
fn nil(field: &Field) -> Option<Json> {
    (!field.omitempty).then_some(Json::Null)
}

fn single_json(
    schema: &Schema,
    field: &Field,
    values: &[Value<'_>],
    depth: usize,
) -> Result<Option<Json>, Failure> {
    let Type::Message(index) = field.ty else {
        let Some(last) = values.last() else {
            return Ok(if field.ptr || field.ty == Type::Bytes {
                nil(field)
            } else if field.omitempty {
                None
            } else {
                Some(zero_scalar(field.ty))
            });
        };
        let json = scalar_json(field.ty, *last)?;
        let empty = match field.ty {
            Type::Bytes => json.as_str() == Some(""),
            _ => !field.ptr && is_zero(&json),
        };
        return Ok(if field.omitempty && empty {
            None
        } else {
            Some(json)
        });
    };
    let message = message_at(schema, index)?;
    let slice = message.special == Some(Special::List);
    if values.is_empty() && (field.ptr || slice) {
        return Ok(nil(field));
    }
    let bytes = merged(message, values);
    let json = message_json(schema, message, &bytes, depth + 1)?;
    if slice && field.omitempty && json.as_array().is_some_and(Vec::is_empty) {
        return Ok(None);
    }
    if field.omitzero && json.is_null() {
        return Ok(None);
    }
    Ok(Some(json))
}

/// The bytes a singular message field decodes from. Go merges repeated
/// occurrences of generated messages (same as decoding the concatenation);
/// the hand-written `Unmarshal` of Time, MicroTime and Quantity replaces.
fn merged<'a>(message: &Message, values: &[Value<'a>]) -> Cow<'a, [u8]> {
    let replaces = matches!(
        message.special,
        Some(Special::Time | Special::MicroTime | Special::Quantity)
    );
    let mut chunks = values.iter().filter_map(|v| match v {
        Value::Bytes(b) => Some(*b),
        _ => None,
    });
    match values.len() {
        0 => Cow::Borrowed(&[]),
        1 => Cow::Borrowed(chunks.next().unwrap_or_default()),
        _ if replaces => Cow::Borrowed(chunks.next_back().unwrap_or_default()),
        _ => Cow::Owned(chunks.flatten().copied().collect()),
    }
}

/// Elements of a repeated field (or a named slice's items).
pub(super) fn repeated_json(
    schema: &Schema,
    ty: Type,
    values: &[Value<'_>],
    depth: usize,
) -> Result<Json, Failure> {
    let mut out = Vec::with_capacity(values.len());
    match ty {
        Type::Message(index) => {
            let message = message_at(schema, index)?;
            for (i, value) in values.iter().enumerate() {
                let bytes = match value {
                    Value::Bytes(b) => *b,
                    _ => &[],
                };
                out.push(
                    message_json(schema, message, bytes, depth + 1)
                        .map_err(|e| e.at(Segment::Index(i)))?,
                );
            }
        }
        Type::Bool | Type::Int32 | Type::Int64 | Type::Double => {
            for value in values {
                match value {
                    Value::Bytes(packed) => unpack(ty, packed, &mut out)?,
                    other => out.push(scalar_json(ty, *other)?),
                }
            }
        }
        Type::String | Type::Bytes => {
            for value in values {
                out.push(scalar_json(ty, *value)?);
            }
        }
    }
    Ok(Json::Array(out))
}

fn unpack(ty: Type, mut packed: &[u8], out: &mut Vec<Json>) -> Result<(), Failure> {
    while !packed.is_empty() {
        let value = if ty == Type::Double {
            let Some((head, rest)) = packed.split_first_chunk::<8>() else {
                return Err(Failure::new("packed doubles end mid-value"));
            };
            packed = rest;
            Value::Fixed64(u64::from_le_bytes(*head))
        } else {
            let mut pos = 0;
            let v = read_varint(packed, &mut pos)?;
            packed = &packed[pos..];
            Value::Varint(v)
        };
        out.push(scalar_json(ty, value)?);
    }
    Ok(())
}

/// A `map<string, ty>` field: entries with key 1 and value 2; a later
/// duplicate key wins, a missing key is `""`, a missing value is Go's zero.
fn map_json(
    schema: &Schema,
    ty: Type,
    entries: &[Value<'_>],
    depth: usize,
) -> Result<Json, Failure> {
    let value_field = Field {
        n: 2,
        json: None,
        ty,
        label: Label::Single,
        inline: false,
        ptr: false,
        omitempty: false,
        omitzero: false,
    };
    let mut out = Map::new();
    for entry in entries {
        let bytes = match entry {
            Value::Bytes(b) => *b,
            _ => &[],
        };
        let mut key = Cow::Borrowed("");
        let mut values = Vec::new();
        for item in Fields::new(bytes) {
            match item? {
                (1, Value::Bytes(k)) => key = String::from_utf8_lossy(k),
                (1, other) => {
                    return Err(Failure::new(format!(
                        "wrong wire type {} for a map key",
                        other.wire_name()
                    )));
                }
                (2, value) if wire_allowed(&value_field, &value) => values.push(value),
                (2, other) => {
                    return Err(Failure::new(format!(
                        "wrong wire type {} for a map value of type {}",
                        other.wire_name(),
                        type_name(&value_field)
                    ))
                    .at(Segment::Key(key.into_owned())));
                }
                _ => {}
            }
        }
        let json = match (ty, values.last()) {
            (Type::Bytes, None) => Json::String(String::new()),
            _ => single_json(schema, &value_field, &values, depth)
                .map_err(|e| e.at(Segment::Key(key.to_string())))?
                .unwrap_or(Json::Null),
        };
        out.insert(key.into_owned(), json);
    }
    Ok(Json::Object(out))
}

/// One scalar value as encoding/json prints the Go type.
fn scalar_json(ty: Type, value: Value<'_>) -> Result<Json, Failure> {
    Ok(match (ty, value) {
        (Type::String, Value::Bytes(b)) => Json::String(String::from_utf8_lossy(b).into_owned()),
        (Type::Bytes, Value::Bytes(b)) => {
            Json::String(base64::engine::general_purpose::STANDARD.encode(b))
        }
        (Type::Bool, Value::Varint(v)) => Json::Bool(v != 0),
        // Go's generated code accumulates into the int32, keeping the low bits.
        (Type::Int32, Value::Varint(v)) => Json::from(v as u32 as i32),
        (Type::Int64, Value::Varint(v)) => Json::from(v as i64),
        (Type::Double, Value::Fixed64(bits)) => float_json(f64::from_bits(bits))?,
        (ty, value) => {
            return Err(Failure::new(format!(
                "wrong wire type {} for a {ty:?} value",
                value.wire_name()
            )));
        }
    })
}

/// A float64 as encoding/json prints it: integral values print without a
/// fraction (and so read back as JSON integers); NaN and infinities fail.
fn float_json(f: f64) -> Result<Json, Failure> {
    if !f.is_finite() {
        return Err(Failure::new(format!("{f} cannot be represented in JSON")));
    }
    if f.fract() == 0.0 && f.abs() < 1e21 {
        if f >= i64::MIN as f64 && f < i64::MAX as f64 {
            return Ok(Json::from(f as i64));
        }
        if f >= 0.0 && f < u64::MAX as f64 {
            return Ok(Json::from(f as u64));
        }
    }
    serde_json::Number::from_f64(f)
        .map(Json::Number)
        .ok_or_else(|| Failure::new(format!("{f} cannot be represented in JSON")))
}

fn zero_scalar(ty: Type) -> Json {
    match ty {
        Type::String | Type::Bytes => Json::String(String::new()),
        Type::Bool => Json::Bool(false),
        Type::Int32 | Type::Int64 | Type::Double | Type::Message(_) => Json::from(0),
    }
}

/// Whether encoding/json's `omitempty` drops this scalar.
fn is_zero(json: &Json) -> bool {
    match json {
        Json::String(s) => s.is_empty(),
        Json::Bool(b) => !b,
        Json::Number(n) => n.as_f64() == Some(0.0),
        _ => false,
    }
}

fn wire_allowed(field: &Field, value: &Value<'_>) -> bool {
    let packable = field.label == Label::Repeated;
    match (field.ty, value) {
        (_, Value::Group) => false,
        (Type::Bool | Type::Int32 | Type::Int64, Value::Varint(_)) => field.label != Label::Map,
        (Type::Double, Value::Fixed64(_)) => field.label != Label::Map,
        (Type::Bool | Type::Int32 | Type::Int64 | Type::Double, Value::Bytes(_)) => {
            packable || field.label == Label::Map
        }
        (Type::String | Type::Bytes | Type::Message(_), Value::Bytes(_)) => true,
        _ => false,
    }
}

fn type_name(field: &Field) -> String {
    let ty = match field.ty {
        Type::Message(_) => "message".to_owned(),
        other => format!("{other:?}").to_lowercase(),
    };
    match field.label {
        Label::Single => ty,
        Label::Repeated => format!("repeated {ty}"),
        Label::Map => format!("map<string, {ty}>"),
    }
}

fn segment(field: &Field) -> Segment {
    Segment::Field(
        field
            .json
            .clone()
            .unwrap_or_else(|| format!("#{}", field.n)),
    )
}

/// The message at a checked schema index.
pub(super) fn message_at(schema: &Schema, index: usize) -> Result<&Message, Failure> {
    schema
        .message(index)
        .ok_or_else(|| Failure::new(format!("schema has no message {index}")))
}
