//! Messages whose JSON comes from a hand-written Go `MarshalJSON`.
//!
//! Each function mirrors the upstream `Unmarshal` + `MarshalJSON` pair:
//!
//! | message | JSON |
//! | --- | --- |
//! | `metav1.Time` | `"2024-01-02T03:04:05Z"` (fraction dropped on decode), `null` when zero |
//! | `metav1.MicroTime` | `"2024-01-02T03:04:05.123456Z"`, `null` when zero |
//! | `metav1.Duration` | Go's `time.Duration.String()`, e.g. `"1h2m0.5s"` |
//! | `intstr.IntOrString` | `80` or `"http"` |
//! | `resource.Quantity` | its string, checked against the quantity grammar; zero is `"0"` |
//! | `FieldsV1`, apiextensions `JSON` | the raw JSON, `null` when empty |
//! | `runtime.RawExtension` | the embedded JSON object; an embedded `k8s\0` protobuf object is decoded too |
//! | `runtime.Unknown` | likewise, by its `contentType` |
//! | `JSONSchemaPropsOr{Bool,Array,StringArray}` | the schema, or the bool / array |
//! | named slices (`Verbs`, `ExtraValue`) | a JSON array of `items` |
//!
//! Years outside 0..=9999 are rejected, as are CBOR payloads.

use serde_json::Value as Json;

use super::error::Failure;
use super::message::{self, Slots, collect, repeated_json};
use super::schema::{Message, Schema, Special, Type};
use super::wire::Value;
use super::{PREFIX, object};

/// `time.Time{}` as seconds since the Unix epoch: Go's zero time.
const GO_ZERO_UNIX: i64 = -62_135_596_800;

/// The JSON of a special message.
pub(super) fn json(
    schema: &Schema,
    message: &Message,
    kind: Special,
    bytes: &[u8],
    depth: usize,
) -> Result<Json, Failure> {
    let slots = collect(message, bytes)?;
    match kind {
        Special::Time => {
            if bytes.is_empty() {
                return Ok(Json::Null);
            }
            timestamp(int(&slots, 0), 0, false)
        }
        Special::MicroTime => {
            if bytes.is_empty() {
                return Ok(Json::Null);
            }
            let nanos = int(&slots, 1) as i32;
            // time.Duration(nanos).Truncate(time.Microsecond): toward zero.
            timestamp(int(&slots, 0), i64::from(nanos - nanos % 1000), true)
        }
        Special::Duration => Ok(Json::String(go_duration(int(&slots, 0)))),
        Special::IntOrString => match int(&slots, 0) {
            0 => Ok(Json::from(int(&slots, 1) as i32)),
            1 => Ok(Json::String(string(&slots, 2))),
            other => Err(Failure::new(format!(
                "IntOrString has unknown type {other}"
            ))),
        },
        Special::Quantity => {
            let text = if slots[0].is_empty() {
                "0".to_owned()
            } else {
                string(&slots, 0)
            };
            if !is_quantity(&text) {
                return Err(Failure::new(format!(
                    "quantity {text:?} does not match the quantity grammar"
                )));
            }
            Ok(Json::String(text))
        }
        Special::RawJson => match last_bytes(&slots, 0) {
            None | Some([]) => Ok(Json::Null),
            Some(raw) => embedded_json(raw),
        },
        Special::RawExtension => match last_bytes(&slots, 0) {
            None | Some([]) => Ok(Json::Null),
            Some(raw) if raw.starts_with(&PREFIX) => nested_object(&raw[PREFIX.len()..], depth),
            Some(raw) => embedded_json(raw),
        },
        Special::Unknown => unknown_json(schema, message, &slots, depth),
        Special::PropsOrBool => {
            if !slots[1].is_empty() {
                return message::field_json(schema, &message.fields[1], &slots[1], depth)
                    .map(|j| j.unwrap_or(Json::Null));
            }
            Ok(Json::Bool(int(&slots, 0) != 0))
        }
        Special::PropsOrArray | Special::PropsOrStringArray => {
            if !slots[1].is_empty() {
                return repeated_json(schema, message.fields[1].ty, &slots[1], depth);
            }
            if !slots[0].is_empty() {
                return message::field_json(schema, &message.fields[0], &slots[0], depth)
                    .map(|j| j.unwrap_or(Json::Null));
            }
            Ok(Json::Null)
        }
        Special::List => repeated_json(schema, message.fields[0].ty, &slots[0], depth),
    }
}

