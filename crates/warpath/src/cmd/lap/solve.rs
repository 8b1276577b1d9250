//! `warpath lap`: one linear assignment problem (a CSV/.npy file or a generated matrix) solved
//! by any solver of the assignment crate, timed, verified independently, with the pairs written
//! by the output's extension.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use anyhow::Result;
use assignment::experiments::{exp_matrix, int_matrix, uniform_matrix};
use assignment::ndarray::Array2;
use assignment::{AUCTION_GPU_THRESHOLD, Sense, Solver, solve};
use gpu_runtime::{Backend, Exec, Target};

use warpath_io::Format;

use super::verify;
use crate::cli_io::{InputInfo, check_backend, output};
use crate::fail::{unverified, usage};
use crate::report::{format_seconds, progress};

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
    /// The library's solver (`seed` seeds the random one).
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
  warpath lap --generate 2000 --solver auction --backend cuda
  warpath lap --generate 300 --dist int --max 9 --solver greedy --ties 8   # follow tie paths")]
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
    /// With `--solver greedy`: follow up to K paths through tied smallest entries (at each
    /// step branch on every tied entry, keep the K cheapest partial assignments) and return
    /// the best complete one; never worse than plain greedy, which is K = 1 (ties broken in
    /// row-major order).
    #[arg(long, value_name = "K", default_value_t = 1)]
    ties: usize,
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

/// `warpath lap`: reads or generates the costs, solves `--repeat` times (the fastest run is
/// reported), verifies the result and writes the pairs.
pub(crate) fn run(args: Args, json: bool) -> Result<()> {
    let gpu_path = matches!(args.solver, SolverArg::Auction | SolverArg::Brute);
    check_backend(
        args.backend,
        &format!("--solver {}", args.solver.solver(0).name()),
        gpu_path,
    )?;
    if args.ties == 0 {
        return Err(usage("--ties must be at least 1 (1 is plain greedy)"));
    }
    if args.ties > 1 && args.solver != SolverArg::Greedy {
        return Err(usage(format!(
            "--ties follows the greedy solver's tie paths: it needs --solver greedy, not {}",
            args.solver.solver(0).name()
        )));
    }
    let out = output(
        "--output",
        args.output.as_deref(),
        &[Format::Text, Format::Csv, Format::Npy],
        json,
        false,
    )?;
    let (costs, header): (Array2<f64>, _) = match (&args.file, args.generate) {
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
            let m = match args.dist {
                Dist::Exp => exp_matrix(n, cols, args.seed),
                Dist::Uniform => uniform_matrix(n, cols, args.seed),
                Dist::Int => int_matrix(n, cols, args.max, args.seed).mapv(|v| v as f64),
            };
            (m, None)
        }
        (None, None) => return Err(usage("give a FILE or --generate N")),
    };
    let (rows, cols) = costs.dim();
    let sense = if args.maximize {
        Sense::Maximize
    } else {
        Sense::Minimize
    };
    let solver = match args.solver.solver(args.seed) {
        Solver::Greedy if args.ties > 1 => Solver::GreedyTies { k: args.ties },
        s => s,
    };
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
                "ties": (args.solver == SolverArg::Greedy).then_some(args.ties),
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
                "header": header,
            })
        );
    } else {
        if args.pairs {
            let (r, c) = a.pairs();
            for (i, j) in r.iter().zip(&c) {
                println!("{i} -> {j}  ({})", costs[[*i, *j]]);
            }
        }
        if let (Some(h), Some(path)) = (&header, &args.file) {
            let input = InputInfo {
                source: path.display().to_string(),
                header: Some(h.clone()),
            };
            println!("lap: {}", input.describe());
        }
        let ties = match solver {
            Solver::GreedyTies { k } => format!(" (ties {k})"),
            _ => String::new(),
        };
        println!(
            "lap: {rows} x {cols}, {}{ties}, {} on {backend}: cost {} in {}{}, {}",
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

/// Reads a cost matrix through the shared reader: a text table or a 2-D `.npy` array; returns
/// it and the header line the reader skipped.
fn read_matrix(path: &Path) -> Result<(Array2<f64>, Option<Vec<String>>)> {
    let a = warpath_io::read_array::<f64>(path)?;
    let header = a.header.clone();
    let (r, c, data) = a
        .into_matrix("the cost matrix")
        .map_err(|e| e.in_file(path))?;
    Ok((Array2::from_shape_vec((r, c), data)?, header))
}
