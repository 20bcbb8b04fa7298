//! `format`: which formats apiextensions validates
//! (`pkg/apiserver/validation/formats.go`, every format introduced by 1.0;
//! any other format, `int32` and `int64` included, is dropped from the
//! schema and checks nothing) and kube-openapi's `strfmt` checks for them.
//!
//! Names compare with dashes removed (`date-time` is `datetime`), as
//! `strfmt`'s name normalizer does.

use std::net::Ipv6Addr;
use std::sync::LazyLock;

use regex::Regex;

/// The formats apiextensions v1.33 keeps (normalized names).
const SUPPORTED: [&str; 24] = [
    "bsonobjectid",
    "uri",
    "email",
    "hostname",
    "ipv4",
    "ipv6",
    "cidr",
    "mac",
    "uuid",
    "uuid3",
    "uuid4",
    "uuid5",
    "isbn",
    "isbn10",
    "isbn13",
    "creditcard",
    "ssn",
    "hexcolor",
    "rgbcolor",
    "byte",
    "password",
    "date",
    "duration",
    "datetime",
];

fn normalize(name: &str) -> std::borrow::Cow<'_, str> {
    if name.contains('-') {
        std::borrow::Cow::Owned(name.replace('-', ""))
    } else {
        std::borrow::Cow::Borrowed(name)
    }
}

/// Whether apiextensions keeps `format` (else it is stripped).
pub(crate) fn supported(format: &str) -> bool {
    let n = normalize(format);
    SUPPORTED.contains(&n.as_ref())
}

fn rx(pattern: &str) -> Option<Regex> {
    Regex::new(pattern).ok()
}

fn matches(re: &LazyLock<Option<Regex>>, s: &str) -> bool {
    re.as_ref().is_some_and(|r| r.is_match(s))
}

static HOSTNAME: LazyLock<Option<Regex>> = LazyLock::new(|| {
    rx(
        r"^([a-zA-Z0-9\p{S}\p{L}]((-?[a-zA-Z0-9\p{S}\p{L}]{0,62})?)|([a-zA-Z0-9\p{S}\p{L}](([a-zA-Z0-9-\p{S}\p{L}]{0,61}[a-zA-Z0-9\p{S}\p{L}])?)(\.)){1,}([a-zA-Z\p{L}]){2,63})$",
    )
});
static UUID: LazyLock<Option<Regex>> =
    LazyLock::new(|| rx(r"(?i)^[0-9a-f]{8}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{12}$"));
static UUID3: LazyLock<Option<Regex>> = LazyLock::new(|| {
    rx(r"(?i)^[0-9a-f]{8}-?[0-9a-f]{4}-?3[0-9a-f]{3}-?[0-9a-f]{4}-?[0-9a-f]{12}$")
});
static UUID4: LazyLock<Option<Regex>> = LazyLock::new(|| {
    rx(r"(?i)^[0-9a-f]{8}-?[0-9a-f]{4}-?4[0-9a-f]{3}-?[89ab][0-9a-f]{3}-?[0-9a-f]{12}$")
});
static UUID5: LazyLock<Option<Regex>> = LazyLock::new(|| {
    rx(r"(?i)^[0-9a-f]{8}-?[0-9a-f]{4}-?5[0-9a-f]{3}-?[89ab][0-9a-f]{3}-?[0-9a-f]{12}$")
});
static BASE64: LazyLock<Option<Regex>> = LazyLock::new(|| {
    rx(r"^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=|[A-Za-z0-9+/]{4})$")
});
static SSN: LazyLock<Option<Regex>> = LazyLock::new(|| rx(r"^[0-9]{3}[- ]?[0-9]{2}[- ]?[0-9]{4}$"));
static HEXCOLOR: LazyLock<Option<Regex>> =
    LazyLock::new(|| rx(r"^#?([0-9a-fA-F]{3}|[0-9a-fA-F]{6})$"));
