//! String formats with upstream's messages
//! (`apimachinery/pkg/util/validation/validation.go`).
//!
//! The one home of these rules in Skein: the admission plugins, the
//! registry's metadata validation and the apiserver's selector parser all
//! use them, so a message cannot differ between the places that print it.
//! Each function returns upstream's error details for its value, empty
//! when the value is valid; lengths are in bytes, as Go's `len`.

/// Upstream `RegexError` examples are joined by `",  or "` (two spaces).
/// Upstream's RFC 1123 label message.
pub const DNS1123_LABEL_MSG: &str = "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')";
/// Upstream's RFC 1123 subdomain message.
pub const DNS1123_SUBDOMAIN_MSG: &str = "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')";
pub(crate) const CONFIG_KEY_MSG: &str = "a valid config key must consist of alphanumeric characters, '-', '_' or '.' (e.g. 'key.name',  or 'KEY_NAME',  or 'key-name', regex used for validation is '[-._a-zA-Z0-9]+')";
/// Upstream's qualified-name (name part) message.
pub const QUALIFIED_NAME_MSG: &str = "name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')";
/// Upstream's label value message.
pub const LABEL_VALUE_MSG: &str = "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')";
pub(crate) const PERCENT_MSG: &str = "a valid percent string must be a numeric string followed by an ending '%' (e.g. '1%',  or '93%', regex used for validation is '[0-9]+%')";
pub(crate) const PORT_RANGE_MSG: &str = "must be between 1 and 65535, inclusive";
pub(crate) const NEGATIVE_MSG: &str = "must be greater than or equal to 0";
pub(crate) const IMMUTABLE_MSG: &str = "field is immutable";

/// `must be no more than N characters` (upstream `MaxLenError`).
pub fn max_len(n: usize) -> String {
    format!("must be no more than {n} characters")
}

fn label_chars(s: &str) -> bool {
    let b = s.as_bytes();
    !b.is_empty()
        && b.iter()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || *c == b'-')
        && b[0] != b'-'
        && b[b.len() - 1] != b'-'
}

fn subdomain_chars(s: &str) -> bool {
    s.split('.').all(label_chars)
}

/// Problems of `s` as an RFC 1123 label (upstream `IsDNS1123Label`).
pub fn dns1123_label(s: &str) -> Vec<String> {
    let mut out = Vec::new();
    if s.len() > 63 {
        out.push(max_len(63));
    }
    if !label_chars(s) {
        if subdomain_chars(s) {
            out.push("must not contain dots".to_owned());
        } else {
            out.push(DNS1123_LABEL_MSG.to_owned());
        }
    }
    out
}

/// Upstream's DNS-1035 label message.
pub const DNS1035_LABEL_MSG: &str = "a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character (e.g. 'my-name',  or 'abc-123', regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?')";

/// Problems of `s` as an RFC 1035 label (upstream `IsDNS1035Label`: a
/// 1123 label that starts with a letter).
pub fn dns1035_label(s: &str) -> Vec<String> {
    let mut out = Vec::new();
    if s.len() > 63 {
        out.push(max_len(63));
    }
    if !(label_chars(s) && s.as_bytes().first().is_some_and(u8::is_ascii_lowercase)) {
        out.push(DNS1035_LABEL_MSG.to_owned());
    }
    out
}

/// Problems of `s` as an RFC 1123 subdomain (upstream `IsDNS1123Subdomain`).
pub fn dns1123_subdomain(s: &str) -> Vec<String> {
    let mut out = Vec::new();
    if s.len() > 253 {
        out.push(max_len(253));
    }
    if !subdomain_chars(s) {
        out.push(DNS1123_SUBDOMAIN_MSG.to_owned());
    }
    out
}

/// Problems of `s` as an IANA service (port) name (upstream `IsValidPortName`).
pub(crate) fn port_name(s: &str) -> Vec<String> {
    let mut out = Vec::new();
    if s.len() > 15 {
        out.push(max_len(15));
    }
    if s.is_empty()
        || !s
            .bytes()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == b'-')
    {
        out.push("must contain only alpha-numeric characters (a-z, 0-9), and hyphens (-)".into());
    }
    if !s.bytes().any(|c| c.is_ascii_lowercase()) {
        out.push("must contain at least one letter (a-z)".into());
    }
    if s.contains("--") {
        out.push("must not contain consecutive hyphens".into());
    }
    if s.starts_with('-') || s.ends_with('-') {
        out.push("must not begin or end with a hyphen".into());
    }
    out
}

