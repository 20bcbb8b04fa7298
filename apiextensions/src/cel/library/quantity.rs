//! The Kubernetes quantity library: `quantity(s)`, `isQuantity(s)`, and on
//! a quantity `sign()`, `isInteger()`, `asInteger()`,
//! `asApproximateFloat()`, `add(q|int)`, `sub(q|int)`, `isGreaterThan(q)`,
//! `isLessThan(q)`, `compareTo(q)`; `==` compares values (`1` ==
//! `1000m`). Parsing is `skein_admission::quantity`'s (upstream's
//! grammar), values exact in units of 10⁻⁹.

use cel::common::types::{INT_TYPE, STRING_TYPE, Type};
use cel::common::value::CowVal;
use cel::objects::Opaque;
use cel::{DeclarationError, Env};
use skein_admission::quantity::Quantity as Parsed;

use super::{Ret, boolean, double, fail, int, int_arg, opaque, opaque_arg, str_arg};

/// The opaque type's name.
const TYPE_NAME: &str = "kubernetes.Quantity";

/// Nanos per unit.
const NANO: i128 = 1_000_000_000;

/// A quantity's exact value in units of 10⁻⁹.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Quantity(i128);

impl Opaque for Quantity {
    fn runtime_type_name(&self) -> &str {
        TYPE_NAME
    }
}

fn quantity_type() -> Type {
    Type::new_opaque_type(TYPE_NAME)
}

pub(crate) fn register(env: &mut Env) -> Result<(), DeclarationError> {
    let q = quantity_type;
    env.add_overload("quantity", "string_to_quantity", vec![STRING_TYPE], parse)?;
    env.add_overload(
        "isQuantity",
        "is_quantity_string",
        vec![STRING_TYPE],
        is_quantity,
    )?;
    env.add_member_overload("sign", "quantity_sign", q(), vec![], sign)?;
    env.add_member_overload("isInteger", "quantity_is_integer", q(), vec![], is_integer)?;
    env.add_member_overload("asInteger", "quantity_get_integer", q(), vec![], as_integer)?;
    env.add_member_overload(
        "asApproximateFloat",
        "quantity_get_float",
        q(),
        vec![],
        as_float,
    )?;
    env.add_member_overload("add", "quantity_add", q(), vec![q()], add)?;
    env.add_member_overload("add", "quantity_add_int", q(), vec![INT_TYPE], add_int)?;
    env.add_member_overload("sub", "quantity_sub", q(), vec![q()], sub)?;
    env.add_member_overload("sub", "quantity_sub_int", q(), vec![INT_TYPE], sub_int)?;
    env.add_member_overload(
        "isGreaterThan",
        "quantity_is_greater_than",
        q(),
        vec![q()],
        greater,
    )?;
    env.add_member_overload("isLessThan", "quantity_is_less_than", q(), vec![q()], less)?;
    env.add_member_overload("compareTo", "quantity_compare_to", q(), vec![q()], compare)?;
    Ok(())
}

fn parse<'b, 'v>(args: Vec<CowVal<'b, 'v>>) -> Ret<'b, 'v> {
    let s = str_arg(&args, 0)?;
    match Parsed::parse(s) {
        Some(q) => opaque(Quantity(q.nanos())),
        None => Err(fail(
            "quantity",
            "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'",
        )),
    }
}

fn is_quantity<'b, 'v>(args: Vec<CowVal<'b, 'v>>) -> Ret<'b, 'v> {
    boolean(Parsed::parse(str_arg(&args, 0)?).is_some())
}

fn this(args: &[CowVal<'_, '_>]) -> Result<i128, cel::ExecutionError> {
    opaque_arg::<Quantity>(args, 0).map(|q| q.0)
}

fn other(args: &[CowVal<'_, '_>]) -> Result<i128, cel::ExecutionError> {
    opaque_arg::<Quantity>(args, 1).map(|q| q.0)
}

fn sign<'b, 'v>(args: Vec<CowVal<'b, 'v>>) -> Ret<'b, 'v> {
    int(match this(&args)?.signum() {
        1 => 1,
        -1 => -1,
        _ => 0,
    })
}

fn is_integer<'b, 'v>(args: Vec<CowVal<'b, 'v>>) -> Ret<'b, 'v> {
    boolean(this(&args)? % NANO == 0)
}

fn as_integer<'b, 'v>(args: Vec<CowVal<'b, 'v>>) -> Ret<'b, 'v> {
    let n = this(&args)?;
    if n % NANO != 0 {
        return Err(fail("asInteger", "cannot convert value to integer"));
    }
    match i64::try_from(n / NANO) {
        Ok(i) => int(i),
        Err(_) => Err(fail("asInteger", "cannot convert value to integer")),
    }
}

fn as_float<'b, 'v>(args: Vec<CowVal<'b, 'v>>) -> Ret<'b, 'v> {
    #[allow(clippy::cast_precision_loss)]
    double(this(&args)? as f64 / 1e9)
}

fn combine<'b, 'v>(a: i128, b: i128, negate: bool) -> Ret<'b, 'v> {
    let b = if negate { b.checked_neg() } else { Some(b) };
    match b.and_then(|b| a.checked_add(b)) {
        Some(n) => opaque(Quantity(n)),
        None => Err(fail("add", "quantity overflow")),
    }
}

fn add<'b, 'v>(args: Vec<CowVal<'b, 'v>>) -> Ret<'b, 'v> {
    combine(this(&args)?, other(&args)?, false)
}

fn sub<'b, 'v>(args: Vec<CowVal<'b, 'v>>) -> Ret<'b, 'v> {
    combine(this(&args)?, other(&args)?, true)
}

fn int_nanos(args: &[CowVal<'_, '_>]) -> Result<i128, cel::ExecutionError> {
    i128::from(int_arg(args, 1)?)
        .checked_mul(NANO)
        .ok_or_else(|| fail("add", "quantity overflow"))
}

fn add_int<'b, 'v>(args: Vec<CowVal<'b, 'v>>) -> Ret<'b, 'v> {
    combine(this(&args)?, int_nanos(&args)?, false)
}

fn sub_int<'b, 'v>(args: Vec<CowVal<'b, 'v>>) -> Ret<'b, 'v> {
    combine(this(&args)?, int_nanos(&args)?, true)
}

fn greater<'b, 'v>(args: Vec<CowVal<'b, 'v>>) -> Ret<'b, 'v> {
    boolean(this(&args)? > other(&args)?)
}

fn less<'b, 'v>(args: Vec<CowVal<'b, 'v>>) -> Ret<'b, 'v> {
    boolean(this(&args)? < other(&args)?)
}

fn compare<'b, 'v>(args: Vec<CowVal<'b, 'v>>) -> Ret<'b, 'v> {
    int(match this(&args)?.cmp(&other(&args)?) {
        std::cmp::Ordering::Less => -1,
        std::cmp::Ordering::Equal => 0,
        std::cmp::Ordering::Greater => 1,
    })
}
