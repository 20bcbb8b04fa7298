//! HorizontalPodAutoscaler (autoscaling/v2): the members' autoscalers
//! each scale their own share, so the federation shows their sum. Pure.
//!
//! - `currentReplicas` and `desiredReplicas` summed;
//! - `observedGeneration` by [`super::observed_generation`] (absent while
//!   members do not report one);
//! - `lastScaleTime`: the latest;
//! - `currentMetrics`: the member's when there is exactly one copy, else
//!   left out (utilizations of different clusters do not add up);
//! - conditions merged worst-wins: `AbleToScale` and `ScalingActive`
//!   False is worst, `ScalingLimited` True is worst.

use serde_json::{Map, Value};

use super::conditions::{self, true_is_bad, true_is_good};
use super::job::{Pick, pick_time};
use super::{MemberCopy, Presence, observed_generation, sum_into};

/// An HPA's condition rank: `ScalingLimited` True is worst, other types
/// False is worst.
pub fn hpa_rank(type_: &str, cond: &Value) -> u32 {
    match type_ {
        "ScalingLimited" => true_is_bad(cond),
        _ => true_is_good(cond),
    }
}

/// The federated HorizontalPodAutoscaler's status (see the module).
pub fn hpa(federated: &Value, copies: &[&MemberCopy<'_>]) -> Value {
    let mut out = Map::new();
    if let Some(g) = observed_generation(federated, copies) {
        out.insert("observedGeneration".into(), Value::from(g));
    }
    let statuses: Vec<&Value> = copies.iter().filter_map(|c| c.status()).collect();
    if let Some(t) = pick_time(&statuses, "lastScaleTime", Pick::Latest) {
        out.insert("lastScaleTime".into(), t);
    }
    sum_into(
        &mut out,
        copies,
        &[
            ("currentReplicas", Presence::NonZero),
            ("desiredReplicas", Presence::Always),
        ],
    );
    if let ([only], [_]) = (statuses.as_slice(), copies)
        && let Some(m) = only.get("currentMetrics")
    {
        out.insert("currentMetrics".into(), m.clone());
    }
    let merged = conditions::merge(copies, hpa_rank);
    if !merged.is_empty() {
        out.insert("conditions".into(), Value::Array(merged));
    }
    Value::Object(out)
}
