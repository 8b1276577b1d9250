//! `warpath lap-experiment`: the seed's assignment experiments, approximation factors of
//! greedy and random on Exp(1) costs against the theory and runtime against n with fitted
//! exponents, as tables or JSON.

use std::time::Instant;

use anyhow::Result;
use assignment::experiments::{CostDist, approximation_table, runtime_series, series_exponent};
use assignment::{BRUTE_FORCE_MAX, Solver};
use gpu_runtime::Exec;

use crate::cli_io::check_backend;
use crate::report::{format_seconds, progress};

/// Cost distributions of the runtime table.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub(crate) enum RuntimeDist {
    /// i.i.d. Exp(1), the seed's costs.
    Exp,
    /// i.i.d. uniform in [0, 1).
    Uniform,
}

/// Arguments of `warpath lap-experiment`.
#[derive(clap::Args)]
pub(crate) struct ExperimentArgs {
    /// Sizes n of the approximation table (n x n Exp(1) matrices).
    #[arg(long, value_delimiter = ',', default_values_t = [10usize, 20, 50, 100, 200])]
    sizes: Vec<usize>,
    /// Matrices per size.
    #[arg(long, default_value_t = 20)]
    samples: usize,
    /// Sizes of the runtime table (polynomial solvers; brute force uses 6..=9).
    #[arg(long, value_delimiter = ',', default_values_t = [100usize, 200, 400, 800])]
    runtime_sizes: Vec<usize>,
    /// Repetitions per runtime point (median).
    #[arg(long, default_value_t = 3)]
    reps: usize,
    /// Costs of the runtime table (the approximation table is always Exp(1)).
    #[arg(long, value_enum, default_value_t = RuntimeDist::Exp)]
    dist: RuntimeDist,
    /// Skip the runtime table.
    #[arg(long)]
    no_runtime: bool,
    /// Seed.
    #[arg(long, default_value_t = 2024)]
    seed: u64,
    /// Where the auction runs.
    #[arg(long, default_value = "cpu")]
    backend: Exec,
}

/// `warpath lap-experiment`: the approximation table, then (unless `--no-runtime`) the
/// runtime series of every solver, printed or as one JSON object.
pub(crate) fn run_experiment(args: ExperimentArgs, json: bool) -> Result<()> {
    let started = Instant::now();
    let total = (args.sizes.len() * args.samples) as u64;
    let bar = progress(total, "approximation", json);
    let table = approximation_table(&args.sizes, args.samples, args.seed, |k| bar.inc(k as u64))?;
    bar.finish_and_clear();
    let mut runtime = Vec::new();
    if !args.no_runtime {
        let solvers = [
            (Solver::BruteForce, vec![6usize, 7, 8, 9]),
            (Solver::Random { seed: 1 }, args.runtime_sizes.clone()),
            (Solver::Greedy, args.runtime_sizes.clone()),
            (Solver::Hungarian, args.runtime_sizes.clone()),
            (Solver::JonkerVolgenant, args.runtime_sizes.clone()),
            (Solver::Auction, args.runtime_sizes.clone()),
        ];
        let bar = progress(solvers.len() as u64, "runtime", json);
        check_backend(args.backend, "lap-experiment", true)?;
        for (s, sizes) in solvers {
            let sizes: Vec<usize> = sizes
                .into_iter()
                .filter(|&n| s != Solver::BruteForce || n <= BRUTE_FORCE_MAX)
                .collect();
            let dist = match args.dist {
                RuntimeDist::Exp => CostDist::Exp,
                RuntimeDist::Uniform => CostDist::Uniform,
            };
            let pts = runtime_series(s, &sizes, args.reps, args.seed, args.backend, dist)?;
            // Brute force is fitted against n! (t ~ (n!)^b, b near 1), the others against n.
            let exponent = series_exponent(&pts);
            runtime.push((s, pts, exponent));
            bar.inc(1);
        }
        bar.finish_and_clear();
    }
    if json {
        let approx: Vec<_> = table
            .iter()
            .map(|r| {
                serde_json::json!({
                    "n": r.n, "samples": r.samples,
                    "optimal_mean": r.optimal_mean, "optimal_theory_hn2": r.optimal_theory,
                    "greedy_factor": r.greedy_factor, "greedy_theory": r.greedy_theory,
                    "random_factor": r.random_factor, "random_theory": r.random_theory,
                })
            })
            .collect();
        let rt: Vec<_> = runtime
            .iter()
            .map(|(s, pts, b)| {
                serde_json::json!({
                    "solver": s.name(),
                    "points": pts.iter().map(|p| serde_json::json!({"n": p.n, "seconds": p.seconds})).collect::<Vec<_>>(),
                    "fitted_exponent": b,
                })
            })
            .collect();
        crate::cli_io::print_json!({
            "approximation": approx,
            "runtime": rt,
            "runtime_costs": if args.dist == RuntimeDist::Exp { "exp" } else { "uniform" },
            "pi2_over_6": std::f64::consts::PI.powi(2) / 6.0,
            "backend": "cpu",
            "seconds": started.elapsed().as_secs_f64(),
        });
        return Ok(());
    }
    println!(
        "Approximation factors on n x n Exp(1) costs ({} samples per n)",
        args.samples
    );
    println!(
        "{:>6}  {:>10} {:>10}  {:>10} {:>10}  {:>10} {:>10}",
        "n", "opt mean", "H_n^(2)", "greedy", "H/H2", "random", "n/H2"
    );
    for r in &table {
        println!(
            "{:>6}  {:>10.4} {:>10.4}  {:>10.3} {:>10.3}  {:>10.2} {:>10.2}",
            r.n,
            r.optimal_mean,
            r.optimal_theory,
            r.greedy_factor,
            r.greedy_theory,
            r.random_factor,
            r.random_theory
        );
    }
    println!("(pi^2/6 = {:.4})", std::f64::consts::PI.powi(2) / 6.0);
    if !runtime.is_empty() {
        println!();
        println!(
            "Runtime on n x n {} costs (median of {}), fitted t ~ n^b",
            match args.dist {
                RuntimeDist::Exp => "Exp(1)",
                RuntimeDist::Uniform => "uniform",
            },
            args.reps
        );
        for (s, pts, b) in &runtime {
            let cells: Vec<String> = pts
                .iter()
                .map(|p| format!("n={}: {}", p.n, format_seconds(p.seconds)))
                .collect();
            println!(
                "{:>10}  b = {:>5}  {}",
                s.name(),
                b.map(|b| format!("{b:.2}")).unwrap_or_else(|| "-".into()),
                cells.join(", ")
            );
        }
    }
    println!("lap-experiment: {:.1} s", started.elapsed().as_secs_f64());
    Ok(())
}
