//! Many small problems at once.

use gpu_runtime::{Exec, Target};
use ndarray::{ArrayView2, ArrayView3};
use rayon::prelude::*;

use crate::PairIndex;
use crate::jv::{Workspaces, solve_into};
use crate::{AUCTION_GPU_THRESHOLD, Assignment, AssignmentError, Cost, Sense, Solver, solve};

/// Solves many independent problems in parallel, one rayon task per problem (each problem
/// solved sequentially inside), and returns one result per problem in the input order.
/// A problem's error does not stop the others.
///
/// `exec` matters only for [`Solver::Auction`]: when it resolves to the GPU (`Exec::Cuda`, or
/// `Exec::Auto` with a GPU and at least [`AUCTION_GPU_THRESHOLD`] entries in total), the whole
/// batch is solved in **one kernel launch**, one thread block per problem; otherwise one rayon
/// task per problem. On CPUs, [`Solver::JonkerVolgenant`] is the fastest choice.
///
/// # Complexity
/// The sum of the solves, divided by the number of cores.
///
/// # Examples
/// ```
/// use assignment::{solve_batch, Sense, Solver};
/// use gpu_runtime::{Exec, Target};
/// let a = ndarray::array![[1.0, 2.0], [3.0, 1.0]];
/// let b = ndarray::array![[5, 1], [1, 5]];
/// let out = solve_batch(&[a.view(), a.view()], Solver::JonkerVolgenant, Sense::Minimize, Exec::Cpu);
/// assert!(out.iter().all(|r| r.as_ref().unwrap().cost == 2.0));
/// let out = solve_batch(&[b.view()], Solver::Hungarian, Sense::Maximize, Exec::Cpu);
/// assert_eq!(out[0].as_ref().unwrap().cost, 10.0);
/// ```
pub fn solve_batch<T: Cost>(
    problems: &[ArrayView2<'_, T>],
    solver: Solver,
    sense: Sense,
    exec: Exec,
) -> Vec<Result<Assignment, AssignmentError>> {
    let mut exec = exec;
    if solver == Solver::Auction {
        let total: u64 = problems
            .iter()
            .map(|c| {
                let n = c.nrows().max(c.ncols()) as u64;
                n * n
            })
            .sum();
        match exec.resolve(total, AUCTION_GPU_THRESHOLD) {
            Err(e) => {
                return problems
                    .iter()
                    .map(|_| Err(AssignmentError::from(e.clone())))
                    .collect();
            }
            Ok(Target::Cuda(gpu)) => return crate::auction::solve_batch_cuda(problems, sense, gpu),
            Ok(Target::Cpu) => exec = Exec::Cpu,
        }
    }
    problems
        .par_iter()
        .with_min_len(1)
        .map(|c| solve(c.view(), solver, sense, exec))
        .collect()
}

/// The solutions of a stack of problems of one shape: problem `k`'s pairs are
/// `rows[k * pairs..(k + 1) * pairs]` and `cols[..]` (sorted by row), its cost `costs[k]`.
#[derive(Debug, Clone, PartialEq)]
pub struct BatchAssignment {
    /// Problems in the stack.
    pub problems: usize,
    /// Pairs per problem: `min(rows, cols)` of the shape.
    pub pairs: usize,
    /// Row of each pair, problem after problem.
    pub rows: Vec<usize>,
    /// Column of each pair, problem after problem.
    pub cols: Vec<usize>,
    /// Total cost of each problem.
    pub costs: Vec<f64>,
}

/// Entries per rayon task of [`linear_sum_assignment_batch`]: small problems are solved in
/// groups, so that the scheduling cost is spread over tens of microseconds of work.
const BATCH_ENTRIES_PER_TASK: usize = 1 << 14;

/// Solves a stack of `b` problems of one shape `r x c` (an `ndarray` view of shape
/// `(b, r, c)`, any strides) with the Jonker–Volgenant solver: the batch form of
/// [`linear_sum_assignment`](crate::linear_sum_assignment), for many small problems (as a
/// tracker solves one per frame).
///
/// Problems are solved in groups on the rayon pool, each thread reusing one workspace, so that
/// a problem allocates nothing: the per-problem cost is the solve itself, the validation of
/// its entries and the writing of its pairs. Element types and rules are those of
/// [`jonker_volgenant`](crate::jonker_volgenant) (integers solved in integer arithmetic);
/// duals are not kept.
///
/// # Complexity
/// The sum of the solves divided by the number of threads; `O(c)` memory per thread besides
/// the output (`2 b min(r, c)` indices and `b` costs).
///
/// # Errors
/// The first failing problem's error (by index) as [`AssignmentError::InProblem`]. A problem
/// whose optimal total is beyond `f64` is not an error: its pairs are written and its cost is
/// `+inf` or `-inf` (as [`JvWorkspace::solve_into`](crate::JvWorkspace::solve_into)).
///
/// # Examples
/// ```
/// use assignment::{linear_sum_assignment_batch, Sense};
/// let stack = ndarray::array![[[4, 1], [2, 0]], [[1, 5], [5, 1]], [[9, 9], [9, 9]]];
/// let b = linear_sum_assignment_batch(stack.view(), Sense::Minimize)?;
/// assert_eq!((b.problems, b.pairs), (3, 2));
/// assert_eq!(&b.cols[..2], &[1, 0]); // problem 0: row 0 -> column 1, row 1 -> column 0
/// assert_eq!(b.costs, vec![3.0, 2.0, 18.0]);
/// # Ok::<(), assignment::AssignmentError>(())
/// ```
pub fn linear_sum_assignment_batch<T: Cost>(
    costs: ArrayView3<'_, T>,
    sense: Sense,
) -> Result<BatchAssignment, AssignmentError> {
    let (b, r, c) = costs.dim();
    let pairs = r.min(c);
    let mut out = BatchAssignment {
        problems: b,
        pairs,
        rows: vec![0; b * pairs],
        cols: vec![0; b * pairs],
        costs: vec![0.0; b],
    };
    linear_sum_assignment_batch_into(costs, sense, &mut out.rows, &mut out.cols, &mut out.costs)?;
    Ok(out)
}

/// [`linear_sum_assignment_batch`] into the caller's buffers: problem `k`'s pairs go to
/// `rows[k * p..(k + 1) * p]` and `cols[..]` (`p = min(r, c)`, sorted by row; `usize` or
/// `i64`, see [`PairIndex`]) and its cost to `totals[k]`, so that a binding can write into
/// its own arrays. A batch of little work in total (one group) is solved on the calling
/// thread, without the rayon pool.
///
/// # Complexity
/// As [`linear_sum_assignment_batch`], with no memory besides the workspaces.
///
/// # Errors
/// As [`linear_sum_assignment_batch`]; the buffers' contents are then unspecified.
///
/// # Panics
/// If `rows` or `cols` is not `b * min(r, c)` long, or `totals` not `b`.
///
/// # Examples
/// ```
/// use assignment::{linear_sum_assignment_batch_into, Sense};
/// let stack = ndarray::array![[[4, 1], [2, 0]], [[1, 5], [5, 1]]];
/// let (mut rows, mut cols, mut totals) = ([0i64; 4], [0i64; 4], [0.0; 2]);
/// linear_sum_assignment_batch_into(stack.view(), Sense::Minimize, &mut rows, &mut cols, &mut totals)?;
/// assert_eq!((rows, cols, totals), ([0, 1, 0, 1], [1, 0, 0, 1], [3.0, 2.0]));
/// # Ok::<(), assignment::AssignmentError>(())
/// ```
pub fn linear_sum_assignment_batch_into<T: Cost, I: PairIndex>(
    costs: ArrayView3<'_, T>,
    sense: Sense,
    rows: &mut [I],
    cols: &mut [I],
    totals: &mut [f64],
) -> Result<(), AssignmentError> {
    let (b, r, c) = costs.dim();
    let pairs = r.min(c);
    assert!(
        rows.len() == b * pairs && cols.len() == b * pairs && totals.len() == b,
        "buffers of {} and {} pairs and {} totals for {b} problems of {pairs} pairs",
        rows.len(),
        cols.len(),
        totals.len()
    );
    if b == 0 {
        return Ok(());
    }
    let group = (BATCH_ENTRIES_PER_TASK / (r * c).max(1)).clamp(1, 256);
    let pairs_per_group = (group * pairs).max(1);
    // Solves the problems of group `g` (its totals, pairs) in `ws`: the first error by index.
    let solve_group = |ws: &mut Workspaces,
                       g: usize,
                       totals: &mut [f64],
                       rows: &mut [I],
                       cols: &mut [I]|
     -> Option<(usize, AssignmentError)> {
        for (k, total) in totals.iter_mut().enumerate() {
            let index = g * group + k;
            let at = k * pairs..(k + 1) * pairs;
            let problem = costs.index_axis(ndarray::Axis(0), index);
            match solve_into(problem, sense, ws, &mut rows[at.clone()], &mut cols[at]) {
                Ok(v) => *total = v,
                Err(e) => return Some((index, e)),
            }
        }
        None
    };
    let first_error = if b <= group {
        solve_group(&mut Workspaces::default(), 0, totals, rows, cols)
    } else {
        let first = std::sync::Mutex::new(None::<(usize, AssignmentError)>);
        totals
            .par_chunks_mut(group)
            .zip(rows.par_chunks_mut(pairs_per_group))
            .zip(cols.par_chunks_mut(pairs_per_group))
            .enumerate()
            .for_each_init(Workspaces::default, |ws, (g, ((totals, rows), cols))| {
                if let Some((index, e)) = solve_group(ws, g, totals, rows, cols) {
                    let mut first = first.lock().unwrap_or_else(|p| p.into_inner());
                    if first.as_ref().is_none_or(|(i, _)| index < *i) {
                        *first = Some((index, e));
                    }
                }
            });
        first.into_inner().unwrap_or_else(|p| p.into_inner())
    };
    match first_error {
        Some((index, e)) => Err(AssignmentError::InProblem {
            index,
            source: Box::new(e),
        }),
        None => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::jonker_volgenant;
    use ndarray::Array3;

    fn stack(b: usize, r: usize, c: usize, max: u64, seed: u64) -> Array3<i64> {
        let mut s = seed;
        Array3::from_shape_fn((b, r, c), |_| {
            s = s
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            ((s >> 33) % max) as i64
        })
    }

    /// Every problem's pairs and cost are those of a single solve, in every shape and type.
    #[test]
    fn batch_matches_single_solves() {
        for (b, r, c) in [
            (0, 3, 3),
            (1, 1, 1),
            (7, 5, 5),
            (300, 4, 9),
            (300, 9, 4),
            (1000, 3, 3),
            (40, 30, 30),
            (3, 0, 4),
        ] {
            for max in [3u64, 1000] {
                let s = stack(b, r, c, max, (b * r * c) as u64 + max);
                let f = s.mapv(|v| v as f64 * 0.5);
                for sense in [Sense::Minimize, Sense::Maximize] {
                    let bi = linear_sum_assignment_batch(s.view(), sense).unwrap();
                    let bf = linear_sum_assignment_batch(f.view(), sense).unwrap();
                    let b32 =
                        linear_sum_assignment_batch(s.mapv(|v| v as i32).view(), sense).unwrap();
                    assert_eq!((bi.problems, bi.pairs), (b, r.min(c)));
                    assert_eq!(bi, b32);
                    // into i64 buffers, as the Python binding writes them
                    let n = b * r.min(c);
                    let (mut rows, mut cols, mut totals) =
                        (vec![-1i64; n], vec![-1i64; n], vec![0.0; b]);
                    linear_sum_assignment_batch_into(
                        s.view(),
                        sense,
                        &mut rows,
                        &mut cols,
                        &mut totals,
                    )
                    .unwrap();
                    assert!(rows.iter().zip(&bi.rows).all(|(&a, &b)| a as usize == b));
                    assert!(cols.iter().zip(&bi.cols).all(|(&a, &b)| a as usize == b));
                    assert_eq!(totals, bi.costs);
                    for k in 0..b {
                        let one =
                            jonker_volgenant(s.index_axis(ndarray::Axis(0), k), sense).unwrap();
                        let (rows, cols) = one.pairs();
                        let at = k * bi.pairs..(k + 1) * bi.pairs;
                        assert_eq!(bi.costs[k], one.cost);
                        assert_eq!(bf.costs[k], one.cost * 0.5);
                        assert_eq!(&bi.rows[at.clone()], &rows[..]);
                        assert_eq!(&bi.cols[at], &cols[..]);
                    }
                }
            }
        }
    }

    /// A total beyond `f64` is a cost of `+inf` or `-inf` with the optimal pairs, not an error
    /// (scipy returns the pairs of such a matrix); the single solve reports it as an error.
    #[test]
    fn totals_beyond_f64_are_infinite_costs() {
        let s = ndarray::array![
            [[1e308, 1e308], [1e308, -1e308]],
            [[1e308, 1e308], [1e308, 1e308]],
            [[-1e308, -1e308], [-1e308, -1e308]],
            [[1.0, 2.0], [3.0, 5.0]]
        ];
        let b = linear_sum_assignment_batch(s.view(), Sense::Minimize).unwrap();
        assert_eq!(b.costs, vec![0.0, f64::INFINITY, f64::NEG_INFINITY, 5.0]);
        assert_eq!(b.cols, vec![0, 1, 0, 1, 0, 1, 1, 0]);
        let b = linear_sum_assignment_batch(s.view(), Sense::Maximize).unwrap();
        assert_eq!(b.costs[0], f64::INFINITY);
        assert_eq!(&b.cols[..2], &[1, 0]);
        assert!(matches!(
            jonker_volgenant(s.index_axis(ndarray::Axis(0), 1), Sense::Minimize),
            Err(AssignmentError::CostOverflow { .. })
        ));
    }

    #[test]
    fn the_first_failing_problem_is_named() {
        let mut s = stack(600, 3, 3, 10, 1).mapv(|v| v as f64);
        s[[599, 0, 0]] = f64::NAN;
        s[[457, 1, 1]] = f64::NAN;
        s[[458, 0, 0]] = f64::NEG_INFINITY;
        let e = linear_sum_assignment_batch(s.view(), Sense::Minimize).unwrap_err();
        assert!(
            matches!(e, AssignmentError::InProblem { index: 457, ref source }
            if matches!(**source, AssignmentError::InvalidCost { row: 1, col: 1, .. }))
        );
        assert!(
            e.to_string()
                .starts_with("problem 457: invalid cost NaN at (1, 1)")
        );
        // a batch small enough to be solved on the calling thread names it the same way
        let mut s = stack(6, 3, 3, 10, 2).mapv(|v| v as f64);
        s[[5, 2, 2]] = f64::NAN;
        s[[4, 0, 1]] = f64::NEG_INFINITY;
        let e = linear_sum_assignment_batch(s.view(), Sense::Minimize).unwrap_err();
        assert!(
            e.to_string()
                .starts_with("problem 4: invalid cost -inf at (0, 1)"),
            "{e}"
        );
    }
}
