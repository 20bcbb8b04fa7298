//! flowcontrol.apiserver.k8s.io FlowSchema and PriorityLevelConfiguration:
//! `printFlowSchema`, `printPriorityLevelConfiguration`.
//!
//! FlowSchema lists are ordered by matching precedence, then name
//! (`FlowSchemaSequence`). DISTINGUISHERMETHOD is the method's type or
//! `<none>`; MISSINGPL is the status of the `Dangling` condition, `?`
//! without one. A PriorityLevelConfiguration without `spec.limited` (the
//! Exempt type) prints `<none>` for its four limit columns; a limited one
//! without queuing prints `<none>` for the three queuing columns. Numbers
//! are JSON integers although the columns are typed `string`.

use std::cmp::Ordering;

use serde_json::Value;
use time::OffsetDateTime;

use super::super::column::Column;
use super::super::descriptions as doc;
use super::super::fields;
use super::super::printer::Printer;
use super::kind_printer;

pub(crate) static FLOW_SCHEMA: Printer = kind_printer(&FLOW_SCHEMA_COLUMNS, flow_schema);
static FLOW_SCHEMA_COLUMNS: [Column; 6] = [
    Column::name(),
    Column::string("PriorityLevel", doc::FLOW_SCHEMA_PRIORITY_LEVEL),
    Column::string("MatchingPrecedence", doc::FLOW_SCHEMA_MATCHING_PRECEDENCE),
    Column::string("DistinguisherMethod", doc::FLOW_SCHEMA_DISTINGUISHER_METHOD),
    Column::age(),
    Column::string(
        "MissingPL",
        "references a broken or non-existent PriorityLevelConfiguration",
    ),
];

fn flow_schema(fs: &Value, now: OffsetDateTime) -> Vec<Value> {
    let distinguisher = if fields::is_set(fs, &["spec", "distinguisherMethod"]) {
        fields::str_at(fs, &["spec", "distinguisherMethod", "type"])
    } else {
        "<none>"
    };
    let missing = fields::items_at(fs, &["status", "conditions"])
        .iter()
        .find(|c| fields::str_at(c, &["type"]) == "Dangling")
        .map_or("?", |c| fields::str_at(c, &["status"]));
    vec![
        fields::name(fs).into(),
        fields::str_at(fs, &["spec", "priorityLevelConfiguration", "name"]).into(),
        fields::int_at(fs, &["spec", "matchingPrecedence"]).into(),
        distinguisher.into(),
        fields::age(fs, now).into(),
        missing.into(),
    ]
}

/// `FlowSchemaSequence.Less`: lower matching precedence first, then by
/// name.
pub(crate) fn flow_schema_order(a: &Value, b: &Value) -> Ordering {
    let precedence = |fs: &Value| fields::int_at(fs, &["spec", "matchingPrecedence"]);
    precedence(a)
        .cmp(&precedence(b))
        .then_with(|| fields::name(a).cmp(fields::name(b)))
}

pub(crate) static PRIORITY_LEVEL_CONFIGURATION: Printer =
    kind_printer(&PRIORITY_LEVEL_COLUMNS, priority_level);
static PRIORITY_LEVEL_COLUMNS: [Column; 7] = [
    Column::name(),
    Column::string("Type", doc::PLC_SPEC_TYPE),
    Column::string(
        "NominalConcurrencyShares",
        doc::PLC_NOMINAL_CONCURRENCY_SHARES,
    ),
    Column::string("Queues", doc::PLC_QUEUES),
    Column::string("HandSize", doc::PLC_HAND_SIZE),
    Column::string("QueueLengthLimit", doc::PLC_QUEUE_LENGTH_LIMIT),
    Column::age(),
];

fn priority_level(plc: &Value, now: OffsetDateTime) -> Vec<Value> {
    let none = || Value::from("<none>");
    let (mut shares, mut queues, mut hand_size, mut queue_length) =
        (none(), none(), none(), none());
    if let Some(limited) = fields::at(plc, &["spec", "limited"]) {
        shares = fields::int_at(limited, &["nominalConcurrencyShares"]).into();
        if let Some(queuing) = fields::at(limited, &["limitResponse", "queuing"]) {
            queues = fields::int_at(queuing, &["queues"]).into();
            hand_size = fields::int_at(queuing, &["handSize"]).into();
            queue_length = fields::int_at(queuing, &["queueLengthLimit"]).into();
        }
    }
    vec![
        fields::name(plc).into(),
        fields::str_at(plc, &["spec", "type"]).into(),
        shares,
        queues,
        hand_size,
        queue_length,
        fields::age(plc, now).into(),
    ]
}
