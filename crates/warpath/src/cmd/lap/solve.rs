//! `warpath lap`: one linear assignment problem (a CSV/.npy file, a sparse file or a generated
//! matrix) solved by any solver of the assignment crate, timed, verified independently (by the
//! assignment crate's check), with the pairs written by the output's extension.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use anyhow::Result;
use assignment::generate::{exp_matrix, int_matrix, uniform_matrix};
use assignment::ndarray::Array2;
use assignment::{Sense, Solver, VerifyError, solve};

use super::sparse_input::{self, SparseInput, Values};
use gpu_runtime::{Backend, Exec, Target};

use warpath_io::Format;

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
/// reported), verifies the result (the assignment crate's check) and writes the pairs.
pub(crate) fn run(args: Args, json: bool) -> Result<()> {
    check_options(&args)?;
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
    check_sparse_solver(&args)?;
    let input = load(&args)?;
    let requested = match args.solver.solver(args.seed) {
        Solver::Greedy if args.ties > 1 => Solver::GreedyTies { k: args.ties },
        s => s,
    };
    let solver = input.solver_for(requested, sense);
    let (exec, backend) = placement(&input, solver, args.backend)?;
    let (a, wall, cpu) = solve_repeated(&input, solver, sense, exec, args.repeat, json)?;
    let check = input.verify(&a, solver, sense);
    if let Some(o) = &out {
        write_pairs(o, &a)?;
    }
    let outcome = Outcome {
        requested,
        solver,
        backend,
        wall,
        cpu,
        a,
        check,
    };
    if json {
        print_json(&args, &input, sense, &outcome);
    } else {
        print_text(&args, &input, &outcome);
    }
    if let Err(e) = outcome.check {
        return Err(unverified(format!("verification failed: {e}")));
    }
    Ok(())
}

/// The checks of the options that need no input: the backend, `--ties`.
fn check_options(args: &Args) -> Result<()> {
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
    Ok(())
}

/// `--sparse` takes the sparse solver (`auto`, `sparse`) or the auction only.
fn check_sparse_solver(args: &Args) -> Result<()> {
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
    Ok(())
}

/// The cost matrix: the file (sparse kept sparse with `--sparse`, else made dense), or the
/// generated matrix.
fn load(args: &Args) -> Result<Input> {
    let sparse_file = args
        .file
        .as_deref()
        .is_some_and(sparse_input::is_sparse_file);
    Ok(match (&args.file, args.generate) {
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
        (None, Some(n)) => Input::Dense(generate_dense(args, n)?, None),
        (None, None) => return Err(usage("give a FILE or --generate N")),
    })
}

/// The `--generate N` dense matrix, refused when it and the solvers' working copies would
/// not fit (greedy sorts every entry).
fn generate_dense(args: &Args, n: usize) -> Result<Dense> {
    let cols = args.cols.unwrap_or(n);
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
    Ok(match args.dist {
        Dist::Exp => Dense::F64(exp_matrix(n, cols, args.seed)),
        Dist::Uniform => Dense::F64(uniform_matrix(n, cols, args.seed)),
        Dist::Int => Dense::I64(int_matrix(n, cols, args.max, args.seed)),
    })
}

/// Where the solver runs, resolved here (as the library would) so that the report says where
/// the auction ran.
fn placement(input: &Input, solver: Solver, backend: Exec) -> Result<(Exec, Backend)> {
    let (rows, cols) = input.shape();
    Ok(match solver.gpu_work(rows, cols, input.nnz()) {
        Some((size, threshold)) => match backend.resolve(size, threshold)? {
            Target::Cpu => (Exec::Cpu, Backend::Cpu),
            Target::Cuda(_) => (Exec::Cuda, Backend::Cuda),
        },
        None => (Exec::Cpu, Backend::Cpu),
    })
}

