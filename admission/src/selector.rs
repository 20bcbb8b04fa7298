//! Label selectors: the kubectl `-l` string syntax (typed, for placement)
//! and `metav1.LabelSelector` objects (validation and matching for
//! workload selectors). Upstream: `apimachinery/pkg/labels/selector.go`,
//! `apimachinery/pkg/apis/meta/v1/validation/validation.go`.

use std::fmt;

use serde_json::{Map, Value};

use crate::Cause;
use crate::denial::quote;
use crate::names;
use crate::path::Path;

/// A selector operator. The string syntax spells them `=`/`==`, `!=`,
/// `in`, `notin`, `key` (exists), `!key`, `>` and `<`; Federation V1's JSON
/// form spells them `=`, `==`, `!=`, `in`, `notin`, `exists`, `!`, `gt`, `lt`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Operator {
    /// The label equals the single value.
    Equals,
    /// The label is absent or differs from the single value.
    NotEquals,
    /// The label is one of the values.
    In,
    /// The label is absent or none of the values.
    NotIn,
    /// The label is present.
    Exists,
    /// The label is absent.
    DoesNotExist,
    /// The label is an integer greater than the single (integer) value.
    GreaterThan,
    /// The label is an integer less than the single (integer) value.
    LessThan,
}

impl Operator {
    /// The Federation V1 JSON spelling (`federation.alpha.kubernetes.io/
    /// cluster-selector`), as upstream's `selection.Operator` strings.
    pub fn from_v1(op: &str) -> Option<Self> {
        Some(match op {
            "=" | "==" => Operator::Equals,
            "!=" => Operator::NotEquals,
            "in" => Operator::In,
            "notin" => Operator::NotIn,
            "exists" => Operator::Exists,
            "!" => Operator::DoesNotExist,
            "gt" => Operator::GreaterThan,
            "lt" => Operator::LessThan,
            _ => return None,
        })
    }
}

/// One requirement of a selector; a selector is their conjunction.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Requirement {
    /// The label key.
    pub key: String,
    /// How the label is compared.
    pub operator: Operator,
    /// The values (sorted and deduplicated for `in`/`notin`; one for the
    /// equality and numeric operators; none for exists/does-not-exist).
    pub values: Vec<String>,
}

impl Requirement {
    /// Checks operator/value-count consistency and the key and value
    /// formats, as upstream's `labels.NewRequirement`.
    ///
    /// # Errors
    ///
    /// A message naming the problem.
    pub fn new(key: &str, operator: Operator, mut values: Vec<String>) -> Result<Self, String> {
        if let Some(msg) = names::qualified_name(key).into_iter().next() {
            return Err(format!("invalid label key {}: {msg}", quote(key)));
        }
        match operator {
            Operator::In | Operator::NotIn => {
                if values.is_empty() {
                    return Err("for 'in', 'notin' operators, values set can't be empty".into());
                }
            }
            Operator::Equals | Operator::NotEquals => {
                if values.len() != 1 {
                    return Err("exact-match compatibility requires one single value".into());
                }
            }
            Operator::Exists | Operator::DoesNotExist => {
                if !values.is_empty() {
                    return Err("values set must be empty for exists and does not exist".into());
                }
            }
            Operator::GreaterThan | Operator::LessThan => {
                if values.len() != 1 {
                    return Err("for 'Gt', 'Lt' operators, exactly one value is required".into());
                }
                if values[0].parse::<i64>().is_err() {
                    return Err("for 'Gt', 'Lt' operators, the value must be an integer".into());
                }
            }
        }
        for v in &values {
            if let Some(msg) = names::label_value(v).into_iter().next() {
                return Err(format!("invalid label value: {}: {msg}", quote(v)));
            }
        }
        values.sort();
        values.dedup();
        Ok(Self {
            key: key.to_owned(),
            operator,
            values,
        })
    }

    /// Whether `labels` (a JSON object of strings) satisfy this requirement.
    pub fn matches(&self, labels: &Map<String, Value>) -> bool {
        let got = labels.get(&self.key).and_then(Value::as_str);
        match self.operator {
            Operator::Equals | Operator::In => {
                got.is_some_and(|v| self.values.iter().any(|w| w == v))
            }
            Operator::NotEquals | Operator::NotIn => {
                got.is_none_or(|v| !self.values.iter().any(|w| w == v))
            }
            Operator::Exists => got.is_some(),
            Operator::DoesNotExist => got.is_none(),
            Operator::GreaterThan | Operator::LessThan => {
                let (Some(have), Some(want)) = (
                    got.and_then(|v| v.parse::<i64>().ok()),
                    self.values.first().and_then(|v| v.parse::<i64>().ok()),
                ) else {
                    return false;
                };
                if self.operator == Operator::GreaterThan {
                    have > want
                } else {
                    have < want
                }
            }
        }
    }
}

