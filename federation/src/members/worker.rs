//! One Cluster's worker: probes its member on a fixed schedule and writes
//! what it found into the Cluster's status. Thin: the decisions are in
//! [`super::health`], [`super::inventory`], [`super::status`] and
//! [`super::events`].
//!
//! Contract:
//! - Until its first probe answers, a Cluster with no Ready condition is
//!   given one with status `Unknown` (reason `Pending`).
//! - Probes are scheduled by deadline (every `--cluster-probe-period`
//!   from the worker's start; a probe that overruns skips the deadlines it
//!   missed rather than bunching up); the first one runs at once. Each
//!   scheduled-versus-actual delay is logged at debug (target
//!   `skein::federation::probe`, field `lateness_ms`).
//! - A probe: `/readyz`; when it answers, the Node and Pod lists (their
//!   401/403 makes the probe `Unauthorized`, other list failures leave
//!   the last inventory in place); discovery and `/version` when the
//!   member becomes Ready and then every [`DISCOVERY_PERIOD`].
//! - Every probe writes the status (its `lastProbeTime` moves each time),
//!   through `Registry::update_with(.., Target::Status, ..)`, only into
//!   the Cluster with the uid the worker was started for. A Ready status
//!   change records an Event.
//! - A worker holds nothing another worker waits for: each has its own
//!   client and timeouts, so a slow member delays only itself.

use skein_apiserver::status::ErrorKind;
use std::sync::Arc;
use std::time::Duration;

use tokio::time::{Instant, MissedTickBehavior};

use super::credentials::CredentialError;
use super::events::{self, Involved};
use super::health::{Failure, Health, Outcome, Status, observe};
use super::inventory::{self, Inventory, Overrides, Served};
use super::member::Member;
use super::status::{Observation, next_status};
use crate::config::MemberConfig;
use skein_apiserver::registry::{Registry, ResourceInfo, Target, WriteOptions, object};
use skein_apiserver::status::ApiError;

/// How often discovery and `/version` are read again while a member stays
/// Ready.
pub const DISCOVERY_PERIOD: Duration = Duration::from_secs(300);

/// The field manager of the status writes.
pub const FIELD_MANAGER: &str = "skein-cluster-controller";

/// What a worker is started from. Two equal specs make the same worker;
/// the supervisor restarts a worker when its spec changes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Spec {
    /// The Cluster's name.
    pub name: String,
    /// Its uid.
    pub uid: String,
    /// Its `metadata.generation`.
    pub generation: i64,
    /// `spec.context`.
    pub context: Option<String>,
    /// `spec.region` / `spec.zones`.
    pub overrides: Overrides,
    /// The kubeconfig text from the Secret, or why there is none.
    pub kubeconfig: Result<String, CredentialError>,
}

/// The Secret a Cluster names: `(namespace, name, key)`.
pub fn secret_ref(cluster: &serde_json::Value) -> Option<(String, String, String)> {
    let r = cluster.pointer("/spec/kubeconfigSecretRef")?;
    let text = |k: &str| r.get(k).and_then(serde_json::Value::as_str);
    Some((
        text("namespace")?.to_owned(),
        text("name")?.to_owned(),
        text("key")
            .filter(|k| !k.is_empty())
            .unwrap_or("kubeconfig")
            .to_owned(),
    ))
}

impl Spec {
    /// The spec of `cluster` whose Secret is `secret` (`None`: not found).
    /// Pure.
    pub fn of(cluster: &serde_json::Value, secret: Option<&serde_json::Value>) -> Spec {
        let kubeconfig = match (secret_ref(cluster), secret) {
            (None, _) => Err(CredentialError::Secret(
                "spec.kubeconfigSecretRef names no Secret".into(),
            )),
            (Some((ns, name, _)), None) => Err(CredentialError::Secret(format!(
                "secret \"{ns}/{name}\" not found"
            ))),
            (Some((_, _, key)), Some(s)) => super::credentials::from_secret(s, &key),
        };
        Spec {
            name: object::name(cluster).to_owned(),
            uid: object::uid(cluster).to_owned(),
            generation: cluster
                .pointer("/metadata/generation")
                .and_then(serde_json::Value::as_i64)
                .unwrap_or_default(),
            context: cluster
                .pointer("/spec/context")
                .and_then(serde_json::Value::as_str)
                .filter(|c| !c.is_empty())
                .map(str::to_owned),
            overrides: Overrides::of(cluster),
            kubeconfig,
        }
    }
}

