//! One conformance suite, run against every backend: the embedded store and
//! a real etcd (started per test on loopback).
//!
//! Tests never assume that the first revision is 1: they read the current
//! revision first and reason from there.

#![allow(clippy::unwrap_used)] // tests: clippy's allow-unwrap-in-tests does not reach tests/ (rust-clippy#13981)

mod support;

use std::sync::Arc;
use std::time::Duration;

use futures::StreamExt;
use skein_storage::{
    Error, EventKind, ListOptions, MAX_VALUE_BYTES, Revision, Store, WatchEvent, WatchMessage,
    WatchStream,
};

/// Runs each suite function against both backends.
macro_rules! conformance {
    ($($name:ident),* $(,)?) => {
        mod embedded {
            $(
                #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
                async fn $name() {
                    let (store, _guard) = crate::support::embedded().await;
                    crate::suite::$name(store).await;
                }
            )*
        }
        mod etcd {
            $(
                #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
                async fn $name() {
                    let (store, _guard) = crate::support::etcd().await;
                    crate::suite::$name(store).await;
                }
            )*
        }
    };
}

conformance!(
    create_and_get,
    update_is_compare_and_swap,
    delete_with_preconditions,
    list_prefix_pages_pinned_to_one_revision,
    list_at_past_revision,
    future_revision_is_rejected,
    compaction,
    oversized_values_are_rejected_and_nothing_is_stored,
    watch_replays_then_follows_in_order_exactly_once,
    watch_is_limited_to_its_prefix,
    idle_watch_reports_progress,
    watch_from_compacted_revision_fails,
    check_history_agrees_with_watch,
    concurrent_writers_get_distinct_revisions,
    closed_store_is_unavailable,
);

/// Takes watch events (skipping progress) until `n` arrived; fails after 10s.
pub async fn take_events(w: &mut WatchStream, n: usize) -> Vec<WatchEvent> {
    let mut out = Vec::new();
    let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
    while out.len() < n {
        let next = tokio::time::timeout_at(deadline, w.next()).await;
        match next {
            Ok(Some(Ok(WatchMessage::Event(e)))) => out.push(e),
            Ok(Some(Ok(WatchMessage::Progress(_)))) => {}
            Ok(Some(Err(e))) => panic!("watch failed after {} events: {e}", out.len()),
            Ok(None) => panic!("watch ended after {} events", out.len()),
            Err(_) => panic!("timed out after {} of {n} events", out.len()),
        }
    }
    out
}

mod suite {
    use super::*;

    pub async fn create_and_get(s: Arc<dyn Store>) {
        let base = s.current_revision().await.unwrap();
        let kv = s.create("/a/one", b"1").await.unwrap();
        assert_eq!(kv.key, "/a/one");
        assert_eq!(&kv.value[..], b"1");
        assert_eq!(kv.create_revision, base + 1);
        assert_eq!(kv.mod_revision, base + 1);
        assert_eq!(kv.version, 1);
        assert_eq!(s.current_revision().await.unwrap(), base + 1);
        assert_eq!(s.get("/a/one").await.unwrap(), kv);
        assert_eq!(
            s.create("/a/one", b"again").await.unwrap_err(),
            Error::AlreadyExists {
                key: "/a/one".into()
            }
        );
        assert_eq!(
            s.get("/a/one").await.unwrap(),
            kv,
            "a failed create changes nothing"
        );
        assert_eq!(s.current_revision().await.unwrap(), base + 1);
        assert_eq!(
            s.get("/a/two").await.unwrap_err(),
            Error::NotFound {
                key: "/a/two".into()
            }
        );
        // Empty values and binary values round-trip.
        let empty = s.create("/a/empty", b"").await.unwrap();
        assert_eq!(s.get("/a/empty").await.unwrap().value.len(), 0);
        assert_eq!(empty.version, 1);
        let bin: Vec<u8> = (0..=255u8).collect();
        s.create("/a/bin", &bin).await.unwrap();
        assert_eq!(&s.get("/a/bin").await.unwrap().value[..], &bin[..]);
    }

    pub async fn update_is_compare_and_swap(s: Arc<dyn Store>) {
        let created = s.create("/u/k", b"v1").await.unwrap();
        let updated = s.update("/u/k", b"v2", created.mod_revision).await.unwrap();
        assert_eq!(updated.create_revision, created.create_revision);
        assert!(updated.mod_revision > created.mod_revision);
        assert_eq!(updated.version, 2);
        assert_eq!(&s.get("/u/k").await.unwrap().value[..], b"v2");
        // A stale revision conflicts and reports the current one.
        let err = s
            .update("/u/k", b"v3", created.mod_revision)
            .await
            .unwrap_err();
        assert_eq!(
            err,
            Error::Conflict {
                key: "/u/k".into(),
                expected: created.mod_revision,
                current: updated.mod_revision
            }
        );
        assert_eq!(
            &s.get("/u/k").await.unwrap().value[..],
            b"v2",
            "nothing was written"
        );
        assert_eq!(
            s.update("/u/missing", b"x", 1).await.unwrap_err(),
            Error::NotFound {
                key: "/u/missing".into()
            }
        );
    }