/// Solves `repeat` times (at least once) under a progress bar (repeated runs, or the rows
/// matched of a long sparse solve); returns the last result and the fastest run's wall and
/// CPU times.
fn solve_repeated(
    input: &Input,
    solver: Solver,
    sense: Sense,
    exec: Exec,
    repeat: usize,
    json: bool,
) -> Result<(assignment::Assignment, Duration, Option<Duration>)> {
    let (rows, cols) = input.shape();
    let sparse_bar = matches!(input, Input::Sparse(m) if m.rows.min(m.cols) >= 100_000);
    let bar = if sparse_bar && repeat < 2 {
        progress(rows.min(cols) as u64, "lap --sparse rows matched", json)
    } else {
        progress(
            repeat.max(1) as u64,
            "lap",
            json || (repeat < 2 && rows.max(cols) < 2000),
        )
    };
    let mut best: Option<(Duration, Option<Duration>)> = None;
    let mut result = None;
    for _ in 0..repeat.max(1) {
        let cpu0 = thread_cpu_time();
        let t = Instant::now();
        let a = input.solve(solver, sense, exec, |p| {
            if sparse_bar {
                bar.set_position(p.matched as u64);
            }
        })?;
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
    Ok((result.expect("at least one run"), wall, cpu))
}

/// Writes the pairs as `row col` rows (0-based, the header `row,col` in a CSV).
fn write_pairs(o: &warpath_io::Output, a: &assignment::Assignment) -> Result<()> {
    let (r, c) = a.pairs();
    let flat: Vec<i64> = r
        .iter()
        .zip(&c)
        .flat_map(|(&i, &j)| [i as i64, j as i64])
        .collect();
    let header = ["row".to_owned(), "col".to_owned()];
    o.write_array(&flat, Some(2), Some(&header))?;
    Ok(())
}

/// What a run found, for the report.
struct Outcome {
    /// The solver asked for.
    requested: Solver,
    /// The solver that ran.
    solver: Solver,
    backend: Backend,
    /// The fastest run's wall time and CPU time.
    wall: Duration,
    cpu: Option<Duration>,
    /// The result and its check.
    a: assignment::Assignment,
    check: Result<(), VerifyError>,
}

/// The `--json` report.
fn print_json(args: &Args, input: &Input, sense: Sense, o: &Outcome) {
    let (rows, cols) = input.shape();
    let header = match input {
        Input::Dense(_, h) => h.clone(),
        Input::Sparse(_) => None,
    };
    crate::cli_io::print_json!({
        "n": rows,
        "cols": cols,
        "solver": o.requested.name(),
        "chosen": o.solver.name(),
        "sparse": matches!(input, Input::Sparse(_)),
        "nnz": input.nnz(),
        "elements": input.dtype(),
        "arithmetic": input.arithmetic(o.solver, sense),
        "ties": (args.solver == SolverArg::Greedy).then_some(args.ties),
        "sense": if args.maximize { "max" } else { "min" },
        "backend": o.backend,
        "seconds": o.wall.as_secs_f64(),
        "cpu_seconds": o.cpu.map(|c| c.as_secs_f64()),
        "repeat": args.repeat.max(1),
        "cost": o.a.cost,
        "verified": o.check.is_ok(),
        "check": o.check.as_ref().err().map_or_else(|| "ok".into(), |e| e.to_string()),
        "rows": o.a.pairs().0,
        "cols_assigned": o.a.pairs().1,
        "header": header,
    });
}

/// The text report: the pairs with `--pairs`, the file's header, then one summary line.
fn print_text(args: &Args, input: &Input, o: &Outcome) {
    if args.pairs {
        let (r, c) = o.a.pairs();
        for (i, j) in r.iter().zip(&c) {
            println!("{i} -> {j}  ({})", input.at(*i, *j));
        }
    }
    if let (Input::Dense(_, Some(h)), Some(path)) = (input, &args.file) {
        let info = InputInfo {
            source: path.display().to_string(),
            header: Some(h.clone()),
        };
        println!("lap: {}", info.describe());
    }
    let ties = match o.solver {
        Solver::GreedyTies { k } => format!(" (ties {k})"),
        _ => String::new(),
    };
    let picked = if o.requested == Solver::Auto {
        format!("auto: {}", o.solver.name())
    } else {
        o.solver.name().to_owned()
    };
    let (rows, cols) = input.shape();
    let elements = input.dtype();
    let what = match input {
        Input::Sparse(m) => format!("{rows} x {cols} sparse ({} entries, {elements})", m.nnz()),
        Input::Dense(..) => format!("{rows} x {cols} ({elements})"),
    };
    println!(
        "lap: {what}, {picked}{ties}, {} on {}: cost {} in {}{}, {}",
        if args.maximize { "max" } else { "min" },
        o.backend,
        o.a.cost,
        format_seconds(o.wall.as_secs_f64()),
        o.cpu
            .map(|c| format!(" (cpu {})", format_seconds(c.as_secs_f64())))
            .unwrap_or_default(),
        match &o.check {
            Ok(()) => "verified".to_string(),
            Err(e) => format!("NOT verified: {e}"),
        }
    );
}

/// `Csr::new` over the sparse input's arrays with `$c` bound to the view in `$body`: the
/// body's value, or the error of an invalid matrix.
macro_rules! with_csr {
    ($m:expr, |$c:ident| $body:expr) => {
        match &$m.values {
            Values::F64(v) => with_csr!(@view $m, v, |$c| $body),
            Values::I64(v) => with_csr!(@view $m, v, |$c| $body),
        }
    };
    (@view $m:expr, $v:ident, |$c:ident| $body:expr) => {
        assignment::sparse::Csr::new($m.rows, $m.cols, &$m.indptr[..], &$m.indices[..], &$v[..])
            .map(|$c| $body)
    };
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

    /// The solver that runs for `requested`: the sparse solver (or the auction) on sparse
    /// input, [`assignment::choose`]'s pick for `auto` on dense input.
    fn solver_for(&self, requested: Solver, sense: Sense) -> Solver {
        match (self, requested) {
            (Input::Sparse(_), Solver::Auction) => Solver::Auction,
            (Input::Sparse(_), _) => Solver::Sparse,
            (Input::Dense(m, _), Solver::Auto) => m.choose(sense),
            (_, s) => s,
        }
    }

    /// The arithmetic the solver works in, for the report.
    fn arithmetic(&self, solver: Solver, sense: Sense) -> &'static str {
        match (self, solver) {
            (Input::Dense(m, _), Solver::JonkerVolgenant) if m.integer_arithmetic(sense) => "i64",
            (Input::Sparse(m), _) if m.integer_arithmetic() => "i64",
            _ => "f64",
        }
    }

    /// Solves with `solver` (the sparse solver reports rows matched to `on`).
    fn solve(
        &self,
        solver: Solver,
        sense: Sense,
        exec: Exec,
        mut on: impl FnMut(assignment::sparse::Progress),
    ) -> Result<assignment::Assignment> {
        use assignment::sparse::{auction, min_weight_full_matching_with_progress};
        Ok(match self {
            Input::Dense(m, _) => m.solve(solver, sense, exec)?,
            Input::Sparse(m) if solver == Solver::Auction => {
                with_csr!(m, |c| auction(&c, sense, exec))??
            }
            Input::Sparse(m) => with_csr!(m, |c| min_weight_full_matching_with_progress(
                &c, sense, &mut on
            ))??,
        })
    }

    /// The assignment crate's independent check of `a` ([`assignment::verify`],
    /// [`assignment::sparse::verify`]).
    fn verify(
        &self,
        a: &assignment::Assignment,
        solver: Solver,
        sense: Sense,
    ) -> Result<(), VerifyError> {
        match self {
            Input::Dense(m, _) => {
                with_dense!(m, |m| assignment::verify(m.view(), a, solver, sense))
            }
            Input::Sparse(m) => with_csr!(m, |c| assignment::sparse::verify(&c, a, solver, sense))
                .unwrap_or_else(|e| Err(VerifyError::Reference(e))),
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
