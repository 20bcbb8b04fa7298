//! kubectl's JSONPath dialect, as `k8s.io/client-go/util/jsonpath` (v1.33)
//! parses and evaluates it over decoded JSON, for CRD
//! `additionalPrinterColumns[].jsonPath` and `selectableFields[].jsonPath`.
//!
//! # Contract
//!
//! - [`JsonPath::parse`] takes a CRD path (`.spec.replicas`) and parses
//!   `{` + path + `}` exactly as upstream's parser does, accepting and
//!   rejecting the same texts with the same error messages (`unclosed
//!   action`, `unterminated array`, `invalid array index x`, `unrecognized
//!   character in action: U+002A '*'`, …).
//! - [`JsonPath::find_results`] is upstream's `FindResults` with
//!   `AllowMissingKeys(true)` (what the table convertor and the selectable
//!   fields use): one result list per top-level node, results in
//!   upstream's order. Errors carry upstream's text (`array index out of
//!   bounds: index 3, length 1`, `unrecognized identifier x`, …).
//!   [`JsonPath::find`] is its first list, empty on error — exactly what
//!   the table convertor reads.
//! - Supported: fields (`.a`, `.a\.b`, `['a.b']`), `$`/`@`, indexes and
//!   slices (`[0]`, `[-1]`, `[1:3]`, `[::2]`, `[*]`), wildcards (`.*`),
//!   recursive descent (`..name`), unions (`[0,2]`, `['a','b']`), filters
//!   (`[?(@.type=="Ready")]` with `==`, `!=`, `<`, `<=`, `>`, `>=` over
//!   strings, integers, floats and booleans, and existence `[?(@.x)]`),
//!   literals (`"text"`, numbers, `true`), `range`/`end` blocks.
//! - Numbers are typed as Go's unstructured decoder types them: a JSON
//!   integer that fits `int64` is an integer, anything else a float
//!   (`1 == 1.0` is a comparison error, as upstream).
//! - Maps are visited in key order (Go visits them in random order).
//! - **Never panics**, and never recurses without bound: nested
//!   sub-expressions (unions, bracket keys, filters) deeper than
//!   [`MAX_NESTING`] and `range` blocks nested deeper than it are errors;
//!   recursive descent walks the data with an explicit stack.
//!
//! # Deviations
//!
//! - Upstream's `JSONPath` rewrites its own node list while evaluating a
//!   `range`, so a second evaluation of the same parsed path starts after
//!   the first `range`; here every evaluation behaves like the first.
//! - Go's `unicode.IsLetter`/`IsDigit` are approximated with Rust's
//!   `char::is_alphabetic`/`is_numeric` for non-ASCII characters; `\x`/octal
//!   escapes that make invalid UTF-8 are replaced with U+FFFD.

use std::borrow::Cow;

use serde_json::Value;

/// How deeply sub-expressions (a union member, a bracket key, a filter
/// side) and `range` blocks may nest.
pub const MAX_NESTING: usize = 32;

/// One evaluated value: borrowed from the object, or owned when the
/// expression makes it (literals, the bytes a wildcard takes from a
/// string).
pub type Found<'a> = Cow<'a, Value>;

/// A parsed JSONPath expression. Cheap to clone; `Send + Sync`.
#[derive(Clone, Debug, PartialEq)]
pub struct JsonPath {
    source: String,
    root: Vec<Node>,
}

/// A parsed node (upstream's `node.go`).
#[derive(Clone, Debug, PartialEq)]
enum Node {
    /// Literal text, outside an action or quoted inside one.
    Text(String),
    /// An action `{…}` or a sub-expression.
    List(Vec<Node>),
    /// `.name`.
    Field(String),
    /// A bare word: `range`, `end`, or an error at evaluation.
    Identifier(String),
    /// `[start:end:step]`.
    Array([Param; 3]),
    /// `[?(left op right)]`; `op` is `exists` for `[?(left)]`.
    Filter(Box<Filter>),
    /// An integer literal.
    Int(i64),
    /// A float literal.
    Float(f64),
    /// `true` / `false`.
    Bool(bool),
    /// `.*` (and `[*]` is an `Array` over everything).
    Wildcard,
    /// `..`.
    Recursive,
    /// `[a,b,…]`.
    Union(Vec<Vec<Node>>),
}

/// One slice parameter (upstream's `ParamsEntry`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
struct Param {
    value: i64,
    known: bool,
    derived: bool,
}