    pub async fn delete_with_preconditions(s: Arc<dyn Store>) {
        let created = s.create("/d/k", b"v").await.unwrap();
        let err = s
            .delete("/d/k", Some(created.mod_revision - 1))
            .await
            .unwrap_err();
        assert!(matches!(err, Error::Conflict { current, .. } if current == created.mod_revision));
        assert!(
            s.get("/d/k").await.is_ok(),
            "a failed delete changes nothing"
        );
        let (prev, rev) = s.delete("/d/k", Some(created.mod_revision)).await.unwrap();
        assert_eq!(prev, created);
        assert!(rev > created.mod_revision);
        assert_eq!(s.current_revision().await.unwrap(), rev);
        assert!(matches!(s.get("/d/k").await, Err(Error::NotFound { .. })));
        assert!(matches!(
            s.delete("/d/k", None).await,
            Err(Error::NotFound { .. })
        ));
        // Recreating starts a new generation.
        let again = s.create("/d/k", b"w").await.unwrap();
        assert_eq!(again.version, 1);
        assert!(again.create_revision > rev);
        let (prev, _) = s.delete("/d/k", None).await.unwrap();
        assert_eq!(prev, again);
    }

    pub async fn list_prefix_pages_pinned_to_one_revision(s: Arc<dyn Store>) {
        for i in 0..10 {
            s.create(&format!("/l/k{i:02}"), format!("{i}").as_bytes())
                .await
                .unwrap();
        }
        s.create("/l-other", b"x").await.unwrap();
        s.create("/m/k", b"x").await.unwrap();
        let all = s.list("/l/", ListOptions::default()).await.unwrap();
        assert_eq!(all.items.len(), 10);
        assert!(!all.more);
        let keys: Vec<_> = all.items.iter().map(|kv| kv.key.clone()).collect();
        let mut sorted = keys.clone();
        sorted.sort();
        assert_eq!(keys, sorted, "lists are in key order");

        // Page through with limit 3; a write between pages must not show.
        let mut seen = Vec::new();
        let mut opts = ListOptions {
            limit: 3,
            ..Default::default()
        };
        let mut pinned: Option<Revision> = None;
        loop {
            let page = s.list("/l/", opts.clone()).await.unwrap();
            if let Some(p) = pinned {
                assert_eq!(
                    page.revision, p,
                    "every page is read at the first page's revision"
                );
            }
            pinned = Some(page.revision);
            assert!(page.items.len() <= 3);
            seen.extend(page.items.iter().map(|kv| kv.key.clone()));
            if seen.len() == 3 {
                s.create("/l/k00a", b"late").await.unwrap();
                s.delete("/l/k09", None).await.unwrap();
            }
            if !page.more {
                break;
            }
            opts = ListOptions {
                limit: 3,
                at_revision: page.revision,
                start_after: page.items.last().map(|kv| kv.key.clone()),
            };
        }
        assert_eq!(seen, keys, "pages show the snapshot, not the later writes");
        let now = s.list("/l/", ListOptions::default()).await.unwrap();
        assert_eq!(now.items.len(), 10, "one added, one deleted");
        assert!(now.items.iter().any(|kv| kv.key == "/l/k00a"));
    }

    pub async fn list_at_past_revision(s: Arc<dyn Store>) {
        let a = s.create("/p/a", b"a1").await.unwrap();
        let b = s.create("/p/b", b"b1").await.unwrap();
        let at = b.mod_revision;
        s.update("/p/a", b"a2", a.mod_revision).await.unwrap();
        s.delete("/p/b", None).await.unwrap();
        s.create("/p/c", b"c1").await.unwrap();
        let then = s
            .list(
                "/p/",
                ListOptions {
                    at_revision: at,
                    ..Default::default()
                },
            )
            .await
            .unwrap();
        assert_eq!(then.revision, at);
        assert_eq!(then.items, vec![a.clone(), b.clone()]);
        let now = s.list("/p/", ListOptions::default()).await.unwrap();
        let keys: Vec<_> = now
            .items
            .iter()
            .map(|kv| (kv.key.as_str(), &kv.value[..]))
            .collect();
        assert_eq!(keys, vec![("/p/a", &b"a2"[..]), ("/p/c", &b"c1"[..])]);
        // A page of the past, after a key.
        let page = s
            .list(
                "/p/",
                ListOptions {
                    at_revision: at,
                    limit: 1,
                    start_after: Some("/p/a".into()),
                },
            )
            .await
            .unwrap();
        assert_eq!(page.items, vec![b]);
        assert!(!page.more);
        let before_all = s
            .list(
                "/p/",
                ListOptions {
                    at_revision: a.mod_revision - 1,
                    ..Default::default()
                },
            )
            .await
            .unwrap();
        assert!(before_all.items.is_empty());
    }

