//! Pod: `printPod`.
//!
//! READY counts ready regular containers plus started-and-ready sidecars
//! (restartable init containers) over regular containers plus sidecars.
//! STATUS starts from `status.reason` or the phase and is overridden, in
//! order, by: `SchedulingGated`; the first init container still
//! initializing (`Init:<reason>`, `Init:ExitCode:N`, `Init:Signal:N`,
//! `Init:i/n`); the containers, last to first (waiting reason, terminated
//! reason, `ExitCode:N`/`Signal:N`), with `Completed` turned back into
//! `Running`/`NotReady` while a container still runs; and finally
//! `Unknown` (deleted, node lost) or `Terminating` (deleted, not finished).
//! RESTARTS is the sum of restart counts, suffixed `(<age> ago)` of the
//! latest `lastState.terminated.finishedAt` when non-zero.

use serde_json::{Value, json};
use time::OffsetDateTime;

use super::super::column::Column;
use super::super::descriptions as doc;
use super::super::printer::Printer;
use super::super::{age, fields};

pub(crate) static POD: Printer = Printer {
    columns: &COLUMNS,
    cells,
    conditions,
    empty_rows_are_null: false,
};

static COLUMNS: [Column; 9] = [
    Column::name(),
    Column::string(
        "Ready",
        "The aggregate readiness state of this pod for accepting traffic.",
    ),
    Column::string(
        "Status",
        "The aggregate status of the containers in this pod.",
    ),
    Column::string(
        "Restarts",
        "The number of times the containers in this pod have been restarted and when the last container in this pod has restarted.",
    ),
    Column::age(),
    Column::string("IP", doc::POD_STATUS_POD_IP).wide(),
    Column::string("Node", doc::POD_SPEC_NODE_NAME).wide(),
    Column::string("Nominated Node", doc::POD_STATUS_NOMINATED_NODE_NAME).wide(),
    Column::string("Readiness Gates", doc::POD_SPEC_READINESS_GATES).wide(),
];

/// `podSuccessConditions` / `podFailedConditions`.
fn conditions(pod: &Value) -> Vec<Value> {
    let (reason, message) = match fields::str_at(pod, &["status", "phase"]) {
        "Succeeded" => ("Succeeded", "The pod has completed successfully."),
        "Failed" => ("Failed", "The pod failed."),
        _ => return Vec::new(),
    };
    vec![json!({"type": "Completed", "status": "True", "reason": reason, "message": message})]
}

/// The latest of two optional instants; `None` is Go's zero time.
fn later(a: Option<OffsetDateTime>, b: Option<OffsetDateTime>) -> Option<OffsetDateTime> {
    match (a, b) {
        (Some(a), Some(b)) => Some(a.max(b)),
        (a, None) => a,
        (None, b) => b,
    }
}

fn last_terminated(status: &Value) -> Option<OffsetDateTime> {
    fields::time_at(status, &["lastState", "terminated", "finishedAt"])
}

/// Whether the first condition of `type_` in `conditions` is `True`
/// (`isPodInitializedConditionTrue`).
fn first_condition_true(conditions: &[Value], type_: &str) -> bool {
    conditions
        .iter()
        .find(|c| fields::str_at(c, &["type"]) == type_)
        .is_some_and(|c| fields::str_at(c, &["status"]) == "True")
}

/// Whether any condition of `type_` is `True` (`hasPodReadyCondition`).
fn any_condition_true(conditions: &[Value], type_: &str) -> bool {
    conditions
        .iter()
        .any(|c| fields::str_at(c, &["type"]) == type_ && fields::str_at(c, &["status"]) == "True")
}

/// Reason text for a terminated state: its reason, else `{prefix}Signal:N`
/// or `{prefix}ExitCode:N`.
fn terminated_reason(terminated: &Value, prefix: &str) -> String {
    let reason = fields::str_at(terminated, &["reason"]);
    if !reason.is_empty() {
        return format!("{prefix}{reason}");
    }
    let signal = fields::int_at(terminated, &["signal"]);
    if signal != 0 {
        format!("{prefix}Signal:{signal}")
    } else {
        format!(
            "{prefix}ExitCode:{}",
            fields::int_at(terminated, &["exitCode"])
        )
    }
}