#[derive(Clone, Debug, PartialEq)]
struct Filter {
    left: Vec<Node>,
    right: Vec<Node>,
    op: String,
}

impl JsonPath {
    /// Parses a CRD JSONPath (`.status.conditions[?(@.type=="Ready")].status`)
    /// as upstream parses `{` + `expr` + `}`. The error is upstream's parser
    /// error text.
    pub fn parse(expr: &str) -> Result<JsonPath, String> {
        Self::parse_template(&format!("{{{expr}}}"))
    }

    /// Parses a whole template (text with `{…}` actions), as upstream's
    /// `JSONPath.Parse`.
    pub fn parse_template(template: &str) -> Result<JsonPath, String> {
        Ok(JsonPath {
            source: template.to_owned(),
            root: parse_template(template, 0)?,
        })
    }

    /// The template this path was parsed from (with its braces).
    pub fn source(&self) -> &str {
        &self.source
    }

    /// Upstream's `FindResults` with missing keys allowed: one list per
    /// top-level node of the template (for a CRD path, exactly one).
    pub fn find_results<'a>(&self, obj: &'a Value) -> Result<Vec<Vec<Found<'a>>>, String> {
        let mut eval = Eval::default();
        eval.find_results(&self.root, 0, Cow::Borrowed(obj), 0)
    }

    /// The values the first action selects, in order; empty when nothing
    /// matches or evaluation fails (as the table convertor treats both).
    pub fn find<'a>(&self, obj: &'a Value) -> Vec<Found<'a>> {
        self.find_results(obj)
            .ok()
            .and_then(|lists| lists.into_iter().next())
            .unwrap_or_default()
    }
}

// ---------------------------------------------------------------- parser

/// The lexer state of upstream's `Parser`.
struct Parser<'s> {
    input: &'s str,
    pos: usize,
    start: usize,
    width: usize,
    depth: usize,
}

/// Parses a template into its top-level nodes (`Text` and `List`).
fn parse_template(text: &str, depth: usize) -> Result<Vec<Node>, String> {
    if depth > MAX_NESTING {
        return Err("jsonpath expression is nested too deeply".to_owned());
    }
    let mut p = Parser {
        input: text,
        pos: 0,
        start: 0,
        width: 0,
        depth,
    };
    let mut root = Vec::new();
    loop {
        match p.input[p.pos..].find('{') {
            None => {
                if p.input.len() > p.start {
                    root.push(Node::Text(p.input[p.start..].to_owned()));
                }
                return Ok(root);
            }
            Some(at) => {
                p.pos += at;
                if p.pos > p.start {
                    root.push(Node::Text(p.consume().to_owned()));
                }
                p.pos += 1;
                p.consume();
                root.push(Node::List(p.parse_action()?));
            }
        }
    }
}

/// Upstream's `parseAction`: the nodes of `{text}`'s first action.
fn parse_sub(text: &str, depth: usize) -> Result<Vec<Node>, String> {
    match parse_template(&format!("{{{text}}}"), depth + 1)?
        .into_iter()
        .next()
    {
        Some(Node::List(nodes)) => Ok(nodes),
        _ => Err("unclosed action".to_owned()),
    }
}

impl<'s> Parser<'s> {
    fn next(&mut self) -> Option<char> {
        match self.input[self.pos..].chars().next() {
            None => {
                self.width = 0;
                None
            }
            Some(c) => {
                self.width = c.len_utf8();
                self.pos += self.width;
                Some(c)
            }
        }
    }

    fn backup(&mut self) {
        self.pos -= self.width;
    }

    fn peek(&mut self) -> Option<char> {
        let c = self.next();
        self.backup();
        c
    }

