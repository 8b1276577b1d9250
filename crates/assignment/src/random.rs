//! The straw man: a uniformly random assignment.

use ndarray::ArrayView2;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

use crate::problem::{Cost, Problem};
use crate::{Assignment, AssignmentError, Sense};

/// A uniformly random complete assignment (Fisher–Yates shuffle of the longer side, seeded
/// with ChaCha8 so a seed gives the same assignment on every machine). It ignores the costs,
/// except to report the total and to refuse forbidden pairs.
///
/// On `n x n` Exp(1) costs its expected cost is `n`, against the optimum's
/// `H_n^(2) -> pi^2/6`.
///
/// # Complexity
/// `O(n m)` to validate the matrix, `O(m)` for the shuffle.
///
/// # Errors
/// Input errors as [`jonker_volgenant`](crate::jonker_volgenant);
/// [`AssignmentError::Incomplete`] when the drawn assignment uses a forbidden pair.
///
/// # Examples
/// ```
/// use assignment::{random_assignment, Sense};
/// let c = ndarray::Array2::<f64>::ones((4, 6));
/// let a = random_assignment(c.view(), Sense::Minimize, 7)?;
/// assert_eq!(a.cost, 4.0);
/// assert_eq!(a, random_assignment(c.view(), Sense::Minimize, 7)?); // same seed, same answer
/// # Ok::<(), assignment::AssignmentError>(())
/// ```
pub fn random_assignment<T: Cost>(
    costs: ArrayView2<'_, T>,
    sense: Sense,
    seed: u64,
) -> Result<Assignment, AssignmentError> {
    Problem::solved(costs, sense, |p| solve(p, seed))
}

/// Random assignment of the internal problem.
pub(crate) fn solve(p: &Problem<'_>, seed: u64) -> Result<Vec<usize>, AssignmentError> {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut perm: Vec<usize> = (0..p.nc).collect();
    for k in (1..p.nc).rev() {
        let r = rng.random_range(0..=k);
        perm.swap(k, r);
    }
    perm.truncate(p.nr);
    let assigned = (0..p.nr)
        .filter(|&i| p.at(i, perm[i]) < f64::INFINITY)
        .count();
    if assigned < p.nr {
        return Err(AssignmentError::Incomplete {
            solver: "random",
            assigned,
            needed: p.nr,
        });
    }
    Ok(perm)
}
