//! storage.k8s.io CSIDriver, CSINode, CSIStorageCapacity, VolumeAttachment:
//! `printCSIDriver`, `printCSINode`, `printCSIStorageCapacity`,
//! `printVolumeAttachment`.
//!
//! Unset CSIDriver booleans print their API defaults (ATTACHREQUIRED
//! `true`, the others `false`); TOKENREQUESTS is `<unset>` when the list is
//! absent, else its audiences; MODES is `<none>` when empty.
//! CSIStorageCapacity has no Age column and prints CAPACITY `<unset>` when
//! absent. VolumeAttachment marks its ATTACHER column with format `name`,
//! as upstream does.

use serde_json::Value;
use time::OffsetDateTime;

use super::super::column::Column;
use super::super::descriptions as doc;
use super::super::printer::Printer;
use super::super::{fields, quantity};
use super::kind_printer;

pub(crate) static CSI_DRIVER: Printer = kind_printer(&CSI_DRIVER_COLUMNS, csi_driver);
static CSI_DRIVER_COLUMNS: [Column; 8] = [
    Column::name(),
    Column::boolean("AttachRequired", doc::CSI_DRIVER_ATTACH_REQUIRED),
    Column::boolean("PodInfoOnMount", doc::CSI_DRIVER_POD_INFO_ON_MOUNT),
    Column::boolean("StorageCapacity", doc::CSI_DRIVER_STORAGE_CAPACITY),
    Column::string("TokenRequests", doc::CSI_DRIVER_TOKEN_REQUESTS),
    Column::boolean("RequiresRepublish", doc::CSI_DRIVER_REQUIRES_REPUBLISH),
    Column::string("Modes", doc::CSI_DRIVER_MODES),
    Column::age(),
];

fn csi_driver(driver: &Value, now: OffsetDateTime) -> Vec<Value> {
    let spec = fields::child(driver, &["spec"]);
    let token_requests = match fields::at(spec, &["tokenRequests"]) {
        None => "<unset>".to_owned(),
        Some(list) => {
            let audiences: Vec<&str> = fields::items_at(list, &[])
                .iter()
                .map(|t| fields::str_at(t, &["audience"]))
                .collect();
            audiences.join(",")
        }
    };
    let modes: Vec<&str> = fields::items_at(spec, &["volumeLifecycleModes"])
        .iter()
        .map(|m| m.as_str().unwrap_or(""))
        .collect();
    let modes = match modes.join(",") {
        m if m.is_empty() => "<none>".to_owned(),
        m => m,
    };
    vec![
        fields::name(driver).into(),
        fields::opt_bool_at(spec, &["attachRequired"])
            .unwrap_or(true)
            .into(),
        fields::bool_at(spec, &["podInfoOnMount"]).into(),
        fields::bool_at(spec, &["storageCapacity"]).into(),
        token_requests.into(),
        fields::bool_at(spec, &["requiresRepublish"]).into(),
        modes.into(),
        fields::age(driver, now).into(),
    ]
}

pub(crate) static CSI_NODE: Printer = kind_printer(&CSI_NODE_COLUMNS, csi_node);
static CSI_NODE_COLUMNS: [Column; 3] = [
    Column::name(),
    Column::integer(
        "Drivers",
        "Drivers indicates the number of CSI drivers registered on the node",
    ),
    Column::age(),
];

/// Name, number of `spec.drivers`, age.
fn csi_node(node: &Value, now: OffsetDateTime) -> Vec<Value> {
    vec![
        fields::name(node).into(),
        fields::len_at(node, &["spec", "drivers"]).into(),
        fields::age(node, now).into(),
    ]
}

pub(crate) static CSI_STORAGE_CAPACITY: Printer =
    kind_printer(&CSI_STORAGE_CAPACITY_COLUMNS, csi_storage_capacity);
static CSI_STORAGE_CAPACITY_COLUMNS: [Column; 3] = [
    Column::name(),
    Column::string("StorageClassName", doc::CSI_STORAGE_CAPACITY_CLASS),
    Column::string("Capacity", doc::CSI_STORAGE_CAPACITY_CAPACITY),
];

/// Name, `storageClassName`, the canonical `capacity` (`<unset>` when
/// absent). No age.
fn csi_storage_capacity(cap: &Value, _now: OffsetDateTime) -> Vec<Value> {
    let capacity =
        fields::at(cap, &["capacity"]).map_or_else(|| "<unset>".to_owned(), quantity::canonical);
    vec![
        fields::name(cap).into(),
        fields::str_at(cap, &["storageClassName"]).into(),
        capacity.into(),
    ]
}

pub(crate) static VOLUME_ATTACHMENT: Printer =
    kind_printer(&VOLUME_ATTACHMENT_COLUMNS, volume_attachment);
static VOLUME_ATTACHMENT_COLUMNS: [Column; 6] = [
    Column::name(),
    Column::named_string("Attacher", doc::VOLUME_ATTACHMENT_SPEC_ATTACHER),
    Column::string("PV", doc::VOLUME_ATTACHMENT_SOURCE_PV),
    Column::string("Node", doc::VOLUME_ATTACHMENT_SPEC_NODE_NAME),
    Column::boolean("Attached", doc::VOLUME_ATTACHMENT_STATUS_ATTACHED),
    Column::age(),
];

/// Name, attacher, `spec.source.persistentVolumeName` ("" for inline
/// volumes), node, `status.attached`, age.
fn volume_attachment(va: &Value, now: OffsetDateTime) -> Vec<Value> {
    vec![
        fields::name(va).into(),
        fields::str_at(va, &["spec", "attacher"]).into(),
        fields::str_at(va, &["spec", "source", "persistentVolumeName"]).into(),
        fields::str_at(va, &["spec", "nodeName"]).into(),
        fields::bool_at(va, &["status", "attached"]).into(),
        fields::age(va, now).into(),
    ]
}
