//! Times the CPU auction, dense and sparse (CSR), and prints the median of several runs:
//! `cargo run --release -p assignment --example auction_timing -- [runs] [only]` (`only`: run
//! the cases whose name contains it).
//!
//! The cases: dense `n = 1000` uniform integers in [0, 1000] (exact mode, Jacobi rounds) and
//! uniform floats, dense `n = 200` (Gauss–Seidel), sparse `n = 30,000` and `n = 100,000` with
//! 10 random entries per row plus the diagonal, costs in [1, 100) (the benchmark's matrices).

use std::time::Instant;

use assignment::generate::{int_matrix, sparse_matrix, uniform_matrix};
use assignment::sparse::{Csr, auction as sparse_auction};
use assignment::{Sense, auction};
use gpu_runtime::Exec;

/// The median seconds of `runs` calls of `f`, and the cost it returned.
fn median(runs: usize, mut f: impl FnMut() -> f64) -> (f64, f64) {
    let mut times = Vec::with_capacity(runs);
    let mut cost = 0.0;
    for _ in 0..runs {
        let t = Instant::now();
        cost = f();
        times.push(t.elapsed().as_secs_f64());
    }
    times.sort_by(f64::total_cmp);
    (times[times.len() / 2], cost)
}

fn main() {
    let runs: usize = std::env::args()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(7);
    let only = std::env::args().nth(2).unwrap_or_default();
    let wanted = |name: &str| name.contains(only.as_str());
    let report = |name: &str, (t, cost): (f64, f64)| {
        println!("{name:<24} median {:>9.3} ms  cost {cost}", t * 1e3);
    };
    let dense = [
        (
            "dense int n=1000",
            int_matrix(1000, 1000, 1000, 5).mapv(|v| v as f64),
        ),
        ("dense float n=1000", uniform_matrix(1000, 1000, 1000)),
        (
            "dense int n=200 (GS)",
            int_matrix(200, 200, 1000, 7).mapv(|v| v as f64),
        ),
    ];
    for (name, c) in dense.iter().filter(|(name, _)| wanted(name)) {
        report(
            name,
            median(runs, || {
                auction(c.view(), Sense::Minimize, Exec::Cpu).unwrap().cost
            }),
        );
    }
    for n in [30_000usize, 100_000] {
        let name = format!("sparse n={n}");
        if !wanted(&name) {
            continue;
        }
        let (p, i, v) = sparse_matrix(n, 10);
        let m = Csr::new(n, n, &p[..], &i[..], &v[..]).unwrap();
        report(
            &name,
            median(runs, || {
                sparse_auction(&m, Sense::Minimize, Exec::Cpu).unwrap().cost
            }),
        );
    }
}