    fn consume(&mut self) -> &'s str {
        let value = &self.input[self.start..self.pos];
        self.start = self.pos;
        value
    }

    /// The byte two before `pos` is a backslash (upstream's escape test).
    fn escaped(&self) -> bool {
        self.pos
            .checked_sub(2)
            .and_then(|i| self.input.as_bytes().get(i))
            == Some(&b'\\')
    }

    /// `parseInsideAction` up to and including the closing `}`.
    fn parse_action(&mut self) -> Result<Vec<Node>, String> {
        let mut cur = Vec::new();
        loop {
            let rest = &self.input[self.pos..];
            if rest.starts_with('}') {
                self.pos += 1;
                self.consume();
                return Ok(cur);
            }
            if rest.starts_with("[?(") {
                self.parse_filter(&mut cur)?;
                continue;
            }
            if rest.starts_with("..") {
                self.parse_recursive(&mut cur)?;
                continue;
            }
            match self.next() {
                None | Some('\r' | '\n') => return Err("unclosed action".to_owned()),
                Some(' ' | '@' | '$') => {
                    self.consume();
                }
                Some('[') => self.parse_array(&mut cur)?,
                Some(q @ ('"' | '\'')) => self.parse_quote(&mut cur, q)?,
                Some('.') => self.parse_field(&mut cur),
                Some(c) if c == '+' || c == '-' || is_digit(c) => {
                    self.backup();
                    self.parse_number(&mut cur)?;
                }
                Some(c) if is_alphanumeric(c) => {
                    self.backup();
                    self.parse_identifier(&mut cur);
                }
                Some(c) => {
                    return Err(format!(
                        "unrecognized character in action: {}",
                        go_unicode(c)
                    ));
                }
            }
        }
    }

    fn parse_identifier(&mut self, cur: &mut Vec<Node>) {
        loop {
            let r = self.next();
            if is_terminator(r) {
                self.backup();
                break;
            }
        }
        let value = self.consume();
        cur.push(match value {
            "true" => Node::Bool(true),
            "false" => Node::Bool(false),
            _ => Node::Identifier(value.to_owned()),
        });
    }

    fn parse_recursive(&mut self, cur: &mut Vec<Node>) -> Result<(), String> {
        if cur.last() == Some(&Node::Recursive) {
            return Err("invalid multiple recursive descent".to_owned());
        }
        self.pos += 2;
        self.consume();
        cur.push(Node::Recursive);
        if self.peek().is_some_and(is_alphanumeric) {
            self.parse_field(cur);
        }
        Ok(())
    }

    fn parse_number(&mut self, cur: &mut Vec<Node>) -> Result<(), String> {
        if matches!(self.peek(), Some('+' | '-')) {
            self.next();
        }
        loop {
            match self.next() {
                Some(c) if c == '.' || is_digit(c) => {}
                _ => {
                    self.backup();
                    break;
                }
            }
        }
        let value = self.consume();
        if let Some(i) = go_atoi(value) {
            cur.push(Node::Int(i));
            return Ok(());
        }
        match value.parse::<f64>() {
            Ok(f) if f.is_finite() && value.is_ascii() => {
                cur.push(Node::Float(f));
                Ok(())
            }
            _ => Err(format!("cannot parse number {value}")),
        }
    }

    fn parse_array(&mut self, cur: &mut Vec<Node>) -> Result<(), String> {
        loop {
            match self.next() {
                None | Some('\n') => return Err("unterminated array".to_owned()),
                Some(']') => break,
                Some(_) => {}
            }
        }
        let text = self.consume();
        let mut text = text.get(1..text.len().saturating_sub(1)).unwrap_or("");
        if text == "*" {
            text = ":";
        }

        let parts: Vec<&str> = text.split(',').collect();
        if parts.len() > 1 {
            let mut union = Vec::with_capacity(parts.len());
            for part in parts {
                union.push(parse_sub(
                    &format!("[{}]", part.trim_matches(' ')),
                    self.depth,
                )?);
            }
            cur.push(Node::Union(union));
            return Ok(());
        }

        if let Some(key) = dict_key(text) {
            cur.extend(parse_sub(&format!(".{key}"), self.depth)?);
            return Ok(());
        }

        let groups = slice_groups(text).ok_or_else(|| format!("invalid array index {text}"))?;
        let mut params = [Param::default(); 3];
        for i in 0..3 {
            let mut value = groups[i];
            if !value.is_empty() {
                if i > 0 {
                    value = &value[1..];
                }
                if i > 0 && value.is_empty() {
                    params[i].known = false;
                } else {
                    params[i].known = true;
                    params[i].value = go_atoi(value)
                        .ok_or_else(|| format!("array index {value} is not a number"))?;
                }
            } else if i == 1 {
                params[i] = Param {
                    value: params[0].value.wrapping_add(1),
                    known: true,
                    derived: true,
                };
            }
        }
        cur.push(Node::Array(params));
        Ok(())
    }

    fn parse_filter(&mut self, cur: &mut Vec<Node>) -> Result<(), String> {
        self.pos += 3;
        self.consume();
        let mut begin = false;
        let mut end = false;
        let mut pair = '"';
        loop {
            match self.next() {
                None | Some('\n') => return Err("unterminated filter".to_owned()),
                Some(q @ ('"' | '\'')) => {
                    if !begin {
                        begin = true;
                        pair = q;
                        continue;
                    }
                    if !self.escaped() && q == pair {
                        end = true;
                    }
                }
                Some(')') if begin == end => break,
                Some(_) => {}
            }
        }
        if self.next() != Some(']') {
            return Err("unclosed array expect ]".to_owned());
        }
        let text = self.consume();
        let text = text.get(..text.len().saturating_sub(2)).unwrap_or("");
        let filter = match split_comparison(text) {
            None => Filter {
                left: parse_sub(text, self.depth)?,
                right: Vec::new(),
                op: "exists".to_owned(),
            },
            Some((left, op, right)) => Filter {
                left: parse_sub(left, self.depth)?,
                right: parse_sub(right, self.depth)?,
                op: op.to_owned(),
            },
        };
        cur.push(Node::Filter(Box::new(filter)));
        Ok(())
    }

    fn parse_quote(&mut self, cur: &mut Vec<Node>, end: char) -> Result<(), String> {
        loop {
            match self.next() {
                None | Some('\n') => return Err("unterminated quoted string".to_owned()),
                Some(c) if c == end && !self.escaped() => break,
                Some(_) => {}
            }
        }
        let value = self.consume();
        let text = unquote_extend(value)
            .ok_or_else(|| format!("unquote string {value} error invalid syntax"))?;
        cur.push(Node::Text(text));
        Ok(())
    }

    fn parse_field(&mut self, cur: &mut Vec<Node>) {
        self.consume();
        loop {
            match self.next() {
                Some('\\') => {
                    self.next();
                }
                r if is_terminator(r) => {
                    self.backup();
                    break;
                }
                _ => {}
            }
        }
        let value = self.consume();
        cur.push(if value == "*" {
            Node::Wildcard
        } else {
            Node::Field(value.replace('\\', ""))
        });
    }
}

