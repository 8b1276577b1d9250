//! Cost element types, input validation, and the internal problem every solver works on.

use std::borrow::Cow;

use ndarray::ArrayView2;

use crate::num::{Elem, I64_FORBIDDEN, I64_RANGE, I128_FORBIDDEN, Potentials, Work};
use crate::{Assignment, AssignmentError, Duals, Sense};

pub(crate) mod sealed {
    use ndarray::ArrayView2;

    pub trait Sealed {}

    /// A slice of cost entries with its element type named.
    #[derive(Debug, Clone, Copy)]
    pub enum TypedSlice<'a> {
        /// `f64` entries.
        F64(&'a [f64]),
        /// `f32` entries.
        F32(&'a [f32]),
        /// `i64` entries.
        I64(&'a [i64]),
        /// `i32` entries.
        I32(&'a [i32]),
        /// `Option<i64>` entries.
        OptI64(&'a [Option<i64>]),
    }
    impl Sealed for f64 {}
    impl Sealed for f32 {}
    impl Sealed for i64 {}
    impl Sealed for i32 {}
    impl Sealed for Option<i64> {}

    /// A cost matrix view with its element type named, so the solvers that read a matrix in
    /// its own type can pick their path once.
    #[derive(Debug, Clone)]
    pub enum Typed<'a> {
        /// `f64` entries.
        F64(ArrayView2<'a, f64>),
        /// `f32` entries.
        F32(ArrayView2<'a, f32>),
        /// `i64` entries.
        I64(ArrayView2<'a, i64>),
        /// `i32` entries.
        I32(ArrayView2<'a, i32>),
        /// `Option<i64>` entries (`None` forbids the pair).
        OptI64(ArrayView2<'a, Option<i64>>),
    }
}

pub(crate) use sealed::{Typed, TypedSlice};

/// What one matrix entry means once read.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum CostClass {
    /// An allowed pair with this cost.
    Finite(f64),
    /// A forbidden pair: the infinity that can never be optimal (`+inf` when minimising, `-inf`
    /// when maximising), or `None` in the integer API.
    Forbidden,
    /// An invalid entry: `NaN`, or the infinity that would always be optimal (`-inf` when
    /// minimising, `+inf` when maximising); the reason says which.
    Invalid(&'static str),
    /// An integer too large to be represented exactly as `f64` (|v| > 2^53).
    OutOfRange,
}

/// Why an entry is [`CostClass::Invalid`].
const NAN_REASON: &str = "NaN is not a cost";
const MINUS_INF_REASON: &str =
    "-inf is invalid when minimising (+inf forbids a pair; scipy's rule)";
const PLUS_INF_REASON: &str = "+inf is invalid when maximising (-inf forbids a pair; scipy's rule)";

/// The element types a cost matrix may hold: `f64`, `f32`, `i64`, `i32` and `Option<i64>`
/// (where `None` forbids the pair). Sealed: it cannot be implemented outside this crate.
///
/// The Jonker–Volgenant solver reads `f32`, `i64` and `i32` matrices in their own type (no
/// `f64` copy) and solves integer matrices in exact integer arithmetic.
///
/// Floats follow scipy's `linear_sum_assignment`, which maximises by minimising the negated
/// matrix: when minimising `+inf` forbids a pair and `-inf` is an error; when maximising `-inf`
/// forbids a pair and `+inf` is an error; `NaN` is always an error.
pub trait Cost: sealed::Sealed + Copy + Send + Sync + std::fmt::Debug {
    /// Classifies one entry of a problem solved in direction `sense`.
    ///
    /// # Examples
    /// ```
    /// use assignment::{Cost, CostClass, Sense};
    /// assert_eq!(f64::INFINITY.classify_cost(Sense::Minimize), CostClass::Forbidden);
    /// assert_eq!(f64::NEG_INFINITY.classify_cost(Sense::Maximize), CostClass::Forbidden);
    /// assert!(matches!(f64::INFINITY.classify_cost(Sense::Maximize), CostClass::Invalid(_)));
    /// assert_eq!(None::<i64>.classify_cost(Sense::Maximize), CostClass::Forbidden);
    /// ```
    fn classify_cost(self, sense: Sense) -> CostClass;
    /// The entry widened to `f64` as is (`NaN` and infinities included) for the floating-point
    /// types, whose validation then runs as one vectorised pass; `None` for the integer types.
    #[doc(hidden)]
    fn raw_float(self) -> Option<f64> {
        None
    }
    /// The slice itself when the element type is `f64` (so it can be used without a copy).
    #[doc(hidden)]
    fn as_f64_slice(_s: &[Self]) -> Option<&[f64]> {
        None
    }
    /// The view with its element type named.
    #[doc(hidden)]
    fn typed(view: ArrayView2<'_, Self>) -> Typed<'_>;
    /// The slice with its element type named.
    #[doc(hidden)]
    fn typed_slice(s: &[Self]) -> TypedSlice<'_>;
}

/// Largest integer magnitude accepted (`2^53`, the last exactly representable in `f64`).
const EXACT_INT: f64 = 9_007_199_254_740_992.0;

impl Cost for f64 {
    #[inline(always)]
    fn raw_float(self) -> Option<f64> {
        Some(self)
    }
    fn as_f64_slice(s: &[f64]) -> Option<&[f64]> {
        Some(s)
    }
    fn typed(view: ArrayView2<'_, f64>) -> Typed<'_> {
        Typed::F64(view)
    }
    fn typed_slice(s: &[f64]) -> TypedSlice<'_> {
        TypedSlice::F64(s)
    }
    fn classify_cost(self, sense: Sense) -> CostClass {
        if self.is_finite() {
            CostClass::Finite(self)
        } else if self.is_nan() {
            CostClass::Invalid(NAN_REASON)
        } else if self == forbidden_infinity(sense) {
            CostClass::Forbidden
        } else if sense == Sense::Minimize {
            CostClass::Invalid(MINUS_INF_REASON)
        } else {
            CostClass::Invalid(PLUS_INF_REASON)
        }
    }
}

/// The infinity that forbids a pair: `+inf` when minimising, `-inf` when maximising.
fn forbidden_infinity(sense: Sense) -> f64 {
    match sense {
        Sense::Minimize => f64::INFINITY,
        Sense::Maximize => f64::NEG_INFINITY,
    }
}

impl Cost for f32 {
    #[inline(always)]
    fn raw_float(self) -> Option<f64> {
        Some(self as f64)
    }
    fn typed(view: ArrayView2<'_, f32>) -> Typed<'_> {
        Typed::F32(view)
    }
    fn typed_slice(s: &[f32]) -> TypedSlice<'_> {
        TypedSlice::F32(s)
    }
    fn classify_cost(self, sense: Sense) -> CostClass {
        Cost::classify_cost(self as f64, sense)
    }
}

impl Cost for i64 {
    fn typed(view: ArrayView2<'_, i64>) -> Typed<'_> {
        Typed::I64(view)
    }
    fn typed_slice(s: &[i64]) -> TypedSlice<'_> {
        TypedSlice::I64(s)
    }
    fn classify_cost(self, _sense: Sense) -> CostClass {
        let f = self as f64;
        if f.abs() > EXACT_INT {
            CostClass::OutOfRange
        } else {
            CostClass::Finite(f)
        }
    }
}

impl Cost for i32 {
    fn typed(view: ArrayView2<'_, i32>) -> Typed<'_> {
        Typed::I32(view)
    }
    fn typed_slice(s: &[i32]) -> TypedSlice<'_> {
        TypedSlice::I32(s)
    }
    fn classify_cost(self, _sense: Sense) -> CostClass {
        CostClass::Finite(self as f64)
    }
}

impl Cost for Option<i64> {
    fn typed(view: ArrayView2<'_, Option<i64>>) -> Typed<'_> {
        Typed::OptI64(view)
    }
    fn typed_slice(s: &[Option<i64>]) -> TypedSlice<'_> {
        TypedSlice::OptI64(s)
    }
    fn classify_cost(self, sense: Sense) -> CostClass {
        match self {
            Some(v) => v.classify_cost(sense),
            None => CostClass::Forbidden,
        }
    }
}

/// An internal solution: `x[i]` = column of row `i`, row potentials `u`, column potentials `v`.
pub(crate) type Solution = (Vec<usize>, Vec<f64>, Vec<f64>);

/// The validated problem: a row-major `nr x nc` minimisation with `nr <= nc` (the input
/// transposed if it had more rows than columns, negated if maximising, scaled by `2^-scale_exp`
/// if its entries are so large that sums could overflow), `+inf` = forbidden.
#[derive(Debug, Clone)]
///
/// `E` is the element type the matrix is held in: `f64` for every solver, and for the
/// Jonker–Volgenant solver also `f32`, `i64` and `i32` (the caller's own type, see
/// [`Problem::native`]); forbidden pairs are then `E::FORBIDDEN`.
pub(crate) struct Problem<'a, E: Elem = f64> {
    pub(crate) nr: usize,
    pub(crate) nc: usize,
    /// The matrix: borrowed from the caller when it already is a row-major matrix of the
    /// element type, to be minimised, with no more rows than columns; else a converted copy.
    pub(crate) c: Cow<'a, [E]>,
    pub(crate) transposed: bool,
    pub(crate) negated: bool,
    /// Whether every finite entry is an integer, when known (see [`Problem::integral`]).
    pub(crate) integral: Option<bool>,
    /// Smallest and largest finite entry (0, 0 when there is none).
    pub(crate) min: f64,
    pub(crate) max: f64,
    /// The internal matrix is the caller's times `2^-scale_exp` (0 unless the entries are huge).
    pub(crate) scale_exp: i32,
    /// Added to every allowed internal entry after the negation (0, or -1 for a maximised
    /// `i32` matrix, stored as `!c = -c - 1` so that `i32::MIN` needs no wider type).
    pub(crate) offset: i64,
}

/// `2^e` for `|e| <= 1022` (exact: the exponent field itself, no `powi` call).
fn pow2(e: i32) -> f64 {
    debug_assert!(e.abs() <= 1022);
    f64::from_bits(((1023 + e) as u64) << 52)
}

impl<'a> Problem<'a, f64> {
    /// Validates `costs` and builds the internal problem.
    pub(crate) fn new<T: Cost>(
        costs: ArrayView2<'a, T>,
        sense: Sense,
    ) -> Result<Self, AssignmentError> {
        let (rows, cols) = costs.dim();
        let transposed = rows > cols;
        let (nr, nc) = if transposed {
            (cols, rows)
        } else {
            (rows, cols)
        };
        let negated = sense == Sense::Maximize;
        let borrowed = if !transposed && !negated {
            costs.to_slice().and_then(T::as_f64_slice)
        } else {
            None
        };
        let (mut c, st): (Cow<'a, [f64]>, Stats) = if let Some(slice) = borrowed {
            let (bad, st) = float_stats(slice, sense);
            if bad {
                return Err(first_invalid(costs, sense));
            }
            (Cow::Borrowed(slice), st)
        } else if costs.first().is_some_and(|v| v.raw_float().is_some()) {
            check_copy::<f64>(rows, cols)?;
            let mut c = vec![0.0f64; nr * nc];
            let st = float_fill(costs, transposed, sense, &mut c)?;
            (Cow::Owned(c), st)
        } else {
            check_copy::<f64>(rows, cols)?;
            let mut c = vec![0.0f64; nr * nc];
            let mut st = Stats {
                integral: Some(true),
                min: f64::INFINITY,
                max: f64::NEG_INFINITY,
            };
            for (r, line) in costs.outer_iter().enumerate() {
                if transposed {
                    for (k, &v) in line.iter().enumerate() {
                        c[k * nc + r] = convert(v, r, k, sense, &mut st)?;
                    }
                } else {
                    let dst = &mut c[r * nc..(r + 1) * nc];
                    for (k, (&v, d)) in line.iter().zip(dst.iter_mut()).enumerate() {
                        *d = convert(v, r, k, sense, &mut st)?;
                    }
                }
            }
            (Cow::Owned(c), st)
        };
        let Stats {
            mut integral,
            mut min,
            mut max,
        } = st;
        if min > max {
            min = 0.0;
            max = 0.0;
        }
        // Sums of up to 2n entries and the potentials must stay finite: if they could
        // overflow, the matrix is scaled by the smallest power of two that keeps them finite.
        // That is exact (the solvers' decisions and the cost are those of the caller's matrix)
        // except for entries that become subnormal, below 2^-1022 times the scale, which are
        // negligible next to the largest ones anyway.
        let magnitude = max.abs().max(min.abs());
        let growth = 4.0 * (nc as f64 + 1.0);
        let mut scale_exp = 0;
        while !(magnitude * pow2(-scale_exp) * growth).is_finite() {
            scale_exp += 1;
        }
        if scale_exp > 0 {
            let f = pow2(-scale_exp);
            c.to_mut().iter_mut().for_each(|x| *x *= f);
            min *= f;
            max *= f;
            // (huge floats are integers, but the scaled small ones may not be; the integer
            // fast paths need magnitudes far below these anyway)
            integral = Some(false);
        }
        Ok(Problem {
            nr,
            nc,
            c,
            transposed,
            negated,
            integral,
            min,
            max,
            scale_exp,
            offset: 0,
        })
    }
}

impl<'a, E: Elem> Problem<'a, E> {
    /// Whether every allowed entry is an integer (one pass over a float matrix, for the
    /// solvers that have an exact integer mode).
    pub(crate) fn integral(&self) -> bool {
        self.integral.unwrap_or_else(|| {
            self.c.iter().all(|&v| {
                let w = v.widen();
                !w.finite() || w.to_f64().fract() == 0.0
            })
        })
    }

    /// Row `i` of the internal matrix.
    #[inline]
    pub(crate) fn row(&self, i: usize) -> &[E] {
        &self.c[i * self.nc..(i + 1) * self.nc]
    }

    /// Internal cost of pair `(i, j)`.
    #[inline]
    pub(crate) fn at(&self, i: usize, j: usize) -> E {
        self.c[i * self.nc + j]
    }

    /// The caller's total cost of an internal solution (`x[i]` = column of internal row `i`):
    /// [`AssignmentError::Infeasible`] when it uses a forbidden pair,
    /// [`AssignmentError::CostOverflow`] when the total is beyond `f64`.
    pub(crate) fn cost_of(&self, x: &[usize]) -> Result<f64, AssignmentError> {
        let (internal, total) = self.totals(x)?;
        if !total.is_finite() {
            return Err(AssignmentError::CostOverflow {
                total: format!(
                    "{:e} x 2^{}",
                    if self.negated { -internal } else { internal },
                    self.scale_exp
                ),
            });
        }
        Ok(total)
    }

    /// [`Problem::cost_of`], with a total beyond `f64` as `+inf` or `-inf` instead of an error.
    pub(crate) fn total_of(&self, x: &[usize]) -> Result<f64, AssignmentError> {
        Ok(self.totals(x)?.1)
    }

    /// The internal cost of a solution (at the internal scale and sign) and the caller's.
    fn totals(&self, x: &[usize]) -> Result<(f64, f64), AssignmentError> {
        debug_assert_eq!(x.len(), self.nr);
        let mut sum = E::W::ZERO;
        for (i, &j) in x.iter().enumerate() {
            let v = self.at(i, j).widen();
            if !v.finite() {
                return Err(AssignmentError::Infeasible);
            }
            sum = sum + v;
        }
        // Integer sums are exact (`i64` entries of the `i64` scheme are at most 2^53 and the
        // problem small enough for its range; `i128` sums of `i64` entries cannot overflow)
        // and rounded once here; the offset of a maximised i32 matrix is taken out.
        let internal = sum.to_f64() - self.offset as f64 * self.nr as f64;
        let total = internal * pow2(self.scale_exp);
        Ok((internal, if self.negated { -total } else { total }))
    }

    /// Maps an internal solution (`x[i]` = column of internal row `i`, every row assigned)
    /// back to the caller's orientation, sense and scale.
    ///
    /// Returns [`AssignmentError::Infeasible`] when the solution uses a forbidden pair and
    /// [`AssignmentError::CostOverflow`] when its total cost is beyond `f64`. Duals that are
    /// not representable at the caller's scale are dropped (`None`).
    pub(crate) fn finish(
        &self,
        x: &[usize],
        duals: Option<Potentials<E::W>>,
    ) -> Result<Assignment, AssignmentError> {
        let cost = self.cost_of(x)?;
        let unscale = pow2(self.scale_exp);
        let duals = duals.and_then(|(u, v)| {
            let offset = self.offset as f64;
            let mut u: Vec<f64> = u.into_iter().map(|t| t.to_f64() - offset).collect();
            let mut v: Vec<f64> = v.into_iter().map(Work::to_f64).collect();
            if self.scale_exp > 0 {
                u.iter_mut().chain(v.iter_mut()).for_each(|t| *t *= unscale);
                if !u.iter().chain(&v).all(|t| t.is_finite()) {
                    return None;
                }
            }
            Some((u, v))
        });
        let row_to_col = if self.transposed {
            let mut out = vec![None; self.nc];
            for (i, &j) in x.iter().enumerate() {
                out[j] = Some(i);
            }
            out
        } else {
            x.iter().map(|&j| Some(j)).collect()
        };
        let duals = duals.map(|(mut u, mut v)| {
            if self.negated {
                u.iter_mut().for_each(|t| *t = -*t);
                v.iter_mut().for_each(|t| *t = -*t);
            }
            if self.transposed {
                Duals { row: v, col: u }
            } else {
                Duals { row: u, col: v }
            }
        });
        Ok(Assignment {
            row_to_col,
            cost,
            duals,
        })
    }
}

/// The float fast path: copy (transposing if needed), then one branch-free pass that flags
/// invalid entries (`NaN` and the wrong infinity for `sense`), collects the statistics and
/// negates the entries when maximising (so `-inf` becomes the internal `+inf`, forbidden).
/// Only when an entry is invalid is the input searched again, for the error's position.
fn float_fill<T: Cost>(
    costs: ArrayView2<'_, T>,
    transposed: bool,
    sense: Sense,
    c: &mut [f64],
) -> Result<Stats, AssignmentError> {
    let wide = |v: T| v.raw_float().unwrap_or(f64::NAN);
    let (rows, cols) = costs.dim();
    if transposed {
        for (r, line) in costs.outer_iter().enumerate() {
            for (k, &v) in line.iter().enumerate() {
                c[k * rows + r] = wide(v);
            }
        }
    } else {
        for (line, dst) in costs.outer_iter().zip(c.chunks_exact_mut(cols.max(1))) {
            match line.as_slice() {
                Some(src) => dst.iter_mut().zip(src).for_each(|(d, &v)| *d = wide(v)),
                None => dst
                    .iter_mut()
                    .zip(line.iter())
                    .for_each(|(d, &v)| *d = wide(v)),
            }
        }
    }
    let (bad, st) = float_stats(c, sense);
    if bad {
        return Err(first_invalid(costs, sense));
    }
    if sense == Sense::Maximize {
        c.iter_mut().for_each(|x| *x = -*x);
    }
    Ok(st)
}

/// One branch-free (vectorisable) pass over raw float entries: whether any is invalid for
/// `sense` (`NaN`, `-inf` when minimising, `+inf` when maximising), and the statistics of the
/// finite ones after negation when maximising.
fn float_stats(c: &[f64], sense: Sense) -> (bool, Stats) {
    #[cfg(target_arch = "x86_64")]
    {
        #[target_feature(enable = "avx512f,avx512vl,avx512dq,avx512bw,avx2")]
        fn wide(c: &[f64], sense: Sense) -> (bool, Stats) {
            float_stats_body(c, sense)
        }
        #[target_feature(enable = "avx2")]
        fn narrow(c: &[f64], sense: Sense) -> (bool, Stats) {
            float_stats_body(c, sense)
        }
        if gpu_runtime::cpu::has_avx512() {
            // SAFETY: the CPU has the features `wide` is compiled with.
            return unsafe { wide(c, sense) };
        }
        if gpu_runtime::cpu::has_avx2() {
            // SAFETY: the CPU has AVX2.
            return unsafe { narrow(c, sense) };
        }
    }
    float_stats_body(c, sense)
}

/// [`float_stats`] in integer operations on the bits (which the compiler vectorises, unlike
/// float minima with their NaN rule): NaN and the invalid infinity are bit patterns, and the
/// extrema are taken over order-preserving keys of the finite entries. Whether the entries
/// are integers is not computed here ([`Problem::integral`] does, for the solvers that ask).
#[inline(always)]
fn float_stats_body(c: &[f64], sense: Sense) -> (bool, Stats) {
    const SIGN: u64 = 1 << 63;
    const INF: u64 = 0x7ff0_0000_0000_0000;
    let invalid = (-forbidden_infinity(sense)).to_bits();
    let (mut bad, mut lo, mut hi) = (0u64, u64::MAX, 0u64);
    for &v in c {
        let b = v.to_bits();
        let a = b & !SIGN;
        bad |= ((a > INF) as u64) | ((b == invalid) as u64);
        let finite = a < INF;
        // !b for a negative value, b | SIGN otherwise, without a branch
        let key = b ^ ((((b as i64) >> 63) as u64) | SIGN);
        lo = lo.min(if finite { key } else { u64::MAX });
        hi = hi.max(if finite { key } else { 0 });
    }
    let bad = bad != 0;
    let unkey = |k: u64| f64::from_bits(if k & SIGN != 0 { k & !SIGN } else { !k });
    let (mut min, mut max) = if lo > hi {
        (f64::INFINITY, f64::NEG_INFINITY)
    } else {
        (unkey(lo), unkey(hi))
    };
    if sense == Sense::Maximize {
        (min, max) = (-max, -min);
    }
    (
        bad,
        Stats {
            integral: None,
            min,
            max,
        },
    )
}

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
                    NativeProblem::I128(wide(v, sense, |x| Some(x as i128))?)
                }
            }
            Typed::I32(v) => {
                let range = direct_stats(v, sense)?;
                if fits_i64(range, long) {
                    NativeProblem::I32(direct_build(v, sense, range)?)
                } else {
                    NativeProblem::I128(wide(v, sense, |x| Some(x as i128))?)
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
                    NativeProblem::I64(optional_i64(v, sense)?)
                } else {
                    NativeProblem::I128(wide(v, sense, |x| x.map(i128::from))?)
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
            Typed::I64(v) => Some(wide(v, sense, |x| Some(x as i128))),
            Typed::I32(v) => Some(wide(v, sense, |x| Some(x as i128))),
            Typed::OptI64(v) => Some(wide(v, sense, |x| x.map(i128::from))),
            Typed::F64(_) | Typed::F32(_) => None,
        }
    }
}

/// Refuses a copy of a `rows x cols` matrix of `E` that would not fit in the memory available.
fn check_copy<E>(rows: usize, cols: usize) -> Result<(), AssignmentError> {
    let bytes = (rows as u64)
        .saturating_mul(cols as u64)
        .saturating_mul(std::mem::size_of::<E>() as u64);
    crate::types::check_memory(
        || {
            format!(
                "a copy of the {rows} x {cols} cost matrix ({}, to transpose, negate or convert it)",
                std::any::type_name::<E>()
            )
        },
        bytes,
    )
}

/// Whether an integer matrix whose allowed entries lie in `(min, max)` and whose longer side
/// is `long` keeps its potentials well inside the checked `i64` range ([`I64_RANGE`]): they
/// grow to about `4 (n + 1)` times the largest magnitude.
fn fits_i64((min, max): (f64, f64), long: usize) -> bool {
    let magnitude = min.abs().max(max.abs());
    magnitude * 4.0 * (long as f64 + 2.0) < I64_RANGE as f64 / 2.0
}

/// An element type the Jonker–Volgenant solver reads as it is.
pub(crate) trait Direct: Elem + Cost {
    /// What maximising adds to every negated entry: 0, or -1 for `i32` (stored as `!c`).
    const MAX_OFFSET: i64;
    /// The internal entry: negated when maximising (`!c` for `i32`), the forbidding
    /// infinity as `+inf`. Called on validated entries only.
    fn internal(self, sense: Sense) -> Self;
    /// One (vectorisable) pass over valid-or-not caller entries: whether any is refused in
    /// `sense`, and the smallest and largest allowed entry (caller's sign).
    fn scan(s: &[Self], sense: Sense) -> (bool, f64, f64);
}

impl Direct for f64 {
    const MAX_OFFSET: i64 = 0;
    #[inline(always)]
    fn internal(self, sense: Sense) -> f64 {
        if sense == Sense::Maximize {
            -self
        } else {
            self
        }
    }
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
    #[inline(always)]
    fn internal(self, sense: Sense) -> f32 {
        if sense == Sense::Maximize {
            -self
        } else {
            self
        }
    }
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
    #[inline(always)]
    fn internal(self, sense: Sense) -> i64 {
        if sense == Sense::Maximize {
            -self
        } else {
            self
        }
    }
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
    let transposed = rows > cols;
    let (nr, nc) = if transposed {
        (cols, rows)
    } else {
        (rows, cols)
    };
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

/// The internal `i128` problem of an integer matrix (`value` gives an entry, `None` for a
/// forbidden pair): always a copy, negated when maximising (exact: `-i64::MIN` is an
/// `i128`), forbidden pairs as [`I128_FORBIDDEN`].
fn wide<'a, T: Copy>(
    costs: ArrayView2<'a, T>,
    sense: Sense,
    value: impl Fn(T) -> Option<i128>,
) -> Result<Problem<'a, i128>, AssignmentError> {
    let (rows, cols) = costs.dim();
    let transposed = rows > cols;
    let (nr, nc) = if transposed {
        (cols, rows)
    } else {
        (rows, cols)
    };
    let negated = sense == Sense::Maximize;
    check_copy::<i128>(rows, cols)?;
    let mut c = vec![0i128; nr * nc];
    let (mut min, mut max) = (i128::MAX, i128::MIN);
    for ((r, k), &v) in costs.indexed_iter() {
        let internal = match value(v) {
            None => I128_FORBIDDEN,
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
        (min as f64, max as f64)
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

/// The internal `i64` problem of an `Option<i64>` matrix whose entries fit the `i64` scheme
/// (always a copy: `None` becomes [`I64_FORBIDDEN`]).
fn optional_i64<'a>(
    costs: ArrayView2<'a, Option<i64>>,
    sense: Sense,
) -> Result<Problem<'a, i64>, AssignmentError> {
    let (rows, cols) = costs.dim();
    let transposed = rows > cols;
    let (nr, nc) = if transposed {
        (cols, rows)
    } else {
        (rows, cols)
    };
    let negated = sense == Sense::Maximize;
    let (mut min, mut max) = (i64::MAX, i64::MIN);
    check_copy::<i64>(rows, cols)?;
    let mut c = vec![0i64; nr * nc];
    for ((r, k), &v) in costs.indexed_iter() {
        let internal = match v {
            None => I64_FORBIDDEN,
            Some(v) => {
                let v = if negated { -v } else { v };
                min = min.min(v);
                max = max.max(v);
                v
            }
        };
        let at = if transposed { k * nc + r } else { r * nc + k };
        c[at] = internal;
    }
    let (min, max) = if min > max {
        (0.0, 0.0)
    } else {
        (min as f64, max as f64)
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

/// The error for the first entry refused in `sense` (invalid or out of range), in the
/// caller's row-major order.
fn first_refused<T: Cost>(costs: ArrayView2<'_, T>, sense: Sense) -> AssignmentError {
    for ((r, k), &v) in costs.indexed_iter() {
        match v.classify_cost(sense) {
            CostClass::Invalid(reason) => {
                return AssignmentError::InvalidCost {
                    row: r,
                    col: k,
                    value: format!("{v:?}"),
                    reason,
                };
            }
            CostClass::OutOfRange => {
                return AssignmentError::CostOutOfRange {
                    row: r,
                    col: k,
                    value: format!("{v:?}"),
                };
            }
            _ => {}
        }
    }
    unreachable!("called only when an entry is refused")
}

/// The error for the first invalid entry (in the caller's row-major order).
fn first_invalid<T: Cost>(costs: ArrayView2<'_, T>, sense: Sense) -> AssignmentError {
    for ((r, k), &v) in costs.indexed_iter() {
        if let CostClass::Invalid(reason) = v.classify_cost(sense) {
            return AssignmentError::InvalidCost {
                row: r,
                col: k,
                value: format!("{v:?}"),
                reason,
            };
        }
    }
    unreachable!("called only when an entry is invalid")
}

/// Running facts about the finite entries.
struct Stats {
    /// Whether every finite entry is an integer, when known.
    integral: Option<bool>,
    min: f64,
    max: f64,
}

/// Converts one entry to the internal value (negated when maximising, `+inf` forbidden).
#[inline(always)]
fn convert<T: Cost>(
    v: T,
    r: usize,
    k: usize,
    sense: Sense,
    st: &mut Stats,
) -> Result<f64, AssignmentError> {
    match v.classify_cost(sense) {
        CostClass::Finite(x) => {
            let x = if sense == Sense::Maximize { -x } else { x };
            st.integral = Some(st.integral.unwrap_or(true) && x == x.trunc());
            st.min = st.min.min(x);
            st.max = st.max.max(x);
            Ok(x)
        }
        CostClass::Forbidden => Ok(f64::INFINITY),
        CostClass::Invalid(reason) => Err(AssignmentError::InvalidCost {
            row: r,
            col: k,
            value: format!("{v:?}"),
            reason,
        }),
        CostClass::OutOfRange => Err(AssignmentError::CostOutOfRange {
            row: r,
            col: k,
            value: format!("{v:?}"),
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ndarray::array;

    #[test]
    fn transposes_and_negates() {
        let a = array![[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]];
        let p = Problem::new(a.view(), Sense::Maximize).unwrap();
        assert_eq!((p.nr, p.nc), (2, 3));
        assert!(p.transposed && p.negated && p.integral());
        assert_eq!(p.row(0), &[-1.0, -3.0, -5.0]);
        assert_eq!(p.row(1), &[-2.0, -4.0, -6.0]);
        assert_eq!((p.min, p.max), (-6.0, -1.0));
    }

    #[test]
    fn classifies_entries_as_scipy_does() {
        use Sense::{Maximize, Minimize};
        for sense in [Minimize, Maximize] {
            assert_eq!(
                f64::NAN.classify_cost(sense),
                CostClass::Invalid(NAN_REASON)
            );
            assert_eq!(None::<i64>.classify_cost(sense), CostClass::Forbidden);
            assert_eq!(Some(3i64).classify_cost(sense), CostClass::Finite(3.0));
            assert_eq!(i64::MAX.classify_cost(sense), CostClass::OutOfRange);
        }
        let minus = CostClass::Invalid(MINUS_INF_REASON);
        let plus = CostClass::Invalid(PLUS_INF_REASON);
        assert_eq!(f64::NEG_INFINITY.classify_cost(Minimize), minus);
        assert_eq!(f64::INFINITY.classify_cost(Minimize), CostClass::Forbidden);
        assert_eq!(f32::INFINITY.classify_cost(Minimize), CostClass::Forbidden);
        assert_eq!(f64::INFINITY.classify_cost(Maximize), plus);
        assert_eq!(
            f64::NEG_INFINITY.classify_cost(Maximize),
            CostClass::Forbidden
        );
        assert_eq!(
            f32::NEG_INFINITY.classify_cost(Maximize),
            CostClass::Forbidden
        );
    }

    #[test]
    fn maximising_turns_minus_infinity_into_the_internal_forbidden_value() {
        let a = array![[1.0, f64::NEG_INFINITY], [3.0, 4.0]];
        let p = Problem::new(a.view(), Sense::Maximize).unwrap();
        assert_eq!(p.row(0), &[-1.0, f64::INFINITY]);
        assert_eq!((p.min, p.max), (-4.0, -1.0));
        let a = array![[1.0, f64::INFINITY]];
        assert!(matches!(
            Problem::new(a.view(), Sense::Maximize),
            Err(AssignmentError::InvalidCost { row: 0, col: 1, reason, .. }) if reason == PLUS_INF_REASON
        ));
        // the integer path
        let a = array![[Some(1i64), None]];
        let p = Problem::new(a.view(), Sense::Maximize).unwrap();
        assert_eq!(p.row(0), &[-1.0, f64::INFINITY]);
    }

    #[test]
    fn huge_entries_are_scaled_by_a_power_of_two() {
        let a = array![[1e308, -1e308, 3.0], [f64::MAX, 0.5, 1e-300]];
        let p = Problem::new(a.view(), Sense::Minimize).unwrap();
        assert!(p.scale_exp > 0 && !p.integral());
        let f = pow2(-p.scale_exp);
        assert_eq!(p.row(0), &[1e308 * f, -1e308 * f, 3.0 * f]);
        assert_eq!(p.row(1)[2], 1e-300 * f);
        assert!((p.max.abs().max(p.min.abs()) * 4.0 * 4.0).is_finite());
        assert!(
            !(p.max.abs() * 2.0 * 4.0 * 4.0).is_finite(),
            "the smallest such power"
        );
        let small = array![[1e300, 2.0]];
        assert_eq!(
            Problem::new(small.view(), Sense::Minimize)
                .unwrap()
                .scale_exp,
            0
        );
    }
}
