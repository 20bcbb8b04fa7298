//! JSON values printed the way Go's `fmt` prints the decoded
//! `interface{}` values upstream's error messages embed (`%v`, `%s`,
//! `reflect.TypeOf`), so that error texts match upstream byte for byte.
//!
//! Numbers follow the apiserver's decoding
//! (`UnmarshalCaseSensitivePreserveInts`): integers that fit are `int64`,
//! everything else is `float64`.

use serde_json::{Number, Value};

/// The Go dynamic type of a decoded JSON value; `Nil` is JSON `null`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum GoType {
    Nil,
    Bool,
    Int64,
    Float64,
    String,
    Map,
    Slice,
}

impl GoType {
    /// The type of `v`.
    pub(crate) fn of(v: &Value) -> Self {
        match v {
            Value::Null => Self::Nil,
            Value::Bool(_) => Self::Bool,
            Value::Number(n) if n.as_i64().is_some() => Self::Int64,
            Value::Number(_) => Self::Float64,
            Value::String(_) => Self::String,
            Value::Object(_) => Self::Map,
            Value::Array(_) => Self::Slice,
        }
    }

    /// `reflect.TypeOf(v)` printed with `%s` (a nil type prints as
    /// `%!s(<nil>)`).
    pub(crate) fn name(self) -> &'static str {
        match self {
            Self::Nil => "%!s(<nil>)",
            Self::Bool => "bool",
            Self::Int64 => "int64",
            Self::Float64 => "float64",
            Self::String => "string",
            Self::Map => "map[string]interface {}",
            Self::Slice => "[]interface {}",
        }
    }
}

/// `fmt.Sprintf("%v", v)`.
pub(crate) fn v(value: &Value) -> String {
    let mut out = String::new();
    write(&mut out, value, false);
    out
}

/// `fmt.Sprintf("%s", v)`.
pub(crate) fn s(value: &Value) -> String {
    let mut out = String::new();
    write(&mut out, value, true);
    out
}

/// `fmt.Sprint` of a `[][]interface{}`.
pub(crate) fn lists(lists: &[&[Value]]) -> String {
    let mut out = String::from("[");
    for (i, l) in lists.iter().enumerate() {
        if i > 0 {
            out.push(' ');
        }
        out.push('[');
        for (j, item) in l.iter().enumerate() {
            if j > 0 {
                out.push(' ');
            }
            write(&mut out, item, false);
        }
        out.push(']');
    }
    out.push(']');
    out
}

fn write(out: &mut String, value: &Value, verb_s: bool) {
    match value {
        Value::String(s) => out.push_str(s),
        Value::Object(m) => {
            // Go prints map keys sorted; serde_json's map is sorted too.
            out.push_str("map[");
            for (i, (k, v)) in m.iter().enumerate() {
                if i > 0 {
                    out.push(' ');
                }
                out.push_str(k);
                out.push(':');
                write(out, v, verb_s);
            }
            out.push(']');
        }
        Value::Array(a) => {
            out.push('[');
            for (i, v) in a.iter().enumerate() {
                if i > 0 {
                    out.push(' ');
                }
                write(out, v, verb_s);
            }
            out.push(']');
        }
        scalar => {
            let (ty, text) = match scalar {
                Value::Null => ("", "<nil>".to_owned()),
                Value::Bool(b) => ("bool", b.to_string()),
                Value::Number(n) => number(n),
                _ => ("", String::new()),
            };
            if verb_s {
                if ty.is_empty() {
                    out.push_str(&format!("%!s({text})"));
                } else {
                    out.push_str(&format!("%!s({ty}={text})"));
                }
            } else {
                out.push_str(&text);
            }
        }
    }
}

fn number(n: &Number) -> (&'static str, String) {
    match n.as_i64() {
        Some(i) => ("int64", i.to_string()),
        None => ("float64", float(n.as_f64().unwrap_or(f64::NAN))),
    }
}

use skein_admission::gofmt::float_v as float;

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn values_print_like_go() {
        assert_eq!(
            v(&json!({"b": [1, "x", null], "a": true})),
            "map[a:true b:[1 x <nil>]]"
        );
        assert_eq!(s(&json!(1)), "%!s(int64=1)");
        assert_eq!(s(&json!(1.5)), "%!s(float64=1.5)");
        assert_eq!(s(&json!(null)), "%!s(<nil>)");
        assert_eq!(s(&json!("merge")), "merge");
        assert_eq!(v(&json!(1000000.0)), "1e+06");
        assert_eq!(v(&json!(123456.0)), "123456");
        assert_eq!(v(&json!(0.00001)), "1e-05");
        assert_eq!(v(&json!(0.0001)), "0.0001");
        assert_eq!(v(&json!(123456789.5)), "1.234567895e+08");
        assert_eq!(lists(&[&[json!(1)], &[]]), "[[1] []]");
    }
}
