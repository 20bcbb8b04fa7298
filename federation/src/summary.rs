//! The `Federation` singleton's status: how many member clusters are joined
//! and Ready, how many federated objects are placed, synced, Ready or
//! failing (`kubectl get federations`, also on an aggregated-mode host).
//!
//! [`summarize`] is pure; [`spawn`] runs the thin worker around it: it
//! reads the shared informers of Clusters, Placements and
//! ClusterPlacements, and when one of them changed, at most every
//! [`PERIOD`], writes the status through the registry if it differs.

use skein_apiserver::status::ErrorKind;
use std::sync::Arc;
use std::time::Duration;

use serde_json::{Value, json};

use skein_apiserver::controllers::informer::Informer;
use skein_apiserver::registry::{Registry, object};

/// How often the worker looks for changes.
pub const PERIOD: Duration = Duration::from_secs(2);

use skein_apiserver::controllers::crd::{FEDERATION_GROUP as GROUP, FEDERATION_VERSION as VERSION};

/// The counts of `status` (without `observedGeneration`) for these
/// Clusters and placements (Placements and ClusterPlacements together).
pub fn summarize(clusters: &[Arc<Value>], placements: &[Arc<Value>]) -> Value {
    let ready_clusters = clusters
        .iter()
        .filter(|c| object::condition_true(c, "Ready"))
        .count();
    let count = |p: &Value, key: &str| {
        p.pointer(&format!("/status/summary/{key}"))
            .and_then(Value::as_u64)
            .unwrap_or(0)
    };
    let mut synced = 0;
    let mut ready = 0;
    let mut failed = 0;
    for p in placements {
        let on = count(p, "clusters");
        if on > 0 && count(p, "synced") >= on {
            synced += 1;
        }
        if on > 0 && count(p, "ready") >= on {
            ready += 1;
        }
        let failing = p
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
        if failing {
            failed += 1;
        }
    }
    json!({
        "clusters": {"total": clusters.len(), "ready": ready_clusters},
        "placements": {"total": placements.len(), "synced": synced, "ready": ready, "failed": failed},
    })
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
        let mut seen = None;
        loop {
            let generations = (
                clusters.generation(),
                placements.generation(),
                cluster_placements.generation(),
            );
            if seen != Some(generations) {
                let mut placed = placements.list(|_| true);
                placed.extend(cluster_placements.list(|_| true));
                let counts = summarize(&clusters.list(|_| true), &placed);
                match write(&registry, &federations, counts).await {
                    Ok(()) => seen = Some(generations),
                    Err(e) => tracing::debug!(error = %e, "federation summary not written"),
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

    fn placement(clusters: u64, synced: u64, ready: u64, states: &[&str]) -> Arc<Value> {
        let cs: Vec<Value> = states.iter().map(|s| json!({"state": s})).collect();
        Arc::new(json!({"status": {
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
