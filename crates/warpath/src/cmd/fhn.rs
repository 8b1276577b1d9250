//! `warpath fhn`: the spatial FitzHugh–Nagumo equation (explicit, adaptive and implicit
//! schemes), its built-in scenarios and experiments.

use std::path::{Path, PathBuf};
use std::time::Instant;

use anyhow::Result;
use gpu_runtime::{Backend, Exec};
use pde::tridiag::{self, TridiagSolver};
use pde::{
    AdaptiveOptions, AdaptiveStats, FhnParams, FhnState, ImplicitVariant, NewtonOptions, PdeError,
    Scenario, Scheme, SnapshotSink, SnapshotWriter, StreamedRun, explicit_run, explicit_run_batch,
    nagumo_speed, simulate, simulate_streamed,
};

use crate::cli_io::check_backend;
use crate::fail::{unverified, usage};
use crate::report::{DemoRow, DemoSize, Rows, progress};

/// Time-stepping scheme.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub(crate) enum SchemeArg {
    /// Forward Euler, central differences (dt limited by the stability limit).
    Explicit,
    /// Forward Euler on an adaptive non-uniform grid.
    Adaptive,
    /// Crank–Nicolson with Newton's method.
    Implicit,
}

/// Tridiagonal solver of the implicit scheme.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub(crate) enum SolverArg {
    /// Thomas algorithm.
    Thomas,
    /// Cyclic reduction (on the GPU: the CR–PCR hybrid for n <= 1024, PCR–Thomas above).
    Cr,
    /// Parallel cyclic reduction (on the GPU: shared-memory PCR for n <= 1024, PCR–Thomas above).
    Pcr,
}

/// Initial / boundary set-up.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub(crate) enum ScenarioArg {
    /// Gaussian impulse in the middle: two pulses travel apart.
    Gaussian,
    /// v(L, t) = 1 for 5 time units of every 100 (a periodic stimulus): one pulse per
    /// stimulus travels left, a train one wavelength apart.
    PulseTrain,
    /// v(L, t) = 1 at all times (the seed's Fig. 1): with the seed's parameters a train of
    /// pulses travels left, one about every 110 time units.
    Constant,
    /// Nagumo front (eps = 0), verified against its exact speed (1 - 2a)/sqrt 2.
    Front,
}

/// How no-flux ends are discretised.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub(crate) enum EndsArg {
    /// A mirrored ghost node, v_{-1} = v_1 (second order).
    Mirror,
    /// The seed's v_0 = v_1: the end node copies its neighbour (first order; explicit scheme
    /// on the CPU only).
    Copy,
}

/// Which implicit scheme runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub(crate) enum ImplicitVariantArg {
    /// Ours: Crank-Nicolson with the trapezoidal w and the exact Jacobian (CPU and GPU).
    Ours,
    /// The seed's: leapfrog w, ends v_0 = v_1, Jacobian end rows (1, 1) as printed (CPU
    /// only; for redrawing the seed's Figs 9-12).
    Seed,
}

/// The explicit scheme's stability limit.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub(crate) enum LimitArg {
    /// dt <= 2 / (4/dx^2 + K): diffusion and the reaction's stiffness K.
    Full,
    /// The seed's 2 dt <= dx^2 (diffusion alone).
    Seed,
}

/// Arguments of `warpath fhn`.
#[derive(clap::Args)]
#[command(after_help = "\
Defaults are the library's (pde::FhnParams::default(), the seed's set-up); a flag a scheme or
scenario does not use is an error, not ignored. The seed's experiments (Figs 1-14: orders,
CPU vs GPU, adaptive grid, stability, Newton, solvers) are `warpath reproduce --only fhn-...`.

Examples:
  warpath fhn --scenario pulse-train --plot train.png --snapshots out/
  warpath fhn --scenario constant --ends copy --t-end 306.19 --plot fig1.svg   # the seed's Fig. 1
  warpath fhn --dt 0.12 --stability-limit seed    # the seed's 2 dt <= dx^2 instead of ours
  warpath fhn --scheme implicit --solver pcr --dt 0.25
  warpath fhn --scheme implicit --implicit-variant seed --dt 0.25   # the seed's own scheme
  warpath fhn --n 4e6 --length 1e6 --t-end 10 --snapshot-count 4 --json")]
