//! Lexicographic rank and unrank of permutations (factorial number system).
//!
//! The rank of a permutation of `n` distinct elements is its 0-based position in the
//! lexicographic order of all `n!` permutations of those elements. Ranks are `u64` up to
//! `n = 20` (`20! < 2^64 < 21!`) and `u128` up to `n = 34` (`34! < 2^128 < 35!`).
//!
//! The fast functions count "smaller unused elements" with a Fenwick tree, `O(n log n)`;
//! the `_reference` functions do it with the plain `O(n^2)` scan and are the test oracle.

use crate::PermError;

/// Largest `n` whose `n!` permutations have `u64` ranks (`20! = 2,432,902,008,176,640,000`).
pub const MAX_N_U64: usize = 20;
/// Largest `n` whose `n!` permutations have `u128` ranks (`34! ~ 2.95e38`).
pub const MAX_N_U128: usize = 34;

/// `n!` as a `u64`, or `None` when it does not fit (`n > 20`).
///
/// # Examples
/// ```
/// assert_eq!(combinatorics::factorial_u64(12), Some(479_001_600));
/// assert_eq!(combinatorics::factorial_u64(21), None);
/// ```
pub fn factorial_u64(n: usize) -> Option<u64> {
    (1..=n as u64).try_fold(1u64, |acc, i| acc.checked_mul(i))
}

/// `n!` as a `u128`, or `None` when it does not fit (`n > 34`).
///
/// # Examples
/// ```
/// assert!(combinatorics::factorial_u128(34).is_some());
/// assert_eq!(combinatorics::factorial_u128(35), None);
/// ```
pub fn factorial_u128(n: usize) -> Option<u128> {
    (1..=n as u128).try_fold(1u128, |acc, i| acc.checked_mul(i))
}

/// A Fenwick (binary indexed) tree of 0/1 counts over positions `0..n`, all present at first.
struct Fenwick {
    tree: Vec<u32>,
    /// Highest power of two <= n (for the binary-lifting search).
    top: usize,
}

impl Fenwick {
    /// All `n` positions present, built in `O(n)`.
    fn full(n: usize) -> Self {
        let mut tree = vec![0u32; n + 1];
        for i in 1..=n {
            tree[i] += 1;
            let parent = i + (i & i.wrapping_neg());
            if parent <= n {
                tree[parent] += tree[i];
            }
        }
        let top = if n == 0 {
            0
        } else {
            1 << (usize::BITS - 1 - n.leading_zeros())
        };
        Fenwick { tree, top }
    }

    /// Number of present positions in `0..i`.
    fn prefix(&self, mut i: usize) -> u32 {
        let mut s = 0;
        while i > 0 {
            s += self.tree[i];
            i &= i - 1;
        }
        s
    }

    /// Marks position `i` absent.
    fn remove(&mut self, i: usize) {
        let mut j = i + 1;
        while j < self.tree.len() {
            self.tree[j] -= 1;
            j += j & j.wrapping_neg();
        }
    }

    /// The position of the `d`-th (0-based) present position; `d` must be below the count.
    fn select(&self, mut d: u32) -> usize {
        let mut pos = 0;
        let mut step = self.top;
        while step > 0 {
            let next = pos + step;
            if next < self.tree.len() && self.tree[next] <= d {
                pos = next;
                d -= self.tree[next];
            }
            step >>= 1;
        }
        pos
    }
}

/// For each position, the rank of its element among all elements (0..n), or the duplicate.
fn relative_order<T: Ord>(perm: &[T]) -> Result<Vec<usize>, PermError> {
    let mut idx: Vec<usize> = (0..perm.len()).collect();
    idx.sort_by(|&a, &b| perm[a].cmp(&perm[b]));
    for w in idx.windows(2) {
        if perm[w[0]] == perm[w[1]] {
            return Err(PermError::DuplicateElement {
                first: w[0].min(w[1]),
                second: w[0].max(w[1]),
            });
        }
    }
    let mut order = vec![0usize; perm.len()];
    for (r, &i) in idx.iter().enumerate() {
        order[i] = r;
    }
    Ok(order)
}

