//! `warpath lap`: one linear assignment problem (a CSV/.npy file or a generated matrix) solved
//! by any solver of the assignment crate, timed, verified independently, with the pairs written
//! by the output's extension.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use anyhow::Result;
use assignment::experiments::{exp_matrix, int_matrix, uniform_matrix};
use assignment::ndarray::Array2;
use assignment::{AUCTION_GPU_THRESHOLD, Sense, Solver, solve};

use super::sparse_input::{self, SparseInput, Values};
use gpu_runtime::{Backend, Exec, Target};

use warpath_io::Format;

use super::verify;
use crate::cli_io::{InputInfo, check_backend, output};
use crate::fail::{unverified, usage};
use crate::report::{format_seconds, progress};

/// Solver names on the command line.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub(crate) enum SolverArg {
    /// Jonker–Volgenant, or the sparse solver when at most 1 pair in 8 is allowed (the
    /// default; `--json` says which ran).
    Auto,
    /// LAPJVsp over the allowed entries only (the forbidden ones dropped).
    Sparse,
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
            SolverArg::Auto => Solver::Auto,
            SolverArg::Sparse => Solver::Sparse,
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
    /// i.i.d. integers in [0, --max] (solved in integer arithmetic).
    Int,
}

/// Arguments of `warpath lap`.
#[derive(clap::Args)]
#[command(after_help = "\
Examples:
  warpath lap costs.csv                        # CSV/TSV/whitespace, optional header, # comments
  warpath lap costs.npy --maximize -o pairs.csv
  warpath lap tracks.mtx --sparse              # Matrix Market or scipy .npz: stored entries only
  warpath lap --sparse --generate 1e6 --per-row 10   # 10 random entries per row + the diagonal
  warpath lap --generate 2000 --solver auction --backend cuda
  warpath lap --generate 300 --dist int --max 9 --solver greedy --ties 8   # follow tie paths")]
