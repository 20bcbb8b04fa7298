//! Label selectors: the kubectl `-l` / `?labelSelector=` syntax, and
//! `metav1.LabelSelector` (`matchLabels` + `matchExpressions`).
//!
//! Behaves as upstream `k8s.io/apimachinery/pkg/labels` at v1.33
//! (`labels.Parse`, `Requirement.Matches`, `Selector.String`) and
//! `metav1.LabelSelectorAsSelector`:
//!
//! - Grammar: comma-separated requirements, all of which must hold:
//!   `k=v`, `k==v`, `k!=v`, `k in (a,b)`, `k notin (a)`, `k`, `!k`, `k>1`,
//!   `k<1`. Spaces, tabs, CR and LF separate tokens and are otherwise
//!   ignored; a NUL byte ends a token (or, between tokens, the input), as
//!   in the Go lexer. The empty string selects everything.
//! - Keys must be qualified names (optional DNS-subdomain prefix of at most
//!   253 bytes, `/`, name of at most 63 bytes); values must be valid label
//!   values (at most 63 bytes, `[A-Za-z0-9._-]`, alphanumeric at both ends,
//!   or empty). `>`/`<` need a base-10 `i64`.
//! - Parsed requirements are sorted by key (stably), and set values are
//!   sorted and deduplicated, so equal selectors compare equal.
//! - Errors carry upstream's exact text, e.g.
//!   `unable to parse requirement: <nil>: Invalid value: "a b": name part …`.
//! - [`Selector`]'s `Display` is upstream's `String()`; parsing it back gives
//!   an equal selector (except for [`Selector::nothing`], which prints as
//!   `""` like upstream's).
//!
//! Nothing here panics, whatever the input.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;

use serde_json::Value;

use super::error::{Result, SelectorError};
use super::go::{aggregate, invalid_string, invalid_strings};
use crate::names::{label_value as label_value_errors, qualified_name as qualified_name_errors};

/// How a [`Requirement`] relates its key to its values
/// (upstream `selection.Operator`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Operator {
    /// `k=v`: the label is present and equals the value.
    Equals,
    /// `k==v`: same as [`Operator::Equals`]; kept apart so it prints back.
    DoubleEquals,
    /// `k!=v`: the label is absent or differs from the value.
    NotEquals,
    /// `k in (a,b)`: the label is present and one of the values.
    In,
    /// `k notin (a,b)`: the label is absent or none of the values.
    NotIn,
    /// `k`: the label is present.
    Exists,
    /// `!k`: the label is absent.
    DoesNotExist,
    /// `k>1`: the label is present, an integer, and greater.
    GreaterThan,
    /// `k<1`: the label is present, an integer, and smaller.
    LessThan,
}

impl Operator {
    /// Upstream's name for the operator (`selection.Operator`), as used in
    /// error messages: `=`, `==`, `!=`, `in`, `notin`, `exists`, `!`, `gt`, `lt`.
    pub fn as_str(self) -> &'static str {
        match self {
            Operator::Equals => "=",
            Operator::DoubleEquals => "==",
            Operator::NotEquals => "!=",
            Operator::In => "in",
            Operator::NotIn => "notin",
            Operator::Exists => "exists",
            Operator::DoesNotExist => "!",
            Operator::GreaterThan => "gt",
            Operator::LessThan => "lt",
        }
    }
}

/// One `key op values` term. Constructed only through validation, so every
/// `Requirement` has a valid key, valid values and the right value count.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Requirement {
    key: String,
    operator: Operator,
    values: Vec<String>,
}

impl Requirement {
    /// Upstream `labels.NewRequirement`: checks the key, the value count for
    /// the operator, integers for `>`/`<`, and every value.
    ///
    /// `In`/`NotIn` need at least one value, `Equals`/`DoubleEquals`/
    /// `NotEquals`/`GreaterThan`/`LessThan` exactly one, `Exists`/
    /// `DoesNotExist` none. Values are kept in the given order.
    pub fn new(key: impl Into<String>, operator: Operator, values: Vec<String>) -> Result<Self> {
        let key = key.into();
        new_requirement(key, operator, values).map_err(SelectorError::Label)
    }

    /// The label key.
    pub fn key(&self) -> &str {
        &self.key
    }

    /// The operator.
    pub fn operator(&self) -> Operator {
        self.operator
    }

