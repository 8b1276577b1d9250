//! `warpath euler --sweep`: Euler circuit time against edge count on deep and shallow graphs
//! for every method (the seed's chart), as a table, CSV, a chart or JSON.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::Instant;

use anyhow::{Context, Result, bail};
use gpu_runtime::{Exec, GpuError, Target};
use graph_core::experiments::{EulerMethod, EulerRunError, TimedParts, time_euler};
use graph_core::{
    EulerError, EulerStyle, MAX_EULER_EDGES, euler_circuit_cuda_timed, random_euler_graph,
};

use warpath_io::plot::{Timing, Timings};

use super::input::style_name;
use crate::report::{format_seconds, progress};

/// The inputs of a single run, which the sweep's options conflict with (clap's `requires` does
/// not work with a flag like `--sweep`, whose default counts as present).
const SINGLE_RUN: [&str; 2] = ["file", "generate"];

/// The sweep's options of `warpath euler` (flattened into its arguments).
#[derive(clap::Args)]
pub(super) struct SweepArgs {
    /// Time Euler circuits against edge count on deep and shallow generated graphs (the
    /// seed's chart): Hierholzer, the parallel algorithm and, with a GPU, the CUDA pipeline
    /// (device compute and transfers reported apart). Sizes that would not fit in memory are
    /// skipped with a message.
    #[arg(long)]
    pub(super) sweep: bool,
    /// Edge counts of the sweep, comma-separated, with optional k, M or G suffix
    /// [default: 1M,3M,10M,30M,100M].
    #[arg(
        long,
        value_name = "LIST",
        value_delimiter = ',',
        value_parser = parse_edge_count,
        conflicts_with_all = SINGLE_RUN
    )]
    sweep_edges: Option<Vec<u64>>,
    /// A quick sweep: 100k,300k,1M edges.
    #[arg(long, conflicts_with_all = SINGLE_RUN, conflicts_with = "sweep_edges")]
    quick: bool,
    /// Runs per method and graph in the sweep; the best time is reported [default: 3].
    #[arg(long, conflicts_with_all = SINGLE_RUN, value_parser = clap::value_parser!(u32).range(1..))]
    reps: Option<u32>,
    /// Write the sweep's rows here as CSV (style, edges, method, seconds, M edges/s).
    #[arg(long, conflicts_with_all = SINGLE_RUN, requires = "sweep")]
    csv: Option<PathBuf>,
    /// Draw the sweep here (.svg or .png): log-log time against edges, one line per method
    /// and style.
    #[arg(long, conflicts_with_all = SINGLE_RUN, requires = "sweep")]
    plot: Option<PathBuf>,
}

/// Edge counts of `warpath euler --sweep` by default: the seed's chart.
const SWEEP_EDGES: [u64; 5] = [1_000_000, 3_000_000, 10_000_000, 30_000_000, 100_000_000];

/// Edge counts of `--sweep --quick`.
const QUICK_SWEEP_EDGES: [u64; 3] = [100_000, 300_000, 1_000_000];

/// Host memory one sweep point needs per edge: the graph, the working set of the hungriest
/// method, its circuit and the verification. The peak resident size of a CPU sweep (release
/// build) was 44 bytes per edge at 10^7 edges and 31 at 3 x 10^7: this leaves room.
pub(super) const SWEEP_BYTES_PER_EDGE: u64 = 64;

/// An edge count of `--sweep-edges`: a whole number with an optional k, M or G suffix
/// (10^3, 10^6, 10^9), from 1 to [`MAX_EULER_EDGES`].
fn parse_edge_count(s: &str) -> Result<u64, String> {
    let m = warpath_io::parse_count(s)?;
    if m == 0 || m > MAX_EULER_EDGES {
        return Err(format!(
            "{m} edges: an edge count must be from 1 to {MAX_EULER_EDGES}"
        ));
    }
    Ok(m)
}