/// The last varint of slot `i` (Go: last one wins), or zero.
fn int(slots: &Slots<'_>, i: usize) -> i64 {
    match slots.get(i).and_then(|s| s.last()) {
        Some(Value::Varint(v)) => *v as i64,
        _ => 0,
    }
}

fn last_bytes<'a>(slots: &Slots<'a>, i: usize) -> Option<&'a [u8]> {
    match slots.get(i).and_then(|s| s.last()) {
        Some(Value::Bytes(b)) => Some(b),
        _ => None,
    }
}

fn string(slots: &Slots<'_>, i: usize) -> String {
    last_bytes(slots, i)
        .map(|b| String::from_utf8_lossy(b).into_owned())
        .unwrap_or_default()
}

/// RFC 3339 in UTC, with six fractional digits when `micro`.
fn timestamp(seconds: i64, nanos: i64, micro: bool) -> Result<Json, Failure> {
    // time.Unix normalises nanoseconds outside [0, 1e9) into the seconds.
    let total = i128::from(seconds) * 1_000_000_000 + i128::from(nanos);
    if total == i128::from(GO_ZERO_UNIX) * 1_000_000_000 {
        return Ok(Json::Null);
    }
    let at = time::OffsetDateTime::from_unix_timestamp_nanos(total)
        .ok()
        .filter(|t| (0..=9999).contains(&t.year()))
        .ok_or_else(|| Failure::new(format!("time {seconds}s is outside the years 0000..9999")))?;
    let mut out = format!(
        "{:04}-{:02}-{:02}T{:02}:{:02}:{:02}",
        at.year(),
        u8::from(at.month()),
        at.day(),
        at.hour(),
        at.minute(),
        at.second()
    );
    if micro {
        out.push_str(&format!(".{:06}", at.microsecond()));
    }
    out.push('Z');
    Ok(Json::String(out))
}

/// Go's `time.Duration(nanos).String()`.
pub(super) fn go_duration(nanos: i64) -> String {
    let mut u = nanos.unsigned_abs();
    let mut out = String::new();
    if u < 1_000_000_000 {
        let (prec, unit) = match u {
            0 => return "0s".to_owned(),
            1..1_000 => (0, "ns"),
            1_000..1_000_000 => (3, "µs"),
            _ => (6, "ms"),
        };
        let frac = fraction(&mut u, prec);
        out = format!("{u}{frac}{unit}");
    } else {
        let frac = fraction(&mut u, 9);
        let seconds = u % 60;
        u /= 60;
        out.push_str(&format!("{seconds}{frac}s"));
        if u > 0 {
            let minutes = u % 60;
            u /= 60;
            out = format!("{minutes}m{out}");
            if u > 0 {
                out = format!("{u}h{out}");
            }
        }
    }
    if nanos < 0 {
        out.insert(0, '-');
    }
    out
}

/// Go's `fmtFrac`: splits off `prec` decimal digits of `*v`, returning them
/// as `.ddd` without trailing zeros (empty when all are zero).
fn fraction(v: &mut u64, prec: u32) -> String {
    let digits = *v % 10u64.pow(prec);
    *v /= 10u64.pow(prec);
    if digits == 0 {
        return String::new();
    }
    let text = format!("{digits:0width$}", width = prec as usize);
    format!(".{}", text.trim_end_matches('0'))
}

/// Whether `s` parses as a Kubernetes quantity (`resource.ParseQuantity`):
/// `[+-]` number (`1`, `1.5`, `1.`, `.5`), then a binary suffix
/// (`Ki`..`Ei`), a decimal suffix (`n u m k M G T P E`), an exponent
/// (`e`/`E` with an optionally signed integer) or nothing.
pub(super) fn is_quantity(s: &str) -> bool {
    let b = s.as_bytes();
    let mut i = usize::from(matches!(b.first(), Some(b'+' | b'-')));
    let int_digits = b[i..].iter().take_while(|c| c.is_ascii_digit()).count();
    i += int_digits;
    let mut frac_digits = 0;
    if b.get(i) == Some(&b'.') {
        i += 1;
        frac_digits = b[i..].iter().take_while(|c| c.is_ascii_digit()).count();
        i += frac_digits;
    }
    if int_digits + frac_digits == 0 {
        return false;
    }
    match &s[i..] {
        "" | "n" | "u" | "m" | "k" | "M" | "G" | "T" | "P" | "E" => true,
        "Ki" | "Mi" | "Gi" | "Ti" | "Pi" | "Ei" => true,
        exp if exp.starts_with(['e', 'E']) => {
            let digits = exp[1..].strip_prefix(['+', '-']).unwrap_or(&exp[1..]);
            !digits.is_empty() && digits.bytes().all(|c| c.is_ascii_digit())
        }
        _ => false,
    }
}

