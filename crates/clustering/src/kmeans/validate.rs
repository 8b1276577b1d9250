//! Checking what a fit is given (parameters, data, weights, given centroids), and the initial
//! centroids of each run.

use ndarray::{ArrayView1, ArrayView2, CowArray, Ix2};
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;

use crate::init::{
    kmeans_parallel, kmeans_plusplus, local_trials, plusplus_from, random_points, rows_of,
};
use crate::{Draws, Element, Init, KMeans, KMeansError};

/// The initial centroids of run `run` (`k * d`, row-major), telling `progress` how many
/// centroids are chosen now and then (`&mut |_| {}` to ignore it).
#[allow(clippy::too_many_arguments)]
pub(crate) fn initial_centroids<T: Element>(
    init: &Init,
    data: &[T],
    d: usize,
    weights: Option<&[f64]>,
    k: usize,
    seed: u64,
    run: usize,
    progress: &mut dyn FnMut(usize),
) -> Vec<f64> {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    rng.set_stream(run as u64);
    match init {
        Init::KMeansPlusPlus => kmeans_plusplus(data, d, weights, k, &mut rng, progress),
        Init::KMeansParallel { rounds } => {
            kmeans_parallel(data, d, weights, k, *rounds, &mut rng, progress)
        }
        Init::Random => random_points(data, d, k, &mut rng),
        Init::Given(c) => c.iter().copied().collect(),
        // Validated by `check_given`: the rows exist and there are enough numbers.
        Init::Drawn(runs) => match &runs[run] {
            Draws::PlusPlus { first, uniforms } => {
                let mut next = uniforms.iter().copied();
                let mut uniform = || next.next().expect("checked: (k - 1) * trials numbers");
                plusplus_from(data, d, weights, k, *first, &mut uniform, progress)
            }
            Draws::Rows(rows) => rows_of(data, d, rows),
        },
    }
}

/// Validated input: contiguous data and `f64` weights.
pub(crate) struct Validated<'a, T> {
    data: CowArray<'a, T, Ix2>,
    weights: Option<Vec<f64>>,
    pub(super) d: usize,
}

impl<T: Element> Validated<'_, T> {
    pub(super) fn slice(&self) -> &[T] {
        self.data.as_slice().expect("standard layout")
    }
    pub(super) fn w(&self) -> Option<&[f64]> {
        self.weights.as_deref()
    }
}

/// The first non-finite value of row-major `data` (`d` columns), as an error.
pub(crate) fn check_finite<T: Element>(
    data: &[T],
    d: usize,
    row_offset: usize,
) -> Result<(), KMeansError> {
    use rayon::prelude::*;
    const BLOCK: usize = 1 << 15;
    // Whole blocks are scanned branch-free; only a block that has a bad value is searched.
    let bad_block = if data.len() < BLOCK {
        data.iter()
            .fold(false, |bad, v| bad | !v.is_finite())
            .then_some(0)
    } else {
        data.par_chunks(BLOCK)
            .position_first(|c| c.iter().fold(false, |bad, v| bad | !v.is_finite()))
    };
    if let Some(b) = bad_block {
        let start = b * BLOCK;
        let pos = start
            + data[start..]
                .iter()
                .position(|v| !v.is_finite())
                .expect("the block has a non-finite value");
        return Err(KMeansError::NonFiniteData {
            row: row_offset + pos / d,
            col: pos % d,
            value: data[pos].to_f64(),
        });
    }
    Ok(())
}

/// `data` in standard (row-major, contiguous) layout: borrowed when it already is, else copied.
pub(crate) fn contiguous<'a, T: Clone>(data: ArrayView2<'a, T>) -> CowArray<'a, T, Ix2> {
    if data.is_standard_layout() {
        CowArray::from(data)
    } else {
        CowArray::from(data.as_standard_layout().into_owned())
    }
}

/// Checks the parameters that do not depend on the data.
pub(crate) fn check_params(p: &KMeans) -> Result<(), KMeansError> {
    if p.k == 0 {
        return Err(KMeansError::ZeroClusters);
    }
    if p.max_iter == 0 {
        return Err(KMeansError::InvalidParameter(
            "max_iter must be at least 1".into(),
        ));
    }
    if !(p.tol.is_finite() && p.tol >= 0.0) {
        return Err(KMeansError::InvalidParameter(format!(
            "tol must be finite and non-negative, not {}",
            p.tol
        )));
    }
    if p.n_init == 0 {
        return Err(KMeansError::InvalidParameter(
            "n_init must be at least 1".into(),
        ));
    }
    if let Init::KMeansParallel { rounds: 0 } = p.init {
        return Err(KMeansError::InvalidParameter(
            "k-means|| needs at least 1 round".into(),
        ));
    }
    if p.k > u32::MAX as usize {
        return Err(KMeansError::InvalidParameter(format!(
            "k = {} is too large",
            p.k
        )));
    }
    Ok(())
}