fn check_n(n: usize, max: usize, bits: u32) -> Result<(), PermError> {
    if n > max {
        Err(PermError::TooLarge { n, max, bits })
    } else {
        Ok(())
    }
}

/// Lehmer code (factorial-base digits) with a Fenwick tree: digit i counts the unused
/// elements smaller than the i-th.
fn lehmer_fenwick(order: &[usize]) -> Vec<u32> {
    let mut fw = Fenwick::full(order.len());
    order
        .iter()
        .map(|&o| {
            let d = fw.prefix(o);
            fw.remove(o);
            d
        })
        .collect()
}

fn lehmer_quadratic(order: &[usize]) -> Vec<u32> {
    (0..order.len())
        .map(|i| order[i + 1..].iter().filter(|&&o| o < order[i]).count() as u32)
        .collect()
}

/// Horner evaluation of factorial-base digits: rank = sum d_i (n-1-i)!.
fn digits_to_rank(digits: &[u32]) -> u128 {
    let n = digits.len() as u128;
    digits
        .iter()
        .enumerate()
        .fold(0u128, |r, (i, &d)| r * (n - i as u128) + d as u128)
}

/// Factorial-base digits of `rank` (which must be below `n!`).
fn rank_to_digits(n: usize, mut rank: u128) -> Vec<u32> {
    let mut digits = vec![0u32; n];
    for i in (0..n).rev() {
        let base = (n - i) as u128;
        digits[i] = (rank % base) as u32;
        rank /= base;
    }
    digits
}

/// Lexicographic rank of `perm` among the permutations of its (distinct) elements, as `u64`.
///
/// Elements may be of any ordered type; only their relative order matters, so
/// `["b", "a", "c"]` has the same rank (2) as `[1, 0, 2]`.
///
/// # Complexity
/// `O(n log n)`: a sort and a Fenwick tree.
///
/// # Errors
/// [`PermError::TooLarge`] when `n > 20`; [`PermError::DuplicateElement`] when two elements
/// are equal.
///
/// # Examples
/// ```
/// use combinatorics::rank_permutation;
/// assert_eq!(rank_permutation(&[0, 1, 2]).unwrap(), 0);
/// assert_eq!(rank_permutation(&[2, 1, 0]).unwrap(), 5);
/// assert_eq!(rank_permutation(&['b', 'a', 'c']).unwrap(), 2);
/// ```
pub fn rank_permutation<T: Ord>(perm: &[T]) -> Result<u64, PermError> {
    check_n(perm.len(), MAX_N_U64, 64)?;
    Ok(digits_to_rank(&lehmer_fenwick(&relative_order(perm)?)) as u64)
}

/// Lexicographic rank of `perm` as `u128` (up to `n = 34`).
///
/// # Complexity
/// `O(n log n)`.
///
/// # Errors
/// [`PermError::TooLarge`] when `n > 34`; [`PermError::DuplicateElement`].
///
/// # Examples
/// ```
/// use combinatorics::{rank_permutation_u128, factorial_u128};
/// let last: Vec<u32> = (0..34).rev().collect();
/// assert_eq!(rank_permutation_u128(&last).unwrap(), factorial_u128(34).unwrap() - 1);
/// ```
pub fn rank_permutation_u128<T: Ord>(perm: &[T]) -> Result<u128, PermError> {
    check_n(perm.len(), MAX_N_U128, 128)?;
    Ok(digits_to_rank(&lehmer_fenwick(&relative_order(perm)?)))
}

