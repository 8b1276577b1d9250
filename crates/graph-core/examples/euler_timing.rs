//! Times Euler circuits on one generated graph: wall-clock and process CPU time (user + system,
//! from /proc/self/stat on Linux), so figures stay meaningful on a loaded machine. Hierholzer
//! and the parallel algorithm take turns; prints each one's best and median, and the median of
//! the per-turn ratios.
//!
//! `cargo run --release -p graph-core --example euler_timing -- 42000000 deep 7`
//! (edges, `deep` or `shallow`, turns).

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
    // The solvers take turns, so that a slow spell of a noisy machine hits both; each result
    // is checked.
    let mut wall = vec![Vec::new(); solvers.len()];
    let mut cpu = vec![Vec::new(); solvers.len()];
    for _ in 0..reps {
        for (i, (_, f)) in solvers.iter().enumerate() {
            let (w0, c0) = (Instant::now(), cpu_seconds());
            let t = f(&g).expect("circuit");
            wall[i].push(w0.elapsed().as_secs_f64());
            cpu[i].push(cpu_seconds() - c0);
            assert!(is_euler_circuit(&g, &t));
        }
    }
    let median = |v: &[f64]| {
        let mut v = v.to_vec();
        v.sort_by(f64::total_cmp);
        v[v.len() / 2]
    };
    let best = |v: &[f64]| v.iter().copied().fold(f64::INFINITY, f64::min);
    for (i, (name, _)) in solvers.iter().enumerate() {
        let (b, md) = (best(&wall[i]), median(&wall[i]));
        println!(
            "{name:>10}: wall best {b:.3} s ({:.2} M edges/s), median {md:.3} s; cpu best {:.2} s ({:.2} M edges per cpu-s)",
            m as f64 / b / 1e6,
            best(&cpu[i]),
            m as f64 / best(&cpu[i]) / 1e6
        );
    }
    // Per-turn speed-ups of the parallel algorithm over Hierholzer.
    let ratios: Vec<f64> = wall[0].iter().zip(&wall[1]).map(|(h, p)| h / p).collect();
    println!(
        "parallel vs hierholzer, per turn: median {:.2}x, range {:.2}x-{:.2}x over {reps} turns",
        median(&ratios),
        best(&ratios),
        ratios.iter().copied().fold(0.0, f64::max)
    );
}
