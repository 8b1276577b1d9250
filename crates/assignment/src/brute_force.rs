//! Exhaustive search over all permutations: the test oracle.

use combinatorics::{Objective, PermError, SEARCH_GPU_THRESHOLD, search_permutations};
use gpu_runtime::{Exec, Target};
use ndarray::ArrayView2;
use rayon::prelude::*;

use crate::problem::{Cost, Problem};
use crate::{Assignment, AssignmentError, Sense};

/// Largest dimension brute force accepts: 13! = 6.2e9 permutations (seconds on many cores,
/// minutes on one). 14! would be 14 times more.
pub const BRUTE_FORCE_MAX: usize = 13;

/// From this many columns on, the first position's choices are searched in parallel.
const PARALLEL_FROM: usize = 9;

/// Every `RESYNC` steps the running float score is recomputed from scratch, so rounding
/// errors of the differential updates cannot accumulate over billions of steps.
const RESYNC: u32 = 1 << 12;

/// Sums of integers below this (2^53) are exact in `f64`.
const EXACT_SUM: f64 = 9_007_199_254_740_992.0;

/// Solves the linear assignment problem by trying every permutation of the columns (Heap's
/// algorithm) and keeping the best; the plainest possible oracle for the other solvers.
///
/// Heap's algorithm changes one transposition per step, so the score is updated from the two
/// swapped positions (differential scoring, `O(1)` per permutation instead of `O(n)`).
/// Forbidden pairs are counted separately from the finite sum, so a permutation with fewer
/// forbidden pairs always wins and no `inf - inf` arises. Unless the entries are integers whose
/// sums are exact, the running sum carries a bound on its rounding error: it is recomputed
/// every 4096 steps, and every permutation that may beat the best within that bound is scored
/// from scratch, so entries of very different magnitudes (`1e300` next to `1`) cannot make it
/// miss the optimum. Ties are broken by Heap's order (the first best permutation found wins).
///
/// For an `r x c` matrix the larger dimension `n = max(r, c)` is permuted; `n > 13` is
/// refused. From `n = 9` the choices of the first row are searched on all cores (rayon).
///
/// # Complexity
/// `O(n!)` time, `O(n)` memory.
///
/// # Errors
/// [`AssignmentError::TooLarge`] for `n > 13`, otherwise as
/// [`jonker_volgenant`](crate::jonker_volgenant).
///
/// # Examples
/// ```
/// use assignment::{brute_force, Sense};
/// let c = ndarray::array![[4.0, 1.0, 3.0], [2.0, 0.0, 5.0], [3.0, 2.0, 2.0]];
/// assert_eq!(brute_force(c.view(), Sense::Minimize)?.cost, 5.0);
/// # Ok::<(), assignment::AssignmentError>(())
/// ```
pub fn brute_force<T: Cost>(
    costs: ArrayView2<'_, T>,
    sense: Sense,
) -> Result<Assignment, AssignmentError> {
    brute_force_exec(costs, sense, Exec::Cpu)
}

/// Brute force where `exec` says: on the CPU, [`brute_force`] (Heap's algorithm); on the GPU,
/// the combinatorics crate's permutation search
/// ([`combinatorics::search_permutations`] with [`Objective::Assignment`]), which scores every
/// permutation of the longer side on the device and returns the best, smallest lexicographic
/// rank on ties. `Exec::Auto` uses the GPU from [`SEARCH_GPU_THRESHOLD`] permutations when one
/// is present. A rectangular matrix is padded to square with zero-cost dummy rows.
///
/// The CPU and GPU paths may return different optimal assignments when several tie (they
/// enumerate permutations in different orders); the optimal cost is the same.
///
/// # Complexity
/// `O(n!)` work, `n <= 13`.
///
/// # Errors
/// As [`brute_force`], plus [`AssignmentError::Gpu`].
///
/// # Examples
/// ```
/// use assignment::{brute_force_exec, Sense};
/// use gpu_runtime::Exec;
/// let c = ndarray::array![[4.0, 1.0, 3.0], [2.0, 0.0, 5.0], [3.0, 2.0, 2.0]];
/// assert_eq!(brute_force_exec(c.view(), Sense::Minimize, Exec::Auto)?.cost, 5.0);
/// # Ok::<(), assignment::AssignmentError>(())
/// ```
pub fn brute_force_exec<T: Cost>(
    costs: ArrayView2<'_, T>,
    sense: Sense,
    exec: Exec,
) -> Result<Assignment, AssignmentError> {
    let n = costs.nrows().max(costs.ncols());
    if n > BRUTE_FORCE_MAX {
        return Err(AssignmentError::TooLarge {
            n,
            limit: BRUTE_FORCE_MAX,
        });
    }
    Problem::solved(costs, sense, |p| {
        let permutations: u64 = (1..=p.nc as u64).product();
        match exec.resolve(permutations, SEARCH_GPU_THRESHOLD)? {
            Target::Cpu => solve(p),
            Target::Cuda(_) => solve_search(p, Exec::Cuda),
        }
    })
}

