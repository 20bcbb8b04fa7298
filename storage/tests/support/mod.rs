//! Backends for the storage test suites.
#![allow(dead_code)]

use std::sync::Arc;
use std::time::Duration;

use skein_storage::Store;
use skein_storage::embedded::{EmbeddedOptions, EmbeddedStore};
use skein_storage::etcd::{EtcdOptions, EtcdStore};
use skein_tests::etcd::Etcd;

/// Keeps a backend's resources alive for the test's duration.
pub enum Guard {
    Dir(tempfile::TempDir),
    Etcd(Etcd),
}

/// Progress interval for tests: short, so idle watches report quickly.
pub const PROGRESS: Duration = Duration::from_millis(200);

pub fn embedded_options() -> EmbeddedOptions {
    EmbeddedOptions {
        retain_history: None,
        progress_interval: PROGRESS,
        ..Default::default()
    }
}

pub async fn embedded() -> (Arc<dyn Store>, Guard) {
    let dir = tempfile::tempdir().expect("tempdir");
    let store = EmbeddedStore::open(&dir.path().join("store.redb"), embedded_options())
        .await
        .expect("open embedded store");
    (store, Guard::Dir(dir))
}

pub fn etcd_options(etcd: &Etcd, prefix: &str) -> EtcdOptions {
    EtcdOptions {
        endpoints: etcd.endpoints(),
        prefix: prefix.into(),
        progress_interval: PROGRESS,
        retain_history: None,
        ..Default::default()
    }
}

pub async fn etcd() -> (Arc<dyn Store>, Guard) {
    let etcd = tokio::task::spawn_blocking(Etcd::start)
        .await
        .expect("start etcd");
    let store = EtcdStore::connect(etcd_options(&etcd, "/skein-test"))
        .await
        .expect("connect to etcd");
    (store, Guard::Etcd(etcd))
}
