//! Times the exact solvers on one `n x n` matrix:
//! `cargo run --release -p assignment --example jv_timing -- 5000 [uniform|machol|equal|int] [--hungarian]`.
//!
//! `machol` is `c[i][j] = i * j` (Machol–Wien, hard for shortest-path solvers), `equal` is all
//! ones (every assignment optimal), `int` is uniform integers in [0, 9] (many ties).

use std::time::Instant;

use assignment::generate::{int_matrix, uniform_matrix};
use assignment::ndarray::Array2;
use assignment::{Assignment, AssignmentError, Sense, hungarian, jonker_volgenant};

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let n: usize = args.get(1).and_then(|s| s.parse().ok()).unwrap_or(2000);
    let kind = args.get(2).map(String::as_str).unwrap_or("uniform");
    let c: Array2<f64> = match kind {
        "machol" => Array2::from_shape_fn((n, n), |(i, j)| (i * j) as f64),
        "equal" => Array2::ones((n, n)),
        "rect" => uniform_matrix(n, n * 5 / 2, 42),
        "int" => int_matrix(n, n, 9, 42).mapv(|v| v as f64),
        "int1000" => int_matrix(n, n, 999, 42).mapv(|v| v as f64),
        _ => uniform_matrix(n, n, 42),
    };
    timed("jv", kind, n, || {
        jonker_volgenant(c.view(), Sense::Minimize)
    });
    if args.iter().any(|a| a == "--hungarian") {
        timed("hungarian", kind, n, || {
            hungarian(c.view(), Sense::Minimize)
        });
    }
}

/// Runs `solve` and prints its time and cost under `label`.
fn timed(
    label: &str,
    kind: &str,
    n: usize,
    solve: impl FnOnce() -> Result<Assignment, AssignmentError>,
) {
    let t = Instant::now();
    let a = solve().expect("solvable");
    println!(
        "{label:<9} {kind} n = {n}: {:.3} s, cost {}",
        t.elapsed().as_secs_f64(),
        a.cost
    );
}
