//! Federation V1's planner cases (planner_test.go), replayed as properties
//! where V1 pinned hash outcomes, and proptests of the planner's contract.

use std::collections::BTreeMap;

use proptest::prelude::*;
use skein_admission::placement::{ClusterPreferences, ReplicaPreferences};

use super::*;

fn pref(weight: i64, min: i64, max: Option<i64>) -> ClusterPreferences {
    ClusterPreferences {
        weight,
        min_replicas: min,
        max_replicas: max,
    }
}

fn prefs(rebalance: bool, entries: &[(&str, ClusterPreferences)]) -> ReplicaPreferences {
    ReplicaPreferences {
        rebalance,
        clusters: entries.iter().map(|(k, p)| ((*k).to_owned(), *p)).collect(),
    }
}

fn names(list: &[&str]) -> Vec<String> {
    list.iter().map(|s| (*s).to_owned()).collect()
}

fn counts(list: &[(&str, i64)]) -> BTreeMap<String, i64> {
    list.iter().map(|(k, v)| ((*k).to_owned(), *v)).collect()
}

/// What a case expects: an exact split, or (where V1 marked the outcome
/// "hash dependent") only the multiset of counts.
enum Want<'a> {
    Exact(&'a [(&'a str, i64)]),
    Shape(&'a [i64]),
}

struct Case<'a> {
    name: &'a str,
    prefs: ReplicaPreferences,
    total: i64,
    clusters: &'a [&'a str],
    current: &'a [(&'a str, i64)],
    capacity: &'a [(&'a str, i64)],
    want: Want<'a>,
    unplaced: i64,
}

fn run(case: &Case<'_>, key: &str) -> Division {
    divide(
        case.total,
        &case.prefs,
        &names(case.clusters),
        &counts(case.current),
        &counts(case.capacity),
        key,
    )
}

