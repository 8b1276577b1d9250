//! `warpath lap` (solve one linear assignment problem) and `warpath lap-experiment` (the
//! seed's approximation-factor and runtime tables).

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use anyhow::Result;
use assignment::experiments::{
    approximation_table, exp_matrix, fit_exponent, int_matrix, runtime_series, uniform_matrix,
};
use assignment::ndarray::{Array2, ArrayView2};
use assignment::{
    AUCTION_GPU_THRESHOLD, Assignment, BRUTE_FORCE_MAX, Sense, Solver, brute_force,
    jonker_volgenant, solve,
};
use gpu_runtime::{Backend, Exec, Target};

use warpath_io::Format;

use crate::cli_io::{check_backend, output};
use crate::fail::{unverified, usage};
use crate::report::{DemoRow, DemoSize, Rows, format_seconds, progress};

/// Solver names on the command line.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub(crate) enum SolverArg {
    /// Every permutation (n <= 13).
    Brute,
    /// A seeded random assignment.
    Random,
    /// Smallest free entry first.
    Greedy,
    /// Kuhn–Munkres, O(n^3).
    Hungarian,
    /// Jonker–Volgenant shortest augmenting path (the fastest exact solver).
    Jv,
    /// Auction with epsilon scaling (CPU or GPU).
    Auction,
}

impl SolverArg {
    fn solver(self, seed: u64) -> Solver {
        match self {
            SolverArg::Brute => Solver::BruteForce,
            SolverArg::Random => Solver::Random { seed },
            SolverArg::Greedy => Solver::Greedy,
            SolverArg::Hungarian => Solver::Hungarian,
            SolverArg::Jv => Solver::JonkerVolgenant,
            SolverArg::Auction => Solver::Auction,
        }
    }
}

/// Distributions for `--generate`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub(crate) enum Dist {
    /// i.i.d. Exp(1).
    Exp,
    /// i.i.d. uniform in [0, 1).
    Uniform,
    /// i.i.d. integers in [0, --max].
    Int,
}

/// Arguments of `warpath lap`.
#[derive(clap::Args)]
#[command(after_help = "\
Examples:
  warpath lap costs.csv                        # CSV/TSV/whitespace, optional header, # comments
  warpath lap costs.npy --maximize -o pairs.csv
  warpath lap --generate 2000 --solver auction --backend cuda")]
pub(crate) struct Args {
    /// Cost matrix (- for standard input): a text table (one row per line; commas, tabs or
    /// spaces; an optional header line; # comments) or a 2-D `.npy` array (bool, integers,
    /// float32 or float64). As in scipy's `linear_sum_assignment`: `inf` forbids a pair when
    /// minimising and `-inf` when maximising; the other infinity and NaN are errors.
    #[arg(conflicts_with = "generate", required_unless_present = "generate")]
    file: Option<PathBuf>,
    /// Generate an N x N matrix instead of reading one (N x --cols with --cols; 1000, 2e3,
    /// 4k).
    #[arg(long, value_name = "N", value_parser = crate::cli_io::count)]
    generate: Option<usize>,
    /// Columns of the generated matrix (default: N).
    #[arg(long, requires = "generate", value_parser = crate::cli_io::count)]
    cols: Option<usize>,
    /// Distribution of the generated costs.
    #[arg(long, value_enum, default_value_t = Dist::Uniform)]
    dist: Dist,
    /// Largest value for `--dist int`.
    #[arg(long, default_value_t = 100)]
    max: i64,
    /// Seed of the generator (and of `--solver random`).
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// The solver.
    #[arg(long, value_enum, default_value_t = SolverArg::Jv)]
    solver: SolverArg,
    /// Maximise the total instead of minimising it (then `-inf` forbids a pair, as in scipy).
    #[arg(long)]
    maximize: bool,
    /// Where the auction and brute force run: auto, cpu or cuda (the other solvers have no
    /// GPU path: cuda with them is an error).
    #[arg(long, default_value = "auto")]
    backend: Exec,
    /// Solve this many times and report the fastest (for timing).
    #[arg(long, default_value_t = 1, value_parser = crate::cli_io::count)]
    repeat: usize,
    /// Print the assigned pairs `row -> column (cost)` (text mode).
    #[arg(long)]
    pairs: bool,
    /// Write the assignment here as `row col` pairs, 0-based as numpy's indices: .txt, .csv
    /// (header `row,col`), .npy (an int64 array of shape (pairs, 2)) or - for standard output.
    #[arg(long, short, value_name = "FILE")]
    output: Option<PathBuf>,
}

