//! Explicit-step throughput as the minimum over many runs, which stays meaningful on a loaded
//! machine (criterion's means do not): `cargo run --release -p pde --example explicit_throughput`.
//! Set `RAYON_NUM_THREADS=1` to see the time-blocked large-grid path on one core.

use std::time::Instant;

use gpu_runtime::Exec;
use pde::{FhnParams, Scenario, explicit_run};

fn best_rate(n: usize, steps: u64, runs: usize) -> (f64, f64) {
    let p = FhnParams {
        n,
        length: (n - 1) as f64 * 0.5,
        ..FhnParams::default()
    };
    let mut s = Scenario::Gaussian.initial_state(&p);
    let mut best = f64::MAX;
    for _ in 0..runs {
        let t = Instant::now();
        explicit_run(&p, &mut s, steps, Exec::Cpu).expect("stable parameters");
        best = best.min(t.elapsed().as_secs_f64());
    }
    (best, n as f64 * steps as f64 / best)
}

fn main() {
    let threads = rayon::current_num_threads();
    let (t, r) = best_rate(401, 1000, 400);
    println!(
        "n = 401 (one thread, fused loop): {:.1} us per 1000 steps, {r:.3e} cell updates/s",
        t * 1e6
    );
    for (e, steps, runs) in [
        (16u32, 32u64, 60usize),
        (18, 32, 20),
        (20, 64, 3),
        (24, 64, 3),
    ] {
        let (t, r) = best_rate(1 << e, steps, runs);
        println!(
            "n = 2^{e} (time-blocked rayon, {threads} threads): {t:.4} s per {steps} steps, {r:.3e} cell updates/s"
        );
    }
}
