//! The element and arithmetic types of the native solvers (dense Jonker–Volgenant and the
//! sparse solver): a matrix is read in its own element type ([`Elem`]: `f64`, `f32`, `i64`,
//! `i32`) and solved in a wider arithmetic type ([`Work`]: `f64` for floats, `i64` for
//! integers), so that no `f64` copy of a `float32` or integer matrix is ever made.
//!
//! Integer arithmetic is exact and checked: potentials and distances are kept below
//! [`I64_RANGE`] in magnitude (the solvers test it and give up with [`OutOfRange`] when a
//! value would leave it; the caller then solves in `f64`), entries are at most `2^53`, and the
//! constants below are chosen so that no sum the kernels form can overflow:
//!
//! | value | magnitude |
//! |---|---|
//! | potentials, path lengths (checked) | `< 2^56` |
//! | a tentative distance `base + c - v` with `|base| < 2^57`, `c <= 2^53` | `< 2^58` |
//! | the same with a forbidden entry `c = 2^59` | `>= 2^58 + 2^56`, `< 2^60` |
//! | the initial tentative distance ([`Work::INF`]) | `2^60` |
//! | the same with a scanned column's working potential ([`Work::NEUTRAL`] `= -2^61`) | `> 2^60`, `< 2^62` |
//!
//! So a forbidden entry never looks finite ([`Work::finite`] is `< 2^58`), a scanned column is
//! never updated again (its candidate is above `INF`, and updates need `<`), and nothing
//! reaches `2^63`.
//!
//! Integer matrices beyond that (entries up to the whole `i64` range, or a problem so large
//! that `4 (n + 2)` times its magnitude reaches `2^55`) are solved by the dense solver in
//! `i128`, with the same scheme 44 bits higher: entries `|c| <= 2^64`, potentials checked below
//! [`I128_RANGE`] `= 2^100`, finite below `2^102`, forbidden `2^103`, `INF = 2^104`,
//! `NEUTRAL = -2^105`; nothing reaches `2^127`. Potentials grow to about `4 (n + 1)` times the
//! largest magnitude, below `2^100` for any matrix that fits in memory, so the `i128` solve
//! never leaves its range.

use std::fmt::Debug;
use std::ops::{Add, Neg, Sub};

use crate::AssignmentError;

/// Bound on the magnitude of integer potentials and path lengths (`2^56`).
pub(crate) const I64_RANGE: i64 = 1 << 56;

/// Bound on the magnitude of `i128` potentials and path lengths (`2^100`).
pub(crate) const I128_RANGE: i128 = 1 << 100;

/// A value left the range in which integer arithmetic is exact and overflow-free: solve in
/// `f64` instead.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct OutOfRange;

/// The next row an augmenting row reduction round visits: the row its last step displaced
/// (`current`, then reset to `usize::MAX`), else the next of the round's free rows
/// (`free[*k]`, advancing `k`); `None` when both are exhausted. Shared by the dense and the
/// sparse Jonker-Volgenant, which visit rows in this same order.
pub(crate) fn next_arr_row(current: &mut usize, k: &mut usize, free: &[usize]) -> Option<usize> {
    if *current != usize::MAX {
        Some(std::mem::replace(current, usize::MAX))
    } else if *k < free.len() {
        *k += 1;
        Some(free[*k - 1])
    } else {
        None
    }
}

/// Why a solve of the native solvers (dense Jonker–Volgenant, sparse LAPJVsp) stopped early.
#[derive(Debug)]
pub(crate) enum Stop {
    /// The problem has no solution (or is invalid).
    Error(AssignmentError),
    /// An integer potential or path length left the checked range: solve in a wider type.
    Range,
}

impl From<AssignmentError> for Stop {
    fn from(e: AssignmentError) -> Self {
        Stop::Error(e)
    }
}

impl From<OutOfRange> for Stop {
    fn from(_: OutOfRange) -> Self {
        Stop::Range
    }
}

