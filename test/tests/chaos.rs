//! The short chaos run (issue 31; the long one is `hack/bench.sh chaos`):
//! a minute of random creates, updates, deletes, re-placements, scale and
//! image changes, Cluster label changes, unjoins and joins, proxy faults,
//! members wiped while away and SIGKILLs of the federation, against four
//! members; then every fault stops and the federation must settle with
//! every invariant of [`skein_tests::invariants`] holding, nothing an
//! acknowledged write did lost, and every repeated Event aggregated. `SKEIN_CHAOS_SEED` replays a run (the seed
//! is printed).

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use skein_tests::chaos::{Chaos, Config, summary};
use skein_tests::kubectl_binaries;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn chaos_then_every_invariant_holds() {
    let seed = std::env::var("SKEIN_CHAOS_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| {
            SystemTime::now()
                .duration_since(UNIX_EPOCH)
                .map_or(1, |d| d.as_secs())
        });
    println!("chaos seed {seed} (SKEIN_CHAOS_SEED={seed} replays it)");
    let config = Config {
        members: 4,
        duration: Duration::from_secs(60),
        seed,
        kill_every: Some(Duration::from_secs(25)),
        pause: Duration::from_millis(150),
        settle: Duration::from_secs(45),
    };
    let dir = tempfile::tempdir().expect("tempdir");
    let k = kubectl_binaries().first().expect("a kubectl").clone();
    let chaos = Chaos::start(dir.path(), &k, &config).await;
    let report = chaos.run(&config).await;
    let text = summary(&report);
    println!("{text}");
    assert!(
        report.errors.is_empty() && report.violations.is_empty(),
        "seed {seed}:\n{text}"
    );
    // No Event storm: every repeat was a count bump.
    assert!(report.event_repeats.is_empty(), "seed {seed}:\n{text}");
    assert!(
        report.steps.get("sigkill-federation").copied().unwrap_or(0) >= 2,
        "the run must kill the federation: {text}"
    );
}
