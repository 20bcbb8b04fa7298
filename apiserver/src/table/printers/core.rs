//! Core-group kinds with simple rows: Namespace, ConfigMap, Secret,
//! ServiceAccount, Endpoints.

use serde_json::Value;
use time::OffsetDateTime;

use super::super::column::Column;
use super::super::descriptions as doc;
use super::super::fields;
use super::super::printer::{Printer, no_conditions};

/// A printer with no row conditions and `[]` for an empty list.
const fn simple(
    columns: &'static [Column],
    cells: fn(&Value, OffsetDateTime) -> Vec<Value>,
) -> Printer {
    Printer {
        columns,
        cells,
        conditions: no_conditions,
        empty_rows_are_null: false,
    }
}

pub(crate) static NAMESPACE: Printer = simple(&NAMESPACE_COLUMNS, namespace);
static NAMESPACE_COLUMNS: [Column; 3] = [
    Column::name(),
    Column::string("Status", "The status of the namespace"),
    Column::age(),
];

/// Name, `status.phase`, age.
fn namespace(ns: &Value, now: OffsetDateTime) -> Vec<Value> {
    vec![
        fields::name(ns).into(),
        fields::str_at(ns, &["status", "phase"]).into(),
        fields::age(ns, now).into(),
    ]
}

pub(crate) static CONFIG_MAP: Printer = simple(&CONFIG_MAP_COLUMNS, config_map);
static CONFIG_MAP_COLUMNS: [Column; 3] = [
    Column::name(),
    Column::string("Data", doc::CONFIG_MAP_DATA),
    Column::age(),
];

/// Name, number of `data` plus `binaryData` keys, age.
fn config_map(cm: &Value, now: OffsetDateTime) -> Vec<Value> {
    let count = fields::len_at(cm, &["data"]) + fields::len_at(cm, &["binaryData"]);
    vec![
        fields::name(cm).into(),
        count.into(),
        fields::age(cm, now).into(),
    ]
}

pub(crate) static SECRET: Printer = simple(&SECRET_COLUMNS, secret);
static SECRET_COLUMNS: [Column; 4] = [
    Column::name(),
    Column::string("Type", doc::SECRET_TYPE),
    Column::string("Data", doc::SECRET_DATA),
    Column::age(),
];

/// Name, type, number of data keys (`stringData` keys merged in, as the
/// v1 → internal conversion does), age.
fn secret(s: &Value, now: OffsetDateTime) -> Vec<Value> {
    let mut keys: Vec<&String> = Vec::new();
    for path in [["data"], ["stringData"]] {
        if let Some(map) = fields::at(s, &path).and_then(Value::as_object) {
            keys.extend(map.keys());
        }
    }
    keys.sort_unstable();
    keys.dedup();
    vec![
        fields::name(s).into(),
        fields::str_at(s, &["type"]).into(),
        keys.len().into(),
        fields::age(s, now).into(),
    ]
}

pub(crate) static SERVICE_ACCOUNT: Printer = simple(&SERVICE_ACCOUNT_COLUMNS, service_account);
static SERVICE_ACCOUNT_COLUMNS: [Column; 3] = [
    Column::name(),
    Column::string("Secrets", doc::SERVICE_ACCOUNT_SECRETS),
    Column::age(),
];

/// Name, number of `secrets`, age.
fn service_account(sa: &Value, now: OffsetDateTime) -> Vec<Value> {
    vec![
        fields::name(sa).into(),
        fields::len_at(sa, &["secrets"]).into(),
        fields::age(sa, now).into(),
    ]
}

pub(crate) static ENDPOINTS: Printer = simple(&ENDPOINTS_COLUMNS, endpoints);
static ENDPOINTS_COLUMNS: [Column; 3] = [
    Column::name(),
    Column::string("Endpoints", doc::ENDPOINTS_SUBSETS),
    Column::age(),
];

/// Name, `formatEndpoints`, age.
fn endpoints(ep: &Value, now: OffsetDateTime) -> Vec<Value> {
    vec![
        fields::name(ep).into(),
        format_endpoints(ep).into(),
        fields::age(ep, now).into(),
    ]
}

/// Up to three ready `ip:port` (or bare `ip` for port-less subsets)
/// entries, then ` + N more...`; `<none>` without subsets.
fn format_endpoints(ep: &Value) -> String {
    const MAX: usize = 3;
    let subsets = fields::items_at(ep, &["subsets"]);
    if subsets.is_empty() {
        return "<none>".to_owned();
    }
    let mut list: Vec<String> = Vec::new();
    let mut more = false;
    let mut count = 0usize;
    for subset in subsets {
        let addresses = fields::items_at(subset, &["addresses"]);
        let ports = fields::items_at(subset, &["ports"]);
        if ports.is_empty() {
            // Headless services may have no ports.
            count += addresses.len();
            for addr in addresses {
                if list.len() == MAX {
                    more = true;
                    break;
                }
                list.push(fields::str_at(addr, &["ip"]).to_owned());
            }
            continue;
        }
        for port in ports {
            count += addresses.len();
            for addr in addresses {
                if list.len() == MAX {
                    more = true;
                    break;
                }
                let ip = fields::str_at(addr, &["ip"]);
                let port = fields::int_at(port, &["port"]);
                list.push(join_host_port(ip, port));
            }
        }
    }
    let joined = list.join(",");
    if more {
        format!("{joined} + {} more...", count.saturating_sub(MAX))
    } else {
        joined
    }
}

/// `net.JoinHostPort`: brackets around hosts containing a colon.
pub(super) fn join_host_port(host: &str, port: i64) -> String {
    if host.contains(':') {
        format!("[{host}]:{port}")
    } else {
        format!("{host}:{port}")
    }
}
