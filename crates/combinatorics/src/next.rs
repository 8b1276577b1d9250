//! `next_permutation` / `prev_permutation` with the exact semantics of C++'s
//! `std::next_permutation` / `std::prev_permutation`.

/// Rearranges `v` into the next lexicographically greater permutation and returns `true`; if
/// `v` is the last (non-increasing) permutation, rearranges it into the first (sorted) one and
/// returns `false` — exactly like C++ `std::next_permutation`.
///
/// Equal elements are allowed: starting from the sorted order, repeated calls visit every
/// *distinct* arrangement of the multiset exactly once.
///
/// # Complexity
/// `O(n)` worst case, `O(1)` amortised over a full cycle of distinct elements.
///
/// # Examples
/// ```
/// use combinatorics::next_permutation;
/// let mut v = [1, 1, 2];
/// assert!(next_permutation(&mut v));
/// assert_eq!(v, [1, 2, 1]);
/// assert!(next_permutation(&mut v));
/// assert_eq!(v, [2, 1, 1]);
/// assert!(!next_permutation(&mut v)); // wrapped to the first
/// assert_eq!(v, [1, 1, 2]);
/// ```
pub fn next_permutation<T: Ord>(v: &mut [T]) -> bool {
    next_permutation_pivot(v).is_some()
}

/// Like [`next_permutation`], and returns the first position that changed (`None` after
/// wrapping). Positions before the pivot are unchanged, which lets callers update prefix
/// computations incrementally.
#[inline]
pub(crate) fn next_permutation_pivot<T: Ord>(v: &mut [T]) -> Option<usize> {
    step_permutation(v, |a, b| a < b)
}

/// One step of the lexicographic walk in the order where `a` precedes `b` when
/// `precedes(a, b)`: the pivot, or `None` after wrapping (the next permutation in `<`, the
/// previous one in `>`).
#[inline]
fn step_permutation<T>(v: &mut [T], precedes: impl Fn(&T, &T) -> bool) -> Option<usize> {
    let n = v.len();
    if n < 2 {
        return None;
    }
    // Longest suffix without an ascent (in this order) starts at i + 1.
    let mut i = n - 1;
    while i > 0 && !precedes(&v[i - 1], &v[i]) {
        i -= 1;
    }
    if i == 0 {
        v.reverse();
        return None;
    }
    let pivot = i - 1;
    let mut j = n - 1;
    while !precedes(&v[pivot], &v[j]) {
        j -= 1;
    }
    v.swap(pivot, j);
    v[i..].reverse();
    Some(pivot)
}

/// Rearranges `v` into the previous lexicographically smaller permutation and returns `true`;
/// if `v` is the first (sorted) permutation, rearranges it into the last (non-increasing) one
/// and returns `false` — exactly like C++ `std::prev_permutation`.
///
/// # Complexity
/// `O(n)` worst case, `O(1)` amortised.
///
/// # Examples
/// ```
/// use combinatorics::prev_permutation;
/// let mut v = [1, 2, 3];
/// assert!(!prev_permutation(&mut v));
/// assert_eq!(v, [3, 2, 1]);
/// assert!(prev_permutation(&mut v));
/// assert_eq!(v, [3, 1, 2]);
/// ```
pub fn prev_permutation<T: Ord>(v: &mut [T]) -> bool {
    step_permutation(v, |a, b| a > b).is_some()
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use std::collections::BTreeSet;

    /// Every distinct arrangement of `items`, sorted: the oracle (by brute-force recursion).
    fn all_distinct_sorted(items: &[u8]) -> Vec<Vec<u8>> {
        fn rec(rest: &mut Vec<u8>, cur: &mut Vec<u8>, out: &mut BTreeSet<Vec<u8>>) {
            if rest.is_empty() {
                out.insert(cur.clone());
                return;
            }
            for i in 0..rest.len() {
                let x = rest.remove(i);
                cur.push(x);
                rec(rest, cur, out);
                cur.pop();
                rest.insert(i, x);
            }
        }
        let mut out = BTreeSet::new();
        rec(&mut items.to_vec(), &mut Vec::new(), &mut out);
        out.into_iter().collect()
    }

    fn check_multiset(items: &[u8]) {
        let expect = all_distinct_sorted(items);
        let mut v = items.to_vec();
        v.sort();
        let mut seen = vec![v.clone()];
        while next_permutation(&mut v) {
            seen.push(v.clone());
        }
        assert_eq!(seen, expect, "items {items:?}");
        // Wrapped to the first.
        assert_eq!(v, expect[0]);
        // Backwards from the last.
        let mut v = expect.last().unwrap().clone();
        let mut back = vec![v.clone()];
        while prev_permutation(&mut v) {
            back.push(v.clone());
        }
        back.reverse();
        assert_eq!(back, expect);
        assert_eq!(&v, expect.last().unwrap());
    }

    #[test]
    fn small_cases() {
        let mut e: [u8; 0] = [];
        assert!(!next_permutation(&mut e));
        assert!(!prev_permutation(&mut e));
        let mut one = [7];
        assert!(!next_permutation(&mut one));
        assert!(!prev_permutation(&mut one));
        assert_eq!(one, [7]);
        let mut same = [4, 4, 4];
        assert!(!next_permutation(&mut same));
        assert!(!prev_permutation(&mut same));
        assert_eq!(same, [4, 4, 4]);
    }

    #[test]
    fn multisets_without_repeats() {
        for items in [
            &[0u8, 0, 1][..],
            &[0, 0, 1, 1],
            &[2, 1, 2, 1, 0],
            &[0, 0, 0, 1, 1, 2],
            &[3, 3, 3, 3],
            &[0, 1, 2, 3, 4, 5],
            &[5, 5, 1, 1, 2, 2, 0],
        ] {
            check_multiset(items);
        }
    }

    #[test]
    fn pivot_reports_first_changed_position() {
        let mut v: Vec<u8> = vec![0, 1, 1, 2, 3];
        loop {
            let before = v.clone();
            match next_permutation_pivot(&mut v) {
                Some(p) => {
                    assert_eq!(before[..p], v[..p]);
                    assert_ne!(before[p], v[p]);
                }
                None => break,
            }
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(64))]
        #[test]
        fn prop_multiset(items in proptest::collection::vec(0u8..4, 0..7)) {
            check_multiset(&items);
        }

        #[test]
        fn prop_next_then_prev_is_identity(items in proptest::collection::vec(0u8..5, 0..12)) {
            let mut v = items.clone();
            let moved = next_permutation(&mut v);
            let back = prev_permutation(&mut v);
            prop_assert_eq!(moved, back);
            prop_assert_eq!(v, items);
        }
    }
}
