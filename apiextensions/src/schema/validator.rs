//! Schema validation of a value: kube-openapi's `SchemaValidator`
//! (`pkg/validation/validate`) as apiextensions runs it, with upstream's
//! validator order per node (type, junctors, string, format, number,
//! array, enum, object), its messages, and CRD validation ratcheting
//! (`pkg/apiserver/validation/ratcheting.go`, GA and always on in 1.33):
//! on update, errors of a value that did not change from the old object
//! are dropped.
//!
//! Recursion follows the schema, so it is bounded by the schema depth
//! ([`super::node::MAX_SCHEMA_DEPTH`]). Object keys are visited in the
//! object's own order (sorted with serde_json's default map), schema
//! properties in name order; upstream iterates Go maps, in random order.

use serde_json::{Map, Value};

use super::failure::{Failure, Kind, Outcome};
use super::format;
use super::gofmt::{self, GoNumber};
use super::node::{Additional, Node};
use super::path::Path;

/// A [`Path`] rendered (kube-openapi style) the first time an error needs
/// it.
pub(crate) struct Name<'a> {
    /// The location.
    pub at: &'a Path<'a>,
    text: std::cell::OnceCell<String>,
}

impl<'a> Name<'a> {
    fn new(at: &'a Path<'a>) -> Name<'a> {
        Name {
            at,
            text: std::cell::OnceCell::new(),
        }
    }

    /// The kube-openapi spelling.
    fn get(&self) -> &str {
        self.text.get_or_init(|| self.at.openapi())
    }
}

/// Validates `data` against `node` at kube-openapi path `path`; `old` is the
/// correlated old value when ratcheting (`None`: no ratcheting here), and
/// `ratchets` says whether this node is a ratcheting boundary (a property,
/// an item or the root, not a junctor branch).
pub(crate) fn validate(
    node: &Node,
    data: &Value,
    at: &Path<'_>,
    old: Option<&Value>,
    ratchets: bool,
) -> Outcome {
    let mut res = Outcome::default();
    let path = &Name::new(at);
    // `matches` follows upstream's `MatchCount`: one per validator that
    // applies, one more from the type check when it passes, from the
    // junctors, number and array validators, and one per node.
    if data.is_null() {
        let before = res.errors.len();
        type_check(node, data, path, &mut res);
        if res.errors.len() == before {
            res.matches += 1;
        }
        enum_check(node, data, path, &mut res);
    } else {
        if !node.types.is_empty() || !node.format.is_empty() {
            let before = res.errors.len();
            type_check(node, data, path, &mut res);
            res.matches += if res.errors.len() == before { 2 } else { 1 };
        }
        junctors(node, data, path, old, &mut res);
        res.matches += 2;
        if let Value::String(s) = data {
            string_check(node, s, path, &mut res);
            res.matches += 1;
            // Every format left after parsing is one kube-openapi registers.
            if !node.format.is_empty() {
                if !format::valid(&node.format, s) {
                    let path = path.get();
                    res.add(Failure::new(
                        Kind::InvalidType,
                        path,
                        Some(data.clone()),
                        format!(
                            "{path} in body must be of type {}: {}",
                            node.format,
                            gofmt::quote(s)
                        ),
                    ));
                }
                res.matches += 1;
            }
        }
        if let Value::Number(n) = data {
            number_check(node, GoNumber::of(n), path, &mut res);
            res.matches += 2;
        }
        if let Value::Array(items) = data {
            array_check(node, items, path, old, &mut res);
            res.matches += 2;
        }
        enum_check(node, data, path, &mut res);
        res.matches += 1;
        if let Value::Object(map) = data {
            object_check(node, map, path, old, &mut res);
            res.matches += 1;
        }
        res.matches += 1;
    }
    if ratchets
        && !res.is_valid()
        && let Some(old) = old
        && correlated_equal(node, data, old)
    {
        res.ratchet();
    }
    res
}

/// The Go kind name (`schemaInfoForType`) and integer/float format of
/// `data`.
fn type_info(data: &Value) -> (&'static str, &'static str) {
    match data {
        Value::Bool(_) => ("boolean", ""),
        Value::String(_) => ("string", ""),
        Value::Number(n) => match GoNumber::of(n) {
            GoNumber::Int(_) => ("integer", "int64"),
            GoNumber::Float(_) => ("number", "float64"),
        },
        Value::Array(_) => ("array", ""),
        Value::Object(_) => ("object", ""),
        Value::Null => ("", ""),
    }
}