/// Raw bytes that Go would print as they are: they must be JSON.
fn embedded_json(raw: &[u8]) -> Result<Json, Failure> {
    if raw.starts_with(&[0xd9, 0xd9, 0xf7]) {
        return Err(Failure::new("embedded CBOR is not supported"));
    }
    serde_json::from_slice(raw)
        .map_err(|e| Failure::new(format!("embedded object is not valid JSON: {e}")))
}

/// A complete `k8s\0` protobuf object embedded in another one.
fn nested_object(bytes: &[u8], depth: usize) -> Result<Json, Failure> {
    object::decode_object(bytes, depth + 1)
        .map(|d| d.object)
        .map_err(|e| Failure::new(format!("embedded object: {e}")))
}

/// `runtime.Unknown` inside an object: JSON by content type, or a
/// protobuf object named by its own type meta.
fn unknown_json(
    schema: &Schema,
    message: &Message,
    slots: &Slots<'_>,
    depth: usize,
) -> Result<Json, Failure> {
    let content_type = string(slots, 3);
    let Some(raw) = last_bytes(slots, 1) else {
        return Ok(Json::Null);
    };
    match content_type.as_str() {
        "" | "application/json" => embedded_json(raw),
        "application/vnd.kubernetes.protobuf" if raw.starts_with(&PREFIX) => {
            nested_object(&raw[PREFIX.len()..], depth)
        }
        "application/vnd.kubernetes.protobuf" => {
            let Type::Message(index) = message.fields[0].ty else {
                return Err(Failure::new("Unknown.typeMeta is not a message"));
            };
            let type_meta = message::message_at(schema, index)?;
            let meta = collect(type_meta, last_bytes(slots, 0).unwrap_or_default())?;
            let (api_version, kind) = (string(&meta, 0), string(&meta, 1));
            object::object_json(schema, &api_version, &kind, raw, depth + 1)
                .map_err(|e| Failure::new(format!("embedded object: {e}")))
        }
        other => Err(Failure::new(format!(
            "embedded object has unsupported content type {other:?}"
        ))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_print_like_go() {
        for (nanos, want) in [
            (0, "0s"),
            (1, "1ns"),
            (1_100, "1.1µs"),
            (2_200_000, "2.2ms"),
            (1_500_000_000, "1.5s"),
            (60_000_000_000, "1m0s"),
            (3_600_000_000_000, "1h0m0s"),
            (3_723_000_000_000 + 500_000_000, "1h2m3.5s"),
            (-90_000_000_000, "-1m30s"),
            (i64::MIN, "-2562047h47m16.854775808s"),
            (i64::MAX, "2562047h47m16.854775807s"),
        ] {
            assert_eq!(go_duration(nanos), want, "{nanos}");
        }
    }

    #[test]
    fn quantity_grammar() {
        for ok in [
            "0", "1", "-1", "+1.5", "1.", ".5", "100m", "1Gi", "2e3", "2E-3", "1.5k",
        ] {
            assert!(is_quantity(ok), "{ok}");
        }
        for bad in ["", ".", "-", "1x", "1 Gi", "Gi", "1e", "1e+", "1ki", "١"] {
            assert!(!is_quantity(bad), "{bad}");
        }
    }

    #[test]
    fn timestamps() {
        assert_eq!(
            timestamp(1_704_164_645, 0, false).unwrap(),
            "2024-01-02T03:04:05Z"
        );
        assert_eq!(
            timestamp(1_704_164_645, 123_456_000, true).unwrap(),
            "2024-01-02T03:04:05.123456Z"
        );
        assert_eq!(timestamp(0, 0, false).unwrap(), "1970-01-01T00:00:00Z");
        assert_eq!(timestamp(GO_ZERO_UNIX, 0, false).unwrap(), Json::Null);
        assert_eq!(timestamp(-1, 0, false).unwrap(), "1969-12-31T23:59:59Z");
        assert_eq!(
            timestamp(10, -1_000, true).unwrap(),
            "1970-01-01T00:00:09.999999Z"
        );
        assert!(timestamp(i64::MAX, 0, false).is_err());
        assert_eq!(
            timestamp(GO_ZERO_UNIX - 1, 0, false).unwrap(),
            "0000-12-31T23:59:59Z"
        );
        assert!(timestamp(GO_ZERO_UNIX - 367 * 86_400, 0, false).is_err());
    }
}
