//! A three-member etcd on loopback: kill one member while writing. No
//! acknowledged write is lost and the client keeps working.

#![allow(clippy::unwrap_used)] // tests: clippy's allow-unwrap-in-tests does not reach tests/ (rust-clippy#13981)

mod support;

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use skein_storage::etcd::EtcdStore;
use skein_storage::{ListOptions, Store};
use skein_tests::etcd::Etcd;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn client_survives_a_member_death_without_losing_acknowledged_writes() {
    let mut etcd = tokio::task::spawn_blocking(|| Etcd::cluster(3))
        .await
        .unwrap();
    let opts = support::etcd_options(&etcd, "/cluster");
    let store: Arc<dyn Store> = EtcdStore::connect(opts).await.unwrap();

    let stop = Arc::new(AtomicBool::new(false));
    let writers: Vec<_> = (0..8)
        .map(|w| {
            let store = store.clone();
            let stop = stop.clone();
            tokio::spawn(async move {
                let mut acked = Vec::new();
                let mut errors = Vec::new();
                let mut i = 0;
                while !stop.load(Ordering::Relaxed) {
                    let key = format!("/k/{w}/{i}");
                    match store.create(&key, b"v").await {
                        Ok(kv) => acked.push((key, kv.mod_revision, Instant::now())),
                        Err(e) => {
                            if errors.len() < 30 {
                                eprintln!("{:?} write error: {e}", Instant::now());
                            }
                            errors.push(Instant::now());
                            tokio::time::sleep(Duration::from_millis(20)).await;
                        }
                    }
                    i += 1;
                }
                (acked, errors)
            })
        })
        .collect();

    tokio::time::sleep(Duration::from_secs(2)).await;
    let killed_at = Instant::now();
    eprintln!("{killed_at:?} kill");
    let victim = etcd.members[0].name.clone();
    etcd.members[0].kill();
    tokio::time::sleep(Duration::from_secs(12)).await;
    stop.store(true, Ordering::Relaxed);

    let mut acked = Vec::new();
    let mut errors = Vec::new();
    for w in writers {
        let (a, e) = w.await.unwrap();
        acked.extend(a);
        errors.extend(e);
    }
    let before = acked.iter().filter(|(_, _, t)| *t < killed_at).count();
    // etcd itself fails requests that were in flight to a dead leader only
    // after its request timeout (7s by default), so allow 9s to settle.
    let settled = killed_at + Duration::from_secs(9);
    let after_kill = acked.iter().filter(|(_, _, t)| *t > settled).count();
    println!(
        "killed {victim}: {before} writes before, {} after ({after_kill} more than 9s after), {} errors",
        acked.len() - before,
        errors.len()
    );
    assert!(before > 50, "writes before the kill: {before}");
    // Only requests in flight on the dead member, or sent during the leader
    // election it may cause, fail (their outcome is unknown, so they are not
    // retried); after that the client works on the survivors.
    let late = errors.iter().filter(|t| **t > settled).count();
    assert_eq!(late, 0, "writes failed more than 9s after the kill");
    assert!(
        after_kill > 50,
        "the client must keep writing after a member died (got {after_kill})"
    );

    // Every acknowledged write is readable, through this client and through
    // a new one that only knows the survivors.
    let fresh: Arc<dyn Store> = EtcdStore::connect(support::etcd_options(&etcd, "/cluster"))
        .await
        .unwrap();
    for s in [&store, &fresh] {
        let listed = s.list("/k/", ListOptions::default()).await.unwrap();
        let present: std::collections::HashMap<_, _> = listed
            .items
            .iter()
            .map(|kv| (kv.key.clone(), kv.mod_revision))
            .collect();
        for (key, rev, _) in &acked {
            assert_eq!(present.get(key), Some(rev), "acknowledged {key} lost");
        }
    }
}
