//! batch/v1 validation (upstream `pkg/apis/batch/validation/validation.go`),
//! a subset: counts, completion mode, template restart policy, selector
//! and template immutability, CronJob schedule and policies.

use serde_json::{Map, Value, json};

use super::{non_negative, pod};
use crate::Cause;
use crate::json::str_of;
use crate::names::IMMUTABLE_MSG;
use crate::path::Path;
use crate::selector::{label_selector_matches, render_label_selector, validate_label_selector};

pub(super) fn job(obj: &Value, old: Option<&Value>) -> Vec<Cause> {
    let mut out = Vec::new();
    let spec = obj
        .get("spec")
        .and_then(Value::as_object)
        .cloned()
        .unwrap_or_default();
    let path = Path::new("spec");
    job_spec(&spec, &path, true, &mut out);
    if let Some(old) = old {
        let old_spec = old
            .get("spec")
            .and_then(Value::as_object)
            .cloned()
            .unwrap_or_default();
        for key in ["completions", "completionMode"] {
            if spec.get(key) != old_spec.get(key)
                && !(key == "completions" && elastic(&spec, &old_spec))
            {
                out.push(Cause::invalid(
                    path.child(key),
                    spec.get(key).unwrap_or(&Value::Null),
                    IMMUTABLE_MSG,
                ));
            }
        }
        let sel = spec.get("selector").cloned().unwrap_or(Value::Null);
        if sel != old_spec.get("selector").cloned().unwrap_or(Value::Null) {
            out.push(Cause::invalid_rendered(
                path.child("selector"),
                &render_label_selector(&sel),
                IMMUTABLE_MSG,
            ));
        }
        let suspended = old_spec.get("suspend").and_then(Value::as_bool) == Some(true);
        if !suspended && spec.get("template") != old_spec.get("template") {
            out.push(Cause::invalid(
                path.child("template"),
                spec.get("template").unwrap_or(&Value::Null),
                IMMUTABLE_MSG,
            ));
        }
    }
    out
}

/// Indexed jobs may scale completions together with parallelism.
fn elastic(spec: &Map<String, Value>, old: &Map<String, Value>) -> bool {
    str_of(spec, "completionMode") == "Indexed"
        && spec.get("completions") == spec.get("parallelism")
        && old.get("completions") == old.get("parallelism")
}

fn job_spec(spec: &Map<String, Value>, path: &Path, is_job: bool, out: &mut Vec<Cause>) {
    for key in ["parallelism", "completions", "backoffLimit"] {
        non_negative(spec.get(key), &path.child(key), out);
    }
    if let Some(n) = spec.get("activeDeadlineSeconds").and_then(Value::as_i64)
        && n <= 0
    {
        out.push(Cause::invalid(
            path.child("activeDeadlineSeconds"),
            &json!(n),
            "must be greater than 0",
        ));
    }
    let mode = str_of(spec, "completionMode");
    if !mode.is_empty() && !["NonIndexed", "Indexed"].contains(&mode) {
        out.push(Cause::not_supported(
            path.child("completionMode"),
            &json!(mode),
            &["NonIndexed", "Indexed"],
        ));
    }
    if mode == "Indexed" && spec.get("completions").is_none_or(Value::is_null) {
        out.push(Cause::required(
            path.child("completions"),
            "when completion mode is Indexed",
        ));
    }
    let manual = spec.get("manualSelector").and_then(Value::as_bool) == Some(true);
    match spec.get("selector").filter(|s| !s.is_null()) {
        None => {
            // The strategy generates it unless the user asked to choose.
            if is_job && manual {
                out.push(Cause::required(path.child("selector"), ""));
            }
        }
        Some(sel) => {
            out.extend(validate_label_selector(sel, &path.child("selector")));
            let labels = spec
                .get("template")
                .and_then(|t| t.pointer("/metadata/labels"))
                .and_then(Value::as_object)
                .cloned()
                .unwrap_or_default();
            if !label_selector_matches(Some(sel), &labels) {
                out.push(Cause::invalid(
                    path.child("template").child("metadata").child("labels"),
                    &Value::Object(labels),
                    "`selector` does not match template `labels`",
                ));
            }
        }
    }
    let tpath = path.child("template");
    out.extend(pod::template(spec.get("template"), &tpath));
    let restart = spec
        .get("template")
        .and_then(|t| t.pointer("/spec/restartPolicy"))
        .and_then(Value::as_str)
        .unwrap_or_default();
    if restart != "OnFailure" && restart != "Never" {
        out.push(Cause::not_supported(
            tpath.child("spec").child("restartPolicy"),
            &json!(restart),
            &["OnFailure", "Never"],
        ));
    }
}

