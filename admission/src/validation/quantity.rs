//! `resource.Quantity` as apimachinery parses, compares and prints it
//! (`pkg/api/resource/quantity.go`): exact values in nano units and the
//! canonical text (`1000m` → `1`, `1024Mi` → `1Gi`, `0.5` → `500m`) that
//! upstream shows in messages and stores.

use std::cmp::Ordering;

/// How the quantity was written; the canonical text keeps the family.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Format {
    /// `k`, `M`, `G`, … or no suffix.
    DecimalSi,
    /// `Ki`, `Mi`, `Gi`, …
    BinarySi,
    /// `e3`, `E-2`, …
    DecimalExponent,
}

/// A parsed quantity: the value in units of 10⁻⁹ (rounded up, as upstream
/// rounds below nano precision) and its format.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Quantity {
    nanos: i128,
    format: Format,
}

const NANO: i128 = 1_000_000_000;

impl Quantity {
    /// Parses `s` with upstream's grammar
    /// (`^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$`); `None` when it
    /// does not parse or is out of range.
    pub fn parse(s: &str) -> Option<Self> {
        let s = s.trim();
        let (negative, rest) = match s.as_bytes().first() {
            Some(b'-') => (true, &s[1..]),
            Some(b'+') => (false, &s[1..]),
            _ => (false, s),
        };
        let num_end = rest
            .find(|c: char| !(c.is_ascii_digit() || c == '.'))
            .unwrap_or(rest.len());
        let (number, suffix) = rest.split_at(num_end);
        let (whole, frac) = number.split_once('.').unwrap_or((number, ""));
        if (whole.is_empty() && frac.is_empty()) || frac.contains('.') {
            return None;
        }
        let (format, exp10, exp2) = parse_suffix(suffix)?;
        // value = digits × 10^(exp10 - frac.len()) × 2^exp2, in nanos.
        let digits = format!("{whole}{frac}");
        let digits = digits.trim_start_matches('0');
        if digits.len() > 30 {
            return None;
        }
        let mantissa: i128 = if digits.is_empty() {
            0
        } else {
            digits.parse().ok()?
        };
        let scale = exp10 - i32::try_from(frac.len()).ok()? + 9;
        let mut nanos = mantissa.checked_mul(1i128.checked_shl(exp2)?)?;
        if scale >= 0 {
            nanos = nanos.checked_mul(10i128.checked_pow(u32::try_from(scale).ok()?)?)?;
        } else {
            let div = 10i128.checked_pow(u32::try_from(-scale).ok()?)?;
            // Round up (away from zero) below nano precision.
            nanos = nanos / div + i128::from(nanos % div != 0);
        }
        Some(Self {
            nanos: if negative { -nanos } else { nanos },
            format,
        })
    }

    /// The value in units of 10⁻⁹.
    pub fn nanos(&self) -> i128 {
        self.nanos
    }

    /// Whether the value is below zero.
    pub(crate) fn is_negative(&self) -> bool {
        self.nanos < 0
    }

    /// `true` when the value is a whole number.
    pub(crate) fn is_integer(&self) -> bool {
        self.nanos % NANO == 0
    }

    /// Upstream's `Quantity.String()`: the canonical text.
    pub fn canonical(&self) -> String {
        let mut format = self.format;
        if format == Format::BinarySi && (self.nanos.abs() < 1024 * NANO || !self.is_integer()) {
            format = Format::DecimalSi;
        }
        if self.nanos == 0 {
            return "0".to_owned();
        }
        match format {
            Format::BinarySi => {
                let mut value = self.nanos / NANO;
                let mut exp = 0;
                while exp < 60 && value % 1024 == 0 {
                    value /= 1024;
                    exp += 10;
                }
                let suffix = match exp {
                    10 => "Ki",
                    20 => "Mi",
                    30 => "Gi",
                    40 => "Ti",
                    50 => "Pi",
                    60 => "Ei",
                    _ => "",
                };
                format!("{value}{suffix}")
            }
            Format::DecimalSi | Format::DecimalExponent => {
                let mut value = self.nanos;
                let mut exp: i32 = -9;
                while value % 10 == 0 {
                    value /= 10;
                    exp += 1;
                }
                let extra = exp.rem_euclid(3);
                for _ in 0..extra {
                    value *= 10;
                }
                exp -= extra;
                if format == Format::DecimalExponent {
                    return if exp == 0 {
                        format!("{value}")
                    } else {
                        format!("{value}e{exp}")
                    };
                }
                let suffix = match exp {
                    -9 => "n",
                    -6 => "u",
                    -3 => "m",
                    3 => "k",
                    6 => "M",
                    9 => "G",
                    12 => "T",
                    15 => "P",
                    18 => "E",
                    _ => "",
                };
                if suffix.is_empty() && exp > 0 {
                    // Beyond exa: print with the exa suffix.
                    let mut v = value;
                    for _ in 0..(exp - 18) {
                        v *= 10;
                    }
                    return format!("{v}E");
                }
                format!("{value}{suffix}")
            }
        }
    }
}