pub(crate) struct Args {
    /// Time-stepping scheme.
    #[arg(long, value_enum, default_value_t = SchemeArg::Explicit)]
    scheme: SchemeArg,
    /// Tridiagonal solver of the implicit scheme (only with --scheme implicit) [default:
    /// thomas].
    #[arg(long, value_enum)]
    solver: Option<SolverArg>,
    /// Implicit scheme variant (only with --scheme implicit): ours, or the seed's own
    /// (leapfrog w, ends v_0 = v_1; CPU only) [default: ours].
    #[arg(long, value_enum)]
    implicit_variant: Option<ImplicitVariantArg>,
    /// Scenario.
    #[arg(long, value_enum, default_value_t = ScenarioArg::Gaussian)]
    scenario: ScenarioArg,
    /// How no-flux ends are discretised.
    #[arg(long, value_enum, default_value_t = EndsArg::Mirror)]
    ends: EndsArg,
    /// The stability limit the explicit and adaptive schemes check --dt against.
    #[arg(long, value_enum, default_value_t = LimitArg::Full)]
    stability_limit: LimitArg,
    /// Grid nodes, including both ends (1e6, 4M) [default: the library's].
    #[arg(long, value_parser = crate::cli_io::count, conflicts_with = "dx", help = default_help("Grid nodes, including both ends (4M, 1e6)", FhnParams::default().n as f64))]
    n: Option<usize>,
    /// Grid spacing: --length / --dx cells (must be a whole number); instead of --n.
    #[arg(long)]
    dx: Option<f64>,
    /// Time step (above the explicit stability limit is an error that states the limit).
    #[arg(long, help = default_help("Time step (above the explicit stability limit is an error that states the limit)", FhnParams::default().dt))]
    dt: Option<f64>,
    /// End time.
    #[arg(long, help = default_help("End time", FhnParams::default().t_end))]
    t_end: Option<f64>,
    /// Domain length L.
    #[arg(long, help = default_help("Domain length L", FhnParams::default().length))]
    length: Option<f64>,
    /// Threshold a.
    #[arg(long, help = default_help("Threshold a", FhnParams::default().a))]
    a: Option<f64>,
    /// Recovery rate eps (not with --scenario front, which is the Nagumo equation, eps = 0).
    #[arg(long, help = default_help("Recovery rate eps (not with --scenario front: the Nagumo equation has eps = 0)", FhnParams::default().eps))]
    eps: Option<f64>,
    /// Recovery coupling gamma (not with --scenario front).
    #[arg(long, help = default_help("Recovery coupling gamma (not with --scenario front)", FhnParams::default().gamma))]
    gamma: Option<f64>,
    /// Where to run: auto, cpu or cuda (the adaptive scheme is CPU only).
    #[arg(long, default_value = "auto")]
    backend: Exec,
    /// Plot v and w against x here (.svg or .png) and the space-time heat map of v (viridis,
    /// with a colour bar) beside it as NAME.heatmap.svg / .png.
    #[arg(long, value_name = "FILE")]
    plot: Option<PathBuf>,
    /// Write snapshots (snapshots.csv, x.npy, t.npy, v.npy, w.npy) into this directory, each
    /// as it is taken (none is held in memory).
    #[arg(long, value_name = "DIR")]
    snapshots: Option<PathBuf>,
    /// Number of snapshots over the run (at most one per step; at most 2^27 values of v in
    /// all). The front / pulse speed is measured at the same times, also without --snapshots
    /// or --plot.
    #[arg(long, default_value_t = 100, value_parser = crate::cli_io::count)]
    snapshot_count: usize,
    /// Run even when the estimated time is above a day.
    #[arg(long)]
    force: bool,
}

/// `TEXT [default: VALUE]` for options whose default is the library's.
fn default_help(text: &str, value: f64) -> String {
    format!("{text} [default: {value}]")
}

