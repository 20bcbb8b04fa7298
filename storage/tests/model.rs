//! Model check: random operation sequences must get the same answers from
//! the pure reference model and from each backend, and a watch from the
//! start must deliver exactly the model's event history.

#![allow(clippy::unwrap_used)] // tests: clippy's allow-unwrap-in-tests does not reach tests/ (rust-clippy#13981)

mod support;

use std::time::Duration;

use futures::StreamExt;
use proptest::prelude::*;
use skein_storage::model::{Model, Op, Outcome};
use skein_storage::{Error, ListOptions, Revision, Store, WatchMessage};

/// Operations with revisions relative to the model's state, resolved when
/// the sequence runs (so generated cases stay meaningful).
#[derive(Clone, Debug)]
enum Gen {
    Get(usize),
    List {
        prefix: usize,
        limit: usize,
        after: Option<usize>,
        back: Option<u8>,
    },
    Create(usize, u8),
    /// `stale` = use an older revision than the key's current one.
    Update(usize, u8, bool),
    Delete(usize, Option<bool>),
    Compact(u8),
}

const KEYS: [&str; 6] = ["/k/a", "/k/b", "/k/c", "/k/d/e", "/k/d/f", "/other"];
const PREFIXES: [&str; 4] = ["/k/", "/k/d/", "/", "/nothing/"];

fn gen_op() -> impl Strategy<Value = Gen> {
    let key = 0..KEYS.len();
    prop_oneof![
        key.clone().prop_map(Gen::Get),
        (
            0..PREFIXES.len(),
            0..4usize,
            proptest::option::of(0..KEYS.len()),
            proptest::option::of(0..12u8)
        )
            .prop_map(|(prefix, limit, after, back)| Gen::List {
                prefix,
                limit,
                after,
                back
            }),
        (key.clone(), any::<u8>()).prop_map(|(k, v)| Gen::Create(k, v)),
        (key.clone(), any::<u8>(), prop::bool::weighted(0.2))
            .prop_map(|(k, v, s)| Gen::Update(k, v, s)),
        (key.clone(), proptest::option::of(prop::bool::weighted(0.2)))
            .prop_map(|(k, s)| Gen::Delete(k, s)),
        (0..12u8).prop_map(Gen::Compact),
    ]
}

/// Turns a generated op into a concrete one, using the model's state.
fn resolve(model: &mut Model, base: Revision, g: &Gen) -> Op {
    let cur = model.revision();
    let back = |b: u8| (cur - b as Revision).max(base);
    let mod_rev = |model: &mut Model, k: &str| match model.clone().step(&Op::Get(k.into())) {
        Ok(Outcome::Kv(kv)) => kv.mod_revision,
        _ => cur,
    };
    match g {
        Gen::Get(k) => Op::Get(KEYS[*k].into()),
        Gen::List {
            prefix,
            limit,
            after,
            back: b,
        } => Op::List(
            PREFIXES[*prefix].into(),
            ListOptions {
                at_revision: b.map_or(0, back),
                limit: *limit,
                start_after: after.map(|a| KEYS[a].to_string()),
            },
        ),
        Gen::Create(k, v) => Op::Create(KEYS[*k].into(), vec![*v; (*v as usize) % 7]),
        Gen::Update(k, v, stale) => {
            let rev = mod_rev(model, KEYS[*k]);
            Op::Update(
                KEYS[*k].into(),
                vec![*v; 3],
                if *stale { rev - 1 } else { rev },
            )
        }
        Gen::Delete(k, stale) => {
            let rev = mod_rev(model, KEYS[*k]);
            Op::Delete(
                KEYS[*k].into(),
                stale.map(|s| if s { rev - 1 } else { rev }),
            )
        }
        Gen::Compact(b) => Op::Compact(back(*b)),
    }
}