/// The arithmetic type of a solve: potentials, distances, reduced costs.
pub(crate) trait Work:
    Copy
    + PartialOrd
    + Debug
    + Send
    + Sync
    + Add<Output = Self>
    + Sub<Output = Self>
    + Neg<Output = Self>
    + 'static
{
    /// Zero.
    const ZERO: Self;
    /// A tentative distance that is not known yet; above every finite distance.
    const INF: Self;
    /// The working potential of a column already scanned in a shortest-path search: a
    /// candidate distance through it is above [`Work::INF`], so it is never updated again.
    const NEUTRAL: Self;
    /// Whether a distance or reduced cost is real (not derived from a forbidden entry).
    fn finite(self) -> bool;
    /// Whether a potential or path length is inside the range in which the arithmetic is
    /// exact and overflow-free (always for `f64`, whose matrix is scaled beforehand).
    fn in_range(self) -> bool;
    /// The value as `f64` (exact for the integers the solvers keep).
    fn to_f64(self) -> f64;
    /// A column index as a value (exact below 2^53), so that it can travel in vector lanes
    /// beside the values.
    fn from_index(j: usize) -> Self;
    /// The inverse of [`Work::from_index`].
    fn to_index(self) -> usize;
    /// The smaller of two values (the first on ties and when they are unordered).
    #[inline(always)]
    fn least(self, other: Self) -> Self {
        if other < self { other } else { self }
    }
    /// The larger of two values (the first on ties and when they are unordered).
    #[inline(always)]
    fn greatest(self, other: Self) -> Self {
        if self < other { other } else { self }
    }
}

/// The arithmetic types of the sparse solver, whose heap orders values by a 64-bit key
/// (`f64` and `i64`; the dense solver's `i128` has no such key).
pub(crate) trait Keyed: Work {
    /// A key with the order of the values (for a priority queue).
    fn order_key(self) -> u64;
    /// The value nearest to `x` (rounded for integers), for potentials that come from
    /// elsewhere; `None` when it is not finite or out of [`Work::in_range`].
    fn from_f64_near(x: f64) -> Option<Self>;
}

/// `impl Work for $t`: the constants, and `finite` / `in_range` as expressions of `$x`
/// (the conversions are plain casts for every type).
macro_rules! work {
    ($t:ty, zero: $zero:expr, inf: $inf:expr, neutral: $neutral:expr,
     finite: |$x:ident| $finite:expr, in_range: |$y:ident| $in_range:expr) => {
        impl Work for $t {
            const ZERO: $t = $zero;
            const INF: $t = $inf;
            const NEUTRAL: $t = $neutral;
            #[inline(always)]
            fn finite(self) -> bool {
                let $x = self;
                $finite
            }
            #[inline(always)]
            fn in_range(self) -> bool {
                let $y = self;
                $in_range
            }
            #[inline(always)]
            fn to_f64(self) -> f64 {
                self as f64
            }
            #[inline(always)]
            fn from_index(j: usize) -> $t {
                j as $t
            }
            #[inline(always)]
            fn to_index(self) -> usize {
                self as usize
            }
        }
    };
}

work!(f64, zero: 0.0, inf: f64::INFINITY, neutral: f64::NEG_INFINITY,
    finite: |x| x.is_finite(), in_range: |_x| true);
work!(i64, zero: 0, inf: 1 << 60, neutral: -(1 << 61),
    finite: |x| x < (1 << 58), in_range: |x| x > -I64_RANGE && x < I64_RANGE);
work!(i128, zero: 0, inf: 1 << 104, neutral: -(1 << 105),
    finite: |x| x < (1 << 102), in_range: |x| x > -I128_RANGE && x < I128_RANGE);

impl Keyed for f64 {
    fn from_f64_near(x: f64) -> Option<f64> {
        x.is_finite().then_some(x)
    }
    #[inline(always)]
    fn order_key(self) -> u64 {
        let b = self.to_bits();
        if b >> 63 == 1 { !b } else { b | (1 << 63) }
    }
}

impl Keyed for i64 {
    #[inline(always)]
    fn order_key(self) -> u64 {
        (self as u64) ^ (1 << 63)
    }
    fn from_f64_near(x: f64) -> Option<i64> {
        let r = x.round();
        (r.abs() < I64_RANGE as f64).then_some(r as i64)
    }
}

