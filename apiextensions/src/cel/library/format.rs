//! The `format` library (`format.dns1123Label().validate(s)`, ...) and
//! base64 for schema format `byte`.

/// Standard base64 (with padding, as Go's `strfmt.Base64`), or `None`.
pub(crate) fn base64_decode(s: &str) -> Option<Vec<u8>> {
    let bytes = s.as_bytes();
    if !bytes.len().is_multiple_of(4) {
        return None;
    }
    let mut out = Vec::with_capacity(bytes.len() / 4 * 3);
    for chunk in bytes.chunks(4) {
        let mut n: u32 = 0;
        let mut pad = 0;
        for (i, &c) in chunk.iter().enumerate() {
            let v = match c {
                b'A'..=b'Z' => c - b'A',
                b'a'..=b'z' => c - b'a' + 26,
                b'0'..=b'9' => c - b'0' + 52,
                b'+' => 62,
                b'/' => 63,
                b'=' if i >= 2 => {
                    pad += 1;
                    0
                }
                _ => return None,
            };
            if pad > 0 && c != b'=' {
                return None;
            }
            n = (n << 6) | u32::from(v);
        }
        let [_, a, b, c] = n.to_be_bytes();
        out.push(a);
        if pad < 2 {
            out.push(b);
        }
        if pad < 1 {
            out.push(c);
        }
    }
    Some(out)
}

use cel::common::types::{STRING_TYPE, Type};
use cel::common::value::CowVal;
use cel::objects::Opaque;
use cel::{DeclarationError, Env, Value};
use skein_admission::names;

use super::{Ret, opaque, opaque_arg, optional, str_arg};

/// The opaque type's name.
const TYPE_NAME: &str = "kubernetes.NamedFormat";

/// The named formats of upstream's library.
const NAMES: [&str; 13] = [
    "dns1123Label",
    "dns1123Subdomain",
    "dns1035Label",
    "qualifiedName",
    "dns1123LabelPrefix",
    "dns1123SubdomainPrefix",
    "dns1035LabelPrefix",
    "labelValue",
    "uri",
    "uuid",
    "byte",
    "date",
    "datetime",
];

/// One named format.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Format(&'static str);

impl Opaque for Format {
    fn runtime_type_name(&self) -> &str {
        TYPE_NAME
    }
}

impl Format {
    /// The problems of `s` in this format (empty when valid).
    fn validate(self, s: &str) -> Vec<String> {
        match self.0 {
            "dns1123Label" => names::dns1123_label(s),
            "dns1123Subdomain" => names::dns1123_subdomain(s),
            "dns1035Label" => names::dns1035_label(s),
            "qualifiedName" => names::qualified_name(s),
            "dns1123LabelPrefix" => names::dns1123_label(&mask_trailing_dash(s)),
            "dns1123SubdomainPrefix" => names::dns1123_subdomain(&mask_trailing_dash(s)),
            "dns1035LabelPrefix" => names::dns1035_label(&mask_trailing_dash(s)),
            "labelValue" => names::label_value(s),
            "uri" => match super::urls::Url::parse(s) {
                Ok(_) => Vec::new(),
                Err(e) => vec![e],
            },
            "uuid" => {
                if is_uuid(s) {
                    Vec::new()
                } else {
                    vec!["does not match the UUID format".to_owned()]
                }
            }
            "byte" => match base64_decode(s) {
                Some(_) => Vec::new(),
                None => vec!["invalid base64".to_owned()],
            },
            "date" => match chrono::NaiveDate::parse_from_str(s, "%Y-%m-%d") {
                Ok(_) => Vec::new(),
                Err(_) => vec!["invalid date".to_owned()],
            },
            _ => match chrono::DateTime::parse_from_rfc3339(s) {
                Ok(_) => Vec::new(),
                Err(_) => vec!["invalid datetime".to_owned()],
            },
        }
    }
}

/// Upstream's `maskTrailingDash` for name prefixes (`generateName`).
fn mask_trailing_dash(s: &str) -> String {
    if s.len() > 1
        && s.ends_with('-')
        && let Some(head) = s.get(..s.len() - 2)
    {
        return format!("{head}a");
    }
    s.to_owned()
}

fn is_uuid(s: &str) -> bool {
    let b = s.as_bytes();
    b.len() == 36
        && b.iter().enumerate().all(|(i, c)| match i {
            8 | 13 | 18 | 23 => *c == b'-',
            _ => c.is_ascii_hexdigit(),
        })
}

fn format_type() -> Type {
    Type::new_opaque_type(TYPE_NAME)
}

macro_rules! named {
    ($($f:ident = $name:literal),* $(,)?) => {
        $(
            fn $f<'b, 'v>(_args: Vec<CowVal<'b, 'v>>) -> Ret<'b, 'v> {
                opaque(Format($name))
            }
        )*
        fn register_named(env: &mut Env) -> Result<(), DeclarationError> {
            $( env.add_overload(concat!("format.", $name), concat!("format.", $name), vec![], $f)?; )*
            Ok(())
        }
    };
}

named!(
    dns1123_label = "dns1123Label",
    dns1123_subdomain = "dns1123Subdomain",
    dns1035_label = "dns1035Label",
    qualified_name = "qualifiedName",
    dns1123_label_prefix = "dns1123LabelPrefix",
    dns1123_subdomain_prefix = "dns1123SubdomainPrefix",
    dns1035_label_prefix = "dns1035LabelPrefix",
    label_value = "labelValue",
    uri = "uri",
    uuid = "uuid",
    byte = "byte",
    date = "date",
    datetime = "datetime",
);

pub(crate) fn register(env: &mut Env) -> Result<(), DeclarationError> {
    register_named(env)?;
    env.add_overload("format.named", "format-named", vec![STRING_TYPE], named)?;
    env.add_member_overload(
        "validate",
        "format-validate",
        format_type(),
        vec![STRING_TYPE],
        validate,
    )?;
    Ok(())
}

fn named<'b, 'v>(args: Vec<CowVal<'b, 'v>>) -> Ret<'b, 'v> {
    let name = str_arg(&args, 0)?;
    match NAMES.iter().find(|n| **n == name) {
        Some(n) => optional(Some(Value::Opaque(std::sync::Arc::new(Format(n))))),
        None => optional(None),
    }
}

fn validate<'b, 'v>(args: Vec<CowVal<'b, 'v>>) -> Ret<'b, 'v> {
    let format = opaque_arg::<Format>(&args, 0)?;
    let problems = format.validate(str_arg(&args, 1)?);
    if problems.is_empty() {
        optional(None)
    } else {
        let list = problems
            .into_iter()
            .map(|p| Value::String(std::sync::Arc::new(p)))
            .collect();
        optional(Some(Value::List(std::sync::Arc::new(list))))
    }
}