/// The parameters: the library's defaults with the flags given; every flag checked.
fn params(args: &Args) -> Result<FhnParams> {
    let d = FhnParams::default();
    let scenario = scenario(args.scenario);
    if scenario == Scenario::Front {
        for (flag, given) in [
            ("--eps", args.eps.is_some()),
            ("--gamma", args.gamma.is_some()),
        ] {
            if given {
                return Err(usage(format!(
                    "{flag} cannot be used with --scenario front: the Nagumo front has eps = 0 \
                     and w = 0 (use --scenario gaussian or pulse-train)"
                )));
            }
        }
    }
    let mut p = FhnParams {
        a: args.a.unwrap_or(d.a),
        eps: args.eps.unwrap_or(d.eps),
        gamma: args.gamma.unwrap_or(d.gamma),
        length: args.length.unwrap_or(d.length),
        n: args.n.unwrap_or(d.n),
        dt: args.dt.unwrap_or(d.dt),
        t_end: args.t_end.unwrap_or(d.t_end),
        limit_rule: match args.stability_limit {
            LimitArg::Full => pde::LimitRule::WithReaction,
            LimitArg::Seed => pde::LimitRule::DiffusionOnly,
        },
        ..d
    };
    let seed_variant = args.implicit_variant == Some(ImplicitVariantArg::Seed);
    if args.ends == EndsArg::Copy {
        if args.scheme != SchemeArg::Explicit && !seed_variant {
            return Err(usage(format!(
                "--ends copy applies to --scheme explicit only (the {} scheme discretises \
                 no-flux ends with a mirrored ghost node)",
                format!("{:?}", args.scheme).to_lowercase()
            )));
        }
        (p.left, p.right) = (pde::Boundary::Copy, pde::Boundary::Copy);
    }
    if let Some(dx) = args.dx {
        if !(dx.is_finite() && dx > 0.0) {
            return Err(usage(format!(
                "--dx {dx}: the spacing must be finite and > 0"
            )));
        }
        let cells = p.length / dx;
        if cells < 2.0 - 1e-9 {
            return Err(usage(format!(
                "--dx {dx}: --length {} holds {cells:.3} cells; at least 2 are needed (3 nodes)",
                p.length
            )));
        }
        if (cells - cells.round()).abs() > 1e-9 * cells.max(1.0) {
            return Err(usage(format!(
                "--dx {dx} does not divide --length {} ({cells:.4} cells): use --dx {} ({} cells) \
                 or --n",
                p.length,
                p.length / cells.round(),
                cells.round()
            )));
        }
        p = p.with_dx(dx);
    }
    Ok(p)
}

fn scenario(s: ScenarioArg) -> Scenario {
    match s {
        ScenarioArg::Gaussian => Scenario::Gaussian,
        ScenarioArg::PulseTrain => Scenario::PulseTrain,
        ScenarioArg::Constant => Scenario::Constant,
        ScenarioArg::Front => Scenario::Front,
    }
}

fn solver(s: SolverArg) -> TridiagSolver {
    match s {
        SolverArg::Thomas => TridiagSolver::Thomas,
        SolverArg::Cr => TridiagSolver::CyclicReduction,
        SolverArg::Pcr => TridiagSolver::Pcr,
    }
}

fn rmse(a: &[f64], b: &[f64]) -> f64 {
    (a.iter().zip(b).map(|(x, y)| (x - y) * (x - y)).sum::<f64>() / a.len().max(1) as f64).sqrt()
}

/// Conservative speeds for the time estimate, in cell updates per second: explicit, adaptive,
/// implicit (per Newton iteration, about 3 per step).
const FHN_RATES: [f64; 3] = [1e8, 2e7, 5e6];

/// Checks the flags that only some schemes take (`--solver`, `--implicit-variant`) and that
/// the backend can run the scheme; returns whether the seed's implicit variant was asked for.
fn check_flags(args: &Args) -> Result<bool> {
    if let (Some(s), false) = (args.solver, args.scheme == SchemeArg::Implicit) {
        return Err(usage(format!(
            "--solver {} applies to --scheme implicit only (the {} scheme solves no tridiagonal \
             systems)",
            format!("{s:?}").to_lowercase(),
            format!("{:?}", args.scheme).to_lowercase()
        )));
    }
    if let (Some(v), false) = (args.implicit_variant, args.scheme == SchemeArg::Implicit) {
        return Err(usage(format!(
            "--implicit-variant {} applies to --scheme implicit only",
            format!("{v:?}").to_lowercase()
        )));
    }
    let seed_variant = args.implicit_variant == Some(ImplicitVariantArg::Seed);
    check_backend(
        args.backend,
        if seed_variant {
            "the seed's implicit variant (--implicit-variant seed)"
        } else {
            "the adaptive scheme"
        },
        args.scheme != SchemeArg::Adaptive && !seed_variant,
    )?;
    Ok(seed_variant)
}

/// The scheme of `--scheme`, with `--solver` and the implicit variant for the implicit one.
fn scheme(args: &Args, seed_variant: bool) -> Scheme {
    match args.scheme {
        SchemeArg::Explicit => Scheme::Explicit,
        SchemeArg::Adaptive => Scheme::Adaptive(AdaptiveOptions::default()),
        SchemeArg::Implicit => Scheme::Implicit(NewtonOptions {
            solver: solver(args.solver.unwrap_or(SolverArg::Thomas)),
            variant: if seed_variant {
                ImplicitVariant::SeedLeapfrog
            } else {
                ImplicitVariant::CrankNicolson
            },
            ..NewtonOptions::default()
        }),
    }
}

