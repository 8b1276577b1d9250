//! What the timing examples share: their synthetic points and starting centres.

use ndarray::Array2;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use rand_distr::{Distribution, Normal};

/// The shape of [`points`]' data: `U[0, 1)^d` (`uniform`), or `blobs` Gaussian blobs of
/// standard deviation `sigma` around centres drawn from `U[-scale, scale)^d`, point `i` in blob
/// `i * 7919 % blobs`.
pub(crate) struct Synthetic {
    pub(crate) uniform: bool,
    pub(crate) blobs: usize,
    pub(crate) scale: f32,
    pub(crate) sigma: f32,
}

/// `n` points of `d` dimensions (seed 1: the same points on every run) and `k` starting
/// centres taken from them (rows `j * 104,729 % n`).
pub(crate) fn points(n: usize, d: usize, k: usize, s: &Synthetic) -> (Array2<f32>, Array2<f64>) {
    let mut rng = ChaCha8Rng::seed_from_u64(1);
    let blobs = s.blobs.max(1);
    let centres: Vec<f32> = (0..blobs * d)
        .map(|_| rng.random_range(-s.scale..s.scale))
        .collect();
    let noise = Normal::new(0.0f32, s.sigma).expect("sigma");
    let x = Array2::from_shape_fn((n, d), |(i, t)| {
        if s.uniform {
            rng.random_range(0.0f32..1.0)
        } else {
            centres[(i * 7919 % blobs) * d + t] + noise.sample(&mut rng)
        }
    });
    let init = Array2::from_shape_fn((k, d), |(j, t)| x[[(j * 104_729) % n, t]] as f64);
    (x, init)
}
