//! The ControllerRevisions of a simulated StatefulSet or DaemonSet: the
//! pure naming, hashing and numbering live in
//! [`skein_workloads::controller_history`] (re-exported here); this module
//! finds, creates, renumbers and prunes them through the registry.

use serde_json::{Value, json};

pub use skein_workloads::controller_history::*;

use super::super::Sim;
use super::super::owner_loop;
use skein_apiserver::registry::object;
use skein_apiserver::status::ApiError;
use skein_workloads::template;

/// How many hash collisions one sync resolves before giving up (and
/// retrying later with backoff).
const MAX_COLLISIONS: i64 = 10;

/// The revisions of a workload after one sync.
#[derive(Debug, Clone)]
pub struct Revisions {
    /// The revision of the current template.
    pub update: Value,
    /// The revision named `status.currentRevision` (else `update`).
    pub current: Value,
    /// The collision count to record in status.
    pub collision_count: i64,
}

/// Finds or creates the revision of `owner`'s current template
/// (renumbering an older equal one as the newest), deletes revisions
/// beyond `spec.revisionHistoryLimit` that no Pod in `in_use` (revision
/// names) still needs, and returns the current and update revisions.
///
/// # Errors
///
/// Registry failures.
pub async fn sync(
    sim: &Sim,
    owner: &Value,
    api_version: &str,
    kind: &str,
    in_use: &[String],
) -> Result<Revisions, ApiError> {
    let res = Sim::resource("apps", "v1", "controllerrevisions")?;
    let ns = object::namespace(owner);
    let mut revisions = owner_loop::owned(sim, &res, ns, object::uid(owner)).await?;
    revisions.sort_by_key(number);
    let data = patch(owner);
    let mut collision_count = owner_loop::int(owner, "/status/collisionCount", 0);
    let first_count = collision_count;
    let max = revisions.last().map_or(0, number);
    let update = match revisions.iter().rposition(|r| r.get("data") == Some(&data)) {
        Some(i) if i + 1 == revisions.len() => revisions[i].clone(),
        Some(i) => {
            let name = object::name(&revisions[i]).to_owned();
            let renumbered = sim
                .registry
                .update_with(
                    &res,
                    ns,
                    &name,
                    skein_apiserver::registry::Target::Main,
                    &Sim::opts(manager_of(kind)),
                    |cur| {
                        let mut next = cur.clone();
                        next["revision"] = json!(max + 1);
                        Ok(next)
                    },
                )
                .await?;
            revisions[i] = renumbered.clone();
            renumbered
        }
        None => loop {
            let rev = new_revision(owner, api_version, kind, &data, max + 1, collision_count);
            let name = object::name(&rev).to_owned();
            match owner_loop::create(sim, &res, ns, rev, manager_of(kind)).await? {
                Some(created) => {
                    revisions.push(created.clone());
                    break created;
                }
                None => {
                    // A revision of that name exists: ours with equal data
                    // (a stale read) or a hash collision.
                    let existing = sim.registry.get(&res, ns, &name).await?;
                    if existing.get("data") == Some(&data)
                        && template::is_controlled_by(&existing, object::uid(owner))
                    {
                        break existing;
                    }
                    collision_count += 1;
                    if collision_count > first_count + MAX_COLLISIONS {
                        return Err(ApiError::internal(format!(
                            "no free ControllerRevision name for {kind} {ns}/{}",
                            object::name(owner)
                        )));
                    }
                }
            }
        },
    };
    let current_name = owner
        .pointer("/status/currentRevision")
        .and_then(Value::as_str)
        .unwrap_or_default();
    let current = revisions
        .iter()
        .find(|r| object::name(r) == current_name)
        .cloned()
        .unwrap_or_else(|| update.clone());
    // History limit.
    let limit = usize::try_from(owner_loop::int(owner, "/spec/revisionHistoryLimit", 10).max(0))
        .unwrap_or(10);
    let live: Vec<&Value> = revisions
        .iter()
        .filter(|r| {
            let n = object::name(r);
            n == object::name(&update)
                || n == object::name(&current)
                || in_use.iter().any(|u| u == n)
        })
        .collect();
    let mut history: Vec<&Value> = revisions.iter().filter(|r| !live.contains(r)).collect();
    history.sort_by_key(|r| number(r));
    let excess = history.len().saturating_sub(limit);
    for r in history.into_iter().take(excess) {
        owner_loop::delete(sim, &res, ns, object::name(r), None).await?;
    }
    Ok(Revisions {
        update,
        current,
        collision_count,
    })
}

fn manager_of(kind: &str) -> &'static str {
    if kind == "DaemonSet" {
        "daemonset-controller"
    } else {
        "statefulset-controller"
    }
}
