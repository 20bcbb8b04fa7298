//! batch/v1: Job and CronJob (`printJob`, `printCronJob`).
//!
//! Job STATUS is the first that holds of: `Complete` / `Failed` condition
//! true, deletion pending (`Terminating`), `Suspended`, `FailureTarget`,
//! else `Running`. COMPLETIONS is `succeeded/completions`, or without
//! `spec.completions` `succeeded/1` (`succeeded/1 of P` when parallelism
//! P > 1). DURATION runs from `status.startTime` to `completionTime` (or
//! now), empty before the job starts.

use serde_json::Value;
use time::OffsetDateTime;

use super::super::column::Column;
use super::super::descriptions as doc;
use super::super::printer::{Printer, no_conditions};
use super::super::{age, fields, labels, timestamp};
use super::container_cells;

pub(crate) static JOB: Printer = Printer {
    columns: &JOB_COLUMNS,
    cells: job,
    conditions: no_conditions,
    empty_rows_are_null: false,
};

static JOB_COLUMNS: [Column; 8] = [
    Column::name(),
    Column::string("Status", "Status of the job."),
    Column::string("Completions", doc::JOB_STATUS_SUCCEEDED),
    Column::string("Duration", "Time required to complete the job."),
    Column::age(),
    Column::containers(),
    Column::images(),
    Column::string("Selector", doc::JOB_SPEC_SELECTOR).wide(),
];

/// `hasJobCondition`: the first condition of `type_` decides.
fn has_condition(job: &Value, type_: &str) -> bool {
    fields::items_at(job, &["status", "conditions"])
        .iter()
        .find(|c| fields::str_at(c, &["type"]) == type_)
        .is_some_and(|c| fields::str_at(c, &["status"]) == "True")
}

fn job(job: &Value, now: OffsetDateTime) -> Vec<Value> {
    let succeeded = fields::int_at(job, &["status", "succeeded"]);
    let completions = match fields::opt_int_at(job, &["spec", "completions"]) {
        Some(c) => format!("{succeeded}/{c}"),
        None => match fields::int_at(job, &["spec", "parallelism"]) {
            p if p > 1 => format!("{succeeded}/1 of {p}"),
            _ => format!("{succeeded}/1"),
        },
    };
    // A set-but-zero time is Go's zero time, from which durations saturate.
    let time_or_zero = |path: &[&str]| {
        fields::is_set(job, path)
            .then(|| fields::time_at(job, path).unwrap_or_else(timestamp::zero))
    };
    let duration = match time_or_zero(&["status", "startTime"]) {
        None => String::new(),
        Some(start) => {
            let end = time_or_zero(&["status", "completionTime"]).unwrap_or(now);
            age::human_duration(timestamp::nanos_between(start, end))
        }
    };
    let status = if has_condition(job, "Complete") {
        "Complete"
    } else if has_condition(job, "Failed") {
        "Failed"
    } else if fields::is_deleting(job) {
        "Terminating"
    } else if has_condition(job, "Suspended") {
        "Suspended"
    } else if has_condition(job, "FailureTarget") {
        "FailureTarget"
    } else {
        "Running"
    };
    let [names, images] = container_cells(job, &["spec", "template", "spec", "containers"]);
    vec![
        fields::name(job).into(),
        status.into(),
        completions.into(),
        duration.into(),
        fields::age(job, now).into(),
        names,
        images,
        labels::format_label_selector(fields::at(job, &["spec", "selector"])).into(),
    ]
}

pub(crate) static CRON_JOB: Printer = Printer {
    columns: &CRON_JOB_COLUMNS,
    cells: cron_job,
    conditions: no_conditions,
    empty_rows_are_null: false,
};

static CRON_JOB_COLUMNS: [Column; 10] = [
    Column::name(),
    Column::string("Schedule", doc::CRON_JOB_SPEC_SCHEDULE),
    Column::string("Timezone", doc::CRON_JOB_SPEC_TIME_ZONE),
    Column::new("Suspend", "boolean", doc::CRON_JOB_SPEC_SUSPEND),
    Column::integer("Active", doc::CRON_JOB_STATUS_ACTIVE),
    Column::string("Last Schedule", doc::CRON_JOB_STATUS_LAST_SCHEDULE),
    Column::age(),
    Column::containers(),
    Column::images(),
    Column::string("Selector", doc::JOB_SPEC_SELECTOR).wide(),
];

fn cron_job(cj: &Value, now: OffsetDateTime) -> Vec<Value> {
    let last_schedule = if fields::is_set(cj, &["status", "lastScheduleTime"]) {
        age::since(fields::time_at(cj, &["status", "lastScheduleTime"]), now)
    } else {
        "<none>".to_owned()
    };
    let suspend = match fields::opt_bool_at(cj, &["spec", "suspend"]) {
        Some(true) => "True",
        Some(false) => "False",
        None => "<unset>",
    };
    let job_spec = fields::child(cj, &["spec", "jobTemplate", "spec"]);
    let [names, images] = container_cells(job_spec, &["template", "spec", "containers"]);
    vec![
        fields::name(cj).into(),
        fields::str_at(cj, &["spec", "schedule"]).into(),
        fields::opt_str_at(cj, &["spec", "timeZone"])
            .unwrap_or("<none>")
            .into(),
        suspend.into(),
        fields::len_at(cj, &["status", "active"]).into(),
        last_schedule.into(),
        fields::age(cj, now).into(),
        names,
        images,
        labels::format_label_selector(fields::at(job_spec, &["selector"])).into(),
    ]
}
