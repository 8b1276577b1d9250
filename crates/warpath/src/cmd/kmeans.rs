//! `warpath kmeans`: k-means on a CSV or `.npy` file or on generated clusters, on one machine
//! (CPU or GPU) or over MPI (`--ranks R`, relaunching from the checkpoint when a rank dies).

use std::path::{Path, PathBuf};
use std::time::Instant;

use anyhow::{Context, Result};
use clustering::cli::FitArgs;
use clustering::data::{generate_blobs, read_npy, write_npy};
use clustering::launch::{
    DistributedReport, MpiLaunch, WorkerJob, WorkerStart, find_worker, run_job,
};
use clustering::{Algorithm, Convergence, Element, Init, KMeans, KMeansResult, predict};
use gpu_runtime::{Backend, Exec};
use ndarray::{Array1, Array2, ArrayView2};

use warpath_io::{Format, Output};

use crate::cli_io::{InputInfo, check_backend, one_stdout, skipped_header};
use crate::fail::{unverified, usage};
use crate::report::{DemoRow, DemoSize, Rows, format_seconds, progress};

/// Arguments of `warpath kmeans`.
#[derive(clap::Args)]
#[command(after_help = "\
Examples:
  warpath kmeans points.csv --k 8 --labels labels.npy --plot clusters.png
  warpath kmeans points.npy --k 4 --weights w.npy --json
  warpath kmeans --generate 1e6 --dim 16 --k 64 --backend cpu")]
pub(crate) struct Args {
    /// Input points (- for standard input): a text table (one point per line; commas, tabs
    /// or spaces; an optional header line names the columns, used as axis labels) or a 2-D
    /// `.npy` array (bool, integers, float32 or float64).
    #[arg(required_unless_present = "generate", conflicts_with = "generate")]
    input: Option<PathBuf>,
    /// Generate N points around planted cluster centres instead of reading a file (1e6, 10k).
    #[arg(long, value_name = "N", value_parser = crate::cli_io::count)]
    generate: Option<usize>,
    /// Dimensions of generated points (only with --generate) [default: 2].
    #[arg(long, value_name = "D")]
    dim: Option<usize>,
    /// Planted clusters of generated points (only with --generate) [default: --k].
    #[arg(long, value_name = "K")]
    clusters: Option<usize>,
    /// Standard deviation of generated points around their centre (only with --generate)
    /// [default: 0.05].
    #[arg(long)]
    sigma: Option<f64>,
    /// Seed of the generator and of the initialisation.
    #[arg(long, default_value_t = 0)]
    seed: u64,
    /// Number of clusters to find.
    #[arg(long, short, default_value_t = 8)]
    k: usize,
    /// The start, the weights and the iteration limit (shared with `kmeans-mpi`).
    #[command(flatten)]
    fit: FitArgs,
    /// Tolerance on the centroid shift, relative to the data's variance (or to the previous
    /// iteration's shift with --convergence previous-shift).
    #[arg(long, default_value_t = 1e-4)]
    tol: f64,
    /// What --tol is relative to: variance (scikit-learn's rule) or previous-shift (the seed's:
    /// stop when the summed squared shift is at most tol times the previous iteration's; the
    /// seed ran --init random --convergence previous-shift --tol 0.001 --max-iter 1000).
    #[arg(long, default_value = "variance", conflicts_with = "ranks")]
    convergence: Convergence,
    /// Runs from different initial centroids (the best is kept).
    #[arg(long, default_value_t = 1)]
    n_init: usize,
    /// Where to run: auto, cpu or cuda (distributed runs are CPU only).
    #[arg(long, default_value = "auto")]
    backend: Exec,
    /// How points are assigned: auto, lloyd, hamerly, yinyang or elkan. Every choice gives
    /// the same labels and centroids (the exact nearest centroid at every iteration); the
    /// pruned ones skip the distances their bounds settle (Hamerly: 8 bytes a point,
    /// Yinyang: 4 more per group of about 16 centroids, 8 groups at least, Elkan: 4 n k
    /// bytes). auto: lloyd below 128 clusters and for a single pass; from 128 clusters, plain
    /// steps until the labels settle, then yinyang's bounds while their steps take less time
    /// than a plain one, tried again (hamerly's and yinyang's in turns) after they lose.
    #[arg(long, default_value = "auto")]
    algorithm: Algorithm,
    /// Element type of generated points (f64 or f32; only with --generate). A float32 `.npy`
    /// input is clustered in float32 as it is (no copy in float64).
    #[arg(long, value_name = "TYPE")]
    dtype: Option<String>,
    /// Write the label of every point: .txt (one per line), .csv (header `label`), .npy
    /// (int32, as scikit-learn's labels_) or - for standard output.
    #[arg(long, value_name = "FILE")]
    labels: Option<PathBuf>,
    /// Write the centroids (k x d): .txt, .csv (the input's header when it had one), .npy
    /// or -.
    #[arg(long, value_name = "FILE")]
    centroids: Option<PathBuf>,
    /// Draw the first two dimensions, coloured by cluster, centroids as crosses: .svg or
    /// .png. Axis labels are the input's column names; above 20,000 points an even
    /// subsample is drawn and the caption says so.
    #[arg(long, value_name = "FILE")]
    plot: Option<PathBuf>,
    /// Run distributed over MPI with this many ranks (needs OpenMPI and the `kmeans-mpi`
    /// worker, built with `cargo build -p clustering --features mpi`).
    #[arg(long, value_name = "R")]
    ranks: Option<usize>,
    /// Relaunch a failed distributed job from its checkpoint at most this many times (when a
    /// rank died; a job the worker refuses, e.g. for bad input, is not relaunched).
    #[arg(long, value_name = "M", default_value_t = 3, requires = "ranks")]
    max_restarts: usize,
    /// Checkpoint file of a distributed job (default: next to the input).
    #[arg(long, requires = "ranks")]
    checkpoint: Option<PathBuf>,
    /// Continue a distributed job from its checkpoint (on any number of ranks; refused, naming
    /// the difference, when the checkpoint belongs to another job: other data, weights, --k,
    /// --init, --seed, --tol, given centroids, or past --max-iter).
    #[arg(long, requires = "ranks")]
    resume: bool,
    /// The mpirun program.
    #[arg(long, default_value = "mpirun", requires = "ranks")]
    mpirun: PathBuf,
}

