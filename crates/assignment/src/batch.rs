//! Many small problems at once.

use gpu_runtime::Exec;
use ndarray::ArrayView2;
use rayon::prelude::*;

use crate::{Assignment, AssignmentError, Cost, Sense, Solver, solve};

/// Solves many independent problems in parallel, one rayon task per problem (each problem
/// solved sequentially inside), and returns one result per problem in the input order.
/// A problem's error does not stop the others.
///
/// `exec` is passed to each solve (it matters only for [`Solver::Auction`]); batches of
/// small problems are fastest on CPU threads with [`Solver::JonkerVolgenant`]. A single GPU
/// launch for a whole batch is not implemented yet.
///
/// # Complexity
/// The sum of the solves, divided by the number of cores.
///
/// # Examples
/// ```
/// use assignment::{solve_batch, Sense, Solver};
/// use gpu_runtime::Exec;
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
    problems
        .par_iter()
        .with_min_len(1)
        .map(|c| solve(c.view(), solver, sense, exec))
        .collect()
}
