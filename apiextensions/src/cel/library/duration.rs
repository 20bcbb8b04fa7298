//! Go's duration text (`time.ParseDuration`: `1h30m`, `-1.5s`, `300ms`,
//! `2us`, `0`), which schema format `duration` values use.

/// The duration `s` denotes, or `None`.
pub(crate) fn parse_go(s: &str) -> Option<chrono::Duration> {
    let (negative, mut rest) = match s.as_bytes().first()? {
        b'-' => (true, &s[1..]),
        b'+' => (false, &s[1..]),
        _ => (false, s),
    };
    if rest == "0" {
        return Some(chrono::Duration::zero());
    }
    if rest.is_empty() {
        return None;
    }
    let mut total: i128 = 0;
    while !rest.is_empty() {
        let num_end = rest
            .find(|c: char| !(c.is_ascii_digit() || c == '.'))
            .unwrap_or(rest.len());
        let (number, tail) = rest.split_at(num_end);
        if number.is_empty() || number == "." {
            return None;
        }
        let unit_end = tail
            .find(|c: char| c.is_ascii_digit() || c == '.')
            .unwrap_or(tail.len());
        let (unit, tail) = tail.split_at(unit_end);
        let nanos_per: i128 = match unit {
            "ns" => 1,
            "us" | "µs" | "μs" => 1_000,
            "ms" => 1_000_000,
            "s" => 1_000_000_000,
            "m" => 60_000_000_000,
            "h" => 3_600_000_000_000,
            _ => return None,
        };
        let (whole, frac) = number.split_once('.').unwrap_or((number, ""));
        if !frac.bytes().all(|b| b.is_ascii_digit()) {
            return None;
        }
        let whole: i128 = if whole.is_empty() {
            0
        } else {
            whole.parse().ok()?
        };
        let mut part = whole.checked_mul(nanos_per)?;
        let mut scale = nanos_per;
        for digit in frac.bytes().take(30) {
            scale /= 10;
            part = part.checked_add(i128::from(digit - b'0') * scale)?;
        }
        total = total.checked_add(part)?;
        if total > i128::from(i64::MAX) {
            return None;
        }
        rest = tail;
    }
    let nanos = i64::try_from(if negative { -total } else { total }).ok()?;
    Some(chrono::Duration::nanoseconds(nanos))
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::parse_go;

    proptest! {
        /// Any text: a duration or `None`, never a panic.
        #[test]
        fn never_panics(s in "[-+0-9.a-zµ]{0,16}") {
            let _ = parse_go(&s);
        }
    }

    #[test]
    fn go_durations() {
        let secs = |s: &str| parse_go(s).map(|d| d.num_milliseconds());
        assert_eq!(secs("1h30m"), Some(5_400_000));
        assert_eq!(secs("-1.5s"), Some(-1500));
        assert_eq!(secs("300ms"), Some(300));
        assert_eq!(secs("0"), Some(0));
        assert_eq!(secs(""), None);
        assert_eq!(secs("1"), None);
        assert_eq!(secs("1d"), None);
        assert_eq!(secs("9999999999h"), None);
        assert_eq!(secs("1.2.3s"), None);
        assert_eq!(secs(".5s"), Some(500));
        assert_eq!(secs("1..s"), None);
    }
}
