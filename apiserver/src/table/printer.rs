//! A kind's table printer and the registry that picks it.

use serde_json::Value;
use time::OffsetDateTime;

use super::column::Column;
use super::descriptions as doc;
use super::{fields, printers, timestamp};

/// How one kind is printed: its column definitions and a function from an
/// object (external JSON, as stored) to that object's cells.
///
/// Contract: `row` returns one cell per column (wide columns included —
/// kube-apiserver always prints the wide form and lets kubectl hide
/// priority-1 columns), for any input JSON, without panicking. The one
/// exception is upstream's own: IPAddress rows carry a trailing age cell
/// that has no column.
#[derive(Debug)]
pub struct Printer {
    pub(crate) columns: &'static [Column],
    pub(crate) cells: fn(&Value, OffsetDateTime) -> Vec<Value>,
    pub(crate) conditions: fn(&Value) -> Vec<Value>,
    pub(crate) empty_rows_are_null: bool,
}

impl Printer {
    /// The column definitions, in cell order.
    pub fn columns(&self) -> &[Column] {
        self.columns
    }

    /// The cells of `obj`'s row, computed at `now` (ages are relative to
    /// it).
    pub fn row(&self, obj: &Value, now: OffsetDateTime) -> Vec<Value> {
        (self.cells)(obj, now)
    }

    /// The row's `conditions` (`metav1.TableRowCondition` JSON); empty for
    /// every kind but Pod, which marks Succeeded/Failed pods `Completed`.
    pub fn conditions(&self, obj: &Value) -> Vec<Value> {
        (self.conditions)(obj)
    }

    /// Whether a list with no items has `"rows": null` rather than `[]`.
    /// Upstream's default convertor leaves its rows nil; the kind printers
    /// allocate an empty slice.
    pub(crate) fn empty_rows_are_null(&self) -> bool {
        self.empty_rows_are_null
    }
}

/// The printer for objects of `kind` in API group `group` (`""` or `"core"`
/// for the core group). Kinds without a dedicated printer — including
/// Role, ClusterRole and custom resources — get [`DEFAULT_PRINTER`]: Name and
/// Created At.
pub fn printer(group: &str, kind: &str) -> &'static Printer {
    let group = if group == "core" { "" } else { group };
    printers::lookup(group, kind).unwrap_or(&DEFAULT_PRINTER)
}

/// No row conditions (every kind but Pod).
pub(crate) fn no_conditions(_: &Value) -> Vec<Value> {
    Vec::new()
}

/// `registry/rest/table.go`'s default convertor: `Name` and `Created At`
/// (an RFC 3339 UTC timestamp, `0001-01-01T00:00:00Z` when unset).
pub static DEFAULT_PRINTER: Printer = Printer {
    columns: &DEFAULT_COLUMNS,
    cells: default_cells,
    conditions: no_conditions,
    empty_rows_are_null: true,
};

static DEFAULT_COLUMNS: [Column; 2] = [
    Column::name(),
    Column::new("Created At", "date", doc::META_CREATION_TIMESTAMP),
];

fn default_cells(obj: &Value, _now: OffsetDateTime) -> Vec<Value> {
    let created = fields::time_at(obj, &["metadata", "creationTimestamp"]).map_or_else(
        || timestamp::ZERO_RFC3339.to_owned(),
        timestamp::format_rfc3339,
    );
    vec![fields::name(obj).into(), created.into()]
}
