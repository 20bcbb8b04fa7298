//! Opening the configured storage backend. The only module that names a
//! backend; everything else sees `Arc<dyn Store>`.
//!
//! - `metrics.rs`: [`MetricsStore`], the decorator that times store calls.
//! - `objects.rs`: the periodic count of stored objects per resource.

use std::sync::Arc;

use skein_storage::Store;
use skein_storage::embedded::{EmbeddedOptions, EmbeddedStore};
use skein_storage::etcd::{EtcdOptions, EtcdStore};

use crate::config::Config;
use crate::encryption::{EncryptingStore, Encryption};
use crate::{Error, Result};
use metrics::MetricsStore;

pub mod metrics;
pub mod objects;

/// Opens etcd when `--etcd-servers` is given, and otherwise the embedded
/// store at `<data-dir>/store.redb` (creating the data directory); either
/// is wrapped in the [`EncryptingStore`] when `--encryption-provider-config`
/// is given (checked before anything is opened), then in the
/// [`MetricsStore`] that times its calls into `metrics` (the server
/// instance's). Either backend expires Events `--event-ttl` after their
/// last write ([`event_expiry`]; etcd through leases, the
/// embedded store through its sweeper), and nothing else.
pub async fn open_store(
    config: &Config,
    metrics: Arc<crate::metrics::Metrics>,
) -> Result<Arc<dyn Store>> {
    let encryption = match &config.protect.encryption_provider_config {
        Some(path) => Some(Arc::new(Encryption::load(path).map_err(Error::Config)?)),
        None => None,
    };
    let wrap = |store: Arc<dyn Store>| {
        let store = match &encryption {
            Some(enc) => EncryptingStore::wrap(store, enc.clone()),
            None => store,
        };
        MetricsStore::wrap(store, metrics.clone())
    };
    if config.etcd_servers.is_empty() {
        let path = config.store_path();
        std::fs::create_dir_all(&config.data_dir)
            .map_err(|e| Error::io("create directory", &config.data_dir, e))?;
        tracing::info!(path = %path.display(), "opening the embedded store");
        let store = EmbeddedStore::open(
            &path,
            EmbeddedOptions {
                retain_history: config.retain_history(),
                page_cache_bytes: config.embedded_cache_bytes(),
                expiry: event_expiry(config),
                ..EmbeddedOptions::default()
            },
        )
        .await?;
        Ok(wrap(store))
    } else {
        tracing::info!(endpoints = ?config.etcd_servers, prefix = %config.etcd_prefix, "connecting to etcd");
        let store = EtcdStore::connect(EtcdOptions {
            endpoints: config.etcd_servers.clone(),
            prefix: config.etcd_prefix.clone(),
            retain_history: config.retain_history(),
            expiry: event_expiry(config),
            ..Default::default()
        })
        .await?;
        Ok(wrap(store))
    }
}

/// How Events expire (`--event-ttl`): the storage prefix of Events
/// (core/v1 and events.k8s.io/v1 share it) with the TTL truncated to
/// whole seconds, as kube-apiserver's event storage does; `None` when
/// that is zero (Events are kept until deleted).
pub fn event_expiry(config: &Config) -> Option<skein_storage::Expiry> {
    let ttl = std::time::Duration::from_secs(config.event_ttl.as_secs());
    (!ttl.is_zero()).then(|| skein_storage::Expiry {
        prefix: crate::registry::key::EVENTS.to_string(),
        ttl,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn event_expiry_is_whole_seconds_and_zero_is_off() {
        let mut config = Config::with_data_dir("/tmp/x");
        let expiry = event_expiry(&config).expect("default 1h");
        assert_eq!(expiry.ttl, Duration::from_secs(3600));
        assert_eq!(expiry.prefix, crate::registry::key::EVENTS);
        config.event_ttl = Duration::from_millis(3999);
        assert_eq!(
            event_expiry(&config).map(|e| e.ttl),
            Some(Duration::from_secs(3))
        );
        config.event_ttl = Duration::from_millis(999);
        assert_eq!(event_expiry(&config), None);
    }
}
