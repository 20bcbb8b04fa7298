//! Keys that expire ([`skein_storage::Expiry`]) on both backends: the
//! embedded store's sweeper and etcd's leases, against a real etcd.

#![allow(clippy::unwrap_used)] // tests: clippy's allow-unwrap-in-tests does not reach tests/ (rust-clippy#13981)

mod support;

use std::sync::Arc;
use std::time::Duration;

use futures::StreamExt;
use skein_storage::embedded::{EmbeddedOptions, EmbeddedStore};
use skein_storage::etcd::{EtcdOptions, EtcdStore};
use skein_storage::{Error, EventKind, Expiry, Store, WatchMessage, WatchStream};
use skein_tests::etcd::Etcd;
use tokio::time::Instant;

const TTL: Duration = Duration::from_secs(3);

fn expiry() -> Expiry {
    Expiry {
        prefix: "/exp/".into(),
        ttl: TTL,
    }
}

/// The next Delete event of the watch, with when it arrived; fails after
/// `wait`.
async fn next_delete(w: &mut WatchStream, wait: Duration) -> (String, Instant) {
    let deadline = Instant::now() + wait;
    loop {
        match tokio::time::timeout_at(deadline, w.next()).await {
            Ok(Some(Ok(WatchMessage::Event(e)))) if e.kind == EventKind::Delete => {
                return (e.kv.key, Instant::now());
            }
            Ok(Some(Ok(_))) => {}
            Ok(Some(Err(e))) => panic!("watch failed: {e}"),
            Ok(None) => panic!("watch ended"),
            Err(_) => panic!("no deletion within {wait:?}"),
        }
    }
}

/// Two expiring keys, one rewritten after a second, and one key outside
/// the prefix: each expiring key is deleted (a Delete event) TTL after its
/// last write, not before; the other key stays.
async fn expire(store: Arc<dyn Store>) {
    let rev = store.current_revision().await.unwrap();
    let mut watch = store.watch("/", rev).await.unwrap();
    let t0 = Instant::now();
    store.create("/exp/a", b"a").await.unwrap();
    let b = store.create("/exp/b", b"b").await.unwrap();
    store.create("/keep/c", b"c").await.unwrap();
    store.create("/expx/d", b"d").await.unwrap();
    tokio::time::sleep(Duration::from_millis(1500)).await;
    let t1 = Instant::now();
    store.update("/exp/b", b"b2", b.mod_revision).await.unwrap();

    let (key, at) = next_delete(&mut watch, TTL * 2).await;
    assert_eq!(key, "/exp/a");
    assert!(at - t0 >= TTL, "a deleted {:?} after its write", at - t0);
    assert!(
        store.get("/exp/b").await.is_ok(),
        "b was rewritten: it must outlive a"
    );
    let (key, at) = next_delete(&mut watch, TTL * 2).await;
    assert_eq!(key, "/exp/b");
    assert!(at - t1 >= TTL, "b deleted {:?} after its update", at - t1);
    assert!(matches!(
        store.get("/exp/a").await,
        Err(Error::NotFound { .. })
    ));
    tokio::time::sleep(Duration::from_secs(1)).await;
    assert_eq!(&store.get("/keep/c").await.unwrap().value[..], b"c");
    assert_eq!(&store.get("/expx/d").await.unwrap().value[..], b"d");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn embedded_keys_expire_after_their_last_write() {
    let dir = tempfile::tempdir().unwrap();
    let store = EmbeddedStore::open(
        &dir.path().join("store.redb"),
        EmbeddedOptions {
            expiry: Some(expiry()),
            ..support::embedded_options()
        },
    )
    .await
    .unwrap();
    expire(store.clone()).await;
    store.close().await;
}

/// A key present when the embedded store opens counts as written then.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn embedded_keys_present_at_open_expire_ttl_later() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("store.redb");
    let store = EmbeddedStore::open(&path, support::embedded_options())
        .await
        .unwrap();
    store.create("/exp/old", b"x").await.unwrap();
    store.close().await;
    drop(store);
    let store = EmbeddedStore::open(
        &path,
        EmbeddedOptions {
            expiry: Some(expiry()),
            ..support::embedded_options()
        },
    )
    .await
    .unwrap();
    let t0 = Instant::now();
    let rev = store.current_revision().await.unwrap();
    let mut watch = store.watch("/", rev).await.unwrap();
    let (key, at) = next_delete(&mut watch, TTL * 2).await;
    assert_eq!(key, "/exp/old");
    assert!(at - t0 >= TTL - Duration::from_millis(200));
    store.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn etcd_keys_expire_after_their_last_write() {
    let etcd = tokio::task::spawn_blocking(Etcd::start).await.unwrap();
    let store = EtcdStore::connect(EtcdOptions {
        expiry: Some(expiry()),
        ..support::etcd_options(&etcd, "/skein-test")
    })
    .await
    .unwrap();
    expire(store.clone()).await;
    store.close().await;
}