/// One measurement of the sweep: the best time of `--reps` runs.
#[derive(serde::Serialize)]
struct SweepRow {
    style: &'static str,
    edges: u64,
    method: &'static str,
    seconds: f64,
    m_edges_per_second: f64,
}

fn gib(bytes: u64) -> f64 {
    bytes as f64 / (1u64 << 30) as f64
}

/// The sweep's edge counts: `--quick`'s, `--sweep-edges`' or the default, sorted without
/// repeats, less those that would not fit in the host's available memory (each one skipped
/// is reported on standard error and added to `skipped`).
fn sweep_sizes(args: &SweepArgs, skipped: &mut Vec<String>) -> Vec<u64> {
    let mut sizes = match (&args.sweep_edges, args.quick) {
        (_, true) => QUICK_SWEEP_EDGES.to_vec(),
        (Some(list), false) => list.clone(),
        (None, false) => SWEEP_EDGES.to_vec(),
    };
    sizes.sort_unstable();
    sizes.dedup();
    if let Some(avail) = gpu_runtime::host_available_memory() {
        sizes.retain(|&m| {
            let need = m.saturating_mul(SWEEP_BYTES_PER_EDGE);
            let fits = need <= avail;
            if !fits {
                let msg = format!(
                    "{m} edges: needs about {:.1} GiB of memory, {:.1} GiB available",
                    gib(need),
                    gib(avail)
                );
                eprintln!("skipped {msg}");
                skipped.push(msg);
            }
            fits
        });
    }
    sizes
}

/// The rows of one method on one graph: for each timed part, the best time of the runs.
fn best_rows(runs: &[TimedParts], label: &'static str, edges: u64) -> Vec<SweepRow> {
    let best: TimedParts = runs[0]
        .iter()
        .enumerate()
        .map(|(i, &(name, _))| {
            (
                name,
                runs.iter().map(|r| r[i].1).fold(f64::INFINITY, f64::min),
            )
        })
        .collect();
    best.into_iter()
        .map(|(name, seconds)| SweepRow {
            style: label,
            edges,
            method: name,
            seconds,
            m_edges_per_second: edges as f64 / seconds.max(1e-12) / 1e6,
        })
        .collect()
}

/// What the sweep measured, for its text report.
struct SweepReport<'a> {
    reps: usize,
    seed: u64,
    threads: usize,
    /// Whether the CUDA pipeline was timed too.
    gpu: bool,
    rows: &'a [SweepRow],
    ratios: &'a [StyleRatio],
    /// The largest size measured on both styles.
    largest: Option<u64>,
    /// Whether shallow graphs cost at most twice deep ones per edge at the largest size.
    within_2x: bool,
    skipped: &'a [String],
}

/// Prints the sweep's text report: the table of rows, the shallow / deep ratios, what was
/// skipped and where the CSV and chart went.
fn print_sweep_text(args: &SweepArgs, report: &SweepReport<'_>, seconds: f64) {
    let SweepReport {
        reps,
        seed,
        threads,
        gpu,
        rows,
        ratios,
        largest,
        within_2x,
        skipped,
    } = *report;
    println!(
        "Euler circuit sweep, best of {reps} (seed {}, {} rayon threads{}), every circuit verified",
        seed,
        threads,
        if gpu {
            ", GPU: compute and transfers apart"
        } else {
            ", no GPU"
        }
    );
    println!(
        "{:>11}  {:<7}  {:<14}  {:>10}  {:>10}",
        "edges", "style", "method", "time", "M edges/s"
    );
    for r in rows {
        println!(
            "{:>11}  {:<7}  {:<14}  {:>10}  {:>10.2}",
            r.edges,
            r.style,
            r.method,
            format_seconds(r.seconds),
            r.m_edges_per_second
        );
    }
    println!("shallow / deep cost per edge:");
    for r in ratios {
        println!(
            "{:>11}  {:<14}  {:.2}x",
            r.edges, r.method, r.shallow_over_deep
        );
    }
    if let Some(m) = largest {
        println!(
            "at {m} edges shallow graphs cost {} 2x per edge of deep ones",
            if within_2x { "at most" } else { "MORE than" }
        );
    }
    for s in skipped {
        println!("skipped {s}");
    }
    if let Some(p) = &args.csv {
        println!("CSV written to {}", p.display());
    }
    if let Some(p) = &args.plot {
        println!("chart written to {}", p.display());
    }
    println!("euler sweep: {seconds:.1} s");
}