#[test]
fn federation_v1_planner_cases() {
    let w1 = || prefs(false, &[("*", pref(1, 0, None))]);
    let cases = [
        // TestEqual
        Case {
            name: "equal 50 over 3",
            prefs: w1(),
            total: 50,
            clusters: &["A", "B", "C"],
            current: &[],
            capacity: &[],
            want: Want::Shape(&[16, 17, 17]),
            unplaced: 0,
        },
        Case {
            name: "equal 50 over 2",
            prefs: w1(),
            total: 50,
            clusters: &["A", "B"],
            current: &[],
            capacity: &[],
            want: Want::Exact(&[("A", 25), ("B", 25)]),
            unplaced: 0,
        },
        Case {
            name: "equal 1 over 2",
            prefs: w1(),
            total: 1,
            clusters: &["A", "B"],
            current: &[],
            capacity: &[],
            want: Want::Shape(&[0, 1]),
            unplaced: 0,
        },
        Case {
            name: "equal 1 over 4",
            prefs: w1(),
            total: 1,
            clusters: &["A", "B", "C", "D"],
            current: &[],
            capacity: &[],
            want: Want::Shape(&[0, 0, 0, 1]),
            unplaced: 0,
        },
        Case {
            name: "equal 1 over 1",
            prefs: w1(),
            total: 1,
            clusters: &["A"],
            current: &[],
            capacity: &[],
            want: Want::Exact(&[("A", 1)]),
            unplaced: 0,
        },
        Case {
            name: "no clusters",
            prefs: w1(),
            total: 1,
            clusters: &[],
            current: &[],
            capacity: &[],
            want: Want::Exact(&[]),
            unplaced: 1,
        },
        // TestEqualWithExisting (rebalance false)
        Case {
            name: "existing C:30 kept",
            prefs: w1(),
            total: 50,
            clusters: &["A", "B", "C"],
            current: &[("C", 30)],
            capacity: &[],
            want: Want::Exact(&[("A", 10), ("B", 10), ("C", 30)]),
            unplaced: 0,
        },
        Case {
            name: "existing A:30 kept",
            prefs: w1(),
            total: 50,
            clusters: &["A", "B"],
            current: &[("A", 30)],
            capacity: &[],
            want: Want::Exact(&[("A", 30), ("B", 20)]),
            unplaced: 0,
        },
        Case {
            name: "existing A:0 B:8",
            prefs: w1(),
            total: 15,
            clusters: &["A", "B"],
            current: &[("A", 0), ("B", 8)],
            capacity: &[],
            want: Want::Exact(&[("A", 7), ("B", 8)]),
            unplaced: 0,
        },
        Case {
            name: "existing A:1 B:8",
            prefs: w1(),
            total: 15,
            clusters: &["A", "B"],
            current: &[("A", 1), ("B", 8)],
            capacity: &[],
            want: Want::Exact(&[("A", 7), ("B", 8)]),
            unplaced: 0,
        },
        Case {
            name: "existing A:4 B:8",
            prefs: w1(),
            total: 15,
            clusters: &["A", "B"],
            current: &[("A", 4), ("B", 8)],
            capacity: &[],
            want: Want::Exact(&[("A", 7), ("B", 8)]),
            unplaced: 0,
        },
        Case {
            name: "existing A:5 B:8",
            prefs: w1(),
            total: 15,
            clusters: &["A", "B"],
            current: &[("A", 5), ("B", 8)],
            capacity: &[],
            want: Want::Exact(&[("A", 7), ("B", 8)]),
            unplaced: 0,
        },
        Case {
            name: "existing A:6 B:8",
            prefs: w1(),
            total: 15,
            clusters: &["A", "B"],
            current: &[("A", 6), ("B", 8)],
            capacity: &[],
            want: Want::Exact(&[("A", 7), ("B", 8)]),
            unplaced: 0,
        },
        Case {
            name: "existing A:7 B:8 steady",
            prefs: w1(),
            total: 15,
            clusters: &["A", "B"],
            current: &[("A", 7), ("B", 8)],
            capacity: &[],
            want: Want::Exact(&[("A", 7), ("B", 8)]),
            unplaced: 0,
        },
        Case {
            name: "existing large",
            prefs: w1(),
            total: 500_000,
            clusters: &["A", "B"],
            current: &[("A", 300_000)],
            capacity: &[],
            want: Want::Exact(&[("A", 300_000), ("B", 200_000)]),
            unplaced: 0,
        },
        Case {
            name: "existing A:10 grows to even",
            prefs: w1(),
            total: 50,
            clusters: &["A", "B"],
            current: &[("A", 10)],
            capacity: &[],
            want: Want::Exact(&[("A", 25), ("B", 25)]),
            unplaced: 0,
        },
        // V1 gave A:0 B:50 (hash dependent) with "TODO: Should be 10:40"
        // (kubernetes/kubernetes#31816); a scale-down only removes here.
        Case {
            name: "scale-down removes from the surplus",
            prefs: w1(),
            total: 50,
            clusters: &["A", "B"],
            current: &[("A", 10), ("B", 70)],
            capacity: &[],
            want: Want::Exact(&[("A", 10), ("B", 40)]),
            unplaced: 0,
        },
        Case {
            name: "scale-down to 1 keeps it where it was",
            prefs: w1(),
            total: 1,
            clusters: &["A", "B"],
            current: &[("A", 30)],
            capacity: &[],
            want: Want::Exact(&[("A", 1), ("B", 0)]),
            unplaced: 0,
        },
        Case {
            name: "existing A:10 B:20 grows to even",
            prefs: w1(),
            total: 50,
            clusters: &["A", "B"],
            current: &[("A", 10), ("B", 20)],
            capacity: &[],
            want: Want::Exact(&[("A", 25), ("B", 25)]),
            unplaced: 0,
        },
        // TestWithExistingAndCapacity
        Case {
            name: "capacity caps C, rest even",
            prefs: prefs(true, &[("*", pref(1, 0, None))]),
            total: 50,
            clusters: &["A", "B", "C"],
            current: &[],
            capacity: &[("C", 10)],
            want: Want::Exact(&[("A", 20), ("B", 20), ("C", 10)]),
            unplaced: 0,
        },
        Case {
            name: "capacity overflow goes nowhere",
            prefs: prefs(
                true,
                &[("A", pref(10_000, 0, None)), ("B", pref(1, 0, None))],
            ),
            total: 50,
            clusters: &["B", "C"],
            current: &[],
            capacity: &[("B", 10)],
            want: Want::Exact(&[("B", 10), ("C", 0)]),
            unplaced: 40,
        },
        Case {
            name: "capacity overflow to the other weighted",
            prefs: prefs(true, &[("A", pref(1, 0, None)), ("B", pref(2, 0, None))]),
            total: 60,
            clusters: &["A", "B", "C"],
            current: &[],
            capacity: &[("B", 10)],
            want: Want::Exact(&[("A", 50), ("B", 10), ("C", 0)]),
            unplaced: 0,
        },
        Case {
            name: "capacity and maxima",
            prefs: prefs(
                true,
                &[
                    ("A", pref(10_000, 0, Some(10))),
                    ("B", pref(1, 0, None)),
                    ("C", pref(1, 0, Some(21))),
                    ("D", pref(1, 0, Some(10))),
                ],
            ),
            total: 71,
            clusters: &["A", "B", "C", "D"],
            current: &[],
            capacity: &[("C", 10)],
            want: Want::Exact(&[("A", 10), ("B", 41), ("C", 10), ("D", 10)]),
            unplaced: 0,
        },
        Case {
            name: "both capped, no rebalance",
            prefs: prefs(false, &[("A", pref(1, 0, None)), ("B", pref(1, 0, None))]),
            total: 60,
            clusters: &["A", "B", "C"],
            current: &[],
            capacity: &[("A", 10), ("B", 10)],
            want: Want::Exact(&[("A", 10), ("B", 10), ("C", 0)]),
            unplaced: 40,
        },
        Case {
            name: "capped heavy cluster, no rebalance",
            prefs: prefs(false, &[("A", pref(1, 0, None)), ("B", pref(5, 0, None))]),
            total: 60,
            clusters: &["A", "B", "C"],
            current: &[],
            capacity: &[("B", 10)],
            want: Want::Exact(&[("A", 50), ("B", 10), ("C", 0)]),
            unplaced: 0,
        },
        Case {
            name: "minimums within capacity",
            prefs: prefs(false, &[("*", pref(0, 20, None))]),
            total: 50,
            clusters: &["A", "B", "C"],
            current: &[],
            capacity: &[("B", 10)],
            want: Want::Exact(&[("A", 20), ("B", 10), ("C", 20)]),
            unplaced: 0,
        },
        Case {
            name: "minimum capped by capacity",
            prefs: prefs(true, &[("*", pref(1, 20, None))]),
            total: 60,
            clusters: &["A", "B"],
            current: &[],
            capacity: &[("B", 10)],
            want: Want::Exact(&[("A", 50), ("B", 10)]),
            unplaced: 0,
        },
        // TestMin
        Case {
            name: "min only",
            prefs: prefs(false, &[("*", pref(0, 2, None))]),
            total: 50,
            clusters: &["A", "B", "C"],
            current: &[],
            capacity: &[],
            want: Want::Exact(&[("A", 2), ("B", 2), ("C", 2)]),
            unplaced: 44,
        },
        Case {
            name: "minimums exceed total",
            prefs: prefs(false, &[("*", pref(0, 20, None))]),
            total: 50,
            clusters: &["A", "B", "C"],
            current: &[],
            capacity: &[],
            want: Want::Shape(&[10, 20, 20]),
            unplaced: 0,
        },
        Case {
            name: "heavier minimum first",
            prefs: prefs(
                false,
                &[("*", pref(0, 20, None)), ("A", pref(1, 100, None))],
            ),
            total: 50,
            clusters: &["A", "B", "C"],
            current: &[],
            capacity: &[],
            want: Want::Exact(&[("A", 50), ("B", 0), ("C", 0)]),
            unplaced: 0,
        },
        Case {
            name: "min and max",
            prefs: prefs(false, &[("*", pref(1, 10, Some(12)))]),
            total: 50,
            clusters: &["A", "B", "C"],
            current: &[],
            capacity: &[],
            want: Want::Exact(&[("A", 12), ("B", 12), ("C", 12)]),
            unplaced: 14,
        },
        // TestMax
        Case {
            name: "max",
            prefs: prefs(false, &[("*", pref(1, 0, Some(2)))]),
            total: 50,
            clusters: &["A", "B", "C"],
            current: &[],
            capacity: &[],
            want: Want::Exact(&[("A", 2), ("B", 2), ("C", 2)]),
            unplaced: 44,
        },
        Case {
            name: "max without weight",
            prefs: prefs(false, &[("*", pref(0, 0, Some(2)))]),
            total: 50,
            clusters: &["A", "B", "C"],
            current: &[],
            capacity: &[],
            want: Want::Exact(&[("A", 0), ("B", 0), ("C", 0)]),
            unplaced: 50,
        },
        // TestWeight
        Case {
            name: "weights 1:2, unnamed gets none",
            prefs: prefs(false, &[("A", pref(1, 0, None)), ("B", pref(2, 0, None))]),
            total: 60,
            clusters: &["A", "B", "C"],
            current: &[],
            capacity: &[],
            want: Want::Exact(&[("A", 20), ("B", 40), ("C", 0)]),
            unplaced: 0,
        },
        Case {
            name: "overwhelming weight",
            prefs: prefs(
                false,
                &[("A", pref(10_000, 0, None)), ("B", pref(1, 0, None))],
            ),
            total: 50,
            clusters: &["A", "B", "C"],
            current: &[],
            capacity: &[],
            want: Want::Exact(&[("A", 50), ("B", 0), ("C", 0)]),
            unplaced: 0,
        },
        Case {
            name: "preference for a missing cluster",
            prefs: prefs(
                false,
                &[("A", pref(10_000, 0, None)), ("B", pref(1, 0, None))],
            ),
            total: 50,
            clusters: &["B", "C"],
            current: &[],
            capacity: &[],
            want: Want::Exact(&[("B", 50), ("C", 0)]),
            unplaced: 0,
        },
        Case {
            name: "heavy cluster capped",
            prefs: prefs(
                false,
                &[
                    ("A", pref(10_000, 0, Some(10))),
                    ("B", pref(1, 0, None)),
                    ("C", pref(1, 0, None)),
                ],
            ),
            total: 50,
            clusters: &["A", "B", "C"],
            current: &[],
            capacity: &[],
            want: Want::Exact(&[("A", 10), ("B", 20), ("C", 20)]),
            unplaced: 0,
        },
        Case {
            name: "two capped",
            prefs: prefs(
                false,
                &[
                    ("A", pref(10_000, 0, Some(10))),
                    ("B", pref(1, 0, None)),
                    ("C", pref(1, 0, Some(10))),
                ],
            ),
            total: 50,
            clusters: &["A", "B", "C"],
            current: &[],
            capacity: &[],
            want: Want::Exact(&[("A", 10), ("B", 30), ("C", 10)]),
            unplaced: 0,
        },
        Case {
            name: "cascading caps",
            prefs: prefs(
                false,
                &[
                    ("A", pref(10_000, 0, Some(10))),
                    ("B", pref(1, 0, None)),
                    ("C", pref(1, 0, Some(21))),
                    ("D", pref(1, 0, Some(10))),
                ],
            ),
            total: 71,
            clusters: &["A", "B", "C", "D"],
            current: &[],
            capacity: &[],
            want: Want::Exact(&[("A", 10), ("B", 30), ("C", 21), ("D", 10)]),
            unplaced: 0,
        },
        Case {
            name: "cascading caps, five clusters",
            prefs: prefs(
                false,
                &[
                    ("A", pref(10_000, 0, Some(10))),
                    ("B", pref(1, 0, None)),
                    ("C", pref(1, 0, Some(21))),
                    ("D", pref(1, 0, Some(10))),
                    ("E", pref(1, 0, None)),
                ],
            ),
            total: 91,
            clusters: &["A", "B", "C", "D", "E"],
            current: &[],
            capacity: &[],
            want: Want::Exact(&[("A", 10), ("B", 25), ("C", 21), ("D", 10), ("E", 25)]),
            unplaced: 0,
        },
        // Skein's issue 12, acceptance 1.
        Case {
            name: "weights 2/1/0 split 6 as 4/2/0",
            prefs: prefs(
                false,
                &[
                    ("a", pref(2, 0, None)),
                    ("b", pref(1, 0, None)),
                    ("c", pref(0, 0, None)),
                ],
            ),
            total: 6,
            clusters: &["a", "b", "c"],
            current: &[],
            capacity: &[],
            want: Want::Exact(&[("a", 4), ("b", 2), ("c", 0)]),
            unplaced: 0,
        },
    ];
    for case in &cases {
        // Several keys: hash-dependent cases must hold for every key.
        for key in ["", "default/web", "ns/x", "9f1c"] {
            let got = run(case, key);
            let what = format!("{} (key {key:?}): {got:?}", case.name);
            assert_eq!(got.unplaced, case.unplaced, "{what}");
            let eligible: Vec<&str> = got.replicas.keys().map(String::as_str).collect();
            let mut want_names: Vec<&str> = case.clusters.to_vec();
            want_names.sort_unstable();
            assert_eq!(eligible, want_names, "{what}");
            match case.want {
                Want::Exact(want) => assert_eq!(got.replicas, counts(want), "{what}"),
                Want::Shape(want) => {
                    let mut shape: Vec<i64> = got.replicas.values().copied().collect();
                    shape.sort_unstable();
                    assert_eq!(shape, want, "{what}");
                }
            }
        }
    }
}