    /// The values, empty for `Exists`/`DoesNotExist`.
    pub fn values(&self) -> &[String] {
        &self.values
    }

    /// Upstream `Requirement.Matches`, with `get` looking up a label.
    pub fn matches_with<'a>(&self, get: impl Fn(&str) -> Option<&'a str>) -> bool {
        let has = |v: &str| self.values.iter().any(|x| x == v);
        match self.operator {
            Operator::In | Operator::Equals | Operator::DoubleEquals => {
                get(&self.key).is_some_and(has)
            }
            Operator::NotIn | Operator::NotEquals => !get(&self.key).is_some_and(has),
            Operator::Exists => get(&self.key).is_some(),
            Operator::DoesNotExist => get(&self.key).is_none(),
            Operator::GreaterThan | Operator::LessThan => {
                let Some(actual) = get(&self.key).and_then(|v| v.parse::<i64>().ok()) else {
                    return false;
                };
                let [wanted] = self.values.as_slice() else {
                    return false;
                };
                let Ok(wanted) = wanted.parse::<i64>() else {
                    return false;
                };
                if self.operator == Operator::GreaterThan {
                    actual > wanted
                } else {
                    actual < wanted
                }
            }
        }
    }
}

/// Upstream `Requirement.String()`. Set values print sorted.
impl fmt::Display for Requirement {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.operator == Operator::DoesNotExist {
            f.write_str("!")?;
        }
        f.write_str(&self.key)?;
        let (op, set) = match self.operator {
            Operator::Exists | Operator::DoesNotExist => return Ok(()),
            Operator::Equals => ("=", false),
            Operator::DoubleEquals => ("==", false),
            Operator::NotEquals => ("!=", false),
            Operator::GreaterThan => (">", false),
            Operator::LessThan => ("<", false),
            Operator::In => (" in ", true),
            Operator::NotIn => (" notin ", true),
        };
        f.write_str(op)?;
        if set {
            f.write_str("(")?;
        }
        let mut values: Vec<&str> = self.values.iter().map(String::as_str).collect();
        values.sort_unstable();
        f.write_str(&values.join(","))?;
        if set {
            f.write_str(")")?;
        }
        Ok(())
    }
}

/// A label selector: all requirements must match. Either parsed from the
/// query syntax ([`Selector::parse`]), built from a `metav1.LabelSelector`,
/// or one of [`Selector::everything`] / [`Selector::nothing`].
#[derive(Debug, Clone, PartialEq, Eq, Hash, Default)]
pub struct Selector {
    requirements: Vec<Requirement>,
    nothing: bool,
}

impl Selector {
    /// Upstream `labels.Parse`. The empty string gives [`Selector::everything`].
    pub fn parse(input: &str) -> Result<Self> {
        let requirements = Parser::new(input).parse().map_err(SelectorError::Label)?;
        Ok(Self::from_unsorted(requirements))
    }

    /// Matches every label set (upstream `labels.Everything()`).
    pub fn everything() -> Self {
        Self::default()
    }

    /// Matches no label set (upstream `labels.Nothing()`, what a nil
    /// `metav1.LabelSelector` means). Prints as the empty string.
    pub fn nothing() -> Self {
        Self {
            requirements: Vec::new(),
            nothing: true,
        }
    }

    /// A selector requiring exactly these labels (upstream
    /// `labels.ValidatedSelectorFromSet`); an empty map selects everything.
    pub fn from_set(labels: &BTreeMap<String, String>) -> Result<Self> {
        let mut requirements = Vec::with_capacity(labels.len());
        for (k, v) in labels {
            requirements.push(Requirement::new(
                k.clone(),
                Operator::Equals,
                vec![v.clone()],
            )?);
        }
        Ok(Self::from_unsorted(requirements))
    }

    /// A selector of these requirements, sorted by key (upstream
    /// `NewSelector().Add(...)`).
    pub fn from_requirements(requirements: Vec<Requirement>) -> Self {
        Self::from_unsorted(requirements)
    }

