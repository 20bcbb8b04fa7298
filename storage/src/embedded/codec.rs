//! Byte layouts of the embedded store's tables (format [`FORMAT`]).
//!
//! Each value is stored once, in the `log` record of the revision that
//! wrote it; `kv` is only an index from a live key to its counters, as
//! etcd's key index points into its revisioned store.
//!
//! - `kv` value: `create_revision i64 | mod_revision i64 | version i64`
//!   (little endian). The value is in `log[mod_revision]`.
//! - `log` value (key = the revision), by the first byte:
//!   - put (`0`): `0 u8 | key_len u32 | key | create_revision i64 |
//!     version i64 | prev_mod_revision i64 | value`. `prev_mod_revision` is
//!     0 for a create; otherwise the previous pair is
//!     `(create_revision, prev_mod_revision, version - 1)` (an update keeps
//!     `create_revision` and adds one to `version`) and its value is in
//!     `log[prev_mod_revision]`.
//!   - delete (`1`): `1 u8 | key_len u32 | key | create_revision i64 |
//!     mod_revision i64 | version i64` of the deleted pair, whose value is
//!     in `log[mod_revision]`.
//!
//! The log record's revision is its `mod_revision`, so it is not stored.

use bytes::Bytes;

use crate::{Error, EventKind, KeyValue, Result, Revision, WatchEvent};

/// The on-disk format this code reads and writes, kept in `meta` under
/// `format`. A store written by another format is refused at open.
pub(crate) const FORMAT: i64 = 2;

const META: usize = 24;
const PUT: u8 = 0;
const DELETE: u8 = 1;

/// A live key's counters, as kept in `kv`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Meta {
    pub(crate) create_revision: Revision,
    pub(crate) mod_revision: Revision,
    pub(crate) version: i64,
}

impl Meta {
    /// The full pair, given its value.
    pub(crate) fn with_value(self, key: String, value: Bytes) -> KeyValue {
        KeyValue {
            key,
            value,
            create_revision: self.create_revision,
            mod_revision: self.mod_revision,
            version: self.version,
        }
    }
}

/// Encodes a live key's `kv` record.
pub(crate) fn encode_meta(meta: &Meta) -> [u8; META] {
    let mut out = [0u8; META];
    out[..8].copy_from_slice(&meta.create_revision.to_le_bytes());
    out[8..16].copy_from_slice(&meta.mod_revision.to_le_bytes());
    out[16..].copy_from_slice(&meta.version.to_le_bytes());
    out
}

/// Decodes a live key's `kv` record.
pub(crate) fn decode_meta(bytes: &[u8]) -> Result<Meta> {
    let mut r = Reader { bytes, pos: 0 };
    let meta = r.meta()?;
    if r.pos != bytes.len() {
        return Err(corrupt("kv record length"));
    }
    Ok(meta)
}

/// Encodes the `log` record of a change. A put's `prev`, if any, must be
/// the same generation of the key (same `create_revision`, one version
/// less), as every successful update is.
pub(crate) fn encode_event(event: &WatchEvent) -> Vec<u8> {
    let key = event.kv.key.as_bytes();
    let mut out = Vec::with_capacity(5 + key.len() + META + event.kv.value.len());
    match event.kind {
        EventKind::Put => {
            out.push(PUT);
            put_key(&mut out, key);
            out.extend_from_slice(&event.kv.create_revision.to_le_bytes());
            out.extend_from_slice(&event.kv.version.to_le_bytes());
            let prev = event.prev.as_ref().map_or(0, |p| p.mod_revision);
            out.extend_from_slice(&prev.to_le_bytes());
            out.extend_from_slice(&event.kv.value);
        }
        EventKind::Delete => {
            out.push(DELETE);
            put_key(&mut out, key);
            let prev = event.prev.as_ref();
            for n in [
                prev.map_or(0, |p| p.create_revision),
                prev.map_or(0, |p| p.mod_revision),
                prev.map_or(0, |p| p.version),
            ] {
                out.extend_from_slice(&n.to_le_bytes());
            }
        }
    }
    out
}

/// A decoded `log` record, borrowing from the stored bytes.
pub(crate) struct Record<'a> {
    pub(crate) kind: EventKind,
    pub(crate) key: &'a [u8],
    /// The new pair's counters (a put) or zeros (a delete).
    pub(crate) meta: Meta,
    /// The pair before the change, if the key existed.
    pub(crate) prev: Option<Meta>,
    /// The new value (a put) or empty (a delete).
    pub(crate) value: &'a [u8],
}

impl Record<'_> {
    /// The change as a watch event; `prev_value` reads the value a previous
    /// pair was written with (from `log[prev.mod_revision]`).
    pub(crate) fn event(
        &self,
        prev_value: impl FnOnce(Revision) -> Result<Bytes>,
    ) -> Result<WatchEvent> {
        let key = key_string(self.key)?;
        let prev = match self.prev {
            None => None,
            Some(p) => Some(p.with_value(key.clone(), prev_value(p.mod_revision)?)),
        };
        let value = Bytes::copy_from_slice(self.value);
        Ok(WatchEvent {
            kind: self.kind,
            kv: self.meta.with_value(key, value),
            prev,
        })
    }
}

