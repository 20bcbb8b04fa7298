//! RFC 3339 timestamps as `metav1.Time` / `metav1.MicroTime` carry them.
//!
//! Contract: [`parse`] returns `None` for anything Go's zero time would
//! be — an absent or `null` field, `0001-01-01T00:00:00Z` itself — and for
//! text Go could not have decoded. Callers print `None` the way upstream
//! prints a zero `metav1.Time` (`<unknown>` for ages,
//! `0001-01-01T00:00:00Z` for the default table's "Created At").

use time::{Date, Month, OffsetDateTime, PrimitiveDateTime, Time, UtcOffset};

/// Go's zero `time.Time` rendered as RFC 3339 (what "Created At" shows for
/// an object without a creation timestamp).
pub(crate) const ZERO_RFC3339: &str = "0001-01-01T00:00:00Z";

/// Parses `YYYY-MM-DDTHH:MM:SS[.fraction](Z|±HH:MM)`; `None` for the zero
/// time and for malformed text.
pub(crate) fn parse(text: &str) -> Option<OffsetDateTime> {
    let b = text.as_bytes();
    if b.len() < 20 || b[4] != b'-' || b[7] != b'-' || b[10] != b'T' {
        return None;
    }
    if b[13] != b':' || b[16] != b':' {
        return None;
    }
    let year = digits(b, 0, 4)?;
    let month = Month::try_from(u8::try_from(digits(b, 5, 2)?).ok()?).ok()?;
    let day = u8::try_from(digits(b, 8, 2)?).ok()?;
    let hour = u8::try_from(digits(b, 11, 2)?).ok()?;
    let minute = u8::try_from(digits(b, 14, 2)?).ok()?;
    let second = u8::try_from(digits(b, 17, 2)?).ok()?;

    let mut pos = 19;
    let mut nanos: u32 = 0;
    if b.get(pos) == Some(&b'.') {
        pos += 1;
        let start = pos;
        while pos < b.len() && b[pos].is_ascii_digit() {
            if pos - start < 9 {
                nanos = nanos * 10 + u32::from(b[pos] - b'0');
            }
            pos += 1;
        }
        let len = pos - start;
        if len == 0 {
            return None;
        }
        for _ in len..9 {
            nanos *= 10;
        }
    }
    let offset = match &b[pos..] {
        [b'Z'] => UtcOffset::UTC,
        [sign @ (b'+' | b'-'), h1, h2, b':', m1, m2] => {
            let h = i8::try_from(digits(&[*h1, *h2], 0, 2)?).ok()?;
            let m = i8::try_from(digits(&[*m1, *m2], 0, 2)?).ok()?;
            if *sign == b'-' {
                UtcOffset::from_hms(-h, -m, 0).ok()?
            } else {
                UtcOffset::from_hms(h, m, 0).ok()?
            }
        }
        _ => return None,
    };
    let date = Date::from_calendar_date(i32::try_from(year).ok()?, month, day).ok()?;
    let time = Time::from_hms_nano(hour, minute, second, nanos).ok()?;
    let parsed = PrimitiveDateTime::new(date, time).assume_offset(offset);
    (parsed != zero()).then_some(parsed)
}

/// Formats as Go's `t.UTC().Format(time.RFC3339)`: UTC, whole seconds.
pub(crate) fn format_rfc3339(t: OffsetDateTime) -> String {
    let t = t.to_offset(UtcOffset::UTC);
    format!(
        "{:04}-{:02}-{:02}T{:02}:{:02}:{:02}Z",
        t.year(),
        u8::from(t.month()),
        t.day(),
        t.hour(),
        t.minute(),
        t.second()
    )
}

/// `end - start` in nanoseconds, saturating like Go's `Time.Sub`.
pub(crate) fn nanos_between(start: OffsetDateTime, end: OffsetDateTime) -> i64 {
    let nanos = (end - start).whole_nanoseconds();
    i64::try_from(nanos).unwrap_or(if nanos < 0 { i64::MIN } else { i64::MAX })
}

/// Go's zero time, 0001-01-01T00:00:00Z.
pub(crate) fn zero() -> OffsetDateTime {
    match Date::from_calendar_date(1, Month::January, 1) {
        Ok(date) => PrimitiveDateTime::new(date, Time::MIDNIGHT).assume_utc(),
        Err(_) => OffsetDateTime::UNIX_EPOCH,
    }
}

/// `len` ASCII digits at `start` as a number.
fn digits(b: &[u8], start: usize, len: usize) -> Option<u32> {
    let slice = b.get(start..start + len)?;
    slice.iter().try_fold(0u32, |acc, c| {
        c.is_ascii_digit().then(|| acc * 10 + u32::from(c - b'0'))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_utc_fraction_and_offset() {
        let utc = parse("2024-03-01T10:20:30Z").unwrap();
        assert_eq!(format_rfc3339(utc), "2024-03-01T10:20:30Z");
        let micro = parse("2024-03-01T10:20:30.123456Z").unwrap();
        assert_eq!(micro.nanosecond(), 123_456_000);
        let offset = parse("2024-03-01T12:20:30+02:00").unwrap();
        assert_eq!(offset, utc);
        assert_eq!(format_rfc3339(offset), "2024-03-01T10:20:30Z");
    }

    #[test]
    fn zero_and_garbage_are_none() {
        assert_eq!(parse(ZERO_RFC3339), None);
        for bad in [
            "",
            "yesterday",
            "2024-13-01T00:00:00Z",
            "2024-01-01T00:00:00",
            "2024-01-01T00:00:00.Z",
        ] {
            assert_eq!(parse(bad), None, "{bad}");
        }
    }

    #[test]
    fn sub_saturates() {
        let a = parse("2024-01-01T00:00:00Z").unwrap();
        let b = parse("9999-01-01T00:00:00Z").unwrap();
        assert_eq!(nanos_between(a, b), i64::MAX);
        assert_eq!(nanos_between(b, a), i64::MIN);
    }
}
