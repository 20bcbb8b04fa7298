//! Go's formatting of strings and numbers, where upstream's messages
//! reach users verbatim: `strconv.Quote` (`%q`) and `%v` of a `float64`.
//! The one home of both for every Skein crate.

/// Go's `strconv.Quote` (what `%q` prints).
///
/// Printable characters stay as they are; Go's `unicode.IsPrint` is
/// approximated by excluding control, format, separator, private-use and
/// noncharacter code points. Unassigned code points, which Go would escape,
/// are printed as they are.
pub fn quote(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\u{7}' => out.push_str("\\a"),
            '\u{8}' => out.push_str("\\b"),
            '\u{c}' => out.push_str("\\f"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '\u{b}' => out.push_str("\\v"),
            c if (c as u32) < 0x20 || c == '\u{7f}' => {
                out.push_str(&format!("\\x{:02x}", c as u32));
            }
            c if is_go_print(c) => out.push(c),
            c if (c as u32) < 0x10000 => out.push_str(&format!("\\u{:04x}", c as u32)),
            c => out.push_str(&format!("\\U{:08x}", c as u32)),
        }
    }
    out.push('"');
    out
}

fn is_go_print(c: char) -> bool {
    let u = c as u32;
    if u < 0x80 {
        return (0x20..0x7f).contains(&u);
    }
    if c.is_control() || c.is_whitespace() {
        return false;
    }
    const FORMAT: &[(u32, u32)] = &[
        (0x00ad, 0x00ad),
        (0x0600, 0x0605),
        (0x061c, 0x061c),
        (0x06dd, 0x06dd),
        (0x070f, 0x070f),
        (0x0890, 0x0891),
        (0x08e2, 0x08e2),
        (0x180e, 0x180e),
        (0x200b, 0x200f),
        (0x2028, 0x202e),
        (0x2060, 0x2064),
        (0x2066, 0x206f),
        (0xfeff, 0xfeff),
        (0xfff9, 0xfffb),
        (0x110bd, 0x110bd),
        (0x110cd, 0x110cd),
        (0x13430, 0x1343f),
        (0x1bca0, 0x1bca3),
        (0x1d173, 0x1d17a),
        (0xe0001, 0xe0001),
        (0xe0020, 0xe007f),
        // private use
        (0xe000, 0xf8ff),
        (0xf0000, 0xffffd),
        (0x100000, 0x10fffd),
        // noncharacters
        (0xfdd0, 0xfdef),
    ];
    if u & 0xfffe == 0xfffe {
        return false;
    }
    !FORMAT.iter().any(|&(lo, hi)| (lo..=hi).contains(&u))
}

/// Go's `%v` of a `float64` (`strconv.FormatFloat(f, 'g', -1, 64)`):
/// the shortest digits that read back as `f`, in exponent form when the
/// decimal exponent is below -4 or at least 6 (`'g'` with the shortest
/// precision decides with precision 6): `123456`, `1e+06`, `1.5e-05`.
pub fn float_v(f: f64) -> String {
    if f.is_nan() {
        return "NaN".to_owned();
    }
    if f.is_infinite() {
        return if f > 0.0 { "+Inf" } else { "-Inf" }.to_owned();
    }
    if f == 0.0 {
        return if f.is_sign_negative() { "-0" } else { "0" }.to_owned();
    }
    // Shortest round-trip digits and the decimal exponent, from Rust's `{:e}`.
    let scientific = format!("{f:e}");
    let Some((mantissa, exponent)) = scientific.split_once('e') else {
        return scientific;
    };
    let exponent: i32 = exponent.parse().unwrap_or(0);
    if (-4..6).contains(&exponent) {
        return f.to_string();
    }
    let sign = if exponent < 0 { '-' } else { '+' };
    format!("{mantissa}e{sign}{:02}", exponent.unsigned_abs())
}