/// Most points a scatter plot draws.
const PLOT_MAX_POINTS: usize = 20_000;

/// Reads a matrix of points (or centroids) through the shared reader; returns it and the
/// column names of a text header.
fn read_points(path: &Path, what: &str) -> Result<(Array2<f64>, Option<Vec<String>>)> {
    let a = warpath_io::read_array::<f64>(path)?;
    let header = a.header.clone();
    let (r, c, data) = a.into_matrix(what).map_err(|e| e.in_file(path))?;
    Ok((Array2::from_shape_vec((r, c), data)?, header))
}

/// The data and a description, plus column names when the input had a header.
/// Default dimensions of generated points.
const DEFAULT_DIM: usize = 2;
/// Default spread of generated points.
const DEFAULT_SIGMA: f64 = 0.05;

/// The generator's options only apply with --generate: named when given without it.
fn check_generator_flags(args: &Args) -> Result<()> {
    if args.generate.is_some() {
        return Ok(());
    }
    for (flag, given) in [
        ("--dim", args.dim.is_some()),
        ("--clusters", args.clusters.is_some()),
        ("--sigma", args.sigma.is_some()),
        ("--dtype", args.dtype.is_some()),
    ] {
        if given {
            return Err(usage(format!(
                "{flag} shapes generated points: it needs --generate N"
            )));
        }
    }
    Ok(())
}

fn load(args: &Args) -> Result<(Array2<f64>, String, Option<Vec<String>>)> {
    if let Some(n) = args.generate {
        let clusters = args.clusters.unwrap_or(args.k);
        let dim = args.dim.unwrap_or(DEFAULT_DIM);
        let sigma = args.sigma.unwrap_or(DEFAULT_SIGMA);
        // The points, the labels and distances the fit keeps, and the plot's copy.
        warpath_io::check_memory(
            &format!("--generate {n}"),
            n as u64,
            (dim as f64 * 8.0) * 2.0 + 16.0,
            0,
            "points",
        )?;
        let b = generate_blobs(n, dim, clusters, sigma, args.seed);
        return Ok((
            b.data,
            format!("{n} generated points, {dim} dims, {clusters} planted clusters"),
            None,
        ));
    }
    let path = args
        .input
        .as_deref()
        .ok_or_else(|| usage("an input file or --generate is needed"))?;
    let (data, header) = read_points(path, "the points")?;
    Ok((data, path.display().to_string(), header))
}

