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

use crate::num::Stop;

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
/// matrices are solved in exact integer arithmetic, over the whole `i64` range: in `i64`, or
/// in `i128` (a copy) when `4 (n + 2)` times their magnitude reaches 2^55; floats in `f64`.
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
/// (`-inf` minimising, `+inf` maximising), [`AssignmentError::Infeasible`] when forbidden pairs (`+inf` minimising,
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
        NativeProblem::I128(p) => run(&p),
    };
    match attempt {
        Ok(a) => Ok(a),
        Err(Stop::Error(e)) => Err(e),
        // An i64 potential left the checked range: solve the same matrix in i128.
        Err(Stop::Range) => match run(&wide_problem(costs, sense)?) {
            Ok(a) => Ok(a),
            Err(Stop::Error(e)) => Err(e),
            Err(Stop::Range) => unreachable!("i128 potentials stay far inside their range"),
        },
    }
}

/// The `i128` problem of an integer matrix whose `i64` solve left its range (only integer
/// solves can: `f64` potentials have no range).
fn wide_problem<'a, T: Cost>(
    costs: ArrayView2<'a, T>,
    sense: Sense,
) -> Result<Problem<'a, i128>, AssignmentError> {
    NativeProblem::wide(costs, sense).expect("only integer solves leave their range")
}

/// Whether [`jonker_volgenant`] solves `costs` in exact integer arithmetic rather than in
/// `f64`: true for every valid `i32`, `i64` and `Option<i64>` matrix (in `i64` when the
/// magnitude times `4 (n + 2)` is below 2^55, so that no potential can overflow, else in
/// `i128`), false for floats.
///
/// # Complexity
/// One pass over an integer matrix (and a copy when it needs `i128`); `O(1)` for floats.
///
/// # Examples
/// ```
/// use assignment::{integer_arithmetic, Sense};
/// assert!(integer_arithmetic(ndarray::array![[1, 2], [3, 4]].view(), Sense::Minimize));
/// assert!(!integer_arithmetic(ndarray::array![[1.0, 2.0]].view(), Sense::Minimize));
/// assert!(integer_arithmetic(ndarray::array![[i64::MAX, i64::MIN]].view(), Sense::Maximize));
/// ```
pub fn integer_arithmetic<T: Cost>(costs: ArrayView2<'_, T>, sense: Sense) -> bool {
    matches!(
        NativeProblem::new(costs, sense),
        Ok(NativeProblem::I64(_) | NativeProblem::I32(_) | NativeProblem::I128(_))
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
    wide: core::Workspace<i128>,
    /// The caller's row of each pair, for a transposed problem.
    order: Vec<usize>,
}

/// Solves one problem in `ws` (allocating nothing once the workspace has grown) and writes
/// its pairs, sorted by row, into `rows` and `cols` (`min(r, c)` each); returns the cost,
/// `+inf` or `-inf` when the optimal total is beyond `f64` (the pairs are written then too).
pub(crate) fn solve_into<T: Cost, I: PairIndex>(
    costs: ArrayView2<'_, T>,
    sense: Sense,
    ws: &mut Workspaces,
    rows: &mut [I],
    cols: &mut [I],
) -> Result<f64, AssignmentError> {
    let Workspaces {
        float,
        int,
        wide,
        order,
    } = ws;
    let attempt = match NativeProblem::new(costs, sense)? {
        NativeProblem::F64(p) => run_into(&p, float, order, rows, cols),
        NativeProblem::F32(p) => run_into(&p, float, order, rows, cols),
        NativeProblem::I64(p) => run_into(&p, int, order, rows, cols),
        NativeProblem::I32(p) => run_into(&p, int, order, rows, cols),
        NativeProblem::I128(p) => run_into(&p, wide, order, rows, cols),
    };
    match attempt {
        Ok(cost) => Ok(cost),
        Err(Stop::Error(e)) => Err(e),
        Err(Stop::Range) => match run_into(&wide_problem(costs, sense)?, wide, order, rows, cols) {
            Ok(cost) => Ok(cost),
            Err(Stop::Error(e)) => Err(e),
            Err(Stop::Range) => unreachable!("i128 potentials stay far inside their range"),
        },
    }
}

/// [`solve_into`] for one internal problem.
fn run_into<E: Lanes, I: PairIndex>(
    p: &Problem<'_, E>,
    ws: &mut core::Workspace<E::W>,
    order: &mut Vec<usize>,
    rows: &mut [I],
    cols: &mut [I],
) -> Result<f64, Stop> {
    core::solve_in(p, scan::Isa::detect(), ws)?;
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
                rows[k] = I::from_index(r);
                cols[k] = I::from_index(c);
                k += 1;
            }
        }
    } else {
        for (i, &j) in ws.x.iter().enumerate() {
            rows[i] = I::from_index(i);
            cols[i] = I::from_index(j);
        }
    }
    Ok(p.total_of(&ws.x)?)
}

