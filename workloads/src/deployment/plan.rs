//! The Deployment controller's arithmetic, as upstream's
//! `pkg/controller/deployment` (`rolling.go`, `recreate.go`, `sync.go`,
//! `util/deployment_util.go`): surge and unavailability fenceposts, how far
//! the new ReplicaSet may grow and the old ones shrink, proportional
//! scaling, and which old ReplicaSets history cleanup deletes.
//!
//! Pure: views of the objects in, target sizes out. A [`Scale`] is one
//! call of upstream's `scaleReplicaSet`: the worker writes the size and the
//! desired/max-replicas annotations when either differs.

use serde_json::Value;

/// `deployment.kubernetes.io/revision`.
pub const REVISION: &str = "deployment.kubernetes.io/revision";
/// `deployment.kubernetes.io/revision-history`.
pub const REVISION_HISTORY: &str = "deployment.kubernetes.io/revision-history";
/// `deployment.kubernetes.io/desired-replicas`.
pub const DESIRED_REPLICAS: &str = "deployment.kubernetes.io/desired-replicas";
/// `deployment.kubernetes.io/max-replicas`.
pub const MAX_REPLICAS: &str = "deployment.kubernetes.io/max-replicas";
/// The label that tells a Deployment's ReplicaSets (and their Pods) apart.
pub const POD_TEMPLATE_HASH: &str = "pod-template-hash";

/// The largest count the planner works with: replica counts, surges and
/// statuses read from objects are clamped to it, so no sum of them
/// overflows (far beyond anything a simulated cluster runs).
pub const MAX_COUNT: i32 = 1 << 20;

/// `n` within `0..=MAX_COUNT`.
pub fn clamp(n: i64) -> i32 {
    i32::try_from(n.clamp(0, i64::from(MAX_COUNT))).unwrap_or(0)
}

/// A Deployment's update strategy.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Strategy {
    /// Kill every old Pod, then create the new ones.
    Recreate,
    /// Replace Pods a few at a time.
    RollingUpdate {
        /// `maxSurge` (an int or a percentage; absent is 0).
        max_surge: IntOrPercent,
        /// `maxUnavailable` (an int or a percentage; absent is 0).
        max_unavailable: IntOrPercent,
    },
}

/// An `IntOrString` of a rolling update.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum IntOrPercent {
    /// An absolute number.
    Int(i32),
    /// A percentage of the desired replicas.
    Percent(i32),
}

impl IntOrPercent {
    /// Reads `25`, `"25%"` or `"25"`; anything else (absent included) is 0,
    /// which validation rules out for stored objects.
    pub fn parse(v: Option<&Value>) -> IntOrPercent {
        match v {
            Some(Value::Number(n)) => IntOrPercent::Int(clamp(n.as_i64().unwrap_or(0))),
            Some(Value::String(s)) => match s.strip_suffix('%') {
                Some(p) => IntOrPercent::Percent(clamp(p.parse().unwrap_or(0))),
                None => IntOrPercent::Int(clamp(s.parse().unwrap_or(0))),
            },
            _ => IntOrPercent::Int(0),
        }
    }

    /// Upstream's `GetScaledValueFromIntOrPercent`: a percentage of
    /// `total`, rounded up or down.
    pub fn scaled(self, total: i32, round_up: bool) -> i32 {
        match self {
            IntOrPercent::Int(n) => n,
            IntOrPercent::Percent(p) => {
                let product = i64::from(p) * i64::from(total);
                let v = if round_up {
                    (product + 99).div_euclid(100)
                } else {
                    product.div_euclid(100)
                };
                clamp(v)
            }
        }
    }
}

/// What the planner needs of a Deployment.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DeploySpec {
    /// `metadata.name`.
    pub name: String,
    /// `spec.replicas` (defaulted to 1).
    pub replicas: i32,
    /// `spec.strategy`.
    pub strategy: Strategy,
    /// `spec.minReadySeconds`.
    pub min_ready_seconds: i32,
    /// `spec.revisionHistoryLimit` (`None` keeps every old ReplicaSet).
    pub revision_history_limit: Option<i32>,
    /// `spec.progressDeadlineSeconds` (`None` or `i32::MAX`: no deadline).
    pub progress_deadline_seconds: Option<i32>,
    /// `spec.paused`.
    pub paused: bool,
    /// `metadata.generation`.
    pub generation: i64,
}

