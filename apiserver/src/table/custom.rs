//! Tables of custom resources: apiextensions-apiserver's table convertor
//! (`pkg/registry/customresource/tableconvertor`, v1.33) over a CRD
//! version's `additionalPrinterColumns`.
//!
//! # Contract
//!
//! - **Columns**: `Name` (format `name`, ObjectMeta's `name` description)
//!   first, then one column per printer column with its `name`, `type`,
//!   `format`, `priority`, and its `description` or else `Custom resource
//!   definition column (in JSONPath format): <jsonPath>`. A version
//!   without printer columns gets upstream's default `Age` column (type
//!   `date`, `.metadata.creationTimestamp`), as `GetColumnsForVersion`
//!   serves it.
//! - **Cells** read the first value the column's JSONPath selects
//!   ([`JsonPath::find`]); no value, or an evaluation error, is a `null`
//!   cell (kubectl prints `<none>`). Otherwise, by column type:
//!   - `string`: the value as upstream's `PrintResults` prints it — strings
//!     as they are, numbers as Go's `%v`, booleans `true`/`false`, objects
//!     and arrays as Go's compact JSON (`["bar","baz"]`), `null` as
//!     `<no value>`;
//!   - `integer`: an integer as is, a float truncated; `number`: either as
//!     a float; `boolean`: a boolean; anything else `null`;
//!   - `date`: an RFC 3339 string as its age at `now` (`5m`), `""`,
//!     `"null"` and the zero time as `<unknown>`, other text as
//!     `<invalid>`; a non-string `null`.
//! - **Rows** carry no conditions; a list with no items has `"rows": []`
//!   (upstream's convertor allocates its rows). Row objects, list metadata
//!   and watch framing are the built-in kinds' (see [`super`]).
//! - **Never panics** on any object or column definitions.
//!
//! Numbers are typed as Go's unstructured decoder types them: JSON integers
//! that fit `int64` are integers, every other number a float.

use std::sync::Arc;

use serde_json::{Number, Value};
use skein_apiextensions::jsonpath::JsonPath;
use time::OffsetDateTime;

use super::column::Column;
use super::descriptions as doc;
use super::{
    IncludeObject, ListMeta, Rows, WatchPrinter, WatchTables, age, assemble, columns,
    list_metadata, row, single, timestamp,
};
use crate::wire::{Encoder, Table as WireTable};

/// The printer of one CRD version: its column definitions and their parsed
/// JSONPaths. Built once per CRD version; immutable, `Send + Sync`.
#[derive(Clone, Debug)]
pub struct CustomColumns {
    /// `Name`, then one column per path.
    columns: Vec<Column>,
    /// The path of `columns[i + 1]`.
    paths: Vec<JsonPath>,
}

impl CustomColumns {
    /// The columns of a CRD version's `additionalPrinterColumns` (a JSON
    /// array of `CustomResourceColumnDefinition`s, or `null`/empty for the
    /// default `Age` column).
    ///
    /// Errors: upstream's `unrecognized column definition "<jsonPath>"` for
    /// a path that does not parse, and a non-array value.
    pub fn new(additional_printer_columns: &Value) -> Result<Self, String> {
        let (columns, error) = Self::build(additional_printer_columns);
        match error {
            None => Ok(columns),
            Some(error) => Err(error),
        }
    }

    /// What kube-apiserver serves when [`Self::new`] fails: upstream logs
    /// the error and keeps the columns before the first bad path (only
    /// `Name` for a non-array value).
    pub fn lenient(additional_printer_columns: &Value) -> Self {
        Self::build(additional_printer_columns).0
    }

    /// The columns of the Table of a custom resource's `scale` subresource
    /// (upstream's `getScaleColumnsForVersion`), given the CRD version's
    /// `subresources.scale` (or `null`): `Name`, then `Desired`
    /// (`.spec.replicas`) when it has a `specReplicasPath`, `Available`
    /// (`.status.replicas`) when it has a `statusReplicasPath`, then `Age`.
    /// The rows are of the `autoscaling/v1` `Scale` object.
    pub fn scale(scale_subresource: &Value) -> Self {
        let has = |key: &str| {
            scale_subresource
                .get(key)
                .and_then(Value::as_str)
                .is_some_and(|path| !path.is_empty())
        };
        let mut definitions = Vec::new();
        if has("specReplicasPath") {
            definitions.push(serde_json::json!({
                "name": "Desired",
                "type": "integer",
                "description": "Number of desired replicas",
                "jsonPath": ".spec.replicas",
            }));
        }
        if has("statusReplicasPath") {
            definitions.push(serde_json::json!({
                "name": "Available",
                "type": "integer",
                "description": "Number of actual replicas",
                "jsonPath": ".status.replicas",
            }));
        }
        definitions.push(age_definition());
        Self::lenient(&Value::Array(definitions))
    }

