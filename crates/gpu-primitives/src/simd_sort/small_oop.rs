//! The level of the out-of-place quicksort of small ranges that the AVX2 and AVX-512 paths
//! share: `small_oop_level!`, which each module expands with its own instruction set and
//! sorts, and the scalar pivot it takes.

/// `oop`, one level of a module's out-of-place quicksort of small ranges (its
/// `sort_small_oop`), compiled for `$features`: the `n` keys at `d` are partitioned into `x`,
/// and each side is sorted from there with `y` as the next buffer; the sorted keys go to
/// `out`. `<$g...>` are the generics of the module's sorts, `copy` puts keys in their final
/// place and `past_depth` sorts them there with `slice::sort_unstable` (the depth limit).
macro_rules! small_oop_level {
    ($features:literal, <$($g:ident $(: $b:path)?),*>, copy $copy:expr, past_depth $rest:expr) => {
        /// One level of the out-of-place quicksort of small ranges (see `small_oop_level!`).
        ///
        /// # Safety
        /// The module's instruction set; `n <= SMALL_OOP` keys at `d`; `x` and `y` hold `n`
        /// writable slots each and are different buffers; `x` does not overlap `d`; `out` is
        /// `x`, `y` or a buffer of `n` slots that overlaps neither (`d` may be `out` or `y`).
        #[target_feature(enable = $features)]
        unsafe fn oop<$($g $(: $b)?),*>(
            d: *const T,
            x: *mut T,
            y: *mut T,
            out: *mut T,
            n: usize,
            depth: u32,
        ) {
            // SAFETY: the instruction set is enabled; the ranges follow this function's
            // contract: after the partition the data is in `x`, whose sides are sorted with `y`
            // as the next buffer (at the same offsets, so the sides' ranges stay disjoint).
            unsafe {
                if n <= small_max::<T>() {
                    sort_small_into::<$($g),*>(d, out, n);
                    return;
                }
                if depth == 0 {
                    $rest(d, out, n);
                    return;
                }
                let p = super::small_oop::pivot_small(d, n);
                let (m, max) = partition_into(d, n, x, p);
                if m == 0 {
                    // the pivot is the minimum: split off the keys equal to it
                    let p1 = match p.succ() {
                        Some(p1) if max != p => p1,
                        _ => {
                            $copy(x, out, n); // all equal
                            return;
                        }
                    };
                    let m1 = partition_into(x, n, y, p1).0;
                    $copy(y, out, m1);
                    oop::<$($g),*>(y.add(m1), x.add(m1), y.add(m1), out.add(m1), n - m1, depth - 1);
                    return;
                }
                oop::<$($g),*>(x, y, x, out, m, depth - 1);
                if max == p {
                    $copy(x.add(m), out.add(m), n - m); // all equal to the pivot
                } else {
                    oop::<$($g),*>(x.add(m), y.add(m), x.add(m), out.add(m), n - m, depth - 1);
                }
            }
        }
    };
}

/// A pivot for a small range: the median of three medians of three keys at evenly spaced
/// places (Tukey's ninther), in scalar code: a few compares, where sorting a register of
/// samples is a long chain of shuffles.
///
/// # Safety
/// `n >= 9` readable keys at `p`.
#[inline(always)]
pub(super) unsafe fn pivot_small<T: Ord + Copy>(p: *const T, n: usize) -> T {
    let med3 = |a: T, b: T, c: T| a.max(b).min(a.min(b).max(c));
    // SAFETY: every index `(2k + 1) * n / 18` is below `n`.
    let at = |k: usize| unsafe { *p.add((2 * k + 1) * n / 18) };
    med3(
        med3(at(0), at(1), at(2)),
        med3(at(3), at(4), at(5)),
        med3(at(6), at(7), at(8)),
    )
}
