//! The `Federation` singleton's status: how many member clusters are joined
//! and Ready, how many federated objects are placed, synced, Ready or
//! failing (`kubectl get federations`, also on an aggregated-mode host).
//!
//! [`summarize`] and [`Tally::of`] are pure; [`spawn`] runs the thin worker
//! around them: it keeps each Placement's and ClusterPlacement's tally
//! from their informers' notices (a fleet has one per federated object,
//! held encoded by the informers: they are not all decoded again for each
//! count), and when something changed, at most every [`PERIOD`], writes
//! the status through the registry if it differs.

use skein_apiserver::status::ErrorKind;
use std::sync::Arc;
use std::time::Duration;

use serde_json::{Value, json};

use std::collections::HashMap;

use skein_apiserver::controllers::informer::{Informer, Notice, ObjectKey, Subscription};
use skein_apiserver::registry::{Registry, object};

/// How often the worker looks for changes.
pub const PERIOD: Duration = Duration::from_secs(2);

use skein_apiserver::controllers::crd::{FEDERATION_GROUP as GROUP, FEDERATION_VERSION as VERSION};

/// What one Placement (or ClusterPlacement) adds to the counts.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Tally {
    /// Placed somewhere and synced on every cluster it is placed on.
    pub synced: bool,
    /// Placed somewhere and Ready on every cluster it is placed on.
    pub ready: bool,
    /// Some cluster's copy is `Failed`, `Conflict` or `Drifted`.
    pub failed: bool,
}

impl Tally {
    /// The tally of `placement` (from its `status.summary` and its
    /// clusters' states).
    pub fn of(placement: &Value) -> Tally {
        let count = |key: &str| {
            placement
                .pointer(&format!("/status/summary/{key}"))
                .and_then(Value::as_u64)
                .unwrap_or(0)
        };
        let on = count("clusters");
        let failed = placement
            .pointer("/status/clusters")
            .and_then(Value::as_array)
            .is_some_and(|cs| {
                cs.iter().any(|c| {
                    matches!(
                        c.get("state").and_then(Value::as_str),
                        Some("Failed" | "Conflict" | "Drifted")
                    )
                })
            });
        Tally {
            synced: on > 0 && count("synced") >= on,
            ready: on > 0 && count("ready") >= on,
            failed,
        }
    }
}

/// The counts of `status` (without `observedGeneration`) for these
/// Clusters and the tallies of the placements (Placements and
/// ClusterPlacements together).
pub fn summarize<'a>(
    clusters: &[Arc<Value>],
    tallies: impl IntoIterator<Item = &'a Tally>,
) -> Value {
    let ready_clusters = clusters
        .iter()
        .filter(|c| object::condition_true(c, "Ready"))
        .count();
    let (mut total, mut synced, mut ready, mut failed) = (0, 0, 0, 0);
    for t in tallies {
        total += 1;
        synced += usize::from(t.synced);
        ready += usize::from(t.ready);
        failed += usize::from(t.failed);
    }
    json!({
        "clusters": {"total": clusters.len(), "ready": ready_clusters},
        "placements": {"total": total, "synced": synced, "ready": ready, "failed": failed},
    })
}

/// The tallies of the placements by kind and key, kept from their
/// informers' notices by one task per informer, and whether they changed
/// since the last count.
#[derive(Default)]
struct Tallies {
    by_key: std::sync::Mutex<HashMap<(usize, ObjectKey), Tally>>,
    changed: std::sync::atomic::AtomicBool,
}

