//! Static checks standing in for cel-go's type checker where a rule is
//! wrong whatever the data, with cel-go's texts: references to undeclared
//! names (`undeclared reference to 'x' (in container '')`), fields the
//! schema does not declare (`undefined field 'x'`, also on `metadata`
//! beyond `name`/`generateName`), literal arguments of `matches`,
//! `duration` and `timestamp` that cannot parse, and results that are
//! certainly not a `bool` (or a `string` for a `messageExpression`).
//! Anything the checks cannot type (`dyn`) passes, so they never reject a
//! rule cel-go accepts, with one exception: two-variable comprehensions
//! (`m.all(k, v, ...)`), which the `cel` crate cannot evaluate, are
//! refused with a message that says so.

use cel::Program;
use cel::common::ast::{EntryExpr, Expr, IdedExpr, LiteralValue};

use super::node::{Kind, Node, StringFormat};

/// Nesting the walk follows (the parser already bounds it lower).
const MAX_DEPTH: usize = 256;

/// Names a rule may use without declaring them: variables, type names,
/// function namespaces.
const KNOWN: [&str; 22] = [
    "self",
    "oldSelf",
    "int",
    "uint",
    "double",
    "bool",
    "string",
    "bytes",
    "list",
    "map",
    "null_type",
    "type",
    "dyn",
    "google",
    "optional",
    "format",
    "sets",
    "ip",
    "net",
    "strings",
    "kubernetes",
    "cel",
];

/// cel-go's two-variable comprehension macros (CEL 1.33 environment),
/// which the `cel` crate's interpreter cannot evaluate.
const TWO_VARIABLE: [&str; 6] = [
    "all",
    "exists",
    "existsOne",
    "transformList",
    "transformMap",
    "transformMapEntry",
];

/// What the checks know of an expression's type.
#[derive(Clone, Copy)]
enum Ty<'n> {
    /// Values of this schema node.
    Node(&'n Node),
    /// `metadata` of the root or an embedded resource: `name` and
    /// `generateName` only.
    Meta,
    /// A scalar of this CEL type (`int`, `string`, ...), from a literal.
    Scalar(&'static str),
    /// Anything else.
    Dyn,
}

impl Ty<'_> {
    /// The CEL type name when it is a known scalar.
    fn scalar(self) -> Option<&'static str> {
        match self {
            Ty::Scalar(t) => Some(t),
            Ty::Node(n) => match n.kind {
                Kind::Integer => Some("int"),
                Kind::Number => Some("double"),
                Kind::Boolean => Some("bool"),
                Kind::String(StringFormat::Plain) => Some("string"),
                Kind::String(StringFormat::Byte) => Some("bytes"),
                Kind::String(StringFormat::Duration) => Some("google.protobuf.Duration"),
                Kind::String(StringFormat::Date | StringFormat::DateTime) => {
                    Some("google.protobuf.Timestamp")
                }
                _ => None,
            },
            _ => None,
        }
    }
}

/// Whether `_op_` accepts a `left` and a `right` of these scalar types
/// (equality needs one type; ordering also takes any two numbers, as
/// cel-go's cross-type numeric comparisons).
fn operands_fit(op: &str, left: &str, right: &str) -> bool {
    let numeric = |t: &str| matches!(t, "int" | "uint" | "double");
    left == right || (op != "_==_" && op != "_!=_" && numeric(left) && numeric(right))
}

/// Why the rule cannot compile (`compilation failed: ...` or `cel
/// expression must evaluate to a bool`), or `None`.
pub(crate) fn check_rule(program: &Program, node: &Node, source: &str) -> Option<String> {
    if let Some(issue) = walk_program(program, node, source) {
        return Some(format!("compilation failed: {issue}"));
    }
    match &program.expression().expr {
        Expr::Literal(LiteralValue::Boolean(_)) => None,
        Expr::Literal(_) | Expr::List(_) | Expr::Map(_) => {
            Some("cel expression must evaluate to a bool".to_owned())
        }
        _ => None,
    }
}

/// As [`check_rule`], for a `messageExpression`.
pub(crate) fn check_message_expression(
    program: &Program,
    node: &Node,
    source: &str,
) -> Option<String> {
    if let Some(issue) = walk_program(program, node, source) {
        return Some(format!("messageExpression compilation failed: {issue}"));
    }
    match &program.expression().expr {
        Expr::Literal(LiteralValue::String(_)) => None,
        Expr::Literal(_) | Expr::List(_) | Expr::Map(_) => {
            Some("messageExpression must evaluate to a string".to_owned())
        }
        _ => None,
    }
}

fn walk_program(program: &Program, node: &Node, source: &str) -> Option<String> {
    let mut checker = Checker {
        program,
        source,
        scope: Vec::new(),
        issue: None,
    };
    checker.ty(program.expression(), node, 0);
    checker.issue
}

