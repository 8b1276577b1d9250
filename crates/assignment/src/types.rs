//! Result and error types shared by every solver.

use gpu_runtime::GpuError;

/// Whether to minimise or maximise the total cost.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum Sense {
    /// Find the assignment of least total cost (the default).
    #[default]
    Minimize,
    /// Find the assignment of greatest total cost.
    Maximize,
}

/// A solution of a linear assignment problem.
///
/// For an `r x c` matrix, every row is assigned when `r <= c`, otherwise every column.
#[derive(Debug, Clone, PartialEq)]
pub struct Assignment {
    /// `row_to_col[i]` is the column assigned to row `i`, `None` for an unassigned row (only
    /// when the matrix has more rows than columns).
    pub row_to_col: Vec<Option<usize>>,
    /// Total cost of the assigned pairs, in the input's units (summed as `f64`).
    pub cost: f64,
    /// Dual potentials proving optimality, from the exact solvers that maintain them
    /// (Hungarian, Jonker–Volgenant); `None` otherwise, and when they are beyond `f64` at the
    /// caller's scale (entries near `f64::MAX`).
    pub duals: Option<Duals>,
}

/// Dual potentials of an optimal assignment.
///
/// Minimising: `row[i] + col[j] <= cost[i][j]` for every allowed pair, with equality on the
/// assigned pairs. Maximising: `row[i] + col[j] >= cost[i][j]`, with equality on the assigned
/// pairs. For a rectangular matrix, the potentials of the longer side's unassigned lines are
/// zero and the others are `<= 0` (minimising) or `>= 0` (maximising), so that
/// `sum(row) + sum(col)` equals the optimal cost (strong duality).
#[derive(Debug, Clone, PartialEq)]
pub struct Duals {
    /// One potential per row.
    pub row: Vec<f64>,
    /// One potential per column.
    pub col: Vec<f64>,
}

impl Assignment {
    /// The scipy-style pair `(rows, cols)`: the assigned pairs, sorted by row, as
    /// `scipy.optimize.linear_sum_assignment` returns them.
    ///
    /// # Examples
    /// ```
    /// use assignment::{jonker_volgenant, Sense};
    /// let c = ndarray::array![[4.0, 1.0, 3.0], [2.0, 0.0, 5.0], [3.0, 2.0, 2.0]];
    /// let a = jonker_volgenant(c.view(), Sense::Minimize).unwrap();
    /// assert_eq!(a.pairs(), (vec![0, 1, 2], vec![1, 0, 2]));
    /// assert_eq!(a.cost, 5.0);
    /// ```
    pub fn pairs(&self) -> (Vec<usize>, Vec<usize>) {
        self.row_to_col
            .iter()
            .enumerate()
            .filter_map(|(i, c)| c.map(|c| (i, c)))
            .unzip()
    }

    /// The inverse map: `col_to_row[j]` for a matrix with `cols` columns.
    pub fn col_to_row(&self, cols: usize) -> Vec<Option<usize>> {
        let mut out = vec![None; cols];
        for (i, c) in self.row_to_col.iter().enumerate() {
            if let Some(c) = c.filter(|&c| c < cols) {
                out[c] = Some(i);
            }
        }
        out
    }
}