/// Points in the element type they are clustered in.
enum Points {
    F64(Array2<f64>),
    F32(Array2<f32>),
}

/// The points as [`load`] reads them, except that a float32 `.npy` file stays float32 and
/// `--dtype f32` generates float32 points.
fn load_points(args: &Args) -> Result<(Points, String, Option<Vec<String>>)> {
    let f32_npy = args.input.as_deref().is_some_and(|p| {
        matches!(
            warpath_io::npy_dtype(p),
            Ok(Some(d)) if d.kind == warpath_io::npy::Kind::Float && d.size == 4
        )
    });
    let f32_generated = match args.dtype.as_deref() {
        None | Some("f64" | "float64") => false,
        Some("f32" | "float32") => true,
        Some(other) => {
            return Err(usage(format!("--dtype must be f32 or f64, not `{other}`")));
        }
    };
    if f32_npy && let Some(path) = args.input.as_deref() {
        let a = warpath_io::read_array::<f32>(path)?;
        let header = a.header.clone();
        let (r, c, data) = a.into_matrix("the points").map_err(|e| e.in_file(path))?;
        return Ok((
            Points::F32(Array2::from_shape_vec((r, c), data)?),
            path.display().to_string(),
            header,
        ));
    }
    let (data, what, header) = load(args)?;
    Ok(if f32_generated {
        (Points::F32(data.mapv(|v| v as f32)), what, header)
    } else {
        (Points::F64(data), what, header)
    })
}

/// The outputs, checked before the work.
struct Outputs {
    labels: Option<Output>,
    centroids: Option<Output>,
    plot: Option<PathBuf>,
}

fn outputs(args: &Args, json: bool) -> Result<Outputs> {
    let tables: &[Format] = &[Format::Text, Format::Csv, Format::Npy];
    let [labels, centroids] = crate::cli_io::outputs(
        json,
        [
            ("--labels", args.labels.as_deref(), tables, false),
            ("--centroids", args.centroids.as_deref(), tables, false),
        ],
    )?;
    one_stdout(&[("--labels", &labels), ("--centroids", &centroids)])?;
    if let Some(p) = &args.plot {
        if !warpath_io::plot::is_plot_path(p) {
            return Err(usage(format!(
                "--plot {}: plots are .svg or .png files",
                p.display()
            )));
        }
        warpath_io::check_writable(p)?;
    }
    Ok(Outputs {
        labels,
        centroids,
        plot: args.plot.clone(),
    })
}

pub(crate) fn run(args: Args, json: bool) -> Result<()> {
    check_generator_flags(&args)?;
    let outs = outputs(&args, json)?;
    if args.ranks.is_some() {
        check_backend(args.backend, "distributed k-means (--ranks)", false)?;
        return run_distributed(args, &outs, json);
    }
    check_backend(args.backend, "k-means", true)?;
    let (points, what, header) = load_points(&args)?;
    match points {
        Points::F64(data) => run_typed(&args, &outs, json, data, what, header),
        Points::F32(data) => run_typed(&args, &outs, json, data, what, header),
    }
}

