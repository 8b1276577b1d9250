//! Search over permutations without materialising them: score each permutation with a
//! built-in objective and keep the best (smallest score; ties go to the smallest rank).

use gpu_runtime::{Backend, Exec, Gpu, GpuError, Target};
use rayon::prelude::*;

use crate::batch::check_range;
use crate::next::next_permutation_pivot;
use crate::rank::{MAX_N_U64, factorial_u64, unrank_bytes, unrank_permutation};
use crate::{KERNELS, PermError, next_permutation};

/// From this many permutations `Exec::Auto` searches on the GPU (when present). Not measured
/// yet: the development machine has no GPU.
pub const SEARCH_GPU_THRESHOLD: u64 = 1 << 20;

/// Below this many permutations one thread beats rayon's fork/join.
const PARALLEL_THRESHOLD: u64 = 1 << 14;

/// Permutations per rayon task.
const CHUNK: u64 = 1 << 16;

/// GPU threads per block of the search kernel (a power of two, <= 256).
const GPU_BLOCK: u32 = 256;

/// Consecutive ranks each GPU thread scores per tile (one unrank each).
const GPU_STEPS: u32 = 64;

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

#[inline]
fn better(s: f64, r: u64, bs: f64, br: u64) -> bool {
    s < bs || (s == bs && r < br)
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
            let (score, rank) = search_cpu(tour, n, m, start, count);
            result(n, rank, score, count, Backend::Cpu)
        }
        Target::Cuda(gpu) => {
            let (score, rank) = search_gpu(gpu, tour, n, m, start, count)?;
            result(n, rank, score, count, Backend::Cuda)
        }
    }
}

// ---------------------------------------------------------------- CPU

fn search_cpu(tour: bool, n: usize, m: &[f64], start: u64, count: u64) -> (f64, u64) {
    let chunk = |first: u64, len: u64| search_chunk_dispatch(tour, n, m, first, len);
    if count < PARALLEL_THRESHOLD {
        return chunk(start, count);
    }
    (0..count.div_ceil(CHUNK))
        .into_par_iter()
        .map(|c| {
            let first = start + c * CHUNK;
            chunk(first, CHUNK.min(start + count - first))
        })
        .reduce(
            || (f64::INFINITY, u64::MAX),
            |a, b| if better(b.0, b.1, a.0, a.1) { b } else { a },
        )
}

/// Monomorphises the hot loop for each `n` (fixed loop bounds) and objective.
fn search_chunk_dispatch(tour: bool, n: usize, m: &[f64], first: u64, len: u64) -> (f64, u64) {
    macro_rules! dispatch {
        ($($k:literal)*) => {
            match (tour, n) {
                (_, 0) => (0.0, first),
                $((true, $k) => search_chunk::<true, $k>(m, first, len),
                  (false, $k) => search_chunk::<false, $k>(m, first, len),)*
                _ => unreachable!("n <= 20 was validated"),
            }
        };
    }
    dispatch!(1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20)
}

/// Recomputes the prefix sums from position `from` and returns the score.
#[inline(always)]
fn rescore<const TOUR: bool, const N: usize>(
    m: &[f64],
    p: &[u8; N],
    t: &mut [f64; MAX_N_U64 + 1],
    from: usize,
) -> f64 {
    debug_assert!(m.len() == N * N && p.iter().all(|&e| (e as usize) < N));
    // SAFETY (every `get_unchecked` below): `p` is a permutation of 0..N (it comes from
    // `unrank_bytes` and `next_permutation_pivot`, which only rearrange it), so every index
    // `a * N + b` with `a, b < N` is below `N * N == m.len()` (checked by `validate`).
    let at = |a: u8, b: u8| unsafe { *m.get_unchecked(a as usize * N + b as usize) };
    if TOUR {
        for j in from.max(1)..N {
            t[j] = t[j - 1] + at(p[j - 1], p[j]);
        }
        t[N - 1] + at(p[N - 1], p[0])
    } else {
        for j in from..N {
            t[j + 1] = t[j] + at(j as u8, p[j]);
        }
        t[N]
    }
}