/// The internal problem through the combinatorics permutation search (rows padded to square).
pub(crate) fn solve_search(p: &Problem<'_>, exec: Exec) -> Result<Vec<usize>, AssignmentError> {
    let (nr, n) = (p.nr, p.nc);
    if nr == 0 {
        return Ok(Vec::new());
    }
    let mut m = vec![0.0f64; n * n];
    m[..nr * n].copy_from_slice(&p.c);
    let best = search_permutations(n, &Objective::Assignment(&m), exec).map_err(|e| match e {
        PermError::Gpu(g) => AssignmentError::Gpu(g),
        other => AssignmentError::CostOutOfRange {
            row: 0,
            col: 0,
            value: format!("permutation search rejected the matrix: {other}"),
        },
    })?;
    if best.score == f64::INFINITY {
        return Err(AssignmentError::Infeasible);
    }
    Ok(best.permutation[..nr].to_vec())
}

/// Score of a partial permutation: (number of forbidden pairs, sum of the finite ones).
#[derive(Clone, Copy, Debug, PartialEq)]
struct Score {
    forbidden: i64,
    sum: f64,
}

impl Score {
    fn better_than(self, other: Score) -> bool {
        self.forbidden < other.forbidden
            || (self.forbidden == other.forbidden && self.sum < other.sum)
    }

    /// Whether a score whose sum may be off by up to `drift` could be better than `other`.
    fn may_beat(self, other: Score, drift: f64) -> bool {
        self.forbidden < other.forbidden
            || (self.forbidden == other.forbidden && self.sum - drift < other.sum)
    }
}

/// Searches the internal problem; `x[i]` for each row. Errors with `Infeasible` when every
/// permutation uses a forbidden pair.
pub(crate) fn solve(p: &Problem<'_>) -> Result<Vec<usize>, AssignmentError> {
    let (nr, nc) = (p.nr, p.nc);
    if nr == 0 {
        return Ok(Vec::new());
    }
    let best = if nc >= PARALLEL_FROM {
        (0..nc)
            .into_par_iter()
            .map(|first| {
                let mut perm: Vec<usize> = (0..nc).collect();
                perm.swap(0, first);
                search(p, perm, 1)
            })
            .reduce_with(|a, b| if b.0.better_than(a.0) { b } else { a })
            .expect("nc >= 1")
    } else {
        search(p, (0..nc).collect(), 0)
    };
    if best.0.forbidden > 0 {
        return Err(AssignmentError::Infeasible);
    }
    Ok(best.1[..nr].to_vec())
}

fn entry(p: &Problem<'_>, pos: usize, col: usize) -> (i64, f64) {
    if pos >= p.nr {
        return (0, 0.0);
    }
    let c = p.at(pos, col);
    if c == f64::INFINITY { (1, 0.0) } else { (0, c) }
}

fn score_of(p: &Problem<'_>, perm: &[usize]) -> Score {
    let mut s = Score {
        forbidden: 0,
        sum: 0.0,
    };
    for (pos, &col) in perm.iter().enumerate().take(p.nr) {
        let (f, c) = entry(p, pos, col);
        s.forbidden += f;
        s.sum += c;
    }
    s
}