#[test]
fn the_tie_break_depends_on_the_object_key() {
    let p = prefs(false, &[("*", pref(1, 0, None))]);
    let clusters = names(&["a", "b", "c", "d"]);
    let winners: std::collections::BTreeSet<String> = (0..40)
        .map(|i| {
            let d = divide(
                1,
                &p,
                &clusters,
                &BTreeMap::new(),
                &BTreeMap::new(),
                &format!("ns/o{i}"),
            );
            d.replicas
                .into_iter()
                .find(|(_, n)| *n == 1)
                .map(|(k, _)| k)
                .unwrap_or_default()
        })
        .collect();
    assert!(winners.len() > 1, "single replicas all went to {winners:?}");
}

#[test]
fn fnv1_matches_go_fnv_new32() {
    // Go: fnv.New32() over "" and "a".
    assert_eq!(tie_break_hash("", ""), 0x811c_9dc5);
    assert_eq!(tie_break_hash("a", ""), 0x050c_5d7e);
    assert_eq!(tie_break_hash("a", "b"), tie_break_hash("ab", ""));
}

#[test]
fn negative_total_places_nothing() {
    let d = divide(
        -3,
        &ReplicaPreferences::default(),
        &names(&["a"]),
        &BTreeMap::new(),
        &BTreeMap::new(),
        "k",
    );
    assert_eq!(d.replicas, counts(&[("a", 0)]));
    assert_eq!(d.unplaced, 0);
}

