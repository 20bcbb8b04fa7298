//! discovery.k8s.io EndpointSlice: `printEndpointSlice`.
//!
//! PORTS lists each port's number, else its name, else `*`; ENDPOINTS
//! every endpoint's addresses. Both show at most three entries, then
//! ` + N more...`, and `<unset>` when empty.

use serde_json::Value;
use time::OffsetDateTime;

use super::super::column::Column;
use super::super::descriptions as doc;
use super::super::fields;
use super::super::printer::Printer;
use super::kind_printer;

pub(crate) static ENDPOINT_SLICE: Printer = kind_printer(&COLUMNS, cells);
static COLUMNS: [Column; 5] = [
    Column::name(),
    Column::string("AddressType", doc::ENDPOINT_SLICE_ADDRESS_TYPE),
    Column::string("Ports", doc::ENDPOINT_SLICE_PORTS),
    Column::string("Endpoints", doc::ENDPOINT_SLICE_ENDPOINTS),
    Column::age(),
];

const MAX: usize = 3;

fn cells(slice: &Value, now: OffsetDateTime) -> Vec<Value> {
    let ports: Vec<String> = fields::items_at(slice, &["ports"])
        .iter()
        .map(|p| match fields::opt_int_at(p, &["port"]) {
            Some(n) => n.to_string(),
            None => fields::opt_str_at(p, &["name"]).unwrap_or("*").to_owned(),
        })
        .collect();
    let addresses: Vec<String> = fields::items_at(slice, &["endpoints"])
        .iter()
        .flat_map(|e| fields::items_at(e, &["addresses"]))
        .map(|a| a.as_str().unwrap_or("").to_owned())
        .collect();
    vec![
        fields::name(slice).into(),
        fields::str_at(slice, &["addressType"]).into(),
        list_with_more(&ports).into(),
        list_with_more(&addresses).into(),
        fields::age(slice, now).into(),
    ]
}

/// `listWithMoreString`: the first three entries comma-joined, then
/// ` + N more...`; `<unset>` for an empty join.
pub(super) fn list_with_more(items: &[String]) -> String {
    let shown = items.len().min(MAX);
    let joined = items[..shown].join(",");
    if items.len() > MAX {
        format!("{joined} + {} more...", items.len() - MAX)
    } else if joined.is_empty() {
        "<unset>".to_owned()
    } else {
        joined
    }
}
