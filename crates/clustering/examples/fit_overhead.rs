//! The fixed cost of a small `KMeans::fit`: the median wall time of whole one-iteration fits
//! from given centres, with scikit-learn's default tolerance (1e-4, which scales by the data's
//! variance) and with tol 0, on blobs:
//! `cargo run --release -p clustering --example fit_overhead -- N D K [f32|f64] [REPEAT]`.
//!
//! A one-iteration fit is the setup (the variance, the rows' norms and packing), one step and
//! the final labels; on the tabular shapes scikit-learn users bring (10^4 x 64) the setup can
//! weigh as much as the step.

mod common;

use std::time::Instant;

use clustering::{Init, KMeans};
use common::{Synthetic, points};
use gpu_runtime::Exec;
use ndarray::Array2;

fn main() {
    let a: Vec<String> = std::env::args().skip(1).collect();
    let arg = |i: usize, def: usize| a.get(i).and_then(|s| s.parse().ok()).unwrap_or(def);
    let (n, d, k) = (arg(0, 10_000), arg(1, 64), arg(2, 3));
    let repeat = arg(4, 200).max(1);
    let shape = Synthetic {
        uniform: false,
        blobs: k,
        scale: 1.0,
        sigma: 0.5,
    };
    let (x, init) = points(n, d, k, &shape);
    if a.get(3).map(String::as_str) == Some("f64") {
        report(&x.mapv(f64::from), &init, k, repeat);
    } else {
        report(&x, &init, k, repeat);
    }
}

/// Prints the median one-iteration fit with tol 1e-4 and with tol 0.
fn report<T: clustering::Element>(x: &Array2<T>, init: &Array2<f64>, k: usize, repeat: usize) {
    let (n, d) = x.dim();
    let median = |tol: f64| {
        let mut t: Vec<f64> = (0..repeat)
            .map(|_| {
                let p = KMeans::new(k)
                    .init(Init::Given(init.clone()))
                    .max_iter(1)
                    .tol(tol)
                    .exec(Exec::Cpu);
                let c = Instant::now();
                p.fit(x.view()).expect("fit");
                c.elapsed().as_secs_f64()
            })
            .collect();
        t.sort_by(f64::total_cmp);
        t[t.len() / 2] * 1e3
    };
    // Alternated, so that a burst of load on the machine reaches both.
    let (mut with_tol, mut without) = (Vec::new(), Vec::new());
    for _ in 0..3 {
        with_tol.push(median(1e-4));
        without.push(median(0.0));
    }
    with_tol.sort_by(f64::total_cmp);
    without.sort_by(f64::total_cmp);
    println!(
        "n {n} d {d} k {k}: a one-iteration fit {:.3} ms with tol 1e-4, {:.3} ms with tol 0 (medians of {repeat}, the middle of 3 rounds)",
        with_tol[1], without[1]
    );
}