/// `true` for 1..=65535.
pub(crate) fn valid_port(n: i64) -> bool {
    (1..=65535).contains(&n)
}

/// Problems of `s` as a ConfigMap/Secret key (upstream `IsConfigMapKey`).
pub(crate) fn config_key(s: &str) -> Vec<String> {
    let mut out = Vec::new();
    if s.len() > 253 {
        out.push(max_len(253));
    }
    if s.is_empty()
        || !s
            .bytes()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, b'-' | b'_' | b'.'))
    {
        out.push(CONFIG_KEY_MSG.to_owned());
    }
    if s == "." {
        out.push("must not be '.'".into());
    } else if s == ".." {
        out.push("must not be '..'".into());
    } else if s.starts_with("..") {
        out.push("must not start with '..'".into());
    }
    out
}

fn qualified_part(s: &str) -> bool {
    let b = s.as_bytes();
    !b.is_empty()
        && b.iter()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, b'-' | b'_' | b'.'))
        && b[0].is_ascii_alphanumeric()
        && b[b.len() - 1].is_ascii_alphanumeric()
}

/// Problems of `s` as a qualified name such as a label key (upstream
/// `IsQualifiedName`).
pub fn qualified_name(s: &str) -> Vec<String> {
    let mut out = Vec::new();
    let parts: Vec<&str> = s.split('/').collect();
    let name = match parts.as_slice() {
        [name] => *name,
        [prefix, name] => {
            if prefix.is_empty() {
                out.push("prefix part must be non-empty".to_owned());
            } else {
                for msg in dns1123_subdomain(prefix) {
                    out.push(format!("prefix part {msg}"));
                }
            }
            name
        }
        _ => {
            out.push(
                "a qualified name must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]') with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')"
                    .to_owned(),
            );
            return out;
        }
    };
    if name.is_empty() {
        out.push("name part must be non-empty".to_owned());
    } else if name.len() > 63 {
        out.push(format!("name part {}", max_len(63)));
    }
    // Upstream also reports the format of an empty name part.
    if !qualified_part(name) {
        out.push(QUALIFIED_NAME_MSG.to_owned());
    }
    out
}

/// Problems of `s` as a label value (upstream `IsValidLabelValue`).
pub fn label_value(s: &str) -> Vec<String> {
    let mut out = Vec::new();
    if s.len() > 63 {
        out.push(max_len(63));
    }
    if !s.is_empty() && !qualified_part(s) {
        out.push(LABEL_VALUE_MSG.to_owned());
    }
    out
}

/// `true` for `[0-9]+%`.
pub(crate) fn is_percent(s: &str) -> bool {
    s.strip_suffix('%')
        .is_some_and(|d| !d.is_empty() && d.bytes().all(|c| c.is_ascii_digit()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats() {
        assert!(dns1123_label("web-1").is_empty());
        assert_eq!(dns1123_label("a.b"), vec!["must not contain dots"]);
        assert_eq!(dns1123_label("Web"), vec![DNS1123_LABEL_MSG]);
        assert!(port_name("http").is_empty());
        assert_eq!(
            port_name("80"),
            vec!["must contain at least one letter (a-z)"]
        );
        assert_eq!(
            port_name("a--b"),
            vec!["must not contain consecutive hyphens"]
        );
        assert!(config_key("key.name").is_empty());
        assert_eq!(config_key("a b"), vec![CONFIG_KEY_MSG]);
        assert_eq!(config_key("..a"), vec!["must not start with '..'"]);
        assert!(qualified_name("app.kubernetes.io/name").is_empty());
        assert_eq!(qualified_name("-x"), vec![QUALIFIED_NAME_MSG]);
        assert_eq!(
            qualified_name("example.com/"),
            vec!["name part must be non-empty", QUALIFIED_NAME_MSG]
        );
        assert!(dns1035_label("web").is_empty());
        assert_eq!(dns1035_label("1web"), vec![DNS1035_LABEL_MSG]);
        assert!(label_value("").is_empty());
        assert!(is_percent("25%") && !is_percent("%") && !is_percent("2.5%"));
    }
}
