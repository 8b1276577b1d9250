//! Cost element types, input validation, and the internal problem every solver works on.
//!
//! - `mod.rs`: the internal [`Problem`] (a row-major minimisation with no more rows than
//!   columns) and what every solver does with it: its rows, the caller's cost of a solution,
//!   the solution mapped back to the caller's orientation, sense and scale.
//! - `cost.rs`: the [`Cost`] element types and how each entry reads ([`CostClass`], scipy's
//!   rules for infinities and `NaN`), and the error for a refused entry.
//! - `float.rs`: [`Problem::new`], the `f64` problem every solver can take (a vectorised
//!   validation pass, the power-of-two scaling of huge entries).
//! - `native.rs`: [`NativeProblem`], the problem in the caller's own element type for the
//!   Jonker–Volgenant solver (`f32`, `i32`, `i64` as they are; `i128` for integers beyond the
//!   `i64` scheme), and the [`Direct`] element types the sparse solver reads in place too.

use std::borrow::Cow;

use crate::num::{Elem, Potentials, Work};
use crate::{Assignment, AssignmentError, Duals};

mod cost;
mod float;
mod native;
#[cfg(test)]
mod tests;

pub use cost::{Cost, CostClass};
pub(crate) use cost::{TypedSlice, first_refused, forbidden_infinity, refusal};
pub(crate) use native::{Direct, NativeProblem};

/// An internal solution: `x[i]` = column of row `i`, row potentials `u`, column potentials `v`.
pub(crate) type Solution = (Vec<usize>, Vec<f64>, Vec<f64>);

/// The validated problem: a row-major `nr x nc` minimisation with `nr <= nc` (the input
/// transposed if it had more rows than columns, negated if maximising, scaled by `2^-scale_exp`
/// if its entries are so large that sums could overflow), `+inf` = forbidden.
///
/// `E` is the element type the matrix is held in: `f64` for every solver, and for the
/// Jonker–Volgenant solver also `f32`, `i64`, `i32` and `i128` (the caller's own type, see
/// [`NativeProblem`]); forbidden pairs are then `+inf` in the float types and
/// [`I64_FORBIDDEN`](crate::num::I64_FORBIDDEN) or [`I128_FORBIDDEN`](crate::num::I128_FORBIDDEN)
/// in the integer ones.
#[derive(Debug, Clone)]
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

/// The internal shape of a `rows x cols` matrix: `(nr, nc, transposed)`, transposed when it
/// has more rows than columns, so that `nr <= nc`.
fn internal_shape(rows: usize, cols: usize) -> (usize, usize, bool) {
    if rows > cols {
        (cols, rows, true)
    } else {
        (rows, cols, false)
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