static RGBCOLOR: LazyLock<Option<Regex>> = LazyLock::new(|| {
    let c = r"[\t\n\f\r ]*(0|[1-9][0-9]?|1[0-9][0-9]?|2[0-4][0-9]|25[0-5])[\t\n\f\r ]*";
    rx(&format!(r"^rgb\({c},{c},{c}\)$"))
});
static DATE_TIME_TAIL: LazyLock<Option<Regex>> = LazyLock::new(|| {
    rx(r"^([0-9]{2}):([0-9]{2}):([0-9]{2})(.[0-9]+)?(z|([+-][0-9]{2}:[0-9]{2}))$")
});
static SCALA_DURATION: LazyLock<Option<Regex>> =
    LazyLock::new(|| rx(r"([0-9]+)[\t\n\f\r ]*([A-Za-zµ]+)"));

/// Whether `s` is valid for `format` (a supported format; unknown formats
/// accept everything).
pub(crate) fn valid(format: &str, s: &str) -> bool {
    match normalize(format).as_ref() {
        "bsonobjectid" => s.len() == 24 && s.bytes().all(|b| b.is_ascii_hexdigit()),
        "uri" => request_uri(s),
        "email" => email(s),
        "hostname" => {
            matches(&HOSTNAME, s) && s.len() <= 255 && s.split('.').all(|p| p.len() <= 63)
        }
        "ipv4" => ipv4(s) || (ipv6(s) && s.contains('.')),
        "ipv6" => (ipv4(s) || ipv6(s)) && s.contains(':'),
        "cidr" => cidr(s),
        "mac" => mac(s),
        "uuid" => matches(&UUID, s),
        "uuid3" => matches(&UUID3, s),
        "uuid4" => matches(&UUID4, s),
        "uuid5" => matches(&UUID5, s),
        "isbn" => isbn10(s) || isbn13(s),
        "isbn10" => isbn10(s),
        "isbn13" => isbn13(s),
        "creditcard" => credit_card(s),
        "ssn" => matches(&SSN, s),
        "hexcolor" => matches(&HEXCOLOR, s),
        "rgbcolor" => matches(&RGBCOLOR, s),
        "byte" => matches(&BASE64, s),
        "date" => date(s),
        "datetime" => date_time(s),
        "duration" => duration(s),
        _ => true,
    }
}

/// Go's `net.ParseIP` for dotted IPv4 (leading zeros tolerated, as
/// `ParseIPSloppy`).
fn ipv4(s: &str) -> bool {
    let parts: Vec<&str> = s.split('.').collect();
    parts.len() == 4
        && parts.iter().all(|p| {
            !p.is_empty()
                && p.len() <= 3
                && p.bytes().all(|b| b.is_ascii_digit())
                && p.parse::<u16>().is_ok_and(|n| n <= 255)
        })
}

fn ipv6(s: &str) -> bool {
    s.parse::<Ipv6Addr>().is_ok()
}

fn cidr(s: &str) -> bool {
    let Some((ip, bits)) = s.split_once('/') else {
        return false;
    };
    let max = if ipv4(ip) {
        32
    } else if ipv6(ip) {
        128
    } else {
        return false;
    };
    !bits.is_empty()
        && bits.len() <= 3
        && bits.bytes().all(|b| b.is_ascii_digit())
        && bits.parse::<u32>().is_ok_and(|n| n <= max)
}

/// Go's `net.ParseMAC`: 6, 8 or 20 octets as `xx:xx..`, `xx-xx..` or
/// `xxxx.xxxx..`.
fn mac(s: &str) -> bool {
    let hex = |p: &str, n: usize| p.len() == n && p.bytes().all(|b| b.is_ascii_hexdigit());
    let octets_ok = |n: usize| n == 6 || n == 8 || n == 20;
    if s.len() >= 14 && s.as_bytes().get(4) == Some(&b'.') {
        let parts: Vec<&str> = s.split('.').collect();
        return octets_ok(parts.len() * 2) && parts.iter().all(|p| hex(p, 4));
    }
    for sep in [':', '-'] {
        if s.as_bytes().get(2) == Some(&(sep as u8)) {
            let parts: Vec<&str> = s.split(sep).collect();
            return octets_ok(parts.len()) && parts.iter().all(|p| hex(p, 2));
        }
    }
    false
}

fn isbn10(s: &str) -> bool {
    let clean: Vec<u8> = s.bytes().filter(|b| *b != b' ' && *b != b'-').collect();
    if clean.len() != 10 {
        return false;
    }
    let mut sum = 0u32;
    for (i, b) in clean.iter().enumerate() {
        let v = match b {
            b'0'..=b'9' => u32::from(b - b'0'),
            b'X' if i == 9 => 10,
            _ => return false,
        };
        sum += (10 - i as u32) * v;
    }
    sum.is_multiple_of(11)
}

