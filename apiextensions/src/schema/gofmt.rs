//! Go's renderings of decoded JSON values (numbers are `int64` when they
//! are integers, else `float64`, as apimachinery's unstructured decoding
//! gives them), for messages that must read exactly as upstream's:
//! `%v`, `%q`, `%#v` and `encoding/json`.

use serde_json::{Number, Value};

pub(crate) use skein_admission::gofmt::{float_v, quote};

/// A JSON number as Go holds it after unstructured decoding.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) enum GoNumber {
    /// An integer that fits `int64`.
    Int(i64),
    /// Anything else.
    Float(f64),
}

impl GoNumber {
    /// The Go value of `n`.
    pub(crate) fn of(n: &Number) -> GoNumber {
        match n.as_i64() {
            Some(i) => GoNumber::Int(i),
            None => GoNumber::Float(n.as_f64().unwrap_or(f64::NAN)),
        }
    }

    /// The value as `float64`.
    pub(crate) fn as_f64(self) -> f64 {
        match self {
            GoNumber::Int(i) => i as f64,
            GoNumber::Float(f) => f,
        }
    }
}

/// Go's `%v` of a number.
pub(crate) fn number_v(n: GoNumber) -> String {
    match n {
        GoNumber::Int(i) => i.to_string(),
        GoNumber::Float(f) => float_v(f),
    }
}

/// How `field.Error.ErrorBody` prints a bad value: `null` for nil (quoted,
/// as upstream prints the string `"null"`), numbers and booleans with
/// `%v`, strings with `%q`, lists and maps with `%#v`.
pub(crate) fn error_value(v: Option<&Value>) -> String {
    match v {
        None | Some(Value::Null) => quote("null"),
        Some(Value::Bool(b)) => b.to_string(),
        Some(Value::Number(n)) => number_v(GoNumber::of(n)),
        Some(Value::String(s)) => quote(s),
        Some(other) => sharp_v(other),
    }
}

/// Go's `%#v` of a decoded JSON value (`[]interface {}{...}`,
/// `map[string]interface {}{...}` with sorted keys).
pub(crate) fn sharp_v(v: &Value) -> String {
    match v {
        Value::Null => "interface {}(nil)".to_owned(),
        Value::Bool(b) => b.to_string(),
        Value::Number(n) => number_v(GoNumber::of(n)),
        Value::String(s) => quote(s),
        Value::Array(items) => {
            let parts: Vec<String> = items.iter().map(sharp_v).collect();
            format!("[]interface {{}}{{{}}}", parts.join(", "))
        }
        Value::Object(map) => {
            let mut keys: Vec<&String> = map.keys().collect();
            keys.sort();
            let parts: Vec<String> = keys
                .into_iter()
                .map(|k| {
                    format!(
                        "{}:{}",
                        quote(k),
                        map.get(k).map_or_else(String::new, sharp_v)
                    )
                })
                .collect();
            format!("map[string]interface {{}}{{{}}}", parts.join(", "))
        }
    }
}

/// Go's `encoding/json.Marshal` of a decoded value, compact (numbers as Go
/// writes a `float64`/`int64`; keys sorted).
pub(crate) fn json(v: &Value) -> String {
    match v {
        Value::Number(n) => match GoNumber::of(n) {
            GoNumber::Int(i) => i.to_string(),
            GoNumber::Float(f) => json_float(f),
        },
        Value::Array(items) => {
            let parts: Vec<String> = items.iter().map(json).collect();
            format!("[{}]", parts.join(","))
        }
        Value::Object(map) => {
            let mut keys: Vec<&String> = map.keys().collect();
            keys.sort();
            let parts: Vec<String> = keys
                .into_iter()
                .map(|k| {
                    let key = serde_json::to_string(k).unwrap_or_default();
                    format!("{key}:{}", map.get(k).map_or_else(String::new, json))
                })
                .collect();
            format!("{{{}}}", parts.join(","))
        }
        other => other.to_string(),
    }
}

/// `encoding/json`'s float64: `%f`-style between 1e-6 and 1e21, else
/// `%e` with a short exponent.
fn json_float(f: f64) -> String {
    let abs = f.abs();
    if abs == 0.0 || (1e-6..1e21).contains(&abs) {
        format!("{f}")
    } else {
        let sci = format!("{f:e}");
        match sci.split_once('e') {
            Some((m, e)) if e.starts_with('-') => format!("{m}e-{}", &e[1..]),
            Some((m, e)) => format!("{m}e+{e}"),
            None => sci,
        }
    }
}

/// Whether `f` is an integer as go-openapi's `swag.IsFloat64AJSONInteger`
/// decides (within ±(2^53-1), relative error below 1e-9).
pub(crate) fn is_json_integer(f: f64) -> bool {
    const MAX: f64 = 9_007_199_254_740_991.0;
    if !f.is_finite() || !(-MAX..=MAX).contains(&f) {
        return false;
    }
    let g = f.trunc();
    if f == g {
        return true;
    }
    if g == 0.0 {
        return (f - g).abs() < 1e-9 * f64::MIN_POSITIVE;
    }
    let diff = (f - g).abs();
    diff / (f.abs() + g.abs()) < 1e-9
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn floats_print_as_go_v() {
        let cases = [
            (1.0, "1"),
            (1.5, "1.5"),
            (123456.0, "123456"),
            (1e6, "1e+06"),
            (1234567.0, "1.234567e+06"),
            (0.0001, "0.0001"),
            (0.00001, "1e-05"),
            (-2.5, "-2.5"),
            (1e21, "1e+21"),
        ];
        for (f, want) in cases {
            assert_eq!(float_v(f), want, "{f}");
        }
    }

    #[test]
    fn values_print_as_error_body() {
        assert_eq!(error_value(None), r#""null""#);
        assert_eq!(error_value(Some(&json!("a\"b"))), r#""a\"b""#);
        assert_eq!(error_value(Some(&json!(3))), "3");
        assert_eq!(error_value(Some(&json!(2.5))), "2.5");
        assert_eq!(
            error_value(Some(&json!({"b": 1, "a": ["x", null]}))),
            r#"map[string]interface {}{"a":[]interface {}{"x", interface {}(nil)}, "b":1}"#
        );
        assert_eq!(quote("tab\there\u{1}"), r#""tab\there\x01""#);
    }

    #[test]
    fn json_marshal_numbers() {
        assert_eq!(json(&json!(1.0)), "1");
        assert_eq!(json(&json!(1.5)), "1.5");
        assert_eq!(json(&json!({"b": 1, "a": "x"})), r#"{"a":"x","b":1}"#);
    }

    #[test]
    fn json_integers() {
        assert!(is_json_integer(3.0));
        assert!(is_json_integer(-3.0));
        assert!(!is_json_integer(3.5));
        assert!(is_json_integer(3.000_000_000_000_1));
        assert!(!is_json_integer(f64::NAN));
        assert!(!is_json_integer(1e300));
    }
}
