//! policy/v1 PodDisruptionBudget: `printPodDisruptionBudget`.
//!
//! MIN AVAILABLE and MAX UNAVAILABLE print the int-or-string as given
//! (`1`, `50%`), or `N/A` when unset.

use serde_json::Value;
use time::OffsetDateTime;

use super::super::column::Column;
use super::super::fields;
use super::super::printer::{Printer, no_conditions};

pub(crate) static POD_DISRUPTION_BUDGET: Printer = Printer {
    columns: &COLUMNS,
    cells,
    conditions: no_conditions,
    empty_rows_are_null: false,
};

static COLUMNS: [Column; 5] = [
    Column::name(),
    Column::string(
        "Min Available",
        "The minimum number of pods that must be available.",
    ),
    Column::string(
        "Max Unavailable",
        "The maximum number of pods that may be unavailable.",
    ),
    Column::integer(
        "Allowed Disruptions",
        "Calculated number of pods that may be disrupted at this time.",
    ),
    Column::age(),
];

fn cells(pdb: &Value, now: OffsetDateTime) -> Vec<Value> {
    vec![
        fields::name(pdb).into(),
        int_or_string(fields::at(pdb, &["spec", "minAvailable"])).into(),
        int_or_string(fields::at(pdb, &["spec", "maxUnavailable"])).into(),
        fields::int_at(pdb, &["status", "disruptionsAllowed"]).into(),
        fields::age(pdb, now).into(),
    ]
}

/// `IntOrString.String()`, `N/A` for nil.
fn int_or_string(v: Option<&Value>) -> String {
    match v {
        None => "N/A".to_owned(),
        Some(Value::String(s)) => s.clone(),
        Some(v) => fields::as_int(v).unwrap_or(0).to_string(),
    }
}
