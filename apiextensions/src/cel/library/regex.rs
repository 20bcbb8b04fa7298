//! CEL's `matches` and the Kubernetes regex library: `s.find(re)` (the first match, or `""`),
//! `s.findAll(re)` and `s.findAll(re, n)`. Compiled patterns are cached
//! (a bounded map), as rules use a handful of literal patterns.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use cel::common::types::{INT_TYPE, STRING_TYPE};
use cel::common::value::CowVal;
use cel::{DeclarationError, Env, ExecutionError};
use regex::Regex;

use super::{Ret, fail, int_arg, str_arg, string, strings};

/// Most patterns kept compiled.
const CACHE_SIZE: usize = 256;

static CACHE: Mutex<Option<HashMap<String, Arc<Regex>>>> = Mutex::new(None);

/// `pattern` compiled (RE2 syntax, as the `regex` crate's), from the cache
/// when it is there.
pub(crate) fn compiled(function: &str, pattern: &str) -> Result<Arc<Regex>, ExecutionError> {
    if let Ok(guard) = CACHE.lock()
        && let Some(re) = guard.as_ref().and_then(|m| m.get(pattern))
    {
        return Ok(re.clone());
    }
    let re = Arc::new(
        Regex::new(pattern).map_err(|e| fail(function, format!("error parsing regexp: {e}")))?,
    );
    if let Ok(mut guard) = CACHE.lock() {
        let map = guard.get_or_insert_with(HashMap::new);
        if map.len() >= CACHE_SIZE {
            map.clear();
        }
        map.insert(pattern.to_owned(), re.clone());
    }
    Ok(re)
}

pub(crate) fn register(env: &mut Env) -> Result<(), DeclarationError> {
    // CEL's `matches`, with the compiled-pattern cache. The `cel` crate's
    // own (its `regex` feature, off here) compiles the pattern on every
    // call; if another crate turns that feature on, its overload stays.
    let member = env.add_member_overload(
        "matches",
        "matches_string",
        STRING_TYPE,
        vec![STRING_TYPE],
        matches,
    );
    let global = env.add_overload(
        "matches",
        "matches",
        vec![STRING_TYPE, STRING_TYPE],
        matches,
    );
    for result in [member, global] {
        match result {
            Ok(()) | Err(DeclarationError::DuplicateOverload { .. }) => {}
            Err(other) => return Err(other),
        }
    }
    env.add_member_overload(
        "find",
        "string_find_string",
        STRING_TYPE,
        vec![STRING_TYPE],
        find,
    )?;
    env.add_member_overload(
        "findAll",
        "string_find_all_string",
        STRING_TYPE,
        vec![STRING_TYPE],
        find_all,
    )?;
    env.add_member_overload(
        "findAll",
        "string_find_all_string_int",
        STRING_TYPE,
        vec![STRING_TYPE, INT_TYPE],
        find_all_n,
    )?;
    Ok(())
}

fn matches<'b, 'v>(args: Vec<CowVal<'b, 'v>>) -> Ret<'b, 'v> {
    let (s, pattern) = (str_arg(&args, 0)?, str_arg(&args, 1)?);
    super::boolean(compiled("matches", pattern)?.is_match(s))
}

fn find<'b, 'v>(args: Vec<CowVal<'b, 'v>>) -> Ret<'b, 'v> {
    let (s, pattern) = (str_arg(&args, 0)?, str_arg(&args, 1)?);
    let re = compiled("find", pattern)?;
    string(
        re.find(s)
            .map(|m| m.as_str().to_owned())
            .unwrap_or_default(),
    )
}

fn find_all<'b, 'v>(args: Vec<CowVal<'b, 'v>>) -> Ret<'b, 'v> {
    let (s, pattern) = (str_arg(&args, 0)?, str_arg(&args, 1)?);
    let re = compiled("findAll", pattern)?;
    strings(re.find_iter(s).map(|m| m.as_str().to_owned()).collect())
}

fn find_all_n<'b, 'v>(args: Vec<CowVal<'b, 'v>>) -> Ret<'b, 'v> {
    let (s, pattern) = (str_arg(&args, 0)?, str_arg(&args, 1)?);
    let n = int_arg(&args, 2)?;
    let re = compiled("findAll", pattern)?;
    let all = re.find_iter(s).map(|m| m.as_str().to_owned());
    match usize::try_from(n) {
        Ok(n) => strings(all.take(n).collect()),
        Err(_) => strings(all.collect()),
    }
}
