//! Field selectors: the kubectl `--field-selector` / `?fieldSelector=`
//! syntax.
//!
//! Behaves as upstream `k8s.io/apimachinery/pkg/fields` at v1.33
//! (`ParseSelector`, `Selector.Matches`, `Selector.String`):
//!
//! - Terms are separated by unescaped commas and must all hold. Each term
//!   is `field=value`, `field==value` (the same as `=`) or `field!=value`,
//!   split at the first operator. Values escape `\`, `,` and `=` with `\`;
//!   field names are taken as written.
//! - Terms are sorted by their text before they are parsed; empty terms,
//!   and terms whose field and value are both empty (`=`), are dropped.
//!   The empty string selects everything.
//! - A field that an object does not have reads as the empty string, so
//!   `x!=a` matches it and `x=a` does not.
//! - Which fields a kind supports is not checked here; see
//!   [`super::fields::validate`].
//! - `Display` is upstream's `String()` (values re-escaped, `==` printed as
//!   `=`); parsing it back gives the same requirements.
//!
//! Nothing here panics, whatever the input.

use std::fmt;

use super::{Result, SelectorError};

/// Upstream's term operators, longest first where they share a prefix.
const OPERATORS: [(&str, Operator); 3] = [
    ("!=", Operator::NotEquals),
    ("==", Operator::Equals),
    ("=", Operator::Equals),
];

/// How a term compares its field with its value.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Operator {
    /// `field=value` or `field==value`.
    Equals,
    /// `field!=value`.
    NotEquals,
}

/// One `field op value` term (upstream `fields.Requirement`).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Requirement {
    /// The field path, e.g. `spec.nodeName`.
    pub field: String,
    /// `=` or `!=`.
    pub operator: Operator,
    /// The value, unescaped.
    pub value: String,
}

impl Requirement {
    fn matches(&self, actual: &str) -> bool {
        match self.operator {
            Operator::Equals => actual == self.value,
            Operator::NotEquals => actual != self.value,
        }
    }
}

/// Upstream `hasTerm.String()` / `notHasTerm.String()`: `field=value` with
/// the value escaped.
impl fmt::Display for Requirement {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let op = match self.operator {
            Operator::Equals => "=",
            Operator::NotEquals => "!=",
        };
        write!(f, "{}{op}{}", self.field, escape_value(&self.value))
    }
}

/// A field selector: all requirements must hold.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Default)]
pub struct Selector {
    requirements: Vec<Requirement>,
}

impl Selector {
    /// Upstream `fields.ParseSelector`.
    ///
    /// Errors, worded as upstream:
    /// `invalid selector: '<input>'; can't understand '<term>'` for a term
    /// without an operator, `invalid field selector: invalid escape
    /// sequence: \x` and `invalid field selector: unescaped character in
    /// value: 61` (the code point of `=`).
    pub fn parse(input: &str) -> Result<Self> {
        let mut parts = split_terms(input);
        parts.sort_unstable();
        let mut requirements = Vec::with_capacity(parts.len());
        for part in parts {
            if part.is_empty() {
                continue;
            }
            let Some((field, operator, raw)) = split_term(part) else {
                return Err(SelectorError::Field(format!(
                    "invalid selector: '{input}'; can't understand '{part}'"
                )));
            };
            let value = unescape_value(raw)?;
            if field.is_empty() && value.is_empty() {
                // Upstream's identity Transform turns this term into Everything.
                continue;
            }
            requirements.push(Requirement {
                field: field.to_string(),
                operator,
                value,
            });
        }
        Ok(Self { requirements })
    }

    /// Matches everything (upstream `fields.Everything()`).
    pub fn everything() -> Self {
        Self::default()
    }

    /// A selector of exactly these requirements, in this order (upstream
    /// `fields.AndSelectors` of one-term selectors).
    pub fn from_requirements(requirements: Vec<Requirement>) -> Self {
        Self { requirements }
    }

    /// True when the selector matches everything.
    pub fn is_empty(&self) -> bool {
        self.requirements.is_empty()
    }

    /// The requirements, in the order they are checked and printed.
    pub fn requirements(&self) -> &[Requirement] {
        &self.requirements
    }