/// Runs the worker until its Cluster is gone (or the task is aborted).
/// `seed` is the health the stored status describes.
pub async fn run(
    registry: Registry,
    res: Arc<ResourceInfo>,
    spec: Spec,
    seed: Health,
    config: MemberConfig,
) {
    let member = match &spec.kubeconfig {
        Ok(text) => Member::connect(text, spec.context.as_deref(), config.probe_timeout).await,
        Err(e) => Err(e.clone()),
    };
    let mut health = seed;
    if health.status == Status::Unknown && health.last_transition.is_none() {
        // Ready is Unknown until the first probe answers.
        let now = object::now_rfc3339();
        health.last_transition = Some(now.clone());
        let obs = Observation {
            health: &health,
            now: &now,
            probed: false,
            generation: spec.generation,
            inventory: None,
            version: None,
            served: None,
        };
        if let Err(e) = write_status(&registry, &res, &spec, &obs).await {
            if e.kind() == ErrorKind::NotFound {
                return;
            }
            tracing::warn!(cluster = spec.name, error = %e, "writing Cluster status failed");
        }
    }
    let mut discovered: Option<Instant> = None;
    let mut ticks = tokio::time::interval(config.probe_period.max(Duration::from_millis(100)));
    ticks.set_missed_tick_behavior(MissedTickBehavior::Skip);
    loop {
        let scheduled = ticks.tick().await;
        let lateness = Instant::now().saturating_duration_since(scheduled);
        tracing::debug!(
            target: "skein::federation::probe",
            cluster = spec.name,
            lateness_ms = u64::try_from(lateness.as_millis()).unwrap_or(u64::MAX),
            "probing"
        );
        let probe = match &member {
            Err(e) => Probe::failed(Failure::InvalidCredentials, e.to_string()),
            Ok(m) => probe(m, &spec, &health, &mut discovered).await,
        };
        let now = object::now_rfc3339();
        let next = observe(&health, &probe.outcome, &now, config.failure_threshold);
        let obs = Observation {
            health: &next,
            now: &now,
            probed: true,
            generation: spec.generation,
            inventory: probe.inventory.as_ref(),
            version: probe.version.as_deref(),
            served: probe.served.as_deref(),
        };
        match write_status(&registry, &res, &spec, &obs).await {
            Ok(()) => {}
            Err(e) if e.kind() == ErrorKind::NotFound => return,
            Err(e) => {
                tracing::warn!(cluster = spec.name, error = %e, "writing Cluster status failed")
            }
        }
        let involved = Involved {
            name: &spec.name,
            uid: &spec.uid,
        };
        let unique = time::OffsetDateTime::now_utc().unix_timestamp_nanos();
        let unique = u128::try_from(unique).unwrap_or_default();
        if let Some(event) = events::transition_event(&involved, &health, &next, &now, unique) {
            events::record(&registry, event).await;
        }
        if next.status != health.status {
            tracing::info!(
                cluster = spec.name,
                ready = next.status.as_str(),
                reason = next.reason,
                message = next.message,
                "cluster readiness changed"
            );
        }
        health = next;
    }
}

/// What one probe found.
struct Probe {
    outcome: Outcome,
    inventory: Option<Inventory>,
    version: Option<String>,
    served: Option<Vec<Served>>,
}

