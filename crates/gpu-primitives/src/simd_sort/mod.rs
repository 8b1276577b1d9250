//! Vectorized quicksort of ordered bits (`u32`, `u64`) on the CPU, chosen at run time.
//!
//! On x86-64 with AVX-512F (detected once by `is_x86_feature_detected!`) [`avx512`] sorts in
//! place: a vectorized partition and in-register bitonic networks for small ranges, the two
//! sides of large partitions on separate rayon threads. Elsewhere [`sort_unsigned`] returns
//! `false` and the caller uses the LSD radix sort (`radix_cpu`), which is portable.
//!
//! Signed integers are sorted as themselves (signed compares); unsigned integers and the
//! ordered bits of floats as unsigned.
//!
//! Only key sorts use it: equal ordered bits are identical keys, so an unstable sort cannot be
//! told from a stable one. Pair sorts and argsort (stable) stay on the radix sort.

#[cfg(target_arch = "x86_64")]
mod avx512;

use crate::key::{RadixBits, SortKey};

/// Whether this CPU runs the vectorized sort.
pub(crate) fn available() -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        std::is_x86_feature_detected!("avx512f") && std::is_x86_feature_detected!("popcnt")
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        false
    }
}

/// Sorts `keys` ascending with the vectorized quicksort when this CPU has it (on all rayon
/// threads when `parallel`); returns `false`, leaving `keys` untouched, when it does not.
pub(crate) fn sort_unsigned<B: RadixBits>(keys: &mut [B], parallel: bool) -> bool {
    if size_of::<B>() == 4 {
        // SAFETY: B is u32 (RadixBits is sealed to u32 and u64, and this one is 4 bytes).
        run::<u32>(unsafe { cast(keys) }, parallel)
    } else {
        // SAFETY: B is u64 (sealed to u32 and u64, and this one is not 4 bytes).
        run::<u64>(unsafe { cast(keys) }, parallel)
    }
}

/// Sorts signed integer keys (`K::KIND == 1`: `i32` or `i64`) in their own order, without the
/// ordered-bits transform; `false` (keys untouched) without the vectorized sort.
pub(crate) fn sort_signed<K: SortKey>(keys: &mut [K], parallel: bool) -> bool {
    assert_eq!(K::KIND, 1, "signed keys only");
    if size_of::<K>() == 4 {
        // SAFETY: a 4-byte signed SortKey is i32 (the trait is sealed).
        run::<i32>(unsafe { cast(keys) }, parallel)
    } else {
        // SAFETY: an 8-byte signed SortKey is i64 (the trait is sealed).
        run::<i64>(unsafe { cast(keys) }, parallel)
    }
}

/// `keys` as a slice of `T`.
///
/// # Safety
/// `S` must be `T` (the callers check it through the sealed key traits).
unsafe fn cast<S, T>(keys: &mut [S]) -> &mut [T] {
    debug_assert!(size_of::<S>() == size_of::<T>() && align_of::<S>() == align_of::<T>());
    // SAFETY: S is T (the caller's contract); the borrow is exclusive.
    unsafe { std::slice::from_raw_parts_mut(keys.as_mut_ptr().cast::<T>(), keys.len()) }
}

#[cfg(target_arch = "x86_64")]
fn run<T: avx512::Lane>(keys: &mut [T], parallel: bool) -> bool {
    if !available() {
        return false;
    }
    let depth = 2 * (usize::BITS - keys.len().leading_zeros());
    // Below 2^17 keys (a sort of well under a millisecond) waking a second thread costs more
    // than it saves: 10^5 u32 on 2 threads 0.177 ms, on one 0.161 ms.
    let parallel = parallel
        && keys.len() >= crate::radix_cpu::PARALLEL_SORT
        && rayon::current_num_threads() > 1;
    // SAFETY: AVX-512F and POPCNT were detected above.
    unsafe { avx512::quicksort(keys, depth, parallel) };
    true
}

