//! Model-based property test of the watch cache against the store itself:
//! one registry reads through the cache, another reads the store directly,
//! both over the same embedded store. Random writes (and compactions) are
//! interleaved with lists at random `resourceVersion`s (with and without a
//! label selector, `limit` and `continue`) and with watches from random
//! revisions; the cached answers must equal the store's.

use std::sync::Arc;
use std::time::Duration;

use futures::StreamExt;
use futures::stream::BoxStream;
use proptest::prelude::*;
use serde_json::{Value, json};
use skein_storage::Store;
use skein_storage::embedded::{EmbeddedOptions, EmbeddedStore};

use super::{CacheConfig, Cacher};
use crate::registry::list::{ListPage, ListQuery};
use crate::registry::resource::{self, ResourceInfo};
use crate::registry::watch::{WatchItem, WatchQuery};
use crate::registry::{Filter, Registry};
use crate::status::ApiError;

const NAMESPACES: [&str; 2] = ["a", "b"];

#[derive(Clone, Debug)]
enum Rv {
    Empty,
    Zero,
    /// This many revisions before the current one.
    NotOlderThan(i64),
    Exact(i64),
}

#[derive(Clone, Debug)]
enum Op {
    /// Create or update `ns/name` with label `app=x|y`.
    Put {
        ns: usize,
        name: u8,
        x: bool,
    },
    Delete {
        ns: usize,
        name: u8,
    },
    /// Compact to this many revisions before the current one.
    Compact(i64),
    List {
        ns: Option<usize>,
        rv: Rv,
        selector: bool,
        limit: usize,
    },
    /// Watch from this many revisions before the current one.
    /// (`back` < 0: `resourceVersion=""`, initial events first.)
    Watch {
        ns: Option<usize>,
        back: i64,
        selector: bool,
    },
}

fn op() -> impl Strategy<Value = Op> {
    let ns = prop::option::of(0..2usize);
    let rv = prop_oneof![
        Just(Rv::Empty),
        Just(Rv::Zero),
        (0..6i64).prop_map(Rv::NotOlderThan),
        (0..12i64).prop_map(Rv::Exact),
    ];
    prop_oneof![
        6 => (0..2usize, 0..5u8, any::<bool>()).prop_map(|(ns, name, x)| Op::Put { ns, name, x }),
        2 => (0..2usize, 0..5u8).prop_map(|(ns, name)| Op::Delete { ns, name }),
        1 => (2..10i64).prop_map(Op::Compact),
        3 => (ns.clone(), rv, any::<bool>(), 0..4usize)
            .prop_map(|(ns, rv, selector, limit)| Op::List { ns, rv, selector, limit }),
        2 => (ns, -3..20i64, any::<bool>())
            .prop_map(|(ns, back, selector)| Op::Watch { ns, back, selector }),
    ]
}

fn configmaps() -> Arc<ResourceInfo> {
    resource::builtin("", "v1", "configmaps").expect("configmaps are built in")
}

fn key(ns: &str, name: &str) -> String {
    format!("/registry/core/configmaps/{ns}/{name}")
}

fn object(ns: &str, name: &str, app: &str, n: usize) -> Vec<u8> {
    json!({
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": name, "namespace": ns, "labels": {"app": app}},
        "data": {"n": n.to_string()},
    })
    .to_string()
    .into_bytes()
}

fn filter(res: &ResourceInfo, selector: bool) -> Filter {
    Filter::parse(res, selector.then_some("app=x"), None).expect("valid selector")
}

/// A page, or the error's status code and message.
type Answer = Result<(Vec<Value>, i64, Option<String>), (u16, String)>;

fn answer(r: Result<ListPage, ApiError>) -> Answer {
    r.map(|p| (p.items, p.revision, p.continue_token))
        .map_err(|e| (e.code().as_u16(), e.message().to_string()))
}

/// Every page of a list, following continue tokens on `registry`.
async fn all_pages(
    registry: &Registry,
    res: &ResourceInfo,
    ns: Option<&str>,
    mut q: ListQuery,
) -> Vec<Answer> {
    let mut pages = Vec::new();
    loop {
        let page = answer(registry.list(res, ns, &q).await);
        let next = page.as_ref().ok().and_then(|p| p.2.clone());
        pages.push(page);
        match next {
            Some(token) if pages.len() < 20 => {
                q.continue_token = Some(token);
                q.resource_version = None;
                q.resource_version_match = None;
            }
            _ => return pages,
        }
    }
}

