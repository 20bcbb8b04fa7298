//! Lists far larger than one gRPC response (gRPC's default receive limit is
//! 4 MiB): 60 values of 1 MB, on both backends, with and without a limit,
//! at a pinned revision and across a compaction. The etcd-only tests also
//! run the client with a 4 MiB receive limit, so every list and watch must
//! come in pieces, and compact between two pages of one read.
//!
//! Each test prints how long its full list took (`cargo test -- --nocapture`).

#![allow(clippy::unwrap_used)] // tests: clippy's allow-unwrap-in-tests does not reach tests/ (rust-clippy#13981)

mod support;

use std::sync::Arc;
use std::time::{Duration, Instant};

use futures::StreamExt;
use skein_storage::etcd::pager::RangeRead;
use skein_storage::etcd::{EtcdOptions, EtcdStore};
use skein_storage::{Error, EventKind, ListOptions, ListResult, Revision, Store, WatchMessage};

/// Values per test and their size: 60 MB in all.
const COUNT: usize = 60;
const VALUE_BYTES: usize = 1_000_000;
const MIB: usize = 1 << 20;

/// A 1 MB value unique to `i` (and `round`), so a value read from the wrong
/// key or revision is caught.
fn value(i: usize, round: u8) -> Vec<u8> {
    let mut v = vec![b'a' + (i % 26) as u8; VALUE_BYTES];
    let tag = format!("value {i} round {round};");
    v[..tag.len()].copy_from_slice(tag.as_bytes());
    v[VALUE_BYTES - 1] = round;
    v
}

fn key(i: usize) -> String {
    format!("/big/k{i:03}")
}

/// Writes `COUNT` values under `/big/` (8 writers at a time) and a few keys
/// right around the prefix that no list of `/big/` may return.
async fn fill(s: &Arc<dyn Store>) {
    s.create("/bia", b"before").await.unwrap();
    s.create("/big", b"the prefix without its slash")
        .await
        .unwrap();
    s.create("/big0", b"after").await.unwrap();
    let writes = futures::stream::iter(0..COUNT)
        .map(|i| {
            let s = s.clone();
            async move { s.create(&key(i), &value(i, 0)).await.unwrap() }
        })
        .buffer_unordered(8);
    assert_eq!(writes.collect::<Vec<_>>().await.len(), COUNT);
}

/// Asserts `page` holds exactly keys `range` with their round-`round`
/// values, in key order.
fn assert_items(page: &ListResult, range: std::ops::Range<usize>, round: u8) {
    let keys: Vec<&str> = page.items.iter().map(|kv| kv.key.as_str()).collect();
    let want: Vec<String> = range.clone().map(key).collect();
    assert_eq!(keys, want, "keys of the page");
    for (kv, i) in page.items.iter().zip(range) {
        assert!(
            kv.value[..] == value(i, round)[..],
            "value of {} (round {round})",
            kv.key
        );
    }
}

/// Reads `/big/` in pages of `limit` at one revision, as the registry
/// does with `continue`.
async fn pages(s: &Arc<dyn Store>, limit: usize, at: Revision) -> Vec<ListResult> {
    let mut out: Vec<ListResult> = Vec::new();
    let mut opts = ListOptions {
        limit,
        at_revision: at,
        start_after: None,
    };
    loop {
        let page = s.list("/big/", opts.clone()).await.unwrap();
        let more = page.more;
        opts.at_revision = page.revision;
        opts.start_after = page.items.last().map(|kv| kv.key.clone());
        out.push(page);
        if !more {
            return out;
        }
    }
}