/// A single-process fit on points of element type `T`.
fn run_typed<T: Element + warpath_io::Element>(
    args: &Args,
    outs: &Outputs,
    json: bool,
    data: Array2<T>,
    what: String,
    header: Option<Vec<String>>,
) -> Result<()> {
    let (n, d) = data.dim();
    let mut init_header = None;
    let init = match &args.fit.init_centroids {
        Some(p) => {
            let (c, h) = read_points(p, "the initial centroids")?;
            init_header = h;
            Init::Given(c)
        }
        None => args.fit.init.clone(),
    };
    let (weights, weights_header) = load_weights(args)?;
    let weights: Option<Array1<T>> = weights.map(|w| w.mapv(T::from_f64));
    // Header lines the table reader skipped, named in the report.
    let described = InputInfo {
        source: what.clone(),
        header: header.clone(),
    }
    .describe();
    let extra_headers: String = [
        ("initial centroids", &init_header),
        ("weights", &weights_header),
    ]
    .iter()
    .filter(|(_, h)| h.is_some())
    .map(|(what, h)| format!(" ({what}{})", skipped_header(h.as_deref())))
    .collect();
    let params = KMeans::new(args.k)
        .init(init)
        .max_iter(args.fit.max_iter)
        .tol(args.tol)
        .convergence(args.convergence)
        .n_init(args.n_init)
        .seed(args.seed)
        .exec(args.backend)
        .algorithm(args.algorithm);
    let bar = progress((args.fit.max_iter * params.n_init) as u64, "k-means", json);
    let t = Instant::now();
    let cpu0 = process_cpu_seconds();
    bar.enable_steady_tick(std::time::Duration::from_millis(500));
    let fit = params.fit_observed(data.view(), weights.as_ref().map(|w| w.view()), &mut |p| {
        if p.iteration == 0 {
            bar.set_message(format!(
                "k-means run {} initialising ({}): {}/{} centroids",
                p.run + 1,
                params.init.name(),
                p.initialised,
                args.k
            ));
            return;
        }
        bar.set_position((p.run * args.fit.max_iter + p.iteration) as u64);
        bar.set_message(format!(
            "k-means run {} inertia {:.4e}",
            p.run + 1,
            p.inertia
        ));
    })?;
    let seconds = t.elapsed().as_secs_f64();
    let cpu_seconds = process_cpu_seconds().zip(cpu0).map(|(b, a)| b - a);
    bar.finish_and_clear();
    let check = clustering::verify(data.view(), weights.as_ref().map(|w| w.view()), &fit);
    let (verified, checked) = (check.is_ok(), check.as_ref().ok().map(|c| c.points));
    let plot_note = write_outputs(
        outs,
        data.view(),
        &fit.labels,
        &fit.centroids,
        header.as_deref(),
    )?;
    if json {
        crate::cli_io::print_json!({
            "n": n, "d": d, "k": args.k, "dtype": <T as Element>::NAME, "algorithm": args.algorithm.name(),
            "backend": fit.backend, "seconds": seconds,
            "cpu_seconds": cpu_seconds,
            "seconds_per_iteration": seconds / fit.iterations.max(1) as f64,
            "iterations": fit.iterations, "converged": fit.converged, "inertia": fit.inertia,
            "verified": verified, "verified_points": checked, "centroids": fit.centroids.outer_iter().map(|r| r.iter().map(|v| v.to_f64()).collect::<Vec<_>>()).collect::<Vec<_>>(),
            "plot": plot_note,
            "header": header, "init_centroids_header": init_header,
            "weights_header": weights_header,
        });
    } else {
        println!(
            "k-means on {described}{extra_headers}: k = {}, {} on {}",
            args.k,
            format_seconds(seconds),
            fit.backend
        );
        println!(
            "  {} iterations ({}), inertia {:.6e}, {} ({}), verified: {}{}",
            fit.iterations,
            if fit.converged {
                "converged"
            } else {
                "did not converge"
            },
            fit.inertia,
            <T as Element>::NAME,
            args.algorithm.name(),
            if verified { "yes" } else { "NO" },
            match checked {
                Some(p) if p < n => format!(" (labels of {p} sampled points)"),
                _ => String::new(),
            }
        );
        for (j, c) in fit.centroids.outer_iter().enumerate().take(16) {
            let size = fit.labels.iter().filter(|&&l| l as usize == j).count();
            let coords: Vec<String> = c
                .iter()
                .take(8)
                .map(|v| format!("{:.4}", v.to_f64()))
                .collect();
            println!(
                "  cluster {j:>3}: {size:>9} points at [{}{}]",
                coords.join(", "),
                if d > 8 { ", ..." } else { "" }
            );
        }
        if args.k > 16 {
            println!("  ... {} more clusters", args.k - 16);
        }
        if let Some(note) = &plot_note {
            println!("  {note}");
        }
    }
    if let Err(e) = check {
        return Err(unverified(format!(
            "the k-means result failed verification: {e}"
        )));
    }
    Ok(())
}

/// CPU time of this process so far (all threads), from `/proc/self/stat` (Linux; 10 ms
/// resolution), for comparisons on a loaded machine.
fn process_cpu_seconds() -> Option<f64> {
    let stat = std::fs::read_to_string("/proc/self/stat").ok()?;
    let fields: Vec<&str> = stat.rsplit(')').next()?.split_whitespace().collect();
    let ticks = fields.get(11)?.parse::<f64>().ok()? + fields.get(12)?.parse::<f64>().ok()?;
    Some(ticks / 100.0)
}

/// Column names of a header line the table reader skipped.
type Header = Option<Vec<String>>;