    pub async fn future_revision_is_rejected(s: Arc<dyn Store>) {
        s.create("/f/a", b"x").await.unwrap();
        let cur = s.current_revision().await.unwrap();
        let err = s
            .list(
                "/f/",
                ListOptions {
                    at_revision: cur + 100,
                    ..Default::default()
                },
            )
            .await
            .unwrap_err();
        assert_eq!(
            err,
            Error::FutureRevision {
                requested: cur + 100,
                current: cur
            }
        );
        assert_eq!(
            s.compact(cur + 1).await.unwrap_err(),
            Error::FutureRevision {
                requested: cur + 1,
                current: cur
            }
        );
    }

    pub async fn compaction(s: Arc<dyn Store>) {
        let k = s.create("/c/k", b"1").await.unwrap();
        let k2 = s.update("/c/k", b"2", k.mod_revision).await.unwrap();
        let k3 = s.update("/c/k", b"3", k2.mod_revision).await.unwrap();
        s.compact(k2.mod_revision).await.unwrap();
        let err = s
            .list(
                "/c/",
                ListOptions {
                    at_revision: k.mod_revision,
                    ..Default::default()
                },
            )
            .await
            .unwrap_err();
        assert_eq!(
            err,
            Error::Compacted {
                requested: k.mod_revision,
                compacted: k2.mod_revision
            }
        );
        // The compaction point itself stays readable.
        let at = s
            .list(
                "/c/",
                ListOptions {
                    at_revision: k2.mod_revision,
                    ..Default::default()
                },
            )
            .await
            .unwrap();
        assert_eq!(at.items, vec![k2.clone()]);
        assert_eq!(s.get("/c/k").await.unwrap(), k3);
        // Compacting again to an older or equal revision is Compacted, as in etcd.
        assert!(matches!(
            s.compact(k2.mod_revision).await,
            Err(Error::Compacted { .. })
        ));
        // A watch that can start at the compaction point works.
        let mut w = s.watch("/c/", k2.mod_revision - 1).await.unwrap();
        let events = take_events(&mut w, 2).await;
        assert_eq!(events[0].kv, k2);
        assert_eq!(events[1].kv, k3);
    }

    pub async fn oversized_values_are_rejected_and_nothing_is_stored(s: Arc<dyn Store>) {
        let before = s.current_revision().await.unwrap();
        let big = vec![b'x'; MAX_VALUE_BYTES + 1];
        assert!(matches!(
            s.create("/big/k", &big).await,
            Err(Error::TooLarge { .. })
        ));
        assert!(matches!(s.get("/big/k").await, Err(Error::NotFound { .. })));
        let small = s.create("/big/k", b"small").await.unwrap();
        assert!(matches!(
            s.update("/big/k", &big, small.mod_revision).await,
            Err(Error::TooLarge { .. })
        ));
        assert_eq!(s.get("/big/k").await.unwrap(), small);
        assert_eq!(
            s.current_revision().await.unwrap(),
            before + 1,
            "only the small create counted"
        );
        // One MiB is fine.
        let mib = vec![7u8; 1024 * 1024];
        s.update("/big/k", &mib, small.mod_revision).await.unwrap();
        assert_eq!(s.get("/big/k").await.unwrap().value.len(), mib.len());
    }

