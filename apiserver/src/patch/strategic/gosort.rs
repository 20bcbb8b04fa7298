//! Go's `sort.SliceStable` (insertion sort on blocks of 20, then
//! SymMerge), step for step.
//!
//! Upstream orders merged lists with a comparator that is not a strict
//! weak order (an item missing from the reference order is "less" than
//! everything), so the result depends on the exact sequence of comparisons
//! and swaps; any other stable sort would order such lists differently.
//! Reference: Go's `src/sort/zsortfunc.go` (`stable_func`, `symMerge_func`,
//! `rotate_func`).

/// Sorts `data` in place exactly as Go's `sort.SliceStable(data, less)`.
pub(crate) fn slice_stable<T>(data: &mut [T], less: &dyn Fn(&T, &T) -> bool) {
    let n = data.len();
    let mut block = 20;
    let (mut a, mut b) = (0, block);
    while b <= n {
        insertion_sort(data, less, a, b);
        a = b;
        b += block;
    }
    insertion_sort(data, less, a, n);
    while block < n {
        a = 0;
        b = 2 * block;
        while b <= n {
            sym_merge(data, less, a, a + block, b);
            a = b;
            b += 2 * block;
        }
        let m = a + block;
        if m < n {
            sym_merge(data, less, a, m, n);
        }
        block *= 2;
    }
}

fn lt<T>(data: &[T], less: &dyn Fn(&T, &T) -> bool, i: usize, j: usize) -> bool {
    match (data.get(i), data.get(j)) {
        (Some(x), Some(y)) => less(x, y),
        _ => false,
    }
}

fn insertion_sort<T>(data: &mut [T], less: &dyn Fn(&T, &T) -> bool, a: usize, b: usize) {
    for i in a + 1..b {
        let mut j = i;
        while j > a && lt(data, less, j, j - 1) {
            data.swap(j, j - 1);
            j -= 1;
        }
    }
}

fn sym_merge<T>(data: &mut [T], less: &dyn Fn(&T, &T) -> bool, a: usize, m: usize, b: usize) {
    if m - a == 1 {
        let (mut i, mut j) = (m, b);
        while i < j {
            let h = (i + j) / 2;
            if lt(data, less, h, a) {
                i = h + 1;
            } else {
                j = h;
            }
        }
        for k in a..i.saturating_sub(1) {
            data.swap(k, k + 1);
        }
        return;
    }
    if b - m == 1 {
        let (mut i, mut j) = (a, m);
        while i < j {
            let h = (i + j) / 2;
            if !lt(data, less, m, h) {
                i = h + 1;
            } else {
                j = h;
            }
        }
        let mut k = m;
        while k > i {
            data.swap(k, k - 1);
            k -= 1;
        }
        return;
    }
    let mid = (a + b) / 2;
    let n = mid + m;
    let (mut start, mut r) = if m > mid { (n - b, mid) } else { (a, m) };
    let p = n - 1;
    while start < r {
        let c = (start + r) / 2;
        if !lt(data, less, p - c, c) {
            start = c + 1;
        } else {
            r = c;
        }
    }
    let end = n - start;
    if start < m && m < end {
        rotate(data, start, m, end);
    }
    if a < start && start < mid {
        sym_merge(data, less, a, start, mid);
    }
    if mid < end && end < b {
        sym_merge(data, less, mid, end, b);
    }
}

fn rotate<T>(data: &mut [T], a: usize, m: usize, b: usize) {
    let mut i = m - a;
    let mut j = b - m;
    while i != j {
        if i > j {
            swap_range(data, m - i, m, j);
            i -= j;
        } else {
            swap_range(data, m - i, m + j - i, i);
            j -= i;
        }
    }
    swap_range(data, m - i, m, i);
}

fn swap_range<T>(data: &mut [T], a: usize, b: usize, n: usize) {
    for i in 0..n {
        data.swap(a + i, b + i);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        /// With a consistent comparator it is an ordinary stable sort.
        #[test]
        fn agrees_with_std_stable_sort(v in proptest::collection::vec((0u8..8, any::<u16>()), 0..90)) {
            let mut ours = v.clone();
            slice_stable(&mut ours, &|x: &(u8, u16), y: &(u8, u16)| x.0 < y.0);
            let mut std = v;
            std.sort_by_key(|x| x.0);
            prop_assert_eq!(ours, std);
        }
    }

    #[test]
    fn inconsistent_comparator_matches_go() {
        // Go: items 9 (absent from the order) compare "less" both ways.
        let order = [1, 2];
        let idx = |x: &i32| order.iter().position(|o| o == x);
        let less = |x: &i32, y: &i32| match (idx(x), idx(y)) {
            (Some(i), Some(j)) => i < j,
            _ => true,
        };
        let mut v = vec![1, 2, 9];
        slice_stable(&mut v, &less);
        assert_eq!(v, vec![9, 1, 2]);
    }
}