/// The `--weights` file, whole, through the shared reader, and the header line it skipped.
fn load_weights(args: &Args) -> Result<(Option<Array1<f64>>, Header)> {
    let Some(p) = args.fit.weights.as_deref() else {
        return Ok((None, None));
    };
    let a = warpath_io::read_array::<f64>(p)?;
    let header = a.header.clone();
    let w = a
        .into_vector("the sample weights")
        .map_err(|e| e.in_file(p))?;
    Ok((Some(Array1::from(w)), header))
}

/// Writes labels, centroids and the plot; returns what the plot shows (for the report).
fn write_outputs<T: Element + warpath_io::Element>(
    outs: &Outputs,
    data: ArrayView2<'_, T>,
    labels: &[u32],
    centroids: &Array2<T>,
    header: Option<&[String]>,
) -> Result<Option<String>> {
    if let Some(o) = &outs.labels {
        let l: Vec<i32> = labels.iter().map(|&l| l as i32).collect();
        o.write_array(&l, None, Some(&["label".to_owned()]))?;
    }
    if let Some(o) = &outs.centroids {
        let flat: Vec<T> = centroids.iter().copied().collect();
        o.write_array(&flat, Some(centroids.ncols()), header)?;
    }
    let Some(p) = &outs.plot else {
        return Ok(None);
    };
    let d = data.ncols();
    let (xi, yi) = (0, usize::from(d > 1));
    let name = |i: usize| {
        header
            .and_then(|h| h.get(i).cloned())
            .unwrap_or_else(|| format!("column {}", i + 1))
    };
    let points: Vec<(f64, f64)> = data
        .outer_iter()
        .map(|r| (r[xi].to_f64(), r[yi].to_f64()))
        .collect();
    let marks: Vec<(f64, f64)> = centroids
        .outer_iter()
        .map(|c| (c[xi].to_f64(), c[yi].to_f64()))
        .collect();
    let title = format!("k-means, k = {}", centroids.nrows());
    let (x_label, y_label) = (name(xi), name(yi));
    let scatter = warpath_io::plot::Scatter {
        points: &points,
        groups: labels,
        marks: &marks,
        title: &title,
        x_label: &x_label,
        y_label: &y_label,
        max_points: PLOT_MAX_POINTS,
    };
    warpath_io::plot::render(p, (900, 800), &scatter)?;
    let shown = scatter.shown();
    Ok(Some(if shown < points.len() {
        format!(
            "plot {}: {shown} of {} points shown (one in every {})",
            p.display(),
            points.len(),
            scatter.stride()
        )
    } else {
        format!("plot {}: all {} points shown", p.display(), points.len())
    }))
}

/// Whether `p` is a native-endian float `.npy` file, which the worker's ranks read by offset.
fn float_npy(p: &Path) -> bool {
    matches!(
        warpath_io::npy_dtype(p),
        Ok(Some(d)) if d.kind == warpath_io::npy::Kind::Float && !d.big_endian
    )
}

/// The points for the worker as a float `.npy` file (generated or text data written to the
/// temporary folder first, named after what it holds so that `--resume` finds the same file
/// and checkpoint), with the points in memory (for the check) and their column names.
fn distributed_input(args: &Args) -> Result<(PathBuf, Array2<f64>, Option<Vec<String>>)> {
    if let Some(p) = args.input.as_ref().filter(|p| float_npy(p)) {
        return Ok((p.clone(), read_npy(p)?, None));
    }
    let (data, _, header) = load(args)?;
    let name = match (&args.input, args.generate) {
        (_, Some(n)) => format!(
            "warpath-kmeans-generated-{n}x{}-c{}-s{}-sigma{}.npy",
            args.dim.unwrap_or(DEFAULT_DIM),
            args.clusters.unwrap_or(args.k),
            args.seed,
            args.sigma.unwrap_or(DEFAULT_SIGMA)
        ),
        (Some(p), None) => format!(
            "warpath-kmeans-{}.npy",
            p.file_stem()
                .map(|s| s.to_string_lossy())
                .unwrap_or_default()
        ),
        (None, None) => "warpath-kmeans-input.npy".into(),
    };
    let p = std::env::temp_dir().join(name);
    write_npy(&p, &data)?;
    Ok((p, data, header))
}