    pub async fn watch_replays_then_follows_in_order_exactly_once(s: Arc<dyn Store>) {
        let base = s.current_revision().await.unwrap();
        let a = s.create("/w/a", b"1").await.unwrap();
        let a2 = s.update("/w/a", b"2", a.mod_revision).await.unwrap();
        let (deleted, del_rev) = s.delete("/w/a", None).await.unwrap();
        let mut w = s.watch("/w/", base).await.unwrap();
        let history = take_events(&mut w, 3).await;
        assert_eq!(history[0].kind, EventKind::Put);
        assert_eq!(history[0].kv, a);
        assert_eq!(history[0].prev, None);
        assert_eq!(history[1].kv, a2);
        assert_eq!(history[1].prev.as_ref(), Some(&a));
        assert_eq!(history[2].kind, EventKind::Delete);
        assert_eq!(history[2].kv.key, "/w/a");
        assert_eq!(history[2].kv.mod_revision, del_rev);
        assert_eq!(history[2].prev.as_ref(), Some(&deleted));
        // Live events, written concurrently, arrive in revision order exactly once.
        let writer = {
            let s = s.clone();
            tokio::spawn(async move {
                for i in 0..200 {
                    s.create(&format!("/w/live{i:03}"), b"x").await.unwrap();
                }
            })
        };
        let live = take_events(&mut w, 200).await;
        writer.await.unwrap();
        let revs: Vec<_> = live.iter().map(|e| e.revision()).collect();
        assert!(
            revs.windows(2).all(|p| p[0] < p[1]),
            "strictly increasing revisions"
        );
        assert!(revs[0] > del_rev);
        let keys: std::collections::BTreeSet<_> = live.iter().map(|e| e.kv.key.clone()).collect();
        assert_eq!(keys.len(), 200, "each change exactly once");
        // A second watcher from the middle sees exactly the suffix.
        let mid = live[99].revision();
        let mut w2 = s.watch("/w/", mid).await.unwrap();
        let suffix = take_events(&mut w2, 100).await;
        assert_eq!(suffix, live[100..].to_vec());
    }

    pub async fn watch_is_limited_to_its_prefix(s: Arc<dyn Store>) {
        let base = s.current_revision().await.unwrap();
        let mut w = s.watch("/x/", base).await.unwrap();
        s.create("/y/1", b"no").await.unwrap();
        s.create("/x-1", b"no").await.unwrap();
        let want = s.create("/x/1", b"yes").await.unwrap();
        let got = take_events(&mut w, 1).await;
        assert_eq!(got[0].kv, want);
    }

    pub async fn idle_watch_reports_progress(s: Arc<dyn Store>) {
        s.create("/i/other", b"x").await.unwrap();
        let cur = s.current_revision().await.unwrap();
        let mut w = s.watch("/i/none/", cur).await.unwrap();
        s.create("/i/elsewhere", b"x").await.unwrap();
        let cur = cur + 1;
        let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
        loop {
            match tokio::time::timeout_at(deadline, w.next()).await {
                Ok(Some(Ok(WatchMessage::Progress(rev)))) if rev >= cur => break,
                Ok(Some(Ok(WatchMessage::Progress(_)))) => {}
                other => panic!("expected progress up to {cur}, got {other:?}"),
            }
        }
    }

    pub async fn watch_from_compacted_revision_fails(s: Arc<dyn Store>) {
        let base = s.current_revision().await.unwrap();
        let k = s.create("/wc/k", b"1").await.unwrap();
        let k2 = s.update("/wc/k", b"2", k.mod_revision).await.unwrap();
        s.compact(k2.mod_revision).await.unwrap();
        match s.watch("/wc/", base).await {
            Err(Error::Compacted { compacted, .. }) => assert_eq!(compacted, k2.mod_revision),
            Err(e) => panic!("expected Compacted, got {e}"),
            Ok(mut w) => match w.next().await {
                Some(Err(Error::Compacted { compacted, .. })) => {
                    assert_eq!(compacted, k2.mod_revision)
                }
                other => panic!("expected Compacted, got {other:?}"),
            },
        }
    }

    pub async fn check_history_agrees_with_watch(s: Arc<dyn Store>) {
        let base = s.current_revision().await.unwrap();
        let k = s.create("/ch/k", b"1").await.unwrap();
        let k2 = s.update("/ch/k", b"2", k.mod_revision).await.unwrap();
        let k3 = s.update("/ch/k", b"3", k2.mod_revision).await.unwrap();
        s.check_history(base).await.expect("nothing compacted yet");
        s.compact(k2.mod_revision).await.unwrap();
        // A watch after `base` needs k's change, which is gone; one after
        // k's change needs k2's and later, which are kept.
        for after in [base, k.mod_revision - 1] {
            match s.check_history(after).await {
                Err(Error::Compacted { compacted, .. }) => assert_eq!(compacted, k2.mod_revision),
                other => panic!("history after {after}: expected Compacted, got {other:?}"),
            }
        }
        s.check_history(k.mod_revision)
            .await
            .expect("k2's change is kept");
        let mut w = s.watch("/ch/", k.mod_revision).await.unwrap();
        let events = take_events(&mut w, 2).await;
        assert_eq!(events[1].kv.mod_revision, k3.mod_revision);
        match s.check_history(k3.mod_revision + 10).await {
            Err(Error::FutureRevision { .. }) => {}
            other => panic!("expected FutureRevision, got {other:?}"),
        }
    }

