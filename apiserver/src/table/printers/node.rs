//! Node: `printNode`.
//!
//! STATUS is `Ready`/`NotReady` from the (last) `Ready` condition, or
//! `Unknown` without one, plus `,SchedulingDisabled` when cordoned. ROLES
//! are the sorted, de-duplicated suffixes of `node-role.kubernetes.io/<role>`
//! labels and values of `kubernetes.io/role`, or `<none>`.

use std::collections::BTreeSet;

use serde_json::Value;
use time::OffsetDateTime;

use super::super::column::Column;
use super::super::descriptions as doc;
use super::super::fields;
use super::super::printer::{Printer, no_conditions};

pub(crate) static NODE: Printer = Printer {
    columns: &COLUMNS,
    cells,
    conditions: no_conditions,
    empty_rows_are_null: false,
};

static COLUMNS: [Column; 10] = [
    Column::name(),
    Column::string("Status", "The status of the node"),
    Column::string("Roles", "The roles of the node"),
    Column::age(),
    Column::string("Version", doc::NODE_INFO_KUBELET_VERSION),
    Column::string("Internal-IP", doc::NODE_STATUS_ADDRESSES).wide(),
    Column::string("External-IP", doc::NODE_STATUS_ADDRESSES).wide(),
    Column::string("OS-Image", doc::NODE_INFO_OS_IMAGE).wide(),
    Column::string("Kernel-Version", doc::NODE_INFO_KERNEL_VERSION).wide(),
    Column::string("Container-Runtime", doc::NODE_INFO_CONTAINER_RUNTIME).wide(),
];

const ROLE_PREFIX: &str = "node-role.kubernetes.io/";
const ROLE_LABEL: &str = "kubernetes.io/role";

fn cells(node: &Value, now: OffsetDateTime) -> Vec<Value> {
    // Upstream keys conditions by type; the last one of a type wins.
    let ready = fields::items_at(node, &["status", "conditions"])
        .iter()
        .rev()
        .find(|c| fields::str_at(c, &["type"]) == "Ready");
    let mut status = vec![match ready {
        Some(c) if fields::str_at(c, &["status"]) == "True" => "Ready",
        Some(_) => "NotReady",
        None => "Unknown",
    }];
    if fields::bool_at(node, &["spec", "unschedulable"]) {
        status.push("SchedulingDisabled");
    }

    let mut roles = BTreeSet::new();
    if let Some(labels) = fields::at(node, &["metadata", "labels"]).and_then(Value::as_object) {
        for (key, value) in labels {
            if let Some(role) = key.strip_prefix(ROLE_PREFIX) {
                if !role.is_empty() {
                    roles.insert(role);
                }
            } else if key == ROLE_LABEL {
                let value = value.as_str().unwrap_or("");
                if !value.is_empty() {
                    roles.insert(value);
                }
            }
        }
    }
    let roles = if roles.is_empty() {
        "<none>".to_owned()
    } else {
        roles.into_iter().collect::<Vec<_>>().join(",")
    };

    let info = fields::child(node, &["status", "nodeInfo"]);
    let or_unknown = |field: &str| match fields::str_at(info, &[field]) {
        "" => "<unknown>".to_owned(),
        v => v.to_owned(),
    };
    vec![
        fields::name(node).into(),
        status.join(",").into(),
        roles.into(),
        fields::age(node, now).into(),
        fields::str_at(info, &["kubeletVersion"]).into(),
        address(node, "InternalIP").into(),
        address(node, "ExternalIP").into(),
        or_unknown("osImage").into(),
        or_unknown("kernelVersion").into(),
        or_unknown("containerRuntimeVersion").into(),
    ]
}

/// The first address of `type_`, or `<none>`.
fn address(node: &Value, type_: &str) -> String {
    fields::items_at(node, &["status", "addresses"])
        .iter()
        .find(|a| fields::str_at(a, &["type"]) == type_)
        .map_or_else(
            || "<none>".to_owned(),
            |a| fields::str_at(a, &["address"]).to_owned(),
        )
}
