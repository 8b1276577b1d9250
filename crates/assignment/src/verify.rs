//! Independent checks of a solution: a valid complete assignment whose reported cost is the
//! sum of its entries and, for the exact solvers, a proof of optimality (the dual
//! certificate when the solver returned duals, else agreement with another exact solver).
//! [`verify`] checks a dense matrix; [`sparse::verify`](crate::sparse::verify) a sparse one.

use ndarray::ArrayView2;

use crate::problem::forbidden_infinity;
use crate::{
    AUCTION_FLOAT_GAP, Assignment, AssignmentError, Cost, CostClass, Duals, Sense, Solver,
    brute_force, jonker_volgenant,
};

/// Why a solution failed its check ([`verify`], [`sparse::verify`](crate::sparse::verify)).
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum VerifyError {
    /// The assignment does not have one entry per row of the matrix.
    #[error("wrong number of rows")]
    RowCount {
        /// Entries of the assignment.
        got: usize,
        /// Rows of the matrix.
        rows: usize,
    },
    /// A column is out of the matrix or assigned to two rows.
    #[error("column {col} invalid or used twice")]
    ColumnInvalid {
        /// The column.
        col: usize,
    },
    /// A column is matched to two rows (the sparse auction's check).
    #[error("column {col} used twice")]
    ColumnUsedTwice {
        /// The column.
        col: usize,
    },
    /// An assigned pair is forbidden.
    #[error("forbidden pair ({row}, {col}) used")]
    ForbiddenPair {
        /// Row of the pair.
        row: usize,
        /// Column of the pair.
        col: usize,
    },
    /// A matched pair of a sparse matrix is not one of its stored entries.
    #[error("pair ({row}, {col}) is not a stored entry")]
    NotStored {
        /// Row of the pair.
        row: usize,
        /// Column of the pair.
        col: usize,
    },
    /// Fewer pairs than the shorter side of the matrix are assigned.
    #[error("{pairs} pairs assigned, {needed} needed")]
    TooFewAssigned {
        /// Pairs assigned.
        pairs: usize,
        /// The shorter side of the matrix.
        needed: usize,
    },
    /// Fewer pairs than the shorter side of a sparse matrix are matched.
    #[error("{pairs} pairs matched, {needed} needed")]
    TooFewMatched {
        /// Pairs matched.
        pairs: usize,
        /// The shorter side of the matrix.
        needed: usize,
    },
    /// The reported cost is not the sum of the assigned entries.
    #[error("reported cost {reported} but the pairs sum to {sum}")]
    CostMismatch {
        /// The assignment's cost.
        reported: f64,
        /// The sum of its entries.
        sum: f64,
    },
    /// A sparse solution came without the duals that prove it optimal.
    #[error("the sparse solver returned no duals")]
    NoDuals,
    /// The duals are not tight on a matched pair (reduced cost not zero).
    #[error("dual not tight on the matched pair ({row}, {col})")]
    NotTight {
        /// Row of the pair.
        row: usize,
        /// Column of the pair.
        col: usize,
    },
    /// The duals are not feasible: an allowed pair has a negative reduced cost (positive when
    /// maximising).
    #[error("dual constraint violated at ({row}, {col})")]
    DualInfeasible {
        /// Row of the pair.
        row: usize,
        /// Column of the pair.
        col: usize,
    },
    /// The dual objective differs from the cost.
    #[error("duality gap: dual {dual} vs cost {cost}")]
    DualityGap {
        /// Sum of the row and column potentials.
        dual: f64,
        /// The assignment's cost.
        cost: f64,
    },
    /// Another exact solver found a better cost.
    #[error("cost {cost} but the optimum is {optimum}")]
    NotOptimal {
        /// The assignment's cost.
        cost: f64,
        /// The other solver's.
        optimum: f64,
    },
    /// The reference solve for the comparison failed.
    #[error("{0}")]
    Reference(AssignmentError),
}

/// Whether `solver`'s result must be optimal: the exact solvers, and the auction (exact on
/// integers, within [`AUCTION_FLOAT_GAP`] of the range otherwise).
fn checks_optimality(solver: Solver) -> bool {
    solver.is_exact() || solver == Solver::Auction
}

/// The tolerance of the cost and dual checks: `1e-9` times the largest magnitude (at least 1)
/// times `rows + cols + 1`.
pub(crate) fn tolerance(scale: f64, rows: usize, cols: usize) -> f64 {
    1e-9 * scale * (rows + cols + 1) as f64
}

/// Entry `v` as `f64` for the checks: its value, the forbidding infinity for a forbidden pair,
/// `NaN` for an entry the solvers refuse.
pub(crate) fn entry_value<T: Cost>(v: T, sense: Sense) -> f64 {
    v.raw_float()
        .unwrap_or_else(|| match v.classify_cost(sense) {
            CostClass::Finite(x) => x,
            CostClass::Forbidden => forbidden_infinity(sense),
            _ => f64::NAN,
        })
}

