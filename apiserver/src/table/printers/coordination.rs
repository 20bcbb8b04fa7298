//! coordination.k8s.io/v1 Lease: `printLease`.

use serde_json::Value;
use time::OffsetDateTime;

use super::super::column::Column;
use super::super::descriptions as doc;
use super::super::fields;
use super::super::printer::{Printer, no_conditions};

pub(crate) static LEASE: Printer = Printer {
    columns: &COLUMNS,
    cells,
    conditions: no_conditions,
    empty_rows_are_null: false,
};

static COLUMNS: [Column; 3] = [
    Column::name(),
    Column::string("Holder", doc::LEASE_SPEC_HOLDER_IDENTITY),
    Column::age(),
];

/// Name, `spec.holderIdentity` (empty when unset), age.
fn cells(lease: &Value, now: OffsetDateTime) -> Vec<Value> {
    vec![
        fields::name(lease).into(),
        fields::str_at(lease, &["spec", "holderIdentity"]).into(),
        fields::age(lease, now).into(),
    ]
}
