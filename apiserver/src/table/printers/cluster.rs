//! Cluster-level kinds with short rows: core ComponentStatus,
//! scheduling.k8s.io PriorityClass, node.k8s.io RuntimeClass
//! (`printComponentStatus`, `printPriorityClass`, `printRuntimeClass`), and
//! apiregistration.k8s.io APIService (kube-aggregator's own
//! `ConvertToTable`).

use serde_json::Value;
use time::OffsetDateTime;

use super::super::column::Column;
use super::super::descriptions as doc;
use super::super::fields;
use super::super::printer::Printer;
use super::kind_printer;

pub(crate) static COMPONENT_STATUS: Printer =
    kind_printer(&COMPONENT_STATUS_COLUMNS, component_status);
static COMPONENT_STATUS_COLUMNS: [Column; 4] = [
    Column::name(),
    Column::string("Status", "Status of the component conditions"),
    Column::string("Message", "Message of the component conditions"),
    Column::string("Error", "Error of the component conditions"),
];

/// Name, then from the first `Healthy` condition: `Healthy`/`Unhealthy`,
/// its message and error (`Unknown`, "", "" without one). No age.
fn component_status(cs: &Value, _now: OffsetDateTime) -> Vec<Value> {
    let healthy = fields::items_at(cs, &["conditions"])
        .iter()
        .find(|c| fields::str_at(c, &["type"]) == "Healthy");
    let (status, message, error) = match healthy {
        None => ("Unknown", "", ""),
        Some(c) => (
            if fields::str_at(c, &["status"]) == "True" {
                "Healthy"
            } else {
                "Unhealthy"
            },
            fields::str_at(c, &["message"]),
            fields::str_at(c, &["error"]),
        ),
    };
    vec![
        fields::name(cs).into(),
        status.into(),
        message.into(),
        error.into(),
    ]
}

pub(crate) static PRIORITY_CLASS: Printer = kind_printer(&PRIORITY_CLASS_COLUMNS, priority_class);
static PRIORITY_CLASS_COLUMNS: [Column; 5] = [
    Column::name(),
    Column::integer("Value", doc::PRIORITY_CLASS_VALUE),
    Column::boolean("Global-Default", doc::PRIORITY_CLASS_GLOBAL_DEFAULT),
    Column::age(),
    // Priority 0 upstream, although the cell is only added for wide output
    // (which kube-apiserver always generates).
    Column::string("PreemptionPolicy", doc::PRIORITY_CLASS_PREEMPTION_POLICY),
];

/// Name, `value`, `globalDefault` (a JSON boolean), age,
/// `preemptionPolicy` ("" when unset).
fn priority_class(pc: &Value, now: OffsetDateTime) -> Vec<Value> {
    vec![
        fields::name(pc).into(),
        fields::int_at(pc, &["value"]).into(),
        fields::bool_at(pc, &["globalDefault"]).into(),
        fields::age(pc, now).into(),
        fields::str_at(pc, &["preemptionPolicy"]).into(),
    ]
}

pub(crate) static RUNTIME_CLASS: Printer = kind_printer(&RUNTIME_CLASS_COLUMNS, runtime_class);
static RUNTIME_CLASS_COLUMNS: [Column; 3] = [
    Column::name(),
    // Upstream looks up `ObjectMeta{}.SwaggerDoc()["handler"]`, which has no
    // such key: the description is empty.
    Column::string("Handler", ""),
    Column::age(),
];

/// Name, `handler`, age.
fn runtime_class(rc: &Value, now: OffsetDateTime) -> Vec<Value> {
    vec![
        fields::name(rc).into(),
        fields::str_at(rc, &["handler"]).into(),
        fields::age(rc, now).into(),
    ]
}

pub(crate) static API_SERVICE: Printer = kind_printer(&API_SERVICE_COLUMNS, api_service);
static API_SERVICE_COLUMNS: [Column; 4] = [
    Column::name(),
    Column::string(
        "Service",
        "The reference to the service that hosts this API endpoint.",
    ),
    Column::string("Available", "Whether this service is available."),
    Column::age(),
];

/// Name, `<namespace>/<name>` of `spec.service` (`Local` without one), the
/// `Available` condition (`True`, `False (Reason)`, the bare status without
/// a reason, `Unknown` without the condition), age.
fn api_service(svc: &Value, now: OffsetDateTime) -> Vec<Value> {
    let service = if fields::is_set(svc, &["spec", "service"]) {
        format!(
            "{}/{}",
            fields::str_at(svc, &["spec", "service", "namespace"]),
            fields::str_at(svc, &["spec", "service", "name"])
        )
    } else {
        "Local".to_owned()
    };
    let available = fields::items_at(svc, &["status", "conditions"])
        .iter()
        .find(|c| fields::str_at(c, &["type"]) == "Available");
    let status = match available {
        None => "Unknown".to_owned(),
        Some(c) => {
            let status = fields::str_at(c, &["status"]);
            let reason = fields::str_at(c, &["reason"]);
            if status == "True" || reason.is_empty() {
                status.to_owned()
            } else {
                format!("{status} ({reason})")
            }
        }
    };
    vec![
        fields::name(svc).into(),
        service.into(),
        status.into(),
        fields::age(svc, now).into(),
    ]
}