fn int(v: Option<&Value>) -> Option<i64> {
    v.and_then(Value::as_i64)
}

fn int32(v: Option<&Value>) -> Option<i32> {
    int(v).map(clamp)
}

fn exact_i32(v: Option<&Value>) -> Option<i32> {
    int(v).and_then(|n| i32::try_from(n).ok())
}

impl DeploySpec {
    /// The spec of a stored Deployment (defaults as upstream's when absent).
    pub fn of(d: &Value) -> DeploySpec {
        let spec = d.get("spec");
        let at = |p: &str| spec.and_then(|s| s.pointer(p));
        let strategy = match at("/strategy/type").and_then(Value::as_str) {
            Some("Recreate") => Strategy::Recreate,
            _ => Strategy::RollingUpdate {
                max_surge: at("/strategy/rollingUpdate/maxSurge")
                    .map_or(IntOrPercent::Percent(25), |v| IntOrPercent::parse(Some(v))),
                max_unavailable: at("/strategy/rollingUpdate/maxUnavailable")
                    .map_or(IntOrPercent::Percent(25), |v| IntOrPercent::parse(Some(v))),
            },
        };
        DeploySpec {
            name: d
                .pointer("/metadata/name")
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_owned(),
            replicas: int32(at("/replicas")).unwrap_or(1),
            strategy,
            min_ready_seconds: exact_i32(at("/minReadySeconds")).unwrap_or(0),
            revision_history_limit: exact_i32(at("/revisionHistoryLimit")),
            progress_deadline_seconds: exact_i32(at("/progressDeadlineSeconds")),
            paused: at("/paused").and_then(Value::as_bool).unwrap_or(false),
            generation: int(d.pointer("/metadata/generation")).unwrap_or(0),
        }
    }

    /// Upstream's `HasProgressDeadline`.
    pub fn progress_deadline(&self) -> Option<i32> {
        self.progress_deadline_seconds.filter(|s| *s != i32::MAX)
    }

    /// Upstream's `MaxSurge`: 0 unless rolling.
    pub fn max_surge(&self) -> i32 {
        match &self.strategy {
            Strategy::Recreate => 0,
            Strategy::RollingUpdate {
                max_surge,
                max_unavailable,
            } => resolve_fenceposts(*max_surge, *max_unavailable, self.replicas).0,
        }
    }

    /// Upstream's `MaxUnavailable`: 0 unless rolling with replicas, at
    /// most the replicas.
    pub fn max_unavailable(&self) -> i32 {
        match &self.strategy {
            Strategy::RollingUpdate {
                max_surge,
                max_unavailable,
            } if self.replicas != 0 => {
                resolve_fenceposts(*max_surge, *max_unavailable, self.replicas)
                    .1
                    .min(self.replicas)
            }
            _ => 0,
        }
    }

    /// Whether the strategy is RollingUpdate.
    pub fn is_rolling(&self) -> bool {
        matches!(self.strategy, Strategy::RollingUpdate { .. })
    }
}

/// Upstream's `ResolveFenceposts`: surge rounds up, unavailability down,
/// and both zero means one unavailable.
pub fn resolve_fenceposts(
    max_surge: IntOrPercent,
    max_unavailable: IntOrPercent,
    desired: i32,
) -> (i32, i32) {
    let surge = max_surge.scaled(desired, true);
    let unavailable = max_unavailable.scaled(desired, false);
    if surge == 0 && unavailable == 0 {
        return (0, 1);
    }
    (surge, unavailable)
}

/// What the planner needs of a ReplicaSet.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct RsView {
    /// `metadata.name`.
    pub name: String,
    /// `metadata.creationTimestamp` (RFC 3339, compared as text).
    pub created: String,
    /// `spec.replicas`.
    pub replicas: i32,
    /// `status.replicas`.
    pub status_replicas: i32,
    /// `status.readyReplicas`.
    pub ready: i32,
    /// `status.availableReplicas`.
    pub available: i32,
    /// The desired-replicas annotation.
    pub desired_annotation: Option<i32>,
    /// The max-replicas annotation.
    pub max_annotation: Option<i32>,
    /// The revision annotation (0 when absent or not a number).
    pub revision: i64,
    /// `metadata.generation`.
    pub generation: i64,
    /// `status.observedGeneration`.
    pub observed_generation: i64,
    /// Whether it is being deleted.
    pub deleting: bool,
}