pub(super) fn cron_job(obj: &Value, _old: Option<&Value>) -> Vec<Cause> {
    let mut out = Vec::new();
    let name = crate::json::str_at(obj, "/metadata/name");
    if name.len() > 52 {
        out.push(Cause::invalid(
            "metadata.name",
            &json!(name),
            "must be no more than 52 characters",
        ));
    }
    let spec = obj
        .get("spec")
        .and_then(Value::as_object)
        .cloned()
        .unwrap_or_default();
    let path = Path::new("spec");
    let schedule = str_of(&spec, "schedule");
    if schedule.is_empty() {
        out.push(Cause::required(path.child("schedule"), ""));
    } else if let Err(e) = check_schedule(schedule) {
        out.push(Cause::invalid(path.child("schedule"), &json!(schedule), e));
    }
    let policy = str_of(&spec, "concurrencyPolicy");
    if policy.is_empty() {
        out.push(Cause::required(path.child("concurrencyPolicy"), ""));
    } else if !["Allow", "Forbid", "Replace"].contains(&policy) {
        out.push(Cause::not_supported(
            path.child("concurrencyPolicy"),
            &json!(policy),
            &["Allow", "Forbid", "Replace"],
        ));
    }
    non_negative(
        spec.get("startingDeadlineSeconds"),
        &path.child("startingDeadlineSeconds"),
        &mut out,
    );
    non_negative(
        spec.get("successfulJobsHistoryLimit"),
        &path.child("successfulJobsHistoryLimit"),
        &mut out,
    );
    non_negative(
        spec.get("failedJobsHistoryLimit"),
        &path.child("failedJobsHistoryLimit"),
        &mut out,
    );
    let jt = spec
        .get("jobTemplate")
        .and_then(|j| j.get("spec"))
        .and_then(Value::as_object)
        .cloned()
        .unwrap_or_default();
    job_spec(
        &jt,
        &path.child("jobTemplate").child("spec"),
        false,
        &mut out,
    );
    out
}

/// A standard 5-field cron expression (or a `@` descriptor), checked as
/// robfig/cron's standard parser does; messages follow its wording.
fn check_schedule(s: &str) -> Result<(), String> {
    let s = s.trim();
    let s = if let Some(rest) = s.strip_prefix("TZ=").or_else(|| s.strip_prefix("CRON_TZ=")) {
        rest.split_once(' ')
            .map(|(_, r)| r.trim())
            .unwrap_or_default()
    } else {
        s
    };
    if s.starts_with('@') {
        return match s {
            "@yearly" | "@annually" | "@monthly" | "@weekly" | "@daily" | "@midnight"
            | "@hourly" => Ok(()),
            _ if s.starts_with("@every ") => Ok(()),
            _ => Err(format!("unrecognized descriptor: {s}")),
        };
    }
    let fields: Vec<&str> = s.split_whitespace().collect();
    if fields.len() != 5 {
        return Err(format!(
            "expected exactly 5 fields, found {}: {s}",
            fields.len()
        ));
    }
    let bounds = [(0, 59), (0, 23), (1, 31), (1, 12), (0, 7)];
    let names: [&[&str]; 5] = [
        &[],
        &[],
        &[],
        &[
            "jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec",
        ],
        &["sun", "mon", "tue", "wed", "thu", "fri", "sat"],
    ];
    for ((field, (lo, hi)), names) in fields.iter().zip(bounds).zip(names) {
        for part in field.split(',') {
            let (range, step) = match part.split_once('/') {
                Some((r, st)) => (r, Some(st)),
                None => (part, None),
            };
            if let Some(st) = step
                && st.parse::<u32>().map_or(true, |n| n == 0)
            {
                return Err(format!("failed to parse int from {st}"));
            }
            if range == "*" || range == "?" {
                continue;
            }
            let value = |t: &str| -> Result<u32, String> {
                if let Some(i) = names.iter().position(|n| t.eq_ignore_ascii_case(n)) {
                    return Ok(u32::try_from(i).unwrap_or(0) + lo);
                }
                t.parse::<u32>()
                    .map_err(|_| format!("failed to parse int from {t}"))
            };
            let (a, b) = match range.split_once('-') {
                Some((a, b)) => (value(a)?, value(b)?),
                None => {
                    let v = value(range)?;
                    (v, v)
                }
            };
            if a < lo {
                return Err(format!(
                    "beginning of range ({a}) below minimum ({lo}): {part}"
                ));
            }
            if b > hi {
                return Err(format!("end of range ({b}) above maximum ({hi}): {part}"));
            }
            if a > b {
                return Err(format!(
                    "beginning of range ({a}) beyond end of range ({b}): {part}"
                ));
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::check_schedule;

    #[test]
    fn schedules() {
        for ok in [
            "*/5 * * * *",
            "0 0 * * 0",
            "0 9-17 * * mon-fri",
            "@hourly",
            "TZ=UTC 0 0 * * *",
            "15,45 */2 1 jan *",
        ] {
            assert!(check_schedule(ok).is_ok(), "{ok}");
        }
        assert_eq!(
            check_schedule("* * *").unwrap_err(),
            "expected exactly 5 fields, found 3: * * *"
        );
        assert_eq!(
            check_schedule("61 * * * *").unwrap_err(),
            "end of range (61) above maximum (59): 61"
        );
        assert!(check_schedule("@sometimes").is_err());
        assert!(check_schedule("x * * * *").is_err());
    }
}
