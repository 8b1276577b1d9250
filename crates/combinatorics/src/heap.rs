//! Heap's algorithm: every permutation of `n` items, each obtained from the previous one by a
//! single swap, for any `n` (no fixed-size cap).

use std::ops::ControlFlow;

/// Iterator over all `n!` permutations of some items by Heap's algorithm (B. R. Heap, 1963).
///
/// The order is Heap's, not lexicographic: consecutive permutations differ by one swap.
/// Equal items are not merged (a multiset of `n` items still yields `n!` arrangements).
/// `n = 0` yields one empty permutation.
///
/// Iterating clones each permutation into a `Vec`; [`HeapPermutations::next_slice`] lends the
/// current permutation instead, without allocating.
///
/// # Complexity
/// `O(1)` amortised swaps per permutation, `O(n)` extra memory.
///
/// # Examples
/// ```
/// use combinatorics::HeapPermutations;
/// let all: Vec<Vec<char>> = HeapPermutations::new(vec!['a', 'b', 'c']).collect();
/// assert_eq!(all.len(), 6);
/// assert_eq!(all[0], ['a', 'b', 'c']);
/// assert_eq!(all[1], ['b', 'a', 'c']);
/// ```
#[derive(Debug, Clone)]
pub struct HeapPermutations<T> {
    items: Vec<T>,
    c: Vec<usize>,
    i: usize,
    started: bool,
}

impl<T> HeapPermutations<T> {
    /// Starts at `items` as given (the first permutation produced).
    pub fn new(items: Vec<T>) -> Self {
        let n = items.len();
        HeapPermutations {
            items,
            c: vec![0; n],
            i: 1,
            started: false,
        }
    }

    /// Advances and lends the next permutation, or `None` when all have been produced.
    pub fn next_slice(&mut self) -> Option<&[T]> {
        if !self.started {
            self.started = true;
            return Some(&self.items);
        }
        let n = self.items.len();
        while self.i < n {
            let i = self.i;
            if self.c[i] < i {
                if i.is_multiple_of(2) {
                    self.items.swap(0, i);
                } else {
                    self.items.swap(self.c[i], i);
                }
                self.c[i] += 1;
                self.i = 1;
                return Some(&self.items);
            }
            self.c[i] = 0;
            self.i += 1;
        }
        None
    }
}

impl<T: Clone> Iterator for HeapPermutations<T> {
    type Item = Vec<T>;

    fn next(&mut self) -> Option<Vec<T>> {
        self.next_slice().map(<[T]>::to_vec)
    }
}

/// Calls `visit` on every permutation of `items` in Heap's order, in place (one swap between
/// calls), until `visit` returns [`ControlFlow::Break`]. Returns the break value, or
/// `Continue(())` after all `n!` permutations. On completion `items` holds the last
/// permutation visited.
///
/// # Complexity
/// `O(n!)` swaps and calls, `O(n)` extra memory.
///
/// # Examples
/// ```
/// use std::ops::ControlFlow;
/// use combinatorics::heap_visit;
/// let mut items = [1, 2, 3, 4];
/// let mut count = 0;
/// let _ = heap_visit(&mut items, |p| {
///     count += 1;
///     ControlFlow::<()>::Continue(())
/// });
/// assert_eq!(count, 24);
/// // Stop at the first permutation that starts with 4.
/// let found = heap_visit(&mut items, |p| {
///     if p[0] == 4 { ControlFlow::Break(p.to_vec()) } else { ControlFlow::Continue(()) }
/// });
/// assert!(matches!(found, ControlFlow::Break(ref v) if v[0] == 4));
/// ```
pub fn heap_visit<T, B>(
    items: &mut [T],
    mut visit: impl FnMut(&[T]) -> ControlFlow<B>,
) -> ControlFlow<B> {
    let n = items.len();
    visit(items)?;
    let mut c = vec![0usize; n];
    let mut i = 1;
    while i < n {
        if c[i] < i {
            if i.is_multiple_of(2) {
                items.swap(0, i);
            } else {
                items.swap(c[i], i);
            }
            visit(items)?;
            c[i] += 1;
            i = 1;
        } else {
            c[i] = 0;
            i += 1;
        }
    }
    ControlFlow::Continue(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{factorial_u64, rank_permutation};

    #[test]
    fn every_permutation_exactly_once() {
        for n in 0..=8usize {
            let total = factorial_u64(n).unwrap() as usize;
            let mut seen = vec![false; total];
            let mut prev: Option<Vec<usize>> = None;
            let mut count = 0;
            for p in HeapPermutations::new((0..n).collect::<Vec<_>>()) {
                let r = rank_permutation(&p).unwrap() as usize;
                assert!(!seen[r], "n={n}: {p:?} twice");
                seen[r] = true;
                if let Some(q) = &prev {
                    let diff = p.iter().zip(q).filter(|(a, b)| a != b).count();
                    assert_eq!(diff, 2, "consecutive permutations differ by one swap");
                }
                prev = Some(p);
                count += 1;
            }
            assert_eq!(count, total, "n={n}");
            assert!(seen.iter().all(|&s| s));

            // The visitor visits the same sequence.
            let mut items: Vec<usize> = (0..n).collect();
            let mut visited = Vec::new();
            let flow = heap_visit(&mut items, |p| {
                visited.push(p.to_vec());
                ControlFlow::<()>::Continue(())
            });
            assert_eq!(flow, ControlFlow::Continue(()));
            let via_iter: Vec<Vec<usize>> =
                HeapPermutations::new((0..n).collect::<Vec<_>>()).collect();
            assert_eq!(visited, via_iter);
        }
    }

    #[test]
    fn no_size_cap() {
        // 17 > 16 items: visit the first million and stop.
        let mut items: Vec<u32> = (0..17).collect();
        let mut count = 0u64;
        let flow = heap_visit(&mut items, |_| {
            count += 1;
            if count == 1_000_000 {
                ControlFlow::Break(count)
            } else {
                ControlFlow::Continue(())
            }
        });
        assert_eq!(flow, ControlFlow::Break(1_000_000));
        let mut it = HeapPermutations::new((0..40u8).collect::<Vec<_>>());
        for _ in 0..10_000 {
            let p = it.next_slice().unwrap();
            assert_eq!(p.len(), 40);
        }
        let mut sorted = it.next_slice().unwrap().to_vec();
        sorted.sort();
        assert_eq!(sorted, (0..40u8).collect::<Vec<_>>());
    }

    #[test]
    fn multiset_items_give_n_factorial_arrangements() {
        let all: Vec<Vec<u8>> = HeapPermutations::new(vec![1, 1, 2]).collect();
        assert_eq!(all.len(), 6);
        assert_eq!(all.iter().filter(|p| **p == [1, 1, 2]).count(), 2);
    }
}