/// The best `(score, rank)` among `len >= 1` consecutive ranks from `first`.
fn search_chunk<const TOUR: bool, const N: usize>(m: &[f64], first: u64, len: u64) -> (f64, u64) {
    let m = &m[..N * N];
    let mut p = [0u8; N];
    unrank_bytes(N, first, &mut p);
    let mut t = [0.0f64; MAX_N_U64 + 1];
    let mut best = rescore::<TOUR, N>(m, &p, &mut t, 0);
    let mut best_rank = first;
    for rank in first + 1..first + len {
        // Inside the validated range there is always a next permutation.
        let pivot = next_permutation_pivot(&mut p).unwrap_or(0);
        let s = rescore::<TOUR, N>(m, &p, &mut t, pivot);
        if s < best {
            best = s;
            best_rank = rank;
        }
    }
    (best, best_rank)
}

// ---------------------------------------------------------------- GPU

fn search_gpu(
    gpu: &Gpu,
    tour: bool,
    n: usize,
    m: &[f64],
    start: u64,
    count: u64,
) -> Result<(f64, u64), PermError> {
    if n == 0 {
        return Ok((0.0, 0));
    }
    let f = gpu.function(&KERNELS, "combinatorics_search_permutations_f64")?;
    let per_tile = GPU_BLOCK as u64 * GPU_STEPS as u64;
    let tiles = count.div_ceil(per_tile);
    let mut cfg = gpu.grid_stride(tiles * GPU_BLOCK as u64, GPU_BLOCK);
    cfg.shared_mem_bytes = (n * n * 8) as u32; // <= 3,200 bytes
    let blocks = cfg.grid_dim.0 as usize;
    let dm = gpu.upload(m)?;
    let mut d_score = gpu.alloc_zeros::<f64>(blocks)?;
    let mut d_rank = gpu.alloc_zeros::<u64>(blocks)?;
    let (n32, obj, steps) = (n as u32, tour as u32, GPU_STEPS);
    // SAFETY: combinatorics_search_permutations_f64(const double* m, u32 n, u32 objective, u64 start,
    // u64 count, u32 steps, double* block_score, u64* block_rank) reads m[0 .. n*n) (uploaded,
    // n*n entries) into n*n*8 bytes of dynamic shared memory, scores ranks
    // [start, start + count) (checked to lie below n!, n <= 20), and writes one entry per block
    // to block_score / block_rank, which hold gridDim.x entries. blockDim.x = 256 is a power
    // of two, as its reduction requires.
    unsafe {
        use gpu_runtime::cudarc::driver::PushKernelArg;
        gpu.stream()
            .launch_builder(&f)
            .arg(&dm)
            .arg(&n32)
            .arg(&obj)
            .arg(&start)
            .arg(&count)
            .arg(&steps)
            .arg(&mut d_score)
            .arg(&mut d_rank)
            .launch(cfg)
            .map_err(GpuError::launch)?;
    }
    let scores = gpu.download(&d_score)?;
    let ranks = gpu.download(&d_rank)?;
    let best = scores
        .into_iter()
        .zip(ranks)
        .filter(|&(_, r)| r != u64::MAX)
        .fold((f64::INFINITY, u64::MAX), |a, b| {
            if better(b.0, b.1, a.0, a.1) { b } else { a }
        });
    if best.1 == u64::MAX || best.1 < start || best.1 - start >= count {
        return Err(GpuError::LaunchFailed(format!(
            "search kernel returned rank {} outside [{start}, {start} + {count})",
            best.1
        ))
        .into());
    }
    Ok(best)
}

#[cfg(test)]
mod tests {
    use super::*;
    use gpu_runtime::testing::gpu_for_test;
    use proptest::prelude::*;
    use rand::{Rng, SeedableRng, rngs::StdRng};