    /// Whether every requirement holds; `get` returns a field's value, and
    /// `None` (a field the object lacks) compares as the empty string.
    pub fn matches(&self, get: impl Fn(&str) -> Option<String>) -> bool {
        self.requirements
            .iter()
            .all(|r| r.matches(get(&r.field).as_deref().unwrap_or_default()))
    }

    /// Upstream `RequiresExactMatch`: the value of the first `field=value`
    /// term on `field`, e.g. to turn `metadata.name=x` into a point read.
    pub fn requires_exact_match(&self, field: &str) -> Option<&str> {
        self.requirements
            .iter()
            .find(|r| r.field == field && r.operator == Operator::Equals)
            .map(|r| r.value.as_str())
    }

    /// Upstream `Selector.Transform`: rewrites each term's field and value,
    /// in order, stopping at the first error. Terms that come back with an
    /// empty field and an empty value are dropped.
    pub fn transform(
        &self,
        mut f: impl FnMut(&str, &str) -> Result<(String, String)>,
    ) -> Result<Self> {
        let mut requirements = Vec::with_capacity(self.requirements.len());
        for r in &self.requirements {
            let (field, value) = f(&r.field, &r.value)?;
            if field.is_empty() && value.is_empty() {
                continue;
            }
            requirements.push(Requirement {
                field,
                operator: r.operator,
                value,
            });
        }
        Ok(Self { requirements })
    }
}

/// Upstream `String()`: terms joined by `,`.
impl fmt::Display for Selector {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, r) in self.requirements.iter().enumerate() {
            if i > 0 {
                f.write_str(",")?;
            }
            write!(f, "{r}")?;
        }
        Ok(())
    }
}

/// Upstream `fields.EscapeValue`: `\` → `\\`, `,` → `\,`, `=` → `\=`.
pub fn escape_value(value: &str) -> String {
    let mut out = String::with_capacity(value.len());
    for c in value.chars() {
        if matches!(c, '\\' | ',' | '=') {
            out.push('\\');
        }
        out.push(c);
    }
    out
}

/// Upstream `fields.UnescapeValue`: the inverse of [`escape_value`];
/// any other escape, a trailing `\`, or a bare `,` or `=` is an error.
pub fn unescape_value(value: &str) -> Result<String> {
    if !value.contains(['\\', ',', '=']) {
        return Ok(value.to_string());
    }
    let mut out = String::with_capacity(value.len());
    let mut in_slash = false;
    for c in value.chars() {
        if in_slash {
            if !matches!(c, '\\' | ',' | '=') {
                return Err(SelectorError::Field(format!(
                    "invalid field selector: invalid escape sequence: \\{c}"
                )));
            }
            out.push(c);
            in_slash = false;
            continue;
        }
        match c {
            '\\' => in_slash = true,
            ',' | '=' => {
                return Err(SelectorError::Field(format!(
                    "invalid field selector: unescaped character in value: {}",
                    c as u32
                )));
            }
            c => out.push(c),
        }
    }
    if in_slash {
        return Err(SelectorError::Field(
            "invalid field selector: invalid escape sequence: \\".to_string(),
        ));
    }
    Ok(out)
}

/// Upstream `splitTerms`: split at commas that are not escaped.
fn split_terms(input: &str) -> Vec<&str> {
    if input.is_empty() {
        return Vec::new();
    }
    let mut terms = Vec::with_capacity(1);
    let mut start = 0;
    let mut in_slash = false;
    for (i, c) in input.char_indices() {
        if in_slash {
            in_slash = false;
        } else if c == '\\' {
            in_slash = true;
        } else if c == ',' {
            terms.push(input.get(start..i).unwrap_or_default());
            start = i + 1;
        }
    }
    terms.push(input.get(start..).unwrap_or_default());
    terms
}

/// Upstream `splitTerm`: split at the first operator, trying `!=`, `==`,
/// `=` at each character.
fn split_term(term: &str) -> Option<(&str, Operator, &str)> {
    for (i, _) in term.char_indices() {
        let rest = term.get(i..).unwrap_or_default();
        for (token, operator) in OPERATORS {
            if let Some(value) = rest.strip_prefix(token) {
                return Some((term.get(..i).unwrap_or_default(), operator, value));
            }
        }
    }
    None
}

#[cfg(test)]
#[path = "field_tests.rs"]
mod tests;