    /// Upstream `metav1.LabelSelectorAsSelector` for the JSON form, e.g. a
    /// Deployment's `spec.selector`: `null` (a missing selector) matches
    /// nothing, an empty one everything; `matchLabels` become `k=v`
    /// requirements (checked in key order), `matchExpressions` use `In`,
    /// `NotIn`, `Exists` or `DoesNotExist`. A value that is not a
    /// `LabelSelector` (wrong JSON types) is an error naming the field.
    pub fn from_label_selector_value(value: &Value) -> Result<Self> {
        let bad =
            |what: &str| SelectorError::LabelSelector(format!("invalid label selector: {what}"));
        let ps = match value {
            Value::Null => return Ok(Self::nothing()),
            Value::Object(ps) => ps,
            _ => return Err(bad("must be an object")),
        };
        let mut requirements = Vec::new();
        match ps.get("matchLabels") {
            None | Some(Value::Null) => {}
            Some(Value::Object(labels)) => {
                for (k, v) in labels {
                    let v = v
                        .as_str()
                        .ok_or_else(|| bad("matchLabels values must be strings"))?;
                    let r = new_requirement(k.clone(), Operator::Equals, vec![v.to_string()])
                        .map_err(SelectorError::LabelSelector)?;
                    requirements.push(r);
                }
            }
            Some(_) => return Err(bad("matchLabels must be an object")),
        }
        let expressions = match ps.get("matchExpressions") {
            None | Some(Value::Null) => &[][..],
            Some(Value::Array(e)) => e.as_slice(),
            Some(_) => return Err(bad("matchExpressions must be a list")),
        };
        for expr in expressions {
            let text = |field: &str| -> Result<String> {
                match expr.get(field) {
                    None | Some(Value::Null) => Ok(String::new()),
                    Some(Value::String(s)) => Ok(s.clone()),
                    Some(_) => Err(bad(&format!("matchExpressions {field} must be a string"))),
                }
            };
            let operator = match text("operator")?.as_str() {
                "In" => Operator::In,
                "NotIn" => Operator::NotIn,
                "Exists" => Operator::Exists,
                "DoesNotExist" => Operator::DoesNotExist,
                other => {
                    return Err(SelectorError::LabelSelector(format!(
                        "{} is not a valid label selector operator",
                        super::go::go_quote(other)
                    )));
                }
            };
            let values = match expr.get("values") {
                None | Some(Value::Null) => Vec::new(),
                Some(Value::Array(vs)) => vs
                    .iter()
                    .map(|v| v.as_str().map(str::to_string))
                    .collect::<Option<Vec<_>>>()
                    .ok_or_else(|| bad("matchExpressions values must be strings"))?,
                Some(_) => return Err(bad("matchExpressions values must be a list")),
            };
            let r = new_requirement(text("key")?, operator, values)
                .map_err(SelectorError::LabelSelector)?;
            requirements.push(r);
        }
        Ok(Self::from_unsorted(requirements))
    }

    fn from_unsorted(mut requirements: Vec<Requirement>) -> Self {
        // Upstream sorts by key for a deterministic String(); stable here.
        requirements.sort_by(|a, b| a.key.cmp(&b.key));
        Self {
            requirements,
            nothing: false,
        }
    }

    /// True when the selector matches everything (upstream `Empty()`).
    pub fn is_empty(&self) -> bool {
        !self.nothing && self.requirements.is_empty()
    }

    /// True only for [`Selector::nothing`] (upstream `MatchesNothing`).
    pub fn matches_nothing(&self) -> bool {
        self.nothing
    }

    /// The requirements, sorted by key.
    pub fn requirements(&self) -> &[Requirement] {
        &self.requirements
    }

    /// Upstream `RequiresExactMatch`: the value the first requirement on
    /// `key` pins it to, if it is `=`, `==` or a one-value `in`.
    pub fn requires_exact_match(&self, key: &str) -> Option<&str> {
        let r = self.requirements.iter().find(|r| r.key == key)?;
        match (r.operator, r.values.as_slice()) {
            (Operator::Equals | Operator::DoubleEquals | Operator::In, [v]) => Some(v),
            _ => None,
        }
    }

    /// Whether a label set satisfies every requirement.
    pub fn matches(&self, labels: &BTreeMap<String, String>) -> bool {
        self.matches_with(|k| labels.get(k).map(String::as_str))
    }

    /// Whether an object's `metadata.labels` satisfy every requirement.
    /// Missing labels count as none; non-string label values as absent.
    pub fn matches_object(&self, object: &Value) -> bool {
        let labels = object
            .get("metadata")
            .and_then(|m| m.get("labels"))
            .and_then(Value::as_object);
        self.matches_with(|k| labels.and_then(|l| l.get(k)).and_then(|v| v.as_str()))
    }

