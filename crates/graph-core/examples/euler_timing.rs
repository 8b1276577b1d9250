//! Times Euler circuits on one generated graph: wall-clock and process CPU time (user + system,
//! from /proc/self/stat on Linux), so figures stay meaningful on a loaded machine.
//!
//! `cargo run --release -p graph-core --example euler_timing -- 10000000 deep`

use std::time::Instant;

use graph_core::{
    EulerError, EulerStyle, EulerTrail, Graph, euler_circuit_hierholzer, euler_circuit_parallel,
    is_euler_circuit, random_euler_graph,
};

/// Process CPU seconds (user + system), or NaN where /proc is missing.
fn cpu_seconds() -> f64 {
    let Ok(s) = std::fs::read_to_string("/proc/self/stat") else {
        return f64::NAN;
    };
    // Fields after the command name (which is in parentheses): utime is field 14, stime 15.
    let rest = s.rsplit_once(')').map_or("", |(_, r)| r);
    let f: Vec<&str> = rest.split_whitespace().collect();
    let ticks = |i: usize| {
        f.get(i)
            .and_then(|x| x.parse::<f64>().ok())
            .unwrap_or(f64::NAN)
    };
    (ticks(11) + ticks(12)) / 100.0
}

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
    let g = random_euler_graph(m, style, 1).expect("generator");
    println!(
        "{m} edges, {} vertices, {style:?}, {} rayon threads",
        g.vertex_count(),
        rayon::current_num_threads()
    );
    type Solver = fn(&Graph) -> Result<EulerTrail, EulerError>;
    let solvers: [(&str, Solver); 2] = [
        ("hierholzer", euler_circuit_hierholzer),
        ("parallel", euler_circuit_parallel),
    ];
    for (name, f) in solvers {
        let mut best_wall = f64::INFINITY;
        let mut best_cpu = f64::INFINITY;
        for _ in 0..reps {
            let (w0, c0) = (Instant::now(), cpu_seconds());
            let t = f(&g).expect("circuit");
            let (wall, cpu) = (w0.elapsed().as_secs_f64(), cpu_seconds() - c0);
            assert!(is_euler_circuit(&g, &t));
            best_wall = best_wall.min(wall);
            best_cpu = best_cpu.min(cpu);
        }
        println!(
            "{name:>10}: wall {best_wall:.3} s ({:.2} M edges/s), cpu {best_cpu:.2} s ({:.2} M edges per cpu-s)",
            m as f64 / best_wall / 1e6,
            m as f64 / best_cpu / 1e6
        );
    }
}