/// `typeValidator.Validate`.
fn type_check(node: &Node, data: &Value, path: &Name<'_>, res: &mut Outcome) {
    let has = |t: &str| node.types.iter().any(|x| x == t);
    if data.is_null() {
        if !node.types.is_empty() && !has("null") && !node.nullable {
            let path = path.get();
            res.add(Failure::invalid_type(path, &node.types.join(","), "null"));
        }
        return;
    }
    let (sch_type, format) = type_info(data);
    let is_float_int = match data {
        Value::Number(n) => match GoNumber::of(n) {
            GoNumber::Float(f) => gofmt::is_json_integer(f) && has("integer"),
            GoNumber::Int(_) => false,
        },
        _ => false,
    };
    let is_int_float = sch_type == "integer" && has("number");
    let stringish = matches!(data, Value::String(_) | Value::Array(_));
    let formatted = !node.format.is_empty();
    let type_ok = has(sch_type) || is_float_int || is_int_float;
    if formatted && !stringish && !(type_ok || format == node.format) {
        let path = path.get();
        res.add(Failure::invalid_type(path, &node.format, format));
        return;
    }
    let numeric = has("number") || has("integer");
    if formatted && stringish && !numeric {
        return;
    }
    if !type_ok {
        let path = path.get();
        res.add(Failure::invalid_type(path, &node.types.join(","), sch_type));
    }
}

/// `stringValidator.Validate`: the first of maxLength, minLength, pattern
/// that fails.
fn string_check(node: &Node, s: &str, path: &Name<'_>, res: &mut Outcome) {
    let runes = s.chars().count() as i64;
    let value = || Some(Value::String(s.to_owned()));
    if let Some(max) = node.max_length
        && runes > max
    {
        let path = path.get();
        res.add(Failure::new(
            Kind::TooLong(max),
            path,
            value(),
            format!("{path} in body should be at most {max} chars long"),
        ));
        return;
    }
    if let Some(min) = node.min_length
        && runes < min
    {
        let path = path.get();
        res.add(Failure::new(
            Kind::Invalid,
            path,
            value(),
            format!("{path} in body should be at least {min} chars long"),
        ));
        return;
    }
    if let Some(p) = &node.pattern {
        match &p.regex {
            Ok(re) if re.is_match(s) => {}
            Ok(_) => {
                let path = path.get();
                res.add(Failure::new(
                    Kind::Invalid,
                    path,
                    value(),
                    format!("{path} in body should match '{}'", p.source),
                ));
            }
            Err(e) => {
                let path = path.get();
                res.add(Failure::new(
                    Kind::Invalid,
                    path,
                    value(),
                    format!(
                        "{path} in body should match '{}, but pattern is invalid: {e}'",
                        p.source
                    ),
                ));
            }
        }
    }
}

