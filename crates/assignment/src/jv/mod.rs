//! Shortest augmenting path in the Jonker–Volgenant style: the production solver.

mod core;
mod scan;
mod simd;
#[cfg(test)]
mod tests;

use ndarray::ArrayView2;

use self::simd::Lanes;
use crate::problem::{Cost, NativeProblem, Problem};
use crate::{Assignment, AssignmentError, Sense};

use self::core::Stop;

/// Solves the linear assignment problem exactly with the Jonker–Volgenant algorithm
/// (LAPJV): column reduction with reduction transfer, two rounds of augmenting row
/// reduction, then one Dijkstra-like shortest augmenting path per remaining free row
/// (Crouse's rectangular form, as in `scipy.optimize.linear_sum_assignment`, with JV's
/// early exit on the first free column at the current distance).
///
/// This is the crate's production solver; [`linear_sum_assignment`](crate::linear_sum_assignment)
/// calls it. The result carries dual potentials ([`Assignment::duals`]).
///
/// The matrix is read in its own element type: `f32`, `i32` and `i64` matrices are not
/// copied to `f64` (a copy of the same type is made only to transpose or negate). Integer
/// matrices are solved in exact `i64` arithmetic; floats in `f64`.
///
/// Rectangular matrices are solved directly (no padding): the shorter side is assigned
/// completely. The initialisation (column reduction) is used for square matrices only; a
/// rectangular matrix starts from zero potentials, which keeps the unassigned columns' duals
/// at zero.
///
/// # Complexity
/// `O(n^2 m)` time in the worst case for an `n x m` matrix (`n <= m`), typically far less on
/// random data because the initialisation assigns most rows; `O(m)` auxiliary memory per
/// solve besides the matrix, plus one copy of the matrix in its own type when it must be
/// transposed (more rows than columns), negated (maximising) or made contiguous.
///
/// # Errors
/// [`AssignmentError::InvalidCost`] for `NaN` and the infinity that would always be optimal
/// (`-inf` minimising, `+inf` maximising), [`AssignmentError::CostOutOfRange`] for integers
/// beyond 2^53, [`AssignmentError::Infeasible`] when forbidden pairs (`+inf` minimising,
/// `-inf` maximising, `None`) leave no complete assignment, [`AssignmentError::CostOverflow`]
/// when the optimal total is beyond `f64` (the crate README has the rules).
///
/// # Examples
/// ```
/// use assignment::{jonker_volgenant, Sense};
/// let c = ndarray::array![[4, 1, 3], [2, 0, 5], [3, 2, 2]];
/// let a = jonker_volgenant(c.view(), Sense::Minimize)?;
/// assert_eq!(a.row_to_col, vec![Some(1), Some(0), Some(2)]);
/// assert_eq!(a.cost, 5.0);
/// let d = a.duals.unwrap();
/// assert_eq!(d.row.iter().sum::<f64>() + d.col.iter().sum::<f64>(), 5.0);
/// # Ok::<(), assignment::AssignmentError>(())
/// ```
pub fn jonker_volgenant<T: Cost>(
    costs: ArrayView2<'_, T>,
    sense: Sense,
) -> Result<Assignment, AssignmentError> {
    let attempt = match NativeProblem::new(costs, sense)? {
        NativeProblem::F64(p) => run(&p),
        NativeProblem::F32(p) => run(&p),
        NativeProblem::I64(p) => run(&p),
        NativeProblem::I32(p) => run(&p),
    };
    match attempt {
        Ok(a) => Ok(a),
        Err(Stop::Error(e)) => Err(e),
        // An integer potential left the checked range: solve the same matrix in f64.
        Err(Stop::Range) => match run(&Problem::new(costs, sense)?) {
            Ok(a) => Ok(a),
            Err(Stop::Error(e)) => Err(e),
            Err(Stop::Range) => unreachable!("f64 potentials are always in range"),
        },
    }
}