fn isbn13(s: &str) -> bool {
    let clean: Vec<u8> = s.bytes().filter(|b| *b != b' ' && *b != b'-').collect();
    if clean.len() != 13 || !clean.iter().all(u8::is_ascii_digit) {
        return false;
    }
    let sum: u32 = clean[..12]
        .iter()
        .enumerate()
        .map(|(i, b)| u32::from(b - b'0') * if i % 2 == 0 { 1 } else { 3 })
        .sum();
    (10 - sum % 10) % 10 == u32::from(clean[12] - b'0')
}

/// govalidator's `IsCreditCard`: the digits (other characters removed)
/// match a card number shape and pass the Luhn check.
fn credit_card(s: &str) -> bool {
    static CARD: LazyLock<Option<Regex>> = LazyLock::new(|| {
        rx(
            r"^(?:4[0-9]{12}(?:[0-9]{3})?|5[1-5][0-9]{14}|(222[1-9]|22[3-9][0-9]|2[3-6][0-9]{2}|27[01][0-9]|2720)[0-9]{12}|6(?:011|5[0-9][0-9])[0-9]{12}|3[47][0-9]{13}|3(?:0[0-5]|[68][0-9])[0-9]{11}|(?:2131|1800|35[0-9]{3})[0-9]{11}|6[27][0-9]{14})$",
        )
    });
    let digits: String = s.chars().filter(char::is_ascii_digit).collect();
    if !matches(&CARD, &digits) {
        return false;
    }
    let mut sum = 0u32;
    for (i, b) in digits.bytes().rev().enumerate() {
        let mut d = u32::from(b - b'0');
        if i % 2 == 1 {
            d *= 2;
            if d > 9 {
                d -= 9;
            }
        }
        sum += d;
    }
    sum.is_multiple_of(10)
}

/// Go's `time.Parse("2006-01-02", s)`.
fn date(s: &str) -> bool {
    let b = s.as_bytes();
    if b.len() != 10 || b[4] != b'-' || b[7] != b'-' {
        return false;
    }
    let num = |r: std::ops::Range<usize>| -> Option<u32> {
        let part = s.get(r)?;
        part.bytes()
            .all(|c| c.is_ascii_digit())
            .then(|| part.parse().ok())
            .flatten()
    };
    let (Some(y), Some(m), Some(d)) = (num(0..4), num(5..7), num(8..10)) else {
        return false;
    };
    let leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
    let days = match m {
        1 | 3 | 5 | 7 | 8 | 10 | 12 => 31,
        4 | 6 | 9 | 11 => 30,
        2 if leap => 29,
        2 => 28,
        _ => return false,
    };
    (1..=days).contains(&d)
}

/// strfmt's `IsDateTime`: a date, a `t`, a time with zone (case-insensitive).
fn date_time(s: &str) -> bool {
    if s.len() < 4 {
        return false;
    }
    let lower = s.to_lowercase();
    let parts: Vec<&str> = lower.split('t').collect();
    if parts.len() < 2 || !date(parts[0]) {
        return false;
    }
    let Some(re) = DATE_TIME_TAIL.as_ref() else {
        return false;
    };
    let Some(caps) = re.captures(parts[1]) else {
        return false;
    };
    let get = |i: usize| caps.get(i).map_or("", |m| m.as_str());
    get(1) <= "23" && get(2) <= "59" && get(3) <= "59"
}

/// strfmt's `ParseDuration`: Go's `time.ParseDuration`, else any
/// `<digits><unit>` run with a known (Scala-style) unit.
fn duration(s: &str) -> bool {
    if go_duration(s) {
        return true;
    }
    let Some(re) = SCALA_DURATION.as_ref() else {
        return false;
    };
    const UNITS: [&[&str]; 8] = [
        &["ns", "nano"],
        &["us", "µs", "micro"],
        &["ms", "milli"],
        &["s", "sec"],
        &["m", "min"],
        &["h", "hr", "hour"],
        &["d", "day"],
        &["w", "wk", "week"],
    ];
    let mut ok = false;
    for caps in re.captures_iter(s) {
        let digits = caps.get(1).map_or("", |m| m.as_str());
        if digits.parse::<i64>().is_err() {
            return false;
        }
        let unit = caps.get(2).map_or("", |m| m.as_str()).to_lowercase();
        for variants in UNITS {
            let last = variants.len() - 1;
            for (i, v) in variants.iter().enumerate() {
                if (i == last && unit.starts_with(v)) || unit.eq_ignore_ascii_case(v) {
                    ok = true;
                }
            }
        }
    }
    ok
}