/// The scenario both backends must pass. `backend` names it in the output.
async fn sixty_megabytes(s: Arc<dyn Store>, backend: &str) {
    fill(&s).await;
    let written = s.current_revision().await.unwrap();

    // Unlimited: every value, at the current revision.
    let started = Instant::now();
    let all = s.list("/big/", ListOptions::default()).await.unwrap();
    let took = started.elapsed();
    println!(
        "{backend}: list of {COUNT} values of {VALUE_BYTES} bytes ({} MB) took {took:?}",
        COUNT * VALUE_BYTES / 1_000_000
    );
    assert_items(&all, 0..COUNT, 0);
    assert!(!all.more);
    assert_eq!(all.revision, written);

    // Limited: the caller's limit is exact, `more` says whether keys remain.
    for (limit, more) in [(1, true), (25, true), (59, true), (60, false), (61, false)] {
        let page = s
            .list(
                "/big/",
                ListOptions {
                    limit,
                    ..Default::default()
                },
            )
            .await
            .unwrap();
        assert_items(&page, 0..limit.min(COUNT), 0);
        assert_eq!(page.more, more, "more with limit {limit}");
        assert_eq!(page.revision, written);
    }
    let paged = pages(&s, 25, 0).await;
    assert_eq!(paged.len(), 3);
    assert_items(&paged[0], 0..25, 0);
    assert_items(&paged[1], 25..50, 0);
    assert_items(&paged[2], 50..60, 0);

    // Change a third of the keys: rewrite 10, delete 10, add 10.
    for kv in &all.items[..10] {
        let i: usize = kv.key[6..].parse().unwrap();
        s.update(&kv.key, &value(i, 1), kv.mod_revision)
            .await
            .unwrap();
    }
    for i in 10..20 {
        s.delete(&key(i), None).await.unwrap();
    }
    for i in COUNT..COUNT + 10 {
        s.create(&key(i), &value(i, 0)).await.unwrap();
    }

    // Pinned: the old revision still reads the old snapshot, in full and in
    // pages; the latest read sees the changes.
    let then = s
        .list(
            "/big/",
            ListOptions {
                at_revision: written,
                ..Default::default()
            },
        )
        .await
        .unwrap();
    assert_eq!(then, all, "a read at a past revision is that snapshot");
    let paged_then = pages(&s, 7, written).await;
    let joined: Vec<_> = paged_then.iter().flat_map(|p| p.items.clone()).collect();
    assert_eq!(joined, all.items);
    assert!(paged_then.iter().all(|p| p.revision == written));
    let now = s.list("/big/", ListOptions::default()).await.unwrap();
    assert_eq!(now.items.len(), COUNT);
    assert!(now.items[..10].iter().all(|kv| kv.version == 2));
    assert_eq!(now.items[10].key, key(20));
    assert_eq!(now.items.last().unwrap().key, key(COUNT + 9));

    // Across a compaction: the old revision is gone, the latest reads on.
    let head = s.current_revision().await.unwrap();
    s.compact(head).await.unwrap();
    for limit in [0, 25] {
        let err = s
            .list(
                "/big/",
                ListOptions {
                    at_revision: written,
                    limit,
                    ..Default::default()
                },
            )
            .await
            .unwrap_err();
        assert_eq!(
            err,
            Error::Compacted {
                requested: written,
                compacted: head
            },
            "limit {limit}"
        );
    }
    let after = s.list("/big/", ListOptions::default()).await.unwrap();
    assert_eq!(after, now);
    assert_eq!(after.revision, head);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn embedded_lists_sixty_megabytes() {
    let (store, _guard) = support::embedded().await;
    sixty_megabytes(store, "embedded").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn etcd_lists_sixty_megabytes() {
    let (store, _guard) = support::etcd().await;
    sixty_megabytes(store, "etcd").await;
}

/// An etcd store whose client accepts responses of at most 4 MiB (gRPC's
/// default): every large read must come in pieces.
async fn etcd_with_small_responses() -> (Arc<EtcdStore>, support::Guard) {
    let etcd = tokio::task::spawn_blocking(skein_tests::etcd::Etcd::start)
        .await
        .unwrap();
    let store = EtcdStore::connect(EtcdOptions {
        max_response_bytes: 4 * MIB,
        ..support::etcd_options(&etcd, "/skein-test")
    })
    .await
    .unwrap();
    (store, support::Guard::Etcd(etcd))
}

/// With a 4 MiB receive limit, 60 MB still lists in full and in pages, even
/// when small values come first (the pager sizes the next page for small
/// values, gets a response over the limit, and halves the page), and a
/// watch replaying all of it arrives (etcd fragments the catch-up batch).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn etcd_reads_in_pieces_under_a_small_receive_limit() {
    let (etcd, _guard) = etcd_with_small_responses().await;
    let s: Arc<dyn Store> = etcd.clone();
    let base = s.current_revision().await.unwrap();
    // Small values first, sorting before the big ones.
    for i in 0..20 {
        s.create(&format!("/big/a{i:02}"), b"small").await.unwrap();
    }
    fill(&s).await;
    let written = s.current_revision().await.unwrap();

    let started = Instant::now();
    let all = s.list("/big/", ListOptions::default()).await.unwrap();
    println!(
        "etcd (4 MiB responses): list of 20 small and {COUNT} 1 MB values took {:?}",
        started.elapsed()
    );
    assert_eq!(all.items.len(), 20 + COUNT);
    assert!(!all.more);
    assert_eq!(all.revision, written);
    let big = ListResult {
        items: all.items[20..].to_vec(),
        ..all.clone()
    };
    assert_items(&big, 0..COUNT, 0);

    let limited = s
        .list(
            "/big/",
            ListOptions {
                limit: 50,
                ..Default::default()
            },
        )
        .await
        .unwrap();
    assert_eq!(limited.items, all.items[..50]);
    assert!(limited.more);
    let rest = s
        .list(
            "/big/",
            ListOptions {
                at_revision: limited.revision,
                start_after: limited.items.last().map(|kv| kv.key.clone()),
                ..Default::default()
            },
        )
        .await
        .unwrap();
    assert_eq!(rest.items, all.items[50..]);
    assert!(!rest.more);

    // A watch from before every write replays all of it.
    let mut w = s.watch("/big/", base).await.unwrap();
    let mut events = Vec::new();
    let deadline = tokio::time::Instant::now() + Duration::from_secs(30);
    while events.len() < 20 + COUNT {
        match tokio::time::timeout_at(deadline, w.next()).await {
            Ok(Some(Ok(WatchMessage::Event(e)))) => events.push(e),
            Ok(Some(Ok(WatchMessage::Progress(_)))) => {}
            other => panic!("watch after {} events: {other:?}", events.len()),
        }
    }
    assert!(events.iter().all(|e| e.kind == EventKind::Put));
    assert!(events.windows(2).all(|p| p[0].revision() < p[1].revision()));
    let mut replayed: Vec<_> = events.into_iter().map(|e| e.kv).collect();
    replayed.sort_by(|a, b| a.key.cmp(&b.key));
    assert_eq!(replayed, all.items, "the watch replays every value");
}

/// One read compacted between its pages fails with `Compacted` naming the
/// revision its first page fixed, whether the caller pinned it or not.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn etcd_compaction_between_pages_of_one_read() {
    let (etcd, _guard) = etcd_with_small_responses().await;
    let s: Arc<dyn Store> = etcd.clone();
    for i in 0..4 {
        s.create(&key(i), &value(i, 0)).await.unwrap();
    }
    for pin in [false, true] {
        let current = s.current_revision().await.unwrap();
        let opts = ListOptions {
            at_revision: if pin { current } else { 0 },
            ..Default::default()
        };
        let mut read = RangeRead::new(&etcd, "/big/", &opts);
        assert!(read.next_page(&etcd).await.unwrap(), "more pages follow");
        let pinned = read.revision();
        assert_eq!(pinned, current, "the first page fixes the revision");
        s.create(&format!("/other/{pin}"), b"x").await.unwrap();
        let head = s.current_revision().await.unwrap();
        s.compact(head).await.unwrap();
        assert_eq!(
            read.next_page(&etcd).await.unwrap_err(),
            Error::Compacted {
                requested: pinned,
                compacted: head
            },
            "pinned by the caller: {pin}"
        );
    }
    // A fresh read at the latest revision is unaffected.
    let all = s.list("/big/", ListOptions::default()).await.unwrap();
    assert_items(&all, 0..4, 0);

    // Without compaction, the same stepwise read yields the full list.
    let mut read = RangeRead::new(&etcd, "/big/", &ListOptions::default());
    let mut steps = 0;
    while read.next_page(&etcd).await.unwrap() {
        steps += 1;
    }
    assert!(
        steps >= 2,
        "1 MB values under a 4 MiB limit take several pages"
    );
    assert_eq!(read.finish(), all);
}
