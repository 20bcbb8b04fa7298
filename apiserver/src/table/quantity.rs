//! `resource.Quantity` in canonical form (`Quantity.String()`).
//!
//! kube-apiserver decodes every quantity and prints its canonical form, so
//! a PVC created with `storage: 1024Mi` lists as `1Gi`. Contract of
//! [`canonical`]:
//!
//! - the suffix family is kept: binary (`Ki`…`Ei`), decimal SI (`n`…`E`,
//!   or none) or decimal exponent (`e3`);
//! - binary values that are not whole, or lie strictly between -1024 and
//!   1024, switch to decimal SI (`0.5Gi` → `512Mi`, `1.5Ki` → `1536`,
//!   `0.5Ki` → `512`);
//! - decimal values use the largest exponent that is a multiple of 3 and
//!   keeps the mantissa whole (`1000` → `1k`, `0.1` → `100m`, `1500m` →
//!   `1500m`);
//! - precision below 1n rounds away from zero; magnitudes cap at 2^63-1;
//! - text upstream would reject comes back unchanged.

use serde_json::Value;

/// Nanos per unit.
const NANO: i128 = 1_000_000_000;
/// Largest magnitude upstream's arbitrary-precision path keeps
/// (`maxAllowed`, 2^63-1), in nanos.
const MAX_NANOS: i128 = i64::MAX as i128 * NANO;

/// The suffix family of a quantity.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Format {
    BinarySi,
    DecimalSi,
    DecimalExponent,
}

/// An exact quantity: `mantissa × 10^exp10`.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
struct Amount {
    mantissa: i128,
    exp10: i32,
}

/// Canonical text of a quantity as found in JSON (a string or a number);
/// `"0"` for `null`.
pub(crate) fn canonical(v: &Value) -> String {
    match v {
        Value::Null => "0".to_owned(),
        Value::String(s) => canonical_str(s.trim()),
        Value::Number(n) => canonical_str(&n.to_string()),
        other => other.to_string(),
    }
}

/// Canonical text of a quantity string; the input when it does not parse.
fn canonical_str(text: &str) -> String {
    match parse(text) {
        Some((amount, format)) => render(amount, format),
        None => text.to_owned(),
    }
}

