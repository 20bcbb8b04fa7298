//! The Kubernetes URLs library: `url(s)` (an absolute URI or an absolute
//! path, as Go's `url.ParseRequestURI`), `isURL(s)`, and on a URL
//! `getScheme()`, `getHost()`, `getHostname()`, `getPort()`,
//! `getEscapedPath()`, `getQuery()`.

use std::collections::HashMap;
use std::sync::Arc;

use cel::common::types::{STRING_TYPE, Type};
use cel::common::value::CowVal;
use cel::objects::{Key, Map, Opaque};
use cel::{DeclarationError, Env, Value};

use super::{Ret, boolean, fail, opaque, opaque_arg, str_arg, string, value};

/// The opaque type's name.
const TYPE_NAME: &str = "kubernetes.URL";

/// A parsed URL.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Url {
    scheme: String,
    host: String,
    path: String,
    query: String,
}

impl Opaque for Url {
    fn runtime_type_name(&self) -> &str {
        TYPE_NAME
    }
}

impl Url {
    /// Go's `url.ParseRequestURI`, or its error text.
    pub(crate) fn parse(raw: &str) -> Result<Self, String> {
        let err = |what: &str| format!("parse {}: {what}", skein_admission::quote(raw));
        if raw.is_empty() {
            return Err(err("empty url"));
        }
        if raw.bytes().any(|b| b < 0x20 || b == 0x7f) {
            return Err(err("net/url: invalid control character in URL"));
        }
        let (scheme, rest) = split_scheme(raw).map_err(&err)?;
        let (rest, query) = match rest.split_once('?') {
            Some((r, q)) => (r, q.to_owned()),
            None => (rest, String::new()),
        };
        if !rest.starts_with('/') {
            return Err(err("invalid URI for request"));
        }
        let (host, path) = if !scheme.is_empty() && rest.starts_with("//") {
            let after = &rest[2..];
            let end = after.find('/').unwrap_or(after.len());
            let authority = &after[..end];
            let host = authority.rsplit_once('@').map_or(authority, |(_, h)| h);
            if let Some((_, port)) = host.rsplit_once(':')
                && !host.ends_with(']')
                && !port.bytes().all(|b| b.is_ascii_digit())
            {
                return Err(err(&format!(
                    "invalid port {} after host",
                    skein_admission::quote(&format!(":{port}"))
                )));
            }
            (host.to_owned(), after[end..].to_owned())
        } else {
            (String::new(), rest.to_owned())
        };
        Ok(Self {
            scheme: scheme.to_owned(),
            host,
            path,
            query,
        })
    }

    fn hostname(&self) -> &str {
        let host = &self.host;
        if let Some(rest) = host.strip_prefix('[') {
            return rest.split(']').next().unwrap_or("");
        }
        host.rsplit_once(':').map_or(host.as_str(), |(h, _)| h)
    }

    fn port(&self) -> &str {
        let host = &self.host;
        let tail = match host.rfind(']') {
            Some(i) => &host[i + 1..],
            None => host.as_str(),
        };
        tail.rsplit_once(':').map_or("", |(_, p)| p)
    }
}

/// Go's `getScheme`: the scheme and the rest, or an error.
fn split_scheme(raw: &str) -> Result<(&str, &str), &'static str> {
    for (i, c) in raw.char_indices() {
        match c {
            'a'..='z' | 'A'..='Z' => {}
            '0'..='9' | '+' | '-' | '.' if i > 0 => {}
            ':' if i == 0 => return Err("missing protocol scheme"),
            ':' => return Ok((&raw[..i], &raw[i + 1..])),
            _ => return Ok(("", raw)),
        }
    }
    Ok(("", raw))
}

fn url_type() -> Type {
    Type::new_opaque_type(TYPE_NAME)
}

pub(crate) fn register(env: &mut Env) -> Result<(), DeclarationError> {
    let u = url_type;
    env.add_overload("url", "string_to_url", vec![STRING_TYPE], to_url)?;
    env.add_overload("isURL", "is_url_string", vec![STRING_TYPE], is_url)?;
    env.add_member_overload("getScheme", "url_get_scheme", u(), vec![], scheme)?;
    env.add_member_overload("getHost", "url_get_host", u(), vec![], host)?;
    env.add_member_overload("getHostname", "url_get_hostname", u(), vec![], hostname)?;
    env.add_member_overload("getPort", "url_get_port", u(), vec![], port)?;
    env.add_member_overload("getEscapedPath", "url_get_escaped_path", u(), vec![], path)?;
    env.add_member_overload("getQuery", "url_get_query", u(), vec![], query)?;
    Ok(())
}

