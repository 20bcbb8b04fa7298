//! cel-go's `ext.Sets`: `sets.contains(a, b)` (every element of `b` is in
//! `a`), `sets.equivalent(a, b)`, `sets.intersects(a, b)`.

use cel::common::types::LIST_TYPE;
use cel::common::value::CowVal;
use cel::{DeclarationError, Env};

use super::{Ret, boolean, list_arg};

pub(crate) fn register(env: &mut Env) -> Result<(), DeclarationError> {
    env.add_overload(
        "sets.contains",
        "list_sets_contains_list",
        vec![LIST_TYPE, LIST_TYPE],
        contains,
    )?;
    env.add_overload(
        "sets.equivalent",
        "list_sets_equivalent_list",
        vec![LIST_TYPE, LIST_TYPE],
        equivalent,
    )?;
    env.add_overload(
        "sets.intersects",
        "list_sets_intersects_list",
        vec![LIST_TYPE, LIST_TYPE],
        intersects,
    )?;
    Ok(())
}

fn contains<'b, 'v>(args: Vec<CowVal<'b, 'v>>) -> Ret<'b, 'v> {
    let (a, b) = (list_arg(&args, 0)?, list_arg(&args, 1)?);
    boolean(b.iter().all(|x| a.contains(x)))
}

fn equivalent<'b, 'v>(args: Vec<CowVal<'b, 'v>>) -> Ret<'b, 'v> {
    let (a, b) = (list_arg(&args, 0)?, list_arg(&args, 1)?);
    boolean(b.iter().all(|x| a.contains(x)) && a.iter().all(|x| b.contains(x)))
}

fn intersects<'b, 'v>(args: Vec<CowVal<'b, 'v>>) -> Ret<'b, 'v> {
    let (a, b) = (list_arg(&args, 0)?, list_arg(&args, 1)?);
    boolean(b.iter().any(|x| a.contains(x)))
}