pub(crate) fn run(args: Args, json: bool) -> Result<()> {
    let gpu_path = matches!(args.solver, SolverArg::Auction | SolverArg::Brute);
    check_backend(
        args.backend,
        &format!("--solver {}", args.solver.solver(0).name()),
        gpu_path,
    )?;
    let out = output(
        "--output",
        args.output.as_deref(),
        &[Format::Text, Format::Csv, Format::Npy],
        json,
        false,
    )?;
    let costs: Array2<f64> = match (&args.file, args.generate) {
        (Some(path), _) => read_matrix(path)?,
        (None, Some(n)) => {
            let cols = args.cols.unwrap_or(n);
            // The matrix and the solvers' working copies (greedy sorts every entry).
            warpath_io::check_memory(
                &format!("--generate {n}"),
                (n as u64).saturating_mul(cols as u64),
                if args.solver == SolverArg::Greedy {
                    40.0
                } else {
                    16.0
                },
                0,
                "cost entries",
            )?;
            match args.dist {
                Dist::Exp => exp_matrix(n, cols, args.seed),
                Dist::Uniform => uniform_matrix(n, cols, args.seed),
                Dist::Int => int_matrix(n, cols, args.max, args.seed).mapv(|v| v as f64),
            }
        }
        (None, None) => return Err(usage("give a FILE or --generate N")),
    };
    let (rows, cols) = costs.dim();
    let sense = if args.maximize {
        Sense::Maximize
    } else {
        Sense::Minimize
    };
    let solver = args.solver.solver(args.seed);
    // Resolve the backend here so the report says where the auction ran.
    let n = rows.max(cols) as u64;
    let work = match solver {
        Solver::Auction => Some((n * n, AUCTION_GPU_THRESHOLD)),
        Solver::BruteForce => Some((
            (1..=n).fold(1u64, |f, k| f.saturating_mul(k)),
            combinatorics::SEARCH_GPU_THRESHOLD,
        )),
        _ => None,
    };
    let (exec, backend) = match work {
        Some((size, threshold)) => match args.backend.resolve(size, threshold)? {
            Target::Cpu => (Exec::Cpu, Backend::Cpu),
            Target::Cuda(_) => (Exec::Cuda, Backend::Cuda),
        },
        None => (Exec::Cpu, Backend::Cpu),
    };
    // A bar (with elapsed time) for repeated or large solves; none for quick ones.
    let bar = progress(
        args.repeat.max(1) as u64,
        "lap",
        json || (args.repeat < 2 && n < 2000),
    );
    let mut best: Option<(Duration, Option<Duration>)> = None;
    let mut result = None;
    for _ in 0..args.repeat.max(1) {
        let cpu0 = thread_cpu_time();
        let t = Instant::now();
        let a = solve(costs.view(), solver, sense, exec)?;
        let wall = t.elapsed();
        let cpu = match (cpu0, thread_cpu_time()) {
            (Some(a), Some(b)) => Some(b.saturating_sub(a)),
            _ => None,
        };
        if best.is_none_or(|(w, _)| wall < w) {
            best = Some((wall, cpu));
        }
        result = Some(a);
        bar.inc(1);
    }
    bar.finish_and_clear();
    let (wall, cpu) = best.expect("at least one run");
    let a = result.expect("at least one run");
    let check = verify(costs.view(), &a, solver, sense);
    let verified = check.is_ok();
    if let Some(o) = &out {
        let (r, c) = a.pairs();
        let flat: Vec<i64> = r
            .iter()
            .zip(&c)
            .flat_map(|(&i, &j)| [i as i64, j as i64])
            .collect();
        let header = ["row".to_owned(), "col".to_owned()];
        o.write_array(&flat, Some(2), Some(&header))?;
    }
    if json {
        println!(
            "{}",
            serde_json::json!({
                "n": rows,
                "cols": cols,
                "solver": solver.name(),
                "sense": if args.maximize { "max" } else { "min" },
                "backend": backend,
                "seconds": wall.as_secs_f64(),
                "cpu_seconds": cpu.map(|c| c.as_secs_f64()),
                "repeat": args.repeat.max(1),
                "cost": a.cost,
                "verified": verified,
                "check": check.as_ref().err().cloned().unwrap_or_else(|| "ok".into()),
                "rows": a.pairs().0,
                "cols_assigned": a.pairs().1,
            })
        );
    } else {
        if args.pairs {
            let (r, c) = a.pairs();
            for (i, j) in r.iter().zip(&c) {
                println!("{i} -> {j}  ({})", costs[[*i, *j]]);
            }
        }
        println!(
            "lap: {rows} x {cols}, {}, {} on {backend}: cost {} in {}{}, {}",
            solver.name(),
            if args.maximize { "max" } else { "min" },
            a.cost,
            format_seconds(wall.as_secs_f64()),
            cpu.map(|c| format!(" (cpu {})", format_seconds(c.as_secs_f64())))
                .unwrap_or_default(),
            match &check {
                Ok(()) => "verified".to_string(),
                Err(e) => format!("NOT verified: {e}"),
            }
        );
    }
    if let Err(e) = check {
        return Err(unverified(format!("verification failed: {e}")));
    }
    Ok(())
}

