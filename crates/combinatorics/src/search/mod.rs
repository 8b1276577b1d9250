//! Search over permutations without materialising them: score each permutation with a
//! built-in objective and keep the best (smallest score; ties go to the smallest rank).

//!
//! `mod.rs` holds the public API, validation and the `Exec` dispatch; `best.rs` the order of
//! results both backends reduce with; `cpu.rs` the monomorphised sequential and rayon scans;
//! `cuda.rs` the kernel launch and the reduction of the per-block bests.

use gpu_runtime::{Backend, Exec, Target};

use crate::batch::check_range;
use crate::rank::{MAX_N_U64, factorial_u64, unrank_permutation};
use crate::{PermError, next_permutation};

mod best;
mod cpu;
mod cuda;
#[cfg(test)]
mod tests;

use best::better;

/// From this many permutations `Exec::Auto` searches on the GPU (when present). Not measured
/// yet: the development machine has no GPU.
pub const SEARCH_GPU_THRESHOLD: u64 = 1 << 20;

/// What a permutation search minimises. Matrices are `n x n`, row-major, `f64`; entries must be
/// finite or `+inf` (a forbidden pair: every permutation using it scores `+inf`). NaN and
/// `-inf` are rejected.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Objective<'a> {
    /// Assignment cost `sum_i M[i, p(i)]`: row `i` is assigned column `p(i)`.
    Assignment(&'a [f64]),
    /// Closed tour length `sum_{i < n-1} D[p(i), p(i+1)] + D[p(n-1), p(0)]`: visit the cities
    /// in the order `p` and return to the start.
    Tour(&'a [f64]),
}

impl Objective<'_> {
    /// The matrix.
    pub fn matrix(&self) -> &[f64] {
        match self {
            Objective::Assignment(m) | Objective::Tour(m) => m,
        }
    }

    /// The objective's name (`"assignment"` or `"tour"`).
    pub fn name(&self) -> &'static str {
        match self {
            Objective::Assignment(_) => "assignment",
            Objective::Tour(_) => "tour",
        }
    }

    fn is_tour(&self) -> bool {
        matches!(self, Objective::Tour(_))
    }

    /// Scores one permutation of `0..n` directly, summing left to right (the search computes
    /// the same sums incrementally, in the same order, so scores agree to the bit).
    ///
    /// # Complexity
    /// `O(n)`.
    ///
    /// # Errors
    /// [`PermError::MatrixShape`] when the matrix is not `n x n` for `n = perm.len()`.
    ///
    /// # Examples
    /// ```
    /// use combinatorics::Objective;
    /// let m = [1.0, 2.0, 3.0, 4.0];
    /// assert_eq!(Objective::Assignment(&m).score(&[1, 0]).unwrap(), 5.0);
    /// assert_eq!(Objective::Tour(&m).score(&[0, 1]).unwrap(), 5.0);
    /// ```
    pub fn score(&self, perm: &[usize]) -> Result<f64, PermError> {
        let n = perm.len();
        let m = self.matrix();
        if m.len() as u128 != (n as u128) * (n as u128) {
            return Err(PermError::MatrixShape { len: m.len(), n });
        }
        if perm.iter().any(|&x| x >= n) {
            return Err(PermError::RankOutOfRange { rank: u128::MAX, n });
        }
        Ok(score_naive(self.is_tour(), n, m, perm))
    }
}

fn score_naive(tour: bool, n: usize, m: &[f64], p: &[usize]) -> f64 {
    if n == 0 {
        return 0.0;
    }
    let mut s = 0.0;
    if tour {
        for i in 0..n - 1 {
            s += m[p[i] * n + p[i + 1]];
        }
        s + m[p[n - 1] * n + p[0]]
    } else {
        for (i, &pi) in p.iter().enumerate() {
            s += m[i * n + pi];
        }
        s
    }
}

/// The best permutation found by a search.
#[derive(Debug, Clone, PartialEq)]
pub struct SearchResult {
    /// The best permutation of `0..n`.
    pub permutation: Vec<usize>,
    /// Its lexicographic rank (the smallest among equal scores).
    pub rank: u64,
    /// Its score (`+inf` when every permutation searched uses a forbidden entry).
    pub score: f64,
    /// How many permutations were scored.
    pub evaluated: u64,
    /// Where the search ran.
    pub backend: Backend,
}

impl SearchResult {
    /// Whether `self` beats `other`: smaller score, or equal score and smaller rank.
    /// Combine the results of searches over disjoint rank ranges with it.
    pub fn is_better_than(&self, other: &SearchResult) -> bool {
        better(self.score, self.rank, other.score, other.rank)
    }
}

fn validate(n: usize, objective: &Objective<'_>) -> Result<(), PermError> {
    if n > MAX_N_U64 {
        return Err(PermError::TooLarge {
            n,
            max: MAX_N_U64,
            bits: 64,
        });
    }
    let m = objective.matrix();
    if m.len() as u128 != (n as u128) * (n as u128) {
        return Err(PermError::MatrixShape { len: m.len(), n });
    }
    if let Some(i) = m.iter().position(|v| v.is_nan() || *v == f64::NEG_INFINITY) {
        return Err(PermError::BadEntry {
            row: i / n,
            col: i % n,
            value: m[i],
        });
    }
    Ok(())
}

fn result(
    n: usize,
    rank: u64,
    score: f64,
    evaluated: u64,
    backend: Backend,
) -> Result<SearchResult, PermError> {
    Ok(SearchResult {
        permutation: unrank_permutation(n, rank)?,
        rank,
        score,
        evaluated,
        backend,
    })
}

