//! Core ResourceQuota: `printResourceQuota`.
//!
//! REQUEST lists every resource of `status.hard` not named `limits.*`, LIMIT
//! the `limits.*` ones, each as `<name>: <used>/<hard>` (canonical
//! quantities, `0` when unused), sorted by name and joined with `, `. Both
//! are empty until the quota controller has filled `status.hard`.

use serde_json::Value;
use time::OffsetDateTime;

use super::super::column::Column;
use super::super::printer::Printer;
use super::super::{fields, quantity};
use super::kind_printer;

pub(crate) static RESOURCE_QUOTA: Printer = kind_printer(&COLUMNS, cells);
static COLUMNS: [Column; 4] = [
    Column::name(),
    Column::string(
        "Request",
        "Request represents a minimum amount of cpu/memory that a container may consume.",
    ),
    Column::string(
        "Limit",
        "Limits control the maximum amount of cpu/memory that a container may use independent of contention on the node.",
    ),
    Column::age(),
];

fn cells(quota: &Value, now: OffsetDateTime) -> Vec<Value> {
    let hard = fields::at(quota, &["status", "hard"]).and_then(Value::as_object);
    let mut names: Vec<&String> = hard.map(|h| h.keys().collect()).unwrap_or_default();
    names.sort_unstable();
    let mut requests: Vec<String> = Vec::new();
    let mut limits: Vec<String> = Vec::new();
    for name in names {
        let used = fields::child(quota, &["status", "used", name.as_str()]);
        let limit = fields::child(quota, &["status", "hard", name.as_str()]);
        let entry = format!(
            "{name}: {}/{}",
            quantity::canonical(used),
            quantity::canonical(limit)
        );
        // strings.Split(name, ".") with more than one piece, the first
        // being "limits".
        if name
            .split_once('.')
            .is_some_and(|(first, _)| first == "limits")
        {
            limits.push(entry);
        } else {
            requests.push(entry);
        }
    }
    vec![
        fields::name(quota).into(),
        requests.join(", ").into(),
        limits.join(", ").into(),
        fields::age(quota, now).into(),
    ]
}