/// Checks given centroids against `k` and `d`, and drawn starts against `k` and the `n`
/// rows of the data (`None` where each rank holds a part of the data: drawn starts, which
/// index the whole data, are refused there).
pub(crate) fn check_given(
    init: &Init,
    k: usize,
    n: Option<usize>,
    d: usize,
) -> Result<(), KMeansError> {
    if let Init::Drawn(runs) = init {
        let Some(n) = n else {
            return Err(KMeansError::InvalidParameter(
                "drawn starts (Init::Drawn) need a fit that sees every row".into(),
            ));
        };
        return check_draws(runs, k, n);
    }
    if let Init::Given(c) = init {
        KMeansError::check_shape("given centroids (rows)", k, c.nrows())?;
        KMeansError::check_shape("given centroids (columns)", d, c.ncols())?;
        if let Some(((r, col), v)) = c.indexed_iter().find(|(_, v)| !v.is_finite()) {
            return Err(KMeansError::InvalidParameter(format!(
                "given centroid {r} has a non-finite value {v} in column {col}"
            )));
        }
    }
    Ok(())
}

/// Checks the draws of [`Init::Drawn`] against `k` and `n` rows.
fn check_draws(runs: &[Draws], k: usize, n: usize) -> Result<(), KMeansError> {
    let bad = |m: String| Err(KMeansError::InvalidParameter(m));
    if runs.is_empty() {
        return bad("drawn starts: no run".into());
    }
    let trials = local_trials(k);
    for (r, draws) in runs.iter().enumerate() {
        match draws {
            Draws::PlusPlus { first, uniforms } => {
                if *first >= n {
                    return bad(format!("run {r}: first row {first} of {n}"));
                }
                let want = (k - 1) * trials;
                if uniforms.len() != want {
                    return bad(format!(
                        "run {r}: {} uniform numbers, k-means++ with k = {k} takes {want}",
                        uniforms.len()
                    ));
                }
                if let Some(u) = uniforms.iter().find(|u| !(0.0..1.0).contains(*u)) {
                    return bad(format!("run {r}: uniform number {u} is not in [0, 1)"));
                }
            }
            Draws::Rows(rows) => {
                KMeansError::check_shape("drawn rows", k, rows.len())?;
                let mut seen = rows.clone();
                seen.sort_unstable();
                if let Some(&i) = seen.iter().find(|&&i| i >= n) {
                    return bad(format!("run {r}: row {i} of {n}"));
                }
                if let Some(w) = seen.windows(2).find(|w| w[0] == w[1]) {
                    return bad(format!("run {r}: row {} drawn twice", w[0]));
                }
            }
        }
    }
    Ok(())
}

/// Checks sample weights and converts them to `f64`.
pub(crate) fn check_weights(
    w: impl Iterator<Item = f64>,
    n: usize,
) -> Result<Vec<f64>, KMeansError> {
    let w: Vec<f64> = w.collect();
    KMeansError::check_shape("sample weights", n, w.len())?;
    check_weight_values(&w, 0)?;
    if !w.iter().any(|&v| v > 0.0) {
        return Err(KMeansError::InvalidWeights("all weights are zero".into()));
    }
    Ok(w)
}

/// The first weight that is negative, NaN or infinite, as an error naming its global index
/// (`index_offset` is the global index of `w[0]`, for MPI shards).
pub(crate) fn check_weight_values(w: &[f64], index_offset: u64) -> Result<(), KMeansError> {
    match w
        .iter()
        .enumerate()
        .find(|(_, v)| !(v.is_finite() && **v >= 0.0))
    {
        Some((i, v)) => Err(KMeansError::InvalidWeights(format!(
            "weight {} is {v}; weights must be finite and non-negative",
            index_offset + i as u64
        ))),
        None => Ok(()),
    }
}

/// The checked input of a fit: contiguous data, `f64` weights.
pub(super) fn validate<'a, T: Element>(
    p: &KMeans,
    data: ArrayView2<'a, T>,
    weights: Option<ArrayView1<'_, T>>,
) -> Result<Validated<'a, T>, KMeansError> {
    check_params(p)?;
    let (n, d) = data.dim();
    if d == 0 {
        return Err(KMeansError::ZeroDimensions);
    }
    if p.k > n {
        return Err(KMeansError::TooManyClusters { k: p.k, n });
    }
    check_given(&p.init, p.k, Some(n), d)?;
    let data = contiguous(data);
    check_finite(data.as_slice().expect("standard layout"), d, 0)?;
    let weights = match weights {
        None => None,
        Some(w) => Some(check_weights(w.iter().map(|v| v.to_f64()), n)?),
    };
    Ok(Validated { data, weights, d })
}
