#![doc = include_str!("../README.md")]
// The README links the seed's experiments, a module behind the `experiments` feature: docs
// built without it leave those links unresolved (docs.rs builds them with it; so does
// `cargo doc --features experiments`, which reports every other broken link).
#![cfg_attr(not(feature = "experiments"), allow(rustdoc::broken_intra_doc_links))]

mod auction;
mod batch;
mod brute_force;
#[cfg(feature = "experiments")]
pub mod experiments;
pub mod generate;
mod greedy;
mod hungarian;
mod jv;
mod num;
mod problem;
mod random;
pub mod sparse;
mod types;
mod verify;

/// The typed launchers of `kernels-cuda/assignment.cu` (used by `auction/cuda.rs`).
mod kernels {
    gpu_runtime::kernels!("assignment");
}

pub use auction::{AUCTION_FLOAT_GAP, AUCTION_GPU_THRESHOLD, auction};
pub use batch::{
    BatchAssignment, linear_sum_assignment_batch, linear_sum_assignment_batch_into, solve_batch,
};
pub use brute_force::{BRUTE_FORCE_MAX, brute_force, brute_force_exec};
pub use greedy::{greedy, greedy_tie_paths, greedy_ties};
pub use hungarian::hungarian;
pub use jv::{JvWorkspace, PairIndex, integer_arithmetic, jonker_volgenant};
pub use problem::{Cost, CostClass};
pub use random::random_assignment;
pub use sparse::{Csr, min_weight_full_matching};
pub use types::{Assignment, AssignmentError, Duals, Sense};
pub use verify::{VerifyError, verify};

use gpu_runtime::Exec;
use ndarray::ArrayView2;

/// The `ndarray` version this crate's API uses (re-exported so callers match it).
pub use ndarray;

/// A solver, for [`solve`] and [`solve_batch`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Solver {
    /// [`brute_force`] (CPU) or [`brute_force_exec`] (GPU through the combinatorics
    /// permutation search): exact, `O(n!)`, `n <= 13`.
    BruteForce,
    /// [`random_assignment`] with this seed: the straw man.
    Random {
        /// Seed of the shuffle.
        seed: u64,
    },
    /// [`greedy`]: smallest free entry first, `O(n^2 log n)`.
    Greedy,
    /// [`greedy_ties`]: greedy that follows up to `k` tie paths and keeps the best (never
    /// worse than [`greedy`], which is `k = 1`).
    GreedyTies {
        /// Paths kept (the beam width), at least 1.
        k: usize,
    },
    /// [`hungarian`]: exact, `O(n^3)`, with duals.
    Hungarian,
    /// [`jonker_volgenant`]: exact, the fastest CPU solver, with duals.
    JonkerVolgenant,
    /// [`auction`]: exact for integer costs, CPU or GPU.
    Auction,
    /// [`sparse::min_weight_full_matching`] on the allowed entries of the dense matrix (the
    /// forbidden ones dropped): faster than [`Solver::JonkerVolgenant`] when most pairs are
    /// forbidden.
    Sparse,
    /// Picks by the matrix ([`choose`]): [`Solver::Sparse`] when most pairs are forbidden,
    /// else [`Solver::JonkerVolgenant`] (which reads every element type as it is, integers in
    /// integer arithmetic).
    Auto,
}

impl Solver {
    /// Whether the solver always returns an optimal assignment (the auction only for integer
    /// costs; see [`auction`]).
    pub fn is_exact(self) -> bool {
        matches!(
            self,
            Solver::BruteForce
                | Solver::Hungarian
                | Solver::JonkerVolgenant
                | Solver::Sparse
                | Solver::Auto
        )
    }