const POOL: [&str; 6] = ["a", "b", "c", "d", "e", "f"];

#[derive(Debug, Clone)]
struct Input {
    total: i64,
    prefs: ReplicaPreferences,
    eligible: Vec<String>,
    current: BTreeMap<String, i64>,
    capacity: BTreeMap<String, i64>,
    key: String,
}

impl Input {
    fn run(&self) -> Division {
        divide(
            self.total,
            &self.prefs,
            &self.eligible,
            &self.current,
            &self.capacity,
            &self.key,
        )
    }

    fn effective(&self, name: &str) -> ClusterPreferences {
        self.prefs
            .clusters
            .get(name)
            .or_else(|| self.prefs.clusters.get("*"))
            .copied()
            .unwrap_or(pref(0, 0, None))
    }

    fn cap(&self, name: &str) -> i64 {
        let p = self.effective(name);
        p.max_replicas
            .unwrap_or(i64::MAX)
            .min(self.capacity.get(name).copied().unwrap_or(i64::MAX))
    }
}

fn any_pref(with_min: bool) -> impl Strategy<Value = ClusterPreferences> {
    let min = if with_min { 0..6_i64 } else { 0..1_i64 };
    (0..5_i64, min, proptest::option::of(0..25_i64))
        .prop_map(|(w, m, max)| pref(w, m, max.map(|x| x.max(m))))
}

