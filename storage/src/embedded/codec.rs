//! Byte layouts of the embedded store's tables.
//!
//! - `kv` value: `create_revision i64 | mod_revision i64 | version i64 | value`
//!   (little endian).
//! - `log` value (key = the revision): `kind u8 | key_len u32 | key |
//!   [put: meta + value_len u32 + value] | has_prev u8 | [prev meta +
//!   value_len u32 + value]`.
//!
//! A delete's `mod_revision` is the log key itself, so it is not stored.

use bytes::Bytes;

use crate::{Error, EventKind, KeyValue, Result, Revision, WatchEvent};

const META: usize = 24;

/// Encodes a live key's record.
pub(crate) fn encode_kv(kv: &KeyValue) -> Vec<u8> {
    let mut out = Vec::with_capacity(META + kv.value.len());
    put_meta(&mut out, kv);
    out.extend_from_slice(&kv.value);
    out
}

/// Decodes a live key's record.
pub(crate) fn decode_kv(key: &[u8], bytes: &[u8]) -> Result<KeyValue> {
    let mut r = Reader { bytes, pos: 0 };
    let (create_revision, mod_revision, version) = r.meta()?;
    Ok(KeyValue {
        key: key_string(key)?,
        value: Bytes::copy_from_slice(r.rest()),
        create_revision,
        mod_revision,
        version,
    })
}

/// Encodes a change for the revision log.
pub(crate) fn encode_event(event: &WatchEvent) -> Vec<u8> {
    let key = event.kv.key.as_bytes();
    let mut out = Vec::with_capacity(
        16 + key.len()
            + 2 * META
            + event.kv.value.len()
            + event.prev.as_ref().map_or(0, |p| p.value.len()),
    );
    out.push(match event.kind {
        EventKind::Put => 0,
        EventKind::Delete => 1,
    });
    out.extend_from_slice(&(key.len() as u32).to_le_bytes());
    out.extend_from_slice(key);
    if event.kind == EventKind::Put {
        put_meta(&mut out, &event.kv);
        put_value(&mut out, &event.kv.value);
    }
    match &event.prev {
        None => out.push(0),
        Some(prev) => {
            out.push(1);
            put_meta(&mut out, prev);
            put_value(&mut out, &prev.value);
        }
    }
    out
}

/// The key of a logged change, without decoding the rest.
pub(crate) fn event_key(bytes: &[u8]) -> Result<&[u8]> {
    let mut r = Reader { bytes, pos: 1 };
    let len = r.u32()? as usize;
    r.take(len)
}

/// Decodes a logged change made at `revision`.
pub(crate) fn decode_event(revision: Revision, bytes: &[u8]) -> Result<WatchEvent> {
    let mut r = Reader { bytes, pos: 0 };
    let kind = match r.take(1)?[0] {
        0 => EventKind::Put,
        1 => EventKind::Delete,
        other => return Err(corrupt(&format!("unknown event kind {other}"))),
    };
    let key_len = r.u32()? as usize;
    let key = key_string(r.take(key_len)?)?;
    let kv = match kind {
        EventKind::Put => {
            let (create_revision, mod_revision, version) = r.meta()?;
            let len = r.u32()? as usize;
            KeyValue {
                key: key.clone(),
                value: Bytes::copy_from_slice(r.take(len)?),
                create_revision,
                mod_revision,
                version,
            }
        }
        EventKind::Delete => KeyValue {
            key: key.clone(),
            value: Bytes::new(),
            create_revision: 0,
            mod_revision: revision,
            version: 0,
        },
    };
    let prev = match r.take(1)?[0] {
        0 => None,
        _ => {
            let (create_revision, mod_revision, version) = r.meta()?;
            let len = r.u32()? as usize;
            Some(KeyValue {
                key,
                value: Bytes::copy_from_slice(r.take(len)?),
                create_revision,
                mod_revision,
                version,
            })
        }
    };
    Ok(WatchEvent { kind, kv, prev })
}

fn put_meta(out: &mut Vec<u8>, kv: &KeyValue) {
    out.extend_from_slice(&kv.create_revision.to_le_bytes());
    out.extend_from_slice(&kv.mod_revision.to_le_bytes());
    out.extend_from_slice(&kv.version.to_le_bytes());
}

fn put_value(out: &mut Vec<u8>, value: &[u8]) {
    out.extend_from_slice(&(value.len() as u32).to_le_bytes());
    out.extend_from_slice(value);
}

fn key_string(key: &[u8]) -> Result<String> {
    String::from_utf8(key.to_vec()).map_err(|_| corrupt("key is not UTF-8"))
}

fn corrupt(what: &str) -> Error {
    Error::Unavailable(format!("embedded store: corrupt record: {what}"))
}

struct Reader<'a> {
    bytes: &'a [u8],
    pos: usize,
}

impl<'a> Reader<'a> {
    fn take(&mut self, n: usize) -> Result<&'a [u8]> {
        let end = self.pos.checked_add(n).filter(|&e| e <= self.bytes.len());
        let end = end.ok_or_else(|| corrupt("truncated"))?;
        let out = &self.bytes[self.pos..end];
        self.pos = end;
        Ok(out)
    }

    fn i64(&mut self) -> Result<i64> {
        let b = self.take(8)?;
        let mut a = [0u8; 8];
        a.copy_from_slice(b);
        Ok(i64::from_le_bytes(a))
    }

    fn u32(&mut self) -> Result<u32> {
        let b = self.take(4)?;
        let mut a = [0u8; 4];
        a.copy_from_slice(b);
        Ok(u32::from_le_bytes(a))
    }

    fn meta(&mut self) -> Result<(i64, i64, i64)> {
        Ok((self.i64()?, self.i64()?, self.i64()?))
    }

    fn rest(&mut self) -> &'a [u8] {
        let out = &self.bytes[self.pos.min(self.bytes.len())..];
        self.pos = self.bytes.len();
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kv(key: &str, value: &str, c: i64, m: i64, v: i64) -> KeyValue {
        KeyValue {
            key: key.into(),
            value: Bytes::from(value.to_owned()),
            create_revision: c,
            mod_revision: m,
            version: v,
        }
    }

    #[test]
    fn events_round_trip() {
        let cases = [
            WatchEvent {
                kind: EventKind::Put,
                kv: kv("/a", "x", 2, 2, 1),
                prev: None,
            },
            WatchEvent {
                kind: EventKind::Put,
                kv: kv("/a", "y", 2, 3, 2),
                prev: Some(kv("/a", "x", 2, 2, 1)),
            },
            WatchEvent {
                kind: EventKind::Delete,
                kv: kv("/a", "", 0, 4, 0),
                prev: Some(kv("/a", "y", 2, 3, 2)),
            },
        ];
        for event in cases {
            let bytes = encode_event(&event);
            assert_eq!(event_key(&bytes).unwrap(), b"/a");
            assert_eq!(decode_event(event.revision(), &bytes).unwrap(), event);
        }
    }

    #[test]
    fn truncated_records_are_errors_not_panics() {
        let event = WatchEvent {
            kind: EventKind::Put,
            kv: kv("/k", "v", 2, 2, 1),
            prev: None,
        };
        let bytes = encode_event(&event);
        for n in 0..bytes.len() {
            assert!(decode_event(2, &bytes[..n]).is_err(), "prefix of {n} bytes");
        }
        let rec = encode_kv(&event.kv);
        for n in 0..META {
            assert!(decode_kv(b"/k", &rec[..n]).is_err());
        }
    }
}