/// The plain `O(n^2)` rank (the test oracle of [`rank_permutation_u128`]).
///
/// # Complexity
/// `O(n^2)`.
///
/// # Errors
/// As [`rank_permutation_u128`].
///
/// # Examples
/// ```
/// assert_eq!(combinatorics::rank_permutation_reference(&[1, 0, 2]).unwrap(), 2);
/// ```
pub fn rank_permutation_reference<T: Ord>(perm: &[T]) -> Result<u128, PermError> {
    check_n(perm.len(), MAX_N_U128, 128)?;
    // Own duplicate check by pairs, independent of the sort in `relative_order`.
    for i in 0..perm.len() {
        for j in i + 1..perm.len() {
            if perm[i] == perm[j] {
                return Err(PermError::DuplicateElement {
                    first: i,
                    second: j,
                });
            }
        }
    }
    let order: Vec<usize> = perm
        .iter()
        .map(|x| perm.iter().filter(|y| *y < x).count())
        .collect();
    Ok(digits_to_rank(&lehmer_quadratic(&order)))
}

fn check_rank(n: usize, rank: u128, total: Option<u128>) -> Result<(), PermError> {
    match total {
        Some(t) if rank < t => Ok(()),
        _ => Err(PermError::RankOutOfRange { rank, n }),
    }
}

/// The permutation of `0..n` with lexicographic rank `rank` (`u64`, up to `n = 20`).
///
/// # Complexity
/// `O(n log n)` (Fenwick-tree selection).
///
/// # Errors
/// [`PermError::TooLarge`] when `n > 20`; [`PermError::RankOutOfRange`] when `rank >= n!`
/// (never wraps).
///
/// # Examples
/// ```
/// use combinatorics::unrank_permutation;
/// assert_eq!(unrank_permutation(3, 3).unwrap(), vec![1, 2, 0]);
/// assert!(unrank_permutation(3, 6).is_err());
/// ```
pub fn unrank_permutation(n: usize, rank: u64) -> Result<Vec<usize>, PermError> {
    check_n(n, MAX_N_U64, 64)?;
    check_rank(n, rank as u128, factorial_u128(n))?;
    Ok(unrank_fenwick(n, rank as u128))
}

/// The permutation of `0..n` with lexicographic rank `rank` (`u128`, up to `n = 34`).
///
/// # Complexity
/// `O(n log n)`.
///
/// # Errors
/// [`PermError::TooLarge`] when `n > 34`; [`PermError::RankOutOfRange`] when `rank >= n!`.
///
/// # Examples
/// ```
/// use combinatorics::{unrank_permutation_u128, rank_permutation_u128};
/// let p = unrank_permutation_u128(30, 1u128 << 100).unwrap();
/// assert_eq!(rank_permutation_u128(&p).unwrap(), 1u128 << 100);
/// ```
pub fn unrank_permutation_u128(n: usize, rank: u128) -> Result<Vec<usize>, PermError> {
    check_n(n, MAX_N_U128, 128)?;
    check_rank(n, rank, factorial_u128(n))?;
    Ok(unrank_fenwick(n, rank))
}

/// The plain `O(n^2)` unrank (the test oracle of [`unrank_permutation_u128`]).
///
/// # Complexity
/// `O(n^2)`.
///
/// # Errors
/// As [`unrank_permutation_u128`].
///
/// # Examples
/// ```
/// assert_eq!(combinatorics::unrank_permutation_reference(3, 5).unwrap(), vec![2, 1, 0]);
/// ```
pub fn unrank_permutation_reference(n: usize, rank: u128) -> Result<Vec<usize>, PermError> {
    check_n(n, MAX_N_U128, 128)?;
    check_rank(n, rank, factorial_u128(n))?;
    let mut unused: Vec<usize> = (0..n).collect();
    Ok(rank_to_digits(n, rank)
        .into_iter()
        .map(|d| unused.remove(d as usize))
        .collect())
}