impl Tallies {
    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<(usize, ObjectKey), Tally>> {
        self.by_key
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    fn relist(&self, kind: usize, informer: &Informer) {
        let fresh: Vec<_> = informer
            .list(|_| true)
            .iter()
            .map(|p| ((kind, ObjectKey::of(p)), Tally::of(p)))
            .collect();
        let mut m = self.lock();
        m.retain(|(k, _), _| *k != kind);
        m.extend(fresh);
        self.changed
            .store(true, std::sync::atomic::Ordering::Release);
    }

    /// Follows `informer`'s notices (subscribed before its first list, so
    /// nothing is missed between) until it is gone.
    async fn follow(self: Arc<Self>, kind: usize, informer: Informer) {
        let mut notices: Subscription = informer.subscription();
        informer.synced().await;
        self.relist(kind, &informer);
        while let Some(n) = notices.next().await {
            match n {
                Notice::Applied(p) => {
                    let t = Tally::of(&p);
                    if self.lock().insert((kind, ObjectKey::of(&p)), t) != Some(t) {
                        self.changed
                            .store(true, std::sync::atomic::Ordering::Release);
                    }
                }
                Notice::Deleted(p) => {
                    self.lock().remove(&(kind, ObjectKey::of(&p)));
                    self.changed
                        .store(true, std::sync::atomic::Ordering::Release);
                }
                Notice::Resync => self.relist(kind, &informer),
            }
        }
    }
}

/// Starts the worker (control-plane role, on the leader); it runs until
/// the runtime shuts down.
pub fn spawn(registry: &Registry) {
    let registry = registry.clone();
    tokio::spawn(async move {
        let informers = ["clusters", "placements", "clusterplacements"]
            .map(|plural| registry.resources().find(GROUP, VERSION, plural));
        let [Some(c), Some(p), Some(cp)] = informers else {
            tracing::warn!("federation summary: the federation.skein.io types are not served");
            return;
        };
        let Some(federations) = registry.resources().find(GROUP, VERSION, "federations") else {
            return;
        };
        let clusters = Informer::start(&registry, c);
        let placements = Informer::start(&registry, p);
        let cluster_placements = Informer::start(&registry, cp);
        for i in [&clusters, &placements, &cluster_placements] {
            i.synced().await;
        }
        let tallies = Arc::new(Tallies::default());
        for (kind, informer) in [placements, cluster_placements].into_iter().enumerate() {
            tokio::spawn(tallies.clone().follow(kind, informer));
        }
        let mut seen = None;
        loop {
            let generation = clusters.generation();
            let changed = tallies
                .changed
                .swap(false, std::sync::atomic::Ordering::AcqRel);
            if changed || seen != Some(generation) {
                let counts = {
                    let by_key = tallies.lock();
                    summarize(&clusters.list(|_| true), by_key.values())
                };
                match write(&registry, &federations, counts).await {
                    Ok(()) => seen = Some(generation),
                    Err(e) => {
                        tallies
                            .changed
                            .store(true, std::sync::atomic::Ordering::Release);
                        tracing::debug!(error = %e, "federation summary not written");
                    }
                }
            }
            tokio::time::sleep(PERIOD).await;
        }
    });
}

/// Writes `counts` into the Federation's status when they differ from what
/// it holds (a missing Federation is left alone).
async fn write(
    registry: &Registry,
    federations: &skein_apiserver::registry::ResourceInfo,
    counts: Value,
) -> Result<(), skein_apiserver::status::ApiError> {
    let current = match registry.get(federations, "", "default").await {
        Ok(f) => f,
        Err(e) if e.kind() == ErrorKind::NotFound => return Ok(()),
        Err(e) => return Err(e),
    };
    let unchanged = ["clusters", "placements"]
        .iter()
        .all(|k| current.pointer(&format!("/status/{k}")) == counts.get(*k));
    if unchanged {
        return Ok(());
    }
    let generation = current
        .pointer("/metadata/generation")
        .cloned()
        .unwrap_or(json!(1));
    let mut status = current
        .get("status")
        .and_then(Value::as_object)
        .cloned()
        .unwrap_or_default();
    if let Some(c) = counts.as_object() {
        status.extend(c.clone());
    }
    status.insert("observedGeneration".into(), generation);
    super::sync::writes::set_status(registry, federations, "", "default", &Value::Object(status))
        .await
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cluster(ready: bool) -> Arc<Value> {
        Arc::new(json!({"status": {"conditions": [
            {"type": "Ready", "status": if ready { "True" } else { "False" }}
        ]}}))
    }

    fn placement(clusters: u64, synced: u64, ready: u64, states: &[&str]) -> Tally {
        let cs: Vec<Value> = states.iter().map(|s| json!({"state": s})).collect();
        Tally::of(&json!({"status": {
            "summary": {"clusters": clusters, "synced": synced, "ready": ready},
            "clusters": cs,
        }}))
    }

    #[test]
    fn counts_clusters_and_placements() {
        let clusters = [cluster(true), cluster(false), cluster(true)];
        let placements = [
            placement(2, 2, 2, &["Ready", "Ready"]),
            placement(2, 2, 1, &["Ready", "Applied"]),
            placement(2, 1, 0, &["Applied", "Failed"]),
            placement(1, 0, 0, &["Conflict"]),
            // Placed nowhere: neither synced nor ready.
            placement(0, 0, 0, &[]),
        ];
        assert_eq!(
            summarize(&clusters, &placements),
            json!({
                "clusters": {"total": 3, "ready": 2},
                "placements": {"total": 5, "synced": 2, "ready": 1, "failed": 2},
            })
        );
    }

    #[test]
    fn an_empty_federation_counts_zero() {
        assert_eq!(
            summarize(&[], &[]),
            json!({
                "clusters": {"total": 0, "ready": 0},
                "placements": {"total": 0, "synced": 0, "ready": 0, "failed": 0},
            })
        );
    }
}