    fn random_matrix(n: usize, seed: u64, levels: u32) -> Vec<f64> {
        let mut rng = StdRng::seed_from_u64(seed);
        (0..n * n)
            .map(|_| rng.random_range(0..levels) as f64 * 0.37)
            .collect()
    }

    fn check_against_reference(n: usize, m: &[f64], exec: Exec) {
        for obj in [Objective::Assignment(m), Objective::Tour(m)] {
            let want = search_permutations_reference(n, &obj).unwrap();
            let got = search_permutations(n, &obj, exec).unwrap();
            assert_eq!(got.rank, want.rank, "n={n} {}", obj.name());
            assert_eq!(got.score.to_bits(), want.score.to_bits());
            assert_eq!(got.permutation, want.permutation);
            assert_eq!(got.evaluated, want.evaluated);
            assert_eq!(
                obj.score(&got.permutation).unwrap().to_bits(),
                got.score.to_bits()
            );
        }
    }

    #[test]
    fn matches_reference_small_n() {
        for n in 0..=8usize {
            for seed in 0..3 {
                // Few levels: many ties, so the smallest-rank rule is exercised.
                check_against_reference(n, &random_matrix(n, seed, 3), Exec::Cpu);
                check_against_reference(n, &random_matrix(n, seed + 100, 1000), Exec::Cpu);
            }
        }
    }

    #[test]
    fn all_equal_costs_pick_rank_zero() {
        for n in [1usize, 4, 8] {
            let m = vec![1.5; n * n];
            let r = search_permutations(n, &Objective::Assignment(&m), Exec::Cpu).unwrap();
            assert_eq!(r.rank, 0);
            assert_eq!(r.permutation, (0..n).collect::<Vec<_>>());
        }
    }

    #[test]
    fn forbidden_entries() {
        // Identity forbidden everywhere on the diagonal: a derangement is optimal.
        let n = 6;
        let mut m = random_matrix(n, 7, 50);
        for i in 0..n {
            m[i * n + i] = f64::INFINITY;
        }
        let r = search_permutations(n, &Objective::Assignment(&m), Exec::Cpu).unwrap();
        assert!(r.score.is_finite());
        assert!(r.permutation.iter().enumerate().all(|(i, &p)| p != i));
        // Everything forbidden: +inf, rank 0.
        let all = vec![f64::INFINITY; 9];
        let r = search_permutations(3, &Objective::Assignment(&all), Exec::Cpu).unwrap();
        assert_eq!((r.score, r.rank), (f64::INFINITY, 0));
    }

    #[test]
    fn parallel_path_and_ranges() {
        // 9! = 362,880 > the parallel threshold: several chunks.
        let n = 9;
        let m = random_matrix(n, 42, 20);
        check_against_reference(n, &m, Exec::Cpu);
        let obj = Objective::Tour(&m);
        let whole = search_permutations(n, &obj, Exec::Cpu).unwrap();
        let mut best: Option<SearchResult> = None;
        let total = 362_880u64;
        let mut s = 0;
        for len in [1u64, 1023, 1025, 100_000, total] {
            let len = len.min(total - s);
            if len == 0 {
                break;
            }
            let r = search_permutations_range(n, &obj, s, len, Exec::Cpu).unwrap();
            assert!(r.rank >= s && r.rank < s + len);
            if best.as_ref().is_none_or(|b| r.is_better_than(b)) {
                best = Some(r);
            }
            s += len;
        }
        assert_eq!(s, total);
        assert_eq!(best.unwrap().rank, whole.rank);
    }