#[cfg(not(target_arch = "x86_64"))]
fn run<T>(_keys: &mut [T], _parallel: bool) -> bool {
    false
}

/// Sorts each `chunk` keys of `keys` by the network alone (for timing); `false` without
/// AVX-512 or when `chunk` is larger than the largest network.
pub(crate) fn sort_chunks<B: RadixBits>(keys: &mut [B], chunk: usize) -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        fn each<T: avx512::Lane>(keys: &mut [T], chunk: usize) -> bool {
            if !available() || chunk == 0 || chunk > avx512::small_max::<T>() {
                return false;
            }
            for c in keys.chunks_mut(chunk) {
                // SAFETY: AVX-512F and POPCNT were detected above; `c` fits the network.
                unsafe { avx512::sort_small(c) };
            }
            true
        }
        if size_of::<B>() == 4 {
            // SAFETY: B is u32 (sealed to u32 and u64, and this one is 4 bytes).
            each::<u32>(unsafe { cast(keys) }, chunk)
        } else {
            // SAFETY: B is u64.
            each::<u64>(unsafe { cast(keys) }, chunk)
        }
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        let _ = (keys, chunk);
        false
    }
}

/// One partition of `keys` at `pivot` (for timing): the split point, `None` without AVX-512.
pub(crate) fn partition_u32(keys: &mut [u32], pivot: u32) -> Option<usize> {
    if !available() || keys.len() < 32 {
        return None;
    }
    #[cfg(target_arch = "x86_64")]
    {
        // SAFETY: AVX-512F and POPCNT were detected above; at least two registers of keys.
        Some(unsafe { avx512::partition(keys, pivot) }.0)
    }
    #[cfg(not(target_arch = "x86_64"))]
    None
}

#[cfg(all(test, target_arch = "x86_64"))]
mod tests {
    use super::avx512::{self, Lane};

    fn lcg(n: usize, seed: u64) -> impl Iterator<Item = u64> {
        let mut s = seed;
        (0..n).map(move |_| {
            s = s
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            s ^ (s >> 29)
        })
    }

    /// Adversarial inputs of length `n` over `T`: random, few distinct, all equal, sorted,
    /// reversed, organ pipe, only the two largest values, only 0 and MAX, sawtooth.
    fn inputs<T: Lane>(n: usize, from: impl Fn(u64) -> T) -> Vec<Vec<T>> {
        let random: Vec<T> = lcg(n, n as u64 + 7).map(&from).collect();
        let few: Vec<T> = lcg(n, 3).map(|x| from(x % 3)).collect();
        let mut sorted = random.clone();
        sorted.sort_unstable();
        let reversed: Vec<T> = sorted.iter().rev().copied().collect();
        let pipe: Vec<T> = (0..n).map(|i| from(i.min(n - i) as u64)).collect();
        let top: Vec<T> = lcg(n, 5)
            .map(|x| {
                if x % 2 == 0 {
                    T::MAX
                } else {
                    from(u64::MAX - 1)
                }
            })
            .collect();
        let ends: Vec<T> = lcg(n, 9)
            .map(|x| if x % 5 == 0 { T::MAX } else { from(0) })
            .collect();
        let saw: Vec<T> = (0..n).map(|i| from((i % 17) as u64)).collect();
        vec![
            random,
            few,
            vec![from(42); n],
            sorted,
            reversed,
            pipe,
            top,
            ends,
            saw,
        ]
    }

    fn sizes<T: Lane>() -> Vec<usize> {
        let l = T::LANES;
        let mut s = vec![0, 1, 2, 3, 5, 1000, 4099, 20_000, 70_001, 140_000];
        for k in [1, 2, 4, 8, 16, 32] {
            s.extend([k * l - 1, k * l, k * l + 1]);
        }
        s
    }

