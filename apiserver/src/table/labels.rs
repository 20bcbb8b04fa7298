//! Label maps and label selectors rendered the way apimachinery renders
//! them (`labels.FormatLabels`, `metav1.FormatLabelSelector`,
//! `LabelSelectorAsSelector(..).String()`).
//!
//! Contract: a label map prints as `k=v` pairs sorted by the whole pair,
//! comma-joined, `<none>` when empty. A selector prints its requirements
//! sorted by key (`a=b,c in (x,y),!d,e`), values of `in`/`notin` sorted.
//! A selector upstream could not build (bad operator, key or value) is an
//! error, which callers print as `<error>` or `<invalid>`.

use serde_json::Value;

use super::fields;

/// `labels.FormatLabels`: `a=1,b=2`, or `<none>` for an empty/absent map.
pub(crate) fn format_labels(map: Option<&Value>) -> String {
    let mut pairs: Vec<String> = map
        .and_then(Value::as_object)
        .map(|m| {
            m.iter()
                .map(|(k, v)| format!("{k}={}", v.as_str().unwrap_or("")))
                .collect()
        })
        .unwrap_or_default();
    pairs.sort();
    if pairs.is_empty() {
        "<none>".to_owned()
    } else {
        pairs.join(",")
    }
}

/// `metav1.FormatLabelSelector`: the selector string, `<none>` when it is
/// empty or absent, `<error>` when upstream could not parse it.
pub(crate) fn format_label_selector(selector: Option<&Value>) -> String {
    match selector_string(selector) {
        Ok(s) if s.is_empty() => "<none>".to_owned(),
        Ok(s) => s,
        Err(InvalidSelector) => "<error>".to_owned(),
    }
}

/// A selector upstream's `LabelSelectorAsSelector` rejects.
#[derive(Debug, PartialEq, Eq)]
pub(crate) struct InvalidSelector;

/// `LabelSelectorAsSelector(sel).String()`: `""` for an absent or empty
/// selector.
pub(crate) fn selector_string(selector: Option<&Value>) -> Result<String, InvalidSelector> {
    let Some(sel) = selector else {
        return Ok(String::new());
    };
    let mut reqs: Vec<(String, String)> = Vec::new();
    if let Some(labels) = fields::at(sel, &["matchLabels"]).and_then(Value::as_object) {
        for (key, value) in labels {
            let value = value.as_str().unwrap_or("");
            validate_key(key)?;
            validate_value(value)?;
            reqs.push((key.clone(), format!("{key}={value}")));
        }
    }
    for expr in fields::items_at(sel, &["matchExpressions"]) {
        let key = fields::str_at(expr, &["key"]);
        let values: Vec<&str> = fields::items_at(expr, &["values"])
            .iter()
            .map(|v| v.as_str().unwrap_or(""))
            .collect();
        validate_key(key)?;
        for value in &values {
            validate_value(value)?;
        }
        let text = match fields::str_at(expr, &["operator"]) {
            op @ ("In" | "NotIn") => {
                if values.is_empty() {
                    return Err(InvalidSelector);
                }
                let word = if op == "In" { "in" } else { "notin" };
                let mut sorted = values;
                sorted.sort_unstable();
                format!("{key} {word} ({})", sorted.join(","))
            }
            "Exists" if values.is_empty() => key.to_owned(),
            "DoesNotExist" if values.is_empty() => format!("!{key}"),
            _ => return Err(InvalidSelector),
        };
        reqs.push((key.to_owned(), text));
    }
    // Upstream sorts requirements by key (label requirements first on ties).
    reqs.sort_by(|a, b| a.0.cmp(&b.0));
    Ok(reqs
        .into_iter()
        .map(|(_, t)| t)
        .collect::<Vec<_>>()
        .join(","))
}

/// `validation.IsQualifiedName`: `[prefix/]name`, prefix a DNS-1123
/// subdomain, name ≤ 63 alphanumerics with `-_.` inside.
fn validate_key(key: &str) -> Result<(), InvalidSelector> {
    let (prefix, name) = match key.split_once('/') {
        None => (None, key),
        Some((p, n)) if !n.contains('/') => (Some(p), n),
        Some(_) => return Err(InvalidSelector),
    };
    if let Some(prefix) = prefix
        && !is_dns1123_subdomain(prefix)
    {
        return Err(InvalidSelector);
    }
    if name.is_empty() || name.len() > 63 || !is_label_token(name) {
        return Err(InvalidSelector);
    }
    Ok(())
}

/// `validation.IsValidLabelValue`: empty, or a ≤ 63 character token.
fn validate_value(value: &str) -> Result<(), InvalidSelector> {
    if value.is_empty() || (value.len() <= 63 && is_label_token(value)) {
        Ok(())
    } else {
        Err(InvalidSelector)
    }
}

/// `([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]`.
fn is_label_token(s: &str) -> bool {
    let b = s.as_bytes();
    let (Some(first), Some(last)) = (b.first(), b.last()) else {
        return false;
    };
    first.is_ascii_alphanumeric()
        && last.is_ascii_alphanumeric()
        && b.iter()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, b'-' | b'_' | b'.'))
}

/// `validation.IsDNS1123Subdomain`.
fn is_dns1123_subdomain(s: &str) -> bool {
    s.len() <= 253
        && s.split('.').all(|label| {
            let b = label.as_bytes();
            let alnum = |c: &u8| c.is_ascii_lowercase() || c.is_ascii_digit();
            match (b.first(), b.last()) {
                (Some(f), Some(l)) => {
                    alnum(f) && alnum(l) && b.iter().all(|c| alnum(c) || *c == b'-')
                }
                _ => false,
            }
        })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn label_maps_sort_by_pair() {
        assert_eq!(format_labels(None), "<none>");
        assert_eq!(format_labels(Some(&json!({}))), "<none>");
        assert_eq!(
            format_labels(Some(&json!({"b": "2", "a": "1", "a.b": "x"}))),
            "a.b=x,a=1,b=2"
        );
    }

    #[test]
    fn selectors_render_like_apimachinery() {
        assert_eq!(format_label_selector(None), "<none>");
        assert_eq!(format_label_selector(Some(&json!({}))), "<none>");
        assert_eq!(selector_string(None), Ok(String::new()));
        let sel = json!({
            "matchLabels": {"app": "web", "tier": "fe"},
            "matchExpressions": [
                {"key": "env", "operator": "In", "values": ["prod", "dev"]},
                {"key": "zone", "operator": "NotIn", "values": ["b"]},
                {"key": "canary", "operator": "DoesNotExist"},
                {"key": "gpu", "operator": "Exists"},
            ]
        });
        assert_eq!(
            format_label_selector(Some(&sel)),
            "app=web,!canary,env in (dev,prod),gpu,tier=fe,zone notin (b)"
        );
    }

    #[test]
    fn invalid_selectors_are_errors() {
        for sel in [
            json!({"matchExpressions": [{"key": "a", "operator": "Gt", "values": ["1"]}]}),
            json!({"matchExpressions": [{"key": "a", "operator": "In", "values": []}]}),
            json!({"matchExpressions": [{"key": "a", "operator": "Exists", "values": ["x"]}]}),
            json!({"matchLabels": {"bad key": "x"}}),
            json!({"matchLabels": {"Example.com/x": "x"}}),
            json!({"matchLabels": {"a": "-bad-"}}),
        ] {
            assert_eq!(format_label_selector(Some(&sel)), "<error>", "{sel}");
        }
        assert_eq!(
            format_label_selector(Some(&json!({"matchLabels": {"example.com/x": ""}}))),
            "example.com/x="
        );
    }
}
