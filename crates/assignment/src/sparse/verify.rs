//! The independent check of a sparse solution (the sparse form of [`crate::verify`]).

use super::{Csr, Index, min_weight_full_matching};
use crate::verify::{duality_gap, entry_value, tolerance};
use crate::{AUCTION_FLOAT_GAP, Assignment, Cost, Duals, Sense, Solver, VerifyError};

/// Checks `a`, the result of `solver` on the sparse matrix `m` in direction `sense`: a
/// matching of stored entries (distinct columns), with as many pairs as the shorter side,
/// whose cost is the sum of its entries (a repeated entry counts at its best) and whose duals
/// are tight on the matched pairs and feasible on every stored entry, with no duality gap (so
/// it is optimal). The auction returns no duals: its cost is compared with the exact sparse
/// solver's, within twice [`AUCTION_FLOAT_GAP`] of the range of the entries (for non-integer
/// costs). The heuristics (a `solver` that is neither exact nor the auction) are held to the
/// exact rules too: the sparse API has none.
///
/// # Complexity
/// `O(rows + cols + nnz)`, plus the exact solve for the auction.
///
/// # Errors
/// The first rule broken, as a [`VerifyError`]; [`VerifyError::Reference`] when the exact
/// solve for the auction fails.
///
/// # Examples
/// ```
/// use assignment::sparse::{min_weight_full_matching, verify, Csr};
/// use assignment::{Sense, Solver, VerifyError};
/// let m = Csr::new(2, 2, &[0, 2, 3][..], &[0, 1, 0][..], &[1.0, 5.0, 2.0][..])?;
/// let mut a = min_weight_full_matching(&m, Sense::Minimize)?;
/// assert_eq!(verify(&m, &a, Solver::Sparse, Sense::Minimize), Ok(()));
/// a.duals = None;
/// assert_eq!(verify(&m, &a, Solver::Sparse, Sense::Minimize), Err(VerifyError::NoDuals));
/// # Ok::<(), assignment::AssignmentError>(())
/// ```
pub fn verify<T: Cost, I: Index>(
    m: &Csr<'_, T, I>,
    a: &Assignment,
    solver: Solver,
    sense: Sense,
) -> Result<(), VerifyError> {
    if a.row_to_col.len() != m.rows {
        return Err(VerifyError::RowCount {
            got: a.row_to_col.len(),
            rows: m.rows,
        });
    }
    if solver == Solver::Auction {
        return verify_auction(m, a, sense);
    }
    let sign = if sense == Sense::Minimize { 1.0 } else { -1.0 };
    let scale = (0..m.nnz())
        .map(|k| entry_value(m.data[k], sense))
        .fold(1.0f64, |s, v| s.max(v.abs()));
    let tol = tolerance(scale, m.rows, m.cols);
    let d = a.duals.as_ref().ok_or(VerifyError::NoDuals)?;
    let mut used = vec![false; m.cols];
    let (mut total, mut count) = (0.0f64, 0usize);
    for (i, j) in a.row_to_col.iter().enumerate() {
        let Some(j) = *j else { continue };
        if j >= m.cols || used[j] {
            return Err(VerifyError::ColumnInvalid { col: j });
        }
        used[j] = true;
        // the best stored entry of the pair (parallel entries: the better one)
        let best = pair_entries(m, i, j, sense)
            .map(|v| sign * v)
            .fold(f64::INFINITY, f64::min);
        if !best.is_finite() {
            return Err(VerifyError::NotStored { row: i, col: j });
        }
        if (sign * best - d.row[i] - d.col[j]).abs() > tol {
            return Err(VerifyError::NotTight { row: i, col: j });
        }
        total += sign * best;
        count += 1;
    }
    let needed = m.rows.min(m.cols);
    if count != needed {
        return Err(VerifyError::TooFewMatched {
            pairs: count,
            needed,
        });
    }
    if (total - a.cost).abs() > tol {
        return Err(VerifyError::CostMismatch {
            reported: a.cost,
            sum: total,
        });
    }
    dual_feasible(m, d, sign, sense, tol)?;
    duality_gap(d, a.cost, tol.max(1e-9 * a.cost.abs()))
}

