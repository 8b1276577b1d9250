//! Times Euler circuits on one generated graph: wall-clock and process CPU time (all threads,
//! `gpu_runtime::cpu::process_cpu_seconds`), so figures stay meaningful on a loaded machine.
//! Hierholzer and the fast algorithm take turns; prints each one's best and median, and the
//! median of the per-turn ratios.
//!
//! `cargo run --release -p graph-core --example euler_timing -- 42000000 deep 7`
//! (edges, `deep` or `shallow`, turns): directed graphs, Hierholzer vs the parallel algorithm.
//!
//! `cargo run --release -p graph-core --example euler_timing -- 10000000 deep 7 undirected`:
//! undirected graphs, the reference Hierholzer walk vs the CPU path of
//! `undirected_euler_circuit` (from `UNDIRECTED_EULER_ORIENT_THRESHOLD` edges: a balanced
//! orientation, then the directed circuit).

use std::time::Instant;

use gpu_runtime::cpu::process_cpu_seconds;
use graph_core::{
    EulerStyle, EulerTrail, Exec, euler_circuit_hierholzer, euler_circuit_parallel,
    is_euler_circuit, is_undirected_euler_circuit, random_euler_graph,
    random_undirected_euler_graph, undirected_euler_circuit, undirected_euler_circuit_hierholzer,
};

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let m: u64 = args
        .get(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(10_000_000);
    let style: EulerStyle = args
        .get(2)
        .and_then(|s| s.parse().ok())
        .unwrap_or(EulerStyle::Deep);
    let reps: usize = args.get(3).and_then(|s| s.parse().ok()).unwrap_or(3);
    let undirected = args.get(4).is_some_and(|s| s == "undirected");
    type Solver<'a> = Box<dyn Fn() -> EulerTrail + 'a>;
    type Check<'a> = Box<dyn Fn(&EulerTrail) -> bool + 'a>;
    // The graphs outlive the solvers that borrow them.
    let (dg, ug);
    let (names, solvers, check, n): ([&str; 2], [Solver; 2], Check, usize);
    if undirected {
        ug = random_undirected_euler_graph(m, style, 1).expect("generator");
        let g = &ug;
        names = ["hierholzer", "cpu path"];
        solvers = [
            Box::new(move || undirected_euler_circuit_hierholzer(g, None).expect("circuit")),
            Box::new(move || {
                undirected_euler_circuit(g, None, Exec::Cpu)
                    .expect("circuit")
                    .0
            }),
        ];
        check = Box::new(move |t| is_undirected_euler_circuit(g, t));
        n = g.vertex_count();
    } else {
        dg = random_euler_graph(m, style, 1).expect("generator");
        let g = &dg;
        names = ["hierholzer", "parallel"];
        solvers = [
            Box::new(move || euler_circuit_hierholzer(g).expect("circuit")),
            Box::new(move || euler_circuit_parallel(g).expect("circuit")),
        ];
        check = Box::new(move |t| is_euler_circuit(g, t));
        n = g.vertex_count();
    }
    println!(
        "{m} edges, {n} vertices, {style:?}{}, {} rayon threads",
        if undirected { ", undirected" } else { "" },
        rayon::current_num_threads()
    );
    // The solvers take turns, so that a slow spell of a noisy machine hits both; each result
    // is checked.
    let mut wall = vec![Vec::new(); solvers.len()];
    let mut cpu = vec![Vec::new(); solvers.len()];
    for _ in 0..reps {
        for (i, f) in solvers.iter().enumerate() {
            let (w0, c0) = (Instant::now(), process_cpu_seconds());
            let t = f();
            wall[i].push(w0.elapsed().as_secs_f64());
            cpu[i].push(process_cpu_seconds() - c0);
            assert!(check(&t));
        }
    }
    let median = |v: &[f64]| {
        let mut v = v.to_vec();
        v.sort_by(f64::total_cmp);
        v[v.len() / 2]
    };
    let best = |v: &[f64]| v.iter().copied().fold(f64::INFINITY, f64::min);
    for (i, name) in names.iter().enumerate() {
        let (b, md) = (best(&wall[i]), median(&wall[i]));
        println!(
            "{name:>10}: wall best {b:.3} s ({:.2} M edges/s), median {md:.3} s; cpu best {:.2} s ({:.2} M edges per cpu-s)",
            m as f64 / b / 1e6,
            best(&cpu[i]),
            m as f64 / best(&cpu[i]) / 1e6
        );
    }
    // Per-turn speed-ups of the fast algorithm over Hierholzer.
    let ratios: Vec<f64> = wall[0].iter().zip(&wall[1]).map(|(h, p)| h / p).collect();
    println!(
        "{} vs hierholzer, per turn: median {:.2}x, range {:.2}x-{:.2}x over {reps} turns",
        names[1],
        median(&ratios),
        best(&ratios),
        ratios.iter().copied().fold(0.0, f64::max)
    );
}
