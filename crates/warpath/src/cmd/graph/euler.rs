//! `warpath euler`: the Euler circuit or path of a graph file or a generated graph, and the
//! Euler rows of `warpath demo`.

use std::path::PathBuf;
use std::time::Instant;

use anyhow::Result;
use gpu_runtime::{Backend, Exec};
use graph_core::{
    EulerStyle, EulerTrail, Graph, GraphFormat, euler_circuit, euler_circuit_staged,
    is_euler_circuit, random_euler_graph,
};
use warpath_io::{Element, Format, Output};

use super::input::{AnyGraph, load, named, style_name, undirected};
use super::sweep::{SWEEP_BYTES_PER_EDGE, SweepArgs, run_sweep};
use crate::cli_io::{
    check_backend, guard_terminal, is_dash, output_unless_discarded, report, written,
};
use crate::fail::{unverified, usage};
use crate::report::{DemoRow, DemoSize, Rows, progress};

/// Arguments of `warpath euler`.
#[derive(clap::Args)]
#[command(after_help = concat!("\
Examples:
  warpath euler edges.txt -o circuit.txt          # one vertex name per line
  warpath euler --generate 1e6 --discard --json   # time a generated circuit
Timing sweep (the seed's chart: time against edges, CPU and GPU, deep and shallow graphs):
  warpath euler --sweep --csv euler.csv --plot euler.svg
  warpath euler --sweep --sweep-edges 1M,3M,10M --reps 1 --backend cpu --json

", graph_formats!()))]
pub(crate) struct EulerArgs {
    /// Graph file (- for standard input): edge list, `a -> b, c` adjacency lines, SNAP,
    /// Matrix Market .mtx (see below).
    #[arg(
        conflicts_with_all = ["generate", "sweep"],
        required_unless_present_any = ["generate", "sweep"]
    )]
    file: Option<PathBuf>,
    /// Input format instead of detecting it: edges, adjacency, snap or mtx.
    #[arg(long)]
    format: Option<GraphFormat>,
    /// Generate a random connected Eulerian digraph with this many edges instead of reading
    /// (1e6, 10M).
    #[arg(long, conflicts_with = "sweep", value_parser = crate::cli_io::count64)]
    generate: Option<u64>,
    /// Style of the generated graph: deep (few long cycles) or shallow (many 2-cycles).
    #[arg(long, default_value = "deep")]
    style: EulerStyle,
    /// Seed of the generator.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Where to run: auto, cpu or cuda. With --sweep: the CPU methods always run, the GPU
    /// under auto when there is one, and cuda makes a missing GPU an error.
    #[arg(long, default_value = "auto")]
    backend: Exec,
    /// Find an Euler path (the ±1 degree rule) instead of a circuit.
    #[arg(long, conflicts_with = "sweep")]
    path: bool,
    /// Read (or generate) the graph as undirected (NetworkX's MultiGraph): every line is an
    /// edge that can be walked either way; circuits need even degrees, paths run between the
    /// two odd-degree vertices (from the smaller one, as NetworkX).
    #[arg(long, conflicts_with = "sweep")]
    undirected: bool,
    /// Write the vertex sequence here, one vertex name per line (.txt), or - for standard
    /// output (the default, except under --json; a terminal gets at most 10,000 lines unless
    /// -o - is given).
    #[arg(long, short, conflicts_with = "sweep", value_name = "FILE")]
    output: Option<PathBuf>,
    /// Find and verify the circuit without writing it (for timing).
    #[arg(long, conflicts_with_all = ["output", "sweep"])]
    discard: bool,
    #[command(flatten)]
    sweep: SweepArgs,
}

fn write_vertices(
    names: Option<&graph_core::VertexNames>,
    t: &EulerTrail,
    out: &Output,
) -> Result<()> {
    let mut w = out.open()?;
    let mut buf = Vec::with_capacity(1 << 16);
    for &v in &t.vertices {
        match names.and_then(|n| n.name(v)) {
            Some(name) => buf.extend_from_slice(name.as_bytes()),
            None => v.write_text(&mut buf),
        }
        buf.push(b'\n');
        if buf.len() >= 1 << 16 {
            w.write_all(&buf)?;
            buf.clear();
        }
    }
    w.write_all(&buf)?;
    w.finish()?;
    Ok(())
}