/// Whether [`jonker_volgenant`] solves `costs` in exact integer arithmetic (`i32`, `i64` and
/// `Option<i64>` matrices whose magnitude times `4 (n + 2)` is below 2^55, so that no
/// potential can overflow) rather than in `f64` (floats, and larger integers). A solve can
/// still move to `f64` if a potential leaves the checked range, which the bound makes
/// practically impossible.
///
/// # Complexity
/// One pass over an integer matrix; `O(1)` for floats.
///
/// # Examples
/// ```
/// use assignment::{integer_arithmetic, Sense};
/// assert!(integer_arithmetic(ndarray::array![[1, 2], [3, 4]].view(), Sense::Minimize));
/// assert!(!integer_arithmetic(ndarray::array![[1.0, 2.0]].view(), Sense::Minimize));
/// assert!(!integer_arithmetic(ndarray::array![[1i64 << 53, 2]].view(), Sense::Minimize));
/// ```
pub fn integer_arithmetic<T: Cost>(costs: ArrayView2<'_, T>, sense: Sense) -> bool {
    matches!(
        NativeProblem::new(costs, sense),
        Ok(NativeProblem::I64(_) | NativeProblem::I32(_))
    )
}

/// Solves one internal problem and maps the solution back to the caller's matrix.
fn run<E: Lanes>(p: &Problem<'_, E>) -> Result<Assignment, Stop> {
    let (x, u, v) = core::solve(p)?;
    Ok(p.finish(&x, Some((u, v)))?)
}

/// The working memory of [`solve_into`]: one workspace per arithmetic type.
#[derive(Debug, Default)]
pub(crate) struct Workspaces {
    float: core::Workspace<f64>,
    int: core::Workspace<i64>,
    /// The caller's row of each pair, for a transposed problem.
    order: Vec<usize>,
}

/// Solves one problem in `ws` (allocating nothing once the workspace has grown) and writes
/// its pairs, sorted by row, into `rows` and `cols` (`min(r, c)` each); returns the cost.
pub(crate) fn solve_into<T: Cost>(
    costs: ArrayView2<'_, T>,
    sense: Sense,
    ws: &mut Workspaces,
    rows: &mut [usize],
    cols: &mut [usize],
) -> Result<f64, AssignmentError> {
    let attempt = match NativeProblem::new(costs, sense)? {
        NativeProblem::F64(p) => run_into(&p, &mut ws.float, &mut ws.order, rows, cols),
        NativeProblem::F32(p) => run_into(&p, &mut ws.float, &mut ws.order, rows, cols),
        NativeProblem::I64(p) => run_into(&p, &mut ws.int, &mut ws.order, rows, cols),
        NativeProblem::I32(p) => run_into(&p, &mut ws.int, &mut ws.order, rows, cols),
    };
    match attempt {
        Ok(cost) => Ok(cost),
        Err(Stop::Error(e)) => Err(e),
        Err(Stop::Range) => {
            let p = Problem::new(costs, sense)?;
            match run_into(&p, &mut ws.float, &mut ws.order, rows, cols) {
                Ok(cost) => Ok(cost),
                Err(Stop::Error(e)) => Err(e),
                Err(Stop::Range) => unreachable!("f64 potentials are always in range"),
            }
        }
    }
}

/// [`solve_into`] for one internal problem.
fn run_into<E: Lanes>(
    p: &Problem<'_, E>,
    ws: &mut core::Workspace<E::W>,
    order: &mut Vec<usize>,
    rows: &mut [usize],
    cols: &mut [usize],
) -> Result<f64, Stop> {
    core::solve_in(p, scan::Isa::detect(), ws)?;
    let cost = p.cost_of(&ws.x)?;
    if p.transposed {
        // Internal row i is the caller's column i, assigned to the caller's row x[i].
        order.clear();
        order.resize(p.nc, usize::MAX);
        for (i, &j) in ws.x.iter().enumerate() {
            order[j] = i;
        }
        let mut k = 0;
        for (r, &c) in order.iter().enumerate() {
            if c != usize::MAX {
                rows[k] = r;
                cols[k] = c;
                k += 1;
            }
        }
    } else {
        for (i, &j) in ws.x.iter().enumerate() {
            rows[i] = i;
            cols[i] = j;
        }
    }
    Ok(cost)
}