/// Upstream's `isTerminator` (`None` is end of input).
fn is_terminator(r: Option<char>) -> bool {
    match r {
        None => true,
        Some(c) => matches!(
            c,
            ' ' | '\t' | '\r' | '\n' | '.' | ',' | '[' | ']' | '$' | '@' | '{' | '}'
        ),
    }
}

/// Go's `unicode.IsDigit` (ASCII exactly; other scripts approximated).
fn is_digit(c: char) -> bool {
    c.is_ascii_digit() || (!c.is_ascii() && c.is_numeric())
}

/// Upstream's `isAlphaNumeric`: `_`, letters, digits.
fn is_alphanumeric(c: char) -> bool {
    c == '_' || c.is_alphabetic() || is_digit(c)
}

/// Go's `%#U`: `U+002A '*'` (the character only when printable).
fn go_unicode(c: char) -> String {
    let code = u32::from(c);
    if c.is_control() || (c.is_whitespace() && c != ' ') {
        format!("U+{code:04X}")
    } else {
        format!("U+{code:04X} '{c}'")
    }
}

/// Go's `strconv.Atoi` for 64-bit `int`: optional sign, ASCII digits.
fn go_atoi(s: &str) -> Option<i64> {
    let digits = s.strip_prefix(['+', '-']).unwrap_or(s);
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    s.parse().ok()
}

/// `^'([^']*)'$`: the key of `['key']`.
fn dict_key(text: &str) -> Option<&str> {
    let inner = text.strip_prefix('\'')?.strip_suffix('\'')?;
    (!inner.contains('\'')).then_some(inner)
}

/// `^(-?[\d]*)(:-?[\d]*)?(:-?[\d]*)?$`: the three groups (a group that
/// did not match is "").
fn slice_groups(text: &str) -> Option<[&str; 3]> {
    fn simple(s: &str) -> bool {
        let s = s.strip_prefix('-').unwrap_or(s);
        s.bytes().all(|b| b.is_ascii_digit())
    }
    let mut groups = [""; 3];
    let mut rest = text;
    for (i, group) in groups.iter_mut().enumerate() {
        let body = if i == 0 {
            rest
        } else if let Some(body) = rest.strip_prefix(':') {
            body
        } else {
            break;
        };
        let len = body.find(':').unwrap_or(body.len());
        if !simple(&body[..len]) {
            return None;
        }
        let taken = len + usize::from(i > 0);
        *group = &rest[..taken];
        rest = &rest[taken..];
    }
    rest.is_empty().then_some(groups)
}