impl Probe {
    fn failed(failure: Failure, message: String) -> Probe {
        Probe {
            outcome: Outcome::Failed { failure, message },
            inventory: None,
            version: None,
            served: None,
        }
    }
}

async fn probe(
    member: &Member,
    spec: &Spec,
    health: &Health,
    discovered: &mut Option<Instant>,
) -> Probe {
    let outcome = member.readyz().await;
    if outcome != Outcome::Ready {
        return Probe {
            outcome,
            inventory: None,
            version: None,
            served: None,
        };
    }
    let inventory = match member.nodes_and_pods().await {
        Ok((nodes, pods)) => Some(inventory::inventory(&spec.overrides, &nodes, &pods)),
        Err((Failure::Unauthorized, message)) => {
            return Probe::failed(Failure::Unauthorized, message);
        }
        Err((_, e)) => {
            tracing::debug!(cluster = spec.name, error = e, "member lists failed");
            None
        }
    };
    let due = health.status != Status::True
        || discovered
            .as_ref()
            .is_none_or(|at| at.elapsed() >= DISCOVERY_PERIOD);
    let (mut version, mut served) = (None, None);
    if due {
        let (v, d) = tokio::join!(member.version(), member.discovery());
        match (v, d) {
            (Ok(v), Ok(d)) => {
                version = Some(v);
                served = Some(inventory::served(d));
                *discovered = Some(Instant::now());
            }
            (Err((_, e)), _) | (_, Err((_, e))) => {
                tracing::debug!(cluster = spec.name, error = e, "member discovery failed");
            }
        }
    }
    Probe {
        outcome: Outcome::Ready,
        inventory,
        version,
        served,
    }
}

async fn write_status(
    registry: &Registry,
    res: &ResourceInfo,
    spec: &Spec,
    obs: &Observation<'_>,
) -> Result<(), ApiError> {
    let opts = WriteOptions {
        field_manager: FIELD_MANAGER.into(),
        ..WriteOptions::default()
    };
    registry
        .update_with(res, "", &spec.name, Target::Status, &opts, |cur| {
            if object::uid(cur) != spec.uid {
                // The Cluster was deleted and created again: not ours.
                return Err(ApiError::not_found(res.group, res.plural, &spec.name));
            }
            let mut next = cur.clone();
            if let Some(m) = next.as_object_mut() {
                m.insert("status".into(), next_status(cur.get("status"), obs));
            }
            Ok(next)
        })
        .await
        .map(|_| ())
}

#[cfg(test)]
mod tests {
    use super::*;
    use base64::Engine;
    use serde_json::json;

    fn cluster() -> serde_json::Value {
        json!({
            "metadata": {"name": "eu-1", "uid": "u1", "generation": 2},
            "spec": {"kubeconfigSecretRef": {"namespace": "skein-system", "name": "eu-1"},
                     "region": "eu"},
        })
    }

    #[test]
    fn specs_from_clusters_and_secrets() {
        let missing = Spec::of(&cluster(), None);
        assert_eq!(missing.name, "eu-1");
        assert_eq!(missing.generation, 2);
        assert_eq!(missing.overrides.region.as_deref(), Some("eu"));
        assert_eq!(
            missing.kubeconfig,
            Err(CredentialError::Secret(
                "secret \"skein-system/eu-1\" not found".into()
            ))
        );
        let secret = json!({"metadata": {"name": "eu-1"}, "data": {
            "kubeconfig": base64::engine::general_purpose::STANDARD.encode("text")}});
        let spec = Spec::of(&cluster(), Some(&secret));
        assert_eq!(spec.kubeconfig.as_deref(), Ok("text"));
        assert_ne!(spec, missing, "a Secret change restarts the worker");
        let other_key = json!({"metadata": {"name": "eu-1"}, "data": {}});
        assert!(matches!(
            Spec::of(&cluster(), Some(&other_key)).kubeconfig,
            Err(CredentialError::Secret(m)) if m.contains("has no key \"kubeconfig\"")
        ));
    }
}