impl fmt::Display for Requirement {
    /// The string syntax, e.g. `tier in (a,b)`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let v = self.values.join(",");
        match self.operator {
            Operator::Equals => write!(f, "{}={v}", self.key),
            Operator::NotEquals => write!(f, "{}!={v}", self.key),
            Operator::In => write!(f, "{} in ({v})", self.key),
            Operator::NotIn => write!(f, "{} notin ({v})", self.key),
            Operator::Exists => write!(f, "{}", self.key),
            Operator::DoesNotExist => write!(f, "!{}", self.key),
            Operator::GreaterThan => write!(f, "{}>{v}", self.key),
            Operator::LessThan => write!(f, "{}<{v}", self.key),
        }
    }
}

/// Parses the kubectl `-l` syntax: comma-separated requirements
/// (`k=v`, `k==v`, `k!=v`, `k in (a,b)`, `k notin (a,b)`, `k`, `!k`,
/// `k>1`, `k<1`). The empty string selects everything.
///
/// # Errors
///
/// A message naming the first problem.
pub fn parse(s: &str) -> Result<Vec<Requirement>, String> {
    let mut p = Parser {
        s: s.as_bytes(),
        i: 0,
    };
    let mut out = Vec::new();
    p.skip_ws();
    if p.at_end() {
        return Ok(out);
    }
    loop {
        out.push(p.requirement()?);
        p.skip_ws();
        if p.at_end() {
            return Ok(out);
        }
        if !p.eat(b',') {
            return Err(format!(
                "found '{}', expected: ',' or 'end of string'",
                p.rest_token()
            ));
        }
    }
}

struct Parser<'a> {
    s: &'a [u8],
    i: usize,
}

impl Parser<'_> {
    fn at_end(&self) -> bool {
        self.i >= self.s.len()
    }

    fn skip_ws(&mut self) {
        while self.i < self.s.len() && self.s[self.i].is_ascii_whitespace() {
            self.i += 1;
        }
    }

    fn eat(&mut self, c: u8) -> bool {
        if self.s.get(self.i) == Some(&c) {
            self.i += 1;
            true
        } else {
            false
        }
    }

    fn eat_str(&mut self, t: &str) -> bool {
        if self.s[self.i..].starts_with(t.as_bytes()) {
            self.i += t.len();
            true
        } else {
            false
        }
    }

    /// An identifier: anything up to whitespace or a special character.
    fn ident(&mut self) -> String {
        let start = self.i;
        while let Some(&c) = self.s.get(self.i) {
            if c.is_ascii_whitespace() || b",()=!<>".contains(&c) {
                break;
            }
            self.i += 1;
        }
        String::from_utf8_lossy(&self.s[start..self.i]).into_owned()
    }

    fn rest_token(&self) -> String {
        let rest = &self.s[self.i..];
        let end = rest
            .iter()
            .position(|c| c.is_ascii_whitespace())
            .unwrap_or(rest.len());
        String::from_utf8_lossy(&rest[..end]).into_owned()
    }

    fn requirement(&mut self) -> Result<Requirement, String> {
        self.skip_ws();
        if self.eat(b'!') {
            self.skip_ws();
            let key = self.ident();
            if key.is_empty() {
                return Err(format!(
                    "found '{}', expected: identifier",
                    self.rest_token()
                ));
            }
            return Requirement::new(&key, Operator::DoesNotExist, vec![]);
        }
        let key = self.ident();
        if key.is_empty() {
            return Err(format!(
                "found '{}', expected: identifier",
                self.rest_token()
            ));
        }
        self.skip_ws();
        if self.at_end() || self.s[self.i] == b',' {
            return Requirement::new(&key, Operator::Exists, vec![]);
        }
        let op = if self.eat_str("==") || self.eat(b'=') {
            Operator::Equals
        } else if self.eat_str("!=") {
            Operator::NotEquals
        } else if self.eat(b'>') {
            Operator::GreaterThan
        } else if self.eat(b'<') {
            Operator::LessThan
        } else {
            let word = self.ident();
            match word.as_str() {
                "in" => Operator::In,
                "notin" => Operator::NotIn,
                _ => {
                    return Err(format!(
                        "found '{word}', expected: in, notin, =, ==, !=, gt, lt"
                    ));
                }
            }
        };
        self.skip_ws();
        let values = if matches!(op, Operator::In | Operator::NotIn) {
            if !self.eat(b'(') {
                return Err(format!("found '{}', expected: '('", self.rest_token()));
            }
            let mut values = Vec::new();
            loop {
                self.skip_ws();
                let v = self.ident();
                values.push(v);
                self.skip_ws();
                if self.eat(b')') {
                    break;
                }
                if !self.eat(b',') {
                    return Err(format!(
                        "found '{}', expected: ',' or ')'",
                        self.rest_token()
                    ));
                }
            }
            // `in ()` is one empty value upstream; keep it as none.
            if values.len() == 1 && values[0].is_empty() {
                values.clear();
            }
            values
        } else {
            vec![self.ident()]
        };
        Requirement::new(&key, op, values)
    }
}