    /// Whether the labels that `get` looks up satisfy every requirement.
    pub fn matches_with<'a>(&self, get: impl Fn(&str) -> Option<&'a str>) -> bool {
        !self.nothing && self.requirements.iter().all(|r| r.matches_with(&get))
    }
}

/// Upstream `String()`: requirements joined by `,`, e.g. `a in (x,y),!b,c=d`.
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

/// Upstream `NewRequirement` with no field path: messages name `key`,
/// `values` and `values[i][key]`.
fn new_requirement(
    key: String,
    operator: Operator,
    values: Vec<String>,
) -> std::result::Result<Requirement, String> {
    let mut errs = Vec::new();
    let key_errs = qualified_name_errors(&key);
    if !key_errs.is_empty() {
        errs.push(invalid_string("key", &key, &key_errs.join("; ")));
    }
    match operator {
        Operator::In | Operator::NotIn => {
            if values.is_empty() {
                errs.push(invalid_strings(
                    "values",
                    &values,
                    "for 'in', 'notin' operators, values set can't be empty",
                ));
            }
        }
        Operator::Equals | Operator::DoubleEquals | Operator::NotEquals => {
            if values.len() != 1 {
                errs.push(invalid_strings(
                    "values",
                    &values,
                    "exact-match compatibility requires one single value",
                ));
            }
        }
        Operator::Exists | Operator::DoesNotExist => {
            if !values.is_empty() {
                errs.push(invalid_strings(
                    "values",
                    &values,
                    "values set must be empty for exists and does not exist",
                ));
            }
        }
        Operator::GreaterThan | Operator::LessThan => {
            if values.len() != 1 {
                errs.push(invalid_strings(
                    "values",
                    &values,
                    "for 'Gt', 'Lt' operators, exactly one value is required",
                ));
            }
            for (i, v) in values.iter().enumerate() {
                if v.parse::<i64>().is_err() {
                    errs.push(invalid_string(
                        &format!("values[{i}]"),
                        v,
                        "for 'Gt', 'Lt' operators, the value must be an integer",
                    ));
                }
            }
        }
    }
    for (i, v) in values.iter().enumerate() {
        let value_errs = label_value_errors(v);
        if !value_errs.is_empty() {
            errs.push(invalid_string(
                &format!("values[{i}][{key}]"),
                v,
                &value_errs.join("; "),
            ));
        }
    }
    match aggregate(errs) {
        Some(message) => Err(message),
        None => Ok(Requirement {
            key,
            operator,
            values,
        }),
    }
}

/// Lexer tokens (upstream `labels.Token`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Token {
    Error,
    EndOfString,
    ClosedPar,
    Comma,
    DoesNotExist,
    DoubleEquals,
    Equals,
    GreaterThan,
    Identifier,
    In,
    LessThan,
    NotEquals,
    NotIn,
    OpenPar,
}

fn keyword(s: &str) -> Option<Token> {
    Some(match s {
        ")" => Token::ClosedPar,
        "," => Token::Comma,
        "!" => Token::DoesNotExist,
        "==" => Token::DoubleEquals,
        "=" => Token::Equals,
        ">" => Token::GreaterThan,
        "in" => Token::In,
        "<" => Token::LessThan,
        "!=" => Token::NotEquals,
        "notin" => Token::NotIn,
        "(" => Token::OpenPar,
        _ => return None,
    })
}

fn is_whitespace(ch: u8) -> bool {
    matches!(ch, b' ' | b'\t' | b'\r' | b'\n')
}

fn is_special(ch: u8) -> bool {
    matches!(ch, b'=' | b'!' | b'(' | b')' | b',' | b'>' | b'<')
}

/// Byte-wise lexer, as upstream's. Token boundaries are always ASCII bytes,
/// so every literal is a `&str` slice of the input.
struct Lexer<'a> {
    s: &'a str,
    pos: usize,
}

impl<'a> Lexer<'a> {
    /// The next byte, or 0 at the end; like Go, a NUL byte also reads as 0.
    fn read(&mut self) -> u8 {
        match self.s.as_bytes().get(self.pos) {
            Some(&b) => {
                self.pos += 1;
                b
            }
            None => 0,
        }
    }

    fn unread(&mut self) {
        self.pos = self.pos.saturating_sub(1);
    }

