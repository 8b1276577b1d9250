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
    /// An entry cannot be handled exactly: an integer beyond 2^53.
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
    /// The GPU path failed or no GPU is available for [`Exec::Cuda`](gpu_runtime::Exec).
    #[error(transparent)]
    Gpu(#[from] GpuError),
}
