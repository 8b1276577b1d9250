//! Seconds per Lloyd iteration of `KMeans::fit` on float32 blobs, from given centres:
//! `cargo run --release -p clustering --example iteration_timing -- N D K [ITERS] [ALGORITHM] [f32|f64]`.
//!
//! Fits twice (1 and 1 + ITERS iterations, tol 0) and prints the first iteration's time and the
//! mean of the others, so that fixed costs (validation, the variance, the final labels) cancel.

use std::time::Instant;

use clustering::{Init, KMeans};
use gpu_runtime::Exec;
use ndarray::Array2;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use rand_distr::{Distribution, Normal};

fn main() {
    let a: Vec<String> = std::env::args().skip(1).collect();
    let arg = |i: usize, def: usize| a.get(i).and_then(|s| s.parse().ok()).unwrap_or(def);
    let (n, d, k, iters) = (arg(0, 200_000), arg(1, 128), arg(2, 1024), arg(3, 5));
    let algorithm = a.get(4).cloned().unwrap_or_else(|| "lloyd".into());
    let mut rng = ChaCha8Rng::seed_from_u64(1);
    let blobs = (k / 2).max(1);
    let centres: Vec<f32> = (0..blobs * d)
        .map(|_| rng.random_range(-1.0..1.0))
        .collect();
    let noise = Normal::new(0.0f32, 0.5).expect("sigma");
    let x = Array2::from_shape_fn((n, d), |(i, t)| {
        centres[(i * 7919 % blobs) * d + t] + noise.sample(&mut rng)
    });
    let init = Array2::from_shape_fn((k, d), |(j, t)| x[[(j * 104_729) % n, t]] as f64);
    if a.get(5).map(String::as_str) == Some("f64") {
        report(&x.mapv(f64::from), &init, k, iters, &algorithm);
    } else {
        report(&x, &init, k, iters, &algorithm);
    }
}

/// Times the fits of `x` and prints the line.
fn report<T: clustering::Element>(
    x: &Array2<T>,
    init: &Array2<f64>,
    k: usize,
    iters: usize,
    algorithm: &str,
) {
    let (n, d) = x.dim();
    let fit = |iters: usize| {
        let p = KMeans::new(k)
            .init(Init::Given(init.clone()))
            .max_iter(iters)
            .tol(0.0)
            .exec(Exec::Cpu)
            .algorithm(algorithm.parse().expect("algorithm"));
        let (t, c) = (Instant::now(), cpu_seconds());
        let r = p.fit(x.view()).expect("fit");
        (
            t.elapsed().as_secs_f64(),
            cpu_seconds() - c,
            r.inertia,
            r.iterations,
        )
    };
    let (t0, c0, _, _) = fit(1);
    let (t1, c1, _, _) = fit(1);
    let (t2, c2, inertia, it) = fit(1 + iters);
    let (first, cfirst) = (t0.min(t1), c0.min(c1));
    println!(
        "n {n} d {d} k {k} {algorithm}: first {:.1} ms, then {:.1} ms/iteration; CPU {:.1} then {:.1} ms ({it} iterations, inertia {inertia:.6e})",
        first * 1e3,
        (t2 - first) / iters as f64 * 1e3,
        cfirst * 1e3,
        (c2 - cfirst) / iters as f64 * 1e3,
    );
}

/// CPU seconds of this process so far (all threads), from `/proc/self/stat`.
fn cpu_seconds() -> f64 {
    let stat = std::fs::read_to_string("/proc/self/stat").unwrap_or_default();
    let after = stat.rsplit(')').next().unwrap_or("");
    let f: Vec<f64> = after
        .split_whitespace()
        .map(|v| v.parse().unwrap_or(0.0))
        .collect();
    // fields 14 and 15 (utime, stime) are at 11 and 12 after the command name
    (f.get(11).unwrap_or(&0.0) + f.get(12).unwrap_or(&0.0)) / 100.0
}