/// Heap's algorithm over `perm[fixed..]`, positions before `fixed` held constant.
fn search(p: &Problem<'_>, mut perm: Vec<usize>, fixed: usize) -> (Score, Vec<usize>) {
    let n = perm.len();
    let m = n - fixed;
    let mut cur = score_of(p, &perm);
    let mut best = (cur, perm.clone());
    let mut counters = vec![0usize; m];
    let mut since_sync = 0u32;
    // Integer sums below 2^53 are exact; otherwise `drift` bounds how far the running sum may
    // be from the permutation's own sum (`score_of`, which the result reports), and any
    // permutation that may beat the best is rescored exactly. With entries of very different
    // magnitudes (1e300 next to 1), the running sum loses the small ones entirely and the
    // bound makes the search rescore instead of trusting it.
    let magnitude = p.min.abs().max(p.max.abs());
    let exact = p.integral() && magnitude * (n as f64) < EXACT_SUM;
    // each update rounds four times, within eps of at most (4 + n) times the largest entry
    let step_error = 2.0 * f64::EPSILON * (4.0 + n as f64) * magnitude;
    let mut drift = 0.0f64;
    let mut k = 1;
    while k < m {
        if counters[k] < k {
            let (a, b) = if k % 2 == 0 {
                (fixed, fixed + k)
            } else {
                (fixed + counters[k], fixed + k)
            };
            // Differential update: only positions a and b change.
            let (fa, ca) = entry(p, a, perm[a]);
            let (fb, cb) = entry(p, b, perm[b]);
            let (fa2, ca2) = entry(p, a, perm[b]);
            let (fb2, cb2) = entry(p, b, perm[a]);
            perm.swap(a, b);
            cur.forbidden += fa2 + fb2 - fa - fb;
            cur.sum += (ca2 + cb2) - (ca + cb);
            if !exact {
                drift += step_error;
                since_sync += 1;
                if since_sync >= RESYNC {
                    cur = score_of(p, &perm);
                    since_sync = 0;
                    drift = 0.0;
                }
            }
            if cur.may_beat(best.0, drift) {
                let exact_score = score_of(p, &perm);
                if exact_score.better_than(best.0) {
                    best.0 = exact_score;
                    best.1.copy_from_slice(&perm);
                }
                cur = exact_score;
                drift = 0.0;
                since_sync = 0;
            }
            counters[k] += 1;
            k = 1;
        } else {
            counters[k] = 0;
            k += 1;
        }
    }
    best
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::generate::{exp_matrix, int_matrix};

    /// The combinatorics search (here on the CPU, the same entry point the GPU path uses)
    /// agrees with Heap's algorithm on the optimal cost, rectangular and forbidden included.
    #[test]
    fn permutation_search_agrees_with_heap() {
        for seed in 0..20u64 {
            let (r, k) = (1 + (seed as usize % 7), 1 + (seed as usize * 3 % 7));
            let c = exp_matrix(r, k, seed);
            for sense in [Sense::Minimize, Sense::Maximize] {
                let mut c = c.clone();
                if seed % 3 == 0 {
                    // the forbidding infinity of the sense
                    c[[0, 0]] = if sense == Sense::Minimize {
                        f64::INFINITY
                    } else {
                        f64::NEG_INFINITY
                    };
                }
                let p = Problem::new(c.view(), sense).unwrap();
                let heap = solve(&p).map(|x| p.finish(&x, None).unwrap().cost);
                let search = solve_search(&p, Exec::Cpu).map(|x| p.finish(&x, None).unwrap().cost);
                match (heap, search) {
                    (Ok(a), Ok(b)) => assert!((a - b).abs() < 1e-9, "{r}x{k}: {a} vs {b}"),
                    (a, b) => assert_eq!(a, b),
                }
            }
        }
        let c = int_matrix(3, 3, 5, 1).mapv(|v| if v == 0 { None } else { Some(v) });
        let p = Problem::new(c.view(), Sense::Minimize).unwrap();
        assert_eq!(
            solve(&p).is_ok(),
            solve_search(&p, Exec::Cpu).is_ok(),
            "feasibility must agree"
        );
    }

    #[test]
    fn gpu_brute_force_matches_cpu() {
        let Some(_gpu) = gpu_runtime::testing::gpu_for_test("assignment gpu_brute_force") else {
            return;
        };
        for n in 1..=10usize {
            let c = int_matrix(n, n + 1, 9, n as u64);
            let g = brute_force_exec(c.view(), Sense::Minimize, Exec::Cuda).unwrap();
            let h = brute_force(c.view(), Sense::Minimize).unwrap();
            assert_eq!(g.cost, h.cost, "n = {n}");
        }
    }
}