pub(crate) struct Args {
    /// Cost matrix (- for standard input): a text table (one row per line; commas, tabs or
    /// spaces; an optional header line; # comments), a 2-D `.npy` array (bool, integers,
    /// float32 or float64: each solved in its own type, integers in integer arithmetic), or a
    /// sparse matrix: Matrix Market coordinate (`.mtx`) or scipy's `save_npz` (`.npz`), whose
    /// stored entries (zeros included) are the allowed pairs. As in scipy's
    /// `linear_sum_assignment`: `inf` forbids a pair when minimising and `-inf` when
    /// maximising; the other infinity and NaN are errors.
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
    /// Solve a sparse matrix with the sparse solver (LAPJVsp over its stored entries), without
    /// ever making it dense: a `.mtx` / `.npz` file, or with `--generate N`, `--per-row`
    /// random entries per row plus the diagonal. Without it a sparse file is made dense
    /// (missing pairs forbidden) when that fits in memory.
    #[arg(long)]
    sparse: bool,
    /// Random entries per row of `--sparse --generate` (costs uniform in [1, 100), integers
    /// with `--dist int`).
    #[arg(long, default_value_t = 10, requires = "sparse", value_parser = crate::cli_io::count)]
    per_row: usize,
    /// Seed of the generator (and of `--solver random`).
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// The solver.
    #[arg(long, value_enum, default_value_t = SolverArg::Auto)]
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
    let sense = if args.maximize {
        Sense::Maximize
    } else {
        Sense::Minimize
    };
    let sparse_file = args
        .file
        .as_deref()
        .is_some_and(sparse_input::is_sparse_file);
    if args.sparse
        && !matches!(
            args.solver,
            SolverArg::Auto | SolverArg::Sparse | SolverArg::Auction
        )
    {
        return Err(usage(format!(
            "--sparse solves with the sparse solver (or --solver auction): drop --solver {} (or make the matrix dense by leaving out --sparse)",
            args.solver.solver(0).name()
        )));
    }
    let input = match (&args.file, args.generate) {
        (Some(path), _) if args.sparse || sparse_file => {
            let m = sparse_input::read_sparse(path)?;
            if args.sparse {
                Input::Sparse(m)
            } else {
                Input::Dense(Dense::F64(m.densify(args.maximize)?), None)
            }
        }
        (Some(path), _) => {
            let (m, header) = read_matrix(path)?;
            Input::Dense(m, header)
        }
        (None, Some(n)) if args.sparse => {
            warpath_io::check_memory(
                &format!("--sparse --generate {n}"),
                (n as u64).saturating_mul(args.per_row as u64 + 1),
                56.0,
                0,
                "entries",
            )?;
            Input::Sparse(sparse_input::generate(
                n,
                args.per_row,
                args.dist == Dist::Int,
                args.seed,
            ))
        }
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
                Dist::Exp => Dense::F64(exp_matrix(n, cols, args.seed)),
                Dist::Uniform => Dense::F64(uniform_matrix(n, cols, args.seed)),
                Dist::Int => Dense::I64(int_matrix(n, cols, args.max, args.seed)),
            };
            Input::Dense(m, None)
        }
        (None, None) => return Err(usage("give a FILE or --generate N")),
    };
    let (rows, cols) = input.shape();
    let requested = match args.solver.solver(args.seed) {
        Solver::Greedy if args.ties > 1 => Solver::GreedyTies { k: args.ties },
        s => s,
    };
    // What runs: the sparse solver on sparse input, `choose` for auto on dense input.
    let solver = match (&input, requested) {
        (Input::Sparse(_), Solver::Auction) => Solver::Auction,
        (Input::Sparse(_), _) => Solver::Sparse,
        (Input::Dense(m, _), Solver::Auto) => m.choose(sense),
        (_, s) => s,
    };
    // Resolve the backend here so the report says where the auction ran.
    let n = rows.max(cols) as u64;
    let work = match solver {
        Solver::Auction => Some((
            input.nnz().map_or(n * n, |k| k as u64),
            AUCTION_GPU_THRESHOLD,
        )),
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
    // A bar for repeated runs, a row count for a long sparse solve; none for quick ones.
    let sparse_bar = matches!(input, Input::Sparse(ref m) if m.rows.min(m.cols) >= 100_000);
    let bar = if sparse_bar && args.repeat < 2 {
        progress(rows.min(cols) as u64, "lap --sparse rows matched", json)
    } else {
        progress(
            args.repeat.max(1) as u64,
            "lap",
            json || (args.repeat < 2 && n < 2000),
        )
    };
    let mut best: Option<(Duration, Option<Duration>)> = None;
    let mut result = None;
    for _ in 0..args.repeat.max(1) {
        let cpu0 = thread_cpu_time();
        let t = Instant::now();
        let a = match &input {
            Input::Dense(m, _) => m.solve(solver, sense, exec)?,
            Input::Sparse(m) if solver == Solver::Auction => sparse_auction(m, sense, exec)?,
            Input::Sparse(m) => {
                let on = |p: assignment::sparse::Progress| {
                    if sparse_bar {
                        bar.set_position(p.matched as u64);
                    }
                };
                solve_sparse(m, sense, on)?
            }
        };
        let wall = t.elapsed();
        let cpu = match (cpu0, thread_cpu_time()) {
            (Some(a), Some(b)) => Some(b.saturating_sub(a)),
            _ => None,
        };
        if best.is_none_or(|(w, _)| wall < w) {
            best = Some((wall, cpu));
        }
        result = Some(a);
        if !sparse_bar {
            bar.inc(1);
        }
    }
    bar.finish_and_clear();
    let (wall, cpu) = best.expect("at least one run");
    let a = result.expect("at least one run");
    let check = match &input {
        Input::Dense(m, _) => m.verify(&a, solver, sense),
        Input::Sparse(m) => verify_sparse(m, &a, solver, sense),
    };
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
    let elements = input.dtype();
    let arithmetic = match (&input, solver) {
        (Input::Dense(m, _), Solver::JonkerVolgenant) if m.integer_arithmetic(sense) => "i64",
        (Input::Sparse(m), _) if m.integer_arithmetic() => "i64",
        _ => "f64",
    };
    let header = match &input {
        Input::Dense(_, h) => h.clone(),
        Input::Sparse(_) => None,
    };
    if json {
        println!(
            "{}",
            serde_json::json!({
                "n": rows,
                "cols": cols,
                "solver": requested.name(),
                "chosen": solver.name(),
                "sparse": matches!(input, Input::Sparse(_)),
                "nnz": input.nnz(),
                "elements": elements,
                "arithmetic": arithmetic,
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
                println!("{i} -> {j}  ({})", input.at(*i, *j));
            }
        }
        if let (Some(h), Some(path)) = (&header, &args.file) {
            let info = InputInfo {
                source: path.display().to_string(),
                header: Some(h.clone()),
            };
            println!("lap: {}", info.describe());
        }
        let ties = match solver {
            Solver::GreedyTies { k } => format!(" (ties {k})"),
            _ => String::new(),
        };
        let picked = if requested == Solver::Auto {
            format!("auto: {}", solver.name())
        } else {
            solver.name().to_owned()
        };
        let what = match &input {
            Input::Sparse(m) => format!("{rows} x {cols} sparse ({} entries, {elements})", m.nnz()),
            Input::Dense(..) => format!("{rows} x {cols} ({elements})"),
        };
        println!(
            "lap: {what}, {picked}{ties}, {} on {backend}: cost {} in {}{}, {}",
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

/// The cost matrix: dense in the element type it came in, or sparse.
enum Input {
    /// A dense matrix and the header line its file had.
    Dense(Dense, Option<Vec<String>>),
    /// CSR arrays.
    Sparse(SparseInput),
}

impl Input {
    fn shape(&self) -> (usize, usize) {
        match self {
            Input::Dense(m, _) => m.shape(),
            Input::Sparse(m) => (m.rows, m.cols),
        }
    }

    fn nnz(&self) -> Option<usize> {
        match self {
            Input::Dense(..) => None,
            Input::Sparse(m) => Some(m.nnz()),
        }
    }

    fn dtype(&self) -> &'static str {
        match self {
            Input::Dense(m, _) => m.dtype(),
            Input::Sparse(m) => m.values.dtype(),
        }
    }

    /// Entry `(i, j)` for `--pairs` (of a matched pair, so stored).
    fn at(&self, i: usize, j: usize) -> f64 {
        match self {
            Input::Dense(m, _) => m.at(i, j),
            Input::Sparse(m) => (m.indptr[i]..m.indptr[i + 1])
                .filter(|&k| m.indices[k] == j)
                .map(|k| m.values.at(k))
                .fold(f64::NAN, |a, b| if a.is_nan() || b < a { b } else { a }),
        }
    }
}

/// A dense matrix in its element type (no `f64` copy of an integer or `float32` file).
pub(super) enum Dense {
    F64(Array2<f64>),
    F32(Array2<f32>),
    I64(Array2<i64>),
    I32(Array2<i32>),
}

/// Evaluates `$body` with `$m` bound to the typed matrix.
macro_rules! with_dense {
    ($d:expr, |$m:ident| $body:expr) => {
        match $d {
            Dense::F64($m) => $body,
            Dense::F32($m) => $body,
            Dense::I64($m) => $body,
            Dense::I32($m) => $body,
        }
    };
}

impl Dense {
    fn shape(&self) -> (usize, usize) {
        with_dense!(self, |m| m.dim())
    }

    fn dtype(&self) -> &'static str {
        match self {
            Dense::F64(_) => "f64",
            Dense::F32(_) => "f32",
            Dense::I64(_) => "i64",
            Dense::I32(_) => "i32",
        }
    }

    fn at(&self, i: usize, j: usize) -> f64 {
        match self {
            Dense::F64(m) => m[[i, j]],
            Dense::F32(m) => m[[i, j]] as f64,
            Dense::I64(m) => m[[i, j]] as f64,
            Dense::I32(m) => m[[i, j]] as f64,
        }
    }

    fn integer_arithmetic(&self, sense: Sense) -> bool {
        with_dense!(self, |m| assignment::integer_arithmetic(m.view(), sense))
    }

    fn choose(&self, sense: Sense) -> Solver {
        with_dense!(self, |m| assignment::choose(m.view(), sense))
    }

    fn solve(&self, solver: Solver, sense: Sense, exec: Exec) -> Result<assignment::Assignment> {
        Ok(with_dense!(self, |m| solve(m.view(), solver, sense, exec))?)
    }

    fn verify(
        &self,
        a: &assignment::Assignment,
        solver: Solver,
        sense: Sense,
    ) -> Result<(), String> {
        with_dense!(self, |m| verify(m.view(), a, solver, sense))
    }
}

/// The sparse solver on CSR arrays, reporting rows matched to `on`.
fn solve_sparse(
    m: &SparseInput,
    sense: Sense,
    mut on: impl FnMut(assignment::sparse::Progress),
) -> Result<assignment::Assignment> {
    use assignment::sparse::{Csr, min_weight_full_matching_with_progress};
    Ok(match &m.values {
        Values::F64(v) => {
            let csr = Csr::new(m.rows, m.cols, &m.indptr[..], &m.indices[..], &v[..])?;
            min_weight_full_matching_with_progress(&csr, sense, &mut on)?
        }
        Values::I64(v) => {
            let csr = Csr::new(m.rows, m.cols, &m.indptr[..], &m.indices[..], &v[..])?;
            min_weight_full_matching_with_progress(&csr, sense, &mut on)?
        }
    })
}

/// The sparse auction (square matrices; on the GPU with `exec`).
fn sparse_auction(m: &SparseInput, sense: Sense, exec: Exec) -> Result<assignment::Assignment> {
    use assignment::sparse::{Csr, auction};
    Ok(match &m.values {
        Values::F64(v) => auction(
            &Csr::new(m.rows, m.cols, &m.indptr[..], &m.indices[..], &v[..])?,
            sense,
            exec,
        )?,
        Values::I64(v) => auction(
            &Csr::new(m.rows, m.cols, &m.indptr[..], &m.indices[..], &v[..])?,
            sense,
            exec,
        )?,
    })
}

/// Independent check of a sparse solution: a matching of stored entries of the right size,
/// whose cost is the sum of its entries and whose duals are feasible on every entry and
/// tight on the matched ones (so it is optimal). The auction has no duals: its cost is
/// compared with the exact sparse solver's (within the float gap when the costs are not
/// integers).
fn verify_sparse(
    m: &SparseInput,
    a: &assignment::Assignment,
    solver: Solver,
    sense: Sense,
) -> Result<(), String> {
    if solver == Solver::Auction {
        let exact = solve_sparse(m, sense, |_| {}).map_err(|e| e.to_string())?;
        let (lo, hi) = (0..m.nnz())
            .map(|k| m.values.at(k))
            .fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), v| {
                (a.min(v), b.max(v))
            });
        let allowed = 1e-9 * exact.cost.abs().max(1.0)
            + assignment::AUCTION_FLOAT_GAP * (hi - lo).max(0.0) * 2.0;
        if (exact.cost - a.cost).abs() > allowed {
            return Err(format!("cost {} but the optimum is {}", a.cost, exact.cost));
        }
        let mut used = vec![false; m.cols];
        for j in a.row_to_col.iter().flatten() {
            if std::mem::replace(&mut used[*j], true) {
                return Err(format!("column {j} used twice"));
            }
        }
        return Ok(());
    }
    let sign = if sense == Sense::Minimize { 1.0 } else { -1.0 };
    let mut used = vec![false; m.cols];
    let (mut total, mut count, mut scale) = (0.0f64, 0usize, 1.0f64);
    for k in 0..m.nnz() {
        scale = scale.max(m.values.at(k).abs());
    }
    let tol = 1e-9 * scale * (m.rows + m.cols + 1) as f64;
    let d = a
        .duals
        .as_ref()
        .ok_or("the sparse solver returned no duals")?;
    for (i, j) in a.row_to_col.iter().enumerate() {
        let Some(j) = *j else { continue };
        if j >= m.cols || used[j] {
            return Err(format!("column {j} invalid or used twice"));
        }
        used[j] = true;
        // the best stored entry of the pair (parallel entries: the better one)
        let best = (m.indptr[i]..m.indptr[i + 1])
            .filter(|&k| m.indices[k] == j)
            .map(|k| sign * m.values.at(k))
            .fold(f64::INFINITY, f64::min);
        if !best.is_finite() {
            return Err(format!("pair ({i}, {j}) is not a stored entry"));
        }
        if (sign * best - d.row[i] - d.col[j]).abs() > tol {
            return Err(format!("dual not tight on the matched pair ({i}, {j})"));
        }
        total += sign * best;
        count += 1;
    }
    if count != m.rows.min(m.cols) {
        return Err(format!(
            "{count} pairs matched, {} needed",
            m.rows.min(m.cols)
        ));
    }
    if (total - a.cost).abs() > tol {
        return Err(format!(
            "reported cost {} but the pairs sum to {total}",
            a.cost
        ));
    }
    for i in 0..m.rows {
        for k in m.indptr[i]..m.indptr[i + 1] {
            let c = m.values.at(k);
            if c.is_finite() && sign * (c - d.row[i] - d.col[m.indices[k]]) < -tol {
                return Err(format!(
                    "dual constraint violated at ({i}, {})",
                    m.indices[k]
                ));
            }
        }
    }
    let dual: f64 = d.row.iter().sum::<f64>() + d.col.iter().sum::<f64>();
    if (dual - a.cost).abs() > tol.max(1e-9 * a.cost.abs()) {
        return Err(format!("duality gap: dual {dual} vs cost {}", a.cost));
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

/// Reads a dense cost matrix through the shared reader, in its own element type: a `.npy`
/// array of int32 / int64 / float32 stays so (narrower integers and bool become int64), a text
/// table of integers becomes int64, anything else float64; returns it and the header line the
/// reader skipped.
fn read_matrix(path: &Path) -> Result<(Dense, Option<Vec<String>>)> {
    use warpath_io::npy::Kind;
    fn typed<T: warpath_io::Element>(path: &Path) -> Result<(Array2<T>, Option<Vec<String>>)> {
        let a = warpath_io::read_array::<T>(path)?;
        let header = a.header.clone();
        let (r, c, data) = a
            .into_matrix("the cost matrix")
            .map_err(|e| e.in_file(path))?;
        Ok((Array2::from_shape_vec((r, c), data)?, header))
    }
    Ok(match warpath_io::npy_dtype(path)? {
        Some(d) if d.kind == Kind::Float && d.size == 4 => {
            let (m, h) = typed::<f32>(path)?;
            (Dense::F32(m), h)
        }
        Some(d) if d.kind == Kind::Int && d.size == 4 => {
            let (m, h) = typed::<i32>(path)?;
            (Dense::I32(m), h)
        }
        Some(d) if d.kind == Kind::Float || (d.kind == Kind::Uint && d.size == 8) => {
            let (m, h) = typed::<f64>(path)?;
            (Dense::F64(m), h)
        }
        Some(_) => {
            let (m, h) = typed::<i64>(path)?;
            (Dense::I64(m), h)
        }
        None => match typed::<i64>(path) {
            // a table of integers (standard input can be read once only: floats there)
            Ok((m, h)) if path.as_os_str() != "-" => (Dense::I64(m), h),
            _ => {
                let (m, h) = typed::<f64>(path)?;
                (Dense::F64(m), h)
            }
        },
    })
}