fn any_input(with_min: bool, with_caps: bool) -> impl Strategy<Value = Input> {
    let names = proptest::sample::subsequence(POOL.to_vec(), 0..=POOL.len());
    let cluster_prefs = proptest::collection::btree_map(
        proptest::sample::select(vec!["*", "a", "b", "c", "d", "e", "f"]),
        any_pref(with_min),
        0..5,
    );
    let counts_map = || {
        proptest::collection::btree_map(
            proptest::sample::select(POOL.to_vec()).prop_map(str::to_owned),
            0..40_i64,
            0..5,
        )
    };
    let caps = if with_caps { 0..5_usize } else { 0..1_usize };
    (
        0..120_i64,
        any::<bool>(),
        names,
        cluster_prefs,
        counts_map(),
        proptest::collection::btree_map(
            proptest::sample::select(POOL.to_vec()).prop_map(str::to_owned),
            0..40_i64,
            caps,
        ),
        "[a-z/]{0,8}",
    )
        .prop_map(
            move |(total, rebalance, eligible, clusters, current, capacity, key)| {
                let mut clusters: BTreeMap<String, ClusterPreferences> = clusters
                    .into_iter()
                    .map(|(k, v)| (k.to_owned(), v))
                    .collect();
                if !with_caps {
                    for p in clusters.values_mut() {
                        p.max_replicas = None;
                    }
                }
                Input {
                    total,
                    prefs: ReplicaPreferences {
                        rebalance,
                        clusters,
                    },
                    eligible: eligible.into_iter().map(str::to_owned).collect(),
                    current,
                    capacity,
                    key,
                }
            },
        )
}