fn to_url<'b, 'v>(args: Vec<CowVal<'b, 'v>>) -> Ret<'b, 'v> {
    match Url::parse(str_arg(&args, 0)?) {
        Ok(u) => opaque(u),
        Err(e) => Err(fail(
            "url",
            format!("URL parse error during conversion from string: {e}"),
        )),
    }
}

fn is_url<'b, 'v>(args: Vec<CowVal<'b, 'v>>) -> Ret<'b, 'v> {
    boolean(Url::parse(str_arg(&args, 0)?).is_ok())
}

fn this(args: &[CowVal<'_, '_>]) -> Result<Url, cel::ExecutionError> {
    opaque_arg::<Url>(args, 0)
}

fn scheme<'b, 'v>(args: Vec<CowVal<'b, 'v>>) -> Ret<'b, 'v> {
    string(this(&args)?.scheme)
}

fn host<'b, 'v>(args: Vec<CowVal<'b, 'v>>) -> Ret<'b, 'v> {
    string(this(&args)?.host)
}

fn hostname<'b, 'v>(args: Vec<CowVal<'b, 'v>>) -> Ret<'b, 'v> {
    string(this(&args)?.hostname().to_owned())
}

fn port<'b, 'v>(args: Vec<CowVal<'b, 'v>>) -> Ret<'b, 'v> {
    string(this(&args)?.port().to_owned())
}

fn path<'b, 'v>(args: Vec<CowVal<'b, 'v>>) -> Ret<'b, 'v> {
    string(this(&args)?.path)
}

fn query<'b, 'v>(args: Vec<CowVal<'b, 'v>>) -> Ret<'b, 'v> {
    let url = this(&args)?;
    let mut out: HashMap<String, Vec<Value>> = HashMap::new();
    for pair in url.query.split('&').filter(|p| !p.is_empty()) {
        let (k, v) = pair.split_once('=').unwrap_or((pair, ""));
        let (Some(k), Some(v)) = (unescape(k), unescape(v)) else {
            continue;
        };
        out.entry(k).or_default().push(Value::String(Arc::new(v)));
    }
    let map: HashMap<Key, Value> = out
        .into_iter()
        .map(|(k, v)| (Key::String(Arc::new(k)), Value::List(Arc::new(v))))
        .collect();
    value(Value::Map(Map { map: Arc::new(map) }))
}

/// Query unescaping (`+` is a space, `%XX` a byte).
fn unescape(s: &str) -> Option<String> {
    let mut bytes = Vec::with_capacity(s.len());
    let raw = s.as_bytes();
    let mut i = 0;
    while i < raw.len() {
        match raw[i] {
            b'+' => bytes.push(b' '),
            b'%' => {
                let hex = s.get(i + 1..i + 3)?;
                bytes.push(u8::from_str_radix(hex, 16).ok()?);
                i += 2;
            }
            b => bytes.push(b),
        }
        i += 1;
    }
    String::from_utf8(bytes).ok()
}

#[cfg(test)]
mod tests {
    use super::Url;

    #[test]
    fn parses_as_go_parse_request_uri() {
        let u = Url::parse("https://user@example.com:8080/a/b?x=1&x=2").unwrap();
        assert_eq!(
            (u.scheme.as_str(), u.host.as_str()),
            ("https", "example.com:8080")
        );
        assert_eq!(
            (u.hostname(), u.port(), u.path.as_str()),
            ("example.com", "8080", "/a/b")
        );
        let v6 = Url::parse("https://[::1]:80/").unwrap();
        assert_eq!((v6.hostname(), v6.port()), ("::1", "80"));
        assert!(Url::parse("/absolute/path").is_ok());
        assert!(Url::parse("relative").is_err());
        assert!(Url::parse("").is_err());
        assert!(Url::parse(":x").is_err());
    }
}