/// Checks, before the run, that the grid fits in memory and that the run should end within
/// a day (unless `--force`).
fn check_resources(args: &Args, pp: &FhnParams) -> Result<()> {
    // Memory: the state and the scheme's work arrays per node (the explicit scheme: the state
    // and 3% of halo copies); snapshots are streamed to --snapshots, and --plot keeps whole
    // ones only of grids up to PLOT_WHOLE nodes (at most 2^27 values of v and as many of w),
    // bins of larger ones (a few KiB each).
    let per_node = match args.scheme {
        // --ends copy steps with the reference loop, which keeps a second v, w pair
        SchemeArg::Explicit if args.ends == EndsArg::Copy => 32.0,
        SchemeArg::Explicit => 17.0,
        SchemeArg::Adaptive => 96.0,
        SchemeArg::Implicit => 160.0,
    };
    let snaps = (args.snapshot_count as u64 + 1)
        .min(pp.steps() + 1)
        .min(((1u64 << 27) / pp.n.max(1) as u64).max(1) + 1);
    let kept = if args.plot.is_some() && pp.n <= PLOT_WHOLE {
        16.0 * snaps as f64
    } else {
        0.0
    };
    warpath_io::check_memory(
        &format!("--n {}", pp.n),
        pp.n as u64,
        per_node + kept,
        0,
        "nodes",
    )?;
    let rate = FHN_RATES[args.scheme as usize];
    warpath_io::check_duration(
        &format!("{} steps on {} nodes", pp.steps(), pp.n),
        pp.steps() as f64 * pp.n as f64 / rate,
        &format!("at about {rate:.0e} cell updates per second"),
        args.force,
    )?;
    Ok(())
}

/// Checks the outputs before the run: `--plot` (an .svg or .png file, and its heat map
/// beside it, both writable) and `--snapshots` (a directory, if it exists). Returns the
/// profile plot's path and the heat map's.
fn check_outputs(args: &Args) -> Result<Option<(PathBuf, PathBuf)>> {
    let plot_paths = match &args.plot {
        Some(out) => {
            if !warpath_io::plot::is_plot_path(out) {
                return Err(usage(format!(
                    "--plot {}: plots are .svg or .png files",
                    out.display()
                )));
            }
            let heat = heatmap_path(out);
            warpath_io::check_writable(out)?;
            warpath_io::check_writable(&heat)?;
            Some((out.clone(), heat))
        }
        None => None,
    };
    if let Some(dir) = &args.snapshots
        && dir.exists()
        && !dir.is_dir()
    {
        return Err(usage(format!(
            "--snapshots {}: not a directory",
            dir.display()
        )));
    }
    Ok(plot_paths)
}

/// The adaptive scheme's figures, with its RMSE against a uniform run on its finest grid
/// (`last` is the adaptive run's final v).
fn compare_adaptive(
    sc: Scenario,
    pp: &FhnParams,
    last: &[f64],
    st: &AdaptiveStats,
) -> Result<serde_json::Value> {
    let mut u = sc.initial_state(pp);
    explicit_run(pp, &mut u, pp.steps(), Exec::Cpu)?;
    let err = rmse(last, &u.v);
    Ok(serde_json::json!({
        "uniform_nodes": st.uniform_nodes,
        "mean_nodes": st.mean_nodes,
        "min_nodes": st.min_nodes,
        "max_nodes": st.max_nodes,
        "regrids": st.regrids,
        "rmse_vs_uniform": err,
    }))
}

/// What a finished `warpath fhn` run reports.
struct RunFacts<'a> {
    sc: Scenario,
    /// The parameters that ran (the scenario's).
    pp: &'a FhnParams,
    sim: &'a StreamedRun,
    seconds: f64,
    /// The exact front speed, for the front scenario.
    exact: Option<f64>,
    /// The adaptive scheme's figures (`null` for the other schemes).
    adaptive: &'a serde_json::Value,
    /// The files written.
    files: &'a [String],
    verified: bool,
}