/// The weights file every rank reads its shard of: an `f64` `.npy` or raw file as given,
/// any other weights file converted once to `.npy` here, so that the distributed run reads
/// what the local one reads.
fn distributed_weights(args: &Args) -> Result<Option<PathBuf>> {
    let Some(w) = &args.fit.weights else {
        return Ok(None);
    };
    if float_npy(w) || warpath_io::Format::of_path(w) == Some(Format::Bin) {
        return Ok(Some(w.clone()));
    }
    let weights = load_weights(args)?.0.unwrap_or_default();
    let p = std::env::temp_dir().join(format!("warpath-kmeans-weights-{}.npy", std::process::id()));
    Output::parse("--weights", &p, &[Format::Npy], Format::Text)?.write_array(
        weights.as_slice().unwrap_or_default(),
        None,
        None,
    )?;
    Ok(Some(p))
}

/// `warpath kmeans --ranks R`: the fit runs in the `kmeans-mpi` worker under `mpirun`
/// ([`clustering::launch::run_job`]); this checks its labels against the centroids here and
/// reports.
fn run_distributed(args: Args, outs: &Outputs, json: bool) -> Result<()> {
    let ranks = args.ranks.unwrap_or(1).max(1);
    let worker = find_worker().context(
        "the distributed worker `kmeans-mpi` was not found: build it with \
         `cargo build -p clustering --features mpi --bin kmeans-mpi` (needs OpenMPI) or set WARPATH_KMEANS_MPI",
    )?;
    let (input, data, header) = distributed_input(&args)?;
    let job = WorkerJob {
        input: input.clone(),
        k: args.k,
        start: match &args.fit.init_centroids {
            Some(p) => WorkerStart::Centroids(p.clone()),
            None => WorkerStart::Init(args.fit.init.clone()),
        },
        weights: distributed_weights(&args)?,
        max_iter: args.fit.max_iter,
        tol: args.tol,
        seed: args.seed,
        algorithm: args.algorithm,
    };
    let launch = MpiLaunch {
        mpirun: args.mpirun.clone(),
        worker,
        ranks,
        max_restarts: args.max_restarts,
        worker_args: vec![],
        checkpoint: args
            .checkpoint
            .clone()
            .unwrap_or_else(|| input.with_extension("kmeans-checkpoint.json")),
        resume: args.resume,
        first_launch_env: vec![],
    };
    let t = Instant::now();
    let done = run_job(&job, launch, |attempt, why| {
        if !json {
            eprintln!("warpath kmeans: {why}; relaunching from the checkpoint (restart {attempt})");
        }
    })?;
    let seconds = t.elapsed().as_secs_f64();
    let (report, labels) = (&done.report, &done.labels);
    let centroids = Array2::from_shape_vec((report.k, report.d), report.centroids.clone())?;
    let fit = KMeansResult {
        centroids: centroids.clone(),
        labels: predict(centroids.view(), data.view(), Exec::Cpu)?,
        inertia: report.inertia,
        iterations: report.iterations,
        converged: report.converged,
        backend: Backend::Cpu,
    };
    let weights = load_weights(&args)?.0;
    let verified = fit.labels == *labels
        && clustering::verify(data.view(), weights.as_ref().map(|w| w.view()), &fit).is_ok();
    let plot_note = write_outputs(outs, data.view(), labels, &centroids, header.as_deref())?;
    let launches = done.outcome.attempts;
    print_distributed(
        report,
        (ranks, launches, seconds),
        verified,
        plot_note,
        json,
    );
    if !verified {
        return Err(unverified(
            "the distributed k-means result failed verification",
        ));
    }
    Ok(())
}

/// The report of a distributed fit: JSON, or lines of text.
fn print_distributed(
    report: &DistributedReport,
    (ranks, launches, seconds): (usize, usize, f64),
    verified: bool,
    plot_note: Option<String>,
    json: bool,
) {
    if json {
        crate::cli_io::print_json!({
            "n": report.n, "d": report.d, "k": report.k, "backend": "cpu", "ranks": ranks,
            "launches": launches, "resumed_from": report.resumed_from,
            "seconds": seconds, "split_seconds": report.seconds, "iterations": report.iterations,
            "converged": report.converged, "inertia": report.inertia, "verified": verified,
            "reconciled": report.reconciled, "plot": plot_note,
        });
        return;
    }
    println!(
        "distributed k-means: n = {}, d = {}, k = {} on {ranks} ranks, {} launch(es), {}",
        report.n,
        report.d,
        report.k,
        launches,
        format_seconds(seconds)
    );
    println!(
        "  {} iterations ({}), inertia {:.6e}, verified: {}",
        report.iterations,
        if report.converged {
            "converged"
        } else {
            "did not converge"
        },
        report.inertia,
        if verified { "yes" } else { "NO" }
    );
    let s = report.seconds;
    println!(
        "  rank 0: read {}, compute {}, all-reduce {}, checkpoint {}, total {}",
        format_seconds(s.read),
        format_seconds(s.compute),
        format_seconds(s.allreduce),
        format_seconds(s.checkpoint),
        format_seconds(s.total)
    );
    if let Some(note) = &plot_note {
        println!("  {note}");
    }
}

