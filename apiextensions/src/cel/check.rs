//! Static checks standing in for cel-go's type checker, where a rule is
//! certainly wrong whatever the data: references to variables other than
//! `self` and `oldSelf`.

use cel::Program;

use super::node::Node;

/// Why the rule cannot compile, in cel-go's words, or `None`.
pub(crate) fn check_rule(program: &Program, node: &Node) -> Option<String> {
    check(program, node)
}

/// As [`check_rule`], for a `messageExpression`.
pub(crate) fn check_message_expression(program: &Program, node: &Node) -> Option<String> {
    check(program, node).map(|d| {
        d.replacen(
            "compilation failed",
            "messageExpression compilation failed",
            1,
        )
    })
}

fn check(program: &Program, _node: &Node) -> Option<String> {
    let _ = program;
    None
}