/// Prints the text report of a run: grid, steps, speed against the exact one, the scheme's
/// figures, the files written and the verdict.
fn print_text(args: &Args, facts: &RunFacts<'_>) {
    let RunFacts {
        sc,
        pp,
        sim,
        seconds,
        exact,
        adaptive,
        files,
        verified,
    } = *facts;
    println!(
        "fhn {} ({:?}): n = {}, dx = {}, dt = {}, {} steps to t = {:.3} on {} in {:.3} s",
        sc.name(),
        args.scheme,
        pp.n,
        pp.dx(),
        pp.dt,
        sim.steps,
        sim.state.t,
        sim.backend,
        seconds
    );
    println!(
        "  {:.3e} cell updates per second",
        pp.n as f64 * sim.steps as f64 / seconds
    );
    match (sim.speed, exact) {
        (Some(s), Some(c)) => println!(
            "  front speed {s:.5}, exact (1 - 2a)/sqrt 2 = {c:.5}, relative error {:.3}% (tolerance 2%)",
            100.0 * (s - c).abs() / c
        ),
        (Some(s), None) => println!("  measured pulse speed {s:.5}"),
        (None, _) => println!("  no front / pulse to track"),
    }
    if let Some(st) = sim.implicit {
        println!(
            "  Newton: {:.2} iterations per step (max {})",
            st.mean_iterations(),
            st.max_iterations_per_step
        );
    }
    if !adaptive.is_null() {
        println!(
            "  adaptive grid: {:.1} nodes per step on average (min {}, max {}) of {} uniform; RMSE vs uniform run {:.3e}",
            adaptive["mean_nodes"].as_f64().unwrap_or(0.0),
            adaptive["min_nodes"],
            adaptive["max_nodes"],
            adaptive["uniform_nodes"],
            adaptive["rmse_vs_uniform"].as_f64().unwrap_or(0.0)
        );
    }
    for f in files {
        println!("  wrote {f}");
    }
    println!("  verified: {}", if verified { "yes" } else { "NO" });
}

/// `warpath fhn`: checks the arguments, runs the scenario (streaming snapshots and plots),
/// verifies the result (bounded, and the front's speed within 2% of the exact one) and
/// prints the report.
pub(crate) fn run(args: Args, json: bool) -> Result<()> {
    let seed_variant = check_flags(&args)?;
    let p = params(&args)?;
    let sc = scenario(args.scenario);
    let scheme = scheme(&args, seed_variant);
    let pp = sc.params(p);
    pp.validate()?;
    check_resources(&args, &pp)?;
    let plot_paths = check_outputs(&args)?;
    let bar = progress(pp.steps(), &format!("fhn {}", sc.name()), json);
    let mut outputs = Outputs {
        files: args.snapshots.as_deref().map(SnapshotWriter::new),
        plot: plot_paths.as_ref().map(|_| PlotKeeper::default()),
    };
    let started = Instant::now();
    let sim = simulate_streamed(
        sc,
        p,
        sc.stimulus(),
        scheme,
        args.backend,
        args.snapshot_count,
        &mut outputs,
        &mut |done, _| bar.set_position(done),
    )?;
    let seconds = started.elapsed().as_secs_f64();
    bar.finish_and_clear();
    let last = &sim.state.v;
    let bounded = last.iter().all(|v| v.is_finite() && v.abs() < 2.0);
    let exact = (sc == Scenario::Front).then(|| nagumo_speed(pp.a));
    let speed_error = match (sim.speed, exact) {
        (Some(s), Some(c)) => Some((s - c).abs() / c),
        _ => None,
    };
    let verified = bounded && speed_error.is_none_or(|e| e < 0.02);

    let adaptive = match (args.scheme, sim.adaptive) {
        (SchemeArg::Adaptive, Some(st)) => compare_adaptive(sc, &pp, last, &st)?,
        _ => serde_json::Value::Null,
    };
    let mut files = Vec::new();
    if let Some(out) = outputs.files {
        for f in out.finish()? {
            files.push(f.display().to_string());
        }
    }
    if let (Some((out, heat)), Some(kept)) = (&plot_paths, &outputs.plot) {
        kept.plot_profiles(out, 6)?;
        kept.plot_heatmap(heat)?;
        files.push(out.display().to_string());
        files.push(heat.display().to_string());
    }
    let newton = sim.implicit.map(|st| {
        serde_json::json!({
            "variant": if seed_variant { "seed" } else { "ours" },
            "mean_iterations": st.mean_iterations(),
            "max_iterations": st.max_iterations_per_step,
            "total_iterations": st.newton_iterations,
        })
    });
    if json {
        crate::cli_io::print_json!({
            "n": pp.n,
            "backend": sim.backend,
            "seconds": seconds,
            "verified": verified,
            "scenario": sc.name(),
            "scheme": format!("{:?}", args.scheme).to_lowercase(),
            "dx": pp.dx(),
            "dt": pp.dt,
            "steps": sim.steps,
            "cell_updates_per_second": pp.n as f64 * sim.steps as f64 / seconds,
            "snapshots": sim.snapshots,
            "t_end": sim.state.t,
            "speed": sim.speed,
            "exact_speed": exact,
            "speed_relative_error": speed_error,
            "newton": newton,
            "adaptive": adaptive,
            "files": files,
        });
    } else {
        let facts = RunFacts {
            sc,
            pp: &pp,
            sim: &sim,
            seconds,
            exact,
            adaptive: &adaptive,
            files: &files,
            verified,
        };
        print_text(&args, &facts);
    }
    if !verified {
        return Err(unverified("fhn run failed verification"));
    }
    Ok(())
}

