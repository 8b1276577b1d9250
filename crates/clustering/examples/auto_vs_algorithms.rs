//! `Algorithm::Auto` beside every algorithm it could have run, on whole fits to convergence
//! (scikit-learn's defaults: `tol = 1e-4`, `max_iter = 300`) from the same given centres:
//! `cargo run --release -p clustering --example auto_vs_algorithms -- N D K [f32|f64] [blobs|uniform] [REPEAT] [ALGORITHMS]`
//! (ALGORITHMS: a comma-separated subset, e.g. `auto,lloyd`; default all).
//!
//! The algorithms run in turns, REPEAT rounds (default 5); each line is the best wall time
//! of an algorithm, its iterations and inertia, and the last line `auto`'s time over the
//! fastest other algorithm's (issue 48 asks for at most 1.05).

mod common;

use std::time::Instant;

use clustering::{Algorithm, Element, Init, KMeans};
use common::{Synthetic, points};
use gpu_runtime::Exec;
use ndarray::Array2;

const ALGORITHMS: [Algorithm; 5] = [
    Algorithm::Auto,
    Algorithm::Lloyd,
    Algorithm::Hamerly,
    Algorithm::Yinyang,
    Algorithm::Elkan,
];

fn main() {
    let a: Vec<String> = std::env::args().skip(1).collect();
    let arg = |i: usize, def: usize| a.get(i).and_then(|s| s.parse().ok()).unwrap_or(def);
    let (n, d, k) = (arg(0, 10_000), arg(1, 8), arg(2, 256));
    let f64_data = a.get(3).map(String::as_str) == Some("f64");
    let uniform = a.get(4).map(String::as_str) == Some("uniform");
    let repeat = arg(5, 5).max(1);
    let only: Vec<Algorithm> = a.get(6).map_or(ALGORITHMS.to_vec(), |s| {
        s.split(',')
            .map(|x| x.parse().expect("algorithm"))
            .collect()
    });
    let shape = Synthetic {
        uniform,
        blobs: k,
        scale: 10.0,
        sigma: 1.0,
    };
    let (x, init) = points(n, d, k, &shape);
    println!(
        "n {n} d {d} k {k} {} {}",
        if f64_data { "f64" } else { "f32" },
        if uniform { "uniform" } else { "blobs" }
    );
    if f64_data {
        compare(&x.mapv(f64::from), &init, k, repeat, &only);
    } else {
        compare(&x, &init, k, repeat, &only);
    }
}

/// Fits `x` with every algorithm in turns and prints the best times.
fn compare<T: Element>(
    x: &Array2<T>,
    init: &Array2<f64>,
    k: usize,
    repeat: usize,
    algorithms: &[Algorithm],
) {
    let mut best = vec![f64::INFINITY; algorithms.len()];
    let mut last = vec![(0usize, 0f64); algorithms.len()];
    for _ in 0..repeat {
        for (i, &algorithm) in algorithms.iter().enumerate() {
            let p = KMeans::new(k)
                .init(Init::Given(init.clone()))
                .exec(Exec::Cpu)
                .algorithm(algorithm);
            let t = Instant::now();
            let r = p.fit(x.view()).expect("fit");
            best[i] = best[i].min(t.elapsed().as_secs_f64());
            last[i] = (r.iterations, r.inertia);
        }
    }
    for (i, a) in algorithms.iter().enumerate() {
        println!(
            "  {:8} {:9.2} ms  {:4} iterations  inertia {:.9e}",
            a.name(),
            best[i] * 1e3,
            last[i].0,
            last[i].1
        );
    }
    let auto = algorithms.iter().position(|&a| a == Algorithm::Auto);
    let fastest = (0..algorithms.len())
        .filter(|&i| Some(i) != auto)
        .map(|i| best[i])
        .fold(f64::INFINITY, f64::min);
    if let Some(i) = auto.filter(|_| fastest.is_finite()) {
        println!("  auto / fastest other: {:.3}", best[i] / fastest);
    }
}