/// CPU time of the calling thread (Linux `/proc/thread-self/schedstat`), so timings on a
/// loaded machine can be compared with another program's CPU time.
fn thread_cpu_time() -> Option<Duration> {
    let s = std::fs::read_to_string("/proc/thread-self/schedstat").ok()?;
    let ns: u64 = s.split_whitespace().next()?.parse().ok()?;
    Some(Duration::from_nanos(ns))
}

/// Independent check of a result: a valid complete assignment whose cost is the sum of its
/// entries; for exact solvers, optimal (the dual certificate when there is one, brute force
/// for tiny problems, otherwise agreement with Jonker–Volgenant).
fn verify(
    c: ArrayView2<'_, f64>,
    a: &Assignment,
    solver: Solver,
    sense: Sense,
) -> Result<(), String> {
    let (r, k) = c.dim();
    if a.row_to_col.len() != r {
        return Err("wrong number of rows".into());
    }
    let mut used = vec![false; k];
    let mut entries = Vec::with_capacity(r.min(k));
    for (i, j) in a.row_to_col.iter().enumerate() {
        if let Some(j) = *j {
            if j >= k || used[j] {
                return Err(format!("column {j} invalid or used twice"));
            }
            used[j] = true;
            if !c[[i, j]].is_finite() {
                return Err(format!("forbidden pair ({i}, {j}) used"));
            }
            entries.push(c[[i, j]]);
        }
    }
    let count = entries.len();
    // Summed at the scale of the largest entry, so that huge costs whose total is finite
    // (the library accepts them) cannot overflow the check.
    let big = entries.iter().fold(0.0f64, |m, v| m.max(v.abs()));
    let total = if big > 0.0 {
        entries.iter().map(|v| v / big).sum::<f64>() * big
    } else {
        0.0
    };
    if count != r.min(k) {
        return Err(format!("{count} pairs assigned, {} needed", r.min(k)));
    }
    let scale = c
        .iter()
        .filter(|v| v.is_finite())
        .fold(1.0f64, |m, v| m.max(v.abs()));
    let tol = 1e-9 * scale * (r + k + 1) as f64;
    if (total - a.cost).abs() > tol {
        return Err(format!(
            "reported cost {} but the pairs sum to {total}",
            a.cost
        ));
    }
    let exact = solver.is_exact() || solver == Solver::Auction;
    if !exact {
        return Ok(());
    }
    let sign = if sense == Sense::Minimize { 1.0 } else { -1.0 };
    if let Some(d) = &a.duals {
        for i in 0..r {
            for j in 0..k {
                if c[[i, j]].is_finite() && sign * (c[[i, j]] - d.row[i] - d.col[j]) < -tol {
                    return Err(format!("dual constraint violated at ({i}, {j})"));
                }
            }
        }
        let dual: f64 = d.row.iter().sum::<f64>() + d.col.iter().sum::<f64>();
        if (dual - a.cost).abs() > tol {
            return Err(format!("duality gap: dual {dual} vs cost {}", a.cost));
        }
        return Ok(());
    }
    let reference = if r.max(k) <= 8 {
        brute_force(c, sense)
    } else {
        jonker_volgenant(c, sense)
    }
    .map_err(|e| e.to_string())?;
    // The auction on non-integer costs is within AUCTION_FLOAT_GAP * range of the optimum.
    let range = c
        .iter()
        .filter(|v| v.is_finite())
        .fold((f64::INFINITY, f64::NEG_INFINITY), |m, &v| {
            (m.0.min(v), m.1.max(v))
        });
    let allowed = tol + assignment::AUCTION_FLOAT_GAP * (range.1 - range.0).max(0.0) * 2.0;
    if (reference.cost - a.cost).abs() > allowed {
        return Err(format!(
            "cost {} but the optimum is {}",
            a.cost, reference.cost
        ));
    }
    Ok(())
}