/// Field errors of a `metav1.LabelSelector` object at `path` (upstream
/// `ValidateLabelSelector`, strict label values).
pub(crate) fn validate_label_selector(sel: &Value, path: &Path) -> Vec<Cause> {
    let mut out = Vec::new();
    let Some(sel) = sel.as_object() else {
        return out;
    };
    if let Some(labels) = sel.get("matchLabels").and_then(Value::as_object) {
        out.extend(validate_labels(labels, &path.child("matchLabels")));
    }
    for (i, expr) in crate::json::arr(sel, "matchExpressions").iter().enumerate() {
        let p = path.child("matchExpressions").index(i);
        let Some(expr) = expr.as_object() else {
            continue;
        };
        let op = crate::json::str_of(expr, "operator");
        let values = crate::json::arr(expr, "values");
        match op {
            "In" | "NotIn" => {
                if values.is_empty() {
                    out.push(Cause::required(
                        p.child("values"),
                        "must be specified when `operator` is 'In' or 'NotIn'",
                    ));
                }
            }
            "Exists" | "DoesNotExist" => {
                if !values.is_empty() {
                    out.push(Cause::forbidden(
                        p.child("values"),
                        "may not be specified when `operator` is 'Exists' or 'DoesNotExist'",
                    ));
                }
            }
            _ => out.push(Cause::invalid(
                p.child("operator"),
                &Value::String(op.to_owned()),
                "not a valid selector operator",
            )),
        }
        let key = crate::json::str_of(expr, "key");
        for msg in names::qualified_name(key) {
            out.push(Cause::invalid(
                p.child("key"),
                &Value::String(key.into()),
                msg,
            ));
        }
        for (j, v) in values.iter().enumerate() {
            let v = v.as_str().unwrap_or_default();
            for msg in names::label_value(v) {
                out.push(Cause::invalid(
                    p.child("values").index(j),
                    &Value::String(v.into()),
                    msg,
                ));
            }
        }
    }
    out
}

/// Field errors of a label map (upstream `ValidateLabels`), keys sorted.
pub(crate) fn validate_labels(labels: &Map<String, Value>, path: &Path) -> Vec<Cause> {
    let mut out = Vec::new();
    let mut keys: Vec<&String> = labels.keys().collect();
    keys.sort();
    for k in keys {
        for msg in names::qualified_name(k) {
            out.push(Cause::invalid(path, &Value::String(k.clone()), msg));
        }
        let v = labels[k.as_str()].as_str().unwrap_or_default();
        for msg in names::label_value(v) {
            out.push(Cause::invalid(path, &Value::String(v.to_owned()), msg));
        }
    }
    out
}

/// Whether a `metav1.LabelSelector` object matches `labels`, as
/// `LabelSelectorAsSelector(sel).Matches(labels)`: a missing selector
/// (`None` or `null`) matches nothing, `{}` matches everything. A selector
/// with an invalid operator matches nothing.
pub(crate) fn label_selector_matches(sel: Option<&Value>, labels: &Map<String, Value>) -> bool {
    let Some(sel) = sel.and_then(Value::as_object) else {
        return false;
    };
    if let Some(ml) = sel.get("matchLabels").and_then(Value::as_object) {
        for (k, v) in ml {
            if labels.get(k) != Some(v) {
                return false;
            }
        }
    }
    for expr in crate::json::arr(sel, "matchExpressions") {
        let Some(expr) = expr.as_object() else {
            return false;
        };
        let key = crate::json::str_of(expr, "key");
        let values: Vec<&str> = crate::json::arr(expr, "values")
            .iter()
            .filter_map(Value::as_str)
            .collect();
        let got = labels.get(key).and_then(Value::as_str);
        let ok = match crate::json::str_of(expr, "operator") {
            "In" => got.is_some_and(|g| values.contains(&g)),
            "NotIn" => got.is_none_or(|g| !values.contains(&g)),
            "Exists" => got.is_some(),
            "DoesNotExist" => got.is_none(),
            _ => false,
        };
        if !ok {
            return false;
        }
    }
    true
}