/// `ParseQuantity`: the exact amount (int64 fast path) or the amount
/// rounded up to 1n and capped (arbitrary-precision path), and its format.
fn parse(text: &str) -> Option<(Amount, Format)> {
    let (negative, rest) = match text.as_bytes().first()? {
        b'-' => (true, &text[1..]),
        b'+' => (false, &text[1..]),
        _ => (false, text),
    };
    let rest = rest.trim_start_matches('0');
    let int_end = rest
        .find(|c: char| !c.is_ascii_digit())
        .unwrap_or(rest.len());
    let (int_part, rest) = rest.split_at(int_end);
    let int_part = if int_part.is_empty() { "0" } else { int_part };
    let (frac_part, suffix) = match rest.strip_prefix('.') {
        Some(after) => {
            let end = after
                .find(|c: char| !c.is_ascii_digit())
                .unwrap_or(after.len());
            after.split_at(end)
        }
        None => ("", rest),
    };
    let (format, exponent) = suffix_scale(suffix)?;
    let frac_len = i32::try_from(frac_part.len()).ok()?;
    let digit_count = i32::try_from(int_part.len()).ok()? + frac_len;
    let sign = if negative { -1 } else { 1 };

    // The int64 fast path: exact, no rounding, no cap.
    match format {
        Format::DecimalSi | Format::DecimalExponent => {
            if 18 - digit_count >= 0 && exponent - frac_len >= -9 {
                let mantissa: i128 = format!("{int_part}{frac_part}").parse().ok()?;
                let amount = Amount {
                    mantissa: sign * mantissa,
                    exp10: exponent - frac_len,
                };
                return Some((amount, format));
            }
        }
        Format::BinarySi => {
            let int_len = i32::try_from(int_part.len()).ok()?;
            // Go: 15 - len(num) - int(float32(exponent)*3/10) - 1.
            let precision = 15 - int_len - exponent * 3 / 10 - 1;
            if frac_part.is_empty() && precision >= 0 {
                let value: i128 = int_part.parse().ok()?;
                if let Some(v) = value.checked_mul(1i128 << exponent)
                    && i64::try_from(v).is_ok()
                {
                    return Some((
                        Amount {
                            mantissa: sign * v,
                            exp10: 0,
                        },
                        format,
                    ));
                }
            }
        }
    }

    // The arbitrary-precision path, in nanos: digits × 10^(e - frac) [× 2^e].
    let digits = format!("{int_part}{frac_part}");
    let trimmed = digits.trim_end_matches('0');
    let zeros = i32::try_from(digits.len() - trimmed.len()).ok()?;
    let trimmed = trimmed.trim_start_matches('0');
    if trimmed.is_empty() {
        return Some((
            Amount {
                mantissa: 0,
                exp10: 0,
            },
            format,
        ));
    }
    let mut num: i128 = trimmed.parse().ok()?;
    let mut exp = zeros - frac_len + 9;
    if format == Format::BinarySi {
        num = num.checked_mul(1i128 << exponent).unwrap_or(MAX_NANOS);
    } else {
        exp += exponent;
    }
    let nanos = if exp >= 0 {
        u32::try_from(exp)
            .ok()
            .and_then(|e| 10i128.checked_pow(e))
            .and_then(|p| num.checked_mul(p))
            .unwrap_or(MAX_NANOS)
    } else {
        match u32::try_from(-exp).ok().and_then(|e| 10i128.checked_pow(e)) {
            // Round up: anything non-zero below 1n becomes 1n.
            Some(div) => num / div + i128::from(num % div != 0),
            None => 1,
        }
    };
    let nanos = nanos.min(MAX_NANOS);
    Some((
        Amount {
            mantissa: sign * nanos,
            exp10: -9,
        },
        format,
    ))
}

/// The format and exponent a suffix denotes (base 10, or base 2 for the
/// binary suffixes).
fn suffix_scale(suffix: &str) -> Option<(Format, i32)> {
    use Format::*;
    let scale = match suffix {
        "" => (DecimalSi, 0),
        "n" => (DecimalSi, -9),
        "u" => (DecimalSi, -6),
        "m" => (DecimalSi, -3),
        "k" => (DecimalSi, 3),
        "M" => (DecimalSi, 6),
        "G" => (DecimalSi, 9),
        "T" => (DecimalSi, 12),
        "P" => (DecimalSi, 15),
        "E" => (DecimalSi, 18),
        "Ki" => (BinarySi, 10),
        "Mi" => (BinarySi, 20),
        "Gi" => (BinarySi, 30),
        "Ti" => (BinarySi, 40),
        "Pi" => (BinarySi, 50),
        "Ei" => (BinarySi, 60),
        _ => {
            let exp = suffix.strip_prefix(['e', 'E'])?;
            let digits = exp.strip_prefix(['+', '-']).unwrap_or(exp);
            if digits.is_empty() || !digits.bytes().all(|c| c.is_ascii_digit()) {
                return None;
            }
            // Kept within a range where exponent arithmetic cannot overflow.
            let exp: i32 = exp.parse().ok()?;
            if !(-1_000_000..=1_000_000).contains(&exp) {
                return None;
            }
            (DecimalExponent, exp)
        }
    };
    Some(scale)
}