/// Row and column potentials.
pub(crate) type Potentials<W> = (Vec<W>, Vec<W>);

/// An element type the native solvers read a matrix in.
pub(crate) trait Elem: Copy + PartialEq + Default + Debug + Send + Sync + 'static {
    /// The arithmetic type.
    type W: Work;
    /// Whether the type holds integers (every allowed entry is then integral).
    const INTEGER: bool;
    /// The entry in the arithmetic type (exact).
    fn widen(self) -> Self::W;
}

/// `impl Elem for $e` with arithmetic type `$w` (widening is a cast).
macro_rules! elem {
    ($($(#[$doc:meta])* $e:ty => $w:ty, integer: $int:expr;)*) => {$(
        $(#[$doc])*
        impl Elem for $e {
            const INTEGER: bool = $int;
            type W = $w;
            #[inline(always)]
            fn widen(self) -> $w {
                self as $w
            }
        }
    )*};
}

elem! {
    f64 => f64, integer: false;
    f32 => f64, integer: false;
    i64 => i64, integer: true;
    i32 => i64, integer: true;
    /// The dense solver's matrix of integers beyond the `i64` scheme (entries of the whole
    /// `i64` range, negated when maximising, [`I128_FORBIDDEN`] for a forbidden pair).
    i128 => i128, integer: true;
}

/// The element types of the sparse solver (those whose arithmetic type is [`Keyed`]).
pub(crate) trait KeyedElem: Elem<W: Keyed> {}

impl<E: Elem<W: Keyed>> KeyedElem for E {}

/// The internal `i64` value of a forbidden pair (`2^59`).
pub(crate) const I64_FORBIDDEN: i64 = 1 << 59;

/// The internal `i128` value of a forbidden pair (`2^103`).
pub(crate) const I128_FORBIDDEN: i128 = 1 << 103;

#[cfg(test)]
mod tests {
    use super::*;

    /// The constants keep the promises of the module docs at their extremes.
    #[test]
    fn order_keys_keep_the_order() {
        let f = [
            f64::NEG_INFINITY,
            -1e300,
            -2.5,
            -0.0,
            0.0,
            1e-300,
            3.0,
            f64::INFINITY,
        ];
        for w in f.windows(2) {
            assert!(w[0].order_key() <= w[1].order_key(), "{w:?}");
        }
        let i = [i64::MIN, -5, -1, 0, 1, 1 << 60, i64::MAX];
        for w in i.windows(2) {
            assert!(w[0].order_key() < w[1].order_key(), "{w:?}");
        }
    }

    /// The promises both integer schemes keep at their extremes: a real candidate stays
    /// finite and below INF, a forbidden one is never finite, a scanned column's is above INF.
    fn check_scheme<W: Work>(base: W, big: W, range: W, forbidden: W) {
        assert!((base + big + range).finite());
        assert!(base + big + range < W::INF);
        assert!(!(-base + forbidden - range).finite());
        assert!(base + forbidden + range < W::INF);
        assert!(-base - big - W::NEUTRAL > W::INF);
    }

    #[test]
    fn integer_constants_cannot_overflow_or_collide() {
        let base = 2 * I64_RANGE - 1; // |min_val - u| < 2^57
        check_scheme(base, 1i64 << 53, I64_RANGE, I64_FORBIDDEN);
        // and a scanned column's candidate is below 2^63 at its highest
        assert!((base as i128 + I64_FORBIDDEN as i128 - i64::NEUTRAL as i128) < (i64::MAX as i128));
    }

    /// The same promises for `i128`, with entries up to `2^64` (`-i64::MIN` is `2^63`).
    #[test]
    fn i128_constants_cannot_overflow_or_collide() {
        let base = 2 * I128_RANGE - 1;
        check_scheme(base, 1i128 << 64, I128_RANGE, I128_FORBIDDEN);
        assert!(
            base.checked_add(I128_FORBIDDEN)
                .and_then(|x| x.checked_sub(i128::NEUTRAL))
                .is_some()
        );
        // potentials of the largest matrix that fits in memory stay in range
        let magnitude = 1i128 << 63;
        assert!(magnitude * 4 * ((1i128 << 32) + 2) < I128_RANGE);
    }
}
