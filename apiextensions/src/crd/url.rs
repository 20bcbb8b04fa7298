//! The parts of Go's `net/url.Parse` that webhook URL validation reads
//! (scheme, host, user information, query, fragment) and its error texts.

use skein_admission::quote;

/// A URL as Go's `url.Parse` splits it.
#[derive(Debug, Default, PartialEq, Eq)]
pub(crate) struct GoUrl {
    /// Lower-cased scheme, `""` when none.
    pub scheme: String,
    /// `host[:port]`, `""` when there is no authority.
    pub host: String,
    /// `User.String()` when the authority has user information.
    pub user: Option<String>,
    /// The raw query, without `?`.
    pub raw_query: String,
    /// The unescaped fragment, without `#`.
    pub fragment: String,
}

/// Go's `url.Parse(raw)`; the error is Go's `*url.Error` text
/// (`parse "::": missing protocol scheme`).
pub(crate) fn parse(raw: &str) -> Result<GoUrl, String> {
    parse_inner(raw).map_err(|e| format!("parse {}: {e}", quote(raw)))
}

fn parse_inner(raw: &str) -> Result<GoUrl, String> {
    let (rest, frag) = match raw.split_once('#') {
        Some((r, f)) => (r, Some(f)),
        None => (raw, None),
    };
    if rest.bytes().any(|b| b < 0x20 || b == 0x7f) {
        return Err("net/url: invalid control character in URL".into());
    }
    let mut url = GoUrl::default();
    if rest != "*" {
        let (scheme, mut rest) = scheme(rest)?;
        url.scheme = scheme.to_ascii_lowercase();
        if rest.ends_with('?') && rest.matches('?').count() == 1 {
            rest = &rest[..rest.len() - 1];
        } else if let Some((r, q)) = rest.split_once('?') {
            rest = r;
            url.raw_query = q.to_owned();
        }
        if !rest.starts_with('/') {
            if url.scheme.is_empty() {
                let segment = rest.split('/').next().unwrap_or_default();
                if segment.contains(':') {
                    return Err("first path segment in URL cannot contain colon".into());
                }
            }
            // An opaque URL (`https:host`) has no host.
        } else if rest.starts_with("//") && (!url.scheme.is_empty() || !rest.starts_with("///")) {
            let after = &rest[2..];
            let authority = after.split('/').next().unwrap_or_default();
            let (user, host) = match authority.rfind('@') {
                Some(i) => (Some(&authority[..i]), &authority[i + 1..]),
                None => (None, authority),
            };
            url.host = host_of(host)?;
            if let Some(user) = user {
                if !user.bytes().all(valid_userinfo_byte) {
                    return Err("net/url: invalid userinfo".into());
                }
                unescape(user)?;
                url.user = Some(user.to_owned());
            }
            let path = &after[authority.len()..];
            unescape(path)?;
        } else {
            unescape(rest)?;
        }
    }
    if let Some(frag) = frag {
        url.fragment = unescape(frag)?;
    }
    Ok(url)
}

/// Go's `getScheme`.
fn scheme(raw: &str) -> Result<(&str, &str), String> {
    for (i, c) in raw.bytes().enumerate() {
        match c {
            b'a'..=b'z' | b'A'..=b'Z' => {}
            b'0'..=b'9' | b'+' | b'-' | b'.' => {
                if i == 0 {
                    return Ok(("", raw));
                }
            }
            b':' => {
                if i == 0 {
                    return Err("missing protocol scheme".into());
                }
                return Ok((&raw[..i], &raw[i + 1..]));
            }
            _ => return Ok(("", raw)),
        }
    }
    Ok(("", raw))
}

/// Go's `parseHost`: brackets for IPv6, a numeric optional port, and only
/// the characters a host may hold.
fn host_of(host: &str) -> Result<String, String> {
    if let Some(inner) = host.strip_prefix('[') {
        let Some(end) = inner.find(']') else {
            return Err("missing ']' in host".into());
        };
        let port = &inner[end + 1..];
        if !valid_optional_port(port) {
            return Err(format!("invalid port {} after host", quote(port)));
        }
    } else if let Some(i) = host.rfind(':') {
        let port = &host[i..];
        if !valid_optional_port(port) {
            return Err(format!("invalid port {} after host", quote(port)));
        }
    }
    for c in host.chars() {
        let ok =
            c.is_ascii_alphanumeric() || !c.is_ascii() || "-_.~!$&'()*+,;=:[]<>\"%".contains(c);
        if !ok {
            return Err(format!(
                "invalid character {} in host name",
                quote(&c.to_string())
            ));
        }
    }
    unescape(host)
}

fn valid_optional_port(port: &str) -> bool {
    port.is_empty()
        || port
            .strip_prefix(':')
            .is_some_and(|d| d.bytes().all(|b| b.is_ascii_digit()))
}

fn valid_userinfo_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b"-._:~!$&'()*+,;=%@".contains(&b)
}

/// Percent-decoding with Go's `invalid URL escape "%zz"` error.
fn unescape(s: &str) -> Result<String, String> {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'%' {
            let hex = b
                .get(i + 1..i + 3)
                .filter(|h| h.iter().all(u8::is_ascii_hexdigit));
            let Some(hex) = hex else {
                let end = (i + 3).min(b.len());
                let bad = String::from_utf8_lossy(&b[i..end]);
                return Err(format!("invalid URL escape {}", quote(&bad)));
            };
            let text = std::str::from_utf8(hex).unwrap_or("00");
            out.push(u8::from_str_radix(text, 16).unwrap_or(0));
            i += 3;
        } else {
            out.push(b[i]);
            i += 1;
        }
    }
    Ok(String::from_utf8_lossy(&out).into_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn splits_like_go() {
        let u = parse("https://user@example.com:8443/convert?x=1#frag").unwrap_or_default();
        assert_eq!(u.scheme, "https");
        assert_eq!(u.host, "example.com:8443");
        assert_eq!(u.user.as_deref(), Some("user"));
        assert_eq!(u.raw_query, "x=1");
        assert_eq!(u.fragment, "frag");
        let u = parse("HTTP://h/p").unwrap_or_default();
        assert_eq!((u.scheme.as_str(), u.host.as_str()), ("http", "h"));
        assert_eq!(parse("https:opaque").unwrap_or_default().host, "");
        assert_eq!(parse("example.com/x").unwrap_or_default().scheme, "");
    }

    #[test]
    fn go_errors() {
        assert_eq!(
            parse("::").err().as_deref(),
            Some(r#"parse "::": missing protocol scheme"#)
        );
        assert_eq!(
            parse("https://h:port/").err().as_deref(),
            Some(r#"parse "https://h:port/": invalid port ":port" after host"#)
        );
        assert_eq!(
            parse("https://a b/").err().as_deref(),
            Some(r#"parse "https://a b/": invalid character " " in host name"#)
        );
        assert_eq!(
            parse("https://h/%zz").err().as_deref(),
            Some(r#"parse "https://h/%zz": invalid URL escape "%zz""#)
        );
    }
}
