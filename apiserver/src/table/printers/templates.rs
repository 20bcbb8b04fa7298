//! Core PodTemplate and ReplicationController, apps ControllerRevision,
//! and the autoscaling/v1 Scale of the `scale` subresource:
//! `printPodTemplate`, `printReplicationController`,
//! `printControllerRevision`, `printScale`.
//!
//! PodTemplate has no Age column upstream. A ReplicationController's
//! selector is a plain label map (`labels.FormatLabels`, `<none>` when
//! empty). A ControllerRevision's CONTROLLER is its controlling owner as
//! `<lowercased kind.group>/<name>` (`statefulset.apps/web`), `<none>`
//! without one.

use serde_json::Value;
use time::OffsetDateTime;

use super::super::column::Column;
use super::super::descriptions as doc;
use super::super::printer::Printer;
use super::super::{fields, labels};
use super::{container_cells, kind_printer};

pub(crate) static POD_TEMPLATE: Printer = kind_printer(&POD_TEMPLATE_COLUMNS, pod_template);
static POD_TEMPLATE_COLUMNS: [Column; 4] = [
    Column::name(),
    Column::string("Containers", "Names of each container in the template."),
    Column::string(
        "Images",
        "Images referenced by each container in the template.",
    ),
    Column::string("Pod Labels", "The labels for the pod template."),
];

/// Name, container names, images, `template.metadata.labels`.
fn pod_template(pt: &Value, _now: OffsetDateTime) -> Vec<Value> {
    let [names, images] = container_cells(pt, &["template", "spec", "containers"]);
    vec![
        fields::name(pt).into(),
        names,
        images,
        labels::format_labels(fields::at(pt, &["template", "metadata", "labels"])).into(),
    ]
}

pub(crate) static REPLICATION_CONTROLLER: Printer =
    kind_printer(&REPLICATION_CONTROLLER_COLUMNS, replication_controller);
static REPLICATION_CONTROLLER_COLUMNS: [Column; 8] = [
    Column::name(),
    Column::integer("Desired", doc::RC_SPEC_REPLICAS),
    Column::integer("Current", doc::RC_STATUS_REPLICAS),
    Column::integer("Ready", doc::RC_STATUS_READY_REPLICAS),
    Column::age(),
    Column::containers(),
    Column::images(),
    Column::string("Selector", doc::RC_SPEC_SELECTOR).wide(),
];

/// Name, `spec.replicas`, `status.replicas`, `status.readyReplicas`, age;
/// wide: containers, images, the selector map.
fn replication_controller(rc: &Value, now: OffsetDateTime) -> Vec<Value> {
    let [names, images] = container_cells(rc, &["spec", "template", "spec", "containers"]);
    vec![
        fields::name(rc).into(),
        fields::int_at(rc, &["spec", "replicas"]).into(),
        fields::int_at(rc, &["status", "replicas"]).into(),
        fields::int_at(rc, &["status", "readyReplicas"]).into(),
        fields::age(rc, now).into(),
        names,
        images,
        labels::format_labels(fields::at(rc, &["spec", "selector"])).into(),
    ]
}

pub(crate) static CONTROLLER_REVISION: Printer =
    kind_printer(&CONTROLLER_REVISION_COLUMNS, controller_revision);
static CONTROLLER_REVISION_COLUMNS: [Column; 4] = [
    Column::name(),
    Column::string("Controller", "Controller of the object"),
    Column::string("Revision", doc::CONTROLLER_REVISION_REVISION),
    Column::age(),
];

/// Name, controlling owner, `revision` (a JSON integer), age.
fn controller_revision(cr: &Value, now: OffsetDateTime) -> Vec<Value> {
    vec![
        fields::name(cr).into(),
        controller_name(cr).into(),
        fields::int_at(cr, &["revision"]).into(),
        fields::age(cr, now).into(),
    ]
}

/// `metav1.GetControllerOf` then `formatResourceName(groupKind, name,
/// true)`: the first owner reference with `controller: true`.
fn controller_name(obj: &Value) -> String {
    let owner = fields::items_at(obj, &["metadata", "ownerReferences"])
        .iter()
        .find(|r| fields::bool_at(r, &["controller"]));
    let Some(owner) = owner else {
        return "<none>".to_owned();
    };
    let kind = fields::str_at(owner, &["kind"]);
    let name = fields::str_at(owner, &["name"]);
    // schema.ParseGroupVersion: "" and "v1" have no group; validation
    // rejects an apiVersion with more than one slash.
    let group = match fields::str_at(owner, &["apiVersion"]).split_once('/') {
        Some((group, _)) => group,
        None => "",
    };
    if kind.is_empty() && group.is_empty() {
        return name.to_owned();
    }
    let group_kind = if group.is_empty() {
        kind.to_owned()
    } else {
        format!("{kind}.{group}")
    };
    format!("{}/{name}", group_kind.to_lowercase())
}

/// The `scale` subresource's autoscaling/v1 Scale. Upstream's Name column
/// here has no `name` format.
pub(crate) static SCALE: Printer = kind_printer(&SCALE_COLUMNS, scale);
static SCALE_COLUMNS: [Column; 4] = [
    Column::string("Name", doc::META_NAME),
    Column::integer("Desired", doc::SCALE_SPEC_REPLICAS),
    Column::integer("Available", doc::SCALE_STATUS_REPLICAS),
    Column::age(),
];

/// Name, `spec.replicas`, `status.replicas`, age.
fn scale(s: &Value, now: OffsetDateTime) -> Vec<Value> {
    vec![
        fields::name(s).into(),
        fields::int_at(s, &["spec", "replicas"]).into(),
        fields::int_at(s, &["status", "replicas"]).into(),
        fields::age(s, now).into(),
    ]
}