proptest! {
    #[test]
    fn only_eligible_clusters_all_present_sum_accounted(input in any_input(true, true)) {
        let d = input.run();
        let names: Vec<&String> = d.replicas.keys().collect();
        let mut want: Vec<&String> = input.eligible.iter().collect();
        want.sort();
        want.dedup();
        prop_assert_eq!(names, want);
        prop_assert!(d.replicas.values().all(|n| *n >= 0));
        prop_assert!(d.unplaced >= 0);
        prop_assert_eq!(d.replicas.values().sum::<i64>() + d.unplaced, input.total);
    }

    #[test]
    fn caps_hold_and_overflow_only_when_every_weighted_cluster_is_full(input in any_input(true, true)) {
        let d = input.run();
        for (name, n) in &d.replicas {
            prop_assert!(*n <= input.cap(name), "{} has {} over its cap {}", name, n, input.cap(name));
        }
        if d.unplaced > 0 {
            for (name, n) in &d.replicas {
                if input.effective(name).weight > 0 {
                    prop_assert_eq!(*n, input.cap(name), "{} has room but {} replicas are unplaced", name, d.unplaced);
                }
            }
        }
    }

    #[test]
    fn minima_hold_when_the_total_allows(input in any_input(true, true)) {
        let d = input.run();
        let floors: BTreeMap<&String, i64> = d
            .replicas
            .keys()
            .map(|n| (n, input.effective(n).min_replicas.min(input.cap(n))))
            .collect();
        if floors.values().sum::<i64>() <= input.total {
            for (name, floor) in floors {
                prop_assert!(d.replicas[name] >= floor, "{} below its minimum {}", name, floor);
            }
        }
    }

    #[test]
    fn weights_are_honoured_within_rounding(
        total in 0..500_i64,
        weights in proptest::collection::btree_map(
            proptest::sample::select(POOL.to_vec()).prop_map(str::to_owned), 1..10_i64, 1..6),
        key in "[a-z]{0,6}",
    ) {
        let p = ReplicaPreferences {
            rebalance: true,
            clusters: weights.iter().map(|(k, w)| (k.clone(), pref(*w, 0, None))).collect(),
        };
        let eligible: Vec<String> = weights.keys().cloned().collect();
        let d = divide(total, &p, &eligible, &BTreeMap::new(), &BTreeMap::new(), &key);
        let sum: i64 = weights.values().sum();
        prop_assert_eq!(d.unplaced, 0);
        for (name, w) in &weights {
            let off = (d.replicas[name] * sum - total * w).abs();
            prop_assert!(off < sum, "{}: {} replicas, exact share {}/{}", name, d.replicas[name], total * w, sum);
        }
    }

    #[test]
    fn independent_of_input_order_and_deterministic(input in any_input(true, true), rotate in 0..6_usize) {
        let d = input.run();
        prop_assert_eq!(&d, &input.run());
        let mut shuffled = input.clone();
        shuffled.eligible.reverse();
        if !shuffled.eligible.is_empty() {
            let r = rotate % shuffled.eligible.len();
            shuffled.eligible.rotate_left(r);
            let first = shuffled.eligible[0].clone();
            shuffled.eligible.push(first);
        }
        prop_assert_eq!(d, shuffled.run());
    }

    #[test]
    fn without_rebalance_nothing_moves_that_need_not(input in any_input(false, true)) {
        let mut input = input;
        input.prefs.rebalance = false;
        let d = input.run();
        let kept: BTreeMap<&String, i64> = d
            .replicas
            .keys()
            .map(|n| (n, input.current.get(n).copied().unwrap_or(0).min(input.cap(n))))
            .collect();
        let scale_up = input.total >= kept.values().sum::<i64>();
        for (name, k) in kept {
            let n = d.replicas[name];
            if scale_up {
                prop_assert!(n >= k, "scale-up took {} from {} (had {})", k - n, name, k);
            } else {
                prop_assert!(n <= k, "scale-down added {} to {} (had {})", n - k, name, k);
            }
        }
    }

    #[test]
    fn a_decision_is_stable_when_nothing_changes(input in any_input(true, true)) {
        let first = input.run();
        let mut again = input.clone();
        again.current = first.replicas.clone();
        prop_assert_eq!(again.run(), first);
    }
}