    fn slice(&self, start: usize, end: usize) -> &'a str {
        self.s.get(start..end).unwrap_or_default()
    }

    fn lex(&mut self) -> (Token, &'a str) {
        let mut ch = self.read();
        while is_whitespace(ch) {
            ch = self.read();
        }
        if ch == 0 {
            return (Token::EndOfString, "");
        }
        self.unread();
        if is_special(ch) {
            self.scan_special()
        } else {
            self.scan_identifier()
        }
    }

    fn scan_identifier(&mut self) -> (Token, &'a str) {
        let start = self.pos;
        let end = loop {
            let at = self.pos;
            let ch = self.read();
            if ch == 0 {
                break at;
            }
            if is_special(ch) || is_whitespace(ch) {
                self.unread();
                break at;
            }
        };
        let literal = self.slice(start, end);
        (keyword(literal).unwrap_or(Token::Identifier), literal)
    }

    fn scan_special(&mut self) -> (Token, &'a str) {
        let start = self.pos;
        let mut last: Option<(Token, usize)> = None;
        loop {
            let ch = self.read();
            if ch == 0 {
                break;
            }
            if !is_special(ch) {
                self.unread();
                break;
            }
            match keyword(self.slice(start, self.pos)) {
                Some(token) => last = Some((token, self.pos)),
                None if last.is_some() => {
                    self.unread();
                    break;
                }
                None => {}
            }
        }
        match last {
            Some((token, end)) => (token, self.slice(start, end)),
            // Unreachable: every single special byte is a token.
            None => (Token::Error, self.slice(start, self.pos)),
        }
    }
}

/// Whether `in`/`notin` are operators (key position) or plain values.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Context {
    KeyAndOperator,
    Values,
}

type ParseResult<T> = std::result::Result<T, String>;

/// Recursive-descent parser over the scanned tokens (upstream `Parser`).
struct Parser<'a> {
    items: Vec<(Token, &'a str)>,
    position: usize,
}

impl<'a> Parser<'a> {
    fn new(input: &'a str) -> Self {
        let mut lexer = Lexer { s: input, pos: 0 };
        let mut items = Vec::new();
        loop {
            let (token, literal) = lexer.lex();
            items.push((token, literal));
            if token == Token::EndOfString {
                break;
            }
        }
        Self { items, position: 0 }
    }

    fn item(&self, index: usize, context: Context) -> (Token, &'a str) {
        let (token, literal) = self
            .items
            .get(index)
            .copied()
            .unwrap_or((Token::EndOfString, ""));
        match (context, token) {
            (Context::Values, Token::In | Token::NotIn) => (Token::Identifier, literal),
            _ => (token, literal),
        }
    }

    fn lookahead(&self, context: Context) -> (Token, &'a str) {
        self.item(self.position, context)
    }

    fn consume(&mut self, context: Context) -> (Token, &'a str) {
        let item = self.item(self.position, context);
        if self.position < self.items.len() {
            self.position += 1;
        }
        item
    }

    fn parse(&mut self) -> ParseResult<Vec<Requirement>> {
        let mut requirements = Vec::new();
        loop {
            let (token, literal) = self.lookahead(Context::Values);
            match token {
                Token::Identifier | Token::DoesNotExist => {
                    let r = self
                        .parse_requirement()
                        .map_err(|e| format!("unable to parse requirement: {e}"))?;
                    requirements.push(r);
                    let (t, l) = self.consume(Context::Values);
                    match t {
                        Token::EndOfString => return Ok(requirements),
                        Token::Comma => {
                            let (t2, l2) = self.lookahead(Context::Values);
                            if t2 != Token::Identifier && t2 != Token::DoesNotExist {
                                return Err(format!(
                                    "found '{l2}', expected: identifier after ','"
                                ));
                            }
                        }
                        _ => return Err(format!("found '{l}', expected: ',' or 'end of string'")),
                    }
                }
                Token::EndOfString => return Ok(requirements),
                _ => {
                    return Err(format!(
                        "found '{literal}', expected: !, identifier, or 'end of string'"
                    ));
                }
            }
        }
    }

    fn parse_requirement(&mut self) -> ParseResult<Requirement> {
        let (key, operator) = self.parse_key_and_infer_operator()?;
        if let Some(op @ (Operator::Exists | Operator::DoesNotExist)) = operator {
            return new_requirement(key.to_string(), op, Vec::new());
        }
        let operator = self.parse_operator()?;
        let values = match operator {
            Operator::In | Operator::NotIn => self.parse_values()?,
            _ => self.parse_exact_value()?,
        };
        new_requirement(key.to_string(), operator, values.into_iter().collect())
    }