    /// The column definitions, in cell order.
    pub fn columns(&self) -> &[Column] {
        &self.columns
    }

    /// The cells of `object`'s row at `now`: its name, then one cell per
    /// printer column.
    pub fn row(&self, object: &Value, now: OffsetDateTime) -> Vec<Value> {
        let mut cells = Vec::with_capacity(1 + self.paths.len());
        cells.push(Value::String(super::fields::name(object).to_owned()));
        for (path, column) in self.paths.iter().zip(self.columns.iter().skip(1)) {
            let found = path.find(object);
            cells.push(match found.first() {
                None => Value::Null,
                Some(value) if column.type_ == "string" => Value::String(print_text(value)),
                Some(value) => cell_for_json_value(&column.type_, value, now),
            });
        }
        cells
    }

    fn build(definitions: &Value) -> (Self, Option<String>) {
        let mut built = Self {
            columns: vec![Column::name()],
            paths: Vec::new(),
        };
        let default_age;
        let definitions: &[Value] = match definitions {
            Value::Array(items) if !items.is_empty() => items,
            Value::Array(_) | Value::Null => {
                default_age = [age_definition()];
                &default_age
            }
            _ => {
                return (
                    built,
                    Some("additionalPrinterColumns must be a list".to_owned()),
                );
            }
        };
        for definition in definitions {
            let text = |key: &str| {
                definition
                    .get(key)
                    .and_then(Value::as_str)
                    .unwrap_or_default()
                    .to_owned()
            };
            let json_path = text("jsonPath");
            let Ok(path) = JsonPath::parse(&json_path) else {
                let error = format!(
                    "unrecognized column definition {}",
                    skein_admission::selector::go::go_quote(&json_path)
                );
                return (built, Some(error));
            };
            let description = match text("description") {
                d if d.is_empty() => {
                    format!("Custom resource definition column (in JSONPath format): {json_path}")
                }
                d => d,
            };
            let priority = definition
                .get("priority")
                .and_then(Value::as_i64)
                .and_then(|p| i32::try_from(p).ok())
                .unwrap_or(0);
            built.paths.push(path);
            built.columns.push(Column {
                name: text("name").into(),
                type_: text("type").into(),
                format: text("format").into(),
                description: description.into(),
                priority,
            });
        }
        (built, None)
    }
}

/// Upstream's default `Age` column definition.
fn age_definition() -> Value {
    serde_json::json!({
        "name": "Age",
        "type": "date",
        "description": doc::META_CREATION_TIMESTAMP,
        "jsonPath": ".metadata.creationTimestamp",
    })
}

impl Rows for CustomColumns {
    fn column_defs(&self) -> &[Column] {
        self.columns()
    }

    fn cells(&self, object: &Value, now: OffsetDateTime) -> Vec<Value> {
        self.row(object, now)
    }

    fn conditions(&self, _object: &Value) -> Vec<Value> {
        Vec::new()
    }
}

/// The Table for a LIST of custom resources printed with `printer`.
pub fn custom_table(
    printer: &CustomColumns,
    objects: &[Value],
    list_meta: &ListMeta,
    include: IncludeObject,
    now: OffsetDateTime,
) -> Value {
    let rows: Vec<Value> = objects
        .iter()
        .map(|o| row(printer, o, include, now))
        .collect();
    assemble(
        list_metadata(list_meta),
        columns(printer, true),
        Value::Array(rows),
    )
}

/// The Table for a GET of one custom resource: one row, the object's
/// `resourceVersion`.
pub fn custom_object_table(
    columns: &CustomColumns,
    object: &Value,
    include: IncludeObject,
    now: OffsetDateTime,
) -> Value {
    single(columns, object, include, true, now)
}

