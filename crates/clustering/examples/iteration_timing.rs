//! Seconds per Lloyd iteration of `KMeans::fit` on float32 blobs, from given centres:
//! `cargo run --release -p clustering --example iteration_timing -- N D K [ITERS] [ALGORITHM] [f32|f64] [blobs|uniform] [REPEAT]`.
//!
//! Fits with 1 and 1 + ITERS iterations (tol 0), each the best of REPEAT fits (default 3), and
//! prints the first iteration's time and the mean of the others, so that fixed costs
//! (validation, the variance, the final labels) cancel. `uniform` draws the points from
//! `U[0, 1)^D` (no cluster structure) instead of blobs.

mod common;

use std::time::Instant;

use clustering::{Init, KMeans};
use common::{Synthetic, points};
use gpu_runtime::Exec;
use gpu_runtime::cpu::process_cpu_seconds;
use ndarray::Array2;

fn main() {
    let a: Vec<String> = std::env::args().skip(1).collect();
    let arg = |i: usize, def: usize| a.get(i).and_then(|s| s.parse().ok()).unwrap_or(def);
    let (n, d, k, iters) = (arg(0, 200_000), arg(1, 128), arg(2, 1024), arg(3, 5));
    let algorithm = a.get(4).cloned().unwrap_or_else(|| "lloyd".into());
    let uniform = a.get(6).map(String::as_str) == Some("uniform");
    let repeat = arg(7, 3).max(1);
    let shape = Synthetic {
        uniform,
        blobs: k / 2,
        scale: 1.0,
        sigma: 0.5,
    };
    let (x, init) = points(n, d, k, &shape);
    if a.get(5).map(String::as_str) == Some("f64") {
        report(&x.mapv(f64::from), &init, k, iters, &algorithm, repeat);
    } else {
        report(&x, &init, k, iters, &algorithm, repeat);
    }
}

/// Times the fits of `x` and prints the line.
fn report<T: clustering::Element>(
    x: &Array2<T>,
    init: &Array2<f64>,
    k: usize,
    iters: usize,
    algorithm: &str,
    repeat: usize,
) {
    let (n, d) = x.dim();
    let fit = |iters: usize| {
        let p = KMeans::new(k)
            .init(Init::Given(init.clone()))
            .max_iter(iters)
            .tol(0.0)
            .exec(Exec::Cpu)
            .algorithm(algorithm.parse().expect("algorithm"));
        let (t, c) = (Instant::now(), process_cpu_seconds());
        let r = p.fit(x.view()).expect("fit");
        (
            t.elapsed().as_secs_f64(),
            process_cpu_seconds() - c,
            r.inertia,
            r.iterations,
        )
    };
    // The best of `repeat` fits by CPU time (less disturbed than the wall clock by other
    // work on the machine), with the wall time of the best wall-clock fit.
    let best = |iters: usize| {
        let fits: Vec<_> = (0..repeat).map(|_| fit(iters)).collect();
        let wall = fits.iter().map(|f| f.0).fold(f64::INFINITY, f64::min);
        let cpu = fits.iter().map(|f| f.1).fold(f64::INFINITY, f64::min);
        (wall, cpu, fits[0].2, fits[0].3)
    };
    let (first, cfirst, _, _) = best(1);
    let (t2, c2, inertia, it) = best(1 + iters);
    println!(
        "n {n} d {d} k {k} {algorithm}: first {:.2} ms, then {:.2} ms/iteration; CPU {:.2} then {:.2} ms ({it} iterations, inertia {inertia:.6e})",
        first * 1e3,
        (t2 - first) / iters as f64 * 1e3,
        cfirst * 1e3,
        (c2 - cfirst) / iters as f64 * 1e3,
    );
}