/// `numberValidator.Validate`: multipleOf, then minimum, then maximum,
/// compared in the data's own Go type (an `int64` against the bound
/// truncated to `int64`, as upstream).
fn number_check(node: &Node, n: GoNumber, path: &Name<'_>, res: &mut Outcome) {
    let value = || {
        Some(match n {
            GoNumber::Int(i) => Value::from(i),
            GoNumber::Float(f) => Value::from(f),
        })
    };
    if let Some(factor) = node.multiple_of {
        match n {
            GoNumber::Int(i) => {
                let f = factor as i64;
                if f <= 0 {
                    let path = path.get();
                    res.add(Failure::new(
                        Kind::Invalid,
                        path,
                        Some(Value::from(f)),
                        format!("factor MultipleOf declared for {path} must be positive: {f}"),
                    ));
                } else if i % f != 0 {
                    let path = path.get();
                    res.add(Failure::new(
                        Kind::Invalid,
                        path,
                        value(),
                        format!("{path} in body should be a multiple of {f}"),
                    ));
                }
            }
            GoNumber::Float(d) => {
                if factor <= 0.0 {
                    let path = path.get();
                    res.add(Failure::new(
                        Kind::Invalid,
                        path,
                        Some(Value::from(factor)),
                        format!(
                            "factor MultipleOf declared for {path} must be positive: {}",
                            gofmt::float_v(factor)
                        ),
                    ));
                } else {
                    let mult = if factor < 1.0 {
                        1.0 / factor * d
                    } else {
                        d / factor
                    };
                    if !gofmt::is_json_integer(mult) {
                        let path = path.get();
                        res.add(Failure::new(
                            Kind::Invalid,
                            path,
                            value(),
                            format!(
                                "{path} in body should be a multiple of {}",
                                gofmt::float_v(factor)
                            ),
                        ));
                    }
                }
            }
        }
    }
    let bound = |b: f64| match n {
        GoNumber::Int(_) => GoNumber::Int(b as i64),
        GoNumber::Float(_) => GoNumber::Float(b),
    };
    let cmp = |b: GoNumber| match (n, b) {
        (GoNumber::Int(x), GoNumber::Int(y)) => x.partial_cmp(&y),
        (x, y) => x.as_f64().partial_cmp(&y.as_f64()),
    };
    use std::cmp::Ordering::{Equal, Greater, Less};
    if let Some(min) = node.minimum {
        let b = bound(min);
        let below = match cmp(b) {
            Some(Less) => true,
            Some(Equal) => node.exclusive_minimum,
            _ => false,
        };
        if below {
            let op = if node.exclusive_minimum {
                "greater than"
            } else {
                "greater than or equal to"
            };
            let path = path.get();
            res.add(Failure::new(
                Kind::Invalid,
                path,
                value(),
                format!("{path} in body should be {op} {}", gofmt::number_v(b)),
            ));
        }
    }
    if let Some(max) = node.maximum {
        let b = bound(max);
        let above = match cmp(b) {
            Some(Greater) => true,
            Some(Equal) => node.exclusive_maximum,
            _ => false,
        };
        if above {
            let op = if node.exclusive_maximum {
                "less than"
            } else {
                "less than or equal to"
            };
            let path = path.get();
            res.add(Failure::new(
                Kind::Invalid,
                path,
                value(),
                format!("{path} in body should be {op} {}", gofmt::number_v(b)),
            ));
        }
    }
}

/// `schemaSliceValidator.Validate`: items, then minItems, maxItems,
/// uniqueItems.
fn array_check(
    node: &Node,
    items: &[Value],
    path: &Name<'_>,
    old: Option<&Value>,
    res: &mut Outcome,
) {
    if let Some(item) = &node.items {
        for (i, v) in items.iter().enumerate() {
            let old_item = old.and_then(|o| correlate_index(node, v, o));
            res.merge(validate(item, v, &Path::Index(path.at, i), old_item, true));
        }
    }
    let size = items.len() as i64;
    if let Some(min) = node.min_items
        && size < min
    {
        let path = path.get();
        res.add(Failure::new(
            Kind::Invalid,
            path,
            Some(Value::from(size)),
            format!("{path} in body should have at least {min} items"),
        ));
    }
    if let Some(max) = node.max_items
        && size > max
    {
        let path = path.get();
        res.add(Failure::new(
            Kind::TooMany { actual: size, max },
            path,
            Some(Value::from(size)),
            format!("{path} in body should have at most {max} items"),
        ));
    }
    if node.unique_items {
        let duplicate = items
            .iter()
            .enumerate()
            .any(|(i, a)| items[..i].iter().any(|b| a == b));
        if duplicate {
            let path = path.get();
            res.add(Failure::new(
                Kind::Invalid,
                path,
                None,
                format!("{path} in body shouldn't contain duplicates"),
            ));
        }
    }
}

/// `basicCommonValidator.Validate`: `enum`.
fn enum_check(node: &Node, data: &Value, path: &Name<'_>, res: &mut Outcome) {
    let Some(values) = &node.enumeration else {
        return;
    };
    if values.is_empty() || values.iter().any(|e| enum_matches(data, e)) {
        return;
    }
    let value = (!data.is_null()).then(|| data.clone());
    let path = path.get();
    res.add(Failure::new(
        Kind::Enum(values.clone()),
        path,
        value,
        format!(
            "{path} in body should be one of [{}]",
            values
                .iter()
                .map(|v| match v {
                    Value::String(s) => s.clone(),
                    other => gofmt::json(other),
                })
                .collect::<Vec<_>>()
                .join(" ")
        ),
    ));
}