/// Go's `time.ParseDuration` syntax: `[-+]?` then `number unit` runs, or
/// `0`.
fn go_duration(s: &str) -> bool {
    let s = s.strip_prefix(['-', '+']).unwrap_or(s);
    if s == "0" {
        return true;
    }
    if s.is_empty() {
        return false;
    }
    let mut rest = s;
    while !rest.is_empty() {
        let int_len = rest.bytes().take_while(u8::is_ascii_digit).count();
        let mut frac_len = 0;
        let mut after = &rest[int_len..];
        if let Some(f) = after.strip_prefix('.') {
            frac_len = f.bytes().take_while(u8::is_ascii_digit).count();
            after = &f[frac_len..];
        }
        if int_len == 0 && frac_len == 0 {
            return false;
        }
        let unit = ["ns", "us", "µs", "μs", "ms", "s", "m", "h"]
            .iter()
            .filter(|u| after.starts_with(*u))
            .max_by_key(|u| u.len());
        let Some(unit) = unit else {
            return false;
        };
        rest = &after[unit.len()..];
    }
    true
}

/// Go's `net/url.ParseRequestURI`, as far as whether it fails: no control
/// bytes; `*`, an absolute path, or `scheme:/...` with a valid authority;
/// valid `%` escapes.
fn request_uri(s: &str) -> bool {
    if s.is_empty() || s.bytes().any(|b| b < 0x20 || b == 0x7f) {
        return false;
    }
    if s == "*" {
        return true;
    }
    let (without_query, _) = s.split_once('?').unwrap_or((s, ""));
    let mut rest = without_query;
    let mut scheme = "";
    for (i, c) in without_query.char_indices() {
        match c {
            'a'..='z' | 'A'..='Z' => {}
            '0'..='9' | '+' | '-' | '.' if i > 0 => {}
            ':' if i == 0 => return false,
            ':' => {
                scheme = &without_query[..i];
                rest = &without_query[i + 1..];
                break;
            }
            _ => break,
        }
    }
    if !rest.starts_with('/') {
        return false;
    }
    if !scheme.is_empty()
        && let Some(after) = rest.strip_prefix("//")
    {
        let (authority, path) = after.find('/').map_or((after, ""), |i| after.split_at(i));
        let host = authority.rsplit_once('@').map_or(authority, |(_, h)| h);
        if !host_ok(host) {
            return false;
        }
        return escapes_ok(path);
    }
    escapes_ok(rest)
}

fn host_ok(host: &str) -> bool {
    let port_ok = |p: &str| p.bytes().all(|b| b.is_ascii_digit());
    if let Some(inner) = host.strip_prefix('[') {
        let Some((addr, tail)) = inner.split_once(']') else {
            return false;
        };
        let addr = addr.split_once("%25").map_or(addr, |(a, _)| a);
        return ipv6(addr) && (tail.is_empty() || tail.strip_prefix(':').is_some_and(port_ok));
    }
    let name = match host.rsplit_once(':') {
        Some((name, port)) if port_ok(port) => name,
        Some(_) => return false,
        None => host,
    };
    // `net/url`'s `shouldEscape` in host mode: what a host may contain.
    escapes_ok(name)
        && name.bytes().all(|b| {
            b >= 0x80 || b.is_ascii_alphanumeric() || b"-_.~$&'()*+,;=:[]<>\"%".contains(&b)
        })
}

fn escapes_ok(s: &str) -> bool {
    let b = s.as_bytes();
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'%' {
            let ok = b.get(i + 1).is_some_and(u8::is_ascii_hexdigit)
                && b.get(i + 2).is_some_and(u8::is_ascii_hexdigit);
            if !ok {
                return false;
            }
            i += 3;
        } else {
            i += 1;
        }
    }
    true
}

