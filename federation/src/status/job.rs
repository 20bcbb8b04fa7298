//! Job: the members' parts folded into one Job status. Pure.
//!
//! - `active`, `succeeded`, `failed` summed (`ready`, `terminating` when a
//!   member reports them); a Divided Job's completions add up to the
//!   federated `spec.completions`, which Helm 3's `jobReady` compares
//!   with `succeeded`;
//! - `Complete` and v1.33's `SuccessCriteriaMet` are True only when EVERY
//!   chosen copy carries them True (the message names all clusters; the
//!   times are those of the last to finish); else they are absent, as on
//!   a running Job;
//! - `Failed` and `FailureTarget` are True when ANY copy's is (the message
//!   names the failed clusters, reason from the first of them): kstatus
//!   reports `Failed` then;
//! - `Suspended` is True only when every copy is suspended;
//! - `startTime` is the earliest, `completionTime` the latest (only when
//!   Complete);
//! - `completedIndexes`, `failedIndexes` and `uncountedTerminatedPods`
//!   are left out: an Indexed Job's members count their indexes each
//!   from 0, so their union would be meaningless.
//!
//! Note: `failed` is the sum of every member's failures, so Helm 3's
//! `--wait-for-jobs` (`failed > backoffLimit`) can call a Job failed that
//! failed in no single member; kstatus and `kubectl wait
//! --for=condition=Failed` read the `Failed` condition, which is exact.

use serde_json::{Map, Value};
use time::OffsetDateTime;
use time::format_description::well_known::Rfc3339;

use super::conditions::{self, default_rank, merge_one, status_of, true_is_bad};
use super::{MemberCopy, Presence, sum_into};

/// The federated Job's status (see the module's rules).
pub fn job(copies: &[&MemberCopy<'_>]) -> Value {
    let mut out = Map::new();
    sum_into(
        &mut out,
        copies,
        &[
            ("active", Presence::NonZero),
            ("succeeded", Presence::NonZero),
            ("failed", Presence::NonZero),
            ("terminating", Presence::Carried),
            ("ready", Presence::Carried),
        ],
    );
    let statuses: Vec<&Value> = copies.iter().filter_map(|c| c.status()).collect();
    if let Some(t) = pick_time(&statuses, "startTime", Pick::Earliest) {
        out.insert("startTime".into(), t);
    }
    let merged = merge(copies);
    let complete = merged
        .iter()
        .any(|c| c.get("type").and_then(Value::as_str) == Some("Complete"));
    if complete && let Some(t) = pick_time(&statuses, "completionTime", Pick::Latest) {
        out.insert("completionTime".into(), t);
    }
    if !merged.is_empty() {
        out.insert("conditions".into(), Value::Array(merged));
    }
    Value::Object(out)
}

/// Whether every copy exists and carries condition `type_` True.
fn all_true(copies: &[&MemberCopy<'_>], type_: &str) -> bool {
    !copies.is_empty()
        && copies
            .iter()
            .all(|c| condition(c, type_).is_some_and(|c| status_of(c) == "True"))
}

fn condition<'a>(copy: &MemberCopy<'a>, type_: &str) -> Option<&'a Value> {
    copy.object?
        .pointer("/status/conditions")?
        .as_array()?
        .iter()
        .find(|c| c.get("type").and_then(Value::as_str) == Some(type_))
}

/// The merged Job conditions, in order of first appearance.
fn merge(copies: &[&MemberCopy<'_>]) -> Vec<Value> {
    let mut types: Vec<&str> = Vec::new();
    for c in copies {
        let list = c
            .status()
            .and_then(|s| s.get("conditions"))
            .and_then(Value::as_array);
        for cond in list.into_iter().flatten() {
            if let Some(t) = cond.get("type").and_then(Value::as_str)
                && !types.contains(&t)
            {
                types.push(t);
            }
        }
    }
    types
        .into_iter()
        .filter_map(|t| {
            let held: Vec<(&str, &Value)> = copies
                .iter()
                .filter_map(|c| condition(c, t).map(|v| (c.cluster, v)))
                .collect();
            match t {
                "Complete" | "SuccessCriteriaMet" => {
                    if !all_true(copies, t) {
                        return None;
                    }
                    let mut m = merge_one(t, &held, default_rank)?;
                    latest_times(&mut m, &held);
                    Some(m)
                }
                "Failed" | "FailureTarget" => {
                    merge_one(t, &held, |_, c| true_is_bad(c)).filter(|m| status_of(m) == "True")
                }
                "Suspended" => merge_one(t, &held, default_rank)
                    .filter(|m| status_of(m) != "True" || all_true(copies, t)),
                _ => merge_one(t, &held, conditions::default_rank),
            }
        })
        .collect()
}

/// Sets the condition's probe and transition times to the latest among
/// `held` (the moment the last part finished).
fn latest_times(merged: &mut Value, held: &[(&str, &Value)]) {
    let conds: Vec<&Value> = held.iter().map(|(_, c)| *c).collect();
    for field in ["lastProbeTime", "lastTransitionTime"] {
        if let Some(t) = pick_time(&conds, field, Pick::Latest)
            && let Some(m) = merged.as_object_mut()
        {
            m.insert(field.into(), t);
        }
    }
}

/// Which of several times [`pick_time`] keeps.
#[derive(Clone, Copy)]
pub(crate) enum Pick {
    /// The earliest.
    Earliest,
    /// The latest.
    Latest,
}

/// The earliest or latest RFC 3339 time of `field` among `values`
/// (unparsable times are ignored), as its member wrote it.
pub(crate) fn pick_time(values: &[&Value], field: &str, pick: Pick) -> Option<Value> {
    let mut times: Vec<(OffsetDateTime, &str)> = values
        .iter()
        .filter_map(|v| {
            let s = v.get(field)?.as_str()?;
            Some((OffsetDateTime::parse(s, &Rfc3339).ok()?, s))
        })
        .collect();
    times.sort();
    let chosen = match pick {
        Pick::Earliest => times.first(),
        Pick::Latest => times.last(),
    };
    chosen.map(|(_, s)| Value::String((*s).to_owned()))
}
