//! storage.k8s.io StorageClass: `printStorageClass`.
//!
//! The name gains ` (default)` when the class carries the default-class
//! annotation (GA or beta) set to `true`. Unset fields print their API
//! defaults: RECLAIMPOLICY `Delete`, VOLUMEBINDINGMODE `Immediate`,
//! ALLOWVOLUMEEXPANSION `false` (a JSON boolean).

use serde_json::Value;
use time::OffsetDateTime;

use super::super::column::Column;
use super::super::descriptions as doc;
use super::super::fields;
use super::super::printer::Printer;
use super::kind_printer;

pub(crate) static STORAGE_CLASS: Printer = kind_printer(&COLUMNS, cells);
static COLUMNS: [Column; 6] = [
    Column::name(),
    Column::string("Provisioner", doc::STORAGE_CLASS_PROVISIONER),
    Column::string("ReclaimPolicy", doc::STORAGE_CLASS_RECLAIM_POLICY),
    Column::string("VolumeBindingMode", doc::STORAGE_CLASS_VOLUME_BINDING_MODE),
    Column::string(
        "AllowVolumeExpansion",
        doc::STORAGE_CLASS_ALLOW_VOLUME_EXPANSION,
    ),
    Column::age(),
];

/// `storageutil.IsDefaultAnnotation`: the GA annotation decides when
/// present; otherwise the beta one.
fn is_default(sc: &Value) -> bool {
    const GA: &str = "storageclass.kubernetes.io/is-default-class";
    const BETA: &str = "storageclass.beta.kubernetes.io/is-default-class";
    let annotations = &["metadata", "annotations"];
    if fields::map_entry(sc, annotations, GA) == Some("true") {
        return true;
    }
    fields::map_entry(sc, annotations, BETA) == Some("true")
}

fn cells(sc: &Value, now: OffsetDateTime) -> Vec<Value> {
    let mut name = fields::name(sc).to_owned();
    if is_default(sc) {
        name.push_str(" (default)");
    }
    vec![
        name.into(),
        fields::str_at(sc, &["provisioner"]).into(),
        fields::opt_str_at(sc, &["reclaimPolicy"])
            .unwrap_or("Delete")
            .into(),
        fields::opt_str_at(sc, &["volumeBindingMode"])
            .unwrap_or("Immediate")
            .into(),
        fields::bool_at(sc, &["allowVolumeExpansion"]).into(),
        fields::age(sc, now).into(),
    ]
}