    pub async fn concurrent_writers_get_distinct_revisions(s: Arc<dyn Store>) {
        let base = s.current_revision().await.unwrap();
        let tasks: Vec<_> = (0..32)
            .map(|t| {
                let s = s.clone();
                tokio::spawn(async move {
                    let mut revs = Vec::new();
                    for i in 0..20 {
                        revs.push(
                            s.create(&format!("/cw/{t}/{i}"), b"v")
                                .await
                                .unwrap()
                                .mod_revision,
                        );
                    }
                    revs
                })
            })
            .collect();
        let mut all = Vec::new();
        for t in tasks {
            all.extend(t.await.unwrap());
        }
        all.sort();
        all.dedup();
        assert_eq!(all.len(), 640, "every write has its own revision");
        assert_eq!(all[0], base + 1);
        assert_eq!(*all.last().unwrap(), base + 640);
        let listed = s.list("/cw/", ListOptions::default()).await.unwrap();
        assert_eq!(listed.items.len(), 640);
    }

    pub async fn closed_store_is_unavailable(s: Arc<dyn Store>) {
        s.create("/z/k", b"v").await.unwrap();
        s.close().await;
        s.close().await; // idempotent
        // The embedded store refuses all calls; etcd's handle only stops its
        // background work, so for it closing is just idempotent.
        if let Err(e) = s.get("/z/k").await {
            assert!(matches!(e, Error::Unavailable(_)), "{e}");
            assert!(matches!(
                s.create("/z/j", b"v").await,
                Err(Error::Unavailable(_))
            ));
        }
    }
}

/// `request_progress` reaches an idle prefix's watch long before its
/// periodic progress message (the interval here is an hour): what a watch
/// cache waiting for a consistent read relies on.
mod requested_progress {
    use super::*;
    use skein_storage::embedded::{EmbeddedOptions, EmbeddedStore};
    use skein_storage::etcd::EtcdStore;

    const HOUR: Duration = Duration::from_secs(3600);

    async fn check(s: Arc<dyn Store>) {
        let cur = s.current_revision().await.unwrap();
        let mut w = s.watch("/rp/idle/", cur).await.unwrap();
        let busy = s.create("/rp/busy", b"x").await.unwrap();
        let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
        loop {
            s.request_progress();
            match tokio::time::timeout(Duration::from_millis(100), w.next()).await {
                Ok(Some(Ok(WatchMessage::Progress(rev)))) if rev >= busy.mod_revision => return,
                Ok(Some(Ok(WatchMessage::Progress(_)))) | Err(_) => {}
                other => panic!(
                    "expected progress up to {}, got {other:?}",
                    busy.mod_revision
                ),
            }
            assert!(tokio::time::Instant::now() < deadline, "no progress");
        }
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn embedded() {
        let dir = tempfile::tempdir().unwrap();
        let opts = EmbeddedOptions {
            progress_interval: HOUR,
            ..crate::support::embedded_options()
        };
        let store = EmbeddedStore::open(&dir.path().join("store.redb"), opts)
            .await
            .unwrap();
        check(store).await;
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn etcd() {
        let etcd = tokio::task::spawn_blocking(skein_tests::etcd::Etcd::start)
            .await
            .unwrap();
        let mut opts = crate::support::etcd_options(&etcd, "/skein-rp");
        opts.progress_interval = HOUR;
        let store = EtcdStore::connect(opts).await.unwrap();
        let version = store.server_version().to_string();
        assert!(!version.is_empty(), "etcd reported no version");
        let ordered = skein_storage::etcd::progress_requests_are_ordered(&version);
        // A server whose answers may overtake events (etcd 15220) is never
        // asked; one that orders them must answer at once.
        assert_eq!(store.request_progress(), ordered, "etcd {version}");
        if ordered {
            check(store).await;
        }
    }
}

#[test]
fn progress_requests_are_trusted_from_the_versions_kube_apiserver_trusts() {
    use skein_storage::etcd::progress_requests_are_ordered as ordered;
    for v in [
        "3.4.31", "3.4.40", "3.5.13", "3.5.21", "3.6.0", "v3.6.4", "4.0.0",
    ] {
        assert!(ordered(v), "{v}");
    }
    for v in [
        "3.4.23", "3.4.30", "3.5.0", "3.5.12", "3.3.27", "", "3.5", "x.y.z",
    ] {
        assert!(!ordered(v), "{v}");
    }
}
