//! Seats per priority level: nominal limits from shares, and the current
//! limits after borrowing.
//!
//! Upstream (KEP-1040's borrowing, `apf_controller.go`): a level's nominal
//! limit is `ceil(server seats × shares / Σ shares)`; it may lend
//! `round(nominal × lendablePercent / 100)` seats and borrow up to
//! `round(nominal × borrowingLimitPercent / 100)` (unlimited when unset).
//! Every 10 s upstream sets each level's current limit from its smoothed
//! seat demand by a fair allocation between `nominal − lendable` and
//! `nominal + borrowing`.
//!
//! Skein's simplification ([`allocate`], run every second on the peak
//! demand of the last second):
//! 1. each level gets its demand, but at least `nominal − lendable` and at
//!    most `nominal`;
//! 2. the seats left over (lent by levels that want fewer than nominal)
//!    go one at a time, round robin, to levels that want more than they
//!    have, up to their borrowing limit;
//! 3. what nobody borrows goes back to its lenders, up to nominal, so an
//!    idle level has its nominal seats the moment its demand returns.

/// One level's configuration and recent demand, in seats.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Demand {
    /// Nominal limit.
    pub nominal: usize,
    /// Seats it may lend.
    pub lendable: usize,
    /// Seats it may borrow (`None`: unlimited).
    pub borrowing: Option<usize>,
    /// Peak seats wanted (executing plus waiting).
    pub wanted: usize,
}

/// `ceil(total × shares / Σ shares)` (0 when no level has shares).
pub fn nominal(total: usize, shares: u64, sum_shares: u64) -> usize {
    if sum_shares == 0 {
        return 0;
    }
    ((total as u64 * shares).div_ceil(sum_shares)) as usize
}

/// `round(seats × percent / 100)`.
pub fn percent_of(seats: usize, percent: u64) -> usize {
    ((seats as u64 * percent + 50) / 100) as usize
}

/// The current limit of each level (same order as `levels`); see the
/// module documentation. The sum never exceeds `max(total, Σ nominal)`.
pub fn allocate(total: usize, levels: &[Demand]) -> Vec<usize> {
    let mut alloc: Vec<usize> = levels
        .iter()
        .map(|l| {
            l.wanted
                .clamp(l.nominal.saturating_sub(l.lendable), l.nominal)
        })
        .collect();
    let used: usize = alloc.iter().sum();
    let mut pool = total.saturating_sub(used);
    // Step 2: borrowing, one seat at a time, round robin.
    let ceiling = |l: &Demand| {
        l.wanted
            .min(l.nominal.saturating_add(l.borrowing.unwrap_or(usize::MAX)))
    };
    while pool > 0 {
        let mut gave = false;
        for (a, l) in alloc.iter_mut().zip(levels) {
            if pool > 0 && *a < ceiling(l) {
                *a += 1;
                pool -= 1;
                gave = true;
            }
        }
        if !gave {
            break;
        }
    }
    // Step 3: the rest back to the lenders.
    for (a, l) in alloc.iter_mut().zip(levels) {
        if pool == 0 {
            break;
        }
        let back = l.nominal.saturating_sub(*a).min(pool);
        *a += back;
        pool -= back;
    }
    alloc
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;

    fn d(nominal: usize, lendable: usize, borrowing: Option<usize>, wanted: usize) -> Demand {
        Demand {
            nominal,
            lendable,
            borrowing,
            wanted,
        }
    }

    #[test]
    fn upstream_defaults_nominal_seats() {
        // Shares of the suggested and mandatory levels: 245 in all.
        let sum = 5 + 30 + 40 + 10 + 40 + 100 + 20;
        assert_eq!(nominal(600, 5, sum), 13);
        assert_eq!(nominal(600, 20, sum), 49);
        assert_eq!(nominal(600, 100, sum), 245);
        assert_eq!(percent_of(49, 50), 25);
    }

    #[test]
    fn idle_levels_keep_their_nominal_seats() {
        let levels = [d(10, 5, None, 0), d(10, 5, None, 0)];
        assert_eq!(allocate(20, &levels), [10, 10]);
    }

    #[test]
    fn a_busy_level_borrows_what_an_idle_one_lends() {
        let levels = [d(10, 5, None, 100), d(10, 5, None, 0)];
        assert_eq!(allocate(20, &levels), [15, 5]);
        let limited = [d(10, 5, Some(2), 100), d(10, 5, None, 0)];
        assert_eq!(allocate(20, &limited), [12, 8]);
        let lends_nothing = [d(10, 5, None, 100), d(10, 0, None, 0)];
        assert_eq!(allocate(20, &lends_nothing), [10, 10]);
    }

    #[test]
    fn borrowers_share_the_pool_alike() {
        let levels = [d(10, 0, None, 100), d(10, 0, None, 100), d(10, 10, None, 0)];
        assert_eq!(allocate(30, &levels), [15, 15, 0]);
    }

    proptest! {
        #[test]
        fn limits_stay_in_bounds(specs in prop::collection::vec((0usize..50, 0u64..=100, prop::option::of(0u64..=200), 0usize..200), 1..8)) {
            let levels: Vec<Demand> = specs.iter().map(|&(n, lp, bp, w)| d(n, percent_of(n, lp), bp.map(|b| percent_of(n, b)), w)).collect();
            let total: usize = levels.iter().map(|l| l.nominal).sum();
            let alloc = allocate(total, &levels);
            prop_assert!(alloc.iter().sum::<usize>() <= total);
            for (a, l) in alloc.iter().zip(&levels) {
                prop_assert!(*a >= l.nominal - l.lendable);
                prop_assert!(*a <= l.nominal + l.borrowing.unwrap_or(usize::MAX - l.nominal));
                // A level that wants no more than nominal is never cut
                // below what it wants (lenders keep what they use).
                if l.wanted <= l.nominal {
                    prop_assert!(*a >= l.wanted);
                }
            }
        }
    }
}
