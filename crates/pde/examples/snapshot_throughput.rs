//! The explicit scheme through `simulate` (snapshots kept in memory; `warpath fhn` streams them
//! instead, `simulate_streamed`) against the initial state and `explicit_run` alone (the
//! time-blocked path), on one large grid,
//! alternating the two:
//! `cargo run --release -p pde --example snapshot_throughput -- [N] [steps] [snapshots] [reps]`
//! (default N = 4*10^6, 320 steps, 100 snapshots, 3 repeats; medians printed).

use std::time::Instant;

use gpu_runtime::Exec;
use pde::{FhnParams, Scenario, Scheme, explicit_run, simulate};

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let arg = |i: usize, d: f64| args.get(i).and_then(|s| s.parse::<f64>().ok()).unwrap_or(d);
    let n = arg(1, 4e6) as usize;
    let steps = arg(2, 320.0) as u64;
    let snaps = arg(3, 100.0) as usize;
    let reps = arg(4, 3.0) as usize;
    let p = FhnParams {
        n,
        length: (n - 1) as f64 * 0.5,
        t_end: steps as f64 * 0.05,
        ..FhnParams::default()
    };
    let (mut lib, mut sim) = (Vec::new(), Vec::new());
    for _ in 0..reps {
        // Both sides build the initial state (simulate does it inside).
        let t = Instant::now();
        let mut s = Scenario::Gaussian.initial_state(&p);
        explicit_run(&p, &mut s, p.steps(), Exec::Cpu).expect("stable");
        lib.push(t.elapsed().as_secs_f64());
        let t = Instant::now();
        let r = simulate(
            Scenario::Gaussian,
            p,
            Scheme::Explicit,
            Exec::Cpu,
            snaps,
            &mut |_, _| {},
        )
        .expect("stable");
        sim.push(t.elapsed().as_secs_f64());
        assert_eq!(r.v.last().expect("snapshot"), &s.v, "same result");
    }
    let cells = n as f64 * p.steps() as f64;
    let (l, s) = (median(lib), median(sim));
    println!(
        "N = {n}, {} steps, {snaps} snapshots, {} threads, median of {reps}:\n  explicit_run {l:.3} s ({:.2e} cell updates/s)\n  simulate     {s:.3} s ({:.2e} cell updates/s)\n  simulate / explicit_run = {:.2}",
        p.steps(),
        rayon::current_num_threads(),
        cells / l,
        cells / s,
        s / l
    );
}