/// Reads a cost matrix through the shared reader: a text table or a 2-D `.npy` array.
fn read_matrix(path: &Path) -> Result<Array2<f64>> {
    let (r, c, data) = warpath_io::read_array::<f64>(path)?
        .into_matrix("the cost matrix")
        .map_err(|e| e.in_file(path))?;
    Ok(Array2::from_shape_vec((r, c), data)?)
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
            let pts = runtime_series(s, &sizes, args.reps, args.seed, args.backend)?;
            // Brute force is fitted against n! (t ~ (n!)^b, b near 1), the others against n.
            let fit: Vec<(usize, f64)> = pts
                .iter()
                .map(|p| {
                    let x = if s == Solver::BruteForce {
                        (1..=p.n).product()
                    } else {
                        p.n
                    };
                    (x, p.seconds)
                })
                .collect();
            runtime.push((s, pts, fit_exponent(&fit)));
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
        println!(
            "{}",
            serde_json::json!({
                "approximation": approx,
                "runtime": rt,
                "pi2_over_6": std::f64::consts::PI.powi(2) / 6.0,
                "backend": "cpu",
                "seconds": started.elapsed().as_secs_f64(),
            })
        );
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
            "Runtime on n x n uniform costs (median of {}), fitted t ~ n^b",
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

/// Rows for `warpath demo`: every solver on a built-in input, each verified independently.
pub(crate) fn demo(size: DemoSize, rows: &mut Rows) {
    let (n_jv, n_cubic, n_auction) = match size {
        DemoSize::Small => (1000, 300, 300),
        DemoSize::Large => (5000, 1000, 2000),
    };
    let mut run = |label: &str, c: &Array2<f64>, solver: Solver, exec: Exec, backend: Backend| {
        let t = Instant::now();
        let n = c.nrows() as u64;
        match solve(c.view(), solver, Sense::Minimize, exec) {
            Ok(a) => {
                let elapsed = t.elapsed();
                let check = verify(c.view(), &a, solver, Sense::Minimize);
                let row = DemoRow::new(label, n, backend, elapsed, check.is_ok());
                rows.push(match check {
                    Ok(()) => row.with_note(format!("cost {:.4}", a.cost)),
                    Err(e) => row.with_note(e),
                });
            }
            Err(e) => rows.push(DemoRow::failed(label, n, e)),
        }
    };
    let big = uniform_matrix(n_jv, n_jv, 7);
    run(
        "assignment: jonker-volgenant",
        &big,
        Solver::JonkerVolgenant,
        Exec::Cpu,
        Backend::Cpu,
    );
    // Greedy sorts all n^2 entries (24 bytes each): keep it at most 2000 x 2000.
    let g = if n_jv > 2000 {
        uniform_matrix(2000, 2000, 7)
    } else {
        big
    };
    run(
        "assignment: greedy",
        &g,
        Solver::Greedy,
        Exec::Cpu,
        Backend::Cpu,
    );
    let mid = uniform_matrix(n_cubic, n_cubic, 8);
    run(
        "assignment: hungarian",
        &mid,
        Solver::Hungarian,
        Exec::Cpu,
        Backend::Cpu,
    );
    let ints = int_matrix(n_auction, n_auction, 1000, 9).mapv(|v| v as f64);
    run(
        "assignment: auction (integer, exact)",
        &ints,
        Solver::Auction,
        Exec::Cpu,
        Backend::Cpu,
    );
    if gpu_runtime::gpu().is_ok() {
        run(
            "assignment: auction (integer, exact)",
            &ints,
            Solver::Auction,
            Exec::Cuda,
            Backend::Cuda,
        );
    }
    let tiny = exp_matrix(8, 8, 10);
    run(
        "assignment: brute force",
        &tiny,
        Solver::BruteForce,
        Exec::Cpu,
        Backend::Cpu,
    );
}