/// Go's `reflect.ValueOf(data).Convert(typeof(enum))` then `DeepEqual`:
/// numbers compare after conversion to the enum value's Go type (a float
/// truncated to `int64`), an integer converts to a string as a rune, other
/// kinds must be equal.
fn enum_matches(data: &Value, e: &Value) -> bool {
    match (data, e) {
        (Value::Null, _) => false,
        (Value::Number(d), Value::Number(v)) => match (GoNumber::of(d), GoNumber::of(v)) {
            (GoNumber::Int(a), GoNumber::Int(b)) => a == b,
            (GoNumber::Float(a), GoNumber::Int(b)) => a as i64 == b,
            (a, GoNumber::Float(b)) => a.as_f64() == b,
        },
        (Value::Number(d), Value::String(s)) => match GoNumber::of(d) {
            GoNumber::Int(i) => {
                let c = u32::try_from(i)
                    .ok()
                    .and_then(char::from_u32)
                    .unwrap_or('\u{FFFD}');
                s.chars().eq(std::iter::once(c))
            }
            GoNumber::Float(_) => false,
        },
        (a, b) => a == b,
    }
}

/// `objectValidator.Validate`.
fn object_check(
    node: &Node,
    map: &Map<String, Value>,
    path: &Name<'_>,
    old: Option<&Value>,
    res: &mut Outcome,
) {
    let keys = map.len() as i64;
    if let Some(min) = node.min_properties
        && keys < min
    {
        let path = path.get();
        res.add(Failure::new(
            Kind::Invalid,
            path,
            Some(Value::from(keys)),
            format!("{path} in body should have at least {min} properties"),
        ));
    }
    if let Some(max) = node.max_properties
        && keys > max
    {
        let path = path.get();
        res.add(Failure::new(
            Kind::TooMany { actual: keys, max },
            path,
            Some(Value::from(keys)),
            format!("{path} in body should have at most {max} properties"),
        ));
    }
    let old_map = old.and_then(Value::as_object);
    let at_root = path.at.is_root();
    // Upstream `CorrelatedObject.Key`: the old value of a field with a
    // schema; never `kind`/`apiVersion` of the resource.
    let child_old = |key: &str| -> Option<&Value> {
        if at_root && (key == "kind" || key == "apiVersion") {
            return None;
        }
        node.field(key)?;
        old_map?.get(key)
    };
    match &node.additional {
        Some(Additional::Allows(false)) => {
            for k in map.keys() {
                if !node.properties.contains_key(k.as_str()) {
                    let path = path.get();
                    res.add(Failure::new(
                        Kind::Invalid,
                        path,
                        Some(Value::String((*k).clone())),
                        format!("{path}.{k} in body is a forbidden property"),
                    ));
                }
            }
        }
        Some(Additional::Schema(schema)) => {
            for (k, v) in map {
                if !node.properties.contains_key(k.as_str()) {
                    res.merge(validate(
                        schema,
                        v,
                        &Path::Extra(path.at, k),
                        child_old(k),
                        true,
                    ));
                }
            }
        }
        _ => {}
    }
    for (name, schema) in &node.properties {
        if let Some(v) = map.get(name) {
            res.merge(validate(
                schema,
                v,
                &Path::Prop(path.at, name),
                child_old(name),
                true,
            ));
        }
    }
    for k in &node.required {
        if !map.contains_key(k) {
            let path = path.get();
            let name = format!("{path}.{k}");
            res.add(Failure::new(
                Kind::Required,
                &name,
                None,
                format!("{name} in body is required"),
            ));
        }
    }
}

