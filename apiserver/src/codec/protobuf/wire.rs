//! The protobuf wire format: a bounds-checked reader of tagged fields.
//!
//! Contract: [`Fields`] yields every field of one message in wire order and
//! never reads past its slice. Malformed input (truncated varints or
//! lengths, varints longer than ten bytes, field number 0, wire types 6 and
//! 7, unbalanced groups) yields one `Err` and then ends. Groups (wire
//! types 3/4) are skipped whole and reported as [`Value::Group`], as Go's
//! generated code does for unknown fields; a known field that arrives as a
//! group is the caller's error to report.

use super::error::Failure;

/// One field's payload, borrowed from the message bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Value<'a> {
    /// Wire type 0.
    Varint(u64),
    /// Wire type 1.
    Fixed64(u64),
    /// Wire type 2: strings, bytes, messages, packed scalars.
    Bytes(&'a [u8]),
    /// Wire type 5.
    Fixed32(u32),
    /// Wire types 3..4: a skipped group.
    Group,
}

impl Value<'_> {
    /// The protobuf name of the wire type, for error messages.
    pub(super) fn wire_name(&self) -> &'static str {
        match self {
            Value::Varint(_) => "varint",
            Value::Fixed64(_) => "fixed64",
            Value::Bytes(_) => "length-delimited",
            Value::Fixed32(_) => "fixed32",
            Value::Group => "group",
        }
    }
}

/// Iterator over `(field number, value)` of one message.
pub(super) struct Fields<'a> {
    buf: &'a [u8],
    pos: usize,
    failed: bool,
}

impl<'a> Fields<'a> {
    pub(super) fn new(buf: &'a [u8]) -> Self {
        Self {
            buf,
            pos: 0,
            failed: false,
        }
    }

    fn varint(&mut self) -> Result<u64, Failure> {
        read_varint(self.buf, &mut self.pos)
    }

    fn field(&mut self) -> Result<(u32, Value<'a>), Failure> {
        let key = self.varint()?;
        let number = key >> 3;
        if number == 0 || number > u64::from(u32::MAX >> 3) {
            return Err(Failure::new(format!("illegal field number {number}")));
        }
        let number = number as u32;
        let value = match key & 7 {
            0 => Value::Varint(self.varint()?),
            1 => Value::Fixed64(u64::from_le_bytes(self.take_array()?)),
            2 => {
                let len = self.varint()?;
                Value::Bytes(self.take(len)?)
            }
            3 => {
                self.skip_group(number)?;
                Value::Group
            }
            4 => {
                return Err(Failure::new(format!(
                    "end of group {number} without a start"
                )));
            }
            5 => Value::Fixed32(u32::from_le_bytes(self.take_array()?)),
            other => return Err(Failure::new(format!("invalid wire type {other}"))),
        };
        Ok((number, value))
    }

    fn take(&mut self, len: u64) -> Result<&'a [u8], Failure> {
        let rest = self.buf.len() - self.pos;
        match usize::try_from(len) {
            Ok(len) if len <= rest => {
                let out = &self.buf[self.pos..self.pos + len];
                self.pos += len;
                Ok(out)
            }
            _ => Err(Failure::new(format!(
                "length {len} runs past the end of the message ({rest} bytes left)"
            ))),
        }
    }

    fn take_array<const N: usize>(&mut self) -> Result<[u8; N], Failure> {
        let bytes = self.take(N as u64)?;
        let mut out = [0u8; N];
        out.copy_from_slice(bytes);
        Ok(out)
    }

    /// Skips to the end-group key matching `number`, nesting included.
    fn skip_group(&mut self, number: u32) -> Result<(), Failure> {
        let mut open = vec![number];
        while let Some(&innermost) = open.last() {
            if self.pos >= self.buf.len() {
                return Err(Failure::new(format!("group {innermost} is not closed")));
            }
            let key = self.varint()?;
            let n = key >> 3;
            match key & 7 {
                0 => {
                    self.varint()?;
                }
                1 => {
                    self.take(8)?;
                }
                2 => {
                    let len = self.varint()?;
                    self.take(len)?;
                }
                3 => {
                    if open.len() >= MAX_GROUP_DEPTH {
                        return Err(Failure::new("groups nested too deeply"));
                    }
                    open.push(n as u32);
                }
                4 if n == u64::from(innermost) => {
                    open.pop();
                }
                4 => {
                    return Err(Failure::new(format!(
                        "end of group {n} inside group {innermost}"
                    )));
                }
                5 => {
                    self.take(4)?;
                }
                other => return Err(Failure::new(format!("invalid wire type {other}"))),
            }
        }
        Ok(())
    }
}