/// Demo rows: sequential, rayon and (with a GPU) CUDA k-means on planted clusters.
pub(crate) fn demo(size: DemoSize, rows: &mut Rows) {
    let (n, d, k) = match size {
        DemoSize::Small => (200_000, 2, 4),
        DemoSize::Large => (2_000_000, 8, 16),
    };
    let b = generate_blobs(n, d, k, 0.12, 7);
    let name = format!("k-means (d = {d}, k = {k})");
    // Seeded k-means++ (computed on the CPU): every backend starts from the same centroids.
    let params = KMeans::new(k).seed(1);
    // The sequential reference on a prefix (it is the slow one), then the fast paths.
    let m = n / 10;
    let prefix = b.data.slice(ndarray::s![..m, ..]);
    let t = Instant::now();
    rows.push(match params.fit_reference(prefix, None) {
        Ok(r) => DemoRow::new(
            &format!("{name} sequential"),
            m as u64,
            Backend::Cpu,
            t.elapsed(),
            recovers(&r.labels, &b.truth[..m], k),
        )
        .with_note(format!("{} iterations", r.iterations)),
        Err(e) => DemoRow::failed(&format!("{name} sequential"), m as u64, e),
    });
    let mut cpu_labels = None;
    for exec in [Exec::Cpu, Exec::Cuda] {
        if exec == Exec::Cuda && gpu_runtime::gpu().is_err() {
            continue;
        }
        let t = Instant::now();
        let row = match params.clone().exec(exec).fit(b.data.view()) {
            Ok(r) => {
                let ok = recovers(&r.labels, &b.truth, k)
                    && cpu_labels
                        .as_ref()
                        .is_none_or(|c: &Vec<u32>| *c == r.labels);
                let row =
                    DemoRow::new(&name, n as u64, r.backend, t.elapsed(), ok).with_note(format!(
                        "{} iterations, {:.2} ms/iteration",
                        r.iterations,
                        t.elapsed().as_secs_f64() * 1e3 / r.iterations.max(1) as f64
                    ));
                if exec == Exec::Cpu {
                    cpu_labels = Some(r.labels);
                }
                row
            }
            Err(e) => DemoRow::failed(&name, n as u64, e),
        };
        rows.push(row);
    }
}

/// Whether the planted clusters map one-to-one onto found clusters (by majority), with at
/// least 99% of the points in their planted cluster's image (clusters overlap a little).
fn recovers(labels: &[u32], truth: &[u32], k: usize) -> bool {
    let mut counts = vec![vec![0usize; k]; k];
    for (&l, &t) in labels.iter().zip(truth) {
        if (l as usize) >= k || (t as usize) >= k {
            return false;
        }
        counts[t as usize][l as usize] += 1;
    }
    let mut image: Vec<usize> = counts
        .iter()
        .map(|row| (0..k).max_by_key(|&j| row[j]).unwrap_or(0))
        .collect();
    let agree: usize = counts.iter().zip(&image).map(|(row, &j)| row[j]).sum();
    image.sort_unstable();
    image.dedup();
    image.len() == k && agree as f64 >= 0.99 * labels.len() as f64
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `warpath kmeans --generate 100` with the words of `extra` (split at white space).
    fn parse(extra: &str) -> Result<Args, clap::Error> {
        let argv: Vec<&str> = ["kmeans", "--generate", "100"]
            .into_iter()
            .chain(extra.split_whitespace())
            .collect();
        crate::cli_io::parse_args(&argv)
    }

    #[test]
    fn convergence_selects_the_seed_rule_and_is_refused_with_ranks() {
        let args = parse("--convergence previous-shift").unwrap();
        assert_eq!(args.convergence, Convergence::PreviousShift);
        assert_eq!(parse("").unwrap().convergence, Convergence::Variance);
        assert!(parse("--convergence previous-shift --ranks 2").is_err());
        assert!(parse("--convergence x").is_err());
    }
}