async fn run(store: &dyn Store, op: &Op) -> Result<Outcome, Error> {
    match op.clone() {
        Op::Get(k) => store.get(&k).await.map(Outcome::Kv),
        Op::List(p, o) => store.list(&p, o).await.map(Outcome::List),
        Op::Create(k, v) => store.create(&k, &v).await.map(Outcome::Kv),
        Op::Update(k, v, r) => store.update(&k, &v, r).await.map(Outcome::Kv),
        Op::Delete(k, r) => store
            .delete(&k, r)
            .await
            .map(|(kv, rev)| Outcome::Deleted(kv, rev)),
        Op::Compact(r) => store.compact(r).await.map(|()| Outcome::Compacted),
    }
}

/// Runs `ops` against `store` and the model; panics on the first difference.
/// `compacted` is the backend's compaction point before the run; the new
/// one is returned.
async fn check(store: &dyn Store, ops: &[Gen], compacted: Revision) -> Revision {
    let base = store.current_revision().await.unwrap();
    let mut model = Model::new(base).with_compaction(compacted);
    for (i, g) in ops.iter().enumerate() {
        let op = resolve(&mut model, base, g);
        let want = model.step(&op);
        let got = run(store, &op).await;
        assert_eq!(got, want, "op #{i} {op:?} (base revision {base})");
    }
    assert_eq!(store.current_revision().await.unwrap(), model.revision());
    // The watch from the start delivers the model's history, unless the
    // history was compacted, in which case it must say so.
    let expected = model.events_after("", base);
    let must_fail = model.compacted() > base + 1;
    let mut got = Vec::new();
    let mut failed = false;
    match store.watch("", base).await {
        Err(Error::Compacted { .. }) => failed = true,
        Err(e) => panic!("watch failed: {e}"),
        Ok(mut w) => {
            while !must_fail && got.len() < expected.len() || must_fail && !failed {
                match tokio::time::timeout(Duration::from_secs(10), w.next()).await {
                    Ok(Some(Ok(WatchMessage::Event(e)))) => got.push(e),
                    Ok(Some(Ok(WatchMessage::Progress(_)))) => {}
                    Ok(Some(Err(Error::Compacted { .. }))) => failed = true,
                    other => panic!("watch: {other:?} after {} events", got.len()),
                }
            }
        }
    }
    assert_eq!(
        failed,
        must_fail,
        "watch from {base}, compacted to {}",
        model.compacted()
    );
    if must_fail {
        assert!(
            got.is_empty(),
            "a compacted watch must not deliver events first"
        );
    } else {
        assert_eq!(got, expected);
    }
    model.compacted()
}

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap()
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

    #[test]
    fn embedded_matches_model(ops in proptest::collection::vec(gen_op(), 1..40)) {
        runtime().block_on(async {
            let (store, _guard) = support::embedded().await;
            check(store.as_ref(), &ops, 0).await;
            store.close().await;
        });
    }
}

/// One etcd for all cases; each case uses its own key prefix and starts from
/// the revision etcd is at.
#[test]
fn etcd_matches_model() {
    let rt = runtime();
    let etcd = skein_tests::etcd::Etcd::start();
    let counter = std::sync::atomic::AtomicUsize::new(0);
    let compacted = std::sync::atomic::AtomicI64::new(0);
    let mut runner = proptest::test_runner::TestRunner::new(ProptestConfig {
        cases: 32,
        ..ProptestConfig::default()
    });
    runner
        .run(&proptest::collection::vec(gen_op(), 1..40), |ops| {
            let n = counter.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            rt.block_on(async {
                let opts = support::etcd_options(&etcd, &format!("/case{n}"));
                let store = skein_storage::etcd::EtcdStore::connect(opts).await.unwrap();
                let before = compacted.load(std::sync::atomic::Ordering::Relaxed);
                let after = check(store.as_ref(), &ops, before).await;
                compacted.store(after, std::sync::atomic::Ordering::Relaxed);
            });
            Ok(())
        })
        .unwrap();
}
