//! Kubernetes' CEL libraries (k8s.io/apiserver `pkg/cel/library`) and
//! cel-go's `ext.Sets`, as the v1.33 environment of CRD rules has them,
//! written for the `cel` crate: [`lists`], [`regex`], [`quantity`],
//! [`urls`], [`ip`] (and CIDRs), [`format`], [`semver`], [`sets`];
//! [`duration`] parses Go duration text.
//!
//! Overloads are plain `fn`s over the crate's `CowVal` arguments; the
//! helpers here read arguments and build results.

pub(crate) mod duration;
pub(crate) mod format;
pub(crate) mod ip;
pub(crate) mod lists;
pub(crate) mod quantity;
pub(crate) mod regex;
pub(crate) mod semver;
pub(crate) mod sets;
pub(crate) mod urls;

use std::cmp::Ordering;
use std::sync::Arc;

use cel::common::types::{CelBool, CelDouble, CelInt, CelList, CelString};
use cel::common::value::{CowVal, Val};
use cel::objects::Opaque;
use cel::{DeclarationError, Env, ExecutionError, Value};

/// An overload's result.
pub(crate) type Ret<'b, 'v> = Result<CowVal<'b, 'v>, ExecutionError>;

/// Registers every library on `env`.
pub(crate) fn register(env: &mut Env) -> Result<(), DeclarationError> {
    lists::register(env)?;
    sets::register(env)?;
    regex::register(env)?;
    quantity::register(env)?;
    urls::register(env)?;
    ip::register(env)?;
    format::register(env)?;
    semver::register(env)?;
    Ok(())
}

/// Argument `i`.
pub(crate) fn arg<'a, 'b, 'v>(
    args: &'a [CowVal<'b, 'v>],
    i: usize,
) -> Result<&'a (dyn Val + 'v), ExecutionError> {
    args.get(i)
        .map(|a| a.as_ref())
        .ok_or_else(|| ExecutionError::invalid_argument_count(i + 1, args.len()))
}

/// Argument `i` as a string.
pub(crate) fn str_arg<'a>(args: &'a [CowVal<'_, '_>], i: usize) -> Result<&'a str, ExecutionError> {
    let v = arg(args, i)?;
    v.downcast_ref::<CelString>()
        .map(|s| s.inner())
        .ok_or_else(|| mismatch(v, "string"))
}

/// Argument `i` as an int.
pub(crate) fn int_arg(args: &[CowVal<'_, '_>], i: usize) -> Result<i64, ExecutionError> {
    let v = arg(args, i)?;
    v.downcast_ref::<CelInt>()
        .map(|n| *n.inner())
        .ok_or_else(|| mismatch(v, "int"))
}

/// Argument `i` as a bool.
pub(crate) fn bool_arg(args: &[CowVal<'_, '_>], i: usize) -> Result<bool, ExecutionError> {
    let v = arg(args, i)?;
    v.downcast_ref::<CelBool>()
        .map(|b| *b.inner())
        .ok_or_else(|| mismatch(v, "bool"))
}

/// Argument `i` as an owned `Value` (lists and maps are copied).
pub(crate) fn value_arg(args: &[CowVal<'_, '_>], i: usize) -> Result<Value, ExecutionError> {
    Value::try_from(arg(args, i)?)
}

/// Argument `i` as the elements of a list.
pub(crate) fn list_arg(args: &[CowVal<'_, '_>], i: usize) -> Result<Vec<Value>, ExecutionError> {
    match value_arg(args, i)? {
        Value::List(items) => Ok(Arc::unwrap_or_clone(items)),
        other => Err(ExecutionError::UnexpectedType {
            got: other.type_of().to_string(),
            want: "list".to_owned(),
        }),
    }
}