mod sealed {
    pub trait Sealed {}
    impl Sealed for usize {}
    impl Sealed for i64 {}
}

/// The integer type the pairs of [`JvWorkspace::solve_into`] and
/// [`linear_sum_assignment_batch_into`](crate::linear_sum_assignment_batch_into) are written
/// in: `usize`, or `i64` (numpy's index type, so that a binding writes into its arrays
/// directly). Sealed.
pub trait PairIndex: sealed::Sealed + Copy + Send + Sync + std::fmt::Debug + 'static {
    /// The index `i` (a row or column of a matrix, so below `isize::MAX`).
    fn from_index(i: usize) -> Self;
}

impl PairIndex for usize {
    #[inline(always)]
    fn from_index(i: usize) -> usize {
        i
    }
}

impl PairIndex for i64 {
    #[inline(always)]
    fn from_index(i: usize) -> i64 {
        i as i64
    }
}

/// Reusable working memory of the Jonker–Volgenant solver, for a caller that solves many
/// problems one after another (a tracker solving one problem per frame, a binding called once
/// per problem): once it has grown to the largest problem, a solve allocates nothing and
/// writes its pairs into the caller's buffers. [`linear_sum_assignment_batch`](crate::linear_sum_assignment_batch)
/// keeps one per thread.
///
/// # Examples
/// ```
/// use assignment::{JvWorkspace, Sense};
/// let mut ws = JvWorkspace::new();
/// let (mut rows, mut cols) = ([0usize; 2], [0usize; 2]);
/// for c in [ndarray::array![[4, 1], [2, 0]], ndarray::array![[1, 5], [5, 1]]] {
///     let cost = ws.solve_into(c.view(), Sense::Minimize, &mut rows, &mut cols)?;
///     assert_eq!(cost, (c[[0, cols[0]]] + c[[1, cols[1]]]) as f64);
/// }
/// assert_eq!((rows, cols), ([0, 1], [0, 1]));
/// # Ok::<(), assignment::AssignmentError>(())
/// ```
#[derive(Debug, Default)]
pub struct JvWorkspace(Workspaces);

impl JvWorkspace {
    /// An empty workspace (it grows on its first solves).
    pub fn new() -> Self {
        Self::default()
    }

    /// Solves `costs` exactly as [`jonker_volgenant`] does (same rules, element types and
    /// pairs) and writes the `min(r, c)` pairs, sorted by row, into `rows[..min(r, c)]` and
    /// `cols[..min(r, c)]` (`usize` or `i64`, see [`PairIndex`]); returns the total cost.
    /// Duals are not kept.
    ///
    /// # Complexity
    /// That of [`jonker_volgenant`]; no allocation once the workspace has grown (a copy of
    /// the matrix is still made when it must be transposed, negated or widened).
    ///
    /// # Errors
    /// Those of [`jonker_volgenant`], except that an optimal total beyond `f64` is not an
    /// error: the pairs are written and the cost is `+inf` or `-inf` (scipy returns the pairs
    /// of such a matrix too).
    ///
    /// # Panics
    /// If `rows` or `cols` is shorter than `min(r, c)`.
    pub fn solve_into<T: Cost, I: PairIndex>(
        &mut self,
        costs: ArrayView2<'_, T>,
        sense: Sense,
        rows: &mut [I],
        cols: &mut [I],
    ) -> Result<f64, AssignmentError> {
        let pairs = costs.nrows().min(costs.ncols());
        assert!(
            rows.len() >= pairs && cols.len() >= pairs,
            "room for {pairs} pairs needed, {} and {} given",
            rows.len(),
            cols.len()
        );
        solve_into(costs, sense, &mut self.0, rows, cols)
    }
}
