//! Event (core/v1 and events.k8s.io/v1): `printEvent`.
//!
//! LAST SEEN is the age of `series.lastObservedTime`, else
//! `lastTimestamp`, else FIRST SEEN; FIRST SEEN is the age of
//! `firstTimestamp`, else `eventTime`. OBJECT is `<lowercased kind>/<name>`.
//! COUNT is `series.count`, else `count`, with 0 printed as 1 (singleton
//! events of the new API carry no count). Both groups share upstream's one
//! internal type and printer; events.k8s.io/v1 JSON is read through its
//! renamed fields (`regarding`, `note`, `deprecated*`).

use serde_json::Value;
use time::OffsetDateTime;

use super::super::column::Column;
use super::super::descriptions as doc;
use super::super::printer::{Printer, no_conditions};
use super::super::{age, fields};

pub(crate) static EVENT: Printer = Printer {
    columns: &COLUMNS,
    cells: core_cells,
    conditions: no_conditions,
    empty_rows_are_null: false,
};

pub(crate) static EVENTS_V1_EVENT: Printer = Printer {
    columns: &COLUMNS,
    cells: events_v1_cells,
    conditions: no_conditions,
    empty_rows_are_null: false,
};

static COLUMNS: [Column; 10] = [
    Column::string("Last Seen", doc::EVENT_LAST_TIMESTAMP),
    Column::string("Type", doc::EVENT_TYPE),
    Column::string("Reason", doc::EVENT_REASON),
    Column::string("Object", doc::EVENT_INVOLVED_OBJECT),
    Column::string("Subobject", doc::OBJECT_REFERENCE_FIELD_PATH).wide(),
    Column::string("Source", doc::EVENT_SOURCE).wide(),
    Column::string("Message", doc::EVENT_MESSAGE),
    Column::string("First Seen", doc::EVENT_FIRST_TIMESTAMP).wide(),
    Column::string("Count", doc::EVENT_COUNT).wide(),
    Column::name().wide(),
];

/// Where each printed field lives in one of the two JSON shapes.
struct Shape {
    involved: &'static str,
    message: &'static str,
    source: &'static str,
    first: &'static str,
    last: &'static str,
    count: &'static str,
}

const CORE: Shape = Shape {
    involved: "involvedObject",
    message: "message",
    source: "source",
    first: "firstTimestamp",
    last: "lastTimestamp",
    count: "count",
};

const EVENTS_V1: Shape = Shape {
    involved: "regarding",
    message: "note",
    source: "deprecatedSource",
    first: "deprecatedFirstTimestamp",
    last: "deprecatedLastTimestamp",
    count: "deprecatedCount",
};

fn core_cells(event: &Value, now: OffsetDateTime) -> Vec<Value> {
    cells(event, &CORE, now)
}

fn events_v1_cells(event: &Value, now: OffsetDateTime) -> Vec<Value> {
    // Tolerate core-shaped objects served under events.k8s.io.
    let shape = if fields::is_set(event, &["involvedObject"]) {
        &CORE
    } else {
        &EVENTS_V1
    };
    cells(event, shape, now)
}

fn cells(event: &Value, shape: &Shape, now: OffsetDateTime) -> Vec<Value> {
    let first = match fields::time_at(event, &[shape.first]) {
        Some(t) => age::since(Some(t), now),
        None => age::since(fields::time_at(event, &["eventTime"]), now),
    };
    let mut last = match fields::time_at(event, &[shape.last]) {
        Some(t) => age::since(Some(t), now),
        None => first.clone(),
    };
    let mut count = fields::int_at(event, &[shape.count]);
    if fields::is_set(event, &["series"]) {
        last = age::since(fields::time_at(event, &["series", "lastObservedTime"]), now);
        count = fields::int_at(event, &["series", "count"]);
    } else if count == 0 {
        count = 1;
    }

    let involved = fields::child(event, &[shape.involved]);
    let kind = fields::str_at(involved, &["kind"]).to_lowercase();
    let target = match fields::str_at(involved, &["name"]) {
        "" => kind,
        name => format!("{kind}/{name}"),
    };
    let component = first_non_empty(
        fields::str_at(event, &[shape.source, "component"]),
        fields::str_at(event, &["reportingController"]),
    );
    let instance = first_non_empty(
        fields::str_at(event, &[shape.source, "host"]),
        fields::str_at(event, &["reportingInstance"]),
    );
    let source = if instance.is_empty() {
        component.to_owned()
    } else {
        format!("{component}, {instance}")
    };
    vec![
        last.into(),
        fields::str_at(event, &["type"]).into(),
        fields::str_at(event, &["reason"]).into(),
        target.into(),
        fields::str_at(involved, &["fieldPath"]).into(),
        source.into(),
        fields::str_at(event, &[shape.message]).trim().into(),
        first.into(),
        count.into(),
        fields::name(event).into(),
    ]
}

fn first_non_empty<'a>(a: &'a str, b: &'a str) -> &'a str {
    if a.is_empty() { b } else { a }
}