/// The sum of `entries` computed at the scale of the largest, so that huge costs whose total
/// is finite (the solvers accept them) cannot overflow the check.
fn scaled_sum(entries: &[f64]) -> f64 {
    let big = entries.iter().fold(0.0f64, |m, v| m.max(v.abs()));
    if big > 0.0 {
        entries.iter().map(|v| v / big).sum::<f64>() * big
    } else {
        0.0
    }
}

/// Checks `a`, the result of `solver` on `costs` in direction `sense`, independently of the
/// solver: one entry per row, distinct columns, no forbidden pair, as many pairs as the shorter
/// side, a cost equal to the sum of the entries; and for the exact solvers and the auction,
/// optimality: the dual certificate when `a` has duals (feasible on every allowed pair, no
/// duality gap), else the cost of brute force (up to 8 lines) or Jonker–Volgenant, within
/// twice [`AUCTION_FLOAT_GAP`] of the range for the auction on non-integer costs.
///
/// # Complexity
/// `O(rows cols)`, plus a reference solve when `a` has no duals and must be optimal.
///
/// # Errors
/// The first rule broken, as a [`VerifyError`]; [`VerifyError::Reference`] when the reference
/// solve fails.
///
/// # Examples
/// ```
/// use assignment::{jonker_volgenant, verify, Sense, Solver, VerifyError};
/// let c = ndarray::array![[1.0, 2.0], [3.0, 1.0]];
/// let mut a = jonker_volgenant(c.view(), Sense::Minimize)?;
/// assert_eq!(verify(c.view(), &a, Solver::JonkerVolgenant, Sense::Minimize), Ok(()));
/// a.cost = 3.0;
/// assert!(matches!(
///     verify(c.view(), &a, Solver::JonkerVolgenant, Sense::Minimize),
///     Err(VerifyError::CostMismatch { .. })
/// ));
/// # Ok::<(), assignment::AssignmentError>(())
/// ```
pub fn verify<T: Cost>(
    costs: ArrayView2<'_, T>,
    a: &Assignment,
    solver: Solver,
    sense: Sense,
) -> Result<(), VerifyError> {
    let (r, k) = costs.dim();
    // the entries as f64, NaN for a forbidden pair (integers here are at most 2^53: exact)
    let value = |i: usize, j: usize| match costs[[i, j]].classify_cost(sense) {
        CostClass::Finite(v) => v,
        _ => f64::NAN,
    };
    if a.row_to_col.len() != r {
        return Err(VerifyError::RowCount {
            got: a.row_to_col.len(),
            rows: r,
        });
    }
    let entries = assigned_entries(a, k, &value)?;
    if entries.len() != r.min(k) {
        return Err(VerifyError::TooFewAssigned {
            pairs: entries.len(),
            needed: r.min(k),
        });
    }
    let total = scaled_sum(&entries);
    let finite = || {
        costs.iter().filter_map(|v| match v.classify_cost(sense) {
            CostClass::Finite(v) => Some(v),
            _ => None,
        })
    };
    let scale = finite().fold(1.0f64, |m, v| m.max(v.abs()));
    let tol = tolerance(scale, r, k);
    if (total - a.cost).abs() > tol {
        return Err(VerifyError::CostMismatch {
            reported: a.cost,
            sum: total,
        });
    }
    if !checks_optimality(solver) {
        return Ok(());
    }
    if let Some(d) = &a.duals {
        let sign = if sense == Sense::Minimize { 1.0 } else { -1.0 };
        for i in 0..r {
            for j in 0..k {
                let v = value(i, j);
                if v.is_finite() && sign * (v - d.row[i] - d.col[j]) < -tol {
                    return Err(VerifyError::DualInfeasible { row: i, col: j });
                }
            }
        }
        return duality_gap(d, a.cost, tol);
    }
    let reference = if r.max(k) <= 8 {
        brute_force(costs, sense)
    } else {
        jonker_volgenant(costs, sense)
    }
    .map_err(VerifyError::Reference)?;
    let (lo, hi) = finite().fold((f64::INFINITY, f64::NEG_INFINITY), |m, v| {
        (m.0.min(v), m.1.max(v))
    });
    let allowed = tol + AUCTION_FLOAT_GAP * (hi - lo).max(0.0) * 2.0;
    if (reference.cost - a.cost).abs() > allowed {
        return Err(VerifyError::NotOptimal {
            cost: a.cost,
            optimum: reference.cost,
        });
    }
    Ok(())
}