    /// Short name, as the CLI spells it.
    pub fn name(self) -> &'static str {
        match self {
            Solver::BruteForce => "brute",
            Solver::Random { .. } => "random",
            Solver::Greedy | Solver::GreedyTies { .. } => "greedy",
            Solver::Hungarian => "hungarian",
            Solver::JonkerVolgenant => "jv",
            Solver::Auction => "auction",
            Solver::Sparse => "sparse",
            Solver::Auto => "auto",
        }
    }

    /// What `Exec::Auto` weighs to place this solver on a `rows x cols` matrix (`nnz` stored
    /// entries when it is sparse): the size of the work and the size from which the GPU is
    /// used. The auction's entries (`n^2` for the padded square, or the stored entries)
    /// against [`AUCTION_GPU_THRESHOLD`]; brute force's `n!` permutations against
    /// [`combinatorics::SEARCH_GPU_THRESHOLD`]; `None` for the solvers without a GPU path.
    ///
    /// # Examples
    /// ```
    /// use assignment::{AUCTION_GPU_THRESHOLD, Solver};
    /// assert_eq!(Solver::Auction.gpu_work(3, 4, None), Some((16, AUCTION_GPU_THRESHOLD)));
    /// assert_eq!(Solver::Auction.gpu_work(3, 3, Some(5)), Some((5, AUCTION_GPU_THRESHOLD)));
    /// assert_eq!(Solver::BruteForce.gpu_work(4, 4, None).map(|w| w.0), Some(24));
    /// assert_eq!(Solver::JonkerVolgenant.gpu_work(4, 4, None), None);
    /// ```
    pub fn gpu_work(self, rows: usize, cols: usize, nnz: Option<usize>) -> Option<(u64, u64)> {
        let n = rows.max(cols) as u64;
        match self {
            Solver::Auction => Some((nnz.map_or(n * n, |k| k as u64), AUCTION_GPU_THRESHOLD)),
            Solver::BruteForce => Some((
                (1..=n).fold(1u64, |f, k| f.saturating_mul(k)),
                combinatorics::SEARCH_GPU_THRESHOLD,
            )),
            _ => None,
        }
    }
}

/// [`Solver::Auto`] uses the sparse solver when at most one pair in `AUTO_SPARSE_DENSITY` is
/// allowed and the matrix has at least [`AUTO_SPARSE_MIN_ENTRIES`] entries.
pub const AUTO_SPARSE_DENSITY: usize = 8;

/// See [`AUTO_SPARSE_DENSITY`].
pub const AUTO_SPARSE_MIN_ENTRIES: usize = 1 << 16;

/// The solver [`Solver::Auto`] runs on `costs`: [`Solver::Sparse`] when the matrix has at
/// least [`AUTO_SPARSE_MIN_ENTRIES`] entries of which at most one in
/// [`AUTO_SPARSE_DENSITY`] is allowed (the others forbidden: `+inf` minimising, `-inf`
/// maximising, `None`), else [`Solver::JonkerVolgenant`]. The element type does not change
/// the choice: Jonker–Volgenant solves `f64` and `f32` in `f64`, `i32` and `i64` in exact
/// integer arithmetic (`f64` for integers so large that potentials could overflow).
///
/// # Complexity
/// One pass over the matrix when it is large enough for the sparse solver, else `O(1)`.
///
/// # Examples
/// ```
/// use assignment::{choose, Sense, Solver};
/// let mut c = ndarray::Array2::from_elem((300, 300), f64::INFINITY);
/// for i in 0..300 {
///     c[[i, i]] = 1.0;
///     c[[i, (i + 1) % 300]] = 2.0;
/// }
/// assert_eq!(choose(c.view(), Sense::Minimize), Solver::Sparse);
/// assert_eq!(choose(ndarray::array![[1, 2], [3, 4]].view(), Sense::Minimize), Solver::JonkerVolgenant);
/// ```
pub fn choose<T: Cost>(costs: ArrayView2<'_, T>, sense: Sense) -> Solver {
    let entries = costs.len();
    if entries < AUTO_SPARSE_MIN_ENTRIES {
        return Solver::JonkerVolgenant;
    }
    let limit = entries / AUTO_SPARSE_DENSITY;
    let mut allowed = 0usize;
    for line in costs.outer_iter() {
        allowed += line
            .iter()
            .filter(|v| !matches!(v.classify_cost(sense), CostClass::Forbidden))
            .count();
        if allowed > limit {
            return Solver::JonkerVolgenant;
        }
    }
    Solver::Sparse
}