struct Checker<'p, 'n> {
    program: &'p Program,
    source: &'p str,
    scope: Vec<(String, Ty<'n>)>,
    issue: Option<String>,
}

impl<'p, 'n> Checker<'p, 'n> {
    /// Records the first issue, at `id`'s position.
    fn report(&mut self, id: u64, message: String) {
        if self.issue.is_some() {
            return;
        }
        let start = self
            .program
            .source_info()
            .offset_for(id)
            .map_or(0, |(s, _)| s as usize);
        self.issue = Some(render(self.source, start, &message));
    }

    fn ty(&mut self, e: &IdedExpr, root: &'n Node, depth: usize) -> Ty<'n> {
        if depth > MAX_DEPTH || self.issue.is_some() {
            return Ty::Dyn;
        }
        match &e.expr {
            Expr::Ident(name) => {
                if let Some((_, t)) = self.scope.iter().rev().find(|(n, _)| n == name) {
                    return *t;
                }
                match name.as_str() {
                    "self" | "oldSelf" => Ty::Node(root),
                    n if KNOWN.contains(&n) || n.starts_with('@') || n.starts_with('#') => Ty::Dyn,
                    n => {
                        self.report(
                            e.id,
                            format!("undeclared reference to '{n}' (in container '')"),
                        );
                        Ty::Dyn
                    }
                }
            }
            Expr::Select(select) => {
                let operand = self.ty(&select.operand, root, depth + 1);
                self.field(e.id, operand, &select.field)
            }
            Expr::Call(call) => {
                if call.target.is_some()
                    && call.args.len() >= 3
                    && TWO_VARIABLE.contains(&call.func_name.as_str())
                {
                    self.report(
                        e.id,
                        format!(
                            "two-variable comprehension '{}' is not supported by Skein",
                            call.func_name
                        ),
                    );
                    return Ty::Dyn;
                }
                if let Some(t) = call.target.as_deref() {
                    self.ty(t, root, depth + 1);
                }
                let args: Vec<Ty<'n>> = call
                    .args
                    .iter()
                    .map(|a| self.ty(a, root, depth + 1))
                    .collect();
                self.literal_arguments(&call.func_name, call.target.is_some(), &call.args);
                let op = call.func_name.as_str();
                if matches!(op, "_==_" | "_!=_" | "_<_" | "_<=_" | "_>_" | "_>=_")
                    && let (Some(l), Some(r)) = (
                        args.first().and_then(|t| t.scalar()),
                        args.get(1).and_then(|t| t.scalar()),
                    )
                    && !operands_fit(op, l, r)
                {
                    self.report(
                        e.id,
                        format!("found no matching overload for '{op}' applied to '({l}, {r})'"),
                    );
                    return Ty::Dyn;
                }
                match (call.func_name.as_str(), args.first(), args.get(1)) {
                    ("_[_]" | "_[?_]", Some(Ty::Node(n)), _) => element(n),
                    _ => Ty::Dyn,
                }
            }
            Expr::Comprehension(c) => {
                let range = self.ty(&c.iter_range, root, depth + 1);
                let accu = self.ty(&c.accu_init, root, depth + 1);
                let item = match (range, &c.iter_var2) {
                    (Ty::Node(n), None) if n.kind == Kind::Array => element(n),
                    _ => Ty::Dyn,
                };
                let mark = self.scope.len();
                self.scope.push((c.iter_var.clone(), item));
                if let Some(v2) = &c.iter_var2 {
                    let second = match range {
                        Ty::Node(n) => element(n),
                        _ => Ty::Dyn,
                    };
                    self.scope.push((v2.clone(), second));
                }
                self.scope.push((c.accu_var.clone(), accu));
                self.ty(&c.loop_cond, root, depth + 1);
                self.ty(&c.loop_step, root, depth + 1);
                self.scope.truncate(mark);
                // The result sees the accumulator, not the iteration variables.
                self.scope.push((c.accu_var.clone(), accu));
                self.ty(&c.result, root, depth + 1);
                self.scope.truncate(mark);
                Ty::Dyn
            }
            Expr::List(list) => {
                for item in &list.elements {
                    self.ty(item, root, depth + 1);
                }
                Ty::Dyn
            }
            Expr::Map(map) => {
                for entry in &map.entries {
                    if let EntryExpr::MapEntry(m) = &entry.expr {
                        self.ty(&m.key, root, depth + 1);
                        self.ty(&m.value, root, depth + 1);
                    }
                }
                Ty::Dyn
            }
            Expr::Struct(s) => {
                for entry in &s.entries {
                    if let EntryExpr::StructField(f) = &entry.expr {
                        self.ty(&f.value, root, depth + 1);
                    }
                }
                Ty::Dyn
            }
            Expr::Literal(lit) => Ty::Scalar(match lit {
                LiteralValue::Boolean(_) => "bool",
                LiteralValue::Bytes(_) => "bytes",
                LiteralValue::Double(_) => "double",
                LiteralValue::Int(_) => "int",
                LiteralValue::Null => "null",
                LiteralValue::String(_) => "string",
                LiteralValue::UInt(_) => "uint",
            }),
            Expr::Unspecified => Ty::Dyn,
        }
    }

    /// The type of `operand.field`, reporting fields the schema does not
    /// declare.
    fn field(&mut self, id: u64, operand: Ty<'n>, field: &str) -> Ty<'n> {
        match operand {
            Ty::Meta => {
                if field != "name" && field != "generateName" {
                    self.report(id, format!("undefined field '{field}'"));
                }
                Ty::Dyn
            }
            Ty::Node(n) if n.kind == Kind::Object => {
                if let Some(p) = n
                    .properties
                    .values()
                    .find(|p| p.cel_name.as_deref() == Some(field))
                {
                    if n.resource && field == "metadata" {
                        return Ty::Meta;
                    }
                    if !declared(&p.node) {
                        self.report(id, format!("undefined field '{field}'"));
                        return Ty::Dyn;
                    }
                    return Ty::Node(&p.node);
                }
                if n.resource {
                    match field {
                        "metadata" => return Ty::Meta,
                        "apiVersion" | "kind" => return Ty::Dyn,
                        _ => {}
                    }
                }
                if !n.properties.is_empty() || n.resource || n.additional.is_none() {
                    self.report(id, format!("undefined field '{field}'"));
                    return Ty::Dyn;
                }
                match n.additional.as_deref() {
                    Some(a) => Ty::Node(a),
                    None => Ty::Dyn,
                }
            }
            _ => Ty::Dyn,
        }
    }

    /// Literal arguments that cannot parse (cel-go's literal validators).
    fn literal_arguments(&mut self, function: &str, member: bool, args: &[IdedExpr]) {
        let literal = |i: usize| match args.get(i).map(|a| &a.expr) {
            Some(Expr::Literal(LiteralValue::String(s))) => Some(s.inner().to_owned()),
            _ => None,
        };
        match (function, member, args.len()) {
            ("matches", true, 1) | ("matches", false, 2) => {
                let i = args.len() - 1;
                if let Some(p) = literal(i)
                    && regex::Regex::new(&p).is_err()
                    && let Some(a) = args.get(i)
                {
                    self.report(a.id, "invalid matches argument".to_owned());
                }
            }
            ("duration", false, 1) => {
                if let Some(s) = literal(0)
                    && super::library::duration::parse_go(&s).is_none()
                    && let Some(a) = args.first()
                {
                    self.report(a.id, "invalid duration argument".to_owned());
                }
            }
            ("timestamp", false, 1) => {
                if let Some(s) = literal(0)
                    && chrono::DateTime::parse_from_rfc3339(&s).is_err()
                    && let Some(a) = args.first()
                {
                    self.report(a.id, "invalid timestamp".to_owned());
                }
            }
            _ => {}
        }
    }
}

/// Whether upstream declares a CEL type for values of `n` (its
/// `SchemaDeclType` is not nil): not for untyped values
/// (`x-kubernetes-preserve-unknown-fields` without a type), nor lists or
/// maps of them; fields of such types are not reachable.
fn declared(n: &Node) -> bool {
    declared_at(n, 0)
}

fn declared_at(n: &Node, depth: usize) -> bool {
    if depth > super::node::MAX_DEPTH {
        return true;
    }
    match n.kind {
        Kind::Dynamic => false,
        Kind::Array => n
            .items
            .as_deref()
            .is_some_and(|i| declared_at(i, depth + 1)),
        Kind::Object if n.properties.is_empty() && !n.resource => n
            .additional
            .as_deref()
            .is_none_or(|a| declared_at(a, depth + 1)),
        _ => true,
    }
}

/// The element type of a list node or the value type of a map node.
fn element(n: &Node) -> Ty<'_> {
    match n.kind {
        Kind::Array => n.items.as_deref().map_or(Ty::Dyn, Ty::Node),
        Kind::Object if n.properties.is_empty() => {
            n.additional.as_deref().map_or(Ty::Dyn, Ty::Node)
        }
        _ => Ty::Dyn,
    }
}

/// cel-go's rendering of one issue at byte `offset` of `source`.
pub(crate) fn render(source: &str, offset: usize, message: &str) -> String {
    let offset = offset.min(source.len());
    let before = source.get(..offset).unwrap_or("");
    let line_no = before.matches('\n').count() + 1;
    let line_start = before.rfind('\n').map_or(0, |i| i + 1);
    let column = source
        .get(line_start..offset)
        .map_or(0, |s| s.chars().count());
    let line = source
        .get(line_start..)
        .and_then(|s| s.lines().next())
        .unwrap_or("");
    let dots: String = ".".repeat(column);
    format!(
        "ERROR: <input>:{line_no}:{}: {message}\n | {}\n | {dots}^",
        column + 1,
        line.replace('\t', " ")
    )
}