/// The snapshot sinks of a run: the files of --snapshots and what --plot keeps.
struct Outputs {
    files: Option<SnapshotWriter>,
    plot: Option<PlotKeeper>,
}

impl SnapshotSink for Outputs {
    fn begin(&mut self, params: &FhnParams, count: usize) -> Result<(), PdeError> {
        if let Some(f) = &mut self.files {
            f.begin(params, count)?;
        }
        if let Some(k) = &mut self.plot {
            k.begin(params, count)?;
        }
        Ok(())
    }

    fn snapshot(&mut self, t: f64, v: &[f64], w: &[f64]) -> Result<(), PdeError> {
        if let Some(f) = &mut self.files {
            f.snapshot(t, v, w)?;
        }
        if let Some(k) = &mut self.plot {
            k.snapshot(t, v, w)?;
        }
        Ok(())
    }
}

/// Grids up to this many nodes are kept whole for --plot; larger ones in `PLOT_BINS` bins.
const PLOT_WHOLE: usize = 2 * PLOT_BINS;

/// Bins of the profile plot of a large grid: each keeps the minimum and the maximum of v (and
/// of w) over its nodes, drawn at its first and last node in the order they occur, so that a
/// pulse narrower than a bin still shows as a spike (min/max decimation).
const PLOT_BINS: usize = 2048;

/// Bins of the heat map of a large grid (one column each, the maximum of v over the bin; one
/// column more closes the last bin): the heat map draws at most 400 columns.
const HEAT_BINS: usize = 399;

/// What --plot needs of each snapshot: the whole rows of grids up to `PLOT_WHOLE` nodes,
/// else `PLOT_BINS` min/max pairs and `HEAT_BINS` bin maxima (a few KiB per snapshot).
#[derive(Default)]
struct PlotKeeper {
    n: usize,
    dx: f64,
    /// Nodes per bin of the profiles and of the heat map (1 and 1 for whole rows).
    bin: usize,
    heat_bin: usize,
    /// Positions of the profile points and of the heat map columns.
    x: Vec<f64>,
    heat_x: Vec<f64>,
    times: Vec<f64>,
    v: Vec<Vec<f64>>,
    w: Vec<Vec<f64>>,
    heat: Vec<Vec<f64>>,
}

/// Per bin of `bin` nodes, its minimum and maximum in the order they occur.
fn min_max_bins(values: &[f64], bin: usize) -> Vec<f64> {
    let mut out = Vec::with_capacity(2 * values.len().div_ceil(bin));
    for chunk in values.chunks(bin) {
        let (mut lo, mut hi) = (0, 0);
        for (i, &v) in chunk.iter().enumerate() {
            if v < chunk[lo] {
                lo = i;
            }
            if v > chunk[hi] {
                hi = i;
            }
        }
        let (a, b) = if lo <= hi { (lo, hi) } else { (hi, lo) };
        out.push(chunk[a]);
        out.push(chunk[b]);
    }
    out
}

impl PlotKeeper {
    fn whole(&self) -> bool {
        self.bin == 1
    }

    fn plot_profiles(&self, path: &Path, curves: usize) -> Result<()> {
        let title = if self.whole() {
            format!(
                "FitzHugh-Nagumo: v (solid) and w (dashed), {} nodes",
                self.n
            )
        } else {
            format!(
                "FitzHugh-Nagumo: v (solid) and w (dashed), {} nodes (min and max of every {})",
                self.n, self.bin
            )
        };
        let figure = warpath_io::plot::Profiles {
            x: &self.x,
            times: &self.times,
            solid: &self.v,
            dashed: &self.w,
            curves,
            title: &title,
            x_label: "x",
            y_label: "v, w",
        };
        warpath_io::plot::render(path, (900, 500), &figure)?;
        Ok(())
    }