/// The reference: every permutation in lexicographic order by `next_permutation`, each scored
/// from scratch; the first strictly smaller score wins.
///
/// # Complexity
/// `O(n! n)`.
///
/// # Errors
/// As [`search_permutations`].
///
/// # Examples
/// ```
/// use combinatorics::{search_permutations_reference, Objective};
/// let m = [4.0, 1.0, 2.0, 3.0];
/// let best = search_permutations_reference(2, &Objective::Assignment(&m)).unwrap();
/// assert_eq!((best.permutation, best.score), (vec![1, 0], 3.0));
/// ```
pub fn search_permutations_reference(
    n: usize,
    objective: &Objective<'_>,
) -> Result<SearchResult, PermError> {
    validate(n, objective)?;
    let tour = objective.is_tour();
    let m = objective.matrix();
    let mut p: Vec<usize> = (0..n).collect();
    let (mut best, mut best_rank, mut rank) = (f64::INFINITY, u64::MAX, 0u64);
    loop {
        let s = score_naive(tour, n, m, &p);
        if better(s, rank, best, best_rank) {
            best = s;
            best_rank = rank;
        }
        rank += 1;
        if !next_permutation(&mut p) {
            break;
        }
    }
    result(n, best_rank, best, rank, Backend::Cpu)
}

/// Finds the permutation of `0..n` with the smallest objective over all `n!` permutations,
/// where `exec` says, without materialising them. Ties go to the smallest lexicographic rank,
/// so the result is deterministic and the same on every backend (scores are summed in the
/// same order on CPU and GPU, so they agree to the bit).
///
/// This is the brute-force engine of small assignment problems (`Objective::Assignment`) and
/// of small travelling-salesman tours (`Objective::Tour`; all `n` rotations of a tour are
/// searched: their lengths are equal up to rounding, since the same terms are summed in a
/// different order, so the reported rotation is the one whose rounded sum is smallest).
///
/// # Complexity
/// `O(n!)` amortised `O(1)` score updates (prefix sums are kept and only the suffix that
/// `next_permutation` changed is re-summed), `O(n! / p)` time on `p` threads. 12! = 479 M.
///
/// # Errors
/// [`PermError::TooLarge`] when `n > 20`; [`PermError::MatrixShape`] when the matrix does not
/// have `n * n` entries; [`PermError::BadEntry`] for a NaN or `-inf` entry;
/// [`PermError::Gpu`] when `exec` asks for a missing GPU or the GPU path fails.
///
/// # Examples
/// ```
/// use combinatorics::{search_permutations, Objective};
/// use gpu_runtime::Exec;
/// // Assign 3 workers to 3 jobs.
/// let cost = [
///     4.0, 1.0, 3.0,
///     2.0, 0.0, 5.0,
///     3.0, 2.0, 2.0,
/// ];
/// let best = search_permutations(3, &Objective::Assignment(&cost), Exec::Auto).unwrap();
/// assert_eq!(best.permutation, vec![1, 0, 2]);
/// assert_eq!(best.score, 5.0);
/// assert_eq!(best.evaluated, 6);
/// ```
pub fn search_permutations(
    n: usize,
    objective: &Objective<'_>,
    exec: Exec,
) -> Result<SearchResult, PermError> {
    validate(n, objective)?;
    let total = factorial_u64(n).unwrap_or(u64::MAX);
    search_permutations_range(n, objective, 0, total, exec)
}

/// [`search_permutations`] restricted to the ranks `[start, start + count)`: split a long
/// search into pieces (for progress, or across machines) and combine the pieces with
/// [`SearchResult::is_better_than`].
///
/// # Complexity
/// `O(count)` amortised score updates.
///
/// # Errors
/// As [`search_permutations`]; [`PermError::RangeOutOfBounds`] when `start + count > n!`;
/// [`PermError::EmptyRange`] when `count` is 0.
///
/// # Examples
/// ```
/// use combinatorics::{search_permutations_range, Objective};
/// use gpu_runtime::Exec;
/// let d = [0.0, 1.0, 9.0, 1.0, 0.0, 1.0, 9.0, 1.0, 0.0];
/// let a = search_permutations_range(3, &Objective::Tour(&d), 0, 3, Exec::Cpu).unwrap();
/// let b = search_permutations_range(3, &Objective::Tour(&d), 3, 3, Exec::Cpu).unwrap();
/// let best = if b.is_better_than(&a) { b } else { a };
/// assert_eq!(best.score, 11.0);
/// ```
pub fn search_permutations_range(
    n: usize,
    objective: &Objective<'_>,
    start: u64,
    count: u64,
    exec: Exec,
) -> Result<SearchResult, PermError> {
    validate(n, objective)?;
    check_range(n, start, count)?;
    if count == 0 {
        return Err(PermError::EmptyRange);
    }
    let tour = objective.is_tour();
    let m = objective.matrix();
    match exec.resolve(count, SEARCH_GPU_THRESHOLD)? {
        Target::Cpu => {
            let (score, rank) = cpu::search(tour, n, m, start, count);
            result(n, rank, score, count, Backend::Cpu)
        }
        Target::Cuda(gpu) => {
            let (score, rank) = cuda::search(gpu, tour, n, m, start, count)?;
            result(n, rank, score, count, Backend::Cuda)
        }
    }
}