/// Argument `i` as the opaque `T`.
pub(crate) fn opaque_arg<T: Opaque + Clone>(
    args: &[CowVal<'_, '_>],
    i: usize,
) -> Result<T, ExecutionError> {
    let v = arg(args, i)?;
    match Value::try_from(v)? {
        Value::Opaque(o) => o
            .downcast_ref::<T>()
            .cloned()
            .ok_or_else(|| mismatch(v, std::any::type_name::<T>())),
        _ => Err(mismatch(v, std::any::type_name::<T>())),
    }
}

/// The error for an argument of the wrong type (a runtime overload error).
pub(crate) fn mismatch(v: &dyn Val, want: &str) -> ExecutionError {
    ExecutionError::UnexpectedType {
        got: v.get_type().name().to_owned(),
        want: want.to_owned(),
    }
}

/// A function's own error, e.g. `invalid quantity`.
pub(crate) fn fail(function: &str, message: impl ToString) -> ExecutionError {
    ExecutionError::function_error(function, message)
}

/// A bool result.
pub(crate) fn boolean<'b, 'v>(b: bool) -> Ret<'b, 'v> {
    Ok(CowVal::owned(CelBool::from(b)))
}

/// An int result.
pub(crate) fn int<'b, 'v>(i: i64) -> Ret<'b, 'v> {
    Ok(CowVal::owned(CelInt::from(i)))
}

/// A double result.
pub(crate) fn double<'b, 'v>(f: f64) -> Ret<'b, 'v> {
    Ok(CowVal::owned(CelDouble::from(f)))
}

/// A string result.
pub(crate) fn string<'b, 'v>(s: String) -> Ret<'b, 'v> {
    Ok(CowVal::owned(CelString::from(s)))
}

/// A list-of-strings result.
pub(crate) fn strings<'b, 'v>(items: Vec<String>) -> Ret<'b, 'v> {
    let list: Vec<Box<dyn Val + 'v>> = items
        .into_iter()
        .map(|s| Box::new(CelString::from(s)) as Box<dyn Val + 'v>)
        .collect();
    Ok(CowVal::owned(CelList::from(list)))
}

/// Any `Value` as a result.
pub(crate) fn value<'b, 'v>(v: Value) -> Ret<'b, 'v> {
    let boxed: Box<dyn Val> = Box::<dyn Val>::try_from(v)?;
    Ok(CowVal::Owned(boxed))
}

/// An opaque result.
pub(crate) fn opaque<'b, 'v, T: Opaque>(t: T) -> Ret<'b, 'v> {
    value(Value::Opaque(Arc::new(t)))
}

/// `optional.of(v)` / `optional.none()` as a result.
pub(crate) fn optional<'b, 'v>(v: Option<Value>) -> Ret<'b, 'v> {
    let o = match v {
        Some(v) => cel::objects::OptionalValue::of(v),
        None => cel::objects::OptionalValue::none(),
    };
    value(Value::Opaque(Arc::new(o)))
}

/// How two values order, for `min`, `max`, `isSorted`.
pub(crate) fn order(a: &Value, b: &Value) -> Result<Ordering, ExecutionError> {
    a.partial_cmp(b)
        .ok_or_else(|| ExecutionError::ValuesNotComparable(a.clone(), b.clone()))
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    proptest! {
        /// The libraries' parsers return a value or an error for any text,
        /// never panic.
        #[test]
        fn parsers_never_panic(s in "\\PC{0,24}", t in "[-+0-9a-fA-F:./%\\[\\]@?&=#v]{0,24}") {
            for input in [s.as_str(), t.as_str()] {
                let _ = super::urls::Url::parse(input);
                let _ = super::ip::parse_any(input);
                let _ = super::semver::parse_any(input);
                let _ = super::format::base64_decode(input);
                let _ = super::duration::parse_go(input);
                let _ = super::super::escape::escape(input);
                let _ = super::super::field_path::normalize(input, &serde_json::json!({"properties": {"a": {}}}));
                let _ = super::super::check::render(input, input.len() / 2, "m");
                let _ = skein_admission::quantity::Quantity::parse(input);
            }
        }
    }
}
