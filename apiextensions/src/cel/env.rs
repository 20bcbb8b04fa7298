//! The CEL environment of CRD validation rules: CEL's standard library,
//! cel-go's strings extension (as the `cel` crate provides it), and
//! Kubernetes' libraries (`library/`), built once for the process.
//! Also the translation of the `cel` crate's errors into the text
//! cel-go prints, which upstream puts in its messages.

use std::sync::{Arc, LazyLock};

use cel::{Env, ExecutionError, ParseErrors, Program};

use super::library;

/// The shared environment (immutable once built; `Env` is `Send + Sync`).
static ENV: LazyLock<Result<Arc<Env>, String>> = LazyLock::new(build);

fn build() -> Result<Arc<Env>, String> {
    let mut env = Env::stdlib();
    env.add_extension(cel::extensions::strings)
        .map_err(|e| e.to_string())?;
    library::register(&mut env).map_err(|e| e.to_string())?;
    Ok(Arc::new(env))
}

/// The environment, or why it could not be built (a bug, reported as
/// upstream reports `rule compiler initialization error`).
pub(crate) fn env() -> Result<&'static Arc<Env>, &'static str> {
    ENV.as_ref().map_err(String::as_str)
}

/// Compiles `source`; the error is cel-go's `issues.String()` text.
pub(crate) fn compile(source: &str) -> Result<Program, String> {
    let env = env().map_err(|e| format!("rule compiler initialization error: {e}"))?;
    env.compile(source).map_err(|e| issues(&e))
}

/// cel-go's rendering of parse errors: `ERROR: <input>:L:C: msg`, then the
/// source line and a caret line, each after ` | `.
fn issues(errors: &ParseErrors) -> String {
    errors.to_string().replace("\n| ", "\n | ")
}

/// A runtime error as cel-go words it (`no such key: x`, `division by
/// zero`, ...), which upstream wraps in `... evaluating rule: <rule>`.
pub(crate) fn runtime_error(error: &ExecutionError) -> String {
    match error {
        ExecutionError::NoSuchKey(key) => format!("no such key: {key}"),
        ExecutionError::DivisionByZero(_) => "division by zero".to_owned(),
        ExecutionError::RemainderByZero(_) => "modulus by zero".to_owned(),
        ExecutionError::Overflow(..) => "integer overflow".to_owned(),
        ExecutionError::IndexOutOfBounds(index) => {
            format!("index out of bounds: {}", plain(index))
        }
        ExecutionError::FunctionError { message, .. } => message.clone(),
        ExecutionError::UndeclaredReference(name) => {
            format!("no such attribute(s): {name}")
        }
        other => {
            let text = other.to_string();
            let mut chars = text.chars();
            match chars.next() {
                Some(first) => first.to_lowercase().chain(chars).collect(),
                None => text,
            }
        }
    }
}

/// Whether `error` is an overload mismatch (upstream gives those their own
/// message: `'no such overload': call arguments did not match ...`).
pub(crate) fn is_no_such_overload(error: &ExecutionError) -> bool {
    matches!(
        error,
        ExecutionError::NoSuchOverload(_)
            | ExecutionError::UnsupportedBinaryOperator(..)
            | ExecutionError::ValuesNotComparable(..)
            | ExecutionError::UnexpectedType { .. }
            | ExecutionError::UnsupportedTargetType { .. }
            | ExecutionError::NotSupportedAsMethod { .. }
            | ExecutionError::InvalidArgumentCount { .. }
    )
}

/// A scalar value as plain text (`5`, not `Int(5)`).
fn plain(value: &cel::Value) -> String {
    match value {
        cel::Value::Int(i) => i.to_string(),
        cel::Value::UInt(u) => u.to_string(),
        cel::Value::Float(f) => f.to_string(),
        cel::Value::String(s) => s.to_string(),
        other => format!("{other:?}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_environment_builds() {
        assert!(env().is_ok(), "{:?}", env().err());
    }

    #[test]
    fn syntax_errors_read_as_cel_go_prints_them() {
        let Err(text) = compile("self.x >") else {
            panic!("compiled");
        };
        assert!(
            text.starts_with(
                "ERROR: <input>:1:9: Syntax error: mismatched input '<EOF>' expecting"
            ),
            "{text}"
        );
        assert!(text.ends_with("\n | self.x >\n | ........^"), "{text}");
    }
}
