//! Division of a Divided object's replicas over its eligible clusters:
//! Federation V1's replica planner semantics, written as a pure function
//! (no I/O, no clock, no randomness).
//!
//! The semantics (DESIGN §4, V1's `planner.Plan`):
//! - every cluster takes its preferences from its own entry, else `"*"`,
//!   else weight 0 (it gets nothing);
//! - clusters are ranked by weight (descending), then by the FNV-1 32-bit
//!   hash of cluster name + object key, so single replicas do not always
//!   land on the alphabetically smallest cluster;
//! - minimums are given first, in rank order, as far as the total allows;
//! - the rest is split by weight, never past a cluster's `maxReplicas` or
//!   its capacity estimate; what a capped cluster cannot take goes to the
//!   others by weight; what no cluster can take goes nowhere
//!   ([`Division::unplaced`]);
//! - with `rebalance: false` the current assignment is kept where it can be:
//!   a scale-up only adds, a scale-down only removes, and replicas move only
//!   towards the weighted plan.
//!
//! Unlike V1's fixed-point loop, the weighted split is a water-filling
//! apportionment (largest remainder, ties by rank), so every cluster is
//! within one replica of its exact weighted share unless a cap binds.

use std::cmp::Ordering;
use std::collections::{BTreeMap, BTreeSet};

use skein_admission::placement::{ClusterPreferences, ReplicaPreferences};

/// The result of [`divide`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Division {
    /// Replicas per eligible cluster, sorted by name; every eligible
    /// cluster is present (0 allowed).
    pub replicas: BTreeMap<String, i64>,
    /// Replicas no cluster could take (every cap or capacity reached, or no
    /// cluster with a weight); 0 when the total was placed.
    pub unplaced: i64,
}

/// One cluster in rank order, with its preferences and cap.
#[derive(Debug, Clone)]
struct Ranked {
    name: String,
    hash: u32,
    weight: i64,
    min: i64,
    /// `min(maxReplicas, capacity)`, `i64::MAX` when neither is set.
    cap: i64,
}

/// Splits `total` replicas over `eligible` clusters by `preferences`.
///
/// `current` is what each cluster runs now (only read when
/// `preferences.rebalance` is false; names outside `eligible` are
/// ignored); `capacity` is the estimated number of replicas a cluster can
/// still hold (a missing name is unbounded); `object_key` (e.g.
/// `namespace/name` or the UID) seeds the tie-break. A negative `total` is
/// treated as 0. The result does not depend on the order of `eligible`.
pub fn divide(
    total: i64,
    preferences: &ReplicaPreferences,
    eligible: &[String],
    current: &BTreeMap<String, i64>,
    capacity: &BTreeMap<String, i64>,
    object_key: &str,
) -> Division {
    let total = total.max(0);
    let ranked = rank(preferences, eligible, capacity, object_key);
    let ideal = plan(total, &ranked);
    let replicas = if preferences.rebalance || current.is_empty() {
        ideal
    } else {
        keep_current(total, &ranked, &ideal, current)
    };
    let placed: i64 = replicas.iter().sum();
    Division {
        replicas: ranked
            .iter()
            .zip(&replicas)
            .map(|(c, n)| (c.name.clone(), *n))
            .collect(),
        unplaced: total - placed,
    }
}

/// The FNV-1 32-bit hash (Go's `fnv.New32`, as V1's planner used) of
/// `name` followed by `key`.
pub fn tie_break_hash(name: &str, key: &str) -> u32 {
    const OFFSET: u32 = 0x811c_9dc5;
    const PRIME: u32 = 0x0100_0193;
    name.bytes()
        .chain(key.bytes())
        .fold(OFFSET, |h, b| h.wrapping_mul(PRIME) ^ u32::from(b))
}

/// The eligible clusters (deduplicated) in rank order: weight descending,
/// hash ascending, name ascending.
fn rank(
    preferences: &ReplicaPreferences,
    eligible: &[String],
    capacity: &BTreeMap<String, i64>,
    object_key: &str,
) -> Vec<Ranked> {
    let none = ClusterPreferences {
        weight: 0,
        min_replicas: 0,
        max_replicas: None,
    };
    let names: BTreeSet<&String> = eligible.iter().collect();
    let mut out: Vec<Ranked> = names
        .into_iter()
        .map(|name| {
            let p = preferences
                .clusters
                .get(name.as_str())
                .or_else(|| preferences.clusters.get("*"))
                .copied()
                .unwrap_or(none);
            let cap = p
                .max_replicas
                .unwrap_or(i64::MAX)
                .min(capacity.get(name.as_str()).copied().unwrap_or(i64::MAX))
                .max(0);
            Ranked {
                name: name.clone(),
                hash: tie_break_hash(name, object_key),
                weight: p.weight.max(0),
                min: p.min_replicas.max(0),
                cap,
            }
        })
        .collect();
    out.sort_by(rank_order);
    out
}