fn cells(pod: &Value, now: OffsetDateTime) -> Vec<Value> {
    let spec_inits = fields::items_at(pod, &["spec", "initContainers"]);
    let status = fields::child(pod, &["status"]);
    let conditions = fields::items_at(status, &["conditions"]);
    let phase = fields::str_at(status, &["phase"]);

    let mut reason = match fields::str_at(status, &["reason"]) {
        "" => phase.to_owned(),
        r => r.to_owned(),
    };
    let gated = conditions.iter().any(|c| {
        fields::str_at(c, &["type"]) == "PodScheduled"
            && fields::str_at(c, &["reason"]) == "SchedulingGated"
    });
    if gated {
        reason = "SchedulingGated".to_owned();
    }

    // Sidecars: init containers with restartPolicy Always (the last spec
    // entry of a name wins, as in upstream's map).
    let is_sidecar = |name: &str| {
        spec_inits
            .iter()
            .rev()
            .find(|c| fields::str_at(c, &["name"]) == name)
            .is_some_and(|c| fields::str_at(c, &["restartPolicy"]) == "Always")
    };
    let sidecars = spec_inits
        .iter()
        .filter(|c| fields::str_at(c, &["restartPolicy"]) == "Always")
        .count();
    let total = fields::items_at(pod, &["spec", "containers"]).len() + sidecars;
    let mut ready = 0usize;
    let mut restarts: i64 = 0;
    let mut sidecar_restarts: i64 = 0;
    let mut last_restart: Option<OffsetDateTime> = None;
    let mut last_sidecar_restart: Option<OffsetDateTime> = None;

    let mut initializing = false;
    for (i, c) in fields::items_at(status, &["initContainerStatuses"])
        .iter()
        .enumerate()
    {
        let count = fields::int_at(c, &["restartCount"]);
        restarts = restarts.saturating_add(count);
        last_restart = later(last_restart, last_terminated(c));
        let sidecar = is_sidecar(fields::str_at(c, &["name"]));
        if sidecar {
            sidecar_restarts = sidecar_restarts.saturating_add(count);
            last_sidecar_restart = later(last_sidecar_restart, last_terminated(c));
        }
        let terminated = fields::at(c, &["state", "terminated"]);
        let waiting_reason = fields::str_at(c, &["state", "waiting", "reason"]);
        if terminated.is_some_and(|t| fields::int_at(t, &["exitCode"]) == 0) {
            continue;
        }
        if sidecar && fields::bool_at(c, &["started"]) {
            if fields::bool_at(c, &["ready"]) {
                ready += 1;
            }
            continue;
        }
        reason = if let Some(t) = terminated {
            terminated_reason(t, "Init:")
        } else if fields::is_set(c, &["state", "waiting"])
            && !waiting_reason.is_empty()
            && waiting_reason != "PodInitializing"
        {
            format!("Init:{waiting_reason}")
        } else {
            format!("Init:{i}/{}", spec_inits.len())
        };
        initializing = true;
        break;
    }

    if !initializing || first_condition_true(conditions, "Initialized") {
        restarts = sidecar_restarts;
        last_restart = last_sidecar_restart;
        let mut has_running = false;
        for c in fields::items_at(status, &["containerStatuses"])
            .iter()
            .rev()
        {
            restarts = restarts.saturating_add(fields::int_at(c, &["restartCount"]));
            last_restart = later(last_restart, last_terminated(c));
            let waiting_reason = fields::str_at(c, &["state", "waiting", "reason"]);
            if fields::is_set(c, &["state", "waiting"]) && !waiting_reason.is_empty() {
                reason = waiting_reason.to_owned();
            } else if let Some(t) = fields::at(c, &["state", "terminated"]) {
                reason = terminated_reason(t, "");
            } else if fields::bool_at(c, &["ready"]) && fields::is_set(c, &["state", "running"]) {
                has_running = true;
                ready += 1;
            }
        }
        // A container still running turns "Completed" back into Running.
        if reason == "Completed" && has_running {
            reason = if any_condition_true(conditions, "Ready") {
                "Running".to_owned()
            } else {
                "NotReady".to_owned()
            };
        }
    }

    if fields::is_deleting(pod) {
        if fields::str_at(status, &["reason"]) == "NodeLost" {
            reason = "Unknown".to_owned();
        } else if phase != "Succeeded" && phase != "Failed" {
            reason = "Terminating".to_owned();
        }
    }

    let restarts_cell = match last_restart {
        Some(t) if restarts != 0 => format!("{restarts} ({} ago)", age::since(Some(t), now)),
        _ => restarts.to_string(),
    };

    // Wide columns.
    let pod_ip = match fields::str_at(status, &["podIP"]) {
        "" => fields::items_at(status, &["podIPs"])
            .first()
            .map_or("", |ip| fields::str_at(ip, &["ip"])),
        ip => ip,
    };
    let gates = fields::items_at(pod, &["spec", "readinessGates"]);
    let readiness_gates = if gates.is_empty() {
        "<none>".to_owned()
    } else {
        let true_count = gates
            .iter()
            .filter(|gate| {
                let type_ = fields::str_at(gate, &["conditionType"]);
                first_condition_true(conditions, type_)
            })
            .count();
        format!("{true_count}/{}", gates.len())
    };
    vec![
        fields::name(pod).into(),
        format!("{ready}/{total}").into(),
        reason.into(),
        restarts_cell.into(),
        fields::age(pod, now).into(),
        or_none(pod_ip).into(),
        or_none(fields::str_at(pod, &["spec", "nodeName"])).into(),
        or_none(fields::str_at(status, &["nominatedNodeName"])).into(),
        readiness_gates.into(),
    ]
}

/// `<none>` for an empty string.
fn or_none(s: &str) -> String {
    if s.is_empty() {
        "<none>".to_owned()
    } else {
        s.to_owned()
    }
}