/// `CanonicalizeBytes`.
fn render(amount: Amount, format: Format) -> String {
    let Amount {
        mut mantissa,
        mut exp10,
    } = amount;
    if mantissa == 0 {
        return "0".to_owned();
    }
    // Binary values below 1024 or not whole are shown as decimal SI.
    if format == Format::BinarySi
        && let Some(whole) = whole_value(amount)
        && whole.abs() >= 1024
    {
        let (mut n, mut times) = (whole, 0);
        while n.abs() >= 1024 && n % 1024 == 0 && times < 6 {
            n /= 1024;
            times += 1;
        }
        let suffix = ["", "Ki", "Mi", "Gi", "Ti", "Pi", "Ei"]
            .get(times)
            .unwrap_or(&"");
        return format!("{n}{suffix}");
    }
    // Strip factors of ten, then floor the exponent to a multiple of three.
    while mantissa.abs() >= 10 && mantissa % 10 == 0 {
        mantissa /= 10;
        exp10 += 1;
    }
    match exp10.rem_euclid(3) {
        1 => {
            mantissa *= 10;
            exp10 -= 1;
        }
        2 => {
            mantissa *= 100;
            exp10 -= 2;
        }
        _ => {}
    }
    let suffix = match (format, exp10) {
        (Format::DecimalExponent, 0) => String::new(),
        (Format::DecimalExponent, e) => format!("e{e}"),
        (_, -9) => "n".to_owned(),
        (_, -6) => "u".to_owned(),
        (_, -3) => "m".to_owned(),
        (_, 3) => "k".to_owned(),
        (_, 6) => "M".to_owned(),
        (_, 9) => "G".to_owned(),
        (_, 12) => "T".to_owned(),
        (_, 15) => "P".to_owned(),
        (_, 18) => "E".to_owned(),
        // Upstream has no suffix for other exponents and prints none.
        _ => String::new(),
    };
    format!("{mantissa}{suffix}")
}

/// The amount as a whole number, if it is one and fits.
fn whole_value(amount: Amount) -> Option<i128> {
    if amount.exp10 >= 0 {
        let scale = 10i128.checked_pow(u32::try_from(amount.exp10).ok()?)?;
        amount.mantissa.checked_mul(scale)
    } else {
        let scale = 10i128.checked_pow(u32::try_from(-amount.exp10).ok()?)?;
        (amount.mantissa % scale == 0).then(|| amount.mantissa / scale)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn c(s: &str) -> String {
        canonical(&json!(s))
    }

    #[test]
    fn canonical_forms() {
        let cases = [
            ("0", "0"),
            ("0Gi", "0"),
            ("1Gi", "1Gi"),
            ("1024Mi", "1Gi"),
            ("1000Mi", "1000Mi"),
            ("0.5Gi", "512Mi"),
            ("1.5Gi", "1536Mi"),
            ("1.5Ki", "1536"),
            ("0.5Ki", "512"),
            ("100m", "100m"),
            ("0.1", "100m"),
            ("1000", "1k"),
            ("1500m", "1500m"),
            ("1.5", "1500m"),
            ("2000000000", "2G"),
            ("1e3", "1e3"),
            ("1.5e3", "1500"),
            ("1E6", "1e6"),
            ("0.1n", "1n"),
            ("-100m", "-100m"),
            ("+1Gi", "1Gi"),
            ("10G", "10G"),
            ("12345", "12345"),
            ("100M", "100M"),
            ("1.", "1"),
            (".5", "500m"),
        ];
        for (input, want) in cases {
            assert_eq!(c(input), want, "{input}");
        }
    }

    #[test]
    fn numbers_null_and_garbage() {
        assert_eq!(canonical(&json!(1073741824)), "1073741824");
        assert_eq!(canonical(&json!(1000)), "1k");
        assert_eq!(canonical(&Value::Null), "0");
        assert_eq!(c("lots"), "lots");
        assert_eq!(c("1Zi"), "1Zi");
        assert_eq!(c(""), "");
        // The int64 fast path keeps large exact values uncapped...
        assert_eq!(c("100E"), "100E");
        assert_eq!(c("1e30"), "1e30");
        // ...the arbitrary-precision path caps them at 2^63-1.
        assert_eq!(c("1000000000000000000000"), "9223372036854775807");
        assert_eq!(c("16Ei"), "9223372036854775807");
    }
}
