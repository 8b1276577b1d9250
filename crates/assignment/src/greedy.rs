//! The greedy heuristic: repeatedly take the smallest entry whose row and column are free.

use ndarray::ArrayView2;
use rayon::prelude::*;

use crate::problem::{Cost, Problem};
use crate::{Assignment, AssignmentError, Sense};

/// From this many entries on the sort runs on all cores.
const PARALLEL_SORT_FROM: usize = 1 << 16;

/// The greedy heuristic: sort all allowed entries once (a sorted queue), then walk the queue
/// and take every entry whose row and column are both still free, until every line of the
/// shorter side is assigned.
///
/// **Tie-breaking**, in the caller's orientation: smaller cost first (larger when
/// maximising), then the smaller row index, then the smaller column index — i.e. row-major
/// order among equal values. Ties matter: on matrices with many equal entries an early tie
/// choice can force expensive entries later (see the crate's tests for a 6 x 6 example).
///
/// On `n x n` matrices of i.i.d. Exp(1) costs the expected greedy cost is `H_n` (the harmonic
/// number, `~ ln n`) against the optimum's `H_n^(2) -> pi^2/6`, so its approximation factor
/// grows like `ln n` (see [`experiments`](crate::experiments)).
///
/// # Complexity
/// `O(n m log(n m))` for an `n x m` matrix (`O(n^2 log n)` square): one sort of the `n m`
/// entries (parallel from 65 536 entries), then one linear pass. `O(n m)` memory.
///
/// # Errors
/// Input errors as [`jonker_volgenant`](crate::jonker_volgenant);
/// [`AssignmentError::Incomplete`] when forbidden pairs leave some line unassigned (an exact
/// solver may still find a complete assignment).
///
/// # Examples
/// ```
/// use assignment::{greedy, jonker_volgenant, Sense};
/// let c = ndarray::array![[1.0, 2.0], [2.0, 100.0]];
/// assert_eq!(greedy(c.view(), Sense::Minimize)?.cost, 101.0); // takes the 1 first
/// assert_eq!(jonker_volgenant(c.view(), Sense::Minimize)?.cost, 4.0);
/// # Ok::<(), assignment::AssignmentError>(())
/// ```
pub fn greedy<T: Cost>(
    costs: ArrayView2<'_, T>,
    sense: Sense,
) -> Result<Assignment, AssignmentError> {
    let p = Problem::new(costs, sense)?;
    let x = solve(&p)?;
    p.finish(&x, None)
}

/// Greedy on the internal problem.
pub(crate) fn solve(p: &Problem<'_>) -> Result<Vec<usize>, AssignmentError> {
    let (nr, nc) = (p.nr, p.nc);
    // Key: (value, index in the caller's row-major order), so ties follow the documented rule
    // whether or not the problem was transposed internally.
    let orig_index = |i: usize, j: usize| -> u64 {
        if p.transposed {
            (j * nr + i) as u64
        } else {
            (i * nc + j) as u64
        }
    };
    let mut entries: Vec<(f64, u64, u32, u32)> = Vec::with_capacity(nr * nc);
    for i in 0..nr {
        for (j, &c) in p.row(i).iter().enumerate() {
            if c < f64::INFINITY {
                entries.push((c, orig_index(i, j), i as u32, j as u32));
            }
        }
    }
    let cmp = |a: &(f64, u64, u32, u32), b: &(f64, u64, u32, u32)| {
        a.0.total_cmp(&b.0).then(a.1.cmp(&b.1))
    };
    if entries.len() >= PARALLEL_SORT_FROM {
        entries.par_sort_unstable_by(cmp);
    } else {
        entries.sort_unstable_by(cmp);
    }
    let mut x = vec![usize::MAX; nr];
    let mut col_used = vec![false; nc];
    let mut assigned = 0;
    for &(_, _, i, j) in &entries {
        if assigned == nr {
            break;
        }
        let (i, j) = (i as usize, j as usize);
        if x[i] == usize::MAX && !col_used[j] {
            x[i] = j;
            col_used[j] = true;
            assigned += 1;
        }
    }
    if assigned < nr {
        return Err(AssignmentError::Incomplete {
            solver: "greedy",
            assigned,
            needed: nr,
        });
    }
    Ok(x)
}