/// `warpath euler --sweep`: times every method on deep and shallow graphs of each size, verifies
/// every circuit (untimed), and writes a table, CSV, an SVG chart or one JSON object.
pub(super) fn run_sweep(args: &SweepArgs, backend: Exec, seed: u64, json: bool) -> Result<()> {
    let started = Instant::now();
    let gpu = match backend.resolve(1, 0) {
        Ok(target) => matches!(target, Target::Cuda(_)),
        Err(e) => return Err(anyhow::Error::new(e).context("choosing where the sweep runs")),
    };
    let mut methods = vec![EulerMethod::Hierholzer, EulerMethod::Parallel];
    if gpu {
        methods.push(EulerMethod::Cuda);
        // Load (JIT-compile) the kernels before the clock runs.
        euler_circuit_cuda_timed(&random_euler_graph(1000, EulerStyle::Shallow, 1)?)
            .context("warming up the GPU")?;
    }
    let mut skipped = Vec::new();
    let sizes = sweep_sizes(args, &mut skipped);
    if sizes.is_empty() {
        bail!("no sweep size fits in memory ({})", skipped.join("; "));
    }
    // Create the outputs now, so that a bad path fails before the long part.
    let create =
        |p: &Path| std::fs::File::create(p).with_context(|| format!("creating {}", p.display()));
    let mut csv = args.csv.as_deref().map(create).transpose()?;
    if let (Some(f), Some(p)) = (csv.as_mut(), &args.csv) {
        write_sweep_csv_header(f).with_context(|| format!("writing {}", p.display()))?;
    }
    if let Some(p) = &args.plot {
        create(p)?;
    }
    let reps = args.reps.unwrap_or(3) as usize;
    let styles = [EulerStyle::Deep, EulerStyle::Shallow];
    let bar = progress(
        (sizes.len() * styles.len() * methods.len() * reps) as u64,
        "euler sweep",
        json,
    );
    let mut rows: Vec<SweepRow> = Vec::new();
    for &m in &sizes {
        for style in styles {
            let label = style_name(style);
            bar.set_message(format!("{label} {m}: generating"));
            let g = random_euler_graph(m, style, seed)?;
            for &method in &methods {
                bar.set_message(format!("{label} {m}: {}", method.name()));
                // Every circuit is verified (untimed); the best of the runs is reported.
                let runs = match time_euler(&g, method, reps) {
                    Ok(runs) => runs,
                    Err(EulerRunError::Euler(EulerError::Gpu(
                        e @ GpuError::OutOfMemory { .. },
                    ))) => {
                        let msg = format!("{} on {label} {m} edges: {e}", method.name());
                        bar.suspend(|| eprintln!("skipped {msg}"));
                        skipped.push(msg);
                        bar.inc(reps as u64);
                        continue;
                    }
                    Err(e) => {
                        return Err(anyhow::Error::new(e)
                            .context(format!("{} on {label} {m} edges", method.name())));
                    }
                };
                bar.inc(reps as u64);
                let measured = best_rows(&runs, label, g.edge_count());
                if let (Some(f), Some(p)) = (csv.as_mut(), &args.csv) {
                    append_sweep_csv(f, &measured)
                        .with_context(|| format!("writing {}", p.display()))?;
                }
                rows.extend(measured);
            }
        }
    }
    bar.finish_and_clear();
    let ratios = shallow_over_deep(&rows);
    let largest = ratios.iter().map(|r| r.edges).max();
    let within_2x = ratios
        .iter()
        .filter(|r| Some(r.edges) == largest)
        .all(|r| r.shallow_over_deep <= 2.0);
    let threads = rayon::current_num_threads();
    if let Some(p) = &args.plot {
        let caption =
            format!("Euler circuit: time against edges (best of {reps}, {threads} threads)");
        plot_sweep(p, &rows, &caption)?;
    }
    let seconds = started.elapsed().as_secs_f64();
    if json {
        crate::cli_io::print_json!({
            "n": sizes.last(),
            "backend": if gpu { "cuda" } else { "cpu" },
            "reps": reps,
            "seed": seed,
            "threads": threads,
            "rows": rows,
            "shallow_over_deep": ratios,
            "largest_edges": largest,
            "shallow_within_2x": within_2x,
            "skipped": skipped,
            "verified": true,
            "csv": args.csv,
            "plot": args.plot,
            "seconds": seconds,
        });
        return Ok(());
    }
    let report = SweepReport {
        reps,
        seed,
        threads,
        gpu,
        rows: &rows,
        ratios: &ratios,
        largest,
        within_2x,
        skipped: &skipped,
    };
    print_sweep_text(args, &report, seconds);
    Ok(())
}