    fn parse_key_and_infer_operator(&mut self) -> ParseResult<(&'a str, Option<Operator>)> {
        let mut operator = None;
        let (mut token, mut literal) = self.consume(Context::Values);
        if token == Token::DoesNotExist {
            operator = Some(Operator::DoesNotExist);
            (token, literal) = self.consume(Context::Values);
        }
        if token != Token::Identifier {
            return Err(format!("found '{literal}', expected: identifier"));
        }
        let key_errs = qualified_name_errors(literal);
        if !key_errs.is_empty() {
            // Upstream validates with a nil field path here.
            return Err(invalid_string("<nil>", literal, &key_errs.join("; ")));
        }
        let (next, _) = self.lookahead(Context::Values);
        if matches!(next, Token::EndOfString | Token::Comma) && operator.is_none() {
            operator = Some(Operator::Exists);
        }
        Ok((literal, operator))
    }

    fn parse_operator(&mut self) -> ParseResult<Operator> {
        let (token, literal) = self.consume(Context::KeyAndOperator);
        Ok(match token {
            Token::In => Operator::In,
            Token::Equals => Operator::Equals,
            Token::DoubleEquals => Operator::DoubleEquals,
            Token::GreaterThan => Operator::GreaterThan,
            Token::LessThan => Operator::LessThan,
            Token::NotIn => Operator::NotIn,
            Token::NotEquals => Operator::NotEquals,
            _ => {
                return Err(format!(
                    "found '{literal}', expected: in, notin, =, ==, !=, gt, lt"
                ));
            }
        })
    }

    fn parse_values(&mut self) -> ParseResult<BTreeSet<String>> {
        let (token, literal) = self.consume(Context::Values);
        if token != Token::OpenPar {
            return Err(format!("found '{literal}' expected: '('"));
        }
        let (token, literal) = self.lookahead(Context::Values);
        match token {
            Token::Identifier | Token::Comma => {
                let set = self.parse_identifiers_list()?;
                let (token, _) = self.consume(Context::Values);
                if token != Token::ClosedPar {
                    return Err(format!("found '{literal}', expected: ')'"));
                }
                Ok(set)
            }
            Token::ClosedPar => {
                self.consume(Context::Values);
                Ok(BTreeSet::from([String::new()]))
            }
            _ => Err(format!(
                "found '{literal}', expected: ',', ')' or identifier"
            )),
        }
    }

    /// v1.33 behaviour: `,,` consumes the second comma, so `(a,,)` is an
    /// error (upstream relaxed this in v1.35).
    fn parse_identifiers_list(&mut self) -> ParseResult<BTreeSet<String>> {
        let mut set = BTreeSet::new();
        loop {
            let (token, literal) = self.consume(Context::Values);
            match token {
                Token::Identifier => {
                    set.insert(literal.to_string());
                    let (next, next_literal) = self.lookahead(Context::Values);
                    match next {
                        Token::Comma => continue,
                        Token::ClosedPar => return Ok(set),
                        _ => return Err(format!("found '{next_literal}', expected: ',' or ')'")),
                    }
                }
                Token::Comma => {
                    if set.is_empty() {
                        set.insert(String::new());
                    }
                    let (next, _) = self.lookahead(Context::Values);
                    if next == Token::ClosedPar {
                        set.insert(String::new());
                        return Ok(set);
                    }
                    if next == Token::Comma {
                        self.consume(Context::Values);
                        set.insert(String::new());
                    }
                }
                _ => return Err(format!("found '{literal}', expected: ',', or identifier")),
            }
        }
    }

    fn parse_exact_value(&mut self) -> ParseResult<BTreeSet<String>> {
        let (token, _) = self.lookahead(Context::Values);
        if matches!(token, Token::EndOfString | Token::Comma) {
            return Ok(BTreeSet::from([String::new()]));
        }
        let (token, literal) = self.consume(Context::Values);
        if token == Token::Identifier {
            return Ok(BTreeSet::from([literal.to_string()]));
        }
        Err(format!("found '{literal}', expected: identifier"))
    }
}

#[cfg(test)]
#[path = "label_tests.rs"]
mod tests;
