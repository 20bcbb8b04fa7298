//! PersistentVolume and PersistentVolumeClaim: `printPersistentVolume`,
//! `printPersistentVolumeClaim`.
//!
//! Capacities are canonical quantities; access modes print as
//! `RWO,ROX,RWX,RWOP` (that order, de-duplicated); STATUS reads
//! `Terminating` while a deletion is pending; the storage class comes from
//! the beta annotation when present, else `spec.storageClassName`. A claim
//! shows capacity and access modes only once bound to a volume.

use serde_json::Value;
use time::OffsetDateTime;

use super::super::column::Column;
use super::super::descriptions as doc;
use super::super::printer::{Printer, no_conditions};
use super::super::{fields, quantity};

pub(crate) static PERSISTENT_VOLUME: Printer = Printer {
    columns: &PV_COLUMNS,
    cells: pv_cells,
    conditions: no_conditions,
    empty_rows_are_null: false,
};

static PV_COLUMNS: [Column; 11] = [
    Column::name(),
    Column::string("Capacity", doc::PV_SPEC_CAPACITY),
    Column::string("Access Modes", doc::PV_SPEC_ACCESS_MODES),
    Column::string("Reclaim Policy", doc::PV_SPEC_RECLAIM_POLICY),
    Column::string("Status", doc::PV_STATUS_PHASE),
    Column::string("Claim", doc::PV_SPEC_CLAIM_REF),
    Column::string("StorageClass", "StorageClass of the pv"),
    Column::string("VolumeAttributesClass", "VolumeAttributesClass of the pv"),
    Column::string("Reason", doc::PV_STATUS_REASON),
    Column::age(),
    Column::string("VolumeMode", doc::PV_SPEC_VOLUME_MODE).wide(),
];

pub(crate) static PERSISTENT_VOLUME_CLAIM: Printer = Printer {
    columns: &PVC_COLUMNS,
    cells: pvc_cells,
    conditions: no_conditions,
    empty_rows_are_null: false,
};

static PVC_COLUMNS: [Column; 9] = [
    Column::name(),
    Column::string("Status", doc::PVC_STATUS_PHASE),
    Column::string("Volume", doc::PVC_SPEC_VOLUME_NAME),
    Column::string("Capacity", doc::PVC_STATUS_CAPACITY),
    Column::string("Access Modes", doc::PVC_STATUS_ACCESS_MODES),
    Column::string("StorageClass", "StorageClass of the pvc"),
    Column::string("VolumeAttributesClass", "VolumeAttributesClass of the pvc"),
    Column::age(),
    Column::string("VolumeMode", doc::PVC_SPEC_VOLUME_MODE).wide(),
];

const BETA_STORAGE_CLASS: &str = "volume.beta.kubernetes.io/storage-class";

fn pv_cells(pv: &Value, now: OffsetDateTime) -> Vec<Value> {
    let claim = if fields::is_set(pv, &["spec", "claimRef"]) {
        format!(
            "{}/{}",
            fields::str_at(pv, &["spec", "claimRef", "namespace"]),
            fields::str_at(pv, &["spec", "claimRef", "name"])
        )
    } else {
        String::new()
    };
    let class = fields::map_entry(pv, &["metadata", "annotations"], BETA_STORAGE_CLASS)
        .unwrap_or_else(|| fields::str_at(pv, &["spec", "storageClassName"]));
    vec![
        fields::name(pv).into(),
        storage(pv, &["spec", "capacity"]).into(),
        access_modes(pv, &["spec", "accessModes"]).into(),
        fields::str_at(pv, &["spec", "persistentVolumeReclaimPolicy"]).into(),
        phase(pv).into(),
        claim.into(),
        class.into(),
        unset_or(fields::opt_str_at(
            pv,
            &["spec", "volumeAttributesClassName"],
        ))
        .into(),
        fields::str_at(pv, &["status", "reason"]).into(),
        fields::age(pv, now).into(),
        unset_or(fields::opt_str_at(pv, &["spec", "volumeMode"])).into(),
    ]
}

fn pvc_cells(pvc: &Value, now: OffsetDateTime) -> Vec<Value> {
    let volume = fields::str_at(pvc, &["spec", "volumeName"]);
    let (capacity, modes) = if volume.is_empty() {
        (String::new(), String::new())
    } else {
        (
            storage(pvc, &["status", "capacity"]),
            access_modes(pvc, &["status", "accessModes"]),
        )
    };
    let class = fields::map_entry(pvc, &["metadata", "annotations"], BETA_STORAGE_CLASS)
        .unwrap_or_else(|| fields::str_at(pvc, &["spec", "storageClassName"]));
    vec![
        fields::name(pvc).into(),
        phase(pvc).into(),
        volume.into(),
        capacity.into(),
        modes.into(),
        class.into(),
        unset_or(fields::opt_str_at(
            pvc,
            &["spec", "volumeAttributesClassName"],
        ))
        .into(),
        fields::age(pvc, now).into(),
        unset_or(fields::opt_str_at(pvc, &["spec", "volumeMode"])).into(),
    ]
}

/// `status.phase`, or `Terminating` once deletion is requested.
fn phase(obj: &Value) -> String {
    if fields::is_deleting(obj) {
        "Terminating".to_owned()
    } else {
        fields::str_at(obj, &["status", "phase"]).to_owned()
    }
}

/// The canonical `storage` quantity of the resource map at `path` (`0`
/// when absent).
fn storage(obj: &Value, path: &[&str]) -> String {
    fields::at(obj, path)
        .and_then(|m| m.get("storage"))
        .map_or_else(|| "0".to_owned(), quantity::canonical)
}

/// `GetAccessModesAsString`.
fn access_modes(obj: &Value, path: &[&str]) -> String {
    let modes: Vec<&str> = fields::items_at(obj, path)
        .iter()
        .filter_map(Value::as_str)
        .collect();
    [
        ("ReadWriteOnce", "RWO"),
        ("ReadOnlyMany", "ROX"),
        ("ReadWriteMany", "RWX"),
        ("ReadWriteOncePod", "RWOP"),
    ]
    .iter()
    .filter(|(mode, _)| modes.contains(mode))
    .map(|(_, short)| *short)
    .collect::<Vec<_>>()
    .join(",")
}

/// A `*string` field, `<unset>` when nil.
fn unset_or(v: Option<&str>) -> String {
    v.map_or_else(|| "<unset>".to_owned(), str::to_owned)
}
