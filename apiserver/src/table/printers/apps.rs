//! apps/v1 workloads: Deployment, ReplicaSet, StatefulSet, DaemonSet
//! (`printDeployment`, `printReplicaSet`, `printStatefulSet`,
//! `printDaemonSet`).
//!
//! READY is `readyReplicas/spec.replicas`; an omitted `spec.replicas` is 0,
//! as in the internal type. Wide columns list the template's container
//! names and images and the selector (Deployment prints an unparsable
//! selector as `<invalid>` and an empty one as "", the others `<error>` and
//! `<none>` — upstream's asymmetry, kept).

use serde_json::Value;
use time::OffsetDateTime;

use super::super::column::Column;
use super::super::descriptions as doc;
use super::super::printer::{Printer, no_conditions};
use super::super::{fields, labels};
use super::container_cells;

const fn printer(
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

const TEMPLATE_CONTAINERS: [&str; 4] = ["spec", "template", "spec", "containers"];

pub(crate) static DEPLOYMENT: Printer = printer(&DEPLOYMENT_COLUMNS, deployment);
static DEPLOYMENT_COLUMNS: [Column; 8] = [
    Column::name(),
    Column::string("Ready", "Number of the pod with ready state"),
    Column::string("Up-to-date", doc::EXT_DEPLOYMENT_STATUS_UPDATED),
    Column::string("Available", doc::EXT_DEPLOYMENT_STATUS_AVAILABLE),
    Column::age(),
    Column::containers(),
    Column::images(),
    Column::string("Selector", doc::EXT_DEPLOYMENT_SPEC_SELECTOR).wide(),
];

fn deployment(d: &Value, now: OffsetDateTime) -> Vec<Value> {
    let ready = fields::int_at(d, &["status", "readyReplicas"]);
    let desired = fields::int_at(d, &["spec", "replicas"]);
    let selector = labels::selector_string(fields::at(d, &["spec", "selector"]))
        .unwrap_or_else(|_| "<invalid>".to_owned());
    let [names, images] = container_cells(d, &TEMPLATE_CONTAINERS);
    vec![
        fields::name(d).into(),
        format!("{ready}/{desired}").into(),
        fields::int_at(d, &["status", "updatedReplicas"]).into(),
        fields::int_at(d, &["status", "availableReplicas"]).into(),
        fields::age(d, now).into(),
        names,
        images,
        selector.into(),
    ]
}

pub(crate) static REPLICA_SET: Printer = printer(&REPLICA_SET_COLUMNS, replica_set);
static REPLICA_SET_COLUMNS: [Column; 8] = [
    Column::name(),
    Column::integer("Desired", doc::EXT_REPLICA_SET_SPEC_REPLICAS),
    Column::integer("Current", doc::EXT_REPLICA_SET_STATUS_REPLICAS),
    Column::integer("Ready", doc::EXT_REPLICA_SET_STATUS_READY_REPLICAS),
    Column::age(),
    Column::containers(),
    Column::images(),
    Column::string("Selector", doc::EXT_REPLICA_SET_SPEC_SELECTOR).wide(),
];

fn replica_set(rs: &Value, now: OffsetDateTime) -> Vec<Value> {
    let [names, images] = container_cells(rs, &TEMPLATE_CONTAINERS);
    vec![
        fields::name(rs).into(),
        fields::int_at(rs, &["spec", "replicas"]).into(),
        fields::int_at(rs, &["status", "replicas"]).into(),
        fields::int_at(rs, &["status", "readyReplicas"]).into(),
        fields::age(rs, now).into(),
        names,
        images,
        labels::format_label_selector(fields::at(rs, &["spec", "selector"])).into(),
    ]
}

pub(crate) static STATEFUL_SET: Printer = printer(&STATEFUL_SET_COLUMNS, stateful_set);
static STATEFUL_SET_COLUMNS: [Column; 5] = [
    Column::name(),
    Column::string("Ready", "Number of the pod with ready state"),
    Column::age(),
    Column::containers(),
    Column::images(),
];

fn stateful_set(ss: &Value, now: OffsetDateTime) -> Vec<Value> {
    let ready = fields::int_at(ss, &["status", "readyReplicas"]);
    let desired = fields::int_at(ss, &["spec", "replicas"]);
    let [names, images] = container_cells(ss, &TEMPLATE_CONTAINERS);
    vec![
        fields::name(ss).into(),
        format!("{ready}/{desired}").into(),
        fields::age(ss, now).into(),
        names,
        images,
    ]
}

pub(crate) static DAEMON_SET: Printer = printer(&DAEMON_SET_COLUMNS, daemon_set);
static DAEMON_SET_COLUMNS: [Column; 11] = [
    Column::name(),
    Column::integer("Desired", doc::EXT_DAEMON_SET_STATUS_DESIRED),
    Column::integer("Current", doc::EXT_DAEMON_SET_STATUS_CURRENT),
    Column::integer("Ready", doc::EXT_DAEMON_SET_STATUS_READY),
    Column::integer("Up-to-date", doc::EXT_DAEMON_SET_STATUS_UPDATED),
    Column::integer("Available", doc::EXT_DAEMON_SET_STATUS_AVAILABLE),
    Column::string("Node Selector", doc::POD_SPEC_NODE_SELECTOR),
    Column::age(),
    Column::containers(),
    Column::images(),
    Column::string("Selector", doc::EXT_DAEMON_SET_SPEC_SELECTOR).wide(),
];

fn daemon_set(ds: &Value, now: OffsetDateTime) -> Vec<Value> {
    let status = fields::child(ds, &["status"]);
    let node_selector = fields::at(ds, &["spec", "template", "spec", "nodeSelector"]);
    let [names, images] = container_cells(ds, &TEMPLATE_CONTAINERS);
    vec![
        fields::name(ds).into(),
        fields::int_at(status, &["desiredNumberScheduled"]).into(),
        fields::int_at(status, &["currentNumberScheduled"]).into(),
        fields::int_at(status, &["numberReady"]).into(),
        fields::int_at(status, &["updatedNumberScheduled"]).into(),
        fields::int_at(status, &["numberAvailable"]).into(),
        labels::format_labels(node_selector).into(),
        fields::age(ds, now).into(),
        names,
        images,
        labels::format_label_selector(fields::at(ds, &["spec", "selector"])).into(),
    ]
}
