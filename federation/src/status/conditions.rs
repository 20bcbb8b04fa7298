//! Merging the members' `status.conditions` into the federated object's.
//! Pure: no I/O, no clock (times are the members' own).
//!
//! Rule: conditions are merged by `type`; per type the worst copy wins
//! (a kind's rank function says what worst means); the merged condition
//! is the worst one (its status, reason, `lastUpdateTime` and
//! `lastTransitionTime`; with several equally bad, the first by cluster
//! name), and its message names the cluster(s) that hold the winning
//! condition: `eu: Deployment "web" has timed out progressing.`, or
//! `eu, us: ...` when they say the same, or `eu: ...; us: ...` when they
//! say different things. Types appear in the order of their first
//! appearance, walking the copies by cluster name.

use serde_json::Value;

use super::MemberCopy;

/// How bad a condition is (higher is worse), given its `type` and the
/// condition itself.
pub type Rank = fn(&str, &Value) -> u32;

/// The condition's `status`, `""` when absent.
pub fn status_of(cond: &Value) -> &str {
    cond.get("status")
        .and_then(Value::as_str)
        .unwrap_or_default()
}

/// The condition's `reason`, `""` when absent.
pub fn reason_of(cond: &Value) -> &str {
    cond.get("reason")
        .and_then(Value::as_str)
        .unwrap_or_default()
}

/// Rank of a condition whose good state is `True` (Available,
/// Progressing, AbleToScale, Ready...): False (20) beats Unknown (10)
/// beats True (0); a status outside the three counts as Unknown.
pub fn true_is_good(cond: &Value) -> u32 {
    match status_of(cond) {
        "True" => 0,
        "False" => 20,
        _ => 10,
    }
}

/// Rank of a condition whose bad state is `True` (ReplicaFailure,
/// ScalingLimited, Failed...): True (20) beats Unknown (10) beats False
/// (0).
pub fn true_is_bad(cond: &Value) -> u32 {
    match status_of(cond) {
        "False" => 0,
        "True" => 20,
        _ => 10,
    }
}

/// The default rank: [`true_is_good`] whatever the type (kstatus'
/// "abnormal-true" types are ranked by their kind's own rank function).
pub fn default_rank(_type: &str, cond: &Value) -> u32 {
    true_is_good(cond)
}

/// The merged conditions of `copies` (sorted by cluster name), per the
/// module's rule, ranked by `rank`.
pub fn merge(copies: &[&MemberCopy<'_>], rank: Rank) -> Vec<Value> {
    let per_copy: Vec<(&str, &[Value])> = copies
        .iter()
        .filter_map(|c| {
            let list = c.status()?.get("conditions")?.as_array()?;
            Some((c.cluster, list.as_slice()))
        })
        .collect();
    let mut types: Vec<&str> = Vec::new();
    for (_, list) in &per_copy {
        for cond in *list {
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
            let held: Vec<(&str, &Value)> = per_copy
                .iter()
                .filter_map(|(cluster, list)| {
                    list.iter()
                        .find(|c| c.get("type").and_then(Value::as_str) == Some(t))
                        .map(|c| (*cluster, c))
                })
                .collect();
            merge_one(t, &held, rank)
        })
        .collect()
}

/// The merged condition of one type from `(cluster, condition)` pairs in
/// cluster order; `None` when no copy holds it.
pub fn merge_one(type_: &str, held: &[(&str, &Value)], rank: Rank) -> Option<Value> {
    let worst = held.iter().map(|(_, c)| rank(type_, c)).max()?;
    let winners: Vec<(&str, &Value)> = held
        .iter()
        .filter(|(_, c)| rank(type_, c) == worst)
        .copied()
        .collect();
    let (_, representative) = winners.first()?;
    let mut out = (*representative).clone();
    if let Some(map) = out.as_object_mut() {
        map.insert("message".into(), Value::String(named(&winners)));
    }
    Some(out)
}

/// `eu, us: message` (clusters grouped by identical message, groups in
/// order of their first cluster, joined by `; `; a group without a
/// message is just its clusters).
pub fn named(winners: &[(&str, &Value)]) -> String {
    let mut groups: Vec<(&str, Vec<&str>)> = Vec::new();
    for (cluster, cond) in winners {
        let message = cond
            .get("message")
            .and_then(Value::as_str)
            .unwrap_or_default();
        match groups.iter_mut().find(|(m, _)| *m == message) {
            Some((_, clusters)) => clusters.push(cluster),
            None => groups.push((message, vec![cluster])),
        }
    }
    groups
        .iter()
        .map(|(message, clusters)| {
            let names = clusters.join(", ");
            if message.is_empty() {
                names
            } else {
                format!("{names}: {message}")
            }
        })
        .collect::<Vec<_>>()
        .join("; ")
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn cond(t: &str, s: &str, reason: &str, msg: &str) -> Value {
        json!({"type": t, "status": s, "reason": reason, "message": msg,
               "lastUpdateTime": "2026-01-01T00:00:00Z",
               "lastTransitionTime": "2026-01-01T00:00:00Z"})
    }

    #[test]
    fn worst_wins_and_names_its_cluster() {
        let ok = cond("Available", "True", "MinimumReplicasAvailable", "fine");
        let bad = cond(
            "Available",
            "False",
            "MinimumReplicasUnavailable",
            "not fine",
        );
        let unknown = cond("Available", "Unknown", "X", "hmm");
        let held = [("ap", &ok), ("eu", &bad), ("us", &unknown)];
        let m = merge_one("Available", &held, default_rank).expect("merged");
        assert_eq!(m["status"], "False");
        assert_eq!(m["reason"], "MinimumReplicasUnavailable");
        assert_eq!(m["message"], "eu: not fine");
        let held = [("ap", &ok), ("us", &unknown)];
        let m = merge_one("Available", &held, default_rank).expect("merged");
        assert_eq!(m["status"], "Unknown");
        assert_eq!(m["message"], "us: hmm");
    }

    #[test]
    fn equal_winners_are_grouped_by_message() {
        let a = cond("Ready", "True", "R", "same");
        let b = cond("Ready", "True", "R", "other");
        let held = [("ap", &a), ("eu", &b), ("us", &a)];
        let m = merge_one("Ready", &held, default_rank).expect("merged");
        assert_eq!(m["message"], "ap, us: same; eu: other");
        let empty = json!({"type": "Ready", "status": "True"});
        let held = [("ap", &empty), ("eu", &empty)];
        let m = merge_one("Ready", &held, default_rank).expect("merged");
        assert_eq!(m["message"], "ap, eu");
    }

    #[test]
    fn true_is_bad_ranks_true_worst() {
        let t = cond("ReplicaFailure", "True", "FailedCreate", "quota");
        let f = cond("ReplicaFailure", "False", "", "");
        let held = [("ap", &f), ("eu", &t)];
        let m = merge_one("ReplicaFailure", &held, |_, c| true_is_bad(c)).expect("merged");
        assert_eq!(m["status"], "True");
        assert_eq!(m["message"], "eu: quota");
        assert!(merge_one("X", &[], default_rank).is_none());
    }
}
