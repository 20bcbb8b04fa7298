//! The Kubernetes semver library (version 1 in 1.33): `semver(s)`,
//! `semver(s, normalize)`, `isSemver(s)`, `isSemver(s, normalize)`, and on
//! a version `major()`, `minor()`, `patch()`, `isGreaterThan(v)`,
//! `isLessThan(v)`, `compareTo(v)`; precedence as semver 2.0.0 (build
//! metadata ignored, pre-releases before releases).

use std::cmp::Ordering;

use cel::common::types::{BOOL_TYPE, STRING_TYPE, Type};
use cel::common::value::CowVal;
use cel::objects::Opaque;
use cel::{DeclarationError, Env};

use super::{Ret, bool_arg, boolean, fail, int, opaque, opaque_arg, str_arg};

const TYPE_NAME: &str = "kubernetes.Semver";

/// A version: major, minor, patch and pre-release identifiers.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Semver {
    core: [u64; 3],
    pre: Vec<String>,
}

impl Opaque for Semver {
    fn runtime_type_name(&self) -> &str {
        TYPE_NAME
    }
}

/// A numeric identifier: digits without a leading zero.
fn numeric(s: &str) -> Option<u64> {
    if s.is_empty() || !s.bytes().all(|b| b.is_ascii_digit()) || (s.len() > 1 && s.starts_with('0'))
    {
        return None;
    }
    s.parse().ok()
}

fn ident_ok(s: &str) -> bool {
    !s.is_empty() && s.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-')
}

impl Semver {
    /// Strict semver 2.0.0 text.
    fn parse(s: &str) -> Option<Self> {
        let (rest, build) = match s.split_once('+') {
            Some((r, b)) => (r, Some(b)),
            None => (s, None),
        };
        if let Some(b) = build
            && !b.split('.').all(ident_ok)
        {
            return None;
        }
        let (core, pre) = match rest.split_once('-') {
            Some((c, p)) => (c, Some(p)),
            None => (rest, None),
        };
        let mut parts = core.split('.');
        let mut nums = [0u64; 3];
        for n in &mut nums {
            *n = numeric(parts.next()?)?;
        }
        if parts.next().is_some() {
            return None;
        }
        let pre = match pre {
            None => Vec::new(),
            Some(p) => {
                let ids: Vec<String> = p.split('.').map(str::to_owned).collect();
                if !ids.iter().all(|i| {
                    ident_ok(i) && (!i.bytes().all(|b| b.is_ascii_digit()) || numeric(i).is_some())
                }) {
                    return None;
                }
                ids
            }
        };
        Some(Self { core: nums, pre })
    }

    /// Upstream's `normalizeAndParse`: a `v` prefix dropped, missing
    /// minor/patch as 0, leading zeros dropped.
    fn parse_normalized(s: &str) -> Option<Self> {
        let s = s.strip_prefix('v').unwrap_or(s);
        let end = s.find(['-', '+']).unwrap_or(s.len());
        let (core, tail) = s.split_at(end);
        let mut parts: Vec<String> = core
            .split('.')
            .map(|p| {
                let t = p.trim_start_matches('0');
                if t.is_empty() && !p.is_empty() {
                    "0".to_owned()
                } else {
                    t.to_owned()
                }
            })
            .collect();
        if parts.len() > 3 {
            return None;
        }
        while parts.len() < 3 {
            parts.push("0".to_owned());
        }
        Self::parse(&format!("{}{tail}", parts.join(".")))
    }

    fn cmp(&self, other: &Self) -> Ordering {
        self.core
            .cmp(&other.core)
            .then_with(|| match (self.pre.is_empty(), other.pre.is_empty()) {
                (true, true) => Ordering::Equal,
                (true, false) => Ordering::Greater,
                (false, true) => Ordering::Less,
                (false, false) => {
                    for (a, b) in self.pre.iter().zip(&other.pre) {
                        let ord = match (numeric(a), numeric(b)) {
                            (Some(x), Some(y)) => x.cmp(&y),
                            (Some(_), None) => Ordering::Less,
                            (None, Some(_)) => Ordering::Greater,
                            (None, None) => a.cmp(b),
                        };
                        if ord != Ordering::Equal {
                            return ord;
                        }
                    }
                    self.pre.len().cmp(&other.pre.len())
                }
            })
    }
}

/// Both parsers over `s`, for the never-panics test.
#[cfg(test)]
pub(crate) fn parse_any(s: &str) -> (bool, bool) {
    (
        Semver::parse(s).is_some(),
        Semver::parse_normalized(s).is_some(),
    )
}