pub(crate) fn run_euler(args: EulerArgs, json: bool) -> Result<()> {
    check_backend(args.backend, "euler", true)?;
    if args.sweep.sweep {
        return run_sweep(&args.sweep, args.backend, args.seed, json);
    }
    let out = output_unless_discarded(
        args.discard,
        "--output",
        args.output.as_deref(),
        &[Format::Text],
        json,
    )?;
    let bar = progress(4, "euler", json);
    let started = Instant::now();
    let g = match (&args.file, args.generate) {
        (Some(f), _) if args.undirected => AnyGraph::Undirected(undirected(load(f, args.format)?)?),
        (Some(f), _) => AnyGraph::Directed(load(f, args.format)?),
        (None, Some(m)) => {
            warpath_io::check_memory(
                &format!("--generate {m}"),
                m,
                SWEEP_BYTES_PER_EDGE as f64 * if args.undirected { 2.0 } else { 1.0 },
                0,
                "edges",
            )?;
            if args.undirected {
                AnyGraph::Undirected(graph_core::random_undirected_euler_graph(
                    m, args.style, args.seed,
                )?)
            } else {
                AnyGraph::Directed(random_euler_graph(m, args.style, args.seed)?)
            }
        }
        (None, None) => return Err(usage("give a graph FILE or --generate EDGES")),
    };
    let load_s = started.elapsed().as_secs_f64();
    bar.inc(1);
    let t = Instant::now();
    // A directed circuit reports its stages when the parallel algorithm runs.
    let run = match (&g, args.path) {
        (AnyGraph::Directed(d), false) => euler_circuit_staged(d, args.backend),
        _ => g.trail(args.path, args.backend).map(|(t, b)| (t, b, None)),
    };
    let (trail, backend, stages) = run.map_err(|e| named(&|v| g.vertex_label(v), e))?;
    let seconds = t.elapsed().as_secs_f64();
    bar.inc(1);
    let verified = g.verify(args.path, &trail);
    bar.inc(1);
    if let Some(o) = &out {
        guard_terminal(
            o,
            trail.vertices.len() as u64,
            is_dash(args.output.as_deref()),
            "--output",
        )?;
        write_vertices(g.names(), &trail, o)?;
    }
    bar.finish_and_clear();
    let kind = if args.path { "path" } else { "circuit" };
    let (start, end) = (
        trail.vertices.first().map(|&v| g.vertex_label(v)),
        trail.vertices.last().map(|&v| g.vertex_label(v)),
    );
    if json {
        super::print_graph_json(
            &g,
            backend,
            seconds,
            serde_json::json!({
                "kind": kind,
                "undirected": args.undirected,
                "load_seconds": load_s,
                "edges_per_second": g.edge_count() as f64 / seconds.max(1e-12),
                "verified": verified,
                "start": start,
                "end": end,
                "output": out.as_ref().map(Output::describe),
                "stages": stages.map(|s| serde_json::json!({
                    "algorithm": "parallel",
                    "pairing_seconds": s.pairing,
                    "labelling_seconds": s.labelling,
                    "linking_seconds": s.linking,
                    "splicing_seconds": s.splicing,
                    "ranking_seconds": s.ranking,
                    "cycles_after_pairing": s.cycles_after_pairing,
                    "forest_links": s.forest_links,
                })),
            }),
        );
    } else {
        let mut text = format!(
            "Euler {kind}: {} edges, {} vertices, on {backend} in {:.3} s ({:.1} M edges/s; loading {:.3} s), verified: {}",
            g.edge_count(),
            g.vertex_count(),
            seconds,
            g.edge_count() as f64 / seconds.max(1e-12) / 1e6,
            load_s,
            if verified { "yes" } else { "NO" }
        );
        if let Some(s) = stages {
            text.push_str(&format!(
                "\n  parallel stages: pairing {:.3} s, labelling {:.3} s, linking {:.3} s, splicing {:.3} s, ranking {:.3} s; {} cycles after pairing",
                s.pairing, s.labelling, s.linking, s.splicing, s.ranking, s.cycles_after_pairing
            ));
        }
        if let (Some(s), Some(e)) = (start, end) {
            text.push_str(&format!("\n  from {s} to {e}"));
        }
        text.push_str(&written(out.as_ref()));
        report(&text, out.as_ref());
    }
    if !verified {
        return Err(unverified(format!("the Euler {kind} failed verification")));
    }
    Ok(())
}

fn euler_row(
    name: &str,
    g: &Graph,
    run: impl FnOnce(&Graph) -> Result<(EulerTrail, Backend), graph_core::EulerError>,
) -> DemoRow {
    let t = Instant::now();
    match run(g) {
        Ok((trail, b)) => {
            let time = t.elapsed();
            DemoRow::new(name, g.edge_count(), b, time, is_euler_circuit(g, &trail))
        }
        Err(e) => DemoRow::failed(name, g.edge_count(), e),
    }
}

/// Euler circuits for `warpath demo`: Hierholzer and the parallel algorithm on a deep and a
/// shallow graph, and the GPU when there is one.
pub(crate) fn demo(size: DemoSize, rows: &mut Rows) {
    let m = match size {
        DemoSize::Small => 1 << 20,
        DemoSize::Large => 1 << 25,
    };
    for style in [EulerStyle::Deep, EulerStyle::Shallow] {
        let label = style_name(style);
        let g = match random_euler_graph(m, style, 7) {
            Ok(g) => g,
            Err(e) => {
                rows.push(DemoRow::failed("euler circuit", m, e));
                continue;
            }
        };
        rows.push(euler_row(
            &format!("euler circuit, Hierholzer ({label})"),
            &g,
            |g| graph_core::euler_circuit_hierholzer(g).map(|t| (t, Backend::Cpu)),
        ));
        rows.push(euler_row(
            &format!("euler circuit, parallel ({label})"),
            &g,
            |g| graph_core::euler_circuit_parallel(g).map(|t| (t, Backend::Cpu)),
        ));
        if gpu_runtime::gpu().is_ok() {
            rows.push(
                euler_row(&format!("euler circuit ({label})"), &g, |g| {
                    euler_circuit(g, Exec::Cuda)
                })
                .with_note("includes transfers"),
            );
        }
    }
}