impl RsView {
    /// The view of a stored ReplicaSet.
    pub fn of(rs: &Value) -> RsView {
        let ann = |k: &str| {
            rs.pointer("/metadata/annotations")
                .and_then(|a| a.get(k))
                .and_then(Value::as_str)
        };
        RsView {
            name: rs
                .pointer("/metadata/name")
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_owned(),
            created: rs
                .pointer("/metadata/creationTimestamp")
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_owned(),
            replicas: int32(rs.pointer("/spec/replicas")).unwrap_or(1),
            status_replicas: int32(rs.pointer("/status/replicas")).unwrap_or(0),
            ready: int32(rs.pointer("/status/readyReplicas")).unwrap_or(0),
            available: int32(rs.pointer("/status/availableReplicas")).unwrap_or(0),
            desired_annotation: ann(DESIRED_REPLICAS).and_then(|s| s.parse().ok()),
            max_annotation: ann(MAX_REPLICAS).and_then(|s| s.parse().ok()),
            revision: ann(REVISION).and_then(|s| s.parse().ok()).unwrap_or(0),
            generation: int(rs.pointer("/metadata/generation")).unwrap_or(0),
            observed_generation: int(rs.pointer("/status/observedGeneration")).unwrap_or(0),
            deleting: rs.pointer("/metadata/deletionTimestamp").is_some(),
        }
    }
}

/// One upstream `scaleReplicaSet` call: set `name` to `replicas` (and the
/// replica annotations to the Deployment's).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Scale {
    /// The ReplicaSet.
    pub name: String,
    /// Its new `spec.replicas`.
    pub replicas: i32,
}

fn by_creation(a: &RsView, b: &RsView) -> std::cmp::Ordering {
    a.created.cmp(&b.created).then_with(|| a.name.cmp(&b.name))
}

/// The sum of `spec.replicas` (upstream `GetReplicaCountForReplicaSets`).
pub fn spec_replicas(rss: &[&RsView]) -> i32 {
    rss.iter().map(|r| r.replicas).sum()
}

/// The active ReplicaSets (`spec.replicas` > 0).
pub fn active<'a>(rss: impl IntoIterator<Item = &'a RsView>) -> Vec<&'a RsView> {
    rss.into_iter().filter(|r| r.replicas > 0).collect()
}

/// Upstream's `NewRSNewReplicas`: how big the new ReplicaSet may be now.
pub fn new_rs_new_replicas(d: &DeploySpec, all: &[&RsView], new_replicas: i32) -> i32 {
    if !d.is_rolling() {
        return d.replicas;
    }
    let current = spec_replicas(all);
    let max_total = d.replicas + d.max_surge();
    if current >= max_total {
        return new_replicas;
    }
    let up = (max_total - current).min(d.replicas - new_replicas);
    new_replicas + up
}

/// Upstream's `IsSaturated`: the new ReplicaSet alone is the whole
/// Deployment, all available.
pub fn is_saturated(d: &DeploySpec, rs: Option<&RsView>) -> bool {
    rs.is_some_and(|rs| {
        rs.desired_annotation == Some(d.replicas)
            && rs.replicas == d.replicas
            && rs.available == d.replicas
    })
}

/// Upstream's `reconcileNewReplicaSet`: the new ReplicaSet's next size,
/// if it changes.
pub fn reconcile_new(d: &DeploySpec, all: &[&RsView], new: &RsView) -> Option<Scale> {
    if new.replicas == d.replicas {
        return None;
    }
    let target = if new.replicas > d.replicas {
        d.replicas
    } else {
        new_rs_new_replicas(d, all, new.replicas)
    };
    (target != new.replicas).then(|| Scale {
        name: new.name.clone(),
        replicas: target,
    })
}