    fn check_quicksort<T: Lane + std::fmt::Debug>(from: impl Fn(u64) -> T) {
        if !super::available() {
            eprintln!("no AVX-512 here: the vectorized sort is not tested");
            return;
        }
        for n in sizes::<T>() {
            for (case, input) in inputs(n, &from).into_iter().enumerate() {
                let mut expect = input.clone();
                expect.sort_unstable();
                for parallel in [false, true] {
                    let mut v = input.clone();
                    // SAFETY: AVX-512F is available (checked above).
                    unsafe { avx512::quicksort(&mut v, 64, parallel) };
                    assert!(v == expect, "n = {n}, case {case}, parallel {parallel}");
                }
                // depth 1: the first partition, then sort_unstable
                let mut v = input.clone();
                // SAFETY: as above.
                unsafe { avx512::quicksort(&mut v, 1, false) };
                assert!(v == expect, "n = {n}, case {case}, depth 1");
            }
        }
    }

    #[test]
    fn quicksort_u32_matches_sort_unstable() {
        check_quicksort::<u32>(|x| x as u32);
        check_quicksort::<u32>(|x| (x >> 40) as u32); // small values: many repeats
    }

    #[test]
    fn quicksort_u64_matches_sort_unstable() {
        check_quicksort::<u64>(|x| x);
        check_quicksort::<u64>(|x| x >> 50);
    }

    fn check_small<T: Lane + std::fmt::Debug>(from: impl Fn(u64) -> T) {
        if !super::available() {
            return;
        }
        for n in 0..=avx512::small_max::<T>() {
            for input in inputs(n, &from) {
                let mut expect = input.clone();
                expect.sort_unstable();
                let mut v = input.clone();
                // SAFETY: AVX-512F is available (checked above); n <= small_max.
                unsafe { avx512::sort_small(&mut v) };
                assert!(v == expect, "network, n = {n}");
            }
        }
    }

    #[test]
    fn quicksort_signed_matches_sort_unstable() {
        check_quicksort::<i32>(|x| x as i32);
        check_quicksort::<i32>(|x| (x >> 40) as i32 - 7); // around zero, repeated
        check_quicksort::<i64>(|x| x as i64);
        check_quicksort::<i64>(|x| (x >> 50) as i64 - 3);
    }

    #[test]
    fn networks_sort_every_small_length() {
        check_small::<u32>(|x| x as u32);
        check_small::<u64>(|x| x);
        check_small::<i32>(|x| x as i32);
        check_small::<i64>(|x| x as i64);
    }

    fn check_partition<T: Lane + std::fmt::Debug>(from: impl Fn(u64) -> T) {
        if !super::available() {
            return;
        }
        for n in [
            2 * T::LANES,
            2 * T::LANES + 1,
            3 * T::LANES - 1,
            3 * T::LANES,
            1000,
            1001,
        ] {
            for input in inputs(n, &from) {
                for pivot in [input[0], input[n / 2], T::MAX, from(0), from(1)] {
                    let mut v = input.clone();
                    // SAFETY: AVX-512F is available; n >= 2 LANES.
                    let (m, max) = unsafe { avx512::partition(&mut v, pivot) };
                    assert!(v[..m].iter().all(|&x| x < pivot), "n = {n}");
                    assert!(v[m..].iter().all(|&x| x >= pivot), "n = {n}");
                    assert_eq!(max, (*input.iter().max().unwrap()).max(pivot));
                    let (mut a, mut b) = (v, input.clone());
                    a.sort_unstable();
                    b.sort_unstable();
                    assert!(a == b, "partition is a permutation, n = {n}");
                }
            }
        }
    }

    #[test]
    fn partition_splits_at_the_pivot_and_keeps_every_key() {
        check_partition::<u32>(|x| x as u32);
        check_partition::<u32>(|x| (x % 4) as u32);
        check_partition::<u64>(|x| x);
        check_partition::<u64>(|x| x % 4);
        check_partition::<i64>(|x| x as i64);
        check_partition::<i32>(|x| (x % 5) as i32 - 2);
    }
}