/// `true` for a selector object with neither matchLabels nor
/// matchExpressions (upstream: "empty selector is invalid for ...").
pub(crate) fn label_selector_is_empty(sel: &Value) -> bool {
    let n = |k: &str| match sel.get(k) {
        Some(Value::Object(m)) => m.len(),
        Some(Value::Array(a)) => a.len(),
        _ => 0,
    };
    n("matchLabels") + n("matchExpressions") == 0
}

/// `v1.LabelSelector{MatchLabels:map[string]string{"app":"web"},
/// MatchExpressions:[]v1.LabelSelectorRequirement(nil)}`: Go's `%#v` of a
/// selector, which kube-apiserver 1.33 prints in selector errors.
pub(crate) fn render_label_selector(sel: &Value) -> String {
    let labels = match sel.get("matchLabels").and_then(Value::as_object) {
        Some(m) => crate::denial::render_value(&Value::Object(m.clone())),
        None => "map[string]string(nil)".to_owned(),
    };
    let exprs = match sel.get("matchExpressions").and_then(Value::as_array) {
        None => "[]v1.LabelSelectorRequirement(nil)".to_owned(),
        Some(items) => {
            let parts: Vec<String> = items
                .iter()
                .map(|e| {
                    let values = match e.get("values").and_then(Value::as_array) {
                        Some(v) => crate::denial::render_value(&Value::Array(v.clone())),
                        None => "[]string(nil)".to_owned(),
                    };
                    format!(
                        "v1.LabelSelectorRequirement{{Key:{}, Operator:{}, Values:{values}}}",
                        quote(crate::json::str_at(e, "/key")),
                        quote(crate::json::str_at(e, "/operator")),
                    )
                })
                .collect();
            format!("[]v1.LabelSelectorRequirement{{{}}}", parts.join(", "))
        }
    };
    format!("v1.LabelSelector{{MatchLabels:{labels}, MatchExpressions:{exprs}}}")
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn parses_the_string_syntax() {
        let reqs = parse("region=eu, tier in (a,b), !legacy, gpu, size>2, env!=dev").unwrap();
        let rendered: Vec<String> = reqs.iter().map(ToString::to_string).collect();
        assert_eq!(
            rendered,
            [
                "region=eu",
                "tier in (a,b)",
                "!legacy",
                "gpu",
                "size>2",
                "env!=dev"
            ]
        );
        assert!(parse("").unwrap().is_empty());
        assert!(parse("a==b").is_ok());
        assert!(parse("a in (x,").is_err());
        assert!(parse("a=b c").is_err());
        assert!(parse("a foo (b)").is_err());
        assert!(parse("size>x").is_err());
        assert!(parse("-bad=x").is_err());
        assert!(parse("a=b,").is_err());
    }

    #[test]
    fn matches_labels() {
        let labels = json!({"region": "eu", "size": "3"});
        let labels = labels.as_object().unwrap();
        let ok = |s: &str| parse(s).unwrap().iter().all(|r| r.matches(labels));
        assert!(ok("region=eu,size>2,!gpu"));
        assert!(!ok("region in (us)"));
        assert!(ok("region notin (us)"));
        assert!(!ok("size<3"));
    }

    #[test]
    fn label_selector_objects() {
        let labels = json!({"app": "web"});
        let labels = labels.as_object().unwrap();
        let sel = json!({"matchLabels": {"app": "web"}});
        assert!(label_selector_matches(Some(&sel), labels));
        assert!(!label_selector_matches(None, labels));
        assert!(label_selector_matches(Some(&json!({})), labels));
        assert_eq!(
            render_label_selector(&sel),
            r#"v1.LabelSelector{MatchLabels:map[string]string{"app":"web"}, MatchExpressions:[]v1.LabelSelectorRequirement(nil)}"#
        );
        let bad = json!({"matchExpressions": [{"key": "a", "operator": "In"}]});
        let errs = validate_label_selector(&bad, &Path::new("spec.selector"));
        assert_eq!(
            errs[0].to_string(),
            "spec.selector.matchExpressions[0].values: Required value: must be specified when `operator` is 'In' or 'NotIn'"
        );
    }
}