/// Upstream's `reconcileOldReplicaSets`: scale down unhealthy old Pods
/// first, then as many available ones as `maxUnavailable` allows.
/// `old` are the active old ReplicaSets; `new` the new one, if any.
pub fn reconcile_old(d: &DeploySpec, old: &[&RsView], new: Option<&RsView>) -> Vec<Scale> {
    let old_count = spec_replicas(old);
    if old_count == 0 {
        return Vec::new();
    }
    let new_replicas = new.map_or(0, |n| n.replicas);
    let all_count = old_count + new_replicas;
    let min_available = d.replicas - d.max_unavailable();
    let new_unavailable = new.map_or(0, |n| n.replicas - n.available);
    let max_scaled_down = all_count - min_available - new_unavailable;
    if max_scaled_down <= 0 {
        return Vec::new();
    }
    let mut olds: Vec<RsView> = old.iter().map(|r| (*r).clone()).collect();
    let mut scales = cleanup_unhealthy(&mut olds, max_scaled_down);
    let new_available = new.map_or(0, |n| n.available);
    for s in scale_down_old(d, &mut olds, new_available) {
        record(&mut scales, &s.name, s.replicas);
    }
    scales
}

/// Upstream's `cleanupUnhealthyReplicas`: scale the old ReplicaSets
/// (oldest first) down by their unavailable Pods, `max` in all. `olds`
/// are updated to their new sizes and left sorted oldest first.
pub fn cleanup_unhealthy(olds: &mut [RsView], max: i32) -> Vec<Scale> {
    olds.sort_by(by_creation);
    let mut scales = Vec::new();
    let mut cleaned = 0;
    for rs in olds.iter_mut() {
        if cleaned >= max {
            break;
        }
        if rs.replicas == 0 || rs.replicas == rs.available {
            continue;
        }
        let down = (max - cleaned).min(rs.replicas - rs.available);
        rs.replicas -= down;
        cleaned += down;
        record(&mut scales, &rs.name, rs.replicas);
    }
    scales
}

/// Upstream's `scaleDownOldReplicaSetsForRollingUpdate`: scale the old
/// ReplicaSets (oldest first) down by as many Pods as are available beyond
/// `replicas - maxUnavailable` (`new_available` counts the new
/// ReplicaSet's). `olds` are updated to their new sizes.
pub fn scale_down_old(d: &DeploySpec, olds: &mut [RsView], new_available: i32) -> Vec<Scale> {
    let min_available = d.replicas - d.max_unavailable();
    let available: i32 = olds.iter().map(|r| r.available).sum::<i32>() + new_available;
    if available <= min_available {
        return Vec::new();
    }
    olds.sort_by(by_creation);
    let total = available - min_available;
    let mut scales = Vec::new();
    let mut done = 0;
    for rs in olds.iter_mut() {
        if done >= total {
            break;
        }
        if rs.replicas == 0 {
            continue;
        }
        let down = rs.replicas.min(total - done);
        rs.replicas -= down;
        done += down;
        record(&mut scales, &rs.name, rs.replicas);
    }
    scales
}

fn record(scales: &mut Vec<Scale>, name: &str, replicas: i32) {
    match scales.iter_mut().find(|s| s.name == name) {
        Some(s) => s.replicas = replicas,
        None => scales.push(Scale {
            name: name.to_owned(),
            replicas,
        }),
    }
}