    fn plot_heatmap(&self, path: &Path) -> Result<()> {
        let title = if self.whole() {
            "v(x, t)".to_owned()
        } else {
            format!("v(x, t), the maximum of every {} nodes", self.heat_bin)
        };
        let map = warpath_io::plot::Heatmap {
            x: if self.whole() { &self.x } else { &self.heat_x },
            y: &self.times,
            values: if self.whole() { &self.v } else { &self.heat },
            title: &title,
            x_label: "x",
            y_label: "t",
            value_label: "v",
        };
        warpath_io::plot::render(path, (900, 600), &map)?;
        Ok(())
    }
}

impl SnapshotSink for PlotKeeper {
    fn begin(&mut self, params: &FhnParams, count: usize) -> Result<(), PdeError> {
        let (n, dx) = (params.n, params.dx());
        self.n = n;
        self.dx = dx;
        self.times.reserve(count);
        if n <= PLOT_WHOLE {
            self.bin = 1;
            self.heat_bin = 1;
            self.x = params.grid();
            return Ok(());
        }
        self.bin = n.div_ceil(PLOT_BINS);
        self.x = (0..n)
            .step_by(self.bin)
            .flat_map(|s| [s as f64 * dx, ((s + self.bin).min(n) - 1) as f64 * dx])
            .collect();
        self.heat_bin = n.div_ceil(HEAT_BINS);
        self.heat_x = (0..n)
            .step_by(self.heat_bin)
            .map(|s| s as f64 * dx)
            .chain([(n - 1) as f64 * dx])
            .collect();
        Ok(())
    }

    fn snapshot(&mut self, t: f64, v: &[f64], w: &[f64]) -> Result<(), PdeError> {
        self.times.push(t);
        if self.whole() {
            self.v.push(v.to_vec());
            self.w.push(w.to_vec());
            return Ok(());
        }
        self.v.push(min_max_bins(v, self.bin));
        self.w.push(min_max_bins(w, self.bin));
        let mut heat: Vec<f64> = v
            .chunks(self.heat_bin)
            .map(|c| c.iter().copied().fold(f64::NEG_INFINITY, f64::max))
            .collect();
        heat.push(heat.last().copied().unwrap_or(0.0));
        self.heat.push(heat);
        Ok(())
    }
}

/// The heat map beside the profile plot: `OUT.heatmap.svg` (or `.png`, as OUT).
fn heatmap_path(out: &Path) -> PathBuf {
    let ext = out
        .extension()
        .and_then(|e| e.to_str())
        .unwrap_or("svg")
        .to_owned();
    out.with_extension(format!("heatmap.{ext}"))
}