/// Shallow over deep cost per edge of one method at one size.
#[derive(serde::Serialize)]
struct StyleRatio {
    edges: u64,
    method: &'static str,
    shallow_over_deep: f64,
}

/// The ratio for every (size, method) measured on both styles.
fn shallow_over_deep(rows: &[SweepRow]) -> Vec<StyleRatio> {
    let per_edge = |r: &SweepRow| r.seconds / r.edges as f64;
    rows.iter()
        .filter(|d| d.style == "deep")
        .filter_map(|d| {
            let s = rows
                .iter()
                .find(|s| s.style == "shallow" && s.edges == d.edges && s.method == d.method)?;
            Some(StyleRatio {
                edges: d.edges,
                method: d.method,
                shallow_over_deep: per_edge(s) / per_edge(d).max(1e-300),
            })
        })
        .collect()
}

/// The sweep's CSV header.
fn write_sweep_csv_header(w: &mut impl Write) -> std::io::Result<()> {
    writeln!(w, "style,edges,method,seconds,m_edges_per_second")?;
    w.flush()
}

/// Appends rows to the sweep's CSV and flushes, so that a sweep cut short (a time limit, a
/// crash at a large size) keeps every row measured so far.
fn append_sweep_csv(w: &mut impl Write, rows: &[SweepRow]) -> std::io::Result<()> {
    for r in rows {
        writeln!(
            w,
            "{},{},{},{:.9},{:.4}",
            r.style, r.edges, r.method, r.seconds, r.m_edges_per_second
        )?;
    }
    w.flush()
}

/// Draws the sweep chart (`.svg` or `.png` by the extension): log-log time against edges, one
/// line per method and style (deep solid, shallow dashed, one colour per method), like the
/// seed's chart.
fn plot_sweep(path: &Path, rows: &[SweepRow], caption: &str) -> Result<()> {
    let points: Vec<Timing<'_>> = rows
        .iter()
        .map(|r| Timing {
            series: r.method,
            variant: r.style,
            x: r.edges as f64,
            seconds: r.seconds,
        })
        .collect();
    let chart = Timings {
        points: &points,
        variants: ["deep", "shallow"],
        title: caption,
        x_label: "edges",
    };
    warpath_io::plot::render(path, (900, 650), &chart)?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn edge_counts_parse_with_suffixes_and_bounds() {
        for (s, want) in [
            ("1", 1),
            ("10k", 10_000),
            (" 3M", 3_000_000),
            ("100m", 100_000_000),
            ("4G", 4_000_000_000),
            ("1.5M", 1_500_000),
            ("2^20", 1 << 20),
        ] {
            assert_eq!(parse_edge_count(s), Ok(want), "{s}");
        }
        for s in ["0", "0k", "", "abc", "1.5", "-1", "5G", "k"] {
            assert!(parse_edge_count(s).is_err(), "{s} accepted");
        }
        assert_eq!(parse_edge_count("4294967294"), Ok(MAX_EULER_EDGES));
    }
}
