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

#[cfg(test)]
mod tests {
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