impl WatchTables {
    /// State for one watch of custom resources printed with `columns`.
    pub fn custom(columns: Arc<CustomColumns>, include: IncludeObject) -> Self {
        Self {
            printer: WatchPrinter::Custom(columns),
            include,
            headers_sent: false,
        }
    }
}

/// A number as Go's unstructured JSON decoder holds it.
enum GoNumber {
    Int(i64),
    Float(f64),
}

fn go_number(n: &Number) -> GoNumber {
    match n.as_i64() {
        Some(i) => GoNumber::Int(i),
        None => GoNumber::Float(n.as_f64().unwrap_or(0.0)),
    }
}

/// Upstream's `cellForJSONValue` (for every type but `string`, which the
/// convertor prints with [`print_text`]).
fn cell_for_json_value(column_type: &str, value: &Value, now: OffsetDateTime) -> Value {
    match (column_type, value) {
        ("integer", Value::Number(n)) => match go_number(n) {
            GoNumber::Int(i) => i.into(),
            GoNumber::Float(f) => go_float_to_int(f).into(),
        },
        ("number", Value::Number(n)) => match go_number(n) {
            // i64 → f64 rounds as Go's float64(int64) does.
            #[allow(clippy::cast_precision_loss)]
            GoNumber::Int(i) => Value::from(i as f64),
            GoNumber::Float(f) => Value::from(f),
        },
        ("boolean", Value::Bool(b)) => Value::Bool(*b),
        ("string", Value::String(s)) => Value::String(s.clone()),
        ("date", Value::String(s)) => Value::String(date_cell(s, now)),
        _ => Value::Null,
    }
}

/// Go's `int64(f)` on amd64: truncation toward zero, and the "integer
/// indefinite" value `i64::MIN` when out of range.
fn go_float_to_int(f: f64) -> i64 {
    // 2^63 as f64 is exact; anything at or beyond it is out of range.
    const LIMIT: f64 = 9_223_372_036_854_775_808.0;
    if f.is_nan() || !(-LIMIT..LIMIT).contains(&f) {
        i64::MIN
    } else {
        #[allow(clippy::cast_possible_truncation)]
        let truncated = f.trunc() as i64;
        truncated
    }
}

/// A `date` cell: `metav1.Time.UnmarshalQueryParameter` then
/// `ConvertToHumanReadableDateType`.
fn date_cell(text: &str, now: OffsetDateTime) -> String {
    if text.is_empty() || text == "null" || is_zero_time(text) {
        return "<unknown>".to_owned();
    }
    match timestamp::parse(text) {
        Some(t) => age::since(Some(t), now),
        None => "<invalid>".to_owned(),
    }
}

/// Whether `text` is Go's zero time written in RFC 3339 (which
/// [`timestamp::parse`] reads as absent): `0001-01-01T00:00:00`, optional
/// zero fraction, UTC.
fn is_zero_time(text: &str) -> bool {
    let Some(rest) = text.strip_prefix("0001-01-01T00:00:00") else {
        return false;
    };
    let rest = match rest.strip_prefix('.') {
        Some(fraction) => {
            let digits = fraction.trim_start_matches('0');
            if digits.len() == fraction.len() {
                return false;
            }
            digits
        }
        None => rest,
    };
    matches!(rest, "Z" | "+00:00" | "-00:00")
}

/// Upstream's `PrintResults` of one value, as the convertor calls it
/// (`reflect.ValueOf(value)`): maps and slices as `json.Marshal` output,
/// everything else as `fmt.Fprint`, `nil` as `<no value>`.
fn print_text(value: &Value) -> String {
    match value {
        Value::Null => "<no value>".to_owned(),
        Value::Bool(b) => b.to_string(),
        Value::String(s) => s.clone(),
        Value::Number(n) => match go_number(n) {
            GoNumber::Int(i) => i.to_string(),
            GoNumber::Float(f) => go_format_float(f),
        },
        Value::Array(_) | Value::Object(_) => {
            let mut out = Vec::new();
            Encoder::new(WireTable::get(), &mut out).untyped(value);
            String::from_utf8(out).unwrap_or_default()
        }
    }
}

use skein_admission::gofmt::float_v as go_format_float;

#[cfg(test)]
#[path = "custom_tests.rs"]
mod tests;