/// The entries of the assigned pairs (`value(i, j)`, `NaN` for a forbidden pair), checking
/// that `a` has one entry per row and that its columns are in `0..cols`, distinct and allowed.
fn assigned_entries(
    a: &Assignment,
    cols: usize,
    value: &impl Fn(usize, usize) -> f64,
) -> Result<Vec<f64>, VerifyError> {
    let rows = a.row_to_col.len();
    let mut used = vec![false; cols];
    let mut entries = Vec::with_capacity(rows.min(cols));
    for (i, j) in a.row_to_col.iter().enumerate() {
        if let Some(j) = *j {
            if j >= cols || used[j] {
                return Err(VerifyError::ColumnInvalid { col: j });
            }
            used[j] = true;
            if !value(i, j).is_finite() {
                return Err(VerifyError::ForbiddenPair { row: i, col: j });
            }
            entries.push(value(i, j));
        }
    }
    Ok(entries)
}

/// Strong duality: the potentials `d` sum to `cost` within `tol`.
pub(crate) fn duality_gap(d: &Duals, cost: f64, tol: f64) -> Result<(), VerifyError> {
    let dual: f64 = d.row.iter().sum::<f64>() + d.col.iter().sum::<f64>();
    if (dual - cost).abs() > tol {
        return Err(VerifyError::DualityGap { dual, cost });
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::solve;
    use gpu_runtime::Exec;
    use ndarray::array;

    #[test]
    fn verify_catches_wrong_assignments() {
        let c = array![[1.0, 2.0], [3.0, 1.0]];
        let best = solve(
            c.view(),
            Solver::JonkerVolgenant,
            Sense::Minimize,
            Exec::Cpu,
        )
        .unwrap();
        assert_eq!(
            verify(c.view(), &best, Solver::JonkerVolgenant, Sense::Minimize),
            Ok(())
        );
        let mut worse = best.clone();
        worse.row_to_col = vec![Some(1), Some(0)];
        worse.cost = 5.0;
        worse.duals = None;
        // a valid assignment, but not optimal: fine for greedy, not for an exact solver
        assert_eq!(
            verify(c.view(), &worse, Solver::Greedy, Sense::Minimize),
            Ok(())
        );
        assert_eq!(
            verify(c.view(), &worse, Solver::Hungarian, Sense::Minimize),
            Err(VerifyError::NotOptimal {
                cost: 5.0,
                optimum: 2.0
            })
        );
        let mut wrong_cost = worse.clone();
        wrong_cost.cost = 4.0;
        assert!(matches!(
            verify(c.view(), &wrong_cost, Solver::Greedy, Sense::Minimize),
            Err(VerifyError::CostMismatch { .. })
        ));
        let mut twice = worse;
        twice.row_to_col = vec![Some(0), Some(0)];
        assert_eq!(
            verify(c.view(), &twice, Solver::Greedy, Sense::Minimize),
            Err(VerifyError::ColumnInvalid { col: 0 })
        );
    }

    #[test]
    fn verify_checks_the_dual_certificate() {
        let c = array![[4, 1, 3], [2, 0, 5], [3, 2, 2]];
        let best = crate::jonker_volgenant(c.view(), Sense::Maximize).unwrap();
        assert_eq!(
            verify(c.view(), &best, Solver::JonkerVolgenant, Sense::Maximize),
            Ok(())
        );
        let mut shifted = best.clone();
        let d = shifted.duals.as_mut().unwrap();
        d.row[0] -= 1.0;
        assert!(matches!(
            verify(c.view(), &shifted, Solver::JonkerVolgenant, Sense::Maximize),
            Err(VerifyError::DualInfeasible { row: 0, .. })
        ));
        let mut gap = best;
        let d = gap.duals.as_mut().unwrap();
        d.row.iter_mut().for_each(|u| *u += 1.0);
        assert!(matches!(
            verify(c.view(), &gap, Solver::JonkerVolgenant, Sense::Maximize),
            Err(VerifyError::DualityGap { .. })
        ));
    }

    #[test]
    fn verify_refuses_forbidden_and_missing_pairs() {
        let c = array![[f64::INFINITY, 1.0], [2.0, 3.0]];
        let a = Assignment {
            row_to_col: vec![Some(0), Some(1)],
            cost: f64::INFINITY,
            duals: None,
        };
        assert_eq!(
            verify(c.view(), &a, Solver::Greedy, Sense::Minimize),
            Err(VerifyError::ForbiddenPair { row: 0, col: 0 })
        );
        let half = Assignment {
            row_to_col: vec![Some(1), None],
            cost: 1.0,
            duals: None,
        };
        assert_eq!(
            verify(c.view(), &half, Solver::Greedy, Sense::Minimize),
            Err(VerifyError::TooFewAssigned {
                pairs: 1,
                needed: 2
            })
        );
        let short = Assignment {
            row_to_col: vec![Some(1)],
            cost: 1.0,
            duals: None,
        };
        assert_eq!(
            verify(c.view(), &short, Solver::Greedy, Sense::Minimize),
            Err(VerifyError::RowCount { got: 1, rows: 2 })
        );
    }
}