/// Upstream's `FindActiveOrLatest`: the one active ReplicaSet, or the
/// newest when none is active; `None` when several are active.
pub fn active_or_latest<'a>(new: Option<&'a RsView>, old: &[&'a RsView]) -> Option<&'a RsView> {
    let mut olds: Vec<&RsView> = old.to_vec();
    olds.sort_by(|a, b| by_creation(b, a));
    let all: Vec<&RsView> = active(olds.iter().copied().chain(new));
    match all.len() {
        0 => new.or_else(|| olds.first().copied()),
        1 => all.first().copied(),
        _ => None,
    }
}

/// Upstream's `scale` (a scaling event, or a paused Deployment): the
/// active ReplicaSets are resized in proportion to their share, the
/// remainder going to the largest (newest on ties when growing, oldest
/// when shrinking). `status_replicas` is the Deployment's
/// `status.replicas` (used when a ReplicaSet has no max-replicas
/// annotation).
pub fn scale(
    d: &DeploySpec,
    new: Option<&RsView>,
    old: &[&RsView],
    status_replicas: i32,
) -> Vec<Scale> {
    if let Some(rs) = active_or_latest(new, old) {
        if rs.replicas == d.replicas {
            return Vec::new();
        }
        return vec![Scale {
            name: rs.name.clone(),
            replicas: d.replicas,
        }];
    }
    if is_saturated(d, new) {
        return active(old.iter().copied())
            .into_iter()
            .map(|rs| Scale {
                name: rs.name.clone(),
                replicas: 0,
            })
            .collect();
    }
    if !d.is_rolling() {
        return Vec::new();
    }
    let mut all: Vec<&RsView> = active(old.iter().copied().chain(new));
    let current = spec_replicas(&all);
    let allowed = if d.replicas > 0 {
        d.replicas + d.max_surge()
    } else {
        0
    };
    let to_add = allowed - current;
    if to_add > 0 {
        // ReplicaSetsBySizeNewer
        all.sort_by(|a, b| b.replicas.cmp(&a.replicas).then_with(|| by_creation(b, a)));
    } else if to_add < 0 {
        // ReplicaSetsBySizeOlder
        all.sort_by(|a, b| b.replicas.cmp(&a.replicas).then_with(|| by_creation(a, b)));
    }
    let mut sizes: Vec<(String, i32)> = Vec::with_capacity(all.len());
    let mut added = 0;
    for rs in &all {
        let size = if to_add != 0 {
            let p = proportion(d, rs, to_add, added, status_replicas);
            added += p;
            rs.replicas + p
        } else {
            rs.replicas
        };
        sizes.push((rs.name.clone(), size));
    }
    if to_add != added
        && let Some(first) = sizes.first_mut()
    {
        first.1 = (first.1 + to_add - added).max(0);
    }
    sizes
        .into_iter()
        .map(|(name, replicas)| Scale { name, replicas })
        .collect()
}

/// Upstream's `GetProportion`.
fn proportion(d: &DeploySpec, rs: &RsView, to_add: i32, added: i32, status_replicas: i32) -> i32 {
    if rs.replicas == 0 || to_add == 0 || to_add == added {
        return 0;
    }
    let fraction = fraction(d, rs, status_replicas);
    let allowed = to_add - added;
    if to_add > 0 {
        fraction.min(allowed)
    } else {
        fraction.max(allowed)
    }
}

/// Upstream's `getReplicaSetFraction`.
fn fraction(d: &DeploySpec, rs: &RsView, status_replicas: i32) -> i32 {
    if d.replicas == 0 {
        return -rs.replicas;
    }
    let deployment_replicas = d.replicas + d.max_surge();
    let annotated = rs.max_annotation.unwrap_or(status_replicas);
    if annotated <= 0 {
        // Go divides by zero into +Inf; nothing sensible to add.
        return 0;
    }
    let size = f64::from(rs.replicas) * f64::from(deployment_replicas) / f64::from(annotated);
    // Go's math.Round: halves away from zero, as f64::round.
    #[allow(clippy::cast_possible_truncation)]
    let size = size.round() as i32;
    size - rs.replicas
}

/// Upstream's `isScalingEvent`: an active ReplicaSet's desired-replicas
/// annotation differs from the Deployment's replicas.
pub fn is_scaling_event(d: &DeploySpec, all: &[&RsView]) -> bool {
    active(all.iter().copied())
        .iter()
        .any(|rs| rs.desired_annotation.is_some_and(|want| want != d.replicas))
}

/// Upstream's `cleanupDeployment`: the old ReplicaSets beyond
/// `revisionHistoryLimit` (lowest revisions first) that are fully scaled
/// down, settled and not already being deleted.
pub fn history_to_delete(d: &DeploySpec, old: &[&RsView]) -> Vec<String> {
    let Some(limit) = d.revision_history_limit else {
        return Vec::new();
    };
    let mut alive: Vec<&RsView> = old.iter().copied().filter(|r| !r.deleting).collect();
    let diff = i64::try_from(alive.len()).unwrap_or(i64::MAX) - i64::from(limit);
    if diff <= 0 {
        return Vec::new();
    }
    alive.sort_by(|a, b| a.revision.cmp(&b.revision).then_with(|| by_creation(a, b)));
    alive
        .into_iter()
        .take(usize::try_from(diff).unwrap_or(0))
        .filter(|r| {
            r.status_replicas == 0 && r.replicas == 0 && r.generation <= r.observed_generation
        })
        .map(|r| r.name.clone())
        .collect()
}

/// The next revision: one more than the highest of `old`.
pub fn next_revision(old: &[&RsView]) -> i64 {
    old.iter()
        .map(|r| r.revision)
        .max()
        .unwrap_or(0)
        .saturating_add(1)
}

#[cfg(test)]
#[path = "plan_tests.rs"]
mod tests;