/// The auction's check: its cost against the exact sparse solver's, and distinct columns.
fn verify_auction<T: Cost, I: Index>(
    m: &Csr<'_, T, I>,
    a: &Assignment,
    sense: Sense,
) -> Result<(), VerifyError> {
    let exact = min_weight_full_matching(m, sense).map_err(VerifyError::Reference)?;
    let (lo, hi) = (0..m.nnz())
        .map(|k| entry_value(m.data[k], sense))
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), v| {
            (a.min(v), b.max(v))
        });
    let allowed = 1e-9 * exact.cost.abs().max(1.0) + AUCTION_FLOAT_GAP * (hi - lo).max(0.0) * 2.0;
    if (exact.cost - a.cost).abs() > allowed {
        return Err(VerifyError::NotOptimal {
            cost: a.cost,
            optimum: exact.cost,
        });
    }
    let mut used = vec![false; m.cols];
    for &j in a.row_to_col.iter().flatten() {
        if j >= m.cols {
            return Err(VerifyError::ColumnInvalid { col: j });
        }
        if std::mem::replace(&mut used[j], true) {
            return Err(VerifyError::ColumnUsedTwice { col: j });
        }
    }
    Ok(())
}

/// The stored entries of pair `(i, j)` (more than one for parallel entries), as `f64`.
fn pair_entries<'m, T: Cost, I: Index>(
    m: &'m Csr<'_, T, I>,
    i: usize,
    j: usize,
    sense: Sense,
) -> impl Iterator<Item = f64> + 'm {
    let (line, other) = if m.transposed { (j, i) } else { (i, j) };
    (m.indptr[line].ix()..m.indptr[line + 1].ix())
        .filter(move |&k| m.indices[k].ix() == other)
        .map(move |k| entry_value(m.data[k], sense))
}

/// Dual feasibility: no stored entry has a negative reduced cost (positive when maximising)
/// beyond `tol`.
fn dual_feasible<T: Cost, I: Index>(
    m: &Csr<'_, T, I>,
    d: &Duals,
    sign: f64,
    sense: Sense,
    tol: f64,
) -> Result<(), VerifyError> {
    let lines = m.indptr.len() - 1;
    for line in 0..lines {
        for k in m.indptr[line].ix()..m.indptr[line + 1].ix() {
            let (row, col) = if m.transposed {
                (m.indices[k].ix(), line)
            } else {
                (line, m.indices[k].ix())
            };
            let c = entry_value(m.data[k], sense);
            if c.is_finite() && sign * (c - d.row[row] - d.col[col]) < -tol {
                return Err(VerifyError::DualInfeasible { row, col });
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use gpu_runtime::Exec;

    /// scipy's example, [[3, 3, 6], [4, 3, 5], [10, 1, 8]], as CSR and as CSC.
    const PTR: [usize; 4] = [0, 3, 6, 9];
    const IDX: [usize; 9] = [0, 1, 2, 0, 1, 2, 0, 1, 2];
    const DATA: [i64; 9] = [3, 3, 6, 4, 3, 5, 10, 1, 8];

    #[test]
    fn sparse_verify_accepts_the_solvers_and_catches_broken_duals() {
        for sense in [Sense::Minimize, Sense::Maximize] {
            let m = Csr::new(3, 3, &PTR[..], &IDX[..], &DATA[..]).unwrap();
            let a = min_weight_full_matching(&m, sense).unwrap();
            assert_eq!(verify(&m, &a, Solver::Sparse, sense), Ok(()));
            let mut loose = a.clone();
            loose.duals.as_mut().unwrap().col[0] -= 0.5;
            assert!(matches!(
                verify(&m, &loose, Solver::Sparse, sense),
                Err(VerifyError::NotTight { .. } | VerifyError::DualInfeasible { .. })
            ));
            let b = super::super::auction(&m, sense, Exec::Cpu).unwrap();
            assert_eq!(verify(&m, &b, Solver::Auction, sense), Ok(()));
            let mut worse = b;
            worse.cost += 1.0;
            assert!(matches!(
                verify(&m, &worse, Solver::Auction, sense),
                Err(VerifyError::NotOptimal { .. })
            ));
            // the transpose read from the same arrays as CSC
            let t = Csr::from_csc(3, 3, &PTR[..], &IDX[..], &DATA[..]).unwrap();
            let at = min_weight_full_matching(&t, sense).unwrap();
            assert_eq!(verify(&t, &at, Solver::Sparse, sense), Ok(()));
        }
    }

    #[test]
    fn sparse_verify_refuses_pairs_that_are_not_stored() {
        // [[1, 5], [2, .]]: the only full matching is (0, 1), (1, 0)
        let m = Csr::new(
            2,
            2,
            &[0usize, 2, 3][..],
            &[0usize, 1, 0][..],
            &[1.0, 5.0, 2.0][..],
        )
        .unwrap();
        let a = min_weight_full_matching(&m, Sense::Minimize).unwrap();
        let mut off = a;
        off.row_to_col = vec![None, Some(1)];
        assert_eq!(
            verify(&m, &off, Solver::Sparse, Sense::Minimize),
            Err(VerifyError::NotStored { row: 1, col: 1 })
        );
    }
}
