//! Times the exact solvers on one `n x n` uniform random matrix:
//! `cargo run --release -p assignment --example jv_timing -- 5000`.

use std::time::Instant;

use assignment::experiments::uniform_matrix;
use assignment::{Sense, hungarian, jonker_volgenant};

fn main() {
    let n: usize = std::env::args()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(2000);
    let c = uniform_matrix(n, n, 42);
    let t = Instant::now();
    let a = jonker_volgenant(c.view(), Sense::Minimize).expect("solvable");
    println!(
        "jv        n = {n}: {:.3} s, cost {:.6}",
        t.elapsed().as_secs_f64(),
        a.cost
    );
    if std::env::args().any(|a| a == "--hungarian") {
        let t = Instant::now();
        let h = hungarian(c.view(), Sense::Minimize).expect("solvable");
        println!(
            "hungarian n = {n}: {:.3} s, cost {:.6}",
            t.elapsed().as_secs_f64(),
            h.cost
        );
    }
}