/// `^([^!<>=]+)([!<>=]+)(.+?)$` over a filter's text: left, operator,
/// right.
fn split_comparison(text: &str) -> Option<(&str, &str, &str)> {
    let is_op = |b: u8| matches!(b, b'!' | b'<' | b'>' | b'=');
    let bytes = text.as_bytes();
    let first = bytes.iter().position(|&b| is_op(b))?;
    if first == 0 {
        return None;
    }
    let mut end = first;
    while end < bytes.len() && is_op(bytes[end]) {
        end += 1;
    }
    if end == bytes.len() {
        // `(.+?)` needs one character: the operator gives one back.
        end -= 1;
    }
    if end == first {
        return None;
    }
    // The right side is `.+`: no newline (the filter scanner already
    // rejects one).
    Some((&text[..first], &text[first..end], &text[end..]))
}

/// Upstream's `UnquoteExtend`: `strconv.Unquote` that also takes single
/// quotes. `None` is Go's `invalid syntax`.
fn unquote_extend(s: &str) -> Option<String> {
    let bytes = s.as_bytes();
    let n = bytes.len();
    if n < 2 {
        return None;
    }
    let quote = bytes[0];
    if quote != bytes[n - 1] || (quote != b'"' && quote != b'\'') {
        return None;
    }
    let inner = &s[1..n - 1];
    if !inner.contains('\\') && !inner.contains(char::from(quote)) {
        return Some(inner.to_owned());
    }
    let mut out: Vec<u8> = Vec::with_capacity(inner.len());
    let mut rest = inner;
    while !rest.is_empty() {
        rest = unquote_char(rest, quote, &mut out)?;
    }
    Some(match String::from_utf8(out) {
        Ok(text) => text,
        Err(e) => String::from_utf8_lossy(e.as_bytes()).into_owned(),
    })
}

/// Go's `strconv.UnquoteChar`: appends one (possibly escaped) character
/// of `s` to `out`, returns the rest.
fn unquote_char<'t>(s: &'t str, quote: u8, out: &mut Vec<u8>) -> Option<&'t str> {
    let c = *s.as_bytes().first()?;
    if c == quote {
        return None;
    }
    if c != b'\\' {
        let ch = s.chars().next()?;
        let mut buf = [0u8; 4];
        out.extend_from_slice(ch.encode_utf8(&mut buf).as_bytes());
        return Some(&s[ch.len_utf8()..]);
    }
    let e = *s.as_bytes().get(1)?;
    if !e.is_ascii() {
        // Go: no escape starts with a non-ASCII character.
        return None;
    }
    let rest = s.get(2..)?;
    let simple = |b: u8, out: &mut Vec<u8>| {
        out.push(b);
        Some(rest)
    };
    match e {
        b'a' => simple(0x07, out),
        b'b' => simple(0x08, out),
        b'f' => simple(0x0c, out),
        b'n' => simple(b'\n', out),
        b'r' => simple(b'\r', out),
        b't' => simple(b'\t', out),
        b'v' => simple(0x0b, out),
        b'\\' => simple(b'\\', out),
        b'\'' | b'"' if e == quote => simple(e, out),
        b'x' | b'u' | b'U' => {
            let len = match e {
                b'x' => 2,
                b'u' => 4,
                _ => 8,
            };
            let hex = rest.get(..len)?;
            if !hex.bytes().all(|b| b.is_ascii_hexdigit()) {
                return None;
            }
            let v = u32::from_str_radix(hex, 16).ok()?;
            if e == b'x' {
                out.push(u8::try_from(v).ok()?);
            } else {
                let ch = char::from_u32(v)?;
                let mut buf = [0u8; 4];
                out.extend_from_slice(ch.encode_utf8(&mut buf).as_bytes());
            }
            rest.get(len..)
        }
        b'0'..=b'7' => {
            let digits = rest.as_bytes().get(..2)?;
            let mut v = u32::from(e - b'0');
            for &d in digits {
                if !(b'0'..=b'7').contains(&d) {
                    return None;
                }
                v = (v << 3) | u32::from(d - b'0');
            }
            out.push(u8::try_from(v).ok()?);
            rest.get(2..)
        }
        _ => None,
    }
}

// ------------------------------------------------------------- evaluator

/// A failed step: upstream returns a partial value list with its error,
/// which existence filters still count.
struct Fail<'a> {
    partial: Vec<Found<'a>>,
    message: String,
}

type Step<'a> = Result<Vec<Found<'a>>, Fail<'a>>;