/// Go's `net/mail.ParseAddress` for the common shapes: `local@domain` or
/// `Display Name <local@domain>`, dot-atom or quoted local part, dot-atom
/// or `[literal]` domain.
fn email(s: &str) -> bool {
    let s = s.trim();
    let addr = match (s.rfind('<'), s.ends_with('>')) {
        (Some(i), true) => &s[i + 1..s.len() - 1],
        (None, false) => s,
        _ => return false,
    };
    let Some((local, domain)) = addr.rsplit_once('@') else {
        return false;
    };
    let atext =
        |c: char| c.is_ascii_alphanumeric() || "!#$%&'*+-/=?^_`{|}~".contains(c) || !c.is_ascii();
    let dot_atom =
        |p: &str| !p.is_empty() && p.split('.').all(|a| !a.is_empty() && a.chars().all(atext));
    let local_ok =
        dot_atom(local) || (local.len() >= 2 && local.starts_with('"') && local.ends_with('"'));
    let domain_ok =
        dot_atom(domain) || (domain.starts_with('[') && domain.ends_with(']') && domain.len() > 2);
    local_ok && domain_ok
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn supported_formats_follow_formats_go() {
        for f in [
            "date-time",
            "datetime",
            "uuid",
            "byte",
            "duration",
            "cidr",
            "email",
        ] {
            assert!(supported(f), "{f}");
        }
        for f in ["int32", "int64", "float", "double", "url", "", "quantity"] {
            assert!(!supported(f), "{f}");
        }
    }

    #[test]
    fn format_checks() {
        let cases: &[(&str, &str, bool)] = &[
            ("uuid", "123e4567-e89b-12d3-a456-426614174000", true),
            ("uuid", "123e4567e89b12d3a456426614174000", true),
            ("uuid", "nope", false),
            ("uuid4", "123e4567-e89b-42d3-a456-426614174000", true),
            ("ipv4", "10.0.0.1", true),
            ("ipv4", "010.0.0.1", true),
            ("ipv4", "10.0.0.256", false),
            ("ipv4", "::1", false),
            ("ipv6", "::1", true),
            ("ipv6", "10.0.0.1", false),
            ("cidr", "10.0.0.0/8", true),
            ("cidr", "10.0.0.0/33", false),
            ("cidr", "fd00::/64", true),
            ("mac", "01:23:45:67:89:ab", true),
            ("mac", "0123.4567.89ab", true),
            ("mac", "01:23:45", false),
            ("date", "2024-02-29", true),
            ("date", "2023-02-29", false),
            ("date-time", "2024-01-02T03:04:05Z", true),
            ("date-time", "2024-01-02T03:04:05.123+01:00", true),
            ("date-time", "2024-01-02 03:04:05Z", false),
            ("date-time", "2024-01-02T24:04:05Z", false),
            ("duration", "1h30m", true),
            ("duration", "3 days", true),
            ("duration", "-1.5s", true),
            ("duration", "soon", false),
            ("byte", "aGVsbG8=", true),
            ("byte", "aGVsbG8", false),
            ("hostname", "example.com", true),
            ("hostname", "-bad", false),
            ("email", "a@example.com", true),
            ("email", "Ann <a@example.com>", true),
            ("email", "not-an-email", false),
            ("uri", "https://example.com/a?b=c", true),
            ("uri", "/relative/path", true),
            ("uri", "example.com", false),
            ("uri", "http://exa mple.com/", false),
            ("uri", "http://exa{mple}.com/", false),
            ("uri", "http://example.com:8080/x", true),
            ("uri", "http://example.com:80a/x", false),
            ("uri", "http://[::1]:80/x", true),
            ("uri", "/a b%zz", false),
            ("hexcolor", "#ffF", true),
            ("rgbcolor", "rgb(255, 0, 10)", true),
            ("rgbcolor", "rgb(256,0,0)", false),
            ("isbn10", "0321751043", true),
            ("isbn13", "978-0321751041", true),
            ("creditcard", "4111 1111 1111 1111", true),
            ("creditcard", "4111 1111 1111 1112", false),
            ("ssn", "123-45-6789", true),
            ("bsonobjectid", "507f1f77bcf86cd799439011", true),
            ("password", "anything", true),
        ];
        for (format, value, want) in cases {
            assert_eq!(valid(format, value), *want, "{format} {value:?}");
        }
    }
}