/// Why a problem could not be solved.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum AssignmentError {
    /// An entry is `NaN`, or the infinity that would always be optimal: `-inf` when
    /// minimising, `+inf` when maximising (scipy's `linear_sum_assignment` rules: the other
    /// infinity forbids a pair).
    #[error("invalid cost {value} at ({row}, {col}): {reason}")]
    InvalidCost {
        /// Row of the entry.
        row: usize,
        /// Column of the entry.
        col: usize,
        /// The entry as written.
        value: String,
        /// Why it is invalid, and which infinity forbids a pair instead.
        reason: &'static str,
    },
    /// An entry cannot be handled exactly: an integer beyond 2^53, for the solvers that work
    /// in `f64` and the sparse solver (Jonker–Volgenant takes every `i64`).
    #[error("cost {value} at ({row}, {col}) is out of the supported range")]
    CostOutOfRange {
        /// Row of the entry.
        row: usize,
        /// Column of the entry.
        col: usize,
        /// The entry as written, or a description.
        value: String,
    },
    /// No complete assignment avoids the forbidden pairs (scipy's "cost matrix is
    /// infeasible").
    #[error("cost matrix is infeasible: no complete assignment avoids the forbidden pairs")]
    Infeasible,
    /// The optimal assignment was found, but its total cost is beyond the range of `f64`
    /// (every entry is finite, their sum is not).
    #[error("the optimal total cost overflows f64: {total}")]
    CostOverflow {
        /// The total as a scaled value, `m x 2^e`.
        total: String,
    },
    /// A heuristic (greedy, random) got stuck on forbidden pairs, although a complete
    /// assignment may exist; use an exact solver.
    #[error(
        "the {solver} heuristic assigned only {assigned} of {needed} lines before running into forbidden pairs"
    )]
    Incomplete {
        /// The heuristic.
        solver: &'static str,
        /// Lines it assigned.
        assigned: usize,
        /// Lines a complete assignment has.
        needed: usize,
    },
    /// Brute force was asked for a problem it refuses (more than [`BRUTE_FORCE_MAX`] lines).
    ///
    /// [`BRUTE_FORCE_MAX`]: crate::BRUTE_FORCE_MAX
    #[error(
        "brute force enumerates n! permutations and refuses n = {n} > {limit}; use an exact polynomial solver"
    )]
    TooLarge {
        /// The problem's larger dimension.
        n: usize,
        /// The limit.
        limit: usize,
    },
    /// A solver's option is out of its range (for example `ties = 0` for
    /// [`greedy_ties`](crate::greedy_ties)).
    #[error("{name} = {value} is out of range: {expected}")]
    BadOption {
        /// The option.
        name: &'static str,
        /// The value given.
        value: usize,
        /// What it must be.
        expected: &'static str,
    },
    /// A solver for square problems was given a rectangular one.
    #[error(
        "{solver} solves square problems, not {rows} x {cols}: use min_weight_full_matching (any shape)"
    )]
    NotSquare {
        /// Rows of the matrix.
        rows: usize,
        /// Columns of the matrix.
        cols: usize,
        /// The solver.
        solver: &'static str,
    },
    /// A sparse matrix's arrays do not describe a matrix: lengths that disagree, row pointers
    /// that decrease, a column index out of range.
    #[error("invalid sparse matrix: {0}")]
    InvalidSparse(String),
    /// The problem needs more memory than is available (for example a dense matrix built
    /// from a large sparse one, or a copy of a huge matrix to transpose or negate it).
    #[error(
        "{what} needs {} ({needed} bytes) but only {} are available; a sparse problem (most pairs forbidden) can be solved without a dense matrix: assignment::sparse::min_weight_full_matching, warpath.min_weight_full_bipartite_matching, warpath lap --sparse",
        human_bytes(*needed),
        human_bytes(*available)
    )]
    OutOfMemory {
        /// What needs the memory.
        what: String,
        /// Bytes needed.
        needed: u64,
        /// Bytes available.
        available: u64,
    },
    /// A problem of a batch failed ([`linear_sum_assignment_batch`](crate::linear_sum_assignment_batch)):
    /// the first one by index, and why.
    #[error("problem {index}: {source}")]
    InProblem {
        /// Index of the problem in the batch.
        index: usize,
        /// Its error.
        source: Box<AssignmentError>,
    },
    /// The GPU path failed or no GPU is available for [`Exec::Cuda`](gpu_runtime::Exec).
    #[error(transparent)]
    Gpu(#[from] GpuError),
}

/// `bytes` in binary units, e.g. `3.2 GiB`.
pub(crate) fn human_bytes(bytes: u64) -> String {
    const UNITS: [&str; 6] = ["bytes", "KiB", "MiB", "GiB", "TiB", "PiB"];
    let mut v = bytes as f64;
    let mut k = 0;
    while v >= 1024.0 && k + 1 < UNITS.len() {
        v /= 1024.0;
        k += 1;
    }
    if k == 0 {
        format!("{bytes} bytes")
    } else {
        format!("{v:.1} {}", UNITS[k])
    }
}

/// Allocations below this many bytes are not checked: reading the memory available
/// (`/proc/meminfo`) takes microseconds, which would dominate the solve of a small problem,
/// and a copy this small is not what exhausts memory.
const CHECK_MEMORY_FROM: u64 = 1 << 20;

/// Refuses an allocation of `bytes` for `what` when it is above the memory available now
/// (where that can be read); allocations below [`CHECK_MEMORY_FROM`] are always allowed.
pub(crate) fn check_memory(
    what: impl FnOnce() -> String,
    bytes: u64,
) -> Result<(), AssignmentError> {
    if bytes < CHECK_MEMORY_FROM {
        return Ok(());
    }
    match gpu_runtime::host_available_memory() {
        Some(available) if bytes > available => Err(AssignmentError::OutOfMemory {
            what: what(),
            needed: bytes,
            available,
        }),
        _ => Ok(()),
    }
}
