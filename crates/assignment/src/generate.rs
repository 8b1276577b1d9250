//! Seeded random cost matrices: the inputs of the tests, the benchmarks, `warpath lap
//! --generate` and the seed's experiments (each a pure function of its arguments, so every run
//! makes the same matrix).

use ndarray::Array2;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

/// An `rows x cols` matrix of i.i.d. Exp(1) costs (inverse transform of ChaCha8 uniforms).
///
/// # Examples
/// ```
/// let c = assignment::generate::exp_matrix(3, 4, 1);
/// assert_eq!(c.dim(), (3, 4));
/// assert!(c.iter().all(|&v| v >= 0.0));
/// ```
pub fn exp_matrix(rows: usize, cols: usize, seed: u64) -> Array2<f64> {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    Array2::from_shape_simple_fn((rows, cols), || {
        let u: f64 = rng.random();
        -(1.0 - u).ln()
    })
}

/// An `rows x cols` matrix of i.i.d. uniform costs in `[0, 1)`.
pub fn uniform_matrix(rows: usize, cols: usize, seed: u64) -> Array2<f64> {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    Array2::from_shape_simple_fn((rows, cols), || rng.random::<f64>())
}

/// An `rows x cols` matrix of i.i.d. integers in `[0, max]`; small `max` gives many ties.
pub fn int_matrix(rows: usize, cols: usize, max: i64, seed: u64) -> Array2<i64> {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    Array2::from_shape_simple_fn((rows, cols), || rng.random_range(0..=max))
}

/// An `n x n` sparse matrix as CSR arrays `(indptr, indices, data)`: `per_row` random columns
/// per row plus the diagonal (so that a perfect matching exists), repeated columns kept once,
/// costs integers in `[1, 100)` as `f64` (the benchmarks' sparse matrices; a plain LCG seeded
/// with `n`, so every run makes the same matrix).
///
/// # Examples
/// ```
/// let (indptr, indices, data) = assignment::generate::sparse_matrix(100, 5);
/// assert_eq!(indptr.len(), 101);
/// assert_eq!((indices.len(), data.len()), (indptr[100] as usize, indptr[100] as usize));
/// assert!(data.iter().all(|&c| (1.0..100.0).contains(&c)));
/// ```
pub fn sparse_matrix(n: usize, per_row: usize) -> (Vec<u32>, Vec<u32>, Vec<f64>) {
    let mut s = n as u64;
    let mut next = || {
        s = s
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        s >> 11
    };
    let (mut ptr, mut idx, mut val) = (vec![0u32], Vec::new(), Vec::new());
    for i in 0..n {
        let mut cols: Vec<u32> = (0..per_row).map(|_| (next() % n as u64) as u32).collect();
        cols.push(i as u32);
        cols.sort_unstable();
        cols.dedup();
        for c in cols {
            idx.push(c);
            val.push(1.0 + (next() % 99) as f64);
        }
        ptr.push(idx.len() as u32);
    }
    (ptr, idx, val)
}

/// The 6 x 6 example of the greedy seed ("A Greedy Approximation Algorithm for the Linear
/// Assignment Problem"; its rows and columns are 1-based in the text), where greedy's choice
/// between the two 25s of row 3 gives 174 or the optimum, 167.
///
/// # Examples
/// ```
/// let c = assignment::generate::seed_6x6();
/// assert_eq!((c[[2, 2]], c[[2, 5]]), (25.0, 25.0));
/// ```
pub fn seed_6x6() -> Array2<f64> {
    ndarray::array![
        [62.0, 31.0, 79.0, 6.0, 21.0, 37.0],
        [45.0, 27.0, 23.0, 66.0, 9.0, 17.0],
        [83.0, 59.0, 25.0, 38.0, 63.0, 25.0],
        [1.0, 37.0, 53.0, 100.0, 80.0, 51.0],
        [69.0, 72.0, 74.0, 32.0, 82.0, 31.0],
        [34.0, 95.0, 61.0, 64.0, 100.0, 82.0],
    ]
}
