//! Times reading an edge-list file against solving its Euler circuit, in one run.
//!
//! `cargo run --release -p graph-core --example read_timing -- FILE [repeats]`
//! (prints the median of the repeats for each, alternating the two).

use std::time::Instant;

use gpu_runtime::Exec;
use gpu_runtime::cpu::process_cpu_seconds;

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let path = args.get(1).expect("usage: read_timing FILE [repeats]");
    let reps: usize = args.get(2).and_then(|s| s.parse().ok()).unwrap_or(3);
    let bytes = std::fs::metadata(path).expect("file").len();
    let (mut load, mut solve, mut load_cpu, mut solve_cpu) = (vec![], vec![], vec![], vec![]);
    for _ in 0..reps {
        let (t, c) = (Instant::now(), process_cpu_seconds());
        let g = graph_core::read_graph_file(path.as_ref(), None).expect("graph");
        load.push(t.elapsed().as_secs_f64());
        load_cpu.push(process_cpu_seconds() - c);
        let (t, c) = (Instant::now(), process_cpu_seconds());
        let (trail, _) = graph_core::euler_circuit(&g, Exec::Cpu).expect("circuit");
        solve.push(t.elapsed().as_secs_f64());
        solve_cpu.push(process_cpu_seconds() - c);
        assert_eq!(trail.edges.len() as u64, g.edge_count());
    }
    let (l, s) = (median(load), median(solve));
    let (lc, sc) = (median(load_cpu), median(solve_cpu));
    println!(
        "{path}: {bytes} bytes, median of {reps}, {} threads\n  read   {l:.3} s wall ({:.0} MB/s), {lc:.3} s CPU\n  solve  {s:.3} s wall, {sc:.3} s CPU\n  read / solve: {:.2} wall, {:.2} CPU",
        rayon::current_num_threads(),
        bytes as f64 / l / 1e6,
        l / s,
        lc / sc
    );
}