/// `schemaPropsValidator.Validate`: anyOf, oneOf, allOf, not.
fn junctors(node: &Node, data: &Value, path: &Name<'_>, old: Option<&Value>, res: &mut Outcome) {
    let quoted = || gofmt::quote(path.get());
    if !node.any_of.is_empty() {
        let mut best: Option<Outcome> = None;
        let mut success: Option<Outcome> = None;
        for branch in &node.any_of {
            let r = validate(branch, data, path.at, old, false);
            if r.is_valid() {
                success = Some(r);
                best = None;
                break;
            }
            if best.as_ref().is_none_or(|b| r.matches > b.matches) {
                best = Some(r);
            }
        }
        if success.is_none() {
            res.add(Failure::composite(format!(
                "{} must validate at least one schema (anyOf)",
                quoted()
            )));
        }
        if let Some(b) = best {
            res.merge(b);
        } else if let Some(s) = success {
            res.merge(s);
        }
    }
    if !node.one_of.is_empty() {
        let mut best: Option<Outcome> = None;
        let mut first_success: Option<Outcome> = None;
        let mut validated = 0usize;
        for branch in &node.one_of {
            let r = validate(branch, data, path.at, old, false);
            if r.is_valid() {
                validated += 1;
                best = None;
                if first_success.is_none() {
                    first_success = Some(r);
                }
                continue;
            }
            if validated == 0 && best.as_ref().is_none_or(|b| r.matches > b.matches) {
                best = Some(r);
            }
        }
        if validated != 1 {
            let extra = if validated == 0 {
                "Found none valid".to_owned()
            } else {
                format!("Found {validated} valid alternatives")
            };
            res.add(Failure::composite(format!(
                "{} must validate one and only one schema (oneOf). {extra}",
                quoted()
            )));
            if let Some(b) = best {
                res.merge(b);
            }
        } else if let Some(s) = first_success {
            res.merge(s);
        }
    }
    if !node.all_of.is_empty() {
        let mut validated = 0usize;
        for branch in &node.all_of {
            let r = validate(branch, data, path.at, old, false);
            if r.is_valid() {
                validated += 1;
            }
            res.merge(r);
        }
        if validated != node.all_of.len() {
            let extra = if validated == 0 {
                ". None validated"
            } else {
                ""
            };
            res.add(Failure::composite(format!(
                "{} must validate all the schemas (allOf){extra}",
                quoted()
            )));
        }
    }
    if let Some(not) = &node.not
        && validate(not, data, path.at, None, false).is_valid()
    {
        res.add(Failure::composite(format!(
            "{} must not validate the schema (not)",
            quoted()
        )));
    }
}

/// The old item correlated with the new item `v` of a list (upstream
/// `CorrelatedObject.Index`): only `x-kubernetes-list-type: map` lists
/// correlate, by their map keys.
fn correlate_index<'a>(list: &Node, v: &Value, old: &'a Value) -> Option<&'a Value> {
    if list.list_type.as_deref() != Some("map") {
        return None;
    }
    let new_obj = v.as_object()?;
    old.as_array()?.iter().find(|o| {
        o.as_object().is_some_and(|o| {
            list.list_map_keys
                .iter()
                .all(|k| o.get(k) == new_obj.get(k))
        })
    })
}

/// Upstream `CorrelatedObject.CachedDeepEqual`: objects compare key by key
/// (a key without a schema never counts as equal), map lists element by
/// correlated element, everything else by value.
fn correlated_equal(node: &Node, new: &Value, old: &Value) -> bool {
    match (new, old) {
        (Value::Object(n), Value::Object(o)) => {
            n.len() == o.len()
                && n.iter().all(|(k, nv)| match (node.field(k), o.get(k)) {
                    (Some(s), Some(ov)) => correlated_equal(s, nv, ov),
                    _ => false,
                })
        }
        (Value::Array(n), Value::Array(_)) if node.list_type.as_deref() == Some("map") => {
            let Some(item) = &node.items else {
                return new == old;
            };
            let Some(o) = old.as_array() else {
                return false;
            };
            n.len() == o.len()
                && n.iter().all(|nv| {
                    correlate_index(node, nv, old).is_some_and(|ov| correlated_equal(item, nv, ov))
                })
        }
        _ => new == old,
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn run(schema: Value, data: Value) -> Vec<String> {
        let node = Node::parse(&schema, "s", 0).unwrap();
        validate(&node, &data, &Path::Root, None, false)
            .errors
            .iter()
            .map(|f| f.to_cause().to_string())
            .collect()
    }

    #[test]
    fn integer_accepts_integral_floats_and_number_accepts_integers() {
        let s = json!({"type": "object", "properties": {
            "i": {"type": "integer"}, "n": {"type": "number"}}});
        assert!(run(s.clone(), json!({"i": 1.0, "n": 2})).is_empty());
        assert_eq!(
            run(s, json!({"i": 1.5})),
            [r#"i: Invalid value: "number": i in body must be of type integer: "number""#]
        );
    }

    #[test]
    fn minimum_compares_integers_against_the_truncated_bound() {
        let s = json!({"type": "object", "properties": {"x": {"type": "integer", "minimum": 1.5}}});
        assert!(
            run(s, json!({"x": 1})).is_empty(),
            "int64(1.5) == 1, as upstream"
        );
    }

    #[test]
    fn enum_conversion_quirks() {
        assert!(enum_matches(&json!(1.0), &json!(1)));
        assert!(enum_matches(&json!(1), &json!(1.0)));
        assert!(enum_matches(&json!(97), &json!("a")));
        assert!(!enum_matches(&json!("1"), &json!(1)));
    }
}