/// Demo rows: the front-speed verification (explicit and implicit), the adaptive grid against
/// a uniform run, a batch of axons (10^4 steps each) and a tridiagonal solve; GPU rows when a
/// GPU is present.
pub(crate) fn demo(size: DemoSize, rows: &mut Rows) {
    let base = FhnParams {
        t_end: 80.0,
        ..FhnParams::default()
    };
    let c = nagumo_speed(base.a);
    for (name, scheme, dt) in [
        ("fhn explicit: Nagumo front speed", Scheme::Explicit, 0.05),
        (
            "fhn implicit (CN+Newton): front speed",
            Scheme::Implicit(NewtonOptions::default()),
            0.25,
        ),
    ] {
        let p = FhnParams { dt, ..base };
        let t = Instant::now();
        rows.push(
            match simulate(Scenario::Front, p, scheme, Exec::Cpu, 40, &mut |_, _| {}) {
                Ok(sim) => {
                    let s = sim.speed.unwrap_or(f64::NAN);
                    let err = (s - c).abs() / c;
                    DemoRow::new(name, p.n as u64, sim.backend, t.elapsed(), err < 0.02).with_note(
                        format!("speed {s:.4} vs exact {c:.4} ({:.2}%, tol 2%)", 100.0 * err),
                    )
                }
                Err(e) => DemoRow::failed(name, p.n as u64, e),
            },
        );
    }
    // Adaptive against uniform.
    {
        let name = "fhn adaptive grid vs uniform";
        let p = FhnParams {
            t_end: 40.0,
            ..FhnParams::default()
        };
        let t = Instant::now();
        let mut a = Scenario::Gaussian.initial_state(&p);
        let mut u = a.clone();
        let r = pde::adaptive_run(&p, &mut a, p.steps(), &AdaptiveOptions::default());
        let elapsed = t.elapsed();
        rows.push(match (r, explicit_run(&p, &mut u, p.steps(), Exec::Cpu)) {
            (Ok(st), Ok(_)) => {
                let e = rmse(&a.v, &u.v);
                DemoRow::new(name, p.n as u64, Backend::Cpu, elapsed, e < 0.02).with_note(format!(
                    "{:.0} of {} nodes per step, RMSE vs uniform {e:.2e}",
                    st.mean_nodes, st.uniform_nodes
                ))
            }
            (Err(e), _) | (_, Err(e)) => DemoRow::failed(name, p.n as u64, e),
        });
    }
    // A batch of axons, 10^4 steps each (the seed's N = 401), against single runs.
    let batch = match size {
        DemoSize::Small => 8,
        DemoSize::Large => 1024,
    };
    let p = FhnParams::default();
    let steps = 10_000;
    let mut v0 = Vec::with_capacity(batch * p.n);
    for b in 0..batch {
        let mut s = Scenario::Gaussian.initial_state(&p);
        for v in &mut s.v {
            *v *= 0.5 + b as f64 / batch as f64;
        }
        v0.extend_from_slice(&s.v);
    }
    let check = |v: &[f64], w: &[f64], tol: f64| -> bool {
        [0, batch - 1].iter().all(|&b| {
            let mut s = FhnState {
                v: v0[b * p.n..(b + 1) * p.n].to_vec(),
                w: vec![0.0; p.n],
                t: 0.0,
            };
            explicit_run(&p, &mut s, steps, Exec::Cpu).is_ok()
                && s.v
                    .iter()
                    .zip(&v[b * p.n..])
                    .chain(s.w.iter().zip(&w[b * p.n..]))
                    .all(|(x, y)| (x - y).abs() <= tol)
        })
    };
    let mut execs = vec![Exec::Cpu];
    if gpu_runtime::gpu().is_ok() {
        execs.push(Exec::Cuda);
    }
    for exec in execs {
        let name = "fhn explicit batch (10^4 steps/axon)";
        let (mut v, mut w) = (v0.clone(), vec![0.0; v0.len()]);
        let t = Instant::now();
        rows.push(
            match explicit_run_batch(&p, &mut v, &mut w, batch, steps, exec) {
                Ok(b) => {
                    let el = t.elapsed();
                    let tol = if b == Backend::Cuda { 1e-9 } else { 0.0 };
                    DemoRow::new(name, (batch * p.n) as u64, b, el, check(&v, &w, tol)).with_note(
                        format!(
                            "{batch} axons x 401 nodes, {:.2e} cell updates/s",
                            (batch * p.n) as f64 * steps as f64 / el.as_secs_f64()
                        ),
                    )
                }
                Err(e) => DemoRow::failed(name, (batch * p.n) as u64, e),
            },
        );
    }
    // Tridiagonal: cyclic reduction (and GPU PCR) against Thomas.
    let n = match size {
        DemoSize::Small => 1 << 18,
        DemoSize::Large => 1 << 22,
    };
    let a = vec![-1.0f64; n];
    let b: Vec<f64> = (0..n).map(|i| 2.5 + (i % 7) as f64 * 0.1).collect();
    let cc = vec![-1.0f64; n];
    let d: Vec<f64> = (0..n).map(|i| ((i % 13) as f64 - 6.0) * 0.3).collect();
    if let Ok(reference) = tridiag::thomas(&a, &b, &cc, &d) {
        let mut cases = vec![(
            TridiagSolver::CyclicReduction,
            "cyclic reduction",
            Exec::Cpu,
        )];
        if gpu_runtime::gpu().is_ok() {
            cases.push((TridiagSolver::Pcr, "PCR", Exec::Cuda));
        }
        for (solver, label, exec) in cases {
            let name = format!("tridiagonal {label} vs Thomas");
            let t = Instant::now();
            rows.push(match tridiag::solve(&a, &b, &cc, &d, solver, exec) {
                Ok((x, be)) => DemoRow::new(
                    &name,
                    n as u64,
                    be,
                    t.elapsed(),
                    x.iter().zip(&reference).all(|(p, q)| (p - q).abs() < 1e-10),
                ),
                Err(e) => DemoRow::failed(&name, n as u64, e),
            });
        }
    }
}

#[cfg(test)]
mod tests;