fn fail<'a>(partial: Vec<Found<'a>>, message: impl Into<String>) -> Fail<'a> {
    Fail {
        partial,
        message: message.into(),
    }
}

/// Upstream's range bookkeeping for one evaluation.
#[derive(Default)]
struct Eval {
    begin_range: usize,
    in_range: usize,
    end_range: usize,
    last_end: Option<usize>,
}

impl Eval {
    /// `FindResults` over `nodes[start..]` (upstream re-points its root
    /// at that suffix for a range's body).
    fn find_results<'a>(
        &mut self,
        nodes: &[Node],
        start: usize,
        data: Found<'a>,
        depth: usize,
    ) -> Result<Vec<Vec<Found<'a>>>, String> {
        if depth > MAX_NESTING {
            return Err("jsonpath range blocks are nested too deeply".to_owned());
        }
        let cur = vec![data];
        let mut full = Vec::new();
        let mut i = start;
        while let Some(node) = nodes.get(i) {
            let results = self.walk(&cur, node).map_err(|f| f.message)?;
            if self.end_range > 0 && self.end_range <= self.in_range {
                self.end_range -= 1;
                self.last_end = Some(i);
                break;
            }
            if self.begin_range > 0 {
                self.begin_range -= 1;
                self.in_range += 1;
                if results.is_empty() {
                    self.find_results(nodes, i + 1, Cow::Owned(Value::Null), depth + 1)?;
                } else {
                    for value in results {
                        full.extend(self.find_results(nodes, i + 1, value, depth + 1)?);
                    }
                }
                self.in_range -= 1;
                if let Some(k) = self.last_end.filter(|&k| k > i && k < nodes.len()) {
                    i = k;
                }
                i += 1;
                continue;
            }
            full.push(results);
            i += 1;
        }
        Ok(full)
    }

    fn walk<'a>(&mut self, input: &[Found<'a>], node: &Node) -> Step<'a> {
        match node {
            Node::List(nodes) => self.eval_list(input, nodes),
            Node::Text(text) => Ok(vec![Cow::Owned(Value::String(text.clone()))]),
            Node::Field(name) => eval_field(input, name),
            Node::Array(params) => eval_array(input, params),
            Node::Filter(filter) => self.eval_filter(input, filter),
            Node::Int(i) => Ok(literal(input, Value::from(*i))),
            Node::Float(f) => Ok(literal(input, Value::from(*f))),
            Node::Bool(b) => Ok(literal(input, Value::Bool(*b))),
            Node::Wildcard => Ok(eval_wildcard(input)),
            Node::Recursive => Ok(eval_recursive(input)),
            Node::Union(lists) => {
                let mut result = Vec::new();
                for list in lists {
                    match self.eval_list(input, list) {
                        Ok(found) => result.extend(found),
                        Err(f) => return Err(fail(input.to_vec(), f.message)),
                    }
                }
                Ok(result)
            }
            Node::Identifier(name) => match name.as_str() {
                "range" => {
                    self.begin_range += 1;
                    Ok(input.to_vec())
                }
                "end" if self.in_range > 0 => {
                    self.end_range += 1;
                    Ok(Vec::new())
                }
                "end" => Err(fail(Vec::new(), "not in range, nothing to end")),
                _ => Err(fail(
                    input.to_vec(),
                    format!("unrecognized identifier {name}"),
                )),
            },
        }
    }

    fn eval_list<'a>(&mut self, input: &[Found<'a>], nodes: &[Node]) -> Step<'a> {
        let mut cur = input.to_vec();
        for node in nodes {
            cur = self.walk(&cur, node)?;
        }
        Ok(cur)
    }

    fn eval_filter<'a>(&mut self, input: &[Found<'a>], filter: &Filter) -> Step<'a> {
        let mut results = Vec::new();
        for value in input {
            let Some(items) = elements(value) else {
                return Err(fail(
                    input.to_vec(),
                    format!(
                        "{} is not array or slice and cannot be filtered",
                        go_print(value)
                    ),
                ));
            };
            for item in items {
                let temp = [item];
                let lefts = self.eval_list(&temp, &filter.left);
                let [item] = temp;
                if filter.op == "exists" {
                    let found = match lefts {
                        Ok(found) => !found.is_empty(),
                        Err(f) => !f.partial.is_empty(),
                    };
                    if found {
                        results.push(item);
                    }
                    continue;
                }
                let lefts = lefts.map_err(|f| fail(input.to_vec(), f.message))?;
                let left = match lefts.as_slice() {
                    [] => continue,
                    [one] => one.clone(),
                    _ => {
                        return Err(fail(
                            input.to_vec(),
                            "can only compare one element at a time",
                        ));
                    }
                };
                let rights = self
                    .eval_list(std::slice::from_ref(&item), &filter.right)
                    .map_err(|f| fail(input.to_vec(), f.message))?;
                let right = match rights.as_slice() {
                    [] => continue,
                    [one] => one.clone(),
                    _ => {
                        return Err(fail(
                            input.to_vec(),
                            "can only compare one element at a time",
                        ));
                    }
                };
                match compare(&filter.op, &left, &right) {
                    Ok(true) => results.push(item),
                    Ok(false) => {}
                    Err(message) => return Err(fail(results, message)),
                }
            }
        }
        Ok(results)
    }
}