/// The elements of `items` arranged as the permutation of rank `rank`, where rank 0 is `items`
/// in the order given (so pass them sorted to get the usual lexicographic order).
///
/// # Complexity
/// `O(n log n)` plus `n` clones.
///
/// # Errors
/// As [`unrank_permutation_u128`].
///
/// # Examples
/// ```
/// let p = combinatorics::unrank_elements(&['a', 'b', 'c'], 3).unwrap();
/// assert_eq!(p, vec!['b', 'c', 'a']);
/// ```
pub fn unrank_elements<T: Clone>(items: &[T], rank: u128) -> Result<Vec<T>, PermError> {
    Ok(unrank_permutation_u128(items.len(), rank)?
        .into_iter()
        .map(|i| items[i].clone())
        .collect())
}

/// Unrank without checks (`n <= 34`, `rank < n!`).
pub(crate) fn unrank_fenwick(n: usize, rank: u128) -> Vec<usize> {
    let mut fw = Fenwick::full(n);
    rank_to_digits(n, rank)
        .into_iter()
        .map(|d| {
            let e = fw.select(d);
            fw.remove(e);
            e
        })
        .collect()
}

/// Unrank of a `u64` rank into bytes (`n <= 20`, `rank < n!`), for batch starts.
pub(crate) fn unrank_bytes(n: usize, rank: u64, out: &mut [u8]) {
    debug_assert!(n <= MAX_N_U64 && out.len() == n);
    // n <= 20: a 32-bit mask of unused elements beats a tree.
    let mut digits = [0u8; MAX_N_U64];
    let mut r = rank;
    for i in (0..n).rev() {
        let base = (n - i) as u64;
        digits[i] = (r % base) as u8;
        r /= base;
    }
    let mut unused: u32 = (1u32 << n) - 1;
    for (o, &d) in out.iter_mut().zip(&digits[..n]) {
        let mut m = unused;
        for _ in 0..d {
            m &= m - 1;
        }
        let e = m.trailing_zeros();
        unused &= !(1 << e);
        *o = e as u8;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::next_permutation;
    use proptest::prelude::*;
    use rand::{Rng, SeedableRng, rngs::StdRng};

    #[test]
    fn factorials() {
        assert_eq!(factorial_u64(0), Some(1));
        assert_eq!(factorial_u64(20), Some(2_432_902_008_176_640_000));
        assert_eq!(factorial_u64(21), None);
        assert!(factorial_u128(34).is_some());
        assert_eq!(factorial_u128(35), None);
    }

    #[test]
    fn all_permutations_up_to_8_round_trip_in_lexicographic_order() {
        for n in 0..=8usize {
            let mut p: Vec<usize> = (0..n).collect();
            let mut bytes = vec![0u8; n];
            let mut rank = 0u64;
            loop {
                assert_eq!(rank_permutation(&p).unwrap(), rank, "n={n} p={p:?}");
                assert_eq!(rank_permutation_u128(&p).unwrap(), rank as u128);
                assert_eq!(rank_permutation_reference(&p).unwrap(), rank as u128);
                assert_eq!(unrank_permutation(n, rank).unwrap(), p);
                assert_eq!(unrank_permutation_reference(n, rank as u128).unwrap(), p);
                unrank_bytes(n, rank, &mut bytes);
                assert!(bytes.iter().zip(&p).all(|(&b, &q)| b as usize == q));
                rank += 1;
                if !next_permutation(&mut p) {
                    break;
                }
            }
            assert_eq!(rank, factorial_u64(n).unwrap(), "n={n}");
            assert!(matches!(
                unrank_permutation(n, rank),
                Err(PermError::RankOutOfRange { .. })
            ));
        }
    }

    #[test]
    fn random_ranks_up_to_34() {
        let mut rng = StdRng::seed_from_u64(5);
        for n in 0..=MAX_N_U128 {
            let total = factorial_u128(n).unwrap();
            for _ in 0..40 {
                let r = rng.random_range(0..total);
                let p = unrank_permutation_u128(n, r).unwrap();
                assert_eq!(p, unrank_permutation_reference(n, r).unwrap());
                assert_eq!(rank_permutation_u128(&p).unwrap(), r);
                assert_eq!(rank_permutation_reference(&p).unwrap(), r);
                // Lexicographic order: the successor has rank r + 1.
                let mut q = p.clone();
                if next_permutation(&mut q) {
                    assert_eq!(rank_permutation_u128(&q).unwrap(), r + 1);
                } else {
                    assert_eq!(r, total - 1);
                }
            }
            // The ends.
            assert_eq!(
                unrank_permutation_u128(n, 0).unwrap(),
                (0..n).collect::<Vec<_>>()
            );
            assert_eq!(
                unrank_permutation_u128(n, total - 1).unwrap(),
                (0..n).rev().collect::<Vec<_>>()
            );
            assert!(matches!(
                unrank_permutation_u128(n, total),
                Err(PermError::RankOutOfRange { .. })
            ));
        }
    }

    #[test]
    fn errors_not_wraps() {
        let big: Vec<u32> = (0..21).collect();
        assert!(matches!(
            rank_permutation(&big),
            Err(PermError::TooLarge {
                n: 21,
                max: 20,
                bits: 64
            })
        ));
        assert_eq!(rank_permutation_u128(&big).unwrap(), 0);
        let huge: Vec<u32> = (0..35).collect();
        assert!(matches!(
            rank_permutation_u128(&huge),
            Err(PermError::TooLarge { .. })
        ));
        assert!(matches!(
            rank_permutation_reference(&huge),
            Err(PermError::TooLarge { .. })
        ));
        assert!(matches!(
            unrank_permutation(21, 0),
            Err(PermError::TooLarge { .. })
        ));
        assert!(matches!(
            unrank_permutation_u128(35, 0),
            Err(PermError::TooLarge { .. })
        ));
        assert!(matches!(
            unrank_permutation(20, u64::MAX),
            Err(PermError::RankOutOfRange { .. })
        ));
        assert!(matches!(
            unrank_permutation_u128(34, u128::MAX),
            Err(PermError::RankOutOfRange { .. })
        ));
        assert!(matches!(
            rank_permutation(&[3, 1, 3]),
            Err(PermError::DuplicateElement {
                first: 0,
                second: 2
            })
        ));
        assert!(matches!(
            rank_permutation_reference(&[3, 1, 3]),
            Err(PermError::DuplicateElement {
                first: 0,
                second: 2
            })
        ));
        // 20 elements, last permutation: the largest u64 rank.
        let last: Vec<u8> = (0..20).rev().collect();
        assert_eq!(
            rank_permutation(&last).unwrap(),
            factorial_u64(20).unwrap() - 1
        );
    }

    #[test]
    fn any_ordered_elements() {
        let words = ["pear", "apple", "fig"];
        // sorted: apple, fig, pear -> pear apple fig is [2, 0, 1] -> rank 4
        assert_eq!(rank_permutation(&words).unwrap(), 4);
        let sorted = ["apple", "fig", "pear"];
        assert_eq!(unrank_elements(&sorted, 4).unwrap(), words);
        let floats_as_bits: Vec<i64> = vec![-5, 100, -7, 0];
        assert_eq!(
            rank_permutation(&floats_as_bits).unwrap(),
            rank_permutation(&[1, 3, 0, 2]).unwrap()
        );
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(200))]
        #[test]
        fn prop_round_trip(n in 0usize..=34, seed in any::<u64>()) {
            let total = factorial_u128(n).unwrap();
            let mut rng = StdRng::seed_from_u64(seed);
            let r = rng.random_range(0..total);
            let p = unrank_permutation_u128(n, r).unwrap();
            prop_assert_eq!(&p, &unrank_permutation_reference(n, r).unwrap());
            prop_assert_eq!(rank_permutation_u128(&p).unwrap(), r);
            if n <= 20 {
                let mut b = vec![0u8; n];
                unrank_bytes(n, r as u64, &mut b);
                prop_assert!(b.iter().zip(&p).all(|(&x, &y)| x as usize == y));
            }
        }
    }
}