fn semver_type() -> Type {
    Type::new_opaque_type(TYPE_NAME)
}

pub(crate) fn register(env: &mut Env) -> Result<(), DeclarationError> {
    let v = semver_type;
    env.add_overload("semver", "string_to_semver", vec![STRING_TYPE], to_semver)?;
    env.add_overload(
        "semver",
        "string_bool_to_semver",
        vec![STRING_TYPE, BOOL_TYPE],
        to_semver_normalize,
    )?;
    env.add_overload("isSemver", "is_semver_string", vec![STRING_TYPE], is_semver)?;
    env.add_overload(
        "isSemver",
        "is_semver_string_bool",
        vec![STRING_TYPE, BOOL_TYPE],
        is_semver_normalize,
    )?;
    env.add_member_overload(
        "isGreaterThan",
        "semver_is_greater_than",
        v(),
        vec![v()],
        greater,
    )?;
    env.add_member_overload("isLessThan", "semver_is_less_than", v(), vec![v()], less)?;
    env.add_member_overload("compareTo", "semver_compare_to", v(), vec![v()], compare)?;
    env.add_member_overload("major", "semver_major", v(), vec![], major)?;
    env.add_member_overload("minor", "semver_minor", v(), vec![], minor)?;
    env.add_member_overload("patch", "semver_patch", v(), vec![], patch)?;
    Ok(())
}

fn parsed<'b, 'v>(s: &str, v: Option<Semver>) -> Ret<'b, 'v> {
    match v {
        Some(v) => opaque(v),
        None => Err(fail(
            "semver",
            format!("Unable to parse semver {}", skein_admission::quote(s)),
        )),
    }
}

fn to_semver<'b, 'v>(args: Vec<CowVal<'b, 'v>>) -> Ret<'b, 'v> {
    let s = str_arg(&args, 0)?;
    parsed(s, Semver::parse(s))
}

fn to_semver_normalize<'b, 'v>(args: Vec<CowVal<'b, 'v>>) -> Ret<'b, 'v> {
    let s = str_arg(&args, 0)?;
    let v = if bool_arg(&args, 1)? {
        Semver::parse_normalized(s)
    } else {
        Semver::parse(s)
    };
    parsed(s, v)
}

fn is_semver<'b, 'v>(args: Vec<CowVal<'b, 'v>>) -> Ret<'b, 'v> {
    boolean(Semver::parse(str_arg(&args, 0)?).is_some())
}

fn is_semver_normalize<'b, 'v>(args: Vec<CowVal<'b, 'v>>) -> Ret<'b, 'v> {
    let s = str_arg(&args, 0)?;
    let v = if bool_arg(&args, 1)? {
        Semver::parse_normalized(s)
    } else {
        Semver::parse(s)
    };
    boolean(v.is_some())
}

fn pair(args: &[CowVal<'_, '_>]) -> Result<Ordering, cel::ExecutionError> {
    Ok(opaque_arg::<Semver>(args, 0)?.cmp(&opaque_arg::<Semver>(args, 1)?))
}

fn greater<'b, 'v>(args: Vec<CowVal<'b, 'v>>) -> Ret<'b, 'v> {
    boolean(pair(&args)?.is_gt())
}

fn less<'b, 'v>(args: Vec<CowVal<'b, 'v>>) -> Ret<'b, 'v> {
    boolean(pair(&args)?.is_lt())
}

fn compare<'b, 'v>(args: Vec<CowVal<'b, 'v>>) -> Ret<'b, 'v> {
    int(match pair(&args)? {
        Ordering::Less => -1,
        Ordering::Equal => 0,
        Ordering::Greater => 1,
    })
}

fn part<'b, 'v>(args: &[CowVal<'_, '_>], i: usize) -> Ret<'b, 'v> {
    let v = opaque_arg::<Semver>(args, 0)?;
    int(i64::try_from(v.core[i]).unwrap_or(i64::MAX))
}

fn major<'b, 'v>(args: Vec<CowVal<'b, 'v>>) -> Ret<'b, 'v> {
    part(&args, 0)
}

fn minor<'b, 'v>(args: Vec<CowVal<'b, 'v>>) -> Ret<'b, 'v> {
    part(&args, 1)
}

fn patch<'b, 'v>(args: Vec<CowVal<'b, 'v>>) -> Ret<'b, 'v> {
    part(&args, 2)
}