/// Nesting bound for skipped groups, so the skip stack stays small.
const MAX_GROUP_DEPTH: usize = 64;

impl<'a> Iterator for Fields<'a> {
    type Item = Result<(u32, Value<'a>), Failure>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.failed || self.pos >= self.buf.len() {
            return None;
        }
        let item = self.field();
        self.failed = item.is_err();
        Some(item)
    }
}

/// Reads a base-128 varint at `*pos`, as Go's generated code does: at most
/// ten bytes, bits beyond 64 dropped.
pub(super) fn read_varint(buf: &[u8], pos: &mut usize) -> Result<u64, Failure> {
    let mut value: u64 = 0;
    for i in 0..10 {
        let Some(&byte) = buf.get(*pos) else {
            return Err(Failure::new("varint runs past the end of the message"));
        };
        *pos += 1;
        value |= u64::from(byte & 0x7f) << (7 * i);
        if byte < 0x80 {
            return Ok(value);
        }
    }
    Err(Failure::new("varint is longer than ten bytes"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn all(buf: &[u8]) -> Vec<Result<(u32, Value<'_>), String>> {
        Fields::new(buf)
            .map(|r| r.map_err(|e| format!("{e:?}")))
            .collect()
    }

    #[test]
    fn reads_each_wire_type() {
        let buf = [
            0x08, 0x96, 0x01, // 1: varint 150
            0x11, 1, 0, 0, 0, 0, 0, 0, 0, // 2: fixed64 1
            0x1a, 0x02, b'h', b'i', // 3: bytes "hi"
            0x25, 2, 0, 0, 0, // 4: fixed32 2
        ];
        let got: Vec<_> = Fields::new(&buf).map(|r| r.ok()).collect();
        assert_eq!(
            got,
            vec![
                Some((1, Value::Varint(150))),
                Some((2, Value::Fixed64(1))),
                Some((3, Value::Bytes(b"hi"))),
                Some((4, Value::Fixed32(2))),
            ]
        );
    }

    #[test]
    fn skips_nested_groups() {
        // 5: start group { 6: start group { 1: varint } 6: end } 5: end, then 1: varint 7
        let buf = [0x2b, 0x33, 0x08, 0x01, 0x34, 0x2c, 0x08, 0x07];
        let got: Vec<_> = Fields::new(&buf).map(|r| r.ok()).collect();
        assert_eq!(
            got,
            vec![Some((5, Value::Group)), Some((1, Value::Varint(7)))]
        );
    }

    #[test]
    fn malformed_input_fails_once() {
        for buf in [
            &[0x0a, 0x05, b'a'][..], // length past the end
            &[0x08][..],             // missing varint
            &[
                0x08, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
            ][..], // 11-byte varint
            &[0x00, 0x01][..],       // field 0
            &[0x0e][..],             // wire type 6
            &[0x0c][..],             // end group without start
            &[0x0b, 0x08, 0x01][..], // unclosed group
            &[0x0b, 0x14][..],       // mismatched end group
            &[0x09, 1, 2][..],       // short fixed64
        ] {
            let got = all(buf);
            assert_eq!(got.len(), 1, "{buf:?}: {got:?}");
            assert!(got[0].is_err(), "{buf:?}: {got:?}");
        }
    }

    #[test]
    fn varint_keeps_low_64_bits_of_ten_bytes() {
        let buf = [0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x7f];
        let mut pos = 0;
        assert_eq!(read_varint(&buf, &mut pos).ok(), Some(u64::MAX));
        assert_eq!(pos, 10);
    }
}
