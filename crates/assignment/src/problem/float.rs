//! [`Problem::new`]: the `f64` problem of any cost matrix, validated in one vectorised pass
//! over the float types (the error's position searched only when there is one), converted
//! entry by entry from the integer ones, and scaled by a power of two when its entries are so
//! large that the solvers' sums could overflow.

use std::borrow::Cow;

use ndarray::ArrayView2;

use super::cost::forbidden_infinity;
use super::{Problem, check_copy, first_refused, internal_shape, pow2, refusal};
use crate::{Assignment, AssignmentError, Cost, CostClass, Sense};

impl<'a> Problem<'a, f64> {
    /// Validates `costs`, solves the internal problem by `solve` (each internal row's column)
    /// and maps the solution back to the caller's matrix, without duals.
    pub(crate) fn solved<T: Cost>(
        costs: ArrayView2<'a, T>,
        sense: Sense,
        solve: impl FnOnce(&Problem<'_>) -> Result<Vec<usize>, AssignmentError>,
    ) -> Result<Assignment, AssignmentError> {
        let p = Problem::new(costs, sense)?;
        let x = solve(&p)?;
        p.finish(&x, None)
    }

    /// Validates `costs` and builds the internal problem.
    pub(crate) fn new<T: Cost>(
        costs: ArrayView2<'a, T>,
        sense: Sense,
    ) -> Result<Self, AssignmentError> {
        let (rows, cols) = costs.dim();
        let (nr, nc, transposed) = internal_shape(rows, cols);
        let negated = sense == Sense::Maximize;
        let borrowed = if !transposed && !negated {
            costs.to_slice().and_then(T::as_f64_slice)
        } else {
            None
        };
        let (mut c, st): (Cow<'a, [f64]>, Stats) = if let Some(slice) = borrowed {
            let (bad, st) = float_stats(slice, sense);
            if bad {
                return Err(first_refused(costs, sense));
            }
            (Cow::Borrowed(slice), st)
        } else {
            check_copy::<f64>(rows, cols)?;
            let mut c = vec![0.0f64; nr * nc];
            let st = fill(costs, transposed, sense, &mut c)?;
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
        let scale_exp = scale_exponent(max.abs().max(min.abs()), nc);
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

/// The smallest `e` such that sums of about `4 (nc + 1)` entries of `magnitude` times `2^-e`
/// stay finite (0 for all but entries near `f64::MAX`).
fn scale_exponent(magnitude: f64, nc: usize) -> i32 {
    let growth = 4.0 * (nc as f64 + 1.0);
    let mut scale_exp = 0;
    while !(magnitude * pow2(-scale_exp) * growth).is_finite() {
        scale_exp += 1;
    }
    scale_exp
}

/// Copies `costs` into `c` (transposing if needed) and returns the statistics of the
/// entries. The float fast path: copy, then one branch-free pass that flags invalid entries
/// (`NaN` and the wrong infinity for `sense`), collects the statistics and negates the
/// entries when maximising (so `-inf` becomes the internal `+inf`, forbidden); only when an
/// entry is invalid is the input searched again, for the error's position. The integer
/// element types: each entry classified and converted (exactly: they are at most `2^53`);
/// the first refused entry is the error.
fn fill<T: Cost>(
    costs: ArrayView2<'_, T>,
    transposed: bool,
    sense: Sense,
    c: &mut [f64],
) -> Result<Stats, AssignmentError> {
    if costs.first().is_some_and(|v| v.raw_float().is_some()) {
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
            return Err(first_refused(costs, sense));
        }
        if sense == Sense::Maximize {
            c.iter_mut().for_each(|x| *x = -*x);
        }
        Ok(st)
    } else {
        let nc = if transposed {
            costs.nrows()
        } else {
            costs.ncols()
        };
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
        Ok(st)
    }
}

/// One branch-free (vectorisable) pass over raw float entries: whether any is invalid for
/// `sense` (`NaN`, `-inf` when minimising, `+inf` when maximising), and the statistics of the
/// finite ones after negation when maximising.
pub(super) fn float_stats(c: &[f64], sense: Sense) -> (bool, Stats) {
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

/// Running facts about the finite entries.
pub(super) struct Stats {
    /// Whether every finite entry is an integer, when known.
    pub(super) integral: Option<bool>,
    /// The smallest finite entry (`+inf` when there is none).
    pub(super) min: f64,
    /// The largest finite entry (`-inf` when there is none).
    pub(super) max: f64,
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
        CostClass::Invalid(_) | CostClass::OutOfRange => {
            Err(refusal(v, r, k, sense).expect("a refused entry"))
        }
    }
}
