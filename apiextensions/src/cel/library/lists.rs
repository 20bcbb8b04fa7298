//! The Kubernetes lists library: `l.isSorted()`, `l.sum()`, `l.min()`,
//! `l.max()`, `l.indexOf(x)`, `l.lastIndexOf(x)`.

use cel::common::types::{DYN_TYPE, LIST_TYPE};
use cel::common::value::CowVal;
use cel::{DeclarationError, Env, ExecutionError, Value};

use super::{Ret, fail, int, list_arg, order, value, value_arg};

pub(crate) fn register(env: &mut Env) -> Result<(), DeclarationError> {
    env.add_member_overload("isSorted", "list_is_sorted", LIST_TYPE, vec![], is_sorted)?;
    env.add_member_overload("sum", "list_sum", LIST_TYPE, vec![], sum)?;
    env.add_member_overload("min", "list_min", LIST_TYPE, vec![], min)?;
    env.add_member_overload("max", "list_max", LIST_TYPE, vec![], max)?;
    env.add_member_overload(
        "indexOf",
        "list_index_of",
        LIST_TYPE,
        vec![DYN_TYPE],
        index_of,
    )?;
    env.add_member_overload(
        "lastIndexOf",
        "list_last_index_of",
        LIST_TYPE,
        vec![DYN_TYPE],
        last_index_of,
    )?;
    Ok(())
}

fn is_sorted<'b, 'v>(args: Vec<CowVal<'b, 'v>>) -> Ret<'b, 'v> {
    let items = list_arg(&args, 0)?;
    for pair in items.windows(2) {
        if order(&pair[0], &pair[1])?.is_gt() {
            return super::boolean(false);
        }
    }
    super::boolean(true)
}

fn sum<'b, 'v>(args: Vec<CowVal<'b, 'v>>) -> Ret<'b, 'v> {
    let items = list_arg(&args, 0)?;
    let mut acc = match items.first() {
        None => return int(0),
        Some(Value::Float(_)) => Value::Float(0.0),
        Some(Value::UInt(_)) => Value::UInt(0),
        Some(Value::Duration(_)) => Value::Duration(chrono::Duration::zero()),
        Some(_) => Value::Int(0),
    };
    for item in items {
        acc = match (acc, item) {
            (Value::Int(a), Value::Int(b)) => Value::Int(
                a.checked_add(b)
                    .ok_or_else(|| fail("sum", "integer overflow"))?,
            ),
            (Value::UInt(a), Value::UInt(b)) => Value::UInt(
                a.checked_add(b)
                    .ok_or_else(|| fail("sum", "unsigned integer overflow"))?,
            ),
            (Value::Float(a), Value::Float(b)) => Value::Float(a + b),
            (Value::Duration(a), Value::Duration(b)) => Value::Duration(
                a.checked_add(&b)
                    .ok_or_else(|| fail("sum", "duration overflow"))?,
            ),
            (a, b) => {
                return Err(ExecutionError::no_such_overload(
                    "sum",
                    vec![a.type_of().to_string(), b.type_of().to_string()],
                ));
            }
        };
    }
    value(acc)
}

fn extreme<'b, 'v>(args: Vec<CowVal<'b, 'v>>, name: &str, keep_greater: bool) -> Ret<'b, 'v> {
    let items = list_arg(&args, 0)?;
    let mut iter = items.into_iter();
    let Some(mut best) = iter.next() else {
        return Err(fail(name, format!("{name} called on empty list")));
    };
    for item in iter {
        let ord = order(&item, &best)?;
        if (keep_greater && ord.is_gt()) || (!keep_greater && ord.is_lt()) {
            best = item;
        }
    }
    value(best)
}

fn min<'b, 'v>(args: Vec<CowVal<'b, 'v>>) -> Ret<'b, 'v> {
    extreme(args, "min", false)
}

fn max<'b, 'v>(args: Vec<CowVal<'b, 'v>>) -> Ret<'b, 'v> {
    extreme(args, "max", true)
}

fn index_of<'b, 'v>(args: Vec<CowVal<'b, 'v>>) -> Ret<'b, 'v> {
    let items = list_arg(&args, 0)?;
    let needle = value_arg(&args, 1)?;
    let found = items.iter().position(|i| *i == needle);
    int(found.and_then(|i| i64::try_from(i).ok()).unwrap_or(-1))
}

fn last_index_of<'b, 'v>(args: Vec<CowVal<'b, 'v>>) -> Ret<'b, 'v> {
    let items = list_arg(&args, 0)?;
    let needle = value_arg(&args, 1)?;
    let found = items.iter().rposition(|i| *i == needle);
    int(found.and_then(|i| i64::try_from(i).ok()).unwrap_or(-1))
}