fn rank_order(a: &Ranked, b: &Ranked) -> Ordering {
    b.weight
        .cmp(&a.weight)
        .then(a.hash.cmp(&b.hash))
        .then_with(|| a.name.cmp(&b.name))
}

/// Minimums in rank order, as far as `total` and each cap allow.
fn minimums(total: i64, ranked: &[Ranked]) -> Vec<i64> {
    let mut left = total;
    ranked
        .iter()
        .map(|c| {
            let m = c.min.min(c.cap).min(left);
            left -= m;
            m
        })
        .collect()
}

/// The plan ignoring the current assignment (`rebalance: true`):
/// minimums, then the rest by weight within caps.
fn plan(total: i64, ranked: &[Ranked]) -> Vec<i64> {
    let mut out = minimums(total, ranked);
    let left = total - out.iter().sum::<i64>();
    let shares: Vec<(i64, i64)> = ranked
        .iter()
        .zip(&out)
        .map(|(c, m)| (c.weight, c.cap - m))
        .collect();
    for (o, extra) in out.iter_mut().zip(water_fill(left, &shares)) {
        *o += extra;
    }
    out
}

/// `rebalance: false`: stays between the current assignment (capped) and
/// the ideal plan, filling first what keeps replicas where they are, then
/// what moves towards the plan. Minimums win over keeping.
fn keep_current(
    total: i64,
    ranked: &[Ranked],
    ideal: &[i64],
    current: &BTreeMap<String, i64>,
) -> Vec<i64> {
    let mins = minimums(total, ranked);
    let kept: Vec<i64> = ranked
        .iter()
        .map(|c| current.get(&c.name).copied().unwrap_or(0).clamp(0, c.cap))
        .collect();
    // Per cluster: never below `lo` (its minimum, and what both the plan
    // and the current assignment agree on); up to `keep` (what it runs, or
    // its minimum) before anything moves towards the plan; at most `hi`.
    // `lo <= keep <= hi` because minimums never exceed the plan.
    let lo: Vec<i64> = (0..ranked.len())
        .map(|i| kept[i].min(ideal[i]).max(mins[i]))
        .collect();
    let keep: Vec<i64> = (0..ranked.len()).map(|i| kept[i].max(mins[i])).collect();
    let hi: Vec<i64> = (0..ranked.len()).map(|i| kept[i].max(ideal[i])).collect();
    let mut out = lo.clone();
    let mut left = total - lo.iter().sum::<i64>();
    for target in [&keep, &hi] {
        let gaps: Vec<(i64, i64)> = out
            .iter()
            .zip(target.iter())
            .map(|(o, t)| (t - o, t - o))
            .collect();
        let add = water_fill(left.max(0), &gaps);
        for (o, a) in out.iter_mut().zip(&add) {
            *o += a;
        }
        left -= add.iter().sum::<i64>();
    }
    out
}

/// Splits `budget` over entries `(weight, room)` (in rank order)
/// proportionally to weight, never past `room`: clusters whose share
/// reaches their room are filled and dropped, the rest re-split; the final
/// split rounds by largest remainder, ties to the earlier rank. Entries
/// with weight 0 or no room get nothing. Returns what each entry takes;
/// the sum is `min(budget, total room of weighted entries)`.
fn water_fill(budget: i64, entries: &[(i64, i64)]) -> Vec<i64> {
    let mut out = vec![0_i64; entries.len()];
    let mut active: Vec<usize> = (0..entries.len())
        .filter(|&i| entries[i].0 > 0 && entries[i].1 > 0)
        .collect();
    let mut left = i128::from(budget.max(0));
    while left > 0 && !active.is_empty() {
        let weights: i128 = active.iter().map(|&i| i128::from(entries[i].0)).sum();
        let full: Vec<usize> = active
            .iter()
            .copied()
            .filter(|&i| left * i128::from(entries[i].0) >= i128::from(entries[i].1) * weights)
            .collect();
        if full.is_empty() {
            let mut given = 0_i128;
            let mut remainders = Vec::with_capacity(active.len());
            for (pos, &i) in active.iter().enumerate() {
                let exact = left * i128::from(entries[i].0);
                let share = exact / weights;
                out[i] = i64::try_from(share).unwrap_or(i64::MAX);
                given += share;
                remainders.push((exact % weights, pos, i));
            }
            // Largest remainder first; `active` is in rank order.
            remainders.sort_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(&b.1)));
            let extra = usize::try_from(left - given).unwrap_or(0);
            for &(_, _, i) in remainders.iter().take(extra) {
                out[i] += 1;
            }
            break;
        }
        for &i in &full {
            out[i] = entries[i].1;
            left -= i128::from(entries[i].1);
        }
        active.retain(|i| !full.contains(i));
    }
    out
}

#[cfg(test)]
mod tests;