/// Decodes the `log` record of the change made at `revision`.
pub(crate) fn decode_record(revision: Revision, bytes: &[u8]) -> Result<Record<'_>> {
    let mut r = Reader { bytes, pos: 0 };
    let kind = r.take(1)?[0];
    let key_len = r.u32()? as usize;
    let key = r.take(key_len)?;
    match kind {
        PUT => {
            let create_revision = r.i64()?;
            let version = r.i64()?;
            let prev_mod = r.i64()?;
            let prev = (prev_mod != 0).then_some(Meta {
                create_revision,
                mod_revision: prev_mod,
                version: version - 1,
            });
            Ok(Record {
                kind: EventKind::Put,
                key,
                meta: Meta {
                    create_revision,
                    mod_revision: revision,
                    version,
                },
                prev,
                value: r.rest(),
            })
        }
        DELETE => {
            let prev = r.meta()?;
            Ok(Record {
                kind: EventKind::Delete,
                key,
                meta: Meta {
                    create_revision: 0,
                    mod_revision: revision,
                    version: 0,
                },
                prev: (prev.mod_revision != 0).then_some(prev),
                value: &[],
            })
        }
        other => Err(corrupt(&format!("unknown event kind {other}"))),
    }
}

/// The key of a logged change, without decoding the rest.
pub(crate) fn event_key(bytes: &[u8]) -> Result<&[u8]> {
    let mut r = Reader { bytes, pos: 1 };
    let len = r.u32()? as usize;
    r.take(len)
}

/// The value a put record wrote, for a pair whose `mod_revision` is the
/// record's revision. Errors if the record is not a put of `key`.
pub(crate) fn put_value<'a>(key: &[u8], bytes: &'a [u8]) -> Result<&'a [u8]> {
    let record = decode_record(0, bytes)?;
    if record.kind != EventKind::Put || record.key != key {
        return Err(corrupt("value record is not a put of its key"));
    }
    Ok(record.value)
}

fn put_key(out: &mut Vec<u8>, key: &[u8]) {
    out.extend_from_slice(&(key.len() as u32).to_le_bytes());
    out.extend_from_slice(key);
}

/// A key read back from a table.
pub(crate) fn key_string(key: &[u8]) -> Result<String> {
    String::from_utf8(key.to_vec()).map_err(|_| corrupt("key is not UTF-8"))
}

pub(crate) fn corrupt(what: &str) -> Error {
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

    fn meta(&mut self) -> Result<Meta> {
        Ok(Meta {
            create_revision: self.i64()?,
            mod_revision: self.i64()?,
            version: self.i64()?,
        })
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
        let values = |rev| match rev {
            2 => Ok(Bytes::from_static(b"x")),
            3 => Ok(Bytes::from_static(b"y")),
            _ => Err(corrupt("no such value")),
        };
        for event in cases {
            let bytes = encode_event(&event);
            assert_eq!(event_key(&bytes).unwrap(), b"/a");
            let record = decode_record(event.revision(), &bytes).unwrap();
            assert_eq!(record.event(values).unwrap(), event);
        }
    }

    #[test]
    fn put_records_hold_the_value_once() {
        let event = WatchEvent {
            kind: EventKind::Put,
            kv: kv("/a", "value", 2, 3, 2),
            prev: Some(kv("/a", "old", 2, 2, 1)),
        };
        let bytes = encode_event(&event);
        assert_eq!(bytes.len(), 1 + 4 + 2 + META + 5);
        assert_eq!(put_value(b"/a", &bytes).unwrap(), b"value");
        assert!(put_value(b"/b", &bytes).is_err());
    }

    #[test]
    fn meta_round_trips() {
        let meta = Meta {
            create_revision: 5,
            mod_revision: 9,
            version: 3,
        };
        assert_eq!(decode_meta(&encode_meta(&meta)).unwrap(), meta);
        assert!(decode_meta(&[0; 23]).is_err());
        assert!(decode_meta(&[0; 25]).is_err());
    }

    #[test]
    fn truncated_records_are_errors_not_panics() {
        let event = WatchEvent {
            kind: EventKind::Delete,
            kv: kv("/k", "", 0, 3, 0),
            prev: Some(kv("/k", "v", 2, 2, 1)),
        };
        let bytes = encode_event(&event);
        for n in 0..bytes.len() {
            assert!(
                decode_record(3, &bytes[..n]).is_err(),
                "prefix of {n} bytes"
            );
        }
        let put = encode_event(&WatchEvent {
            kind: EventKind::Put,
            kv: kv("/k", "v", 2, 2, 1),
            prev: None,
        });
        // A put's value is the rest of the record: only the header can be cut.
        for n in 0..(1 + 4 + 2 + META) {
            assert!(decode_record(2, &put[..n]).is_err(), "prefix of {n} bytes");
        }
    }
}
