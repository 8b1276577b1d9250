//! [`NativeProblem`]: the problem in the caller's own element type, for the Jonker–Volgenant
//! solver: `f64`, `f32`, `i64` and `i32` matrices borrowed when they are already row-major,
//! minimised and no taller than wide, else one copy of the same type; `Option<i64>` copied to
//! `i64`; integers beyond the `i64` scheme copied to `i128`. [`Direct`] is what such an element
//! type does (the sparse solver reads its entries in place through it too).

use std::borrow::Cow;
use std::ops::Neg;

use ndarray::ArrayView2;

use super::cost::{EXACT_INT, Typed, forbidden_infinity};
use super::float::float_stats;
use super::{Problem, check_copy, first_refused, internal_shape};
use crate::num::{Elem, I64_FORBIDDEN, I64_RANGE, I128_FORBIDDEN};
use crate::{AssignmentError, Cost, Sense};

/// A validated problem held in the caller's element type (no `f64` copy of a `float32` or
/// integer matrix), for the Jonker–Volgenant solver.
#[derive(Debug, Clone)]
pub(crate) enum NativeProblem<'a> {
    /// `f64` entries.
    F64(Problem<'a, f64>),
    /// `f32` entries, solved in `f64` arithmetic.
    F32(Problem<'a, f32>),
    /// `i64` or `Option<i64>` entries, solved in exact `i64` arithmetic.
    I64(Problem<'a, i64>),
    /// `i32` entries, solved in exact `i64` arithmetic.
    I32(Problem<'a, i32>),
    /// Integer entries too large for the `i64` scheme (any `i64`, up to its extremes), copied
    /// to `i128` and solved in exact `i128` arithmetic.
    I128(Problem<'a, i128>),
}

impl<'a> NativeProblem<'a> {
    /// Validates `costs` (the rules of [`Problem::new`]) and keeps it in its own element type:
    /// borrowed when it is row-major, minimised and has no more rows than columns, else one
    /// copy of the same type (transposed, negated).
    ///
    /// Integer matrices whose magnitude times `4 (n + 2)` reaches half of [`I64_RANGE`]
    /// cannot be solved in the checked `i64` range and become `i128` problems (every `i64`
    /// is accepted: integers are never rounded).
    pub(crate) fn new<T: Cost>(
        costs: ArrayView2<'a, T>,
        sense: Sense,
    ) -> Result<Self, AssignmentError> {
        let long = costs.nrows().max(costs.ncols());
        Ok(match T::typed(costs) {
            Typed::F64(v) => NativeProblem::F64(Problem::new(v, sense)?),
            Typed::F32(v) => {
                let range = direct_stats(v, sense)?;
                NativeProblem::F32(direct_build(v, sense, range)?)
            }
            Typed::I64(v) => {
                let range = i64_range(v);
                if fits_i64(range, long) {
                    NativeProblem::I64(direct_build(v, sense, range)?)
                } else {
                    NativeProblem::I128(integer_copy(v, sense, |x| Some(x as i128))?)
                }
            }
            Typed::I32(v) => {
                let range = direct_stats(v, sense)?;
                if fits_i64(range, long) {
                    NativeProblem::I32(direct_build(v, sense, range)?)
                } else {
                    NativeProblem::I128(integer_copy(v, sense, |x| Some(x as i128))?)
                }
            }
            Typed::OptI64(v) => {
                let (lo, hi) = v
                    .iter()
                    .flatten()
                    .fold((i64::MAX, i64::MIN), |(a, b), &x| (a.min(x), b.max(x)));
                let range = if lo > hi {
                    (0.0, 0.0)
                } else {
                    (lo as f64, hi as f64)
                };
                if fits_i64(range, long) {
                    NativeProblem::I64(integer_copy(v, sense, |x| x)?)
                } else {
                    NativeProblem::I128(integer_copy(v, sense, |x| x.map(i128::from))?)
                }
            }
        })
    }

    /// The `i128` problem of an integer matrix, for a solve whose `i64` potentials left
    /// their range; `None` for floats (whose potentials have no range to leave).
    pub(crate) fn wide<T: Cost>(
        costs: ArrayView2<'a, T>,
        sense: Sense,
    ) -> Option<Result<Problem<'a, i128>, AssignmentError>> {
        match T::typed(costs) {
            Typed::I64(v) => Some(integer_copy(v, sense, |x| Some(x as i128))),
            Typed::I32(v) => Some(integer_copy(v, sense, |x| Some(x as i128))),
            Typed::OptI64(v) => Some(integer_copy(v, sense, |x| x.map(i128::from))),
            Typed::F64(_) | Typed::F32(_) => None,
        }
    }
}

/// Whether an integer matrix whose allowed entries lie in `(min, max)` and whose longer side
/// is `long` keeps its potentials well inside the checked `i64` range ([`I64_RANGE`]): they
/// grow to about `4 (n + 1)` times the largest magnitude.
fn fits_i64((min, max): (f64, f64), long: usize) -> bool {
    let magnitude = min.abs().max(max.abs());
    magnitude * 4.0 * (long as f64 + 2.0) < I64_RANGE as f64 / 2.0
}

/// An element type the Jonker–Volgenant solver reads as it is.
pub(crate) trait Direct: Elem + Cost + Neg<Output = Self> {
    /// What maximising adds to every negated entry: 0, or -1 for `i32` (stored as `!c`).
    const MAX_OFFSET: i64;
    /// The internal entry: negated when maximising (`!c` for `i32`), the forbidding
    /// infinity as `+inf`. Called on validated entries only.
    #[inline(always)]
    fn internal(self, sense: Sense) -> Self {
        if sense == Sense::Maximize {
            -self
        } else {
            self
        }
    }
    /// One (vectorisable) pass over valid-or-not caller entries: whether any is refused in
    /// `sense`, and the smallest and largest allowed entry (caller's sign).
    fn scan(s: &[Self], sense: Sense) -> (bool, f64, f64);
}

impl Direct for f64 {
    const MAX_OFFSET: i64 = 0;
    fn scan(s: &[f64], sense: Sense) -> (bool, f64, f64) {
        let (bad, st) = float_stats(s, sense);
        let (min, max) = if sense == Sense::Maximize {
            (-st.max, -st.min)
        } else {
            (st.min, st.max)
        };
        (bad, min, max)
    }
}

impl Direct for f32 {
    const MAX_OFFSET: i64 = 0;
    fn scan(s: &[f32], sense: Sense) -> (bool, f64, f64) {
        let forbidden = forbidden_infinity(sense) as f32;
        let (mut bad, mut min, mut max) = (false, f32::INFINITY, f32::NEG_INFINITY);
        for &v in s {
            bad |= v.is_nan() | (v == -forbidden);
            let finite = v != forbidden;
            min = min.min(if finite { v } else { f32::INFINITY });
            max = max.max(if finite { v } else { f32::NEG_INFINITY });
        }
        (bad, min as f64, max as f64)
    }
}

/// The scan refuses entries beyond 2^53, for the sparse solver; the Jonker–Volgenant solver
/// takes every `i64` ([`NativeProblem::new`] does not call it).
impl Direct for i64 {
    const MAX_OFFSET: i64 = 0;
    fn scan(s: &[i64], _sense: Sense) -> (bool, f64, f64) {
        let (min, max) = i64_extremes(s);
        let limit = EXACT_INT as i64;
        (min < -limit || max > limit, min as f64, max as f64)
    }
}

/// The smallest and largest entry (`(i64::MAX, i64::MIN)` for none).
fn i64_extremes(s: &[i64]) -> (i64, i64) {
    s.iter()
        .fold((i64::MAX, i64::MIN), |(a, b), &v| (a.min(v), b.max(v)))
}

/// The smallest and largest entry of an `i64` matrix, every value accepted (`(0, 0)` for an
/// empty one).
fn i64_range(costs: ArrayView2<'_, i64>) -> (f64, f64) {
    let (min, max) = match costs.as_slice() {
        Some(s) => i64_extremes(s),
        None => costs
            .outer_iter()
            .fold((i64::MAX, i64::MIN), |(a, b), line| {
                let (lo, hi) = match line.as_slice() {
                    Some(s) => i64_extremes(s),
                    None => line
                        .iter()
                        .fold((i64::MAX, i64::MIN), |(a, b), &v| (a.min(v), b.max(v))),
                };
                (a.min(lo), b.max(hi))
            }),
    };
    if min > max {
        (0.0, 0.0)
    } else {
        (min as f64, max as f64)
    }
}

impl Direct for i32 {
    const MAX_OFFSET: i64 = -1;
    #[inline(always)]
    fn internal(self, sense: Sense) -> i32 {
        if sense == Sense::Maximize {
            !self
        } else {
            self
        }
    }
    fn scan(s: &[i32], _sense: Sense) -> (bool, f64, f64) {
        let (min, max) = s
            .iter()
            .fold((i32::MAX, i32::MIN), |(a, b), &v| (a.min(v), b.max(v)));
        (false, min as f64, max as f64)
    }
}

/// Validates a [`Direct`] matrix: the smallest and largest allowed entry in the caller's
/// sign (`(0, 0)` when there is none), or the error of the first refused entry.
fn direct_stats<E: Direct>(
    costs: ArrayView2<'_, E>,
    sense: Sense,
) -> Result<(f64, f64), AssignmentError> {
    let (mut bad, mut min, mut max) = (false, f64::INFINITY, f64::NEG_INFINITY);
    let whole = costs.as_slice();
    let mut buf: Vec<E> = Vec::new();
    let mut add = |s: &[E]| {
        let (b, lo, hi) = E::scan(s, sense);
        bad |= b;
        min = min.min(lo);
        max = max.max(hi);
    };
    match whole {
        Some(s) => add(s),
        None => {
            for line in costs.outer_iter() {
                match line.as_slice() {
                    Some(s) => add(s),
                    None => {
                        buf.clear();
                        buf.extend(line.iter().copied());
                        add(&buf);
                    }
                }
            }
        }
    }
    if bad {
        return Err(first_refused(costs, sense));
    }
    if min > max {
        (min, max) = (0.0, 0.0);
    }
    Ok((min, max))
}

/// The internal problem of a validated [`Direct`] matrix whose allowed entries lie in
/// `(min, max)` (caller's sign), in its own type.
fn direct_build<'a, E: Direct>(
    costs: ArrayView2<'a, E>,
    sense: Sense,
    (mut min, mut max): (f64, f64),
) -> Result<Problem<'a, E>, AssignmentError> {
    let (rows, cols) = costs.dim();
    let (nr, nc, transposed) = internal_shape(rows, cols);
    let negated = sense == Sense::Maximize;
    let offset = if negated { E::MAX_OFFSET } else { 0 };
    if negated {
        (min, max) = (offset as f64 - max, offset as f64 - min);
    }
    let borrowed = if !transposed && !negated {
        costs.to_slice()
    } else {
        None
    };
    let c = match borrowed {
        Some(s) => Cow::Borrowed(s),
        None => {
            check_copy::<E>(rows, cols)?;
            let mut c = Vec::with_capacity(nr * nc);
            if transposed {
                let mut t = vec![E::default(); nr * nc];
                for (r, line) in costs.outer_iter().enumerate() {
                    for (k, &v) in line.iter().enumerate() {
                        t[k * nc + r] = v.internal(sense);
                    }
                }
                c = t;
            } else {
                for line in costs.outer_iter() {
                    c.extend(line.iter().map(|&v| v.internal(sense)));
                }
            }
            Cow::Owned(c)
        }
    };
    Ok(Problem {
        nr,
        nc,
        c,
        transposed,
        negated,
        integral: Some(E::INTEGER),
        min,
        max,
        scale_exp: 0,
        offset,
    })
}

/// An integer type an integer matrix is copied into when it cannot be read in place: `i64`
/// (an `Option<i64>` matrix) or `i128` (integers beyond the `i64` scheme).
trait IntegerCopy: Elem + Ord + Neg<Output = Self> {
    /// The internal value of a forbidden pair.
    const FORBIDDEN: Self;
    /// The smallest and largest values of the type.
    const LOWEST: Self;
    /// See [`IntegerCopy::LOWEST`].
    const HIGHEST: Self;
    /// The value as `f64` (rounded beyond `2^53`).
    fn as_f64(self) -> f64;
}

/// `impl IntegerCopy` for each type with its forbidden value.
macro_rules! integer_copy {
    ($($t:ty: $forbidden:expr),*) => {$(
        impl IntegerCopy for $t {
            const FORBIDDEN: $t = $forbidden;
            const LOWEST: $t = <$t>::MIN;
            const HIGHEST: $t = <$t>::MAX;
            fn as_f64(self) -> f64 {
                self as f64
            }
        }
    )*};
}

integer_copy!(i64: I64_FORBIDDEN, i128: I128_FORBIDDEN);

/// The internal problem of an integer matrix in `W` (`value` gives an entry, `None` for a
/// forbidden pair): always a copy, negated when maximising (exact in `i128`: `-i64::MIN` is
/// one; in `i64` the entries fit the `i64` scheme), forbidden pairs as `W::FORBIDDEN`
/// ([`I64_FORBIDDEN`], [`I128_FORBIDDEN`]).
fn integer_copy<'a, T: Copy, W: IntegerCopy>(
    costs: ArrayView2<'a, T>,
    sense: Sense,
    value: impl Fn(T) -> Option<W>,
) -> Result<Problem<'a, W>, AssignmentError> {
    let (rows, cols) = costs.dim();
    let (nr, nc, transposed) = internal_shape(rows, cols);
    let negated = sense == Sense::Maximize;
    check_copy::<W>(rows, cols)?;
    let mut c = vec![W::default(); nr * nc];
    let (mut min, mut max) = (W::HIGHEST, W::LOWEST);
    for ((r, k), &v) in costs.indexed_iter() {
        let internal = match value(v) {
            None => W::FORBIDDEN,
            Some(v) => {
                let v = if negated { -v } else { v };
                min = min.min(v);
                max = max.max(v);
                v
            }
        };
        c[if transposed { k * nc + r } else { r * nc + k }] = internal;
    }
    let (min, max) = if min > max {
        (0.0, 0.0)
    } else {
        (min.as_f64(), max.as_f64())
    };
    Ok(Problem {
        nr,
        nc,
        c: Cow::Owned(c),
        transposed,
        negated,
        integral: Some(true),
        min,
        max,
        scale_exp: 0,
        offset: 0,
    })
}
