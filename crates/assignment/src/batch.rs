//! Many small problems at once.

use gpu_runtime::{Exec, Target};
use ndarray::ArrayView2;
use rayon::prelude::*;

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