impl PartialOrd for Quantity {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.nanos.cmp(&other.nanos))
    }
}

/// Arithmetic as upstream's `Quantity.Add` / `Quantity.Sub`: exact, and
/// the result keeps the receiver's format unless the receiver is zero
/// (then it takes `other`'s). `None` on overflow.
impl Quantity {
    /// `self + other`.
    pub fn checked_add(&self, other: &Quantity) -> Option<Quantity> {
        Some(Quantity {
            nanos: self.nanos.checked_add(other.nanos)?,
            format: if self.nanos == 0 {
                other.format
            } else {
                self.format
            },
        })
    }

    /// `self - other`.
    pub fn checked_sub(&self, other: &Quantity) -> Option<Quantity> {
        Some(Quantity {
            nanos: self.nanos.checked_sub(other.nanos)?,
            format: if self.nanos == 0 {
                other.format
            } else {
                self.format
            },
        })
    }
}

/// The suffix's format, power of ten and power of two.
fn parse_suffix(s: &str) -> Option<(Format, i32, u32)> {
    let decimal = |e: i32| Some((Format::DecimalSi, e, 0));
    let binary = |e: u32| Some((Format::BinarySi, 0, e));
    match s {
        "" => decimal(0),
        "n" => decimal(-9),
        "u" => decimal(-6),
        "m" => decimal(-3),
        "k" => decimal(3),
        "M" => decimal(6),
        "G" => decimal(9),
        "T" => decimal(12),
        "P" => decimal(15),
        "E" => decimal(18),
        "Ki" => binary(10),
        "Mi" => binary(20),
        "Gi" => binary(30),
        "Ti" => binary(40),
        "Pi" => binary(50),
        "Ei" => binary(60),
        _ => {
            let rest = s.strip_prefix('e').or_else(|| s.strip_prefix('E'))?;
            let exp: i32 = rest.parse().ok()?;
            if rest.is_empty() || !(-40..=40).contains(&exp) {
                return None;
            }
            Some((Format::DecimalExponent, exp, 0))
        }
    }
}

/// The canonical text of `s`, or `s` itself when it does not parse.
pub(crate) fn canonical(s: &str) -> String {
    Quantity::parse(s).map_or_else(|| s.to_owned(), |q| q.canonical())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn canonical_forms_match_apimachinery() {
        let cases = [
            ("1", "1"),
            ("1000m", "1"),
            ("0.5", "500m"),
            ("100m", "100m"),
            ("1.5", "1500m"),
            ("2000", "2k"),
            ("1500", "1500"),
            ("128Mi", "128Mi"),
            ("1024Mi", "1Gi"),
            ("1.5Gi", "1536Mi"),
            ("512", "512"),
            ("1Ki", "1Ki"),
            ("0.5Ki", "512"),
            ("1e3", "1e3"),
            ("1E6", "1e6"),
            ("0", "0"),
            ("0Mi", "0"),
            ("-1", "-1"),
            ("0.0001", "100u"),
            ("1G", "1G"),
            ("10G", "10G"),
        ];
        for (input, want) in cases {
            assert_eq!(canonical(input), want, "{input}");
        }
        for bad in ["", "1x", "Mi", "1.2.3", "--1", "1Mi2"] {
            assert!(Quantity::parse(bad).is_none(), "{bad}");
        }
    }

    #[test]
    fn comparisons_are_exact() {
        let q = |s| Quantity::parse(s).unwrap();
        assert!(q("1Gi") > q("1G"));
        assert!(q("500m") < q("1"));
        assert_eq!(q("1000m").partial_cmp(&q("1")), Some(Ordering::Equal));
        assert!(q("1").is_integer() && !q("1500m").is_integer());
        assert!(q("-1m").is_negative());
    }

    #[test]
    fn sums_keep_the_receivers_format() {
        let q = |s| Quantity::parse(s).unwrap();
        let sum = |a, b| q(a).checked_add(&q(b)).unwrap().canonical();
        assert_eq!(sum("32Gi", "32Gi"), "64Gi");
        assert_eq!(sum("4", "500m"), "4500m");
        assert_eq!(sum("0", "1Gi"), "1Gi");
        assert_eq!(q("8").checked_sub(&q("250m")).unwrap().canonical(), "7750m");
        assert_eq!(
            q("1Gi").checked_sub(&q("512Mi")).unwrap().canonical(),
            "512Mi"
        );
    }
}