/// Go's `time.ParseDuration`: a sign, then a sequence of decimal numbers,
/// each with an optional fraction and a unit (`ns`, `us`, `µs`, `μs`, `ms`,
/// `s`, `m`, `h`), e.g. `1h0m0s`, `-1.5h`, `300ms`; `0` needs no unit.
/// Returns the nanoseconds, or Go's message (`time: invalid duration
/// "bogus"`, `time: missing unit in duration "5"`, `time: unknown unit
/// "d" in duration "5d"`); beyond ±(2^63 − 1) ns is invalid.
pub fn parse_duration(s: &str) -> Result<i64, String> {
    let invalid = || format!("time: invalid duration {}", quote(s));
    let (negative, mut rest) = match s.as_bytes().first() {
        Some(b'-') => (true, &s[1..]),
        Some(b'+') => (false, &s[1..]),
        _ => (false, s),
    };
    if rest == "0" {
        return Ok(0);
    }
    if rest.is_empty() {
        return Err(invalid());
    }
    let digits = |t: &str| t.find(|c: char| !c.is_ascii_digit()).unwrap_or(t.len());
    let mut nanos: u128 = 0;
    while !rest.is_empty() {
        let (whole, after) = rest.split_at(digits(rest));
        let (fraction, after) = match after.strip_prefix('.') {
            Some(f) => f.split_at(digits(f)),
            None => ("", after),
        };
        if whole.is_empty() && fraction.is_empty() {
            return Err(invalid());
        }
        let unit_len = after
            .find(|c: char| c == '.' || c.is_ascii_digit())
            .unwrap_or(after.len());
        let (unit, after) = after.split_at(unit_len);
        rest = after;
        let per: u128 = match unit {
            "" => return Err(format!("time: missing unit in duration {}", quote(s))),
            "ns" => 1,
            "us" | "µs" | "μs" => 1_000,
            "ms" => 1_000_000,
            "s" => 1_000_000_000,
            "m" => 60_000_000_000,
            "h" => 3_600_000_000_000,
            _ => {
                return Err(format!(
                    "time: unknown unit {} in duration {}",
                    quote(unit),
                    quote(s)
                ));
            }
        };
        let whole: u128 = if whole.is_empty() {
            0
        } else {
            whole.parse().map_err(|_| invalid())?
        };
        // Go keeps the fraction's leading digits that matter; 18 is beyond
        // a nanosecond of any unit.
        let fraction = &fraction[..fraction.len().min(18)];
        let scaled = if fraction.is_empty() {
            0
        } else {
            let f: u128 = fraction.parse().map_err(|_| invalid())?;
            f * per / 10u128.pow(u32::try_from(fraction.len()).unwrap_or(18))
        };
        nanos = whole
            .checked_mul(per)
            .and_then(|n| n.checked_add(scaled))
            .and_then(|n| n.checked_add(nanos))
            .filter(|n| *n <= i64::MAX as u128)
            .ok_or_else(invalid)?;
    }
    let nanos = i64::try_from(nanos).map_err(|_| invalid())?;
    Ok(if negative { -nanos } else { nanos })
}

#[cfg(test)]
mod tests {

    #[test]
    fn durations_parse_as_go() {
        assert_eq!(super::parse_duration("1h0m0s"), Ok(3_600_000_000_000));
        assert_eq!(super::parse_duration("-1.5s"), Ok(-1_500_000_000));
        assert_eq!(super::parse_duration("+300ms"), Ok(300_000_000));
        assert_eq!(super::parse_duration("1.5µs"), Ok(1_500));
        assert_eq!(super::parse_duration("0"), Ok(0));
        assert_eq!(
            super::parse_duration("5").unwrap_err(),
            r#"time: missing unit in duration "5""#
        );
        assert_eq!(
            super::parse_duration("5d").unwrap_err(),
            r#"time: unknown unit "d" in duration "5d""#
        );
        for bad in ["", "-", ".s", "1h-1s", "9999999999h", "bogus"] {
            assert!(super::parse_duration(bad).is_err(), "{bad}");
        }
    }
    use super::*;

    #[test]
    fn quote_escapes_as_strconv_quote() {
        assert_eq!(quote("a\"b"), r#""a\"b""#);
        assert_eq!(quote("tab\there\n"), r#""tab\there\n""#);
        assert_eq!(quote("\u{1}\u{7f}"), r#""\x01\x7f""#);
        assert_eq!(quote("\u{200b}é"), r#""\u200bé""#);
        assert_eq!(quote("\u{10ffff}"), r#""\U0010ffff""#);
    }

    #[test]
    fn floats_print_as_go_v() {
        for (f, want) in [
            (1.5, "1.5"),
            (123456.0, "123456"),
            (1e6, "1e+06"),
            (1e-5, "1e-05"),
            (1.5e-5, "1.5e-05"),
            (0.0001, "0.0001"),
            (-0.0, "-0"),
            (1e21, "1e+21"),
            (f64::INFINITY, "+Inf"),
            (f64::NAN, "NaN"),
        ] {
            assert_eq!(float_v(f), want, "{f}");
        }
    }
}