/// The events of a watch up to the end sentinels (`expect` of them), or
/// the error it started with.
async fn events(
    w: Result<BoxStream<'static, WatchItem>, ApiError>,
    expect: usize,
) -> Result<Vec<(String, Value)>, (u16, String)> {
    let mut stream = w.map_err(|e| (e.code().as_u16(), e.message().to_string()))?;
    let mut out = Vec::new();
    let mut seen = 0;
    while seen < expect {
        let item = tokio::time::timeout(Duration::from_secs(10), stream.next())
            .await
            .expect("the watch delivers the end sentinels")
            .expect("the watch does not end");
        let (kind, obj) = match item {
            WatchItem::Added(o) => ("ADDED", o),
            WatchItem::Modified(o) => ("MODIFIED", o),
            WatchItem::Deleted(o) => ("DELETED", o),
            WatchItem::Bookmark { .. } => continue,
            // The store compacted history the watch still had to replay.
            WatchItem::Error(e) => return Err((e.code().as_u16(), e.message().to_string())),
        };
        if obj["metadata"]["name"] == "zz-end" {
            seen += 1;
        }
        out.push((kind.to_string(), obj));
    }
    Ok(out)
}

async fn run(ops: Vec<Op>, capacity: usize) {
    let dir = tempfile::tempdir().expect("temp dir");
    let store: Arc<dyn Store> = EmbeddedStore::open(
        &dir.path().join("store.redb"),
        EmbeddedOptions {
            retain_history: None,
            ..Default::default()
        },
    )
    .await
    .expect("open store");
    let res = configmaps();
    let plain = Registry::new(store.clone());
    let cacher = Cacher::new(
        store.clone(),
        CacheConfig {
            capacity,
            ..CacheConfig::default()
        },
    );
    let cached = Registry::new(store.clone()).with_watch_cache(cacher.clone());
    let cache = cacher.cache("/registry/core/configmaps/");
    let mut watches = Vec::new();
    let mut n = 0;
    for op in ops {
        let current = store.current_revision().await.expect("revision");
        match op {
            Op::Put { ns, name, x } => {
                n += 1;
                let (ns, name) = (NAMESPACES[ns], format!("cm-{name}"));
                let value = object(ns, &name, if x { "x" } else { "y" }, n);
                let k = key(ns, &name);
                match store.get(&k).await {
                    Ok(kv) => store.update(&k, &value, kv.mod_revision).await.map(|_| ()),
                    Err(_) => store.create(&k, &value).await.map(|_| ()),
                }
                .expect("write");
            }
            Op::Delete { ns, name } => {
                let _ = store
                    .delete(&key(NAMESPACES[ns], &format!("cm-{name}")), None)
                    .await;
            }
            Op::Compact(back) => {
                let _ = store.compact((current - back).max(1)).await;
            }
            Op::List {
                ns,
                rv,
                selector,
                limit,
            } => {
                let ns = ns.map(|i| NAMESPACES[i]);
                let mut q = ListQuery {
                    filter: filter(&res, selector),
                    limit,
                    ..ListQuery::default()
                };
                match rv {
                    Rv::Empty => {}
                    Rv::Zero => q.resource_version = Some("0".into()),
                    Rv::NotOlderThan(back) => {
                        q.resource_version = Some((current - back).max(1).to_string());
                        q.resource_version_match = Some("NotOlderThan".into());
                    }
                    Rv::Exact(back) => {
                        q.resource_version = Some((current - back).max(1).to_string());
                        q.resource_version_match = Some("Exact".into());
                    }
                }
                let got = all_pages(&cached, &res, ns, q.clone()).await;
                let first_rev = got.first().and_then(|p| p.as_ref().ok()).map(|p| p.1);
                // What the store says at the revision the cache answered at
                // (a list at "0" or NotOlderThan may be served at any
                // revision not older than asked, up to the current one).
                let mut at_q = q.clone();
                if let (Rv::Zero | Rv::NotOlderThan(_), Some(r)) = (&rv, first_rev) {
                    assert!(r <= current, "list from the future: {r} > {current}");
                    if let Rv::NotOlderThan(back) = rv {
                        assert!(r >= (current - back).max(1), "stale list");
                    }
                    at_q.resource_version = Some(r.to_string());
                    at_q.resource_version_match = Some("Exact".into());
                }
                let want = all_pages(&plain, &res, ns, at_q).await;
                if matches!(rv, Rv::Empty) {
                    assert_eq!(first_rev, Some(current), "a consistent list is current");
                    // Spliced from the cache's encoded items: the same body
                    // as encoding the store's page (twice: encoded, then
                    // reused).
                    for _ in 0..2 {
                        let spliced = cached
                            .list_encoded(&res, ns, &q)
                            .await
                            .expect("list")
                            .expect("served from the cache");
                        let page = plain.list(&res, ns, &q).await.expect("list");
                        let meta = |rev: i64, c: &Option<String>| {
                            let mut m = json!({"resourceVersion": rev.to_string()});
                            if let Some(c) = c {
                                m["continue"] = json!(c);
                            }
                            m
                        };
                        let got = crate::wire::list_spliced(
                            res.list_kind,
                            res.api_version,
                            &meta(spliced.revision, &spliced.continue_token),
                            &spliced.items,
                        );
                        let want = crate::wire::list(
                            res.list_kind,
                            res.api_version,
                            &meta(page.revision, &page.continue_token),
                            &page.items,
                            res.kind,
                        );
                        assert_eq!(
                            String::from_utf8_lossy(&got),
                            String::from_utf8_lossy(&want)
                        );
                    }
                    // The cache is current: a get at "0" reads what the
                    // store holds.
                    for ns in NAMESPACES {
                        for i in 0..5 {
                            let name = format!("cm-{i}");
                            let got = cached.get_at(&res, ns, &name, Some("0")).await;
                            let want = plain.get(&res, ns, &name).await;
                            let code = |r: &Result<Value, ApiError>| {
                                r.as_ref().map_err(|e| e.code().as_u16()).cloned()
                            };
                            assert_eq!(code(&got), code(&want), "get {ns}/{name}");
                        }
                    }
                }
                assert_eq!(
                    got, want,
                    "list {ns:?} {rv:?} selector={selector} limit={limit}"
                );
            }
            Op::Watch { ns, back, selector } => {
                let after = (current - back).max(1).min(current);
                let q = WatchQuery {
                    filter: filter(&res, selector),
                    resource_version: Some(if back < 0 {
                        String::new()
                    } else {
                        after.to_string()
                    }),
                    ..WatchQuery::default()
                };
                let ns = ns.map(|i| NAMESPACES[i]);
                let oldest = cache.oldest();
                let got = cached.watch(&res, ns, q.clone()).await;
                let want = plain.watch(&res, ns, q).await;
                if let Err(e) = &want
                    && e.code().as_u16() == 410
                {
                    assert!(
                        matches!(&got, Err(g) if g.code().as_u16() == 410),
                        "the store compacted the history after {after}: the cache must say 410 too"
                    );
                }
                let expect = if ns.is_some() { 1 } else { 2 };
                watches.push((after, oldest, got, want, expect));
            }
        }
    }
    // The end sentinels: one per namespace, matching every selector.
    for ns in NAMESPACES {
        store
            .create(&key(ns, "zz-end"), &object(ns, "zz-end", "x", 0))
            .await
            .expect("sentinel");
    }
    for (after, oldest, got, want, expect) in watches {
        let got = events(got, expect).await;
        let want = events(want, expect).await;
        match (&got, &want) {
            // The window slid past `after`: upstream's 410.
            (Err((410, m)), Ok(_)) => {
                assert!(
                    oldest > after || cache.oldest() > after,
                    "410 inside the window: {m}"
                );
                assert!(m.starts_with("too old resource version"), "{m}");
            }
            // Both gone (the oldest revision each names may differ).
            (Err((410, a)), Err((410, b))) => {
                assert!(a.starts_with("too old resource version"), "{a}");
                assert!(b.starts_with("too old resource version"), "{b}");
            }
            // The store compacted history after the watch started, while
            // its store watch was still replaying: the cache's watch, which
            // holds those events, goes on (a start from compacted history
            // is checked above).
            (Ok(_), Err((410, _))) => {}
            _ => assert_eq!(got, want, "watch after {after}"),
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

    #[test]
    fn the_cache_answers_as_the_store(
        ops in prop::collection::vec(op(), 1..40),
        capacity in prop_oneof![Just(3usize), Just(8), Just(1000)],
    ) {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .expect("runtime");
        rt.block_on(run(ops, capacity));
    }
}

/// A page filled to its limit continues when keys follow it, even when
/// none of them passes the selector (the store's and upstream's answer:
/// the next page is empty). Found by the property test above.
#[tokio::test]
async fn a_full_page_continues_past_keys_the_selector_rejects() {
    let put = |ns, name, x| Op::Put { ns, name, x };
    let list = |ns, limit| Op::List {
        ns,
        rv: Rv::Empty,
        selector: true,
        limit,
    };
    // The first list parses the objects' selector attributes; the second
    // skips the rejected ones by them.
    run(
        vec![
            put(1, 0, true),
            put(1, 1, false),
            list(None, 2),
            list(None, 1),
        ],
        3,
    )
    .await;
    run(
        vec![
            put(0, 0, true),
            put(0, 1, false),
            list(Some(0), 1),
            list(Some(0), 1),
        ],
        1000,
    )
    .await;
}

/// A watcher that stops reading is closed when its buffer fills; the
/// reflector and the other watchers go on.
#[tokio::test]
async fn a_slow_watcher_is_closed_and_blocks_nobody() {
    let dir = tempfile::tempdir().expect("temp dir");
    let store: Arc<dyn Store> =
        EmbeddedStore::open(&dir.path().join("store.redb"), EmbeddedOptions::default())
            .await
            .expect("open store");
    let cacher = Cacher::new(
        store.clone(),
        CacheConfig {
            watcher_buffer: 4,
            ..CacheConfig::default()
        },
    );
    let prefix = "/registry/core/configmaps/";
    let cache = cacher.cache(prefix);
    assert!(cache.wait_for(1).await);
    let start = cache.revision();
    let super::CacheWatch::Stream(mut slow) = cache.watch(prefix, start) else {
        panic!("the cache serves a watch from its own revision");
    };
    let super::CacheWatch::Stream(mut fast) = cache.watch(prefix, start) else {
        panic!("the cache serves a watch from its own revision");
    };
    let reader = tokio::spawn(async move {
        let mut n = 0;
        while n < 20 {
            match tokio::time::timeout(Duration::from_secs(5), fast.next()).await {
                Ok(Some(super::CacheMessage::Event(_))) => n += 1,
                Ok(Some(super::CacheMessage::Events(b))) => n += b.iter().count(),
                Ok(Some(_)) => {}
                other => panic!("the fast watcher lost its stream: {other:?}"),
            }
        }
    });
    for i in 0..20 {
        store
            .create(&key("a", &format!("cm-{i}")), &object("a", "x", "x", i))
            .await
            .expect("write");
        // Each write its own delivery (closer ones are gathered into one).
        tokio::time::sleep(2 * super::reflector::GATHER_MAX).await;
    }
    reader.await.expect("the fast watcher saw every event");
    let mut seen = 0;
    while let Some(_message) = tokio::time::timeout(Duration::from_secs(5), slow.next())
        .await
        .expect("the slow watcher's stream ends")
    {
        seen += 1;
    }
    assert!(
        seen <= 4,
        "the slow watcher got {seen} messages past its buffer"
    );
    assert_eq!(cache.sizes().0, 20);
}

/// A store whose watches fail with `Compacted` when told to.
struct Flaky {
    inner: Arc<dyn Store>,
    fail: Arc<tokio::sync::Notify>,
    /// Reports each event's revision as progress before the event, as
    /// etcd before 3.4.25/3.5.8 could (etcd issue 15220).
    overtake: bool,
    /// What `request_progress` answers (without asking the inner store
    /// when `false`).
    progress: bool,
}

impl Flaky {
    async fn new(dir: &std::path::Path, overtake: bool, progress: bool) -> Flaky {
        let inner: Arc<dyn Store> =
            EmbeddedStore::open(&dir.join("store.redb"), EmbeddedOptions::default())
                .await
                .expect("open store");
        Flaky {
            inner,
            fail: Arc::new(tokio::sync::Notify::new()),
            overtake,
            progress,
        }
    }
}

#[async_trait::async_trait]
impl Store for Flaky {
    async fn get(&self, key: &str) -> skein_storage::Result<skein_storage::KeyValue> {
        self.inner.get(key).await
    }
    async fn list(
        &self,
        prefix: &str,
        opts: skein_storage::ListOptions,
    ) -> skein_storage::Result<skein_storage::ListResult> {
        self.inner.list(prefix, opts).await
    }
    async fn create(
        &self,
        key: &str,
        value: &[u8],
    ) -> skein_storage::Result<skein_storage::KeyValue> {
        self.inner.create(key, value).await
    }
    async fn update(
        &self,
        key: &str,
        value: &[u8],
        expected: i64,
    ) -> skein_storage::Result<skein_storage::KeyValue> {
        self.inner.update(key, value, expected).await
    }
    async fn delete(
        &self,
        key: &str,
        expected: Option<i64>,
    ) -> skein_storage::Result<(skein_storage::KeyValue, i64)> {
        self.inner.delete(key, expected).await
    }
    async fn watch(
        &self,
        prefix: &str,
        after: i64,
    ) -> skein_storage::Result<skein_storage::WatchStream> {
        let mut events = self.inner.watch(prefix, after).await?;
        if self.overtake {
            events = events
                .flat_map(|m| {
                    let mut out = Vec::new();
                    if let Ok(skein_storage::WatchMessage::Event(e)) = &m {
                        out.push(Ok(skein_storage::WatchMessage::Progress(e.revision())));
                    }
                    out.push(m);
                    futures::stream::iter(out)
                })
                .boxed();
        }
        let fail = self.fail.clone();
        let failure = futures::stream::once(async move {
            fail.notified().await;
            Err(skein_storage::Error::Compacted {
                requested: after,
                compacted: after + 1,
            })
        });
        Ok(futures::stream::select(events, failure).boxed())
    }
    async fn compact(&self, revision: i64) -> skein_storage::Result<()> {
        self.inner.compact(revision).await
    }
    async fn current_revision(&self) -> skein_storage::Result<i64> {
        self.inner.current_revision().await
    }
    fn request_progress(&self) -> bool {
        self.progress && self.inner.request_progress()
    }
    async fn close(&self) {
        self.inner.close().await;
    }
}

/// A cache whose store watch says "compacted" relists and goes on; its
/// watchers are closed (they re-watch), never left with a gap.
#[tokio::test]
async fn a_compacted_store_watch_relists_and_closes_watchers() {
    let dir = tempfile::tempdir().expect("temp dir");
    let flaky = Flaky::new(dir.path(), false, true).await;
    let fail = flaky.fail.clone();
    let store: Arc<dyn Store> = Arc::new(flaky);
    let cacher = Cacher::new(store.clone(), CacheConfig::default());
    let prefix = "/registry/core/configmaps/";
    let cache = cacher.cache(prefix);
    assert!(cache.wait_for(1).await);
    let super::CacheWatch::Stream(mut w) = cache.watch(prefix, cache.revision()) else {
        panic!("the cache serves a watch from its own revision");
    };
    store
        .create(&key("a", "one"), &object("a", "one", "x", 1))
        .await
        .expect("write");
    let first = tokio::time::timeout(Duration::from_secs(5), w.next())
        .await
        .expect("an event");
    assert!(matches!(
        first,
        Some(super::CacheMessage::Event(_) | super::CacheMessage::Events(_))
    ));
    fail.notify_one();
    loop {
        match tokio::time::timeout(Duration::from_secs(5), w.next())
            .await
            .expect("the watcher is closed on relist")
        {
            None => break,
            Some(super::CacheMessage::Progress(_)) => {}
            other => panic!("unexpected {other:?}"),
        }
    }
    store
        .create(&key("a", "two"), &object("a", "two", "x", 2))
        .await
        .expect("write");
    assert!(cache.wait_fresh().await.expect("revision"));
    let names: Vec<_> = cache
        .snapshot(prefix, None)
        .expect("listed")
        .items
        .iter()
        .map(|e| e.kv.key.clone())
        .collect();
    assert_eq!(names, [key("a", "one"), key("a", "two")]);
}

/// A watcher of an idle prefix gets progress (its client's bookmarks) from
/// the store's periodic progress, even at the revision it started from.
#[tokio::test]
async fn idle_watchers_get_progress() {
    let dir = tempfile::tempdir().expect("temp dir");
    let store: Arc<dyn Store> = EmbeddedStore::open(
        &dir.path().join("store.redb"),
        EmbeddedOptions {
            progress_interval: Duration::from_millis(100),
            ..EmbeddedOptions::default()
        },
    )
    .await
    .expect("open store");
    let cacher = Cacher::new(
        store.clone(),
        CacheConfig {
            progress_every: Duration::from_millis(50),
            ..CacheConfig::default()
        },
    );
    let prefix = "/registry/core/configmaps/";
    let cache = cacher.cache(prefix);
    assert!(cache.wait_for(1).await);
    let start = cache.revision();
    let super::CacheWatch::Stream(mut w) = cache.watch(prefix, start) else {
        panic!("the cache serves a watch from its own revision");
    };
    let got = tokio::time::timeout(Duration::from_secs(5), w.next())
        .await
        .expect("progress within 5 s");
    assert!(
        matches!(got, Some(super::CacheMessage::Progress(r)) if r >= start),
        "{got:?}"
    );
}

/// A store that reports progress before the events it covers (etcd issue
/// 15220) cannot leave the cache without a change: the late event makes it
/// relist, and its index ends up equal to the store.
#[tokio::test]
async fn an_event_behind_reported_progress_makes_the_cache_relist() {
    let dir = tempfile::tempdir().expect("temp dir");
    let store: Arc<dyn Store> = Arc::new(Flaky::new(dir.path(), true, true).await);
    let cacher = Cacher::new(store.clone(), CacheConfig::default());
    let prefix = "/registry/core/configmaps/";
    let cache = cacher.cache(prefix);
    assert!(cache.wait_for(1).await);
    let created = store
        .create(&key("a", "one"), &object("a", "one", "x", 1))
        .await
        .expect("write");
    store.delete(&key("a", "one"), None).await.expect("delete");
    let kept = store
        .create(&key("a", "two"), &object("a", "two", "x", 2))
        .await
        .expect("write");
    assert!(created.mod_revision < kept.mod_revision);
    let deadline = tokio::time::Instant::now() + Duration::from_secs(5);
    loop {
        let names: Vec<_> = cache
            .snapshot(prefix, None)
            .map(|s| s.items.iter().map(|e| e.kv.key.clone()).collect())
            .unwrap_or_default();
        if names == [key("a", "two")] && cache.revision() >= kept.mod_revision {
            break;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "the cache holds {names:?} at {}",
            cache.revision()
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// With a store that cannot be asked for progress, a consistent read does
/// not wait for a revision the cache cannot learn of (a write to another
/// resource): it reports "not fresh" at once so the caller reads the store.
#[tokio::test]
async fn without_progress_requests_a_consistent_read_goes_to_the_store_at_once() {
    let dir = tempfile::tempdir().expect("temp dir");
    let store: Arc<dyn Store> = Arc::new(Flaky::new(dir.path(), false, false).await);
    let cacher = Cacher::new(store.clone(), CacheConfig::default());
    let prefix = "/registry/core/configmaps/";
    let cache = cacher.cache(prefix);
    assert!(cache.wait_for(1).await);
    let elsewhere = store
        .create("/registry/core/secrets/a/s", b"{}")
        .await
        .expect("write");
    let started = tokio::time::Instant::now();
    assert!(!cache.wait_fresh().await.expect("revision"));
    assert!(!cache.wait_for(elsewhere.mod_revision).await);
    assert!(
        started.elapsed() < Duration::from_secs(1),
        "waited {:?}",
        started.elapsed()
    );
    // A write to its own prefix still reaches it, and then it is fresh.
    let own = store
        .create(&key("a", "one"), &object("a", "one", "x", 1))
        .await
        .expect("write");
    assert!(
        cache
            .wait_until(own.mod_revision, Duration::from_secs(5))
            .await
    );
    assert!(cache.wait_fresh().await.expect("revision"));
}

#[test]
fn deliveries_are_spaced_by_the_number_of_watchers() {
    use super::reflector::{GATHER_MAX, GATHER_MIN, gather};
    assert_eq!(gather(0), GATHER_MIN);
    assert_eq!(gather(10), GATHER_MIN);
    assert_eq!(gather(100), Duration::from_millis(2));
    assert_eq!(gather(500), Duration::from_millis(10));
    assert_eq!(gather(1000), GATHER_MAX);
    assert_eq!(gather(usize::MAX), GATHER_MAX);
}