    #[test]
    fn errors() {
        let m = vec![0.0; 9];
        assert!(matches!(
            search_permutations(2, &Objective::Assignment(&m), Exec::Cpu),
            Err(PermError::MatrixShape { len: 9, n: 2 })
        ));
        let mut bad = m.clone();
        bad[5] = f64::NAN;
        assert!(matches!(
            search_permutations(3, &Objective::Tour(&bad), Exec::Cpu),
            Err(PermError::BadEntry { row: 1, col: 2, .. })
        ));
        bad[5] = f64::NEG_INFINITY;
        assert!(matches!(
            search_permutations(3, &Objective::Assignment(&bad), Exec::Cpu),
            Err(PermError::BadEntry { .. })
        ));
        let big = vec![0.0; 21 * 21];
        assert!(matches!(
            search_permutations(21, &Objective::Assignment(&big), Exec::Cpu),
            Err(PermError::TooLarge { .. })
        ));
        assert!(matches!(
            search_permutations_range(3, &Objective::Assignment(&m), 2, 0, Exec::Cpu),
            Err(PermError::EmptyRange)
        ));
        assert!(matches!(
            search_permutations_range(3, &Objective::Assignment(&m), 2, 5, Exec::Cpu),
            Err(PermError::RangeOutOfBounds { .. })
        ));
        assert!(Objective::Assignment(&m).score(&[0, 1]).is_err());
        assert!(Objective::Assignment(&m).score(&[0, 1, 3]).is_err());
    }

    #[test]
    fn cuda_without_gpu_is_an_error_not_a_fallback() {
        if gpu_runtime::gpu().is_ok() {
            return; // only meaningful without a GPU
        }
        let m = [0.0; 4];
        assert!(matches!(
            search_permutations(2, &Objective::Tour(&m), Exec::Cuda),
            Err(PermError::Gpu(_))
        ));
    }

    #[test]
    fn gpu_search_out_of_memory_is_a_typed_error() {
        let m = random_matrix(6, 1, 10);
        let Some(r) = gpu_runtime::testing::with_simulated_memory_limit(64, || {
            search_permutations(6, &Objective::Assignment(&m), Exec::Cuda)
        }) else {
            return;
        };
        assert!(
            matches!(
                r,
                Err(PermError::Gpu(gpu_runtime::GpuError::OutOfMemory { .. }))
            ),
            "{r:?}"
        );
    }

    #[test]
    fn gpu_search_equals_cpu() {
        let Some(_gpu) = gpu_for_test("gpu_search_equals_cpu") else {
            return;
        };
        for n in [1usize, 2, 3, 5, 8, 9, 10] {
            for seed in 0..2 {
                let m = random_matrix(n, seed, if seed == 0 { 3 } else { 1000 });
                for obj in [Objective::Assignment(&m), Objective::Tour(&m)] {
                    let c = search_permutations(n, &obj, Exec::Cpu).unwrap();
                    let g = search_permutations(n, &obj, Exec::Cuda).unwrap();
                    assert_eq!(g.backend, Backend::Cuda);
                    assert_eq!(
                        (g.rank, g.score.to_bits()),
                        (c.rank, c.score.to_bits()),
                        "n={n}"
                    );
                    let total = factorial_u64(n).unwrap();
                    let (s, len) = (total / 3, (total / 2).max(1));
                    let c = search_permutations_range(n, &obj, s, len, Exec::Cpu).unwrap();
                    let g = search_permutations_range(n, &obj, s, len, Exec::Cuda).unwrap();
                    assert_eq!(
                        (g.rank, g.score.to_bits()),
                        (c.rank, c.score.to_bits()),
                        "n={n}"
                    );
                }
            }
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(32))]
        #[test]
        fn prop_matches_reference(n in 0usize..=7, seed in any::<u64>(), levels in 1u32..50) {
            let m = random_matrix(n, seed, levels);
            for obj in [Objective::Assignment(&m), Objective::Tour(&m)] {
                let want = search_permutations_reference(n, &obj).unwrap();
                let got = search_permutations(n, &obj, Exec::Cpu).unwrap();
                prop_assert_eq!(got.rank, want.rank);
                prop_assert_eq!(got.score.to_bits(), want.score.to_bits());
            }
        }
    }
}