/// A literal node yields one copy per input value.
fn literal<'a>(input: &[Found<'a>], value: Value) -> Vec<Found<'a>> {
    vec![Cow::Owned(value); input.len()]
}

fn eval_field<'a>(input: &[Found<'a>], name: &str) -> Step<'a> {
    let mut results = Vec::new();
    for value in input {
        let found = match value {
            Cow::Borrowed(v) => v.as_object().and_then(|m| m.get(name)).map(Cow::Borrowed),
            Cow::Owned(v) => v
                .as_object()
                .and_then(|m| m.get(name))
                .cloned()
                .map(Cow::Owned),
        };
        results.extend(found);
    }
    // Missing keys are allowed (the table convertor's setting): no match is
    // an empty result, never `… is not found`.
    Ok(results)
}

fn eval_array<'a>(input: &[Found<'a>], node: &[Param; 3]) -> Step<'a> {
    let mut result = Vec::new();
    for value in input {
        if value.is_null() {
            continue;
        }
        let Some(items) = elements(value) else {
            return Err(fail(
                input.to_vec(),
                format!("{} is not array or slice", go_type(value)),
            ));
        };
        let len = i64::try_from(items.len()).unwrap_or(i64::MAX);
        let mut params = *node;
        if !params[0].known {
            params[0].value = 0;
        }
        if params[0].value < 0 {
            params[0].value = params[0].value.wrapping_add(len);
        }
        if !params[1].known {
            params[1].value = len;
        }
        if params[1].value < 0 || (params[1].value == 0 && params[1].derived) {
            params[1].value = params[1].value.wrapping_add(len);
        }
        let (from, to) = (params[0].value, params[1].value);
        if to == from {
            // Upstream returns what it has so far.
            return Ok(result);
        }
        if from >= len || from < 0 {
            return Err(fail(
                input.to_vec(),
                format!("array index out of bounds: index {from}, length {len}"),
            ));
        }
        if to > len || to < 0 {
            return Err(fail(
                input.to_vec(),
                format!(
                    "array index out of bounds: index {}, length {len}",
                    to.wrapping_sub(1)
                ),
            ));
        }
        if from > to {
            return Err(fail(
                input.to_vec(),
                format!("starting index {from} is greater than ending index {to}"),
            ));
        }
        let step = if params[2].known {
            if params[2].value <= 0 {
                return Err(fail(input.to_vec(), "step must be > 0"));
            }
            usize::try_from(params[2].value).unwrap_or(usize::MAX)
        } else {
            1
        };
        let (from, to) = (
            usize::try_from(from).unwrap_or(0),
            usize::try_from(to).unwrap_or(0),
        );
        result.extend(
            items
                .into_iter()
                .skip(from)
                .take(to.saturating_sub(from))
                .step_by(step),
        );
    }
    Ok(result)
}

fn eval_wildcard<'a>(input: &[Found<'a>]) -> Vec<Found<'a>> {
    input.iter().flat_map(children).collect()
}

/// `..`: every value that has children (non-empty objects, arrays and
/// strings), each before its descendants, walked with an explicit stack.
fn eval_recursive<'a>(input: &[Found<'a>]) -> Vec<Found<'a>> {
    let mut result = Vec::new();
    let mut stack: Vec<Found<'a>> = input.iter().rev().cloned().collect();
    while let Some(value) = stack.pop() {
        match value.as_ref() {
            Value::String(s) if !s.is_empty() => result.push(value),
            Value::Array(a) if !a.is_empty() => {
                let kids = children(&value);
                result.push(value);
                stack.extend(kids.into_iter().rev());
            }
            Value::Object(m) if !m.is_empty() => {
                let kids = children(&value);
                result.push(value);
                stack.extend(kids.into_iter().rev());
            }
            _ => {}
        }
    }
    result
}