/// The allowed entries of a dense matrix as CSR arrays (`indptr`, `indices`, `data`): every
/// entry but the forbidding ones (invalid entries are kept, for the solver to refuse).
fn allowed_entries<T: Cost>(
    costs: ArrayView2<'_, T>,
    sense: Sense,
) -> (Vec<usize>, Vec<usize>, Vec<T>) {
    let (mut indptr, mut indices, mut data) = (
        Vec::with_capacity(costs.nrows() + 1),
        Vec::new(),
        Vec::new(),
    );
    indptr.push(0);
    for line in costs.outer_iter() {
        for (j, &v) in line.iter().enumerate() {
            if !matches!(v.classify_cost(sense), CostClass::Forbidden) {
                indices.push(j);
                data.push(v);
            }
        }
        indptr.push(indices.len());
    }
    (indptr, indices, data)
}

/// [`Solver::Sparse`] on a dense matrix.
fn solve_sparse<T: Cost>(
    costs: ArrayView2<'_, T>,
    sense: Sense,
) -> Result<Assignment, AssignmentError> {
    let (rows, cols) = costs.dim();
    let (indptr, indices, data) = allowed_entries(costs, sense);
    let m = sparse::Csr::new(rows, cols, &indptr[..], &indices[..], &data[..])?;
    sparse::min_weight_full_matching(&m, sense)
}

/// Solves `costs` with `solver`. `exec` matters for the auction and brute force (CPU or GPU);
/// the other solvers run on the CPU whatever `exec` says.
///
/// # Complexity
/// That of the chosen solver.
///
/// # Errors
/// Those of the chosen solver.
///
/// # Examples
/// ```
/// use assignment::{solve, Sense, Solver};
/// use gpu_runtime::Exec;
/// let c = ndarray::array![[4.0, 1.0, 3.0], [2.0, 0.0, 5.0], [3.0, 2.0, 2.0]];
/// for s in [Solver::BruteForce, Solver::Hungarian, Solver::JonkerVolgenant, Solver::Auction] {
///     assert_eq!(solve(c.view(), s, Sense::Minimize, Exec::Cpu)?.cost, 5.0);
/// }
/// # Ok::<(), assignment::AssignmentError>(())
/// ```
pub fn solve<T: Cost>(
    costs: ArrayView2<'_, T>,
    solver: Solver,
    sense: Sense,
    exec: Exec,
) -> Result<Assignment, AssignmentError> {
    match solver {
        Solver::BruteForce => brute_force_exec(costs, sense, exec),
        Solver::Random { seed } => random_assignment(costs, sense, seed),
        Solver::Greedy => greedy(costs, sense),
        Solver::GreedyTies { k } => greedy_ties(costs, sense, k),
        Solver::Hungarian => hungarian(costs, sense),
        Solver::JonkerVolgenant => jonker_volgenant(costs, sense),
        Solver::Auction => auction(costs, sense, exec),
        Solver::Sparse => solve_sparse(costs, sense),
        Solver::Auto => match choose(costs, sense) {
            Solver::Sparse => solve_sparse(costs, sense),
            _ => jonker_volgenant(costs, sense),
        },
    }
}

/// scipy's `linear_sum_assignment` in Rust: the exact production solver
/// ([`jonker_volgenant`]), minimising or maximising.
///
/// # Complexity
/// As [`jonker_volgenant`].
///
/// # Errors
/// As [`jonker_volgenant`].
///
/// # Examples
/// ```
/// let c = ndarray::array![[f64::INFINITY, 1.0], [2.0, 7.0], [3.0, 0.5]];
/// let a = assignment::linear_sum_assignment(c.view(), assignment::Sense::Minimize)?;
/// assert_eq!(a.pairs(), (vec![1, 2], vec![0, 1])); // 3 rows, 2 columns: row 0 unassigned
/// assert_eq!(a.cost, 2.5);
/// # Ok::<(), assignment::AssignmentError>(())
/// ```
pub fn linear_sum_assignment<T: Cost>(
    costs: ArrayView2<'_, T>,
    sense: Sense,
) -> Result<Assignment, AssignmentError> {
    jonker_volgenant(costs, sense)
}