/// The items of an array value.
fn elements<'a>(value: &Found<'a>) -> Option<Vec<Found<'a>>> {
    match value {
        Cow::Borrowed(v) => v
            .as_array()
            .map(|items| items.iter().map(Cow::Borrowed).collect()),
        Cow::Owned(v) => v
            .as_array()
            .map(|items| items.iter().cloned().map(Cow::Owned).collect()),
    }
}

/// What a wildcard takes from a value: an object's values, an array's
/// items, a string's bytes (Go indexes strings by byte).
fn children<'a>(value: &Found<'a>) -> Vec<Found<'a>> {
    match value {
        Cow::Borrowed(Value::Object(m)) => m.values().map(Cow::Borrowed).collect(),
        Cow::Owned(Value::Object(m)) => m.values().cloned().map(Cow::Owned).collect(),
        Cow::Borrowed(Value::String(s)) | Cow::Owned(Value::String(s)) => {
            s.bytes().map(|b| Cow::Owned(Value::from(b))).collect()
        }
        other => elements(other).unwrap_or_default(),
    }
}

/// The Go type name upstream's errors print.
fn go_type(value: &Value) -> &'static str {
    match value {
        Value::Null => "<nil>",
        Value::Bool(_) => "bool",
        Value::Number(n) if n.is_i64() => "int64",
        Value::Number(_) => "float64",
        Value::String(_) => "string",
        Value::Array(_) => "[]interface {}",
        Value::Object(_) => "map[string]interface {}",
    }
}

/// A value in an error message.
fn go_print(value: &Value) -> String {
    match value {
        Value::Null => "<nil>".to_owned(),
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

/// A value as the comparison functions of upstream's forked
/// `text/template` see it.
#[derive(Clone, Copy)]
enum Scalar<'v> {
    Bool(bool),
    Int(i64),
    Float(f64),
    Str(&'v str),
}

const BAD_TYPE: &str = "invalid type for comparison";
const INCOMPATIBLE: &str = "incompatible types for comparison";

fn scalar(value: &Value) -> Result<Scalar<'_>, String> {
    match value {
        Value::Bool(b) => Ok(Scalar::Bool(*b)),
        Value::Number(n) => Ok(match n.as_i64() {
            Some(i) => Scalar::Int(i),
            None => Scalar::Float(n.as_f64().unwrap_or(f64::NAN)),
        }),
        Value::String(s) => Ok(Scalar::Str(s)),
        _ => Err(BAD_TYPE.to_owned()),
    }
}

fn equal(a: &Value, b: &Value) -> Result<bool, String> {
    Ok(match (scalar(a)?, scalar(b)?) {
        (Scalar::Bool(x), Scalar::Bool(y)) => x == y,
        (Scalar::Int(x), Scalar::Int(y)) => x == y,
        (Scalar::Float(x), Scalar::Float(y)) => x == y,
        (Scalar::Str(x), Scalar::Str(y)) => x == y,
        _ => return Err(INCOMPATIBLE.to_owned()),
    })
}

fn less(a: &Value, b: &Value) -> Result<bool, String> {
    Ok(match (scalar(a)?, scalar(b)?) {
        (Scalar::Bool(_), Scalar::Bool(_)) => return Err(BAD_TYPE.to_owned()),
        (Scalar::Int(x), Scalar::Int(y)) => x < y,
        (Scalar::Float(x), Scalar::Float(y)) => x < y,
        (Scalar::Str(x), Scalar::Str(y)) => x < y,
        _ => return Err(INCOMPATIBLE.to_owned()),
    })
}

/// A filter comparison, as upstream's `evalFilter` dispatches it.
fn compare(op: &str, left: &Value, right: &Value) -> Result<bool, String> {
    match op {
        "<" => less(left, right),
        ">" => Ok(!(less(left, right)? || equal(left, right)?)),
        "==" => equal(left, right),
        "!=" => Ok(!equal(left, right)?),
        "<=" => Ok(less(left, right)? || equal(left, right)?),
        ">=" => Ok(!less(left, right)?),
        _ => Err(format!("unrecognized filter operator {op}")),
    }
}

#[cfg(test)]
#[path = "jsonpath_tests.rs"]
mod tests;
